"""Loops and comprehensions over module lists and ranges: unrolled item by item
(MAX_UNROLL), one turn counted n times, a search loop run until a turn
returns, a constructor's loop of symbolic count.

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from shapelint.analysis import call_path, framed, index_iteration, loops, walrus
from shapelint.analysis.module_lists import ModuleListV, as_items
from shapelint.analysis.recorder import SelfRecorder
from shapelint.analysis.repetition import (
    ONE,
    add_costs,
    add_turn,
    collected,
    loop_record,
    merge,
    positive_count,
    scale_cost,
)
from shapelint.analysis.sequences import EndsV
from shapelint.analysis.statements import nested_statements
from shapelint.analysis.torch_containers import iterated
from shapelint.analysis.unknown_cost import cost_not_known
from shapelint.notation.symbolic import Expr
from shapelint.ops import saved as storages
from shapelint.ops.backward import carried, settle, turn_entries
from shapelint.ops.values import UNKNOWN, Cost, IntV, TensorV, TupleV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer


# Longest loop (or comprehension) unrolled item by item; a longer one of known
# count repeats its first item's cost.
MAX_UNROLL = 256
MAP_MAX = 16  # items a map over named callables is run for, one by one


def comprehension(an: Analyzer, node: ast.ListComp | ast.GeneratorExp, frame) -> Value | None:
    """`[Block(cfg) for _ in range(n)]`: the list it builds, item by item when n
    is a known number, else n copies of one item; `(f(t) for t in (q, k, v))` over
    a sequence known item by item: one value per item (each item's calls recorded)."""
    if len(node.generators) != 1 or node.generators[0].ifs or node.generators[0].is_async:
        return None
    gen = node.generators[0]
    count = range_count(an, gen.iter, frame)
    inner = an.new_frame(frame.func, frame.name)
    inner.env = dict(frame.env)
    inner.locals = set(frame.locals)
    inner.local_imports = frame.local_imports
    each = None  # what the target takes each turn: a range's index where None
    if count is None:
        seq = index_iteration.walked(an, an.eval(gen.iter, frame), gen.iter, frame)
        if isinstance(seq, EndsV):
            return _over_ends(an, node, frame, inner, seq)
        items = as_items(seq)
        if items is None:
            # A sequence or tensor of known length, its items alike:
            # `[Block(r) for r in torch.linspace(0, p, depth)]` builds depth blocks.
            walked = loops.of_value(an, seq)
            if walked.count is None or walked.items is not None:
                return None
            count, each = walked.count, walked.item
        elif len(items) > MAX_UNROLL:
            return None
    if count is None:
        out = []
        for i, item in enumerate(items):
            inner.records = {}
            an.assign(gen.target, item, inner, None)
            out.append(an.eval(node.elt, inner))
            for key, rec in inner.records.items():
                frame.records[(*key, "item", i)] = rec
        return TupleV(tuple(out))
    inner.records = frame.records
    n = count.value
    # `range(a, b)` counts from a: the index each turn takes, where a is known
    start = _range_start(an, gen.iter, frame) if each is None else None  # type: ignore[arg-type]
    if n is not None and n <= MAX_UNROLL:
        items = []
        for i in range(n):
            index = IntV(None if start is None else Expr.const(start + i))
            an.assign(gen.target, index if each is None else each, inner, None)
            with collected(inner) as turn:
                items.append(an.eval(node.elt, inner))
            merge(frame.records, turn, ONE, "")  # each item's calls count
        return TupleV(tuple(items))
    an.assign(gen.target, IntV(None) if each is None else each, inner, None)
    walrus.inexact()  # one turn stands for all: what a walrus bound is not known
    with (
        collected(inner) as turn,
        storages.repeated_turn(loops.found_values(inner.env, gen.target)),
    ):
        item = an.eval(node.elt, inner)
    merge(frame.records, turn, count, "comprehension")  # count times
    return ModuleListV((item,), count=count)


def _over_ends(an: Analyzer, node, frame, inner, seq: EndsV) -> Value | None:
    """A comprehension over one or more items known at their ends (framed.py): its
    element's first and last, and one turn for any item, counted `count` times."""
    ends = framed.ends_of(an, node, inner, seq)
    if ends is None:
        return None
    inner.records = frame.records
    an.assign(node.generators[0].target, seq.item, inner, None)
    walrus.inexact()
    with collected(inner) as turn:
        item = an.eval(node.elt, inner)
    merge(frame.records, turn, seq.count, "comprehension")
    return EndsV(ends[0], ends[1], item, seq.count)


def range_count(an: Analyzer, it: ast.expr, frame) -> Expr | None:
    """Trip count of `range(n)` / `range(a, b)` when the bounds are known."""
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
        return None
    if it.keywords or not 1 <= len(it.args) <= 2 or "range" in frame.env:
        return None
    vals = [an.eval(a, frame) for a in it.args]
    if not all(isinstance(v, IntV) and v.value is not None for v in vals):
        return None
    exprs = [v.value for v in vals]  # type: ignore[union-attr]
    count = exprs[0] if len(exprs) == 1 else exprs[1] - exprs[0]
    if count.value is not None and count.value < 0:
        return Expr.const(0)
    return count


def _range_of_a_tensor(an: Analyzer, it: ast.expr, frame) -> bool:
    """`range(...)` (the builtin) with a tensor among its bounds."""
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
        return False
    if it.keywords or not 1 <= len(it.args) <= 3 or "range" in frame.env:
        return False
    return any(isinstance(an.eval(a, frame), TensorV) for a in it.args)


def _range_start(an: Analyzer, it: ast.Call, frame) -> int | None:
    """The first value of a `range(...)` loop range_count counted: 0, or `a` of
    `range(a, b)` when known (None: the loop variable's values are not known)."""
    if len(it.args) == 1:
        return 0
    v = an.eval(it.args[0], frame)
    if isinstance(v, IntV) and v.value is not None and v.value.value is not None:
        return v.value.value
    return None


def exec_for(an: Analyzer, stmt: ast.For, frame) -> bool:
    """Loops this module models: over a module list (the sum of its layers, or
    count × one layer), and `for _ in range(n)` of known count in __init__ (the
    layers it appends) or in a specialized call (unrolled). False: not one of
    those; the interpreter runs the loop as before."""
    if an.specialize and not stmt.orelse and _returns_only(stmt):
        return _search_loop(an, stmt, frame)
    if stmt.orelse or _breaks(stmt):
        return False
    it = stmt.iter
    count = range_count(an, it, frame)
    if count is not None:
        in_init = isinstance(frame.env.get("self"), SelfRecorder)
        if not (in_init or an.specialize):
            return False
        if count.value is not None and count.value <= MAX_UNROLL:
            start = _range_start(an, it, frame)
            items = [
                IntV(None if start is None else Expr.const(start + i)) for i in range(count.value)
            ]
            _unroll(an, stmt, items, frame)
            return True
        if in_init:
            _symbolic_init_loop(an, stmt, count, frame)
            return True
        return False
    if _range_of_a_tensor(an, it, frame):
        # `range(t)` calls t.__index__() (a one-element integer tensor): a count not
        # known, which the interpreter's loop runs as a loop of unknown length
        return False
    # `zip`, `enumerate`, `reversed` over module lists are module lists (iterators.py)
    book = storages.mark()
    seq = iterated(an, index_iteration.walked(an, an.eval(it, frame), it, frame))
    if not isinstance(seq, ModuleListV):
        in_init = isinstance(frame.env.get("self"), SelfRecorder)
        listed = as_items(seq) if in_init or an.specialize else None
        if listed is None or len(listed) > MAX_UNROLL:
            # the interpreter's loop evaluates the iterable again: what this run of
            # it saved for backward is not saved yet (a generator's ops, given the
            # caller's tensor, found it saved: 0 B for torch's 256)
            storages.undo(book)
            return False
        # a loop over values known one by one (`for kind in layer_types`), in a
        # constructor or a target run: each turn as Python runs it, as for `range(n)`
        _unroll(an, stmt, [_unpackable(v) for v in listed], frame)
        return True
    items = list(seq.items)
    if isinstance(stmt.target, (ast.Tuple, ast.List)):
        items = [_unpackable(v) for v in items]
    if not seq.known:
        _loop_body(
            an, stmt, [UNKNOWN], frame, cost_not_known("loop over a module list of unknown length")
        )
        return True
    if seq.count is not None:
        _loop_body(an, stmt, items, frame, None, seq.count)
        return True
    _unroll(an, stmt, items, frame)
    return True


def _unpackable(v: Value) -> Value:
    # `for attn, ff in self.layers`: each item is a ModuleList of two.
    if isinstance(v, ModuleListV) and v.known and v.count is None:
        return TupleV(v.items)
    return v


def _returns_only(loop: ast.For) -> bool:
    """The loop's body may return and never breaks, continues or yields. Kept on
    the node: a specialized run meets the loop at every call of its function."""
    known = loop.__dict__.get(_RETURNS_ONLY)
    if known is None:
        kinds = {type(n) for stmt in loop.body for n in ast.walk(stmt)}
        known = ast.Return in kinds and not kinds & {ast.Break, ast.Continue, ast.Yield}
        setattr(loop, _RETURNS_ONLY, known)
    return known


_RETURNS_ONLY = "_shapelint_returns_only"


def _search_loop(an: Analyzer, stmt: ast.For, frame) -> bool:
    """`for arg in args: if exists(arg): return arg` over items known one by one,
    in a specialized run: turn by turn until a turn surely returns. False (all
    undone) where a turn may or may not return: the interpreter runs it as before."""
    seq = an.eval(stmt.iter, frame)
    if not isinstance(seq, TupleV) or len(seq.items) > MAP_MAX:
        return False
    env, records, returns = dict(frame.env), dict(frame.records), list(frame.returns)
    exits = list(frame.exits)
    for item in seq.items:
        before = len(frame.returns)
        an.assign(stmt.target, item, frame, None)
        an.exec_block(stmt.body, frame)
        if frame.done:
            return True
        if len(frame.returns) != before:
            frame.env, frame.records, frame.returns = env, records, returns
            frame.exits[:] = exits
            return False
    return True


def _breaks(loop: ast.For) -> bool:
    """A break or return anywhere in the loop's body; kept on the node, as
    _returns_only is: the loop is met at every pass over its function."""
    known = loop.__dict__.get(_BREAKS)
    if known is None:
        known = any(isinstance(n, (ast.Break, ast.Return)) for n in nested_statements(loop.body))
        setattr(loop, _BREAKS, known)
    return known


_BREAKS = "_shapelint_breaks"


def _unroll(an: Analyzer, stmt: ast.For, items, frame) -> None:
    if (
        an.specialize
        and len(items) > 1
        and all(isinstance(i, IntV) for i in items)
        and not any(isinstance(v, SelfRecorder) for v in frame.env.values())
    ):
        # `range(n)` of known n: one turn for all when every turn is the same. Not
        # in __init__: a turn there grows `self`, which no name compared shows.
        entries = turn_entries(frame.env)  # which turn's values the loss reaches
        turn = loops.same_each_turn(an, stmt, IntV(None), items[-1], frame, first_apart=True)
        if isinstance(turn, tuple):  # the first turn apart: it made a tensor require grad
            first, rest, entries = turn
            others = scale_cost(
                add_costs(r.cost for r in rest.values()), Expr.const(len(items) - 1)
            )
            cost = add_costs([*(r.cost for r in first.values()), others])
            rec = an.record(stmt, frame, f"for {ast.unparse(stmt.iter)} (×{len(items)})", None,
                            [], UNKNOWN, cost, summed=True)  # fmt: skip
            rec.children = [*first.values(), *rest.values()]
            rec.weights = [Expr.const(1)] * len(first) + [Expr.const(len(items) - 1)] * len(rest)
            rec.carried = carried(frame.env, entries)
            settle(frame.env, entries, Expr.const(len(items) - 1))
            return
        if turn is not None:
            rec = loop_record(an, stmt, frame, turn, None, Expr.const(len(items)))
            if rec is not None:
                rec.carried = carried(frame.env, entries)
            settle(frame.env, entries, Expr.const(len(items)))
            return
    saved = frame.records
    children: dict = {}
    try:
        for i, item in enumerate(items):
            frame.records = {}
            frame.jump = None
            an.assign(stmt.target, item, frame, None)
            an.exec_block(stmt.body, frame)
            add_turn(children, frame.records, i)
            if frame.jump == "break" or frame.done:
                break
    finally:
        frame.records = saved
        frame.jump = None
    loop_record(an, stmt, frame, children, len(items))


def _loop_body(an, stmt, items, frame, extra: Cost | None, count: Expr | None = None) -> None:
    saved = frame.records
    entries = turn_entries(frame.env)  # which turn's values the loss reaches
    before = dict(frame.env)
    frame.records = {}

    def turn() -> None:
        an.assign(stmt.target, items[0] if items else UNKNOWN, frame, None)
        an.exec_block(stmt.body, frame)

    bound = (stmt.target, *stmt.body)
    # a list of a count that may be 0 may run no turn: what the turn finds raises
    # only where it runs one (call_path)
    group = None if count is not None and positive_count(count) else call_path.undecided()
    if group is not None:
        call_path.untaken(group, f"the loop at line {stmt.lineno} runs no turn")
    first = f"the loop at line {stmt.lineno} runs a turn" if group is not None else ""
    try:
        # one turn standing for count: what it saves of a tensor it finds (torch
        # saves it once) or of one a name it rebinds held is not known
        with (
            storages.repeated_turn(loops.found_values(before, *bound)),
            storages.first_turn(loops.replaced_values(before, *bound), strict=True),
            call_path.taking(group, first),
        ):
            turn()
        children = frame.records
    finally:
        frame.records = saved
    turned = carried(frame.env, entries)
    settle(frame.env, entries, count)
    kept = loops.kept_shapes(an, frame, turn, before)
    after = frame.env
    frame.env = an.join_env(before, frame.env)
    frame.env.update(kept)
    loops.last_turn_left(frame.env, after, entries, count)
    rec = loop_record(an, stmt, frame, children, None, count, extra)
    if rec is not None:
        rec.carried = turned
        if turned:
            loops.at_least_once(rec, count)


@contextmanager
def grown_in_turns(frame) -> Iterator[None]:
    """A loop in a constructor: a module list of self that grew in a turn standing
    for an unknown number of them (loops.repeat) holds items not known one by one
    (`for _ in range(depth): self.layers.append(Block())` with depth not known: one
    item, where torch holds depth)."""
    recorder = frame.env.get("self")
    if not isinstance(recorder, SelfRecorder):
        yield
        return
    lists = {k: v for k, v in recorder.attrs.items() if isinstance(v, ModuleListV)}
    runs = loops.repeats()
    try:
        yield
    finally:
        if loops.repeats() != runs:
            for k, old in lists.items():
                new = recorder.attrs.get(k)
                if new is not old and isinstance(new, ModuleListV):
                    recorder.attrs[k] = ModuleListV((), new.sequential, known=False)


def _symbolic_init_loop(an: Analyzer, stmt: ast.For, count: Expr, frame) -> None:
    """`for _ in range(depth): self.layers.append(...)`: depth copies of one layer."""
    recorder = frame.env["self"]
    lists_before = {k: v for k, v in recorder.attrs.items() if isinstance(v, ModuleListV)}
    an.assign(stmt.target, IntV(None), frame, None)
    an.exec_block(stmt.body, frame)
    for k, old in lists_before.items():
        new = recorder.attrs.get(k)
        if new is old or not isinstance(new, ModuleListV):
            continue
        grown = new.items[len(old.items) :] if new.known else ()
        if old.known and old.count is None and not old.items and len(grown) == 1:
            recorder.attrs[k] = ModuleListV(grown, old.sequential, count)
        else:
            recorder.attrs[k] = ModuleListV((), old.sequential, known=False)
