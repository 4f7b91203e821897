"""An item of a constructor's sequence parameter at a constant index is a size of
its own: `channels[-1]`, and `last_dim` of `init_dim, *_, last_dim = channels`, so
that `nn.Linear(channels[-1] * 2, ...)` after a conv to `last_dim` channels is a
conflict no sizes satisfy, as `2·dim` against `dim` is.

A parameter with neither default nor annotation is a size symbol in `check`
(specialized.init_param); subscripted or unpacked it holds a sequence, whose items are
named by where they sit, `p[i]` or `p[-k]`. Two names may be one item
(`channels[-1]` is `channels[9]` for ten channels): each is a constructor size of its
own, independent of the others (declare_independent), so a conflict between two of
them is the constraint it imposes (SHP318), and an error only where no sizes at all
satisfy it. A caller's construction substitutes the items of a sequence it gives
(`learning.item_binding`) and forgets them where it gives no sequence it lists
(`learning.forget`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shapelint.notation.symbolic import Expr
from shapelint.ops.values import IntV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer


def _sequence_param(an: Analyzer, frame, base: Value) -> str | None:
    """The constructor parameter base is the size symbol of, in its __init__."""
    fd = frame.func
    if fd is None or fd.cls is None or fd.node.name != "__init__" or an.specialize:
        return None
    if not isinstance(base, IntV) or base.value is None:
        return None
    p = base.value.as_name()
    if p is None or p not in an.init_size_names(fd.qualname) or frame.env.get(p) != base:
        return None
    return p


def _named(an: Analyzer, frame, p: str, index: int) -> IntV:
    name = f"{p}[{index}]"
    an.size_params.add(name)
    an.add_init_size(frame.func.qualname, name)
    return IntV(Expr.name(name))


def item(an: Analyzer, frame, base: Value, index: Value) -> IntV | None:
    """`p[i]` for a constant int i, in p's constructor; None otherwise."""
    if not (isinstance(index, IntV) and index.value is not None and index.value.value is not None):
        return None
    p = _sequence_param(an, frame, base)
    return None if p is None else _named(an, frame, p, index.value.value)


def unpacked(an: Analyzer, frame, base: Value, n: int, star: int | None) -> list | None:
    """The items n targets unpack p into (the starred one, at star, None: its items
    are not listed); None where base is no such parameter."""
    p = _sequence_param(an, frame, base)
    if p is None:
        return None
    if star is None:
        return [_named(an, frame, p, i) for i in range(n)]
    return [
        _named(an, frame, p, i) if i < star else None if i == star else _named(an, frame, p, i - n)
        for i in range(n)
    ]


def aliases(sizes: set[str]) -> list[tuple[str, str]]:
    """The pairs of item sizes that may be one item: `p[i]` and `p[-k]` of one p."""
    items: dict[str, list[tuple[str, int]]] = {}
    for name in sizes:
        p = names_of(name)
        if p != name:
            try:
                items.setdefault(p, []).append((name, int(name[len(p) + 1 : -1])))
            except ValueError:
                continue
    return [(a, b) for found in items.values() for a, i in found for b, j in found if i >= 0 > j]


def names_of(name: str) -> str:
    """The parameter an item's name names (`channels` of `channels[-1]`), or the name."""
    return name.partition("[")[0] if name.endswith("]") else name
