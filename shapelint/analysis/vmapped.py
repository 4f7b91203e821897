"""`torch.vmap(f, in_dims, out_dims)` and `torch.func.vmap`: a callable that runs f on
one slice of its batched arguments and stacks the results.

Shapes are f's on one slice: each batched argument without its mapped dim, the
others as given; each result with the batch dim put back at out_dims. All batched
arguments must agree on the batch size, and only tensors can be mapped: where torch
would raise (or the analysis cannot tell it would not) the call is not followed.

FLOPs: FlopCounterMode sees the batched ops the batching rules run, which for the
products it counts (mm, bmm, addmm, baddbmm, convolutions, attention, einsum and
tensordot, whichever operand is batched) are the slice's count times the batch size.
A matrix-vector product or a dot product is not: on one slice it is `mv` / `dot`,
which the flop counter does not count, and batched over its vector it becomes a
matrix product it does count. A slice run holding such a product (or one whose
operand's rank is not known) is of unknown cost under vmap, but for `torch.mv` or
`torch.dot` mapped directly, whose operands are the arguments in_dims says are
batched (`_mapped_product`: batched over mv's vector, or both of dot's, a counted
matrix product). What the batched
forward saves for backward (an unbatched weight once, not once per slice) is not
known either.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shapelint.analysis.repetition import add_costs, scale_cost
from shapelint.analysis.unknown_cost import cost_not_known
from shapelint.notation.symbolic import Expr
from shapelint.ops.backward import origins, requires
from shapelint.ops.values import UNKNOWN, IntV, NoneV, StrV, TensorV, TupleV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

QUALNAMES = frozenset({"torch.vmap", "torch.func.vmap", "torch._functorch.apis.vmap"})
# vmap's keywords that change neither shapes nor counts (chunk_size splits the batch
# into runs whose counts add up to the whole).
_NEUTRAL = frozenset({"randomness", "chunk_size"})
_SAVED_WHY = (
    "saved for backward: what a vmapped function's batched ops save (an unbatched "
    "operand once, not per slice) is not known"
)
# Products whose slice may be a matrix-vector or dot product (a 1-d operand).
_VECTOR_PRODUCTS = frozenset(
    {
        "operator.matmul",
        "torch.matmul",
        "torch.Tensor.matmul",
        "torch.Tensor.__matmul__",
        "torch.Tensor.__rmatmul__",
        "torch.linalg.matmul",
    }
)
_ALWAYS_VECTOR = frozenset(
    {
        "torch.mv",
        "torch.Tensor.mv",
        "torch.dot",
        "torch.Tensor.dot",
        "torch.vdot",
        "torch.Tensor.vdot",
        "torch.inner",
        "torch.Tensor.inner",
        "torch.addmv",
        "torch.Tensor.addmv",
        "torch.linalg.vecdot",
        "torch.linalg.multi_dot",
        "torch.chain_matmul",
    }
)


@dataclass(frozen=True)
class VmappedV(Value):
    """`torch.vmap(func, in_dims, out_dims)`: func mapped over a batch dim."""

    func: Value
    in_dims: Value
    out_dims: Value
    # randomness="same" or "different": random ops allowed; None, torch's default
    # "error", under which torch refuses any random op in f
    randomness: str | None = None


def vmap_value(args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """`torch.vmap(func, in_dims=0, out_dims=0, ...)`: the mapped callable; None where
    a keyword is one this model does not read."""
    names = ("func", "in_dims", "out_dims")
    if len(args) > len(names) or set(kwargs) - set(names) - _NEUTRAL:
        return None
    given = dict(zip(names, args))
    if set(given) & set(kwargs):
        return None
    given.update({k: v for k, v in kwargs.items() if k in names})
    func = given.get("func")
    if func is None or func is UNKNOWN:
        return None
    zero = IntV(Expr.const(0))
    how = kwargs.get("randomness")
    randomness = how.value if isinstance(how, StrV) and how.value in ("same", "different") else None
    if (
        how is not None
        and randomness is None
        and not (isinstance(how, StrV) and how.value == "error")
    ):
        return None  # a randomness not known: whether a random op runs or raises is not told
    return VmappedV(func, given.get("in_dims", zero), given.get("out_dims", zero), randomness)


def _dim(v: Value) -> int | None | str:
    """An in/out dim as Python holds it: an int, None (not mapped), or "?"."""
    if isinstance(v, NoneV):
        return None
    if isinstance(v, IntV) and v.value is not None and v.value.value is not None:
        return v.value.value
    return "?"


class _Refused(Exception):
    """What torch would refuse, or what the analysis cannot tell it would not."""


def _slices(value: Value, dim: Value, sizes: list) -> Value:
    """value as f sees it on one slice: each tensor of the (pytree of) value without
    its mapped dim; sizes collects the batch sizes met."""
    if isinstance(dim, TupleV):
        raise _Refused  # a tuple of dims is for the arguments, not within one
    d = _dim(dim)
    if d is None:
        return value
    if d == "?":
        raise _Refused
    if isinstance(value, TupleV):
        return TupleV(tuple(_slices(v, dim, sizes) for v in value.items), value.kind)
    if not isinstance(value, TensorV) or value.rank is None:
        raise _Refused  # vmap maps tensors only; a rank not known, no dim to drop
    rank = value.rank
    if not -rank <= d < rank:  # type: ignore[operator]
        raise _Refused
    d %= rank  # type: ignore[operator]
    sizes.append(value.shape[d])  # type: ignore[index]
    shape = value.shape[:d] + value.shape[d + 1 :]  # type: ignore[index]
    return TensorV(shape, value.dtype, grad=requires(value), origin=origins(value))


def _stacked(value: Value, dim: Value, size) -> Value:
    """f's result on one slice put back as vmap returns it: the batch dim at dim."""
    if isinstance(dim, TupleV):
        if not isinstance(value, TupleV) or len(value.items) != len(dim.items):
            raise _Refused
        items = tuple(_stacked(v, d, size) for v, d in zip(value.items, dim.items))
        return TupleV(items, value.kind)
    if isinstance(value, TupleV):
        return TupleV(tuple(_stacked(v, dim, size) for v in value.items), value.kind)
    d = _dim(dim)
    if d is None or d == "?" or not isinstance(value, TensorV) or value.rank is None:
        raise _Refused  # out_dims=None asks that the result not vary: not told here
    rank = value.rank + 1
    if not -rank <= d < rank:  # type: ignore[operator]
        raise _Refused
    d %= rank  # type: ignore[operator]
    shape = value.shape[:d] + (size,) + value.shape[d:]  # type: ignore[index]
    return TensorV(shape, value.dtype, grad=requires(value), origin=origins(value))


def call(an: Analyzer, callee: VmappedV, node, args, kwargs, frame) -> Value:
    """The mapped function called: f run once on a slice, its records counted batch
    size times, one record at the call holding them."""
    sizes: list = []
    try:
        dims = callee.in_dims
        if isinstance(dims, TupleV):
            if len(dims.items) != len(args):
                raise _Refused
            sliced = [_slices(a, d, sizes) for a, d in zip(args, dims.items)]
        else:
            sliced = [_slices(a, dims, sizes) for a in args]
        size = sizes[0] if sizes else None
        if size is None or any(s != size for s in sizes) or not isinstance(size, Expr):
            raise _Refused  # no tensor mapped, or sizes that may differ: torch raises
    except _Refused:
        why = "torch.vmap: its arguments' batch dims are not known to agree"
        return an.unknown_call(node, args, kwargs, frame, why)
    outer, children = frame.records, {}
    frame.records = children
    try:
        value = an.call_value(callee.func, node, sliced, dict(kwargs), frame)
    finally:
        frame.records = outer
    try:
        value = _stacked(value, callee.out_dims, size) if value is not UNKNOWN else UNKNOWN
    except _Refused:
        value = UNKNOWN
    # each record of the slice's run (its calls' too) counted batch size times, so
    # that every call's figure is the sum of its calls' as the backward walk reads it
    runs = [_scaled(r, size) for r in children.values()]
    cost = add_costs(r.cost for r in runs)
    vector = _vector_product(children.values())
    random = _random_op(children.values()) if callee.randomness is None else None
    if random is not None:
        cost = cost_not_known(
            f"torch.vmap: {random} under randomness='error', which torch refuses in a "
            "vmapped function (or, dropout in eval mode, runs as no random op)"
        )
    elif (
        vector is not None
        and len(runs) == 1
        and not runs[0].children
        and (direct := _mapped_product(callee, args, sliced, size))
    ):
        # the one op the slice ran, as the batched run counts it (the walk from the
        # loss reads each record's backward)
        flops, backward = direct
        runs[0] = dataclasses.replace(
            runs[0], cost=dataclasses.replace(runs[0].cost, flops=flops, backward=backward)
        )
        cost = runs[0].cost
    elif vector is not None:
        cost = cost_not_known(
            f"torch.vmap: {vector} on a slice is a matrix-vector or dot product, which "
            "batched may run a matrix product the flop counter counts"
        )
    elif value is UNKNOWN and cost.complete:
        cost = cost_not_known("torch.vmap: what the mapped function returns is not known")
    cost = dataclasses.replace(cost, saved=None, notes=[*cost.notes, _SAVED_WHY])
    rec = an.record(node, frame, "call torch.vmap", None, args, value, cost, summed=True)
    rec.children = runs
    return value


# A vector product vmap maps directly (`torch.vmap(torch.mv)`): its operands are
# the mapped function's arguments, so which are batched is in_dims' to say.
_MAPPED_PRODUCTS = frozenset({"torch.mv", "torch.dot"})


def _mapped_product(callee: VmappedV, args, sliced, size) -> tuple[Expr, Expr] | None:
    """(FLOPs, backward FLOPs) of `torch.vmap(torch.mv)` / `torch.vmap(torch.dot)`
    called on two tensors, as torch's batching rules run it (held to
    FlopCounterMode): mv(A, v) batched over its vector is a matrix product,
    2·B·n·m; dot(a, b) batched over both is one too, 2·B·n. The backward: one
    product the same size per operand that requires grad. None for any other
    function or arguments, and where the batch is the matrix's alone (dot's: one
    operand's), which runs an mv the flop counter does not count for a contiguous
    matrix and a counted matrix product for a transposed one."""
    from shapelint.analysis.callable_values import LayerClassV

    func = callee.func
    if not isinstance(func, LayerClassV) or func.qual not in _MAPPED_PRODUCTS or len(args) != 2:
        return None
    if not all(isinstance(a, TensorV) and a.rank is not None for a in sliced):
        return None
    dims = callee.in_dims
    items = dims.items if isinstance(dims, TupleV) else (dims, dims)
    mapped = [_dim(d) is not None for d in items]
    if func.qual == "torch.mv":
        if (sliced[0].rank, sliced[1].rank) != (2, 1):
            return None  # torch raises: not followed here
        n, m = sliced[0].shape  # type: ignore[misc]
        counted, work = mapped[1], Expr.const(2) * size * n * m
    else:
        if (sliced[0].rank, sliced[1].rank) != (1, 1):
            return None
        counted, work = all(mapped), Expr.const(2) * size * sliced[0].shape[0]  # type: ignore[index]
    if not counted:
        return None  # an mv, or a matrix product where its layout makes one (not told)
    grads = sum(1 for a in args if requires(a))
    return work, work * Expr.const(grads)


def _scaled(rec, size: Expr):
    """rec, and the calls it ran, each counted size times."""
    children = [_scaled(ch, size) for ch in rec.children]
    return dataclasses.replace(rec, cost=scale_cost(rec.cost, size), children=children)


def _vector_product(records) -> str | None:
    """The op of the first record (children too) that may be a matrix-vector or dot
    product: one of those by name, or a matmul with an operand of rank 1 or not known."""
    for r in records:
        if r.op in _ALWAYS_VECTOR:
            return r.op
        if r.op in _VECTOR_PRODUCTS and (
            len(r.inputs) < 2 or any(_vector_or_unknown(i) for i in r.inputs[:2])
        ):
            return r.op
        found = _vector_product(r.children)
        if found is not None:
            return found
    return None


# Functions and layers that draw random numbers (dropout and rrelu in training mode).
_RANDOM = frozenset(
    {
        *("rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm"),
        *("bernoulli", "bernoulli_", "normal", "normal_", "multinomial", "poisson"),
        *("exponential_", "random_", "uniform_", "cauchy_", "geometric_", "log_normal_"),
        *("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout"),
        *("feature_alpha_dropout", "rrelu", "rrelu_", "gumbel_softmax"),
    }
)
_RANDOM_LAYERS = frozenset(
    {
        "dropout",
        "dropout1d",
        "dropout2d",
        "dropout3d",
        "alphadropout",
        "featurealphadropout",
        "rrelu",
    }
)


def _random_op(records) -> str | None:
    """The op of the first record (children too) that may draw random numbers."""
    for r in records:
        owner, _, last = r.op.rpartition(".")
        if last in _RANDOM or owner.rpartition(".")[2].lower() in _RANDOM_LAYERS:
            return r.op
        found = _random_op(r.children)
        if found is not None:
            return found
    return None


def _vector_or_unknown(shape) -> bool:
    # a variadic dim (`*b`) may stand for no dims at all
    return shape is None or len(shape) < 2 or any(str(d).startswith("*") for d in shape)
