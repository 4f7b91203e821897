"""requires_grad and the train/eval mode set on modules and Parameters while
they are built (`m.requires_grad_(False)`, `p.requires_grad = flag`,
`m.eval()`), and what is not known where the analysis cannot place them.

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import aliasing, holders, modes
from shapelint.analysis.attributes import all_methods
from shapelint.analysis.holders import replace_identical
from shapelint.analysis.module_kinds import (
    DICT_KINDS,
    REGISTERED_DICT_KIND,
    REQUIRES_GRAD_UNKNOWN,
    is_module,
)
from shapelint.analysis.module_lists import ModuleListV
from shapelint.analysis.recorder import SelfRecorder
from shapelint.ops.values import UNKNOWN, BoolV, ObjectV, ParameterV, TensorV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer


def made_parameter(an, node: ast.expr, frame) -> bool:
    """Whether node is a call of nn.Parameter itself (a new Parameter object)."""
    if not isinstance(node, ast.Call):
        return False
    qual = an.imports.resolve(node.func, frame.locals, frame.local_imports)
    return qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter")


def set_requires_grad(an, recv: Value, owner, args, kwargs, frame) -> Value:
    """`m.requires_grad_(False)`, `p.requires_grad_(flag)`: every parameter below
    recv takes the flag, in the module being built (found by identity)."""
    flag_v = args[0] if args else kwargs.get("requires_grad", BoolV(True))
    flag = flag_v.value if isinstance(flag_v, BoolV) else None
    # outside the constructor's own frame (a helper it calls, `freeze(self.head)`),
    # the modules being built may hold recv
    owners = [owner] if owner is not None else list(aliasing.recorders())
    if not owners:
        if getattr(frame, "runs", False):
            aliasing.retrained()  # a forward's: not placed (it was ignored: wrong backward)
        return recv
    if flag is None:
        trainability_lost(owners)
        return recv
    then = _regrad(reached_below(recv, _parameters_reached), flag)
    made, found = changed_in_place(an, recv, then, owners, frame)
    if not found:
        trainability_lost(owners)  # held by none of the modules being built
    return made


def reached_below(recv: Value, walk) -> dict[int, Value]:
    """What walk (modules_below, _parameters_reached) reaches from recv, by id: from
    each attribute of the module being built where recv is it."""
    reached: dict[int, Value] = {}
    for v in recv.attrs.values() if isinstance(recv, SelfRecorder) else (recv,):
        walk(v, reached)
    return reached


def changed_in_place(
    an, recv: Value, then, owners: list | None, frame, fresh: bool = False
) -> tuple[Value, bool]:
    """recv changed in place, then the change to each value, as Python changes one
    object: a module just made (fresh) is the value changed, the module being built
    its own attributes, one in a forward (owners None) wherever the modules being built
    and the live frames hold it, else where owners and the frame hold it. The object
    now held, and whether it was found held (changed_where_held)."""
    if fresh:
        return holders.rebuilt(recv, then), True
    if isinstance(recv, SelfRecorder):
        holders.each_changed(an, then, recv, [recv.attrs])
        return recv, True
    if owners is None:
        return holders.each_changed(an, then, recv), True
    return changed_where_held(an, recv, then, owners, frame)


def changed_where_held(an, recv: Value, then, owners: list, frame) -> tuple[Value, bool]:
    """recv changed in place (then: the change to each value) in the attributes of
    the modules being built (owners) and the frame's names, one walk: the object
    they now hold, and whether any owner held something it changed."""
    before = [dict(o.attrs) for o in owners]
    made = holders.each_changed(an, then, recv, [*(o.attrs for o in owners), frame.env])
    found = any(v is not b[k] for o, b in zip(owners, before) for k, v in o.attrs.items())
    return made, found


def retrains(obj: Value, flag: Value) -> bool:
    """`obj.requires_grad = flag` may change what autograd tracks: on a Parameter,
    or a tensor but for `False` on one known to need no grad (a grid made by
    `arange`: nothing changes)."""
    if isinstance(obj, ParameterV):
        return True
    if not isinstance(obj, TensorV):
        return False
    return not (isinstance(flag, BoolV) and flag.value is False and obj.grad is False)


def trainability_lost(owners=None) -> None:
    """A requires_grad set on what the analysis cannot place: which parameters of
    the modules being built (`owners`, else all of them) are trainable is not known,
    nor, therefore, which gradients backward computes."""
    for o in aliasing.recorders() if owners is None else owners:
        o.attrs[REQUIRES_GRAD_UNKNOWN] = UNKNOWN


def torch_mode_method(an: Analyzer, recv: Value, attr: str) -> bool:
    """`m.train` / `m.eval` is nn.Module's: no class of the project on the way
    defines its own."""
    if isinstance(recv, ModuleListV) or (
        isinstance(recv, ObjectV) and not recv.kind.startswith("<class>")
    ):
        return True  # a torch layer or container
    key = recv.cls if isinstance(recv, SelfRecorder) else getattr(recv, "kind", "")[7:]
    cd = an.class_of(key)
    return cd is not None and attr not in all_methods(cd.owner or an, cd)


def mode_flag(attr: str, args, kwargs) -> bool | None:
    if attr == "eval":
        return None if args or kwargs else False
    v = args[0] if args else kwargs.get("mode", BoolV(True))
    return v.value if isinstance(v, BoolV) and len(args) + len(kwargs) <= 1 else None


def set_mode(
    recv: Value,
    flag: bool | None,
    owner: SelfRecorder | None,
    frame,
    fresh: bool = False,
    an: Analyzer | None = None,
) -> Value:
    """`m.train(mode)` / `m.eval()`: m and every module below it take the mode,
    each one object wherever it is held (a plain list holding a child sees it
    changed): in the module being built and the frame at hand while it is built,
    and in a target run's forward wherever the modules being built and the live
    frames hold it. A flag not known, or a change the analysis cannot place, leaves
    later reads of `training` undecided (modes.py)."""
    if flag is not None and fresh:
        return in_mode(recv, flag)
    if flag is None or (owner is None and (an is None or not an.specialize)):
        modes.lose()
        return recv
    then = _flip(reached_below(recv, modules_below), flag)
    made, found = changed_in_place(an, recv, then, None if owner is None else [owner], frame)
    if isinstance(recv, SelfRecorder) and modes.ATTR in recv.attrs:
        recv.attrs[modes.ATTR] = BoolV(flag)
    if not found:
        modes.lose()  # held by no constructor at hand
    return made


def in_mode(v: Value, flag: bool) -> Value:
    """v after `v.train(flag)`: every module in it (a project module's
    `training`, a list's items) in that mode, each one object wherever v holds it
    (a plain list beside the modules too)."""
    reached: dict[int, Value] = {}
    modules_below(v, reached)
    return holders.rebuilt(v, _flip(reached, flag))


def modules_below(v: Value, out: dict[int, Value]) -> None:
    """The modules `v.train()` walks, by id (the values kept alive beside): modules
    and what registers them (a ModuleDict; a plain dict or list of layers is no
    child)."""
    if id(v) in out:
        return
    if isinstance(v, ObjectV) and (is_module(v) or v.kind == REGISTERED_DICT_KIND):
        out[id(v)] = v
        for _, a in v.attrs:
            modules_below(a, out)
    elif isinstance(v, ModuleListV):
        out[id(v)] = v
        for i in v.items:
            modules_below(i, out)


def _flip(reached: dict[int, Value], flag: bool):
    """The change `train(flag)` makes to one value, its contents rebuilt already."""

    def then(old: Value, new: Value) -> Value:
        if id(old) not in reached or not isinstance(new, ObjectV):
            return new
        attrs = [(k, BoolV(flag) if k == modes.ATTR else a) for k, a in new.attrs]
        if new.kind.startswith("torch.nn.") and all(k != modes.ATTR for k, _ in attrs):
            attrs.append((modes.ATTR, BoolV(flag)))  # a torch layer holds it from then on
        return ObjectV(new.kind, tuple(attrs))

    return then


def with_requires_grad(v: Value, flag: bool) -> Value:
    """v with every parameter in it (a module's, a list's) at requires_grad=flag,
    each one object wherever v holds it."""
    reached: dict[int, Value] = {}
    _parameters_reached(v, reached)
    return holders.rebuilt(v, _regrad(reached, flag))


def _parameters_reached(v: Value, out: dict[int, Value]) -> None:
    """The Parameters `v.requires_grad_()` sets, by id (kept alive beside): those
    of the modules, dicts and module lists below v."""
    if id(v) in out:
        return
    out[id(v)] = v
    if isinstance(v, ObjectV) and (is_module(v) or v.kind in DICT_KINDS):
        for _, a in v.attrs:
            _parameters_reached(a, out)
    elif isinstance(v, ModuleListV):
        for i in v.items:
            _parameters_reached(i, out)


def _regrad(reached: dict[int, Value], flag: bool):
    def then(old: Value, new: Value) -> Value:
        if id(old) in reached and isinstance(new, ParameterV):
            return ParameterV(new.shape, new.dtype, flag)
        return new

    return then


def assign_requires_grad(
    an, owner: SelfRecorder | None, target: ast.Attribute, value: Value, frame
):
    """`p.requires_grad = flag` while modules are built (owner: the one whose
    constructor's frame this is, None in a function it calls): the parameter p
    names takes it, where they hold it; anything else (a loop over parameters()
    the analysis does not follow) leaves what is trainable not known."""
    obj = an.eval(target.value, frame)
    flag = value.value if isinstance(value, BoolV) else None
    owners = [owner] if owner is not None else list(aliasing.recorders())
    if isinstance(obj, ParameterV) and flag is not None:
        new = ParameterV(obj.shape, obj.dtype, flag)
        if any([replace_identical(o, obj, new, frame) for o in owners]):
            return
    elif type(obj) is TensorV and flag is False and (owner is None or obj.grad is False):
        # `pe = torch.zeros(n, d); pe.requires_grad = False`: a plain tensor that
        # requires no grad keeps its flag, and no Parameter is that object (in a
        # function the constructor calls, a tensor that run made). A flag set True
        # makes a tensor autograd tracks wherever it is held, which the analysis
        # does not follow: what is trainable, and so the backward, is not known
        return
    trainability_lost(owners)
