"""Calls whose result is an instance of a project class that is surely no
nn.Module, although the analysis does not know the value they return
(plain.surely_plain asks, for an attribute of a module being built).

`C(...)` with C a class: Python's `type.__call__` makes a C unless C, or a class
it derives from, defines `__new__` or a metaclass whose `__call__` returns
something else; a C whose bases are all seen and none is an nn.Module
(attributes.module_class False) is then no module and no Parameter, which torch
would register. `C.make(...)` with make a classmethod or staticmethod of C whose
return annotation names C or one of its bases: what the code declares it
returns, trusted as plain.py trusts a `-> bool` (transformers'
`self.generation_config_class.from_model_config(config)`).

C is read off a name or off an attribute of an instance or class whose class
defines no property of that name and no `__getattr__` / `__getattribute__`:
reading it again runs nothing and gives what the call read.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis.attributes import (
    binds_no_instance,
    defining_class,
    find_method,
    find_property,
    mro,
)
from shapelint.analysis.callable_values import ClassRefV
from shapelint.analysis.config_classes import is_dataclass
from shapelint.analysis.modules import SelfRecorder
from shapelint.analysis.nodes import nodes_of, sole_assignments, stored_names
from shapelint.analysis.plain import plain_class
from shapelint.ops.values import ObjectV

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef, FuncDef

_HOOKS = ("__getattr__", "__getattribute__")


def made_plain(an: Analyzer, node: ast.Call, frame) -> bool:
    """Whether node's result is surely an instance of a project class that is no
    nn.Module."""
    if _plain_class(an, node.func, frame) is not None:
        return True
    func = node.func
    if not isinstance(func, ast.Attribute):
        return False
    cd = _plain_class(an, func.value, frame)
    if cd is None or defining_class(an, cd, func.attr) is not None:
        return False  # a class attribute of that name shadows or replaces the method
    fd = find_method(an, cd, func.attr)
    if fd is None or not binds_no_instance(fd.node):
        return False  # a plain method called through the class takes its self as given
    declared = _declared_class(an, fd)
    return declared is not None and any(c.key == declared for c in mro(an, cd))


def holds_plain(an: Analyzer, node: ast.expr, frame) -> bool:
    """Whether node, a local name of the function running, surely holds an
    instance of a project class that is no nn.Module and whose attribute stores run
    no project code: every binding of the name in the function is `name = C(...)`
    or `name = C.make(...)` as made_plain judges them, C read off a name the
    function never binds (reading it now reads what the binding read), C and its
    bases defining no `__setattr__`, no property setter and no class attribute a
    call made (a descriptor's `__set__` would run). A store into it
    (`setattr(generation_config, attr, v)` over a dict's keys, in
    `GenerationConfig.from_model_config`) then changes no module being built: the
    object is no module and holds none of their state, whatever its value; nor,
    C being no dataclass, any instance the run holds as a value (absence.py's
    dataclass instances, whose attributes `getattr(obj, name, default)` decides):
    no attribute of theirs becomes possible."""
    fd = getattr(frame, "func", None)
    if not isinstance(node, ast.Name) or fd is None:
        return False
    fn, name = fd.node, node.id
    assigns = sole_assignments(fn, name)
    if not assigns or _bound_otherwise(fn, name):
        return False
    stored = stored_names(fn)
    for a in assigns:
        call = a.value
        if not isinstance(call, ast.Call):
            return False
        func = call.func
        receiver = func.value if isinstance(func, ast.Attribute) else func
        if not isinstance(receiver, ast.Name) or receiver.id in stored:
            return False
        cd = _plain_class(an, receiver, frame)
        if cd is None or not made_plain(an, call, frame) or not _stored_apart(an, cd):
            return False
    return True


def _stored_apart(an: Analyzer, cd: ClassDef) -> bool:
    """Stores into an instance of cd run no project code (_stores_plainly), and no
    judgment of absence reads its attributes: no dataclass along its bases (one of
    the dataclass instances the run holds, absence.py's, may be it) and no
    `__getattr__` / `__getattribute__` (attribute_hooks.py's)."""
    return _stores_plainly(an, cd) and not any(
        is_dataclass(c) or any(find_method(an, c, h) is not None for h in _HOOKS)
        for c in mro(an, cd)
    )


def _bound_otherwise(fn, name: str) -> bool:
    """name declared global or nonlocal, or bound by a def, class or import in fn."""
    for n in nodes_of(fn, (ast.Global, ast.Nonlocal)):
        if name in n.names:
            return True
    for n in nodes_of(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        if n is not fn and n.name == name:
            return True
    return any(
        (a.asname or a.name.partition(".")[0]) == name
        for n in nodes_of(fn, (ast.Import, ast.ImportFrom))
        for a in n.names
    )


def _stores_plainly(an: Analyzer, cd: ClassDef) -> bool:
    """An attribute store into an instance of cd runs no code of the project."""
    for c in mro(an, cd):
        for stmt in c.node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if stmt.name in ("__setattr__", "__delattr__") or any(
                    isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter")
                    for d in stmt.decorator_list
                ):
                    return False
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Call):
                return False
    return True


def _plain_class(an: Analyzer, node: ast.expr, frame) -> ClassDef | None:
    """The project class node reads, where it is surely no nn.Module and calling
    it makes an instance of it."""
    if isinstance(node, ast.Attribute):
        if not isinstance(node.value, ast.Name) or not _plain_read(an, node, frame):
            return None
    elif not isinstance(node, ast.Name):
        return None
    value = an.eval(node, frame)
    if not isinstance(value, ClassRefV):
        return None
    cd = an.class_of(value.name)
    return cd if cd is not None and plain_class(an, cd) else None


def _plain_read(an: Analyzer, node: ast.Attribute, frame) -> bool:
    """Whether reading node (`self.name`) runs no code of the project: its owner's
    class defines no property of that name and no attribute hook."""
    owner = frame.env.get(node.value.id)  # type: ignore[union-attr]
    if isinstance(owner, SelfRecorder):
        key = owner.cls
    elif isinstance(owner, ObjectV) and owner.kind.startswith("<class>"):
        key = owner.kind[len("<class>") :]
    else:
        return False
    cd = an.class_of(key)
    return (
        cd is not None
        and find_property(an, cd, node.attr) is None
        and all(find_method(an, cd, h) is None for h in _HOOKS)
    )


def _declared_class(an: Analyzer, fd: FuncDef) -> str | None:
    """The key of the project class fd's return annotation names (a string one
    too), read in fd's module."""
    ann = fd.node.returns
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    if not isinstance(ann, (ast.Name, ast.Attribute)):
        return None
    owner = fd.owner or an
    top = owner.new_frame(None, "<annotation>")
    top.env = owner.module_env
    value = owner.eval(ann, top)
    return value.name if isinstance(value, ClassRefV) else None
