"""Finding a node's parent without mapping the whole module: descend by position
to the innermost statement that holds it, then look only inside that statement."""

from __future__ import annotations

import ast

_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _span(n: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    return (n.lineno, n.col_offset), (n.end_lineno or n.lineno, n.end_col_offset or 0)  # type: ignore[attr-defined]


def innermost_statement(body: list, node: ast.AST):
    """The deepest statement that holds node, found by position."""
    line = node.lineno  # type: ignore[attr-defined]
    pos = (line, node.col_offset)  # type: ignore[attr-defined]
    found = None
    stmts = body
    while True:
        inner = None
        for st in stmts:
            # The line test alone rules out almost every statement, without a tuple.
            if st.lineno > line or (st.end_lineno or st.lineno) < line:
                continue
            start, end = _span(st)
            if start <= pos < end:
                inner = st
                break
        if inner is None:
            return found
        found = inner
        stmts = _child_statements(inner)


def _child_statements(st: ast.AST) -> list:
    out: list = []
    for f in _BODIES:
        for c in getattr(st, f, None) or []:
            # except handlers and match cases are not statements but hold some
            out.extend([c] if isinstance(c, ast.stmt) else getattr(c, "body", []))
    return out


def nested_statements(body: list):
    """Every statement of body and of the statements it holds, nested functions
    and classes included: where a break, return or any statement can be, found
    without the walk of every expression that ast.walk would make."""
    stack = list(body)
    while stack:
        st = stack.pop()
        yield st
        stack.extend(_child_statements(st))


def walk_own(stmt: ast.AST):
    """The nodes of a statement, not descending into the statements it holds."""
    stack = [stmt]
    while stack:
        n = stack.pop()
        yield n
        for f, v in ast.iter_fields(n):
            if n is stmt and f in _BODIES:
                continue
            if isinstance(v, list):
                stack.extend(c for c in v if isinstance(c, ast.AST) and not isinstance(c, ast.stmt))
            elif isinstance(v, ast.AST) and not isinstance(v, ast.stmt):
                stack.append(v)
