"""Sets of constants the analysis knows one by one: `set(xs)` and `frozenset(xs)`,
their algebra (`-`, `|`, `&`, `^`), their size, and the order iterating one walks
where CPython fixes it (`[*(set(range(n)) - {a, b}), a, b]`, a permutation built so).

A set iterates in its hash table's slot order. An int hashes to itself and the table
has at least 8 slots (PySet_MINSIZE), so distinct ints in [0, 8) each sit in the slot
of their own value, whatever the set's history (its size, what was removed): such a
set iterates in ascending order. Any other set has an order nothing here follows
(strings hash with a per-process salt; negative or larger ints may share a slot), so
iterating it stays unknown, while its items still answer `in`, `len` and `sorted`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from shapelint.ops.values import TupleV, Value, python_constant

_SLOTS = 8  # the fewest slots a CPython set table has

# The methods that change a set in place: after one, it is no longer known.
MUTATORS = frozenset(
    {"add", "discard", "remove", "pop", "clear", "update", "difference_update",
     "intersection_update", "symmetric_difference_update", "__ior__", "__isub__",
     "__iand__", "__ixor__"}
)  # fmt: skip


@dataclass(frozen=True)
class SetV(Value):
    """A set (a display `{A, B}`, `set(xs)`): what it holds, for membership. Its
    order and size are Python's hashing, known only as this module says."""

    items: tuple[Value, ...]


def _constants(items) -> dict | None:
    """Each distinct constant of items once, first kept, as a Python set keeps it:
    {constant: its value}; None where an item is not known exactly, is not
    hashable, or equals one of another type (`1` and `True`, `1` and `1.0`), whose
    survivor the kind of the result would depend on."""
    kept: dict = {}
    for v in items:
        ok, c = python_constant(v)
        if not ok or c != c:  # NaN is no member even of a set holding it
            return None
        try:
            hash(c)
        except TypeError:
            return None
        if c in kept:
            if type(next(k for k in kept if k == c)) is not type(c):
                return None
            continue
        kept[c] = v
    return kept


def built(items) -> SetV | None:
    """The set of items all known constants (`set(range(4))`); None otherwise."""
    kept = _constants(items)
    return None if kept is None else SetV(tuple(kept.values()))


def binop(op: ast.operator, left: Value, right: Value) -> Value | None:
    """`a - b`, `a | b`, `a & b`, `a ^ b` of two sets known one by one."""
    if not (isinstance(left, SetV) and isinstance(right, SetV)):
        return None
    a, b = _constants(left.items), _constants(right.items)
    if a is None or b is None or _constants((*left.items, *right.items)) is None:
        return None
    if isinstance(op, ast.Sub):
        keep = [v for c, v in a.items() if c not in b]
    elif isinstance(op, ast.BitOr):
        keep = [*a.values(), *(v for c, v in b.items() if c not in a)]
    elif isinstance(op, ast.BitAnd):
        keep = [v for c, v in a.items() if c in b]
    elif isinstance(op, ast.BitXor):
        keep = [v for c, v in a.items() if c not in b] + [v for c, v in b.items() if c not in a]
    else:
        return None
    return SetV(tuple(keep))


def size(v: Value) -> int | None:
    """len() of a set known one by one."""
    kept = _constants(v.items) if isinstance(v, SetV) else None
    return None if kept is None else len(kept)


def sorted_items(v: Value) -> TupleV | None:
    """A set's items as a tuple, for sorted(): the order does not matter there."""
    kept = _constants(v.items) if isinstance(v, SetV) else None
    return None if kept is None else TupleV(tuple(kept.values()))


def iterated(v: Value) -> TupleV | None:
    """What iterating the set walks, in order, where CPython fixes it: at most one
    item, or distinct ints in [0, 8), ascending; None otherwise."""
    kept = _constants(v.items) if isinstance(v, SetV) else None
    if kept is None:
        return None
    if len(kept) > 1:
        if not all(type(c) is int and 0 <= c < _SLOTS for c in kept):
            return None
        kept = {c: kept[c] for c in sorted(kept)}
    return TupleV(tuple(kept.values()))
