"""Lists of symbolic length whose end items are known.

`[c_in] + [planes for _ in range(n - 1)] + [c_out]` holds n + 1 items whatever n
is, of which the first is c_in and the last c_out; a SeqV (sequences.py) keeps
only what every item is, so `[-1]` of it, and the last of the layers built over
its neighbouring pairs, were not known. A FramedV keeps the items known at each
end apart from the `count` items between them (count may be 0: the ends then
meet). `zip(chans[:-1], chans[1:])` of such lists is an EndsV: one or more items
of which the first and the last are known in part (the item after the head may
be the middle's or the tail's), each of them like `item`. A comprehension over
an EndsV keeps its three values through its element, and `nn.Sequential(*...)`
of such layers is a module list whose call runs its first layer on the input
and gives the last layer's output (`chained`): what any layer between them
does is run to a stable shape, muted, so that only the first layer's own checks
are reported. Every other consumer sees no items (a ModuleListV not known).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis.sequences import EndsV, FramedV, SeqV
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import UNKNOWN, IntV, ObjectV, SliceV, TupleV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, Frame

# A layer between the first and the last is run on widening inputs this many
# times at most before its output is taken as not known.
_MAX_WIDENING = 4

# The attribute of call_resolution's `*args` marker that holds a starred EndsV.
STARRED_ENDS = "ends"


def framed(head: tuple[Value, ...], item: Value, count: Expr, tail: tuple[Value, ...]) -> Value:
    return FramedV(head, item, count, tail) if head or tail else SeqV(item, count)


def _listed(v: Value) -> bool:
    """A list display or `list(...)`: `+` of a list with a tuple raises."""
    return isinstance(v, TupleV) and v.kind == "list"


def concat(left: Value, right: Value) -> Value | None:
    """`left + right` of a list known item by item and a list of symbolic length
    (or a FramedV); None for anything else."""
    if _listed(left) and isinstance(right, SeqV) and right.count is not None:
        return FramedV(left.items, right.item, right.count, ())  # type: ignore[attr-defined]
    if isinstance(left, SeqV) and left.count is not None and _listed(right):
        return FramedV((), left.item, left.count, right.items)  # type: ignore[attr-defined]
    if isinstance(left, FramedV) and _listed(right):
        return FramedV(left.head, left.item, left.count, left.tail + right.items)  # type: ignore[attr-defined]
    if _listed(left) and isinstance(right, FramedV):
        return FramedV(left.items + right.head, right.item, right.count, right.tail)  # type: ignore[attr-defined]
    return None


def _int(v: Value | None) -> int | None:
    if isinstance(v, IntV) and v.value is not None:
        return v.value.value
    return None


def subscript(base: FramedV, idx: Value) -> Value:
    """`xs[i]` of an item at a known end; `xs[k:]` / `xs[:-k]` dropping known end
    items. Anything else is not known (an item past the head may be the middle's
    or the tail's)."""
    i = _int(idx)
    if i is not None:
        if 0 <= i < len(base.head):
            return base.head[i]
        if -len(base.tail) <= i < 0:
            return base.tail[i]
        return UNKNOWN
    if not isinstance(idx, SliceV) or (idx.step is not None and _int(idx.step) != 1):
        return UNKNOWN
    lo = 0 if idx.lower is None else _int(idx.lower)
    hi = 0 if idx.upper is None else _int(idx.upper)
    if lo is None or hi is None or not 0 <= lo <= len(base.head) or not -len(base.tail) <= hi <= 0:
        return UNKNOWN
    return framed(base.head[lo:], base.item, base.count, base.tail[: len(base.tail) + hi])


def length(v: FramedV) -> IntV:
    return IntV(v.count + Expr.const(len(v.head) + len(v.tail)))


def _either(a: Value, b: Value) -> Value:
    if a == b:
        return a
    if isinstance(a, IntV) and isinstance(b, IntV):
        return IntV(None)
    return UNKNOWN


def _every(values: tuple[Value, ...]) -> Value:
    out = values[0]
    for v in values[1:]:
        out = _either(out, v)
    return out


def zipped(seqs: list[Value]) -> EndsV | None:
    """`zip(*seqs)` of lists of one length, count middle items and as many known at
    the ends (`zip(xs[:-1], xs[1:])`); None where their lengths are not the same
    formula."""
    if not all(isinstance(s, (FramedV, SeqV)) for s in seqs):
        return None
    counts = {s.count for s in seqs}
    ends = {len(s.head) + len(s.tail) if isinstance(s, FramedV) else 0 for s in seqs}
    if len(counts) != 1 or None in counts or len(ends) != 1 or ends == {0}:
        return None
    firsts, lasts, items = [], [], []
    for s in seqs:
        head = s.head if isinstance(s, FramedV) else ()
        tail = s.tail if isinstance(s, FramedV) else ()
        # the middle may be empty: the first item past a head-less list may be the tail's
        firsts.append(head[0] if head else _either(s.item, tail[0]))
        lasts.append(tail[-1] if tail else _either(s.item, head[-1]))
        items.append(_every((*head, s.item, *tail)))
    return EndsV(
        TupleV(tuple(firsts)), TupleV(tuple(lasts)), TupleV(tuple(items)), counts.pop() + ends.pop()
    )


# A comprehension whose element may change state runs it once per item: three
# runs of it would not be Python's.
_MUTATING = frozenset(
    (
        "append",
        "extend",
        "insert",
        "add_module",
        "register_buffer",
        "register_parameter",
        "update",
        "setdefault",
        "pop",
        "__setitem__",
    )
)


def ends_of(an: Analyzer, node: ast.ListComp | ast.GeneratorExp, inner: Frame, seq: EndsV):
    """`[f(p) for p in seq]`'s first and last items, f of seq's first and last (the
    caller runs f once more on seq's any item, as the turn its calls count for);
    None where f may change state."""
    if any(
        isinstance(n, ast.NamedExpr)
        or isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in _MUTATING
        for n in ast.walk(node.elt)
    ):
        return None
    made = []
    for which in (seq.first, seq.last):
        inner.records = {}  # the turn run again for any item counts the calls
        an.assign(node.generators[0].target, which, inner, None)
        made.append(an.eval(node.elt, inner))
    return made


def spread(args: list[Value], kwargs: dict[str, Value]) -> tuple[Value, Value, Value] | None:
    """The first, last and any item of the one `*` argument a call was given where it
    is an EndsV (call_resolution.arguments keeps it so); None otherwise."""
    if len(args) != 1 or kwargs or not isinstance(args[0], ObjectV):
        return None
    held = args[0].attr(STARRED_ENDS)
    if not isinstance(held, EndsV):
        return None
    return held.first, held.last, held.item


def chained(
    an: Analyzer, layers: tuple[Value, Value, Value], node: ast.Call, x: Value, frame: Frame
) -> Value:
    """A Sequential of `layers` called on x: the first layer runs on x (its checks
    are reported); the last runs on x where it may be the first, else on what a
    layer before it gave, which a layer like any of them is run on until its
    shape is stable. Only the first layer's checks are reported, and no cost."""
    first, last, item = layers
    y = an.call_value(first, node, [x], {}, frame)
    saved = frame.chained
    frame.chained = node
    try:
        with an.muted():  # type: ignore[attr-defined]
            z = an.join(x, y)  # type: ignore[attr-defined]
            for _ in range(_MAX_WIDENING):
                wider = an.join(z, an.call_value(item, node, [z], {}, frame))  # type: ignore[attr-defined]
                if wider == z:
                    break
                z = wider
            else:
                return UNKNOWN
            return an.call_value(last, node, [z], {}, frame)
    finally:
        frame.chained = saved
