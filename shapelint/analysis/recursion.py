"""Constructions Python can never finish: a class whose `__init__` builds the
class again (or a class that builds it back) whenever it runs.

`self.child = M(dim)` at the top of `M.__init__`, before any statement that may
return or raise, runs on every construction of M whatever the arguments, so
building one M builds another, for ever: Python raises RecursionError. The same
holds around a cycle (A builds B, B builds A) and through `super().__init__(...)`
of a base that does. Only statements that surely run count (unify's
`runs_unconditionally`): `if depth > 0: self.child = M(depth - 1)` ends, and a
chain nested too deeply to follow is a depth limit (a lower bound), never this
error. Classes of one file, named by their plain name (not rebound in `__init__`)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis.attributes import base_classes, find_method
from shapelint.analysis.nodes import nodes_of, stored_names
from shapelint.analysis.unify import runs_unconditionally

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef

CODE = "SHP317"


def endless(
    an: Analyzer, cd: ClassDef, known: dict[str, list] | None = None
) -> tuple[ast.Call, str] | None:
    """(the construction that closes the cycle, the message) when building cd
    never ends; None when it may. known: the constructions found so far, by class
    key, for a caller that asks of every class of a file: each class's constructor
    is then read once, not once per class whose constructions reach it."""
    return _walk(an, cd, [cd.name], set(), {} if known is None else known)


def _walk(an: Analyzer, cd: ClassDef, chain: list[str], seen: set[str], known: dict):
    if cd.name in seen:
        return None  # looked at on another path: no cycle back to the chain there
    seen.add(cd.name)
    built = known.get(cd.key)
    if built is None:
        built = known[cd.key] = _sure_constructions(an, cd)
    for call, target in built:
        if target.name in chain:
            cycle = [*chain[chain.index(target.name) :], target.name]
            what = (
                f"building {target.name} builds {target.name} again"
                if len(cycle) == 2
                else f"building {target.name} builds " + " -> ".join(cycle[1:])
            )
            return call, (
                f"{what} whatever the arguments: Python raises RecursionError "
                "(the construction never ends)"
            )
        found = _walk(an, target, [*chain, target.name], seen, known)
        if found is not None:
            return found
    return None


def _sure_constructions(an: Analyzer, cd: ClassDef) -> list[tuple[ast.Call, ClassDef]]:
    """The classes of this file that cd's constructor surely builds (through the
    base constructors `super().__init__` surely runs), with the calls that build them."""
    out: list[tuple[ast.Call, ClassDef]] = []
    init = find_method(an, cd, "__init__")
    for _ in range(16):  # a chain of super().__init__ up the bases
        if init is None or (init.owner is not None and init.owner is not an):
            break
        body = init.node.body
        base_next = None
        # Only a call in a simple statement of the body can run unconditionally
        # (runs_unconditionally says which): read off the constructor's kept walk,
        # which its run has made, in the walk order of those statements.
        for node in nodes_of(init.node, ast.Call):
            f = node.func
            own = isinstance(f, ast.Name) and f.id in an.classes
            up = (
                isinstance(f, ast.Attribute)
                and f.attr == "__init__"
                and isinstance(f.value, ast.Call)
                and isinstance(f.value.func, ast.Name)
                and f.value.func.id == "super"
                and init.cls is not None
            )
            if not (own or up) or not runs_unconditionally(body, node):
                continue
            if own and f.id in _bound_names(init.node):  # type: ignore[union-attr]
                continue  # a local of that name, not the class
            if own:
                out.append((node, an.classes[f.id]))  # type: ignore[union-attr]
            else:
                base_next = next(
                    (
                        found
                        for base in base_classes(an, init.cls)
                        if (found := find_method(an, base, "__init__")) is not None
                    ),
                    None,
                )
        init = base_next
    return out


def _bound_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """Names the function binds itself (parameters, assignments, imports): a class
    name among them is not the class. Kept on the node: read once per construction
    of a class of the file, for each class whose constructor is checked."""
    known = fn.__dict__.get(_BOUND)
    if known is None:
        known = frozenset(_names_bound(fn))
        setattr(fn, _BOUND, known)
    return known


_BOUND = "_shapelint_bound"


def _names_bound(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    names |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
    names |= stored_names(fn)
    for kind in (ast.Import, ast.ImportFrom):
        for node in nodes_of(fn, kind):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        for node in nodes_of(fn, kind):
            if node is not fn:
                names.add(node.name)
    return names
