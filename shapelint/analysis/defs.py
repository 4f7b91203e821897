"""What the module pass indexes (a function, a class), and the face of the analyzer
that the modules around the interpreter drive it through.

The interpreter imports the modules that make up its steps (statement_exec.py,
expressions.py, call_resolution.py, learning.py, builtins.py, attributes.py) and the
constructs it hands off (modules.py, folding.py, loops.py, project.py, ...); they
call back into it. They type their analyzer as `Analyzer`, the Protocol here, and
the plain records `FuncDef` and `ClassDef` live here too, so none of them imports
the interpreter, not even for types: there is no import cycle to begin with.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from shapelint.analysis.nodes import nodes_of

if TYPE_CHECKING:
    from shapelint.analysis.imports import ImportMap
    from shapelint.ops.values import Cost, ObjectV, Value
    from shapelint.options import AnalysisOptions


def named_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    """Every parameter that has a name of its own: positional-only, positional and
    keyword-only (not *args and **kwargs)."""
    a = fn.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


@dataclass
class FuncDef:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    qualname: str
    cls: ClassDef | None = None
    # The analyzer of the file that defines it (another file of the project).
    owner: Analyzer | None = field(default=None, compare=False, repr=False)
    # A method of a class whose statement ran inside a function (a target run): the
    # frame of that run, whose names are its free variables (Interpreter.local_class).
    closure: Any = field(default=None, compare=False, repr=False)

    @property
    def rebinds_globals(self) -> bool:
        """Whether its body declares `global` (a run changes the module's names)."""
        return bool(nodes_of(self.node, ast.Global))


@dataclass
class ClassDef:
    node: ast.ClassDef
    name: str
    methods: dict[str, FuncDef] = field(default_factory=dict)
    self_attrs: dict[str, Value] | None = None  # from __init__, computed on demand
    # the attributes __init__ stores on a path of a test it could not decide
    path_attrs: frozenset[str] = frozenset()
    init_params: list[str] = field(default_factory=list)
    init_kwonly: list[str] = field(default_factory=list)  # after `*` or `*args`: by keyword
    owner: Analyzer | None = field(default=None, compare=False, repr=False)
    key: str = ""  # unique across the project: instances are ObjectV("<class>" + key)
    # What the modules above read of this class once (enums.py: its enum kind, its
    # members), kept with it: a class's bases and body do not change within its
    # tree's life, and the answers die with it (a table keyed by class key kept every
    # file's class, and the analyzer and tree it belongs to, for the whole run).
    kept: dict[str, object] = field(default_factory=dict, compare=False, repr=False)


# A function's interpretation state (the interpreter's own frame class): the
# modules around it pass frames along and read a few fields, never build one
# except through `new_frame`.
Frame = Any


class Analyzer(Protocol):
    """The analyzer of one file (interpreter.ModuleAnalyzer), as the modules it
    imports see it."""

    options: AnalysisOptions
    imports: ImportMap
    annotations: Any
    module_env: dict[str, Value]
    functions: dict[str, FuncDef]
    classes: dict[str, ClassDef]
    class_keys: dict[str, ClassDef]
    specialize: bool
    outer_writes: int  # stores that outlive their frame, counted (loops.same_each_turn)
    trial: int  # > 0: in a trial turn, where such stores are counted, not made
    call_args: list  # per call being evaluated, when specializing: its values
    naming: Any  # the naming rules' checker (naming.py), told of uses as they run
    costs: bool  # False: no FLOP or byte formula is built (check)
    inferred_names: set  # dims named by learning, not by the code
    size_params: set  # names of definite origin a conflict between formulas may rest on
    joined_sizes: dict  # (name, line) -> the size an undecided `if` left it (branches.py)
    specialized: dict
    built_made: list | None
    in_flight: set
    # Whole projects (project.py)
    project: Any
    project_root: tuple[str, ...] | None
    project_module: str | None
    project_path: str | None
    project_links: dict[str, tuple[str, str | None]]
    guarded_classes: dict[int, str]
    failing_imports: set[int]
    nested_keys: dict[int, str]
    functional_classes: dict[int, str]
    used_modules: set
    peeked_paths: set
    tree: ast.Module
    result: Any  # the ModuleResult its run fills
    ties: dict[str, tuple | None]  # a constraint's message -> (class, side, side)
    def_defaults: dict[int, dict]  # a def the pass ran -> its defaults then (defaults.py)

    def bind_project(
        self, project: Any, root: tuple[str, ...], modname: str, path: str
    ) -> None: ...

    def prepare(self) -> None: ...

    def class_of(self, key: str) -> ClassDef | None: ...

    def local_class(self, stmt: ast.ClassDef, frame: Frame) -> str: ...

    def constructor_sizes(self, cd: ClassDef) -> tuple[set[str], set[frozenset[str]]]: ...
    def init_size_names(self, qualname: str) -> set[str]: ...
    def add_init_size(self, qualname: str, name: str) -> None: ...

    def eval(self, node: ast.expr | None, frame: Frame, depth: int = 0) -> Value: ...

    def new_frame(self, func: FuncDef | None, name: str) -> Frame: ...

    def exec_block(
        self, body: list[ast.stmt], frame: Frame, module_level: bool = False
    ) -> None: ...

    def exec_statement(self, stmt: ast.stmt, frame: Frame, module_level: bool) -> None: ...

    def decide(self, test: ast.expr, frame: Frame) -> bool | None: ...

    def analyze_nested(self, fd: FuncDef, outer: Frame) -> None: ...

    def emit_records(self, frame: Frame) -> None: ...

    def report(self, node_or_pos: Any, code: str, message: str) -> None: ...
    def kept(self, issue: Any) -> Any: ...

    def diverted(self, afresh: bool = False) -> Any: ...

    def reaches_result(self) -> bool: ...

    def qualname_of(self, node: ast.expr, frame: Frame) -> str | None: ...

    def project_symbol(self, func: ast.expr, qual: str | None, frame: Frame) -> Any: ...

    def call_project(
        self, sym: Any, node: ast.Call, args: Any, kwargs: Any, frame: Frame
    ) -> Value: ...

    def class_methods(self, key: str) -> dict[str, FuncDef]: ...

    def call_method(
        self, recv: ObjectV, meth: str, node: ast.Call, args: Any, kwargs: Any, frame: Frame
    ) -> Value: ...

    def unknown_call(
        self,
        node: ast.Call,
        args: Any,
        kwargs: Any,
        frame: Frame,
        why: str,
        open_args: bool = False,
    ) -> Value: ...

    def assign(
        self, target: ast.expr, value: Value, frame: Frame, value_node: ast.expr | None
    ) -> None: ...

    def record(
        self,
        node: Any,
        frame: Frame,
        op: str,
        pattern: Any,
        inputs: Any,
        value: Value,
        cost: Cost,
        summed: bool = False,
    ) -> Any: ...

    def construct(self, cd: ClassDef, args: list[Value], kwargs: dict[str, Value]) -> Value: ...

    def call_value(
        self, callee: Value, node: ast.Call, args: Any, kwargs: Any, frame: Frame
    ) -> Value: ...

    def call_local(
        self, name: str, node: ast.Call, args: Any, kwargs: Any, frame: Frame
    ) -> Value: ...

    def invoke(
        self,
        fd: FuncDef,
        recv: ObjectV | None,
        node: ast.Call,
        args: Any,
        kwargs: Any,
        frame: Frame,
    ) -> Value: ...

    def call_qualified(
        self, qual: str, node: ast.Call, args: Any, kwargs: Any, open_kwargs: bool, frame: Frame
    ) -> Value: ...

    def op_value(
        self,
        name: str,
        args: list[Value],
        kwargs: dict[str, Value],
        node: Any,
        frame: Frame,
        arg_nodes: Any = None,
    ) -> Value: ...

    def join_env(self, a: dict[str, Value], b: dict[str, Value]) -> dict[str, Value]: ...

    def join_all(self, values: list[Value]) -> Value: ...
