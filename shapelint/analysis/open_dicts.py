"""Module-level dicts other modules may fill: a key they lack is not known.

A dict the analysis knows key by key answers a read of a key it lacks as Python
would on that dict: `d.get(k, default)` is the default, `k in d` is False. That
holds where every store into the dict is in code the analysis has read. A
registry is filled otherwise: its module stores into it from a function (timm's
`register_model`, a decorator or a `register(name, cls)` helper), and the modules
that call that function, each registering its own entries as Python imports it,
are any importer's, read or not. So a module-level name is *open* when a function
of its module (a method, a nested function, a lambda included) stores into the
dict it names: `NAME[k] = v`, `NAME.update(...)`,
`NAME.setdefault(...)`, `NAME.__setitem__(...)`, or rebinds it under `global NAME`.
A read by key of an open dict, where the key is missing and those stores may
add it (any key, or a constant one among theirs: `NAME["a"] = 1` adds "a"
alone), is not known (a key found is the entry found); every other dict is closed: its stores are its
module's top level, which the analysis reads as Python runs it.

A function that reads the dict by key and stores into it itself is a memo
(`if k not in CACHE: CACHE[k] = make(k)`): what it stores is what its own code
makes of the key, and its read is a miss on the first call, as a fresh process
runs it (the convention of every figure, and of torch's count it is held to);
its reads stay closed, a read anywhere else is open.

The reads this concerns are those through the module-level name itself, in its
own module (`_entries.get(name)` in `lookup`): the syntax decides them, kept on
the module's tree. A store from another module (`registry._entries[k] = v`) is
not seen here; nor is the dict once handed to a function under another name.
"""

from __future__ import annotations

import ast

from shapelint.analysis import nodes

# dict's methods that may add a key (a removal leaves a miss a miss).
_ADDERS = frozenset({"__setitem__", "update", "setdefault", "__ior__"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_KEPT = "_shapelint_open_reads"


def open_read(tree: ast.Module, node: ast.expr, key: object) -> bool:
    """Whether a read of key, missing from the dict node names (the receiver of a
    read by key), is not known: node reads an open module-level name of tree's
    module whose storing functions may add that key (see the module's docstring)."""
    if not isinstance(node, ast.Name):
        return False
    reads = _open_reads(tree)
    if id(node) not in reads:
        return False
    keys = reads[id(node)]
    return keys is None or key in keys


def _open_reads(tree: ast.Module) -> dict[int, frozenset | None]:
    known = tree.__dict__.get(_KEPT)
    if known is None:
        known = _scan(tree)
        setattr(tree, _KEPT, known)
    return known


def _scan(tree: ast.Module) -> dict[int, frozenset | None]:
    """For each Name node, anywhere in tree, that reads an open name outside the
    functions that store into it, by id: the keys those stores may add (None: any)."""
    module_names = _bound_here(tree.body)
    parents = nodes.parent_map(tree)
    reads: list[tuple[str, int, int]] = []  # (name, id of the node, id of its scope)
    storers: dict[str, set[int]] = {}  # name -> ids of the functions storing into it
    added: dict[str, frozenset | None] = {}  # name -> the keys they may add (None: any)
    # (scope node, the names local to the enclosing function scopes, class bodies skipped)
    stack: list[tuple[ast.AST, frozenset[str]]] = [(tree, frozenset())]
    while stack:
        scope, outer = stack.pop()
        in_function = isinstance(scope, _SCOPES)
        declared = _declared_global(scope) if in_function else frozenset()
        local = (_locals(scope) - declared) if in_function else frozenset()
        shadowed = outer | local
        for node, parent in _own_nodes(scope):
            if isinstance(node, (*_SCOPES, ast.ClassDef)):
                stack.append((node, shadowed if isinstance(node, _SCOPES) else outer))
                continue
            if not isinstance(node, ast.Name) or node.id not in module_names:
                continue
            if node.id in shadowed:
                continue
            keys: frozenset | None | bool = False
            if isinstance(node.ctx, ast.Load):
                reads.append((node.id, id(node), id(scope)))
                if in_function:
                    keys = _added_keys(node, parent, parents.get(id(parent)))
            elif in_function and node.id in declared:
                keys = None  # `global NAME; NAME = ...`: rebound from a function
            if keys is not False:
                storers.setdefault(node.id, set()).add(id(scope))
                before = added.get(node.id, frozenset())
                added[node.id] = None if keys is None or before is None else before | keys
    return {
        i: added[name] for name, i, scope in reads if name in storers and scope not in storers[name]
    }


def _added_keys(name: ast.Name, parent: ast.AST | None, grand: ast.AST | None):
    """The keys a store through name may add: `NAME["k"] = v` adds "k" alone,
    `NAME[k] = v` any (None); `update` / `setdefault` / `__setitem__` called alike
    (`update({"a": 1}, b=2)` adds a and b); False where name is stored through by
    none of these (a `del` adds no key: a miss stays one)."""
    if isinstance(parent, ast.Subscript) and parent.value is name:
        if not isinstance(parent.ctx, ast.Store):
            return False
        return _constants([parent.slice])
    if not (isinstance(parent, ast.Attribute) and parent.attr in _ADDERS):
        return False
    if not (isinstance(grand, ast.Call) and grand.func is parent):
        return None  # the bound method handed on: any key
    if parent.attr in ("__setitem__", "setdefault"):
        return _constants(grand.args[:1]) if grand.args else None
    if parent.attr == "update":
        dicts = [a for a in grand.args if isinstance(a, ast.Dict)]
        if len(dicts) != len(grand.args) or any(k.arg is None for k in grand.keywords):
            return None
        named = frozenset(k.arg for k in grand.keywords)
        keys = _constants([k for d in dicts for k in d.keys])  # a `**` spread: None
        return None if keys is None else keys | named
    return None


def _constants(found: list) -> frozenset | None:
    """The values of constant key expressions, None where one is not a constant."""
    if not all(isinstance(n, ast.Constant) for n in found):
        return None
    return frozenset(n.value for n in found)


def _own_nodes(scope: ast.AST):
    """(node, its parent) under scope, not entering nested function or class
    scopes (yielded themselves, their decorators, defaults and bases walked here,
    as Python evaluates those in the enclosing scope)."""
    pending: list[tuple[ast.AST, ast.AST]] = [(c, scope) for c in ast.iter_child_nodes(scope)]
    while pending:
        node, parent = pending.pop()
        yield node, parent
        if isinstance(node, (*_SCOPES, ast.ClassDef)):
            outside = _evaluated_outside(node)
            pending.extend((c, node) for c in outside)
            continue
        pending.extend((c, node) for c in ast.iter_child_nodes(node))


def _evaluated_outside(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Lambda):
        return [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords]
    args = node.args  # type: ignore[attr-defined]
    return [
        *node.decorator_list,  # type: ignore[attr-defined]
        *args.defaults,
        *(d for d in args.kw_defaults if d is not None),
    ]


def _locals(fn: ast.AST) -> frozenset[str]:
    """The names fn's own scope binds: its parameters and every binding in its
    body (nested scopes' names, not their contents)."""
    args = fn.args  # type: ignore[attr-defined]
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    params += [a for a in (args.vararg, args.kwarg) if a is not None]
    names = {a.arg for a in params}
    body = fn.body if isinstance(fn.body, list) else [fn.body]  # type: ignore[attr-defined]
    return frozenset(names) | _bound_here(body)


def _bound_here(body: list) -> frozenset[str]:
    """The names the statements of one scope bind (not inside nested scopes)."""
    out: set[str] = set()
    holder = ast.Module(body=body, type_ignores=[])
    for node, _ in _own_nodes(holder):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            out.add(node.name)
    return frozenset(out)


def _declared_global(fn: ast.AST) -> frozenset[str]:
    body = fn.body if isinstance(fn.body, list) else []  # type: ignore[attr-defined]
    holder = ast.Module(body=body, type_ignores=[])
    return frozenset(
        n for node, _ in _own_nodes(holder) if isinstance(node, ast.Global) for n in node.names
    )
