"""Whether `self.name = value` in a constructor surely returns (may_raise.py's `try`).

On a project class over nn.Module alone, the store is nn.Module.__setattr__'s. It
raises AttributeError for a module stored before `Module.__init__` ran, TypeError
for anything but a Parameter or None over a Parameter, for anything but a module
or None over a child module and for anything but a tensor over a buffer; and the
object store it falls back on raises where a class binds the name (a property
without a setter, a slot). So a module, stored once `super().__init__()` reached
torch's, or a plain value (a number, a string, a flag, None), stored under a name
that holds no Parameter, buffer or module and that no class of the instance binds,
is known to return, as Python runs it:

    try:
        self.ff = UNITS[kind](d)     # a module: it returns
    except (AttributeError, KeyError):
        self.ff = Fallback(d)        # dead

Anything else may raise: a Parameter (register_parameter refuses a name already
bound), a tensor, a value not known, a class with a `__setattr__` of its own or a
base the analysis does not read, an instance whose state a run lost.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis.attributes import base_classes, find_method, module_class, outside_bases
from shapelint.analysis.module_kinds import stub_layer
from shapelint.analysis.module_lists import ModuleListV
from shapelint.analysis.recorder import SelfRecorder
from shapelint.ops.values import (
    BoolV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    ParameterV,
    StrV,
    Value,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef

# What may come after the project's classes in the instance's order: none of them
# defines a `__setattr__` but nn.Module, nor binds an attribute a store could meet.
_QUIET_BASES = frozenset(
    {"torch.nn.Module", "object", "builtins.object", "abc.ABC", "typing.Generic"}
)
_PLAIN = (IntV, FloatV, BoolV, StrV)


def returns(an: Analyzer, obj: Value, name: str, value: Value) -> bool:
    """Whether storing value as obj.name surely returns (obj: the store's holder)."""
    if not isinstance(obj, SelfRecorder) or name.startswith("__"):
        return False
    cd = an.class_of(obj.cls)
    if cd is None or not _plain_module_class(an, cd) or _bound_by_a_class(an, cd, name):
        return False
    if any(k.startswith("<") for k in obj.attrs):
        return False  # a state the run could not follow (UNFOLLOWED, a container's)
    old = obj.attrs.get(name)
    if _module(an, value):
        return obj.module_init and not isinstance(old, ParameterV)
    plain = isinstance(value, _PLAIN) or type(value) is NoneV
    return plain and (old is None or isinstance(old, _PLAIN) or type(old) is NoneV)


def _plain_module_class(an: Analyzer, cd: ClassDef) -> bool:
    """cd derives from nn.Module through project classes alone, none of which defines
    `__setattr__`."""
    if find_method(an, cd, "__setattr__") is not None or module_class(an, cd) is not True:
        return False
    outside = outside_bases(an, cd)
    return outside is not None and set(outside) <= _QUIET_BASES


def _bound_by_a_class(an: Analyzer, cd: ClassDef, name: str, depth: int = 0) -> bool:
    """Whether cd or a project class along its bases binds name in its body (a
    method, a property, a class attribute, a slot list): the store may meet it."""
    if depth > 20:
        return True
    for stmt in cd.node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name in (name, "__slots__"):
                return True
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                if any(
                    isinstance(n, ast.Name) and n.id in (name, "__slots__") for n in ast.walk(t)
                ):
                    return True
        elif not isinstance(stmt, (ast.Expr, ast.Pass)):
            return True  # an `if` or a loop in a class body: not read here
    return any(_bound_by_a_class(an, b, name, depth + 1) for b in base_classes(an, cd))


def _module(an: Analyzer, value: Value) -> bool:
    """value is surely an nn.Module: a torch layer a stub describes, a module list,
    an instance of a project class that derives from nn.Module."""
    if isinstance(value, ModuleListV):
        return True
    if not isinstance(value, ObjectV):
        return False
    if value.kind.startswith("<class>"):
        cd = an.class_of(value.kind[len("<class>") :])
        return cd is not None and module_class(an, cd) is True
    return stub_layer(value.kind)
