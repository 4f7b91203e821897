"""Reads of a name that may hold one of several objects (joined_objects.EitherV:
`c = a if t else b` with two unequal dicts, lists or instances): the value read
is not known, and where the read may change one of the objects, or lead to one
that something may change later, every holder of each is forgotten
(in_place.forget_reached), since Python changed one of them and which is not
known.

What may not change them: a test of the name (`if c`, `k in c`, `c == d`), an
operand of arithmetic, a call of a builtin that keeps nothing (`len(c)`), an
item or attribute read into one of those (`c["n"] + 1`), a method of a list,
dict or set that changes nothing followed the same way. Bound to another name
(`d = c`) or joined again (`c if s else e`), the name passes the objects on.
Anything else is a change: an item or attribute stored or deleted, a method
called, an augmented assignment, the name handed to a call, stored in an
object, returned, iterated."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import in_place, joined_objects, module_state
from shapelint.analysis.callable_values import ChoiceV
from shapelint.analysis.joined_objects import EitherV
from shapelint.analysis.small_sets import SetV
from shapelint.ops.values import DICT_KIND, UNKNOWN, ObjectV, TupleV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer
    from shapelint.analysis.run_state import Frame

# The statements being run, innermost last: what an expression read belongs to.
_RUNNING: list[ast.stmt] = []
# The parent map of each running statement an EitherV was read in, made on first
# need and dropped when the statement has run: kept on the statement
# (nodes.parents) it made each such statement a reference cycle, which a batch
# analysis, its collector off, keeps with the file's tree until a collection.
_UP: dict[int, dict[int, ast.AST]] = {}

# Builtins that return no object their arguments hold and change none of them.
_KEEP_NOTHING = frozenset(
    {
        "len",
        "isinstance",
        "issubclass",
        "hasattr",
        "id",
        "hash",
        "str",
        "repr",
        "bool",
        "int",
        "float",
        "print",
        "callable",
        "format",
        "any",
        "all",
    }
)

# Methods of list, dict and set that change nothing (what they return is followed).
_READERS = frozenset(
    {"get", "keys", "values", "items", "copy", "index", "count", "__len__", "__contains__"}
)


_JOINED = (EitherV, ChoiceV)
_STORES = frozenset(
    {ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.Delete}
    | {ast.With, ast.AsyncWith}
)


def running(stmt: ast.stmt) -> None:
    _RUNNING.append(stmt)


def ran() -> None:
    stmt = _RUNNING.pop()
    if stmt not in _RUNNING:  # (a function calling itself runs a statement twice)
        _UP.pop(id(stmt), None)


def _parents() -> dict[int, ast.AST]:
    """Each node's parent in the innermost running statement, by the node's id."""
    if not _RUNNING:
        return {}
    stmt = _RUNNING[-1]
    up = _UP.get(id(stmt))
    if up is None:
        up = _UP[id(stmt)] = {id(c): n for n in ast.walk(stmt) for c in ast.iter_child_nodes(n)}
    return up


def before(an: Analyzer, stmt: ast.stmt, frame: Frame) -> None:
    """A statement that stores or deletes an item or attribute under a name that
    holds an EitherV (`c["k"] = v`, `del c.x`, `c.n += 1`), or extends it in place
    (`c += [x]`): the objects' holders are forgotten before it runs. The stores
    read the name in ways of their own, so they are caught here, not as reads."""
    if type(stmt) not in _STORES or not any(type(v) in _JOINED for v in frame.env.values()):
        return
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, ast.Delete):
        targets = stmt.targets
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    else:
        return
    for target in targets:
        if isinstance(stmt, ast.AugAssign) and isinstance(target, ast.Name):
            held = frame.env.get(target.id)
            if type(held) is EitherV:
                _spend(an, held)
            continue
        for node in ast.walk(target):
            if isinstance(node, (ast.Subscript, ast.Attribute)):
                inner, root = node, node.value
                while isinstance(root, (ast.Subscript, ast.Attribute)):
                    inner, root = root, root.value
                if isinstance(root, ast.Name):
                    held = frame.env.get(root.id)
                    if type(held) is EitherV and isinstance(inner, ast.Attribute):
                        # an attribute of a list, dict or set is never stored nor
                        # read past its methods (AttributeError): the instances alone
                        for v in joined_objects.spent(held, lambda v: not _container(v)):
                            in_place.forget_reached(an, v)
                    elif type(held) is EitherV:
                        _spend(an, held)
                    elif type(held) is ChoiceV:
                        # one of several instances a call of the name would run:
                        # the store changes one of them
                        for v in held.items:
                            if module_state.changeable(an, v):
                                in_place.forget_reached(an, v)


def used(an: Analyzer, node: ast.expr, value: EitherV, frame: Frame) -> Value:
    """What a read of node, which gave value, gives the expression around it."""
    up = _parents()
    par = up.get(id(node))
    if _passes_on(node, par):
        return value
    if not _keeps_nothing(an, node, up, frame, value.items):
        _spend(an, value)
    return UNKNOWN


def chosen(an: Analyzer, node: ast.expr, value: ChoiceV, frame: Frame) -> ChoiceV:
    """A read of a choice of instances (`c = a if t else b` of two objects of
    plain classes: choices.join): calls and reads run on each, as ever; a use
    that may change one (`c.bump()`, `f(c)`) forgets every holder of each."""
    changeable = [v for v in value.items if module_state.changeable(an, v)]
    if not changeable:
        return value
    up = _parents()
    if _passes_on(node, up.get(id(node))):
        return value
    if not _keeps_nothing(an, node, up, frame, changeable):
        for v in changeable:
            in_place.forget_reached(an, v)
    return value


def _passes_on(node: ast.expr, par: ast.AST | None) -> bool:
    """node's value goes on whole: bound to names, or joined by a ternary."""
    if isinstance(par, ast.Assign):
        return node is par.value and all(isinstance(t, ast.Name) for t in par.targets)
    if isinstance(par, ast.AnnAssign):
        return node is par.value and isinstance(par.target, ast.Name)
    return isinstance(par, ast.IfExp) and node is not par.test


def _keeps_nothing(an: Analyzer, node: ast.expr, up: dict, frame: Frame, items: list) -> bool:
    """What node gives (one of items), and what is read from it on the way up,
    neither changes nor is kept."""
    cur: ast.AST = node
    containers = all(_container(v) for v in items)
    inner = None
    while True:
        if cur is not node:
            # an item or attribute read of objects that hold only values (numbers,
            # strings, tensors) leads to no object: whatever takes it changes none
            if inner is None:
                inner = any(joined_objects.holds_object(v) for v in items)
            if not inner:
                return True
        par = up.get(id(cur))
        if par is None:
            return False
        if isinstance(par, (ast.Compare, ast.BinOp, ast.UnaryOp, ast.FormattedValue, ast.Expr)):
            return True
        if isinstance(par, (ast.If, ast.While, ast.Assert)):
            return cur is par.test
        if isinstance(par, ast.IfExp):
            if cur is par.test:
                return True
        elif isinstance(par, ast.Subscript):
            if cur is par.slice:
                return True
            if not isinstance(par.ctx, ast.Load):
                return False
        elif isinstance(par, ast.Attribute):
            if not isinstance(par.ctx, ast.Load):
                return False
            call = up.get(id(par))
            if isinstance(call, ast.Call) and call.func is par:
                # a method: one of a container's that changes nothing, on the name itself
                if not (containers and cur is node and par.attr in _READERS):
                    return False
                par = call
        elif isinstance(par, ast.Call):
            if cur is par.func:
                # a list, dict or set called raises TypeError, changing none of them
                return containers and cur is node
            return _builtin_keeping_nothing(an, par.func, frame)
        else:
            return False
        cur = par


def _builtin_keeping_nothing(an: Analyzer, func: ast.expr, frame: Frame) -> bool:
    if not (isinstance(func, ast.Name) and func.id in _KEEP_NOTHING):
        return False
    name = func.id
    return not (
        name in frame.env or name in an.module_env or name in an.functions or name in an.classes
    )


def _container(v: Value) -> bool:
    return isinstance(v, (TupleV, SetV)) or (type(v) is ObjectV and v.kind == DICT_KIND)


def _spend(an: Analyzer, e: EitherV) -> None:
    for v in joined_objects.spent(e):
        in_place.forget_reached(an, v)
