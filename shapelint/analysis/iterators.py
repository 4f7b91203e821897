"""`zip`, `itertools.zip_longest`, `enumerate` and `reversed` as the values they
yield, over lists the analysis holds item by item: tuples, module lists (listed,
or `count` copies of one layer) and lists grown in a loop.

A loop takes what they yield like any list: `for f, g in zip_longest(fs, gs)`
turns with `g` None past the end of `gs`, each turn decided by its own items,
and `for i, (a, b) in enumerate(reversed(list(zip(xs, ys))))` nests as Python
nests it. Over a module list the result is a module list (its loop is the
module-list loop: one turn per layer, or count × one); otherwise a tuple.
None: not known here (an operand whose items or length are not known); the
caller then keeps the call as it was."""

from __future__ import annotations

from shapelint.analysis.modules import MAX_UNROLL, ModuleListV, is_module
from shapelint.analysis.sequences import SeqV
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import IntV, NoneV, TupleV, Value


def zipped(seqs: list[Value], longest: bool = False, fill: Value | None = None) -> Value | None:
    """`zip(*seqs)`, or `zip_longest(*seqs, fillvalue=fill)` with longest."""
    if not seqs:
        return TupleV(())
    seqs = [_spelled(s) for s in seqs]
    modular = any(isinstance(s, ModuleListV) or _holds_modules(s) for s in seqs)
    if not all(isinstance(s, (ModuleListV, TupleV)) for s in seqs):
        return ModuleListV(known=False) if modular else None
    lists = [s if isinstance(s, ModuleListV) else ModuleListV(s.items) for s in seqs]
    if not all(ls.known for ls in lists):
        return ModuleListV(known=False)
    if all(ls.count is None for ls in lists):
        lengths = [len(ls.items) for ls in lists]
        n = max(lengths) if longest else min(lengths)
        pad = NoneV() if fill is None else fill
        rows = tuple(
            TupleV(tuple(ls.items[j] if j < len(ls.items) else pad for ls in lists))
            for j in range(n)
        )
        return ModuleListV(rows) if modular else TupleV(rows)
    counts = {ls.count for ls in lists}
    if len(counts) == 1 and all(len(ls.items) == 1 for ls in lists):
        # n copies beside n copies: the same pairs whether the zip stops at the
        # shortest or pads to the longest
        return ModuleListV((TupleV(tuple(ls.items[0] for ls in lists)),), count=counts.pop())
    return ModuleListV(known=False)  # a copied list beside a listed one: lengths not compared


def enumerated(seq: Value, start: Value) -> Value | None:
    """`enumerate(seq, start)`: (index, item) pairs; the index unknown where the
    start is, or where one turn stands for count copies."""
    s = start.value.value if isinstance(start, IntV) and start.value is not None else None

    def index(i: int) -> IntV:
        return IntV(None if s is None else Expr.const(s + i))

    if isinstance(seq, ModuleListV):
        if not seq.known:
            return ModuleListV(known=False)
        if seq.count is not None:
            return ModuleListV(tuple(TupleV((IntV(None), v)) for v in seq.items), count=seq.count)
        return ModuleListV(tuple(TupleV((index(i), v)) for i, v in enumerate(seq.items)))
    if isinstance(seq, TupleV):
        return TupleV(tuple(TupleV((index(i), v)) for i, v in enumerate(seq.items)))
    if isinstance(seq, SeqV):
        return SeqV(TupleV((IntV(None), seq.item)), seq.count)
    return None


def reversed_of(seq: Value) -> Value | None:
    """`reversed(seq)` of a list (a tensor's `__reversed__` is a flip: not here)."""
    if isinstance(seq, ModuleListV):
        if seq.known and seq.count is None:
            return ModuleListV(tuple(reversed(seq.items)))
        # count copies of one layer, or not known: the same either way
        return ModuleListV(seq.items, count=seq.count, known=seq.known)
    if isinstance(seq, TupleV):
        return TupleV(tuple(reversed(seq.items)))
    if isinstance(seq, SeqV):
        return seq
    return None


def _spelled(v: Value) -> Value:
    """A grown list of known length as its items, each what any item is known to be
    (`[(dict(), dict()) for _ in range(depth)]` beside a list of depth layers)."""
    if isinstance(v, SeqV) and v.count is not None and v.count.value is not None:
        if 0 <= v.count.value <= MAX_UNROLL:
            return TupleV((v.item,) * v.count.value)
    return v


def _holds_modules(v: Value) -> bool:
    """A tuple of layers (a module list reordered into a tuple)."""
    return isinstance(v, TupleV) and any(is_module(i) for i in v.items)
