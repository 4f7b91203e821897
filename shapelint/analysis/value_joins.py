"""Joining values where control flow meets: two values (or environments) that
two paths give become one that holds for both.

Split out of interpreter.py by benchmarks/split_class.py."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from shapelint.analysis import (
    aliasing,
    choices,
    compiled,
    folding,
    grad_mode,
    joined_objects,
    module_kinds,
)
from shapelint.ops import backward, dtypes, versions
from shapelint.ops.saved import storage_of
from shapelint.ops.values import (
    DICT_KIND,
    UNKNOWN,
    BoolV,
    BufferV,
    DtypeV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    OptionalV,
    ParameterV,
    StrV,
    TensorV,
    TupleV,
    Var,
    fresh_var,
)

if TYPE_CHECKING:
    from shapelint.ops.values import Value


def join_values(a: Value, b: Value) -> Value:
    if isinstance(a, grad_mode.GradModeV) or isinstance(b, grad_mode.GradModeV):
        return grad_mode.joined(a, b)
    if isinstance(a, TupleV) and isinstance(b, TupleV) and a.kind != b.kind:
        # a tuple on one path, a list on the other: the join, a value of its own,
        # may be either object
        joined = join_values(TupleV(a.items), TupleV(b.items))
        if isinstance(joined, TupleV):
            joined_objects.link(joined, a)
            joined_objects.link(joined, b)
        return joined
    if a == b:
        if a is not b and _mutable(a):
            # one object of two alike, kept for both: a change through the name
            # changes either (joined_objects)
            joined_objects.link(a, b)
        if a is not b and aliasing.recorders() and module_kinds.is_module(a):
            # two modules alike, two objects: which one a module being built holds
            # decides what torch counts (`self.b = self.a if c else nn.Linear(d, d)`)
            return choices.join(a, b) or UNKNOWN
        if isinstance(a, TensorV) and isinstance(b, TensorV) and a.origin != b.origin:
            # made on either path
            return dataclasses.replace(a, origin=_join_origins(a, b), storage=storage_of(a))
        return a
    if isinstance(a, TensorV) and isinstance(b, TensorV):
        # two dtypes, either of which the tensor may be: one not known, a float (complex)
        # one of a width not known where both are floats (complexes)
        dtype = dtypes.join(a.dtype, b.dtype)
        grad = backward.requires(a) if backward.requires(a) == backward.requires(b) else None
        origin = _join_origins(a, b)
        shape = None
        if a.shape is not None and b.shape is not None and len(a.shape) == len(b.shape):
            shape = _join_dims(a.shape, b.shape)
        if isinstance(a, ParameterV) and isinstance(b, ParameterV):
            # a Parameter on either path, of sizes joined: still one the module registers
            trains = a.requires_grad if a.requires_grad == b.requires_grad else None
            return ParameterV(shape, dtype, grad=grad, origin=origin, requires_grad=trains)
        kind = BufferV if isinstance(a, BufferV) and isinstance(b, BufferV) else TensorV
        # a module's attribute registered on one path only: instance_state.join
        return kind(shape, dtype, grad=grad, origin=origin)
    if isinstance(a, IntV) and isinstance(b, IntV):
        return IntV(None)
    if isinstance(a, DtypeV) and isinstance(b, DtypeV) and not (a.numpy or b.numpy):
        # `torch.float32 if half else x.dtype`: a float dtype, whose width is not known
        dtype = dtypes.join(a.name, b.name)
        if dtype != dtypes.NOT_KNOWN:
            return DtypeV(dtype)
    if isinstance(a, _MAYBE) or isinstance(b, _MAYBE):  # else neither test below can hold
        given = folding.given_or(a, b) or folding.given_or(b, a)
        if given is not None:
            return given  # `val if exists(val) else d`, lucidrains' default(val, d)
        maybe = _or_none(a, b) or _or_none(b, a)
        if maybe is not None:
            return maybe
    if isinstance(a, FloatV) and isinstance(b, FloatV):
        return FloatV(None)
    if type(a) is type(b) and isinstance(a, (BoolV, StrV)):  # a flag, a name: one of two
        return type(a)(None)
    if isinstance(a, TupleV) and isinstance(b, TupleV) and len(a.items) == len(b.items):
        joined = TupleV(tuple(join_values(x, y) for x, y in zip(a.items, b.items)), a.kind)
        if _mutable(a) or _mutable(b):
            # two lists of as many items, joined item by item into a value of its
            # own: a change through the name changes one of the two lists
            joined_objects.link(joined, a)
            joined_objects.link(joined, b)
        return joined
    either = compiled.join(a, b)
    if either is not None:
        return either
    # `DropPath(p) if p > 0. else nn.Identity()`; one nested def or another; two
    # dicts, lists or objects no one value holds for (joined_objects.EitherV)
    chosen = choices.join(a, b)
    if chosen is not None:
        joined_objects.chose()
        return chosen
    return choices.join_functions(a, b) or joined_objects.either(a, b) or UNKNOWN


def _mutable(v: Value) -> bool:
    """A dict, or a sequence that may be a list: an object a change in place reaches."""
    return (isinstance(v, TupleV) and v.kind != "tuple") or (
        type(v) is ObjectV and v.kind == DICT_KIND
    )


# given_or wants an OptionalV on one side, _or_none a NoneV
_MAYBE = (OptionalV, NoneV)


def _or_none(a: Value, b: Value) -> OptionalV | None:
    """A module or a tuple on one path and None on the other (`self.mlp = nn.Sequential(...)
    if exists(time_emb_dim) else None`, `scale_shift = x.chunk(2)` under an `if`): what
    calling or unpacking it gives is the module's or the tuple's, since None raises there."""
    inner = a.value if isinstance(a, OptionalV) else a
    if isinstance(b, NoneV) and (module_kinds.is_module(inner) or isinstance(inner, TupleV)):
        return OptionalV(inner)
    return None


def _join_origins(a: TensorV, b: TensorV) -> frozenset | None:
    oa, ob = backward.origins(a), backward.origins(b)
    if oa is None or ob is None:
        return None
    versions.either(oa, ob)  # the loss reaches one side's, which one not known
    return oa | ob


def _join_dims(a: tuple, b: tuple) -> tuple | None:
    """Two shapes of as many entries, dim by dim; a variadic stands for any number
    of dims, so two variadics at one place are a variadic, and a variadic against a
    dim leaves the rank unknown."""
    out = []
    for x, y in zip(a, b, strict=True):
        if x == y:
            out.append(x)
        elif isinstance(x, Var) and isinstance(y, Var):
            out.append(fresh_var())
        elif isinstance(x, Var) or isinstance(y, Var):
            return None
        else:
            out.append(None)
    return tuple(out)


def join_all_values(values: list[Value]) -> Value:
    out = values[0]
    for v in values[1:]:
        out = join_values(out, v)
    return out


_ABSENT = object()


def join_envs(a: dict[str, Value], b: dict[str, Value]) -> dict[str, Value]:
    # Joined at every branch with unknown test: one lookup per name, no union set.
    # A name one path binds only: a read on the other raises, so what follows
    # holds the one path's value, an object a change through the name reaches.
    out = {}
    for k, va in a.items():
        vb = b.get(k, _ABSENT)
        if vb is _ABSENT:
            out[k] = joined_objects.either(va, UNKNOWN) or UNKNOWN
        else:
            out[k] = va if va is vb else join_values(va, vb)
    for k, vb in b.items():
        if k not in a:
            out[k] = joined_objects.either(vb, UNKNOWN) or UNKNOWN
    return out
