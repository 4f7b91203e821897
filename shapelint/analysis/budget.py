"""A per-file time budget: a file whose analysis runs past it is stopped, becomes
one SHP003 diagnostic, and the run goes on.

The budget counts the CPU time of the thread that analyses (where the platform
has a per-thread CPU clock, as Linux does; elsewhere wall time): the same file
gets the same amount of work, and so the same findings, on an idle machine and on
one whose cores other processes hold. A wall-clock budget made results depend on
the load: a target cut short at 10 s on a busy CI runner, whole on a laptop.

One watchdog thread per process raises BudgetExceeded in the thread that overran
(PyThreadState_SetAsyncExc), so the same mechanism works in the main thread, in
forked pool workers and in the language server's analysis threads, where
signal.alarm cannot reach (signals go to the main thread only). The exception
lands at the next bytecode boundary: the analysis is pure Python, so it always
gets there. It derives from BaseException, so that the analysis's own
`except Exception` handlers cannot swallow it. Entering a budget is a dict
write; the watchdog wakes at most four times a second, so nothing is paid per file
beyond that.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager

DEFAULT_SECONDS = 10.0
# The watchdog sleeps until the soonest deadline, at most this long (a budget may be
# overrun by that much): each wake-up takes the GIL from the analysis, and a 10 s
# budget needs no finer clock. interrupt() wakes it at once.
POLL_SECONDS = 0.25
MIN_NAP_SECONDS = 0.01
# Raised again this often while the thread stays over budget: an exception that
# lands in a finalizer is printed and dropped, not propagated.
REFIRE_SECONDS = 1.0


class BudgetExceeded(BaseException):
    """The analysis of one file ran past its time budget."""


class _Watchdog:
    def __init__(self) -> None:
        import ctypes

        api = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)
        self._raise_in = api(("PyThreadState_SetAsyncExc", ctypes.pythonapi))
        # The same function taking a pointer: None is NULL, which clears a pending one.
        clear = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)
        self._clear_in = clear(("PyThreadState_SetAsyncExc", ctypes.pythonapi))
        self._lock = threading.Lock()
        # thread id -> [next deadline, times fired, the clock it is read on]
        self.active: dict[int, list] = {}
        self.pid = os.getpid()
        self._wake = threading.Event()
        threading.Thread(target=self._run, name="shapelint-budget", daemon=True).start()

    def _run(self) -> None:
        while True:
            self._wake.wait(self._nap())
            self._wake.clear()
            with self._lock:
                for tid, entry in self.active.items():
                    now = _now(entry[2])
                    if now >= entry[0]:
                        entry[0] = now + REFIRE_SECONDS
                        entry[1] += 1
                        self._raise_in(tid, BudgetExceeded)

    def _nap(self) -> float:
        # A thread's CPU clock runs no faster than the wall clock: napping for what
        # is left of its budget never sleeps past its deadline.
        with self._lock:
            left = [entry[0] - _now(entry[2]) for entry in self.active.values()]
        if not left:
            return POLL_SECONDS
        return min(POLL_SECONDS, max(MIN_NAP_SECONDS, min(left)))

    def enter(self, seconds: float) -> int:
        tid = threading.get_ident()
        clock = _thread_clock(tid)
        self.active[tid] = [_now(clock) + seconds, 0, clock]
        return tid

    def leave(self, tid: int) -> bool:
        """Stop watching the thread; True if the budget had fired. A shot fired but
        not yet delivered is taken back, so it cannot land outside the block."""
        with self._lock:
            entry = self.active.pop(tid, None)
            fired = bool(entry and entry[1])
            if fired:
                self._clear_in(tid, None)
        return fired

    def interrupt(self, tid: int) -> bool:
        """Stop the budget block running in thread tid now (at the next poll)."""
        with self._lock:
            entry = self.active.get(tid)
            if entry is not None:
                entry[0] = 0.0
                self._wake.set()
            return entry is not None


def _thread_clock(tid: int) -> int | None:
    """The CPU-time clock of thread tid, None where there is none (then wall time)."""
    try:
        return time.pthread_getcpuclockid(tid)
    except (AttributeError, OSError, OverflowError):
        return None


def _now(clock: int | None) -> float:
    if clock is None:
        return time.monotonic()
    try:
        return time.clock_gettime(clock)
    except OSError:  # the thread is gone: its entry is about to be left
        return float("inf")


_WATCHDOG: _Watchdog | None = None
_WATCHDOG_LOCK = threading.Lock()


def _watchdog() -> _Watchdog:
    """This process's watchdog (a forked worker starts its own: threads do not fork)."""
    global _WATCHDOG
    with _WATCHDOG_LOCK:
        if _WATCHDOG is None or _WATCHDOG.pid != os.getpid():
            _WATCHDOG = _Watchdog()
        return _WATCHDOG


@contextmanager
def time_budget(seconds: float | None):
    """Raise BudgetExceeded in this thread if the block runs past `seconds`
    (None or 0: no budget)."""
    if not seconds or seconds <= 0:
        yield
        return
    dog = _watchdog()
    tid = dog.enter(seconds)
    try:
        yield
    except Exception as e:
        if dog.leave(tid):
            # The shot landed where C code turned it into another error (ast.parse
            # reports "AST constructor recursion depth mismatch"): still the budget.
            raise BudgetExceeded from e
        raise
    finally:
        dog.leave(tid)


def interrupt(tid: int) -> bool:
    """Cut short the budget block thread tid is in (it raises BudgetExceeded there),
    e.g. an editor's analysis of a buffer that has changed since. False when that
    thread is in none."""
    dog = _WATCHDOG
    return dog is not None and dog.pid == os.getpid() and dog.interrupt(tid)
