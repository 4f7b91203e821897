"""Absent, not unknown, on torch's own objects: whether a tensor or an instance of
a project `nn.Module` subclass surely lacks an attribute, so that `hasattr` is False
and `getattr(obj, name, default)` takes its default, as Python would.

- A tensor whose class is exactly `torch.Tensor` (pytypes.type_of: an op the run
  followed made it, or it is a target's input) has what torch gives every tensor
  (torch_attributes.TENSOR, `dir()` of one) and what a program stores on it; torch
  defines no `__getattr__` on it. So a name outside that set, which no store the
  run made may have given it, is absent (`hasattr(x, "jax")`).
- A torch layer a stub describes (`nn.Conv2d(...)`) has nn.Module's attributes and
  those torch's stub-described layers add (torch_attributes.LAYERS, together), and
  what a program stores on it (`hasattr(conv, "init_weights")` is False).
- torch's own lists of modules (nn.ModuleList, nn.Sequential, nn.ParameterList,
  known item by item) have nn.Module's attributes, their classes'
  (torch_attributes.CONTAINERS) and their items' names (`getattr(blocks,
  "all_tied_weights_keys", None)` is None).
- An instance of a project class whose bases are project classes read as source
  and `nn.Module` has nn.Module's attributes (torch_attributes.MODULE: its methods,
  class attributes and what its `__init__` sets), what the instance holds (its
  attributes, and the Parameters, buffers and submodules `nn.Module.__getattr__`
  finds, all kept among them), and what its classes' source may bind (absence.py's
  rule: a class defining `__getattr__` or `__getattribute__`, a metaclass, a base
  or decorator not read, or the name in their text, and the answer is no).

Stores the run could not keep on the object (absence.stored_elsewhere, a setattr
of a computed name: any) make the name possible from then on. As absence.py says
of configs, code the run does not follow is not read: a store it makes into an
object handed to it is not seen, nor one through `__dict__` or
`object.__setattr__`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shapelint.analysis import absence, pytypes
from shapelint.analysis.aliasing import ALIASED
from shapelint.analysis.attributes import derives_from_module, mro
from shapelint.analysis.callable_values import LayerClassV
from shapelint.analysis.module_kinds import UNFOLLOWED, stub_layer
from shapelint.analysis.module_lists import ModuleListV, item_names
from shapelint.analysis.modules import SelfRecorder
from shapelint.analysis.torch_attributes import CONTAINERS, LAYERS, MODULE, TENSOR
from shapelint.ops.values import UNKNOWN, BufferV, ObjectV, ParameterV, TensorV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

# nn.Module as a base whose attributes MODULE lists.
_MODULE_BASES = (*absence.PLAIN_BASES, "torch.nn.Module", "torch.nn.modules.module.Module")


def lacks(an: Analyzer, obj: Value, name: str) -> bool:
    """Whether obj, a tensor or a project module instance, surely has no
    attribute `name` (in a target run); a name no attribute syntax can spell
    (`q_0.25_transform`) too, which only setattr or `__dict__` could have stored."""
    if not an.specialize or not name or name.startswith("__"):
        return False
    if absence.may_be_stored(name):
        return False
    if isinstance(obj, TensorV):
        return name not in TENSOR and _plain_tensor(an, obj)
    return name not in MODULE and _module_lacks(an, obj, name)


def lacks_while_built(an: Analyzer, obj: SelfRecorder, name: str) -> bool:
    """Whether the module a target run is building surely has no attribute `name`
    yet, so that reading it raises AttributeError as nn.Module.__getattr__ does:
    no store of it applied or possible (lacks' rule), and its classes name it
    only as their methods' own instance attribute (absence.built_instance_lacks):
    a store in a method the run did not run has not happened."""
    if not an.specialize or not name.isidentifier() or name.startswith("__") or name in MODULE:
        return False
    if absence.may_be_stored(name):
        return False
    if any(k in (name, UNFOLLOWED, ALIASED) for k in obj.attrs):
        return False
    cd = an.class_of(obj.cls)
    if cd is None or not derives_from_module(an, obj.cls):
        return False
    return absence.built_instance_lacks(an, cd, name, plain_bases=_MODULE_BASES)


def plain_tensor_store(an: Analyzer, held: Value, name: str) -> bool:
    """`self.A_log._no_weight_decay = True`: a store of a name torch's tensor class
    does not define (no property or method of `torch.Tensor`, TENSOR) on a
    Parameter, a buffer or a plain tensor goes to the tensor's own `__dict__`, as
    on any Python object: its shape, dtype, storage, requires_grad and whoever
    registers it stay, so nothing counted changes. Whether it applies; where it
    does, the name may be read from a tensor from now on (absence.stored_elsewhere)."""
    if not name.isidentifier() or name.startswith("__") or name in TENSOR:
        return False
    plain = isinstance(held, (ParameterV, BufferV)) or (
        isinstance(held, TensorV) and _plain_tensor(an, held)
    )
    if plain:
        absence.stored_elsewhere(name)
    return plain


def _plain_tensor(an: Analyzer, t: TensorV) -> bool:
    cls = pytypes.type_of(an, t)
    return isinstance(cls, LayerClassV) and cls.qual == "torch.Tensor"


def _module_lacks(an: Analyzer, obj: Value, name: str) -> bool:
    if isinstance(obj, ObjectV) and stub_layer(obj.kind):
        # a torch layer a stub describes: what torch's layers have, what it holds
        held = [k for k, _ in obj.attrs]
        return name not in LAYERS and not any(k in (name, UNFOLLOWED, ALIASED) for k in held)
    if isinstance(obj, ModuleListV):
        # torch's own list (a project subclass is an instance of its class, holding
        # one): its class's names and its items' names; where the items are not
        # known one by one, neither are the names `add_module` may have given them
        known = obj.known and obj.count is None
        return known and name not in CONTAINERS and name not in item_names(obj)
    if isinstance(obj, SelfRecorder):
        key, held = obj.cls, list(obj.attrs)
    elif isinstance(obj, ObjectV) and obj.kind.startswith("<class>"):
        key, held = obj.kind.partition(">")[2], [k for k, _ in obj.attrs]
    else:
        return False
    if any(k in (name, UNFOLLOWED, ALIASED) for k in held):
        return False  # held, or state registered under a name not known
    cd = an.class_of(key)
    if cd is None or not derives_from_module(an, key):
        return False
    # a decorator of another file is read as one of the class's own file is (the
    # files its import passes through loaded once per class: absence keeps what it
    # read per class), so that transformers' `@use_kernel_forward_from_hub("RMSNorm")`
    # on a child leaves post_init's `getattr(child, name, None)` decided.
    # The instance was built by the run, which applied every store of its own
    # methods that ran (or marked it): one they did not run has not happened
    # (`if need_proj: self.proj = ...` where need_proj was False).
    return absence.built_instance_lacks(an, cd, name, plain_bases=_MODULE_BASES)


def holds(an: Analyzer, obj: Value, name: str) -> bool:
    """Whether obj, an instance of a project `nn.Module` subclass the run built (or
    is building), surely has attribute `name`: it holds it on every path (a name
    bound on one path of an undecided test only is held as unknown: instance_state),
    no change the analysis could not place touched it, and no class hook may refuse
    the read. `hasattr(self, "proj")` is then True, as Python finds it."""
    if not an.specialize or absence.may_be_stored(name) or name.startswith("__"):
        return False
    if isinstance(obj, SelfRecorder):
        key, held = obj.cls, dict(obj.attrs)
    elif isinstance(obj, ObjectV) and obj.kind.startswith("<class>") and not stub_layer(obj.kind):
        key, held = obj.kind.partition(">")[2], dict(obj.attrs)
    else:
        return False
    if UNFOLLOWED in held or ALIASED in held or held.get(name, UNKNOWN) is UNKNOWN:
        return False
    cd = an.class_of(key)
    return cd is not None and derives_from_module(an, key) and not _hooked(an, cd)


def _hooked(an: Analyzer, cd) -> bool:
    """A class along cd's bases defines `__getattribute__` (which may refuse a name
    the instance holds) or `__delattr__`."""
    return any(m in c.methods for c in mro(an, cd) for m in ("__getattribute__", "__delattr__"))
