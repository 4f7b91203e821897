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

from shapelint.analysis.callable_values import ClassRefV
from shapelint.analysis.dict_values import dict_value
from shapelint.analysis.nodes import children, descendants, nodes_of
from shapelint.ops.values import Value


def locals_of(an, node: ast.Call, frame) -> Value | None:
    func = frame.func
    if node.args or node.keywords or func is None or not _defined_at_top(an, func):
        return None
    fn = func.node
    chain = enclosing(fn, node)
    if chain is None or _in_inner_scope(chain):
        return None
    a = fn.args
    params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    params += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    if _bound_before(fn, set(params), node, chain):
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


def _bound_before(fn, params: set[str], call: ast.Call, chain: list[ast.AST]) -> bool:
    """Whether a local other than a parameter may be bound when call runs: a
    binding of one at an earlier line, or the call in a loop, or a name declared
    global or nonlocal (the scan reads no scopes). chain: fn's nodes down to call."""
    at = (call.lineno, call.col_offset)
    later = _targets_of_statement(chain)  # `x = f(locals())` binds x after the call
    holders = {id(n) for n in chain}
    # fn's kept index, not a walk per call of locals() (the leaves it leaves out,
    # `Load` and `Add`, bind nothing)
    for n in descendants(fn):
        if id(n) in later:
            continue
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While, ast.Global, ast.Nonlocal)):
            if isinstance(n, (ast.Global, ast.Nonlocal)) or id(n) in holders:
                return True
        name = _bound_name(n)
        if name is not None and name not in params and (n.lineno, n.col_offset) < at:
            return True
    return False


_INNER_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _in_inner_scope(chain: list[ast.AST]) -> bool:
    """Whether the call at chain's end sits in a lambda or a comprehension of the
    function at its start, whose locals() are its own (and, inlined since Python
    3.12, its variables beside fn's)."""
    return any(isinstance(n, _INNER_SCOPES) for n in chain)


def _targets_of_statement(chain: list[ast.AST]) -> set[int]:
    """The ids of the nodes of the assignment targets of the innermost statement
    holding the call at chain's end (bound once the call has run)."""
    holder = None
    for n in chain[1:]:  # (not the function itself)
        if isinstance(n, ast.stmt):
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


def enclosing(outer: ast.AST, node: ast.AST) -> list[ast.AST] | None:
    """The nodes from outer down to node, both included (node's enclosing nodes in
    outer, outermost first), or None where node is not in outer. One walk, where a
    test of each enclosing node by a walk of its own was quadratic in fn's size."""
    parent: dict[int, ast.AST] = {}
    stack = [outer]
    while stack:
        n = stack.pop()
        if n is node:
            chain = [n]
            while n is not outer:
                n = parent[id(n)]
                chain.append(n)
            return chain[::-1]
        for child in children(n):
            parent[id(child)] = n
            stack.append(child)
    return None


def _uses_class_cell(fn) -> bool:
    """Whether the compiler gives fn the `__class__` cell: it names super or
    __class__ (in fn or a function nested in it)."""
    return any(n.id in ("super", "__class__") for n in nodes_of(fn, ast.Name))
