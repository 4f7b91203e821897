"""Instances of plain project classes that are surely objects of their own.

The analysis holds values, not a heap, and forgets a changed object's equal
values too (in_place.py), since an equal value may be a copy of the same object
(an equal value a memoised call handed back). Python makes a new object at each
evaluation of `C(...)`, so where each construction a target run evaluates is a
value object of its own, two such values are two objects, however equal: a
change to one (`self.layers[i].update(k)`, of a list of uninitialised cache
layers built alike) leaves the other as it was. That is what this table says,
by identity: a value recorded here was made by a construction, and no memoised
run has handed it out since in another call's place (`reused`); a join that kept
it for either of two objects (joined_objects) rules it out too. For the length of
a target run (`reset`); the values are kept alive with it, so that an id names
its value. Past `_MAX` entries it stops growing: an object not recorded is
forgotten as any equal value is, which is never wrong."""

from __future__ import annotations

from shapelint.analysis import joined_objects
from shapelint.ops.values import ObjectV, TupleV, Value

_MAX = 65_536
_MADE: dict[int, Value] = {}
_ABSENT = object()  # (a None handed in is no recorded value)


def reset() -> None:
    _MADE.clear()


def made(v: Value) -> Value:
    """v, a construction's new instance (of a plain class), recorded as an object of
    its own; a memoised construction hands out a copy (`again`)."""
    if type(v) is ObjectV and len(_MADE) < _MAX:
        _MADE[id(v)] = v
    return v


def again(v: Value) -> Value:
    """A memoised construction's value handed out for another evaluation: a value
    object of its own, recorded, holding what the first one held, which now stands
    for this construction's objects too (no longer objects of their own)."""
    if type(v) is not ObjectV:
        return v
    reused(a for _, a in v.attrs)
    return made(ObjectV(v.kind, v.attrs))


def reused(values) -> None:
    """values, handed out by a memoised run in another call's place (its result, the
    finals of its parameters): the recorded objects they hold, at any depth, may
    stand for other objects now."""
    if not _MADE:
        return
    todo = list(values)
    seen: set[int] = set()
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if _MADE.get(id(v), _ABSENT) is v:
            _MADE.pop(id(v), None)
        if isinstance(v, TupleV):
            todo.extend(v.items)
        elif type(v) is ObjectV:
            todo.extend(a for _, a in v.attrs)


def distinct(a: Value, b: Value) -> bool:
    """a and b, two value objects, are surely two objects of Python's: each made by a
    construction of its own, neither linked by a join to another object."""
    if a is b or _MADE.get(id(a), _ABSENT) is not a or _MADE.get(id(b), _ABSENT) is not b:
        return False
    return joined_objects.linked(a) == [a] and joined_objects.linked(b) == [b]
