"""Code that runs more than once, or an unknown number of times: a loop body, a
comprehension's element, a lambda mapped over a tuple. Its calls are recorded
once per source position, so their costs are scaled by the count and summed
over runs rather than overwritten by the last run.

A count nobody knows makes every non-zero cost unknown: a figure that may be
off by a factor is not a lower bound, it is no figure.
"""

from __future__ import annotations

import ast

from shapelint.analysis.branches import if_known
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import UNKNOWN, Cost, replaced

ONE = Expr.const(1)


def collected(frame) -> _Collected:
    """The records the calls in the block make, kept apart from the frame's."""
    return _Collected(frame)


class _Collected:
    # A class, not a generator: entered once per loop turn (see shapelint/scoped.py).
    __slots__ = ("frame", "saved")

    def __init__(self, frame) -> None:
        self.frame = frame

    def __enter__(self) -> dict:
        self.saved = self.frame.records
        self.frame.records = {}
        return self.frame.records

    def __exit__(self, *exc: object) -> None:
        self.frame.records = self.saved


def costless(records: dict) -> bool:
    """Whether every record costs nothing, forward and backward, and saves nothing:
    where and how often such calls run changes no figure."""
    return all(
        r.cost.complete
        and r.cost.flops is not None
        and _zero(r.cost.flops)
        and (r.cost.other_flops is None or _zero(r.cost.other_flops))
        and (r.cost.backward is None or _zero(r.cost.backward))
        and (r.cost.saved is None or _zero(r.cost.saved))
        for r in records.values()
    )


def merge(into: dict, runs: dict, times: Expr | None, why: str) -> None:
    """Add one run's records (each taking place `times` times) to `into`."""
    for key, rec in runs.items():
        cost = scaled(rec.cost, times, why)
        if key in into:
            cost = summed(into[key].cost, cost)
        into[key] = replaced(rec, cost=cost)


def _times(e: Expr | None, times: Expr | None) -> Expr | None:
    if e is None or e.value == 0:
        return e  # nothing, any number of times, is nothing
    if times is None:
        return None
    return e * times


def scaled(cost: Cost, times: Expr | None, why: str) -> Cost:
    if times == ONE:
        return cost
    notes = list(cost.notes)
    if times is None:
        each = "" if cost.flops is None or _zero(cost.flops) else f", {if_known(cost)} FLOPs each"
        notes.append(f"runs an unknown number of times ({why}){each}")
    else:
        notes.append(f"runs {times.to_human()} times ({why})")
    return Cost(
        flops=_times(cost.flops, times),
        other_flops=_times(cost.other_flops, times),
        bytes=_times(cost.bytes, times),
        backward=_times(cost.backward, times),
        saved=_times(cost.saved, times),
        notes=notes,
        # Completeness is about FLOPs, as a function's total has it: zero FLOPs,
        # any number of times, are still zero.
        complete=cost.complete and (times is not None or _zero(cost.flops)),
    )


def _zero(e: Expr | None) -> bool:
    return e is not None and e.value == 0


def _plus(a: Expr | None, b: Expr | None, strict: bool) -> Expr | None:
    if a is None or b is None:
        # An unknown FLOP count poisons the sum; other work and bytes are summed
        # where known, as a function's total sums them.
        return None if strict else (a if b is None else b)
    return a + b


def summed(a: Cost, b: Cost) -> Cost:
    return Cost(
        flops=_plus(a.flops, b.flops, strict=True),
        other_flops=_plus(a.other_flops, b.other_flops, strict=False),
        bytes=_plus(a.bytes, b.bytes, strict=False),
        backward=_plus(a.backward, b.backward, strict=True),
        saved=_plus(a.saved, b.saved, strict=True),
        notes=a.notes + [n for n in b.notes if n not in a.notes],
        complete=a.complete and b.complete,
    )


def add_costs(costs) -> Cost:
    flops: Expr | None = Expr.const(0)
    other = Expr.const(0)
    byts = Expr.const(0)
    complete = True
    notes: list[str] = []
    bwd: Expr | None = Expr.const(0)
    saved: Expr | None = Expr.const(0)
    for c in costs:
        bwd = None if bwd is None or c.backward is None else bwd + c.backward
        saved = None if saved is None or c.saved is None else saved + c.saved
        if c.flops is None:
            flops = None
            complete = False
        elif flops is not None:
            flops = flops + c.flops
        if c.other_flops is not None:
            other = other + c.other_flops
        if c.bytes is not None:
            byts = byts + c.bytes
        if not c.complete:
            complete = False
        notes.extend(n for n in c.notes if n not in notes)
    if flops is None:
        complete = False
    return Cost(flops, other, byts, notes[:3], complete, backward=bwd, saved=saved)


def scale_cost(c: Cost, n: Expr) -> Cost:
    def mul(e):
        return None if e is None else e * n

    return Cost(
        mul(c.flops),
        mul(c.other_flops),
        mul(c.bytes),
        list(c.notes),
        c.complete,
        backward=mul(c.backward),
        saved=mul(c.saved),
    )


def add_turn(runs: dict, turn: dict, i: int) -> None:
    """Turn i's records into runs, kept apart from the other turns' (the keys
    loop_record reads as turns run one by one)."""
    for key, rec in turn.items():
        runs[(*key, "iter", i)] = rec


def positive_count(times: Expr) -> bool:
    """times is at least 1 at every positive value of its sizes: a sum of products
    of sizes with positive coefficients (not `n - 1`, nor `n // 2`)."""
    if times.value is not None:
        return times.value >= 1
    return bool(times.terms) and all(
        c > 0 and all(isinstance(atom, str) for atom, _ in m) for m, c in times.terms.items()
    )


def holding(an, node, frame, op: str, inputs, value, records, cost=None, summed=True):
    """One record at node standing for a call whose own records (kept apart by
    `collected`) it holds; its cost is theirs summed unless cost is given."""
    records = list(records.values() if isinstance(records, dict) else records)
    if cost is None:
        cost = add_costs(r.cost for r in records)
    rec = an.record(node, frame, op, None, inputs, value, cost, summed=summed)
    rec.children = records
    return rec


def loop_record(an, stmt, frame, children: dict, n: int | None, count=None, extra=None):
    """The record of a `for` loop holding its turns' records: children keyed
    (*key, "iter", i) (add_turn) are turns run one by one (the table names item i of what
    it walks by them); count: one turn standing for that many."""
    if not children and extra is None:
        return None
    costs = [r.cost for r in children.values()]
    if extra is not None:
        costs.append(extra)
    cost = add_costs(costs)
    if count is not None:
        cost = scale_cost(cost, count)
    label = "×" + (count.to_human() if count is not None else str(n) if n is not None else "?")
    src = ast.unparse(stmt.iter) if hasattr(ast, "unparse") else "..."
    rec = an.record(stmt, frame, f"for {src} ({label})", None, [], UNKNOWN, cost, summed=True)
    rec.children = list(children.values())
    if count is not None:
        rec.weights = [count] * len(rec.children)
    elif all(len(k) > 2 and k[-2] == "iter" for k in children):  # unrolled: (*key, "iter", i)
        rec.turns = [k[-1] for k in children]
    return rec
