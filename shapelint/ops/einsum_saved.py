"""What torch.einsum saves for backward, as ATen's einsum (Linear.cpp) runs it.

Each operand is unsqueezed and permuted to one order of axes: the output's, then
the contracted labels in torch's label order (A-Z before a-z). Two operands are
then contracted as `sumproduct_pair` does: a contracted axis longer than 1 in one
operand alone is summed out of it first (a new tensor); with no axis left to
contract the pair is `a.mul(b)`, which keeps each operand (a view) for the other's
gradient; otherwise each is permuted and reshaped to three axes, (batch, kept,
contracted) and (batch, contracted, kept), and `bmm` keeps each for the other's
gradient: a view of the operand where torch's reshape can view it (its
`computeStride`), a copy of its own where it cannot. Both depend on the sizes
(an axis of size 1 is broadcast, skipped, and has no stride that matters) and the
operands' strides, so the figure is known only where every size is a known int
and every operand's strides are known (ops/saved.py follows them through views:
a rearranged or transposed operand, a part of a chunk); one operand saves nothing (a permute and a
sum); three or more run in the order opt_einsum picks, not followed here.
"""

from __future__ import annotations

from shapelint.notation.symbolic import Expr
from shapelint.ops.dtypes import dtype_bytes
from shapelint.ops.saved import int_sizes, layout_of
from shapelint.ops.strides import compute_stride, contiguous, iterated
from shapelint.ops.values import ParameterV, TensorV, Value

UNSURE_SIZES = (
    "einsum: what it saves depends on sizes not known here (an axis of size 1 is broadcast)"
)
UNSURE_LAYOUT = "einsum: what it saves depends on an operand's strides, not known here"
UNSURE_ORDER = "einsum of more than two operands: opt_einsum's order is not followed"
UNSURE_GRAD = "einsum: which operands require grad is not known"
UNSURE_DTYPE = "einsum: an operand's dtype is not known"


def saving(inputs: list[list[str]], output: list[str], operands: list[Value], rank) -> tuple:
    """The saved items (ops/saved.weigh's) of an einsum whose operands carry the
    axis names inputs, its output axes output; rank(name) orders the contracted
    labels as torch does (None: not known)."""
    if len(operands) == 1:
        return ()
    if len(operands) != 2:
        return (("?", UNSURE_ORDER),)
    from shapelint.ops.backward import requires  # backward imports the op modules

    grads = [requires(t) for t in operands]
    if None in grads:
        return (("?", UNSURE_GRAD),)
    if any(len(set(names)) != len(names) for names in inputs):
        return (("?", "einsum with a diagonal (a repeated label): its strides are not followed"),)
    contracted = {n for names in inputs for n in names if n not in output}
    ranks = {n: rank(n) for n in contracted}
    if any(r is None for r in ranks.values()) or any(n.startswith("...") for n in contracted):
        return (("?", "einsum: the order torch gives its contracted axes is not known"),)
    order = [*output, *sorted(contracted, key=lambda n: ranks[n])]
    ops = []
    for names, t in zip(inputs, operands, strict=True):
        laid = _aligned(names, t, order)
        if laid is None:
            return (("?", UNSURE_LAYOUT if int_sizes(t) else UNSURE_SIZES),)
        ops.append(laid)
    (sa, ta, a), (sb, tb, b) = ops
    n_out = len(output)
    sum_dims = []
    summed = [False, False]
    for d in range(n_out, len(order)):
        if sa[d] != 1 and sb[d] != 1:
            sum_dims.append(d)
        elif sa[d] != 1:
            sa, ta, summed[0] = _summed(sa, d), None, True
        elif sb[d] != 1:
            sb, tb, summed[1] = _summed(sb, d), None, True
    # a summed operand is a tensor of its own: viewed or copied, its bytes are its own
    sa_strides = ta if ta is not None else _contiguous_strides(sa)
    sb_strides = tb if tb is not None else _contiguous_strides(sb)
    itemsize = [dtype_bytes(a.dtype), dtype_bytes(b.dtype)]
    if not sum_dims:
        # a.mul(b): each operand (a view of it, or of the sum made of it) as it is
        views = [(sa, summed[0], a, 0), (sb, summed[1], b, 1)]
        return tuple(_item(s, was_summed, t, None, itemsize[i])
                     for s, was_summed, t, i in views if grads[1 - i])  # fmt: skip
    lro, lo, ro = [], [], []
    for d in range(len(order)):
        if d in sum_dims:
            continue
        if sa[d] != 1 and sb[d] != 1:
            lro.append(d)
        elif sa[d] != 1:
            lo.append(d)
        else:
            ro.append(d)
    left = _reshaped(sa, sa_strides, [*lro, *lo, *sum_dims, *ro], [lro, lo, sum_dims])
    right = _reshaped(sb, sb_strides, [*lro, *sum_dims, *ro, *lo], [lro, sum_dims, ro])
    out = []
    if grads[1]:
        out.append(_item(sa, summed[0], a, left, itemsize[0]))
    if grads[0]:
        out.append(_item(sb, summed[1], b, right, itemsize[1]))
    return tuple(out)


def _item(shape: list[int], was_summed: bool, t: TensorV, view: bool | None, itemsize: int | None):
    """The tensor bmm (or mul) keeps: the operand's storage where it is a view of
    it, else a tensor of its own of the operand's elements."""
    if not was_summed and view is not False:
        return ("tensor", t, None)
    if itemsize is None:
        return ("?", UNSURE_DTYPE)
    n = 1
    for s in shape:
        n *= s
    return ("new", Expr.const(n * itemsize))


def _aligned(names: list[str], t: Value, order: list[str]):
    """(sizes, strides, operand) of operand t unsqueezed and permuted to order; None
    where its sizes or strides are not known (strides: a contiguous tensor's)."""
    shape = int_sizes(t)
    if shape is None or len(shape) != len(names) or not isinstance(t, TensorV):
        return None
    laid = layout_of(t)
    if laid is None and isinstance(t, ParameterV):
        laid = tuple(shape), contiguous(shape)
    if laid is None:
        return None
    strides = laid[1]
    where = {n: i for i, n in enumerate(names)}
    sizes = [shape[where[n]] if n in where else 1 for n in order]
    laid = [strides[where[n]] if n in where else 1 for n in order]
    return sizes, laid, t


def _summed(sizes: list[int], d: int) -> list[int]:
    return [1 if i == d else s for i, s in enumerate(sizes)]


def _contiguous_strides(sizes: list[int]) -> list[int]:
    return list(contiguous(sizes))


def _reshaped(sizes, strides, perm, groups) -> bool:
    """Whether torch's reshape of the tensor permuted by perm to one axis per group
    (the product of its axes' sizes) is a view (computeStride succeeds)."""
    old_shape = [sizes[d] for d in perm]
    old_strides = [strides[d] for d in perm]
    new_shape = []
    for g in groups:
        n = 1
        for d in g:
            n *= sizes[d]
        new_shape.append(n)
    return _compute_stride(old_shape, old_strides, new_shape)


def _compute_stride(old_shape, old_strides, new_shape) -> bool:
    return compute_stride(old_shape, old_strides, new_shape) is not None


def result_layout(inputs: list[list[str]], output: list[str], operands: list[Value], rank):
    """The strides of a two-operand einsum's result, as ATen's `sumproduct_pair`
    leaves them: bmm's contiguous (batch, kept, contracted-away, other kept) result
    permuted to the output's order (the operands' roles swapped where the output
    ends with the left one's axis: torch's strides, tests/test_strides.py), or, with nothing to contract, `mul`'s result laid
    out as TensorIterator lays it. None where not known (sizes or strides not known,
    an operand summed over an axis first, a diagonal, another count of operands)."""
    if len(operands) != 2 or any(len(set(names)) != len(names) for names in inputs):
        return None
    contracted = {n for names in inputs for n in names if n not in output}
    if any(n.startswith("...") for n in contracted):
        return None  # before rank(): an ellipsis axis's name is no letter
    ranks = {n: rank(n) for n in contracted}
    if any(r is None for r in ranks.values()):
        return None
    order = [*output, *sorted(contracted, key=lambda n: ranks[n])]
    laid = [_aligned(names, t, order) for names, t in zip(inputs, operands, strict=True)]
    if laid[0] is None or laid[1] is None:
        return None
    (sa, ta, _), (sb, tb, _) = laid
    n_out = len(output)
    sum_dims = []
    for d in range(n_out, len(order)):
        if sa[d] != 1 and sb[d] != 1:
            sum_dims.append(d)
        elif sa[d] != 1 or sb[d] != 1:
            return None  # summed out of one operand first: not followed
    out_sizes = tuple(max(sa[d], sb[d]) for d in range(n_out))
    if not sum_dims:
        full = [max(x, y) for x, y in zip(sa, sb, strict=True)]
        steps = iterated([(tuple(sa), tuple(ta)), (tuple(sb), tuple(tb))], full)[1]
        return out_sizes, tuple(steps[:n_out])
    kept = [d for d in range(len(order)) if d not in sum_dims]
    lro = [d for d in kept if sa[d] != 1 and sb[d] != 1]
    lo = [d for d in kept if d not in lro and sa[d] != 1]
    ro = [d for d in kept if d not in lro and d not in lo]
    # torch multiplies the pair the other way round where the output's last axis of
    # one operand alone is the left one's, so that that axis comes out innermost
    placed = [*lro, *lo, *sum_dims, *ro]
    if lo and ro and max(ro) < min(lo):
        placed = [*lro, *ro, *sum_dims, *lo]
    sizes = [1 if d in sum_dims else max(sa[d], sb[d]) for d in placed]
    step = dict(zip(placed, contiguous(sizes), strict=True))
    return out_sizes, tuple(step[d] for d in range(n_out))
