"""Installed packages, read as source (as mypy and pyright read site-packages).

A layer of another installed package inside the user's model (`timm.layers.Mlp`
in a DiT) is followed when its source is on the Python path: the search walks
the path's directories as CPython's PathFinder and FileFinder do, one
component at a time (a regular package, then a compiled extension, then a
`.py` file, in each entry in order; a directory without `__init__.py` is a
namespace portion, used only where no entry holds a regular one), and reads
nothing but the file system. Nothing is imported: importing a package runs
its code, and `importlib.util.find_spec` of a dotted name imports its parents.

The path is this interpreter's `sys.path` as it stands (PYTHONPATH, site-packages
and the directories `.pth` files added at start-up), less the standard library
(which the analysis models by name: math, functools, ...), the current
directory (the user's own files are the project) and zip archives.

A module found as a compiled extension, or not at all, has no source: a call
of it stays unknown, named by the call.
"""

from __future__ import annotations

import os
import sys
import sysconfig

from shapelint.ops.values import NoneV, ObjectV, StrV

# Libraries the analysis models by name (stubs, einops and einx rules): never read as
# source, whatever is installed.
MODELLED_ROOTS = frozenset({"torch", "einops", "einx", "numpy", "jaxtyping", "shapelint"})

_SITE_DIRS = ("site-packages", "dist-packages")
_EXTENSION_SUFFIXES: tuple[str, ...] | None = None


def search_path() -> tuple[str, ...]:
    """The directories an absolute import searches, as this interpreter runs."""
    stdlib = set()
    for key in ("stdlib", "platstdlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            stdlib.add(os.path.realpath(p))
    out = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue  # '' (the current directory) and zip archives
        real = os.path.realpath(entry)
        under_stdlib = os.path.dirname(real) in stdlib
        if real in stdlib or (under_stdlib and os.path.basename(real) not in _SITE_DIRS):
            continue  # the standard library and its lib-dynload
        if real not in out:
            out.append(real)
    return tuple(out)


def find_module(modname: str, path: tuple[str, ...]) -> tuple[str, str] | None:
    """(path entry, source file) of module `modname`, or None where it has no
    source on `path` (absent, or a compiled extension shadows it)."""
    parts = modname.split(".")
    if not all(p.isidentifier() for p in parts) or parts[0] in MODELLED_ROOTS:
        return None
    # Each search location carries the path entry it descends from.
    locations = [(entry, entry) for entry in path]
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        portions: list[tuple[str, str]] = []
        found = None
        for entry, d in locations:
            kind, where = _find_in(d, part)
            if kind == "package":
                found = ("package", entry, where)
                break
            if kind in ("module", "extension"):
                found = (kind, entry, where)
                break
            if kind == "namespace":
                portions.append((entry, where))
        if found is None:
            if not portions:
                return None
            if last:
                return None  # a namespace package has no source of its own
            locations = portions
            continue
        kind, entry, where = found
        if kind == "extension":
            return None
        if kind == "module":
            return (entry, where) if last else None  # a module has no submodules
        if last:
            return entry, os.path.join(where, "__init__.py")
        locations = [(entry, where)]
    return None


def _find_in(d: str, part: str) -> tuple[str | None, str]:
    """What directory d holds under `part`, in FileFinder's order."""
    pkg = os.path.join(d, part)
    if os.path.isdir(pkg):
        if os.path.isfile(os.path.join(pkg, "__init__.py")):
            return "package", pkg
        if any(os.path.isfile(os.path.join(pkg, "__init__" + s)) for s in _extensions()):
            return "extension", pkg  # compiled: no source to read
        if os.path.isfile(os.path.join(pkg, "__init__.pyc")):
            return "extension", pkg
    for s in _extensions():
        if os.path.isfile(pkg + s):
            return "extension", pkg + s
    if os.path.isfile(pkg + ".py"):
        return "module", pkg + ".py"
    if os.path.isdir(pkg):
        return "namespace", pkg
    return None, pkg


def _extensions() -> tuple[str, ...]:
    global _EXTENSION_SUFFIXES
    if _EXTENSION_SUFFIXES is None:
        import importlib.machinery

        _EXTENSION_SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return _EXTENSION_SUFFIXES


def absent(name: str) -> bool:
    """Whether `importlib.util.find_spec(name)` surely returns None here: a
    top-level name that is no built-in module, that no entry of sys.path (the
    current directory and the standard library included) holds in any form and
    that no other finder on sys.meta_path finds. False where that cannot be told
    (a dotted name imports its parents; a zip entry)."""
    if "." in name or not name.isidentifier() or name in sys.builtin_module_names:
        return False
    for entry in sys.path:
        d = entry or os.getcwd()
        if not os.path.isdir(d):
            if os.path.exists(d):
                return False  # a zip archive: not searched here
            continue
        kind, _ = _find_in(d, name)
        if kind is not None or os.path.isfile(os.path.join(d, name + ".pyc")):
            return False
    return not _other_finder_finds(name)


# The finders every interpreter has: the path walked above, built-in and frozen modules.
_STANDARD_FINDERS = ("BuiltinImporter", "FrozenImporter", "PathFinder")


def _other_finder_finds(name: str) -> bool:
    """Whether a finder on sys.meta_path besides the standard ones may find top-level
    module name: an editable install's (`__editable___*_finder`, PEP 660) maps a package
    whose folder is on no path entry. Asked as `importlib.util.find_spec(name)` asks
    it, which for a top-level name imports nothing; one that fails to answer may."""
    for finder in sys.meta_path:
        if getattr(finder, "__name__", type(finder).__name__) in _STANDARD_FINDERS:
            continue
        find = getattr(finder, "find_spec", None)
        if find is None:
            return True  # an old-style finder: not asked here
        try:
            if find(name, None) is not None:
                return True
        except Exception:  # noqa: BLE001 - a finder's own failure: not known
            return True
    return False


def stdlib_module(modname: str) -> bool:
    """Whether `import modname` of a standard-library name finds the module on this
    interpreter, told without importing anything new: a module this process has
    imported, a submodule of a package it has imported (`find_spec` then imports
    nothing), else the standard library's directories walked as FileFinder walks
    them (`find_spec` of a dotted name would import the parents)."""
    if modname in sys.modules:
        return True
    parent = modname.rpartition(".")[0]
    if parent and parent in sys.modules:
        import importlib.util

        try:
            return importlib.util.find_spec(modname) is not None
        except (ImportError, ValueError):
            return False
    parts = modname.split(".")
    if not all(p.isidentifier() for p in parts):
        return False
    if parts[0] in sys.builtin_module_names:
        return len(parts) == 1
    paths = sysconfig.get_paths()
    dirs = [paths[k] for k in ("stdlib", "platstdlib") if paths.get(k)]
    dirs += [os.path.join(d, "lib-dynload") for d in dirs]
    return _walked(dirs, parts)


def _walked(dirs: list[str], parts: list[str]) -> bool:
    """Whether the dotted name is found along dirs, one component at a time."""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        found = [(kind, where) for kind, where in (_find_in(d, part) for d in dirs) if kind]
        if not found:
            return False
        kind, where = found[0]
        if last:
            return True
        if kind != "package":
            return False  # a module or an extension has no submodules on disk
        dirs = [where]
    return False


def runtime_module(modname: str) -> bool:
    """Whether `import modname` finds a submodule of the runtime library
    (`torch.fft`), its installed package walked as FileFinder walks it: the
    analysis never reads its source, but the import holds."""
    parts = modname.split(".")
    if parts[0] != RUNTIME or not all(p.isidentifier() for p in parts):
        return False
    return _walked(list(search_path()), parts)


# The library whose code a target's forward runs is importable wherever that
# forward runs: its spec is found.
RUNTIME = "torch"


def find_spec(args, kwargs):
    """`importlib.util.find_spec("name")`: None (a NoneV) where the module is
    surely absent (a guard such as diffusers' `_is_package_available("torch_npu")`
    is then decided, as it is at run time on this interpreter); a spec (no None)
    for torch, which every forward the analysis runs imports; else not known."""
    if kwargs or len(args) != 1 or not isinstance(args[0], StrV) or args[0].value is None:
        return None
    if args[0].value == RUNTIME:
        return ObjectV("importlib.machinery.ModuleSpec", (("name", StrV(RUNTIME)),))
    return NoneV() if absent(args[0].value) else None


_VERSIONS: dict[str, str | None] = {}


def distribution_version(args, kwargs):
    """`importlib.metadata.version("name")`: the version of the distribution as
    this interpreter has it installed (its metadata read, nothing imported), as
    `find_spec` answers for this interpreter; None (not known) where it is not
    installed here (the call raises PackageNotFoundError here, but the code may
    run where it is)."""
    if kwargs or len(args) != 1 or not isinstance(args[0], StrV) or args[0].value is None:
        return None
    name = args[0].value
    if name not in _VERSIONS:
        import importlib.metadata

        try:
            _VERSIONS[name] = importlib.metadata.version(name)
        except (importlib.metadata.PackageNotFoundError, ValueError):
            _VERSIONS[name] = None
    found = _VERSIONS[name]
    return None if found is None else StrV(found)
