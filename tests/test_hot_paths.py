"""The hot paths' cheaper spellings do what the standard library's do (the oracle):
values.replaced is dataclasses.replace, field by field, the fields outside equality
included; the scopes that are classes, not @contextmanager generators, restore
their state when the block raises."""

from __future__ import annotations

import dataclasses
from contextvars import ContextVar

import pytest

from shapelint.analysis import aliasing, call_path, dynamic, repetition
from shapelint.notation import symbolic
from shapelint.notation.symbolic import Expr, fact_scope
from shapelint.ops.values import (
    BufferV,
    Cost,
    IntV,
    ObjectV,
    OpIssue,
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
