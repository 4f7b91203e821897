"""What a module's top level binds a name to, read from its syntax alone.

Which function or class a package re-exports a name from (`from .utils import
auto_docstring`, where `utils/__init__.py` has `from .auto_docstring import
auto_docstring`) is told by the import statements' text: interpreting every file
along the way, their whole top level and what it imports, only to find one
definition is most of the cost of such a read. The syntax decides a name's
binding only where nothing else in the file can bind it: one statement of the
module's body binds it, at the top level itself (not under an `if`, a `try`, a
loop or a `with`, whose other paths bind otherwise or not at all), no star import
runs after it (it may bind any name), no function or class declares it `global`,
and the file can reach its own namespace by no other way: `globals()`, `vars()`
without arguments, `locals()`, `exec`, `eval`, `__import__`,
`importlib.import_module`, `sys.modules`, a function's `__globals__`, a frame's
`f_globals`, `inspect.getmodule`. Anywhere else the binding is not decided here
(None), and the caller analyses the file as it did.
"""

from __future__ import annotations

import ast

# Names through which code reaches a module's namespace without naming what it binds.
_NAMESPACE_DOORS = frozenset(
    {
        "globals",
        "locals",
        "exec",
        "eval",
        "__import__",
        "import_module",
        "modules",
        "__globals__",
        "f_globals",
        "getmodule",
        "__builtins__",
    }
)

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


class Bindings:
    """A module's top-level bindings, read once per parsed tree."""

    def __init__(self, tree: ast.Module | ast.FunctionDef):
        self.open = False  # the file may reach its own namespace otherwise
        # name -> [(index of the top-level statement, the statement, whether it is
        # that top-level statement itself)]
        self.sites: dict[str, list[tuple[int, ast.stmt, bool]]] = {}
        self.stars: list[int] = []  # indexes of the top-level statements holding a star import
        # names some function or class declares global (or nonlocal, read on a
        # function's body: handing_back.py)
        self.declared: set[str] = set()
        for i, stmt in enumerate(tree.body):
            self._read(i, stmt, stmt)
        self.imports: list[ast.Import | ast.ImportFrom] = []  # anywhere in it
        for node in ast.walk(tree):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                self.declared.update(node.names)
            elif _door(node):
                self.open = True
                break
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.imports.append(node)

    def statement(self, name: str) -> ast.stmt | None:
        """The one statement whose run binds `name` in the module, where the
        syntax decides it (module docstring); None otherwise."""
        if self.open or name in self.declared:
            return None
        sites = self.sites.get(name, ())
        if len(sites) != 1:
            return None
        index, stmt, top = sites[0]
        if not top or any(s >= index for s in self.stars):
            return None
        return stmt

    def _bind(self, name: str, i: int, stmt: ast.stmt, top: bool) -> None:
        self.sites.setdefault(name, []).append((i, stmt, top))

    def _read(self, i: int, stmt: ast.stmt, top_stmt: ast.stmt) -> None:
        top = stmt is top_stmt
        if _type_checking(stmt):
            # `if TYPE_CHECKING:` never runs; its else branch may
            for s in stmt.orelse:  # type: ignore[attr-defined]
                self._read(i, s, top_stmt)
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._bind(stmt.name, i, stmt, top)
            # its decorators, defaults and bases run here (a walrus there binds here)
            for node in _own_nodes(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    self._bind(node.id, i, stmt, top)
            return
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                if alias.name == "*":
                    self.stars.append(i)
                elif isinstance(stmt, ast.Import) and alias.asname is None:
                    self._bind(alias.name.split(".")[0], i, stmt, top)
                else:
                    self._bind(alias.asname or alias.name, i, stmt, top)
            return
        for node in _own_nodes(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                self._bind(node.id, i, stmt, top)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self._bind(node.name, i, stmt, top)
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                self._bind(node.name, i, stmt, top)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                self._bind(node.rest, i, stmt, top)
            elif isinstance(node, ast.stmt) and node is not stmt:
                self._read(i, node, top_stmt)


def _own_nodes(node: ast.AST):
    """The nodes of node at its own scope: not inside a def, class or lambda (a
    walrus in a comprehension binds in the enclosing scope, so comprehensions are
    walked), nor inside a nested statement (read on its own)."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, _SCOPES) or isinstance(n, ast.stmt):
            continue
        stack.extend(ast.iter_child_nodes(n))


def _type_checking(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.If):
        return False
    test = stmt.test
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
    return name == "TYPE_CHECKING"


def _door(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _NAMESPACE_DOORS
    if isinstance(node, ast.Attribute):
        return node.attr in _NAMESPACE_DOORS
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any(a.name.split(".")[-1] in _NAMESPACE_DOORS for a in node.names)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "vars"
        and not node.args
    )
