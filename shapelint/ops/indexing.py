"""Sizes that basic indexing leaves: the length of a slice of a dimension.

``x[..., :L]`` after a causal convolution keeps ``L`` of ``L + k - 1`` positions. A
slice's length is told only when it is certain: with numbers, or with bounds that
provably fall inside the dimension, taking every name to be a size (at least 1) and
using what the code asserted (`assert t <= block_size` makes `bias[:t]` of a buffer of
block_size t long).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

from shapelint.notation.symbolic import Expr, FloorDiv, nonnegative_facts, record_nonnegative
from shapelint.ops.values import Dim

_AT_LEAST = itertools.count()


def size_at_least(bounds: list[Expr]) -> Expr | None:
    """A size no code names that is at least each of bounds, the scope told so
    (record_nonnegative): `max(u, n)` of a u the data picks, a bincount's length with
    minlength n. A slice of it to n is then n long. None unless one bound is at
    least 1: names stand for sizes of 1 or more, and `max(u, 0)` may be 0."""
    if not any(provably_nonnegative(b - 1) for b in bounds):
        return None
    size = Expr.name(f"_max{next(_AT_LEAST)}")
    for b in bounds:
        record_nonnegative(size - b)
    return size


def provably_nonnegative(e: Expr) -> bool:
    """True when e >= 0 for every binding of its names to sizes >= 1 that satisfies
    the scope's facts (notation.symbolic.record_nonnegative): e is a nonnegative
    multiple of facts plus a polynomial that is nonnegative on sizes by itself."""
    if _nonnegative_on_sizes(e):
        return True
    facts = nonnegative_facts()
    if not facts:
        return False
    if any(_nonnegative_on_sizes(e - f) for f in facts):
        return True  # a fact itself, or more (`n + 1` where n >= 0 is known)
    # Each fact f >= 0 may pay for e's negative terms: e - c·f >= 0 suffices for c >= 0.
    # Greedy, one fact per negative monomial: facts are a few bounds on sizes.
    for _ in range(len(facts)):
        reduced = _subtract_a_fact(e, facts)
        if reduced is None:
            return False
        e = reduced
        if _nonnegative_on_sizes(e):
            return True
    return False


def _subtract_a_fact(e: Expr, facts) -> Expr | None:
    """q·e - p·f for the first fact f whose terms cancel one of e's negative terms
    (p/q = that term's coefficient over f's, > 0); None when no fact does."""
    for mono, coeff in e.terms.items():
        if not mono or coeff >= 0:
            continue
        for f in facts:
            fc = f.terms.get(mono, 0)
            if fc < 0:
                ratio = Fraction(coeff, fc)
                return e * ratio.denominator - f * ratio.numerator
    return None


def _nonnegative_on_sizes(e: Expr) -> bool:
    """e >= 0 for every binding of its names to sizes >= 1: a constant, or names
    and quotients of sizes with positive coefficients whose value at their least
    (a name 1, a floor quotient of sizes 0, an exact one 1) is >= 0 (the polynomial only grows from
    there). Negative coefficients, and quotients that may be negative: not decided."""
    if e.value is not None:
        return e.value >= 0
    at_least = 0
    for mono, coeff in e.terms.items():
        if not mono:
            at_least += coeff
            continue
        if coeff < 0 or not all(isinstance(atom, str) or _sized_quotient(atom) for atom, _ in mono):
            return False
        if all(isinstance(atom, str) or _whole_quotient(atom) for atom, _ in mono):
            at_least += coeff
    return at_least >= 0


def _whole_quotient(atom: object) -> bool:
    """An exact quotient of a size by a size (`image_size//patch_size` where the
    division was checked): a positive multiple of the divisor over it, so at least 1."""
    return (
        isinstance(atom, FloorDiv)
        and atom.exact
        and _nonnegative_on_sizes(atom.num - 1)
        and _nonnegative_on_sizes(atom.den - 1)
    )


def _sized_quotient(atom: object) -> bool:
    """A floor quotient of a size by a size (`seq_len//patch_size`): at least 0."""
    return (
        isinstance(atom, FloorDiv)
        and _nonnegative_on_sizes(atom.num)
        and _nonnegative_on_sizes(atom.den - 1)
    )


def slice_length(n: Dim, lower: Expr | None, upper: Expr | None, step: Expr | None) -> Dim:
    """len(range(n)[lower:upper:step]) for bounds that are given (None: omitted), or
    None when it cannot be told for certain."""
    if not isinstance(n, Expr):
        return None
    if step is not None and step.value != 1:
        # An omitted bound is fine; a given one must be a number.
        given = all(b is None or b.value is not None for b in (lower, upper))
        if n.value is not None and given and step.value:
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


def slice_bounds(
    n: Dim, lower: Expr | None, upper: Expr | None, step: Expr | None
) -> tuple[Expr, ...]:
    """Sizes len(range(n)[lower:upper:step]) cannot exceed, for a slice whose length
    slice_length cannot tell: n itself, and a stop the code gives from the start
    with unit step where it is never negative (`[:n - 1]` is at most n - 1 long; a
    negative stop would count from the end)."""
    bounds = [n] if isinstance(n, Expr) else []
    from_start = lower is None or lower.value == 0
    unit = step is None or step.value == 1
    if from_start and unit and upper is not None and provably_nonnegative(upper):
        bounds.append(upper)
    return tuple(bounds)


def exceeds_every_length(size: Expr, bounds: tuple[Expr, ...]) -> Expr | None:
    """A bound size is provably above (so no slice bounded by it is size long), or
    None."""
    return next((b for b in bounds if provably_nonnegative(size - b - 1)), None)


def _v(e: Expr | None) -> int | None:
    return None if e is None else e.value
