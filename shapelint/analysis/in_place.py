"""Lists, dicts and objects a called function changes in place.

The analysis holds values, not a heap: `lst.append(4)`, `cfg.table[k] = v` or
`self.mult = m` inside a function rebind a name of the callee's frame, and the
caller's list, dict or object is left as it was. In Python the caller sees the
change (the callee was handed the same object, or reached it as a global), so a
caller that read it afterwards read a stale value, and a figure built on it
(`nn.Linear(d, d * cfg.mult)` after `cfg.set_mult(4)`) was complete and wrong.

After a specialized call, each object the callee was handed (a parameter it
never rebinds, `self` included) and changed takes, in the caller's binding
(its name, the attribute of a module being built, a global through module_state),
the callee's value for it at its return, joined over its return paths
(`finals`, recorded at each `return` by `exit_here`): `helper(layers)`,
`cfg.set_mult(4)`. A global it changes is module_state's (a target run binds it
in the file that defines it): kept as bound there, unknown where that module did
not bind it (`_global_swaps`), never taken from the callee's own copy. The
change is not known,
and the binding becomes unknown, where the callee's source changes it in a way
its run does not apply (`risks`: `self.sub.k = v`, `setattr`, `xs += ys`;
`self.xs.append(v)` unless the run placed the grown list in the object the name
holds, call_resolution.mutate_list, whose other holders of the list keep a link
to it), through a local name that may hold a caller's object, by
a generator (its body runs when consumed), or where the run raised or was not
followed. A closure's changes to the names of the function that made it are
followed alike (`follow_free`); a constructor's to what it was handed are
forgotten (`forget_handed`). Since the analysis holds values, any
other holder of the object (`seen = layers`, `self.layers = layers`, an item of
a list, another object's attribute, an equal value a memoised call handed back)
is forgotten in every frame, module and module being built (`follow`), and
with an unknown change everything the object holds too. A list changed in place
through a local name of the frame that changes it (`xs = self.names;
xs.append(n)`) is forgotten alike wherever else that object is held
(`forget_held`). What "changes" means is
read off the source (`changed_names`): an item or attribute stored or deleted
under the name, or a mutating method called on it (at any depth of attributes
and items below it: `self.table[k] = v` changes `self`), in the body or a
function nested in it; for `self`, also a method of the class called on it that
changes its own `self`. Modules being built are not concerned: their state
lives on recorders, shared by every frame (analysis/aliasing.py). A built module a
target run holds, changed by a method whose source changes it (`self.n =
x.shape[-1]` in a helper the forward calls), takes the callee's value at its
return in every holder, by identity (one object: the caller's `self`, the parent
module's attribute), where the run knows that value; where it does not, it is left
as it was, as before modules were followed (a gap: a stale attribute may be read).
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from shapelint.analysis import (
    aliasing,
    built_objects,
    defaults,
    forget_reach,
    fresh,
    item_paths,
    joined_objects,
    module_state,
    plain,
    registering,
)
from shapelint.analysis.attributes import find_method, module_class
from shapelint.analysis.nodes import nodes_of, stored_names
from shapelint.analysis.small_sets import SetV
from shapelint.ops.values import DICT_KIND, UNKNOWN, NoneV, ObjectV, TupleV, Value

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


def _is_super(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
        and not node.args
    )


def _followed(t: ast.expr) -> bool:
    """Whether the analysis applies a store into t to the name under it: one
    attribute or a chain of items right on a name (`p.k = v`, `p[i][k] = v`); a
    deeper one (`p.sub.k = v`, `p.table[k] = v`) changes an object the name's
    value only holds, which its run does not write back."""
    if isinstance(t, ast.Attribute):
        return isinstance(t.value, ast.Name)
    while isinstance(t, ast.Subscript):
        t = t.value
    return isinstance(t, ast.Name)


def _direct(fn: ast.FunctionDef | ast.AsyncFunctionDef):
    """The names fn's source changes in place, the methods it calls on `self`, and
    the names it changes in a way its run does not follow (a deeper store, a
    deletion, a mutating method on an attribute, `setattr`)."""
    changed: set[str] = set()
    unfollowed: set[str] = set()
    targets: list[tuple[ast.expr, bool]] = []
    for n in nodes_of(fn, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.For)):
        if isinstance(n, ast.Assign):
            targets.extend((t, True) for t in n.targets)
        elif isinstance(n, ast.Delete):
            targets.extend((t, False) for t in n.targets)
        else:
            targets.append((n.target, not isinstance(n, ast.For)))
    while targets:
        t, store = targets.pop()
        if isinstance(t, (ast.Tuple, ast.List)):
            targets.extend((e, store) for e in t.elts)
        elif isinstance(t, ast.Starred):
            targets.append((t.value, store))
        elif isinstance(t, (ast.Attribute, ast.Subscript)):
            root = _root(t)
            if root is not None:
                changed.add(root)
                if not (store and _followed(t)):
                    unfollowed.add(root)
    on_self: list[str] = []
    for call in nodes_of(fn, ast.Call):
        func = call.func
        if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and call.args:
            root = _root(call.args[0])
            if root is not None:
                changed.add(root)
                # `setattr(obj, k, v)` on a name is `obj.k = v` (builtins._setattr),
                # or, with k not known, the name forgotten
                if func.id == "delattr" or not isinstance(call.args[0], ast.Name):
                    unfollowed.add(root)
            continue
        if not isinstance(func, ast.Attribute):
            continue
        if func.attr in MUTATORS and _is_super(func.value):
            changed.add("self")  # `super().__setitem__(k, v)`: a base's method on self
            continue
        root = _root(func.value)
        if root is None:
            continue
        if func.attr in MUTATORS or func.attr in registering.METHODS:
            # nn.Module's `self.register_buffer(name, t)` in a helper stores t as
            # `self.name = t` does (modules._buffer_stored_in_forward), a change its
            # caller's self must see (a state made of the input's shape)
            changed.add(root)
            if not isinstance(func.value, ast.Name):
                unfollowed.add(root)
            if func.attr in registering.METHODS and root == "self":
                on_self.append(func.attr)  # a class's own override, if any, too
        elif root == "self" and isinstance(func.value, ast.Name):
            on_self.append(func.attr)
    return frozenset(changed), tuple(on_self), frozenset(unfollowed)


def changed_names(an, fd, _seen: frozenset = frozenset()) -> frozenset[str]:
    """The names fd's run may change in place: its parameters' objects and the
    globals it reaches (a `self.m(...)` of the class counts m's changes to self)."""
    node = fd.node
    cached = getattr(node, _CHANGED, None)
    if cached is not None:
        return cached
    changed, on_self, _ = _direct(node)
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


# hf's rule (an instance of a dict subclass is changeable too) lives in module_state
_changeable = module_state.changeable


# Every frame made: a name bound to an object a callee changed may sit in any of
# them (a caller's caller, a closure's maker), and a dead one costs nothing.
LIVE: weakref.WeakSet = weakref.WeakSet()
# The frames live when a file's top level began to run (ids): code of that top
# level, which Python ran at import, before any of them existed, reaches none of
# their names; an object it changes is not one they hold (a `{}` it fills is no
# caller's empty `**kwargs`).
_BEFORE_TOP: ContextVar[frozenset] = ContextVar("before_top", default=frozenset())


@contextmanager
def top_level() -> Iterator[None]:
    """A file's top level runs, read for the first time inside a run (a class
    decorator's file loaded to judge an absence): the run's frames are apart."""
    token = _BEFORE_TOP.set(_BEFORE_TOP.get() | {id(f) for f in LIVE})
    try:
        yield
    finally:
        _BEFORE_TOP.reset(token)


# a function's summary reached in a target run (function_runs.summary), whose
# `self` is no object of the run, is apart from the run's frames, as a top level is
apart = top_level


_WATCHED = "_shapelint_watched"


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    a = fn.args
    return tuple(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs))


def watched(an, fd) -> frozenset[str]:
    """The names whose values at fd's return the caller takes back: the parameters
    fd never rebinds (a rebound one no longer names the caller's object) and the
    globals it may change in place."""
    node = fd.node
    known = node.__dict__.get(_WATCHED)
    if known is None:
        stored = stored_names(node)
        params = frozenset(p for p in _params(node) if p not in stored)
        known = params | (changed_names(an, fd) - _local_names(node))
        setattr(node, _WATCHED, known)
    return known


def exit_here(an, frame) -> None:
    """A return of a specialized run (or the end of its body): what its watched
    names hold on this path."""
    fd = frame.func
    if (fd is None and frame.watch is None) or not an.specialize:
        return
    env = frame.env
    names = frame.watch if frame.watch is not None else watched(an, fd)
    frame.exits.append({k: env[k] for k in names if k in env})


def finals(an, frame) -> dict[str, Value]:
    """Each watched name's value joined over the run's return paths; a name
    missing on a path (a global it never held) is left out, and a run that surely
    raised hands nothing back."""
    if (frame.func is None and frame.watch is None) or not an.specialize:
        return {}
    exits = list(frame.exits)
    if not frame.done:
        exit_here(an, frame)
        exits.append(frame.exits.pop())
    if not exits or frame.raised:
        return {}
    out: dict[str, Value] = {}
    for k in exits[0]:
        vals = [e.get(k) for e in exits]
        if any(v is None for v in vals):
            continue
        first = vals[0]
        out[k] = first if all(v is first for v in vals) else an.join_all(vals)
    fd = frame.func
    if fd is not None and frame.watch is None and not _ran_alias_change(fd, frame):
        out[_NO_ALIAS_RAN] = NoneV()
    if fd is not None and frame.watch is None:
        deep = _risky(fd.node)[0]
        for k in _params(fd.node):
            sites = _change_sites(fd.node, frozenset({k}), every=True)
            if k in out and not any(i in frame.ran for i in sites):
                out[_UNCHANGED + k] = NoneV()
            if k in out and k in deep and _placed_deep(fd.node, k, frame):
                out[_PLACED + k] = NoneV()
    return out


def _ran_alias_change(fd, frame) -> bool:
    """Whether fd's run (frame) changed in place what a local alias may hold."""
    return alias_ran(fd.node, _risky(fd.node)[1], frame)


def handed_back(fd, node, recv, args, kwargs, finals: dict[str, Value] | None) -> list[Value]:
    """The values of finals (a memoised run's) that `follow` may give the caller's
    names for the call `node`: those of the parameters it left other than they
    were handed."""
    if not finals or not isinstance(node, ast.Call):
        return []
    handed = _handed(fd, node, recv, args, kwargs)
    return [v for k, v in finals.items() if k in handed and not _copy(v, handed[k][1])]


def handed_anew(fd, node, recv, args, kwargs, finals: dict[str, Value] | None) -> dict | None:
    """finals (a memoised run's, handed back for the call `node`) with a value object
    of its own for each parameter handed an object of its own (built_objects) that
    the run changed: Python's run would have changed this call's object, not the
    first call's, so the value follow gives it is another value object than the
    first run's, holding what it held (built_objects.renew)."""
    if not finals or not isinstance(node, ast.Call):
        return finals
    handed = _handed(fd, node, recv, args, kwargs)
    out = dict(finals)
    for k, v in finals.items():
        got = handed.get(k)
        if got is not None and built_objects.token(got[1]) is not None and v is not got[1]:
            out[k] = built_objects.renew(v)
    return out


def parameters_only(fd, finals: dict[str, Value]) -> dict[str, Value]:
    """finals without the globals (what they hold came from what they held before
    the run, which a memoised run's key does not hold)."""
    params = _params(fd.node)
    kept = {*params, *(_PLACED + p for p in params)}  # a rerun places them as this one did
    return {k: v for k, v in finals.items() if k in kept}


_RISKS = "_shapelint_risks"

# Calls whose result is a new list, dict or set (a copy of their argument at most).
_FRESH_CALLS = frozenset(
    {"list", "dict", "set", "OrderedDict", "defaultdict", "deque", "copy", "deepcopy"}
)
_FRESH_VALUES = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)


def _fresh(fn, name: str) -> bool:
    """Every binding of the local name is to a new list, dict or set (`xs = []`,
    `kw = dict(kw)`): changing it in place changes no object of the caller."""
    stores = [n for n in nodes_of(fn, ast.Name) if n.id == name and not isinstance(n.ctx, ast.Load)]
    fresh = 0
    for n in nodes_of(fn, (ast.Assign, ast.AnnAssign)):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target]
        if not any(isinstance(t, ast.Name) and t.id == name for t in targets):
            continue
        v = n.value
        f = v.func if isinstance(v, ast.Call) else None
        called = (
            f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        )
        if isinstance(v, _FRESH_VALUES) or called in _FRESH_CALLS:
            fresh += sum(isinstance(t, ast.Name) and t.id == name for t in targets)
    return fresh == len(stores)


def risks(fd) -> tuple[frozenset[str], bool]:
    """(the names fd changes in a way its run does not follow; whether it changes
    a local name that may hold a caller's object, `t = p; t.k = v`, or changes
    deep inside one: then any object it reached may have changed)."""
    deep, aliases = _risky(fd.node)
    return deep, bool(aliases)


def _risky(node) -> tuple[frozenset[str], frozenset[str]]:
    """(risks' first; the local names whose change makes it aliased)."""
    known = node.__dict__.get(_RISKS)
    if known is None:
        changed, _, deep = _direct(node)
        a = node.args
        own = {p.arg for p in (a.vararg, a.kwarg) if p is not None}  # new objects per call
        locals_ = _local_names(node) - set(_params(node))
        aliases = frozenset(
            n for n in changed & locals_ if n in deep or (n not in own and not _fresh(node, n))
        )
        known = (deep, aliases)
        setattr(node, _RISKS, known)
    return known


# finals' mark of a run that ran no change through a local alias (an
# identifier no Python name can be)
_NO_ALIAS_RAN = "<no alias changed>"
# finals' mark of a parameter whose changes deeper than a run follows of its own
# (`self.layers[i].update(k)`) the run placed, each, where the item is held
_PLACED = "<placed>"
# finals' mark of a parameter no statement of the run changed in place (its own
# source's stores, mutating calls and setattr on it did not run: a loop of no turn)
_UNCHANGED = "<unchanged>"

_ALIAS_STMTS = "_shapelint_alias_stmts"


def _changes(fn, names: frozenset[str]) -> Iterator[tuple[ast.stmt, bool, str, bool, ast.AST]]:
    """Each change fn's source makes in place of what one of names holds, as
    `_direct` reads a change (a store or deletion under the name, a mutating
    method called on it, setattr / delattr of it): (the statement of fn it counts
    at, whether it sits in a nested function or class, which counts at the
    statement that defines it, the name, whether it is deeper than a run follows,
    the node making it). A name a nested function binds is its own there."""
    stack: list[tuple[ast.AST, ast.stmt | None, bool, frozenset[str]]] = [
        (s, None, False, names) for s in fn.body
    ]
    while stack:
        node, at, frozen, watched_here = stack.pop()
        if isinstance(node, ast.stmt) and not frozen:
            at = node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            frozen = True
            watched_here = watched_here - _local_names(node)
        elif isinstance(node, ast.ClassDef):
            frozen = True
        # (the name changed, whether deeper than the run follows), as _direct reads it
        changed: list[tuple[str | None, bool]] = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.For)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            store = isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
            changed = [
                (_root(t), not (store and _followed(t)))
                for tt in targets
                for t in ast.walk(tt)
                if isinstance(t, (ast.Attribute, ast.Subscript))
            ]
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                changed.append((node.target.id, True))  # `xs += ys`: the caller's list
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in ("setattr", "delattr") and node.args:
                on_name = f.id == "setattr" and isinstance(node.args[0], ast.Name)
                changed = [(_root(node.args[0]), not on_name)]
            elif isinstance(f, ast.Attribute) and f.attr in MUTATORS and _is_super(f.value):
                changed = [(_params(fn)[0] if _params(fn) else None, False)]
            elif isinstance(f, ast.Attribute) and f.attr in MUTATORS:
                changed = [(_root(f.value), not isinstance(f.value, ast.Name))]
        if at is not None:
            for c, deeper in changed:
                if c in watched_here:
                    yield at, frozen, c, deeper, node
        stack.extend((c, at, frozen, watched_here) for c in ast.iter_child_nodes(node))


def _change_sites(fn, names: frozenset[str], every: bool = False) -> frozenset[int]:
    """The ids of fn's statements that change in place an object one of names
    holds (`_changes`)."""
    cache = fn.__dict__.setdefault(_ALIAS_STMTS, {})
    known = cache.get((names, every))
    if known is not None:
        return known
    # a change the run follows to a name bound only to new containers changes
    # no object another holds; a deeper one may (every: any change counts)
    sites = {
        id(at)
        for at, _, c, deeper, _ in _changes(fn, names)
        if every or deeper or not _fresh(fn, c)
    }
    known = cache[(names, every)] = frozenset(sites)
    return known


_DEEP_SITES = "_shapelint_deep_sites"


def _deep_sites(fn, name: str) -> dict[int, frozenset[int] | None]:
    """fn's statements (ids) that change what name holds deeper than a run follows
    of its own: the mutating calls on an item or attribute under it each makes
    (`self.layers[i].update(k)`, which `follow` may place through the item), or
    None where another change is made there (a deeper store, a deletion,
    setattr), which no run places."""
    cache = fn.__dict__.setdefault(_DEEP_SITES, {})
    known = cache.get(name)
    if known is None:
        changes = (c for c in _changes(fn, frozenset({name})) if c[3])
        known = cache[name] = _call_sites(changes, lambda node: isinstance(node, ast.Call))
    return known


def _call_sites(changes, call) -> dict[int, frozenset[int] | None]:
    """Each statement (id) of changes (`_changes`'s): the calls it makes them by
    where each is one call tells (outside a nested function), or None where
    another change is made there."""
    calls: dict[int, set[int]] = {}
    other: set[int] = set()
    for at, frozen, _, _, node in changes:
        if call(node) and not frozen:
            calls.setdefault(id(at), set()).add(id(node))
        else:
            other.add(id(at))
    known: dict[int, frozenset[int] | None] = {
        k: (None if k in other else frozenset(v)) for k, v in calls.items()
    }
    known.update({k: None for k in other})
    return known


def _placed_deep(fn, name: str, frame) -> bool:
    """Whether every change of fn's run to what name holds deeper than a run
    follows was placed: each such statement it ran makes mutating calls only, and
    `follow` placed each of them where the caller holds the item (frame.placed),
    never failing to (frame.unplaced)."""
    for sid, calls in _deep_sites(fn, name).items():
        if sid not in frame.ran:
            continue
        if calls is None or not all(c in frame.placed and c not in frame.unplaced for c in calls):
            return False
    return True


def alias_ran(fn, names: frozenset[str], frame) -> bool:
    """Whether the run in frame executed a statement of fn that changes in place
    what one of the local names may hold (frame.ran: the statements it ran)."""
    if not names:
        return False
    if isinstance(fn, ast.Lambda):
        return True  # one expression, no statement the run marks: it may have
    sites = _change_sites(fn, names)
    if not any(i in frame.ran for i in sites):
        return False
    # a method called on the alias whose change follow gave every holder of the
    # one object in the frame (`_through`), and the caller's holders a link, left
    # no holder stale
    calls = _alias_calls(fn, names)
    return any(
        i in frame.ran
        and (
            calls.get(i) is None
            or not all(c in frame.through and c not in frame.not_through for c in calls[i])
        )
        for i in sites
    )


def _alias_calls(fn, names: frozenset[str]) -> dict[int, frozenset[int] | None]:
    """fn's statements (ids) that change what one of names holds: the method calls
    right on the name each makes (`curr.update(k)`), or None where another change
    is made there."""
    cache = fn.__dict__.setdefault(_ALIAS_CALLS, {})
    known = cache.get(names)
    if known is None:
        known = cache[names] = _call_sites(_changes(fn, names), _on_name)
    return known


def _on_name(node: ast.AST) -> bool:
    """A method called right on a name (`curr.update(k)`)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
    )


_ALIAS_CALLS = "_shapelint_alias_calls"


def globals_before(an, fd) -> dict[str, tuple[dict, str, Value]]:
    """The changeable globals fd may change (every one it reads, where it changes
    what a local name may hold): name -> (the env of the file that defines it,
    the name there, its value before fd runs)."""
    owner = fd.owner or an
    local = _local_names(fd.node)
    names = changed_names(an, fd) - local
    if risks(fd)[1]:
        names = names | {n.id for n in nodes_of(fd.node, ast.Name)} - local
    out: dict[str, tuple[dict, str, Value]] = {}
    for g in names:
        env = module_state.defining_env(owner, g)
        if env is None:
            continue
        defined = module_state.defined_name(owner, g)
        if _changeable(owner, v := env.get(defined)):
            out[g] = (env, defined, v)
    return out


def _global_swaps(fd, before, placed, only: frozenset[str] | None = None) -> list[tuple]:
    """What fd's run left of the globals it may change. module_state owns them in
    a target run: one it bound anew in the file that defines it (`placed`: keys of
    module_state.keys_since) keeps that value, and only the other holders of the
    object as it was are forgotten; any other is unknown (a change it could not
    place, a memoised run that replayed none, a top level's), since what fd's own
    frame made of it is a copy that module_state did not see. A change through a
    local alias (`t = REG; t[k] = v`) makes even a placed value not the whole
    change, and so may one deeper down. only: the names fd's source changes,
    where its run ran no change through a local alias (the other globals it
    reads are as they were)."""
    deep, aliased = risks(fd)
    if only is not None:
        aliased = False
    swaps: list[tuple] = []
    for g, (env, defined, old) in before.items():
        if only is not None and g not in only:
            continue
        now = env.get(defined)
        # a deeper change (`CFG.sub.k = v`) may be one no store placed
        if (id(env), defined) in placed and not aliased and g not in deep:
            if now is not old:
                swaps.append((old, now, None, "", False, False, None))
            continue
        swaps.append((old, UNKNOWN, env, defined, True, True, None))
        if now is not old and now is not UNKNOWN:
            swaps.append((now, UNKNOWN, env, defined, True, True, None))
    return swaps


def follow(
    an, fd, node, recv, args, kwargs, frame, before, after, value: Value, placed_globals=frozenset()
) -> Value:
    """After fd ran for the call `node` (after: its finals, None where not known):
    each object it was handed and changed takes its value at fd's return in the
    caller's binding (`helper(layers)`, `cfg.set(4)`), or unknown where that value
    is not known; the globals it reached are module_state's (`_global_swaps`).
    Any other name, attribute or item holding the object (the analysis holds
    values: `b = a` holds a copy) is forgotten, so no alias is left stale; where
    the change is not known, so is everything the object holds (`s = cfg.sub`
    before `cfg.set_sub_k(4)`). The call's value, which may hold it too (`return
    xs` after `xs.append(t)`), comes back changed alike."""
    changed = changed_names(an, fd)
    deep, aliased = risks(fd)
    # a run that ran none of its changes through a local alias changed only what
    # its source names (its finals say so; a memoised run's do not)
    aliased = aliased and not (after is not None and _NO_ALIAS_RAN in after)
    if aliased or _deferred(fd.node):
        after = None
    after = after or {}
    owner = fd.owner or an
    swaps: list[tuple] = []
    # a mutating call on an item or attribute (`self.layers[i].update(k)`): whether
    # its change is placed where the caller holds the item (the caller's finals)
    func = node.func
    on_item = isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Name)
    on_name = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
    placed = False
    for name, (expr, old) in _handed(fd, node, recv, args, kwargs, frame.env).items():
        receiver = on_item and expr is func.value  # type: ignore[union-attr]
        receiver_name = on_name and expr is func.value  # type: ignore[union-attr]
        module_run = not _changeable(an, old) and name in changed and _module_run(an, old)
        if not _changeable(an, old) and not module_run:
            continue
        if _UNCHANGED + name in after and (after.get(name) is old or after.get(name) == old):
            # no statement of the run changed it, nor did a callee (which would
            # have rebound the name): checked before `deep`
            placed = placed or receiver
            continue
        if name in _augmented(fd.node):
            new = UNKNOWN  # `xs += [t]` extends the caller's list, and rebinds the name
        else:
            new = None if name in deep and _PLACED + name not in after else after.get(name)
        unknown = new is None or type(new) is not ObjectV or new.kind != old.kind
        if module_run and (unknown or new == old):
            # a module whose change the run does not know is left as it was, as
            # before modules were followed at all: forgetting it would lose its
            # layers and methods (a known gap: a stale attribute may be read)
            continue
        if new is None:
            if name not in changed and not aliased:
                placed = placed or receiver
                continue
            new = UNKNOWN
        elif new is old and _container(old):
            placed = placed or receiver
            continue  # a change to a list or dict makes a new value: none ran
        elif new is old or new == old:
            if name not in changed:
                placed = placed or receiver
                continue
            # a change its source makes that left it as it was: one the run may
            # not have applied (`obj[k] = v` on an object of a project class)
            new = UNKNOWN
        env, key, module = _binding(an, expr, old, frame)
        if env is None and expr is None and isinstance(node, ast.Call):
            env = item_paths.find_entry(node, name, old, frame)
        if module and module_state.importing_now():
            new = UNKNOWN  # a top level binds no change a function makes (module_state)
        placed = placed or (receiver and isinstance(env, item_paths.PATHS))
        through = _through_env(an, env, module, frame, old, new)
        if receiver_name and through is None:
            frame.not_through.add(id(node))  # (an alias's change, the caller's to place)
        swaps.append((old, new, env, key, new is UNKNOWN, module, through))
    if on_item and not an.trial:
        (frame.placed if placed else frame.unplaced).add(id(node))
    if on_name and not an.trial and id(node) not in frame.not_through:
        frame.through.add(id(node))
    swaps += _global_swaps(fd, before, placed_globals, None if aliased else changed)
    return _apply(an, owner, swaps, value)


def _module_run(an, v: Value) -> bool:
    """An nn.Module of a project class a target run holds (built, not being built):
    a method it calls changes it as it changes any object (`self.n = x.shape[-1]`
    in a helper the forward calls, read after it)."""
    if type(v) is not ObjectV or not v.kind.startswith("<class>"):
        return False
    cd = an.class_of(v.kind[len("<class>") :])
    return cd is not None and module_class(an, cd) is True


def _apply(an, owner, swaps, value: Value) -> Value:
    """Each (old object, its value now, binding env, key, deeply, whether env is a
    module's): the binding takes it (a module's through module_state, logged for
    the paths and the memos), every other holder of old is forgotten; the call's
    value with them."""
    if not swaps:
        return value
    an.outer_writes += 1
    if an.trial:
        return UNKNOWN  # a trial turn's stores are counted, not made (loops.same_each_turn)
    for old, new, env, key, deeply, module, through in swaps:
        held = {"": value}
        # the binding first: the write is logged with the value it replaces
        if module:
            module_state.write(env, key, new, an)
        elif isinstance(env, item_paths.PATHS):
            # the item's list, and the object holding it, are changed too: every
            # other holder of them (a caller's name for the object, which takes
            # the change back at the return) is forgotten
            for was, now in env.write(new):
                linked = _through(an, through, was, now)
                _forget_everywhere(an, owner, was, False, held, link=linked, keep=now)
            env = None
        elif env is not None:
            env[key] = new
        linked = _through(an, through, old, new)
        to = new if not deeply and type(new) is ObjectV and _module_run(an, old) else None
        _forget_everywhere(an, owner, old, deeply, held, also=env, to=to, link=linked, keep=new)
        value = new if value is old else held[""]  # an equal copy: maybe a new list
    return value


def _through_env(an, env, module: bool, frame, old: Value, new: Value) -> dict | None:
    """The names of frame, where the binding of a changed object of its own is
    there (a name, an item path, a spread entry) and new, known, stands for that
    one object now (built_objects.changed): every other holder of it in that frame
    takes new too (`_through`)."""
    if module or an.trial or type(new) is not ObjectV:
        return None
    if isinstance(env, item_paths.PATHS):
        names = env.frame_env()
    else:
        names = env
    if names is not frame.env or built_objects.changed(old, new) is None:
        return None
    return names


def same_object_changed(an, frame, old: Value, new: Value) -> bool:
    """old, held by a name of frame, was changed there into new by a store through
    the name (`self.keys = k`): where old is an object of its own, new stands for
    it, and every holder of it in the frame holds new (`_through`)."""
    if not an.specialize:
        return False
    return _through(an, frame.env, old, new) is not None


def _through(an, names: dict | None, old: Value, new: Value) -> Value | None:
    """old, an object of its own, is new now, changed where names (the frame that
    holds the binding) hold it: each of their holders of that one object (old
    itself, another value standing for it, or a link a callee's change left
    behind), at any depth, holds new; the link that the holders elsewhere keep
    instead (a frame of a caller, which takes the change back through its own
    binding at the return), or None where old is no such object."""
    if names is None:
        return None
    t = built_objects.changed(old, new)
    if t is None:
        return None
    joined_objects.renewed(old, new)
    memo: dict = {}
    for k, v in list(names.items()):
        got = _token_substituted(v, t, new, memo)
        if got is not v:
            names[k] = got
    return built_objects.link(joined_objects.either_of(new), t)


def _token_substituted(v: Value, t: int, new: Value, memo: dict) -> Value:
    """v with new wherever it holds object t (built_objects.holds), at any depth of
    items and attributes (_FLAT and _SHALLOW are no guide: a link is no holder
    there)."""
    return _substituted(v, lambda x: built_objects.holds(x, t), new, memo)


def forget_globals(an, fd, before, placed=frozenset(), frame=None) -> None:
    """After fd ran where no call names it (a constructor; before: globals_before
    it ran; frame: its run, where known): the module-level objects it may have
    changed, as `follow` leaves them."""
    only = None
    if frame is not None and not _ran_alias_change(fd, frame):
        only = changed_names(an, fd)
    _apply(an, fd.owner or an, _global_swaps(fd, before, placed, only), UNKNOWN)


def forget_handed(an, fd, args, kwargs, ran: bool = True, kept=frozenset()) -> None:
    """After a construction by fd (a constructor: self is the new instance) whose
    changes are not carried back: each object handed to it that it may change is
    unknown everywhere, with all it holds, but for the parameters in kept, which
    its run (or the memoised one's) surely left as they were (`left_unchanged`);
    where it did not run (a memoised construction, ran False) so is each global it
    may change (where it ran, construction.run_init left those as `forget_globals`
    does)."""
    changed = changed_names(an, fd) - kept
    aliased = risks(fd)[1] and not kept
    params = [a.arg for a in (*fd.node.args.posonlyargs, *fd.node.args.args)][1:]
    handed = [*zip(params, args), *kwargs.items()]
    olds = [v for p, v in handed if (aliased or p in changed) and _changeable(an, v)]
    owner = fd.owner or an
    _forget_all(an, owner, olds)
    if not ran:
        forget_globals(an, fd, globals_before(an, fd))


def left_unchanged(fd, frame) -> frozenset[str]:
    """The parameters of fd whose objects its run (frame) surely left as they were:
    no statement that may change one in place ran (`if downsample: kw["d"] = 1` on
    the path not taken), nor one changing what a local alias may hold; a change in
    a nested function counts where the def ran, and what a callee changes its own
    run forgets."""
    if _ran_alias_change(fd, frame):
        return frozenset()
    node = fd.node
    return frozenset(
        p
        for p in _params(node)
        if not any(i in frame.ran for i in _change_sites(node, frozenset({p}), every=True))
    )


def _closure_names(node):
    """(what its body changes in place, changed deeper down, its parameters, the
    names it binds itself)."""
    changed, _, deep = _direct(node)
    a = node.args
    params = [p.arg for p in (*a.posonlyargs, *a.args)]
    own = {*params, *(p.arg for p in (*a.kwonlyargs, a.vararg, a.kwarg) if p is not None)}
    return changed, deep, params, own | stored_names(node)


def closure_watch(an, node, frame) -> frozenset[str]:
    """The free names a closure's body changes in place (frame: the one that made
    it), whose values at its returns its run records (`exit_here`)."""
    changed, deep, _, own = _closure_names(node)
    spread = (_spread_kwargs(node), _spread_vararg(node))
    return frozenset(changed - own - deep) | frozenset(s for s in spread if s)


def _spread_vararg(node) -> str | None:
    """The `*args` parameter of a closure that never rebinds it (a wrapper's,
    handed on: `return func(*args, **kwargs)`)."""
    va = node.args.vararg
    if va is None or isinstance(node, ast.Lambda) or va.arg in stored_names(node):
        return None
    return va.arg


def _spread_kwargs(node) -> str | None:
    """The `**kw` parameter of a closure that never rebinds it (a wrapper's
    `**kwargs`, handed on: `return func(*args, **kwargs)`)."""
    kw = node.args.kwarg
    if kw is None or isinstance(node, ast.Lambda) or kw.arg in stored_names(node):
        return None
    return kw.arg


def follow_free(an, node, frame, inner, args, kwargs, caller=None, site=None) -> None:
    """After a closure's run (frame: the one that made it; inner: the run's own
    frame, a copy of frame's names): a free name it changed in place (`cache[k] =
    v`, `lambda: xs.append(t)`) takes its value at the run's return where frame
    (or the module) holds it, and every other holder of the object is forgotten;
    what it changes that its run does not follow, or of the objects it was
    handed, is unknown everywhere, with all it holds."""
    changed, deep, params, own = _closure_names(node)
    free = changed - own
    aliases = frozenset(
        n for n in changed if n in own and n not in params and (n in deep or not _fresh(node, n))
    )
    aliased = alias_ran(node, aliases, inner)  # a change through them that its run ran
    after = {} if aliased or inner.raised else finals(an, inner)
    if aliased:
        free |= {n.id for n in nodes_of(node, ast.Name)} - own  # a local may hold any of them
    unknown: list[Value] = []
    swaps: list[tuple[Value, Value, dict, str, bool]] = []
    for n in free:
        env, key = frame.env, n
        module = n not in frame.env or frame.env is an.module_env
        if module:  # a module-level name: bound through module_state, in its own file
            env, key = module_state.defining_env(an, n), module_state.defined_name(an, n)
            if env is None:
                continue
        old = env.get(key)
        if old is None or not _changeable(an, old):
            continue
        new = after.get(n)
        if new is old and _container(old):
            continue  # a change to a list or dict makes a new value: none ran
        if new is None or new is old or new == old or n in deep:
            unknown.append(old)
        elif module and module_state.importing_now():
            unknown.append(old)  # a top level binds no change a function makes
        else:
            swaps.append((old, new, env, key, module))
    unknown += [
        v
        for p, v in [*zip(params, args), *kwargs.items()]
        if (aliased or p in changed) and _changeable(an, v)
    ]
    handed = _handed_on(an, node, inner, after, args, kwargs, caller, site)
    if not (unknown or swaps or handed):
        return
    an.outer_writes += 1
    if an.trial:
        return
    for old in unknown:
        _forget_everywhere(an, an, old, True, {})
    _apply(an, an, handed, UNKNOWN)
    for old, new, env, n, module in swaps:
        # the cell's own object only: an equal one is most often another closure's
        # (`cache = dict()` in each call of a caching decorator)
        if module:
            module_state.write(env, n, new, an)
        else:
            env[n] = new
        _forget_everywhere(an, an, old, False, {}, identical=True)


def _handed_on(an, node, inner, after, args, kwargs, caller, site) -> list[tuple]:
    """The objects a closure was handed by keyword into its `**kw` and handed on
    to a call that changed them (`return func(*args, **kwargs)`): where the
    entry, at its return, is the very changed object that call's follow put
    there (item_paths.EntryPath), the caller's binding of the keyword takes it, as
    `follow` gives a parameter's change back."""
    if caller is None or not isinstance(site, ast.Call):
        return []
    swaps = _handed_on_positional(an, node, inner, after, args, caller, site)
    spread = _spread_kwargs(node)
    final = after.get(spread) if spread else None
    if type(final) is not ObjectV:
        return swaps
    exprs = {k.arg: k.value for k in site.keywords if k.arg is not None}
    for k, old in kwargs.items():
        new = final.attr(k)
        if new is old or not _changeable(an, old) or inner.entries.get((spread, k)) is not new:
            continue
        env, key, module = _binding(an, exprs.get(k), old, caller)
        if module and module_state.importing_now():
            new = UNKNOWN
        through = _through_env(an, env, module, caller, old, new)
        swaps.append((old, new, env, key, new is UNKNOWN, module, through))
    return swaps


through_property = module_state.through_property


def _handed_on_positional(an, node, inner, after, args, caller, site) -> list[tuple]:
    """As `_handed_on`, for the objects a closure was handed positionally into its
    `*args` and handed on (`func(*args, **kwargs)`): the item of the tuple, at its
    return, the very changed object the inner call's follow put there; the
    caller's argument written at that position takes it (a receiver bound
    before the call's own arguments, a method's self, comes first in args)."""
    spread = _spread_vararg(node)
    final = after.get(spread) if spread else None
    if not isinstance(final, TupleV) or any(isinstance(a, ast.Starred) for a in site.args):
        return []
    off = len(args) - len(site.args)
    if off < 0 or len(final.items) != len(args):
        return []
    swaps: list[tuple] = []
    for j, expr in enumerate(site.args):
        old, new = args[j + off], final.items[j + off]
        if (
            new is old
            or not _changeable(an, old)
            or inner.entries.get((spread, j + off)) is not new
        ):
            continue
        env, key, module = _binding(an, expr, old, caller)
        if module and module_state.importing_now():
            new = UNKNOWN
        through = _through_env(an, env, module, caller, old, new)
        swaps.append((old, new, env, key, new is UNKNOWN, module, through))
    return swaps


def forget_value(an, old: Value) -> None:
    """old was changed where no binding follows it: unknown wherever it is held."""
    if _changeable(an, old):
        _forget_everywhere(an, an, old, False, {})


def forget_reached(an, old: Value) -> None:
    """old, an object a name that may hold it (joined_objects.EitherV) changed, or
    led to where it may change unseen: unknown wherever it is held, with every
    list, dict and object it holds, and every object a join linked to it."""
    forget_held(an, old)
    if _forget_everywhere(an, an, old, True, {}, identical=True):
        an.outer_writes += 1  # (a holder outside the frame changed)


def settled(an, v: Value) -> Value:
    """v where it goes on outside a frame's names (a function's return joined over
    its returns, a module's attribute joined where paths meet): an EitherV there,
    read without either_uses, or memoised for calls handed other objects, is
    spent (each of its objects forgotten wherever held) and not known."""
    if type(v) is not joined_objects.EitherV:
        return v
    for one in joined_objects.spent(v):
        forget_reached(an, one)
    return UNKNOWN


def forget_held(an, old: Value, new: Value | None = None, frame=None) -> None:
    """old, a list, dict or plain object changed in place through one name (`xs =
    self.names; xs.append(n)`, `SEEN.append(d)`, `r[k] = v`, `xs += ys`): unknown
    wherever else the same object is held, in any frame, module or module being
    built (an attribute, an item), or as a def's default, which the change
    reaches in Python. By identity: an equal list elsewhere is most often
    another object (`[]`). A change that reaches no other holder is no store
    outside the frame (a loop that fills its own list stays the same each turn).
    new: the dict old is now, where the change is known (`r.setdefault(k, v)`,
    `r[k] = v`): in frame, the frame that made the change, every holder of that
    very object holds it (`r = self.cfg`, or the loop variable over `[self.cfg]`,
    changes `self.cfg`), as Python's one object is changed for all of them
    (`same_dict_changed`), and so do the modules being built. Only there: the
    frame's locals and those modules' attributes are forked and joined where the
    paths part and meet (instance_state.py), so a change made on one path of an
    undecided `if` is joined with the other's; a caller's frame is not, so its
    holders are forgotten (its names take the callee's objects back when the call
    returns)."""
    if new is not None:
        joined_objects.renewed(old, new)
    if not _changeable(an, old):
        return
    group = joined_objects.linked(old)
    if group is not None and len(group) > 1:
        # a join kept one of two objects for both paths: which one changed is not
        # known, so every holder of either is forgotten
        held = False
        for one in group:
            held = _forget_everywhere(an, an, one, False, {}, identical=True) or held
    else:
        if group is not None and frame is not None and same_dict_changed(an, old, new):
            memo: dict = {}  # one object under two names stays one object
            for env in (frame.env, *(r.attrs for r in aliasing.recorders())):
                for k, v in list(env.items()):
                    if isinstance(v, _HOLDERS):
                        env[k] = _substituted(v, lambda x: x is old, new, memo)
        # a holder elsewhere (`h.l = a`, `d = {"l": a}`) keeps a link to the object
        # as it is now: read, it is not known, and a change through it (`h.l.append(3)`)
        # changes the object the changing name holds, which is then forgotten too
        link = joined_objects.either_of(new) if new is not None else None
        held = _forget_everywhere(an, an, old, False, {}, identical=True, link=link)
    # a def's default object, which a parameter left at it holds (`acc=[]`)
    owners = {id(o): o for o in [an, *(f.func.owner for f in LIVE if f.func is not None)] if o}
    if defaults.changed(owners.values(), old, an) or held:
        an.outer_writes += 1


def _substituted(v: Value, gone, new: Value, memo: dict) -> Value:
    """v with new wherever it holds the object gone tells (an item of a list or
    tuple, an attribute of a plain object), at any depth; v itself where it holds
    none. An object of its own rebuilt so (built_objects) stands for its own
    object, changed."""
    if gone(v):
        return new
    if not isinstance(v, (TupleV, ObjectV)):
        return v
    got = memo.get(id(v))
    if got is not None:
        return got[1]
    res = v
    if isinstance(v, TupleV) and v.items:
        items = tuple(_substituted(i, gone, new, memo) for i in v.items)
        if any(a is not b for a, b in zip(items, v.items)):
            res = TupleV(items, v.kind)
    elif type(v) is ObjectV and v.attrs:
        attrs = tuple((k, _substituted(a, gone, new, memo)) for k, a in v.attrs)
        if any(a is not b for (_, a), (_, b) in zip(attrs, v.attrs)):
            res = ObjectV(v.kind, attrs)
            built_objects.changed(v, res)
    memo[id(v)] = (v, res)
    return res


def same_dict_changed(an, old: Value, new: Value) -> bool:
    """A plain dict changed in place into new, known, in a target run, outside a
    trial turn (whose stores are counted, not made: made there, a change would be
    made again by the turn that runs). Each dict display, `dict(...)` and copy the
    analysis evaluates is a value object of its own (builtins.fresh_copy), and a
    join that keeps one of two for both is linked to the other (joined_objects),
    so the holders of the very object old, linked to none, are the holders of the
    one dict Python changed; an equal dict elsewhere, another object, is left as
    it is."""
    return (
        an.specialize
        and not an.trial
        and new is not None
        and type(old) is ObjectV
        and old.kind == DICT_KIND
        and type(new) is ObjectV
        and new.kind == DICT_KIND
    )


def own_local(frame, name: str) -> bool:
    """name is a local of the function frame runs (a parameter or a name it binds),
    not a closure's cell or a global: a change through it is the frame's to place."""
    node = getattr(frame.func, "node", None)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return name in _local_names(node)


def forget_object(an, old: Value) -> None:
    """old, an object a store changed in place through a path of attributes
    (`self.config.mode = v`: a config, a dataclass, any object it holds), is
    unknown wherever else it is held, an equal value too."""
    if isinstance(old, ObjectV) and type(old) is ObjectV:
        _forget_everywhere(an, an, old, False, {})


def _forget_all(an, owner, olds: list[Value]) -> None:
    if not olds:
        return
    an.outer_writes += 1
    if an.trial:
        return
    for old in olds:
        _forget_everywhere(an, owner, old, True, {})


def _container(v: Value) -> bool:
    """A list or dict, whose every change the analysis applies makes a new value."""
    return isinstance(v, TupleV) or (type(v) is ObjectV and v.kind == DICT_KIND)


def _augmented(fn) -> frozenset[str]:
    """The names an augmented assignment rebinds (`xs += ys` extends a list in place)."""
    return frozenset(
        n.target.id for n in nodes_of(fn, ast.AugAssign) if isinstance(n.target, ast.Name)
    )


def _deferred(fn) -> bool:
    """A generator's or a coroutine's body runs when it is consumed, not at the
    call the analysis ran it at: what it changes is not known in between."""
    return isinstance(fn, ast.AsyncFunctionDef) or bool(nodes_of(fn, (ast.Yield, ast.YieldFrom)))


def _handed(
    fd, node: ast.Call, recv, args, kwargs, env: dict | None = None
) -> dict[str, tuple[ast.expr | None, Value]]:
    """Each parameter of fd: the caller's expression and the value it handed (env:
    the caller's names, where a spread `*args` hands them: an item of the tuple)."""
    out: dict[str, tuple[ast.expr | None, Value]] = {}
    shifted = False
    params = [a.arg for a in (*fd.node.args.posonlyargs, *fd.node.args.args)]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fd.node.decorator_list)
    if recv is not None and params and fd.cls is not None and not static:
        func = node.func
        # `obj.method(...)` hands obj; `obj(...)` (__call__, forward) hands obj itself
        on = func.value if isinstance(func, ast.Attribute) and func.attr == fd.node.name else func
        out[params[0]] = (on, recv)
        params = params[1:]
        shifted = True
    positional = list(node.args)
    starred = any(isinstance(a, ast.Starred) for a in positional)
    spread = _spread_args(positional)
    off = _spread_offset(spread, env, recv if shifted else None, len(args))
    for i, (p, v) in enumerate(zip(params, args)):
        if spread is not None and off is not None:  # `func(*args)`: an item of the tuple
            out[p] = (ast.Subscript(spread, ast.Constant(i + off), ast.Load()), v)
            continue
        out[p] = (None if starred else positional[i] if i < len(positional) else None, v)
    exprs = {k.arg: k.value for k in node.keywords if k.arg is not None}
    for k, v in kwargs.items():
        out[k] = (exprs.get(k), v)
    return out


def _spread_offset(spread: ast.Name | None, env: dict | None, recv, n: int) -> int | None:
    """Where the arguments of `func(*args)` start in the tuple: 1 where the tuple's
    first item is the receiver the call was bound to (an unbound method handed
    its instance first), 0 where the tuple holds the arguments alone; None where
    not known."""
    seq = env.get(spread.id) if spread is not None and env is not None else None
    if not isinstance(seq, TupleV):
        return None
    if recv is not None:
        return 1 if len(seq.items) == n + 1 and seq.items[0] is recv else None
    return 0 if len(seq.items) == n else None


def _spread_args(positional: list[ast.expr]) -> ast.Name | None:
    """The name of `func(*args)`, the call's one positional argument a spread name."""
    if len(positional) == 1 and isinstance(positional[0], ast.Starred):
        name = positional[0].value
        return name if isinstance(name, ast.Name) else None
    return None


def _binding(an, expr: ast.expr | None, old: Value, frame) -> tuple[dict | None, str, bool]:
    """Where the caller holds what it handed as expr: a name of its frame or of
    its module (the file that defines it: module_state's), or an attribute of a
    module being built; (None, "", False) elsewhere. The last: whether it is a
    module's name. `super()` (a base's method on the instance, `super().lazy(k)`)
    hands the frame's first parameter."""
    if expr is not None and _is_super(expr):
        node = getattr(frame.func, "node", None)
        params = _params(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else ()
        expr = ast.Name(params[0], ast.Load()) if params else None
    if isinstance(expr, ast.IfExp) and type(old) is ObjectV:
        # `cache if t else None`: an object no constant is came from the other arm
        if isinstance(expr.orelse, ast.Constant):
            expr = expr.body
        elif isinstance(expr.body, ast.Constant):
            expr = expr.orelse
    if isinstance(expr, ast.Name):
        k = expr.id
        if k in frame.env:
            held = frame.env[k]
            # unknown: forgotten by a callee's callee that changed it (`build(s)`
            # calling `grow(s)`), or linked to what it changed it into (forget_held);
            # fd's value at its return is the one it holds
            if held is old or held is UNKNOWN or type(held) is joined_objects.EitherV:
                return frame.env, k, frame.env is an.module_env
        else:
            env = module_state.defining_env(an, k)
            defined = module_state.defined_name(an, k)
            if env is not None and env.get(defined) is old:
                return env, defined, True
    elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        base = frame.env.get(expr.value.id)
        attrs = getattr(base, "attrs", None)
        if isinstance(attrs, dict) and attrs.get(expr.attr) is old:
            return attrs, expr.attr, False
    elif isinstance(expr, ast.Subscript) and frame.env is not an.module_env:
        path = item_paths.find(expr, old, frame.env, _changeable_in(an), frame.entries)
        if path is not None:
            return path, "", False
    return None, "", False


def _changeable_in(an):
    return lambda v: _changeable(an, v)


def _parts(an, v: Value) -> list[Value]:
    """v and the lists, dicts and plain objects it holds, at any depth."""
    out, seen = [v], {id(v)}
    for x in out:
        held = x.items if isinstance(x, (TupleV, SetV)) else x.attrs if type(x) is ObjectV else ()
        for h in held:
            h = h[1] if type(x) is ObjectV else h
            if isinstance(h, _HOLDERS) and id(h) not in seen:
                seen.add(id(h))
                out.append(h)
    return [p for p in out if p is v or _changeable(an, p)]


def _copy(v: Value, g: Value) -> bool:
    """v may be g's object held as another value: equal, and no tuple (equality
    ignores a TupleV's kind; a tuple is never the list a callee changed)."""
    return (
        type(v) is type(g)
        and not (isinstance(v, TupleV) and v.kind == "tuple")
        and v == g
        and not built_objects.distinct(v, g)
    )


# Values (immutable) that hold no list, dict or plain object, by id (the value kept,
# so that its id stays its own): a forgetting walk never enters them again.
_FLAT: dict[int, Value] = {}
# Lists, dicts and objects whose items and attributes are all such values.
_SHALLOW: dict[int, Value] = {}
_FLAT_MAX = 200_000
# How often the two tables were cleared: what forget_reach kept of an older
# generation no longer says what a walk visits.
_CLEARED = [0]
# A walk that visited fewer new values than this is not kept: walking it again
# costs about what keeping it would.
_KEEP_FROM = 16


# The values that hold others and may be changed in place (a set by `add`).
_HOLDERS = forget_reach.HOLDERS


def _flat(v: Value) -> bool:
    return not isinstance(v, _HOLDERS) or _FLAT.get(id(v)) is v


def _forget_everywhere(
    an,
    owner,
    old: Value,
    deeply: bool,
    held: dict,
    identical: bool = False,
    also=None,
    to=None,
    link: Value | None = None,
    keep: Value | None = None,
) -> bool:
    """old, and every value equal to it (a copy the analysis made of the same
    object), is unknown wherever a frame, a module or a module being built holds
    it, at any depth of items and attributes; deeply: every list, dict and object
    it holds too (the change may have been made to one of them). to: what old
    itself (by identity) becomes instead, where its new value is known (a module
    a target run holds: one object, which every holder sees changed). Whether
    any holder was changed. link: what a frame's name or a plain object holds of
    old instead of UNKNOWN (joined_objects.either_of its new value), which a module
    being built or a module's namespace, read without either_uses, never holds."""
    gone = _parts(an, old) if deeply else [old]
    ids = {id(g) for g in gone}  # gone holds them: their ids stay theirs
    # old's object, where it is one of its own (built_objects): every value standing
    # for it is gone too, but keep, what it is now
    same = built_objects.token(old) if type(old) is ObjectV else None
    kinds = {type(g) for g in gone}
    # the value kept: its id stays its own; one table where old becomes link, one
    # where it becomes UNKNOWN
    memos: tuple[dict[int, tuple[Value, Value]], dict[int, tuple[Value, Value]]] = ({}, {})
    gone_as = [UNKNOWN, memos[0]]  # what old becomes in the env walked, and its table

    def without(v: Value) -> Value:
        if not isinstance(v, _HOLDERS) or _FLAT.get(id(v)) is v:
            return v  # holds no list, dict or object
        memo = gone_as[1]
        got = memo.get(id(v))
        if got is not None:
            return got[1]
        res = v
        held = v.items if isinstance(v, (TupleV, SetV)) else ()
        if to is not None and v is old:
            res = to
        elif id(v) in ids:
            res = gone_as[0]
        elif same is not None and v is not keep and built_objects.token(v) == same:
            res = gone_as[0]  # another value of the one object (a walk rebuilt it)
        elif not identical and type(v) in kinds and any(_copy(v, g) for g in gone):
            res = UNKNOWN
        elif _SHALLOW.get(id(v)) is v:
            pass  # what it holds holds no list, dict or object
        elif isinstance(v, TupleV) and v.items:
            items = each(v.items)
            if items is not None:
                res = TupleV(items, v.kind)
        elif type(v) is ObjectV and v.attrs:
            held = tuple(a for _, a in v.attrs)
            got = each(held)
            if got is not None:
                res = ObjectV(v.kind, tuple(zip((k for k, _ in v.attrs), got)))
                # the one object still, known in part less: an object of its own
                # stays one (built_objects) in every holder the walk rebuilds
                built_objects.changed(v, res)
        if res is v and _SHALLOW.get(id(v)) is not v and all(_flat(h) for h in held):
            if len(_FLAT) + len(_SHALLOW) > _FLAT_MAX:
                _FLAT.clear()
                _SHALLOW.clear()
                _CLEARED[0] += 1
                forget_reach.drop()
            (_SHALLOW if _changeable(an, v) else _FLAT)[id(v)] = v
        memo[id(v)] = (v, res)
        return res

    def each(items: tuple) -> tuple | None:
        """items without old; None where none changed. An item that holds no list,
        dict or object is passed over without a call of without(), as its first
        test would (most do; on CPython 3.11 a call at a frame-stack chunk's edge
        maps a chunk)."""
        out = []
        changed = False
        for i in items:
            if isinstance(i, _HOLDERS) and _FLAT.get(id(i)) is not i:
                j = without(i)
                if j is not i:
                    changed = True
                out.append(j)
            else:
                out.append(i)
        return tuple(out) if changed else None

    def inside(v: Value) -> Value:
        """An object no other holder reaches (fresh.py): not old, but what it holds may be."""
        if type(v) is not ObjectV or not v.attrs:
            return v
        attrs = tuple((k, without(a)) for k, a in v.attrs)
        changed = any(a is not b for (_, a), (_, b) in zip(attrs, v.attrs))
        return ObjectV(v.kind, attrs) if changed else v

    try:
        # also: the env of the file that defines a global (module_state), walked too
        envs = {id(e): e for e in (held, an.module_env, owner.module_env, also or {})}
        own: dict[int, frozenset[str]] = {}
        apart = _BEFORE_TOP.get()
        for f in list(LIVE):
            if id(f) in apart:
                continue
            envs.setdefault(id(f.env), f.env)
            node = getattr(f.func, "node", None)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = fresh.unreachable_names(node)
                if names:  # (most functions have none: no new set per frame)
                    own[id(f.env)] = own.get(id(f.env), frozenset()) | names
        building = set()
        for r in aliasing.recorders():
            envs.setdefault(id(r.attrs), r.attrs)
            building.add(id(r.attrs))
        found = False
        # a module's names: what a pass of its own forgets there is put back after it
        modules_ = {id(an.module_env), id(owner.module_env), id(also)}
        generation = _CLEARED[0]
        copies = not identical
        for env in envs.values():
            kept = own.get(id(env), ())
            module = id(env) in modules_
            linked = link is not None and not module and id(env) not in building
            gone_as[0], gone_as[1] = (link, memos[1]) if linked else (UNKNOWN, memos[0])
            # a name holding no list, dict, object or set (most names) is left out in
            # one pass: without() and inside() both give it back unchanged
            for k, v in [(k, v) for k, v in env.items() if isinstance(v, _HOLDERS)]:
                if k in kept:
                    new = inside(v)
                elif _FLAT.get(id(v)) is v:
                    continue  # without's first test, without its call
                elif same is None and forget_reach.unchanged(
                    v, generation, ids, gone, copies, _copy
                ):
                    # what a walk would visit is kept, and none of it is old's (a walk
                    # for an object of its own also forgets the values of its token,
                    # which forget_reach does not index: such a walk is made)
                    continue
                else:
                    walked = len(gone_as[1])
                    new = without(v)
                    if (
                        new is v
                        and generation == _CLEARED[0]
                        and len(gone_as[1]) - walked >= _KEEP_FROM
                    ):
                        forget_reach.record(v, _FLAT, _SHALLOW, generation)
                if new is not v:
                    found = True
                    if module:
                        module_state.forgotten(env, k, v)
                    env[k] = new
                    if new is UNKNOWN and id(env) in building and plain.no_state(v):
                        # its contents are forgotten, not its type: a dict stays a dict,
                        # no module or Parameter of the module being built
                        plain.mark(env, k, True)
    finally:
        # without and each call each other through their cells: a reference cycle
        # holding the analyzer (an), which a batch analysis, its collector off,
        # would keep with the file's whole tree until a collection
        without = each = None  # type: ignore[assignment]
    return found


def _local_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """fn's parameters and the names it binds (Python's rule: local unless declared
    global)."""
    a = fn.args
    names = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    names |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
    declared = {g for n in nodes_of(fn, (ast.Global, ast.Nonlocal)) for g in n.names}
    return frozenset((names | stored_names(fn)) - declared)
