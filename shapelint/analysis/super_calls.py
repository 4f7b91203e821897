"""`super().method(...)` and `Base.method(self, ...)`: the base's method along the
instance's MRO run on the same instance, a torch base's `__init__` or forward,
a mixin's `super().__init__` reaching a torch layer, nn.Module's registering
methods on the instance being built.

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import aliasing, dict_keys, plain, raising, registering
from shapelint.analysis.attributes import (
    binds_no_instance,
    call_after,
    find_method,
    init_after,
    super_method,
)
from shapelint.analysis.callable_values import ClassRefV, TorchForwardV, bound_method_of
from shapelint.analysis.construction import object_new, run_init
from shapelint.analysis.dict_entries import ITEMS
from shapelint.analysis.dict_values import MAPPING_MUTATORS, dict_method, mapping
from shapelint.analysis.module_kinds import (
    CONTAINERS,
    LAYERS,
    MAPPING,
    MAPPINGS,
    UNFOLLOWED,
    layer_class,
    torch_ancestor,
    torch_base,
    undescribed_torch_base,
)
from shapelint.analysis.module_lists import ModuleListV
from shapelint.analysis.recorder import SelfRecorder
from shapelint.analysis.specialized import run_on_self
from shapelint.analysis.torch_containers import torch_forward, torch_init
from shapelint.ops.values import (
    UNKNOWN,
    BufferV,
    NoneBufferV,
    NoneV,
    ObjectV,
    StrV,
    TensorV,
    Value,
    as_buffer,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef


def class_overrides(an: Analyzer, me: Value, meth: str) -> bool:
    cd = _instance_class(an, me)
    return cd is not None and find_method(an, cd, meth) is not None


def register_on_self(me: SelfRecorder, meth: str, name: Value, value: Value) -> Value:
    """nn.Module's `register_buffer(name, t)` (or `register_parameter`, `add_module`)
    on the instance being built: the value stored under that name."""
    if meth == "register_buffer" and isinstance(value, TensorV):
        # persistent or not: a buffer, the very tensor (its elements too)
        value = as_buffer(value)
    elif meth == "register_buffer" and isinstance(value, NoneV):
        value = NoneBufferV()
    elif meth == "register_buffer" and value is UNKNOWN:
        # torch takes a tensor or None there: a buffer, of a size not known,
        # never a parameter or a module
        value = BufferV(None)
    if isinstance(name, StrV) and name.value is not None:
        me.attrs[name.value] = value
        plain.mark(me.attrs, name.value, False)
    else:
        me.attrs[UNFOLLOWED] = UNKNOWN  # registered under a name not known
        aliasing.lost()  # which may be one it holds
    return NoneV()


def super_call(an: Analyzer, meth: str, node, args, kwargs, frame) -> Value | None:
    """`super().__init__(...)` runs the base's __init__ on the same self;
    `super().forward(x)` the base's forward on this instance; any other method of
    a base runs on the instance as `self.m()` would (on the one being built too:
    what it stores there is its state)."""
    if meth == "__new__" and frame.func is not None and frame.func.node.name == "__new__":
        return object_new(an, frame, args, kwargs)
    me = frame.env.get("self")
    fd = super_method(an, frame, meth, _instance_class(an, me))
    if fd is None and meth == "__init__" and isinstance(me, SelfRecorder) and frame.func:
        mine = _instance_class(an, me)
        if mine is not None and frame.func.cls is not None:
            reached = init_after(an, mine, frame.func.cls)
            me.module_init |= reached is not None and reached.startswith("torch.nn.")
        base = torch_base(an, frame.func.cls) if frame.func.cls is not None else None
        if base is None and frame.func.cls is not None:
            if torch_ancestor(an, frame.func.cls) in REGISTERING_DICTS:
                _registering_dict_init(me, torch_ancestor(an, frame.func.cls), args, kwargs)
                return NoneV()
            mixed = _mixin_init(an, me, frame.func.cls)
            if mixed is not None:  # a mixin's `super().__init__` reaching a torch layer
                if mixed == UNFOLLOWED:
                    me.attrs[UNFOLLOWED] = UNKNOWN
                else:
                    torch_init(an, mixed, me, node, args, kwargs, frame)
                return NoneV()
        if base is not None:  # `super().__init__(dim)` of a torch layer
            torch_init(an, base, me, node, args, kwargs, frame)
        elif frame.func.cls is not None and undescribed_torch_base(an, frame.func.cls):
            me.attrs[UNFOLLOWED] = UNKNOWN
        return NoneV()
    if fd is None and isinstance(me, ObjectV) and frame.func and frame.func.cls is not None:
        base = torch_base(an, frame.func.cls)
        if base is not None and meth == "forward":
            return torch_forward(an, base, me, node, args, kwargs, frame)
        if meth == "__call__":
            mine = _instance_class(an, me)
            reached = call_after(an, mine, frame.func.cls) if mine is not None else None
            if reached is not None and reached.startswith("torch.nn."):
                return _module_call(an, me, node, args, kwargs, frame)  # nn.Module's
        if base == MAPPING:
            return dict_method(me, meth, args if not kwargs else None, frame)
    if fd is None and isinstance(me, SelfRecorder) and ITEMS in me.attrs and frame.func:
        if frame.func.cls is not None and torch_base(an, frame.func.cls) == MAPPING:
            if meth in MAPPING_MUTATORS:  # a change to the instance being built
                an.outer_writes += 1
                if an.trial:
                    return None
            return dict_method(me, meth, args if not kwargs else None, frame)
    if fd is None and meth in registering.METHODS and isinstance(me, SelfRecorder):
        # `super().register_parameter(name, p)` in an override: nn.Module's, on the
        # instance being built
        got = registering.bound(meth, args, kwargs)
        if got is not None:
            return register_on_self(me, meth, *got)
        me.attrs[UNFOLLOWED] = UNKNOWN  # torch raises; what it stored is not known
        return None
    if fd is None:
        return NoneV() if meth == "__init__" else None
    if meth == "__init__":
        if isinstance(me, SelfRecorder):
            exc = run_init(an, fd, me, args, kwargs)
            if exc is not None:
                raising.pending(exc)
        return NoneV()
    if isinstance(me, ObjectV):
        return an.invoke(fd, me, node, args, kwargs, frame)
    if isinstance(me, SelfRecorder):  # `super().setup()` on the instance being built
        return run_on_self(an, fd, me, node, args, kwargs, frame)
    return None


# torch's dicts that register their entries (`nn.ModuleDict.__init__(modules)` runs
# `self.update(modules)`, each entry `add_module`'d; nn.ParameterDict makes each a
# Parameter): a subclass's `super().__init__(layers)` stores them on the instance.
REGISTERING_DICTS = frozenset({"torch.nn.ModuleDict", "torch.nn.ParameterDict"})


def _registering_dict_init(me: SelfRecorder, base: str, args, kwargs) -> None:
    """`super().__init__(layers)` of a ModuleDict subclass: each entry of a mapping
    known key by key registered as `add_module` would; anything else (a ParameterDict's
    entries, made Parameters, or a mapping not known) leaves the instance's state not
    known: read as nothing, its parameters would be a complete figure too low
    (torchvision's IntermediateLayerGetter counted 0)."""
    given = mapping(args[0]) if len(args) == 1 and not kwargs else None
    if not args and not kwargs:
        return  # an empty dict: nothing registered
    if given is None or base != "torch.nn.ModuleDict" or not dict_keys.all_str(given):
        me.attrs[UNFOLLOWED] = UNKNOWN
        return
    for key, layer in given.attrs:
        register_on_self(me, "add_module", StrV(key), layer)


def registering_dict(an: Analyzer, me: Value) -> str | None:
    """The torch dict (ModuleDict, ParameterDict) the instance being built derives
    from, where its class defines no `__setitem__` of its own; else None."""
    cd = _instance_class(an, me)
    if not isinstance(me, SelfRecorder) or cd is None or find_method(an, cd, "__setitem__"):
        return None
    base = torch_ancestor(an, cd)
    return base if base in REGISTERING_DICTS else None


def registering_dict_store(an: Analyzer, me: SelfRecorder, key: Value, value: Value) -> None:
    """`self[k] = layer` in a method of a ModuleDict subclass, on the instance being
    built: ModuleDict's `__setitem__` is `add_module(k, layer)`; a ParameterDict's
    makes a Parameter of a tensor: its state is then not known."""
    if registering_dict(an, me) == "torch.nn.ModuleDict":
        register_on_self(me, "add_module", key, value)
    else:
        me.attrs[UNFOLLOWED] = UNKNOWN


def _mixin_init(an: Analyzer, me: SelfRecorder, cls: ClassDef) -> str | None:
    """What `super().__init__` in a method of cls, none of whose own bases is a torch
    layer, runs on the instance being built when that instance's class derives from
    a torch class too (`class Q(Mixin, nn.LayerNorm)`: the mixin's `super()` follows
    Q's order and reaches LayerNorm's): the layer or container the stubs describe
    (its qualified name, for torch_init); UNFOLLOWED for a torch class they do not
    describe, or an order not known (what it stores is then not known: reading
    nothing would make 0 parameters a complete figure); None where no torch class
    is reached (nn.Module's, object's, a project class's: the caller's reading)."""
    inst = _instance_class(an, me)
    if inst is None or inst.key == cls.key or torch_ancestor(an, inst) is None:
        return None
    if torch_ancestor(an, cls) is not None:
        return None  # cls's own bases reach torch: its reading stands
    reached = init_after(an, inst, cls)
    if reached is None:
        return UNFOLLOWED
    if reached in MAPPINGS:
        return MAPPING
    if reached in CONTAINERS or layer_class(reached) is not None:
        return reached
    if reached.startswith("torch.") and not reached.endswith(".Module"):
        return UNFOLLOWED
    return None


def _module_call(an: Analyzer, me: ObjectV, node, args, kwargs, frame) -> Value | None:
    """`super().__call__(*args)` reaching nn.Module's: the instance's forward, as
    `_call_impl` runs it (hooks are judged on forward: dynamic.py)."""
    cd = _instance_class(an, me)
    fwd = find_method(an, cd, "forward") if cd is not None else None
    if fwd is not None:
        return an.invoke(fwd, me, node, args, kwargs, frame)
    base = torch_base(an, cd) if cd is not None else None
    return torch_forward(an, base, me, node, args, kwargs, frame) if base is not None else None


def super_attribute(an: Analyzer, meth: str, frame) -> Value | None:
    """`super().meth` read without a call, in a target run's method of a project
    class: the method found after the method's class along the instance's MRO,
    bound to the instance (a project method; torch's forward of a layer or container
    base, `TorchForwardV`), as calling it then runs what `super().meth(...)` runs.
    None where that is not known here (the analysis reads the call instead)."""
    me = frame.env.get("self")
    func = getattr(frame, "func", None)
    if func is None or func.cls is None or not isinstance(me, ObjectV):
        return None
    if binds_no_instance(func.node):
        return None  # self is no instance there
    fd = super_method(an, frame, meth, _instance_class(an, me))
    if fd is not None:
        return bound_method_of(fd, me)
    base = torch_base(an, func.cls)
    if meth == "forward" and base is not None and base != MAPPING:
        return TorchForwardV(base, me)
    return None


def _instance_class(an: Analyzer, me: Value | None) -> ClassDef | None:
    """The project class of `self` (the module being built included): where its
    `super()` starts looking from, along that class's MRO."""
    if isinstance(me, SelfRecorder):
        return an.class_of(me.cls)
    if isinstance(me, ObjectV) and me.kind.startswith("<class>"):
        return an.class_of(me.kind[len("<class>") :])
    return None


def super_call_not_run(an: Analyzer, meth: str, frame) -> None:
    """`super().__init__(*layers)` with arguments not known one by one is not run;
    what the base's method stores on the instance being built is then not known
    either: a container's layers, a torch layer's weights, a project base's state
    (counted as absent, the parameters would be a complete figure too low).
    nn.Module's own __init__ stores nothing."""
    me = frame.env.get("self")
    cls = frame.func.cls if frame.func is not None else None
    if not isinstance(me, SelfRecorder) or cls is None:
        return
    if super_method(an, frame, meth, _instance_class(an, me)) is not None:
        me.attrs[UNFOLLOWED] = UNKNOWN
        return
    base = torch_base(an, cls)
    if meth != "__init__" or base is None or base == MAPPING:
        return
    if base in CONTAINERS:
        me.attrs[LAYERS] = ModuleListV((), CONTAINERS[base], known=False)
    else:
        me.attrs[UNFOLLOWED] = UNKNOWN


def unbound_method_call(an: Analyzer, ref: ClassRefV, meth: str, node, args, kwargs, frame):
    """`Base.__init__(self, c, k)`, `Base.forward(self, x)`: a method of a project
    class called through the class, the instance first, as `super()` would call it
    (pre-`super()` code does this); None where the call is not that."""
    cd = an.class_of(ref.name)
    if cd is None or not args:
        return None
    fd = find_method(an, cd, meth)
    me, rest = args[0], list(args[1:])
    if fd is not None and binds_no_instance(fd.node):
        return None
    if meth == "__init__":
        if not isinstance(me, SelfRecorder):
            return None
        if fd is None:  # the torch base's own, or object's
            base = torch_base(an, cd)
            if base is not None:
                torch_init(an, base, me, node, rest, kwargs, frame)
            return NoneV()
        exc = run_init(an, fd, me, rest, kwargs)
        if exc is not None:
            raising.pending(exc)
        return NoneV()
    if fd is None:
        return None
    if isinstance(me, SelfRecorder):
        return run_on_self(an, fd, me, node, rest, kwargs, frame)
    if isinstance(me, ObjectV):
        return an.invoke(fd, me, node, rest, kwargs, frame)
    return None


def is_super_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )
