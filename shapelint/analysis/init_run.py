"""Plain mode's instances: what a run of `__init__` at the call's arguments decides
that the symbolic attributes leave open.

Outside a target, a project module's instance takes the attributes its `__init__`
gives for any arguments, with the call's sizes substituted in. A flag computed
from them (`self.use_res_connect = self.stride == 1 and inp == oup`) is unknown in
that summary, so a method run on the instance (`argument_runs.value_at`) followed both
sides of `if self.use_res_connect:` even where the call's arguments decide it
(`Block(c1, c2, 2)`: stride 2, never the residual), and met the conflict of the
side torch never runs. Python runs `__init__` on the arguments given: so does this,
and keeps the scalars it settles, and a tensor whose rank the summary lost where the
run gives every size in the call's own names (`init_values * torch.ones(dim)`: the
summary's init_values may be a tensor, the call's is a float), and a module the call
hands it that the run stores (`self.fn = fn`), or keeps in a ModuleList of those
modules alone (`self.fns = nn.ModuleList(fns)`). A layer the run builds stays as the
summary says, but where the summary's `__init__` stored it on a path of a test it could
not decide (the summary keeps the last path's value: `self.cross_attn = None` after
`if has_cross_attn: ... else:`) and the call's arguments decide that test: there the
run's value, in the call's own sizes, is the instance's. So too where the summary
could not build a layer because a parameter is the class to build it from
(`activation()` in a Sequential, any layer for any argument) and the call hands one
(`activation=nn.ReLU`): the run builds that very class's layer."""

from __future__ import annotations

from shapelint.analysis import (
    built_objects,
    construction,
    learning,
    may_raise,
    module_kinds,
    modules,
    raising,
    unnamed,
)
from shapelint.analysis.attributes import find_method, settled
from shapelint.analysis.callable_values import ClassRefV, LayerClassV, PartialV
from shapelint.analysis.module_lists import ModuleListV
from shapelint.analysis.own_pass import OwnPass
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import UNKNOWN, BoolV, FloatV, IntV, NoneV, ObjectV, StrV, TensorV, Value

_RUNNING: set[str] = set()  # classes whose constructor runs here: no recursion


def decided(an, cd, instance: ObjectV, args, kwargs) -> ObjectV:
    """instance with each attribute the summary leaves unknown and the run of
    __init__ at these arguments settles to a scalar (a bool, a number, a string,
    None) set to it, each tensor whose rank the summary lost and the run gives
    in the call's own sizes (a tensor the run builds from them), and each one the run
    sets to a module the call hands it."""
    handed = _handed(args, kwargs)
    builders = _builders(args, kwargs)
    open_names = {
        k
        for k, v in instance.attrs
        if v is UNKNOWN
        or _rank_lost(v)
        or (handed and isinstance(v, IntV) and v.value is None)
        or (handed and isinstance(v, ModuleListV) and not v.known)
        or k in cd.path_attrs
        or (builders and _unbuilt_layer(v))
    }
    if not open_names or cd.key in _RUNNING:
        return instance
    init = find_method(an, cd, "__init__")
    if init is None:
        return instance
    key = ("<init-run>", cd.key, tuple(args), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])))
    try:
        found = an.specialized.get(key)
    except TypeError:  # an argument that is no key: run it unmemoised
        key, found = None, None
    if found is None:
        found = _run(an, cd, init, open_names, args, kwargs)
        if key is not None:
            an.specialized[key] = found
    elif found:  # the first run's objects, handed out again in this build's place
        built_objects.reused(found.values())
    if not found:
        return instance
    return ObjectV(instance.kind, tuple((k, found.get(k, v)) for k, v in instance.attrs))


def _run(an, cd, init, open_names: set[str], args, kwargs) -> dict[str, Value]:
    recorder = modules.SelfRecorder(cd.key)
    _RUNNING.add(cd.key)
    try:
        # a pass of its own, as value_at's: no fact, store, call path, exception or
        # finding of it is the caller's
        with OwnPass(), may_raise.apart(), raising.apart(), an.diverted(), an.naming.paused():
            construction.run_init(an, init, recorder, list(args), dict(kwargs))
    finally:
        _RUNNING.discard(cd.key)
    # a flag another method sets is not what __init__ gave it (attributes.settled)
    attrs = settled(an, cd, recorder.attrs)
    given = unnamed.value_names((tuple(args), tuple(kwargs.values()))) - _left(init, args, kwargs)
    handed = _handed(args, kwargs)
    out = {
        k: v
        for k, v in attrs.items()
        if k in open_names and (_scalar(v) or _sized_by(v, given) or _handed_on(v, handed))
    }
    if _builders(args, kwargs):
        for k in open_names - set(out) - recorder.on_a_path:
            built = _built_layer(attrs.get(k), given)
            if built is not None:
                out[k] = built
    for k in cd.path_attrs & open_names - set(out):
        taken = _path_taken(k, attrs, recorder, given)
        if taken is not None:
            out[k] = taken
    return out


def _path_taken(name: str, attrs: dict[str, Value], recorder, given: set[str]) -> Value | None:
    """An attribute the summary's __init__ stored on a path of a test it could not
    decide (`if has_cross_attn: self.cross_attn = PreNorm(dim, ...)`, else None: the
    summary keeps the last path's None), which these arguments decide: what the run
    stored there on no undecided path, each size of it that is not the call's own
    unknown (a parameter a layer it builds leaves at its default, FeedForward's
    `mult`, is a name of that layer's, which the caller may use for another size);
    None where the run left it on a path too, or a value keeps such a name."""
    if name not in attrs or name in recorder.on_a_path:
        return None
    v = learning.forget(attrs[name], unnamed.value_names(attrs[name]) - given)
    return v if unnamed.value_names(v) <= given else None


def _handed(args, kwargs) -> list[Value]:
    """The modules the call hands the constructor (`PreNorm(dim, Attention(...))`):
    the summary made its parameter a size, which the call's module is not, so the
    attribute `__init__` stores it in (`self.fn = fn`) is unknown there; the run stores
    the very module, which its methods then call."""
    return [v for v in (*args, *kwargs.values()) if module_kinds.is_module(v)]


def _builders(args, kwargs) -> bool:
    """Whether the call hands the constructor a class to build layers from
    (`Tokenizer(..., activation=nn.ReLU)`, `norm_layer=LayerNorm`): the summary's
    parameter is any value, so a layer `activation()` builds is not known there,
    nor is a Sequential that holds it; the run builds the very class's layer."""
    return any(
        isinstance(v, (LayerClassV, ClassRefV)) or (isinstance(v, PartialV) and _builds(v.func))
        for v in (*args, *kwargs.values())
    )


def _builds(v: Value) -> bool:
    return isinstance(v, (LayerClassV, ClassRefV))


def _unbuilt_layer(v: Value) -> bool:
    """A layer the summary could not build where the run may: unknown in a module
    list (an item, or an end of one of symbolic length), or in one of its items."""
    if isinstance(v, ModuleListV):
        return any(x is UNKNOWN or _unbuilt_layer(x) for x in (*v.items, *(v.ends or ())))
    return False


def _built_layer(v: Value | None, given: set[str]) -> Value | None:
    """A module or module list the run built, in the call's own sizes: each size
    that names a parameter the call left at its default (a name of the callee's,
    which a caller's size may share) or a name of the run's own is unknown."""
    if v is None or not (module_kinds.is_module(v) or isinstance(v, ModuleListV)):
        return None
    return learning.forget(v, unnamed.value_names(v) - given)


def _handed_on(v: Value, handed: list[Value]) -> bool:
    """A module the call hands the constructor, or a module list of such modules
    alone (`self.fns = nn.ModuleList(fns)` of `Parallel(*[block() for _ in
    range(2)])`: the summary's `*fns` is a tuple of no known length, the run's is
    the call's modules)."""
    if isinstance(v, ModuleListV):
        return (
            v.known
            and v.count is None
            and bool(v.items)
            and all(any(item == h for h in handed) for item in v.items)
        )
    return any(v == h for h in handed)


def _left(init, args, kwargs) -> set[str]:
    """The names of the parameters the call leaves at their defaults: the run binds
    such a one to a size of its own name, which a caller's size may share."""
    a = init.node.args
    positional = [p.arg for p in [*a.posonlyargs, *a.args][1:]]
    every = {*positional, *(p.arg for p in a.kwonlyargs)}
    return every - set(positional[: len(args)]) - set(kwargs)


def _rank_lost(v: Value) -> bool:
    return isinstance(v, TensorV) and v.shape is None


def _sized_by(v: Value, given: set[str]) -> bool:
    """A tensor whose every size is known and named by the call's own arguments
    (`init_values * torch.ones(dim)` at a float init_values: [dim]): a name of
    __init__'s own (a parameter left at its default) is not the caller's."""
    if not isinstance(v, TensorV) or v.shape is None:
        return False
    return all(isinstance(d, Expr) and d.names() <= given for d in v.shape)


def _scalar(v: Value) -> bool:
    # a number only where constant: a symbol would be in __init__'s names, not
    # the caller's the summary was substituted into
    if isinstance(v, IntV):
        return v.value is not None and v.value.is_constant()
    if isinstance(v, (BoolV, StrV)):
        return v.value is not None
    # a float of any value: its kind is what a tensor op needs (`var + self.eps`
    # broadcasts to var's shape), and a float carries no size name
    return isinstance(v, (FloatV, NoneV))
