"""A module's forward stored through its class in a target run (`Block.forward =
Block.twice`, `setattr(Block, "forward", lambda self, x: ...)`, at a file's top
level or in code the run runs).

Python has one class object: from the store on, calling any instance of the class
(or of a subclass that defines no forward of its own) runs what was stored, found
along the MRO as `Module._call_impl`'s `self.forward` finds it, after the instance's
own attribute. A function read through an instance binds to it (a function is a
descriptor), so `Block.twice` or a lambda stored there is called with the instance
first. class_state holds what the run stored; a store the run did not make (a
function never called) leaves the class's own forward, whose calls dynamic.py's
scan keeps not modelled, a bound.

`Block.twice` read off the class is the plain function (Python 3 has no unbound
methods): a `ClassFunctionV`, called with the instance as its first argument.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shapelint.analysis import class_state
from shapelint.analysis.attributes import find_method, mro
from shapelint.analysis.callable_values import BoundMethodV, FunctionRefV, PartialV
from shapelint.analysis.lambdas import ClosureV
from shapelint.ops.values import UNKNOWN, ObjectV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef, FuncDef


@dataclass(frozen=True)
class ClassFunctionV(Value):
    """A plain method read off its project class (`Block.twice`): the function."""

    qualname: str
    fd: FuncDef = field(compare=False, repr=False)


def function_of(an: Analyzer, cd: ClassDef, name: str) -> ClassFunctionV | None:
    """`Cls.name` where name is an undecorated method of cd (or of a base): the
    function; None for anything else (a static or class method, a property)."""
    fd = find_method(an, cd, name)
    if fd is None or not isinstance(fd.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return None if fd.node.decorator_list else ClassFunctionV(fd.qualname, fd)


def bound(value: Value, recv: Value) -> Value | None:
    """value, a function stored on a class, read through the instance recv: bound to
    it as Python binds a function; None where the analysis cannot say how it binds
    (a callable object, a builtin, a value not known)."""
    if isinstance(value, ClassFunctionV):
        return BoundMethodV(value.qualname, recv, value.fd)
    if isinstance(value, (ClosureV, FunctionRefV)):
        return PartialV(value, (recv,))
    return None


def stored_forward(an: Analyzer, callee: Value) -> Value | None:
    """What calling callee runs as its forward where the run stored one through its
    class: the stored value bound to callee (UNKNOWN where it cannot be bound);
    None where the first class along the MRO to hold forward defines it."""
    if not an.specialize or type(callee) is not ObjectV or not class_state.any_stored("forward"):
        return None
    if not callee.kind.startswith("<class>"):
        return None
    cd = an.class_of(callee.kind[len("<class>") :])
    if cd is None:
        return None
    for c in mro(an, cd):
        held = class_state.stored(c.key, "forward")
        if held is not None:
            return bound(held, callee) or UNKNOWN
        if "forward" in c.methods:
            return None
    return None


def call_function(an: Analyzer, callee: ClassFunctionV, node, args, kwargs, frame) -> Value:
    """`Cls.twice(obj, x)`: the method run on its first argument."""
    if not args:
        return an.unknown_call(node, args, kwargs, frame, f"{callee.qualname}: given no instance")
    return an.call_value(
        BoundMethodV(callee.qualname, args[0], callee.fd), node, list(args[1:]), kwargs, frame
    )
