"""Indexing a tensor: `x[:, -1]`, `x[..., None]`, `x[:, :n]`, `x[1:]`, `w[pos]`.

Basic indexing: an int drops a dimension, a slice keeps it (its length where
the bounds say it), None adds one, `...` spans the rest, a variadic part of
unknown rank (`*batch`, jaxtyping's `...`) included when nothing else indexes it. One tensor index
(advanced indexing): an integer tensor puts its own shape in place of the
dimension it indexes, a boolean mask of rank k replaces k dimensions with one
of unknown length; of an index whose dtype is unknown, only a rank-1 one is
followed (one dimension either way, of unknown length).

A slice's length is told where it is certain (`x[:, 1:]` of n is n - 1, taking
every size to be at least 1; `x[:, :4]` is min(4, n), unknown; `bias[:T]` of a buffer
of block_size is T once the code asserted `T <= block_size`).
"""

from __future__ import annotations

import ast

from shapelint.notation.symbolic import Expr
from shapelint.ops.indexing import slice_bounds, slice_length
from shapelint.ops.values import IntV, NoneV, SliceV, TensorV, TupleV, Value, Var

_INT_DTYPES = frozenset({"int64", "int32", "int16", "int8"})


def tensor_index(t: TensorV, sl: ast.expr, idx: Value) -> Value:
    """t[sl], where idx is sl's value (a slice's is a SliceV of its bounds)."""
    unknown = TensorV(None, t.dtype)
    if t.shape is None:
        return unknown
    elems = _elements(sl, idx)
    spread = isinstance(sl, ast.Tuple) or _index_tuple(idx)
    values = idx.items if isinstance(idx, TupleV) and spread else (idx,)
    if elems is None or len(values) != len(elems):
        return unknown
    used = [_consumes(e, v) for e, v in zip(elems, values)]
    if any(u is None for u in used):
        return unknown
    if not _spares_variadic(t.shape, elems, used):  # type: ignore[arg-type]
        return unknown
    advanced = sum(isinstance(e, ast.List) or isinstance(v, TensorV) for e, v in zip(elems, values))
    if advanced > 1 or (advanced and any(isinstance(v, IntV) for v in values)):
        return unknown  # indices broadcast together, and may move to the front
    dims = list(t.shape)
    out: list = []
    at_most: list = []
    pos = 0
    for i, (e, v) in enumerate(zip(elems, values)):
        if _is_const(e, Ellipsis):
            span = len(dims) - pos - sum(used[i + 1 :])  # type: ignore[arg-type]
            if span < 0:
                return unknown
            out.extend(dims[pos : pos + span])
            pos += span
            continue
        if _is_const(e, None):
            out.append(Expr.const(1))
            continue
        if pos + used[i] > len(dims):  # type: ignore[operator]
            return unknown
        if isinstance(e, ast.Slice) or isinstance(v, SliceV):
            out.append(_slice_length(dims[pos], v))
            if out[-1] is None and (bounds := _slice_bounds(dims[pos], v)):
                at_most.append((len(out) - 1, bounds))
        elif isinstance(v, TensorV):
            out.extend(_index_dims(v))
        elif isinstance(e, ast.List):
            out.append(Expr.const(len(e.elts)))
        pos += used[i]  # type: ignore[operator]
    out.extend(dims[pos:])
    if sum(isinstance(d, Var) for d in out) > 1:
        return unknown  # an index tensor's variadic beside the tensor's own
    return TensorV(tuple(out), t.dtype, at_most=tuple(at_most))


def leading_dims(sl: ast.expr) -> int | None:
    """How many leading dims a basic index written as a tuple of slices and ints
    (`x[:, :1]`, `x[0, 1:]`) uses up: a tensor it indexes has at least that many,
    whatever follows them. None for any other index (an Ellipsis, None, a list, a
    tensor, a starred run, a lone slice)."""
    if not isinstance(sl, ast.Tuple) or len(sl.elts) < 2:
        return None
    for e in sl.elts:
        if isinstance(e, ast.Slice):
            continue
        if isinstance(e, ast.Constant) and type(e.value) is int:
            continue
        return None
    if not any(isinstance(e, ast.Slice) for e in sl.elts):
        return None  # `x[0, 1]`: an element of a sequence of sequences as well
    return len(sl.elts)


def _spares_variadic(shape: tuple, elems: list[ast.expr], used: list[int]) -> bool:
    """Whether the index leaves a variadic part of the shape (`...` of unknown rank)
    whole: what it uses up lies before it, or after it past an Ellipsis
    (`x[..., 0]` of [*b, n, d] is [*b, n])."""
    at = [i for i, d in enumerate(shape) if isinstance(d, Var)]
    if not at:
        return True
    if len(at) > 1:
        return False
    ell = next((i for i, e in enumerate(elems) if _is_const(e, Ellipsis)), None)
    before = sum(used[: len(used) if ell is None else ell])
    after = 0 if ell is None else sum(used[ell + 1 :])
    return before <= at[0] and after <= len(shape) - 1 - at[0]


def _elements(sl: ast.expr, idx: Value) -> list[ast.expr] | None:
    """The index's elements as written, one starred run (`x[(*((None,) * k), ...)]`)
    spelled out from its values. None: a starred run not made of None, ints and
    slices, or more than one of them."""
    if not isinstance(sl, ast.Tuple):
        # a tuple of indices held in a name (`l = (slice(None), slice(None, k))`;
        # `t[l]`) indexes as the display would
        return _spelled(idx.items) if _index_tuple(idx) else [_none_spelled(sl, idx)]  # type: ignore[attr-defined]
    starred = [i for i, e in enumerate(sl.elts) if isinstance(e, ast.Starred)]
    if not starred:
        if isinstance(idx, TupleV) and len(idx.items) == len(sl.elts):
            return [_none_spelled(e, v) for e, v in zip(sl.elts, idx.items)]
        return list(sl.elts)
    if len(starred) > 1 or not isinstance(idx, TupleV):
        return None
    at, n = starred[0], len(idx.items) - len(sl.elts) + 1
    if n < 0:
        return None
    spelled = _spelled(idx.items[at : at + n])
    return None if spelled is None else [*sl.elts[:at], *spelled, *sl.elts[at + 1 :]]


def _none_spelled(e: ast.expr, v: Value) -> ast.expr:
    """An element whose value is None as the literal None it indexes as (a name
    or attribute bound to None: `t[:, np.newaxis]`); another as written."""
    if isinstance(v, NoneV) and not isinstance(e, ast.Constant):
        return ast.copy_location(ast.Constant(None), e)
    return e


def _index_tuple(idx: Value) -> bool:
    """Whether idx, a value indexing a tensor, is surely a tuple of basic indices:
    one holding a slice or None, which torch reads as a tuple even when it is a
    list (a list of ints alone is an advanced index)."""
    return isinstance(idx, TupleV) and any(isinstance(v, (SliceV, NoneV)) for v in idx.items)


def _spelled(items: tuple[Value, ...]) -> list[ast.expr] | None:
    """Index values as the elements a display would have written; None where one
    is not None, an int or a slice."""
    spelled: list[ast.expr] = []
    for v in items:
        if isinstance(v, NoneV):
            spelled.append(ast.Constant(None))
        elif isinstance(v, IntV):
            spelled.append(ast.Constant(0))
        elif isinstance(v, SliceV):
            spelled.append(ast.Slice())
        else:
            return None
    return spelled


def _is_const(e: ast.expr, value: object) -> bool:
    if value is Ellipsis and isinstance(e, ast.Name) and e.id == "Ellipsis":
        return True  # the builtin's name; a local of that name would be a strange thing
    return isinstance(e, ast.Constant) and e.value is value


def _consumes(e: ast.expr, v: Value) -> int | None:
    """How many dimensions an index element uses up; None: not followed."""
    if _is_const(e, Ellipsis) or _is_const(e, None):
        return 0
    if isinstance(e, ast.Slice) or isinstance(v, (IntV, SliceV)):
        return 1
    if isinstance(e, ast.List) and isinstance(v, TupleV):
        # One list of ints (`x[:, [-1], :]`): that dim keeps one entry per item.
        return 1 if all(isinstance(i, IntV) for i in v.items) else None
    if isinstance(v, TensorV) and v.shape is not None:
        if v.dtype in _INT_DTYPES:
            return 1  # whatever its rank: its shape takes the indexed dim's place
        if v.rank is None:
            return None
        if v.dtype == "bool":
            return v.rank
        if v.dtype is None and v.rank == 1:
            return 1
    return None  # a list, a tensor of unknown rank or dtype...


def _index_dims(v: TensorV) -> list:
    if v.dtype in _INT_DTYPES:
        return list(v.shape)  # type: ignore[arg-type]
    return [None]  # a mask's count of True, or a rank-1 index of either kind


def _slice_length(n, sv: Value):
    """The length of n[lo:hi:step] where it is certain (ops.indexing.slice_length)."""
    bounds = _bound_exprs(sv)
    return None if bounds is None else slice_length(n, *bounds)


def _slice_bounds(n, sv: Value) -> tuple:
    """What n[lo:hi:step] cannot be longer than (ops.indexing.slice_bounds)."""
    bounds = _bound_exprs(sv)
    return () if bounds is None else slice_bounds(n, *bounds)


def _bound_exprs(sv: Value) -> list | None:
    if not isinstance(sv, SliceV):
        return None
    bounds = []
    for b in (sv.lower, sv.upper, sv.step):
        if b is None or isinstance(b, NoneV):
            bounds.append(None)
        elif isinstance(b, IntV) and b.value is not None:
            bounds.append(b.value)
        else:
            return None
    return bounds


def index_entries(sl: ast.expr, idx: Value) -> list | None:
    """The index as ops/strides.py reads it: each element an int, a slice of known
    bounds, None, Ellipsis, or "advanced" (a tensor or a list: the result is a
    tensor of its own); None where one is none of those or not known."""
    elems = _elements(sl, idx)
    spread = isinstance(sl, ast.Tuple) or _index_tuple(idx)
    values = idx.items if isinstance(idx, TupleV) and spread else (idx,)
    if elems is None or len(values) != len(elems):
        return None
    out: list = []
    for e, v in zip(elems, values, strict=True):
        if _is_const(e, Ellipsis):
            out.append(Ellipsis)
        elif _is_const(e, None) or isinstance(v, NoneV):
            out.append(None)
        elif isinstance(e, ast.List) or isinstance(v, TensorV) or _int_list(v):
            out.append("advanced")
        elif isinstance(v, SliceV):
            bounds = [_bound(b) for b in (v.lower, v.upper, v.step)]
            if any(b is False for b in bounds) or bounds[2] == 0:
                return None
            out.append(slice(*bounds))
        elif isinstance(v, IntV) and v.value is not None and v.value.value is not None:
            out.append(int(v.value.value))
        else:
            return None
    return out


def basic(sl: ast.expr, idx: Value) -> bool:
    """Whether the index is a basic one whatever its values: ints, slices, None and
    Ellipsis only (`A[:, i]` with i not known). torch returns a view of the tensor
    for every such index, so its storage is the tensor's though its strides are
    not known."""
    elems = _elements(sl, idx)
    spread = isinstance(sl, ast.Tuple) or _index_tuple(idx)
    values = idx.items if isinstance(idx, TupleV) and spread else (idx,)
    if elems is None or len(values) != len(elems):
        return False
    for e, v in zip(elems, values, strict=True):
        if isinstance(e, ast.List) or _int_list(v):
            return False
        if not (_is_const(e, Ellipsis) or isinstance(v, (NoneV, SliceV, IntV))):
            return False
    return True


def _bound(b: Value | None) -> int | None | bool:
    """A slice bound: an int, None where absent, False where not known."""
    if b is None or isinstance(b, NoneV):
        return None
    if isinstance(b, IntV) and b.value is not None and b.value.value is not None:
        return int(b.value.value)
    return False


def list_index_bytes(sl: ast.expr, idx: Value) -> list:
    """For each list written in the index (`y[:, [0, 2]]`), the bytes of the int64
    tensor torch makes of it, which the gradient of the index keeps: 8 per int; None
    where the list holds anything else."""
    elems = _elements(sl, idx)
    spread = isinstance(sl, ast.Tuple) or _index_tuple(idx)
    values = idx.items if isinstance(idx, TupleV) and spread else (idx,)
    if elems is None or len(values) != len(elems):
        return []
    out: list = []
    for e, v in zip(elems, values, strict=True):
        if isinstance(e, ast.List) or _int_list(v):
            items = v.items if isinstance(v, TupleV) else None
            ints = items is not None and all(isinstance(i, IntV) for i in items)
            out.append(Expr.const(8 * len(items)) if ints else None)  # type: ignore[arg-type]
    return out


def _int_list(v: Value) -> bool:
    """A list of ints held in a name (`x[:, rows]`): an advanced index, as torch
    makes a tensor of it."""
    return (
        isinstance(v, TupleV)
        and v.kind == "list"
        and bool(v.items)
        and all(isinstance(i, IntV) for i in v.items)
    )
