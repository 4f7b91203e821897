"""`torch.utils._pytree.tree_flatten(x)` and `tree_unflatten(leaves, spec)` of a
structure the analysis holds whole, as torch's pytree walks it: tuples, lists,
namedtuples and `torch.Size` are nodes, flattened depth first, their items in order;
a tensor, a number, a string and None are leaves (torch registers no node for
NoneType). A dict is left alone: the analysis holds a dict and a SimpleNamespace (a
leaf to pytree) as one kind of value. Anything else — an object, an unknown — is no
structure known here, and the call is not modelled."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from shapelint.analysis.namedtuples import NamedTupleV
from shapelint.ops.values import UNKNOWN, BoolV, FloatV, IntV, NoneV, StrV, TensorV, TupleV, Value

_PYTREE = ("torch.utils._pytree.",)
_LEAVES = (TensorV, IntV, FloatV, BoolV, StrV, NoneV)
_MAX_DEPTH = 16


@dataclass(frozen=True)
class TreeSpecV(Value):
    """The TreeSpec `tree_flatten` returns: the structure it flattened, whose leaves
    `tree_unflatten` puts back in order."""

    tree: Value
    leaves: int


def call(qual: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """The value of a pytree call the analysis models; None for any other call."""
    if not qual.startswith(_PYTREE) or kwargs:
        return None
    name = qual.rsplit(".", 1)[1]
    if name == "tree_flatten" and len(args) == 1:
        leaves = _leaves(args[0], 0)
        if leaves is None:
            return None
        return TupleV((TupleV(tuple(leaves), "list"), TreeSpecV(args[0], len(leaves))), "tuple")
    if name == "tree_unflatten" and len(args) == 2:
        leaves, spec = args
        if not (isinstance(spec, TreeSpecV) and isinstance(leaves, TupleV)):
            return None
        if len(leaves.items) != spec.leaves:
            return None  # torch raises: the count must match the spec's
        rebuilt, rest = _rebuilt(spec.tree, leaves.items)
        return rebuilt if not rest else None
    return None


def _leaves(v: Value, depth: int) -> list[Value] | None:
    if isinstance(v, _LEAVES):
        return [v]
    if type(v) is TupleV or isinstance(v, NamedTupleV):
        if depth > _MAX_DEPTH:
            return None
        out: list[Value] = []
        for item in v.items:  # type: ignore[attr-defined]
            got = _leaves(item, depth + 1)
            if got is None:
                return None
            out.extend(got)
        return out
    return None


def _rebuilt(tree: Value, leaves: tuple[Value, ...]) -> tuple[Value, tuple[Value, ...]]:
    """The tree with its leaves taken from `leaves` in order, and those left over."""
    if isinstance(tree, _LEAVES):
        return leaves[0], leaves[1:]
    items = []
    for item in tree.items:  # type: ignore[attr-defined]
        new, leaves = _rebuilt(item, leaves)
        items.append(new)
    return dataclasses.replace(tree, items=tuple(items)), leaves  # type: ignore[type-var]


def hands_on(qual: str | None, value: Value) -> bool:
    """A pytree call this module modelled: it only regroups the references it is
    given, and costs nothing a flop counter sees."""
    return bool(qual) and qual.startswith(_PYTREE) and value is not UNKNOWN  # type: ignore[union-attr]
