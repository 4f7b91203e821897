"""Module objects as values: `importlib.import_module(name, package)` in a target run.

`importlib.import_module(".layers", "pkg")` resolves a relative name as
`importlib._bootstrap._resolve_name` does (`package.rsplit(".", level - 1)`, the
first part, then the name; a level past the package's top raises ImportError) and
gives `sys.modules[name]` once the import ran: the module object, whose attributes
are the file's top-level bindings (`m.Block`, `getattr(m, "Block")`: the class, the
function or the value a `from m import Block` would bind, `project.lookup`).

That holds only where the file found along the project's roots, or an installed
package's, is what the import system puts in `sys.modules`: a file, or a package
above it, that writes to `sys.modules` (`sys.modules[__name__] = _LazyModule(...)`,
the replaced object's `__getattr__` and `__path__` decide what is found then) makes
the value not known, as does a name not known, a namespace package (no file), and
any argument but a name and a package (or None).

Only a module of the caller's own top-level package is followed (a lazy package's
`import_module("." + name, self.__name__)`, a plugin table of the project's own
files): importing another top-level package runs its whole top level, which costs
the run without telling it more in the cases met (matplotlib's `_check_versions`
imports cycler, dateutil and kiwisolver only to compare their `__version__`: a fifth
more work on fastai's rows, near their time budget). That import stays not known."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shapelint.analysis.callable_values import ClassRefV, FunctionRefV
from shapelint.analysis.defs import ClassDef, FuncDef
from shapelint.ops.values import NoneV, StrV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

QUALNAME = "importlib.import_module"
_WRITES_SYS_MODULES = "_shapelint_writes_sys_modules"


@dataclass(frozen=True)
class ModuleV(Value):
    """An imported module as a value: `target` is the analyzer of its file."""

    name: str
    target: Analyzer = field(repr=False, compare=False, hash=False)


def resolve_name(name: str, package: str | None) -> str | None:
    """The absolute name `importlib.import_module(name, package)` imports; None
    where Python raises (a relative name without a package, or one that climbs past
    the package's top)."""
    level = len(name) - len(name.lstrip("."))
    if not level:
        return name or None
    if not package:
        return None  # TypeError: the 'package' argument is required
    bits = package.rsplit(".", level - 1)
    if len(bits) < level:
        return None  # ImportError: beyond top-level package
    rest = name[level:]
    return f"{bits[0]}.{rest}" if rest else bits[0]


def imported(an: Analyzer, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """The module `importlib.import_module(*args)` gives, or None (not known)."""
    given = [*args, *kwargs.values()]
    if set(kwargs) - {"package"} or not 1 <= len(given) <= 2 or not args or an.project is None:
        return None
    name = _text(args[0])
    package = _text(given[1]) if len(given) == 2 and not isinstance(given[1], NoneV) else ""
    if name is None or package is None:
        return None
    absolute = resolve_name(name, package)
    if absolute is None or not all(p.isidentifier() for p in absolute.split(".")):
        return None
    if absolute.partition(".")[0] != (an.project_module or "").partition(".")[0]:
        return None  # another top-level package: its whole top level runs (below)
    target = _module_analyzer(an, absolute)
    if target is None:
        return None
    an.used_modules.add(target)
    return ModuleV(absolute, target)


def package_of(an: Analyzer) -> str:
    """`__package__` of a file imported under its module's name: the package itself
    for an `__init__.py`, else the package that holds it ('' at the top)."""
    modname = an.project_module or ""
    if (an.project_path or "").endswith("__init__.py"):
        return modname
    return modname.rpartition(".")[0]


def _text(v: Value) -> str | None:
    return v.value if isinstance(v, StrV) and isinstance(v.value, str) else None


def _module_analyzer(an: Analyzer, modname: str) -> Analyzer | None:
    """The analyzer of the file `modname` names, where neither it nor a package
    above it writes to `sys.modules` (then what the import gives is that write's)."""
    proj = an.project
    parts = modname.split(".")
    analyzers = []
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        root = an.project_root
        if proj.module_file(root, prefix) is None:
            found = proj.installed_module(prefix)
            if found is None:
                return None
            root = (found[0],)
        target = proj.analyzer(root, prefix)
        if target is None or writes_sys_modules(target):
            return None
        analyzers.append(target)
    return analyzers[-1]


def writes_sys_modules(an: Analyzer) -> bool:
    """Whether the file stores into, deletes from or calls a method of `sys.modules`
    anywhere (read by its text: `sys.modules[...] = v`, `.update`, `.pop`, `del`;
    `sys` by whatever name the file imports it)."""
    known = an.tree.__dict__.get(_WRITES_SYS_MODULES)
    if known is None:
        known = any(
            _changes(parent, child)
            for parent in ast.walk(an.tree)
            for child in ast.iter_child_nodes(parent)
            if isinstance(child, (ast.Attribute, ast.Name))
            and an.imports.resolve(child) == "sys.modules"
        )
        setattr(an.tree, _WRITES_SYS_MODULES, known)
    return known


def _changes(parent: ast.AST, child: ast.expr) -> bool:
    if isinstance(parent, ast.Subscript):
        return parent.value is child and not isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Attribute):
        return parent.attr != "get"  # `sys.modules.update(...)`, `.pop`, `.setdefault`
    return False


def attribute(module: ModuleV, name: str) -> Value | None:
    """`module.name`: what the file's top level binds name to, as a value (a class,
    a function, a constant); None where that is not known."""
    from shapelint.analysis import project

    return project_value(project.lookup(module.target, name))


def project_value(sym) -> Value | None:
    """A name of the project (or of a package read as source) as a value: a class, a
    module-level function of another file (`gate_fn=sigmoid`, `apply_all(x, F.hflip)`)."""
    if isinstance(sym, ClassDef):
        return ClassRefV(sym.key)
    if isinstance(sym, Value):
        return sym
    if isinstance(sym, FuncDef) and sym.cls is None and sym.owner is not None:
        return FunctionRefV(sym.qualname, sym.owner)
    return None
