"""The hot paths' cheaper spellings do what the standard library's do (the oracle):
values.replaced is dataclasses.replace, field by field, the fields outside equality
included; the scopes that are classes, not @contextmanager generators, restore
their state when the block raises; the value classes' faster `__init__` builds what
the one dataclasses generated builds, field by field; the walks kept on a node
(a function's own returns, a dataclass's own fields) give what ast.walk and
dataclasses.fields give; the nodes that hold a call, found in one walk, are the ones
whose own ast.walk reaches it; what a path split reads of a function off its node
index is what an ast.walk of it reads; a module list grown in place is the new list
wherever it was held, each unchanged module walked once per change."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import sys
import types
from contextvars import ContextVar

import pytest

import shapelint.analysis
from shapelint import frozen_init
from shapelint.analysis import (
    aliasing,
    call_path,
    callable_values,
    config_classes,
    dynamic,
    holders,
    repetition,
)
from shapelint.analysis.module_lists import ModuleListV
from shapelint.analysis.recorder import SelfRecorder
from shapelint.notation import symbolic
from shapelint.notation.symbolic import Expr, fact_scope
from shapelint.ops.values import (
    BufferV,
    Cost,
    IntV,
    ObjectV,
    OpIssue,
    OptionalV,
    ParameterV,
    StrV,
    TensorV,
    TupleV,
    replaced,
)
from shapelint.scoped import Bound


def _fields(obj) -> dict:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


N, D = Expr.name("n"), Expr.name("d")
ORIGIN = frozenset({object()})
CASES = [
    (TensorV((N, D), "float32", grad=True), {"origin": ORIGIN}),
    (TensorV((N, D), "float32", grad=True), {"grad": False, "origin": frozenset()}),
    (TensorV((N,), None), {"storage": TensorV((N,)), "view": True, "contiguous": None}),
    (TensorV((N, D), at_most=((0, (D,)),)), {"shape": (D, N)}),
    (ParameterV((D,), "float32", requires_grad=None), {"origin": ORIGIN}),
    (BufferV((D,), "int64"), {"grad": False}),
    (TupleV((IntV(N), StrV("x", interned=True))), {"items": (IntV(D),)}),
    (IntV(N), {}),
    (ObjectV("<class>M", (("a", IntV(N)),)), {"kind": "<class>K"}),
    (Cost(Expr.const(4), Expr.const(0), None, notes=["x"]), {"saved": None}),
    (Cost(Expr.const(0), None, None), {"backward": N, "notes": []}),
    (OpIssue("SHP301", "m", ("arg", 0), names=frozenset({"n"})), {"message": "other"}),
]


@pytest.mark.parametrize("obj, changes", CASES, ids=lambda c: type(c).__name__)
def test_replaced_is_dataclasses_replace(obj, changes):
    want = dataclasses.replace(obj, **changes)
    got = replaced(obj, **changes)
    assert type(got) is type(want)
    assert _fields(got) == _fields(want)  # compare=False fields too (origin, storage, ...)
    assert got == want
    assert got is not obj


def test_replaced_recomputes_post_init():
    # Cost.__post_init__ derives backward and saved from flops; replace passes the
    # object's own values for them, so nothing is derived again: same as replace.
    c = Cost(Expr.const(0), Expr.const(0), Expr.const(0))
    assert _fields(replaced(c, flops=N)) == _fields(dataclasses.replace(c, flops=N))


class _Boom(Exception):
    pass


def test_bound_restores_on_raise():
    var: ContextVar[int] = ContextVar("v", default=1)
    with pytest.raises(_Boom), Bound(var, 2):
        assert var.get() == 2
        raise _Boom
    assert var.get() == 1


def test_scopes_restore_on_raise():
    frame = type("F", (), {})()
    frame.records = {"kept": 1}
    before = (
        aliasing.recorders(),
        dynamic.in_generic_pass(),
        symbolic.bounded_dims((N,)),
    )
    with pytest.raises(_Boom):
        with aliasing.building("r"), aliasing.apart(), dynamic.generic(), fact_scope():
            with call_path.paused(), repetition.collected(frame) as inner:
                assert aliasing.recorders() == ()
                assert dynamic.in_generic_pass()
                assert inner == {} and frame.records is inner
                raise _Boom
    assert frame.records == {"kept": 1}
    assert (aliasing.recorders(), dynamic.in_generic_pass(), symbolic.bounded_dims((N,))) == before


def test_fact_scope_inherits_at_entry():
    # inherit=True starts from the facts of the scope the block is entered in.
    with fact_scope():
        symbolic.record_divides(N, D)
        with fact_scope(inherit=True):
            assert (N // D * D).simplify() == N
        with fact_scope():
            assert (N // D * D).simplify() != N


# Each value class's faster __init__ against the one dataclasses generated (kept in
# frozen_init.GENERATED): the same slots set to the same values, __post_init__'s
# changes included, on defaults, positional, keyword-only and factory arguments.
INIT_CASES = [
    (TensorV, (), {}),
    (TensorV, ((N, D), "float32"), {"grad": True, "origin": ORIGIN, "view": True}),
    (TensorV, ((N, Expr.const(2) * D // 2),), {"at_most": ((0, (D,)),), "contiguous": None}),
    (TensorV, ([N, D],), {"storage": TensorV((N,))}),  # a list shape: __post_init__ makes a tuple
    (ParameterV, ((D,), "float32", None), {"grad": True}),
    (ParameterV, ((D,),), {}),
    (BufferV, ((D,), "int64"), {"grad": False}),
    (IntV, (N,), {}),
    (IntV, (), {}),
    (StrV, ("x", True), {}),
    (TupleV, ((IntV(N), StrV("x")),), {"kind": "list"}),
    (ObjectV, ("<class>M",), {}),
    (OpIssue, ("SHP301", "m"), {"names": frozenset({"n"}), "learned": True}),
]


def _slots(obj) -> dict:
    return {f.name: getattr(obj, f.name, "<unset>") for f in dataclasses.fields(obj)}


@pytest.mark.parametrize("cls, args, kwargs", INIT_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_fast_init_is_the_generated_init(cls, args, kwargs):
    want = cls.__new__(cls)
    frozen_init.GENERATED[cls](want, *args, **kwargs)
    got = cls(*args, **kwargs)
    assert cls.__init__ is not frozen_init.GENERATED[cls]
    assert type(got) is cls
    assert _slots(got) == _slots(want)


def test_fast_init_keeps_each_signature_and_refusal():
    assert TensorV in frozen_init.GENERATED and OpIssue in frozen_init.GENERATED
    for cls, generated in frozen_init.GENERATED.items():
        assert inspect.signature(cls.__init__) == inspect.signature(generated), cls
        assert cls.__init__.__qualname__ == generated.__qualname__
    with pytest.raises(TypeError):
        TensorV(None, None, None)  # grad is keyword-only
    with pytest.raises(TypeError):
        OptionalV()  # value has no default
    with pytest.raises(dataclasses.FrozenInstanceError):
        TensorV().shape = ()


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_fast_init_subclasses_store_where_the_slot_is():
    # An inherited fast __init__ stores through its class's slots: exact only where
    # no class between the instance's and that one serves a field another way.
    for info in pkgutil.walk_packages(shapelint.analysis.__path__, "shapelint.analysis."):
        importlib.import_module(info.name)
    for cls in frozen_init.GENERATED:
        names = {f.name for f in dataclasses.fields(cls)}
        for sub in _subclasses(cls):
            below = sub.__mro__[: sub.__mro__.index(cls)]
            assert not any(n in k.__dict__ for k in below for n in names), (sub, cls)


def test_fast_init_leaves_what_it_cannot_reproduce():
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int = 1

    @dataclasses.dataclass(frozen=True, slots=True)
    class WithInitVar:
        a: int
        b: dataclasses.InitVar[int] = 0

    @dataclasses.dataclass(slots=True)
    class NotFrozen:
        a: int

    for cls in (NoSlots, WithInitVar, NotFrozen):
        init = cls.__init__
        assert frozen_init.fast_init(cls) is cls and cls.__init__ is init
        assert cls not in frozen_init.GENERATED


RETURNS_SOURCE = """
def f(x, flag):
    if flag:
        return x
    try:
        y = [lambda: 1 for _ in range(3)]
    except ValueError as e:
        return e
    else:
        while flag:
            with open(x) as fh:
                return fh
    finally:
        pass
    match flag:
        case 1:
            return 1
        case _:
            pass
    def inner():
        return 2
    class K:
        def m(self):
            return 3
    for i in y:
        if i:
            continue
        return i
    return None
"""


def _returns_by_ast_walk(fn) -> list[ast.Return]:
    """The oracle: ast.walk of fn's body, less what a nested scope holds."""
    nested = [n for n in ast.walk(fn) if n is not fn and isinstance(n, _SCOPES)]
    inside = {id(m) for n in nested for m in ast.walk(n)}
    return [n for n in ast.walk(fn) if isinstance(n, ast.Return) and id(n) not in inside]


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


class _Untouchable(list):
    """A node list no walk for statements may open."""

    def __iter__(self):
        raise AssertionError("the walk opened an expression")


def test_own_returns_are_the_scope_s_returns_and_open_no_expression():
    fn = ast.parse(RETURNS_SOURCE).body[0]
    want = _returns_by_ast_walk(fn)
    assert len(want) == 6
    # every expression's list of nodes made unreadable: a return is never in one
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            node.args = _Untouchable(node.args)
    got = dynamic.own_returns(fn)
    assert sorted(map(id, got)) == sorted(map(id, want))
    assert dynamic.own_returns(fn) is got  # kept on the node


FIELDS_SOURCE = """
import dataclasses
import typing
from dataclasses import dataclass, field
from typing import ClassVar

@dataclass
class Config:
    dim: int
    heads: int = 8
    registry: ClassVar[dict] = {}
    kinds: typing.ClassVar[tuple] = ()
    quoted: "ClassVar[int]" = 3
    derived: int = field(init=False, default=0)
    drop: float = field(default=0.1)
    name: str = "c"
"""


def test_dataclass_own_fields_are_the_init_fields_python_makes(monkeypatch):
    tree = ast.parse(FIELDS_SOURCE)
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    # a module of its own, as dataclasses reads a quoted ClassVar through it
    module = types.ModuleType("shapelint_fields_oracle")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(tree, "<fields>", "exec", dont_inherit=True), module.__dict__)
    want = [f.name for f in dataclasses.fields(module.Config) if f.init]
    assert "quoted" not in want and "derived" not in want
    got = config_classes.own_fields(node)
    assert [name for name, _ in got] == want
    assert config_classes.own_fields(node) is got  # read off the tree once


ENCLOSING_SOURCE = """
def f(self, x, n=2):
    a = [locals() for _ in range(n)]
    for i in range(n):
        if i:
            x = g(lambda y: h(y, locals()), x)[0]
    while x:
        b: int = k(locals())
    with m(x) as c:
        try:
            return {q: locals() for q in c}
        except E as e:
            raise F(locals()) from e
"""


def test_enclosing_is_every_node_that_holds_the_call_outermost_first():
    from shapelint.analysis import frame_locals

    fn = ast.parse(ENCLOSING_SOURCE).body[0]
    other = ast.parse("g(locals())").body[0].value
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call)]
    assert len(calls) == 12
    for call in calls:
        # the oracle: each node of fn whose ast.walk reaches call, in ast.walk's
        # (breadth-first, so outermost-first) order
        want = [n for n in ast.walk(fn) if any(m is call for m in ast.walk(n))]
        assert frame_locals.enclosing(fn, call) == want
    assert frame_locals.enclosing(fn, other) is None


PATHS_SOURCE = """
import os

def f(self, x, mode, flag=None, *rest, **kw):
    global G
    if mode:
        y = x
        self.cache = y
    else:
        y, (z, *w) = x, (1, 2)
    if flag:
        import numpy.linalg as la, json
        from os import path as p
        self.other.n = 1
    if self.pool:
        del q
        x = [v for v in (lambda t: (s := t))(x)]
    for i in range(3):
        def g():
            nonlocal i
            self.seen = i
        class K:
            attr = 1
        self.cache.count += 1
        x[i] = z
    if x:
        return self.pool
    if mode:
        k = 1
    with open(p) as fh:
        u = fh.read()
    return y
"""


def _bound_by_ast_walk(fnode):
    """The oracle: one ast.walk of the function, as path_split first read it."""
    first = fnode.args.args[0].arg if fnode.args.args else None
    names, attrs = set(), set()
    for node in ast.walk(fnode):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif (
            isinstance(node, ast.Attribute)
            and not isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id == first
        ):
            attrs.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node is not fnode:
                names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names), frozenset(attrs)


def _worth_by_ast_walk(stmt, rest):
    """The oracle: the branches' stores against an ast.walk of each later statement."""
    stored = set()
    for node in (n for s in (*stmt.body, *stmt.orelse) for n in ast.walk(s)):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            stored.add(node.id if isinstance(node, ast.Name) else "." + node.attr)
    return any(
        (isinstance(n, ast.Name) and n.id in stored)
        or (isinstance(n, ast.Attribute) and "." + n.attr in stored)
        for s in rest
        for n in ast.walk(s)
    )


def test_path_split_reads_of_a_function_are_ast_walk_s():
    from shapelint.analysis import path_split

    fn = ast.parse(PATHS_SOURCE).body[1]
    want = _bound_by_ast_walk(fn)
    assert {"y", "z", "w", "G", "la", "json", "p", "q", "s", "g", "K", "i"} <= want[0]
    assert want[1] == {"cache", "seen"}
    assert path_split.bound(fn) == want
    assert path_split.bound(fn) is path_split.bound(fn)  # kept on the node
    tests = [i for i, s in enumerate(fn.body) if isinstance(s, ast.If)]
    verdicts = [path_split.worth(fn, i) for i in tests]
    assert verdicts == [_worth_by_ast_walk(fn.body[i], fn.body[i + 1 :]) for i in tests]
    assert True in verdicts and False in verdicts
    assert [path_split.worth(fn, i) for i in tests] == verdicts  # (the branches' stores kept)


def test_a_loop_s_found_and_replaced_values_are_ast_walk_s():
    from shapelint.analysis import loops

    fn = ast.parse(PATHS_SOURCE).body[1]
    loop = next(s for s in ast.walk(fn) if isinstance(s, ast.For))
    names = {
        n.id for s in (loop.target, *loop.body) for n in ast.walk(s) if isinstance(n, ast.Name)
    }
    env = {k: object() for k in ["self", "x", "i", "z", "unrelated", *names]}
    for _ in range(2):  # (the second read off the kept names)
        found = loops.found_values(env, loop.target, *loop.body)
        rebound = loops.replaced_values(env, loop.target, *loop.body)
        assert found == [v for k, v in env.items() if k not in names]
        assert rebound == [v for k, v in env.items() if k in names]
        assert env["unrelated"] in found and env["i"] in rebound


class _CountedAttrs(tuple):
    """A module's attributes that count how often a walk reads them."""

    reads = 0

    def __iter__(self):
        type(self).reads += 1
        return super().__iter__()


def test_a_grown_list_is_new_everywhere_and_a_shared_module_walked_once():
    # `self.layers.append(m)`: every recorder holding the list (directly, in a
    # module, in a partial, in a named tuple) holds the grown one; what holds no
    # list is the same object as before. A module every holder shares (the
    # model's modules, reached from each recorder and each live frame) is read
    # once per change (main read it once per path to it: 16 times here).
    _CountedAttrs.reads = 0
    shared = ObjectV(
        "torch.nn.Linear",
        _CountedAttrs((("weight", ParameterV((D, N))), ("bias", ParameterV((D,))))),
    )
    old = ModuleListV((shared,))
    new = ModuleListV((shared, ObjectV("torch.nn.ReLU")))
    block = ObjectV("<class>Block", (("layers", old), ("proj", shared), ("n", IntV(N))))
    recorders = [SelfRecorder("A"), SelfRecorder("B")]
    for r in recorders:
        r.attrs.update(
            block=block,
            shared=shared,
            run=callable_values.PartialV(StrV("f"), (old,), (("k", shared),)),
            pair=TupleV((old, IntV(D)), "Pair"),
            also=TupleV((shared,), "Pair"),
            n=IntV(N),
        )
    before = [dict(r.attrs) for r in recorders]
    with aliasing.building(recorders[0]), aliasing.building(recorders[1]):
        holders.held_as(old, new)
    for r, was in zip(recorders, before):
        got = r.attrs
        assert got["block"] == ObjectV(
            "<class>Block", (("layers", new), ("proj", shared), ("n", IntV(N)))
        )
        assert got["block"].attr("layers") is new and got["block"].attr("proj") is shared
        assert got["run"].args[0] is new and got["run"].kwargs[0][1] is shared
        assert got["pair"].items[0] is new and got["pair"].kind == "Pair"
        assert all(got[k] is was[k] for k in ("shared", "also", "n"))
    assert _CountedAttrs.reads == 1
