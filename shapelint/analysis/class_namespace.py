"""`C.__dict__` of a project class (`type(self).__dict__`, `self.__class__.__dict__`):
the keys of the namespace CPython made of its body, in order.

A config class's constructor walks its own class's namespace (torch-ecg's CFG:
`for k in self.__class__.__dict__: if not k.startswith("__") ...`). What the walk
sees is the body's bindings in first-binding order, between the dunders type()
adds: `__module__` first, `__doc__` next where the body starts with a docstring,
`__dict__` and `__weakref__` after the body where no base already gives them,
then `__doc__` (None) where there was none, then `__hash__` (None) where the body
defines `__eq__` alone. That is CPython 3.11 and 3.12 (3.13 adds
`__firstlineno__` and `__static_attributes__`); the interpreter running the
analysis stands for the one that runs the code, as `cache.py` keys on it.

Only the keys are known: the values are what the body bound (a classmethod object,
not the bound method a read through the class gives) and are left unknown. The
namespace is not known where anything else may add or remove a key: a body
statement other than a def, a class, a docstring, `pass` or an assignment to
names, `__slots__` or another name type() treats apart, a class decorator, a
keyword in the class header (a metaclass, `__init_subclass__`'s arguments), an
`__init_subclass__` or `__set_name__` along the project, a base outside the
project other than object, dict or list, a store or delete through the class's
name in its file, or one the run made through the class (class_state).
"""

from __future__ import annotations

import ast
import sys

from shapelint.analysis import attributes, class_state
from shapelint.analysis.defs import Analyzer, ClassDef
from shapelint.analysis.dict_values import dict_value
from shapelint.analysis.nodes import nodes_of
from shapelint.ops.values import UNKNOWN, ObjectV

# Bases outside the project whose instances hold no `__dict__` slot of their own
# (type() adds `__dict__` and `__weakref__` to a subclass) and whose subclassing
# runs no hook of theirs.
_BUILTIN_BASES = frozenset({"object", "dict", "list"})

# Names type() reads or rewrites when it builds the class: a body binding one of
# them changes which keys the namespace keeps.
_SPECIAL = frozenset(
    {"__slots__", "__qualname__", "__classcell__", "__dict__", "__weakref__", "__module__"}
)


def of(an: Analyzer, key: str) -> ObjectV | None:
    """`C.__dict__` of the project class `key` as a dict of its keys (values not
    known), None where the keys are not known."""
    if sys.version_info >= (3, 13):
        return None  # more dunders, whose places this module does not model
    cd = an.class_of(key)
    keys = _keys(an, cd, 0) if cd is not None else None
    if keys is None:
        return None
    return dict_value(dict.fromkeys(keys, UNKNOWN))


def _keys(an: Analyzer, cd: ClassDef, depth: int) -> list[str] | None:
    node = cd.node
    if depth > 20 or node.decorator_list or node.keywords:
        return None
    body = _body_names(node)
    if body is None or _changed_from_outside(an, cd, body):
        return None
    project = [b for b in node.bases if attributes.base_of(an, cd, b) is not None]
    outside = [b for b in node.bases if attributes.base_of(an, cd, b) is None]
    if any(not (isinstance(b, ast.Name) and b.id in _BUILTIN_BASES) for b in outside):
        return None
    owner = cd.owner or an
    if any(isinstance(b, ast.Name) and b.id in owner.module_env for b in outside):
        return None  # `dict` rebound in the file: not the builtin
    for base in attributes.mro(an, cd)[1:]:
        if base.methods.get("__init_subclass__") is not None:
            return None
        if _keys(an, base, depth + 1) is None:
            return None  # a base whose own namespace is not plain (slots, hooks)
    if _sets_names(an, cd):
        return None
    doc = bool(node.body) and _is_docstring(node.body[0])
    keys = ["__module__"] + (["__doc__"] if doc else []) + body
    if not project:
        keys += ["__dict__", "__weakref__"]
    if not doc:
        keys.append("__doc__")
    if "__eq__" in body and "__hash__" not in body:
        keys.append("__hash__")
    return keys


def _body_names(node: ast.ClassDef) -> list[str] | None:
    """The names the body binds, in first-binding order; None where a statement
    may bind, unbind or hide others."""
    names: list[str] = []
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound = [stmt.name]
        elif isinstance(stmt, ast.Assign):
            bound = _assigned(stmt.targets)
            if bound is None or any(isinstance(n, ast.NamedExpr) for n in ast.walk(stmt.value)):
                return None
        elif isinstance(stmt, ast.Pass) or _is_docstring(stmt):
            bound = []
        else:
            return None  # an `if`, a loop, an annotation (`__annotations__`), `del`, ...
        for name in bound:
            if name in _SPECIAL:
                return None
            if name not in names:
                names.append(name)
    return names


def _assigned(targets: list[ast.expr]) -> list[str] | None:
    out: list[str] = []
    for t in targets:
        if isinstance(t, ast.Name):
            out.append(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in t.elts):
            out += [e.id for e in t.elts]  # type: ignore[attr-defined]
        else:
            return None
    return out


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _changed_from_outside(an: Analyzer, cd: ClassDef, body: list[str]) -> bool:
    """A key the run stored through the class that its body does not bind, or a
    store, delete or setattr through the class's name anywhere in its file."""
    stored = class_state.table(cd.key) if class_state.active() else None
    if stored and any(name not in body for name in stored):
        return True
    tree = (cd.owner or an).tree
    for n in nodes_of(tree, ast.Attribute):
        if isinstance(n.ctx, (ast.Store, ast.Del)) and _names_class(n.value, cd):
            return True
    for call in nodes_of(tree, ast.Call):
        func = call.func
        if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and call.args:
            if _names_class(call.args[0], cd):
                return True
    return False


def _names_class(node: ast.expr, cd: ClassDef) -> bool:
    """The class's own name, or a way to reach an instance's class (`cls`,
    `type(x)`, `x.__class__`), which may name it."""
    if isinstance(node, ast.Name):
        return node.id in (cd.name, "cls")
    if isinstance(node, ast.Attribute):
        return node.attr == "__class__"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"


def _sets_names(an: Analyzer, cd: ClassDef) -> bool:
    """A body value built by a call of a project class defining `__set_name__`,
    which type() calls with the class, and which may change its namespace."""
    for stmt in cd.node.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            if attributes.made_with_hook(an, cd, stmt.value.func, "__set_name__"):
                return True
    return False
