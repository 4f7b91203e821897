"""A function run on its call's arguments outside a target (`value_at`),
memoised per arguments, its findings said once, with the call that led there.

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING

from shapelint.analysis import built_objects
from shapelint.analysis.nodes import nodes_of
from shapelint.analysis.own_pass import OwnPass
from shapelint.analysis.specialized import MAX_DEPTH, call_key, run_body
from shapelint.notation import symbolic
from shapelint.notation.symbolic import Expr
from shapelint.ops.backward import GRAD_MODE, called
from shapelint.ops.values import UNKNOWN, NoneV, TensorV, TupleV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, FuncDef


# Findings of a run on a call's arguments that are not the call's to answer for:
# what the analysis reveals, and a name read before it is bound (the body's own).
_NOT_THE_CALLS = frozenset({"SHP390", "SHP319"})
_SAID = "<plain: said>"  # the spots a run on arguments reported, once each


def value_at(an: Analyzer, fd: FuncDef, recv, node, args, kwargs, caller: str) -> Value | None:
    """What fd returns run with these arguments, outside a target: its body
    evaluated on them, as a target's run would, memoised per arguments. A shape
    conflict the run meets is reported where it happens, as a target's is, with the
    call that led there (once per spot: the first call says it); in another file,
    at the call. None where no run says: a decorated function or a generator, a run
    nested too deep or recursive, or a body that returns no value."""
    body = fd.node
    # (the kept walk: a helper is reached at every call of it, with other arguments)
    if body.decorator_list or nodes_of(body, (ast.Yield, ast.YieldFrom, ast.Await)):
        return None
    owner = fd.owner or an
    # the caller's names that stay one size each through the run (symbolic.lend)
    names_lent = symbolic.lendable(_carried_names([*args, *kwargs.values()]))
    key = call_key(fd, recv, args, kwargs, ("<plain>", GRAD_MODE.get(), names_lent))
    got = owner.specialized.get(key) if key is not None else None
    fresh = got is None
    if got is None:
        broadcast_kept: frozenset[str] = frozenset()
        flight = key if key is not None else ("<plain>", fd.qualname, id(recv))
        if flight in owner.in_flight or len(owner.in_flight) > MAX_DEPTH:
            return None
        owner.in_flight.add(flight)
        # the arguments' sizes are the caller's: a conflict in another file's body that
        # rests on the caller's constructor sizes is as definite as in the caller's own
        lent = an.size_params - owner.size_params if owner is not an else set()
        owner.size_params |= lent
        try:
            # a pass of its own, as a summary is: no fact, store or call path of the run
            with OwnPass(), owner.diverted() as found, owner.naming.paused():
                symbolic.lend(*names_lent)
                value, _ = run_body(owner, fd, recv, args, kwargs)
                broadcast_kept = symbolic.broadcast_kept_names()
        finally:
            owner.in_flight.discard(flight)
            owner.size_params -= lent
        if isinstance(value, NoneV) or value is UNKNOWN:
            value = None
        kept = [
            d for d in found if d.code.startswith(("SHP2", "SHP3")) and d.code not in _NOT_THE_CALLS
        ]
        got = (value, kept, broadcast_kept)
        if key is not None:
            owner.specialized[key] = got
    value, found, broadcast_kept = got
    # the caller's sizes a broadcast of the run kept may be its input's (each where it
    # is 1), as a summary's are (FunctionSummary.broadcast_kept)
    for name in broadcast_kept:
        symbolic.note_broadcast_kept(Expr.name(name))
    if not fresh:  # the first run's objects, handed out again in this call's place
        built_objects.reused([value])
    if value is not None:
        value = called(value, args, kwargs)
    where = f"{caller}:{getattr(node, 'lineno', '?')}"
    said = an.specialized.setdefault(_SAID, set())
    for d in found:
        if owner is not an:
            # said at the call, with where in the other file it happens
            at = f"{_file_from(an, owner)}:{d.line}, through {fd.qualname}"
            an.report(node, d.code, f"{d.message} (in {at})")
            continue
        spot = (d.line, d.column, d.code)
        if spot not in said:
            if an.reaches_result():
                # said once; inside another run's diversion it is that run's to say
                said.add(spot)
            # a run made now noted each finding on the undecided alternatives it lay on,
            # under the caller's: the call's own place would make it definite
            with an.placed(not fresh):
                an.report(
                    (d.line, d.column, d.end_line, d.end_column), d.code, _via(d.message, where)
                )
    return value


def _carried_names(values: list) -> set[str]:
    """The names the sizes of these arguments hold (a tensor's, or one a tuple of
    them holds), which the caller's annotations may bind."""
    names: set[str] = set()
    for v in values:
        items = v.items if isinstance(v, TupleV) else (v,)
        for t in items:
            if isinstance(t, TensorV) and t.shape is not None:
                for d in t.shape:
                    if isinstance(d, Expr) and not d.is_too_big():
                        names |= d.names()
    return names


def _file_from(an: Analyzer, owner: Analyzer) -> str:
    """The other file as the caller's reader finds it: relative to the caller's
    directory where it lies under it (a sibling module), else by its name."""
    other, here = owner.project_path, an.project_path
    if other is None:
        return "?"
    if here is not None:
        rel = os.path.relpath(other, os.path.dirname(here))
        if not rel.startswith(".."):
            return rel
    return os.path.basename(other)


def said_before(an: Analyzer) -> set:
    """The spots runs on arguments reported so far (a copy), for a pass that must
    leave them as it found them (path_split.follow)."""
    return set(an.specialized.get(_SAID, ()))


def say_again(an: Analyzer, spots: set) -> None:
    """The spots said_before gave are the ones said: what a dropped pass said is not."""
    an.specialized[_SAID] = spots


def _via(message: str, where: str) -> str:
    """The message with the call that led to it first in its call path."""
    if message.endswith(")") and " (via " in message:
        head, _, path = message.rpartition(" (via ")
        return f"{head} (via {where} → {path}"
    return f"{message} (via {where})"
