"""FLOPs and bytes per call, by the convention of torch.utils.flop_counter.

``flops`` counts 2 per multiply-add of the matrix products torch actually runs
(mm, bmm, addmm, baddbmm), so that runtime mode can confirm a static figure to
the unit. Everything the counter does not see (mul, sum, mv, dot, softmax, ...)
belongs in ``Cost.other_flops`` and is never mixed in.

The einsum model mirrors ATen's ``einsum`` and ``sumproduct_pair``
(aten/src/ATen/native/Linear.cpp) and the path torch asks opt_einsum for:

* every operand is aligned to all labels; a dimension of extent 1 is treated as
  absent (torch only counts operands where a label's size is not 1);
* a repeated label within one operand takes a diagonal, which is a free view;
* operands are contracted pairwise, left to right for two operands (or when
  opt_einsum is missing), in opt_einsum's ``"auto"`` order for three or more;
* in each pair, a contracted label that no other remaining operand holds is
  summed away beforehand (free); a label both hold and no one else needs is the
  bmm's inner dimension; the pair costs ``2 * product(all labels of both)``,
  or nothing when no label is contracted (torch multiplies with ``mul``).

Symbolic sizes are assumed to differ from 1, as torch's own symbolic tracing
assumes (``TORCH_GUARD_OR_TRUE(size != 1)``); a formula is exact for every
binding where that holds.
"""

from __future__ import annotations

import itertools
import string
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence

from shapelint.notation.symbolic import Expr, as_expr, product, total
from shapelint.ops.dtypes import dtype_bytes
from shapelint.ops.values import BufferV, Dim, ObjectV, TensorV, TupleV, Value, Var

# torch's "auto" strategy runs opt_einsum's exhaustive ``optimal`` search up to
# this many operands; it is reproduced here exactly. Beyond it opt_einsum uses
# branch-and-bound or greedy heuristics, which are delegated to opt_einsum.
_PURE_OPTIMAL_MAX_OPERANDS = 4

ASSUMED_ORDER = "left to right assumed"
ORDER_NOTE = f"contraction order depends on unknown sizes; {ASSUMED_ORDER}"

# A placeholder size stands in for an unknown one; no dimension name starts so.
_UNKNOWN_PREFIX = "\x00unknown:"


# -- matrix products ------------------------------------------------------------------


def bmm_flops(batch: Expr | int, m: Expr | int, k: Expr | int, n: Expr | int) -> Expr:
    """FLOPs of ``bmm([batch, m, k], [batch, k, n])``: 2 per multiply-add (``mm``: batch 1)."""
    return 2 * as_expr(batch) * as_expr(m) * as_expr(k) * as_expr(n)


def _numel(shape: Iterable[Dim]) -> Expr | None:
    dims = list(shape)
    if any(d is None for d in dims):
        return None
    return product(Expr.name(d.name) if isinstance(d, Var) else d for d in dims)  # type: ignore[misc]


# -- bytes ------------------------------------------------------------------------------


def tensor_bytes(shape: Sequence[Dim] | None, dtype: str | None = None) -> Expr | None:
    """Bytes a tensor of this shape and dtype occupies (dtype None: float32; None
    where the shape or the dtype is not known)."""
    item = dtype_bytes(dtype)
    if shape is None or item is None:
        return None
    numel = _numel(shape)
    return None if numel is None else numel * item


def call_bytes(inputs: Iterable[Value], outputs: Value | Iterable[Value]) -> Expr | None:
    """Bytes a call moves: every tensor it reads plus every tensor it writes.

    Values that are not tensors (ints, dtypes, None) move nothing; a tensor whose
    shape is unknown makes the total unknown.
    """
    outs = [outputs] if isinstance(outputs, Value) else list(outputs)
    parts = []
    for v in tensors_in([*inputs, *outs]):
        b = tensor_bytes(v.shape, v.dtype)
        if b is None:
            return None
        parts.append(b)
    return total(parts)


def tensors_in(values: Iterable[Value]) -> Iterable[TensorV]:
    """The tensors among values: in tuples and lists (what einops.pack reads) and in
    the attributes of known objects (a module's weights)."""
    for v in values:
        if isinstance(v, BufferV) and v.shape == ():
            continue  # a step counter (num_batches_tracked) the forward does not read
        if isinstance(v, TensorV):
            yield v
        elif isinstance(v, TupleV):
            yield from tensors_in(v.items)
        elif isinstance(v, ObjectV):
            yield from tensors_in(a for _, a in v.attrs)


# -- einsum -----------------------------------------------------------------------------


def einsum_flops(
    inputs: Sequence[Sequence[str]],
    output: Sequence[str],
    sizes: Mapping[str, Expr | None],
    unit_axes: Sequence[Collection[str]] | None = None,
) -> tuple[Expr | None, list[str]]:
    """FLOPs torch's flop counter reports for ``torch.einsum`` (and einops.einsum).

    inputs: the axis names of each operand (ellipsis expanded, right-aligned, into
    distinct names; a name repeated within an operand takes a diagonal). output:
    the output axis names. sizes: each axis's size, symbolic or constant; None
    when unknown. unit_axes: optionally, per operand, the axes that have extent
    1 in that operand while broadcasting against the size in ``sizes``.

    Returns (flops, notes). flops is None when it depends on an unknown size or
    the equation is not one torch would run; notes say why, or which assumption
    the figure rests on.
    """
    notes: list[str] = []
    problem = _check_equation(inputs, output, unit_axes)
    if problem:
        return None, [problem]
    out = frozenset(output)
    size = _bind_sizes(inputs, sizes)
    units = [frozenset(u) for u in unit_axes] if unit_axes else [frozenset()] * len(inputs)
    # What torch sees of each operand: labels whose extent there is not 1.
    held = [
        frozenset(a for a in op if a not in unit and size[a] != 1)
        for op, unit in zip(inputs, units, strict=True)
    ]

    steps = _contraction_steps(inputs, output, size, notes)
    flops = Expr.const(0)
    for a, b, cost in _replay(held, out, size, steps):
        if cost is None:
            notes.append(
                f"{_labels(a)} × {_labels(b)} contracts no axis, so torch multiplies "
                "elementwise (mul), which the flop counter does not count"
            )
        else:
            flops = flops + cost

    contracted = _symbolic_contracted(held, out, size)
    if contracted and not flops.is_constant():
        notes.append(
            f"where {', '.join(contracted)} {'is' if len(contracted) == 1 else 'are all'} 1, "
            "torch multiplies elementwise (mul) and counts 0 there: this formula does not"
        )
    unknown = sorted(n[len(_UNKNOWN_PREFIX) :] for n in flops.names() if _is_placeholder(n))
    if unknown:
        notes.append("FLOPs depend on the unknown size of " + ", ".join(map(repr, unknown)))
        return None, notes
    return flops, notes


def _symbolic_contracted(held, out: frozenset, size: Mapping[str, Expr]) -> list[str]:
    """Axes summed over between operands whose size is not a number: at size 1
    they vanish, and torch's einsum runs a product that contracts nothing."""
    seen: dict[str, int] = {}
    for op in held:
        for a in op:
            seen[a] = seen.get(a, 0) + 1
    return sorted(
        a for a, n in seen.items() if n > 1 and a not in out and not size[a].is_constant()
    )


def _check_equation(
    inputs: Sequence[Sequence[str]],
    output: Sequence[str],
    unit_axes: Sequence[Collection[str]] | None,
) -> str | None:
    if not inputs:
        return "einsum needs at least one operand"
    if unit_axes is not None and len(unit_axes) != len(inputs):
        return f"unit_axes names {len(unit_axes)} operands, the equation {len(inputs)}"
    seen = {a for op in inputs for a in op}
    for i, a in enumerate(output):
        if a not in seen:
            return f"output axis {a!r} appears in no operand"
        if a in output[:i]:
            return f"output axis {a!r} appears more than once"
    return None


def _bind_sizes(
    inputs: Sequence[Sequence[str]], sizes: Mapping[str, Expr | int | None]
) -> dict[str, Expr]:
    """Every axis's size; an unknown one becomes a placeholder name to spot later."""
    out: dict[str, Expr] = {}
    for a in (a for op in inputs for a in op):
        s = sizes.get(a)
        out[a] = Expr.name(_UNKNOWN_PREFIX + a) if s is None else as_expr(s)
    return out


def _is_placeholder(name: str) -> bool:
    return name.startswith(_UNKNOWN_PREFIX)


def _labels(axes: Iterable[str]) -> str:
    return "(" + " ".join(sorted(axes)) + ")"


def _contraction_steps(
    inputs: Sequence[Sequence[str]],
    output: Sequence[str],
    size: Mapping[str, Expr],
    notes: list[str],
) -> list[tuple[int, int]]:
    """The pairwise contractions torch performs, as SSA ids.

    Operands are ids 0..n-1 and the k-th contraction's result is id n+k, so a
    step names the two tensors it contracts regardless of where torch keeps them.
    """
    n = len(inputs)
    left_to_right = [(0, 1)] + [(n + k, k + 2) for k in range(n - 2)] if n >= 2 else []
    if n <= 2:
        return left_to_right
    concrete = {a: s.value for a, s in size.items()}
    if any(v is None for v in concrete.values()):
        notes.append(ORDER_NOTE)
        return left_to_right
    sets = [frozenset(op) for op in inputs]
    if n <= _PURE_OPTIMAL_MAX_OPERANDS:
        return _optimal_ssa_path(sets, frozenset(output), concrete)  # type: ignore[arg-type]
    path = _opt_einsum_path(inputs, output, concrete)  # type: ignore[arg-type]
    if path is None:
        notes.append(
            f"opt_einsum is not installed here, so its order for {n} operands is unknown; "
            "left to right assumed (torch's own order without opt_einsum)"
        )
        return left_to_right
    return _linear_to_ssa(path, n)


def _optimal_ssa_path(
    inputs: list[frozenset[str]], out: frozenset[str], size: Mapping[str, int]
) -> list[tuple[int, int]]:
    """opt_einsum's ``optimal`` search, reproduced tie for tie.

    Depth-first over all pairs of the remaining tensors in ascending id order,
    pruning any branch whose cost reaches the best so far, so among equally
    cheap orders the first one found wins. Pair costs use opt_einsum's model
    (product of all indices, doubled when one is summed away) and are memoized
    by the two index sets alone, as opt_einsum memoizes them.
    """
    best_cost = [float("inf")]
    best_path: list[tuple[tuple[int, int], ...]] = [()]
    memo: dict[tuple[frozenset[str], frozenset[str]], tuple[frozenset[str], int]] = {}

    def pair(tensors, remaining, i, j):
        key = (tensors[i], tensors[j])
        if key not in memo:
            others = (tensors[r] for r in remaining if r != i and r != j)
            keep = out.union(*others)
            either = tensors[i] | tensors[j]
            summed = (tensors[i] & tensors[j]) - keep
            cost = 1
            for a in either:
                cost *= size[a]
            memo[key] = (either & keep, cost * (2 if summed else 1))
        return memo[key]

    def search(path, tensors, remaining, cost):
        if len(remaining) == 1:
            best_cost[0], best_path[0] = cost, path
            return
        for i, j in itertools.combinations(sorted(remaining), 2):
            kept, step = pair(tensors, remaining, i, j)
            if cost + step >= best_cost[0]:
                continue
            search(
                path + ((i, j),),
                tensors + (kept,),
                (remaining - {i, j}) | {len(tensors)},
                cost + step,
            )

    search((), tuple(inputs), frozenset(range(len(inputs))), 0)
    return list(best_path[0])


def _opt_einsum_path(
    inputs: Sequence[Sequence[str]], output: Sequence[str], size: Mapping[str, int]
) -> list[tuple[int, ...]] | None:
    """The path torch.einsum gets from opt_einsum (strategy "auto"), or None without it."""
    try:
        import opt_einsum
    except ImportError:
        return None
    letters = _einsum_letters([a for op in inputs for a in op])
    eq = ",".join("".join(letters[a] for a in op) for op in inputs)
    eq += "->" + "".join(letters[a] for a in output)
    shapes = [tuple(size[a] for a in op) for op in inputs]
    try:
        path, _ = opt_einsum.contract_path(eq, *shapes, shapes=True, optimize="auto")
    except (ValueError, TypeError, KeyError):
        return None
    if any(len(step) != 2 for step in path):
        return None
    return [tuple(step) for step in path]


def _einsum_letters(axes: list[str]) -> dict[str, str]:
    """The letters torch's equation would use: the axes' own when they are single
    letters (a torch.einsum string), else letters by first appearance (as
    einops.einsum assigns them). Only heuristic paths can tell the difference."""
    order = list(dict.fromkeys(axes))
    if all(len(a) == 1 and a in string.ascii_letters for a in order):
        return {a: a for a in order}
    from opt_einsum import get_symbol

    return {a: get_symbol(i) for i, a in enumerate(order)}


def _linear_to_ssa(path: list[tuple[int, ...]], n: int) -> list[tuple[int, int]]:
    """opt_einsum's positional path (results appended last) as SSA ids."""
    live = list(range(n))
    out: list[tuple[int, int]] = []
    for step, (i, j) in enumerate(path):
        i, j = sorted((i, j))
        out.append((live[i], live[j]))
        del live[j]
        del live[i]
        live.append(n + step)
    return out


def _replay(
    held: list[frozenset[str]],
    out: frozenset[str],
    size: Mapping[str, Expr],
    steps: list[tuple[int, int]],
) -> Iterable[tuple[frozenset[str], frozenset[str], Expr | None]]:
    """Run ATen's pairwise loop on label sets: yield each pair and its bmm FLOPs
    (None for a pair torch multiplies with mul)."""
    tensors = list(held)
    # How many operands still hold each label that is summed out in the end.
    holders = Counter(a for t in held for a in t if a not in out)
    for i, j in steps:
        a, b = set(tensors[i]), set(tensors[j])
        inner: set[str] = set()
        for label in (a | b) - out:
            if label in a and label in b:
                holders[label] -= 1
                if holders[label] == 1:
                    inner.add(label)
                    holders[label] = 0
            elif holders[label] == 1:
                # Held by this operand alone: torch sums it away first, uncounted.
                (a if label in a else b).discard(label)
                holders[label] = 0
        both = a | b
        cost = 2 * product(size[x] for x in both) if inner else None
        yield tensors[i], tensors[j], cost
        tensors.append(frozenset(both - inner))
