"""Instances of plain project classes that are surely objects of their own, and
which values stand for the same one.

The analysis holds values, not a heap, and forgets a changed object's equal
values too (in_place.py), since an equal value may be a copy of the same object
(an equal value a memoised call handed back). Python makes a new object at each
evaluation of `C(...)`, so where each construction a target run evaluates is a
value object of its own, two such values are two objects, however equal: a
change to one (`self.layers[i].update(k)`, of a list of uninitialised cache
layers built alike) leaves the other as it was. That is what this table says,
by identity: a value recorded here was made by a construction (a token of its
own), or a known change a run made to such a value made it (`changed`: the new
value takes the old one's token, as Python's object is the same one), and no
memoised run has handed it out since in another call's place (`reused`, which
spends it for good: it may stand for another call's object); a join that kept
it for either of two objects (joined_objects) rules it out too. Two values of
one token are the one object (`same`), two of two tokens are two (`distinct`).

A name that held such an object where another frame changed it (`curr = cache;
curr.update(k)` inside a callee, read through `cache`) is given a link to it
(`link`, an EitherV read as not known) instead of the value it held: the frame
that takes the change (in_place.follow's binding) puts the new value in every
name of its own that holds a link to the same token (`linked_token`).

For the length of a target run (`reset`); the values are kept alive with it,
so that an id names its value. Past `_MAX` entries it stops growing: an object
not recorded is forgotten as any equal value is, which is never wrong."""

from __future__ import annotations

from itertools import count

from shapelint.analysis import joined_objects
from shapelint.ops.values import ObjectV, TupleV, Value

_MAX = 65_536
# id -> (the value, its object's token)
_MADE: dict[int, tuple[Value, int]] = {}
# ids of values a memoised run handed out in another call's place: never own again
_SPENT: dict[int, Value] = {}
# id of a link (an EitherV a forgotten holder holds) -> (the link, its token)
_LINKS: dict[int, tuple[Value, int]] = {}
_TOKENS = count(1)


def reset() -> None:
    _MADE.clear()
    _SPENT.clear()
    _LINKS.clear()


def made(v: Value) -> Value:
    """v, a construction's new instance (of a plain class), recorded as an object of
    its own; a memoised construction hands out a copy (`again`)."""
    if type(v) is ObjectV and len(_MADE) < _MAX:
        _MADE[id(v)] = (v, next(_TOKENS))
    return v


def again(v: Value) -> Value:
    """A memoised construction's value handed out for another evaluation: a value
    object of its own, recorded, holding what the first one held, which now stands
    for this construction's objects too (no longer objects of their own)."""
    if type(v) is not ObjectV:
        return v
    reused(a for _, a in v.attrs)
    return made(ObjectV(v.kind, v.attrs))


def renew(v: Value) -> Value:
    """A memoised run's value handed out for another call's object (v, that run's
    final of a parameter): a value object of its own, holding what v holds, which
    no longer stands for objects of their own; not recorded, so that a known
    change gives it the token of the object handed (`changed`)."""
    if type(v) is not ObjectV:
        return v
    reused(a for _, a in v.attrs)
    return ObjectV(v.kind, v.attrs)


def reused(values) -> None:
    """values, handed out by a memoised run in another call's place (its result, the
    finals of its parameters): the recorded objects they hold, at any depth, may
    stand for other objects now (none is recorded: no value stands for one yet, and
    a later reuse spends them then)."""
    if not _MADE:
        return
    todo = list(values)
    seen: set[int] = set()
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        got = _MADE.get(id(v))
        if got is not None and got[0] is v:
            _MADE.pop(id(v), None)
        if type(v) is ObjectV and len(_SPENT) < _MAX:
            _SPENT[id(v)] = v
        if isinstance(v, TupleV):
            todo.extend(v.items)
        elif type(v) is ObjectV:
            todo.extend(a for _, a in v.attrs)


def token(v: Value) -> int | None:
    """The token of the object v stands for alone: recorded, linked by no join to
    another object; None elsewhere."""
    got = _MADE.get(id(v))
    if got is None or got[0] is not v or joined_objects.linked(v) != [v]:
        return None
    return got[1]


def changed(old: Value, new: Value) -> int | None:
    """old, an object of its own, is new now, by a known change a run made to it
    (not a value a memoised run handed out, which stands for another call's
    object): new stands for that one object. Its token, or None where old is no
    object of its own or new cannot stand for it."""
    t = token(old)
    if t is None or type(new) is not ObjectV or new.kind != old.kind:
        return None
    if _SPENT.get(id(new)) is new:
        return None
    got = _MADE.get(id(new))
    if got is not None and got[0] is new:
        return t if got[1] == t and token(new) == t else None
    if len(_MADE) >= _MAX:
        return None
    _MADE[id(new)] = (new, t)
    return t


def same(a: Value, b: Value) -> bool:
    """a and b stand for one object of Python's, each alone."""
    t = token(a)
    return t is not None and t == token(b)


def distinct(a: Value, b: Value) -> bool:
    """a and b, two value objects, are surely two objects of Python's: each made by a
    construction of its own (or changed from one), neither linked by a join to
    another object."""
    if a is b:
        return False
    ta, tb = token(a), token(b)
    return ta is not None and tb is not None and ta != tb


def link(e: Value, t: int) -> Value:
    """e, the EitherV a holder of object t holds once another frame changed it."""
    if len(_LINKS) < _MAX:
        _LINKS[id(e)] = (e, t)
    return e


def linked_token(v: Value) -> int | None:
    """The token of the object v is a link to (a holder another frame's change left
    behind), where it is one and still holds it."""
    got = _LINKS.get(id(v))
    if got is None or got[0] is not v or len(getattr(v, "items", ())) != 1:
        return None
    return got[1] if token(v.items[0]) == got[1] else None  # type: ignore[attr-defined]


def holds(v: Value, t: int) -> bool:
    """v is object t: a value standing for it, or a link to it."""
    return token(v) == t or linked_token(v) == t
