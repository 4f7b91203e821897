"""`globals()` read with a known key: the module's own binding of that name.

`globals().get(name)` and `globals()[name]` look the name up in the namespace of
the module whose code runs, as a bare read of the name there does when no local
or enclosing name shadows it: a registry that hands back a class by its string
(`cls = globals().get(identifier)`, with `free = FreeFB` at the top) gives that
class, whose methods then run. globals() holds no builtins, so only a name the
module binds by a top-level statement (an import, a def, a class, an
assignment, under a module-level if / try / with / for too) is read so; any
other key (one a star import or a write through `globals()` may add) stays
unknown. A write through `globals()` (`globals().update(...)`, `globals()[k] =
v`, any use but a read by key) may rebind any name: outside a function body it
runs at import, and the module's keys all stay unknown; in a function (a
`register(cls)` beside the registry) it changes the namespace when the function
runs, as a `global` statement's store does, so a run that evaluated one
(ModuleAnalyzer.globals_written) reads no key from then on.

`sys.modules[__name__]` at a file's top level is that module's own object (a name
every binding of which is that expression, `module = sys.modules[__name__]`, too):
`setattr(module, name, v)` through it binds the global `name` of the file, as a
store through `globals()` does, and no attribute of any instance, tensor or class
(`own_module`, `store`: PIL's `setattr(module, item.name, item.value)` over its
enums' members). Like a write through `globals()`, a store of a name not known
leaves the module's keys unknown, not the names its statements bound before.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import imports, unbound
from shapelint.analysis.nodes import nodes_of, sole_assignments, stored_names
from shapelint.ops.values import UNKNOWN, StrV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, Frame

_READABLE = "_shapelint_globals_readable"
_NON_ASSIGNED = "_shapelint_non_assigned"
_BLOCKS = (ast.If, ast.Try, ast.With, ast.For, ast.While)


def is_globals_call(an: Analyzer, node: ast.expr, frame: Frame) -> bool:
    """Whether node is a call of the builtin globals() (no name shadows it)."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "globals"
        and not node.args
        and not node.keywords
    ):
        return False
    return "globals" not in frame.env and "globals" not in _readable(an.tree)[0]


def own_module(an: Analyzer, node: ast.expr, frame: Frame) -> bool:
    """Whether node, evaluated at the file's top level, is the file's own module
    object: `sys.modules[__name__]` (sys the standard module, `__name__` never
    rebound), or a name that the file binds only to that, by plain assignments."""
    if frame.func is not None:
        return False
    if isinstance(node, ast.Name) and node.id not in _non_assigned(an.tree):
        assigns = sole_assignments(an.tree, node.id)
        return bool(assigns) and all(_is_own_module(an, a.value) for a in assigns)
    return _is_own_module(an, node)


def _is_own_module(an: Analyzer, node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Name)
        and node.slice.id == "__name__"
        and "__name__" not in stored_names(an.tree)
        and "__name__" not in _non_assigned(an.tree)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "modules"
        and an.imports.resolve(node.value) == "sys.modules"
    )


def _non_assigned(tree: ast.Module) -> frozenset[str]:
    """The names the file binds otherwise than by a Name target (import, def,
    class, global): `sole_assignments` does not see those."""
    known = tree.__dict__.get(_NON_ASSIGNED)
    if known is None:
        names = {
            alias.asname or alias.name.partition(".")[0]
            for kind in (ast.Import, ast.ImportFrom)
            for imp in nodes_of(tree, kind)
            for alias in imp.names
        }
        for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            names.update(n.name for n in nodes_of(tree, kind))
        names.update(n for g in nodes_of(tree, ast.Global) for n in g.names)
        known = frozenset(names)
        setattr(tree, _NON_ASSIGNED, known)
    return known


def store(an: Analyzer, name: str | None, value: Value, frame: Frame) -> None:
    """`setattr(own_module, name, value)` at the file's top level: the global
    `name` bound as an assignment binds it; a name not known may be any key."""
    if name is None:
        an.outer_writes += 1  # the namespace outlives a trial turn's frame
        if not an.trial:
            an.globals_written = True
        return
    frame.env[name] = value
    frame.locals.add(name)


def read(an: Analyzer, key: Value, at: ast.expr, frame: Frame, d: int) -> Value | None:
    """What `globals()[key]` gives in the module of an, or None where it is not
    known here (the caller says unknown)."""
    if not (isinstance(key, StrV) and isinstance(key.value, str)):
        return None
    name = key.value
    bound, only_reads = _readable(an.tree)
    if not only_reads or an.globals_written or name not in bound:
        return None
    if frame.func is not None and (
        name in frame.env
        or name in frame.local_imports
        or name in unbound.bound_anywhere(frame.func.node)
    ):
        return None  # a bare read would see a local or an enclosing name
    node = ast.copy_location(ast.Name(name, ast.Load()), at)
    value = an.eval(node, frame, d)
    return None if value is UNKNOWN else value


def _readable(tree: ast.Module) -> tuple[frozenset[str], bool]:
    """(the names the module's top-level statements bind, whether every globals()
    that runs at import, outside a function body, is read by key), once per tree."""
    known = tree.__dict__.get(_READABLE)
    if known is None:
        known = (frozenset(_top_level_names(tree)), _only_reads(tree))
        setattr(tree, _READABLE, known)
    return known


def _top_level_names(tree: ast.Module):
    stack = list(tree.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield stmt.name
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                if alias.name != "*":
                    yield alias.asname or alias.name.partition(".")[0]
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                yield from imports.bound_names(target)
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and getattr(stmt, "value", None):
            yield from imports.bound_names(stmt.target)
        if isinstance(stmt, _BLOCKS):
            stack.extend(stmt.body + getattr(stmt, "orelse", []))
            if isinstance(stmt, (ast.For, ast.With)):
                targets = (
                    [stmt.target]
                    if isinstance(stmt, ast.For)
                    else [i.optional_vars for i in stmt.items if i.optional_vars is not None]
                )
                for target in targets:
                    yield from imports.bound_names(target)
            if isinstance(stmt, ast.Try):
                stack.extend(stmt.finalbody)
                stack.extend(s for h in stmt.handlers for s in h.body)


def _only_reads(tree: ast.Module) -> bool:
    in_functions = {
        id(n)
        for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
        for fn in nodes_of(tree, kind)
        for n in ast.walk(fn)
    }
    reads = {id(s.value) for s in nodes_of(tree, ast.Subscript) if isinstance(s.ctx, ast.Load)}
    reads.update(id(a.value) for a in nodes_of(tree, ast.Attribute) if a.attr == "get")
    return all(
        id(call) in reads or id(call) in in_functions
        for call in nodes_of(tree, ast.Call)
        if isinstance(call.func, ast.Name) and call.func.id == "globals"
    )
