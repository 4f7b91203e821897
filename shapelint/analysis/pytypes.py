"""Python's type tests on abstract values, three-valued (True, False, None: not
known here): `isinstance` against builtin, abstract, torch, `functools` and `types`
classes, the identity of classes (`is`, `==`, `in` a set of classes) and a class's
`__name__`.

A value kind answers only where Python's answer holds for every object of that kind:
a tensor is a `torch.Tensor` and never a `functools.partial`; a class is a `type` and
never a function; an instance the analysis knows by its attributes (an ObjectV) may
be of any class, so only the tests its kind decides are answered.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from shapelint.analysis.attributes import metaclass_is_type, plain_type
from shapelint.analysis.callable_values import ClassRefV, FunctionRefV, LayerClassV, PartialV
from shapelint.analysis.decorators import FunctionV
from shapelint.analysis.dict_values import dict_value
from shapelint.analysis.lambdas import ClosureV
from shapelint.analysis.module_kinds import LIBRARY_CLASSES, TENSOR_CLASSES, stub_layer
from shapelint.analysis.modules import ModuleListV, SelfRecorder
from shapelint.ops import dtypes
from shapelint.ops.backward import BROKEN
from shapelint.ops.values import (
    UNKNOWN,
    ArrayV,
    BoolV,
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
)


@dataclass(frozen=True)
class ModuleNamesV(Value):
    """`dir(m)` of a module of a library the analysis models by its stubs (`dir(torch.nn.functional)`):
    every name they describe under m is in it; of any other name, nobody knows here."""

    module: str


def in_module_names(name: Value, names: ModuleNamesV) -> bool | None:
    from shapelint.ops.stub_ops import describes

    if isinstance(name, StrV) and name.value is not None and name.value.isidentifier():
        if describes(f"{names.module}.{name.value}"):
            return True
    return None


# Values of these kinds are plain data: never a tensor, a class, a function or a partial.
_PLAIN = (IntV, BoolV, FloatV, StrV, NoneV, TupleV, DtypeV, SliceV)
_FUNCTIONS = (FunctionRefV, FunctionV, ClosureV)
# The kinds whose every object is known to be of one kind; any other value (an
# instance known by its attributes, a grown list, a choice) may be of any class.
_KNOWN_KINDS = (
    *_PLAIN,
    DeviceV,
    TensorV,
    ArrayV,
    ModuleListV,
    ClassRefV,
    LayerClassV,
    *_FUNCTIONS,
    PartialV,
)


def _torch_function(v: Value) -> bool:
    # a torch function called like a layer class (`F.gelu`): lowercase, as Python names them
    return (
        isinstance(v, LayerClassV)
        and v.qual not in LIBRARY_CLASSES
        and not v.qual.rsplit(".", 1)[-1].lstrip("_")[:1].isupper()
    )


def _of_kinds(v: Value, kinds: tuple[type, ...]) -> bool | None:
    if isinstance(v, kinds):
        return True
    return False if isinstance(v, _KNOWN_KINDS) else None


def is_class(v: Value) -> bool | None:
    """Whether v is a class object (`isinstance(v, type)`)."""
    if _torch_function(v):
        return False
    return _of_kinds(v, (ClassRefV, LayerClassV))


def _is_function(v: Value) -> bool | None:
    """`isinstance(v, types.FunctionType)`: a function written in Python (a torch
    function may be written in C)."""
    if isinstance(v, ObjectV) and v.kind.startswith(("torch.nn.", "<class>")):
        return False  # an instance of a class: types.FunctionType has no subclasses
    return None if _torch_function(v) else _of_kinds(v, _FUNCTIONS)


def _is_partial(v: Value) -> bool | None:
    return _of_kinds(v, (PartialV,))


def _is_tensor(v: Value) -> bool | None:
    return _of_kinds(v, (TensorV,))


def no_builtin_instance(v: Value) -> bool:
    """Whether v is surely no int, float, str, bool, None, tuple, list or dict: a
    tensor, a module list, a class, a function, a partial, a dtype (a torch.dtype,
    a C type of its own, or numpy's scalar type, a class)."""
    return isinstance(v, _KNOWN_KINDS) and (isinstance(v, DtypeV) or not isinstance(v, _PLAIN))


def _is_parameter(v: Value) -> bool | None:
    if isinstance(v, ParameterV):
        return True
    t = _is_tensor(v)
    return False if t is False else None  # a tensor may be a Parameter the analysis lost


def _is_array(v: Value) -> bool | None:
    """`isinstance(v, numpy.ndarray)`: of an array numpy made (ndarrays.py); never
    of a tensor, nor of a Python number, string or None (torch.Tensor, int, float,
    str and ndarray are C types whose instance layouts conflict: no class derives
    from two of them; numpy's scalars, `np.int64(3)`, are no ndarray either)."""
    return _of_kinds(v, (ArrayV,))


def _is_proxy(v: Value) -> bool | None:
    """`isinstance(v, torch.fx.Proxy)`: never of a tensor in a target run, which is
    eager (fx's tracing is what hands Proxies to a forward in place of tensors)."""
    return False if isinstance(v, TensorV) else None


# Classes of the standard library, numpy and torch, by qualified name: the test of each.
_QUALIFIED = {
    "builtins.type": is_class,
    "types.FunctionType": _is_function,
    "types.LambdaType": _is_function,
    "functools.partial": _is_partial,
    "torch.Tensor": _is_tensor,
    "torch.nn.Parameter": _is_parameter,
    "torch.nn.parameter.Parameter": _is_parameter,
    "numpy.ndarray": _is_array,
    "torch.fx.Proxy": _is_proxy,
    "torch.fx.proxy.Proxy": _is_proxy,
}


def instance_test(qual: str | None, builtin: str | None, v: Value) -> bool | None:
    """isinstance(v, C) for C named by its qualified name, or a builtin name
    (`type`) the code does not shadow. None: not known here, or not a class of
    this table."""
    test = _QUALIFIED.get(qual or f"builtins.{builtin}")
    if test is None or v is UNKNOWN:
        return None
    return test(v)


# The tensor classes each of torch's derives from, by full name.
_TENSOR_BASES = {"torch.Tensor": (), "torch.nn.parameter.Parameter": ("torch.Tensor",)}


def tensor_class(v: Value) -> str | None:
    """The full name (`module.qualname`) of the torch tensor class v is; None
    where v is no such class."""
    if not isinstance(v, LayerClassV) or v.qual not in TENSOR_CLASSES:
        return None
    module, name = TENSOR_CLASSES[v.qual]
    return f"{module}.{name}"


def type_of(an, v: Value) -> Value | None:
    """`type(v)`: a Parameter's class, an op's result's (a tensor an op autograd
    records made: such an op gives a plain torch.Tensor of plain tensors and
    Parameters, which a target run's inputs and weights are), a project class's
    instance's (as `v.__class__` reads it). None: not known here (a tensor the
    analysis did not see made may be a Parameter it lost, or a subclass)."""
    if type(v) is ParameterV:
        return LayerClassV("torch.nn.parameter.Parameter")
    if is_class(v) and _metaclass_is_type(an, v):
        # a class's class: never a partial, a function or a tensor class
        return LayerClassV("builtins.type")
    if type(v) is TensorV:
        return LayerClassV("torch.Tensor") if _seen_made(v.origin) else None
    return instance_class(an, v)


def _metaclass_is_type(an, v: Value) -> bool:
    """`type(v) is type` for a class v: a torch class (nn.Module's and the tensor
    classes' metaclass is type), or a project class whose bases say so."""
    if isinstance(v, LayerClassV):
        return v.qual.startswith("torch.nn.") or tensor_class(v) is not None
    cd = an.class_of(v.name) if isinstance(v, ClassRefV) else None
    return cd is not None and metaclass_is_type(an, cd)


def _seen_made(origins: frozenset | None, depth: int = 0) -> bool:
    """Whether every Origin in origins is an op's run the analysis followed: a
    run's boundary stands for its arguments (its parents), an exit for what made
    it inside; BROKEN, none, or a chain too deep to walk: not seen."""
    if not origins or depth > 50:
        return False
    for o in origins:
        if o is BROKEN:
            return False
        if o.path is not None and not _seen_made(o.parents, depth + 1):
            return False  # a boundary: what the argument was
        if o.inner is not None and not _seen_made(o.inner, depth + 1):
            return False  # an exit: what the run returned
    return True


def _tensor_subclass(sub: str, base: str) -> bool:
    return sub == base or any(_tensor_subclass(b, base) for b in _TENSOR_BASES[sub])


def torch_subclass(sub: Value, target: Value) -> bool | None:
    """`issubclass(sub, target)` where sub is a torch tensor class: along torch's
    bases against another tensor class; False against a layer class or a project
    class (a Tensor is no Module, and torch derives from no project class); None
    where sub is no tensor class or target is not known."""
    mine = tensor_class(sub)
    if mine is None:
        return None
    if isinstance(target, ClassRefV):
        return False
    other = tensor_class(target)
    if other is not None:
        return _tensor_subclass(mine, other)
    if isinstance(target, LayerClassV) and is_class(target) and target.qual.startswith("torch.nn."):
        return False
    return None


def same_class(a: Value, b: Value) -> bool | None:
    """`a is b` for two values of which one at least is a class: a project class
    is its own definition (its key), a torch class its qualified name; classes of
    different names are different objects, the same torch name under two paths may
    be one class (an alias), and a class is never a plain value."""
    ca, cb = is_class(a), is_class(b)
    if not (ca or cb):
        return None
    if ca is False or cb is False:
        return False
    if isinstance(a, ClassRefV) and isinstance(b, ClassRefV):
        return a.name == b.name
    if isinstance(a, LayerClassV) and isinstance(b, LayerClassV):
        ta, tb = tensor_class(a), tensor_class(b)
        if ta is not None and tb is not None:
            return ta == tb  # two names of one class (`nn.Parameter`)
        if a.qual == b.qual:
            return True
        return None if class_name(a) == class_name(b) else False
    if {type(a), type(b)} == {ClassRefV, LayerClassV}:
        return False  # a class written in the project is not one of torch's
    return None


# The builtin classes `type(v) is C` is decided against, and for each kind of value
# the classes its objects' exact type may be: an int the analysis holds may be a
# numpy int or an IntEnum member, a float numpy's float64, a str a str subclass's
# instance, a tuple torch.Size or a namedtuple; True and False are bools alone, and
# a tensor or None no builtin class's instance at all.
BUILTIN_CLASSES = frozenset(
    {"int", "float", "complex", "bool", "str", "bytes", "tuple", "list", "dict", "set",
     "frozenset", "range", "slice", "type", "object"}
)  # fmt: skip
_NO_SEQUENCE = frozenset(
    {"int", "float", "complex", "bool", "str", "bytes", "dict", "set", "frozenset", "slice",
     "type"}
)  # fmt: skip
_MAY_BE = (
    (BoolV, frozenset({"bool"})),
    (IntV, frozenset({"int"})),
    (FloatV, frozenset({"float"})),
    (StrV, frozenset({"str"})),
    (NoneV, frozenset()),
    (TensorV, frozenset()),
)


def exact_type_is(v: Value, builtin: str) -> bool | None:
    """`type(v) is builtin` (a builtin class by its name): False where v's kind of
    value is never exactly that class, True only for a bool's `bool`; None where not
    known here."""
    if builtin not in BUILTIN_CLASSES:
        return None
    if isinstance(v, BoolV):
        return builtin == "bool"
    if isinstance(v, TupleV):  # a tuple or list of some kind, a range read as its items
        other = {"tuple": "list", "list": "tuple"}.get(v.kind or "")
        return False if builtin in _NO_SEQUENCE or builtin == other else None
    for kind, may_be in _MAY_BE:
        if isinstance(v, kind):
            return None if builtin in may_be else False
    return None


def member_of(v: Value, items: tuple[Value, ...]) -> bool | None:
    """`v in (A, B, ...)` where v is a class: identity decides (`==` of classes is
    `is`)."""
    if is_class(v) is not True:
        return None
    unknown = False
    for item in items:
        same = same_class(v, item)
        if same:
            return True
        unknown = unknown or same is None
    return None if unknown else False


def class_name(v: Value) -> str | None:
    """A class's `__name__`: the last part of its qualified name."""
    if isinstance(v, ClassRefV):
        return v.name.rsplit(":", 1)[-1].rsplit(".", 1)[-1]
    if isinstance(v, LayerClassV):
        return v.qual.rsplit(".", 1)[-1]
    return None


def _def_name(v: FunctionRefV, attr: str) -> Value | None:
    """`f.__name__` of a module-level function: the def's name (its `__qualname__`
    too), which Python sets when the def runs; None where a decorator may have
    made f another object, or the file stores that attribute, or another value
    under the def's name, anywhere."""
    owner = v.owner
    fd = None if owner is None else owner.functions.get(v.name)
    tree = getattr(owner, "tree", None)
    if fd is None or fd.node.decorator_list or tree is None:
        return None
    name = fd.node.name
    same = set()  # `f = f` (a re-export) binds the same object
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id == name:
            same.update(id(t) for t in n.targets if isinstance(t, ast.Name) and t.id == name)
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr == attr and not isinstance(n.ctx, ast.Load):
            return None
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            if id(n) not in same:
                return None
    return StrV(name)


def attribute(v: Value, attr: str) -> Value | None:
    """`cls.__name__` / `cls.__qualname__` of a class value, `p.func` / `p.args` /
    `p.keywords` of a `functools.partial`; None: not one of these."""
    if isinstance(v, PartialV):
        if attr == "func":
            return v.func
        if attr == "args":
            return TupleV(v.args)
        if attr == "keywords":
            return dict_value(dict(v.kwargs))
        return None
    if attr in ("__name__", "__qualname__") and isinstance(v, FunctionRefV):
        return _def_name(v, attr)
    if attr == "__name__":
        name = class_name(v)
        return None if name is None else StrV(name)
    if attr == "__qualname__" and isinstance(v, ClassRefV):
        return StrV(v.name.rsplit(":", 1)[-1])
    if attr in ("__module__", "__qualname__") and tensor_class(v) is not None:
        module, name = TENSOR_CLASSES[v.qual]
        return StrV(module if attr == "__module__" else name)
    return None


_KEY = re.compile(r"([A-Za-z_][\w.]*):(?:\d+\.)?([A-Za-z_]\w*)")


def class_key(v: Value) -> str | None:
    """The key of the project class v is an instance of (the module being built
    included); None where v is no such instance."""
    if isinstance(v, SelfRecorder):
        return v.cls
    if isinstance(v, ObjectV) and v.kind.startswith("<class>"):
        return v.kind[len("<class>") :]
    return None


def instance_class(an, v: Value) -> Value | None:
    """`obj.__class__` of an instance of a project class (the module being built
    included): its class, where no class along its bases claims another; of a
    torch layer the stubs describe (`nn.ReLU()`), that layer's class, which no
    project class is an instance of (`type(act).__name__` is "ReLU"); None
    otherwise."""
    if type(v) is ObjectV and stub_layer(v.kind):
        return LayerClassV(v.kind)
    key = class_key(v)
    cd = an.class_of(key) if key is not None else None
    if cd is None or not plain_type(an, cd):
        return None
    return ClassRefV(key)


def class_text(an, v: Value) -> str | None:
    """`str(cls)` / `repr(cls)` of a torch tensor class, or of a project class at
    module level, as `type` prints it: `<class 'package.module.Name'>` (its key: the module Python imports
    it as, and the name; a class under a module-level `if` is keyed by its line
    too, which Python does not print). None where the class's metaclass may print
    it otherwise, or its module or qualified name is not known."""
    full = tensor_class(v)
    if full is not None:
        return f"<class '{full}'>"  # torch's tensor classes print as `type` prints
    if not isinstance(v, ClassRefV):
        return None
    m = _KEY.fullmatch(v.name)
    cd = an.class_of(v.name) if m else None
    if cd is None or not plain_type(an, cd):
        return None
    return f"<class '{m.group(1)}.{m.group(2)}'>"


def as_bool(known: bool | None) -> Value:
    return UNKNOWN if known is None else BoolV(known)


# torch's dtype predicates, by the category dtypes.py gives (bool, int, float, complex).
_DTYPE_TESTS = {"is_floating_point": 2, "is_complex": 3}


# What torch says of the way it runs: a target run is eager Python (no TorchScript,
# tracing, compiler or ONNX export), as a module called from Python runs.
_EAGER = frozenset(
    {
        "torch.jit.is_scripting",
        "torch.jit.is_tracing",
        "torch._C._is_tracing",  # what torch.jit.is_tracing asks, called directly
        "torch.compiler.is_compiling",
        "torch.compiler.is_dynamo_compiling",
        "torch.compiler.is_exporting",  # (transformers' is_torchdynamo_exporting)
        "torch._dynamo.is_compiling",
        "torch.onnx.is_in_onnx_export",
    }
)


# A target run is one process: no process group is initialized there (what the
# module would do under `torch.distributed.init_process_group` is not this run).
_ONE_PROCESS = frozenset({"torch.distributed.is_initialized"})


# inspect's tests of what an object is, as isinstance of the type each names.
_INSPECT = {"inspect.isfunction": _is_function, "inspect.isclass": is_class}


def torch_predicate(qual: str, args: list[Value]) -> Value | None:
    """`torch.is_tensor(x)`, `torch.is_floating_point(x)` / `x.is_floating_point()`,
    `torch.is_complex(x)`: what they say of x, which they read without computing
    anything; `torch.jit.is_scripting()` and its kind: False, the run being eager;
    `torch.distributed.is_initialized()`: False, the run being one process;
    `inspect.isfunction(f)` / `inspect.isclass(c)`. None: not one of them."""
    if (qual in _EAGER or qual in _ONE_PROCESS) and not args:
        return BoolV(False)
    if qual in _INSPECT and len(args) == 1:
        return as_bool(_INSPECT[qual](args[0]))
    module, _, name = qual.rpartition(".")
    if module not in ("torch", "torch.Tensor") or len(args) != 1:
        return None
    if name == "is_tensor" and module == "torch":
        return as_bool(_is_tensor(args[0]))
    if name not in _DTYPE_TESTS or not isinstance(args[0], TensorV):
        return None
    dtype = args[0].dtype
    if dtype in (None, dtypes.NOT_KNOWN):
        return BoolV(None)
    return BoolV(dtypes.category(dtype) == _DTYPE_TESTS[name])
