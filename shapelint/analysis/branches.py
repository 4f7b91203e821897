"""An if/else (or `a if c else b`) whose test the analysis cannot decide ran
both branches: what they recorded are alternatives, not a sum.

When both branches cost the same FLOPs the cost is known and counted once (on
the `if` branch). Otherwise each call of either branch that costs FLOPs is on
the record with an unknown cost that says on what it depends (its formula, if
it runs, in the notes): the function is incomplete, and its total a lower bound
from the calls that run either way. Plain and target mode follow one rule.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable

from shapelint.analysis.run_state import Alternatives
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import Cost, IntV

_ZERO = Expr.const(0)


def sizes_after(an, stmt: ast.If, a: dict, b: dict, joined: dict) -> None:
    """A name that holds a different size on each path of an undecided `if`
    (timm's `if align_to: hidden = hidden + (-hidden % align_to)`) holds one size
    after it, whichever path ran: a size of its own (`hidden'`), related to no
    other, so that a conflict found with it (`2·hidden'` against `hidden'`) holds on
    both paths. Check only: a target's figures never rest on it (the join stays an
    int of unknown value there)."""
    if an.specialize:
        return
    # Only a name on both paths can be an int after the join (one path's name joins
    # to unknown), and one bound to the same value on both kept it: an `if` leaves
    # most of the frame alone, so the identity test is what runs for nearly every name.
    for k, va in a.items():
        vb = b.get(k)
        if va is vb:
            continue
        v = joined[k]
        if not (isinstance(v, IntV) and v.value is None):
            continue
        if not (isinstance(va, IntV) and isinstance(vb, IntV)):
            continue
        known = [x.value for x in (va, vb) if x.value is not None]
        if not known or all(e.is_constant() for e in known):
            continue  # numbers (a flag, a count) or nothing known: no size a layer took
        joined[k] = IntV(own_size(an, k, stmt.lineno))


def own_size(an, name: str, line: int) -> Expr:
    """The size of its own that name holds from line on (`hidden'`, one per name and
    line), related to no other: a size parameter, so a conflict may rest on it."""
    own = an.joined_sizes.get((name, line))
    if own is None:
        taken = set(an.joined_sizes.values())
        own = name + "'"
        while own in taken:
            own += "'"
        an.joined_sizes[(name, line)] = own
    an.size_params.add(own)
    return Expr.name(own)


def total_of(records, key: str) -> Expr | None:
    """The sum of one figure over records, None when one of them is unknown."""
    total = _ZERO
    for r in records:
        e = getattr(r.cost, key)
        if e is None or not r.cost.complete:
            return None
        total = total + e
    return total


def if_known(c: Cost) -> str:
    """What a call would cost, for a note: its formula; for a callee with calls of
    unknown cost, a bound (`≥ 2·b·n·d`), or `?` when nothing of it is known, as
    every face prints a partial sum."""
    if c.complete:
        return c.flops.to_human()  # type: ignore[union-attr]
    return "?" if c.flops == _ZERO else f"≥ {c.flops.to_human()}"  # type: ignore[union-attr]


# The note of an undecided alternative's call whose saved tensors are unknown: what
# the calls it ran save is no part of a lower bound either (the other may run).
ALTERNATIVE_SAVED = (
    "saved for backward: one of alternatives the analysis cannot decide, which may not run"
)


def alternative(rec, why: str, when: str) -> None:
    """Mark rec as a call that may not run (why), unless it is free either way:
    unknown, with what it costs `when` it runs in the notes. One already unknown
    for its own reason keeps that reason; if it ran calls of its own, it is marked
    too, so that they are no part of a lower bound (target.py sums the known
    calls of a call whose cost is theirs)."""
    c = rec.cost
    # what the calls it ran save is no part of a lower bound either
    apart = [ALTERNATIVE_SAVED] if rec.children and ALTERNATIVE_SAVED not in c.notes else []
    if c.flops is None:
        if rec.children:
            rec.cost = Cost(None, None, None, [*c.notes, why, *apart], False)
    elif not free(rec):
        kept = [ALTERNATIVE_SAVED] if ALTERNATIVE_SAVED in c.notes else apart
        rec.cost = Cost(None, None, None, [why, f"{if_known(c)} FLOPs {when}", *kept], False)
    elif c.backward != _ZERO:
        # free forward, not backward (an SVD, an inverse): the loss reaches the value
        # the alternatives join to, so it would reach this one's backward though it
        # may not have run
        rec.cost = dataclasses.replace(c, backward=None, notes=[*c.notes, f"backward: {why}"])


def unknown_backward(records, why: str) -> None:
    """records of a counted-once alternative whose backward differs from the
    others': the forward stands, the backward is not known (why, first among the
    notes: the one a face gives for it)."""
    for rec in records:
        if rec.cost.backward is not None:
            rec.cost = dataclasses.replace(rec.cost, backward=None, notes=[why, *rec.cost.notes])


def _backward_apart(stmt: ast.If | ast.IfExp, body: Expr | None, orelse: Expr | None) -> str:
    """Why the backward of alternatives of one forward is not known, with each one's
    (timm's `if self.fused_attn:` SDPA against its math: the same products forward,
    not backward)."""
    when, otherwise = conditions(stmt)
    figures = [("?" if e is None else e.to_human()) for e in (body, orelse)]
    return (
        f"backward: alternatives of the same forward, whose backward differs: "
        f"{figures[0]} FLOPs if {when}, {figures[1]} if {otherwise}; which runs is not known"
    )


def unknown_saved(records) -> None:
    """records of undecided alternatives that save tensors for backward: which
    run, and so what is saved, is not known."""
    for rec in records:
        if rec.cost.saved != _ZERO:
            notes = [*rec.cost.notes, ALTERNATIVE_SAVED] if rec.children else rec.cost.notes
            rec.cost = dataclasses.replace(rec.cost, saved=None, notes=notes)


def free(rec) -> bool:
    return rec.cost.flops == _ZERO and rec.cost.complete and not rec.children


def _idle(rec) -> bool:
    """free, and no backward either: the loss reaching the joined value of two
    such alternatives counts nothing, where an op free only forward (an inverse)
    would be counted on both paths."""
    return free(rec) and rec.cost.backward == _ZERO


def undecided(stmt: ast.If | ast.IfExp, frame, n_before: int, n_mid: int) -> None:
    """The records made since n_before: the `if` branch's up to n_mid, then the
    `else` branch's."""
    records = frame.records
    if len(records) == n_before:
        return
    keys = list(records)
    body = [records[k] for k in keys[n_before:n_mid]]
    orelse = [records[k] for k in keys[n_mid:]]
    if total_of(body, "saved") != total_of(orelse, "saved") or total_of(body, "saved") != _ZERO:
        unknown_saved(body + orelse)  # one of them runs: both sets of saved tensors are no sum
    if all(_idle(r) for r in body) and all(_idle(r) for r in orelse):
        return  # no FLOPs either way, nor backward (elementwise work, reshapes)
    flops = total_of(body, "flops")
    if flops is not None and flops == total_of(orelse, "flops"):
        same_bytes = total_of(body, "bytes") == total_of(orelse, "bytes")
        # read before the `else` branch's calls are counted as costing nothing
        backwards = total_of(body, "backward"), total_of(orelse, "backward")
        same_backward = backwards[0] == backwards[1]
        both = None
        if same_backward and total_of(body, "backward") != _ZERO:
            # the same backward as recorded; the loss may reach less of one branch
            # (`q, k, v` of one product, or of three, only q used after): reached.py
            # holds them to the same figure as it reaches each
            both = Alternatives(tuple(body), tuple(dataclasses.replace(r) for r in orelse))
        note = (
            f"an alternative to the `if` at line {stmt.lineno}, which costs the same: counted once"
        )
        for rec in orelse:
            c = rec.cost
            rec.cost = Cost(_ZERO, c.other_flops, _ZERO if same_bytes else c.bytes, [note], True)
        if not same_backward:  # the same forward, a different backward (a frozen layer)
            unknown_backward(body, _backward_apart(stmt, *backwards))
        for rec in body if both is not None else ():
            rec.alternatives = both
        return
    for recs, when in zip((body, orelse), conditions(stmt), strict=True):
        why = f"runs only if {when}, which is not known here"
        for rec in recs:
            alternative(rec, why, "if it runs")


def conditions(stmt: ast.If | ast.IfExp) -> tuple[str, str]:
    """When each branch of an undecided `if` runs, as a finding on it says it
    (`` `x.sum() > 0` (line 28)``, `` not `x.sum() > 0` (line 28)``). Kept on the
    node, which is never edited: a test run again (per call, per turn) is unparsed
    once."""
    known = stmt.__dict__.get(_CONDITIONS)
    if known is None:
        test = _test(stmt)
        negated = f"`{test[4:]}`" if test.startswith("not ") else f"not `{test}`"
        known = f"`{test}` (line {stmt.lineno})", f"{negated} (line {stmt.lineno})"
        stmt.__dict__[_CONDITIONS] = known
    return known


_CONDITIONS = "_shapelint_conditions"


def conditions_later(stmt: ast.If | ast.IfExp) -> tuple[Callable[[], str], Callable[[], str]]:
    """conditions(stmt), each made when first read (an Alternative's `why`): most
    undecided tests have no finding on a branch, and ast.unparse of every test run
    was 1% of a check."""
    return (lambda: conditions(stmt)[0]), (lambda: conditions(stmt)[1])


def with_rest(stmt: ast.If, block: list[ast.stmt], i: int) -> ast.If:
    """`if c: ...; return` followed by more statements is `if c: ... else: <the
    rest>` (and the mirror image): the calls after an early return are one of
    the alternatives, not calls that run either way. stmt itself when neither
    branch ends in a return, or nothing follows it. (A branch that raises is no
    alternative: the calls after it run whenever the function returns.)"""
    if i + 1 == len(block):
        return stmt
    merged = getattr(stmt, "_with_rest", None)
    if merged is None:
        rest = block[i + 1 :]
        merged = stmt
        if _returns(stmt.body) and not _returns(stmt.orelse):
            merged = ast.If(test=stmt.test, body=stmt.body, orelse=[*stmt.orelse, *rest])
        elif _returns(stmt.orelse) and not _returns(stmt.body):
            merged = ast.If(test=stmt.test, body=[*stmt.body, *rest], orelse=stmt.orelse)
        if merged is not stmt:
            ast.copy_location(merged, stmt)
        # False for "itself": a node that held itself would keep its whole subtree
        # for the garbage collector (reference counting cannot free a cycle).
        stmt._with_rest = merged if merged is not stmt else False  # type: ignore[attr-defined]
    return merged or stmt


def _returns(block: list[ast.stmt]) -> bool:
    # break and continue end the turn as return ends the function
    return bool(block) and isinstance(block[-1], (ast.Return, ast.Break, ast.Continue))


def _test(stmt: ast.If | ast.IfExp) -> str:
    try:
        text = ast.unparse(stmt.test)
    except (ValueError, RecursionError):  # pragma: no cover - unparse of a parsed tree
        return "the test"
    return text if len(text) <= 60 else text[:59] + "…"
