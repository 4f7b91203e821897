"""Lists, dicts and objects a called function changes in place.

The analysis holds values, not a heap: `lst.append(4)`, `cfg.table[k] = v` or
`self.mult = m` inside a function rebind a name of the callee's frame, and the
caller's list, dict or object is left as it was. In Python the caller sees the
change (the callee was handed the same object, or reached it as a global), so a
caller that read it afterwards read a stale value, and a figure built on it
(`nn.Linear(d, d * cfg.mult)` after `cfg.set_mult(4)`) was complete and wrong.

After a specialized call, each name of the caller that handed the callee a
container or a plain object the callee may change in place, and each global of
the callee's module it may change, is no longer known (`forget`). What "may
change" means is read off the source (`changed_names`): an item or attribute
stored or deleted under the name, or a mutating method called on it (at any
depth of attributes and items below it: `self.table[k] = v` changes `self`), in
the body or a function nested in it; for `self`, also a method of the class
called on it that changes its own `self`. Modules being built are not concerned:
their state lives on recorders, shared by every frame (analysis/aliasing.py).
"""

from __future__ import annotations

import ast

from shapelint.analysis import module_state
from shapelint.analysis.attributes import find_method
from shapelint.analysis.nodes import nodes_of, stored_names
from shapelint.ops.values import UNKNOWN, Value

# Methods of list, dict, set, deque and bytearray that change their object.
MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "remove",
        "pop",
        "popitem",
        "clear",
        "sort",
        "reverse",
        "update",
        "setdefault",
        "add",
        "discard",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",
        "appendleft",
        "extendleft",
        "rotate",
        "__setitem__",
        "__delitem__",
        "__setattr__",
        "__delattr__",
    }
)

_CHANGED = "_shapelint_changed"


def _root(node: ast.expr) -> str | None:
    """The name under an attribute / item chain (`self.table[k]` -> self)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _direct(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[frozenset[str], tuple[str, ...]]:
    """The names fn's source changes in place, and the methods it calls on `self`."""
    changed: set[str] = set()
    targets: list[ast.expr] = []
    for n in nodes_of(fn, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        if isinstance(n, ast.Assign):
            targets.extend(n.targets)
        elif isinstance(n, ast.Delete):
            targets.extend(n.targets)
        else:
            targets.append(n.target)
    while targets:
        t = targets.pop()
        if isinstance(t, (ast.Tuple, ast.List)):
            targets.extend(t.elts)
        elif isinstance(t, ast.Starred):
            targets.append(t.value)
        elif isinstance(t, (ast.Attribute, ast.Subscript)):
            root = _root(t)
            if root is not None:
                changed.add(root)
    on_self: list[str] = []
    for call in nodes_of(fn, ast.Call):
        func = call.func
        if not isinstance(func, ast.Attribute):
            continue
        root = _root(func.value)
        if root is None:
            continue
        if func.attr in MUTATORS:
            changed.add(root)
        elif root == "self" and isinstance(func.value, ast.Name):
            on_self.append(func.attr)
    return frozenset(changed), tuple(on_self)


def changed_names(an, fd, _seen: frozenset = frozenset()) -> frozenset[str]:
    """The names fd's run may change in place: its parameters' objects and the
    globals it reaches (a `self.m(...)` of the class counts m's changes to self)."""
    node = fd.node
    cached = getattr(node, _CHANGED, None)
    if cached is not None:
        return cached
    changed, on_self = _direct(node)
    if "self" not in changed and on_self and fd.cls is not None and id(node) not in _seen:
        seen = _seen | {id(node)}
        for name in on_self:
            method = find_method(fd.owner or an, fd.cls, name)
            if method is not None and "self" in changed_names(an, method, seen):
                changed = changed | {"self"}
                break
    if not _seen:  # a result reached inside a cycle may miss what the cycle adds
        setattr(node, _CHANGED, changed)
    return changed


def forget(
    an, fd, node: ast.Call, recv: Value | None, args, kwargs, frame, placed=frozenset()
) -> None:
    """After fd ran for the call `node`: what it may have changed in place is not
    known to the caller any more, but for the module-level names its run bound
    anew (`placed`, keys of module_state.since)."""
    changed = changed_names(an, fd)
    if not changed:
        return
    params = [a.arg for a in (*fd.node.args.posonlyargs, *fd.node.args.args)]
    given: dict[str, ast.expr] = {}
    positional = list(node.args)
    if recv is not None and params and isinstance(node.func, ast.Attribute):
        given[params[0]] = node.func.value
        params = params[1:]
    if not any(isinstance(a, ast.Starred) for a in positional):
        given.update(zip(params, positional))
    given.update({k.arg: k.value for k in node.keywords if k.arg is not None})
    bound = _local_names(fd.node)
    for name in changed:
        expr = given.get(name)
        if isinstance(expr, ast.Name):
            _forget_name(an, expr.id, frame)
        elif name not in bound:
            _forget_global(fd.owner or an, name, placed)


def forget_globals(an, fd, placed=frozenset()) -> None:
    """After fd ran where no call names it (a constructor): the module-level
    objects its body may have changed in place, but for those its run bound anew."""
    bound = _local_names(fd.node)
    for name in changed_names(an, fd):
        if name not in bound:
            _forget_global(fd.owner or an, name, placed)


def _forget_global(owner, name: str, placed) -> None:
    env = module_state.defining_env(owner, name)
    defined = module_state.defined_name(owner, name)
    if env is None or (id(env), defined) in placed:
        return
    if module_state.changeable(owner, env.get(defined)):
        module_state.write(env, defined, UNKNOWN)


def _forget_name(an, name: str, frame) -> None:
    if name in frame.env:
        if module_state.changeable(an, frame.env[name]):
            frame.env[name] = UNKNOWN
    elif not module_state.forget(an, name, frame) and module_state.changeable(
        an, an.module_env.get(name)
    ):
        an.module_env[name] = UNKNOWN


def _local_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """fn's parameters and the names it binds (Python's rule: local unless declared
    global)."""
    a = fn.args
    names = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    names |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
    declared = {g for n in nodes_of(fn, (ast.Global, ast.Nonlocal)) for g in n.names}
    return frozenset((names | stored_names(fn)) - declared)
