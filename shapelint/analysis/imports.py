"""Import resolution: which local names stand for einops, torch, numpy, jaxtyping.

We resolve imports ourselves instead of using libcst's QualifiedNameProvider:
on real code that provider alone costs ~10x the parse. A name bound by an import
maps to a qualified name; a module-level def, class or assignment that comes
after the import shadows it (a local ``def rearrange`` is not einops).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

# A module-level try -> (index of its body's import that surely fails, the handler
# that runs), or None (failed_imports.taken).
Failing = Callable[[ast.Try], "tuple[int, ast.ExceptHandler] | None"]

# Spellings that reach the same object, normalised so ops match one name.
_CANONICAL_PREFIXES = (
    ("einops.einops.", "einops."),
    ("einops.packing.", "einops."),
    ("einops._torch_specific.", "einops."),
    ("torch.functional.", "torch."),
    ("torch._C._VariableFunctions.", "torch."),
    ("torch._tensor.Tensor.", "torch.Tensor."),
    ("torch.nn.modules.linear.", "torch.nn."),
    # eager quantization: the old spellings and the defining modules re-export these
    ("torch.quantization.", "torch.ao.quantization."),
    ("torch.ao.quantization.stubs.", "torch.ao.quantization."),
    ("torch.nn.quantized.modules.functional_modules.", "torch.ao.nn.quantized."),
    ("torch.ao.nn.quantized.modules.functional_modules.", "torch.ao.nn.quantized."),
    ("torch.nn.quantized.", "torch.ao.nn.quantized."),
    ("jax.numpy.", "numpy."),
    ("jnp.", "numpy."),
    ("cupy.", "numpy."),
)

# Every absolute import is tracked: the stubs (built-in or a project's own, such
# as `mylib.mix`) decide which qualified names mean something.


# What `from X import *` brings in, for the modules whose calls we check.
_STAR_EXPORTS = {
    "einops": ("rearrange", "reduce", "repeat", "einsum", "pack", "unpack", "parse_shape"),
    "einops.layers.torch": ("Rearrange", "Reduce", "EinMix"),
    "jaxtyping": ("Float", "Int", "Bool", "Shaped", "Integer", "Num", "Real", "Inexact"),
}


# canonical() is asked the same few hundred names over and over (every call the
# interpreter resolves): remembered, bounded by the names a run meets.
_CANONICAL: dict[str, str] = {}


def canonical(qualname: str) -> str:
    got = _CANONICAL.get(qualname)
    if got is None:
        got = _CANONICAL[qualname] = _canonical(qualname)
    return got


def _canonical(qualname: str) -> str:
    for old, new in _CANONICAL_PREFIXES:
        if qualname.startswith(old):
            return new + qualname[len(old) :]
    if qualname.startswith("torch.nn.modules."):
        # torch.nn re-exports every public name of its modules' files that it has
        # (`from .modules import *`): `torch.nn.modules.activation.MultiheadAttention`
        # is torch.nn.MultiheadAttention (its private files' are other objects)
        parts = qualname.split(".")
        if len(parts) >= 5 and not parts[3].startswith("_") and not parts[4].startswith("_"):
            return "torch.nn." + ".".join(parts[4:])
    if qualname.startswith("einops.layers.") and qualname.count(".") == 3:
        # einops.layers.torch.Rearrange / .flax / .keras ... share one construction check.
        return "einops.layers." + qualname.rsplit(".", 1)[1]
    return qualname


class ImportMap:
    """Local name -> qualified name, for the names a module imports."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.star_modules: list[str] = []
        # A name another project file binds by importing a library (`from .layers
        # import nn`, or a `from .layers import *` that binds it): its qualified
        # name, or None (project.py sets it for a target run).
        self.linked: Callable[[str], str | None] | None = None

    @staticmethod
    def from_module(tree: ast.Module, failing: Failing | None = None) -> ImportMap:
        """failing: where a module-level try's import surely fails, and the handler
        that then runs (failed_imports.taken; target runs only)."""
        im = ImportMap()
        # Module-level bindings in order, so a later def/assignment shadows an import.
        for stmt in _module_level_statements(tree, failing):
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    root = alias.name.split(".")[0]
                    if alias.asname:
                        im.names[alias.asname] = alias.name
                    else:
                        im.names[root] = root
            elif isinstance(stmt, ast.ImportFrom):
                if stmt.level or not stmt.module:
                    for alias in stmt.names:
                        im.names.pop(alias.asname or alias.name, None)
                    continue
                for alias in stmt.names:
                    if alias.name != "*":
                        im.names[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
                    else:
                        im.star_modules.append(stmt.module)
                        for name in _STAR_EXPORTS.get(stmt.module, ()):
                            im.names[name] = f"{stmt.module}.{name}"
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                im.names.pop(stmt.name, None)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    for name in bound_names(t):
                        _shadow_by_assignment(im, name, stmt)
        return im

    def resolve(
        self,
        node: ast.expr,
        local_names: frozenset[str] | set[str] = frozenset(),
        local_imports: dict[str, str] | None = None,
    ) -> str | None:
        """Qualified name of a Name/Attribute chain, or None if not an import of ours.
        local_imports (a function's own imports) win over the module's; other local
        names shadow them."""
        parts: list[str] = []
        cur: ast.expr = node
        while isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        if not isinstance(cur, ast.Name):
            return None
        name = cur.id
        if local_imports and name in local_imports:
            base = local_imports[name]
        elif name in local_names:
            return None
        else:
            base = self.names.get(name)
            if base is None and self.linked is not None:
                base = self.linked(name)
        if base is None:
            return None
        if parts:
            parts.append(base)
            parts.reverse()
            base = ".".join(parts)
        return canonical(base)


def bound_names(target: ast.expr) -> list[str]:
    """The names an assignment to target binds: a store into an attribute or an
    item (`logging.Logger.warning_once = f`) binds none, its root included."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return bound_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in bound_names(e)]
    return []


def _shadow_by_assignment(im: ImportMap, name: str, stmt: ast.stmt) -> None:
    # `F = torch.nn.functional` style aliases keep resolving; anything else shadows.
    value = getattr(stmt, "value", None)
    if isinstance(stmt, ast.Assign) and isinstance(value, (ast.Name, ast.Attribute)):
        q = im.resolve(value)
        if q is not None:
            im.names[name] = q
            return
    im.names.pop(name, None)


def _module_level_statements(tree: ast.Module, failing: Failing | None = None):
    """Top-level statements, descending into if/try blocks (guarded imports)."""
    stack = list(reversed(tree.body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, ast.If):
            stack.extend(reversed(stmt.body + stmt.orelse))
        elif isinstance(stmt, ast.Try) and (taken := failing and failing(stmt)):
            # the import surely raises: the body stops there, the handler binds
            at, handler = taken
            stack.extend(reversed(stmt.body[:at] + handler.body + stmt.finalbody))
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            imported = _imported_names(stmt.body)  # type: ignore[attr-defined]
            blocks = stmt.body + [  # type: ignore[attr-defined]
                s
                for h in stmt.handlers  # type: ignore[attr-defined]
                for s in h.body
                if not (_import_error(h) and _defines(s) & imported)
            ]
            blocks += stmt.orelse + stmt.finalbody  # type: ignore[attr-defined]
            stack.extend(reversed(blocks))
        elif isinstance(stmt, ast.With):
            stack.extend(reversed(stmt.body))


def _imported_names(body: list[ast.stmt]) -> set[str]:
    return {
        alias.asname or alias.name.split(".")[0]
        for stmt in body
        if isinstance(stmt, (ast.Import, ast.ImportFrom))
        for alias in stmt.names
    }


def _import_error(handler: ast.ExceptHandler) -> bool:
    """`except ImportError:` (or ModuleNotFoundError): its body is the fallback for an
    import that fails only without the library; with it installed, the import holds."""
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(
        isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in names
    )


def _defines(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, ast.Assign):
        return {t.id for t in stmt.targets if isinstance(t, ast.Name)}
    return set()


def relative_module(stmt: ast.ImportFrom, pkg_parts: list[str]) -> str | None:
    """The module `from .m import ...` names, from the package it sits in; None for
    a script, which has no package to be relative to (Python: ImportError)."""
    if not pkg_parts or stmt.level - 1 > len(pkg_parts):
        return None
    base = pkg_parts[: len(pkg_parts) - (stmt.level - 1)]
    return ".".join(base + ([stmt.module] if stmt.module else []))


def local_import_names(func: ast.AST, pkg_parts: list[str] | None = None) -> dict[str, str]:
    """Imports inside a function body (``import einops`` in a method is common); a
    relative one (`from ..feed_forward import FeedForward` in a constructor) by the
    absolute module it names where pkg_parts, the package the file sits in, is
    given, as a project file's own names are qualified."""
    out: dict[str, str] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                out[alias.asname or root] = alias.name if alias.asname else root
        elif isinstance(node, ast.ImportFrom):
            module = node.module if not node.level else None
            if node.level and pkg_parts is not None:
                module = relative_module(node, pkg_parts)
            if not module:
                continue
            for alias in node.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = f"{module}.{alias.name}"
    return out
