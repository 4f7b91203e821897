"""A method replaced by a copy of itself: no change in what runs.

`types.FunctionType(code, globals, name, argdefs, closure)` builds a function from a
code object; built from the method's own code (`f.__code__`, or
`f.__code__.replace(...)` of names and places only: co_name, co_qualname,
co_filename, co_firstlineno, which no instruction reads), its globals, its positional
defaults and its closure (a cell for every free name, `__class__` for zero-argument
`super()` included), it runs f's body on the same names and defaults. Its keyword-only
defaults are none unless given (`kwdefaults=`, Python 3.13) or copied
(`clone.__kwdefaults__ = f.__kwdefaults__`), so a copy is the same function only with
those too. A closure not given is the same only where f has no free name, and where
it has one Python raises (ValueError) before the copy exists: the same either way.

`cls.forward = clone`, with f `inspect.getattr_static(cls, "forward")` (the very
attribute replaced, as stored: a staticmethod or classmethod object has no
`__code__`, and Python raises), leaves calls of forward running f's body, which is
what the analysis runs when nothing replaced it (a class that copies its inherited
forward per subclass, in `__init_subclass__`). Read off the one function that makes
the assignment: each name of the chain bound once there, the receiver never rebound.
"""

from __future__ import annotations

import ast

from shapelint.analysis.nodes import walk

_FUNCTION_TYPE = frozenset({"types.FunctionType", "types.LambdaType"})
_GETATTR_STATIC = "inspect.getattr_static"
_META = frozenset({"co_name", "co_qualname", "co_filename", "co_firstlineno"})
_PARAMS = ("code", "globals", "name", "argdefs", "closure", "kwdefaults")
_FUNCTION_STATE = frozenset({"__code__", "__defaults__", "__kwdefaults__"})


def copies_itself(an, fn: ast.AST | None, target: ast.Attribute, value: ast.expr) -> bool:
    """Whether `target = value`, made in fn, stores into `R.m` a copy of what
    `getattr_static(R, "m")` finds (an: the file's analyzer, whose imports name
    FunctionType and getattr_static)."""
    if an is None or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    recv = target.value
    once = _bound_once(fn)
    if not isinstance(recv, ast.Name) or recv.id in _stored(fn):
        return False
    clone_name = value.id if isinstance(value, ast.Name) else None
    call = _through(value, once)
    if not (isinstance(call, ast.Call) and _qual(an, call.func) in _FUNCTION_TYPE):
        return False
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return False
    given = dict(zip(_PARAMS, call.args, strict=False))
    for k in call.keywords:
        if k.arg in given or k.arg not in _PARAMS:
            return False
        given[k.arg] = k.value
    original = _original(an, given.get("code"), once, recv, target.attr)
    if original is None:
        return False

    def of_original(node: ast.expr | None, attr: str) -> bool:
        return (
            isinstance(node, ast.Attribute)
            and node.attr == attr
            and _same(_through(node.value, once), original)
        )

    if not (
        of_original(given.get("globals"), "__globals__")
        and of_original(given.get("argdefs"), "__defaults__")
    ):
        return False
    if "closure" in given and not of_original(given["closure"], "__closure__"):
        return False
    kw_copied = of_original(given.get("kwdefaults"), "__kwdefaults__")
    for node in walk(fn):
        if not isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            if not (
                isinstance(t, ast.Attribute)
                and t.attr in _FUNCTION_STATE
                and isinstance(t.value, ast.Name)
                and t.value.id == clone_name
            ):
                continue
            if (
                t.attr == "__kwdefaults__"
                and isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and of_original(node.value, "__kwdefaults__")
            ):
                kw_copied = True
            else:
                return False  # the copy's code or defaults changed afterwards
    return kw_copied


def _original(an, code: ast.expr | None, once, recv: ast.Name, attr: str) -> ast.expr | None:
    """The expression f of `f.__code__` (or its `.replace(...)` of names and places
    only), once f is `getattr_static(recv, attr)`."""
    code = _through(code, once)
    if (
        isinstance(code, ast.Call)
        and isinstance(code.func, ast.Attribute)
        and code.func.attr == "replace"
        and not code.args
        and all(k.arg in _META for k in code.keywords)
    ):
        code = _through(code.func.value, once)
    if not (isinstance(code, ast.Attribute) and code.attr == "__code__"):
        return None
    f = _through(code.value, once)
    if not (
        isinstance(f, ast.Call)
        and _qual(an, f.func) == _GETATTR_STATIC
        and len(f.args) == 2
        and not f.keywords
        and isinstance(f.args[0], ast.Name)
        and f.args[0].id == recv.id
        and isinstance(f.args[1], ast.Constant)
        and f.args[1].value == attr
    ):
        return None
    return f


def _qual(an, func: ast.expr) -> str | None:
    return an.imports.resolve(func, set(), {})


def _same(a: ast.expr | None, b: ast.expr) -> bool:
    return a is not None and ast.dump(a) == ast.dump(b)


def _through(node: ast.expr | None, once: dict[str, ast.expr]) -> ast.expr | None:
    """A name bound once in the function: the expression bound to it (a chain of
    them followed a few steps)."""
    for _ in range(8):
        if not (isinstance(node, ast.Name) and node.id in once):
            return node
        node = once[node.id]
    return node


def _stored(fn: ast.AST) -> set[str]:
    return {n.id for n in walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}


def _bound_once(fn: ast.AST) -> dict[str, ast.expr]:
    """The names fn stores exactly once, by a plain `name = value`, with that value
    (a name stored anywhere else, in a nested scope too, is not one of them)."""
    counts: dict[str, int] = {}
    for n in walk(fn):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            counts[n.id] = counts.get(n.id, 0) + 1
    out: dict[str, ast.expr] = {}
    for n in walk(fn):
        if (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and counts.get(n.targets[0].id) == 1
        ):
            out[n.targets[0].id] = n.value
    return out
