"""What a forgetting walk (`in_place._forget_everywhere`) visits under one value a
frame, module or module being built holds, kept so that a later walk that would
find nothing there is answered without walking.

A walk from v visits v and, through tuples, lists, dicts and plain objects, every
list, dict, object or set v holds at any depth, passing over those its table of
flat values holds (they hold nothing it could change) and entering none its table
of shallow ones holds (what they hold is flat). A value found unchanged by a whole
walk leaves those two tables, over what it visited, as no later walk can add to:
each value visited and in neither table holds one that is not flat, down to one
in the shallow table, and nothing leaves the tables but their clearing. So until
then, every later walk from v visits exactly the values kept here, and it changes
v only where one of them is the changed object or (copies not excluded) equal to
one of its parts, which `unchanged` tests in their stead. Values are immutable:
the kept value holds every value visited, so their ids stay theirs.

A big module-level table of configs (timm's `model_cfgs`, a dict of dataclass
instances) is held by the module's namespace and by the frame of its top level,
and was walked again, node by node, at every in-place change the file made.
"""

from __future__ import annotations

from shapelint.analysis.small_sets import SetV
from shapelint.ops.values import ObjectV, TupleV, Value

# The values a walk enters; kept in step with in_place's.
HOLDERS = (TupleV, ObjectV, SetV)

# id(v) -> (v, the tables' generation, ids of the values visited, those a copy may be
# of by (type, kind, length): equality needs all three of a tuple, list, dict, object
# or set of these exact types)
_KEPT: dict[int, tuple[Value, int, frozenset[int], dict[tuple, list[Value]]]] = {}
_KEPT_MAX = 2_000


def _key(v: Value) -> tuple:
    t = type(v)
    if t is ObjectV:
        return (t, v.kind, len(v.attrs))
    if t is TupleV or t is SetV:
        return (t, len(v.items))
    return (t,)  # another class's equality may be its own


def visited(v: Value, flat: dict[int, Value], shallow: dict[int, Value]) -> dict[int, Value]:
    """The values a walk from v visits with these tables, by id: v and what it
    enters, as `_forget_everywhere`'s `without` enters them (a tuple's or list's
    items, an exact ObjectV's attributes; a set's items never)."""
    seen = {id(v): v}
    todo = [v]
    while todo:
        x = todo.pop()
        if shallow.get(id(x)) is x:
            continue
        if isinstance(x, TupleV):
            held: tuple = x.items
        elif type(x) is ObjectV:
            held = tuple(a for _, a in x.attrs)
        else:
            continue
        for h in held:
            if isinstance(h, HOLDERS) and flat.get(id(h)) is not h and id(h) not in seen:
                seen[id(h)] = h
                todo.append(h)
    return seen


def record(v: Value, flat: dict, shallow: dict, generation: int) -> None:
    """Keep what a walk from v visits: to be called right after a walk found v
    unchanged, with no clearing of the tables since that pass began."""
    seen = visited(v, flat, shallow)
    by_key: dict[tuple, list[Value]] = {}
    for u in seen.values():
        if not (isinstance(u, TupleV) and u.kind == "tuple"):  # never a copy (in_place._copy)
            by_key.setdefault(_key(u), []).append(u)
    if len(_KEPT) >= _KEPT_MAX:
        _KEPT.clear()
    _KEPT[id(v)] = (v, generation, frozenset(seen), by_key)


def unchanged(v: Value, generation: int, ids: set[int], gone: list[Value], copies, copy) -> bool:
    """Whether a walk from v surely changes nothing: kept at this generation, and
    none of the values it visits is one of ids, nor (copies) one that copy(u, g)
    takes for a copy of one of gone. False where not kept: walk."""
    kept = _KEPT.get(id(v))
    if kept is None or kept[0] is not v or kept[1] != generation:
        return False
    if not ids.isdisjoint(kept[2]):
        return False
    if copies:
        by_key = kept[3]
        for g in gone:
            for u in by_key.get(_key(g), ()):
                if copy(u, g):
                    return False
    return True


def drop() -> None:
    """Forget everything kept (the tables were cleared)."""
    _KEPT.clear()
