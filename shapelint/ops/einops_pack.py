"""einops.pack and einops.unpack, judged as einops 0.8.2 runs them on torch.

pack reshapes every tensor to (before..., -1, after...) and concatenates them on
the '*' axis; unpack slices that axis by the products of the packed shapes and
reshapes each slice back (one packed shape may hold a -1).
"""

from __future__ import annotations

from shapelint.notation.einops_pattern import Pattern, parse
from shapelint.notation.symbolic import Expr
from shapelint.ops.dtypes import dtype_bytes
from shapelint.ops.einops_transform import pattern_issue
from shapelint.ops.shape_rules import differs, dim_str, take_note
from shapelint.ops.shape_sim import BLOCK, Reject, align, product, promote, reshape, show_shape
from shapelint.ops.values import (
    UNKNOWN,
    Cost,
    IntV,
    OpIssue,
    OpResult,
    TensorV,
    TupleV,
    Value,
    Var,
)


def _layout(pat: Pattern) -> tuple[int, int]:
    axes = pat.left.axes()
    star = next(i for i, a in enumerate(axes) if a.name == "*")
    return star, len(axes) - star - 1


def _numel(v: Value) -> Expr | None:
    if not isinstance(v, TensorV) or v.shape is None:
        return None
    n = product(list(v.shape))
    return n if isinstance(n, Expr) else None


def pack(pattern: str, tensors: list[Value]) -> OpResult:
    """pack(tensors, pattern) -> TupleV((packed, packed_shapes))."""
    pat = parse("pack", pattern)
    label = f'pack(..., "{pattern}")'
    if not pat.ok:
        return OpResult(UNKNOWN, Cost(), [pattern_issue(i) for i in pat.issues])
    n_before, n_after = _layout(pat)
    items: list[Value] | None = list(tensors)
    if len(tensors) == 1 and isinstance(tensors[0], TupleV):
        items = list(tensors[0].items)
    elif len(tensors) == 1 and tensors[0] is UNKNOWN:
        items = None  # a list we cannot see into
    if items is not None and not items:
        issue = OpIssue("SHP212", f"{label}: cannot pack an empty list of tensors", ("arg", 0))
        return OpResult(UNKNOWN, Cost(), [issue])
    rank = n_before + 1 + n_after
    if items is None:
        return OpResult(TupleV((TensorV((None,) * rank), UNKNOWN)))
    issues: list[OpIssue] = []
    fronts: list[list] = []
    backs: list[list] = []
    packed: list[object] = []
    shapes: list[Value] = []
    for i, t in enumerate(items):
        shape = t.shape if isinstance(t, TensorV) else None
        before, middle, after, bad = align(shape, n_before, n_after, True)
        if bad:
            issues.append(
                OpIssue(
                    "SHP301",
                    f"{label}: tensor #{i} has shape {show_shape(shape)} but the pattern needs "
                    f"at least {n_before + n_after} dims",
                    ("arg", 0),
                )
            )
            continue
        fronts.append(before)
        backs.append(after)
        if isinstance(middle, list):
            try:
                reshape([*before, *middle, *after], [*before, Expr.const(-1), *after])
            except Reject:
                issues.append(
                    OpIssue(
                        "SHP302",
                        f"{label}: tensor #{i} of shape {show_shape(shape)} has a 0-size dim "
                        "outside '*', so pack cannot infer the size of its '*' part",
                        ("arg", 0),
                    )
                )
                continue
        if middle is BLOCK:
            packed.append(None)
            shapes.append(UNKNOWN)
            continue
        assert isinstance(middle, list)
        size = product(middle)
        packed.append(size if isinstance(size, Expr) else None)
        if any(isinstance(d, Var) for d in middle):
            shapes.append(UNKNOWN)
        else:
            shapes.append(TupleV(tuple(IntV(d) for d in middle)))
    if issues:
        return OpResult(UNKNOWN, Cost(), issues)
    out_dims: list[object] = []
    for column in [*zip(*fronts, strict=True), *zip(*backs, strict=True)]:
        sized = [(j, d) for j, d in enumerate(column) if isinstance(d, Expr)]
        for j, d in sized[1:]:
            # einops packs only tensors that agree outside '*': a number against
            # another, or formulas no sizes make equal (`dim` and `2·dim`)
            if differs(sized[0][1], d):
                first = sized[0][1]
                issues.append(
                    OpIssue(
                        "SHP302",
                        f"{label}: tensors #{sized[0][0]} and #{j} differ in a dim outside '*' "
                        f"({dim_str(first)} vs {dim_str(d)}); only the '*' part may differ",
                        ("arg", 0),
                        **take_note(),
                    )
                )
                return OpResult(UNKNOWN, Cost(), issues)
        known = [(j, d) for j, d in sized if d.value is not None]
        exprs = [d for _, d in sized]
        out_dims.append(known[0][1] if known else (exprs[0] if exprs else None))
    total = None
    if all(isinstance(p, Expr) for p in packed):
        total = sum(packed, Expr.const(0))  # type: ignore[arg-type]
    dims = out_dims[:n_before] + [total] + out_dims[n_before:]
    dtype = promote([t.dtype if isinstance(t, TensorV) else None for t in items])
    out = TensorV(tuple(dims), dtype)  # type: ignore[arg-type]
    numels = [_numel(t) for t in items]
    nbytes, item = None, dtype_bytes(dtype)
    if all(n is not None for n in numels) and item is not None:
        nbytes = sum(numels, Expr.const(0)) * 2 * item  # type: ignore[arg-type]
    return OpResult(
        TupleV((out, TupleV(tuple(shapes)))), Cost(Expr.const(0), Expr.const(0), nbytes), []
    )


def _packed_shapes(ps: Value) -> list[list[Expr | None] | None] | None:
    """The packed shapes as lists of int sizes (None: a shape we cannot see)."""
    if not isinstance(ps, TupleV):
        return None
    out: list[list[Expr | None] | None] = []
    for item in ps.items:
        if isinstance(item, TupleV):
            out.append([v.value if isinstance(v, IntV) else None for v in item.items])
        elif isinstance(item, IntV):
            raise Reject(
                "SHP218",
                "packed_shapes holds a number where a shape (a tuple or list) belongs",
                ("arg", 1),
            )
        else:
            out.append(None)
    return out


def unpack(pattern: str, args: list[Value]) -> OpResult:
    """unpack(tensor, packed_shapes, pattern) -> TupleV of tensors."""
    pat = parse("unpack", pattern)
    label = f'unpack(..., "{pattern}")'
    if not pat.ok:
        return OpResult(UNKNOWN, Cost(), [pattern_issue(i) for i in pat.issues])
    x = args[0] if args else UNKNOWN
    ps = args[1] if len(args) > 1 else UNKNOWN
    n_before, n_after = _layout(pat)
    shape = x.shape if isinstance(x, TensorV) else None
    dtype = x.dtype if isinstance(x, TensorV) else None
    before, middle, after, bad = align(shape, n_before, n_after, True)
    exact = isinstance(middle, list) and len(middle) == 1
    if bad or (
        isinstance(middle, list)
        and len(middle) != 1
        and not any(isinstance(d, Var) for d in middle)
    ):
        return OpResult(
            UNKNOWN,
            Cost(),
            [
                OpIssue(
                    "SHP301",
                    f"{label}: input has shape {show_shape(shape)} but the pattern needs exactly "
                    f"{n_before + 1 + n_after} dims",
                    ("arg", 0),
                )
            ],
        )
    axis = middle[0] if exact else None  # type: ignore[index]
    try:
        shapes = _packed_shapes(ps)
        if shapes is None:
            return OpResult(UNKNOWN, Cost(), [])
        pieces = _split(label, axis, shapes, before, after)
    except Reject as r:
        return OpResult(UNKNOWN, Cost(), [r.issue])
    outs: list[Value] = []
    for elem in pieces:
        if elem is None or not exact:
            outs.append(TensorV(None, dtype))
        else:
            outs.append(TensorV(tuple(elem), dtype))
    n, item = _numel(x), dtype_bytes(dtype)
    nbytes = n * 2 * item if n is not None and item is not None else None
    return OpResult(TupleV(tuple(outs)), Cost(Expr.const(0), Expr.const(0), nbytes), [])


def _split(label: str, axis: object, shapes: list, before: list, after: list) -> list:
    """einops' split of the packed axis, then the reshape of each slice; returns the
    dims of each piece (None where a packed shape is unknown)."""

    def length(s: list | None) -> object:
        if s is None:
            return None
        if any(isinstance(d, Expr) and d.value == -1 for d in s):
            return -1
        p = product(s)
        return p if isinstance(p, Expr) else None

    lengths = [length(s) for s in shapes]
    if sum(1 for v in lengths if v == -1) > 1:
        raise Reject(
            "SHP218",
            f"{label}: more than one packed shape holds -1; at most one size can be inferred",
            ("arg", 1),
        )
    n = len(shapes)
    if n == 0:
        return []
    # split_positions as einops computes them; the last one is the axis length.
    pos: list[object] = [Expr.const(0)] * n + [axis]
    if -1 not in lengths:
        for i in range(n - 1):
            pos[i + 1] = _add(pos[i], lengths[i])
    else:
        u = lengths.index(-1)
        for i in range(u):
            pos[i + 1] = _add(pos[i], lengths[i])
        for j in range(n - 1, u, -1):
            pos[j] = _add(pos[j + 1], lengths[j], -1)
    pieces: list = []
    for i, elem in enumerate(shapes):
        size = _slice_len(pos[i], pos[i + 1], axis)
        if elem is None:
            pieces.append(None)
            continue
        try:
            dims = reshape([*before, size, *after], [*before, *elem, *after])
        except Reject:
            raise Reject(
                "SHP302",
                f"{label}: cannot split the packed axis of size "
                f"{axis.to_human() if isinstance(axis, Expr) else '?'} into the packed shapes "
                f"{_show(shapes)}",
                ("arg", 1),
            ) from None
        pieces.append(dims)
    return pieces


def _add(a: object, b: object, sign: int = 1) -> object:
    if isinstance(a, Expr) and isinstance(b, Expr):
        return a + b * sign
    return None


def _slice_len(start: object, stop: object, axis: object) -> Expr | None:
    """len(range(n)[start:stop]) with Python's slice rules, when all are known."""
    if not all(isinstance(v, Expr) for v in (start, stop, axis)):
        if isinstance(start, Expr) and isinstance(stop, Expr):
            return stop - start  # the usual case: in-range positions
        return None
    s, e, n = start.value, stop.value, axis.value  # type: ignore[union-attr]
    if s is None or e is None or n is None:
        return stop - start  # type: ignore[operator]
    a, b, _ = slice(s, e).indices(n)
    return Expr.const(max(0, b - a))


def _show(shapes: list) -> str:
    return "[" + ", ".join("?" if s is None else show_shape(s) for s in shapes) + "]"
