"""Iterators Python hands out once: a generator expression, and `map`, `filter`,
`zip`, `enumerate` and `reversed` of anything.

The analysis holds what such an iterator yields as a list, and a list can be
walked again; the iterator cannot (a second walk yields what the first left:
nothing after a whole walk, the rest after `next` or `any`). `g = (l for l in
self.layers)` walked by two loops ran the layers twice where torch ran them once.
So the list stands for the iterator only where it is surely walked at most once:
where it is made by a consumer that walks it once (a `for`, a comprehension's
first `for`, `*g`, unpacking, a builtin such as `list` or `sum`, a torch call, a
container's `join` or `extend`), or bound to a local name read once, by such a
consumer, outside any loop the binding is not in and in no nested function.
Anywhere else (read twice, read in a loop, stored on an object, returned, handed
to a function of the project) what it yields is not known.
"""

from __future__ import annotations

import ast

from shapelint.analysis.nodes import parents as nodes_parents
from shapelint.ops.values import UNKNOWN

# Builtins whose result is an iterator of their argument, used up as it is walked.
ONE_SHOT_BUILTINS = frozenset({"map", "filter", "zip", "enumerate", "reversed"})
# Builtins that walk an argument once, and keep nothing that walks it again.
_CONSUMERS = frozenset(
    {"list", "tuple", "set", "frozenset", "sorted", "sum", "min", "max", "any", "all",
     "dict", "next", "iter", *ONE_SHOT_BUILTINS}
)  # fmt: skip
# Methods that walk an iterable argument once (str.join, list.extend, dict.update...).
_WALKING_METHODS = frozenset(
    {"join", "extend", "update", "union", "intersection", "difference",
     "symmetric_difference", "issubset", "issuperset", "isdisjoint", "fromkeys"}
)  # fmt: skip
# Libraries whose functions walk an iterable argument once where they take one.
_WALKING_LIBRARIES = frozenset({"torch", "einops", "numpy", "math", "itertools", "functools"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_CACHE = "_shapelint_one_shot_reads"


def makes_iterator(an, node: ast.expr, frame) -> bool:
    """Whether node makes a new one-shot iterator: a generator expression, or a
    call of one of the builtins above that no name of the file shadows."""
    if isinstance(node, ast.GeneratorExp):
        return True
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return False
    return node.func.id in ONE_SHOT_BUILTINS and _builtin(an, node.func.id, frame)


def _builtin(an, name: str, frame) -> bool:
    """name reads Python's builtin: no local, function, class or module-level
    value of the file binds it (the order the interpreter resolves a call in)."""
    if name in frame.env or name in frame.locals:
        return False
    return name not in an.functions and name not in an.classes and name not in an.module_env


def held(an, node: ast.expr, value, frame):
    """value, what the one-shot iterator node makes, where it is walked at most
    once; else UNKNOWN (see the module's docstring)."""
    # the running function's nodes (a whole file's map cost 0.5 s on a large one);
    # the file's where the node is not the function's (module level, a lambda)
    scope = getattr(getattr(frame, "func", None), "node", None)
    parents = nodes_parents(scope) if isinstance(scope, ast.AST) else {}
    if id(node) not in parents:
        parents = nodes_parents(an.tree)
    parent = parents.get(id(node))
    if parent is None:
        return value  # a node the analysis made, not one of the file
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        if len(targets) != 1:
            return UNKNOWN  # `a = b = g`: two names of one iterator
        target = targets[0]
        if isinstance(target, (ast.Tuple, ast.List)):
            return value  # unpacked: walked once, to its end, and not held
        if not isinstance(target, ast.Name):
            return UNKNOWN  # held by an object, read from it who knows how often
        scope = _function_of(node, parents)
        return value if scope and _walked_once(an, scope, parent, target.id, frame) else UNKNOWN
    return value if _consumes(an, node, parents, frame) else UNKNOWN


def _function_of(node: ast.AST, parents: dict) -> ast.AST | None:
    while node is not None:
        node = parents.get(id(node))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
    return None


def _walked_once(an, scope, stmt: ast.stmt, name: str, frame) -> bool:
    """Whether the iterator stmt binds to name is walked at most once through it."""
    cache = scope.__dict__.setdefault(_CACHE, {})
    key = (name, id(stmt))
    if key not in cache:
        cache[key] = _read_once(an, scope, stmt, name, frame)
    return cache[key]


def _read_once(an, scope, stmt: ast.stmt, name: str, frame) -> bool:
    for n in ast.walk(scope):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return False
    reads: list[tuple[ast.Name, tuple, bool]] = []
    parents: dict[int, ast.AST] = {}
    at: list[tuple] = []
    for child in ast.iter_child_nodes(scope):
        parents[id(child)] = scope
        _walk(child, (), False, name, stmt, reads, parents, at)
    if len(reads) != 1 or not at:
        return False
    read, loops, nested = reads[0]
    if nested or not set(loops) <= set(at[0]):
        return False  # run by a loop, or by a function called who knows how often
    return _consumes(an, read, parents, frame)


def _walk(node, loops: tuple, nested: bool, name: str, stmt, reads, parents, at) -> None:
    """Collect the loads of name with the loops around each (ids) and whether a
    nested function holds it; at gets the loops around stmt."""
    if node is stmt:
        at.append(loops)
    for field, value in ast.iter_fields(node):
        for i, child in enumerate(value if isinstance(value, list) else [value]):
            if not isinstance(child, ast.AST):
                continue
            parents[id(child)] = node
            inner, deep = loops, nested
            if isinstance(node, (ast.For, ast.AsyncFor)) and field == "body":
                inner = (*loops, id(node))
            elif isinstance(node, ast.While) and field in ("test", "body"):
                inner = (*loops, id(node))
            elif isinstance(node, _COMPREHENSIONS) and not (field == "generators" and i == 0):
                inner = (*loops, id(node))  # the element and later `for`s run per item
            elif isinstance(node, ast.comprehension) and field != "iter":
                inner = (*loops, id(node))
            elif isinstance(node, _SCOPES) and field != "decorator_list":
                deep = True
            if isinstance(child, ast.Name) and child.id == name and isinstance(child.ctx, ast.Load):
                reads.append((child, inner, deep))
            _walk(child, inner, deep, name, stmt, reads, parents, at)


def _consumes(an, read: ast.Name, parents: dict, frame) -> bool:
    """Whether the place of read walks what it reads once and keeps nothing that
    walks it again."""
    parent = parents.get(id(read))
    if isinstance(parent, (ast.For, ast.AsyncFor)):
        return parent.iter is read
    if isinstance(parent, ast.comprehension):
        owner = parents.get(id(parent))
        return parent.iter is read and getattr(owner, "generators", [None])[0] is parent
    if isinstance(parent, ast.Starred):
        return isinstance(parents.get(id(parent)), (ast.Call, ast.List, ast.Tuple, ast.Set))
    if isinstance(parent, ast.YieldFrom):
        return False
    if isinstance(parent, ast.keyword):
        parent = parents.get(id(parent))
    if not isinstance(parent, ast.Call) or parent.func is read:
        return False
    func = parent.func
    if isinstance(func, ast.Name) and func.id in _CONSUMERS and _builtin(an, func.id, frame):
        return True
    if frame is not None and _project_function_walks_once(an, parent, read, frame):
        return True
    if isinstance(func, ast.Attribute) and func.attr in _WALKING_METHODS:
        return True
    qual = an.qualname_of(func, frame)
    return qual is not None and qual.split(".")[0] in _WALKING_LIBRARIES


def _project_function_walks_once(an, call: ast.Call, arg: ast.expr, frame) -> bool:
    """`last_flag(zip(a, b))` with `def last_flag(it): items = list(it); ...`: a
    function of the project (called by its name) whose parameter the argument binds
    is read once, by a builtin that walks it, outside any loop (d3rlpy's encoders)."""
    if not isinstance(call.func, ast.Name) or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    sym = an.functions.get(call.func.id) if call.func.id not in frame.env else None
    if sym is None:
        qual = an.qualname_of(call.func, frame)
        sym = an.project_symbol(call.func, qual, frame)
    node = getattr(sym, "node", None)
    if getattr(sym, "cls", None) is not None or not isinstance(node, ast.FunctionDef):
        return False
    params = [*node.args.posonlyargs, *node.args.args]
    if arg in call.args:
        at = call.args.index(arg)
        name = params[at].arg if at < len(params) else None
    else:
        name = next((k.arg for k in call.keywords if k.value is arg), None)
    if name is None or name not in {p.arg for p in (*params, *node.args.kwonlyargs)}:
        return False
    return _parameter_read_once(node, name)


def _parameter_read_once(func: ast.FunctionDef, name: str) -> bool:
    """Whether func reads its parameter name once, by a builtin that walks it (one no
    name of func's own binds), outside any loop and nested function, and never
    rebinds it."""
    cache = func.__dict__.setdefault(_CACHE, {})
    key = (name, "parameter")
    if key in cache:
        return cache[key]
    reads: list[tuple[ast.Name, tuple, bool]] = []
    parents: dict[int, ast.AST] = {}
    for child in ast.iter_child_nodes(func):
        parents[id(child)] = func
        _walk(child, (), False, name, None, reads, parents, [])
    stored = any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
        for n in ast.walk(func)
    ) or any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(func))
    ok = False
    if len(reads) == 1 and not stored:
        read, loops, nested = reads[0]
        parent = parents.get(id(read))
        ok = (
            not loops
            and not nested
            and isinstance(parent, ast.Call)
            and read in parent.args
            and isinstance(parent.func, ast.Name)
            and parent.func.id in _CONSUMERS
            and not _bound_in(func, parent.func.id)
        )
    cache[key] = ok
    return ok


def _bound_in(func: ast.FunctionDef, name: str) -> bool:
    a = func.args
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p}
    return name in params or any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
        for n in ast.walk(func)
    )
