"""einx's element-by-element functions and `get_at` (einx 0.4), as einx defines
them: `einx.subtract("b h i, b h j -> b h i j", a, b)` lines each operand's axes
up with the output's by name and broadcasts, `get_at("h [c] d, h b n -> h b n d",
codes, ids)` picks along the bracketed axis of its first operand at the indices its
second one holds. The output's shape follows from its expression, each axis's
length from the operands that name it (or a keyword, `d=4`); an operand written as
nothing is a scalar. einx runs them as torch's element-wise ops and indexing, which
torch's flop counter counts as 0, forward and backward.

Only what is sure is given: an expression einx's own notation reads in ways the
einops parser does not (`a...`, nested brackets, a composed axis on the input side
whose parts are not known), an operand whose rank is not known, or two lengths of
one axis that may differ leave the call unmodelled (None), so it stays unknown."""

from __future__ import annotations

from shapelint.notation.einops_pattern import Expression, parse_expression
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import (
    UNKNOWN,
    BoolV,
    Cost,
    FloatV,
    IntV,
    OpResult,
    StrV,
    TensorV,
    Value,
    Var,
    promoted_dtype,
)

_ARITHMETIC = ("add", "subtract", "multiply", "true_divide", "divide", "floor_divide")
_ARITHMETIC += ("maximum", "minimum", "logaddexp")
COMPARISONS = ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")
COMPARISONS += ("logical_and", "logical_or")
# Ops whose backward saves nothing autograd keeps (an add's gradient is the
# incoming one); the others save operands (a product, a pick's indices).
_SAVE_NOTHING = frozenset({"add", "subtract", *COMPARISONS})
ELEMENTWISE = frozenset({*_ARITHMETIC, *COMPARISONS, "where"})
FUNCTIONS = frozenset(f"einx.{name}" for name in (*ELEMENTWISE, "get_at"))
# Results autograd never tracks: booleans.
DETACHED = frozenset(f"einx.{name}" for name in COMPARISONS)


def einx_call(qual: str, args: list[Value], kwargs: dict[str, Value]) -> OpResult | None:
    """The result of `einx.<op>(pattern, *operands, **lengths)`; None: not modelled here."""
    op = qual.removeprefix("einx.")
    if qual not in FUNCTIONS or not args or not isinstance(args[0], StrV):
        return None
    pattern = args[0].value
    if pattern is None or pattern.count("->") != 1:
        return None
    operands = args[1:]
    lengths = {}
    for k, v in kwargs.items():
        if not (isinstance(v, IntV) and v.value is not None):
            return None  # a keyword that is no length (`backend=`, `graph=`)
        lengths[k] = v.value
    left, right = pattern.split("->")
    sides = [s.strip() for s in left.split(",")]
    if len(sides) != len(operands) or (op == "get_at") != (len(operands) == 2 and "[" in sides[0]):
        return None
    bracketed: set[str] = set()
    if op == "get_at":
        inner = sides[0][sides[0].find("[") + 1 : sides[0].find("]")]
        bracketed = set(inner.split())
        if len(bracketed) != 1 or "[" in sides[1] or sides[0].count("[") != 1:
            return None
        sides[0] = sides[0].replace("[", " ").replace("]", " ")
    if "[" in right or any("[" in s for s in sides):
        return None
    sizes: dict[str, Expr | None] = dict(lengths)
    ellipsis: list[tuple] = []
    for side, operand in zip(sides, operands, strict=True):
        if not _bind(side, operand, sizes, ellipsis):
            return None
    out = _output(right.strip(), sizes, ellipsis, bracketed)
    if out is None:
        return None
    dtype = _dtype(op, operands)
    zero = Expr.const(0)
    saved = zero if op in _SAVE_NOTHING else None
    return OpResult(TensorV(out, dtype), Cost(zero, None, None, saved=saved))


def _bind(side: str, operand: Value, sizes: dict, ellipsis: list) -> bool:
    """Each axis of the operand's expression to its length; False where einx's
    reading of it is not sure here."""
    if not side:
        return isinstance(operand, (IntV, FloatV, BoolV)) or (
            isinstance(operand, TensorV) and operand.shape == ()
        )
    expr = parse_expression(side)
    if expr.issues or not isinstance(operand, TensorV) or operand.rank is None:
        return False
    dims = list(operand.shape or ())
    groups = list(expr.groups)
    if expr.has_ellipsis:
        at = next(i for i, g in enumerate(groups) if g.is_ellipsis)
        n = len(dims) - (len(groups) - 1)
        if n < 0 or any(g.is_ellipsis is False and _has_ellipsis(g) for g in groups):
            return False
        ellipsis.append(tuple(dims[at : at + n]))
        dims = dims[:at] + [None] + dims[at + n :]
    if len(dims) != len(groups):
        return False
    for g, d in zip(groups, dims, strict=True):
        if g.is_ellipsis:
            continue
        if len(g.axes) != 1 or g.axes[0].is_anonymous:
            if not _composed(g, d, sizes):
                return False
            continue
        name = g.axes[0].name
        if not _agree(sizes, name, d):
            return False
    return True


def _has_ellipsis(group) -> bool:
    return any(a.is_ellipsis for a in group.axes)


def _composed(group, d, sizes: dict) -> bool:
    """A composed input axis (`(b s)`) or a number: sure only where every part is
    known already and their product is the operand's length."""
    total = Expr.const(1)
    for a in group.axes:
        if a.is_ellipsis:
            return False
        part = Expr.const(a.value) if a.is_anonymous else sizes.get(a.name)
        if part is None:
            return False
        total = total * part
    return d is not None and not isinstance(d, Var) and total == d


def _agree(sizes: dict, name: str, d) -> bool:
    if isinstance(d, Var):
        return False
    if name not in sizes:
        sizes[name] = d
        return True
    known = sizes[name]
    if known is None or d is None:
        sizes[name] = known if d is None else d
        return True
    return known == d  # two lengths that may differ: not sure which einx sees


def _output(side: str, sizes: dict, ellipsis: list, bracketed: set[str]) -> tuple | None:
    expr: Expression = parse_expression(side)
    if expr.issues:
        return None
    out: list = []
    for g in expr.groups:
        if g.is_ellipsis:
            if not ellipsis or any(e != ellipsis[0] for e in ellipsis):
                return None  # no operand says it, or two say different things
            out.extend(ellipsis[0])
            continue
        total: Expr | None = Expr.const(1)
        for a in g.axes:
            if a.is_ellipsis or a.name in bracketed:
                return None
            part = Expr.const(a.value) if a.is_anonymous else sizes.get(a.name, UNKNOWN)
            if part is UNKNOWN:
                return None  # an axis no operand or keyword gives
            total = None if part is None or total is None else total * part
        out.append(total)
    return tuple(out)


def _dtype(op: str, operands: list[Value]) -> str | None:
    if op in COMPARISONS:
        return "bool"
    if op == "get_at":
        first = operands[0]
        return first.dtype if isinstance(first, TensorV) else None
    values = operands[1:] if op == "where" else operands
    if op in ("true_divide", "divide") and all(
        v.dtype in ("int64", "int32", "bool") for v in values if isinstance(v, TensorV)
    ):
        return None  # true division of integers gives a float: not worked out here
    return promoted_dtype(values)
