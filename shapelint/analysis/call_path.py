"""What one target's run finds, with the calls that led there (issue 25).

A target (`cost PATH::Class --init ... --input ...`) runs the interpreter through its
constructor and forward, into other files of the project, each by its own analyzer.
Every finding any of them reports meanwhile is noted here with its call path
(`ViT.forward:130 → Transformer.forward:80 → Attention.forward:59`: each function and
the line where it calls the next; the last, the finding's line), whatever an analyzer
had already reported for an earlier target or pass: the target's own list. A memoized
call's findings were noted where it first ran, and a reuse of it notes them again
where it is reused (`again`).

Each finding also keeps the undecided alternatives it was found on (an `if` whose test
the run cannot decide, and the like: undecided_paths.py), so that `settle` tells a
definite error from one that raises only where one of those alternatives runs.

Plain mode (`check` outside a target) follows the same rule: where no target collects,
the constructs are grouped all the same, each pass over a function on its own (a
summary is every path of the function at once, wherever it was first reached:
`own_paths`), and the analyzer notes the alternative each finding lies on
(`plain_place`), which plain_paths.py settles when the file's run ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from shapelint.analysis.undecided_paths import (
    Alternative,
    Group,
    Verdicts,
    condition_of,
    conditional_text,
)
from shapelint.diagnostics import Diagnostic


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    column: int  # 0-based, as the analyzer's raw diagnostics
    end_line: int
    end_column: int
    code: str
    message: str
    calls: tuple[tuple[str, int | None], ...]  # (function, line) outermost first
    # The innermost undecided alternatives it was found on (None: on none); filled
    # when the collection ends.
    places: frozenset = field(default=frozenset(), compare=False)
    # When it raises only where an undecided alternative runs: that condition
    # (`` `x.sum() > 0` (line 28)``); such a finding is a warning (settle).
    condition: str | None = None

    def call_path(self) -> str:
        return " → ".join(f"{fn}:{line}" if line is not None else fn for fn, line in self.calls)

    def diagnostic(self, path: str | None = None, message: str | None = None) -> Diagnostic:
        """The finding as a Diagnostic (1-based columns, its rule's severity, a
        warning where it raises only under a condition), in `path` and with `message`
        (else its own, with the condition) when given."""
        from shapelint.rules import severity_of

        return Diagnostic(
            self.path if path is None else path,
            self.line,
            self.column + 1,
            self.end_line,
            self.end_column + 1,
            self.code,
            "warning" if self.condition else severity_of(self.code),
            self.text() if message is None else message,
        )

    def text(self) -> str:
        """The message, with the condition under which it raises, if any."""
        if not self.condition:
            return self.message
        return conditional_text(self.message, self.condition)


class _Collector:
    def __init__(self) -> None:
        self.stack: list[list] = []  # [function, the line where it calls the next]
        self.found: dict[tuple, Finding] = {}
        self.spots: dict[tuple, tuple] = {}  # spot -> the key of the finding there
        self.open: list[Alternative] = []  # the undecided alternatives being run
        self.places: dict[tuple, set] = {}  # key -> the innermost alternatives
        self.log: list[tuple] = []  # (key, alternative) of every finding noted, in order
        self.groups: list[Group] = []  # every undecided construct met, in order


_ACTIVE: list[_Collector | None] = []  # None: paused
# Plain mode's undecided alternatives being run, one list per pass of its own
# (own_paths), innermost last.
_PLAIN: list[list[Alternative]] = [[]]
# Every plain group made since the last release_plain: a group and its alternatives
# point at each other, cycles reference counting cannot free; release_plain breaks them.
_PLAIN_MADE: list[Group] = []


@contextmanager
def collecting() -> Iterator[list[Finding]]:
    """Note every finding until the block ends; the list fills when it does."""
    out: list[Finding] = []
    collector = _Collector()
    _ACTIVE.append(collector)
    try:
        yield out
    finally:
        _ACTIVE.pop()
        places = collector.places
        out.extend(replace(f, places=frozenset(places[k])) for k, f in collector.found.items())


def settle(findings: list[Finding]) -> list[Finding]:
    """findings (those that raise, from one collection), each with the condition under
    which it raises where that is one of undecided alternatives (a warning then)."""
    verdicts = Verdicts({p for f in findings for p in f.places if p is not None})
    out = []
    for f in findings:
        cond = condition_of(f.places, verdicts)
        out.append(replace(f, condition=cond) if cond else f)
    return out


def _collector() -> _Collector | None:
    return _ACTIVE[-1] if _ACTIVE else None


def undecided() -> Group | None:
    """A construct whose way the run cannot decide, inside the alternative being run
    (plain mode's where no target collects)."""
    c = _collector()
    if c is None:  # plain mode, or a pass of its own (a summary) paused in a target's run
        group = Group(plain_place())
        _PLAIN_MADE.append(group)
        return group
    group = Group(c.open[-1] if c.open else None)
    c.groups.append(group)
    return group


def release_plain() -> None:
    """The plain groups made so far are judged (plain_paths.settle): their links down
    (a group's alternatives, an alternative's groups) are cut, so that what is left, each
    alternative's way up, holds no cycle and is freed as soon as nothing holds it."""
    for group in _PLAIN_MADE:
        for alt in group.alternatives:
            alt.groups = []
        group.alternatives = []
    _PLAIN_MADE.clear()


def plain_place() -> Alternative | None:
    """The innermost undecided alternative plain mode's run is on (None: on none)."""
    open_ = _PLAIN[-1]
    return open_[-1] if open_ else None


class _OwnPaths:
    __slots__ = ()

    def __enter__(self) -> None:
        _PLAIN.append([])

    def __exit__(self, *exc: object) -> None:
        _PLAIN.pop()


_OWN_PATHS = _OwnPaths()


def own_paths() -> _OwnPaths:
    """A pass over a function on its own (its summary, every path at once; a
    constructor's run for its attributes): the alternatives of the run that first
    reached it are none of its findings' conditions."""
    return _OWN_PATHS


def plain_raised() -> None:
    """A `raise` statement in plain mode: the alternative being run surely raises."""
    alt = plain_place()
    if alt is not None:
        alt.raised = True


class _Taking:
    __slots__ = ("group", "why", "alt", "collector")

    def __init__(self, group: Group, why: str | Callable[[], str]) -> None:
        self.group, self.why = group, why

    def __enter__(self) -> Alternative:
        self.collector = _collector()
        self.alt = self.group.add(self.why)
        if self.collector is not None:
            self.collector.open.append(self.alt)
        else:
            _PLAIN[-1].append(self.alt)
        return self.alt

    def __exit__(self, *exc: object) -> None:
        if self.collector is not None:
            self.collector.open.pop()
        else:
            _PLAIN[-1].pop()


class _NotTaking:
    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NOT_TAKING = _NotTaking()


def taking(group: Group | None, why: str | Callable[[], str]) -> _Taking | _NotTaking:
    """`with taking(group, why) as alt:` the block runs one alternative of group,
    which runs where why holds (alt None where group is)."""
    return _NOT_TAKING if group is None else _Taking(group, why)


def untaken(group: Group | None, why: str) -> None:
    """An alternative of group that runs nothing (no case of a `match` matches)."""
    if group is not None:
        group.add(why)


def surely_raised(alt: Alternative | None) -> None:
    """The alternative's path surely raised (a `raise`): it is no way to return."""
    if alt is not None:
        alt.raised = True


def since() -> tuple:
    """A mark where a run to be memoised begins, for `noted_after`."""
    c = _collector()
    if c is None:
        return ()
    return len(c.log), len(c.groups), c.open[-1] if c.open else None


def noted_after(mark: tuple) -> tuple:
    """What the run begun at mark found, for `again`: each finding noted (its key and
    the alternative it lay on), and the undecided constructs the run met at its top."""
    c = _collector()
    if c is None or not mark:
        return ()
    n_log, n_groups, root = mark
    found = tuple(dict.fromkeys(c.log[n_log:]))
    if not found:
        return ()
    return root, found, tuple(g for g in c.groups[n_groups:] if g.parent is root)


def again(run: tuple | None) -> None:
    """A memoised run reused here: its findings are found here too, each on the copy,
    under the alternative running now, of the alternatives it lay on inside the run."""
    c = _collector()
    if c is None or not run:
        return
    root, found, groups = run
    here = c.open[-1] if c.open else None
    copies: dict[int, Alternative] = {}
    for g in groups:
        g.copy(here, copies)
    for key, place in found:
        if key in c.places:
            c.places[key].add(here if place is root else copies.get(id(place), place))


def paused() -> _Paused:
    """A function's plain analysis (its summary, every path at once) inside a
    target's run: what it finds on a path the target does not take (after a return
    the target's values decide) is no finding of the target's."""
    return _PAUSED


class _Paused:
    # A class, not a generator: entered once per summary (see shapelint/scoped.py).
    # It holds no state, so one object serves every (nested) block.
    __slots__ = ()

    def __enter__(self) -> None:
        _ACTIVE.append(None)

    def __exit__(self, *exc: object) -> None:
        _ACTIVE.pop()


_PAUSED = _Paused()


@contextmanager
def calling(function: str, line: int | None) -> Iterator[None]:
    """A call of `function` from `line` of the function running now."""
    if not _ACTIVE or _ACTIVE[-1] is None:
        yield
        return
    stack = _ACTIVE[-1].stack
    saved = stack[-1][1] if stack else None
    if stack:
        stack[-1][1] = line
    stack.append([function, None])
    try:
        yield
    finally:
        stack.pop()
        if stack:
            stack[-1][1] = saved


def depth() -> int:
    """How many calls deep the run is now (for `back_at`)."""
    return len(_ACTIVE[-1].stack) if _ACTIVE and _ACTIVE[-1] is not None else 0


@contextmanager
def back_at(level: int) -> Iterator[None]:
    """The block runs in the function that was running `level` calls deep, the
    calls made since set aside and put back after it: a `with` body that a
    context manager's generator runs at its `yield` is the caller's code."""
    if not _ACTIVE or _ACTIVE[-1] is None or len(_ACTIVE[-1].stack) <= level:
        yield
        return
    stack = _ACTIVE[-1].stack
    above = stack[level:]
    del stack[level:]
    saved = stack[-1][1] if stack else None
    if stack:
        stack[-1][1] = None
    try:
        yield
    finally:
        if stack:
            stack[-1][1] = saved
        stack[level:] = above


def calls_here(line: int) -> tuple[tuple[str, int | None], ...] | None:
    """The call path a finding at line would name now (outermost first); None where
    no target collects."""
    if not _ACTIVE or _ACTIVE[-1] is None:
        return None
    c = _ACTIVE[-1]
    calls = tuple((fn, ln) for fn, ln in c.stack[:-1])
    return calls + ((c.stack[-1][0], line),) if c.stack else calls


def note(path: str, line: int, column: int, end_line: int, end_column: int, code: str, message: str, repeating: bool) -> None:  # fmt: skip
    """A finding reported now (`repeating`: another run of a loop body, whose
    finding at the same spot is the same one said with other shapes)."""
    if not _ACTIVE or _ACTIVE[-1] is None:
        return
    c = _ACTIVE[-1]
    key = (path, line, column, code, message)
    spot = (path, line, column, code)
    if repeating and key not in c.found and spot in c.spots:
        key = c.spots[spot]  # the same finding, said with other shapes
    place = c.open[-1] if c.open else None
    c.log.append((key, place))
    c.places.setdefault(key, set()).add(place)
    if key in c.found:
        return
    c.spots.setdefault(spot, key)
    calls = tuple((fn, ln) for fn, ln in c.stack[:-1])
    if c.stack:
        calls += ((c.stack[-1][0], line),)
    c.found[key] = Finding(path, line, column, end_line, end_column, code, message, calls)
