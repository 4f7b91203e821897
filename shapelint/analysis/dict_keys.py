"""The keys of a dict known entry by entry, as Python hashes and compares them.

A dict is an ObjectV of kind DICT_KIND whose attrs are its entries in insertion
order. A str key is the str itself (what SimpleNamespace, OrderedDict and
ModuleDict, which share the representation, hold); any other key the analysis
knows is the Python constant (an int, bool, float, None, or a tuple of keys) or,
for an enum member, a MemberKey. Python's own equality of keys then holds between
the entries: `1 == 1.0 == True` are one key and `{1: a}` never holds `"1"`, so a
Python dict built of the entries keeps the first key stored and the last value,
as Python's does. A key not known here leaves the dict or the read not known.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from shapelint.analysis import enums
from shapelint.ops.values import (
    BoolV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    StrV,
    TupleV,
    Value,
    constant_value,
    python_constant,
)


@dataclass(frozen=True, eq=False)
class MemberKey:
    """An enum member as a key: a plain Enum's equals itself alone; an IntEnum's or
    StrEnum's equals (and hashes as) its value, as the mixin's `__eq__` makes it."""

    kind: str
    name: str
    mixin: str  # "" (identity), "int" or "str": enums.compares_as
    value: object  # the member's value as a key, where mixin is not ""
    member: Value = field(compare=False)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MemberKey):
            if self.kind == other.kind:
                return self.name == other.name
            return bool(self.mixin and other.mixin and self.value == other.value)
        return bool(self.mixin) and self.value == other

    def __hash__(self) -> int:
        return hash(self.value) if self.mixin else hash((self.kind, self.name))


# what says "no key known": no Python key is this object
_NOT_KNOWN = object()


def key_of(v: Value) -> object:
    """The key Python hashes for v, where the analysis knows it; NOT_KNOWN otherwise
    (a value not known exactly, a list, a dict, a tensor, a float NaN, which equals
    no key, not even itself)."""
    if isinstance(v, StrV):
        return _NOT_KNOWN if v.value is None else v.value
    if isinstance(v, (BoolV, IntV, NoneV)):
        ok, k = python_constant(v)
        return k if ok else _NOT_KNOWN
    if isinstance(v, FloatV):
        known = v.value is not None and not math.isnan(v.value)
        return v.value if known else _NOT_KNOWN
    if isinstance(v, TupleV):
        if v.kind != "tuple":
            return _NOT_KNOWN  # a list is unhashable; one that may be a list is not known
        keys = tuple(key_of(i) for i in v.items)
        return _NOT_KNOWN if any(k is _NOT_KNOWN for k in keys) else keys
    if isinstance(v, ObjectV) and enums.is_member(v):
        return _member_key(v)
    return _NOT_KNOWN


def known(key: object) -> bool:
    return key is not _NOT_KNOWN


def _member_key(v: ObjectV) -> object:
    name = v.attr("name")
    if not (isinstance(name, StrV) and name.value is not None):
        return _NOT_KNOWN
    mixin = enums.compares_as(v)
    value = key_of(v.attr("value")) if mixin else None
    if value is _NOT_KNOWN:
        return _NOT_KNOWN
    return MemberKey(v.kind, name.value, mixin, value, v)


def key_value(key: object) -> Value:
    """The value a key stands for: what iterating a dict, `keys()` and `items()` yield."""
    if isinstance(key, str):
        return StrV(key)
    if isinstance(key, MemberKey):
        return key.member
    if isinstance(key, tuple):
        return TupleV(tuple(key_value(k) for k in key), "tuple")
    return constant_value(key)


def keys(d: ObjectV) -> tuple[Value, ...]:
    """A dict's keys, in insertion order."""
    return tuple(key_value(k) for k, _ in d.attrs)


def all_str(d: ObjectV) -> bool:
    """Whether every key of d is a str (what `f(**d)`, `sep.join(d)` and a module's
    children's names need: Python raises TypeError for any other)."""
    return all(type(k) is str for k, _ in d.attrs)


def entry(d: ObjectV, key: object) -> Value | None:
    """The value d holds under key (Python's equality of keys); None where d has no
    such key."""
    for k, v in d.attrs:
        if k == key:
            return v
    return None
