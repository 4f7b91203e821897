"""Loops and comprehensions: how many turns, what each turn sees, what it costs.

A loop over a short list of known items (`for t in (q, k, v)`, `range(3)`) is
unrolled: each turn runs with its own item, in order, so shapes that change
from turn to turn are followed exactly. Any other loop runs its body until the
environment at the top of a turn stops changing (joining what a turn leaves
with what it found), and the calls of that last turn, valid for every turn,
count `trip count` times: `range(n)` n times, a tensor's rows shape[0] times.
A count nobody knows (a `while`, an iterable of unknown length, a body that may
`break`, `continue` or `return`) leaves every non-zero cost in the body unknown.

Diagnostics come from the first turn only: it sees the environment as the loop
finds it, and later turns only see less.
"""

from __future__ import annotations

import ast
import dataclasses
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from shapelint.analysis import (
    call_path,
    dict_keys,
    generators,
    index_iteration,
    instance_state,
    small_sets,
    walrus,
)
from shapelint.analysis.branches import alternative
from shapelint.analysis.dict_entries import mapping_entries
from shapelint.analysis.module_lists import ModuleListV, as_items
from shapelint.analysis.nodes import walk
from shapelint.analysis.repetition import (
    ONE,
    add_turn,
    collected,
    loop_record,
    merge,
    positive_count,
)
from shapelint.analysis.sequences import SeqV, characters
from shapelint.analysis.statements import nested_statements
from shapelint.analysis.unnamed import value_names
from shapelint.notation.symbolic import Expr
from shapelint.ops import backward
from shapelint.ops import saved as storages
from shapelint.ops.backward import carried, settle, turn_entries
from shapelint.ops.values import (
    DICT_KIND,
    UNKNOWN,
    BoolV,
    FloatV,
    IntV,
    ObjectV,
    TensorV,
    TupleV,
    Value,
    Var,
    replaced,
)

UNROLL = 8  # most items a loop is unrolled over
_MAX_TURNS = 4  # turns before what still changes is widened to unknown
# Runs of the innermost body that nested loops may cost; past it a loop takes one
# turn, and if that turn changes what it found, its count is unknown.
_MAX_WEIGHT = 64
_MAX_WHILE = 64  # turns of a while loop followed one by one


@dataclass
class Iteration:
    count: Expr | None  # trip count; None when nobody knows it
    items: tuple[Value, ...] | None  # each turn's item, where they are listed
    item: Value  # what any turn's item is known to be


_NOTHING = Iteration(None, None, UNKNOWN)


def of_value(an, v: Value) -> Iteration:
    chars = characters(v)
    if chars is not None:
        v = chars
    v = small_sets.iterated(v) or v
    if isinstance(v, TupleV):
        item = v.items[0] if v.items else UNKNOWN
        for other in v.items[1:]:
            item = an.join(item, other)
        return Iteration(Expr.const(len(v.items)), v.items, item)
    if isinstance(v, SeqV):
        return Iteration(v.count, None, v.item)
    if isinstance(v, ModuleListV):  # iterating an nn.ModuleList walks its layers
        items = as_items(v)
        if items is not None:
            return of_value(an, TupleV(items))
        if v.known and v.count is not None:
            return Iteration(v.count, None, v.items[0] if v.items else UNKNOWN)
        return _NOTHING
    entries = mapping_entries(an, v) if isinstance(v, ObjectV) else None
    if entries is not None:  # an instance of a dict subclass walks its entries' keys
        v = entries
    if type(v) is ObjectV and v.kind == DICT_KIND:
        # a dict walks its keys, in the order they were first stored
        return of_value(an, TupleV(dict_keys.keys(v)))
    if isinstance(v, TensorV) and v.shape and not isinstance(v.shape[0], Var):
        # Iterating a tensor walks its first dimension.
        return Iteration(v.shape[0], None, backward.row(v))
    return _NOTHING


def iterate(an, node: ast.expr, frame, d: int = 0) -> Iteration:
    """The turns of `for _ in node`, evaluating node."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and not node.keywords
        and not any(isinstance(a, ast.Starred) for a in node.args)
        and an.is_builtin(node.func.id, frame)
    ):
        name = node.func.id
        if name == "range" and 1 <= len(node.args) <= 3:
            return _range([an.eval(a, frame, d) for a in node.args])
        if name == "enumerate" and len(node.args) in (1, 2):
            inner = iterate(an, node.args[0], frame, d)
            start = an.eval(node.args[1], frame, d) if len(node.args) == 2 else IntV(Expr.const(0))
            return _enumerate(inner, start)
        if name == "zip" and node.args:
            return _zip([iterate(an, a, frame, d) for a in node.args])
        if name == "reversed" and len(node.args) == 1:
            inner = iterate(an, node.args[0], frame, d)
            items = tuple(reversed(inner.items)) if inner.items is not None else None
            return Iteration(inner.count, items, inner.item)
    if isinstance(node, ast.Call):
        items = generators.yielded(an, node, frame, d, iterate)
        if items is not None:  # `for blk in evens(self.layers)`: what its body yields
            return of_value(an, TupleV(items))
    return of_value(an, index_iteration.walked(an, an.eval(node, frame, d), node, frame))


def _const(v: Value) -> int | None:
    return v.value.value if isinstance(v, IntV) and v.value is not None else None


def _range(args: list[Value]) -> Iteration:
    start, stop, step = (IntV(Expr.const(0)), args[0], IntV(Expr.const(1)))
    if len(args) >= 2:
        start, stop = args[0], args[1]
    if len(args) == 3:
        step = args[2]
    a, b, k = _const(start), _const(stop), _const(step)
    if a is not None and b is not None and k:
        r = range(a, b, k)
        items = tuple(IntV(Expr.const(i)) for i in r) if len(r) <= UNROLL else None
        return Iteration(Expr.const(len(r)), items, IntV(None))
    if (
        k == 1
        and isinstance(start, IntV)
        and isinstance(stop, IntV)
        and start.value is not None
        and stop.value is not None
    ):
        # A symbolic bound: the count is the difference, as sizes are never negative.
        return Iteration(stop.value - start.value, None, IntV(None))
    return Iteration(None, None, IntV(None))


def _enumerate(inner: Iteration, start: Value) -> Iteration:
    s = _const(start)
    items = None
    if inner.items is not None and s is not None:
        items = tuple(TupleV((IntV(Expr.const(s + i)), v)) for i, v in enumerate(inner.items))
    return Iteration(inner.count, items, TupleV((IntV(None), inner.item)))


def _zip(inners: list[Iteration]) -> Iteration:
    item = TupleV(tuple(i.item for i in inners))
    if all(i.items is not None for i in inners):
        n = min(len(i.items) for i in inners)  # type: ignore[arg-type]
        items = tuple(TupleV(tuple(i.items[j] for i in inners)) for j in range(n))  # type: ignore[index]
        return Iteration(Expr.const(n), items, item)
    counts = {i.count for i in inners}
    count = counts.pop() if len(counts) == 1 else None  # zip stops at the shortest
    return Iteration(count, None, item)


# ---------------------------------------------------------------------- loops


@contextmanager
def _weighted(an, turns: int):
    saved = an.loop_weight
    an.loop_weight = saved * max(turns, 1)
    try:
        yield
    finally:
        an.loop_weight = saved


@contextmanager
def _again(an, turn: int):
    """The first turn of an unrolled loop reports as usual; the others repeat it."""
    if turn == 0:
        yield
    else:
        with an.repeated():
            yield


def exec_for(an, stmt: ast.For | ast.AsyncFor, frame) -> bool:
    """Run the loop; True when a turn surely returned (the function ends there)."""
    it = iterate(an, stmt.iter, frame)
    early = ends_early(stmt.body)
    n = len(it.items) if it.items is not None else None
    # A turn that may end the loop is decided by what that turn holds (`if i >= k:
    # break`), which one turn standing for all cannot tell: such a loop is followed
    # turn by turn as far as a while loop is, its items listed and its runs in budget.
    by_turn = (early and _ended_by_turn(stmt)) or _names_attributes(stmt)
    longest = _MAX_WHILE if an.specialize and by_turn else UNROLL
    if n is not None and n <= longest and n * an.loop_weight <= _MAX_WEIGHT:
        # A turn that may end early is followed exactly where what decides it is
        # known (a specialized run): break, continue and return as Python runs them.
        if not early:
            with _weighted(an, n):
                for i, item in enumerate(it.items):  # type: ignore[arg-type]
                    an.assign(stmt.target, item, frame, None)
                    with collected(frame) as turn, _again(an, i):
                        an.exec_block(stmt.body, frame)
                    merge(frame.records, turn, ONE, "")
            an.exec_block(stmt.orelse, frame)
            return False
        if an.specialize:

            def turns():
                for item in it.items:  # type: ignore[union-attr]
                    an.assign(stmt.target, item, frame, None)
                    yield stmt.body

            ended = _unrolled(an, stmt, frame, turns(), n)
            if ended is not None:
                return ended

    def turn() -> None:
        an.assign(stmt.target, it.item, frame, None)
        an.exec_block(stmt.body, frame)

    if early:
        times, why = None, "the loop may end early"
    elif it.count is None:
        times, why = None, "a loop of unknown length"
    else:
        times, why = it.count, "loop"
    # a turn surely runs where the count is a sum of sizes (each positive), whatever
    # may end the loop early
    runs = it.count is not None and positive_count(it.count)
    repeat(an, frame, turn, times, why, stmt if isinstance(stmt, ast.For) else None, (runs, stmt))
    _orelse(an, stmt, frame)
    return False


def exec_while(an, stmt: ast.While, frame) -> bool:
    """Run the loop; True when a turn surely returned."""
    if an.specialize:

        def turns():
            for _ in range(_MAX_WHILE):
                test = an.decide(stmt.test, frame)
                if test is None:
                    raise _Undecided
                if not test:
                    return
                yield stmt.body
            raise _Undecided  # longer than followed: its count is not known here

        ended = _unrolled(an, stmt, frame, turns(), 1)
        if ended is not None:
            return ended
    an.eval(stmt.test, frame)

    def turn() -> None:
        an.exec_block(stmt.body, frame)
        an.eval(stmt.test, frame)

    repeat(an, frame, turn, None, "a while loop", None, (False, stmt))
    _orelse(an, stmt, frame)
    return False


class _Undecided(Exception):
    """A while loop's test the analysis cannot decide."""


def _unrolled(an, stmt, frame, turns, weight: int) -> bool | None:
    """Run the turns one by one, following break, continue and return; True when
    a turn surely returned, False when the loop ended. None, everything undone,
    where a turn may or may not leave the loop (a test that is not known)."""
    env, records, returns = dict(frame.env), dict(frame.records), list(frame.returns)
    exits = list(frame.exits)
    outer = frame.exit_unsure
    frame.exit_unsure = False
    ended = None
    # A `for` keeps its turns apart under one loop record, as a loop without a
    # break does, so the per-module table names item i of what it walks.
    runs: dict | None = {} if isinstance(stmt, ast.For) else None
    try:
        with _weighted(an, weight):
            for i, body in enumerate(turns):
                frame.jump = None
                with collected(frame) as turn, _again(an, i):
                    an.exec_block(body, frame)
                if runs is None:
                    merge(frame.records, turn, ONE, "")
                else:
                    add_turn(runs, turn, i)
                if frame.exit_unsure:
                    raise _Undecided
                if frame.done or frame.jump == "break":
                    ended = frame.done
                    break
    except _Undecided:
        frame.env = env
        frame.records.clear()  # in place: a comprehension's scope shares the dict
        frame.records.update(records)
        frame.returns[:] = returns
        frame.exits[:] = exits
        frame.done, frame.jump = False, None
        return None
    finally:
        frame.exit_unsure = outer
    frame.jump = None
    if runs:
        loop_record(an, stmt, frame, runs, i + 1)
    if ended is None:
        an.exec_block(stmt.orelse, frame)  # no break: else runs
        return False
    return ended


def after_early_return(an, rest: list[ast.stmt], frame) -> None:
    """The statements after a loop one of whose turns may have returned (a
    `return` under a test the analysis cannot decide, in a loop of unknown
    length) run only where no turn did. Where they surely raise they are no
    alternative, as a raising branch of an undecided `if` is none: a call that
    returns returned from the loop, so nothing they ran is part of its cost and
    the function ends with what the turns returned (`for c in classes: if q ==
    c.__name__: return c()` then `raise ValueError`)."""
    state = instance_state.fork(an)
    n = len(frame.records)
    an.exec_block(rest, frame)
    if not frame.raised:
        return
    for k in list(frame.records)[n:]:
        del frame.records[k]
    instance_state.restore(state)
    frame.raised = False
    frame.done = True


def _orelse(an, stmt, frame) -> None:
    """A loop's else, after turns the analysis ran as one: it runs only if no
    break ended the loop, so where the body may break, its calls may not run."""
    if not stmt.orelse:
        return
    if not _breaks(stmt.body):
        an.exec_block(stmt.orelse, frame)
        return
    before = dict(frame.env)
    with collected(frame) as records:
        an.exec_block(stmt.orelse, frame)
    why = f"runs only if the loop at line {stmt.lineno} ends without a break, not known here"
    for rec in records.values():
        alternative(rec, why, "if it runs")
    merge(frame.records, records, ONE, "")
    frame.env = an.join_env(before, frame.env)
    frame.done = False


def _breaks(body: list[ast.stmt]) -> bool:
    """A break of this loop (not of a loop inside it)."""
    for stmt in body:
        if isinstance(stmt, ast.Break):
            return True
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if any(_breaks(b) for b in _blocks(stmt)):
            return True
    return False


# How many loops have run as turns standing for a number of them (repeat), in this
# thread: what such a turn appends to a module being built is one item of many.
_REPEATS: ContextVar[int] = ContextVar("repeats", default=0)


def repeats() -> int:
    return _REPEATS.get()


def repeat(
    an, frame, turn, times: Expr | None, why: str, stmt: ast.For | None = None, loop=(True, None)
) -> None:
    """Run `turn` until the environment at its top is stable; its calls count
    `times` times. Lists that grow by one item a turn become a SeqV. A `for` loop
    (stmt) whose turns read back a tensor that may require grad is one record,
    with the names it carries (ops/backward.carried): which turns the loss reaches
    of each call depends on them (analysis/reached.py). loop: whether a turn surely
    runs, and the loop statement; one that may run no turn is an undecided
    construct: what its turn finds raises only where it runs one (call_path)."""
    _REPEATS.set(_REPEATS.get() + 1)
    surely_runs, node = loop
    group = None if surely_runs or node is None else call_path.undecided()
    if group is not None:
        call_path.untaken(group, f"the loop at line {node.lineno} runs no turn")
    first = f"the loop at line {node.lineno} runs a turn" if group is not None else ""
    before = dict(frame.env)
    # A count nobody knows may be 0: what the turns stored into the modules being
    # built holds after the loop only where no turn ran would leave it alike.
    built = instance_state.fork(an) if times is None else []
    state = before
    grows: dict[str, Value] = {}  # list name -> the item it gains each turn
    turns = _MAX_TURNS if an.loop_weight * _MAX_TURNS <= _MAX_WEIGHT else 1
    stable = False
    entries: dict = {}
    # Each turn saves against the storages saved before the loop, not the ones an
    # earlier try saved (a tensor found from outside it, saved in the first try,
    # is the counted turn's to save), and what it saves of a tensor it finds
    # (one torch saves once) or of one a name it rebinds held is not known.
    ledger = storages.mark()
    for n in range(turns):
        frame.env = dict(state)
        if stmt is not None:
            entries = turn_entries(frame.env)
        frame.done = False  # a return in the last turn does not stop this one
        frame.jump = None
        if n:
            storages.undo(ledger)
        bound = (stmt.target, *stmt.body) if stmt is not None else ()
        with (
            collected(frame) as records,
            _weighted(an, turns),
            storages.repeated_turn(found_values(frame.env, *bound) if bound else []),
            storages.first_turn(replaced_values(frame.env, *bound), strict=True),
        ):
            if n == 0:
                with call_path.taking(group, first) as alt:
                    turn()
                    if frame.raised:
                        call_path.surely_raised(alt)
            else:
                with an.muted():
                    turn()
        after = frame.env
        if n == 0:
            grows = _growing_lists(state, after)
        for name in grows:
            v = after.get(name)
            item = v.items[-1] if isinstance(v, TupleV) and v.items else UNKNOWN
            grows[name] = item if n == 0 else an.join(grows[name], item)
        new = {
            k: (v if v is after.get(k) or k in grows else an.join(v, after.get(k, UNKNOWN)))
            for k, v in state.items()
        }
        if all(new[k] == state[k] for k in state):
            stable = True
            break
        if n == turns - 2:
            new = {k: (v if v == state[k] else UNKNOWN) for k, v in new.items()}
        state = new
    if not stable:
        # The last turn's shapes may not hold for the next: its costs are no count.
        times, why = None, "shapes change from turn to turn"
    frame.jump = None
    turned = carried(frame.env, entries) if stmt is not None and times is not None else []
    settle(frame.env, entries, times)
    if turned != [] and records:
        rec = loop_record(an, stmt, frame, records, None, times)
        if rec is not None:
            # an item a list keeps from every turn is reached in every turn: not followed
            rec.carried = None if grows else turned
            at_least_once(rec, times)
    else:
        merge(frame.records, records, times, why)
    kept = kept_shapes(an, frame, turn, before) if stable else {}
    out = an.join_env(before, frame.env)
    out.update(kept)
    last_turn_left(out, frame.env, entries, times)
    if built:
        ran = instance_state.taken(built)
        instance_state.restore(built)
        instance_state.join(an, ran)
    for name in grows:
        prefix = before[name]
        out[name] = SeqV(grows[name], times) if not prefix.items else UNKNOWN  # type: ignore[attr-defined]
    frame.env = out


def at_least_once(rec, times: Expr | None) -> None:
    """rec, the record of a loop of symbolic count whose turns carry tensors: its
    backward (analysis/reached.py, the last turn apart from the others) and what
    the loss reaches after it (last_turn_left) are of one turn or more, said in
    its notes (report/conventions.py)."""
    if times is not None and times.value is None and positive_count(times):
        rec.cost = replaced(rec.cost, notes=[*rec.cost.notes, backward.TURNS_NOTE])


def last_turn_left(out: dict, after: dict, entries: dict, times: Expr | None) -> None:
    """The tensors the names carried by a loop of symbolic count hold after it
    (out, the join of before and after its turns), as autograd's graph has them
    where the count is a product of sizes, each positive (the only sizes a
    symbolic one stands for): what the last turn left (after), which leads to
    what the names held before the loop only where the turns read it back
    (ops/backward.settle), not also what they held before, as no turn would.
    Where the count may be 0 (`range(n - 1)`, a count not known), a name whose
    value before the loop the last turn's does not reach leads nowhere known."""
    if not entries:
        return
    surely = times is not None and positive_count(times)
    for k in entries:
        v, w = out.get(k), after.get(k)
        if not isinstance(v, TensorV) or not isinstance(w, TensorV) or w.origin is None:
            continue
        if surely and (v.origin != w.origin or v.grad is not w.grad):
            out[k] = replaced(v, origin=w.origin, grad=w.grad)
        elif not surely and v.origin is not None and not _kept_either_way(v.origin, w.origin):
            # no turn leaves what the name held before, a turn or more what the
            # last turn left, which does not reach it: which one, not known
            out[k] = replaced(v, origin=frozenset((backward.BROKEN,)))


def _kept_either_way(joined: frozenset, after: frozenset) -> bool:
    """Whether what the loss reaches through a name after a loop that may run no
    turn is the same either way, before the loop: what the last turn left reaches
    all the name held before it (`u = u + f(x)`)."""
    extra = joined - after
    if not extra:
        return True
    got = backward.walk(after)
    return got is not None and all(id(o) in got[0] for o in extra)


def kept_shapes(an, frame, turn, before: dict[str, Value]) -> dict[str, TensorV]:
    """The values a turn gives a shape, from one nothing was known of, that a
    further turn keeps: `for blk in self.layers: x = blk(x) + x` leaves x [..., d]
    after any number of turns, as the code that follows assumes of x. A shape that
    changes from turn to turn (or a turn that ends the function) keeps nothing."""
    after = frame.env
    shaped = {
        k: v
        for k, v in after.items()
        if before.get(k) is UNKNOWN and isinstance(v, TensorV) and v.shape is not None
    }
    if not shaped or frame.done:
        return {}
    with collected(frame), an.muted():
        frame.env = dict(after)
        frame.jump = None
        turn()
        again = frame.env
    frame.env, frame.done, frame.jump = after, False, None
    return {
        k: v
        for k, v in shaped.items()
        if isinstance(again.get(k), TensorV) and again[k].shape == v.shape
    }


def _growing_lists(before: dict[str, Value], after: dict[str, Value]) -> dict[str, Value]:
    out: dict[str, Value] = {}
    for name, v in before.items():
        a = after.get(name)
        if isinstance(v, TupleV) and isinstance(a, TupleV) and len(a.items) == len(v.items) + 1:
            if a.items[: len(v.items)] == v.items:
                out[name] = UNKNOWN
    return out


def found_values(env: dict, *bound: ast.AST) -> list:
    """The values of env a repeated turn finds: all but the names bound in `bound`
    (a loop's body and target, a comprehension's targets), which each turn replaces."""
    names = _names_under(bound)
    return [v for k, v in env.items() if k not in names]


def replaced_values(env: dict, *bound: ast.AST) -> list:
    """The values of env a repeated turn rebinds (found_values' others): the
    first turn finds them, each later turn the turn before's."""
    names = _names_under(bound)
    return [v for k, v in env.items() if k in names]


def _names_under(nodes: tuple[ast.AST, ...]) -> frozenset[str]:
    """The names an `ast.Name` anywhere under nodes reads or binds, each node's kept
    on it: asked at every run of a loop (per call, per pass), never edited."""
    return frozenset().union(*(_names_in(b) for b in nodes))


def _names_in(node: ast.AST) -> frozenset[str]:
    known = node.__dict__.get(_NAMES_IN)
    if known is None:
        known = frozenset(n.id for n in walk(node) if isinstance(n, ast.Name))
        node.__dict__[_NAMES_IN] = known
    return known


_NAMES_IN = "_shapelint_names_in"


def _found(inner, gens) -> list:
    return found_values(inner.env, *(g.target for g in gens))


def same_each_turn(
    an,
    stmt: ast.For,
    item: Value,
    last: Value,
    frame,
    first_apart: bool = False,
    later: bool = False,
) -> dict | tuple[dict, dict] | None:
    """The records of one turn of stmt, when every turn's are those: the body
    run once with `item` (what every turn's item is known to be) leaves each
    name it found as it found it and knows every cost it records, so no cost
    depends on which turn it is, and the next turn starts where this one did.
    The caller counts them `n` times: nested loops multiply, instead of running
    the innermost body once per combination of items. None, with the frame as
    it was, where a turn may differ (a body that may end a turn early, a value
    carried from turn to turn, a cost that needs the item's value). With
    first_apart, a first turn that changes only whether a carried tensor requires
    grad (`x = layer(x)` fed the raw input: the same forward, another backward)
    comes back apart: (its records, the records of every later turn, the entries
    of the later turns: ops/backward.turn_entries), and so does a first turn that
    saves a tensor a name it rebinds held before the loop: each later turn finds
    the turn before's result there, which that turn may have saved already or
    not, where the first finds a tensor an earlier op saved, a Parameter, an
    input, or a tensor saved by none (`later`: the run standing for the later
    turns, whose names hold the first turn's results)."""
    if ends_early(stmt.body):
        return None
    saved = (dict(frame.env), list(frame.returns), frame.done, set(frame.locals))
    exits = list(frame.exits)
    before = saved[0]
    targets = {n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name)}
    names = value_names(TupleV(tuple(before.values())))
    an.assign(stmt.target, item, frame, None)
    writes = an.outer_writes
    an.trial += 1
    found = found_values(before, stmt.target, *stmt.body)
    rebound = [] if later else replaced_values(before, stmt.target, *stmt.body)
    # What the trial saves is dropped with its records where it is no turn of the
    # loop: a storage it found (a mask held by the module) is saved by the turns
    # run one by one instead, and counts there.
    ledger = storages.mark()
    try:
        with (
            collected(frame) as records,
            an.muted(),
            an.repeated(),
            storages.repeated_turn(found),
            storages.first_turn(rebound) as first_reads,
        ):
            an.exec_block(stmt.body, frame)
    finally:
        an.trial -= 1
    after = frame.env
    stable = (
        not frame.done
        and an.outer_writes == writes  # no state outside the frame changed
        and len(frame.returns) == len(saved[1])
        and all(_known_each_turn(r, names) for r in records.values())
    )
    changed = [k for k, v in before.items() if k not in targets and after.get(k) != v]
    # A turn that saves what it found at its bytes differs from the later ones only
    # where it saved its own result too (they then find a saved tensor: `x =
    # exp(lin(x))`); otherwise each later turn saves the turn before's result as
    # the first saved what it found (`x = lin(x)`, nested: no run apart per level).
    first_differs = first_reads[0] or (
        first_reads[1]
        and any(
            storages.is_saved(v)
            for k, v in after.items()
            if k in before and k not in targets and v is not before[k]
        )
    )
    if (
        stable
        and (changed or first_differs)
        and first_apart
        and all(_grad_only(before[k], after.get(k)) for k in changed)
    ):
        frame.env = {k: v for k, v in after.items() if k in before or k in targets}
        entries = turn_entries(frame.env)  # what the later turns read of the first
        rest = same_each_turn(an, stmt, item, last, frame, later=True)
        if rest is not None:
            return records, rest, entries  # type: ignore[return-value]
        stable = False
    if not stable or changed or first_differs:
        frame.env, frame.returns, frame.done, frame.locals = saved
        frame.exits[:] = exits
        storages.undo(ledger)
        return None
    new = [k for k in after if k not in before and k not in targets]
    vague = [k for k in new if _vague(after[k])]
    if vague:
        # A name the body sets holds, after the loop, what the last turn gave it,
        # which the item's value may decide: that turn runs again to say what.
        frame.env = dict(before)
        an.assign(stmt.target, last, frame, None)
        with collected(frame), an.muted(), an.repeated():
            an.exec_block(stmt.body, frame)
        # Only those names take that run's values. Every other name keeps the
        # counted turn's, whose tensors carry the Origins its records hold, the
        # ones the walk from the loss must meet (analysis/reached.py); a tensor
        # made in the run again came from ops no record holds.
        again = frame.env
        frame.env = dict(after)
        frame.env.update({k: again[k] for k in targets if k in again})
        frame.env.update({k: backward.unlinked(again.get(k, UNKNOWN)) for k in vague})
    else:
        an.assign(stmt.target, last, frame, None)
    return records


def _grad_only(a: Value, b: Value | None) -> bool:
    """a and b the same tensor but for whether it requires grad."""
    return (
        isinstance(a, TensorV)
        and type(b) is type(a)
        and dataclasses.replace(a, grad=None) == dataclasses.replace(b, grad=None)  # type: ignore[type-var]
    )


def _known_each_turn(rec, names: set[str]) -> bool:
    """A cost known, and in names the turn found (not a size the turn made up)."""
    c = rec.cost
    if c.flops is None or not c.complete:
        return False
    used = set().union(*(e.names() for e in (c.flops, c.other_flops, c.bytes) if e is not None))
    return used <= names


def _vague(v: Value) -> bool:
    if v is UNKNOWN:
        return True
    if isinstance(v, (IntV, FloatV, BoolV)) and not isinstance(v, TensorV):
        return v.value is None
    if isinstance(v, TensorV):
        return v.shape is None
    if isinstance(v, TupleV):
        return any(_vague(i) for i in v.items)
    return False


def ends_early(body: list[ast.stmt]) -> bool:
    """Whether a turn may stop before the end of the body: break, continue or
    return at this loop's level (a nested loop's own break does not count)."""
    for stmt in body:
        if isinstance(stmt, (ast.Break, ast.Continue, ast.Return)):
            return True
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            if _returns(stmt.body) or ends_early(stmt.orelse):
                return True
            continue
        for block in _blocks(stmt):
            if ends_early(block):
                return True
    return False


def _ended_by_turn(stmt: ast.For | ast.AsyncFor) -> bool:
    """Whether a test that may end a turn early reads a name the loop binds (`for
    i, q in enumerate(qs): if i >= k: break`): the turns differ in how they end,
    which one turn standing for all cannot tell. A loop whose exits test other
    values is unrolled as far as any loop is: following each of up to 64 turns of
    such loops (a name looked up in each table of a registry, in a decorator's
    docstring code) made transformers' BertModel 8 s -> 11 s for no figure."""
    bound = {n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name)}
    for node in nested_statements(stmt.body):
        if isinstance(node, (ast.If, ast.While)) and (
            ends_early(node.body) or ends_early(node.orelse)
        ):
            if any(isinstance(n, ast.Name) and n.id in bound for n in ast.walk(node.test)):
                return True
    return False


_ATTRIBUTE_CALLS = frozenset({"setattr", "getattr", "delattr", "hasattr"})


def _names_attributes(stmt: ast.For | ast.AsyncFor | ast.expr) -> bool:
    """Whether a name the loop binds is the attribute name of a `setattr`,
    `getattr`, `delattr` or `hasattr` in its body (`for k in self.__class__.__dict__:
    setattr(self, k, getattr(self, k))`): the join of the turns' different strings
    names no attribute, so a store through it may have changed any; each turn of a
    listed iterable is followed, as far as a while loop is. A comprehension of one
    generator (`{k: getattr(self, k) for k in names}`) alike, its element for a body.
    Kept on the node: asked at every run of it, and the tree is never edited."""
    known = stmt.__dict__.get(_NAMES_ATTRIBUTES)
    if known is None:
        known = stmt.__dict__[_NAMES_ATTRIBUTES] = _names_attributes_walked(stmt)
    return known


_NAMES_ATTRIBUTES = "_shapelint_names_attributes"


def _names_attributes_walked(stmt) -> bool:
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        target, body = stmt.target, stmt.body
    elif isinstance(stmt, ast.DictComp):
        target, body = stmt.generators[0].target, [stmt.key, stmt.value]
    else:
        target, body = stmt.generators[0].target, [stmt.elt]
    # (nodes.walk: ast.walk's order, without the leaves, which are no call or name)
    bound = {n.id for n in walk(target) if isinstance(n, ast.Name)}
    for part in body:
        for n in walk(part):
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name)
                and n.func.id in _ATTRIBUTE_CALLS
                and len(n.args) >= 2
                and any(isinstance(m, ast.Name) and m.id in bound for m in walk(n.args[1]))
            ):
                return True
    return False


def _returns(body: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Return) for n in nested_statements(body))


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    out = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            out.append(block)
    for h in getattr(stmt, "handlers", ()) or ():
        out.append(h.body)
    for case in getattr(stmt, "cases", ()) or ():
        out.append(case.body)
    return out


# ---------------------------------------------------------------------- comprehensions


def comprehension(an, node, frame, d: int) -> Value:
    """[elt for t in xs]: one element per listed item, or one for all turns."""
    inner = an.scope(frame)
    gens = node.generators
    simple = len(gens) == 1 and not gens[0].ifs and not gens[0].is_async
    if simple:
        it = iterate(an, gens[0].iter, inner, d)
        # as a for loop's: a turn whose item names an attribute (`{k: getattr(self, k)
        # for k in names}`) is followed one by one as far as a while loop is, since
        # one turn for all would read no attribute
        longest = _MAX_WHILE if an.specialize and _names_attributes(node) else UNROLL
        if (
            it.items is not None
            and len(it.items) <= longest
            and (len(it.items) <= UNROLL or len(it.items) * an.loop_weight <= _MAX_WEIGHT)
        ):
            results = []
            for i, item in enumerate(it.items):
                an.assign(gens[0].target, item, inner, None)
                with collected(inner) as turn, _again(an, i):
                    results.append(_element(an, node, inner, d))
                merge(inner.records, turn, ONE, "")
            return _built(node, results)
        an.assign(gens[0].target, it.item, inner, None)
        walrus.inexact()  # one turn stands for all: what a walrus bound is not known
        with collected(inner) as turn, storages.repeated_turn(_found(inner, gens)):
            value = _element(an, node, inner, d)
        why = "comprehension" if it.count is not None else "a comprehension of unknown length"
        merge(inner.records, turn, it.count, why)
        return SeqV(value, it.count) if _is_sequence(node) else UNKNOWN
    tried = not any(g.is_async for g in gens)
    if tried:
        filtered = _filtered(an, node, inner, iterate(an, gens[0].iter, inner, d), d)
        if filtered is not None:
            return filtered
    walrus.inexact()
    with collected(inner) as turn, storages.repeated_turn(_found(inner, gens)):
        for i, gen in enumerate(gens):
            if i or not tried:  # (the attempt above evaluated the first one)
                an.eval(gen.iter, inner, d)
            an.assign(gen.target, UNKNOWN, inner, None)
            for cond in gen.ifs:
                an.eval(cond, inner, d)
        _element(an, node, inner, d)
    merge(inner.records, turn, None, "a filtered or nested comprehension")
    return UNKNOWN


def _filtered(an, node, inner, it: Iteration, d: int) -> Value | None:
    """`[k for k in keys if k in router]`, `[f(x) for f in fs for _ in range(2)]`:
    every generator over items listed one by one (it: the first's), each turn's
    element kept or left out as its conditions decide, in Python's order; None
    (nothing kept on the record) where one of them is not known."""
    results: list[Value] = []
    turns: list[dict] = []
    if not _walk(an, node, inner, d, 0, it, True, results, turns):
        return None
    for turn in turns:
        merge(inner.records, turn, ONE, "")
    return _built(node, results)


def _walk(an, node, inner, d: int, k: int, it: Iteration, first: bool, results, turns) -> bool:
    """The turns of generator k of node over it's items, the elements kept in results
    and each turn's records in turns; False where a condition or an iterable is not
    known. first: every outer generator is at its first item (the first turn of all
    reports; the others repeat it, as a loop's turns do). A function of the module,
    not a closure: one calling itself would be a reference cycle, which a batch's
    collector (off but for a pass when survivors pile up) leaves standing until then."""
    gens = node.generators
    gen = gens[k]
    if it.items is None or len(it.items) > UNROLL:
        return False
    for i, item in enumerate(it.items):
        an.assign(gen.target, item, inner, None)
        with collected(inner) as turn, _again(an, 0 if first and i == 0 else 1):
            keep: bool | None = True
            for cond in gen.ifs:
                keep = an.decide(cond, inner)
                if keep is not True:
                    break
            if keep is None:
                return False
            if keep and k + 1 < len(gens):
                deeper = iterate(an, gens[k + 1].iter, inner, d)
                if not _walk(an, node, inner, d, k + 1, deeper, first and i == 0, results, turns):
                    return False
            elif keep:
                if len(results) >= UNROLL * UNROLL:
                    return False
                results.append(_element(an, node, inner, d))
        turns.append(turn)
    return True


def _is_sequence(node) -> bool:
    return isinstance(node, (ast.ListComp, ast.GeneratorExp))


def _built(node, results: list[Value]) -> Value:
    """What a comprehension over listed items builds: a list of its elements, or
    a dict of its (key, value) pairs when every key is known (dict_keys.py; an empty
    one when nothing is kept: `{k: v for k, v in kwargs.items() if ...}` of no kwargs),
    equal keys one entry as Python keeps them."""
    if _is_sequence(node):
        return TupleV(tuple(results))
    if isinstance(node, ast.DictComp):
        entries: dict[object, Value] = {}
        for pair in results:
            key = dict_keys.key_of(pair.items[0] if isinstance(pair, TupleV) else UNKNOWN)
            if not dict_keys.known(key):
                return UNKNOWN
            entries[key] = pair.items[1]  # type: ignore[union-attr]
        return ObjectV(DICT_KIND, tuple(entries.items()))
    return UNKNOWN


def _element(an, node, inner, d: int) -> Value:
    if isinstance(node, ast.DictComp):
        return TupleV((an.eval(node.key, inner, d), an.eval(node.value, inner, d)))
    return an.eval(node.elt, inner, d)
