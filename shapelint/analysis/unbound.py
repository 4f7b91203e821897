"""A local name read before anything can have bound it (SHP319): Python makes a
name local to a function wherever the function binds it, so a read of it that
surely runs before every binding raises UnboundLocalError.

Only what is certain is said: the read is in a top-level statement of the body
(or the header of a top-level `if`, `for` or `while`), outside any branch of the
expression it is in (a lambda, a comprehension's later parts, a conditional
expression's arms, the later operands of `and` / `or`), and no earlier top-level
statement binds the name anywhere, in any branch (`del` counts as a binding)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from shapelint.analysis.nodes import children, nodes_of, stored_names

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class UnboundRead:
    name: str
    bound_at: int  # the line of the first binding, later in the function


def unbound_read(fn: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.Name) -> UnboundRead | None:
    """The UnboundLocalError that reading node in fn's body surely raises, if any.
    Most reads that reach this are of globals and builtins (`torch`, `len`), which
    fn binds nowhere: they are answered from the names bound anywhere in fn (its
    nested scopes too, a superset of its locals), without the ordered search."""
    if node.id not in bound_anywhere(fn):
        return None
    return unbound_reads(fn).get(id(node))


def bound_anywhere(fn: ast.AST) -> frozenset[str]:
    """Every name a binding anywhere under fn binds (nested scopes included)."""
    known = fn.__dict__.get(_ANYWHERE)
    if known is None:
        names = set(stored_names(fn))
        for node in (n for kind in _NAMING for n in nodes_of(fn, kind)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name.split(".")[0]) for a in node.names)
            elif isinstance(node, ast.MatchMapping):
                names.add(node.rest)  # type: ignore[arg-type]
            elif node is not fn:  # (its own name is bound outside it)
                names.add(node.name)  # type: ignore[attr-defined]
        names.discard(None)  # type: ignore[arg-type]
        known = frozenset(names)
        setattr(fn, _ANYWHERE, known)
    return known


_ANYWHERE = "_shapelint_bound_anywhere"
_NAMING = (
    ast.Import,
    ast.ImportFrom,
    ast.ExceptHandler,
    ast.MatchAs,
    ast.MatchStar,
    ast.MatchMapping,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


def unbound_reads(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[int, UnboundRead]:
    """id() of each Name node in fn's body that surely raises UnboundLocalError."""
    known = getattr(fn, "_shapelint_unbound", None)
    if known is None:
        known = _find(fn)
        fn._shapelint_unbound = known  # type: ignore[union-attr]
    return known


def _find(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[int, UnboundRead]:
    declared: set[str] = set()  # global / nonlocal: not the function's locals
    first: dict[str, int] = {}
    binds = [list(_bindings(stmt, declared)) for stmt in fn.body]  # walked once
    for found_here in binds:
        for name, line in found_here:
            first.setdefault(name, line)
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    params |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
    local = set(first) - declared - params
    if not local:
        return {}
    found: dict[int, UnboundRead] = {}
    bound: set[str] = set()
    for stmt, found_here in zip(fn.body, binds):
        own = {name for name, _ in found_here}
        for expr in _surely_evaluated(stmt):
            for node in _surely_read(expr):
                # A walrus in the statement may bind the name on the way, which
                # this does not order: not said.
                if node.id in local and node.id not in bound and not _walrus_binds(stmt, node.id):
                    found[id(node)] = UnboundRead(node.id, first[node.id])
        bound |= own
    return found


def _bindings(stmt: ast.stmt, declared: set[str]):
    """(name, line) of every name stmt binds in the function's own scope."""
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield node.id, node.lineno
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                yield (alias.asname or alias.name.split(".")[0]), node.lineno
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name, node.lineno
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            yield node.name, node.lineno
        elif isinstance(node, ast.MatchMapping) and node.rest:
            yield node.rest, node.lineno
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            yield node.target.id, node.lineno  # binds here even inside a comprehension
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name, node.lineno
            # decorators, defaults and bases run in this scope; the body does not
            todo.extend(node.decorator_list)
            if isinstance(node, ast.ClassDef):
                todo.extend([*node.bases, *node.keywords])
            else:
                todo.extend([*node.args.defaults, *(d for d in node.args.kw_defaults if d)])
            continue
        if isinstance(node, ast.Lambda):
            todo.extend([*node.args.defaults, *(d for d in node.args.kw_defaults if d)])
            todo.extend(n for n in ast.walk(node.body) if isinstance(n, ast.NamedExpr))
            continue
        if isinstance(node, _COMPREHENSIONS):
            # its own scope: only its walruses bind here
            todo.extend(n for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
            todo.append(node.generators[0].iter)
            continue
        todo.extend(children(node))


def _surely_evaluated(stmt: ast.stmt) -> list[ast.expr]:
    """The expressions of a top-level statement that run whenever it does."""
    if isinstance(stmt, ast.Assign):
        return [stmt.value, *stmt.targets]
    if isinstance(stmt, ast.AugAssign):
        return [stmt.value]
    if isinstance(stmt, ast.AnnAssign):
        return [stmt.value, stmt.target] if stmt.value is not None else []
    if isinstance(stmt, (ast.Expr, ast.Return)) and stmt.value is not None:
        return [stmt.value]
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    return []


def _surely_read(expr: ast.expr):
    """The Name loads of expr that run whenever expr does."""
    todo: list[ast.AST] = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                yield node
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, _COMPREHENSIONS):
            todo.append(node.generators[0].iter)
            continue
        if isinstance(node, ast.IfExp):
            todo.append(node.test)
            continue
        if isinstance(node, ast.BoolOp):
            todo.append(node.values[0])
            continue
        todo.extend(children(node))


def _walrus_binds(stmt: ast.stmt, name: str) -> bool:
    return any(
        isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name) and n.target.id == name
        for n in ast.walk(stmt)
    )
