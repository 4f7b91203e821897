"""What `from m import *` binds, read from the modules' text (target runs).

Python's rule: the names of m's `__all__` where m defines it, else every name of
m's namespace that does not start with `_`, as m's top level left it, what its own
star imports bound included. tsai's models hold `from ..imports import *`,
`from ..utils import *` and `from .layers import *`, each module a chain of more.

The import statements' text decides it, module by module, without running any
top level: loading every module along a chain of star imports only to learn which
names it binds ran each one's top level and what that reads (tsai.utils alone
reads scipy.stats and matplotlib, 5 s of a 10 s budget). Each name is bound to
what the module that binds it last holds: a name a module binds by one import at
its top level, with nothing after it that may bind it again, is that import's
target (`import torch.nn as nn` gives `torch.nn`); any other binding (a def, a
class, an assignment, one under an `if` or a `try`, a name a function declares
`global`, one a later star import may bind again) is the module's own name
(`tsai.models.layers.Transpose`), whose analyzer decides its value when the name
is read, and only then is that module loaded.

A star import of a module no project root holds (an installed package's, as
tsai's `from fastai.torch_core import *`) binds nothing here, as before: its
module's top level would be run for the first name read, and fastai.torch_core's
costs 7 s (benchmarks/README, Session 35: star35). Nor does one whose names are
not known (an `__all__` not written out, no source, an import cycle), as
project.py's `star_names` binds nothing for it in a file's check; a module that
may write its namespace otherwise (`globals()`, `exec`) binds the names its text
binds, each its own, and no other.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from shapelint import pyparse
from shapelint.analysis.bindings import Bindings
from shapelint.analysis.imports import relative_module

MAX_DEPTH = 16  # star imports followed through this many modules at most

# A binding: (module, attribute) for `module.attribute`, (module, None) for the module.
Bound = tuple[str, "str | None"]


@dataclass
class _Index:
    """One module's top-level bindings in order, from its text."""

    listed: tuple[str, ...] | None = None  # a literal `__all__`
    all_unread: bool = False  # an `__all__` not written out: its names not known
    open: bool = False  # the module writes its namespace by other ways (globals(), exec)
    declared: frozenset[str] = frozenset()  # names its functions declare global
    # ("bind", name, target or None), ("bind?", name, None) for one in a block, and
    # ("star", module, None), in the order the top level runs them
    entries: list[tuple[str, str, Bound | None]] = field(default_factory=list)


class StarExports:
    """The names star imports bind, for one target run's modules. locate(module)
    is the module's source file along the roots, None where they hold none."""

    def __init__(self, locate: Callable[[str], str | None]):
        self.locate = locate
        self.indexes: dict[str, _Index | None] = {}
        self.memo: dict[str, dict[str, Bound] | None] = {}

    def exports(self, mod: str, depth: int = 0) -> dict[str, Bound] | None:
        """name -> binding, for every name `from mod import *` binds; None where
        those names are not known."""
        if mod in self.memo:
            return self.memo[mod]
        self.memo[mod] = None  # a cycle through mod sees nothing known
        got = self._exports(mod, depth)
        self.memo[mod] = got
        return got

    def _exports(self, mod: str, depth: int) -> dict[str, Bound] | None:
        idx = self.index(mod)
        if idx is None or idx.all_unread or depth > MAX_DEPTH:
            return None
        if idx.listed is not None:
            # `__all__` lists the names, whatever else binds them there
            return {n: last_binding(idx, mod, n) for n in idx.listed}
        out: dict[str, Bound] = {}
        for kind, n, target in idx.entries:
            if kind == "star":
                out.update(self.exports(n, depth + 1) or {})
            else:
                out[n] = target if kind == "bind" and target is not None else (mod, n)
        for n in set(out) if idx.open else idx.declared & set(out):
            out[n] = (mod, n)  # the module may bind it again: its analyzer decides
        return {n: b for n, b in out.items() if not n.startswith("_")}

    def index(self, mod: str) -> _Index | None:
        if mod not in self.indexes:
            path = self.locate(mod) if mod else None
            self.indexes[mod] = None if path is None else read_index(path, mod)
        return self.indexes[mod]


def last_binding(idx: _Index, mod: str, name: str) -> Bound:
    """What module mod's name holds once its top level ran: one import at the top
    level itself that nothing after it may bind again gives its target; anything
    else mod's own name."""
    if name in idx.declared:
        return (mod, name)
    for kind, n, target in reversed(idx.entries):
        if kind == "star":
            return (mod, name)
        if n == name:
            return target if kind == "bind" and target is not None else (mod, name)
    return (mod, name)


def read_index(path: str, mod: str) -> _Index | None:
    from shapelint.analysis.source import DecodeFailure, decode_source

    try:
        with open(path, "rb") as f:
            tree = pyparse.parse(decode_source(f.read()), filename=path)
    except (OSError, DecodeFailure, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    b = Bindings(tree)
    idx = _Index(open=_writes_namespace(tree), declared=frozenset(b.declared))
    is_pkg = os.path.basename(path) == "__init__.py"
    idx.entries = _entries(tree, mod.split(".") if is_pkg else mod.split(".")[:-1])
    if any(kind != "star" and n == "__all__" for kind, n, _ in idx.entries):
        listed = _literal_all(tree)
        idx.all_unread = listed is None
        idx.listed = None if listed is None else tuple(listed)
    return idx


# The builtins and attributes through which code reaches a module's namespace as a
# dict, and may bind any name in it. (bindings.py's doors also count the ways to the
# module object, `sys.modules`, `import_module`, on which only a setattr would bind
# a name: the names a star import finds are read off the text here.)
_WRITERS = frozenset({"globals", "locals", "vars", "exec", "eval", "__builtins__"})
_WRITING_ATTRIBUTES = frozenset({"__globals__", "f_globals"})


def _writes_namespace(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _WRITERS:
            return True
        if isinstance(node, ast.Attribute) and node.attr in _WRITING_ATTRIBUTES:
            return True
    return False


def _literal_all(tree: ast.Module) -> list[str] | None:
    """The names of a module's one `__all__ = [...]` of string literals; None for
    any other way of writing it (`+=`, a computed list, two assignments)."""
    found: list[str] | None = None
    for stmt, _ in _top_level(tree):
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            targets = [stmt.target]
        else:
            continue
        if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        value = stmt.value
        if found is not None or isinstance(stmt, ast.AugAssign) or len(targets) != 1:
            return None
        if not isinstance(value, (ast.List, ast.Tuple)) or not all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
        ):
            return None
        found = [e.value for e in value.elts]  # type: ignore[attr-defined]
    return found


def _entries(tree: ast.Module, package: list[str]) -> list[tuple[str, str, Bound | None]]:
    """The module's top-level bindings in the order its text makes them."""
    out: list[tuple[str, str, Bound | None]] = []
    for stmt, nested in _top_level(tree):
        bind = "bind?" if nested else "bind"
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                root = alias.name.split(".")[0]
                name, target = (alias.asname, alias.name) if alias.asname else (root, root)
                out.append((bind, name, (target, None)))
        elif isinstance(stmt, ast.ImportFrom):
            source = relative_module(stmt, package) if stmt.level else stmt.module
            for alias in stmt.names:
                if alias.name == "*":
                    # past the top, Python raises: a module no file holds
                    out.append(("star", source or "", None))
                else:
                    target = (source, alias.name) if source else None
                    out.append((bind, alias.asname or alias.name, target))
        else:
            out.extend((bind, n, None) for n in Bindings(ast.Module([stmt], [])).sites)
    return out


def _top_level(tree: ast.Module):
    """(statement, whether it sits in a block) for the statements the module's top
    level runs, in order, into `if` / `try` / `with` blocks (each branch's, as
    either may run), never under `if TYPE_CHECKING:`."""
    stack = [(s, False) for s in reversed(tree.body)]
    while stack:
        stmt, nested = stack.pop()
        if isinstance(stmt, ast.If):
            test = stmt.test
            name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
            body = stmt.orelse if name == "TYPE_CHECKING" else stmt.body + stmt.orelse
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            body = stmt.body + [s for h in stmt.handlers for s in h.body]  # type: ignore[attr-defined]
            body += stmt.orelse + stmt.finalbody  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.With):
            yield stmt, nested  # its `as` names; its body's read below
            body = stmt.body
        else:
            yield stmt, nested
            continue
        stack.extend((s, True) for s in reversed(body))
