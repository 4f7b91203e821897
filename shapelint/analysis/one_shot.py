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
Anywhere else (read twice, read in a loop, stored on an object, handed to a
function of the project) what it yields is not known.

Returned (`return (f(t) for t in ts)`) or yielded (`yield i, (d for d in ds)`), the
iterator is decided where the caller gets it: a `OneShotV`, which the caller's call
node decides as if the iterator were made there (`q, k, v = rearrange_many(...)`), or
the name a `for` target binds it to, read once in that loop's body by a consumer
(opacus: `for layer, directions in self.iterate_layers(): for d in directions`).
Only an iterator whose items cost nothing travels so: the caller may walk it part way.

The items are evaluated where the iterator is made, as if asked for at once; Python
makes each as it is asked for. Where the items cost something, their records count once
only where the consumer surely asks for every item (`list`, `sum`, a `for` that cannot
stop early, unpacking); `next`, `any`, `zip` or a `for` with `break` ask as far as
they need: what the items cost is then not known (no part of it a bound).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from shapelint.analysis import generators, loops
from shapelint.analysis.generators import is_generator, method_of
from shapelint.analysis.nodes import descendants as nodes_descendants
from shapelint.analysis.nodes import parents as nodes_parents
from shapelint.analysis.nodes import walk as nodes_walk
from shapelint.analysis.repetition import costless, scaled
from shapelint.ops.values import UNKNOWN, TupleV, Value, replaced

# Builtins whose result is an iterator of their argument, used up as it is walked.
ONE_SHOT_BUILTINS = frozenset({"map", "filter", "zip", "enumerate", "reversed"})
# Builtins that walk an argument once, and keep nothing that walks it again.
_CONSUMERS = frozenset(
    {"list", "tuple", "set", "frozenset", "sorted", "sum", "min", "max", "any", "all",
     "dict", "next", "iter", *ONE_SHOT_BUILTINS}
)  # fmt: skip
# ... of which these ask for every item (the others stop where they have their answer,
# or as far as their own consumer asks).
_WHOLE = frozenset({"list", "tuple", "set", "frozenset", "sorted", "sum", "min", "max", "dict"})
# Methods that walk an iterable argument once (str.join, list.extend, dict.update...).
_WALKING_METHODS = frozenset(
    {"join", "extend", "update", "union", "intersection", "difference",
     "symmetric_difference", "issubset", "issuperset", "isdisjoint", "fromkeys"}
)  # fmt: skip
# Libraries whose functions walk an iterable argument once where they take one.
_WALKING_LIBRARIES = frozenset({"torch", "einops", "numpy", "math", "itertools", "functools"})
# ... of which these ask as far as their consumer asks (itertools' islice, chain...).
_LAZY_LIBRARIES = frozenset({"itertools"})
# ... and these keep the iterator itself, not its items: a walk of what they make may
# walk it again (`itertools.repeat(g, 2)`, `functools.partial(f, g)`).
_HOLDING = frozenset({"itertools.repeat", "functools.partial", "functools.partialmethod"})
WHOLE, PART, PASS = "whole", "part", "pass"  # how a place uses an iterator


@dataclass(frozen=True, slots=True, eq=False)
class OneShotV(Value):
    """An iterator handed to a caller (returned, or yielded by a generator) whose
    items cost nothing to make: items is what it yields, as a list, for the place
    the caller puts it to decide. One object per making (eq=False): two are never
    the same iterator."""

    items: Value


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_CACHE = "_shapelint_one_shot_reads"
_HANDED = "_shapelint_handed_calls"


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


def held(an, node: ast.expr, value, frame, made: dict | None = None):
    """value, what the one-shot iterator node makes, where it is walked at most
    once; a OneShotV where it is handed to the caller; else UNKNOWN (see the module's
    docstring). made: the records making its items made, kept apart; they go into
    frame's, counted once where every item is surely asked for, not known elsewhere."""
    how = _use(an, node, frame)
    costly = bool(made) and not costless(made)
    if how == PASS:
        kept = UNKNOWN if costly else OneShotV(value)
    elif how == WHOLE or (how == PART and not costly):
        kept = value
    else:
        kept = UNKNOWN
    if made:
        if how == WHOLE or not costly:
            frame.records.update(made)
        else:
            why = "an iterator's items, made as far as its consumer asks"
            for key, rec in made.items():
                frame.records[key] = replaced(rec, cost=scaled(rec.cost, None, why))
    return kept


def _use(an, node: ast.expr, frame) -> str | None:
    """How the place of node, an iterator made there, walks it: WHOLE, PART, PASS
    (returned or yielded) or None (not known to be walked once)."""
    # the running function's nodes (a whole file's map cost 0.5 s on a large one);
    # the file's where the node is not the function's (module level, a lambda)
    parents = _parents_at(an, node, frame)
    parent = parents.get(id(node))
    if parent is None:
        return WHOLE  # a node the analysis made, not one of the file
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        if len(targets) != 1:
            return None  # `a = b = g`: two names of one iterator
        target = targets[0]
        if isinstance(target, (ast.Tuple, ast.List)):
            return WHOLE  # unpacked: walked once, to its end, and not held
        if not isinstance(target, ast.Name):
            return None  # held by an object, read from it who knows how often
        scope = _function_of(node, parents)
        return _walked_once(an, scope, parent, target.id, frame) if scope else None
    # Handed on only in a target run, where a call's value is its own run's: a
    # summary's would be put in each caller's sizes, which reads no OneShotV.
    if isinstance(parent, ast.Return):
        func = _function_of(node, parents)
        # (a generator's `return v` is no value its caller gets)
        ok = an.specialize and func is not None and not is_generator(func)
        return PASS if ok else None
    while isinstance(parent, ast.Tuple) and isinstance(parent.ctx, ast.Load):
        parent = parents.get(id(parent))  # `yield layer, (d for d in ds)`
    if isinstance(parent, ast.Yield) and isinstance(parents.get(id(parent)), ast.Expr):
        return PASS if an.specialize else None
    return _consumes(an, node, parents, frame)


def generator_bound(an, node: ast.expr, frame, d: int) -> Value | None:
    """`g = self.blocks(x)`, `run(self.blocks(x))`, `*self.blocks(x)`: a call of a
    generator function of the project that is walked once, where it is made or
    through the one name it is bound to (as a generator expression would be): the
    items its body yields (generators.yielded, which follows only a body that costs
    nothing, so that how far it is walked changes no figure); None where that is not
    so (the call is then evaluated as any other)."""
    if not isinstance(node, ast.Call):
        return None
    scope = getattr(getattr(frame, "func", None), "node", None)
    if not isinstance(scope, ast.AST) or id(node) not in _handed_calls(scope):
        return None
    if not generators.generator_call(an, node, frame, d) or _use(an, node, frame) is None:
        return None
    items = generators.yielded(an, node, frame, d, loops.iterate)
    return None if items is None else TupleV(items, "list")


def _handed_calls(scope: ast.AST) -> frozenset[int]:
    """The calls scope binds to one name (`g = f(x)`) or hands to another call
    (`run(f(x))`, `*f(x)`), kept on it: the places a generator may be walked once
    that a `for` over the call (loops.py) does not see."""
    known = scope.__dict__.get(_HANDED)
    if known is None:
        ids: set[int] = set()
        # (off the function's kept index, which its other checks share; its
        # leaves Load/Add are none of these, nor is the scope itself)
        # (by exact type, which the parser's nodes have: isinstance on every node
        # of every function run was 680k calls on 236 files)
        for n in nodes_descendants(scope):
            kind = n.__class__
            if kind is ast.Assign:
                if len(n.targets) == 1 and n.targets[0].__class__ is ast.Name:
                    ids.add(id(n.value))
            elif kind is ast.Call:
                ids.update(id(a) for a in n.args)
                ids.update(id(k.value) for k in n.keywords)
            elif kind is ast.Starred:
                ids.add(id(n.value))
        known = frozenset(ids)
        scope.__dict__[_HANDED] = known
    return known


def _parents_at(an, node: ast.AST, frame) -> dict[int, ast.AST]:
    """The parent map that holds node: the running function's, else the file's."""
    scope = getattr(getattr(frame, "func", None), "node", None)
    parents = nodes_parents(scope) if isinstance(scope, ast.AST) else {}
    return parents if id(node) in parents else nodes_parents(an.tree)


def bound(an, target: ast.expr, value: Value, frame) -> Value:
    """value as target takes it, where value is or holds a OneShotV: a name a
    `for` target binds it to, read once in the loop by a consumer, its items; a
    tuple target unpacks it on (each name decides its own); anywhere else what it
    holds is not known."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return value
    if isinstance(target, ast.Name) and isinstance(value, OneShotV):
        parents = _parents_at(an, target, frame)
        loop = parents.get(id(target))
        while isinstance(loop, (ast.Tuple, ast.List)):
            loop = parents.get(id(loop))
        if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call):
            # a fresh call's items: no other name holds this iterator
            func = _function_of(loop, parents)
            if func is not None and _walked_once(an, func, loop, target.id, frame):
                return value.items
    return stripped(value)


def holds(value: Value) -> bool:
    """Whether value is or holds a OneShotV."""
    if isinstance(value, OneShotV):
        return True
    return isinstance(value, TupleV) and any(holds(v) for v in value.items)


def stripped(value: Value) -> Value:
    """value with each OneShotV in it not known: kept where no walk of it is seen."""
    if isinstance(value, OneShotV):
        return UNKNOWN
    if isinstance(value, TupleV) and holds(value):
        return TupleV(tuple(stripped(v) for v in value.items), value.kind)
    return value


def _function_of(node: ast.AST, parents: dict) -> ast.AST | None:
    while node is not None:
        node = parents.get(id(node))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
    return None


def _walked_once(an, scope, stmt: ast.stmt, name: str, frame) -> str | None:
    """How the iterator stmt binds to name is walked through it, where it is at most
    once (WHOLE or PART); else None."""
    cache = scope.__dict__.setdefault(_CACHE, {})
    key = (name, id(stmt))
    if key not in cache:
        cache[key] = _read_once(an, scope, stmt, name, frame)
    return cache[key]


def _read_once(an, scope, stmt: ast.stmt, name: str, frame) -> str | None:
    for n in ast.walk(scope):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return None
    reads: list[tuple[ast.Name, tuple, bool]] = []
    parents: dict[int, ast.AST] = {}
    at: list[tuple] = []
    for child in ast.iter_child_nodes(scope):
        parents[id(child)] = scope
        _walk(child, (), False, name, stmt, reads, parents, at)
    if not at:
        return None
    reads = [r for r in reads if not _read_before(r, stmt, at[0], parents)]
    if len(reads) != 1:
        reads = _rebound_next(stmt, name, parents, reads)
        if reads is None:
            return None
    read, loops, nested = reads[0]
    around = set(at[0])
    if isinstance(stmt, ast.For):
        around.add(id(stmt))  # its target is bound anew at each turn
    if nested or not set(loops) <= around:
        return None  # run by a loop, or by a function called who knows how often
    return _consumes(an, read, parents, frame)


def _read_before(read: tuple, stmt: ast.stmt, loops: tuple, parents: dict) -> bool:
    """Whether a read of the name surely runs before stmt binds the iterator to it,
    so never sees it: a read in the value stmt binds (`layers = filter(f, layers)`:
    Python evaluates the value first, in every turn of a loop around it), or, where
    no loop runs stmt again, a read written before stmt outside any nested function
    (the straight-line order Python runs a function's statements in)."""
    node, _, nested = read
    value = getattr(stmt, "value", None)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and value is not None:
        if _within(node, value, parents):
            return True
    if nested or loops:
        return False
    return (node.lineno, node.col_offset) < (stmt.lineno, stmt.col_offset)


def _rebound_next(stmt: ast.stmt, name: str, parents: dict, reads: list) -> list | None:
    """The one read of name in the statement right after stmt where that statement
    rebinds name from it (`arr = zip(a, b)` then `arr = sorted(arr)`): Python
    evaluates the value before it binds, and every later read, in a loop's next
    turn too, sees the new value. None where there is no such read, or where an
    exception raised reading it may reach code that reads name again (a `try`'s
    handler, or past a `with` whose manager suppresses it)."""
    owner = parents.get(id(stmt))
    block = next(
        (b for f in ("body", "orelse", "finalbody")
         if isinstance(b := getattr(owner, f, None), list) and any(x is stmt for x in b)),
        None,
    )  # fmt: skip
    if block is None:
        return None
    i = next(j for j, x in enumerate(block) if x is stmt)
    after = block[i + 1] if i + 1 < len(block) else None
    if not (
        isinstance(after, ast.Assign)
        and len(after.targets) == 1
        and isinstance(after.targets[0], ast.Name)
        and after.targets[0].id == name
    ):
        return None
    mine = [r for r in reads if _within(r[0], after.value, parents)]
    if len(mine) != 1:
        return None
    node = owner
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if type(node).__name__ in ("Try", "TryStar", "With", "AsyncWith"):
            return None
        node = parents.get(id(node))
    return mine


def _within(node: ast.AST, root: ast.AST, parents: dict) -> bool:
    while node is not None:
        if node is root:
            return True
        node = parents.get(id(node))
    return False


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


def _consumes(an, read: ast.expr, parents: dict, frame) -> str | None:
    """How the place of read walks what it reads, where it walks it once and keeps
    nothing that walks it again: WHOLE (every item asked for) or PART; else None."""
    parent = parents.get(id(read))
    if isinstance(parent, (ast.For, ast.AsyncFor)):
        if parent.iter is not read:
            return None
        return PART if _may_stop(parent) else WHOLE
    if isinstance(parent, ast.comprehension):
        owner = parents.get(id(parent))
        if parent.iter is not read or getattr(owner, "generators", [None])[0] is not parent:
            return None
        return PART if isinstance(owner, ast.GeneratorExp) else WHOLE  # (as far as it is)
    if isinstance(parent, ast.Starred):
        holder = parents.get(id(parent))
        return WHOLE if isinstance(holder, (ast.Call, ast.List, ast.Tuple, ast.Set)) else None
    if isinstance(parent, ast.YieldFrom):
        return None
    if isinstance(parent, ast.keyword):
        parent = parents.get(id(parent))
    if not isinstance(parent, ast.Call) or parent.func is read:
        return None
    func = parent.func
    if isinstance(func, ast.Name) and func.id in _CONSUMERS and _builtin(an, func.id, frame):
        return WHOLE if func.id in _WHOLE else PART
    if frame is not None:
        how = _project_function_walks_once(an, parent, read, frame)
        if how is not None:
            return how
    if isinstance(func, ast.Attribute) and func.attr in _WALKING_METHODS:
        return WHOLE
    qual = an.qualname_of(func, frame)
    if qual is None or qual in _HOLDING or qual.split(".")[0] not in _WALKING_LIBRARIES:
        return None
    return PART if qual.split(".")[0] in _LAZY_LIBRARIES else WHOLE


def _may_stop(loop: ast.For | ast.AsyncFor) -> bool:
    """Whether a `for` may leave before its iterable is used up (a `break`, `return`
    or `raise` in its body; a `try` around it may catch the last). Kept on the loop,
    asked at each run of it."""
    known = loop.__dict__.get(_STOPS)
    if known is None:
        known = any(
            isinstance(n, (ast.Break, ast.Return, ast.Raise))
            for b in loop.body
            for n in nodes_walk(b)
        )
        loop.__dict__[_STOPS] = known
    return known


_STOPS = "_shapelint_may_stop"


def _project_function_walks_once(an, call: ast.Call, arg: ast.expr, frame) -> str | None:
    """`last_flag(zip(a, b))` with `def last_flag(it): items = list(it); ...`: a
    function of the project (called by its name, or a plain method through an
    instance: `self.run(g, x)`) whose parameter the argument binds is read once, by
    a builtin or a `for` that walks it, outside any loop (d3rlpy's encoders)."""
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    bound = 0  # parameters the call binds before its arguments (a method's self)
    if isinstance(call.func, ast.Attribute):
        found = method_of(an, call.func, frame, 0, quiet=True)  # `self.run(g, x)`
        if found is None:
            return None
        node, bound = found[0].node, 1
    elif isinstance(call.func, ast.Name):
        sym = an.functions.get(call.func.id) if call.func.id not in frame.env else None
        if sym is None:
            qual = an.qualname_of(call.func, frame)
            sym = an.project_symbol(call.func, qual, frame)
        node = getattr(sym, "node", None)
        if getattr(sym, "cls", None) is not None:
            return None
    else:
        return None
    if not isinstance(node, ast.FunctionDef):
        return None
    params = [*node.args.posonlyargs, *node.args.args][bound:]
    if arg in call.args:
        at = call.args.index(arg)
        name = params[at].arg if at < len(params) else None
    else:
        name = next((k.arg for k in call.keywords if k.value is arg), None)
    if name is None or name not in {p.arg for p in (*params, *node.args.kwonlyargs)}:
        return None
    return _parameter_read_once(node, name)


def _parameter_read_once(func: ast.FunctionDef, name: str) -> str | None:
    """How func walks its parameter name where it reads it once, by a `for` or a
    builtin that walks it (one no name of func's own binds), outside any loop and
    nested function, and never rebinds it: WHOLE or PART; else None."""
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
    ok = None
    if len(reads) == 1 and not stored:
        read, loops, nested = reads[0]
        parent = parents.get(id(read))
        if not loops and not nested and isinstance(parent, ast.For) and parent.iter is read:
            ok = PART if _may_stop(parent) else WHOLE
        elif (
            not loops
            and not nested
            and isinstance(parent, ast.Call)
            and read in parent.args
            and isinstance(parent.func, ast.Name)
            and parent.func.id in _CONSUMERS
            and not _bound_in(func, parent.func.id)
        ):
            ok = WHOLE if parent.func.id in _WHOLE else PART
    cache[key] = ok
    return ok


def _bound_in(func: ast.FunctionDef, name: str) -> bool:
    a = func.args
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p}
    return name in params or any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
        for n in ast.walk(func)
    )
