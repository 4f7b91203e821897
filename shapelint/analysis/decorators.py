"""A decorated function called as Python calls it: what its decorators returned.

Python applies a function's decorators once, when the `def` runs, innermost first,
and a call runs whatever the last one returned. A target run does the same: each
decorator is called (read from its source, in the file that defines it) with the
function as a value, and the call of the decorated function calls the result. A
decorator that hands the function back changes nothing; one that returns a
wrapper (`functools.wraps`, a factory's inner def) has that wrapper run with the
call's arguments, and the wrapper's own `func(*args, **kwargs)` runs the body.
Where a decorator's result is not a function the analysis can call (a class, an
object, an unresolved callee), the call is not followed and says so: the total is
a lower bound, never a figure for code that does not run.

What the decorators do when they are applied (string work on docstrings, checks
of versions) runs at import in Python, not per call: it is not costed here.
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field

from shapelint import pyparse
from shapelint.analysis import call_path, dynamic, raising
from shapelint.analysis.defs import FuncDef
from shapelint.analysis.lambdas import ClosureV
from shapelint.ops.values import UNKNOWN, ObjectV, StrV, TupleV, Value

_FUNC = "<decorated>"  # the name the function is bound to while a decorator runs


@dataclass(frozen=True, slots=True)
class FunctionV(ObjectV):
    """A function of the project as a value (a decorator's argument): calling it
    runs its body, its attributes are the few a decorator reads (`__name__`,
    `__qualname__`, `__doc__`, `__code__.co_varnames`)."""

    fd: FuncDef | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class CompiledV(Value):
    """`torch.compile(func)` of a function the analysis calls (compiled.py)."""

    func: Value


def function_value(an, fd: FuncDef) -> FunctionV:
    owner = fd.owner or an
    attrs: list[tuple[str, Value]] = [
        ("__name__", StrV(fd.node.name)),
        ("__qualname__", StrV(fd.qualname)),
        ("__module__", StrV(None)),
        ("__doc__", StrV(ast.get_docstring(fd.node, clean=False))),
    ]
    names = _varnames(owner, fd.node)
    if names is not None:
        code = ObjectV("<code>", (("co_varnames", TupleV(tuple(StrV(n) for n in names))),))
        attrs.append(("__code__", code))
    return FunctionV(f"<function>{owner.src.path}::{fd.qualname}", tuple(attrs), fd)


def stored(obj: ObjectV, attrs: dict[str, Value], name: str) -> Value:
    """obj after `obj.name = v` through a local name, attrs its attributes then.
    A function stays the function Python called it as (`func.__doc__ = docstring`,
    which transformers' auto_docstring does before it returns func): its
    attributes are data, its body is its code, which only a store of `__code__`
    replaces."""
    if not attrs:
        return UNKNOWN
    if isinstance(obj, FunctionV) and name != "__code__":
        return FunctionV(obj.kind, tuple(attrs.items()), obj.fd)
    return ObjectV(obj.kind, tuple(attrs.items()))


# What functools.wraps copies from the function it is given (WRAPPER_ASSIGNMENTS).
_WRAPS_COPIES = ("__module__", "__name__", "__qualname__", "__doc__")


def wrapped_by(an, node: ast.FunctionDef | ast.AsyncFunctionDef, frame) -> Value | None:
    """The function `@functools.wraps(f)` names on a nested def, evaluated; None
    without one."""
    for d in node.decorator_list:
        if isinstance(d, ast.Call) and d.args and not isinstance(d.args[0], ast.Starred):
            func = d.func
            if an.imports.resolve(func, frame.locals, frame.local_imports) == "functools.wraps":
                return an.eval(d.args[0], frame)
    return None


def closure_attribute(closure: ClosureV, name: str) -> Value:
    """An attribute of a nested def as a value: what functools.wraps copied onto
    it, the function it wraps (`__wrapped__`), its own `__name__` and code."""
    wrapped = closure.wrapped
    if name == "__wrapped__":
        return wrapped if wrapped is not None else UNKNOWN
    if name in _WRAPS_COPIES and isinstance(wrapped, ObjectV):
        return wrapped.attr(name)
    if name in _WRAPS_COPIES and wrapped is not None:
        return closure_attribute(wrapped, name) if isinstance(wrapped, ClosureV) else UNKNOWN
    node = closure.node
    if isinstance(node, ast.Lambda):
        return StrV("<lambda>") if name == "__name__" else UNKNOWN
    if name == "__name__":
        return StrV(node.name)
    if name == "__code__" and closure.owner is not None:
        names = _varnames(closure.owner, node)
        if names is not None:
            return ObjectV("<code>", (("co_varnames", TupleV(tuple(StrV(n) for n in names))),))
    return UNKNOWN


def decorated(an, fd: FuncDef) -> Value | None:
    """What fd's decorators make of it, applied as Python applies them (once per
    function: the value is kept on the analyzer of fd's file); None where a
    decorator's result is not something a call can follow (`blocking` names it)."""
    return _applied(an, fd)[0]


def blocking(an, fd: FuncDef) -> str | None:
    """The decorator whose result a call of fd cannot follow, as written."""
    return _applied(an, fd)[1]


def _applied(an, fd: FuncDef) -> tuple[Value | None, str | None]:
    owner = fd.owner or an
    memo = getattr(owner, "decorated_values", None)
    if memo is None:
        memo = owner.decorated_values = {}
    if fd.qualname not in memo:
        # a decorator that reaches its own function while it runs: not followed
        memo[fd.qualname] = (None, "a decorator")
        memo[fd.qualname] = _apply(owner, fd)
    return memo[fd.qualname]


def _apply(owner, fd: FuncDef) -> tuple[Value | None, str | None]:
    func: Value = function_value(owner, fd)
    frame = owner.new_frame(None, "<decorators>")
    frame.env = dict(owner.module_env)
    pending = raising.take()  # what the caller may raise is not the decorators' business
    # Applied at import: what their code finds is no finding of the target's run.
    try:
        with call_path.paused():
            for d in reversed(fd.node.decorator_list):
                if dynamic.transparent(owner, d, _function_object(func)):
                    continue
                frame.env[_FUNC] = func
                call = ast.Call(d, [ast.Name(_FUNC, ast.Load())], [])
                ast.copy_location(call, d)
                ast.fix_missing_locations(call)
                func = owner.eval(call, frame)
                if raising.take() is not None or not callable_value(func):
                    if not _calls_itself(owner, fd, func):
                        return None, ast.unparse(d)
    finally:
        if pending is not None:
            raising.pending(pending)
    return func, None


def _function_object(v: Value) -> bool:
    """A function object (a def's, a lambda's, a closure's): truthy, never None."""
    return isinstance(v, (FunctionV, ClosureV))


def callable_value(v: Value) -> bool:
    """A value whose call the analysis runs as Python would."""
    return isinstance(v, (FunctionV, ClosureV, CompiledV))


def _calls_itself(an, fd: FuncDef, v: Value) -> bool:
    """Whether v, a decorator's result, is an instance of a project class whose
    `__call__` a call of it runs (a class used as a decorator: `@compile_wrap`), for a
    plain function: on a method Python would bind nothing to such an instance (no
    `__get__` makes it a descriptor), a case not followed."""
    if fd.cls is not None or not isinstance(v, ObjectV) or not v.kind.startswith("<class>"):
        return False
    methods = an.class_methods(v.kind[len("<class>") :])
    return "__call__" in methods and "forward" not in methods and "__get__" not in methods


_CODE_CACHE: dict[tuple[str, int], tuple[types.CodeType, ...]] = {}


def _varnames(owner, node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...] | None:
    """The function's `__code__.co_varnames` as CPython compiles it (parameters
    in order, then its locals): compiled, never run. None where the file does not
    compile here."""
    text, path = owner.src.text, owner.src.path
    key = (path, hash(text))
    codes = _CODE_CACHE.get(key)
    if codes is None:
        try:
            top, _ = pyparse.compile_caught(text, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError):
            return None
        found, todo = [], [top]
        while todo:
            c = todo.pop()
            found.append(c)
            todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        codes = _CODE_CACHE[key] = tuple(found)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    hits = [c for c in codes if c.co_name == node.name and c.co_firstlineno == first]
    return hits[0].co_varnames if len(hits) == 1 else None
