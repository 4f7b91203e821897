"""What one target's run finds, with the calls that led there (issue 25).

A target (`cost PATH::Class --init ... --input ...`) runs the interpreter through its
constructor and forward, into other files of the project, each by its own analyzer.
Every finding any of them reports meanwhile is noted here with its call path
(`ViT.forward:130 → Transformer.forward:80 → Attention.forward:59`: each function and
the line where it calls the next; the last, the finding's line), whatever an analyzer
had already reported for an earlier target or pass: the target's own list. A memoized
call's findings were noted where it first ran.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

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

    def call_path(self) -> str:
        return " → ".join(f"{fn}:{line}" if line is not None else fn for fn, line in self.calls)

    def diagnostic(self, path: str | None = None, message: str | None = None) -> Diagnostic:
        """The finding as a Diagnostic (1-based columns, its rule's severity), in
        `path` and with `message` when given."""
        from shapelint.rules import severity_of

        return Diagnostic(
            self.path if path is None else path,
            self.line,
            self.column + 1,
            self.end_line,
            self.end_column + 1,
            self.code,
            severity_of(self.code),
            self.message if message is None else message,
        )


class _Collector:
    def __init__(self) -> None:
        self.stack: list[list] = []  # [function, the line where it calls the next]
        self.found: dict[tuple, Finding] = {}
        self.spots: set[tuple] = set()


_ACTIVE: list[_Collector | None] = []  # None: paused


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
        out.extend(collector.found.values())


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


def note(path: str, line: int, column: int, end_line: int, end_column: int, code: str, message: str, repeating: bool) -> None:  # fmt: skip
    """A finding reported now (`repeating`: another run of a loop body, whose
    finding at the same spot is the same one said with other shapes)."""
    if not _ACTIVE or _ACTIVE[-1] is None:
        return
    c = _ACTIVE[-1]
    key = (path, line, column, code, message)
    spot = (path, line, column, code)
    if key in c.found or (repeating and spot in c.spots):
        return
    c.spots.add(spot)
    calls = tuple((fn, ln) for fn, ln in c.stack[:-1])
    if c.stack:
        calls += ((c.stack[-1][0], line),)
    c.found[key] = Finding(path, line, column, end_line, end_column, code, message, calls)
