"""What calling a module runs in a target run, as `Module._call_impl` runs it: the
forward the instance holds (`self.forward = f` while it was built, found before the
class's method as Python's lookup finds it; `m.forward` read so too), and the
forward hooks and pre-hooks a target run registers on a module it knows, run
where torch runs them: `m.register_forward_pre_hook(fn)` and
`m.register_forward_hook(fn)` add fn to m itself (one object, wherever it is held),
and a call of m runs, as `Module._call_impl` does, each pre-hook in order as
`fn(m, args)` (a value other than None replaces the positional arguments, a single
one wrapped into a tuple; with `with_kwargs=True`, `fn(m, args, kwargs)` returns
the pair), then forward, then each hook as `fn(m, args, output)` (a value other
than None replaces the output; `fn(m, args, kwargs, output)` with `with_kwargs`).
`prepend=True` puts the hook first. The handle registration returns removes it
(`handle.remove()`).

A hook on every module (`torch.nn.modules.module.register_module_forward_hook(fn)`,
`register_module_forward_pre_hook`) run in a target run is kept for the run: from
then on each call of a module (an nn.Module of the project, a torch layer, a
Sequential, a compiled module and the module it runs) runs the global hooks before
its own, as `Module._call_impl` does; the layers a stub describes call no module
inside (their submodules' weights are read, not called), and those torch builds of
other layers are read as source, whose calls run them.

What the analysis cannot place (a module not known, a hook or a flag not known, a
global hook given what it cannot call, an instance of a class whose bases are not
known) stays with dynamic.py: the calls it may change are not costed. The hooks'
own ops are recorded where their bodies run.
"""

from __future__ import annotations

import itertools
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shapelint.analysis import aliasing, dynamic, holders, own_methods
from shapelint.analysis.attributes import call_unsure, derives_from_module, own_call
from shapelint.analysis.callable_values import bind_own
from shapelint.analysis.dict_values import dict_value
from shapelint.analysis.module_kinds import is_module
from shapelint.analysis.module_lists import ModuleListV
from shapelint.analysis.recorder import SelfRecorder
from shapelint.analysis.unknown_cost import record_not_known
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import (
    DICT_KIND,
    UNKNOWN,
    BoolV,
    Cost,
    NoneV,
    ObjectV,
    TupleV,
    Value,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

HOOKS = "<forward hooks>"  # pseudo attribute of a module: a TupleV of HookV
_PRE = "register_forward_pre_hook"
_POST = "register_forward_hook"
_OPTIONS = {_PRE: {"prepend", "with_kwargs"}, _POST: {"prepend", "with_kwargs", "always_call"}}

# torch's functions that add a hook to every module (torch.nn.modules.module's, read
# under whichever path of torch.nn names them): pre-hook or not, the options it takes
GLOBAL = {
    "register_module_forward_pre_hook": (True, set()),
    "register_module_forward_hook": (False, {"with_kwargs", "always_call"}),
}


def global_registration(qual: str) -> bool:
    """qual is one of torch's GLOBAL functions."""
    return qual.startswith("torch.nn.") and qual.rpartition(".")[2] in GLOBAL


# The global hooks the target run registered, in order (torch's OrderedDicts).
_GLOBAL: list = []
_FREE = Cost(Expr.const(0), Expr.const(0), Expr.const(0))

_KEYS = itertools.count(1)
# The module whose next call runs without its hooks: the call the hooks wrap.
_BARE: ContextVar[int | None] = ContextVar("bare", default=None)


@dataclass(frozen=True, slots=True)
class HookV(Value):
    pre: bool
    fn: Value
    with_kwargs: bool
    key: int


# The hooks of a module whose hooks the analysis lost.
_NOT_KNOWN = HookV(False, UNKNOWN, False, 0)


@dataclass(frozen=True, slots=True)
class HandleV(Value):
    """The RemovableHandle a registration returns."""

    key: int


def register(an: Analyzer, recv: Value, method: str, args, kwargs) -> Value | None:
    """`recv.<method>(fn, ...)` in a target run: the handle, the hook added to recv
    wherever it is held; None where the analysis cannot place it."""
    if method not in _OPTIONS or len(args) != 1 or kwargs.keys() - _OPTIONS[method]:
        return None
    flags = {k: v.value if isinstance(v, BoolV) else None for k, v in kwargs.items()}
    if any(f is None for f in flags.values()) or args[0] is UNKNOWN:
        return None
    hook = HookV(method == _PRE, args[0], bool(flags.get("with_kwargs")), next(_KEYS))
    prepend = bool(flags.get("prepend"))
    if isinstance(recv, SelfRecorder):
        recv.attrs[HOOKS] = _added(recv.attrs.get(HOOKS), hook, prepend)
        return HandleV(hook.key)
    if not (isinstance(recv, ObjectV) and is_module(recv)):
        return None

    def then(old: Value, new: Value) -> Value:
        if old is not recv or not isinstance(new, ObjectV):
            return new
        attrs = dict(new.attrs)
        attrs[HOOKS] = _added(attrs.get(HOOKS), hook, prepend)
        return ObjectV(new.kind, tuple(attrs.items()))

    holders.each_changed(an, then, recv)
    return HandleV(hook.key)


def reset() -> None:
    """A new target run: no hook on every module yet."""
    _GLOBAL.clear()


def register_global(an: Analyzer, qual: str, node, frame, args, kwargs) -> Value | None:
    """`register_module_forward_hook(fn, ...)` (GLOBAL) in a target run: the handle, fn
    run round every module call from now on; None where the analysis cannot place it
    (the caller then makes every call not modelled)."""
    pre, options = GLOBAL[qual.rpartition(".")[2]]
    if len(args) != 1 or kwargs.keys() - options or args[0] is UNKNOWN:
        return None
    flags = {k: v.value if isinstance(v, BoolV) else None for k, v in kwargs.items()}
    if any(f is None for f in flags.values()):
        return None
    hook = HookV(pre, args[0], bool(flags.get("with_kwargs")), next(_KEYS))
    if not (an.trial or dynamic.in_generic_pass()):
        # a pass with the constructor's parameters not known, or a loop's trial turn,
        # registers nothing of the run
        _GLOBAL.append(hook)
    handle = HandleV(hook.key)
    an.record(node, frame, f"call {qual.rpartition('.')[2]}", None, [], handle, _FREE)
    return handle


def _added(held: Value | None, hook: HookV, prepend: bool) -> TupleV:
    items = held.items if isinstance(held, TupleV) else ()
    return TupleV((hook, *items) if prepend else (*items, hook))


def remove(an: Analyzer, handle: HandleV) -> Value:
    """`handle.remove()`: the hook leaves the module that holds it."""

    def then(old: Value, new: Value) -> Value:
        if not isinstance(new, ObjectV):
            return new
        held = dict(new.attrs).get(HOOKS)
        if not isinstance(held, TupleV) or all(h.key != handle.key for h in held.items):
            return new
        kept = tuple(h for h in held.items if h.key != handle.key)
        attrs = {k: v for k, v in new.attrs if k != HOOKS}
        if kept:
            attrs[HOOKS] = TupleV(kept)
        return ObjectV(new.kind, tuple(attrs.items()))

    holders.each_changed(an, then, UNKNOWN)
    _GLOBAL[:] = [h for h in _GLOBAL if h.key != handle.key]
    for r in aliasing.recorders():
        held = r.attrs.get(HOOKS)
        if isinstance(held, TupleV):
            kept = tuple(h for h in held.items if h.key != handle.key)
            r.attrs[HOOKS] = TupleV(kept)
    return NoneV()


def hooked(an: Analyzer, callee: Value) -> tuple[HookV, ...]:
    """The hooks a call of callee runs, the global ones first (none for the call the
    hooks wrap; _NOT_KNOWN among them where which is not known)."""
    if not an.specialize:
        return ()
    every: tuple = ()
    if _GLOBAL:
        applies = _global_applies(an, callee)
        every = tuple(_GLOBAL) if applies else () if applies is False else (_NOT_KNOWN,)
    held = dict(callee.attrs).get(HOOKS) if type(callee) is ObjectV else None
    if held is None or isinstance(held, TupleV) and not held.items:
        own: tuple = ()
    else:
        # hooks on one path and not the other, or others since (a join): which run, not known
        own = held.items if isinstance(held, TupleV) else (_NOT_KNOWN,)
    if not (every or own):
        return ()
    if _BARE.get() == id(callee):
        _BARE.set(None)
        return ()
    return (*every, *own)


def _global_applies(an: Analyzer, callee: Value) -> bool | None:
    """Whether calling callee is a module's call, which runs the global hooks (None:
    an instance of a class whose bases are not all known)."""
    if isinstance(callee, ModuleListV):
        return callee.sequential
    if type(callee) is ObjectV and callee.kind.startswith("einops.layers."):
        return True  # Rearrange, Reduce, EinMix: nn.Modules the stubs describe
    if type(callee) is not ObjectV or not is_module(callee):
        return False
    if callee.kind.startswith("<class>"):
        return derives_from_module(an, callee.kind[len("<class>") :])
    return True


def call(an: Analyzer, callee: Value, hooks, node, args, kwargs, frame) -> Value:
    """callee(*args, **kwargs) with its hooks, as `Module._call_impl` runs them."""
    if _NOT_KNOWN in hooks:
        return _lost(an, callee, node, frame, "which hooks it holds")
    if not through_call_impl(an, callee):
        # a class's own `__call__` runs instead, and the hooks only where it reaches
        # nn.Module's (`super().__call__`), which no run here follows to them
        return _lost(an, callee, node, frame, "which of its hooks its own __call__ runs")
    args, kwargs = list(args), dict(kwargs)
    for h in hooks:
        if not h.pre:
            continue
        given = [callee, TupleV(tuple(args), "tuple")] + ([_dict(kwargs)] if h.with_kwargs else [])
        got = an.call_value(h.fn, node, given, {}, frame)
        if isinstance(got, NoneV):
            continue
        if h.with_kwargs:
            pair = got.items if isinstance(got, TupleV) and got.kind == "tuple" else ()
            if len(pair) != 2 or not _is_dict(pair[1]) or not isinstance(pair[0], TupleV):
                return _lost(an, callee, node, frame, "a forward pre-hook's arguments")
            args, kwargs = list(pair[0].items), {str(k): v for k, v in pair[1].attrs}
        elif isinstance(got, TupleV) and got.kind == "tuple":
            args = list(got.items)
        elif got is UNKNOWN or isinstance(got, TupleV) and got.kind is None:
            return _lost(an, callee, node, frame, "what a forward pre-hook returns")
        else:
            args = [got]
    token = _BARE.set(id(callee))
    try:
        out = an.call_value(callee, node, args, kwargs, frame)
    finally:
        _BARE.reset(token)
    for h in hooks:
        if h.pre:
            continue
        given = [callee, TupleV(tuple(args), "tuple")] + ([_dict(kwargs)] if h.with_kwargs else [])
        got = an.call_value(h.fn, node, [*given, out], {}, frame)
        if not isinstance(got, NoneV):
            out = got
    return out


def held_on(v: Value) -> bool:
    """A call of v runs hooks (or may: hooks on every module), or a forward of the
    instance's own."""
    if _GLOBAL and is_module(v):
        return True
    attrs = dict(v.attrs) if isinstance(v, ObjectV) else {}
    held = attrs.get(HOOKS)
    hooks = held is not None and not (isinstance(held, TupleV) and not held.items)
    return hooks or "forward" in attrs and is_module(v)


def instance_forward(an: Analyzer, callee: Value) -> Value | None:
    """The forward a module's instance holds (`self.forward = self.twice` while it was
    built), which `Module._call_impl` runs, as Python's lookup finds the instance's
    attribute before the class's method; None where it holds none."""
    if not an.specialize or type(callee) is not ObjectV or not is_module(callee):
        return None
    return dict(callee.attrs).get("forward")


def own_forward_read(an: Analyzer, recv: Value, name: str) -> Value | None:
    """`recv.forward` where the module instance holds its own forward: that value,
    bound as Python binds a method the instance holds (UNKNOWN where not known);
    None where it holds none (the class's method is read)."""
    if name != "forward" or not an.specialize:
        return None
    if isinstance(recv, SelfRecorder):
        own = recv.attrs.get("forward")
        return None if own is None else own_methods.read_back(recv, own)
    own = instance_forward(an, recv)
    return None if own is None else own if own is UNKNOWN else bind_own(own, recv)


def call_own_forward(an: Analyzer, callee: ObjectV, own: Value, node, args, kwargs, frame):
    """callee(*args, **kwargs) where the instance holds its own forward."""
    if own is UNKNOWN or not through_call_impl(an, callee):
        return _lost(an, callee, node, frame, "the forward its instance holds")
    return an.call_value(bind_own(own, callee), node, list(args), dict(kwargs), frame)


def through_call_impl(an: Analyzer, callee: Value) -> bool:
    """Calling callee runs nn.Module.__call__ (a torch layer or container, or a
    project class that defines no `__call__` along its bases)."""
    if not isinstance(callee, ObjectV) or not callee.kind.startswith("<class>"):
        return True
    cd = an.class_of(callee.kind[len("<class>") :])
    return cd is not None and own_call(an, cd) is None and not call_unsure(an, cd)


def _dict(kwargs: dict) -> ObjectV:
    return dict_value(kwargs)


def _is_dict(v: Value) -> bool:
    return isinstance(v, ObjectV) and v.kind == DICT_KIND


def _lost(an: Analyzer, callee: Value, node, frame, what: str) -> Value:
    """The call of a hooked module, not followed (named by its class: a target's own
    call has no text of its own)."""
    kind = callee.kind if isinstance(callee, ObjectV) else "Sequential"
    name = kind.removeprefix("<class>").rpartition(":")[2].rpartition(".")[2]
    record_not_known(an, node, frame, f"call {name}", f"{name}: {what} is not known")
    return UNKNOWN
