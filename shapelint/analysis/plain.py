"""Attributes of a module being built whose value the analysis does not know, but
which surely are no state torch counts: no module, no Parameter, no buffer.

torch's `Module.__setattr__` registers a value as a submodule only when it is an
nn.Module and as a parameter only when it is an nn.Parameter; anything else (a
number, a string, a flag, a tuple or list, a function, a plain tensor) is a plain
attribute that `parameters()` never reaches. An unknown value may be either, so
the count it sits in is a lower bound (parameters.py) — unless what was assigned
says it is plain: an expression whose result is never a module or Parameter (a
comparison, a literal, a display, arithmetic of plain operands, a call of a
builtin such as `int`, of `torch.device` or of numpy), or a value whose declared type says
so (a parameter annotated `float`, a function annotated `-> bool`: a module
passed there breaks the code's own declaration, as with the jaxtyping annotations
modules.py reads).

The names are kept on the instance under the pseudo attribute `PLAIN` (no Python
name), set by the assignment that stored the unknown value and dropped by any
other store of that name.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from shapelint.analysis.attributes import find_method, module_class, mro
from shapelint.analysis.defs import FuncDef, named_params
from shapelint.analysis.small_sets import SetV
from shapelint.ops.values import (
    DICT_KIND,
    UNKNOWN,
    BoolV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    StrV,
    TupleV,
    Value,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef

PLAIN = "<plain>"

# Builtins whose result is never a module or a Parameter.
_BUILTINS = frozenset(
    {
        "int", "float", "bool", "str", "bytes", "complex", "len", "tuple", "list", "dict",
        "set", "frozenset", "range", "sorted", "repr", "hash", "round", "abs", "isinstance",
        "issubclass", "hasattr", "callable", "id", "format", "divmod", "pow", "any", "all",
        "ord", "chr", "bin", "hex", "oct", "enumerate", "zip", "reversed",
    }
)  # fmt: skip
# Library calls whose result is never a module or a Parameter.
_QUALIFIED = frozenset(
    {
        "torch.device", "torch.Size", "torch.finfo", "torch.iinfo", "torch.get_default_dtype",
        "torch.is_tensor", "torch.is_floating_point", "torch.is_complex", "os.getenv",
        "os.environ.get", "operator.index", "torch.cuda.is_available", "torch.is_grad_enabled",
        "torch.are_deterministic_algorithms_enabled",
        "torch.is_deterministic_algorithms_warn_only_enabled",
    }
)  # fmt: skip
# (not operator: operator.add of two Sequentials is one; nor the builtin sum; numpy
# makes arrays, scalars and tuples of them, never a torch object)
_PLAIN_MODULES = ("math.", "string.", "re.", "numpy.")
# Declared types whose values are never a module or a Parameter.
_PLAIN_TYPES = frozenset(
    {"int", "float", "bool", "str", "bytes", "complex", "tuple", "list", "dict", "set", "frozenset"}
)
_PLAIN_QUALIFIED_TYPES = frozenset(
    {
        "typing.Tuple", "typing.List", "typing.Dict", "typing.Set", "typing.FrozenSet",
        "typing.Literal", "torch.dtype", "torch.device", "torch.Size",
    }
)  # fmt: skip
_WRAPPERS = frozenset({"typing.Optional", "typing.Union"})


def names(attrs) -> frozenset[str]:
    """The attributes an instance's pseudo attribute marks plain."""
    for k, v in attrs:
        if k == PLAIN and isinstance(v, TupleV):
            return frozenset(i.value for i in v.items if isinstance(i, StrV) and i.value)
    return frozenset()


def none_stays_plain(attrs: dict[str, Value], name: str) -> bool:
    """Whether None stored now under name is a plain attribute: nothing registered
    holds the name (torch keeps a None stored over a Parameter's, a buffer's or a
    submodule's name in that registry), as where it is unbound, holds a number, a
    string or a bool, or is marked plain."""
    if name not in attrs:
        return True
    old = attrs[name]
    return isinstance(old, (IntV, FloatV, StrV, BoolV)) or name in names(attrs.items())


def mark(attrs: dict[str, Value], name: str, plain: bool) -> None:
    """Record whether attrs[name], just stored, is surely plain."""
    have = names(attrs.items())
    if plain == (name in have):
        return
    new = have | {name} if plain else have - {name}
    if new:
        attrs[PLAIN] = TupleV(tuple(StrV(n) for n in sorted(new)))
    else:
        attrs.pop(PLAIN, None)


def rejoin(
    joined: dict[str, Value], a: dict[str, Value], b: dict[str, Value], an: Analyzer | None = None
) -> None:
    """The marks of joined, the attributes two paths left (a and b) where they meet:
    a name of unknown value there is plain where on each path it was marked plain,
    held a value that is no state (None, a number, a string, a tuple of them; with
    an, an instance of a project class that is no nn.Module) or was not bound."""
    joined.pop(PLAIN, None)
    for name, value in list(joined.items()):
        if value is UNKNOWN and _plain_on(a, name, an) and _plain_on(b, name, an):
            mark(joined, name, True)


def _plain_on(attrs: dict[str, Value], name: str, an: Analyzer | None) -> bool:
    if name not in attrs:
        return True  # not bound on this path: nothing registered under it
    value = attrs[name]
    if value is UNKNOWN:
        return name in names(attrs.items())
    return no_state(value) or an is not None and plain_instance(an, value)


def plain_instance(an: Analyzer, value: Value) -> bool:
    """An instance (not one being built) of a plain_class: torch registers nothing
    it is or holds."""
    if type(value) is not ObjectV or not value.kind.startswith("<class>"):
        return False
    cd = an.class_of(value.kind[len("<class>") :])
    return cd is not None and plain_class(an, cd)


def plain_alternatives(an: Analyzer, items) -> bool:
    """Every one of several values a name may hold is plain data or an instance of a
    plain_class (`try: s = Settings.from_config(c) except ...: s = Settings()`):
    whichever it holds, torch registers nothing under it."""
    return all(no_state(v) or plain_instance(an, v) for v in items)


def plain_class(an: Analyzer, cd: ClassDef) -> bool:
    """A project class whose bases are all seen and none is an nn.Module, and whose
    call makes an instance of it: no `__new__` and no metaclass along its bases,
    which decide what `type.__call__` returns (a layer, where the analysis would
    hold an instance of the class)."""
    return (
        module_class(an, cd) is False
        and find_method(an, cd, "__new__") is None
        and not any(k.arg == "metaclass" for c in mro(an, cd) for k in c.node.keywords)
    )


def no_state(value: Value) -> bool:
    """None, a number, a string, or a tuple of them (a namedtuple's too); a plain
    dict or a set, whatever it holds (torch registers nothing a dict or set
    attribute holds)."""
    if isinstance(value, TupleV):
        return all(no_state(v) for v in value.items)
    if isinstance(value, ObjectV) and value.kind == DICT_KIND or isinstance(value, SetV):
        return True
    return isinstance(value, (NoneV, IntV, FloatV, BoolV, StrV))


def surely_plain(
    an: Analyzer,
    node: ast.expr | None,
    frame,
    may_be_state: Callable[[Value], bool],
    made_plain: Callable[[Analyzer, ast.Call, object], bool] | None = None,
) -> bool:
    """Whether the value of node, as evaluated in frame, can be no module and no
    Parameter; may_be_state judges a value the analysis knows (attribute_stores.may_replace),
    made_plain a call this module cannot judge (plain_instances.made_plain)."""
    if node is None:
        return False
    if isinstance(node, (ast.Constant, ast.JoinedStr, ast.Compare)):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
        return True  # a display: torch registers nothing it holds
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return True
    if isinstance(node, ast.UnaryOp):
        # `not x` is a bool; `-p` of a Parameter is a plain tensor
        return True
    if isinstance(node, ast.BinOp):
        if not isinstance(node.op, (ast.Add, ast.Mult)):
            return True  # no module defines these; tensor arithmetic gives tensors
        # Sequential + Sequential, ModuleList + ModuleList, Sequential * n are modules
        return surely_plain(an, node.left, frame, may_be_state, made_plain) and surely_plain(
            an, node.right, frame, may_be_state, made_plain
        )
    if isinstance(node, ast.BoolOp):
        return all(surely_plain(an, v, frame, may_be_state, made_plain) for v in node.values)
    if isinstance(node, ast.IfExp):
        return surely_plain(an, node.body, frame, may_be_state, made_plain) and surely_plain(
            an, node.orelse, frame, may_be_state, made_plain
        )
    if isinstance(node, ast.Name):
        return _plain_name(an, node.id, frame, may_be_state)
    if isinstance(node, ast.Call):
        return _plain_call(an, node, frame) or bool(made_plain and made_plain(an, node, frame))
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call):
        return _info_field(an, node.value, frame)
    return False


# torch's description objects: every field of one is a number, a string or a dtype
# (`torch.finfo(torch.float32).eps`, `torch.iinfo(t).max`, `torch.device(d).type`).
_INFO = frozenset({"torch.finfo", "torch.iinfo", "torch.device"})


def _info_field(an: Analyzer, call: ast.Call, frame) -> bool:
    return an.imports.resolve(call.func, frame.locals, frame.local_imports) in _INFO


def _plain_name(an: Analyzer, name: str, frame, may_be_state) -> bool:
    value = frame.env.get(name, UNKNOWN)
    if value is not UNKNOWN:
        return not may_be_state(value)
    if name not in frame.env and name not in frame.locals:
        if name in an.functions or name in an.classes:
            return True  # a function, a class: no module instance
        known = an.module_env.get(name, UNKNOWN)
        if known is not UNKNOWN:
            return not may_be_state(known)
    func = getattr(frame, "func", None)
    if not isinstance(func, FuncDef):
        return False
    for p in named_params(func.node):
        if p.arg == name:
            return _rebound(func.node, name) is False and _plain_type(
                func.owner or an, p.annotation
            )
    return False


def _rebound(fn: ast.AST, name: str) -> bool:
    """Whether the function stores another value under name anywhere in its body."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return True
    return False


def _plain_call(an: Analyzer, node: ast.Call, frame) -> bool:
    func = node.func
    qual = an.imports.resolve(func, frame.locals, frame.local_imports)
    if qual is not None:
        if qual in _QUALIFIED or qual.startswith(_PLAIN_MODULES):
            return True
    elif isinstance(func, ast.Name) and func.id in _BUILTINS and _builtin(an, func.id, frame):
        return True
    elif isinstance(func, ast.Name) and _tuple_class(an, func.id, frame):
        return True
    fd = _function(an, func, qual, frame)
    return fd is not None and _plain_type(fd.owner or an, fd.node.returns)


def _tuple_class(an: Analyzer, name: str, frame) -> bool:
    """Whether name is this file's `Name = namedtuple(...)`, bound by that statement
    alone: its instances are tuples."""
    tree = getattr(an, "tree", None)
    if tree is None or name in frame.env or name in frame.locals:
        return False
    made = None
    for stmt in tree.body:
        if not any(_binds(n, name) for n in _module_level(stmt)):
            continue
        if made is not None or not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            return False
        made = stmt.value
    if not isinstance(made, ast.Call) or any(
        isinstance(n, ast.Global) and name in n.names for n in ast.walk(tree)
    ):
        return False
    return an.imports.resolve(made.func) in ("collections.namedtuple", "typing.NamedTuple")


def _module_level(node: ast.AST):
    """node and what it holds, not inside a function or class body (their names
    are their own)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            yield child
        else:
            yield from _module_level(child)


def _binds(n: ast.AST, name: str) -> bool:
    if isinstance(n, ast.Name):
        return n.id == name and isinstance(n.ctx, (ast.Store, ast.Del))
    if isinstance(n, ast.alias):
        return (n.asname or n.name.split(".")[0]) == name
    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return n.name == name
    return False


def _builtin(an: Analyzer, name: str, frame) -> bool:
    is_builtin = getattr(an, "is_builtin", None)
    return bool(is_builtin and is_builtin(name, frame))


def _function(an: Analyzer, func: ast.expr, qual: str | None, frame) -> FuncDef | None:
    """The project function a call names (not a method: its class may override it)."""
    if isinstance(func, ast.Name) and func.id not in frame.env and func.id not in frame.locals:
        fd = an.functions.get(func.id)
        if fd is not None:
            return fd
    sym = an.project_symbol(func, qual, frame)
    return sym if isinstance(sym, FuncDef) and sym.cls is None else None


def _plain_type(an: Analyzer, node: ast.expr | None) -> bool:
    """Whether an annotation declares a type none of whose values is a module or a
    Parameter."""
    if node is None:
        return False
    if isinstance(node, ast.Constant):
        return node.value is None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _plain_type(an, node.left) and _plain_type(an, node.right)
    if isinstance(node, ast.Subscript):
        qual = _type_name(an, node.value)
        if qual in _WRAPPERS:
            args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return all(_plain_type(an, a) for a in args)
        return qual in _PLAIN_QUALIFIED_TYPES or qual in _PLAIN_TYPES
    qual = _type_name(an, node)
    return qual in _PLAIN_TYPES or qual in _PLAIN_QUALIFIED_TYPES


def _type_name(an: Analyzer, node: ast.expr) -> str | None:
    """The qualified name of an annotation's class; a builtin by its bare name when
    the file does not shadow it."""
    qual = an.imports.resolve(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if qual is not None:
        return qual
    if isinstance(node, ast.Name) and node.id in _PLAIN_TYPES:
        shadowed = node.id in an.module_env or node.id in an.classes or node.id in an.functions
        return None if shadowed else node.id
    return None
