"""Python scalars from the math module: `s / math.sqrt(d)` divides a tensor by
a float, and a scalar operand never takes the tensor's shape away."""

from __future__ import annotations

import math

from shapelint.notation.symbolic import Expr
from shapelint.ops.values import FloatV, IntV, TupleV, Value

# Functions of floats that return a float.
_FLOAT = frozenset(
    "sqrt exp log log2 log10 log1p expm1 pow sin cos tan asin acos atan atan2 sinh cosh tanh "
    "erf erfc gamma lgamma fabs hypot radians degrees fmod copysign cbrt exp2".split()
)
# Functions that return an int; the value where the analysis can say it.
_INT = frozenset("floor ceil trunc isqrt gcd lcm factorial comb perm prod".split())


# numpy's ufuncs of the same names, given Python numbers, return a numpy float:
# a float (np.float64 derives from it). Given anything else (an array, a tensor)
# they are not scalars.
_NUMPY_FLOAT = _FLOAT - {"pow", "gamma", "lgamma", "erf", "erfc", "atan2", "fmod", "hypot"}


def call(qual: str, args: list[Value]) -> Value | None:
    """The value of a math.* call (or numpy's float functions of Python numbers,
    or `operator.index` of an int); None when qual is not one of them."""
    module, _, name = qual.rpartition(".")
    if module == "numpy" and name in _NUMPY_FLOAT:
        if len(args) != 1 or not isinstance(args[0], (IntV, FloatV)):
            return None
        v = number(args[0])
        try:
            return FloatV(float(getattr(math, name)(v)) if v is not None else None)
        except (ValueError, OverflowError, TypeError):  # numpy's nan or inf: not a figure
            return FloatV(None)
    if module == "numpy" and name in ("floor", "ceil", "trunc") and len(args) == 1:
        # unlike math's, numpy's round to a numpy float (`int(np.ceil(c / 2) * 2)`)
        if not isinstance(args[0], (IntV, FloatV)):
            return None
        v = number(args[0])
        if v is None or v != v or abs(v) >= 2**62:  # not known, nan or inf
            return FloatV(None)
        return FloatV(float(getattr(math, name)(v)))
    if module == "numpy" and name == "prod" and len(args) == 1 and isinstance(args[0], TupleV):
        # of Python ints, a numpy int of their product (`int(np.prod(shape))`); of
        # no items, the float 1.0: not a size
        if args[0].items and all(isinstance(i, IntV) for i in args[0].items):
            return _prod(args[0])
        return None
    if module == "numpy" and name == "prod" and len(args) == 1 and isinstance(args[0], IntV):
        return args[0]  # of one Python int, a numpy int of it (`np.prod(state_shape)`)
    if qual == "operator.index" and len(args) == 1 and isinstance(args[0], IntV):
        return args[0]  # an int is its own index (anything else: a TypeError, not followed)
    if module != "math":
        return None
    if name in _FLOAT:
        vals = [number(a) for a in args]
        if vals and all(v is not None for v in vals):
            try:
                return FloatV(float(getattr(math, name)(*vals)))
            except (ValueError, OverflowError, TypeError):  # math's own refusals
                return FloatV(None)
        return FloatV(None)
    if name in _INT:
        if name in ("floor", "ceil", "trunc") and len(args) == 1 and isinstance(args[0], IntV):
            return args[0]
        if name in ("floor", "ceil", "trunc") and len(args) == 1 and isinstance(args[0], FloatV):
            v = args[0].value
            if v is not None and v == v and abs(v) < 2**62:  # not nan, not inf
                return IntV(Expr.const(getattr(math, name)(v)))
        if name == "prod" and args and isinstance(args[0], TupleV):
            return _prod(args[0])
        return _of_known_ints(name, args)
    return None


# math's integer functions computed where every argument is a known int; each
# argument at most this, and the result below 2**62 (factorial and comb grow fast).
_LARGEST = 10_000


def _of_known_ints(name: str, args: list[Value]) -> IntV:
    """`math.gcd(16, 12)` and the like of known ints; an int of unknown value where
    one is not known, or where math refuses them."""
    vals = [number(a) if isinstance(a, IntV) else None for a in args]
    if name not in ("gcd", "lcm", "isqrt", "factorial", "comb", "perm") or not vals:
        return IntV(None)
    if any(not isinstance(v, int) or abs(v) > _LARGEST for v in vals):
        return IntV(None)
    try:
        out = getattr(math, name)(*vals)
    except (ValueError, TypeError):  # Python raises there: no value
        return IntV(None)
    return IntV(Expr.const(out) if abs(out) < 2**62 else None)


def number(v: Value | None) -> int | float | None:
    """A Python number the analysis knows exactly (an int as its constant; a bool is
    no number here), else None."""
    if isinstance(v, IntV) and v.value is not None:
        return v.value.value
    if isinstance(v, FloatV):
        return v.value
    return None


def _prod(t: TupleV) -> IntV:
    out = Expr.const(1)
    for v in t.items:
        if not isinstance(v, IntV) or v.value is None:
            return IntV(None)
        out = out * v.value
    return IntV(out)
