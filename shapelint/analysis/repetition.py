"""Code that runs more than once, or an unknown number of times: a loop body, a
comprehension's element, a lambda mapped over a tuple. Its calls are recorded
once per source position, so their costs are scaled by the count and summed
over runs rather than overwritten by the last run.

A count nobody knows makes every non-zero cost unknown: a figure that may be
off by a factor is not a lower bound, it is no figure.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from shapelint.analysis.branches import if_known
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import Cost

ONE = Expr.const(1)


@contextmanager
def collected(frame) -> Iterator[dict]:
    """The records the calls in the block make, kept apart from the frame's."""
    saved = frame.records
    frame.records = {}
    try:
        yield frame.records
    finally:
        frame.records = saved


def merge(into: dict, runs: dict, times: Expr | None, why: str) -> None:
    """Add one run's records (each taking place `times` times) to `into`."""
    for key, rec in runs.items():
        cost = scaled(rec.cost, times, why)
        if key in into:
            cost = summed(into[key].cost, cost)
        into[key] = replace(rec, cost=cost)


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
