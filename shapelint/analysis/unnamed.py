"""A figure with a factor no code names is not a figure.

Inside a function the analysis names every dim it cannot see (`_v3`, `_e25_0`),
so that a later use, or a caller, can bind it. What leaves the analysis must be
evaluable with the names it contains: a cost that still holds a made-up name
is unknown (its formula, in human form with `?`, stays in the notes), and the
function's total is a lower bound from its other calls. Shapes in the records
spell such a dim as None (`?`) and such a variadic as `...`.

This runs once per file, on what the analysis hands out, never in the
interpreter's hot paths.
"""

from __future__ import annotations

import dataclasses

from shapelint.notation.symbolic import Expr, is_internal
from shapelint.ops.values import Cost

WHY = "a dimension no code names"


def _unnamed(e: Expr | None) -> bool:
    return e is not None and any(is_internal(n) for n in e.names())


def unnamed_cost(c: Cost) -> bool:
    return _unnamed(c.flops) or _unnamed(c.bytes) or _unnamed(c.other_flops)


def honest_cost(c: Cost) -> Cost:
    """c itself, or an unknown cost that says which formula it could not name."""
    if not unnamed_cost(c):
        return c
    shown = c.flops if c.flops is not None else c.bytes
    note = f"{WHY}: {shown.to_human()}" if shown is not None else WHY
    return Cost(None, None, None, [note, *c.notes], complete=False)


def spell_dim(d: str | None) -> str | None:
    if d is None:
        return None
    if d.startswith("*"):
        return "..." if is_internal(d[1:]) else d
    try:
        from shapelint.notation.symbolic import parse_expr

        return None if _unnamed(parse_expr(d)) else d
    except ValueError:
        return d


def spell_shape(shape: list | None) -> list | None:
    if shape is None:
        return None
    return [spell_dim(d) for d in shape]


def honest_record(r) -> bool:
    """Make one CallRecord (and the calls it ran) honest in place; True if its
    cost changed."""
    changed = False
    for ch in r.children:
        changed |= honest_record(ch)
    new = honest_cost(r.cost)
    if new is not r.cost:
        r.cost = new
        changed = True
    r.inputs = [spell_shape(s) for s in r.inputs]
    r.output = spell_shape(r.output)
    return changed


def total(costs) -> tuple[Expr, Expr, Expr, bool]:
    """The known part of a sum of costs, and whether it is all of it."""
    flops, other, byts = Expr.const(0), Expr.const(0), Expr.const(0)
    complete = True
    for c in costs:
        complete &= c.complete and c.flops is not None
        flops = flops + c.flops if c.flops is not None else flops
        other = other + c.other_flops if c.other_flops is not None else other
        byts = byts + c.bytes if c.bytes is not None else byts
    return flops, other, byts, complete


def honest_functions(records, functions) -> list:
    """The records made honest in place; the function summaries, each with a
    lower bound from its other calls where one of its calls was unnamed."""
    changed: dict[str, list] = {}
    for r in records:
        if honest_record(r):
            changed.setdefault(r.function, []).append(r)
    out = []
    for f in functions:
        if f.name in changed or unnamed_cost(Cost(f.flops, f.other_flops, f.bytes)):
            flops, other, byts, complete = total(r.cost for r in records if r.function == f.name)
            seen = {(u["line"], u["op"]) for u in f.unknown}
            new = [
                {"line": r.line, "op": r.op, "why": WHY}
                for r in changed.get(f.name, [])
                if (r.line, r.op) not in seen
            ]
            f = dataclasses.replace(
                f,
                flops=None if _unnamed(flops) else flops,
                other_flops=None if _unnamed(other) else other,
                bytes=None if _unnamed(byts) else byts,
                complete=complete and f.complete and not _unnamed(flops),
                unknown=sorted([*f.unknown, *new], key=lambda u: u["line"]),
            )
        out.append(f)
    return out
