"""`locals()` in a function: a new dict of the names bound in its frame, as
CPython builds it (parameters in their order, then the function's other locals,
then `__class__` where a method uses `super()` or `__class__`). Modelled where
every name of that dict is known: in a method or a module-level function (a
nested function's free names are not followed), at a point no statement before
has bound a local of its own (so the parameters alone, with their values now),
outside a loop (a later statement may have run) and outside a lambda or a
comprehension. Anything else is not known."""

from __future__ import annotations

import ast

from shapelint.analysis.modules import ClassRefV, dict_value
from shapelint.ops.values import Value


def locals_of(an, node: ast.Call, frame) -> Value | None:
    func = frame.func
    if node.args or node.keywords or func is None or not _defined_at_top(an, func):
        return None
    fn = func.node
    if not _inside(node, fn) or _in_inner_scope(fn, node):
        return None
    a = fn.args
    params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    params += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    if _bound_before(fn, set(params), node):
        return None
    if any(p not in frame.env for p in params):
        return None  # a parameter deleted, or its value not held
    entries = {p: frame.env[p] for p in params}
    if func.cls is not None and _uses_class_cell(fn):
        entries["__class__"] = ClassRefV(func.cls.key)
    return dict_value(entries)


def _defined_at_top(an, func) -> bool:
    """A method of a class or a function of the module (no enclosing function)."""
    name = func.node.name
    if func.cls is not None:
        method = func.cls.methods.get(name)
        return method is not None and method.node is func.node
    top = (func.owner or an).functions.get(name)
    return top is not None and top.node is func.node


def _bound_before(fn, params: set[str], call: ast.Call) -> bool:
    """Whether a local other than a parameter may be bound when call runs: a
    binding of one at an earlier line, or the call in a loop, or a name declared
    global or nonlocal (the scan reads no scopes)."""
    at = (call.lineno, call.col_offset)
    later = _targets_of_statement(fn, call)  # `x = f(locals())` binds x after the call
    for n in ast.walk(fn):
        if n is fn or id(n) in later:
            continue
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While, ast.Global, ast.Nonlocal)):
            if isinstance(n, (ast.Global, ast.Nonlocal)) or _inside(call, n):
                return True
        name = _bound_name(n)
        if name is not None and name not in params and (n.lineno, n.col_offset) < at:
            return True
    return False


_INNER_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _in_inner_scope(fn, call: ast.Call) -> bool:
    """Whether call sits in a lambda or a comprehension of fn, whose locals() are
    its own (and, inlined since Python 3.12, its variables beside fn's)."""
    return any(isinstance(n, _INNER_SCOPES) and _inside(call, n) for n in ast.walk(fn))


def _targets_of_statement(fn, call: ast.Call) -> set[int]:
    """The ids of the nodes of the assignment targets of the innermost statement
    holding call (bound once the call has run)."""
    holder = None
    for n in ast.walk(fn):
        if isinstance(n, ast.stmt) and n is not fn and _inside(call, n):
            if holder is None or _inside(n, holder):
                holder = n
    if isinstance(holder, ast.Assign):
        targets = holder.targets
    elif isinstance(holder, ast.AnnAssign):
        targets = [holder.target]
    else:
        return set()
    return {id(n) for t in targets for n in ast.walk(t)}


def _bound_name(n: ast.AST) -> str | None:
    if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
        return n.id
    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return n.name
    if isinstance(n, (ast.Import, ast.ImportFrom)):
        return "<import>"
    if isinstance(n, ast.ExceptHandler) and n.name:
        return n.name
    if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
        return n.name
    return None


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return any(n is node for n in ast.walk(outer))


def _uses_class_cell(fn) -> bool:
    """Whether the compiler gives fn the `__class__` cell: it names super or
    __class__ (in fn or a function nested in it)."""
    return any(isinstance(n, ast.Name) and n.id in ("super", "__class__") for n in ast.walk(fn))
