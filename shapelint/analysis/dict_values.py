"""Dicts as values: a dict known entry by entry, what `dict(v)` holds, an
instance of a dict subclass and dict's own methods on its entries, `c[i] = v`
on a list or dict known item by item, and `f(**kw)`.

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

from shapelint.analysis import dict_keys
from shapelint.analysis.dict_entries import ITEMS
from shapelint.analysis.module_kinds import DICT_KINDS
from shapelint.analysis.module_lists import ModuleListV, as_items
from shapelint.analysis.recorder import SelfRecorder
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import (
    DICT_KIND,
    UNKNOWN,
    BoolV,
    IntV,
    NoneV,
    ObjectV,
    TupleV,
    Value,
)


def dict_value(entries: dict, kind: str = DICT_KIND) -> ObjectV:
    """A dict of entries keyed as dict_keys.py keys them."""
    return ObjectV(kind, tuple(entries.items()))


def mapping(v: Value) -> ObjectV | None:
    """What `dict(v)` / `OrderedDict(v)` holds: a dict's entries, or an iterable of
    (key, value) pairs known one by one, in order, equal keys one entry; None when
    that is not known."""
    if isinstance(v, ObjectV) and v.kind in DICT_KINDS:
        return v
    items = as_items(v)
    if items is None:
        return None
    entries: dict[object, Value] = {}
    for pair in items:
        kv = as_items(pair)
        key = dict_keys.key_of(kv[0]) if kv is not None and len(kv) == 2 else None
        if kv is None or len(kv) != 2 or not dict_keys.known(key):
            return None
        entries[key] = kv[1]
    return dict_value(entries)


def mapping_item(me: Value, key: Value) -> Value | None:
    """`inst[key]` of an instance of a dict subclass, as dict.__getitem__ answers;
    None when me is not one."""
    if not isinstance(me, ObjectV) or all(k != ITEMS for k, _ in me.attrs):
        return None
    items = me.attr(ITEMS)
    held = dict_keys.key_of(key)
    if isinstance(items, ObjectV) and dict_keys.known(held):
        found = dict_keys.entry(items, held)
        return UNKNOWN if found is None else found
    return UNKNOWN


def holds_entries(me: Value) -> bool:
    """Whether me is an instance of a dict subclass (its entries kept apart)."""
    if isinstance(me, SelfRecorder):
        return ITEMS in me.attrs
    return isinstance(me, ObjectV) and any(k == ITEMS for k, _ in me.attrs)


# The entries of an instance of a dict subclass after a store under a key not known:
# the keys listed are there (a store removes none), each with its value where a
# store of a known key since gave it, unknown where the unknown key may have
# replaced it; any other key may be there too. Only this module reads it; to every
# other reader it is no dict (a kind none of them knows), so not known.
OPEN_KIND = "<dict:open>"


def entries_assigned(me: Value, key: Value, value: Value) -> Value | None:
    """`me[key] = value` where me is an instance of a dict subclass whose class
    defines no `__setitem__` of its own: dict's store into its entries. The
    instance being built changes in place (and is returned); a built one is
    returned changed. None when me holds no entries."""
    if isinstance(me, SelfRecorder) and ITEMS in me.attrs:
        items = me.attrs[ITEMS]
    elif isinstance(me, ObjectV) and any(k == ITEMS for k, _ in me.attrs):
        items = me.attr(ITEMS)
    else:
        return None
    if not (isinstance(items, ObjectV) and items.kind in (DICT_KIND, OPEN_KIND)):
        return _with_entries(me, UNKNOWN)
    held = dict_keys.key_of(key)
    if not dict_keys.known(held):
        # `REG[str(obj.__class__)] = v` of a class not known: one more entry, whose key
        # may be any listed one's; a known key stored after it is read back exactly
        return _with_entries(me, ObjectV(OPEN_KIND, tuple((k, UNKNOWN) for k, _ in items.attrs)))
    if items.kind == OPEN_KIND:
        return _with_entries(
            me, ObjectV(OPEN_KIND, tuple({**dict(items.attrs), held: value}.items()))
        )
    new = item_assigned(items, key, value)
    return _with_entries(me, new if new is not None else UNKNOWN)


def entries_forgotten(me: ObjectV | SelfRecorder) -> Value:
    """me with its entries not known (a change of dict's the analysis does not follow)."""
    return _with_entries(me, UNKNOWN)


def _with_entries(me: ObjectV | SelfRecorder, items: Value) -> Value:
    if isinstance(me, SelfRecorder):
        me.attrs[ITEMS] = items
        return me
    attrs = dict(me.attrs)
    attrs[ITEMS] = items
    return ObjectV(me.kind, tuple(attrs.items()))


def dict_method(me: ObjectV | SelfRecorder, meth: str, args: list | None, frame) -> Value | None:
    """`super().name(...)` in a method of a dict subclass: dict's own method on the
    instance's entries (a dict known key by key: a key it lacks is absent). A store
    rebinds `self` in the method's frame, which the caller takes back as any
    change a method makes to its `self` (in_place.py); the instance being built
    (a dataclass's `__post_init__`) changes in place. A change dict's method makes
    that is not modelled here leaves the entries unknown. args None: keywords were
    given."""
    building = isinstance(me, SelfRecorder)
    if args is None:
        if meth in MAPPING_MUTATORS and building:
            me.attrs[ITEMS] = UNKNOWN
        elif meth in MAPPING_MUTATORS and type(frame.env.get("self")) is ObjectV:
            frame.env["self"] = UNKNOWN
        return None
    items = me.attrs.get(ITEMS, UNKNOWN) if building else me.attr(ITEMS)
    known = isinstance(items, ObjectV) and items.kind == DICT_KIND
    listed = known or (isinstance(items, ObjectV) and items.kind == OPEN_KIND)
    key = dict_keys.key_of(args[0]) if args else dict_keys.key_of(UNKNOWN)
    named = dict_keys.known(key)
    found = dict_keys.entry(items, key) if listed and named else None
    if meth == "__getitem__" and len(args) == 1:
        if building:
            return UNKNOWN if found is None else found
        return mapping_item(me, args[0])
    if meth == "__setitem__" and len(args) == 2:
        changed = entries_assigned(me, args[0], args[1])
        if not building:
            frame.env["self"] = changed
        return NoneV()
    if meth in ("get", "__contains__") and 1 <= len(args) <= (2 if meth == "get" else 1):
        if not named or not (known or found is not None):
            return UNKNOWN if meth == "get" else BoolV(None)
        held = found is not None
        if meth == "__contains__":
            return BoolV(held)
        return found if found is not None else args[1] if len(args) == 2 else NoneV()
    if meth == "__len__" and not args and known:
        return IntV(Expr.const(len(items.attrs)))
    if meth in ("keys", "values", "items") and not args and known:
        # dict's views of the entries, in their order, as a plain dict's
        # (modules.method_call): transformers' ModelOutput.to_tuple walks `self.keys()`
        if meth == "keys":
            return TupleV(dict_keys.keys(items))
        if meth == "values":
            return TupleV(tuple(v for _, v in items.attrs))
        return TupleV(tuple(TupleV((dict_keys.key_value(k), v)) for k, v in items.attrs))
    if meth in MAPPING_MUTATORS and building:
        me.attrs[ITEMS] = UNKNOWN  # a change to the entries not modelled
    elif meth in MAPPING_MUTATORS and type(frame.env.get("self")) is ObjectV:
        frame.env["self"] = UNKNOWN
    return None


# dict's methods that change its entries.
MAPPING_MUTATORS = frozenset(
    {"__setitem__", "__delitem__", "pop", "popitem", "clear", "update", "setdefault", "__ior__"}
)


def item_assigned(container: Value, idx: Value, value: Value) -> Value | None:
    """`c[idx] = value` on a list, module list or dict known item by item: the
    container after it (an unknown one where idx is not known); None when c is
    none of these (a tensor: a write into part of it keeps its shape)."""
    if isinstance(container, ObjectV) and container.kind in DICT_KINDS:
        key = dict_keys.key_of(idx)
        if dict_keys.known(key) and (type(key) is str or container.kind == DICT_KIND):
            return dict_value({**dict(container.attrs), key: value}, container.kind)
        return UNKNOWN  # not known; or a ModuleDict's name no str, which torch refuses
    items = as_items(container)
    if items is None:
        if isinstance(container, ModuleListV):
            return ModuleListV((), container.sequential, known=False)
        return UNKNOWN if isinstance(container, TupleV) else None
    i = idx.value.value if isinstance(idx, IntV) and idx.value is not None else None
    if i is None or not -len(items) <= i < len(items):
        if isinstance(container, ModuleListV):
            return ModuleListV((), container.sequential, known=False)
        return UNKNOWN
    new = list(items)
    new[i] = value
    if isinstance(container, ModuleListV):
        return ModuleListV(tuple(new), container.sequential)
    return TupleV(tuple(new))


def expand_kwargs(v: Value) -> dict[str, Value] | None:
    """`f(**kw)` where kw is a dict the analysis knows entry by entry, keyed by strs
    (Python refuses any other key: not known here)."""
    if isinstance(v, ObjectV) and v.kind in DICT_KINDS and dict_keys.all_str(v):
        return dict(v.attrs)
    return None


def entries_of(v: Value) -> dict | None:
    """The entries `{**v}` spreads, any keys: v a dict known entry by entry."""
    if isinstance(v, ObjectV) and v.kind in DICT_KINDS:
        return dict(v.attrs)
    return None
