"""Abstract interpretation of one module: each function, statement by statement,
over a shape environment. Every call goes to the op that owns it (einops ops,
stub-described torch ops, same-module functions); the result is diagnostics
plus one cost record per call.

Unknown stays unknown: a value the analysis cannot follow becomes UNKNOWN and
never produces an error.

ModuleAnalyzer's methods and the helpers they use are split by concern into modules
of their own (benchmarks/split_class.py), whose mixins it inherits: run_state.py,
value_joins.py, reporting.py (ReportingMixin), function_runs.py (FunctionRunsMixin),
assignment.py (AssignmentMixin), call_running.py (CallRunningMixin), op_calls.py
(OpCallsMixin).
"""

from __future__ import annotations

import ast
import functools
from contextlib import contextmanager

from shapelint.analysis import (
    aliasing,
    allowance,
    branches,
    call_resolution,
    either_uses,
    expressions,
    failed_imports,
    folding,
    functional_enums,
    import_time,
    in_place,
    joined_objects,
    lambdas,
    loops,
    may_raise,
    module_state,
    one_shot,
    path_split,
    plain_paths,
    recursion,
    size_ties,
    statement_exec,
    statements,
)
from shapelint.analysis import annotations as ann
from shapelint.analysis import unknown_cost as uc
from shapelint.analysis.assignment import AssignmentMixin
from shapelint.analysis.call_running import CallRunningMixin
from shapelint.analysis.callable_values import ChoiceV
from shapelint.analysis.defs import ClassDef, FuncDef
from shapelint.analysis.function_runs import FunctionRunsMixin, positional_params
from shapelint.analysis.imports import ImportMap
from shapelint.analysis.joined_objects import EitherV
from shapelint.analysis.naming import NamingChecker
from shapelint.analysis.nodes import nodes_of
from shapelint.analysis.op_calls import OpCallsMixin
from shapelint.analysis.repetition import collected
from shapelint.analysis.reporting import ReportingMixin
from shapelint.analysis.run_state import (
    ASSUMED_EQUAL,
    CallRecord,
    Frame,
    FunctionSummary,
    ModuleResult,
    RawDiagnostic,
)
from shapelint.analysis.source import SourceFile
from shapelint.analysis.value_joins import join_all_values, join_envs, join_values
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import UNKNOWN, OpResult, Value
from shapelint.options import AnalysisOptions

MAX_EXPR_DEPTH = 150


# Statements with no block of their own: an exception their expressions surely
# raised that no call took is theirs (statement_exec.raised_here).
_SIMPLE = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


class ModuleAnalyzer(
    ReportingMixin, FunctionRunsMixin, AssignmentMixin, CallRunningMixin, OpCallsMixin
):
    def __init__(self, src: SourceFile, tree: ast.Module, options=None, specialize: bool = False):
        self.src = src
        self.tree = tree
        # Stores that outlive the frame doing them (a closure's cell, a global, an
        # attribute, an item of an attribute): a loop whose turn did one is not the
        # same each turn, though its own names are (loops.same_each_turn).
        self.outer_writes = 0
        # Inside such a trial turn, those stores are counted and not made, so that a
        # turn found not to be the same each turn leaves nothing behind.
        self.trial = 0
        self.options = AnalysisOptions.coerce(options)
        self.imports = ImportMap.from_module(tree)
        self.result = ModuleResult()
        self._diag_keys: set[tuple] = set()
        # (line, column) -> plain mode's undecided alternatives a finding there lies on
        self.plain_places: dict[tuple, set] = {}
        self.placing = True  # reporting.placed
        self.module_env: dict[str, Value] = {}
        # a run evaluated globals() other than in a read by key (namespace.py)
        self.globals_written = False
        self.functions: dict[str, FuncDef] = {}
        self.classes: dict[str, ClassDef] = {}
        self.summaries: dict[str, FunctionSummary] = {}
        self._in_progress: set[str] = set()
        self.annotations = ann.AnnotationReader(self)
        self.naming = NamingChecker(self)
        self._muted = 0
        self._repeating = 0
        self._diag_spots: set[tuple] = set()
        # The sinks diverted() set aside, outermost first (the result's own).
        self._diversions: list[tuple] = []
        self.active_closures: list = []  # closures running now (lambdas.invoke)
        self.uncalled: list = []  # lambdas defined and not yet called (lambdas.check_uncalled)
        self.closures: list = []  # every closure made here (lambdas.closure_of)
        self.def_defaults: dict[int, dict] = {}  # defaults.remember
        self.loop_weight = 1  # runs of the current body that enclosing loops make (loops.py)
        self._quiet = False  # a second pass over a function: its diagnostics are known
        # Names the code's uses gave to dims of unknown size (analysis/unify.py):
        # two of them equated by an op are one dim, not a conflict (SHP304).
        self.inferred_names: set[str] = set()
        # Parameters that stand for one size (`dim`, `n: int`, `heads=8`): names of
        # definite origin, which a conflict between formulas may rest on.
        self.size_params: set[str] = set()
        # per (name, line of an undecided `if`): the size it holds after (branches.sizes_after)
        self.joined_sizes: dict[tuple[str, int], str] = {}
        self._ctor_sizes: dict[str, tuple[set[str], set[frozenset[str]], set[Expr]]] = {}
        self._init_sizes: dict[str, set[str]] = {}  # per __init__: its size parameters
        # The class whose sizes each method run now on the stack declared independent,
        # and the constraints (SHP318) found between them, by message (size_ties.py).
        self._size_owners: list[tuple[ClassDef, frozenset[str]]] = []
        self.ties: dict[str, tuple | None] = {}
        self._init_defaults: dict[str, dict[str, int]] = {}  # per __init__ (_constructor_defaults)
        self._module_ran = False  # the module's top level has run: its names are final
        # Specialized evaluation (`cost PATH::QUALNAME`): every project call runs
        # its callee with the values it is given; results memoized per call key.
        self.specialize = specialize
        # Figures are left out where no face reads them (`check`, the flake8 plugin):
        # every call still goes on the record, with a stand-in cost.
        self.costs = self.options.costs or specialize
        self.specialized: dict = {}
        # The records of the last construction's __init__ chain, where it built a
        # plain class (construction.construct sets it, construction.built reads it).
        self.built_made: list | None = None
        self.in_flight: set = set()
        self.call_args: list[list] = []  # per call being evaluated, when specializing
        # Whole projects (analysis/project.py): set by bind_project.
        self.project = None
        self.project_root: tuple[str, ...] | None = None  # the roots absolute imports resolve along
        self.project_module: str | None = None
        self.project_path: str | None = None
        # id of a class statement in a class body -> its key (attributes.nested_class)
        self.nested_keys: dict[int, str] = {}
        # id of an `Enum("Name", ...)` call at the top level -> the key of its class
        self.functional_classes: dict[int, str] = {}
        self.project_links: dict[str, tuple[str, str | None]] = {}
        self.used_modules: set = set()
        self.peeked_paths: set[str] = set()  # project files read for a name's kind only
        self.class_keys: dict[str, ClassDef] = {}
        # classes under a module-level if/try: id of the class statement -> key
        self.guarded_classes: dict[int, str] = {}
        self.failing_imports: set[int] = set()  # imports a try's handler takes (failed_imports)
        self._guarded_defs: dict[str, ClassDef] = {}  # by the qualname prefix of its methods
        self._methods_of: dict[str, dict[str, FuncDef]] = {}  # _class_methods, by class key
        self._bindings: dict[tuple[int, int], tuple] = {}  # _init_binding, by ids
        self._templates: dict[str, dict[str, Value]] = {}  # class_attrs at no --dim size
        self._contract_attrs: dict[str, dict[str, Value]] = {}  # contract_attrs, by class
        # `act_layer = nn.SiLU` per parameter bound to its default layer class; by
        # class, the ones its contract_attrs assumed (their findings say so)
        self._layer_defaults_named: list[str] = []
        self._contract_named: dict[str, list[str]] = {}

    def package_parts(self) -> list[str] | None:
        """The package this project file sits in (itself, for an `__init__.py`), which
        its relative imports are relative to; None outside a project."""
        if self.project_module is None:
            return None
        parts = self.project_module.split(".")
        return parts if (self.project_path or "").endswith("__init__.py") else parts[:-1]

    def bind_project(self, project, root: tuple[str, ...], modname: str, path: str) -> None:
        """This file as module `modname` of a project: its project imports resolve."""
        from shapelint.analysis.project import project_imports

        self.project, self.project_root, self.project_module = project, root, modname
        self.project_path = path
        is_pkg = path.endswith("__init__.py")
        self.project_links = project_imports(self.tree, modname, is_pkg)
        if self.specialize and nodes_of(self.tree, ast.Try):
            # with the roots known, an import a try's handler takes can be decided
            self.imports = ImportMap.from_module(
                self.tree, functools.partial(failed_imports.taken, self)
            )

    def class_of(self, key: str) -> ClassDef | None:
        """The class an instance's kind names (`<class>` + key)."""
        from shapelint.analysis.project import class_by_key

        return class_by_key(self, key)

    # ------------------------------------------------------------------ driver
    def run(self) -> ModuleResult:
        self._index()
        top = Frame(None, "<module>")
        top.env = self.module_env
        # a file first read inside a construction: not its state (aliasing.apart); what
        # its top level changes in module-level objects is not bound (module_state)
        with aliasing.apart(), module_state.importing(), in_place.top_level():
            self.exec_block(self.tree.body, top, module_level=True)
        self._keep_module_env(top)
        self.emit_records(top)
        for qual in list(self.functions):
            self.summary(qual)
        constructions: dict[str, list] = {}  # each constructor read once for SHP317
        for cls in self.classes.values():
            endless = recursion.endless(self, cls, constructions)
            if endless is not None:
                self.report(endless[0], recursion.CODE, endless[1])
            init = cls.methods.get("__init__")
            for fd in cls.methods.values():
                if fd is not init or self.costs:
                    self.summary(fd.qualname)
            if init is not None and not self.costs and cls.self_attrs is None:
                # Without costs, __init__'s summary is only its diagnostics, and the run
                # that read the class's attributes for its other methods reported them.
                self.summary(init.qualname)
        lambdas.check_uncalled(self)
        size_ties.settle(self, ASSUMED_EQUAL)
        plain_paths.settle(self)
        self.naming.finish()
        self.result.functions.sort(key=lambda f: f.line)
        self.result.records.sort(key=lambda r: (r.line, r.column))
        return self.result

    def release(self) -> None:
        """Drop everything this analyzer holds, once a batch run has taken its
        results. Its records point back at it (FuncDef.owner, ClassDef.methods and
        FuncDef.cls, the readers' analyzer, a closure's frame) and hold the file's
        tree: left in those cycles, every file's tree waited for the garbage
        collector, whose passes over them took a third of a cold run. Broken here,
        reference counting frees them as soon as the results are read."""
        for cls in self.class_keys.values():  # every class of self.classes, by key
            for fd in cls.methods.values():
                fd.closure = None
            cls.methods.clear()
            cls.self_attrs = None
            cls.owner = None
        for fd in self.functions.values():
            fd.cls = fd.owner = None
        for closure in self.closures:
            closure.frame = closure.owner = None
        self.__dict__.clear()

    def prepare(self) -> None:
        """Index the module and run its top level (constants, imports), for a
        caller that then asks about one definition (analysis/target.py)."""
        self._index()
        top = Frame(None, "<module>")
        top.env = self.module_env
        # a file first read inside a construction: not its state (aliasing.apart); what
        # its top level changes in module-level objects is not bound (module_state)
        with aliasing.apart(), module_state.importing(), in_place.top_level():
            self.exec_block(self.tree.body, top, module_level=True)
        self._keep_module_env(top)

    def _keep_module_env(self, top: Frame) -> None:
        self._module_ran = True
        # A top-level try/if joins its branches into a new dict: what the module
        # defined after one must still be what its functions see.
        if top.env is not self.module_env:
            self.module_env.clear()
            self.module_env.update(top.env)

    def _index(self) -> None:
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[stmt.name] = FuncDef(stmt, stmt.name, owner=self)
            elif isinstance(stmt, ast.ClassDef):
                key = f"{self.project_module}:{stmt.name}" if self.project_module else stmt.name
                self.classes[stmt.name] = self._index_class(stmt, key)
        for stmt in self.tree.body:
            made = functional_enums.class_statement(self.imports, stmt)
            if made is not None and made[0] not in self.classes:
                name, node = made
                key = f"{self.project_module}:{name}" if self.project_module else name
                self._index_class(node, key)
                self.functional_classes[id(stmt.value)] = key  # type: ignore[attr-defined]
        for stmt in statements.guarded_top_level(self.tree):
            if isinstance(stmt, ast.ClassDef):
                # A class under a module-level `if` / `try` is one arm's: its key is its
                # own (the line), and the class statement binds it where it runs.
                key = f"{self.project_module or ''}:{stmt.lineno}.{stmt.name}"
                self.guarded_classes[id(stmt)] = key
                qual = f"{stmt.name}@{stmt.lineno}"  # its methods' summaries are its own
                self._guarded_defs[qual] = self._index_class(stmt, key, qual)

    def local_class(self, stmt: ast.ClassDef, frame: Frame) -> str:
        """The key of the class a class statement makes where it runs inside a
        function, in a target run: a class of its own per run, keyed and named by
        it (two runs close over different values, and a method's summary is kept by
        its qualname), whose methods see the function's names as free variables."""
        n = len(self.class_keys)
        key = f"{self.project_module or ''}:{stmt.lineno}#{n}.{stmt.name}"
        qual = f"{stmt.name}@{stmt.lineno}#{n}"
        self._guarded_defs[qual] = cd = self._index_class(stmt, key, qual)
        for fd in cd.methods.values():
            fd.closure = frame
        return key

    def _index_class(self, stmt: ast.ClassDef, key: str, qual: str | None = None) -> ClassDef:
        cd = ClassDef(stmt, stmt.name, owner=self, key=key)
        for sub in stmt.body:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{qual or stmt.name}.{sub.name}"
                cd.methods[sub.name] = FuncDef(sub, name, cd, owner=self)
            elif isinstance(sub, ast.ClassDef):
                # a class of the class body (read as `self.ATan`): keyed and named by
                # its line, as a class under a module-level `if` is
                inner = f"{self.project_module or ''}:{sub.lineno}.{sub.name}"
                inner_qual = f"{sub.name}@{sub.lineno}"
                self._guarded_defs[inner_qual] = self._index_class(sub, inner, inner_qual)
                self.nested_keys[id(sub)] = inner
        init = cd.methods.get("__init__")
        if init is not None:
            cd.init_params = [a.arg for a in positional_params(init.node)[1:]]
            cd.init_kwonly = [a.arg for a in init.node.args.kwonlyargs]
        self.class_keys[key] = cd
        return cd

    # ------------------------------------------------------------------ diagnostics

    def reaches_result(self) -> bool:
        """Whether a finding reported now is the result's, not a diversion's that
        the caller of a run says again (or drops, with the run's other findings)."""
        return not self._diversions or self.result.diagnostics is self._diversions[0][0]

    # ------------------------------------------------------------------ statements
    def exec_block(self, body: list[ast.stmt], frame: Frame, module_level: bool = False) -> None:
        apart: list = []  # errors a path split's paths met
        for i, stmt in enumerate(body):
            if frame.done or frame.jump:
                break  # after a return, break or continue: the rest does not run
            merged = branches.with_rest(stmt, body, i) if type(stmt) is ast.If else stmt
            split = None
            if merged is stmt and type(stmt) is ast.If and path_split.splits(self, frame, body, i):
                split = path_split.snapshot(frame)
            n_returns = len(frame.returns)
            try:
                self._exec(merged, frame, module_level)
            except RecursionError:
                # Pathological nesting, or calls nested past Python's stack (a chain
                # of modules across files): what the statement runs is not known,
                # and on the record, so no total is complete without it.
                why = "nested too deeply to follow: not analysed"
                uc.record_not_known(self, stmt, frame, "statement", why)
                # nor what it stores into a module being built (`self.inner =
                # Wrap(d, n - 1)` ninety deep): no count of it is known
                aliasing.lost()
            if split is not None and frame.lost is stmt:
                apart += path_split.follow(self, split, body, i)
            if merged is not stmt:
                break  # one branch returns: the rest of the block was the other's
            if type(stmt) in _LOOPS and self.specialize and i + 1 < len(body):
                if len(frame.returns) > n_returns and not (frame.done or frame.jump):
                    loops.after_early_return(self, body[i + 1 :], frame)
                    break
        for d, where in apart:
            if (d.line, d.column, d.code) not in self._diag_spots:
                spot = (d.line, d.column, d.end_line, d.end_column)
                self.report(spot, d.code, f"{d.message} ({where})")

    def _exec(self, stmt: ast.stmt, frame: Frame, module_level: bool) -> None:
        handler = statement_exec.HANDLERS.get(type(stmt))
        frame.ran.add(id(stmt))  # what the run ran (in_place.alias_ran)
        if self.specialize:
            may_raise.statement(self, stmt)
        # pass / break / continue / global / nonlocal: nothing to track
        if handler is not None:
            if joined_objects.holding():
                either_uses.before(self, stmt, frame)
            either_uses.running(stmt)
            try:
                if self.specialize:
                    allowance.step()
                if self.specialize and import_time.bounded(self, stmt, frame):
                    import_time.run(
                        self, stmt, frame, lambda: handler(self, stmt, frame, module_level)
                    )
                else:
                    handler(self, stmt, frame, module_level)
            finally:
                either_uses.ran()
                if self.specialize:
                    may_raise.settle(stmt)
        if type(stmt) in _SIMPLE and not frame.done:
            statement_exec.raised_here(self, stmt, frame)

    # ------------------------------------------------------------------ for analysis helpers
    # (loops, lambdas: the interpreter's own steps, as they may call them)
    def scope(self, frame: Frame) -> Frame:
        """A frame for a comprehension or a closure's body: it sees frame's
        variables, and its calls count in frame's records."""
        inner = Frame(frame.func, frame.name)
        inner.env = dict(frame.env)
        inner.locals = set(frame.locals)
        inner.local_imports = frame.local_imports
        inner.records = frame.records
        inner.assumed = frame.assumed  # on a path split's path, inside too
        return inner

    @contextmanager
    def muted(self):
        """No diagnostics from the block (a loop's later turns)."""
        self._muted += 1
        try:
            yield
        finally:
            self._muted -= 1

    @contextmanager
    def repeated(self):
        """Code run again with other values (the next item of an unrolled loop,
        another call of a closure): a finding already made at a spot is not made
        again there in other words."""
        self._repeating += 1
        try:
            yield
        finally:
            self._repeating -= 1

    @staticmethod
    def join(a: Value, b: Value) -> Value:
        return join_values(a, b)

    def is_builtin(self, name: str, frame: Frame) -> bool:
        """Whether a bare name is Python's builtin here (nothing shadows it)."""
        return (
            name not in frame.env
            and name not in frame.locals
            and name not in self.module_env
            and name not in self.functions
            and name not in self.classes
            and self.imports.resolve(ast.Name(name), frame.locals, frame.local_imports) is None
        )

    # ------------------------------------------------------------------ expressions
    def eval(self, node: ast.expr | None, frame: Frame, depth: int = 0) -> Value:
        if node is None:
            return UNKNOWN
        if depth > MAX_EXPR_DEPTH:
            return UNKNOWN
        handler = _EXPR_HANDLERS.get(type(node), expressions.eval_children)
        # (only a call or a generator expression makes an iterator: the other nodes,
        # most of those evaluated, skip the two tests)
        call = isinstance(node, ast.Call)
        if (call or isinstance(node, ast.GeneratorExp)) and one_shot.makes_iterator(
            self, node, frame
        ):
            with collected(frame) as made:  # its items' costs: counted as it is walked
                value = handler(self, node, frame, depth + 1)
            value = one_shot.held(self, node, value, frame, made)
        elif (
            call and (walked := one_shot.generator_bound(self, node, frame, depth + 1)) is not None
        ):
            value = walked  # `g = self.blocks()` walked once through g: what it yields
        else:
            value = handler(self, node, frame, depth + 1)
            if type(value) is one_shot.OneShotV:  # an iterator a call handed back
                value = one_shot.held(self, node, value.items, frame) if call else UNKNOWN
        if type(value) is EitherV:
            value = either_uses.used(self, node, value, frame)
        elif type(value) is ChoiceV and joined_objects.holding():
            value = either_uses.chosen(self, node, value, frame)
        if self.specialize and not (value is UNKNOWN and may_raise.builtin_read(self, node, frame)):
            may_raise.expression(node, value)
        return value

    def _qualname(self, node: ast.expr, frame: Frame) -> str | None:
        return self.imports.resolve(node, frame.locals, frame.local_imports)

    # ------------------------------------------------------------------ cost records

    # The entry points analysis/modules.py drives the interpretation through.
    def new_frame(self, func: FuncDef | None, name: str) -> Frame:
        frame = Frame(func, name)
        outer = func.closure if func is not None else None
        if outer is not None:  # a local class's method: the defining run's names, as scope()
            frame.env = dict(outer.env)
            frame.locals = set(outer.locals)
            frame.local_imports = dict(outer.local_imports)
        return frame

    def decide(self, test: ast.expr, frame: Frame) -> bool | None:
        """The truth of a test on known values, None where it depends on others."""
        return folding.test_truth(self, test, frame)

    exec_statement = _exec
    qualname_of = _qualname
    join_env = staticmethod(lambda a, b: join_envs(a, b))
    join_all = staticmethod(lambda values: join_all_values(values))


# ---------------------------------------------------------------------- dispatch

# One handler per node type; an expression with none has its children evaluated
# for calls (statements: statement_exec.HANDLERS).
_EXPR_HANDLERS = {
    ast.Constant: expressions.eval_constant,
    ast.Name: expressions.eval_name,
    ast.Call: call_resolution.call,
    ast.Attribute: expressions.attribute,
    ast.BinOp: expressions.eval_binop,
    ast.UnaryOp: expressions.eval_unaryop,
    ast.Tuple: expressions.eval_sequence,
    ast.List: expressions.eval_sequence,
    ast.Set: expressions.eval_set,
    ast.Subscript: expressions.subscript,
    ast.IfExp: expressions.eval_ifexp,
    ast.JoinedStr: expressions.eval_joined_str,
    ast.NamedExpr: expressions.eval_named_expr,
    ast.ListComp: expressions.eval_comprehension,
    ast.SetComp: expressions.eval_comprehension,
    ast.GeneratorExp: expressions.eval_comprehension,
    ast.DictComp: expressions.eval_comprehension,
    ast.Lambda: expressions.eval_lambda,
    ast.Compare: expressions.eval_fold,
    ast.BoolOp: expressions.eval_fold,
    ast.Dict: expressions.eval_dict,
    ast.Slice: expressions.eval_slice,
}


# ---------------------------------------------------------------------- helpers


__all__ = [
    "ModuleAnalyzer",
    "ModuleResult",
    "CallRecord",
    "FunctionSummary",
    "RawDiagnostic",
    "OpResult",
]
