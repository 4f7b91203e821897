"""A subtree's nodes by type, walked once and kept: the checks that read a
function or a class whole (the names it binds, for SHP318's sizes and SHP319's
locals; its comparisons; the constructions SHP317 follows; whether it declares
`global`) share one walk of it, where each was an `ast.walk` of its own, paid
again at every analysis of the function (a method runs per caller and per pass).
Those walks had grown to about a sixth of a `check` run.

The index is kept on the subtree's root node, so it lives and dies with the tree.
It holds the root's descendants, never the root itself: a node holding itself
would be a reference cycle, and the driver frees each file's tree by reference
counting, not by the collector. The trees are never edited after parsing, so an
index never goes stale."""

from __future__ import annotations

import ast
import re
from typing import TypeVar

N = TypeVar("N", bound=ast.AST)

_ATTR = "_shapelint_nodes"
_STORED = "_shapelint_stored"


def nodes_of(root: ast.AST, kind: type[N] | tuple[type[N], ...]) -> list[N]:
    """root's descendants of kind, in `ast.walk` order (root itself included when
    it is of kind, first, as ast.walk yields it). Never of the leaves
    `_descendants` leaves out: asking for them is an error, not an empty list."""
    index = _index(root)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    found = index.get(kinds)
    if found is None:
        if any(issubclass(k, _LEAVES) for k in kinds):
            raise ValueError(f"the walks keep no {kinds}")
        if len(kinds) == 1 and not kinds[0].__subclasses__():
            found = index.get(kinds[0], [])  # a leaf type: its own list
        else:  # (listed once per kinds asked)
            found = [n for n in index[_ORDER] if isinstance(n, kinds)]
        index[kinds] = found
    return [root, *found] if isinstance(root, kinds) else list(found)


def nodes_in_class(cls: ast.ClassDef, kind: type[N]) -> list[N]:
    """cls's descendants of kind, method by method (not in ast.walk order): each
    method's index serves the method's own checks too, so the class is walked
    once, not once whole and again per method."""
    found: list[N] = []
    for child in ast.iter_child_nodes(cls):
        if isinstance(child, _FUNCTIONS):
            found.extend(nodes_of(child, kind))
        else:
            found.extend(n for n in (child, *_descendants(child)) if isinstance(n, kind))
    return found


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def stored_names(root: ast.AST) -> frozenset[str]:
    """Names that an `ast.Name` anywhere under root binds or deletes (any context
    but Load), nested scopes included."""
    known = root.__dict__.get(_STORED)
    if known is None:
        known = frozenset(
            n.id for n in _index(root).get(ast.Name, ()) if not isinstance(n.ctx, ast.Load)
        )
        setattr(root, _STORED, known)
    return known


_ORDER = object  # key of the full list, in walk order (no node type is `object`)


def sole_assignments(fn: ast.AST, name: str) -> list[ast.Assign]:
    """The statements `name = value` of fn, where they are every binding of the
    name in it (no augmented, unpacked, loop, `with`, walrus or other binding);
    empty otherwise."""
    binds = [n for n in nodes_of(fn, ast.Name) if n.id == name and not isinstance(n.ctx, ast.Load)]
    assigns = [
        a
        for a in nodes_of(fn, ast.Assign)
        if len(a.targets) == 1 and isinstance(a.targets[0], ast.Name) and a.targets[0].id == name
    ]
    return assigns if len(binds) == len(assigns) else []


def working_statements(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """fn's statements but bare constants (its docstring, an `...`), which do nothing."""
    return [
        s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]


def dotted_name(node: ast.expr | None) -> bool:
    """A name or a chain of attributes of one (`np.percentile`, `self.block`): read
    again, it runs no code of the project's but what reading it once runs (an
    attribute hook or property getter it reaches)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _index(root: ast.AST) -> dict[type, list]:
    index = root.__dict__.get(_ATTR)
    if index is None:
        order = _descendants(root)
        index = {_ORDER: order}
        for n in order:
            index.setdefault(type(n), []).append(n)
        setattr(root, _ATTR, index)
    return index


def descendants(root: ast.AST) -> list[ast.AST]:
    """root's descendants in `ast.walk` order (root left out, and the leaves
    `_descendants` leaves out), off its kept index: a check that reads a function
    whole again at each call (frame_locals, one_shot) shares the one walk. The list
    is the index's own: read it, never change it."""
    return _index(root)[_ORDER]


def walk(root: ast.AST) -> list[ast.AST]:
    """ast.walk(root) as a list, less the leaves `_descendants` leaves out, for a
    tree walked once (nothing kept)."""
    return [root, *_descendants(root)]


def children(node: ast.AST) -> list[ast.AST]:
    """ast.iter_child_nodes(node) as a list, in its order, without its generators."""
    out: list[ast.AST] = []
    node_type = ast.AST
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, node_type):
            out.append(value)
        elif isinstance(value, list):
            out.extend(item for item in value if isinstance(item, node_type))
    return out


def _descendants(*roots: ast.AST) -> list[ast.AST]:
    """ast.walk(root) without root and without the leaves that only say how a
    node is used (`Load`, `Store`, `Add`, `Eq`: its `ctx`, `op`, `ops`; a third of
    a tree, and nothing here asks for them), as a list: the same breadth-first
    order (the list is its own queue: a node is opened in the order it was
    found), at a third of ast.walk's cost. Of sibling roots: their descendants,
    level by level."""
    out = list(roots)
    found, found_all, fields, node_type = out.append, out.extend, _FIELDS, ast.AST
    for node in out:
        spec = fields.get(node.__class__)
        if spec is None:
            spec = fields[node.__class__] = _child_fields(node.__class__)
        for name, many in spec:
            value = getattr(node, name, None)
            if many:  # (a list may hold None: a `**` key of a dict, a keyword-only default)
                for item in value or ():  # (or be missing, in a node built by hand)
                    if item is not None:
                        found(item)
            elif many is None:  # a field whose type CPython does not declare
                if value.__class__ is list:
                    found_all(item for item in value if isinstance(item, node_type))
                elif isinstance(value, node_type):
                    found(value)
            elif value is not None:
                found(value)
    del out[: len(roots)]
    return out


def parents(root: ast.AST) -> dict[int, ast.AST]:
    """Each descendant's parent under root, by the descendant's id, kept on root:
    what `{id(c): n for n in ast.walk(root) for c in ast.iter_child_nodes(n)}`
    gives for every node but the leaves `_descendants` leaves out (shared
    singletons, `Load` and `Add`, whose one entry names no parent of theirs), at
    a third of its cost. Unlike the index, it holds root (its children's parent):
    a reference cycle, freed by the driver's collections, as one_shot's map,
    which it replaces, always was."""
    known = root.__dict__.get(_PARENTS)
    if known is None:
        known = parent_map(root)
        setattr(root, _PARENTS, known)
    return known


def parent_map(root: ast.AST) -> dict[int, ast.AST]:
    """parents(root), built afresh and not kept: for a tree read once (a map kept on
    its root holds the root, a cycle only the collector frees)."""
    known: dict[int, ast.AST] = {}
    queue = [root]
    found, fields, node_type = queue.append, _FIELDS, ast.AST
    for node in queue:
        spec = fields.get(node.__class__)
        if spec is None:
            spec = fields[node.__class__] = _child_fields(node.__class__)
        for name, many in spec:
            value = getattr(node, name, None)
            if many:
                for item in value or ():
                    if item is not None:
                        known[id(item)] = node
                        found(item)
            elif many is None:
                items = value if value.__class__ is list else (value,)
                for item in items:
                    if isinstance(item, node_type):
                        known[id(item)] = node
                        found(item)
            elif value is not None:
                known[id(value)] = node
                found(value)
    return known


_PARENTS = "_shapelint_parents"


def _child_fields(cls: type) -> tuple[tuple[str, bool | None], ...]:
    """The fields of cls that can hold nodes, in `_fields` order, each with whether
    it is a list (`stmt* body`) or one node or None (`expr? returns`); None where
    the type is not declared (each value then tested). Read off the ASDL signature
    CPython gives each node class as its docstring, so that a field of names or
    numbers (`identifier name`, `int level`, `constant value`) is never read at
    all, and a list's items need no type test."""
    signature = _SIGNATURE.match((cls.__doc__ or "").partition("\n")[0])
    declared: dict[str, str] = {}
    if signature and signature.group(1):
        for part in signature.group(1).split(", "):
            kind, _, name = part.rpartition(" ")
            declared[name] = kind
    spec: list[tuple[str, bool | None]] = []
    for name in cls._fields:
        kind = declared.get(name)
        if name in ("ctx", "op", "ops") or (kind and kind.rstrip("*?") in _NOT_NODES):
            continue
        spec.append((name, None if kind is None else kind.endswith("*")))
    return tuple(spec)


_FIELDS: dict[type, tuple[tuple[str, bool | None], ...]] = {}
_SIGNATURE = re.compile(r"\w+\((.*)\)$")
_NOT_NODES = frozenset({"identifier", "string", "int", "constant"})
_LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)


def attribute_copies(fn: ast.AST, receiver: str) -> frozenset[str]:
    """Names every binding of which in fn copies the receiver's attribute of that
    name: `heads = self.heads`, or an unpacking that puts it there by position
    (`b, c, h, w, heads = *x.shape, self.heads`: the last target takes the last
    item). Such a name holds what the attribute holds, not a size of its own."""
    copies: set[int] = set()
    for stmt in nodes_of(fn, ast.Assign):
        for target in stmt.targets:
            for name, value in _paired(target, stmt.value):
                if (
                    isinstance(value, ast.Attribute)
                    and isinstance(value.value, ast.Name)
                    and value.value.id == receiver
                    and value.attr == name.id
                ):
                    copies.add(id(name))
    bound: dict[str, bool] = {}
    for n in nodes_of(fn, ast.Name):
        if not isinstance(n.ctx, ast.Load):
            bound[n.id] = bound.get(n.id, True) and id(n) in copies
    return frozenset(k for k, every in bound.items() if every)


def _paired(target: ast.expr, value: ast.expr) -> list[tuple[ast.Name, ast.expr]]:
    """(name, the expression it takes) for the names of target that a tuple or list
    display of value puts in place by position; an unpacking the display does not
    line up with is left out."""
    if isinstance(target, ast.Name):
        return [(target, value)]
    displays = (ast.Tuple, ast.List)
    if not isinstance(target, displays) or not isinstance(value, displays):
        return []
    if any(isinstance(t, ast.Starred) for t in target.elts):
        return []
    items = value.elts
    stars = [i for i, v in enumerate(items) if isinstance(v, ast.Starred)]
    if len(stars) > 1:
        return []
    if stars:  # the items after the one spread take the last targets
        tail = items[stars[0] + 1 :]
        head = items[: stars[0]]
        if len(target.elts) < len(head) + len(tail):
            return []
        pairs = list(zip(target.elts, head, strict=False))
        if tail:
            pairs += list(zip(target.elts[-len(tail) :], tail, strict=True))
    elif len(items) == len(target.elts):
        pairs = list(zip(target.elts, items, strict=True))
    else:
        return []
    return [p for t, v in pairs for p in _paired(t, v)]


def module_bindings(tree: ast.Module) -> dict[str, int]:
    """How many statements of the module's top level bind each name."""
    known = tree.__dict__.get(_BINDINGS)
    if known is not None:
        return known
    out: dict[str, int] = {}
    for stmt in tree.body:
        names: list[str] = []
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in stmt.names]
        else:
            names += [n.id for n in nodes_of(stmt, ast.Name) if not isinstance(n.ctx, ast.Load)]
        for n in names:
            out[n] = out.get(n, 0) + 1
    setattr(tree, _BINDINGS, out)
    return out


_BINDINGS = "_shapelint_bindings"
