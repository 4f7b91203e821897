"""`torch.promote_types(a, b)` as a value: the dtype torch promotes two dtypes to
(azula's `arg.to(torch.promote_types(arg.dtype, min_dtype))`), and the same folded over
a list by `functools.reduce(torch.promote_types, dtypes)` (reduced.py)."""

from __future__ import annotations

from shapelint.ops import dtypes
from shapelint.ops.values import UNKNOWN, DtypeV, Value

QUALNAME = "torch.promote_types"


def call(qual: str, args: list[Value], kwargs: dict) -> Value | None:
    """The dtype `torch.promote_types(a, b)` gives; None: not such a call of two torch
    dtypes."""
    if qual != QUALNAME or kwargs or len(args) != 2:
        return None
    return fold(args)


def fold(items: list[Value] | tuple[Value, ...]) -> Value | None:
    """torch.promote_types folded from the left over torch dtypes; None where an item is
    no torch dtype (numpy's types, which torch refuses, included); UNKNOWN where torch
    may refuse the pair."""
    if not items or not all(isinstance(i, DtypeV) and not i.numpy for i in items):
        return None
    total = items[0].name  # type: ignore[union-attr]
    for item in items[1:]:
        total = dtypes.promote_types(total, item.name)  # type: ignore[union-attr]
        if total is None:
            return UNKNOWN
    return DtypeV(total)
