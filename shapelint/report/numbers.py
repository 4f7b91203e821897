"""Numbers and formulas as every face prints them: a figure's formula in human
form, its value at bound dims, SI prefixes."""

from __future__ import annotations


def evaluate(expr: str | None, dims: dict[str, int]) -> int | None:
    """Value of a printed expression with dims bound, or None if a name is unbound."""
    if expr is None:
        return None
    from shapelint.notation.symbolic import parse_expr

    try:
        return parse_expr(expr).evaluate(dims)
    except (KeyError, ZeroDivisionError, ValueError):
        return None


def human(expr: str | None) -> str:
    if expr is None:
        return "?"
    from shapelint.notation.symbolic import parse_expr

    try:
        return parse_expr(expr).to_human()
    except ValueError:
        return expr


def si(n: int | float | None, unit: str | None = None) -> str:
    """n with an SI prefix at 3 significant digits; None is "?". Without a unit,
    compact, as in the cost tables (`1.2G`, `48`); with one, spaced, as in the
    run report (`1.2 GFLOP/s`, `48 B`)."""
    if n is None:
        return "?"
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            if unit is None:
                return f"{n / scale:.3g}{prefix}"
            return f"{n / scale:.3g} {prefix}{unit}"
    if unit is None:
        return str(n)
    return f"{n:.3g} {unit}".rstrip() if isinstance(n, float) else f"{n} {unit}".rstrip()
