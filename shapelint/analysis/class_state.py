"""A class's attributes a target run stores through the class itself.

`Cfg.k = 3`, `Block.made += 1`, `type(self).count = n`: Python has one class
object, so every instance, the class and its subclasses read the new value
afterwards (`cfg.k`, `self.made`, `Block.made`) where the class body's assignment
was the default. The stores are module_state's writes, logged, so that control
flow the analysis cannot decide forks and joins them as it does a module's
names; this module holds the run's table they are written into, which
attributes.class_attribute reads before the class body. Outside a target run
there is no table, and a class attribute is its body's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from shapelint.ops.values import UNKNOWN, Value

# class key -> {name: value} for the run in progress
_STORED: ContextVar[dict | None] = ContextVar("class_writes", default=None)


@contextmanager
def run() -> Iterator[None]:
    token = _STORED.set({})
    try:
        yield
    finally:
        _STORED.reset(token)


def active() -> bool:
    """Whether a target run is in progress (its class stores are kept)."""
    return _STORED.get() is not None


def table(key: str) -> dict | None:
    """The attributes stored through the class `key` in this run (the dict the
    writes go into), None outside a run."""
    stored = _STORED.get()
    return None if stored is None else stored.setdefault(key, {})


def stored(key: str, name: str) -> Value | None:
    """What the run stored as `name` through the class `key`, None if nothing."""
    held = _STORED.get()
    return None if held is None else held.get(key, {}).get(name)


def any_stored(name: str) -> bool:
    """Whether the run stored or read `name` through any class yet (a cheap test
    before a walk along an MRO)."""
    held = _STORED.get()
    return held is not None and any(name in names for names in held.values())


def first_read(key: str, name: str, value: Value) -> None:
    """The class body's value of `name`, read for the first time in the run, kept
    as the class's one object (no write: every path of the run starts with it)."""
    held = table(key)
    if held is not None:
        held.setdefault(name, value)


def snapshot() -> dict | None:
    """The run's table as it stands, for unknown_since."""
    held = _STORED.get()
    return None if held is None else {key: dict(names) for key, names in held.items()}


def unknown_since(before: dict | None) -> None:
    """Every attribute stored or first read since `before` (a snapshot) not known:
    a run cut short (import_time.py) may have changed it again, or not."""
    held = _STORED.get()
    if held is None or before is None:
        return
    for key, names in held.items():
        was = before.get(key, {})
        for name, value in names.items():
            if was.get(name) is not value:
                names[name] = UNKNOWN
