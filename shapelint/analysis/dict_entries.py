"""Where an instance of a dict subclass keeps its entries, and when they are what
iterating it, `len` and its truth read.

Below modules.py, so that loops.py walks an instance's keys as it walks a dict's.
"""

from __future__ import annotations

from shapelint.analysis.absence import CONFIG_PREFIX
from shapelint.analysis.attributes import find_method
from shapelint.analysis.defs import Analyzer
from shapelint.ops.values import DICT_KIND, ObjectV, Value

# Where an instance of a dict subclass keeps its entries; no Python name can clash.
ITEMS = "<items>"


def mapping_entries(an: Analyzer, me: Value) -> ObjectV | None:
    """The entries of an instance of a dict subclass, known key by key, where its
    class leaves `__len__` and iteration to dict; None otherwise."""
    if not (isinstance(me, ObjectV) and me.kind.startswith(("<class>", CONFIG_PREFIX))):
        return None
    items = me.attr(ITEMS) if any(k == ITEMS for k, _ in me.attrs) else None
    if not (isinstance(items, ObjectV) and items.kind == DICT_KIND):
        return None
    cd = an.class_of(me.kind.partition(">")[2])
    if cd is None or any(find_method(an, cd, m) for m in ("__len__", "__iter__", "keys")):
        return None
    return items
