"""Autograd's version counter: a write into a tensor an op saved for its backward.

Every tensor autograd saves for an op's backward remembers the version of its
storage; a write in place (`add_`, `x += y`, `x[i] = v`, an activation's
`inplace=True`, `out=`; under `torch.no_grad()` too) bumps it, and the backward
that unpacks the saved tensor raises "one of the variables needed for gradient
computation has been modified by an inplace operation". A view shares its base's
counter (`detach()` too); `.data` is a counter of its own, so a write through it
bumps none.

A target run logs each op's saves by storage (`saved`: the storage tokens of
ops/saved.py, None for one the analysis cannot name) and checks each write
against those made before it (`written`); whether the loss reaches the op that
saved decides (`verdict`, read by analysis/target.py). A save or a write the
analysis is not sure of makes the backward not known, never a figure.

The log keeps, too, the ops whose backward torch does not implement
(ops/no_derivative.py, `refused`): the backward raises where the loss reaches one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


@dataclasses.dataclass(frozen=True, slots=True)
class Save:
    """One op's save of a storage for its backward. node: the Origin of the op's
    result (ops/backward.py), which the loss reaches where the backward runs it;
    site: (path, line, op); sure: the op surely saved that storage itself (not a
    copy, not a storage it may or may not share); grad: whether autograd records
    the op (None: not known); root: the storage (None: one the analysis cannot
    name, which any storage may be); looped: saved in a turn standing for others."""

    node: object
    site: tuple
    sure: bool
    grad: bool | None
    root: object
    seq: int
    looped: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class Hazard:
    """A write (site: (path, line, op)) into a storage `save` saved before it.
    sure: the write surely bumps that storage's counter."""

    save: Save
    write: tuple
    sure: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Refusal:
    """An op recorded by autograd whose backward torch does not implement (node:
    its result's Origin; site: (path, line, op)); sure: it surely raises when run
    (not an argument that may or may not call for the missing derivative)."""

    node: object
    site: tuple
    sure: bool
    grad: bool | None
    looped: bool = False


class Log:
    """One target run's saves and the writes after them (`run` yields it)."""

    __slots__ = (
        "by_root", "anywhere", "hazards", "data", "seq", "looped", "shared", "born", "refused",
        "calls", "eithers",
    )  # fmt: skip

    def __init__(self) -> None:
        self.by_root: dict[int, list[Save]] = {}
        self.anywhere: list[Save] = []  # saves of a storage not named
        self.hazards: list[Hazard] = []
        self.data: set[int] = set()  # storages whose `.data` was taken
        self.seq = 0
        self.looped = 0  # inside turns standing for several (loops.py, saved.repeated_turn)
        # ids of the nodes of a memoised run that serves several calls: which call's
        # op the loss reaches is not what the walk says of the one node
        self.shared: set[int] = set()
        # id of a storage an op made anew -> (the seq when it was made, the storage, kept
        # alive so that its id names it): a save before it cannot hold it
        self.born: dict[int, tuple] = {}
        self.refused: list[Refusal] = []  # ops with no derivative (ops/no_derivative.py)
        # (first seq, last seq, exits): the saves logged in that span stand for one call
        # of a memoised run, left through those exit Origins (`belongs`, `replay`)
        self.calls: list[tuple[int, int, frozenset]] = []
        # sets of Origins two undecided paths joined (`y if c else h * 2`) -> (one
        # path's, the other's), each way the set was joined
        self.eithers: dict[frozenset, set[tuple[frozenset, frozenset]]] = {}


_LOG: ContextVar[Log | None] = ContextVar("version_log", default=None)


@contextmanager
def run() -> Iterator[Log]:
    """A target's forward: the log of its saves and the hazards its writes met,
    filled as it runs."""
    log = _LOG.get()
    if log is not None:  # a run inside a run (a summary): the one log
        yield log
        return
    log = Log()
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


@contextmanager
def aside() -> Iterator[None]:
    """A pass the target run does not make (a function's summary, which a target
    run reads for its parameters' annotations only and runs each call itself):
    nothing it saves or writes is logged."""
    token = _LOG.set(None)
    try:
        yield
    finally:
        _LOG.reset(token)


def active() -> bool:
    return _LOG.get() is not None


def saved(root: object, node: object, site: tuple, sure: bool, grad: bool | None) -> None:
    """An op whose result's Origin is node saved storage root (None: a storage
    the analysis cannot name) for its backward; sure False where it may have."""
    log = _LOG.get()
    if log is None:
        return
    log.seq += 1
    entry = Save(node, site, sure, grad, root, log.seq, log.looped > 0)
    if root is None:
        log.anywhere.append(entry)
    else:
        log.by_root.setdefault(id(root), []).append(entry)


def refused(node: object, site: tuple, sure: bool, grad: bool | None) -> None:
    """The op whose result's Origin is node has no derivative in torch (sure False:
    may have none): its backward raises where the loss reaches it."""
    log = _LOG.get()
    if log is not None:
        log.refused.append(Refusal(node, site, sure, grad, log.looped > 0))


def either(a: frozenset, b: frozenset) -> None:
    """Where two paths meet, a tensor is made by a's Origins on one and b's on the
    other (a value join): the loss reaches one side's, which one not known."""
    log = _LOG.get()
    if log is not None and a != b:
        log.eithers.setdefault(a | b, set()).add((a, b))


def made(root: object) -> None:
    """An op made storage root anew: no save logged before now holds it (a save of
    a storage the analysis cannot name, `anywhere`, is one of older storages)."""
    log = _LOG.get()
    if log is not None and root is not None:
        log.born[id(root)] = (log.seq, root)


def made_from(root: object, data: object) -> None:
    """Storage root wraps data's (`nn.Parameter(t)`): made when data's was."""
    log = _LOG.get()
    if log is None or root is None or data is None:
        return
    birth = log.born.get(id(data))
    if birth is not None:
        log.born[id(root)] = (birth[0], root)


def data_taken(root: object) -> None:
    """`t.data` was read of a tensor on storage root: a write through it bumps no
    counter, and a write into root may be one of those."""
    log = _LOG.get()
    if log is not None and root is not None:
        log.data.add(id(root))


def written(root: object, site: tuple, own: frozenset | None, sure: bool = True) -> None:
    """A write into storage root (None: a storage the analysis cannot name, which
    may be any) at site, made by the op whose result's Origins are own (its own
    saves, made after it wrote, are no hazard); sure False where it may not write
    (an `inplace` flag not known)."""
    log = _LOG.get()
    if log is None:
        return
    if root is None:
        found = [s for group in log.by_root.values() for s in group] + log.anywhere
        sure = False
    else:
        birth = log.born.get(id(root))
        older = log.anywhere if birth is None else [s for s in log.anywhere if s.seq > birth[0]]
        found = log.by_root.get(id(root), []) + older
        if id(root) in log.data:
            sure = False  # it may be a write through `.data`, which bumps nothing
    for s in found:
        if own is not None and s.node is not None and s.node in own:
            continue
        log.hazards.append(Hazard(s, site, sure and s.sure and s.root is not None))


@contextmanager
def repeated() -> Iterator[None]:
    """A turn standing for several (a loop counted as one turn times n): whether
    the loss reaches a save it makes in a turn before the last is not what the
    walk from the loss says (reached.py tells turns apart by other means)."""
    log = _LOG.get()
    if log is None:
        yield
        return
    log.looped += 1
    try:
        yield
    finally:
        log.looped -= 1


def mark() -> tuple | None:
    """The log as it is now, for `undo` (a trial run whose records may be dropped)."""
    log = _LOG.get()
    if log is None:
        return None
    return (log.seq, len(log.hazards), frozenset(log.data), len(log.refused))


def undo(marked: tuple | None) -> None:
    """Drop what was logged since `mark`: a dropped trial saved and wrote nothing."""
    log = _LOG.get()
    if log is None or marked is None:
        return
    seq, count, data, refusals = marked
    for key in list(log.by_root):
        kept = [s for s in log.by_root[key] if s.seq <= seq]
        if kept:
            log.by_root[key] = kept
        else:
            del log.by_root[key]
    log.anywhere = [s for s in log.anywhere if s.seq <= seq]
    del log.hazards[count:]
    del log.refused[refusals:]
    log.data = set(data)


@contextmanager
def apart() -> Iterator[None]:
    """Ops whose saves are dropped (inside torch.utils.checkpoint, which recomputes
    them): nothing they save is logged; their writes still count."""
    log = _LOG.get()
    if log is None:
        yield
        return
    marked = mark()
    try:
        yield
    finally:
        seq = log.seq
        hazards = list(log.hazards)
        refusals = list(log.refused)  # the recomputed op's backward runs all the same
        undo(marked)
        log.seq = seq
        log.hazards[:] = hazards  # type: ignore[index]
        log.refused[:] = refusals


def since(marked: tuple | None, roots: list) -> tuple | None:
    """For each storage among roots, the saves logged on it since `mark` (a
    memoised run's own), for `replay` on the storages of a call it serves."""
    log = _LOG.get()
    if log is None or marked is None:
        return None
    seq = marked[0]
    out = []
    for root in roots:
        got = () if root is None else log.by_root.get(id(root), ())
        out.append(tuple(s for s in got if s.seq > seq))
    return tuple(out)


def belongs(marked: tuple | None, exits: frozenset | None) -> None:
    """The saves logged since `mark` are a memoised run's first call's, which left
    through the exit Origins exits: where a later call shares the run's nodes, the
    loss reaches one of them in this call only through these (`verdict`'s within)."""
    log = _LOG.get()
    if log is not None and marked is not None and exits:
        log.calls.append((marked[0] + 1, log.seq, exits))


def replay(logged: tuple | None, roots: list, site: tuple, exits: frozenset | None = None) -> None:
    """A call served by a memoised run (specialized.py): its storages saved as the
    run's were (`since`), by the run's own nodes, which every call of it shares;
    exits: the Origins this call leaves through (`belongs`). logged None (not
    known) makes each storage one that may be saved."""
    log = _LOG.get()
    if log is None:
        return
    if logged is None or len(logged) != len(roots):
        for root in roots:
            saved(root, None, site, False, None)
        return
    first = log.seq + 1
    for root, saves in zip(roots, logged, strict=True):
        for s in saves:
            saved(root, s.node, s.site, s.sure and root is not None, s.grad)
            log.shared.add(id(s.node))
    if exits and log.seq >= first:
        log.calls.append((first, log.seq, exits))


RAISES_WHY = (
    "backward would raise: {write} writes in place into a tensor that {save} saved for "
    "its backward (autograd's version check)"
)
MAY_RAISE_WHY = (
    "backward may raise: {write} may write in place into a tensor that {save} saved for "
    "its backward (autograd's version check)"
)

NO_DERIVATIVE_WHY = (
    "backward would raise: {write} has no derivative in torch (its backward raises "
    "'not implemented')"
)
MAY_NO_DERIVATIVE_WHY = (
    "backward may raise: {write} may have no derivative in torch (its backward raises "
    "'not implemented' where it has none)"
)


def verdict(
    log: Log | None, seen: set[int] | None, within=None, sure: set[int] | None = None
) -> tuple[list[dict], list[dict]]:
    """The writes that surely make `out.sum().backward()` raise (the loss reaches
    the op that saved, which autograd recorded, on whichever path each undecided
    join took, and both the save and the write are sure) and those that may, each
    once: {line, op, path, why, saved_line, saved_op, saved_path}. seen: the ids of
    the Origins the loss reaches (analysis/reached.py); None where not known, when
    every hazard may raise. sure: those it reaches on every path
    (backward.surely_reached; None: seen's).
    within(exits, node): whether the loss reaches node in the call of a memoised
    run that left through exits (True, False, None: not known; reached.in_call),
    for a save by a node that several calls share."""
    on_every = seen if sure is None else sure
    raise_: dict[tuple, dict] = {}
    maybe: dict[tuple, dict] = {}
    for h in log.hazards if log is not None else ():
        s = h.save
        reached = seen is None or s.node is None or id(s.node) in seen
        shared = s.node is not None and id(s.node) in log.shared  # type: ignore[union-attr]
        if shared and reached and seen is not None:
            # the one node stands for every call of the run: this call's exits decide
            here = _in_call(log, s, within)  # type: ignore[arg-type]
            if here is False and not s.looped:
                continue
            shared = here is not True
        if not reached and not s.looped:
            continue
        certain = (
            seen is not None
            and h.sure
            and s.grad is True
            and id(s.node) in on_every  # type: ignore[operator]
            and not shared
        )
        into = raise_ if certain else maybe
        key = (h.write, s.site)
        if key not in into:
            into[key] = _said(h, RAISES_WHY if certain else MAY_RAISE_WHY)
    for r in log.refused if log is not None else ():
        reached = seen is None or r.node is None or id(r.node) in seen
        if not reached and not r.looped:
            continue
        certain = (
            seen is not None
            and r.sure
            and r.grad is True
            and id(r.node) in on_every  # type: ignore[operator]
            and id(r.node) not in log.shared  # type: ignore[union-attr]
        )
        into = raise_ if certain else maybe
        key = (r.site, None)
        if key not in into:
            into[key] = _refusal(r, NO_DERIVATIVE_WHY if certain else MAY_NO_DERIVATIVE_WHY)
    for key in raise_:
        maybe.pop(key, None)
    return list(raise_.values()), list(maybe.values())


def _in_call(log: Log, s: Save, within) -> bool | None:
    """Whether the loss reaches s's node in the one call of a memoised run whose
    saves s is among (None: not known, or s among those of nested calls)."""
    runs = [frozenset(o.token for o in exits) for _, _, exits in log.calls]
    # the calls of runs that serve several, s's among them (a run called once, the
    # target's forward, shares nothing); two nested ones: which one's, not known
    spans = [
        c for c, run in zip(log.calls, runs, strict=True)
        if c[0] <= s.seq <= c[1] and runs.count(run) > 1
    ]  # fmt: skip
    if within is None or len(spans) != 1:
        return None
    return within(spans[0][2], s.node)


def _refusal(r: Refusal, why: str) -> dict:
    path, line, op = r.site
    return {
        "path": path,
        "line": line,
        "op": op,
        "saved_path": None,
        "saved_line": None,
        "saved_op": None,
        "why": why.format(write=f"{_where(path, line)} {op}"),
    }


def _said(h: Hazard, why: str) -> dict:
    (wpath, wline, wop), (spath, sline, sop) = h.write, h.save.site
    write = f"{_where(wpath, wline)} {wop}"
    save = f"{sop} ({_where(spath, sline)})"
    return {
        "path": wpath,
        "line": wline,
        "op": wop,
        "saved_path": spath,
        "saved_line": sline,
        "saved_op": sop,
        "why": why.format(write=write, save=save),
    }


def _where(path: str | None, line: int | None) -> str:
    return f"{path or '?'}:{line if line is not None else '?'}"
