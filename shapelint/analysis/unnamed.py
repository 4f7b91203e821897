"""A figure with a factor no code names is not a figure.

Inside a function the analysis names every dim it cannot see (`_v3`, `_e25_0`),
so that a later use, or a caller, can bind it. What leaves the analysis must be
evaluable with the names it contains: a cost that still holds a made-up name
is unknown (its formula, in human form with `?`, stays in the notes), and the
function's total is a lower bound from its other calls. Shapes in the records
spell such a dim as None (`?`) and such a variadic as `...`.

This runs once per file, on copies of what the analysis hands out (runtime
mode binds the made-up names to the sizes it runs at), never in the
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
    return unnamed(c.flops, c.bytes, c.other_flops)


def unnamed(*exprs: Expr | None) -> bool:
    return any(_unnamed(e) for e in exprs)


def honest_cost(c: Cost) -> Cost:
    """c itself, or c with each figure that needs a made-up name unknown: FLOPs
    so make the cost incomplete (the formula, with `?`, stays in the notes)."""
    if not unnamed_cost(c):
        return c
    flops, byts, other = c.flops, c.bytes, c.other_flops
    notes = list(c.notes)
    complete = c.complete
    if _unnamed(flops):
        notes.insert(0, f"{WHY}: {flops.to_human()}")  # type: ignore[union-attr]
        flops, complete = None, False
    return Cost(
        flops,
        None if _unnamed(other) else other,
        None if _unnamed(byts) else byts,
        notes,
        complete,
    )


def spell_dim(d: str | None) -> str | None:
    if d is None or "_" not in d:
        return d  # no made-up name (a cheap test: every record's dims pass here)
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


def honest_record(r):
    """r itself, or a copy (and of the calls it ran) without made-up names; the
    analysis keeps its own (runtime mode binds them to the sizes it runs at)."""
    children = [honest_record(ch) for ch in r.children]
    cost = honest_cost(r.cost)
    inputs = [spell_shape(s) for s in r.inputs]
    output = spell_shape(r.output)
    if (
        cost is r.cost
        and inputs == r.inputs
        and output == r.output
        and all(a is b for a, b in zip(children, r.children))
    ):
        return r
    return dataclasses.replace(r, cost=cost, inputs=inputs, output=output, children=children)


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


def honest_functions(records, functions) -> tuple[list, list]:
    """Honest copies of the records, and of the function summaries: each with a
    lower bound from its other calls where a call's FLOPs needed a made-up name."""
    out_records = []
    changed: dict[str, list] = {}
    for r in records:
        h = honest_record(r)
        out_records.append(h)
        if h.cost is not r.cost:
            changed.setdefault(r.function, []).append(h)
    by_function: dict[str, list] = {}
    if changed or any(unnamed(f.flops, f.other_flops, f.bytes) for f in functions):
        for r in out_records:
            by_function.setdefault(r.function, []).append(r.cost)
    out = []
    for f in functions:
        if f.name in changed or unnamed(f.flops, f.other_flops, f.bytes):
            flops, other, byts, complete = total(by_function.get(f.name, []))
            seen = {(u["line"], u["op"]) for u in f.unknown}
            new = [
                {"line": r.line, "op": r.op, "why": WHY}
                for r in changed.get(f.name, [])
                if r.cost.flops is None and (r.line, r.op) not in seen
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
    return out_records, out
