"""A decorator that returns the very function it is given, through the calls it
returns, read from its source.

`dynamic.transparent` takes a decorator whose every return is its parameter
(`def register(fn): ...; return fn`) as handing back the function, without
running it. Many decorators reach that return through a helper:
transformers' `auto_docstring(obj)` returns `auto_docstring_decorator(obj)`,
which returns `auto_method_docstring(obj, ...)`, which sets `func.__doc__` and
returns `func`. Running it to learn so means reading its file's whole top level
(and what that imports) and following the docstring work itself, most of a
small model's run. Read from the syntax instead: a function hands back its first
positional parameter where that parameter is never rebound and every return its
call can reach is the parameter itself, or a call `g(param, ...)` passing it as
the first positional argument to a function g that hands back its own first
parameter, where g is a plain `def` (no decorator, no `async`, no `yield`, no
store of `__code__` or `__defaults__`, no setattr) that
the name surely is: the one binding of the name in the nearest scope binding it
(the function's own, an enclosing function's, the module's as bindings.py
decides it). Where the function given is a function object (`function_given`:
truthy, never None), a test on the parameter alone (`if obj:`, `obj is None`,
`obj is not None`, `not ...`) takes only its branch, as for a decorator usable
bare or as a factory (`if obj: return deco(obj)` then `return deco`). What the
bodies do besides is not followed, as for a decorator returning its parameter
at once; anything else is not decided (False).
"""

from __future__ import annotations

import ast

from shapelint.analysis.bindings import Bindings

_MAX_DEPTH = 6
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def hands_back(fn: ast.FunctionDef, module: Bindings, function_given: bool) -> bool:
    """Whether a call of fn with a function as its first argument returns that
    function (module docstring). module: the bindings of fn's file."""
    return _hands_back(fn, [], module, function_given, 0)


def _hands_back(fn, enclosing: list, module: Bindings, given: bool, depth: int) -> bool:
    if not isinstance(fn, ast.FunctionDef) or depth > _MAX_DEPTH:
        return False
    params = fn.args.posonlyargs + fn.args.args
    if not params:
        return False
    name = params[0].arg
    local = Bindings(fn)
    if local.sites.get(name) or name in local.declared or _otherwise(fn):
        return False
    kept = _reached(fn.body, name, given)
    if not kept or not _leaves(kept[-1]):
        return False  # a way out that returns None
    for ret in _returns(kept):
        value = ret.value
        if isinstance(value, ast.Name) and value.id == name:
            continue
        if not (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.args
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id == name
            and not any(isinstance(a, ast.Starred) for a in value.args)
        ):
            return False
        found = _callee(value.func.id, [*enclosing, (fn, local, kept)], module)
        if found is None or not _hands_back(*found, module, given, depth + 1):
            return False
    return True


def _callee(name: str, scopes: list, module: Bindings):
    """(the def, its enclosing functions) that `name` surely is where it is
    called, the innermost scope binding it deciding; None otherwise."""
    for i in range(len(scopes) - 1, -1, -1):
        fn, local, kept = scopes[i]
        if name in (a.arg for a in _all_params(fn)) or name in local.declared:
            return None
        if name in local.sites:
            stmt = local.statement(name)
            if stmt is None or not any(s is stmt for s in kept):
                return None  # bound otherwise, or not before the return runs
            return _plain(stmt, scopes[: i + 1])
    return _plain(module.statement(name), [])


def _plain(stmt, enclosing: list):
    if isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list:
        return stmt, enclosing
    return None


def _all_params(fn: ast.FunctionDef) -> list[ast.arg]:
    a = fn.args
    rest = [x for x in (a.vararg, a.kwarg) if x is not None]
    return [*a.posonlyargs, *a.args, *a.kwonlyargs, *rest]


def _reached(body: list[ast.stmt], name: str, given: bool) -> list[ast.stmt]:
    """body's statements a call reaches in order, an `if` the argument decides
    replaced by its branch; up to the first that surely leaves (_leaves)."""
    out: list[ast.stmt] = []
    for stmt in body:
        taken = _decided(stmt.test, name) if given and isinstance(stmt, ast.If) else None
        if taken is not None:
            branch = _reached(stmt.body if taken else stmt.orelse, name, given)  # type: ignore[attr-defined]
            out.extend(branch)
            if branch and _leaves(branch[-1]):
                return out
            continue
        out.append(stmt)
        if _leaves(stmt):
            return out
    return out


def _leaves(stmt: ast.stmt) -> bool:
    """Whether every way through stmt ends in a return or a raise."""
    if isinstance(stmt, (ast.Return, ast.Raise)):
        return True
    return (
        isinstance(stmt, ast.If)
        and bool(stmt.body)
        and bool(stmt.orelse)
        and _leaves(stmt.body[-1])
        and _leaves(stmt.orelse[-1])
    )


def _decided(test: ast.expr, name: str) -> bool | None:
    """The truth of test where `name` holds a function object."""
    if isinstance(test, ast.Name) and test.id == name:
        return True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _decided(test.operand, name)
        return None if inner is None else not inner
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == name
        and len(test.ops) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        if isinstance(test.ops[0], ast.Is):
            return False
        if isinstance(test.ops[0], ast.IsNot):
            return True
    return None


def _returns(stmts: list[ast.stmt]) -> list[ast.Return]:
    """The returns among stmts and the statements they hold, in their own scope."""
    out, todo = [], list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Return):
            out.append(n)
        elif isinstance(n, _SCOPES):
            continue
        elif isinstance(n, (ast.stmt, ast.ExceptHandler, ast.match_case)):
            todo.extend(c for c in ast.iter_child_nodes(n) if isinstance(c, _HOLDERS))
    return out


_HOLDERS = (ast.stmt, ast.ExceptHandler, ast.match_case)


# A function's attributes that change what calling it runs.
_CODE = frozenset({"__code__", "__defaults__", "__kwdefaults__", "__call__"})


def _otherwise(fn: ast.FunctionDef) -> bool:
    """Whether fn's call may give something else than its returns say (a
    generator, a coroutine), or may change what a function runs (a store of
    `__code__`, `__defaults__`; a setattr or delattr of any name)."""
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
            return True
        if isinstance(n, ast.Attribute) and n.attr in _CODE and not isinstance(n.ctx, ast.Load):
            return True
        if isinstance(n, ast.Name) and n.id in ("setattr", "delattr"):
            return True
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))
    return False
