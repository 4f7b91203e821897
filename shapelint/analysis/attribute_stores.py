"""`obj.attr = v` on the modules being built and on plain objects: what torch's
`__setattr__` allows in a parameter's, buffer's or module's place, a call
handed a module, `obj.__class__ = C`, a class attribute set through an
instance.

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import aliasing, in_place, module_state, nodes, own_methods, plain
from shapelint.analysis.attributes import class_attribute, defining_class, mro, outside_bases
from shapelint.analysis.callable_values import ClassRefV, FunctionRefV, LayerClassV, PartialV
from shapelint.analysis.holders import held_as, held_nowhere, replace_identical, store_path
from shapelint.analysis.lambdas import ClosureV
from shapelint.analysis.module_kinds import LAYERS, UNFOLLOWED, is_module, module_class_of
from shapelint.analysis.module_lists import ModuleListV
from shapelint.analysis.recorder import SelfRecorder
from shapelint.ops.values import (
    UNKNOWN,
    ArrayV,
    BoolV,
    BufferV,
    DeviceV,
    DtypeV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    ParameterV,
    SliceV,
    StrV,
    TensorV,
    TupleV,
    Value,
    as_buffer,
    tracked,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer


def keeps_state_unbound(qual: str, rest, kwargs, an: Analyzer) -> bool:
    """`torch.nn.Linear.reset_parameters(self)`: a torch layer class's method that
    keeps what a module holds (aliasing.KEEPS_STATE), called through the class with
    no other module among its arguments."""
    cls, _, method = qual.rpartition(".")
    return (
        cls.startswith("torch.nn.")
        and method in aliasing.KEEPS_STATE
        and not passes_modules(an, rest, kwargs)
    )


def same_data(t: Value, value: Value) -> bool:
    """`t.data = value` leaves Parameter or buffer t what it is (the same object,
    numel, dtype and requires_grad, its values replaced): value is a tensor of t's
    known shape and dtype."""
    return (
        isinstance(t, (ParameterV, BufferV))
        and isinstance(value, TensorV)
        and t.shape is not None
        and value.shape == t.shape
        # a layer's own weights are of the default dtype (None)
        and value.dtype == (t.dtype or "float32")
    )


def store_attr(an: Analyzer, obj: Value, attr: str | None, value: Value, frame) -> None:
    """`obj.attr = value` (or `setattr(obj, attr, value)`; attr None: a name not
    known) while modules are built: obj is changed wherever they hold it, by
    identity (`out = self.head; out.weight = self.emb.weight` ties the two as
    torch does), and in the local names bound to it. A store the analysis cannot
    place, of a value that may be a parameter or a module, makes their counts
    unknown (aliasing.py)."""
    if attr is not None and (is_module(obj) or isinstance(obj, SelfRecorder)):
        value = registered_again(_held(obj, attr), value)
    if isinstance(obj, SelfRecorder) and attr is not None:
        stays_plain = isinstance(value, NoneV) and plain.none_stays_plain(obj.attrs, attr)
        obj.attrs[attr] = value
        plain.mark(obj.attrs, attr, stays_plain)
        return
    if isinstance(obj, TensorV) and attr is not None and attr != "data":
        return  # `p._tags = s`: an attribute of the tensor object, no module's state
    if attr is not None and isinstance(obj, ObjectV):
        new: Value = ObjectV(obj.kind, tuple({**dict(obj.attrs), attr: value}.items()))
        if in_place.through_property(an, obj, attr):
            new = UNKNOWN  # a setter decides what the object keeps: not run here
        held = [replace_identical(r, obj, new, frame) for r in aliasing.recorders()]
        func = getattr(frame, "func", None)
        given = set(_parameter_names(func.node)) if func is not None else set()
        own = any(v is new and k not in given for k, v in frame.env.items())
        if any(held) or own or not is_module(obj):
            return
        # a module neither they nor a name of this function made holds (a
        # caller's, `self.make().weight = p`): the caller's copy is not changed
    if not may_replace(value):
        return
    if isinstance(obj, SelfRecorder) and module_class_of(an, obj.cls) is False:
        return  # an object that is no module registers nothing torch counts
    if attr is not None and all(module_class_of(an, r.cls) is False for r in aliasing.recorders()):
        # only objects that are no modules are being built (a config's __post_init__):
        # no count to lose, and the store of a known name is marked where it is made
        # (absence.unapplied_write), so that their attributes stay judged
        return
    # `p.data = t` of another shape: numel may change, requires_grad may not
    aliasing.lost(freezes=not (isinstance(obj, TensorV) and attr == "data"))


def _held(obj, attr: str) -> Value:
    return obj.attrs.get(attr, UNKNOWN) if isinstance(obj, SelfRecorder) else obj.attr(attr)


def registered_again(old: Value, value: Value) -> Value:
    """A plain tensor stored under the name of a module's buffer stays a buffer, as
    nn.Module.__setattr__ puts it in `_buffers` (`self.w = w.data` in a forward
    after `register_buffer("w", ...)`): counted among the buffers, not lost. Only
    one autograd surely does not track: a buffer here is a leaf, while one made by
    ops on tensors that require grad passes the gradient on (`self.s = self.w @
    self.w` in a constructor), which neither a buffer nor a plain tensor here
    says: not known."""
    if isinstance(old, BufferV) and type(value) is TensorV:
        return as_buffer(value) if tracked(value) is False else UNKNOWN
    return value


_NEVER_STATE = (
    IntV, FloatV, BoolV, StrV, SliceV, DtypeV, DeviceV, ClassRefV, FunctionRefV, LayerClassV,
    PartialV, ClosureV, ArrayV,
)  # fmt: skip


def may_replace(value: Value) -> bool:
    """Whether value stored over a module's attribute could be, or remove, a
    parameter, buffer or module there: torch refuses anything else in their
    place (a number, a string, a function), so only a new plain attribute takes
    it."""
    if isinstance(value, TupleV):
        return any(may_replace(v) for v in value.items)
    return not isinstance(value, _NEVER_STATE)


def passes_modules(an: Analyzer, args, kwargs) -> bool:
    """A call given a module (the one being built, or one it may hold)."""
    return any(_reaches_module(an, v, 0) for v in [*args, *kwargs.values()])


def _reaches_module(an: Analyzer, v: Value, depth: int) -> bool:
    """Whether v is, or may hold, a module: an instance of a project class that is
    surely no nn.Module (`equals('a')`, a config) reaches one only through what it
    holds."""
    if isinstance(v, SelfRecorder):
        return True
    if not is_module(v):
        return False
    if not (isinstance(v, ObjectV) and v.kind.startswith("<class>")):
        return True
    return module_class_of(an, v.kind[len("<class>") :]) is not False or not all(
        _holds_no_module(an, a, depth + 1) for _, a in v.attrs
    )


def _holds_no_module(an: Analyzer, v: Value, depth: int) -> bool:
    """Surely no module inside v (an attribute of a plain object)."""
    if isinstance(v, (IntV, FloatV, BoolV, StrV, NoneV, DtypeV, DeviceV, SliceV)):
        return True
    if depth > 4:
        return False
    if isinstance(v, TupleV):
        return all(_holds_no_module(an, i, depth + 1) for i in v.items)
    if isinstance(v, ObjectV) and not v.kind.startswith(("<class>", "torch.nn.")):
        return all(_holds_no_module(an, a, depth + 1) for _, a in v.attrs)  # a dict, a config
    return isinstance(v, ObjectV) and not _reaches_module(an, v, depth)


def _parameter_names(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return names + [p.arg for p in (a.vararg, a.kwarg) if p is not None]


def store_attribute(an: Analyzer, target: ast.Attribute, value: Value, frame) -> bool:
    """`name.attr` takes value, for the module being built or a plain object a
    local name holds (`cfg.table[k] = v`, `self.sizes.append(4)`): whether it
    could be placed. The object's other holders do not see it: they are
    forgotten."""
    name = target.value.id  # type: ignore[attr-defined]
    base = frame.env.get(name)
    if isinstance(base, SelfRecorder) or type(base) is ObjectV:
        an.outer_writes += 1  # state outside the frame: a trial turn counts it, makes none
        if an.trial:
            return True
    # (a function's summary, not the run, changes no class)
    runs = getattr(frame, "runs", False)
    held = class_held(an, base, target.attr) if base is not None and runs else None
    if held is not None:
        # `self.reg[k] = v` with `reg = {}` in the class body and none on the
        # instance: the class's one dict changes, which every instance reads
        cd = an.class_of(held)
        was = class_attribute(an, cd, target.attr) if cd is not None else None
        if module_state.store_class_attr(an, held, target.attr, value):
            if was is not None:
                in_place.forget_held(an, was)
            return True
    if isinstance(base, SelfRecorder):
        old = base.attrs.get(target.attr)
        if old is not None and old is not value:
            # its other holders, by identity: `self.convs = []` and `self.bns = []`
            # are two lists, the one appended to leaves the other as it was
            in_place.forget_held(an, old)
        base.attrs[target.attr] = own_methods.stored(base, value)
        return True
    if type(base) is ObjectV and base.kind.startswith("<class>"):
        # the object the attribute held changed: its other holders (a child
        # module handed `self.sizes`) see the change, and are forgotten
        was = dict(base.attrs).get(target.attr)
        if was is not None and was is not value:
            in_place.forget_held(an, was)
            base = frame.env.get(name)  # itself rebuilt where it held one
            if type(base) is not ObjectV:
                return False
        in_place.forget_value(an, base)
        frame.env[name] = ObjectV(
            base.kind, tuple({**dict(base.attrs), target.attr: value}.items())
        )
        return True
    return False


def class_held(an: Analyzer, base: Value, name: str) -> str | None:
    """The key of the class whose attribute `base.name` is, where base is an
    instance without one of its own (or the class itself); None otherwise."""
    if isinstance(base, ClassRefV):
        key = base.name
    elif isinstance(base, SelfRecorder):
        key = base.cls
        if name in base.attrs:
            return None
    elif type(base) is ObjectV and base.kind.startswith("<class>"):
        key = base.kind[len("<class>") :]
        if name in dict(base.attrs):
            return None
    else:
        return None
    cd = an.class_of(key) if an.specialize else None
    found = defining_class(an, cd, name) if cd is not None else None
    return found.key if found is not None else None


def retyped(an: Analyzer, target: ast.Attribute, frame, cls: Value = UNKNOWN) -> None:
    """`obj.__class__ = C` gives the object another class, and its methods (its
    forward) with it, for every holder. In a target run, an instance of a project
    nn.Module class given another such class of the same layout is that object of
    the new class wherever it is held (`_same_object_retyped`). Otherwise the
    analysis follows none of it: what names the object is no longer known, nor, in
    a constructor, the layers and state of the module being built, which may hold
    it."""
    if an.specialize and _same_object_retyped(an, target, frame, cls):
        return
    obj = target.value
    held = an.eval(obj, frame) if nodes.dotted_name(obj) else UNKNOWN
    if isinstance(held, (ObjectV, ModuleListV)):
        # the object itself, wherever it is held (`self.block`, after `block =
        # self.block; block.__class__ = C`): its forward is no longer known
        held_nowhere(held)
    me = frame.env.get("self")
    if isinstance(obj, ast.Name) and obj.id != "self":
        frame.env[obj.id] = UNKNOWN
    if not isinstance(me, SelfRecorder):
        return
    me.attrs[UNFOLLOWED] = UNKNOWN
    layers = me.attrs.get(LAYERS)
    if isinstance(layers, ModuleListV):
        me.attrs[LAYERS] = ModuleListV((), layers.sequential, known=False)
    if isinstance(obj, ast.Attribute) and isinstance(obj.value, ast.Name):
        if obj.value.id == "self":  # `self.lin.__class__ = C`
            me.attrs[obj.attr] = UNKNOWN
    elif isinstance(obj, ast.Attribute):
        store_path(me, obj, UNKNOWN)


def _same_object_retyped(an: Analyzer, target: ast.Attribute, frame, cls: Value) -> bool:
    """`layer.__class__ = MonotonicLinear` (zuko's MonotonicMLP): CPython keeps the
    object, its instance dict included, and looks its methods up on the new class
    from then on; it refuses classes whose layouts differ (TypeError). Followed
    where obj is a name or a path of names (read again without running anything)
    holding an instance of a project class, both classes derive from nn.Module,
    their classes outside the project are the same in the same order and no
    project class along either defines `__slots__` (then the layouts are surely
    one): each holder of the object (by identity) holds it as an instance of the
    new class. False where that is not so."""
    if not isinstance(cls, ClassRefV) or not nodes.dotted_name(target.value):
        return False
    obj = an.eval(target.value, frame)
    if type(obj) is not ObjectV or not obj.kind.startswith("<class>"):
        return False
    old_cd, new_cd = an.class_of(obj.kind[len("<class>") :]), an.class_of(cls.name)
    if old_cd is None or new_cd is None:
        return False
    if module_class_of(an, old_cd.key) is not True or module_class_of(an, new_cd.key) is not True:
        return False
    outside = outside_bases(an, old_cd)
    if outside is None or outside != outside_bases(an, new_cd):
        return False
    if any(_slotted(c) for cd in (old_cd, new_cd) for c in mro(an, cd)):
        return False
    new = ObjectV(f"<class>{new_cd.key}", obj.attrs)
    for k, v in list(frame.env.items()):
        if v is obj:
            frame.env[k] = new
    held_as(obj, new)
    return True


def _slotted(cd) -> bool:
    """A class body binding `__slots__`: its instances' layout is its own."""
    for stmt in cd.node.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "__slots__" for t in targets):
            return True
    return False
