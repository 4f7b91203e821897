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

import ast
from dataclasses import dataclass

from shapelint.analysis import framed
from shapelint.analysis.module_kinds import is_module
from shapelint.analysis.module_loops import MAX_UNROLL
from shapelint.analysis.modules import ModuleListV
from shapelint.analysis.sequences import FramedV, SeqV
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import IntV, NoneV, TupleV, Value, python_constant


@dataclass(frozen=True)
class IteratorV(Value):
    """`iter(xs)` of a list known item by item: the items it has still to yield.
    Each `next` uses one up; the analysis follows that only through a local
    name that nothing else reads (see `consumed_in_place`), and otherwise reads
    off it only what holds wherever it stands (see `next_of`). A loop over it is
    not followed."""

    items: tuple[Value, ...]


def next_of(it: IteratorV, default: Value | None, where_known: bool) -> Value | None:
    """`next(it[, default])`: the first item still to come where the analysis
    knows where the iterator stands (`next(iter(xs))`, a name consumed in place);
    else what any `next` gives, where that is one constant whatever the iterator
    has yielded before (`next(iter(()), None)`, `next(iter((None,)), None)`).
    None: not known here, or Python raises StopIteration."""
    if where_known:
        return it.items[0] if it.items else default
    if default is None:
        return None  # the iterator may be used up: StopIteration
    keys = {_constant_key(v) for v in (*it.items, default)}
    return default if len(keys) == 1 and None not in keys else None


def consumed_in_place(func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Whether the local `name` of func holds an iterator only it can advance: every
    binding is `name = call(...)` (a new object, not another name's or an
    attribute's), it is no parameter, no global or nonlocal, no nested function,
    lambda, class or comprehension mentions it, and every read of it is the first
    argument of `next(...)`. Then the name alone advances what it holds, and its
    next value is the item after the one it gave. Kept on the function's node."""
    cache = func.__dict__.setdefault(_IN_PLACE, {})
    known = cache.get(name)
    if known is None:
        known = cache[name] = _in_place(func, name)
    return known


_IN_PLACE = "_shapelint_iterator_names"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)  # fmt: skip


def _in_place(func, name: str) -> bool:
    a = func.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
    if any(p is not None and p.arg == name for p in params):
        return False
    next_args, assigned = set(), set()
    for node in _walk_own(func):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
        if isinstance(node, _SCOPES) and any(
            isinstance(n, ast.Name) and n.id == name for n in ast.walk(node)
        ):
            return False
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "next"
            and 1 <= len(node.args) <= 2
            and not node.keywords
        ):
            next_args.add(id(node.args[0]))
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                assigned.add(id(node.targets[0]))
    for node in _walk_own(func):
        if isinstance(node, ast.Name) and node.id == name:
            ok = assigned if isinstance(node.ctx, ast.Store) else next_args
            if id(node) not in ok:
                return False
    return True


def _walk_own(func):
    """func's nodes, nested scopes included as nodes but not entered."""
    todo = list(ast.iter_child_nodes(func))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))


def _constant_key(v: Value) -> tuple | None:
    ok, c = python_constant(v)
    return (type(c), c) if ok and not isinstance(c, tuple) else None


def zipped(seqs: list[Value], longest: bool = False, fill: Value | None = None) -> Value | None:
    """`zip(*seqs)`, or `zip_longest(*seqs, fillvalue=fill)` with longest."""
    if not seqs:
        return TupleV(())
    if not longest and any(isinstance(s, FramedV) for s in seqs):
        return framed.zipped(seqs)
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
