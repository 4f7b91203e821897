"""Whether a class statement run inside a function can be followed as a class of
its own (interpreter.local_class): each run makes a new class, whose methods see
the function's names as free variables, as Python's scoping gives them.

What the analysis evaluates in the class's own scope (its bases, its body's
statements other than defs, its methods' decorators and defaults) it evaluates in
the module's namespace, where a name of the function would be the module's
(another value) or unbound: such a class is not followed, nor one with decorators,
a metaclass or other keywords, a class nested in its body, or a `nonlocal` store
into the function's names (which a method's run does not hand back)."""

from __future__ import annotations

import ast

from shapelint.analysis.defs import named_params
from shapelint.analysis.nodes import nodes_of, stored_names

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def followed(stmt: ast.ClassDef, enclosing: ast.AST | None, seen: set[str]) -> bool:
    """enclosing: the function whose run executes the statement; seen: the names
    its frame holds (those of functions around it included)."""
    if stmt.decorator_list or stmt.keywords or nodes_of(stmt, ast.Nonlocal):
        return False
    if any(isinstance(sub, ast.ClassDef) for sub in stmt.body):
        return False
    local = set(seen)
    if isinstance(enclosing, (*_DEFS, ast.Lambda)):
        a = enclosing.args
        local |= {p.arg for p in (*named_params(enclosing), a.vararg, a.kwarg) if p is not None}
        local |= stored_names(enclosing)
    return not (_class_scope_names(stmt) & local)


def _class_scope_names(stmt: ast.ClassDef) -> set[str]:
    """The names read where the class scope evaluates them."""
    roots: list[ast.AST] = [*stmt.bases]
    for sub in stmt.body:
        if isinstance(sub, _DEFS):
            roots += [*sub.decorator_list, *sub.args.defaults]
            roots += [d for d in sub.args.kw_defaults if d is not None]
        else:
            roots.append(sub)
    return {n.id for r in roots for n in nodes_of(r, ast.Name)}


def closed_over(node: ast.AST, frame) -> tuple:
    """What the names node reads hold now in the defining run's frame (None: no
    such frame), for the keys of memoised runs: a method reads its free variables
    when it runs (Python's cells: late binding), so two runs of one class whose
    function's names changed between them are two runs."""
    if frame is None:
        return ()
    env = frame.env
    names = sorted({n.id for n in nodes_of(node, ast.Name)} & env.keys())
    return tuple((name, env[name]) for name in names)
