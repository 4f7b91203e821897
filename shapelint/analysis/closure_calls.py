"""Whether a nested def runs only where the run sees it run: every reference to its
name in the function that defines it is a direct call made by that function's own
code, so each run of its body is one of those calls, which the interpreter follows
with that call's values (lambdas.invoke). Then the pass over its body where it is
defined (function_runs._analyze_nested, arguments and enclosing `self` not known)
stands for no run of its own: a store it cannot place there (`setattr(self,
f"_{name}", p)`) is placed by each call instead, and is no change the analysis lost.

Syntactic, as Python's scoping is: the def is a plain `def` (no decorator, not
async, no yield), its name is bound once in the enclosing function and read nowhere
but as `name(...)` outside any nested def, lambda, class or comprehension (which
may run later, or hand it on), never inside its own body (recursion, which the
interpreter does not follow), and the enclosing function reads no frame as a whole
(`locals()`, `vars()`, `eval`, `exec`)."""

from __future__ import annotations

import ast
import weakref

_ESCAPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.GeneratorExp,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
)
_FRAME_READERS = frozenset({"locals", "vars", "eval", "exec", "globals"})

# def -> (the function holding it, the answer), both sides weak: an entry keeps
# no tree alive in a long-lived worker (a table by id kept every def asked about,
# and its function's tree, for the life of the process) and dies with its def;
# kept on the def itself, it held the function on its own nested def, a
# reference cycle.
_MEMO: weakref.WeakKeyDictionary[ast.AST, tuple[weakref.ref, bool]] = weakref.WeakKeyDictionary()


def only_called_in_place(stmt: ast.AST, outer: ast.AST | None) -> bool:
    """Whether the nested def stmt, defined in function outer, runs only at the
    direct calls outer's own code makes of it."""
    if not isinstance(stmt, ast.FunctionDef) or not isinstance(
        outer, (ast.FunctionDef, ast.AsyncFunctionDef)
    ):
        return False
    memo = _MEMO.get(stmt)
    if memo is not None and memo[0]() is outer:
        return memo[1]
    answer = _decide(stmt, outer)
    _MEMO[stmt] = (weakref.ref(outer), answer)
    return answer


def _decide(stmt: ast.FunctionDef, outer: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    name = stmt.name
    if stmt.decorator_list:
        return False
    for n in ast.walk(stmt):
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if n is not stmt and isinstance(n, ast.Name) and n.id == name:
            return False  # recursion, or a name the body rebinds
        if n is not stmt and isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name:
            return False
    found = [False]
    ok = _own_code(outer.body, stmt, name, found)
    return ok and found[0]


def _own_code(body: list[ast.stmt], stmt: ast.FunctionDef, name: str, found: list) -> bool:
    """Walk outer's own code (not into nested scopes, which may run later): stmt
    is one of its statements, and name is read there only as a call's callee."""
    calls: set[int] = set()
    todo: list[ast.AST] = list(body)
    while todo:
        n = todo.pop()
        if n is stmt:
            found[0] = True
            todo.extend(stmt.args.defaults)
            todo.extend(d for d in stmt.args.kw_defaults if d is not None)
            continue
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return False
        if isinstance(n, ast.Name):
            if n.id in _FRAME_READERS:
                return False
            if n.id == name and (not isinstance(n.ctx, ast.Load) or id(n) not in calls):
                return False  # rebound, deleted, or handed on as a value
            continue
        if isinstance(n, _ESCAPES):
            if _mentions(n, name):
                return False
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if n.name == name:
                    return False
            continue
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name:
            calls.add(id(n.func))
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.partition(".")[0]) == name for a in n.names):
                return False
        todo.extend(ast.iter_child_nodes(n))
    return True


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id in (name, *_FRAME_READERS) for n in ast.walk(node))
