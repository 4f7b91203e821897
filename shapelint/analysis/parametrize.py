"""`torch.nn.utils.parametrize.register_parametrization` as torch 2.13 runs it
(torch/nn/utils/parametrize.py): `register_parametrization(module, name, p)` on a
module holding a Parameter or buffer `name` moves that tensor to
`module.parametrizations[name].original` (a Parameter still, the same count) and
makes `module.<name>` a property of a new class: each read runs the
ParametrizationList's forward, `p0(original)`, then `p1(...)` on that, and so on
(a second registration on the same name appends to the list). A step is a module
whose forward the run follows as any call of it, at every read, so torch's counter
counts its ops at each access (outside `parametrize.cached()`, which is not
modelled: a read inside it is not known). `parametrizations.spectral_norm` of a
module built by the project (the module being built, `spectral_norm(self)`) is
such a step too: torch's `_SpectralNorm`, whose forward runs no op the counter
counts, train or eval, with buffers `_u` / `_v`.

With `unsafe=False` torch runs the whole list once at registration and checks the
result's shape: that run is followed (its state changes kept, its cost dropped:
no forward of the module); a result of another shape, which torch refuses, is not
modelled; with `unsafe=True` no check runs and a list of any shape may follow:
not modelled. A step with a `right_inverse` changes the original at registration:
not modelled. Any case not modelled is reparametrize.not_followed's: the figures
are not known, never the plain layer's.

The tensor's own attribute holds UNKNOWN, marked plain (a property, no
registered tensor), so a read that does not come here (`module.attrs` read
directly) finds no figure; `read` gives the value where Python's attribute
lookup would run the property.
"""

from __future__ import annotations

import ast
import dataclasses
from contextvars import ContextVar

from shapelint.analysis import plain, reparametrize
from shapelint.analysis.attributes import find_method
from shapelint.analysis.module_kinds import torch_base
from shapelint.analysis.recorder import SelfRecorder
from shapelint.notation.symbolic import Expr
from shapelint.ops.backward import after_op
from shapelint.ops.values import UNKNOWN, BufferV, Cost, ObjectV, ParameterV, TensorV, Value
from shapelint.scoped import Bound

_LIST = reparametrize.PARAMETRIZATIONS_KIND
_DICT = "torch.nn.ModuleDict"
SPECTRAL = "torch.nn.utils.parametrizations._SpectralNorm"
# torch layers whose forward reads each of its tensors once per call (F.linear,
# F.conv*d, F.conv_transpose*d, F.embedding, F.layer_norm, F.group_norm with
# `self.weight`, `self.bias`): a
# parametrized one is recomputed once per call of the layer.
READ_ONCE = frozenset(
    {
        "torch.nn.Linear",
        "torch.nn.Conv1d",
        "torch.nn.Conv2d",
        "torch.nn.Conv3d",
        "torch.nn.ConvTranspose1d",
        "torch.nn.ConvTranspose2d",
        "torch.nn.ConvTranspose3d",
        "torch.nn.Embedding",
        "torch.nn.LayerNorm",
        "torch.nn.GroupNorm",
    }
)


UNFOLLOWED_WHY = "a parametrized tensor of a layer whose forward may read it more than once, or of a layer it holds"


def _attrs(module) -> dict[str, Value]:
    return module.attrs if isinstance(module, SelfRecorder) else dict(module.attrs)


def parametrized(module) -> tuple[str, ...]:
    """The names whose reads run a parametrization this module follows."""
    if not isinstance(module, (SelfRecorder, ObjectV)):
        return ()
    # asked at every attribute read of a target run: no copy of the attributes
    if isinstance(module, SelfRecorder):
        held = module.attrs.get("parametrizations")
    else:
        held = module.attr("parametrizations")
    if not isinstance(held, ObjectV) or held.kind != _DICT:
        return ()
    hooked = _hooked(module)
    return tuple(
        k
        for k, v in held.attrs
        if isinstance(v, ObjectV) and v.kind == _LIST and v.attr("0") is not UNKNOWN
        and k not in hooked
    )  # fmt: skip


def _hooked(module) -> set[str]:
    held = _attrs(module).get(reparametrize.HOOKS)
    return {k for k, _ in held.attrs} if isinstance(held, ObjectV) else set()


# the calls `call` follows: the general one, and spectral_norm through it
FOLLOWED = frozenset({reparametrize.REGISTER, "torch.nn.utils.parametrizations.spectral_norm"})
_REGISTER = ("module", "tensor_name", "parametrization")
_SPECTRAL_ARGS = ("module", "name", "n_power_iterations", "eps", "dim")


def call(an, qual: str, args, kwargs, open_kwargs, node, frame) -> Value | None:
    """`register_parametrization(...)`, or `parametrizations.spectral_norm(...)` of a
    module reparametrize.apply does not describe: the module changed, None where
    it is not modelled."""
    if open_kwargs:
        return None
    spectral = qual != reparametrize.REGISTER
    names = _SPECTRAL_ARGS if spectral else _REGISTER
    if len(args) > len(names) or set(kwargs) - {*names, *(() if spectral else ("unsafe",))}:
        return None
    bound = dict(zip(names, args, strict=False))
    if set(bound) & set(kwargs):
        return None
    bound.update(kwargs)
    module, name = (
        bound.get("module"),
        reparametrize.literal(bound.get("name" if spectral else "tensor_name", "weight")),
    )
    unsafe = reparametrize.literal(bound.get("unsafe", False))
    if not isinstance(name, str) or not isinstance(unsafe, bool):
        return None
    if spectral:
        step = spectral_step(an, module, name, reparametrize.literal(bound.get("dim")))
    elif "tensor_name" in bound:
        step = bound.get("parametrization")
    else:
        return None  # torch: a TypeError
    if step is None or unsafe:
        return None  # unsafe: no check at registration, a list of any shape: not modelled
    changed = register(an, module, name, step)
    if changed is None:
        return None
    if not isinstance(module, SelfRecorder):
        reparametrize.replace_held(module, changed, frame)
    # torch runs the list at registration and refuses a result of another shape than
    # the original's: run here with the module holding the new step, so that what
    # the step stores on itself lands where the module holds it; its cost dropped
    before = set(frame.records)
    got = read(an, changed, name, node, frame)
    _drop(frame, before)
    original = _attrs(changed)["parametrizations"].attr(name).attr("original")
    if not _same_shape(got, original):
        reparametrize.not_followed(qual, [changed, name], {}, frame)
        return None
    return changed


def register(an, module, name: str, step: Value) -> Value | None:
    """module with `step` registered on its tensor `name` (the module being built
    changed in place), or None where it is not modelled."""
    if not isinstance(module, (SelfRecorder, ObjectV)) or not _steppable(an, step):
        return None
    if name in parametrized(module):
        return _appended(module, name, step)
    original = _attrs(module).get(name)
    if not isinstance(original, (ParameterV, BufferV)) or original.rank is None:
        return None  # torch: a Parameter or buffer of that name, else ValueError
    if name in _hooked(module):
        return None
    return _with_entry(module, name, ObjectV(_LIST, (("original", original), ("0", step))))


def _steppable(an, step: Value) -> bool:
    """A step the run can call: a project module with a forward and no
    right_inverse (which would change the original at registration), a torch
    layer the stubs describe, or torch's _SpectralNorm."""
    if not isinstance(step, ObjectV):
        return False
    if step.kind == SPECTRAL:
        return True
    if step.kind.startswith("<class>"):
        cd = an.class_of(step.kind[7:])
        return (
            cd is not None
            and find_method(an, cd, "right_inverse") is None
            and (find_method(an, cd, "forward") is not None or torch_base(an, cd) is not None)
        )
    return step.kind.startswith("torch.nn.") and step.kind.count(".") == 2


def _with_entry(module, name: str, entry: ObjectV):
    """module with parametrizations[name] = entry and its own `name` a property."""
    attrs = _attrs(module)
    held = attrs.get("parametrizations")
    if isinstance(held, ObjectV) and held.kind == _DICT:
        kept = tuple((k, v) for k, v in held.attrs if k != name)
        pdict = dataclasses.replace(held, attrs=(*kept, (name, entry)))
    else:
        pdict = ObjectV(_DICT, ((name, entry),))
    attrs["parametrizations"] = pdict
    attrs[name] = UNKNOWN
    plain.mark(attrs, name, True)  # a property of the new class, no tensor registered
    if isinstance(module, SelfRecorder):
        return module
    return ObjectV(module.kind, tuple(attrs.items()))


def _appended(module, name: str, step: Value):
    entry = _attrs(module)["parametrizations"].attr(name)
    count = sum(1 for k, _ in entry.attrs if k.isdigit())
    return _with_entry(
        module, name, dataclasses.replace(entry, attrs=(*entry.attrs, (str(count), step)))
    )


def _same_shape(a: Value, b: Value) -> bool:
    if not (isinstance(a, TensorV) and isinstance(b, TensorV)):
        return False
    if a.rank is None or a.rank != b.rank:
        return False
    return all(
        isinstance(x, Expr) and isinstance(y, Expr) and x == y
        for x, y in zip(a.shape, b.shape, strict=True)
    )


def _drop(frame, before: set) -> None:
    for k in [k for k in frame.records if k not in before]:
        del frame.records[k]


# Set while the body of `with parametrize.cached():` runs: torch computes each
# parametrized tensor once there, keyed on the module's id, which a value here
# does not carry (a module's value is rebuilt when it changes): not modelled.
_CACHED: ContextVar[bool] = ContextVar("parametrize_cached", default=False)
CACHED = "torch.nn.utils.parametrize.cached"


def caching() -> Bound:
    return Bound(_CACHED, True)


def read(an, module, name: str, node, frame) -> Value:
    """`module.<name>` where a parametrization this module follows recomputes it:
    the ParametrizationList's forward run now, step by step; not known inside
    `parametrize.cached()`."""
    entry = _attrs(module)["parametrizations"].attr(name)
    if _CACHED.get():
        why = "a parametrization under parametrize.cached()"
        return an.unknown_call(
            _node(node, name, "cached"), [entry.attr("original")], {}, frame, why
        )
    x = entry.attr("original")
    if not isinstance(x, TensorV):
        return UNKNOWN
    i = 0
    while isinstance(x, TensorV):
        step = entry.attr(str(i))
        if step is UNKNOWN and all(k != str(i) for k, _ in entry.attrs):
            return x
        x = _step(an, step, x, _node(node, name, str(i)), frame)
        # a step's run may change the module (a buffer it stores): read the list again
        entry = _attrs(module)["parametrizations"].attr(name)
        i += 1
    return UNKNOWN


def _step(an, step: Value, x: TensorV, node, frame) -> Value:
    if isinstance(step, ObjectV) and step.kind == SPECTRAL:
        return _spectral(an, x, node, frame)
    return an.call_value(step, node, [x], {}, frame)


def _spectral(an, w: TensorV, node, frame) -> Value:
    """torch's _SpectralNorm forward: the power iteration (train mode, on its
    buffers, under no_grad) and `weight / sigma`, no op the flop counter counts; what
    it saves for backward is not followed."""
    zero = Expr.const(0)
    cost = Cost(zero, None, None, [], backward=zero, saving=(("?", reparametrize.SAVED_WHY),))
    fresh = TensorV(w.shape, w.dtype)
    fresh, cost = after_op("spectral_norm", [w], {}, fresh, cost, an.costs)
    an.record(node, frame, "spectral_norm", None, [w], fresh, cost)
    return fresh


def _node(node, name: str, step: str) -> ast.Call:
    """One call node per read site, tensor and step: records and memos key on it,
    and a record's key on where its node ends, so each made here ends apart."""
    key = f"_shapelint_parametrize_{name}_{step}"
    made = getattr(node, key, None)
    if made is None:
        func = ast.Name(f"parametrizations.{name}.{step}", ast.Load())
        made = ast.copy_location(ast.Call(func, [], []), node)
        count = getattr(node, _MADE, 0) + 1
        setattr(node, _MADE, count)
        made.end_lineno = getattr(node, "end_lineno", None)
        made.end_col_offset = (getattr(node, "end_col_offset", None) or 0) + count
        setattr(node, key, made)
    return made


_MADE = "_shapelint_parametrize_made"


def spectral_step(an, module, name: str, dim) -> ObjectV | None:
    """`parametrizations.spectral_norm(module)` of a module the project builds: the
    _SpectralNorm step, its buffers `_u` (the weight's size along dim: 0, 1 for a
    transposed convolution) and `_v` (the rest of its elements)."""
    if not isinstance(module, (SelfRecorder, ObjectV)):
        return None
    weight = _attrs(module).get(name)
    if not isinstance(weight, ParameterV) or weight.rank is None or weight.rank < 1:
        return None
    kind = module.cls if isinstance(module, SelfRecorder) else module.kind[7:]
    cd = an.class_of(kind)
    base = torch_base(an, cd) if cd is not None else None
    if dim is None:
        dim = 1 if base is not None and base.split(".")[-1].startswith("ConvTranspose") else 0
    if not isinstance(dim, int) or not -weight.rank <= dim < weight.rank:
        return None
    u, v = reparametrize.power_buffers(weight, dim)
    return ObjectV(SPECTRAL, (("_u", u), ("_v", v)))


def _nested(v: Value) -> bool:
    """v a module that holds, at any depth, a tensor a parametrization recomputes."""
    if not isinstance(v, ObjectV) or not v.kind.startswith(("<class>", "torch.nn.")):
        return False
    return bool(parametrized(v)) or any(_nested(a) for _, a in v.attrs)


def layer_called(an, base: str, me: ObjectV, node, frame) -> ObjectV | None:
    """me as its torch base's forward reads it (base: the layer's kind, or the torch
    base of me's project class): each parametrized tensor recomputed once, the
    base reading it once (READ_ONCE); me itself where none is; None where a base
    not known to read it once holds one, or a layer it holds does (the stub reads
    that layer's tensors as they are held)."""
    if any(_nested(v) for _, v in me.attrs):
        return None  # a layer a stub reads into (MultiheadAttention's out_proj.weight)
    names = parametrized(me)
    if not names:
        return me
    if base not in READ_ONCE:
        return None
    attrs = dict(me.attrs)
    for name in names:
        attrs[name] = read(an, me, name, node, frame)
    return ObjectV(me.kind, tuple(attrs.items()))
