"""`operator.itemgetter(k, ...)` as a value: calling it on a sequence the analysis
holds item by item picks `obj[k]` (a tuple of the picks for several keys), as
`map(itemgetter(1), pairs)` does over a sorted list of pairs (axial attention's
inverse permutation). Only int keys on a tuple or list known item by item are
read; any other object's item is not known here."""

from __future__ import annotations

from dataclasses import dataclass

from shapelint.ops.values import UNKNOWN, IntV, TupleV, Value

QUALNAME = "operator.itemgetter"


@dataclass(frozen=True)
class ItemGetterV(Value):
    """What `operator.itemgetter(*keys)` returns."""

    keys: tuple[Value, ...]


def made(qual: str, args: list[Value], kwargs: dict) -> Value | None:
    """`operator.itemgetter(*keys)`; None for any other call."""
    if qual != QUALNAME:
        return None
    if kwargs or not args:
        return UNKNOWN  # Python raises: itemgetter takes keys only
    return ItemGetterV(tuple(args))


def call(getter: ItemGetterV, args: list[Value], kwargs: dict) -> Value:
    """getter(obj): obj's item under each key, where obj is a sequence known item
    by item and the key a known int in range; UNKNOWN otherwise."""
    if kwargs or len(args) != 1 or not isinstance(args[0], TupleV):
        return UNKNOWN
    items = args[0].items
    picked = []
    for k in getter.keys:
        i = k.value.value if isinstance(k, IntV) and k.value is not None else None
        if i is None or not -len(items) <= i < len(items):
            return UNKNOWN
        picked.append(items[i])
    return picked[0] if len(picked) == 1 else TupleV(tuple(picked), "tuple")
