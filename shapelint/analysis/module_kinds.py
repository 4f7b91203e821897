"""What torch class a value or a project class is: the torch layer, container or
dict a project class derives from (along its bases as Python's MRO walks
them), the value of a torch qualified name, whether a value is a module, and
the kinds and markers the module values use (registered dicts, a container's
layers, state not followed).

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import aliasing
from shapelint.analysis.attributes import base_classes, module_class
from shapelint.analysis.callable_values import LayerClassV
from shapelint.analysis.calls import EINOPS_FUNCTIONS
from shapelint.analysis.module_lists import ModuleListV
from shapelint.ops.values import DICT_KIND, ObjectV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef


# torch's tensor classes, by every name the analysis reads them under: the module
# and qualified name Python gives each (`torch.nn.Parameter` is defined in
# torch.nn.parameter). pytypes answers what Python says of them.
TENSOR_CLASSES = {
    "torch.Tensor": ("torch", "Tensor"),
    "torch.nn.Parameter": ("torch.nn.parameter", "Parameter"),
    "torch.nn.parameter.Parameter": ("torch.nn.parameter", "Parameter"),
}


def layer_class(qual: str) -> Value | None:
    """The value of a qualified name that is a layer class the stubs describe, or
    else a function they describe (torch_function): in a file's own pass, the
    value of `nn.ReLU` named as a call's argument (`activation=nn.ReLU` handed to a
    constructor, which init_run builds the layer of: call_resolution)."""
    from shapelint.ops.stub_ops import describes

    leaf = qual.rsplit(".", 1)[-1]
    if leaf.lstrip("_")[:1].isupper() and describes(f"{qual}.__call__"):  # `_BatchNorm` too
        return LayerClassV(qual)
    return torch_function(qual)


def torch_value(qual: str) -> Value | None:
    """The value of a qualified name in a target run: a layer class, a function the
    stubs describe, or a tensor class (`type(x) is torch.Tensor`; calling it is the
    call of its name). No base a project class derives from: a subclass of
    torch.Tensor is no layer. An einops function (`_many(rearrange)`, einops_exts)
    is called as its name is."""
    if qual in TENSOR_CLASSES or qual in EINOPS_FUNCTIONS or qual in LIBRARY_CLASSES:
        return LayerClassV(qual)
    return layer_class(qual)


# Classes of the standard library held as values in a target run, compared by
# identity (`type(norm_layer) == functools.partial`); calling one is the call of
# its name.
LIBRARY_CLASSES = frozenset({"functools.partial", "builtins.type"})


def torch_function(qual: str) -> Value | None:
    """The value of a qualified name that is a function the stubs describe
    (`self.activation = F.gelu`, `attn_fn = partial(F.softmax, dim=-1)`): calling
    the value calls the function, as Python does."""
    from shapelint.ops.stub_ops import describes

    leaf = qual.rsplit(".", 1)[-1]
    if leaf[:1].islower() and qual.startswith(("torch.", "operator.")) and describes(qual):
        return LayerClassV(qual)
    return None


def torch_base(an: Analyzer, cd: ClassDef) -> str | None:
    """The torch.nn layer a project class derives from (`class LayerNorm(nn.LayerNorm)`),
    when the stubs describe it, or the container (`class MLP(nn.Sequential)`)."""

    def described(owner, b: ast.expr) -> str | None:
        qual = owner.imports.resolve(b) if isinstance(b, (ast.Name, ast.Attribute)) else None
        if qual is None and isinstance(b, ast.Name) and b.id == "dict":
            qual = MAPPING if "dict" not in owner.classes else None
        if qual in MAPPINGS:
            return MAPPING
        if qual is not None and (qual in CONTAINERS or layer_class(qual) is not None):
            return qual
        return None

    return _first_base(an, cd, described)


def torch_ancestor(an: Analyzer, cd: ClassDef) -> str | None:
    """The first class of torch a project class derives from, along its bases as
    Python's MRO walks them, described by the stubs or not (`class L1Loss(nn.L1Loss,
    base.Loss)`): where its forward comes from when the project defines none."""

    def of_torch(owner, b: ast.expr) -> str | None:
        qual = owner.imports.resolve(b) if isinstance(b, (ast.Name, ast.Attribute)) else None
        ok = qual is not None and qual.startswith("torch.") and qual != "torch.nn.Module"
        return qual if ok else None

    return _first_base(an, cd, of_torch)


def undescribed_torch_base(an: Analyzer, cd: ClassDef) -> bool:
    """Whether a torch.nn class no stub describes is the first of torch's along cd's
    bases (`class Layer(nn.TransformerEncoderLayer)`): its constructor, which the
    analysis does not run, registers submodules and parameters of its own."""
    qual = torch_ancestor(an, cd)
    return (
        qual is not None
        and qual.startswith("torch.nn.")
        and not qual.endswith(".Module")
        and qual not in DICTS  # a ModuleDict's entries are modelled as a mapping's
        and torch_base(an, cd) is None
    )


def _first_base(an: Analyzer, cd: ClassDef, pick) -> str | None:
    """pick(owner, base expression) of cd's own bases, then of its project bases'
    in turn: the first answer that is not None."""
    owner = cd.owner or an
    for b in cd.node.bases:
        found = pick(owner, b)
        if found is not None:
            return found
    for base in base_classes(an, cd):
        found = _first_base(an, base, pick)
        if found is not None:
            return found
    return None


# nn.ModuleDict / nn.ParameterDict: a dict whose items torch registers (they count in
# parameters() and named_modules()); a module's plain dict of layers registers nothing.
REGISTERED_DICT_KIND = "<dict:registered>"
DICT_KINDS = frozenset({DICT_KIND, REGISTERED_DICT_KIND})

# nn.ParameterList is a list too: its items are what counts (a tensor given it
# becomes a Parameter; parameters.py counts it so).
CONTAINERS = {
    "torch.nn.Sequential": True,
    "torch.nn.ModuleList": False,
    "torch.nn.ParameterList": False,
}
DICTS = {
    "torch.nn.ModuleDict": REGISTERED_DICT_KIND,
    "torch.nn.ParameterDict": REGISTERED_DICT_KIND,
    "types.SimpleNamespace": DICT_KIND,
    "collections.OrderedDict": DICT_KIND,
}


# Where an instance of a container's subclass keeps the layers its torch
# constructor was given (`super().__init__(*layers)`); no Python name can clash.
LAYERS = "<layers>"
MAPPING = "builtins.dict"  # a project class deriving from dict or OrderedDict
MAPPINGS = {MAPPING, "collections.OrderedDict", "typing.OrderedDict"}


# An attribute of a module's state the analysis could not follow (a name
# registered under a value it does not know, a nested store it cannot place, a
# requires_grad it cannot tell): its parameter count is then not known.
UNFOLLOWED = "<unfollowed>"
# Where the module being built keeps that a parametrization the analysis does not
# follow recomputes one of its tensors at each read (reparametrize.not_followed):
# torch's forward of its class reads it, at a cost not known.
PARAMETRIZED = "<parametrized>"
REQUIRES_GRAD_UNKNOWN = aliasing.REQUIRES_GRAD_UNKNOWN


def module_class_of(an: Analyzer, key: str) -> bool | None:
    cd = an.class_of(key)
    return None if cd is None else module_class(an, cd)


def stub_layer(kind: str) -> bool:
    """An instance's kind that is a torch layer a stub describes (`torch.nn.Conv2d`)."""
    from shapelint.ops.stub_ops import describes

    return kind.startswith("torch.nn.") and describes(f"{kind}.__call__")


# What `torch.compile(module)` returns: a module of its own that registers the
# module it was given as its one child, `_orig_mod`, and runs it when called.
OPTIMIZED_KIND = "torch._dynamo.eval_frame.OptimizedModule"
ORIG_MOD = "_orig_mod"


def is_module(v: Value) -> bool:
    """A layer, a project class instance, a module list or a compiled module."""
    if isinstance(v, ObjectV):
        return v.kind.startswith(("<class>", "torch.nn.")) or v.kind == OPTIMIZED_KIND
    return isinstance(v, ModuleListV)
