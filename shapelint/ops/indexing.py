"""Sizes that basic indexing leaves: the length of a slice of a dimension.

``x[..., :L]`` after a causal convolution keeps ``L`` of ``L + k - 1`` positions. A
slice's length is told only when it is certain: with numbers, or with bounds that
provably fall inside the dimension, taking every name to be a size (at least 1).
"""

from __future__ import annotations

from shapelint.notation.symbolic import Expr
from shapelint.ops.values import Dim


def provably_nonnegative(e: Expr) -> bool:
    """True when e >= 0 for every binding of its names to sizes >= 1: a constant, or
    names with positive coefficients whose value at all-ones is >= 0 (the polynomial
    only grows from there). Floor divisions and negative coefficients: not decided."""
    if e.value is not None:
        return e.value >= 0
    at_ones = 0
    for mono, coeff in e.terms.items():
        if mono and (coeff < 0 or any(not isinstance(atom, str) for atom, _ in mono)):
            return False
        at_ones += coeff
    return at_ones >= 0


def slice_length(n: Dim, lower: Expr | None, upper: Expr | None, step: Expr | None) -> Dim:
    """len(range(n)[lower:upper:step]) for bounds that are given (None: omitted), or
    None when it cannot be told for certain."""
    if not isinstance(n, Expr):
        return None
    if step is not None and step.value != 1:
        if n.value is not None and None not in (_v(lower), _v(upper), step.value) and step.value:
            return Expr.const(len(range(n.value)[_v(lower) : _v(upper) : step.value]))
        return None
    lo = Expr.const(0) if lower is None else lower
    hi = n if upper is None else upper
    if n.value is not None and lo.value is not None and hi.value is not None:
        return Expr.const(len(range(n.value)[lo.value : hi.value]))
    # A negative number counts from the end.
    lo = n + lo if lo.value is not None and lo.value < 0 else lo
    hi = n + hi if hi.value is not None and hi.value < 0 else hi
    if all(provably_nonnegative(e) for e in (lo, hi - lo, n - hi)):
        return hi - lo
    return None


def _v(e: Expr | None) -> int | None:
    return None if e is None else e.value
