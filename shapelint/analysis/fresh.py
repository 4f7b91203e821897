"""Objects no other holder can reach: a function's `**kwargs` dict.

Python builds the `**kwargs` dict anew at every call, so while the function has
not handed it out, no other name, attribute or item anywhere holds it. The
analysis holds values, not a heap, and a change it cannot place forgets every
value equal to the changed object (in_place.py): an empty `{}` set on a config
made the function's own empty `kwargs` unknown. A name whose every use keeps
the object inside the function is left out of that forgetting (what it holds
is still walked: an item may be shared).

Kept inside: a method called on it (`kwargs.pop(k, d)`: a dict's methods store
their receiver nowhere), an item read, stored or deleted, `**kwargs` in a call
(a copy), a comparison (`k in kwargs`), iteration (its keys), a truth test, an
f-string, and `return kwargs` (the frame that holds it is still running while
anything can be forgotten in it). Anything else hands it out: an alias
(`d = kwargs`, `a or kwargs`), an argument (`f(kwargs)`), a stored value, a
bound method taken as a value (`u = kwargs.update`), a `yield`, a use inside a
nested function or lambda. A name rebound anywhere in the function is not the
`**kwargs` dict alone.
"""

from __future__ import annotations

import ast

from shapelint.analysis.nodes import parent_map, stored_names, walk

_KEY = "_shapelint_fresh"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def unreachable_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The names of fn's frame that hold an object nothing else can reach."""
    known = fn.__dict__.get(_KEY)
    if known is None:
        kw = fn.args.kwarg
        known = frozenset()
        if kw is not None and kw.arg not in stored_names(fn) and _kept_inside(fn, kw.arg):
            known = frozenset((kw.arg,))
        setattr(fn, _KEY, known)
    return known


def _kept_inside(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    # (the map leaves out the Load and Add leaves, which no use below asks about)
    parents = parent_map(fn)
    for node in walk(fn):
        if isinstance(node, ast.Name) and node.id == name and not _kept_use(node, parents, fn):
            return False
    return True


def _kept_use(node: ast.Name, parents: dict[int, ast.AST], fn) -> bool:
    scope = parents.get(id(node))
    while scope is not None and scope is not fn:
        if isinstance(scope, _SCOPES):
            return False  # a closure holds the cell: it may hand the object out
        scope = parents.get(id(scope))
    parent = parents.get(id(node))
    if isinstance(parent, ast.Attribute):
        outer = parents.get(id(parent))
        return isinstance(outer, ast.Call) and outer.func is parent
    if isinstance(parent, ast.Subscript):
        return parent.value is node
    if isinstance(parent, ast.keyword):
        return parent.arg is None
    if isinstance(parent, (ast.For, ast.comprehension)):
        return parent.iter is node
    if isinstance(parent, (ast.If, ast.While, ast.Assert)):
        return parent.test is node
    if isinstance(parent, ast.UnaryOp):
        return isinstance(parent.op, ast.Not)
    return isinstance(parent, (ast.Compare, ast.FormattedValue, ast.Return, ast.Expr))
