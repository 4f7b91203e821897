"""torch's reparametrizations of a layer's weight, as torch 2.13 applies them
(torch/nn/utils/weight_norm.py, spectral_norm.py, parametrizations.py): the layer
given is the one returned, changed in place; its weight is no Parameter any more
but a tensor recomputed from new Parameters (and buffers) before each forward.

- `weight_norm(m, name="weight", dim=0)`: Parameters `weight_g` (the norm over
  every axis but `dim`, kept with size 1; a scalar where dim is None or -1) and
  `weight_v` (the weight's shape), `weight = _weight_norm(v, g, dim)`.
- `parametrizations.weight_norm`: the same two, as `parametrizations.weight.
  original0` / `original1`.
- `spectral_norm(m, name="weight", dim=0)` (dim 1 for a transposed convolution):
  Parameter `weight_orig`, buffers `weight_u` (the weight's size along dim) and
  `weight_v` (the rest of its elements); `parametrizations.spectral_norm`: the
  Parameter `parametrizations.weight.original`, buffers `parametrizations.weight.0._u`
  / `_v`.
- `remove_weight_norm(m, name)`: the weight a Parameter again.

The recomputation runs no op torch's flop counter counts (norm, div, mul, mv,
dot), forward or backward: a call of the layer costs what the plain layer costs.
The weight is recomputed at each call, a tensor of its own: the layer's op saves
it where a Parameter would be no activation (the stubs list `self.weight` among what
a layer saves), and `_weight_norm` along the first or last axis saves the norms
(torch's fused kernel; elsewhere what it saves is not followed). Only torch layers
the stubs describe are modelled here (parametrize.py takes
`parametrizations.spectral_norm` of a module the project builds, and
`register_parametrization`); any other module given, or a name it does not hold
as a Parameter of known shape, leaves the result unknown as before.
"""

from __future__ import annotations

import ast
import dataclasses

from shapelint.analysis import aliasing, in_place, plain
from shapelint.analysis.callable_values import LayerClassV
from shapelint.analysis.holders import replace_identical
from shapelint.analysis.module_kinds import PARAMETRIZED, UNFOLLOWED
from shapelint.analysis.recorder import SelfRecorder
from shapelint.notation.symbolic import Expr
from shapelint.ops.backward import LEAF, Origin, after_op, made_by
from shapelint.ops.saved import nbytes
from shapelint.ops.stub_ops import registry
from shapelint.ops.values import (
    UNKNOWN,
    BoolV,
    BufferV,
    Cost,
    IntV,
    NoneV,
    ObjectV,
    ParameterV,
    StrV,
    TensorV,
    Value,
)

_UTILS = ("torch.nn.utils.", "torch.nn.utils.weight_norm.", "torch.nn.utils.spectral_norm.")
_PARAM = "torch.nn.utils.parametrizations."
# qualified name -> (what it does, its parameters after the module, their defaults)
_CALLS = {
    **{p + "weight_norm": ("weight_norm", ("name", "dim"), ("weight", 0)) for p in _UTILS},
    **{
        p + "spectral_norm": (
            "spectral_norm",
            ("name", "n_power_iterations", "eps", "dim"),
            ("weight", 1, 1e-12, None),
        )
        for p in _UTILS
    },  # fmt: skip
    **{p + "remove_weight_norm": ("remove", ("name",), ("weight",)) for p in _UTILS},
    _PARAM + "weight_norm": ("p_weight_norm", ("name", "dim"), ("weight", 0)),
    _PARAM + "spectral_norm": (
        "p_spectral_norm",
        ("name", "n_power_iterations", "eps", "dim"),
        ("weight", 1, 1e-12, None),
    ),  # fmt: skip
}
NAMES = frozenset(_CALLS)
# torch's general one: `module.<name>` becomes what the parametrization's forward
# returns from the original at each read (torch/nn/utils/parametrize.py):
# parametrize.py follows it, and spectral_norm of a module the project builds.
REGISTER = "torch.nn.utils.parametrize.register_parametrization"


def function_value(qual: str) -> Value | None:
    """A reparametrization read as a value (`norm_f = weight_norm if ... else
    spectral_norm`, `g = torch.nn.utils.weight_norm`): the function itself, whose
    call is the call of its name, as Python's binding of a function to a name is."""
    return LayerClassV(qual) if qual in NAMES else None


# Where a reparametrized layer keeps which weights its forward pre-hook recomputes
# (torch's `_forward_pre_hooks` / `parametrizations`); no Python name can clash.
HOOKS = "<reparametrized>"
_HOOK_KIND = "<reparametrization>"
PARAMETRIZATIONS_KIND = "torch.nn.utils.parametrize.ParametrizationList"
_DICT_KIND = "torch.nn.ModuleDict"

SAVED_WHY = (
    "what recomputing a weight saves is not followed (spectral_norm, or weight_norm "
    "over the whole tensor or along an axis neither the first nor the last as given)"
)


def apply(an, qual: str, args, kwargs, open_kwargs, frame) -> Value | None:
    """The layer a reparametrization call returns, changed where the module being
    built and the caller's names hold it; None where it is not modelled."""
    what, names, defaults = _CALLS[qual]
    if open_kwargs or not args or len(args) > 1 + len(names) or set(kwargs) - {"module", *names}:
        return None
    bound = dict(zip(names, defaults, strict=True))
    bound.update(zip(names, args[1:], strict=False))
    bound.update({k: v for k, v in kwargs.items() if k != "module"})
    module = args[0]
    name = literal(bound["name"])
    if (
        not isinstance(module, ObjectV)
        or not module.kind.startswith("torch.nn.")
        or not isinstance(name, str)
    ):
        return None
    if what == "remove":
        new = _removed(module, name)
    else:
        dim = literal(bound["dim"])
        if dim is _NOT_KNOWN:
            return None
        new = _applied(what, module, name, dim)
    if new is None:
        return None
    replace_held(module, new, frame)
    return new


def replace_held(module: Value, new: Value, frame) -> None:
    """new where the modules being built (each, at any depth: a helper function
    handed `self.proj` changes the one layer they hold) and the names of every
    live frame (`lin = nn.Linear(...); wrap(lin)`: the caller's `lin`) hold
    module: Python changes the one object in place."""
    for owner in aliasing.recorders():
        replace_identical(owner, module, new, frame)
    for f in {id(f): f for f in (*in_place.LIVE, frame)}.values():
        for k, v in list(f.env.items()):
            if v is module:
                f.env[k] = new


_NOT_KNOWN = object()


def not_followed(qual: str, args, kwargs, frame, node=None) -> None:
    """A reparametrization apply() does not model (register_parametrization, or one
    handed a module it does not describe, the module being built among them): the
    module given changes in place, its weight no Parameter any more but what a
    forward recomputes, with Parameters and buffers of their own. Passing over the
    call would keep the plain layer's weight, a complete figure torch does not
    reach (a Björck parametrization in eval mode returns a buffer: no weight
    gradient). The module is not known after it: for the one being built, its
    weight and what it registers; a module it holds or a caller's name holds, the
    whole module. A module the analysis does not know (`self.attn.out_proj` of a
    layer whose stub holds no such layer) changes where it is held: the counts of
    the modules being built are lost, and the layer of the one being built that
    the argument is read off (`self.attn`) is not known."""
    module = args[0] if args else kwargs.get("module")
    name = literal(args[1] if len(args) > 1 else kwargs.get(_NAME_KW.get(qual, "name"), "weight"))
    if isinstance(module, SelfRecorder):
        module.attrs[UNFOLLOWED] = UNKNOWN
        module.attrs[PARAMETRIZED] = UNKNOWN
        if isinstance(name, str):
            module.attrs[name] = UNKNOWN
            plain.mark(module.attrs, name, False)
        aliasing.lost()
        return
    if isinstance(module, ObjectV):
        replace_held(module, UNKNOWN, frame)
        return
    owner = frame.env.get("self")
    given = node.args[0] if node is not None and node.args else None
    path = []
    while isinstance(given, ast.Attribute):
        path.append(given.attr)
        given = given.value
    if (
        isinstance(owner, SelfRecorder)
        and isinstance(given, ast.Name)
        and given.id == "self"
        and path
    ):
        owner.attrs[path[-1]] = UNKNOWN
        plain.mark(owner.attrs, path[-1], False)
    aliasing.lost()


_NAME_KW = {REGISTER: "tensor_name"}


def literal(v: Value):
    if isinstance(v, (str, int, float)) or v is None:
        return v
    if isinstance(v, NoneV):
        return None
    if isinstance(v, BoolV) and v.value is not None:
        return v.value
    if isinstance(v, StrV) and v.value is not None:
        return v.value
    if isinstance(v, IntV) and v.value is not None and v.value.value is not None:
        return v.value.value
    return _NOT_KNOWN


def _hooks(module: ObjectV) -> dict[str, str]:
    held = module.attr(HOOKS)
    return dict((k, a.value) for k, a in held.attrs) if isinstance(held, ObjectV) else {}


def _hooks_value(hooks: dict[str, str]) -> ObjectV:
    """What _hooks reads back: each reparametrized name and what recomputes it."""
    return ObjectV(_HOOK_KIND, tuple((k, StrV(w)) for k, w in hooks.items()))


def _applied(what: str, module: ObjectV, name: str, dim) -> ObjectV | None:
    weight = module.attr(name)
    hooks = _hooks(module)
    if not isinstance(weight, ParameterV) or weight.rank is None or name in hooks:
        return None  # torch refuses a second hook on one name; a tensor not known
    shape, rank = weight.shape, weight.rank
    if what in ("weight_norm", "p_weight_norm"):
        if dim is None or dim == -1:  # torch's norm_except_dim: the whole tensor
            g_shape: tuple = ()
        elif -rank <= dim < rank:
            g_shape = tuple(d if i == dim % rank else Expr.const(1) for i, d in enumerate(shape))
        else:
            return None
        g = ParameterV(g_shape, weight.dtype, weight.requires_grad)
        v = ParameterV(shape, weight.dtype, weight.requires_grad)
        held = {name + "_g": g, name + "_v": v} if what == "weight_norm" else None
        originals = (("original0", g), ("original1", v))
    else:
        if dim is None:
            dim = 1 if module.kind.split(".")[-1].startswith("ConvTranspose") else 0
        if not -rank <= dim < rank:
            return None
        orig = ParameterV(shape, weight.dtype, weight.requires_grad)
        u, v2 = power_buffers(weight, dim)
        held = {name + "_orig": orig, name + "_u": u, name + "_v": v2}
        if what == "p_spectral_norm":
            held = None
            norm = ObjectV(_PARAM + "_SpectralNorm", (("_u", u), ("_v", v2)))
            originals = (("original", orig), ("0", norm))
        else:
            originals = ()
    computed = made_by(TensorV(shape, weight.dtype, grad=weight.requires_grad), Origin(LEAF))
    attrs = [(k, computed if k == name else a) for k, a in module.attrs if k != HOOKS]
    if held is not None:
        attrs += list(held.items())
    else:
        attrs = _parametrized(attrs, name, originals)
    # torch's fused `_weight_norm_interface` runs where dim, as given, is the first
    # or the last axis; any other axis goes through a transposed copy of v
    fused = "weight_norm" in what and dim in (0, rank - 1)
    hooks[name] = f"{what} fused" if fused else what
    attrs.append((HOOKS, _hooks_value(hooks)))
    return ObjectV(module.kind, tuple(attrs))


def power_buffers(weight: ParameterV, dim: int) -> tuple[BufferV, BufferV]:
    """spectral_norm's power-iteration vectors: u the weight's size along dim, v
    the product of its other sizes (None where one is not known)."""
    shape = weight.shape or ()
    rest: Expr | None = Expr.const(1)
    for i, d in enumerate(shape):
        if i != dim % len(shape):
            rest = None if rest is None or not isinstance(d, Expr) else rest * d
    return BufferV((shape[dim % len(shape)],), weight.dtype), BufferV((rest,), weight.dtype)


def _parametrized(attrs: list, name: str, originals) -> list:
    """`parametrizations.<name>`: a ModuleDict of ParametrizationLists, made at the
    first parametrization of the module."""
    entry = (name, ObjectV(PARAMETRIZATIONS_KIND, tuple(originals)))
    for i, (k, a) in enumerate(attrs):
        if k == "parametrizations" and isinstance(a, ObjectV):
            attrs[i] = (k, dataclasses.replace(a, attrs=(*a.attrs, entry)))
            return attrs
    return [*attrs, ("parametrizations", ObjectV(_DICT_KIND, (entry,)))]


def _removed(module: ObjectV, name: str) -> ObjectV | None:
    hooks = _hooks(module)
    if hooks.get(name, "").split()[:1] != ["weight_norm"]:
        return None
    weight = module.attr(name)
    g = module.attr(name + "_g")
    if not isinstance(weight, TensorV) or not isinstance(g, ParameterV):
        return None
    del hooks[name]
    gone = {name + "_g", name + "_v", HOOKS}
    attrs = [
        (k, ParameterV(weight.shape, weight.dtype, g.requires_grad) if k == name else a)
        for k, a in module.attrs
        if k not in gone
    ]
    if hooks:
        attrs.append((HOOKS, _hooks_value(hooks)))
    return ObjectV(module.kind, tuple(attrs))


def before_forward(an, module: Value, node, frame) -> Value:
    """A call of a reparametrized layer: its forward pre-hooks first recompute
    each weight from the Parameters that stand for it, an op of no FLOPs as torch
    counts them, forward or backward; the layer runs with that new tensor. Along
    the first or last axis, `_weight_norm` saves the norms (the shape of g) beside
    the Parameters; elsewhere torch saves intermediate results this does not
    follow: not known."""
    hooks = _hooks(module)
    if not hooks or not isinstance(module, ObjectV):
        return module
    swapped: dict[str, Value] = {}
    for name, what in hooks.items():
        weight, sources = module.attr(name), _sources(module, name, what.split()[0])
        if not isinstance(weight, TensorV) or sources is None:
            swapped[name] = UNKNOWN
            continue
        g = sources[0]
        fused = what.endswith(" fused")
        saves = (("new", nbytes(g)),) if fused else (("?", SAVED_WHY),)
        if fused and not _layer_saves(module.kind, name):
            saves = (("?", UNSAVED_WHY),)
        other = None
        if "weight_norm" in what and weight.numel() is not None and g.numel() is not None:
            # the norm reads v, g is divided by it, v multiplied by the quotient
            other = 2 * weight.numel() + g.numel()
        zero = Expr.const(0)
        cost = Cost(zero, other, None, [], backward=zero, saving=saves)
        fresh = TensorV(weight.shape, weight.dtype)
        op = "torch._weight_norm" if "weight_norm" in what else "spectral_norm"
        fresh, cost = after_op(op, list(sources), {}, fresh, cost, an.costs)
        rec = an.record(node, frame, f"{op} ({name})", None, list(sources), fresh, cost)
        # The layer's op saves the new weight: where the loss does not reach the
        # layer's result, that op's saved figure is unknown already, so this one's
        # need not be judged by the walk (which meets the weight only through it).
        rec.result = None
        swapped[name] = fresh
    return ObjectV(module.kind, tuple((k, swapped.get(k, a)) for k, a in module.attrs))


UNSAVED_WHY = (
    "whether the layer's op saves the weight a reparametrization recomputes is not described"
)


def _sources(module: ObjectV, name: str, what: str) -> tuple[ParameterV, ...] | None:
    """The Parameters a weight is recomputed from, g first for weight_norm."""
    if what == "weight_norm":
        got = (module.attr(name + "_g"), module.attr(name + "_v"))
    elif what == "spectral_norm":
        got = (module.attr(name + "_orig"),)
    else:
        held = module.attr("parametrizations")
        entry = held.attr(name) if isinstance(held, ObjectV) else UNKNOWN
        if not isinstance(entry, ObjectV):
            return None
        keys = ("original0", "original1") if what == "p_weight_norm" else ("original",)
        got = tuple(entry.attr(k) for k in keys)
    return got if all(isinstance(p, ParameterV) for p in got) else None  # type: ignore[return-value]


def _layer_saves(kind: str, name: str) -> bool:
    """Whether every rule of the layer's call says what it does with its weight
    `name` (a Parameter's storage is no activation, so a stub may leave it out)."""
    entries = registry().entries.get(f"{kind}.__call__", ())
    rules = [e.saved for e in entries if e.saved is not None]
    return bool(rules) and all(any(i.name == f"self.{name}" for i in r) for r in rules)
