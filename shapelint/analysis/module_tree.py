"""A module's children, registered modules and tensors, as nn.Module's walks
give them (`named_children()`, `_modules`, `_buffers`, `_parameters`).

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shapelint.analysis import aliasing, plain
from shapelint.analysis.attributes import derives_from_module, find_method
from shapelint.analysis.callable_values import ChoiceV
from shapelint.analysis.module_kinds import (
    LAYERS,
    REQUIRES_GRAD_UNKNOWN,
    UNFOLLOWED,
    is_module,
    stub_layer,
)
from shapelint.analysis.module_lists import ModuleListV, item_names
from shapelint.analysis.recorder import SelfRecorder
from shapelint.ops.values import (
    UNKNOWN,
    BufferV,
    NoneV,
    ObjectV,
    OptionalV,
    ParameterV,
    StrV,
    TensorV,
    TupleV,
    Value,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer


def registered_modules(me: ObjectV) -> list[tuple[str, Value]] | None:
    """What `me._modules` holds, in the order torch registered it: a Sequential
    subclass's layers by their names, then every module assigned or added; None
    where an attribute may be a module the analysis lost (or a change was not
    followed)."""
    out: list[tuple[str, Value]] = []
    for k, v in me.attrs:
        if k == LAYERS:
            if not isinstance(v, ModuleListV) or not v.known or v.count is not None:
                return None
            out += zip(item_names(v), v.items)
            continue
        if v is UNKNOWN or k in (UNFOLLOWED, aliasing.ALIASED):
            return None
        if is_module(v) or (isinstance(v, ChoiceV) and all(is_module(i) for i in v.items)):
            out.append((k, v))
    return out


def registered_tensors(
    me: ObjectV, registry: str, walked: bool = False
) -> list[tuple[str, Value]] | None:
    """What a project module's `me._buffers` (registry "_buffers") or
    `me._parameters` holds, in the order torch registered it: its buffers, or its
    Parameters. None where an entry may be hidden: an attribute not known or one of
    several values, a plain tensor (a tensor stored under a buffer's name stays a
    buffer in torch), None (which either registry holds where it was registered
    so; walked: as nn.Module's walks read it, which skip a None), a registration
    the analysis lost; and a torch layer's registries."""
    if not me.kind.startswith("<class>"):
        return None
    want = BufferV if registry == "_buffers" else ParameterV
    surely_plain = plain.names(me.attrs)  # no module, Parameter or buffer
    out: list[tuple[str, Value]] = []
    for k, v in me.attrs:
        if k in (UNFOLLOWED, aliasing.ALIASED) or v is UNKNOWN and k not in surely_plain:
            return None
        if isinstance(v, NoneV) and (k in surely_plain or walked):
            continue  # walked: `_named_members` skips a None entry of either registry
        if isinstance(v, (ChoiceV, NoneV, OptionalV)) or type(v) is TensorV:
            return None
        if isinstance(v, want):
            out.append((k, v))
    return out


def children(
    an: Analyzer, recv: Value, meth: str, args, kwargs, overridden: str | None = None
) -> Value | None:
    """`m.named_children()` / `m.children()` of the module being built or of a
    module built in a target run, as nn.Module's walk yields them: the registered
    submodules in registration order, None ones left out, each object once (by
    identity, as parameters.py counts them). None (not known) where an attribute
    may be a module the analysis cannot name (not known and not surely plain, a
    module on one path only) or where the class overrides the method (or
    `overridden`, the method a walk calls on each module: module_walk.py's)."""
    if args or kwargs or not an.specialize:
        return None
    if isinstance(recv, ObjectV) and _stub_leaf(recv.kind):
        return TupleV((), kind="list")
    if isinstance(recv, ModuleListV):
        return _container_children(an, recv, meth)
    if isinstance(recv, SelfRecorder):
        key, held = recv.cls, list(recv.attrs.items())
    elif isinstance(recv, ObjectV) and recv.kind.startswith("<class>"):
        key, held = recv.kind.partition(">")[2], list(recv.attrs)
    else:
        return None
    cd = an.class_of(key)
    if (
        cd is None
        or not derives_from_module(an, key)
        or find_method(an, cd, overridden or meth) is not None
    ):
        return None
    surely_plain = plain.names(held)
    # which Parameters require grad says nothing of which modules are held
    held = [
        (k, v)
        for k, v in held
        if k != REQUIRES_GRAD_UNKNOWN
        and not (v is UNKNOWN and k in surely_plain)
        and not (isinstance(v, ChoiceV) and plain.plain_alternatives(an, v.items))
    ]
    found = registered_modules(ObjectV("<class>", tuple(held)))
    if found is None or any(_may_hold_module(v) for _, v in held):
        return None
    kept = [(k, v) for k, v in found if _module_instance(an, v) is not False]
    if any(_module_instance(an, v) is None for _, v in kept):
        return None
    return _yielded(kept, meth)


def _container_children(an: Analyzer, v: ModuleListV, meth: str) -> Value | None:
    """named_children() / children() of torch's own nn.Sequential or nn.ModuleList
    known item by item: its items under the names torch registered them by (`0`,
    `1`, ... or a `Sequential(OrderedDict(...))`'s), None ones left out and each
    object once by identity, as nn.Module's walk yields them. None (not known)
    where the list is not known item by item or an item may be no module."""
    if not v.known or v.count is not None:
        return None
    held = [(k, i) for k, i in zip(item_names(v), v.items) if not isinstance(i, NoneV)]
    if any(not is_module(i) or _module_instance(an, i) is not True for _, i in held):
        return None
    return _yielded(held, meth)


def _yielded(held: list[tuple[str, Value]], meth: str) -> Value:
    """The walk's items: each object once, by identity, under its first name."""
    once, seen = [], set()
    for k, v in held:
        if id(v) not in seen:
            seen.add(id(v))
            once.append((k, v))
    if meth == "children":
        return TupleV(tuple(v for _, v in once), kind="list")
    return TupleV(tuple(TupleV((StrV(k), v)) for k, v in once), kind="list")


# The stub-described torch layers that register submodules (torch's
# `nn.MultiheadAttention(...).out_proj`); every other layer a stub describes holds
# Parameters and buffers only (tests/test_object_model.py holds this to torch's own).
# The layers torch builds of other layers are read as source (torch_source.py).
STUB_LAYERS_WITH_CHILDREN = frozenset({"torch.nn.MultiheadAttention"})


def _stub_leaf(kind: str) -> bool:
    """A torch layer a stub describes whose named_children() torch gives empty."""
    return kind not in STUB_LAYERS_WITH_CHILDREN and stub_layer(kind)


def _module_instance(an: Analyzer, v: Value) -> bool | None:
    """Whether v, which registered_modules counts among the modules, is one torch
    registers: an instance of a project class is one only where the class derives
    from nn.Module; a plain class's instance (plain.plain_instance) is an attribute
    torch leaves alone; None where a base is not seen, or where `__new__` or a
    metaclass decides what the class's call gave."""
    if isinstance(v, ChoiceV):
        each = [_module_instance(an, i) for i in v.items]
        return True if all(each) else None
    if isinstance(v, ObjectV) and v.kind.startswith("<class>"):
        if plain.plain_instance(an, v):
            return False
        return derives_from_module(an, v.kind[len("<class>") :]) or None
    return True


def _may_hold_module(v: Value) -> bool:
    """A value that is a module on some path (None or a module, one of several)."""
    if isinstance(v, OptionalV):
        return v.value is UNKNOWN or is_module(v.value) or _may_hold_module(v.value)
    if isinstance(v, ChoiceV):
        return not all(is_module(i) for i in v.items)
    return False
