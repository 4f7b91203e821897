"""The package's floors, checked on its imports (module level, inside functions
and under `if TYPE_CHECKING:`, read with ast): no import cycle, nothing importing from a higher
floor, and no private name (`_x`) used outside the module that defines it.

Floors, lowest first (docs/architecture.md):
  base      shapelint/__init__.py, diagnostics.py, options.py (the analysis options),
            pyparse.py (parsing with warnings caught), scoped.py (a context variable
            set for a with block), frozen_init.py (a frozen dataclass's faster __init__)
  words     notation/ (shape strings, symbolic dims), rules/ (the catalog)
  ops       ops/ (what each operation does to shapes and costs)
  analysis  analysis/ (the driver is the one door), config.py, config_targets.py, cache.py
  views     report/ (formats, numbers), napkin/ (formulas, hardware, plots), baseline.py
  wings     cost/, runtime/ (the only importer of torch), fixes.py, fix_transform.py
  faces     cli/ (the only importer of click), flake8_plugin.py, lsp.py, lsp_io.py
A module may import from its own floor or below, never above.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "shapelint"

FLOORS = [
    ("base", ("shapelint", "shapelint.diagnostics", "shapelint.options", "shapelint.pyparse",
              "shapelint.scoped", "shapelint.frozen_init")),
    ("words", ("shapelint.notation", "shapelint.rules")),
    ("ops", ("shapelint.ops",)),
    (
        "analysis",
        ("shapelint.analysis", "shapelint.config", "shapelint.config_targets", "shapelint.cache"),
    ),
    ("views", ("shapelint.report", "shapelint.napkin", "shapelint.baseline")),
    (
        "wings",
        ("shapelint.cost", "shapelint.runtime", "shapelint.fixes", "shapelint.fix_transform"),
    ),
    (
        "faces",
        (
            "shapelint.cli",
            "shapelint.flake8_plugin",
            "shapelint.lsp",
            "shapelint.lsp_io",
            "shapelint.__main__",
        ),
    ),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "_stubs" not in p.parts}


def floor_of(mod: str) -> int:
    best, level = -1, None
    for i, (_, prefixes) in enumerate(FLOORS):
        for pre in prefixes:
            # "shapelint" names the package's __init__ only: a new top-level module
            # must be given its floor here.
            inside = mod.startswith(pre + ".") and pre != "shapelint"
            if (mod == pre or inside) and len(pre) > best:
                best, level = len(pre), i
    assert level is not None, f"{mod} is on no floor: add it to FLOORS and the docs"
    return level


def imports_of(mod: str) -> dict[str, int]:
    """shapelint modules this module imports (anywhere in it), with a line of each."""
    path = MODULES[mod]
    return imports_in(ast.parse(path.read_text(), str(path)), mod, path.name == "__init__.py")


def imports_in(tree: ast.AST, mod: str, is_package: bool) -> dict[str, int]:
    """Every import counts: module level, inside functions, and under `if
    TYPE_CHECKING:` too (a cycle of types is still a cycle: the modules cannot be
    read, or moved, one without the other)."""
    package = mod if is_package else mod.rpartition(".")[0]
    out: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "shapelint":
                    out.setdefault(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            if base.split(".")[0] != "shapelint":
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.setdefault(sub if sub in MODULES else base, node.lineno)
    out.pop(mod, None)
    return {m: line for m, line in out.items() if m in MODULES}


GRAPH = {m: imports_of(m) for m in MODULES}


def test_every_module_is_on_a_floor():
    for m in MODULES:
        floor_of(m)


def test_nothing_imports_from_a_higher_floor():
    upward = [
        f"{MODULES[m].relative_to(PACKAGE.parent)}:{line}: {m} ({FLOORS[floor_of(m)][0]}) "
        f"imports {dep} ({FLOORS[floor_of(dep)][0]})"
        for m, deps in GRAPH.items()
        for dep, line in deps.items()
        if floor_of(dep) > floor_of(m)
    ]
    assert upward == [], "\n".join(upward)


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    assert cycles(GRAPH) == []


def test_the_cycle_finder_finds_cycles():
    g = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert cycles(g) == [["a", "b", "c"]]
    assert cycles({"a": {"b": 1}, "b": {}}) == []


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


# Private by Python's convention, public by the library's (namedtuple, sys).
STDLIB_UNDERSCORED = {"_replace", "_asdict", "_fields", "_make", "_getframe", "_exit"}


def _defined_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute):
                    names.add(sub.attr)
                elif isinstance(sub, ast.Name):
                    names.add(sub.id)
    return names


def test_no_private_name_is_used_outside_its_module():
    found = []
    for mod, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        defined = _defined_names(tree) | STDLIB_UNDERSCORED
        # `other._x` where no `_x` is defined in this module: reaching into another
        # module's object (`self.analyzer._qualname`).
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and _private(node.attr)
                and node.attr not in defined
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                found.append(f"{mod}:{node.lineno}: uses {ast.unparse(node)}")
        aliases: set[str] = set()  # local names bound to shapelint modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("shapelint"):
                for a in node.names:
                    if _private(a.name):
                        found.append(f"{mod}:{node.lineno}: imports {node.module}.{a.name}")
                    if f"{node.module}.{a.name}" in MODULES:
                        aliases.add(a.asname or a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("shapelint") and a.asname:
                        aliases.add(a.asname)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _private(node.attr)
            ):
                found.append(f"{mod}:{node.lineno}: uses {node.value.id}.{node.attr}")
    assert found == [], "\n".join(found)


def test_click_lives_only_under_cli_and_torch_only_under_runtime():
    wrong = []
    for mod in MODULES:
        for node in ast.walk(ast.parse(MODULES[mod].read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            for n in names:
                top = n.split(".")[0]
                if top == "click" and not (
                    mod == "shapelint.cli" or mod.startswith("shapelint.cli.")
                ):
                    wrong.append(f"{mod} imports click")
                if top == "torch" and not mod.startswith("shapelint.runtime"):
                    wrong.append(f"{mod} imports torch")
    assert wrong == [], wrong


def test_the_walk_sees_function_level_and_type_checking_imports():
    assert "shapelint.analysis.driver" in GRAPH["shapelint.fixes"]  # module level
    assert "shapelint.analysis.interpreter" in GRAPH["shapelint.analysis.driver"]  # in a function
    assert "shapelint.analysis.defs" in GRAPH["shapelint.analysis.annotations"]  # TYPE_CHECKING
    # a type-level import back into a module that imports this one is a cycle
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from shapelint.analysis.interpreter import ModuleAnalyzer\n"
    )
    imported = "shapelint.analysis.branches"  # a module the interpreter imports
    typed = imports_in(ast.parse(source), imported, False)
    assert typed == {"shapelint.analysis.interpreter": 3}
    assert imported in GRAPH["shapelint.analysis.interpreter"]
    found = cycles({**GRAPH, imported: typed})
    assert any({imported, "shapelint.analysis.interpreter"} <= set(c) for c in found)


def test_every_package_ships():
    """A non-editable `pip install .` installs only the packages pyproject lists."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    listed = set(
        tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"][
            "packages"
        ]
    )
    found = {module_name(p) for p in PACKAGE.rglob("__init__.py")}
    assert found - listed == set(), "add them to [tool.setuptools] packages"
