"""Iterating an instance of a project class by its `__getitem__`, and its `len()`.

Python iterates an object whose type has no `__iter__` but a `__getitem__` by the
old sequence protocol: `iter()` asks `obj[0]`, `obj[1]`, ... until one raises
IndexError (or StopIteration), which ends the iteration quietly. The mixin `__iter__`
of `collections.abc.Sequence` (and MutableSequence) is the same walk written in
Python (`self[i]` until IndexError), and its `__contains__`, `__reversed__`,
`index` and `count` are built on that walk and `__len__`. So a `for`, a
comprehension, `list()`, `tuple()`, `zip`, `enumerate`, an unpacking and `in`
over such an instance see the items its `__getitem__` returns for 0, 1, ...
(transformers' `config.per_layer_config`, a Sequence of one config per layer).

The items are known only where every step is: each `obj[i]` before the end returned
without a step that may raise (may_raise.py: an undecided `raise IndexError` at i
would end the walk there, so a count taken past it would be wrong), and `obj[n]`
surely raised IndexError (its class or a subclass of it, as the protocol's `except`
takes it; StopIteration too where no Sequence mixin runs the walk, since CPython's
sequence iterator stops on either). The raising call's records are dropped: the
walk catches what it raised. Target runs only (may_raise counts there).

`len(obj)` calls `type(obj).__len__`; Python takes the int it returns.
"""

from __future__ import annotations

import ast

from shapelint.analysis import may_raise, raising
from shapelint.analysis.attributes import builds_as_type, find_method, outside_bases
from shapelint.analysis.defs import Analyzer, ClassDef
from shapelint.analysis.repetition import ONE, collected, merge
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import IntV, ObjectV, TupleV, Value, python_constant

# Most items a walk asks for: a model's layers, one config each.
MAX_ITEMS = 256

_INSTANCES = ("<class>", "<config>")

# Classes outside the project that define no `__iter__`, `__getitem__`, `__len__` or
# `__contains__` of their own: along them Python falls back on the old protocol.
_PLAIN = frozenset(
    {"object", "builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol",
     "torch.nn.Module", "torch.nn.modules.module.Module"}
)  # fmt: skip
# collections.abc's sequence classes, whose mixin `__iter__` walks `self[i]` until
# IndexError (and their own bases, which add no method of the walk's).
_SEQUENCES = frozenset(
    {f"{m}.{c}" for m in ("collections.abc", "typing") for c in ("Sequence", "MutableSequence")}
    | {f"{m}.{c}" for m in ("collections.abc", "typing")
       for c in ("Reversible", "Collection", "Sized", "Iterable", "Container")}
)  # fmt: skip


def _walk_kind(an: Analyzer, v: Value) -> tuple[ClassDef, bool] | None:
    """(v's class, whether a Sequence mixin runs the walk) where iterating v walks
    `v[i]` by the project's `__getitem__`; None otherwise."""
    if not (an.specialize and isinstance(v, ObjectV) and v.kind.startswith(_INSTANCES)):
        return None
    cd = an.class_of(v.kind.partition(">")[2])
    if cd is None or find_method(an, cd, "__iter__") is not None:
        return None
    if find_method(an, cd, "__getitem__") is None:
        return None
    if not builds_as_type(an, cd):
        return None  # (ABCMeta refuses a Sequence subclass that leaves __len__ abstract)
    outside = outside_bases(an, cd)
    if outside is None or any(b not in _PLAIN and b not in _SEQUENCES for b in outside):
        return None  # a base that may iterate its own way (list, dict, a torch container)
    return cd, any(b in _SEQUENCES for b in outside)


def walks_by_index(an: Analyzer, v: Value) -> bool:
    """Whether iterating v asks its project `__getitem__` for 0, 1, ..."""
    return _walk_kind(an, v) is not None


def items(an: Analyzer, v: Value, at: ast.expr, frame) -> TupleV | None:
    """What iterating v yields, in order, where v is walked by its `__getitem__`
    and every step is known; None otherwise (the caller keeps v as it was)."""
    got = _walk(an, v, at, frame, None)
    return None if got is None else TupleV(tuple(got))


def contains(an: Analyzer, v: Value, x: Value, at: ast.expr, frame) -> bool | None:
    """`x in v` where v's class defines no `__contains__` and v is walked by its
    `__getitem__`: Python walks it (Sequence's mixin `__contains__`, or the protocol
    itself) until an item is x or equals it, asking for no item after that one.
    Decided where x and every item asked for are constants Python compares by value
    (a float's NaN is no value equal to itself: not decided); None otherwise."""
    ok, want = python_constant(x)
    if not ok or isinstance(want, float):
        return None

    def equal(item: Value) -> bool | None:
        known, value = python_constant(item)
        return None if not known or isinstance(value, float) else value == want

    got = _walk(an, v, at, frame, equal)
    if got is None:
        return None
    return bool(got) and equal(got[-1]) is True


def _walk(an: Analyzer, v: Value, at: ast.expr, frame, until) -> list[Value] | None:
    """The items iterating v yields, as far as the first for which until (an item's
    test: True ends the walk there, None leaves it undecided) holds, or to its end;
    None where a step is not known."""
    kind = _walk_kind(an, v)
    if kind is None:
        return None
    assert isinstance(v, ObjectV)
    ends = "(IndexError)" if kind[1] else "(IndexError, StopIteration)"
    stop = ast.parse(ends, mode="eval").body
    got: list[Value] = []
    runs: list[dict] = []  # each returning call's records

    def done() -> list[Value]:
        for run in runs:  # the raising call's are not: the walk caught it
            merge(frame.records, run, ONE, "")
        return got

    for i in range(MAX_ITEMS + 1):
        call = ast.copy_location(
            ast.Call(ast.Attribute(at, "__getitem__", ast.Load()), [ast.Constant(i)], []), at
        )
        with may_raise.apart(), collected(frame) as records:
            start = may_raise.count()
            item = an.call_method(v, "__getitem__", call, [IntV(Expr.const(i))], {}, frame)
            quiet = may_raise.count() == start
        exc = raising.take()
        if exc is not None:
            if raising.catches(stop, exc) is not True:
                raising.pending(exc)  # the walk does not end so: the caller's to say
                return None
            return done()
        if not quiet or i == MAX_ITEMS:
            return None
        runs.append(records)
        got.append(item)
        if until is not None:
            hit = until(item)
            if hit is None:
                return None
            if hit:
                return done()
    return None


def walked(an: Analyzer, v: Value, at: ast.expr, frame) -> Value:
    """v's items where it is walked by its `__getitem__` and they are known, else v."""
    got = items(an, v, at, frame)
    return v if got is None else got


def length(an: Analyzer, v: Value, at: ast.expr, frame) -> IntV | None:
    """`len(v)` of an instance of a project class whose MRO defines `__len__`: the
    int it returns (a negative one Python refuses: not known); None where v is no
    such instance."""
    if not (an.specialize and isinstance(v, ObjectV) and v.kind.startswith(_INSTANCES)):
        return None
    cd = an.class_of(v.kind.partition(">")[2])
    if cd is None or find_method(an, cd, "__len__") is None:
        return None
    call = ast.copy_location(ast.Call(ast.Attribute(at, "__len__", ast.Load()), [], []), at)
    n = an.call_method(v, "__len__", call, [], {}, frame)
    exc = raising.take()
    if exc is not None:
        raising.pending(exc)
        return IntV(None)
    if type(n) is IntV and n.value is not None:
        if n.value.value is None or n.value.value >= 0:
            return n
    return IntV(None)
