"""Two objects one value may stand for: where control flow meets, a join of two
equal dicts or lists keeps one of them (value_joins.join_values), so the name
holds the very value of one path's object while Python's name holds either
object. A change through that name changes one of the two, which one not known:
both, and every holder of either, are then not known, never given the change
(in_place.forget_held); a change through a holder of either forgets the joined
name too.

The analysis holds values, not a heap, so the link is kept here, by identity,
for the length of a target run (`reset`): the values are kept alive with it, so
that an id names its value while the link lives. Past `_MAX` links the table
stops growing and says that every object may be linked (`linked` None): the
caller then assumes nothing of identity.

Two objects of which no one value holds for both (two dicts of other keys, lists
of other lengths, a dict on one path and None on the other) join into an
EitherV: it reads as not known (either_uses.py), yet holds the objects, by
identity, so that a change through the name, or a use that may lead to one
(the name handed to a call, stored, returned), forgets every holder of each.
The same stands for a name an object's own change left behind (`c = a;
a.append(x)`: c holds the list a holds now, which the analysis gives to a
only). A known change through another name keeps it true (`renewed`)."""

from __future__ import annotations

from shapelint.analysis.small_sets import SetV
from shapelint.ops.values import DICT_KIND, ObjectV, TupleV, Value

_MAX = 4096
# id -> (the value, the ids linked to it)
_LINKS: dict[int, tuple[Value, set[int]]] = {}
_FULL = [False, False]  # the table full; a choice made (chose)
# id of an object an EitherV holds -> (the object, the EitherVs that hold it)
_HELD: dict[int, tuple[Value, list[EitherV]]] = {}


def reset() -> None:
    _LINKS.clear()
    _HELD.clear()
    _FULL[0] = _FULL[1] = False


class EitherV(Value):
    """A value that is one of `items`, objects Python may change in place, or an
    object the analysis does not know (a path where it is None, or not
    known). Never read as a value: either_uses turns each read into UNKNOWN, or
    forgets the items where the read may change them. items is a list: a known
    change of one of them through another name puts the changed one in its place
    (`renewed`); spent (forgotten) it is empty. Equal only to an EitherV of the
    very same items, so that a loop that joins it again reaches its fixed point."""

    __slots__ = ("items",)

    def __init__(self, items: list[Value]) -> None:
        self.items = items
        for v in items:
            _HELD.setdefault(id(v), (v, []))[1].append(self)

    def __eq__(self, other: object) -> bool:
        return self is other or (
            type(other) is EitherV
            and len(other.items) == len(self.items)
            and all(a is b for a, b in zip(self.items, other.items))
        )

    def __hash__(self) -> int:
        return hash(tuple(id(v) for v in self.items))

    def __repr__(self) -> str:
        return f"EitherV({self.items!r})"


def holding() -> bool:
    """Whether some EitherV or choice of objects was made since the last reset
    (else no name holds one)."""
    return bool(_HELD) or _FULL[1]


def chose() -> None:
    """A join made a choice of several objects (choices.join), one of which a
    store through the name changes."""
    _FULL[1] = True


def either(a: Value, b: Value) -> EitherV | None:
    """The value a name holds where one path gives a and the other b, neither the
    other's object nor equal to it, where either may be an object a change in
    place reaches: an EitherV of those objects; None where neither is one."""
    return either_among(one for v in (a, b) for one in (v.items if type(v) is EitherV else (v,)))


def either_among(values) -> EitherV | None:
    """One of values (an item picked by an index or key not known: `(a, b)[i]`,
    `{"p": a}[k]`); None where none is an object a change in place reaches."""
    items: list[Value] = []
    for one in values:
        if _reaches_object(one, 3) and not any(one is i for i in items):
            items.append(one)
    return EitherV(items) if items else None


def either_of(v: Value) -> EitherV:
    """A name that holds v's object, whose content the analysis no longer gives it."""
    return EitherV([v])


def renewed(old: Value, new: Value) -> None:
    """old, an object changed in place, is new now (a name that holds it was given
    the change): every EitherV that may be old may be new."""
    got = _HELD.get(id(old))
    if got is None or got[0] is not old or new is old:
        return
    for e in got[1]:
        for i, v in enumerate(e.items):
            if v is old:
                e.items[i] = new
                _HELD.setdefault(id(new), (new, []))[1].append(e)


def spent(e: EitherV, which=None) -> list[Value]:
    """e's objects (those `which` holds true of), which the caller forgets: e holds
    none of them from then on."""
    items = [v for v in e.items if which is None or which(v)]
    e.items[:] = [v for v in e.items if which is not None and not which(v)]
    return items


def reaches_object(v: Value) -> bool:
    """v is, or holds, an object a change in place reaches (a list, a dict, a set,
    an instance)."""
    return _reaches_object(v, 3)


def container(v: Value) -> bool:
    """v is a list, dict or set (no tuple, no instance)."""
    if isinstance(v, TupleV):
        return v.kind != "tuple"
    return isinstance(v, SetV) or (type(v) is ObjectV and v.kind == DICT_KIND)


def holds_object(v: Value) -> bool:
    """v holds (as an item, an entry, an attribute) an object a change in place reaches."""
    if isinstance(v, (TupleV, SetV)):
        return any(_reaches_object(i, 3) for i in v.items)
    if type(v) is ObjectV:
        return any(_reaches_object(a, 3) for _, a in v.attrs)
    return True


def _reaches_object(v: Value, depth: int) -> bool:
    """v is, or holds (a tuple of lists), an object a change in place reaches: a
    list, a dict, a set, an instance."""
    if isinstance(v, TupleV):
        if v.kind != "tuple":
            return True
        return depth > 0 and any(_reaches_object(i, depth - 1) for i in v.items)
    if type(v) is ObjectV:
        return v.kind == DICT_KIND or v.kind.startswith("<class>")
    return isinstance(v, SetV)


def link(a: Value, b: Value) -> None:
    """a and b, two objects one joined value may be."""
    if _FULL[0]:
        return
    if len(_LINKS) >= _MAX:
        _FULL[0] = True
        return
    for v, other in ((a, b), (b, a)):
        _LINKS.setdefault(id(v), (v, set()))[1].add(id(other))


def linked(v: Value) -> list[Value] | None:
    """Every object v may be, or that may be v, through joins, v among them; None
    where the table is full (any object may be)."""
    if _FULL[0]:
        return None
    if id(v) not in _LINKS or _LINKS[id(v)][0] is not v:
        return [v]
    seen = {id(v)}
    todo = [id(v)]
    while todo:
        for other in _LINKS[todo.pop()][1]:
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return [_LINKS[i][0] for i in seen]
