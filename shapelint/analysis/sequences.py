"""Lists whose length is a formula: `xs = []` filled by `xs.append(t)` in a loop
of n turns, and what torch.stack / torch.cat make of them.

A list of known items is a TupleV; a list of `count` items of one shape (the
join over the loop's turns) is a SeqV; one with items known at its ends a FramedV,
and pairs of such lists an EndsV (framed.py). Nothing below the analysis sees a SeqV:
every other consumer gets UNKNOWN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shapelint.notation.symbolic import Expr
from shapelint.ops.values import UNKNOWN, IntV, StrV, TensorV, TupleV, Value

# The longest string iterated character by character; a longer one is a loop of
# known count over characters not listed.
MAX_CHARACTERS = 4096


def characters(v: Value) -> TupleV | SeqV | None:
    """What iterating a known str yields: its characters, each a str of one, in order
    (`for t in "CRC"`, `list(mode)`); None for any other value."""
    if not isinstance(v, StrV) or v.value is None:
        return None
    if len(v.value) > MAX_CHARACTERS:
        return SeqV(StrV(), Expr.const(len(v.value)))
    return TupleV(tuple(StrV(c) for c in v.value))


@dataclass(frozen=True)
class SeqV(Value):
    """`count` values shaped like `item` (count None: a number nobody knows)."""

    item: Value
    count: Expr | None


@dataclass(frozen=True)
class FramedV(Value):
    """A list: the items of `head`, then `count` items shaped like `item` (count a
    formula, 0 or more), then the items of `tail`; head or tail is not empty
    (analysis/framed.py)."""

    head: tuple[Value, ...]
    item: Value
    count: Expr
    tail: tuple[Value, ...]


@dataclass(frozen=True)
class EndsV(Value):
    """`count` items, surely one or more: the first is like `first`, the last like
    `last` (the same item where count is 1), and every one like `item`
    (analysis/framed.py)."""

    first: Value
    last: Value
    item: Value
    count: Expr


def appended(items: TupleV, method: str, args: list[Value]) -> Value:
    """The list after `xs.append(t)`, `xs.extend(ys)`, `xs.insert(i, t)` at a known
    index (clamped to the list, as Python does) or `xs.reverse()` (a method only a
    list has: surely one); UNKNOWN after anything else."""
    xs = items.items
    if method == "append" and len(args) == 1:
        return TupleV(xs + (args[0],), "list")
    if method == "extend" and len(args) == 1 and isinstance(args[0], TupleV):
        return TupleV(xs + args[0].items, "list")
    if method == "reverse" and not args:
        return TupleV(xs[::-1], "list")
    index = args[0] if method == "insert" and len(args) == 2 else None
    i = index.value.value if isinstance(index, IntV) and index.value is not None else None
    if i is not None:
        i = max(0, i + len(xs)) if i < 0 else min(i, len(xs))
        return TupleV(xs[:i] + (args[1],) + xs[i:], "list")
    return UNKNOWN


def popped(items: TupleV, args: list[Value], kwargs: dict[str, Value]) -> tuple[Value, Value]:
    """(the list after, the item) of `xs.pop()` / `xs.pop(i)` at a known index;
    both unknown otherwise (or on an empty list, where Python raises)."""
    n = len(items.items)
    index = args[0] if args else kwargs.get("index", IntV(Expr.const(-1)))
    i = index.value.value if isinstance(index, IntV) and index.value is not None else None
    if i is None or not -n <= i < n or kwargs.keys() - {"index"} or len(args) > 1:
        return UNKNOWN, UNKNOWN
    i %= n
    return TupleV(items.items[:i] + items.items[i + 1 :]), items.items[i]


def stack_or_cat(qual: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """torch.stack / torch.cat of a SeqV; None when the call is not one."""
    if qual not in ("torch.stack", "torch.cat", "torch.concat", "torch.concatenate"):
        return None
    seq = args[0] if args else kwargs.get("tensors")
    if not isinstance(seq, SeqV):
        return None
    dim = args[1] if len(args) > 1 else kwargs.get("dim", IntV(Expr.const(0)))
    item = seq.item
    d = dim.value.value if isinstance(dim, IntV) and dim.value is not None else None
    if not isinstance(item, TensorV) or item.rank is None or d is None:
        return TensorV(None, item.dtype if isinstance(item, TensorV) else None)
    shape = list(item.shape)  # type: ignore[arg-type]
    if qual == "torch.stack":
        pos = d + len(shape) + 1 if d < 0 else d
        if not 0 <= pos <= len(shape):
            return TensorV(None, item.dtype)
        shape.insert(pos, seq.count)
        return TensorV(tuple(shape), item.dtype)
    pos = d + len(shape) if d < 0 else d
    if not 0 <= pos < len(shape):
        return TensorV(None, item.dtype)
    size = shape[pos]
    shape[pos] = size * seq.count if isinstance(size, Expr) and seq.count is not None else None
    return TensorV(tuple(shape), item.dtype)


def as_operands(values):
    """A call's arguments (a list, or a dict of keywords) with each SeqV's item
    standing for its items: whether autograd tracks a stack of them is whether it
    tracks the item every turn made."""
    if isinstance(values, dict):
        return {k: v.item if isinstance(v, SeqV) else v for k, v in values.items()}
    return [v.item if isinstance(v, SeqV) else v for v in values]


def hidden(v: Value) -> Value:
    """What code that does not know SeqV sees of v."""
    return UNKNOWN if isinstance(v, (SeqV, FramedV, EndsV)) else v


def unbound(t: TensorV, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """x.unbind(dim) along a dimension of symbolic size: that many slices."""
    dim = args[0] if args else kwargs.get("dim", IntV(Expr.const(0)))
    d = dim.value.value if isinstance(dim, IntV) and dim.value is not None else None
    if t.rank is None or d is None or not -t.rank <= d < t.rank:
        return UNKNOWN
    pos = d % t.rank
    shape = t.shape[:pos] + t.shape[pos + 1 :]  # type: ignore[index]
    count = t.shape[pos]  # type: ignore[index]
    return SeqV(TensorV(shape, t.dtype), count if isinstance(count, Expr) else None)


def never_counts(count: Expr, n: int) -> bool:
    """Whether no integer values of count's names make it n, so that unpacking count
    values into n names raises whatever they are: a number the other coefficients'
    divisor does not divide (`2·k` against 3), or a power that n is not (`f²`
    slices of `x.unbind(-2)` into two names: f² = 2 has no integer f). Integers
    of either sign and 0 count: a loop's count may be 0."""
    if count.is_too_big():
        return False
    if count.never_equal(Expr.const(n)):
        return True
    if len(count.terms) != 1:
        return False
    ((mono, c),) = count.terms.items()
    if not mono or any(not isinstance(atom, str) for atom, _ in mono) or n % c:
        return False
    power = math.gcd(*(p for _, p in mono))  # the monomial is a power-th power, any one
    if power < 2:
        return False
    q = n // c
    root = round(abs(q) ** (1 / power))
    return not any((s * b) ** power == q for b in (root - 1, root, root + 1) for s in (1, -1))


_MAX_REPEAT = 256  # longest `(x,) * n` spelled out item by item


def repeated(left: Value, right: Value) -> Value | None:
    """`(flag,) * depth` (or `n * [x]`) at a known count: the items, repeated; a
    list of one item times a formula, that many of it (a SeqV). None: not a
    repetition, or a count not known here."""
    seq, n = (left, right) if isinstance(left, TupleV) else (right, left)
    if not isinstance(seq, TupleV) or not isinstance(n, IntV) or n.value is None:
        return None
    k = n.value.value
    if k is None and len(seq.items) == 1 and seq.kind == "list":
        return SeqV(seq.items[0], n.value)  # `[hidden] * (depth - 1)`: depth - 1 of them
    if k is None or len(seq.items) * k > _MAX_REPEAT:
        return None
    # a list's repetition is a new list (which `.copy()` and `.insert` are methods
    # of); any tuple's, a namedtuple's too, a plain tuple
    return TupleV(seq.items * max(k, 0), "list" if seq.kind == "list" else None)
