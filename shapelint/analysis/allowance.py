"""The allowance of statements one import-time statement runs under
(import_time.py), and the reads of files it cut.

An import-time statement that runs past its allowance is cut, and each file
whose top level it was reading, not finished, is forgotten
(`Project.drop_unfinished`), so that a later import reads it whole. A file named
again inside another allowance would be read again to the same cut: trio's
`__init__` calls `fixup_module_metadata(...)` six times, each call reading
trio/_util.py, whose `if os.name == "nt":` (not decided) builds cffi's FFI, each
read cut after 1.8 s. So a read is cut at once where it would run the same
statements again with no more of them left: the read of that file was cut
before, it begins with no more statements left than that read began with, and
no file has finished reading since that read began (a file it read first and
kept would not be read again, which makes the new read shorter: regex's
`_regex_core`, read whole while `regex._main` was cut). The state the analysis
keeps between reads (memoised runs of functions of files still loaded) may make
a new read shorter still; a cut where it would have ended is a statement read
as a call not followed, never a figure.

Only a top level read inside an allowance is so cut; a read outside any (an
import statement, a decorated definition, a target's own run) reads the file
whole, as before. The cut stays deterministic: it depends on counts of
statements and of files read, not on time.
"""

from __future__ import annotations

from contextvars import ContextVar


class Allowance:
    __slots__ = ("left", "fired")

    def __init__(self, steps: int) -> None:
        self.left = steps
        self.fired = False


class StatementTooLong(BaseException):
    """An import-time statement ran past its allowance (a BaseException, so that
    the analysis's own `except Exception` handlers cannot swallow it)."""

    def __init__(self, allowance: Allowance) -> None:
        super().__init__()
        self.allowance = allowance


ACTIVE: ContextVar[Allowance | None] = ContextVar("import_time_allowance", default=None)


def reset() -> None:
    """A new analysis begins outside any import-time statement. An asynchronous
    exception (the time budget's, a caller's alarm) that lands in `import_time.run`
    before its `finally` resets leaves the allowance it opened active in this thread:
    dropped here, or it would cut the next file's or target's own statements (a
    StatementTooLong no `run` catches)."""
    ACTIVE.set(None)


def step() -> None:
    """One statement ran: counted against the open allowance, if any."""
    allowance = ACTIVE.get()
    if allowance is None:
        return
    allowance.left -= 1
    if allowance.left < 0 and not allowance.fired:
        _fire(allowance)


def _fire(allowance: Allowance) -> None:
    allowance.fired = True  # once: what runs while the stack unwinds is not cut again
    raise StatementTooLong(allowance)


class CutReads:
    """The reads of files an allowance cut, for one project: file key -> (files
    finished reading, statements left) when that read began."""

    __slots__ = ("began", "finished")

    def __init__(self) -> None:
        self.began: dict = {}
        self.finished = 0  # reads of files finished, ever: the project's state grew

    def read(self, key, load):
        """load() (the reading of file `key`'s top level), cut at once where a
        read of it was cut before from the same state with no fewer statements
        left (see the module's docstring)."""
        allowance = ACTIVE.get()
        if allowance is None or allowance.fired:
            an = load()
            self.finished += 1
            return an
        start = (self.finished, allowance.left)
        before = self.began.get(key)
        if before is not None and before[0] == start[0] and start[1] <= before[1]:
            allowance.left = -1
            _fire(allowance)
        try:
            an = load()
        except StatementTooLong:
            self.began[key] = start
            raise
        self.finished += 1
        return an
