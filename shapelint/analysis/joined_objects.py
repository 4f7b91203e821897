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
caller then assumes nothing of identity."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shapelint.ops.values import Value

_MAX = 4096
# id -> (the value, the ids linked to it)
_LINKS: dict[int, tuple[Value, set[int]]] = {}
_FULL = [False]


def reset() -> None:
    _LINKS.clear()
    _FULL[0] = False


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
