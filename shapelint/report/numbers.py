"""Numbers and formulas as every face prints them: a figure's formula in human
form, its value at bound dims, SI prefixes."""

from __future__ import annotations

import os


def evaluate(expr: str | None, dims: dict[str, int]) -> int | None:
    """Value of a printed expression with dims bound, or None if a name is unbound."""
    if expr is None:
        return None
    from shapelint.notation.symbolic import parse_expr

    try:
        return parse_expr(expr).evaluate(dims)
    except (KeyError, ZeroDivisionError, ValueError):
        return None


def unknown_calls(f: dict, limit: int = 3) -> str:
    """`2 calls unknown: line 14 F.conv2d, line 19 self.net` ("" when none)."""
    unk = f.get("unknown") or []
    if not unk:
        return ""
    shown = ", ".join(f"{_line(u, f.get('path'))} {u['op']}" for u in unk[:limit])
    more = f", and {len(unk) - limit} more" if len(unk) > limit else ""
    return f"{len(unk)} call{'s' * (len(unk) != 1)} unknown: {shown}{more}"


def _line(u: dict, home: str | None) -> str:
    """`line 14`; `lib.py:5` where the entry names a file other than home's (the
    target's: a statement in a module it imports)."""
    path = u.get("path")
    if path is None or same_file(path, home):
        return f"line {u['line']}"
    return f"{os.path.basename(path)}:{u['line']}"


def same_file(path: str, home: str | None) -> bool:
    return home is not None and os.path.realpath(path) == os.path.realpath(home)


def flops_figure(f: dict, key: str = "flops", limit: int = 3) -> str:
    """A function's (or call's) FLOPs or bytes for people: the formula when every
    call is known; otherwise a lower bound (`≥ 2·b·n·d`, `?` when nothing is
    known) with the calls that are missing (none listed with limit 0). Never a
    clean number, never 0, for a partial sum."""
    total = f.get(key)
    if complete(f, key) and total is not None:
        return human(total)
    head = "?" if total in (None, "0") else f"≥ {human(total)}"
    missing = unknown_calls(f, limit) if limit else ""
    return f"{head}, {missing}" if missing else head


def unit_figure(f: dict, unit: str = "FLOPs", key: str = "flops", limit: int = 3) -> str:
    """flops_figure with its unit and, where the dims give it, its value with an
    SI prefix: `2·B·T·C FLOPs`, `2·B·T·C = 1.23 GFLOPs`, `1.23 GFLOPs (1,234,567,890)`,
    `≥ 768 FLOPs, 3 calls unknown: ...`, `? FLOPs`."""
    total = f.get(key)
    if not complete(f, key) or total is None:
        head = f"? {unit}" if total in (None, "0") else f"≥ {_bound(total, unit)}"
        missing = unknown_calls(f, limit) if limit else ""
        return f"{head}, {missing}" if missing else head
    formula, value = human(total), f.get(f"{key}_value")
    if value is None:
        return f"{formula} {unit}"
    if formula == str(value):
        return si(value, unit) + (f" ({value:,})" if abs(value) >= 1000 else "")
    return f"{formula} = {si(value, unit)}"


def _bound(total: str, unit: str) -> str:
    """What is known of a partial sum: a number as a complete one prints
    (`4.86 GB (4,863,369,224)`), a formula as it reads."""
    if total.isdigit() and int(total) >= 1000:
        return f"{si(int(total), unit)} ({int(total):,})"
    return f"{human(total)} {unit}"


def value_figure(f: dict, key: str = "flops") -> str:
    """A figure's value at the bound dims: `?` for a partial sum (no bound is a
    figure, nor an intensity computed from one)."""
    return si(f.get(f"{key}_value")) if complete(f, key) else "?"


def complete(f: dict, key: str = "flops") -> bool:
    """Whether a record's figure is all of it: FLOPs say `complete`; bytes also
    `bytes_complete` (a call of unknown bytes may cost no FLOPs)."""
    whole = f.get("complete", True)
    if key in ("flops_backward", "flops_step"):
        return whole and f.get(f"{key[6:]}_complete", False)
    if key == "activation_bytes":
        return whole and f.get("activation_complete", False)
    return whole and f.get("bytes_complete", True) if key == "bytes" else whole


def dim_human(d: str | None) -> str:
    """One dim of a record's shape (program form) for people: a variadic no code
    names is `...`, a size no code names `?`."""
    if d is None:
        return "?"
    if d.startswith("*"):
        from shapelint.notation.symbolic import is_internal

        return "..." if is_internal(d[1:]) else d
    return human(d)


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


def macs(expr: str | None) -> str | None:
    """A FLOPs figure as multiply-accumulates: half of it (flops count 2 per
    multiply-add, so every formula halves exactly)."""
    if expr is None:
        return None
    from shapelint.notation.symbolic import parse_expr

    try:
        e = parse_expr(expr)
    except ValueError:
        return None
    half = e.exact_div(2)
    return (half if half is not None else e // 2).to_python()


def to_macs(report: dict) -> dict:
    """report (a cost report, a target, a record) with its FLOPs in MACs, in place,
    labelled: `unit` says which every face prints."""

    def walk(item) -> None:
        if isinstance(item, list):
            for x in item:
                walk(x)
            return
        if not isinstance(item, dict):
            return
        for key in ("flops", "flops_backward", "flops_step"):
            if isinstance(item.get(key), str):
                item[key] = macs(item[key])
            if isinstance(item.get(f"{key}_value"), int):
                item[f"{key}_value"] //= 2
        for key in ("calls", "functions", "target"):
            walk(item.get(key))

    walk(report)
    report["unit"] = "MACs"
    if isinstance(report.get("target"), dict):
        report["target"]["unit"] = "MACs"
    return report
