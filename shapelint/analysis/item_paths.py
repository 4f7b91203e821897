"""Where a caller holds an object it handed as an item: `NAME[k]` or `NAME.attr[k]`,
or as an entry of a dict it spread into the call (`func(*args, **kwargs)`).

A method that changes its `self` (`self.keys = torch.cat(...)`) called on an
item of a list (`self.layers[i].update(k)`, transformers' Cache.update) changes
the very object the list holds, and so the list, and the object holding the list:
in_place.follow gives the callee's final `self` back to the caller through the
path it was read by, as it does through a name. The analysis holds values, so
the path is rebuilt: a list with the new item, and the object (or the module
being built, or the frame's name) holding it, at a known index of a list known
item by item, the item the very value the call was handed (or unknown, where a
change the callee made forgot it there). A decorator's wrapper hands its
`**kwargs` on so (`return func(*args, **kwargs)`): the entry holds the changed
object, which the wrapper's own caller takes back (in_place.follow_free) where
the entry, at the wrapper's return, is the very value written here
(`frame.entries`: not an entry the wrapper stored anew); and so its `*args`
(`NAME[k]` of the tuple, recorded in `frame.entries` under (NAME, k)).
Where the item is not the very value handed but a link to its object
(built_objects: a holder a callee's change left behind), it is taken alike."""

from __future__ import annotations

import ast
from collections.abc import Callable

from shapelint.analysis import built_objects
from shapelint.ops.shape_rules import const_int
from shapelint.ops.values import DICT_KIND, UNKNOWN, ObjectV, TupleV, Value


class ItemPath:
    """`NAME[k]` (holder None: the frame's name holds the list) or `NAME.attr[k]`
    (holder: the plain object the name holds, or a module being built, whose
    attribute attr holds the list)."""

    __slots__ = ("env", "name", "holder", "attr", "items", "k", "entries")

    def __init__(
        self, env: dict, name: str, holder, attr: str, items: TupleV, k: int, entries=None
    ) -> None:
        self.env, self.name, self.holder, self.attr = env, name, holder, attr
        self.items, self.k, self.entries = items, k, entries

    def frame_env(self) -> dict:
        """The names of the frame the path was read in."""
        return self.env

    def write(self, new: Value) -> list[tuple[Value, Value]]:
        """The item is new now; the objects the path went through, as they were and
        as they are (the holder first), which no other holder may keep as they
        were."""
        items = self.items.items
        changed = TupleV((*items[: self.k], new, *items[self.k + 1 :]), self.items.kind)
        holder = self.holder
        if holder is None:
            self.env[self.name] = changed
            if self.entries is not None:  # (a wrapper's `*args`: handed back, as `**kwargs`)
                self.entries[(self.name, self.k)] = new
            return [(self.items, changed)]
        if isinstance(holder.attrs, dict):  # a module being built: its recorder
            holder.attrs[self.attr] = changed
            return [(self.items, changed)]
        attrs = tuple((a, changed if a == self.attr else v) for a, v in holder.attrs)
        now = self.env[self.name] = ObjectV(holder.kind, attrs)
        return [(holder, now), (self.items, changed)]


def find(
    expr: ast.Subscript,
    old: Value,
    env: dict,
    changeable: Callable[[Value], bool],
    entries: dict | None = None,
) -> ItemPath | None:
    """The path of `expr` (a subscript read in the frame whose names env holds) to
    old, the value the call was handed, where its index is a constant or a name
    holding a known int and its list is known item by item; None elsewhere.
    entries: the frame's record of what was written into an item of a name's
    tuple (`frame.entries`)."""
    k = _index(expr.slice, env)
    if k is None:
        return None
    base = expr.value
    holder, attr = None, ""
    if isinstance(base, ast.Name):
        name = base.id
        seq = env.get(name)
    elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
        name, attr = base.value.id, base.attr
        holder = env.get(name)
        attrs = getattr(holder, "attrs", None)
        if isinstance(attrs, dict):
            seq = attrs.get(attr)
        elif type(holder) is ObjectV and holder.kind.startswith("<class>") and changeable(holder):
            seq = holder.attr(attr)
        else:
            return None
    else:
        return None
    if not isinstance(seq, TupleV):
        return None
    if k < 0:
        k += len(seq.items)
    # unknown: forgotten by a change the callee made to it (its `self.lazy(k)`):
    # the callee's value at its return is the one the item holds, as for a name
    if not 0 <= k < len(seq.items) or not _holds(seq.items[k], old):
        return None
    return ItemPath(env, name, holder, attr, seq, k, entries if holder is None else None)


def _index(node: ast.expr, env: dict) -> int | None:
    """A constant int, or a name the frame binds to a known int."""
    if isinstance(node, ast.Constant):
        v = node.value
        return v if type(v) is int else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _index(node.operand, env)
        return None if inner is None else -inner
    if isinstance(node, ast.Name):
        got = env.get(node.id)
        return None if got is None else const_int(got)
    return None


class EntryPath:
    """`**NAME` spread into the call, NAME a dict of the frame holding the object
    under key."""

    __slots__ = ("frame", "name", "entries", "key")

    def __init__(self, frame, name: str, entries: ObjectV, key: str) -> None:
        self.frame, self.name, self.entries, self.key = frame, name, entries, key

    def frame_env(self) -> dict:
        return self.frame.env

    def write(self, new: Value) -> list[tuple[Value, Value]]:
        """As ItemPath.write: the entry is new, the dict as it was and is."""
        attrs = tuple((k, new if k == self.key else v) for k, v in self.entries.attrs)
        now = self.frame.env[self.name] = ObjectV(self.entries.kind, attrs)
        self.frame.entries[(self.name, self.key)] = new
        return [(self.entries, now)]


PATHS = (ItemPath, EntryPath)


def find_entry(call: ast.Call, key: str, old: Value, frame) -> EntryPath | None:
    """The path of a keyword argument key the call took from one `**NAME` of the
    frame's dict names (its only spread dict, and no keyword of that name
    written), where the entry is old (or unknown: forgotten by the callee's
    change)."""
    spread = [k.value for k in call.keywords if k.arg is None]
    if len(spread) != 1 or not isinstance(spread[0], ast.Name):
        return None
    if any(k.arg == key for k in call.keywords):
        return None
    name = spread[0].id
    entries = frame.env.get(name)
    if type(entries) is not ObjectV or entries.kind != DICT_KIND:
        return None
    held = [v for k, v in entries.attrs if k == key]
    if len(held) != 1 or not _holds(held[0], old):
        return None
    return EntryPath(frame, name, entries, key)


def _holds(v: Value, old: Value) -> bool:
    """v is what the call was handed, or unknown (forgotten by the callee's change),
    or a link to that one object (built_objects: a holder a callee's change to an
    object of its own left behind)."""
    if v is old or v is UNKNOWN:
        return True
    t = built_objects.token(old)
    return t is not None and built_objects.holds(v, t)
