"""`obj.name` where the plain lookup surely finds nothing and obj's class defines
`__getattr__`: Python then calls `type(obj).__getattr__(obj, name)`, whose value is
the read's (a dict subclass used as a config, `__getattr__` returning `self[name]`,
finds the entry its `__setattr__` stored: `DEFAULTS.k = 3` then `x * DEFAULTS.k`).

The plain lookup (object's `__getattribute__`) looks in the classes along the MRO
and in the instance's own `__dict__`. It surely finds nothing only where all of it
is read: the instance is one the run built, holding no mark of a change it could
not place; every class along its bases is the project's (read as source), object,
dict or OrderedDict, with no metaclass, no class decorator, a body of plain
definitions and assignments to names, none of them `name`, and no `__getattribute__`;
`name` is none of the attributes dict and object give their instances; and no store
the run could not keep on a value may have given any object that name
(absence.may_be_stored: a class written through, `setattr` of a computed name).
Anywhere else the read stays not known, as before. The hook's run is taken only
where it returned without raising and did no work a flop counter sees.
"""

from __future__ import annotations

import ast
from collections import OrderedDict
from typing import TYPE_CHECKING

from shapelint.analysis import absence, attribute_hooks, dynamic
from shapelint.analysis.attributes import defining_class, find_method, mro, setattr_is_objects
from shapelint.analysis.dict_entries import ITEMS
from shapelint.ops.values import ObjectV, StrV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef

_PREFIX = "<class>"
# What the builtin bases give an instance by lookup (the running CPython's own).
_BUILTIN_NAMES = frozenset(dir(dict)) | frozenset(dir(OrderedDict)) | frozenset(dir(object))
# Statements of a class body that bind only the names they state.
_PLAIN_STATEMENTS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass)
_FLIGHT: set[tuple[int, str]] = set()  # hooks under way: one reading itself finds nothing


def fallback(an: Analyzer, obj: Value, name: str) -> Value | None:
    """What `obj.name` reads through its class's `__getattr__`, where the plain
    lookup surely finds nothing; None where that is not sure, the class defines no
    `__getattr__`, or its run raised or did work."""
    if not (an.specialize and isinstance(obj, ObjectV) and obj.kind.startswith(_PREFIX)):
        return None
    cd = an.class_of(obj.kind[len(_PREFIX) :])
    if cd is None:
        return None
    fd = find_method(an, cd, "__getattr__")
    key = (id(obj), name)
    if fd is None or key in _FLIGHT or not _surely_missing(an, cd, obj, name):
        return None
    cls = fd.cls.name if fd.cls is not None else ""
    if dynamic.not_modelled(an, fd, [cls], decorators=False, special=True) is not None:
        return None
    _FLIGHT.add(key)
    try:
        value, exc, free = attribute_hooks.run_hook(an, fd, obj, [StrV(name)])
    finally:
        _FLIGHT.discard(key)
    return value if exc is None and free else None


def _surely_missing(an: Analyzer, cd: ClassDef, obj: ObjectV, name: str) -> bool:
    if name.startswith("__") or name in _BUILTIN_NAMES or absence.may_be_stored(name):
        return False
    if any(k == name or not (k.isidentifier() or k == ITEMS) for k, _ in obj.attrs):
        return False  # held, or a mark of a change the run could not place
    if attribute_hooks.hooked(an, obj) or not setattr_is_objects(an, cd):
        return False
    if defining_class(an, cd, name) is not None:
        return False  # a class attribute, or one the run stored through the class
    return all(_binds_only_its_own(c, name) for c in mro(an, cd))


def _binds_only_its_own(c: ClassDef, name: str) -> bool:
    """Whether c's body binds plain names, none of them `name`, undecorated."""
    if c.node.decorator_list or c.node.keywords:
        return False
    for stmt in c.node.body:
        if isinstance(stmt, _PLAIN_STATEMENTS):
            if getattr(stmt, "name", None) == name:
                return False
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # a docstring
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else [stmt.target]
            if isinstance(stmt, (ast.AnnAssign, ast.AugAssign))
            else None
        )
        if targets is None or not all(isinstance(t, ast.Name) and t.id != name for t in targets):
            return False
    return True
