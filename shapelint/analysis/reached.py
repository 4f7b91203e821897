"""The backward of the ops the loss reaches.

`out.sum().backward()` runs the backward of an op only where the loss depends on
its result: not of one whose result is only detached, compared, made an index,
stored and never returned, or not used at all. Every tensor carries the Origins
of the ops that made it (ops/backward.py), each Origin those of the operands the
gradient flows on to; the walk from the returned tensors (the loss is the sum of
every one that requires grad) marks the Origins reached, and a call's backward
counts where its result is reached. Where the chain is lost (a tensor of unknown
origin, a write into a tensor other names still see, records of a call reached
by a way its result does not show) the backward is not known rather than guessed.
"""

from __future__ import annotations

import dataclasses

from shapelint.analysis.dict_entries import ITEMS
from shapelint.analysis.module_kinds import DICT_KINDS
from shapelint.analysis.repetition import positive_count
from shapelint.notation.symbolic import Expr
from shapelint.ops.backward import origins, walk
from shapelint.ops.values import UNKNOWN, ObjectV, TupleV, Value

ZERO = Expr.const(0)
ONE = Expr.const(1)


@dataclasses.dataclass(frozen=True)
class Reach:
    """What the loss reaches: the ids of the Origins (ids), walked from the
    Origins of the returned tensors (start)."""

    ids: set[int]
    start: frozenset


def reached(returns: Value, unsummed: frozenset[str] = frozenset()) -> Reach | None:
    """What the loss reaches from the returned value: None where the walk meets
    an Origin not known (or a value not seen into). The instances of the kinds
    unsummed, inside the returned tuples, lists and dicts, are no part of the loss
    (`unsummed_kinds`); the returned value itself is."""
    if isinstance(returns, ObjectV) and returns.kind in unsummed:
        return None
    start = _returned(returns, unsummed)
    if start is None:
        return None
    got = walk(start)
    return None if got is None else Reach(got[0], start)


def unsummed_kinds(returns: Value, plain) -> frozenset[str]:
    """The kinds of the objects inside the returned tuples, lists and dicts that
    the loss does not sum: instances of a class plain(v) says is no tensor,
    tuple, list or dict (a KV cache in a model's output). The loss sums what
    `sum(t.sum() for t in outputs)` can: the tensors of the containers."""
    out: set[str] = set()
    items = _items(returns)
    seen: set[int] = set()
    while items:
        v = items.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        inner = _items(v)
        if inner is not None:
            items.extend(inner)
        elif isinstance(v, ObjectV) and plain(v):
            out.add(v.kind)
    return frozenset(out)


def _items(v: Value) -> list | None:
    """The values a returned container holds (a dict subclass's entries), None for
    anything else."""
    if isinstance(v, ObjectV) and any(k == ITEMS for k, _ in v.attrs):
        return _items(v.attr(ITEMS))
    if isinstance(v, ObjectV) and v.kind in DICT_KINDS:
        return [a for _, a in v.attrs]
    if isinstance(v, TupleV):
        return list(v.items)
    return None


def _returned(v: Value, unsummed: frozenset[str] = frozenset()) -> frozenset | None:
    """The Origins of the returned tensors that require grad, in tuples, lists
    and dicts too, and in the entries of an instance of a dict subclass (what its
    `values()` gives, as a dict it is: transformers' ModelOutput); None where one
    is not seen into."""
    items = _items(v)
    if items is None:
        if isinstance(v, ObjectV):
            return frozenset() if v.kind in unsummed else None
        return None if v is UNKNOWN else origins(v)
    out: set = set()
    for item in items:
        o = _returned(item, unsummed)
        if o is None:
            return None
        out |= o
    return frozenset(out)


UNREACHED_WHY = (
    "backward: whether the loss reaches this call is not known (a tensor written in "
    "place, or a reused analysis of a call reached another way)"
)


def backward(records, reach: Reach) -> tuple[list, Expr | None, Expr]:
    """The records, each with the backward the loss reaches of it (None where
    that is not known, with why); their backward (None: not known); and a lower
    bound of it."""
    seen = reach.ids
    memo: dict = {_START: reach.start}
    done: dict[int, object] = {}
    total: Expr | None = ZERO
    low = ZERO
    for r in records:
        b, lo = _of(r, seen, memo)
        total = None if total is None or b is None else total + b
        low = low + lo
    return [_marked(r, seen, memo, done, False) for r in records], total, low


ALTERNATIVES_WHY = (
    "backward: one of two alternatives of the same forward and backward, of which the "
    "loss reaches different parts: which one runs is not known"
)


# What an op the loss does not reach saved, torch frees with its result (unless
# something else holds that result); the same storage saved again by an op the
# loss reaches was counted here, where first saved: the figure is not known.
DEAD_SAVED_WHY = (
    "saved for backward: the loss does not reach its result, so what it saved is freed "
    "with it unless something else holds it, and a later op may save the same storage"
)


def _marked(r, seen: set[int], memo: dict, done: dict, in_turn: bool):
    if id(r) in done:
        return done[id(r)]
    b, _ = _of(r, seen, memo)
    # a loop counted by one turn: a turn's result may be reached only in later turns
    turn = in_turn or bool(r.weights)
    children = [_marked(ch, seen, memo, done, turn) for ch in r.children]
    cost = r.cost
    if b != cost.backward:
        why = UNREACHED_WHY
        if r.alternatives is not None and memo.get(("alternatives", id(r.alternatives))) is False:
            why = ALTERNATIVES_WHY
        notes = cost.notes if b is not None else [*cost.notes, why]
        cost = dataclasses.replace(cost, backward=b, notes=notes)
    if cost.saved is not None and cost.saved != ZERO and not turn:
        lost = any(ch.cost.saved is None for ch in children)
        # A call's result the loss does not reach is an op's: what its run saved
        # dies with it, though its calls' records, a memoised run's shared with a
        # call the loss reaches, say otherwise (target._known_saved skips them).
        dead = bool(r.result) and not any(id(o) in seen for o in r.result)
        if dead or lost:
            why = [DEAD_SAVED_WHY] if dead else []
            cost = dataclasses.replace(cost, saved=None, notes=[*cost.notes, *why])
    same = cost is r.cost and all(a is c for a, c in zip(children, r.children, strict=True))
    out = r if same else dataclasses.replace(r, cost=cost, children=children)
    done[id(r)] = out
    return out


def _of(r, seen: set[int], memo: dict) -> tuple[Expr | None, Expr]:
    key = id(r)
    if key not in memo:
        memo[key] = _own(r, seen, memo)
    return memo[key]


def _own(r, seen: set[int], memo: dict) -> tuple[Expr | None, Expr]:
    whole = r.cost.backward
    if whole == ZERO:
        return ZERO, ZERO
    if r.alternatives is not None and not _agree(r.alternatives, seen, memo):
        return None, ZERO
    if not r.children:
        if r.result is None or _overwritten(r.result, seen):
            return None, ZERO
        hit = [o for o in r.result if id(o) in seen]
        if hit and all(o.side is not None for o in hit):
            # only items whose gradient reaches part of the op (ops/backward.Origin.side)
            part = hit[0].side[0] if len(hit) == 1 else None
            return part, ZERO if part is None else part
        if hit:
            return whole, ZERO if whole is None else whole
        return ZERO, ZERO
    parts = [_of(ch, seen, memo) for ch in r.children]
    if r.result and not any(id(o) in seen for o in r.result):
        # its result is not reached: its calls count only if reached some other way
        # (a memoised call's records shared with another call, a write in place)
        if all(b == ZERO for b, _ in parts):
            return ZERO, ZERO
        if not all(o.inner is not None for o in r.result):
            return None, ZERO
        # a function's run, left only through its exits: what the loss reaches in it
        # by a way that enters none of them (`_own_reach`), as for a result reached in
        # part (cidnet's `i_dec2 = self.I_LCA5(...)` rebound unread, the run shared
        # with the I_LCA calls whose results the loss reaches)
    if r.result and not all(id(o) in seen for o in r.result):
        mine = _own_reach(r, seen, memo)
        if mine is None:
            return None, ZERO
        inner = {_START: memo[_START]}
        parts = [_of(ch, mine, inner) for ch in r.children]
    weights = r.weights or [Expr.const(1)] * len(parts)
    sums = [ch.cost.backward for ch in r.children]
    if whole is None or None in sums or _weighted(sums, weights) != whole:
        if all(b == ZERO for b, _ in parts):
            return ZERO, ZERO
        if whole is None and not r.weights and r.cost.flops is not None and r.cost.complete:
            # a call whose forward is known ran each of its calls once, as recorded
            # (not an alternative, nor a loop of unknown count): what is known of
            # their backward is a bound of its own
            return None, _weighted([lo for _, lo in parts], [ONE] * len(parts))
        # not a plain sum of its calls (a loop counted another way): what it keeps
        # of them is not known
        return None, ZERO
    if any(w != ONE for w in weights):
        return _by_turn(r, parts, weights, seen, memo)
    lows = _weighted([lo for _, lo in parts], weights)
    bs = [b for b, _ in parts]
    return (None if None in bs else _weighted(bs, weights)), lows


_START = "start"  # memo's key of the Origins the walk from the loss starts at


def _agree(both, seen: set[int], memo: dict) -> bool:
    """Whether the loss reaches as much backward of the calls of either branch of
    an undecided `if` counted once (analysis/branches.py): only one of them ran,
    so the figure of the `if` branch's holds where the `else` branch's is the same."""
    key = ("alternatives", id(both))
    if key not in memo:
        # a memo of its own: the walk of each branch's calls, not their figures
        inner = {_START: memo[_START], key: True}
        figures = [
            _sum([_of(x, seen, inner)[0] for x in calls]) for calls in (both.body, both.other)
        ]
        memo[key] = figures[0] is not None and figures[0] == figures[1]
    return memo[key]


def _sum(values) -> Expr | None:
    total = ZERO
    for v in values:
        if v is None:
            return None
        total = total + v
    return total


def _own_reach(r, seen: set[int], memo: dict) -> set[int] | None:
    """What the loss reaches inside call r, whose results it reaches in part:
    through the results it reaches, or by a way that enters no call of r's run
    through its results (a tensor handed out in a list or an attribute). A
    memoised run's records serve each of its calls, and what the loss reaches of
    them through another call's results is that call's, not r's. None where the
    walk is lost."""
    runs = frozenset(o.token for o in r.result if o.inner is not None)
    # into the run from its results, stopping at its arguments: what came before
    # the call may be another call of the same run
    got = [o for o in r.result if id(o) in seen]
    mine = walk(
        [i for o in got if o.inner is not None for i in o.inner]
        + [o for o in got if o.inner is None],
        runs,
    )
    other = walk(memo[_START], closed=runs)
    if mine is None or other is None:
        return None
    return mine[0] | other[0]


def in_call(reach: Reach, exits: frozenset, node: object) -> bool | None:
    """Whether the loss reaches node, inside a memoised run, in the call that left
    the run through exits: through those exits the loss reaches (each call's exits
    are its own, the run's nodes every call's); None where the walk is lost, or
    the loss reaches node by a way that enters no call through its exits (which
    call's node that is, not known)."""
    runs = frozenset(o.token for o in exits if o.inner is not None)
    if not runs:
        return None
    other = walk(reach.start, closed=runs)
    got = [i for o in exits if o.inner is not None and id(o) in reach.ids for i in o.inner]
    mine = walk(got, runs)
    if other is None or mine is None or id(node) in other[0]:
        return None
    return id(node) in mine[0]


def _by_turn(r, parts, weights, seen: set[int], memo: dict) -> tuple[Expr | None, Expr]:
    """A loop counted by one turn: each call's backward in the last turn, as the
    loss reaches it (seen: only the last turn's values outlive the loop), plus
    in each turn before, as the turn after reaches it through the names it reads
    back (turns_reach). A call of weight 1 (a first turn apart) is judged by seen:
    the later turns' entries lead to what it made where the second turn reads it
    (ops/backward.settle). Unknown where the turns before are not shown alike."""
    got = _turns_reach(r, seen, memo)
    if got is None:
        return None, ZERO
    before, steady = got
    total: Expr | None = ZERO
    low = ZERO
    for (b, lo), ch, w in zip(parts, r.children, weights, strict=True):
        if ch.cost.backward == ZERO:
            continue
        if w == ONE:
            # the first turn apart: its values lead to the later turns' entries,
            # each to the first turn's names it reaches (ops/backward.settle)
            total = None if total is None or b is None else total + b
            low = low + lo
            continue
        apart = before
        if w.value is not None and w.value - 1 < len(before):
            apart = before[: max(w.value - 1, 0)]  # fewer turns than the ones told apart
        rest = w - Expr.const(1 + len(apart))
        if apart and rest.value is None:
            return None, ZERO  # how many turns are alike is not known
        turns = [(b, lo)] + [_of(ch, ids, _memo_for(ids, memo)) for ids in apart]
        last = _of(ch, steady, _memo_for(steady, memo))
        if w.value is None and not positive_count(w) and (apart or b is None or b != last[0]):
            # a count that may be 0 (`range(n - 1)`): the last turn told apart from
            # the others is a formula of one turn or more only
            return None, ZERO
        low = _weighted([lo for _, lo in turns] + [last[1]], [ONE] * len(turns) + [rest]) + low
        bs = [x for x, _ in turns] + [last[0]]
        if total is None or None in bs:
            total = None
        else:
            total = total + _weighted(bs, [ONE] * len(turns) + [rest])
    return total, low


_MAX_APART = 4  # turns before the last told apart before every earlier one is alike


def _turns_reach(r, seen: set[int], memo: dict) -> tuple[list, set[int]] | None:
    """What the loss reaches of a loop's turn graph in the turns before the last:
    the reach of each turn told apart, from the last but one back, and the reach
    every turn before them shares. A turn reaches what the next turn reads of the
    names it rebinds, where the next turn's read of them is reached; None where the
    names are not known, or the turns do not settle."""
    if r.carried is None:
        return None
    key = ("turns", id(r))
    if key not in memo:
        memo[key] = None
        names = frozenset(i for i, (_, entry) in enumerate(r.carried) if id(entry) in seen)
        before: list = []
        for _ in range(_MAX_APART):
            got = walk([o for i in names for o in r.carried[i][0]])
            if got is None:
                break
            ids = got[0]
            nxt = frozenset(i for i, (_, entry) in enumerate(r.carried) if id(entry) in ids)
            if nxt == names:
                memo[key] = (before, ids)
                break
            before.append(ids)
            names = nxt
    return memo[key]


def _memo_for(ids: set[int], memo: dict) -> dict:
    """The memo of _of under another reach than the loss's."""
    # One table for the whole walk, keyed by the reach's content: loops nested n deep
    # each tell turns apart, and a memo per set made on the way would walk 2**n times.
    table = memo.get(_TABLE)
    if table is None:
        table = memo[_TABLE] = {}
    key = frozenset(ids)
    got = table.get(key)
    if got is None:
        got = table[key] = {_START: memo[_START], _TABLE: table}
    return got


_TABLE = "table"  # memo's key of the memos under other reaches (_memo_for)


def _weighted(values, weights) -> Expr:
    total = ZERO
    for v, w in zip(values, weights, strict=True):
        total = total + v * w
    return total


def _overwritten(result: frozenset, seen: set[int]) -> bool:
    """An op that wrote into its operand, whose result is not reached while the
    tensor it wrote into is (through another name): which of them the loss
    depends on is not followed."""
    return any(
        o.in_place and id(o) not in seen and any(id(p) in seen for p in o.parents) for o in result
    )
