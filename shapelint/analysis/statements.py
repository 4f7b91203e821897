"""Finding a node's parent without mapping the whole module: descend by position
to the innermost statement that holds it, then look only inside that statement."""

from __future__ import annotations

import ast

from shapelint.analysis.nodes import nodes_of

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


def own_parents(stmt: ast.AST) -> dict[ast.AST, ast.AST]:
    """child -> parent for the nodes of a statement, not descending into the
    statements it holds (they map to it). One pass over the fields: walking the
    nodes and asking each for its children visits every field twice."""
    out: dict[ast.AST, ast.AST] = {}
    stack = [stmt]
    node_type, stmt_type = ast.AST, ast.stmt
    while stack:
        n = stack.pop()
        for f in n._fields:
            v = getattr(n, f, None)
            enter = n is not stmt or f not in _BODIES
            if isinstance(v, list):
                for c in v:
                    if isinstance(c, node_type):
                        out[c] = n
                        if enter and not isinstance(c, stmt_type):
                            stack.append(c)
            elif isinstance(v, node_type):
                out[v] = n
                if enter and not isinstance(v, stmt_type):
                    stack.append(v)
    return out


def declared_names(tree: ast.AST, kind: type[ast.Global] | type[ast.Nonlocal]) -> set[str]:
    """The names `global` (or `nonlocal`) declares anywhere in tree."""
    return {name for n in nodes_of(tree, kind) for name in n.names}


def guarded_top_level(tree: ast.Module):
    """The statements of a module that run under a module-level `if` or `try`
    (`if is_torch_version(...): ... else: class LayerNorm(...)`), at any depth of
    those blocks, not inside a def or class."""
    stack = [s for s in reversed(tree.body) if isinstance(s, (ast.If, ast.Try))]
    while stack:
        stmt = stack.pop()
        blocks = [stmt.body, stmt.orelse]
        if isinstance(stmt, ast.Try):
            blocks += [h.body for h in stmt.handlers] + [stmt.finalbody]
        for block in blocks:
            for sub in block:
                yield sub
                if isinstance(sub, (ast.If, ast.Try)):
                    stack.append(sub)
