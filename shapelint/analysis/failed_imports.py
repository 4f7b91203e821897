"""Imports that surely fail where a `try` waits for them (target runs).

`try: from apex.normalization import FusedLayerNorm as LayerNorm` / `except
ImportError: class LayerNorm(nn.Module): ...` binds the handler's class wherever
apex is not installed: the import raises ModuleNotFoundError, the handler
catches it. A target run decides it as Python does on this interpreter, the one
whose packages it reads as source (installed.py) and whose `find_spec` it
answers (installed.find_spec): an absolute import whose top-level package no
project root and no entry of sys.path holds, in any form, surely raises. Only
an import directly in the body of a `try` one of whose handlers surely catches
ModuleNotFoundError (the first that does not surely let it pass) is decided so:
an unguarded import of a package not installed here is taken to hold, as before
(a project read without its dependencies installed would otherwise lose every
name it imports), and so is one whose package is found, whatever it defines.
"""

from __future__ import annotations

import ast

from shapelint.analysis import installed, raising

EXC = "ModuleNotFoundError"


def taken(an, stmt: ast.Try) -> tuple[int, ast.ExceptHandler] | None:
    """(index in stmt's body of the import that surely fails, the handler that
    surely catches it), or None where the body's imports are taken to hold."""
    if not an.specialize:
        return None
    handler = _catching(stmt.handlers)
    if handler is None:
        return None
    for i, sub in enumerate(stmt.body):
        if isinstance(sub, (ast.Import, ast.ImportFrom)) and _absent(an, sub):
            return i, handler
    return None


def mark(an, stmt: ast.Try) -> None:
    """Note the import of stmt's body that surely fails (exec_import raises there)."""
    found = taken(an, stmt)
    if found is not None:
        an.failing_imports.add(id(stmt.body[found[0]]))


def fails(an, stmt: ast.Import | ast.ImportFrom) -> bool:
    return an.specialize and id(stmt) in an.failing_imports


def _catching(handlers: list[ast.ExceptHandler]) -> ast.ExceptHandler | None:
    """The handler Python runs for ModuleNotFoundError, where it is surely known."""
    for h in handlers:
        hit = raising.catches(h.type, EXC)
        if hit is not False:
            return h if hit else None
    return None


def _absent(an, stmt: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(stmt, ast.ImportFrom):
        if stmt.level or not stmt.module:
            return False  # relative: the package may bind the name itself
        names = [stmt.module]
    else:
        names = [a.name for a in stmt.names]
    # `import a, b` raises at the first absent one: before it, a binds; the
    # statement is decided only where its first module is the absent one
    return _module_absent(an, names[0])


def _module_absent(an, modname: str) -> bool:
    top = modname.partition(".")[0]
    proj = an.project
    if proj is None or an.project_root is None:
        return False  # the roots a script runs from are not known here
    if proj.find(an.project_root, top)[1]:
        return False
    return installed.absent(top)
