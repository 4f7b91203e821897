"""nn.ModuleList and nn.Sequential as values: their layers known one by one, or
`count` copies of one layer, or a list of unknown length. Apart from modules.py,
which builds and calls them, so that iteration (loops.py) can walk them too."""

from __future__ import annotations

from dataclasses import dataclass, field

from shapelint.notation.symbolic import Expr
from shapelint.ops.values import TupleV, Value


@dataclass(frozen=True)
class ModuleListV(Value):
    """nn.ModuleList / nn.Sequential (sequential=True: calling it chains the items).

    `items` are known one by one; with `count` set, the list is `count` copies of
    its single item (built in a loop of symbolic trip count). `known` False: a
    list whose length is not known (filled in a loop of unknown count)."""

    items: tuple[Value, ...] = ()
    sequential: bool = False
    count: Expr | None = None
    known: bool = True
    # The names torch registers the items under where they are not "0", "1", ...
    # (`Sequential(OrderedDict(...))`, `seq.add_module("conv", ...)`): named_modules()
    # names. Outside equality: the same layers are the same list to the analysis.
    names: tuple[str, ...] | None = field(default=None, compare=False)
    # A Sequential of one or more layers known at its ends, not known item by item
    # (known False): its first layer, its last, and any of them (framed.py).
    ends: tuple[Value, Value, Value] | None = None


def item_names(v: ModuleListV) -> tuple[str, ...]:
    """The names of v's items, as named_modules() gives them."""
    return v.names if v.names is not None else tuple(str(i) for i in range(len(v.items)))


def registered_item(v: Value, name: str) -> Value | None:
    """The item of module list v registered under name, as nn.Module.__getattr__
    finds it (`seq.add_module("pad", ...)` then `seq.pad`); None where v is no
    list known item by item or has no item of that name."""
    if not isinstance(v, ModuleListV) or v.count is not None or not v.known:
        return None
    names = item_names(v)
    return v.items[names.index(name)] if name in names else None


def as_items(v: Value) -> tuple[Value, ...] | None:
    """The elements of a list-like value known one by one, else None."""
    if isinstance(v, TupleV):
        return v.items
    if isinstance(v, ModuleListV) and v.known and v.count is None:
        return v.items
    return None
