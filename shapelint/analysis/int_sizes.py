"""`hidden = int(dim * rate)` with a float rate: one integer of unknown value.

Python's `int()` returns one integer, and the name holds it until it is bound
again: `Linear(dim, hidden)` then `Linear(2 * hidden, dim)` is a conflict
whatever the rate is (max_vit's SqueezeExcitation). The value stays no formula
of the constructor's sizes (a rate of 1 makes it `dim`, 0.25 a quarter), so in
check it is a size of its own (`hidden'`), related to no other: against `dim` it
is SHP318's constraint, against `2·hidden'` an error. Only where the statement
runs once per run of the function: a loop's turns may bind the name to other
integers, which one size would make equal. As branches.sizes_after's: a target's
figures never rest on it (the value stays an int of unknown value there).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import branches
from shapelint.ops.values import IntV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, Frame

_KEY = "_shapelint_looped_assigns"
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def named(an: Analyzer, stmt: ast.Assign, value: Value, frame: Frame) -> Value:
    """value, or the size of its own `int(...)` gives the name stmt binds."""
    if an.specialize or not (isinstance(value, IntV) and value.value is None):
        return value
    if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        return value
    call = stmt.value
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "int"
        and len(call.args) == 1
        and not call.keywords
        and an.is_builtin("int", frame)
    ):
        return value
    fn = frame.func.node if frame.func is not None else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or id(stmt) in _looped(fn):
        return value
    return IntV(branches.own_size(an, stmt.targets[0].id, stmt.lineno))


def _looped(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[int]:
    """The ids of fn's assignments inside one of its loops (not a nested scope's)."""
    known = fn.__dict__.get(_KEY)
    if known is None:
        found: set[int] = set()
        for loop in _own(fn):
            if isinstance(loop, _LOOPS):
                found |= {id(n) for n in _own(loop) if isinstance(n, ast.Assign)}
        known = frozenset(found)
        setattr(fn, _KEY, known)
    return known


def _own(node: ast.AST):
    """node's descendants outside nested functions, lambdas and classes."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        if isinstance(n, _SCOPES):
            continue
        yield n
        todo.extend(ast.iter_child_nodes(n))
