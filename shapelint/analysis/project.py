"""Whole projects: imports between the files of the analysed tree.

A file inside a package (directories with __init__.py) has an import name
(`vit_pytorch.vit`), and its relative imports resolve to other files of the tree.
Absolute imports resolve as Python's path finder resolves them along sys.path,
here the project's roots: the file's package root (for a script, its directory:
sys.path[0] when it runs), then [tool.shapelint] roots, or the pyproject's
directory and its src/, then the directories the command was given (config.py).
In each directory a package (`a/__init__.py`) comes before a module (`a.py`), a
regular package or module on an earlier root before one on a later root, and a
directory without __init__.py is a namespace package. What they name (functions,
classes, constants, re-exports through __init__.py) is found by analysing that
file too, lazily: a file is read and parsed only when one of its names is used
in a call, a construction or a value, and its summaries are computed on demand
by its own analyzer (its own imports, its own constants).

The results of a file then depend on the files it used: `deps` lists them with
their content digests, and the cache serves a result only while those digests
still hold (cache.py).

A target run (`cost PATH::QUALNAME`) follows installed packages too: a
qualified name no project root holds (`timm.layers.Mlp`) whose source is on the
Python path (installed.py) is that package's file, analysed by its own analyzer
with its path entry as its root. `AnalysisOptions.installed` False turns that off.

Nothing is imported or run: resolution is by file layout and the import
statements' text.
"""

from __future__ import annotations

import ast
import functools
import os
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from shapelint import pyparse
from shapelint.analysis import installed, torch_source
from shapelint.analysis.allowance import CutReads
from shapelint.analysis.bindings import Bindings
from shapelint.analysis.imports import relative_module
from shapelint.ops.values import UNKNOWN

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef

# Parsed project modules kept per process (a pool worker serves many files).
MAX_MODULES = 512
MAX_REEXPORT_HOPS = 8


def module_name(path: str, relative: bool = False) -> tuple[str | None, str | None]:
    """(sys.path root, dotted import name) of a file inside a package; (None,
    None) for a file outside any package. relative: the file makes a relative
    import, so it runs as a module of a package, never as a script (Python refuses
    a relative import with no parent package): a folder of it without
    `__init__.py` inside a regular package is a namespace package of that package
    (`super_image/models/msrn/`, `super_image.models.msrn`), as PEP 420 finds it."""
    p = os.path.abspath(path)
    d, base = os.path.split(p)
    if not base.endswith(".py"):
        return None, None
    parts = [] if base == "__init__.py" else [base[:-3]]
    if relative and base != "__init__.py":
        d = _enclosing_package(d, parts)
    while os.path.isfile(os.path.join(d, "__init__.py")):
        d, pkg = os.path.split(d)
        parts.insert(0, pkg)
    if not parts or (base != "__init__.py" and len(parts) == 1):
        return None, None  # a lone script: no package, nothing relative
    if not all(x.isidentifier() for x in parts):
        return None, None
    return d, ".".join(parts)


def _enclosing_package(d: str, parts: list[str]) -> str:
    """The nearest folder at or above d with an `__init__.py`, the folders between
    put in front of parts; d itself where no folder above has one."""
    portions: list[str] = []
    at = d
    while not os.path.isfile(os.path.join(at, "__init__.py")):
        parent, name = os.path.split(at)
        if parent == at:
            return d  # no regular package above: a namespace at the top is not told
        portions.insert(0, name)
        at = parent
    parts[:0] = portions
    return at


def relative_imports(tree: ast.Module) -> bool:
    """Whether the module's top level makes a relative import (not under a try,
    whose handler may be how it runs as a script)."""
    return any(isinstance(s, ast.ImportFrom) and s.level for s in tree.body)


def project_imports(
    tree: ast.Module,
    modname: str,
    is_package: bool,
    found: Callable[[str], bool] | None = None,
    exports: Callable[[str], list[str] | None] | None = None,
) -> dict[str, tuple[str, str | None]]:
    """Local name -> (absolute module, attribute or None) for the top-level imports
    that may name project files: relative ones (in a package), and absolute ones of
    a module `found` finds along the project's roots (without it: of this file's own
    top-level package). `from .m import *` binds the names `exports` says m defines."""
    top = modname.split(".")[0]
    pkg_parts = modname.split(".") if is_package else modname.split(".")[:-1]
    if found is None:

        def found(mod: str) -> bool:
            return mod.split(".")[0] == top

    out: dict[str, tuple[str, str | None]] = {}
    unrun = _type_checking_only(tree)
    for stmt in _top_level(tree):
        if isinstance(stmt, ast.ImportFrom):
            if stmt.level:
                relative = relative_module(stmt, pkg_parts)
                if relative is None:
                    continue
                mod = relative
            elif stmt.module:
                mod = stmt.module
                # `from ns import sub` of a namespace package: sub is the project file.
                if not found(mod) and not any(found(f"{mod}.{a.name}") for a in stmt.names):
                    for alias in stmt.names:  # a library's name rebinds it
                        out.pop(alias.asname or alias.name, None)
                    continue
            else:
                continue
            for alias in stmt.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = (mod, alias.name)
                elif exports is not None and id(stmt) not in unrun:
                    for name in exports(mod) or ():
                        out[name] = (mod, name)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname and found(alias.name):
                    out[alias.asname] = (alias.name, None)
                else:
                    out.pop(alias.asname or alias.name.split(".")[0], None)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.pop(stmt.name, None)
    return out


def star_names(
    tree: ast.Module,
    links: dict[str, tuple[str, str | None]],
    library: dict[str, str] | None = None,
) -> list[str] | None:
    """The names `from m import *` binds of m (its tree, its project links, the
    library names it imports): those of a literal `__all__`, else its public names,
    a module or class it imports from a library included (`nn` of m's `from torch
    import nn`, which the importing file may use without importing it itself).
    None: an `__all__` not written out (nothing is bound, rather than a guess)."""
    defined: set[str] = {n for n in (*links, *(library or ())) if not n.startswith("_")}
    listed: list[str] | None = None
    for stmt in _top_level(tree):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if "__all__" in names:
                value = stmt.value
                if isinstance(stmt, ast.AugAssign) or not isinstance(value, (ast.List, ast.Tuple)):
                    return None
                if not all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
                ):
                    return None
                listed = [e.value for e in value.elts]  # type: ignore[attr-defined]
            defined |= names
    if listed is not None:
        return [n for n in listed if n in defined]
    return sorted(n for n in defined if not n.startswith("_"))


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The statements under a module-level `if TYPE_CHECKING:`, which never run (a
    package's `from .models import *` for type checkers only: binding its names
    would load every module it names)."""
    out: set[int] = set()
    for stmt in _top_level(tree):
        if isinstance(stmt, ast.If) and _is_type_checking(stmt.test):
            out.update(id(s) for s in ast.walk(stmt) if s is not stmt)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
    return name == "TYPE_CHECKING"


def _top_level(tree: ast.Module):
    stack = list(reversed(tree.body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, ast.If):
            stack.extend(reversed(stmt.body + stmt.orelse))
        elif isinstance(stmt, ast.Try):
            stack.extend(reversed(stmt.body + [s for h in stmt.handlers for s in h.body]))


_PROJECTS: dict[str, Project] = {}


def attach(an: Analyzer, path: str, options, specialize: bool = False) -> None:
    """Make the file's project imports resolve, when it sits in a package or
    imports a module its roots hold (unless options.project is False)."""
    if options.project is False:
        return
    path = os.path.abspath(path)
    root, modname = module_name(path, relative_imports(an.tree))
    in_package = modname is not None
    if not in_package:
        root, modname = os.path.dirname(path), os.path.basename(path)[:-3]
        if not (path.endswith(".py") and modname.isidentifier()):
            return
    extra = options.project if isinstance(options.project, tuple) else ()
    roots = tuple(dict.fromkeys((root, *extra)))
    if specialize:
        # A target's run starts from a fresh project: a loaded module keeps what runs
        # changed (memoised calls, whose findings were noted when they first ran;
        # globals a run rebinds), and a second target (check's, then cost's; an
        # editor's on each change) must find what its own run meets.
        proj = Project(options, type(an), specialize)
    else:
        key = repr(options.cache_key())
        proj = _PROJECTS.get(key)
        if proj is None:
            if len(_PROJECTS) > 2:
                _PROJECTS.clear()
            proj = _PROJECTS[key] = Project(options, type(an), specialize)
    proj.new_file()
    proj.home = roots
    is_pkg = os.path.basename(path) == "__init__.py"
    links = project_imports(an.tree, modname, is_pkg, proj.finder(roots), proj.exports(roots))
    if not in_package and not links and not (specialize and options.installed):
        return  # a script that imports no project module: a file on its own, as before
    an.bind_project(proj, roots, modname, path)
    an.project_links = links
    if specialize:
        an.imports.linked = functools.partial(library_link, an)


def forget() -> None:
    """Drop the loaded projects: an analysis cut short (the time budget) may have
    left a module half loaded, which a later analysis must not take as read."""
    _PROJECTS.clear()


class Project:
    """The project modules one process has loaded, by import name."""

    def __init__(self, options, analyzer_class, specialize: bool = False):
        self.options = options
        self.analyzer_class = analyzer_class  # the interpreter's, which imports this module
        self.specialize = specialize
        self.analyzers: dict[tuple[tuple[str, ...], str], Analyzer | None] = {}
        self.stats: dict[tuple[tuple[str, ...], str], tuple[int, int] | None] = {}
        self.digests: dict[str, str] = {}  # path -> content digest of what was analysed
        # (root, module) -> its file, for the analysis of one file (attach clears it):
        # a file names the same modules many times, and each look is two stats.
        self.files: dict[tuple[tuple[str, ...], str], tuple[str | None, bool]] = {}
        self.checked: set[tuple[tuple[str, ...], str]] = set()  # modules stat'ed for it
        self.cut_reads = CutReads()  # reads an import-time allowance cut (allowance.py)
        # Installed packages (target runs only): the search path, and where each
        # module name was found on it (new_file reads both afresh).
        self.search_path: tuple[str, ...] = ()
        self.installed_modules: dict[str, tuple[str, str] | None] = {}
        self.home: tuple[str, ...] = ()  # the roots of the file being analysed
        # path -> (stat, top-level class names, project links): what a file binds,
        # read without analysing it (peek_class)
        self.peeked: dict[str, tuple] = {}
        self.peeks: dict[tuple[tuple[str, ...], str], tuple | None] = {}  # for this file
        # package directory -> its .py files and their stats, for this file
        # (module_constants.py's scans are kept under them)
        self.listings: dict[str, tuple | None] = {}
        # path -> (stat, its Syntax): files read for their bindings only (defined_in);
        # a loaded file's analyzer -> its Syntax
        self.syntaxes: dict[str, tuple] = {}
        self.trees: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        # analyzer -> {name: defined_in's answer}, for this file (new_file clears it)
        self.defined: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def new_file(self) -> None:
        """The layout and the files' stats are read afresh for each file analysed."""
        self.files.clear()
        self.checked.clear()
        self.defined.clear()
        self.peeks.clear()
        self.listings.clear()
        self.installed_modules.clear()
        if self.options.installed and self.specialize:
            self.search_path = installed.search_path()

    def installed_module(self, modname: str) -> tuple[str, str] | None:
        """(path entry, file) of an installed module with source, else None."""
        if not self.search_path:
            return None
        if modname not in self.installed_modules:
            self.installed_modules[modname] = installed.find_module(modname, self.search_path)
        return self.installed_modules[modname]

    def module_file(self, roots: tuple[str, ...], modname: str) -> str | None:
        return self.find(roots, modname)[0]

    def find(self, roots: tuple[str, ...], modname: str) -> tuple[str | None, bool]:
        """(its file, whether Python would import it) for module modname along roots:
        a namespace package is imported but has no file."""
        key = (roots, modname)
        if key not in self.files:
            if roots != self.home and modname.split(".")[0] in installed.MODELLED_ROOTS:
                # An installed package importing a library modelled by name (its path
                # entry holds einx too): the library's rules, never its source.
                self.files[key] = (None, False)
            else:
                self.files[key] = find_module(roots, modname)
        return self.files[key]

    def finder(self, roots: tuple[str, ...]) -> Callable[[str], bool]:
        """Whether a module is a file of the project. A namespace package alone is
        not: a regular package of that name elsewhere on sys.path (a library's)
        comes before it, and only the modules it holds tell."""
        return lambda mod: self.find(roots, mod)[0] is not None

    def exports(self, roots: tuple[str, ...]) -> Callable[[str], list[str] | None]:
        """What `from m import *` binds of project module m (star_names)."""

        def names(mod: str) -> list[str] | None:
            an = self.analyzer(roots, mod)
            return None if an is None else star_names(an.tree, an.project_links, an.imports.names)

        return names

    def analyzer(self, root: tuple[str, ...], modname: str) -> Analyzer | None:
        key = (root, modname)
        if key in self.checked and key in self.analyzers:
            return self.analyzers[key]  # stat'ed already for this file's analysis
        path = self.module_file(root, modname)
        stat = file_stat(path)
        self.checked.add(key)
        if key in self.analyzers and self.stats.get(key) == stat:
            return self.analyzers[key]
        self.analyzers[key] = None  # an import cycle sees nothing, not a loop
        self.stats[key] = stat
        an = None
        if path is not None:
            # keyed on the stat too: an edited file (a warm process) is another read
            an = self.cut_reads.read((key, stat), lambda: self._load(path, root, modname))
        if len(self.analyzers) > MAX_MODULES:
            for old in list(self.analyzers)[: MAX_MODULES // 4]:
                if old != key:
                    del self.analyzers[old]
        self.analyzers[key] = an
        return an

    def unfinished(self) -> frozenset:
        """The modules whose reading has begun and not ended (or found nothing)."""
        return frozenset(k for k, an in self.analyzers.items() if an is None)

    def drop_unfinished(self, before: frozenset) -> None:
        """Forget the modules begun since `before` was taken and not finished: a
        run cut short there (import_time.py) left their top level half read, which
        a later import must not take as the module."""
        for key in [k for k, an in self.analyzers.items() if an is None and k not in before]:
            del self.analyzers[key]
            self.stats.pop(key, None)
            self.checked.discard(key)

    def peek(self, roots: tuple[str, ...], modname: str) -> tuple[str, set, dict] | None:
        """(file, its top-level class names, its project links) of module modname,
        parsed, not analysed (no analyzer, no top level run): what a plain run needs
        to tell whether a name it calls is a class of that file. None: no such file,
        or one that does not parse."""
        key = (roots, modname)
        if key not in self.peeks:
            self.peeks[key] = self._peek(roots, modname)  # stat'ed once per file analysed
        return self.peeks[key]

    def _peek(self, roots: tuple[str, ...], modname: str) -> tuple[str, set, dict] | None:
        from shapelint.analysis.source import DecodeFailure, decode_source
        from shapelint.cache import digest

        path = self.module_file(roots, modname)
        stat = file_stat(path)
        if path is None or stat is None:
            return None
        kept = self.peeked.get(path)
        if kept is None or kept[0] != stat:
            try:
                with open(path, "rb") as f:
                    data = f.read()
                tree = pyparse.parse(decode_source(data), filename=path)
            except (OSError, DecodeFailure, SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            classes = {stmt.name for stmt in tree.body if isinstance(stmt, ast.ClassDef)}
            is_pkg = os.path.basename(path) == "__init__.py"
            links = project_imports(tree, modname, is_pkg, self.finder(roots))
            kept = self.peeked[path] = (stat, classes, links)
            self.digests[path] = digest(data)
        return path, kept[1], kept[2]

    def syntax(self, roots: tuple[str, ...], modname: str) -> Syntax | None:
        """Module modname's text, tree and bindings, parsed, not analysed (the
        analyzer's where the module is loaded already); None: no such file, or one
        that does not parse."""
        from shapelint.analysis.source import SourceFile
        from shapelint.cache import digest

        path = self.module_file(roots, modname)
        stat = file_stat(path)
        if path is None or stat is None:
            return None
        loaded = self.analyzers.get((roots, modname))
        if loaded is not None and self.stats.get((roots, modname)) == stat:
            return self.syntax_of(loaded)
        kept = self.syntaxes.get(path)
        if kept is None or kept[0] != stat:
            read = _read(path)
            if read is None:
                return None
            data, text, tree = read
            if len(self.syntaxes) >= MAX_MODULES:
                self.syntaxes.clear()
            kept = self.syntaxes[path] = (stat, Syntax(path, SourceFile(path, text), tree, modname))
            self.digests[path] = digest(data)
        return kept[1]

    def syntax_of(self, an: Analyzer) -> Syntax:
        """The Syntax of a loaded file, its analyzer's own tree (kept while the
        analyzer lives: it holds no reference back to it)."""
        kept = self.trees.get(an)
        if kept is None or kept.tree is not an.tree:
            path = an.project_path or an.src.path
            kept = self.trees[an] = Syntax(path, an.src, an.tree, an.project_module or "")
        return kept

    def _load(self, path: str, root: tuple[str, ...], modname: str) -> Analyzer | None:
        from shapelint.analysis.source import SourceFile
        from shapelint.cache import digest

        read = _read(path)
        if read is None:
            return None
        data, text, tree = read
        self.digests[path] = digest(data)
        an = self.analyzer_class(SourceFile(path, text), tree, self.options, self.specialize)
        an.bind_project(self, root, modname, path)
        is_pkg = os.path.basename(path) == "__init__.py"
        an.project_links = project_imports(
            tree, modname, is_pkg, self.finder(root), self.exports(root)
        )
        if self.specialize:
            an.imports.linked = functools.partial(library_link, an)
        an.prepare()
        return an


def _read(path: str) -> tuple[bytes, str, ast.Module] | None:
    """(bytes, text, tree) of a file; None where it cannot be read or parsed."""
    from shapelint.analysis.source import DecodeFailure, decode_source

    try:
        with open(path, "rb") as f:
            data = f.read()
        text = decode_source(data)
        return data, text, pyparse.parse(text, filename=path)
    except (OSError, DecodeFailure, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def file_stat(path: str | None) -> tuple[int, int] | None:
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def find_module(roots: tuple[str, ...], modname: str) -> tuple[str | None, bool]:
    """(file, found) for modname as importlib's path finder finds it along roots
    (a file is .py source; found without a file: a namespace package)."""
    parts = modname.split(".")
    if not all(p.isidentifier() for p in parts):
        return None, False
    path: list[str] = list(roots)
    file = None
    for i, part in enumerate(parts):
        if i and not path:
            return None, False  # a module has no submodules
        file, path = _find_in(path, part)
        if file is None and not path:
            return None, False
    return file, True


def _find_in(path: list[str], name: str) -> tuple[str | None, list[str]]:
    """(file, submodule search path) of name in the directories of path: the first
    directory with a package or a module of that name decides; directories of that
    name without __init__.py, if no directory does, make a namespace package."""
    portions = []
    for d in path:
        pkg = os.path.join(d, name)
        init = os.path.join(pkg, "__init__.py")
        if os.path.isfile(init):
            return init, [pkg]  # a package before a module of the same name
        if os.path.isfile(pkg + ".py"):
            return pkg + ".py", []
        if os.path.isdir(pkg):
            portions.append(pkg)
    return None, portions


def resolve(an: Analyzer, local: str, hops: int = 0):
    """What a name bound by a project import stands for: a FuncDef, a ClassDef, or
    a module-level value of the other file; None when it is not a project name."""
    link = an.project_links.get(local)
    if link is None or an.project is None or hops > MAX_REEXPORT_HOPS:
        return None
    mod, attr = link
    if attr is not None and an.project.module_file(an.project_root, f"{mod}.{attr}") is not None:
        if lookup_defined(
            an.project.analyzer(an.project_root, mod), attr
        ) is None or _binds_its_submodule(an, mod, attr):
            mod, attr = f"{mod}.{attr}", None  # `from . import utils`: a module
    target = an.project.analyzer(an.project_root, mod)
    if target is None:
        return None
    an.used_modules.add(target)
    if attr is None:
        return ModuleLink(target)
    return lookup(target, attr, hops + 1)


def peek_class(an: Analyzer, local: str, attr: str | None = None) -> str | None:
    """The key (`module:Name`) of the class of another project file a name bound by
    a project import stands for, through re-exports, read off the files' text
    (Project.peek) without analysing them; None where it is no top-level class
    statement of such a file (a function, a value, a module, a class under an `if`
    or bound by a star import: what resolve would find is not told here). The
    files read are the caller's dependencies (an.peeked_paths), as resolve's are."""
    link = an.project_links.get(local)
    if link is None or an.project is None:
        return None
    if attr is not None:  # `utils.FeedForward`, utils a project module
        mod = link[0] if link[1] is None else f"{link[0]}.{link[1]}"
        if an.project.module_file(an.project_root, mod) is None:
            return None
    elif link[1] is None:
        return None
    else:
        mod, attr = link
    for _ in range(MAX_REEXPORT_HOPS):
        if an.project.module_file(an.project_root, f"{mod}.{attr}") is not None:
            return None  # (or) a submodule of that name: not told apart here
        seen = an.project.peek(an.project_root, mod)
        if seen is None:
            return None
        path, classes, links = seen
        an.peeked_paths.add(path)
        if attr in links:
            mod, attr = links[attr]  # type: ignore[assignment]
            if attr is None:
                return None
            continue
        return f"{mod}:{attr}" if attr in classes else None
    return None


class Syntax:
    """One file as text and tree, with what its top level binds (bindings.py)."""

    def __init__(self, path: str, src, tree: ast.Module, modname: str):
        self.path, self.src, self.tree, self.modname = path, src, tree, modname
        self.bindings = Bindings(tree)
        if not self.bindings.open and self._imports_itself():
            self.bindings.open = True

    def _imports_itself(self) -> bool:
        """Whether the file imports its own module, or a package above it (whose
        attributes lead to it): the module object, through which any of its names
        can be set (`pkg.mod.flag = v`)."""
        own = self.modname.split(".")
        for node in self.bindings.imports:
            if isinstance(node, ast.Import):  # `import a.b` binds a, `as m` a.b
                names = [a.name if a.asname else a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and self.imported_module(node) is not None:
                names = [f"{self.imported_module(node)}.{a.name}" for a in node.names]
            else:
                continue
            if any(n.split(".") == own[: len(n.split("."))] for n in names):
                return True
        return False

    def imported_module(self, stmt: ast.ImportFrom) -> str | None:
        """The absolute module a `from ... import` statement of this file names."""
        if not stmt.level:
            return stmt.module
        parts = self.modname.split(".")
        if os.path.basename(self.path) != "__init__.py":
            parts = parts[:-1]
        return relative_module(stmt, parts)


def defined_in(an: Analyzer, local: str) -> tuple[Syntax, ast.stmt] | None:
    """The file, and its def or class statement, that a name bound by a project
    import of an's stands for through re-exports, read from the files' syntax
    without analysing their top level (bindings.py): the cost of a read that wants
    only which definition a name is (a class decorator's source). None where the
    syntax does not decide it, every binding along the way one statement of its
    module's top level that nothing else there can change: the caller then
    resolves it by analysing those files (resolve)."""
    proj = an.project
    if proj is None or an.project_module is None:
        return None
    memo = proj.defined.setdefault(an, {})
    if local not in memo:  # asked at every resolution of the name (library_link)
        memo[local] = _defined_in(an, proj, local)
    return memo[local]


def _defined_in(an: Analyzer, proj: Project, local: str) -> tuple[Syntax, ast.stmt] | None:
    here = proj.syntax_of(an)
    name = local
    for _ in range(MAX_REEXPORT_HOPS):
        stmt = here.bindings.statement(name)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return here, stmt
        if not isinstance(stmt, ast.ImportFrom):
            return None
        mod = here.imported_module(stmt)
        attr = next(a.name for a in stmt.names if (a.asname or a.name) == name)
        if mod is None or proj.module_file(an.project_root, mod) is None:
            return None  # a library's name, or a namespace package's
        there = proj.syntax(an.project_root, mod)
        if there is None:
            return None
        an.peeked_paths.add(there.path)
        if proj.module_file(an.project_root, f"{mod}.{attr}") is not None:
            # The package's attribute is its submodule wherever it is not bound
            # after that submodule was imported: decided only where the package
            # binds it by importing from that very submodule (the import sets the
            # submodule as the attribute first, and never again)
            bound = there.bindings.statement(attr)
            if not (
                isinstance(bound, ast.ImportFrom)
                and there.imported_module(bound) == f"{mod}.{attr}"
            ):
                return None
        here, name = there, attr
    return None


def _binds_its_submodule(an: Analyzer, mod: str, attr: str) -> bool:
    """Package mod binds attr, through its imports, to mod's submodule attr itself:
    `from . import utils` in its `__init__.py`, or `from .core import *` of a core
    that does it. Python's import system binds the submodule, which then is the
    attribute `from pkg import utils` reads; the links alone go round in a circle."""
    m, a = mod, attr
    for _ in range(MAX_REEXPORT_HOPS):
        target = an.project.analyzer(an.project_root, m)  # type: ignore[union-attr]
        if target is None or a in target.classes or a in target.functions:
            return False
        link = target.project_links.get(a)
        if link is None or link[1] is None:
            return False
        if link == (mod, attr):
            return True
        m, a = link
    return False


def defining(an: Analyzer, local: str, hops: int = 0) -> tuple[Analyzer, str] | None:
    """The project file, and the name there, whose module-level value a name bound
    by a project import is (`from .registry import REG`, through re-exports)."""
    link = an.project_links.get(local)
    if link is None or an.project is None or hops > MAX_REEXPORT_HOPS:
        return None
    mod, attr = link
    if attr is None:
        return None
    target = an.project.analyzer(an.project_root, mod)
    if target is None:
        return None
    if attr in target.project_links:
        return defining(target, attr, hops + 1)
    if attr in target.classes or attr in target.functions:
        return None
    return target, attr


class ModuleLink:
    """A project module bound to a name (`from . import utils`, `import pkg.x as x`)."""

    def __init__(self, target: Analyzer):
        self.target = target


def lookup_defined(target: Analyzer | None, name: str):
    if target is None:
        return None
    return target.classes.get(name) or target.functions.get(name) or target.project_links.get(name)


def resolve_attribute(an: Analyzer, func) -> object | None:
    """`utils.FeedForward` where utils names a project module."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    base = resolve(an, func.value.id) if func.value.id in an.project_links else None
    if isinstance(base, ModuleLink):
        an.used_modules.add(base.target)
        return lookup(base.target, func.attr)
    return None


def library_link(an: Analyzer, name: str) -> str | None:
    """The qualified name a project import binds where the other file imported it
    from a library (`from .layers import nn`, layers having `from torch import nn`):
    Python binds the other module's value, that library object. None: not such a
    name."""
    if name not in an.project_links:
        return None
    if defined_in(an, name) is not None:
        return None  # a def or class of the project, by its files' syntax
    sym = resolve(an, name)
    return sym.library_qual if isinstance(sym, LibraryName) else None


class LibraryName:
    """A library name another project file imports and this one imports from it
    (`from .trace_utils import _assert`, where trace_utils has `from torch import
    _assert`): the caller treats it as that library name."""

    def __init__(self, qual: str):
        self.library_qual = qual


def lookup(target: Analyzer, name: str, hops: int = 0):
    if name in target.classes and name not in target.project_links:
        return target.classes[name]
    if name in target.functions and name not in target.project_links:
        return target.functions[name]
    if name in target.project_links:
        return resolve(target, name, hops)  # a re-export (`from .vit import ViT`)
    v = target.module_env.get(name)
    if v is None or v is UNKNOWN:
        qual = target.imports.resolve(ast.Name(name))
        if qual is not None:
            return LibraryName(qual)
    return v


def resolve_qualified(an: Analyzer, qual: str):
    """`vit_pytorch.vit.Transformer` (an absolute import of the project's package
    that the import map resolved to a dotted name)."""
    if an.project is None or an.project_module is None:
        return None
    found = torch_source.source_name(qual)
    if found is not None:
        return _torch_layer(an, *found)
    mod, _, attr = qual.rpartition(".")
    if not mod or an.project.module_file(an.project_root, mod) is None:
        return resolve_installed(an, qual)
    target = an.project.analyzer(an.project_root, mod)
    if target is None:
        return None
    an.used_modules.add(target)
    return lookup(target, attr)


def source_base(an: Analyzer, qual: str):
    """The class a base's qualified name reads as source (torch_source.base_name), else None."""
    found = torch_source.base_name(qual)
    if found is None or an.project is None or an.project_module is None:
        return None
    return _torch_layer(an, *found)


def _torch_layer(an: Analyzer, module: str, name: str):
    """A torch layer class read from its source (torch_source.py)."""
    target = an.project.analyzer(torch_source.root(), module)
    if target is None:
        return None
    an.used_modules.add(target)
    return lookup(target, name)


def resolve_installed(an: Analyzer, qual: str):
    """`timm.layers.Mlp` where timm is an installed package with source: the
    definition (or value) its file gives the name; None when it has none."""
    proj = an.project
    mod, _, attr = qual.rpartition(".")
    if proj is None or not mod or not proj.search_path:
        return None
    found = proj.installed_module(mod)
    if found is None:
        return None
    target = proj.analyzer((found[0],), mod)
    if target is None:
        return None
    an.used_modules.add(target)
    sub = proj.installed_module(qual)
    if sub is not None and lookup_defined(target, attr) is None:
        sub_an = proj.analyzer((sub[0],), qual)
        return ModuleLink(sub_an) if sub_an is not None else None  # a submodule as a value
    return lookup(target, attr)


def dependencies(an: Analyzer) -> list[tuple[str, str]]:
    """(path, digest) of every project file an's results depended on, transitively."""
    seen: set[int] = {id(an)}
    stack = list(an.used_modules)
    out: dict[str, str] = {}
    if an.project is not None:
        out.update((p, an.project.digests[p]) for p in an.peeked_paths if p in an.project.digests)
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        path = m.project_path
        if path is not None and an.project is not None and path in an.project.digests:
            out[path] = an.project.digests[path]
        if an.project is not None:
            out.update(
                (p, an.project.digests[p]) for p in m.peeked_paths if p in an.project.digests
            )
        stack.extend(m.used_modules)
    return sorted(out.items())


def class_by_key(an: Analyzer, key: str) -> ClassDef | None:
    """A class by its global key (`module:Name`), in this file or a loaded one."""
    cd = an.class_keys.get(key)
    if cd is not None or an.project is None or ":" not in key:
        return cd
    mod = key.split(":", 1)[0]
    root = an.project_root
    if mod in torch_source.MODULES:
        root = torch_source.root()
    elif an.project.module_file(root, mod) is None:
        found = an.project.installed_module(mod)  # a class of an installed package
        if found is not None:
            root = (found[0],)
        elif an.project.module_file(an.project.home, mod) is not None:
            # An installed package's code holding an instance of the user's class (a
            # layer handed to its wrapper): the class is the project's, whatever file
            # runs its methods.
            root = an.project.home
        else:
            return None
    target = an.project.analyzer(root, mod)
    return target.class_keys.get(key) if target is not None else None
