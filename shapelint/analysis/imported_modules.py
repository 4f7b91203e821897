"""A name that surely holds a module object (`try: import torch.fft as new_fft`
`except ImportError: new_fft = None`, then `if new_fft is None:`): a module is
never None, so the test is decided.

In a target run the import map takes a module-level import of a module that is
found (the project's, an installed package's, the standard library's) to hold, and
a handler's rebinding of its name to be dead (imports.py; failed_imports.py takes
the handler where the module is absent). The name holds the module where a plain
`import` statement of the module's top level (in an `if`, `try` or `with` block
included) binds it, no `from` import binds it there, the map still names that
module for it, and neither the running frame nor the module's names hold a value
of its own for it (a handler that ran, an assignment)."""

from __future__ import annotations

import ast

from shapelint.analysis import may_raise

_BLOCKS = (ast.If, ast.Try, ast.With)


def holds_module(an, node: ast.expr, frame) -> bool:
    if not (an.specialize and isinstance(node, ast.Name)):
        return False
    name = node.id
    if name in frame.env or name in frame.locals:
        return False
    if frame.func is not None and name in frame.local_imports:
        return False  # a function's own import (a module-level frame lists the module's)
    if name in an.module_env:
        return False
    qual = an.imports.names.get(name)
    if qual is None:
        return False
    modules = _bound_by(an.tree, name)
    return modules == {qual} and may_raise.importable(an, qual)


def _bound_by(tree: ast.Module, name: str) -> set[str | None]:
    """The modules the module's top-level imports bind name to (None for a `from`
    import of it)."""
    found: set[str | None] = set()
    stack = list(tree.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if (a.asname or a.name.split(".")[0]) == name:
                    found.add(a.name if a.asname else a.name.split(".")[0])
        elif isinstance(stmt, ast.ImportFrom):
            if any((a.asname or a.name) == name for a in stmt.names):
                found.add(None)
        elif isinstance(stmt, _BLOCKS) or type(stmt).__name__ == "TryStar":
            for field in ("body", "orelse", "finalbody"):
                stack.extend(getattr(stmt, field, []))
            for h in getattr(stmt, "handlers", []):
                stack.extend(h.body)
    return found
