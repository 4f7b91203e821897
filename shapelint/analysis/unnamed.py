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
from shapelint.ops.values import Cost, IntV, ObjectV, TensorV, TupleV, Value

WHY = "a dimension no code names"


def _unnamed(e: Expr | None) -> bool:
    return e is not None and any(is_internal(n) for n in e.names())


def unnamed_cost(c: Cost) -> bool:
    return unnamed(c.flops, c.bytes, c.other_flops, c.backward, c.saved)


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
        backward=None if _unnamed(c.backward) else c.backward,
        saved=None if _unnamed(c.saved) else c.saved,
    )


def spell_dim(d: str | None) -> str | None:
    if d is None or "_" not in d:
        return d  # no made-up name (a cheap test: every record's dims pass here)
    if d.startswith("*"):
        return "..." if is_internal(d[1:]) else d
    try:
        from shapelint.notation.symbolic import parse_expr

        return None if _unnamed(parse_expr(d)) else d
    except (ValueError, SyntaxError):  # a primed size (`hidden'`, branches.sizes_after)
        return d


def spell_shape(shape: list | None) -> list | None:
    if shape is None:
        return None
    return [spell_dim(d) for d in shape]


def once_per_record(walk):
    """walk(r, seen, ...) run once per record, its result shared: a record that
    several calls share (a memoised call's, analysis/modules.specialized_invoke)
    is walked once and its copy shared, so that a call tree that doubles at each
    level (binary recursion) is walked in time linear in its distinct records.
    seen maps each record's id to its result, for one walk over one tree."""

    def once(r, seen: dict, *args):
        if id(r) not in seen:
            seen[id(r)] = walk(r, seen, *args)
        return seen[id(r)]

    return once


@once_per_record
def honest_record(r, seen: dict):
    """r itself, or a copy (and of the calls it ran) without made-up names; the
    analysis keeps its own (runtime mode binds them to the sizes it runs at)."""
    children = [honest_record(ch, seen) for ch in r.children]
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
    lower bound from its other calls where a call's FLOPs needed a made-up name,
    or a name none of the function's inputs gives (its `foreign` names: the
    call keeps its formula in its own axes, the total cannot use it)."""
    out_records = []
    changed: dict[str, list] = {}
    names = {f.name: f.foreign for f in functions if f.foreign}
    seen: dict = {}
    for r in records:
        h = honest_record(r, seen)
        foreign = names.get(r.function)
        if foreign and _mentions(h.cost.bytes, foreign):
            h = dataclasses.replace(h, cost=dataclasses.replace(h.cost, bytes=None))
        out_records.append(h)
        if h.cost is not r.cost:
            changed.setdefault(r.function, []).append(h)
    foreign_calls: dict[str, list] = {}
    by_function: dict[str, list] = {}
    if changed or names or any(unnamed(f.flops, f.other_flops, f.bytes) for f in functions):
        for r in out_records:
            c = r.cost
            leaked = names.get(r.function)
            if leaked and _mentions(c.flops, leaked):
                foreign_calls.setdefault(r.function, []).append(r)
                c = Cost(None, c.other_flops, c.bytes, c.notes, False)
            by_function.setdefault(r.function, []).append(c)
    out = []
    for f in functions:
        if f.name in changed or f.name in names or unnamed(f.flops, f.other_flops, f.bytes):
            flops, other, byts, complete = total(by_function.get(f.name, []))
            seen = {(u["line"], u["op"]) for u in f.unknown}
            new = [
                {"line": r.line, "op": r.op, "why": WHY}
                for r in changed.get(f.name, [])
                if r.cost.flops is None and (r.line, r.op) not in seen
            ]
            new += [
                {"line": r.line, "op": r.op, "why": _foreign_why(r.cost.flops, f)}
                for r in foreign_calls.get(f.name, [])
                if (r.line, r.op) not in seen
            ]
            f = dataclasses.replace(
                f,
                flops=None if _unnamed(flops) else flops,
                other_flops=None if _unnamed(other) or _mentions(other, f.foreign) else other,
                bytes=None if _unnamed(byts) or _mentions(byts, f.foreign) else byts,
                complete=complete and f.complete and not _unnamed(flops),
                unknown=sorted([*f.unknown, *new], key=lambda u: u["line"]),
            )
        out.append(f)
    return out_records, out


def _foreign_why(flops: Expr, f) -> str:
    which = sorted(n for n in f.foreign if n in flops.names())
    return (
        f"{flops.to_human()} needs {', '.join(which)}, which no input of {f.name} gives "
        "(a size the analysis lost)"
    )


# -- a callee's own names ------------------------------------------------------------------
#
# A function's figures may use names only it gives: its pattern axes (`q` in
# `"... q k, ... k d -> ... q d"` on an operand of unknown shape), its annotations
# that no parameter carries, its callees' names. A call binds the parameters'
# names to the caller's sizes; any other name would reach the caller as if it were
# one of the caller's inputs, a size nobody binds (`1344·q` where every size is
# known). At the call, each such name is a size not known: the figures that need
# it are unknown, the dims that hold it `?`.


def value_names(v: Value | None) -> set[str]:
    """The names in a value's sizes, containers and instances included (a
    ModuleList of layers, a config, a tuple of tensors)."""
    out: set[str] = set()
    stack: list = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, Expr):
            out |= x.names()
        elif isinstance(x, (tuple, list)):
            stack.extend(x)
        elif isinstance(x, Value) and dataclasses.is_dataclass(x):
            stack.extend(getattr(x, f.name) for f in dataclasses.fields(x))
    return out


def own_names(result: Value | None, *exprs: Expr | None) -> frozenset[str]:
    """Every name a function's summary hands a caller (its figures, its result),
    made-up ones aside (they are unknown already)."""
    names = value_names(result)
    for e in exprs:
        if e is not None:
            names |= e.names()
    return frozenset(n for n in names if not is_internal(n))


def _mentions(e: Expr | None, names) -> bool:
    return e is not None and not names.isdisjoint(e.names())


def forget(v: Value, names) -> Value:
    """v with each size that needs one of names unknown."""
    if isinstance(v, TensorV) and v.shape is not None:
        if not any(isinstance(d, Expr) and _mentions(d, names) for d in v.shape):
            return v
        dims = tuple(None if isinstance(d, Expr) and _mentions(d, names) else d for d in v.shape)
        return TensorV(dims, v.dtype)
    if isinstance(v, IntV) and _mentions(v.value, names):
        return IntV(None)
    if isinstance(v, TupleV):
        return TupleV(tuple(forget(i, names) for i in v.items))
    if isinstance(v, ObjectV):
        return ObjectV(v.kind, tuple((k, forget(a, names)) for k, a in v.attrs))
    return v


def unbound_cost(c: Cost, names, why: str) -> Cost:
    """c with each figure that needs one of names unknown; `why` (with `{names}`
    for those the FLOPs need) and the formula open its notes."""
    if not any(_mentions(e, names) for e in (c.flops, c.other_flops, c.bytes, c.backward, c.saved)):
        return c
    notes = list(c.notes)
    flops, complete = c.flops, c.complete
    if _mentions(flops, names):
        which = ", ".join(sorted(n for n in names if n in flops.names()))  # type: ignore[union-attr]
        notes.insert(0, f"{why.format(names=which)}: {flops.to_human()}")  # type: ignore[union-attr]
        flops, complete = None, False
    return Cost(
        flops,
        None if _mentions(c.other_flops, names) else c.other_flops,
        None if _mentions(c.bytes, names) else c.bytes,
        notes,
        complete,
        backward=None if _mentions(c.backward, names) else c.backward,
        saved=None if _mentions(c.saved, names) else c.saved,
    )
