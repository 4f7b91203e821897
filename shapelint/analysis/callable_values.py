"""Classes and callables as values: a project class, a module-level function, a
layer class, a partial, a bound method, a tensor's method, a choice between
classes; how a method read off an instance or a class is bound, and whether a
function as a value may compute when it is called.

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shapelint.analysis import decorators, own_methods
from shapelint.analysis.attributes import binds_no_instance, find_method, is_class_method, is_static
from shapelint.analysis.lambdas import ClosureV
from shapelint.analysis.recorder import SelfRecorder
from shapelint.analysis.unknown_cost import may_cost
from shapelint.ops.values import ObjectV, TensorV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef, FuncDef


@dataclass(frozen=True)
class ChoiceV(Value):
    """One of `items` (modules, never None: `is None` tests on it stay exact),
    chosen by a test the analysis cannot decide (choices.py)."""

    items: tuple[Value, ...]


@dataclass(frozen=True)
class ClassRefV(Value):
    """A project class used as a value (`norm_layer=LayerNorm`, `mlp_layer=Mlp`)."""

    name: str


@dataclass(frozen=True)
class FunctionRefV(Value):
    """A module-level function used as a value in a target run (`fn = identity`).
    `owner` is the analyzer of the file that defines it: the value travels to
    other files (timm's `to_2tuple = _ntuple(2)`), the function does not."""

    name: str
    owner: Analyzer | None = field(default=None, repr=False)


@dataclass(frozen=True)
class LayerClassV(Value):
    """A torch.nn layer class used as a value (`act_layer=nn.GELU`,
    `linear = nn.Linear if ... else ...`): calling it builds the layer."""

    qual: str


@dataclass(frozen=True)
class PartialV(Value):
    """`functools.partial(f, *args, **kwargs)` of a callable the analysis follows."""

    func: Value
    args: tuple[Value, ...] = ()
    kwargs: tuple[tuple[str, Value], ...] = ()


@dataclass(frozen=True)
class BoundMethodV(Value):
    """`obj.method` read without a call (`apply_chunking_to_forward(self.ff_chunk,
    ...)`): calling it runs the method on obj, as `obj.method(...)` does."""

    qualname: str
    recv: Value
    fd: FuncDef | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class TorchForwardV(Value):
    """`super().forward` read without a call in a method of a project subclass of a
    torch layer or container whose forward is torch's (spikingjelly's
    `seq_to_ann_forward(x, (super().forward,))`): the base's forward bound to the
    instance; calling it runs it on recv, as `super().forward(x)` does."""

    base: str
    recv: Value


@dataclass(frozen=True)
class TensorMethodV(Value):
    """`t.mean` / `getattr(t, "sum")` read without a call: a method bound to the
    tensor, which runs (and costs) only when it is called, as `t.mean(...)`."""

    recv: TensorV
    name: str


def bind_own(value: Value, recv: Value) -> Value:
    """value, read off recv: a method of the instance that holds it (own_methods.py)
    bound to recv, as Python binds it."""
    if isinstance(value, own_methods.OwnMethodV) and value.holder is None:
        return BoundMethodV(value.qualname, recv, value.fd)
    return value


def bound_method_of(fd, recv: Value) -> BoundMethodV | None:
    """fd bound to recv, as reading it off recv binds it; None for a static or class
    method (bound otherwise)."""
    if binds_no_instance(fd.node):
        return None
    return BoundMethodV(fd.qualname, recv, fd)


def bound_method(an: Analyzer, cd: ClassDef, recv: Value, name: str) -> BoundMethodV | None:
    """The method `name` of cd bound to recv; None where cd has none, or where it is
    a static or class method (bound otherwise)."""
    fd = find_method(an, cd, name)
    return None if fd is None else bound_method_of(fd, recv)


def static_function(an: Analyzer, cd: ClassDef, name: str) -> Value | None:
    """`obj.name` / `Cls.name` where name is a `@staticmethod` of cd (or of a base):
    the plain function, which a static method is through an instance and its
    class alike (it binds nothing); None where there is none, or where another
    decorator wraps it too."""
    fd = find_method(an, cd, name)
    if fd is None or len(fd.node.decorator_list) != 1 or not is_static(fd.node):
        return None
    return decorators.function_value(an, fd)


def class_method(an: Analyzer, cd: ClassDef, name: str, cls: Value) -> BoundMethodV | None:
    """`Cls.name` where name is a `@classmethod` of cd (or of a base): the method
    bound to the class it is read off (`G.on()` with `on` defined by G's base binds
    `cls` to G), as Python binds it; None where there is none, or where another
    decorator wraps it too."""
    fd = find_method(an, cd, name)
    if fd is None or len(fd.node.decorator_list) != 1 or not is_class_method(fd.node):
        return None
    return BoundMethodV(fd.qualname, cls, fd)


def computing_function(v: Value) -> bool:
    """A function as a value whose call may run a product: a lambda or def of the
    project, a method bound to its object, a partial, or a library function that
    may (`operator.matmul`, `torch.bmm`; a class constructs, which runs none)."""
    if isinstance(v, (ClosureV, decorators.FunctionV, FunctionRefV, PartialV, BoundMethodV)):
        return True
    if isinstance(v, TensorMethodV):
        return may_cost(f"torch.Tensor.{v.name}")
    if isinstance(v, LayerClassV):
        leaf = v.qual.rpartition(".")[2]
        return leaf[:1].islower() and may_cost(v.qual)
    return False


def class_of_instance(recv: Value | None) -> Value | None:
    """What a `@classmethod` called through recv binds its first parameter to: the
    class of the instance (`type(self)`, the class being built while a module is
    built), so that `cls.x = v` stores into the class, never into the instance;
    recv itself where it is a class already, None where the class is not known."""
    if isinstance(recv, SelfRecorder):
        return ClassRefV(recv.cls)
    if isinstance(recv, ObjectV) and recv.kind.startswith("<class>"):
        return ClassRefV(recv.kind[len("<class>") :])
    return recv if isinstance(recv, ClassRefV) else None
