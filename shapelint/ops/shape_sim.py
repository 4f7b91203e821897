"""What einops and torch compute with, simulated on abstract sizes.

einops multiplies and divides the keyword lengths with plain Python operators
and hands the results to ``torch.reshape`` and ``Tensor.expand``; which of those
raise depends on the Python types involved (``1 * "3"`` is ``"3"``, ``6 // 2.0``
is ``3.0``, a float in a shape is a TypeError, ``True`` is an int to Python but
not to torch). These helpers follow those rules where the values are known and
stay silent where they are not. Sizes are ``Expr`` (an int, possibly
symbolic), ``None`` (an int of unknown value), a ``Var`` (several dims),
``BLOCK`` (dims whose number is unknown) or ``Foreign`` (a keyword value that
is not an int).
"""

from __future__ import annotations

from dataclasses import dataclass

from shapelint.notation.symbolic import Expr
from shapelint.ops.dtypes import promote_all
from shapelint.ops.values import BoolV, FloatV, IntV, NoneV, OpIssue, StrV, Value, Var


class _Block:
    """A run of dims of unknown length (an ellipsis over a tensor of unknown rank)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "BLOCK"


BLOCK = _Block()


@dataclass(frozen=True)
class Foreign:
    """A keyword length that is not an int: kind is float|str|bool|none|object;
    value is the Python value when known. ``src`` names the keyword."""

    kind: str
    value: object = None
    src: str | None = None


class Reject(Exception):  # noqa: N818 - a verdict, not a failure of shapelint
    """einops (or torch under it) would raise; carries the issue to report."""

    def __init__(self, code: str, message: str, where: tuple = ("call",), **fields):
        super().__init__(message)
        self.issue = OpIssue(code, message, where, **fields)


def kw_value(v: Value, name: str) -> Expr | None | Foreign:
    """How a keyword argument's abstract value takes part in einops' arithmetic."""
    if isinstance(v, IntV):
        return v.value
    if isinstance(v, BoolV):
        return Foreign("bool", v.value, name)
    if isinstance(v, FloatV):
        return Foreign("float", v.value, name)
    if isinstance(v, StrV):
        return Foreign("str", v.value, name)
    if isinstance(v, NoneV):
        return Foreign("none", None, name)
    return Foreign("object", None, name)


def const(x: object) -> int | None:
    return x.value if isinstance(x, Expr) else None


def is_int(x: object) -> bool:
    """An int to Python's isinstance(x, int) (bools included)."""
    return x is None or isinstance(x, Expr) or (isinstance(x, Foreign) and x.kind == "bool")


def _as_int(x: object) -> Expr | None:
    if isinstance(x, Foreign):  # a bool
        return None if x.value is None else Expr.const(int(bool(x.value)))
    return x  # type: ignore[return-value]


def py_mul(a: object, b: object) -> object:
    """``a * b`` with Python's rules; raises TypeError where Python would."""
    if is_int(a) and is_int(b):
        x, y = _as_int(a), _as_int(b)
        return None if x is None or y is None else x * y
    fa = a if isinstance(a, Foreign) else None
    fb = b if isinstance(b, Foreign) else None
    src = (fa.src if fa else None) or (fb.src if fb else None)
    kinds = {f.kind for f in (fa, fb) if f is not None and f.kind != "bool"}
    if "object" in kinds:
        return Foreign("object", None, src)
    if "none" in kinds:
        raise TypeError(src)
    if kinds == {"str"}:
        if fa is not None and fb is not None and fa.kind == fb.kind == "str":
            raise TypeError(src)
        if "float" in kinds:
            raise TypeError(src)
        return Foreign("str", None, src)
    if "str" in kinds:  # str with float
        raise TypeError(src)
    # floats, possibly with ints
    va = _num(a)
    vb = _num(b)
    return Foreign("float", None if va is None or vb is None else va * vb, src)


def _num(x: object) -> float | int | None:
    if isinstance(x, Foreign):
        return x.value if isinstance(x.value, (int, float)) else None
    return const(x)


def py_floordiv(a: Expr | None, b: object) -> object:
    """``a // b`` for an int ``a`` (a tensor dim); raises ZeroDivisionError/TypeError.
    Used where einops has checked that b divides a, so the quotient is exact."""
    if is_int(b):
        y = _as_int(b)
        if y is not None and y.value == 0:
            raise ZeroDivisionError(b.src if isinstance(b, Foreign) else None)
        if a is None or y is None:
            return None
        return a.divide_exact(y)
    assert isinstance(b, Foreign)
    if b.kind == "object":
        return b
    if b.kind in ("str", "none"):
        raise TypeError(b.src)
    if b.value == 0:
        raise ZeroDivisionError(b.src)
    va = const(a) if a is not None else None
    return Foreign("float", None if va is None or b.value is None else va // b.value, b.src)


def product(dims: list) -> Expr | None | _Block:
    """The element count of dims; a Var counts as its own symbolic product."""
    out = Expr.const(1)
    for d in dims:
        if d is BLOCK:
            return BLOCK
        if d is None or isinstance(d, Foreign):
            return None
        out = out * (Expr.name(d.name) if isinstance(d, Var) else d)
    return out


def group_size(lengths: list) -> object:
    """einops' ``_product`` of one output group; a group of one keeps a Var whole."""
    if len(lengths) == 1 and isinstance(lengths[0], (Var, _Block)):
        return lengths[0]
    out: object = Expr.const(1)
    for v in lengths:
        if v is BLOCK:
            return None
        out = py_mul(out, Expr.name(v.name) if isinstance(v, Var) else v)
    return out


def check_size_arg(v: object, what: str, pos: int) -> object:
    """One element of a size list as torch's argument parser takes it: floats, strs
    and None are TypeErrors; a bool is one only in the first position (elsewhere it
    passes as 0 or 1). Returns the size as an int (Expr or None)."""
    if isinstance(v, Foreign):
        if v.kind == "object":
            return None
        if v.kind != "bool" or pos == 0:
            raise Reject(
                "SHP208",
                f"{what} would get {_foreign_str(v)} where torch needs an int",
                where_of(v),
            )
        return _as_int(v)
    return v


_U64 = 2**64
_NUMEL_MAX = 2**63 - 1


def numel_overflows(dims: list) -> bool:
    """torch's check on a new tensor's sizes (``safe_compute_numel``): the sizes,
    read as uint64 in order, are multiplied with a sticky overflow flag, and the
    product must fit an int64. So a size below -1 is refused unless a 0 comes first
    or right after it (``expand`` passes such sizes through unchecked). A size that
    is not a known int counts as 1: taken non-empty, and 1 is the non-empty size
    that neither overflows the product nor zeroes it, so a refusal here holds for
    every non-empty value."""
    prod, overflow = 1, False
    for d in dims:
        c = const(d)
        prod *= 1 if c is None else c % _U64
        if prod >= _U64:
            overflow, prod = True, prod % _U64
    return overflow or prod > _NUMEL_MAX


def where_of(v: object) -> tuple:
    return ("kwarg", v.src) if isinstance(v, Foreign) and v.src else ("call",)


def _foreign_str(v: Foreign) -> str:
    if v.value is not None or v.kind == "none":
        return repr(v.value)
    return f"a {v.kind}"


def reshape(src: list, target: list, blame: str | None = None) -> list:
    """``tensor.reshape(target)`` for a tensor of dims ``src``; returns the new dims."""
    where = ("kwarg", blame) if blame else ("call",)
    target = [check_size_arg(v, "reshape", i) for i, v in enumerate(target)]
    consts = [const(v) for v in target]
    if any(c is not None and c < -1 for c in consts):
        bad = next(c for c in consts if c is not None and c < -1)
        raise Reject("SHP208", f"reshape would get the invalid size {bad}", where)
    infer = [i for i, c in enumerate(consts) if c == -1]
    if len(infer) > 1:
        raise Reject("SHP208", "reshape would get -1 for more than one size", where)
    numel = product(src)
    if infer:
        others = [v for i, v in enumerate(target) if i != infer[0]]
        rest = product(others)
        # torch refuses a -1 beside a 0 whatever the other sizes (unknown ones too).
        if any(const(v) == 0 for v in others):
            raise Reject("SHP208", "reshape cannot infer a -1 size next to a 0 size", where)
        inferred: object = None
        if isinstance(numel, Expr) and isinstance(rest, Expr):
            if numel.value is not None and rest.value is not None and numel.value % rest.value:
                raise Reject(
                    "SHP208",
                    f"reshape cannot split {numel.value} elements into {_show(target)}",
                    where,
                )
            inferred = numel.divide_exact(rest)  # torch rejects a -1 that does not divide
        return [inferred if i == infer[0] else v for i, v in enumerate(target)]
    total = product(target)
    if isinstance(numel, Expr) and isinstance(total, Expr) and numel.definitely_differs(total):
        raise Reject(
            "SHP208",
            f"reshape cannot fit {numel.value} elements into {_show(target)}",
            where,
        )
    return list(target)


def _show(dims: list) -> str:
    return "[" + ", ".join(show_dim(d) for d in dims) + "]"


def show_dim(d: object) -> str:
    if d is None:
        return "?"
    if d is BLOCK:
        return "*?"
    if isinstance(d, Var):
        return str(d)
    if isinstance(d, Foreign):
        return _foreign_str(d)
    return d.to_human()  # type: ignore[union-attr]


def show_shape(dims: list | tuple | None) -> str:
    return "[?...]" if dims is None else _show(list(dims))


def align(
    shape: tuple | None, n_before: int, n_after: int, has_ellipsis: bool
) -> tuple[list, list | _Block, list, bool]:
    """Match a shape to ``n_before`` dims, an optional ellipsis, ``n_after`` dims.

    Returns (before, middle, after, rank_error). Dims hidden behind a Var are None;
    ``middle`` is BLOCK when the ellipsis covers an unknown number of dims. A rank
    error is reported only when certain (a Var may stand for zero dims).
    """
    if shape is None:
        return [None] * n_before, (BLOCK if has_ellipsis else []), [None] * n_after, False
    dims = list(shape)
    var_at = [i for i, d in enumerate(dims) if isinstance(d, Var)]
    fixed = len(dims) - len(var_at)
    if not var_at:
        if has_ellipsis:
            if len(dims) < n_before + n_after:
                return [None] * n_before, BLOCK, [None] * n_after, True
            return (
                dims[:n_before],
                dims[n_before : len(dims) - n_after],
                dims[len(dims) - n_after :],
                False,
            )
        if len(dims) != n_before:
            return [None] * n_before, [], [], True
        return dims, [], [], False
    first, last = var_at[0], var_at[-1]
    tail = len(dims) - last - 1
    if has_ellipsis:
        if first >= n_before and tail >= n_after:
            return (
                dims[:n_before],
                dims[n_before : len(dims) - n_after],
                dims[len(dims) - n_after :],
                False,
            )
        before = dims[: min(first, n_before)] + [None] * (n_before - min(first, n_before))
        k = min(tail, n_after)
        after = [None] * (n_after - k) + (dims[len(dims) - k :] if k else [])
        return before, BLOCK, after, False
    if fixed > n_before:
        return [None] * n_before, [], [], True
    before = dims[: min(first, n_before)]
    k = min(tail, n_before - len(before))
    after = dims[len(dims) - k :] if k else []
    return before + [None] * (n_before - len(before) - k) + after, [], [], False


def promote(dtypes: list[str | None]) -> str | None:
    """torch.promote_types over tensors of the same category (what torch.cat does)."""
    return promote_all(dtypes) if dtypes else None
