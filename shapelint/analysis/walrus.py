"""A walrus in a comprehension binds the name of the scope around it.

`[k := k + i for i in xs]` binds k in the function that holds the comprehension
(PEP 572), not in the comprehension's own scope, where the analysis runs its
turns (`an.scope`). Each walrus of a comprehension being evaluated binds the name
in the scopes around it too: its value where the turns ran one by one, over
listed items (a list, set or dict comprehension: a generator expression may be
left part way, `any(...)`), and not known where one turn stood for all of them,
or where the turns a filter keeps are not known (`inexact`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from shapelint.ops.values import UNKNOWN, Value


@dataclass
class Scope:
    outer: object  # the frame around the comprehension
    ids: frozenset[int]  # the walrus nodes in it (not in a lambda)
    exact: bool  # its turns ran one by one over listed items
    assigned: set[str] = field(default_factory=set)


_OPEN: ContextVar[tuple[Scope, ...]] = ContextVar("walrus_scopes", default=())


@contextmanager
def comprehension(node: ast.expr, outer, ids: frozenset[int]) -> Iterator[Scope]:
    """node, a comprehension with the walrus nodes ids, evaluated in frame outer."""
    scope = Scope(outer, ids, exact=not isinstance(node, ast.GeneratorExp))
    token = _OPEN.set((*_OPEN.get(), scope))
    try:
        yield scope
    finally:
        _OPEN.reset(token)


def inexact() -> None:
    """The comprehension being evaluated ran one turn for all, or turns not known."""
    scopes = _OPEN.get()
    if scopes:
        scopes[-1].exact = False


def bind(an, node: ast.NamedExpr, value: Value) -> None:
    """The walrus node, evaluated to value in a comprehension's scope: the name in
    each scope around it that holds the comprehension (innermost first)."""
    exact = True
    for scope in reversed(_OPEN.get()):
        if id(node) not in scope.ids:
            return
        exact = exact and scope.exact
        an.assign(node.target, value if exact else UNKNOWN, scope.outer, None)
        if isinstance(node.target, ast.Name):
            scope.assigned.add(node.target.id)
