"""Abstract interpretation of one module: each function, statement by statement,
over a shape environment. Every call goes to the op that owns it (einops ops,
stub-described torch ops, same-module functions); the result is diagnostics
plus one cost record per call.

Unknown stays unknown: a value the analysis cannot follow becomes UNKNOWN and
never produces an error.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

from shapelint.analysis import (
    absence,
    aliasing,
    argument_runs,
    attribute_hooks,
    attribute_stores,
    attributes,
    autograd_function,
    branches,
    builtins,
    call_path,
    call_resolution,
    callable_values,
    choices,
    class_state,
    compiled,
    config_classes,
    construction,
    data_store,
    dataclass_runtime,
    decorators,
    deferred,
    dict_values,
    dynamic,
    enums,
    expressions,
    failed_imports,
    folding,
    forward_ad,
    grad_mode,
    holders,
    import_time,
    in_place,
    init_paths,
    init_run,
    inplace,
    installed,
    item_sizes,
    itemgetters,
    iterators,
    lambdas,
    learning,
    loops,
    may_raise,
    module_flags,
    module_kinds,
    module_state,
    modules,
    ndarrays,
    one_shot,
    own_methods,
    path_split,
    plain,
    plain_instances,
    pytree,
    pytypes,
    recursion,
    reduced,
    reparametrize,
    scalars,
    sequences,
    size_ties,
    specialized,
    statement_exec,
    statements,
    stdlib_logging,
    stdlib_re,
    torch_absence,
    torch_containers,
    unify,
    unnamed,
)
from shapelint.analysis import annotations as ann
from shapelint.analysis import calls as dispatch
from shapelint.analysis import layer_defaults as layer_defaults_of
from shapelint.analysis import unknown_cost as uc
from shapelint.analysis.attributes import is_static
from shapelint.analysis.defs import ClassDef, FuncDef, named_params
from shapelint.analysis.imports import ImportMap
from shapelint.analysis.modules import SelfRecorder
from shapelint.analysis.naming import NamingChecker
from shapelint.analysis.nodes import attribute_copies, nodes_in_class, nodes_of, stored_names, walk
from shapelint.analysis.own_pass import OwnPass
from shapelint.analysis.repetition import collected
from shapelint.analysis.source import SourceFile
from shapelint.notation.quoting import ends
from shapelint.notation.symbolic import (
    Expr,
    assuming,
    binop,
    declare_apart,
    declare_independent,
    declare_learned,
    declare_learned_sizes,
    fact_scope,
    note_equal,
    product,
)
from shapelint.ops import backward, tensor_values
from shapelint.ops.indexing import exceeds_every_length
from shapelint.ops.saved import storage_of
from shapelint.ops.shape_rules import CAT, MATMUL, SIGNATURE
from shapelint.ops.values import (
    STAND_IN_COST,
    UNKNOWN,
    BoolV,
    BufferV,
    Cost,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    OpIssue,
    OpResult,
    OptionalV,
    ParameterV,
    StrV,
    TensorV,
    TupleV,
    Value,
    Var,
    as_buffer,
    dim_py,
    fresh_var,
)
from shapelint.options import AnalysisOptions
from shapelint.rules import severity_of

ASSUMED_EQUAL = "SHP318"
# The op codes whose sizes must be equal, with no broadcasting: a matrix product's
# inner size (a Linear's in_features), an op's signature (conv channels, a norm's
# shape), cat's other sizes.
_EXACT = frozenset({MATMUL, SIGNATURE, CAT})
LEARNED_EQUAL = "SHP320"
MAX_EXPR_DEPTH = 150
_MAX_QUOTED = 120  # longest pattern quoted whole in a message  # deeper expressions evaluate to UNKNOWN instead of recursing on


# nn.Module's registries of what it holds: a store into one is a registration.
_REGISTRIES = frozenset({"_modules", "_parameters", "_buffers"})


@dataclass
class RawDiagnostic:
    line: int
    column: int  # 0-based chars
    end_line: int
    end_column: int
    code: str
    message: str


@dataclass
class CallRecord:
    line: int
    column: int  # 0-based chars
    function: str
    op: str
    pattern: str | None
    inputs: list[list[str | None] | None]
    output: list[str | None] | None
    cost: Cost
    # The calls this one ran (a module's forward, a Sequential's layers, a loop's
    # iterations), when the analysis followed them into the callee.
    children: list[CallRecord] = field(default_factory=list)
    # What the code calls (`self.attn`, `block`) or, for a loop, what it binds
    # (`block`): how the per-module table names the module a call runs.
    callee: str | None = None
    # A raise that surely runs (analysis/raising.py): the exception's class name.
    raises: str | None = None
    # The Origins of the tensors it made (ops/backward.py; None: not known):
    # whether the loss reaches it (analysis/reached.py).
    result: frozenset | None = None
    # How many times each child runs, where not once each (a loop counted by one turn),
    # and, for such a loop, (what each name the turn rebound holds after it, the
    # Origin it entered the turn with): which turns' calls the loss reaches.
    weights: list | None = None
    carried: list | None = None
    # For a loop run item by item: the turn (0-based) each child ran in, so that the
    # per-module table names the item a call ran even where a turn called nothing.
    turns: list[int] | None = None


@dataclass
class FunctionSummary:
    name: str
    line: int
    params: list[tuple[str, Value]]  # parameter name -> value it was analyzed with
    returns: Value
    return_annotation: TensorV | None
    flops: Expr | None
    other_flops: Expr | None
    bytes: Expr | None
    complete: bool  # every call's cost known
    calls: int
    # int parameters with a literal default: the formula keeps the name, and a
    # value is computed with the default unless the caller (or --dim) binds it.
    defaults: dict[str, int] = field(default_factory=dict)
    # The calls whose cost is unknown, in order: what makes the total a lower bound.
    unknown: list[dict] = field(default_factory=list)
    # Parameters whose shape was learnt from their uses, not declared: a caller
    # binds its sizes to them but is not told it broke an annotation.
    inferred: frozenset[str] = frozenset()
    # The names its figures and its result use (analysis/unnamed.own_names): a
    # call must bind each, or they are sizes the caller does not know; those of
    # its result alone (a caller's dims that happen to share a name with one of
    # the figures' are the caller's own).
    names: frozenset[str] = frozenset()
    result_names: frozenset[str] = frozenset()
    # Names its figures use that none of its inputs carries (a pattern axis of an
    # operand the analysis lost, a callee's name): the calls needing them are
    # left out of its total, which is then a lower bound (analysis/unnamed.py).
    foreign: frozenset[str] = frozenset()


@dataclass
class ModuleResult:
    diagnostics: list[RawDiagnostic] = field(default_factory=list)
    records: list[CallRecord] = field(default_factory=list)
    functions: list[FunctionSummary] = field(default_factory=list)


class _Frame:
    """Per-function interpretation state."""

    def __init__(self, func: FuncDef | None, name: str):
        self.func = func
        self.name = name
        self.env: dict[str, Value] = {}
        self.returns: list[Value] = []
        # what a specialized run's watched names held at each return (in_place.py)
        self.exits: list[dict[str, Value]] = []
        self.watch: frozenset[str] | None = None  # a closure's run: the free names it changes
        self.ran: set[int] = set()  # the ids of the statements it ran
        in_place.LIVE.add(self)
        self.records: dict[tuple, CallRecord] = {}  # by _record_key
        self.locals: set[str] = set()
        self.local_imports: dict[str, str] = {}
        self.defaults: dict[str, int] = {}
        # Shapes learnt from uses (analysis/unify.py): each parameter's value while
        # the name still holds it, the call sites that run whenever the function
        # does, and what those sites said about a parameter.
        self.param_values: dict[str, Value] = {}
        # name -> (parameter, its open value, the value the name got): `y = F.relu(x)`
        # on parameter x, so that what a use says of y's shape is said of x too.
        self.aliases: dict[str, tuple[str, Value, Value]] = {}
        self.hoists = False  # whether what is learnt may hold from the function's top
        self.conditional = 0  # inside a conditional expression: what is learnt is not kept
        self.learnt: dict[str, TensorV] = {}
        self.learnt_params: set[str] = set()
        self.learnt_line = 1 << 30  # the first line that taught something about a parameter
        self.done = False  # a return ran unconditionally: the block stops here
        # A `break` or `continue` ran unconditionally: the loop's turn stops here.
        self.jump: str | None = None
        # A branch the analysis cannot decide may leave the loop (break, return):
        # the loop's later turns may not run (loops.py).
        self.exit_unsure = False
        self.raised = False  # a raise surely ran (specialized runs, analysis/raising.py)
        # `global n` in a function a specialized run runs (specialized.run_body)
        self.global_names: set[str] = set()
        # a function a target run runs with its values (specialized.run_body, run_init):
        # what it changes in a module-level object, the module keeps (module_state.py)
        self.runs = False
        # A closure's run: the frame that made it and the names it rebinds there.
        self.cell: _Frame | None = None
        self.nonlocal_names: set[str] = set()
        # An nn.Sequential call whose second or later layer runs: that layer's input
        # is the one before's output, whatever the argument written there holds.
        self.chained: ast.Call | None = None
        # A path split's path (path_split.py): the truth it gave each test it split
        # on, and whether a test the analysis decided went the other way.
        self.assumed: dict[str, bool] = {}
        self.infeasible = False
        self.lost: ast.If | None = None  # the last undecided `if` whose join lost a shape


# Statements with no block of their own: an exception their expressions surely
# raised that no call took is theirs (statement_exec.raised_here).
_SIMPLE = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


class ModuleAnalyzer:
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
        top = _Frame(None, "<module>")
        top.env = self.module_env
        # a file first read inside a construction: not its state (aliasing.apart); what
        # its top level changes in module-level objects is not bound (module_state)
        with aliasing.apart(), module_state.importing(), in_place.top_level():
            self._exec_block(self.tree.body, top, module_level=True)
        self._keep_module_env(top)
        self._emit_records(top)
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
        top = _Frame(None, "<module>")
        top.env = self.module_env
        # a file first read inside a construction: not its state (aliasing.apart); what
        # its top level changes in module-level objects is not bound (module_state)
        with aliasing.apart(), module_state.importing(), in_place.top_level():
            self._exec_block(self.tree.body, top, module_level=True)
        self._keep_module_env(top)

    def _keep_module_env(self, top: _Frame) -> None:
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
        for stmt in statements.guarded_top_level(self.tree):
            if isinstance(stmt, ast.ClassDef):
                # A class under a module-level `if` / `try` is one arm's: its key is its
                # own (the line), and the class statement binds it where it runs.
                key = f"{self.project_module or ''}:{stmt.lineno}.{stmt.name}"
                self.guarded_classes[id(stmt)] = key
                qual = f"{stmt.name}@{stmt.lineno}"  # its methods' summaries are its own
                self._guarded_defs[qual] = self._index_class(stmt, key, qual)

    def local_class(self, stmt: ast.ClassDef, frame: _Frame) -> str:
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
            cd.init_params = [a.arg for a in _positional_params(init.node)[1:]]
            cd.init_kwonly = [a.arg for a in init.node.args.kwonlyargs]
        self.class_keys[key] = cd
        return cd

    # ------------------------------------------------------------------ diagnostics
    @contextmanager
    def diverted(self):
        """The findings reported inside, handed to the caller instead of the result;
        the result keeps no trace of them, so that a later pass may say them. A
        generic pass first reached inside (a summary, a class's attributes) is
        not diverted: what it finds is the function's own."""
        saved = (self.result.diagnostics, self._diag_keys, self._diag_spots)
        self._diversions.append(saved)
        self.result.diagnostics = found = []
        self._diag_keys, self._diag_spots = set(saved[1]), set(saved[2])
        try:
            yield found
        finally:
            self._diversions.pop()
            self.result.diagnostics, self._diag_keys, self._diag_spots = saved

    def reaches_result(self) -> bool:
        """Whether a finding reported now is the result's, not a diversion's that
        the caller of a run says again (or drops, with the run's other findings)."""
        return not self._diversions or self.result.diagnostics is self._diversions[0][0]

    def _undiverted(self):
        """A generic pass (a summary, a class's attributes): its findings, naming's
        among them, are the function's own, wherever it was first reached."""
        # (a generator only where a diversion is open or naming is paused: once per
        # summary otherwise)
        if self._diversions or self.naming.is_paused:
            return self._diverted_out()
        return nullcontext()

    @contextmanager
    def _diverted_out(self):
        with self.naming.resumed():
            if not self._diversions:
                yield
                return
            saved = (self.result.diagnostics, self._diag_keys, self._diag_spots)
            self.result.diagnostics, self._diag_keys, self._diag_spots = self._diversions[0]
            try:
                yield
            finally:
                self.result.diagnostics, self._diag_keys, self._diag_spots = saved

    def report(self, node_or_pos, code: str, message: str) -> None:
        if isinstance(node_or_pos, ast.AST):
            (l1, c1), (l2, c2) = self.src.node_start(node_or_pos), self.src.node_end(node_or_pos)
        else:
            l1, c1, l2, c2 = node_or_pos
        key = (l1, c1, code, message)
        spot = (l1, c1, code)
        if self._quiet or self._muted:
            return
        call_path.note(self.src.path, l1, c1, l2, c2, code, message, bool(self._repeating))
        if key in self._diag_keys:
            return
        if self._repeating and spot in self._diag_spots:
            return  # the same finding on another run, said with other shapes
        self._diag_keys.add(key)
        self._diag_spots.add(spot)
        self.result.diagnostics.append(RawDiagnostic(l1, c1, l2, c2, code, message))

    def _definite(self, issue: OpIssue) -> bool:
        """`n` against `n + 1` is a conflict while `n` is one size: a size
        parameter's. A name a pattern or a shape unpacking gave may name two dims."""
        return issue.names <= self.size_params

    def kept(self, issue: OpIssue) -> OpIssue | None:
        """The issue as reported, or None where it rests on a name learning gave. A
        conflict between two independent sizes is the constraint it imposes (SHP318)."""
        if issue.learned:
            a, b = issue.assumes
            return OpIssue(
                LEARNED_EQUAL,
                f"{issue.message}; this needs {a} = {b}: {a} is a size of the input "
                f"a use named, {b} one the constructor takes",
                issue.where,
            )
        if not self._definite(issue):
            return None
        if issue.given:
            said = ", ".join(issue.given)
            issue = dataclasses.replace(
                issue, message=f"{issue.message} ({said}: an op before took it)"
            )
        if not issue.assumes:
            return issue
        a, b = issue.assumes
        message = f"{issue.message}; this needs {a} = {b}, sizes the constructor takes separately"
        self._note_tie(message, issue)
        return OpIssue(ASSUMED_EQUAL, message, issue.where)

    def _note_tie(self, message: str, issue: OpIssue) -> None:
        """The constraint a message states, with the class whose constructor takes
        its sizes (the innermost method run whose class declared them all) and
        whether the op needs the two sizes equal or broadcasts them (where 1 meets
        any size). One message two classes' runs state alike is left a warning (None)."""
        if len(issue.sides) != 2:
            return
        a, b = issue.sides
        names = a.names() | b.names()
        owner = next((cd for cd, sizes in reversed(self._size_owners) if names <= sizes), None)
        tie = (owner, a, b, issue.code in _EXACT) if owner is not None else None
        known = self.ties.get(message, tie)
        if known is None or tie is None or known[0] is not owner or known[1:] != tie[1:]:
            tie = None
        self.ties[message] = tie

    def report_issue(self, issue: OpIssue, call: ast.Call, pattern_node: ast.expr | None) -> None:
        where = issue.where
        target: object = call
        if where and where[0] == "pattern" and pattern_node is not None:
            target = self._string_span(pattern_node, where[1], where[2])
        elif where and where[0] == "kwarg":
            for kw in call.keywords:
                if kw.arg == where[1]:
                    target = kw
                    if len(where) == 4:  # offsets into the string passed as this keyword
                        target = self._string_span(kw.value, where[2], where[3])
                    break
        elif where and where[0] == "arg":
            i = where[1]
            if 0 <= i < len(call.args):
                target = call.args[i]
        self.report(target, issue.code, issue.message)

    def _string_span(self, node: ast.expr, start: int, end: int):
        """Where characters start..end of a string literal stand in the source;
        the whole node when it is not a literal we can map."""
        pos = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            pos = self.src.string_positions(node)
        if not pos:
            return node
        s = max(0, min(start, len(pos) - 1))
        e = max(s, min(end, len(pos) - 1))
        (l1, c1), (l2, c2) = pos[s], pos[e]
        if (l2, c2) <= (l1, c1):
            l2, c2 = l1, c1 + 1
        return (l1, c1, l2, c2)

    # ------------------------------------------------------------------ functions
    def summary(self, qualname: str) -> FunctionSummary | None:
        if qualname in self.summaries:
            return self.summaries[qualname]
        if qualname in self._in_progress:
            return None  # recursion: the callee's cost is unknown at this call
        fd = self._lookup_function(qualname)
        if fd is None:
            return None
        self._in_progress.add(qualname)
        try:
            # a target run's summary is no part of it: what its unknown calls may
            # write is no write of the run's tensors (tensor_values.Apart)
            elements = tensor_values.Apart() if self.specialize else nullcontext()
            with OwnPass(), self._undiverted(), may_raise.apart(), elements:
                summ = self._analyze_function(fd)
        finally:
            self._in_progress.discard(qualname)
        self.summaries[qualname] = summ
        self.result.functions.append(summ)
        self._check_contract(fd)
        self._check_init_paths(fd)
        return summ

    def _check_init_paths(self, fd: FuncDef) -> None:
        """A method with jaxtyping-annotated parameters run once more on the instance
        each path of a constructor's flag builds (init_paths.py), for its errors alone:
        `check` keeps the last path's attributes."""
        if self.specialize or not layer_defaults_of.checks_contract(self, fd):
            return
        cd = fd.cls
        kept = self.class_attrs(cd)
        init = attributes.find_method(self, cd, "__init__")
        if init is None or init.owner not in (None, self):
            return
        reads = init_paths.reads(fd)
        for assumed, where in init_paths.paths(self, fd, init, cd.path_attrs):
            quiet, self._quiet = self._quiet, True
            self._in_progress.add(fd.qualname)
            # what the runs on arguments say on the path is no later run's to skip
            said = argument_runs.said_before(self)
            try:
                with OwnPass(), may_raise.apart(), self.diverted():
                    attrs = self._init_attrs(cd, at_sizes=True, assumed=assumed)
                if not init_paths.differs(attrs, kept, reads):
                    continue
                self._quiet = False
                with OwnPass(), may_raise.apart(), self.diverted() as found:
                    self._run_function(fd, {}, attrs_on_path=attrs)
            finally:
                argument_runs.say_again(self, said)
                self._in_progress.discard(fd.qualname)
                self._quiet = quiet
            for d in found:
                if (
                    d.code.startswith(("SHP2", "SHP3"))
                    and severity_of(d.code) == "error"
                    and (d.line, d.column, d.code) not in self._diag_spots
                ):
                    spot = (d.line, d.column, d.end_line, d.end_column)
                    self.report(spot, d.code, f"{d.message} ({where})")

    def _check_contract(self, fd: FuncDef) -> None:
        """A method with jaxtyping-annotated parameters run once more on an instance
        built with the constructor's layer-class defaults (layer_defaults.py), for
        the findings alone: its summary, which callers that build the instance with
        other layers read, stays the one above."""
        if self.specialize or fd.cls is None or not layer_defaults_of.checks_contract(self, fd):
            return  # (a target's run builds the instance it has: no default is assumed)
        if self.contract_attrs(fd.cls) is self.class_attrs(fd.cls):
            return  # no layer-class default: the pass above was this one
        quiet, self._quiet = self._quiet, False
        self._in_progress.add(fd.qualname)
        try:
            # repeated: a spot the pass above reported is not reported again in
            # other words
            with OwnPass(), self._undiverted(), may_raise.apart(), self.repeated():
                found = self.result.diagnostics
                start = len(found)
                self._run_function(fd, {}, contract=True)
                # what the pass above did not say rests on the defaults assumed
                named = self._contract_named.get(fd.cls.key)
                if named:
                    which = "its default" if len(named) == 1 else "their defaults"
                    said = f" (with {', '.join(named)}, {which})"
                    for i in range(start, len(found)):
                        found[i] = dataclasses.replace(found[i], message=found[i].message + said)
        finally:
            self._in_progress.discard(fd.qualname)
            self._quiet = quiet

    def _lookup_function(self, qualname: str) -> FuncDef | None:
        if "." in qualname:
            cls, meth = qualname.split(".", 1)
            cd = self.classes.get(cls) or self._guarded_defs.get(cls)
            return cd.methods.get(meth) if cd else None
        return self.functions.get(qualname)

    def class_attrs(self, cd: ClassDef, at_sizes: bool = True) -> dict[str, Value]:
        """What __init__ assigns to self.<attr>, in terms of __init__'s parameters
        (at_sizes: each one `check --dim` names at its size)."""
        if cd.owner is not None and cd.owner is not self:
            return cd.owner.class_attrs(cd, at_sizes)
        if not at_sizes and self.options.check_dims:
            known = self._templates.get(cd.key)
            if known is None:
                # Quiet: its findings are plain mode's, which the run at sizes
                # repeats where they hold there.
                quiet, self._quiet = self._quiet, True
                self._templates[cd.key] = {}  # (a class that builds itself)
                try:
                    known = self._templates[cd.key] = self._init_attrs(cd, at_sizes=False)
                finally:
                    self._quiet = quiet
            return known
        if cd.self_attrs is None:
            cd.self_attrs = {}
            quiet, self._quiet = self._quiet, False  # first reached in a second pass
            try:
                cd.self_attrs = self._init_attrs(cd, at_sizes=True)
            finally:
                self._quiet = quiet
        return cd.self_attrs

    def contract_attrs(self, cd: ClassDef) -> dict[str, Value]:
        """class_attrs for the check of a method against its jaxtyping annotations:
        each constructor parameter whose default is a layer class at that class
        (layer_defaults.py); class_attrs itself where no parameter has one."""
        if cd.owner is not None and cd.owner is not self:
            return cd.owner.contract_attrs(cd)
        plain = self.class_attrs(cd)
        known = self._contract_attrs.get(cd.key)
        init = attributes.find_method(self, cd, "__init__")
        if known is None and (
            init is None
            or init.owner not in (None, self)  # a base's, read in another file's names
            or not layer_defaults_of.takes_layer_class(self, init, _Frame(init, init.qualname))
        ):
            known = self._contract_attrs[cd.key] = plain
        if known is None:
            # Quiet: the constructor's own findings are its pass's, at any argument.
            quiet, self._quiet = self._quiet, True
            self._contract_attrs[cd.key] = plain  # (a class that builds itself)
            bound = len(self._layer_defaults_named)
            try:
                known = self._init_attrs(cd, at_sizes=True, layer_defaults=True)
            finally:
                self._quiet = quiet
            if len(self._layer_defaults_named) == bound:
                known = plain  # no parameter has a layer class as its default
            self._contract_named[cd.key] = self._layer_defaults_named[bound:]
            self._contract_attrs[cd.key] = known
        return known

    def _init_attrs(
        self,
        cd: ClassDef,
        at_sizes: bool,
        layer_defaults: bool = False,
        assumed: dict[str, bool] | None = None,
    ) -> dict[str, Value]:
        """assumed: the truth of each flag test on a path of the constructor
        (init_paths.py)."""
        init = attributes.find_method(self, cd, "__init__")
        if init is None:
            return {}
        frame = _Frame(init, init.qualname)
        frame.assumed = assumed or {}
        self._bind_params(init, frame, ObjectV(f"<class>{cd.key}"), at_sizes, layer_defaults)
        frame.env["self"] = SelfRecorder(cd.key)
        with (
            fact_scope(),
            aliasing.apart(),
            aliasing.unbuilt(),
            dynamic.generic(),
            self._undiverted(),
        ):
            self._exec_block(init.node.body, frame)
            rec = frame.env.get("self")
            if not isinstance(rec, SelfRecorder):
                return {}
            cd.path_attrs |= rec.on_a_path
            # Rebuilt in the scope: an assert after the division still counts.
            attrs = attributes.settled(self, cd, rec.attrs)
            return {k: _rebuilt(v) for k, v in attrs.items()}

    def _analyze_function(self, fd: FuncDef) -> FunctionSummary:
        quiet = self._quiet
        self._quiet = False
        try:
            frame, params = self._run_function(fd, {})
            if frame.learnt and any(r.line < frame.learnt_line for r in frame.records.values()):
                # What a use taught about a parameter holds from the top: a second
                # pass costs every call with it (diagnostics came from the first).
                self._quiet = True
                learnt = frame.learnt
                frame, params = self._run_function(fd, learnt)
                frame.learnt_params = set(learnt)
            elif frame.learnt:
                # Nothing ran before the use: one pass said it all; callers still bind.
                params = [(p, frame.learnt.get(p, v)) for p, v in params]
                frame.learnt_params = set(frame.learnt)
        finally:
            self._quiet = quiet
        return self._summarize(fd, frame, params)

    def _run_function(
        self,
        fd: FuncDef,
        learnt: dict[str, TensorV],
        contract: bool = False,
        attrs_on_path: dict[str, Value] | None = None,
    ) -> tuple[_Frame, list[tuple[str, Value]]]:
        """contract: self built with the constructor's layer-class defaults
        (contract_attrs); attrs_on_path: self as a path of a constructor's flag
        builds it (init_paths.py)."""
        frame = _Frame(fd, fd.qualname)
        owner = None
        self._declare_annotated_names(fd)
        self_value: Value = UNKNOWN
        attrs: dict = {}
        if fd.cls is not None and not is_static(fd.node):
            attrs = self.class_attrs(fd.cls) if fd.node.name != "__init__" else {}
            if contract:
                attrs = self.contract_attrs(fd.cls)
            if attrs_on_path is not None:
                attrs = attrs_on_path
                # each undecided test of the method may go with the constructor's flag
                # (`if self.seq_pool:` after `self.seq_pool = seq_pool`): what its
                # branches find on this path is dropped, as on a path split's path
                frame.assumed = {init_paths.ON_PATH: True}
            self_value = ObjectV(f"<class>{fd.cls.key}", tuple(attrs.items()))
        params = self._bind_params(fd, frame, self_value)
        if fd.cls is not None and fd.node.name != "__init__":
            # A name the method binds itself (`b, dim, c = x.shape`) is not the
            # constructor's, whatever it is called.
            sizes, compared = self.constructor_sizes(fd.cls)
            if sizes:  # (the method is walked only then)
                own = {p for p, _ in params} | stored_names(fd.node)
                own -= _constructor_copies(fd, attrs, own)
                declare_independent(sizes - own, compared, self._ctor_sizes[fd.cls.key][2])
                owner = (fd.cls, frozenset(sizes - own))
            # A parameter's jaxtyping names and numbers (`"b n d"`, `"2 17 48"`) are
            # sizes the caller's input picks, as a pattern's names on it would be
            # (SHP320); a name spelt like a constructor's size is that size.
            annotations = [a.annotation for a in named_params(fd.node)]
            names, sizes = statement_exec.annotation_dims(self, annotations)
            declare_learned(names)
            declare_learned_sizes(sizes, statement_exec.repeated_numbers(self, annotations))
        for name, value in learnt.items():
            frame.env[name] = value
        params = [(p, learnt.get(p, v)) for p, v in params]
        # What uses teach about a parameter (in a branch too: its sizes are then
        # still the parameter's) is in param_values; the first pass hoists it.
        frame.param_values = {p: v for p, v in params if unify.is_open(v)}
        if not learnt:
            frame.hoists = True
        if fd.node.name == "__init__" and fd.cls is not None:
            frame.env["self"] = SelfRecorder(fd.cls.key)
        if owner is not None:
            self._size_owners.append(owner)
        try:
            self._exec_block(fd.node.body, frame)
        finally:
            if owner is not None:
                self._size_owners.pop()
        return frame, params

    def _summarize(
        self, fd: FuncDef, frame: _Frame, params: list[tuple[str, Value]]
    ) -> FunctionSummary:
        ret_ann = self.annotations.tensor(fd.node.returns) if fd.node.returns else None
        returns = _join_all(frame.returns) if frame.returns else NoneV()
        if isinstance(
            returns, (lambdas.ClosureV, sequences.SeqV, sequences.FramedV, sequences.EndsV)
        ):
            returns = UNKNOWN  # in the callee's own names, which a call does not rebind
        self._emit_records(frame)
        result = returns if ret_ann is None or _has_anonymous_var(ret_ann) else ret_ann
        result_names = unnamed.own_names(result)
        flops = other = byts = None
        complete, unknown, foreign = False, [], frozenset()
        if self.costs:
            for r in frame.records.values():
                r.cost.simplify()  # with the facts found after the call was recorded
            flops, other, byts, complete = _sum_costs(frame.records.values())
            unknown = _unknown_calls(frame.records.values())
            inputs = [*params, *frame.param_values.items()]
            foreign = self._foreign_names(fd, inputs, frame.defaults, flops, other, byts)
        return FunctionSummary(
            name=fd.qualname,
            line=fd.node.lineno,
            params=params,
            returns=returns,
            return_annotation=ret_ann,
            flops=flops,
            other_flops=other,
            bytes=byts,
            complete=complete,
            calls=len(frame.records),
            defaults={**self._constructor_defaults(fd), **frame.defaults},
            unknown=unknown,
            inferred=frozenset(frame.learnt_params),
            names=result_names | unnamed.own_names(None, flops, other, byts),
            result_names=result_names,
            foreign=foreign,
        )

    def _foreign_names(self, fd: FuncDef, params, defaults, *figures) -> frozenset[str]:
        """The names in figures that are not fd's inputs: its parameters' sizes
        (declared or learnt), its annotations, its constructor's parameters."""
        names = unnamed.own_names(None, *figures)
        if not names:
            return names
        names = names.difference(defaults, unnamed.value_names(TupleV(tuple(v for _, v in params))))
        if names:
            sig = [p.annotation for p in named_params(fd.node)]
            for node in (*sig, fd.node.returns):
                t = self.annotations.tensor(node) if node is not None else None
                names = names.difference(unnamed.value_names(t))
        init = attributes.find_method(self, fd.cls, "__init__") if names and fd.cls else None
        if init is not None:
            names = names.difference(p.arg for p in named_params(init.node))
        return names

    def _constructor_defaults(self, fd: FuncDef) -> dict[str, int]:
        """A method's formula is in its class's constructor parameters: their
        int defaults are its defaults too (`hidden=256` in __init__)."""
        if fd.cls is None or fd.node.name == "__init__":
            return {}
        init = attributes.find_method(self, fd.cls, "__init__")
        if init is None:
            return {}
        if not self.costs and init.qualname not in self.summaries:
            # Its parameters' int defaults are all a method needs of __init__ here:
            # read without running its body (the run that read the class's
            # attributes reported what the body has to say).
            own = self._lookup_function(init.qualname)
            if own is None or init.qualname in self._in_progress:
                return {}
            known = self._init_defaults.get(own.qualname)
            if known is None:
                frame = _Frame(own, own.qualname)
                self._bind_params(own, frame, UNKNOWN)
                known = frame.defaults
                if self._reads_alike() and _plain_defaults(own.node):
                    # Read once per constructor, not once per method: those defaults
                    # name only module-level values, final once the module ran, and
                    # what they had to report was reported (not a quiet pass).
                    self._init_defaults[own.qualname] = known
            return dict(known)
        summ = self.summary(init.qualname)
        return dict(summ.defaults) if summ is not None else {}

    def _reads_alike(self) -> bool:
        """Whether evaluating a plain expression now gives what it gives at any later
        time: the module's names are final and its findings are being reported."""
        return (
            self._module_ran
            and not self.specialize
            and not (self._quiet or self._muted or self._repeating)
        )

    def _bind_params(
        self,
        fd: FuncDef,
        frame: _Frame,
        self_value: Value,
        at_sizes: bool = True,
        layer_defaults: bool = False,
    ) -> list[tuple[str, Value]]:
        """The parameters as a run from the top sees them; at_sizes: each one
        `check --dim` names at its size; layer_defaults: one whose default is a
        layer class is that class (layer_defaults.py)."""
        node = fd.node
        sizes = self.options.check_dims if at_sizes else {}
        args = node.args
        out: list[tuple[str, Value]] = []
        positional = _positional_params(node)
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
        for i, (a, default) in enumerate(pairs):
            frame.locals.add(a.arg)
            if i == 0 and fd.cls is not None and not is_static(node) and a in positional:
                frame.env[a.arg] = self_value
                continue
            value: Value = UNKNOWN
            dv = self.eval(default, frame) if default is not None else None
            if a.annotation is not None:
                t = self.annotations.tensor(a.annotation)
                if t is not None:
                    value = t
                elif self.annotations.is_int(a.annotation):
                    value = IntV(Expr.name(a.arg).substitute(sizes))
                    if isinstance(dv, IntV) and dv.value is not None and dv.value.value is not None:
                        frame.defaults[a.arg] = dv.value.value
                elif isinstance(a.annotation, ast.Name) and a.annotation.id == "float":
                    # `eps: float`: a scalar of unknown value, which an elementwise op
                    # broadcasts without changing the tensor's shape. At a None default
                    # (`ls_init_value: float = None`, PEP 484's implicit Optional) it
                    # may be None: `if ls_init_value is not None` stays undecided.
                    value = OptionalV(FloatV(None)) if isinstance(dv, NoneV) else FloatV(None)
            if value is UNKNOWN and dv is not None:
                # A default is one value a caller may override: an int one stays a
                # symbol with the default on record (`n_heads=8`); any other default
                # (None, a float, a string) says nothing certain about the argument.
                if isinstance(dv, IntV) and dv.value is not None and dv.value.value is not None:
                    value = IntV(Expr.name(a.arg).substitute(sizes))
                    frame.defaults[a.arg] = dv.value.value
            if value is UNKNOWN and layer_defaults and default is not None:
                cls = layer_defaults_of.default_class(self, default, dv, frame)
                if cls is not None:
                    value = cls
                    self._layer_defaults_named.append(f"{a.arg} = {ast.unparse(default)}")
            if value is UNKNOWN and dv is None and a.annotation is None:
                value = specialized.init_param(fd, a.arg)
                if isinstance(value, IntV) and value.value is not None:
                    # `check --dim dim=64`: the constructor's size at that value too
                    value = IntV(value.value.substitute(sizes))
            if (
                value is UNKNOWN
                and isinstance(dv, NoneV)
                and (a.annotation is None or self.annotations.is_optional_int(a.annotation))
            ):
                size = specialized.init_param(fd, a.arg)
                if isinstance(size, IntV) and size.value is not None:
                    # `hidden_features=None`: the size a caller may give (specialized.init_param)
                    size = IntV(size.value.substitute(sizes))
                    value = OptionalV(size)
            size = value.value if isinstance(value, OptionalV) else value
            if isinstance(size, IntV) and size.value is not None and size.value.as_name() == a.arg:
                self.size_params.add(a.arg)
                if fd.node.name == "__init__":
                    self._init_sizes.setdefault(fd.qualname, set()).add(a.arg)
            frame.env[a.arg] = value
            out.append((a.arg, value))
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                frame.locals.add(extra.arg)
                frame.env[extra.arg] = UNKNOWN
        return out

    # ------------------------------------------------------------------ statements
    def _exec_block(self, body: list[ast.stmt], frame: _Frame, module_level: bool = False) -> None:
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
                cost = Cost(notes=["nested too deeply to follow: not analysed"], complete=False)
                self._record(stmt, frame, "statement", None, [], UNKNOWN, cost)
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

    def _exec(self, stmt: ast.stmt, frame: _Frame, module_level: bool) -> None:
        handler = statement_exec.HANDLERS.get(type(stmt))
        frame.ran.add(id(stmt))  # what the run ran (in_place.alias_ran)
        if self.specialize:
            may_raise.statement(self, stmt)
        # pass / break / continue / global / nonlocal: nothing to track
        if handler is not None:
            if self.specialize:
                import_time.step()
            if self.specialize and import_time.bounded(self, stmt, frame):
                import_time.run(self, stmt, frame, lambda: handler(self, stmt, frame, module_level))
            else:
                handler(self, stmt, frame, module_level)
        if type(stmt) in _SIMPLE and not frame.done:
            statement_exec.raised_here(self, stmt, frame)

    def init_size_names(self, qualname: str) -> set[str]:
        """The size parameters of that __init__ so far."""
        return self._init_sizes.get(qualname, set())

    def add_init_size(self, qualname: str, name: str) -> None:
        """A size that __init__'s caller picks, one of its parameters' items
        (item_sizes.py): a constructor size, independent of the others."""
        self._init_sizes.setdefault(qualname, set()).add(name)

    def constructor_sizes(self, cd: ClassDef) -> tuple[set[str], set[frozenset[str]]]:
        """The sizes a caller passes the class's constructor one by one (`dim`,
        `hidden_dim`, `heads=8`), and the pairs of them its code compares."""
        got = self._ctor_sizes.get(cd.key)
        if got is None:
            init = attributes.find_method(self, cd, "__init__")
            sizes: set[str] = set()
            if init is not None and not self.specialize:
                self.class_attrs(cd)
                sizes = set(self._init_sizes.get(init.qualname, ()))
            compared = _compared_names(cd.node, sizes) if sizes else set()
            gaps = _compared_gaps(cd.node, sizes) if compared else set()
            # `channels[9]` may be `channels[-2]`: the list's length decides, which the
            # code knows as it knows a pair it compares
            aliases = item_sizes.aliases(sizes)
            if aliases:
                compared = compared | {frozenset(pair) for pair in aliases}
                gaps = gaps | {Expr.name(a) - Expr.name(b) for a, b in aliases}
            got = self._ctor_sizes[cd.key] = (sizes, compared, gaps)
        return got[0], got[1]

    def _declare_annotated_names(self, fd: FuncDef) -> None:
        """The dimension names the parameters' and the return annotations use: two
        different ones are two dimensions (SHP315) until the code relates them.
        (An annotated assignment declares its own names when it runs.)"""
        statement_exec.declare(self, [a.annotation for a in named_params(fd.node)], bound=True)
        statement_exec.declare(self, [fd.node.returns])

    def _analyze_nested(self, fd: FuncDef, outer: _Frame) -> None:
        frame = _Frame(fd, fd.qualname)
        frame.env = {k: v for k, v in outer.env.items() if not isinstance(v, SelfRecorder)}
        frame.locals = set(outer.locals)
        frame.local_imports = dict(outer.local_imports)
        self._bind_params(fd, frame, UNKNOWN)
        # Its body runs when it is called, with the values of that call (a closure
        # runs then, lambdas.invoke); what this pass stores is no store of the run.
        with fact_scope(inherit=True), dynamic.generic():
            self._exec_block(fd.node.body, frame)
        if not self._quiet:
            self._emit_records(frame)

    # ------------------------------------------------------------------ for analysis helpers
    # (loops, lambdas: the interpreter's own steps, as they may call them)
    def scope(self, frame: _Frame) -> _Frame:
        """A frame for a comprehension or a closure's body: it sees frame's
        variables, and its calls count in frame's records."""
        inner = _Frame(frame.func, frame.name)
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
        return _join(a, b)

    def is_builtin(self, name: str, frame: _Frame) -> bool:
        """Whether a bare name is Python's builtin here (nothing shadows it)."""
        return (
            name not in frame.env
            and name not in frame.locals
            and name not in self.module_env
            and name not in self.functions
            and name not in self.classes
            and self.imports.resolve(ast.Name(name), frame.locals, frame.local_imports) is None
        )

    def _report_unpack(self, target, n: int | str, names: int, star, value_node) -> None:
        what = _clip(ast.unparse(value_node)) if value_node is not None else "each item"
        need = f"at least {names - 1}" if star is not None else str(names)
        self.report(
            target,
            "SHP316",
            f"{what} gives {n} value{'s' if n != 1 else ''}; unpacking needs {need}",
        )

    def _assign(
        self, target: ast.expr, value: Value, frame: _Frame, value_node: ast.expr | None
    ) -> None:
        if one_shot.holds(value):
            value = one_shot.bound(self, target, value, frame)
        if isinstance(target, ast.Name):
            src = unify.dim_source(value_node) if value_node is not None else None
            if src is not None and (value is UNKNOWN or value == IntV(None)):
                # `n = x.shape[1]`, `d = x.size(-1)`: x's dim there is named n, d.
                sym = Expr.name(target.id)
                known = unify.dim_at(frame.env.get(src[0].id, UNKNOWN), src[1], sym)
                if known is not None:
                    learning.learn(self, src[0], known, frame, value_node)
                    value = IntV(sym)
            if frame.cell is not None and target.id in frame.nonlocal_names:
                # `nonlocal n; n += 1` in a closure: the variable of the function
                # that made it, which its next call (and that function) sees.
                self.outer_writes += 1
                if self.trial:
                    return
                frame.cell.env[target.id] = value
            if target.id in frame.global_names:
                # `global n; n = ...` in a specialized run: the module's n changes,
                # for every function that reads it from now on (as Python runs them).
                self.outer_writes += 1
                if not self.trial:
                    module_state.write(self.module_env, target.id, value)
                return
            frame.env[target.id] = value
            frame.locals.add(target.id)
            frame.param_values.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            if self.specialize and not (
                isinstance(value, TupleV)
                and len(value.items) == len(elts)
                and not any(isinstance(e, ast.Starred) for e in elts)
            ):
                may_raise.mark()  # Python unpacks only an iterable of the targets' length
            if isinstance(value, OptionalV):
                value = value.value  # unpacking None raises TypeError: a path that goes on had it
            star = next((i for i, e in enumerate(elts) if isinstance(e, ast.Starred)), None)
            shape_of = learning.shape_source(value_node)
            if value is UNKNOWN:
                spread = learning.spread_shape(self, elts, star, value_node, frame)
                value = value if spread is None else spread
            if _has_unknown_item(value) and learning.name_shape_ends(
                self, elts, star, value_node, frame
            ):
                return
            if star is None and isinstance(shape_of, ast.Name) and _has_unknown_item(value):
                src = frame.env.get(shape_of.id, UNKNOWN)
                known = unify.shape_unpacked(
                    src, [e.id if isinstance(e, ast.Name) else None for e in elts]
                )
                if known is not None:
                    learning.learn(self, shape_of, known, frame, value_node)
                    value = expressions.shape_tuple(known)
            items = (
                value.items if isinstance(value, TupleV) else torch_containers.listed_items(value)
            )
            if items is None and isinstance(value, IntV):
                named = item_sizes.unpacked(self, frame, value, len(elts), star)
                if named is not None:  # `init_dim, *_, last_dim = channels`
                    for e, v in zip(elts, named, strict=True):
                        self._assign(e.value if v is None else e, v or UNKNOWN, frame, None)  # type: ignore[attr-defined]
                    return
            if isinstance(value, TupleV) and _miscounted(len(items), len(elts), star):
                self._report_unpack(target, len(items), len(elts), star, value_node)
            if items is not None and star is None and len(items) == len(elts):
                for i, (e, v) in enumerate(zip(elts, items)):
                    if (
                        isinstance(e, ast.Name)
                        and e.id != "_"
                        and isinstance(v, IntV)
                        and shape_of is not None
                    ):
                        v = learning.name_unknown_dim(shape_of, i, len(elts), e.id, v, frame)
                    self._assign(e, v, frame, None)
            elif items is not None and star is not None and len(items) >= len(elts) - 1:
                n_after = len(elts) - star - 1
                for i, e in enumerate(elts):
                    if i < star:
                        self._assign(e, items[i], frame, None)
                    elif i == star:
                        rest = items[star : len(items) - n_after]
                        self._assign(e.value, TupleV(tuple(rest)), frame, None)  # type: ignore[attr-defined]
                    else:
                        self._assign(e, items[len(items) - (len(elts) - i)], frame, None)
            elif isinstance(value, sequences.SeqV) and star is None:
                if value.count is not None and sequences.never_counts(value.count, len(elts)):
                    self._report_unpack(target, value.count.to_human(), len(elts), star, value_node)
                for e in elts:
                    self._assign(e, value.item, frame, None)
            elif isinstance(value, TensorV) and star is None and _unpackable(value, len(elts)):
                # `q, k, v = t`: iterating a tensor walks its first dimension.
                first = value.shape[0]  # type: ignore[index]
                if isinstance(first, Expr) and sequences.never_counts(first, len(elts)):
                    self._report_unpack(target, first.to_human(), len(elts), star, value_node)
                for e in elts:
                    # each item its own view (`rows, cols = t`: two tensors, which
                    # two register_buffer calls count apart)
                    self._assign(e, backward.row(value), frame, None)
            else:
                for e in elts:
                    self._assign(e.value if isinstance(e, ast.Starred) else e, UNKNOWN, frame, None)
        elif isinstance(target, ast.Attribute):
            self.outer_writes += 1
            if target.attr == "data":  # `t.data = u` gives t u's elements
                held = (
                    frame.env.get(target.value.id) if isinstance(target.value, ast.Name) else None
                )
                if isinstance(held, TensorV):
                    tensor_values.wrote(held)
                else:
                    tensor_values.forget_all()  # a tensor not named here: any may be it
            if self.trial:
                return
            if target.attr == "__class__":
                attribute_stores.retyped(self, target, frame)
                return
            base = frame.env.get(target.value.id) if isinstance(target.value, ast.Name) else None
            owner = frame.env.get("self")
            building = self.specialize and isinstance(owner, SelfRecorder)  # a target's module
            in_construction = building or self.specialize and bool(aliasing.recorders())
            if target.attr == "data":
                held = self.eval(target.value, frame)
                if self.specialize and not in_construction and isinstance(held, TensorV):
                    data_store.stored(held, value)  # a target run's: t moves to u's storage
                    return
                if attribute_stores.same_data(held, value):
                    return  # `p.data = t` while built: the same Parameter, other values
            if target.attr == "requires_grad" and in_construction:
                # `p.requires_grad = False` while the module is built, in its
                # constructor or a function it calls
                module_flags.assign_requires_grad(
                    self, owner if building else None, target, value, frame
                )
            elif (
                target.attr == "requires_grad"
                and getattr(frame, "runs", False)
                and module_flags.retrains(self.eval(target.value, frame), value)
            ):
                # ... after it was built (in its forward): not placed
                aliasing.retrained()
            elif isinstance(base, SelfRecorder):
                if self.specialize and attribute_hooks.store(self, base, target.attr, value):
                    pass  # the class's own __setattr__ stored it
                elif not (
                    self.specialize and construction.property_set(self, base, target, value, frame)
                ):
                    none_plain = isinstance(value, NoneV) and plain.none_stays_plain(
                        base.attrs, target.attr
                    )
                    base.attrs[target.attr] = own_methods.stored(base, value)
                    plain.mark(
                        base.attrs,
                        target.attr,
                        none_plain
                        or value is UNKNOWN
                        and self.specialize  # a target run: the one that counts parameters
                        and plain.surely_plain(
                            self,
                            value_node,
                            frame,
                            attribute_stores.may_replace,
                            plain_instances.made_plain,
                        ),
                    )
            elif (
                self.specialize
                and isinstance(target.value, ast.Name)
                and _own_method(
                    self,
                    owned := base if base is not None else module_state.held(self, target.value.id),
                    "__setattr__",
                )
            ):
                # `obj.k = v` is `type(obj).__setattr__(obj, "k", v)`, which decides
                # what the object keeps (a dict subclass mirroring it as an entry)
                call = attributes.setattr_call(
                    target.value, ast.Constant(target.attr), value_node, target
                )
                self._call_method(owned, "__setattr__", call, [StrV(target.attr), value], {}, frame)
            elif (key := self._class_stored_into(target, base, frame)) is not None:
                module_state.store_class_attr(self, key, target.attr, value)
            elif (
                building
                and isinstance(target.value, ast.Attribute)
                and _from_self(target)
                and isinstance(held := self.eval(target.value, frame), ObjectV)
                and in_place.through_property(self, held, target.attr)
            ):
                # `self.block.times = k`: the block's setter decides what it keeps,
                # not run on a module it holds: that module is no longer known
                path = target.value
                if isinstance(path.value, ast.Name):
                    owner.attrs[path.attr] = UNKNOWN  # type: ignore[union-attr]
                else:
                    holders.store_path(owner, path, UNKNOWN)  # type: ignore[arg-type]
            elif building and isinstance(target.value, ast.Attribute) and _from_self(target):
                into = holders.held_at(owner, target)  # type: ignore[arg-type]
                if torch_absence.plain_tensor_store(self, into, target.attr):
                    pass  # `self.A.no_decay = True`: kept in the tensor's __dict__
                elif not holders.store_shared(self, owner, target, value):  # type: ignore[arg-type]
                    held = self.eval(target.value, frame)
                    absence.unapplied_write(
                        held, target.attr, absence.through_parameter(self.specialize, target, frame)
                    )
                    if attribute_stores.may_replace(value):
                        # `self.w.data = t` of another shape: requires_grad stays
                        data = target.attr == "data" and isinstance(held, TensorV)
                        aliasing.lost(freezes=not data)
                    if target.attr == "data":
                        holders.data_replaced(owner, target, value)  # type: ignore[arg-type]
            elif (
                isinstance(target.value, ast.Name)
                and base is None
                and (was := module_state.held(self, target.value.id)) is not None
                and module_state.store_attr(self, target.value.id, target.attr, value, frame)
            ):
                # `CFG.flag = v` on a module-level object: the module keeps it, and
                # another holder of the one object (`self.cfg = CFG`) is forgotten
                in_place.forget_held(self, was)
            elif self.specialize and aliasing.recorders():
                # a store into a module being built, through another name
                obj = base if isinstance(target.value, ast.Name) else self.eval(target.value, frame)
                obj = UNKNOWN if obj is None else obj
                if not (obj is UNKNOWN and plain_instances.holds_plain(self, target.value, frame)):
                    attribute_stores.store_attr(self, obj, target.attr, value, frame)
                    absence.unapplied_write(
                        obj, target.attr, absence.through_parameter(self.specialize, target, frame)
                    )
            elif isinstance(target.value, ast.Name) and isinstance(base, ObjectV):
                attrs = dict(base.attrs)
                attrs[target.attr] = value
                if in_place.through_property(self, base, target.attr):
                    # a setter decides what the object keeps: not run here
                    attrs = {}
                    value = UNKNOWN
                frame.env[target.value.id] = decorators.stored(base, attrs, target.attr)
                autograd_function.ctx_stored(base, target, value)
                # the name sees the write; the object's other names do not
                absence.unapplied_write(
                    base, target.attr, absence.through_parameter(self.specialize, target, frame)
                )
            elif (
                self.specialize
                and getattr(frame, "runs", False)
                and isinstance(target.value, ast.Attribute)
                and holders.stored_into_built(
                    self, self.eval(target.value, frame), target.attr, value
                )
            ):
                pass  # `self.m.deep = True`: the built module m, wherever it is held
            elif frame.func is not None and isinstance(target.value, (ast.Name, ast.Attribute)):
                # `self.config.flag = v` in a forward: the object keeps no such write
                absence.unapplied_write(
                    self.eval(target.value, frame),
                    target.attr,
                    absence.through_parameter(self.specialize, target, frame),
                )
            else:
                absence.stored_elsewhere(target.attr)  # kept on no value (a file's top level)
        elif isinstance(target, ast.Starred):
            self._assign(target.value, UNKNOWN, frame, None)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Subscript):
            # `groups[i][key] = v`: the inner list or dict changed, so the outer
            # one holds the changed one at i (a store dropped would leave it empty)
            inner = self.eval(target.value, frame)
            new = dict_values.item_assigned(inner, self.eval(target.slice, frame), value)
            if new is not None:
                self._assign(target.value, new, frame, None)
            else:
                root = module_state.root_name(target)
                if root is not None:
                    module_state.unplaced(self, root, frame)

        elif isinstance(target, ast.Subscript) and isinstance(
            target.value, (ast.Name, ast.Attribute)
        ):
            # A write into part of a tensor keeps its shape; into a list, module
            # list or dict, that item changes.
            holder = target.value
            if isinstance(holder, ast.Attribute) and holder.attr in _REGISTRIES:
                # `self._modules["fc"] = m` registers m as `self.fc` does
                key = self.eval(target.slice, frame)
                name = key.value if isinstance(key, StrV) else None
                if name is None or not name.isidentifier():
                    if self.specialize:
                        aliasing.lost()  # a submodule, parameter or buffer nobody can name
                    return
                if holder.attr == "_buffers" and isinstance(value, TensorV):
                    value = as_buffer(value)
                attr = ast.copy_location(ast.Attribute(holder.value, name, ast.Store()), target)
                self._assign(attr, value, frame, value_node)
                return
            container = None
            if self.specialize and isinstance(holder, ast.Name):
                container = self.eval(holder, frame)
                if _own_method(self, container, "__setitem__"):
                    # `obj[k] = v` is `type(obj).__setitem__(obj, k, v)`
                    call = ast.copy_location(
                        ast.Call(
                            ast.Attribute(holder, "__setitem__", ast.Load()),
                            [target.slice, value_node or ast.Constant(None)],
                            [],
                        ),
                        target,
                    )
                    key = self.eval(target.slice, frame)
                    self._call_method(container, "__setitem__", call, [key, value], {}, frame)
                    return
                if dict_values.holds_entries(container):
                    # dict's own store into a dict subclass's entries (the key
                    # evaluated once: it may run ops)
                    key = self.eval(target.slice, frame)
                    if isinstance(container, modules.SelfRecorder):
                        # the instance being built changes: a store that outlives the frame
                        self.outer_writes += 1
                        if not self.trial:
                            dict_values.entries_assigned(container, key, value)
                        return
                    changed = dict_values.entries_assigned(container, key, value)
                    modules.store(self, holder, changed, frame)
                    return
            if isinstance(holder, ast.Attribute):
                self.outer_writes += 1
                if self.trial:
                    return
            if isinstance(holder, ast.Attribute) and not isinstance(holder.value, ast.Name):
                root = module_state.root_name(holder)
                if root is not None:
                    module_state.unplaced(self, root, frame)
                return
            if container is None:
                container = self.eval(holder, frame)
            key = self.eval(target.slice, frame)
            new = dict_values.item_assigned(container, key, value)
            tensor_values.wrote(container)
            if isinstance(container, TensorV) and self.specialize:
                put = inplace.index_put_cost(target.slice, key, container, value)
                grad = inplace.written_grad(value)
                inplace.written(frame, target, container, grad, backward.origins(value))
                if put is not None:
                    written = self.eval(holder, frame)
                    self._record(target, frame, "torch.Tensor.index_put_", None, [], written, put)
            if new is not None:
                modules.store(self, holder, new, frame)
            root = module_state.root_name(holder)
            if root is not None and (new is None or not isinstance(holder, ast.Name)):
                if not isinstance(container, TensorV):
                    module_state.unplaced(self, root, frame)

    # ------------------------------------------------------------------ expressions
    def eval(self, node: ast.expr | None, frame: _Frame, depth: int = 0) -> Value:
        if node is None:
            return UNKNOWN
        if depth > MAX_EXPR_DEPTH:
            return UNKNOWN
        handler = _EXPR_HANDLERS.get(type(node), expressions.eval_children)
        if isinstance(node, (ast.GeneratorExp, ast.Call)) and one_shot.makes_iterator(
            self, node, frame
        ):
            with collected(frame) as made:  # its items' costs: counted as it is walked
                value = handler(self, node, frame, depth + 1)
            value = one_shot.held(self, node, value, frame, made)
        elif (walked := one_shot.generator_bound(self, node, frame, depth + 1)) is not None:
            value = walked  # `g = self.blocks()` walked once through g: what it yields
        else:
            value = handler(self, node, frame, depth + 1)
            if type(value) is one_shot.OneShotV:  # an iterator a call handed back
                call = isinstance(node, ast.Call)
                value = one_shot.held(self, node, value.items, frame) if call else UNKNOWN
        if self.specialize:
            may_raise.expression(node, value)
        return value

    def _qualname(self, node: ast.expr, frame: _Frame) -> str | None:
        return self.imports.resolve(node, frame.locals, frame.local_imports)

    # ------------------------------------------------------------------ calls
    def _project_symbol(self, func: ast.expr, qual: str | None, frame: _Frame):
        """The project definition (or value) a called or read name stands for."""
        from shapelint.analysis import project

        if qual is not None:
            return project.resolve_qualified(self, qual)
        if isinstance(func, ast.Name) and func.id in self.project_links:
            if func.id not in frame.locals and func.id not in frame.env:
                return project.resolve(self, func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id in self.project_links and func.value.id not in frame.locals:
                return project.resolve_attribute(self, func)
        return None

    def _call_project(self, sym, node: ast.Call, args, kwargs, frame: _Frame) -> Value:
        if isinstance(sym, FuncDef):
            return self._invoke(sym, None, node, args, kwargs, frame)
        if isinstance(sym, ClassDef):
            return construction.built(self, sym, node, args, kwargs, frame)
        return (
            self._call_value(sym, node, args, kwargs, frame) if isinstance(sym, Value) else UNKNOWN
        )

    def _init_binding(self, recv: ObjectV, cd: ClassDef) -> dict[str, Expr]:
        """_instance_binding of an instance and its class, once per pair: every
        method called on one instance reads the same (values are immutable; the
        entry holds both, so that their ids are not reused while it lives)."""
        return self._bound_by(recv, self.class_attrs(cd))

    def _bound_by(self, recv: ObjectV, template: dict[str, Value]) -> dict[str, Expr]:
        if not isinstance(recv, ObjectV):  # a mutable stand-in (SelfRecorder)
            return _instance_binding(recv, template)
        key = (id(recv), id(template))
        hit = self._bindings.get(key)
        if hit is None:
            hit = self._bindings[key] = (recv, template, _instance_binding(recv, template))
        return hit[2]

    def _built_at_sizes(self, recv: Value, cd: ClassDef) -> bool:
        """Whether an instance was built with `check --dim`'s sizes for its
        constructor's parameters of those names: a method's summary reads the
        attributes the constructor makes at those sizes (class_attrs), so it holds
        for no other instance (a level built at twice the width)."""
        sizes = self.options.check_dims
        if not sizes or self.specialize or not isinstance(recv, ObjectV):
            return True
        built = self._bound_by(recv, self.class_attrs(cd, at_sizes=False))
        # A size the instance does not show (no attribute holds it) is not told apart.
        return all(built.get(n, Expr.const(v)) == Expr.const(v) for n, v in sizes.items())

    def _class_methods(self, key: str) -> dict[str, FuncDef]:
        known = self._methods_of.get(key)
        if known is not None:
            return known
        cd = self.class_of(key)
        if cd is None:
            return {}
        methods = attributes.all_methods(cd.owner or self, cd)
        if not self.specialize:
            # Asked at every method call on an instance; the bases of a plain run
            # are classes of the defining file, fixed once it is indexed.
            self._methods_of[key] = methods
        return methods

    def _call_value(self, callee: Value, node: ast.Call, args, kwargs, frame) -> Value:
        if isinstance(callee, itemgetters.ItemGetterV):
            return itemgetters.call(callee, args, kwargs)
        if isinstance(callee, lambdas.ClosureV):
            value = lambdas.invoke(self, callee, args, kwargs, frame, site=node)
            if value is not UNKNOWN and self.call_args:
                # its body ran, its calls recorded as the caller's: one that ran none
                # (`def T(w): return w`) cost nothing, and is no call left unfollowed
                self.call_args[-1][1] = None
            return value
        if isinstance(callee, lambdas.UnfollowedDefV):
            why = f"{callee.name}(): its decorators are not followed"
            if callee.computes:  # given no tensor, it may still compute on those it captures
                cost = Cost(notes=[why], complete=False)
                self._record(node, frame, uc.op_text(node), None, [], UNKNOWN, cost)
                return UNKNOWN
            return self._unknown_call(node, args, kwargs, frame, why)
        if isinstance(callee, (choices.ChoiceV, choices.FunctionChoiceV)):
            return choices.call(self, callee, node, args, kwargs, frame)
        if isinstance(callee, compiled.CompiledV):
            return compiled.call(self, callee, node, args, kwargs, frame)
        if deferred.is_deferred(callee):
            made = deferred.built(self, callee) if deferred.fixed_tensor(args, kwargs) else None
            if made is None:
                why = "not analysed (a module of another file, given no size its caller fixed)"
                return self._unknown_call(node, args, kwargs, frame, why)
            callee = made
        res = modules.call_value(self, callee, node, args, kwargs, frame)
        if res is not None:
            return res
        if isinstance(callee, ObjectV):
            if callee.kind.startswith("<class>"):
                if "forward" in self._class_methods(callee.kind[7:]):
                    return self._call_method(callee, "forward", node, args, kwargs, frame)
                if "__call__" in self._class_methods(callee.kind[7:]):
                    return self._call_method(callee, "__call__", node, args, kwargs, frame)
                return UNKNOWN
            if args:
                given = args[0]
                known = unify.layer_input(callee, given)
                if known is not None:
                    args = [known, *args[1:]]
                    if (
                        node.args
                        and not isinstance(node.args[0], ast.Starred)
                        and _given(frame, node.args[0], given)
                    ):
                        learning.learn(self, node.args[0], known, frame, node)
            callee = reparametrize.before_forward(self, callee, node, frame)
            return self._op_value(f"{callee.kind}.__call__", [callee, *args], kwargs, node, frame)
        return self._unknown_call(node, args, kwargs, frame, "not analysed (unknown callee)")

    def construct(self, cd: ClassDef, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """An instance of a project class: a config (dataclass) at its values; a
        module with its constructor arguments bound (run for real when specializing,
        else substituted into the symbolic attributes of its __init__, each scalar
        those leave unknown as a run at these arguments settles it: init_run)."""
        if cd.owner is not None and cd.owner is not self:
            return cd.owner.construct(cd, args, kwargs)
        member = enums.by_value(self, cd, args, kwargs)
        if member is not None:
            return member  # `Mode(2)`: an enum's lookup by value, no instance made
        if self.specialize or config_classes.is_dataclass(cd):
            return construction.construct(self, cd, args, kwargs)
        bound = _bind_call(cd.init_params, args, kwargs)
        # a keyword-only parameter (`*, time_emb_dim = None`) is given by keyword: the
        # instance's sizes are the caller's there too, never the callee's own name
        bound.update((k, v) for k, v in kwargs.items() if k in cd.init_kwonly)
        exprs = learning.binding_exprs(bound)
        exprs.update(learning.item_binding(bound))  # `channels[-1]` of a listed channels
        sizes = self.options.check_dims
        # Given another size than `--dim`'s for its parameter's name (`RMSNorm(dim_out)`
        # where --dim says dim=16), or one not known: the attributes in its own names.
        at_sizes = not any(n in sizes and exprs.get(n) != Expr.const(sizes[n]) for n in bound)
        attrs = self.class_attrs(cd, at_sizes)
        # Given, but no size: what the callee's name sized is unknown here.
        lost = set(bound) - set(exprs)
        if not exprs and not lost:
            made = ObjectV(f"<class>{cd.key}", tuple(attrs.items()))
        else:
            made = ObjectV(
                f"<class>{cd.key}",
                tuple(
                    (k, learning.forget(learning.subst(v, exprs, {}), lost))
                    for k, v in attrs.items()
                ),
            )
        return init_run.decided(self, cd, made, args, kwargs)

    def _call_local(self, name: str, node: ast.Call, args, kwargs, frame) -> Value:
        return self._invoke(self.functions[name], None, node, args, kwargs, frame)

    def _call_method(self, recv: ObjectV, meth: str, node, args, kwargs, frame) -> Value:
        # an instance of a project class or of a config class (`<class>key`, `<config>key`)
        fd = self._class_methods(recv.kind.partition(">")[2]).get(meth)
        if fd is None:
            return UNKNOWN
        return self._invoke(fd, recv, node, args, kwargs, frame)

    def _invoke(
        self, fd: FuncDef, recv: ObjectV | None, node: ast.Call, args, kwargs, frame
    ) -> Value:
        """A call to a function of this module: check the arguments against its
        annotations (jaxtyping's rule: one name, one size per call), take its
        return shape and its cost with the names bound."""
        if not self.specialize and fd.cls is None and specialized.plain_data(args, kwargs):
            # a helper of sizes (`pair(image_size)`): what it makes of these values
            got = argument_runs.value_at(self, fd, None, node, args, kwargs, frame.name)
            if got is not None:
                self._record(node, frame, f"call {fd.qualname}", None, args, got, Cost())
                return got
        summ = (fd.owner or self).summary(fd.qualname)
        if summ is None:
            if self.specialize:  # what it stores into a config, not seen
                absence.method_not_run(recv, fd.node)
            return self._unknown_call(node, args, kwargs, frame, "recursive call")
        params = [p for p, _ in summ.params]
        binding: dict[str, Expr] = {}
        # Constructor arguments the instance carries bind __init__'s parameter names.
        if (
            recv is not None
            and fd.cls is not None
            and not isinstance(recv, callable_values.ClassRefV)
        ):
            # (a classmethod called through its class has no instance's arguments)
            binding.update(self._init_binding(recv, fd.cls))
        bound = _bind_call(params, args, kwargs)
        var_binding: dict[str, tuple] = {}
        refused = False  # an argument its annotation rejects: the body does not run
        # an argument the shape the summary learnt for its parameter rejects: the
        # summary holds where that shape does, so the body on this call says more
        contradicted = False
        for pname, pval in summ.params:
            if pname not in bound:
                continue
            arg = bound[pname]
            if isinstance(pval, TensorV) and isinstance(arg, TensorV):
                problem = ann.bind_shape(pval, arg, binding, var_binding)
                refused = refused or bool(problem and pname not in summ.inferred)
                contradicted = contradicted or (
                    pname in summ.inferred and unify.refutes_learnt(pval, arg, binding)
                )
                if problem and pname not in summ.inferred:
                    arg_node = _arg_node(node, params, pname)
                    self.report(
                        arg_node or node,
                        "SHP305",
                        f"argument '{pname}' of {fd.qualname}() has shape {arg.shape_str()} "
                        f"but is annotated {pval.shape_str()}: {problem}",
                    )
            elif isinstance(pval, IntV) and pval.value is not None and isinstance(arg, IntV):
                pn = pval.value.as_name()
                if pn is not None and arg.value is not None:
                    binding.setdefault(pn, arg.value)
        if self.specialize:
            return specialized.specialized_invoke(self, fd, recv, node, args, kwargs, frame)
        self._learn_from_callee(summ, params, bound, binding, node, frame)
        for pname, dflt in summ.defaults.items():
            if pname not in bound:
                binding.setdefault(pname, Expr.const(dflt))
        result = summ.return_annotation if summ.return_annotation is not None else summ.returns
        if _has_anonymous_var(summ.return_annotation) and isinstance(summ.returns, TensorV):
            # A returned `...` is its own variadic in jaxtyping: what the body
            # computes says which dims it stands for.
            result = summ.returns
        value = (
            learning.subst_value(result, binding, var_binding) if binding or var_binding else result
        )
        if isinstance(value, NoneV) and summ.return_annotation is None and not summ.returns:
            value = UNKNOWN
        unbound = summ.names.difference(binding)
        if unbound and recv is not None:
            # the instance's sizes are the caller's; a name only the return annotation
            # writes is none of them (jaxtyping binds it to what the body returns)
            unbound -= unnamed.value_names(recv) - _returned_only(summ)
        if unbound:
            value = unnamed.forget(value, unbound & summ.result_names)
        if (
            recv is not None
            and fd.cls is not None
            and summ.return_annotation is None
            and not self._built_at_sizes(recv, fd.cls)
        ):
            # The summary holds for an instance built at --dim's sizes only: this
            # one's run says what it returns, or nothing does.
            got = argument_runs.value_at(self, fd, recv, node, args, kwargs, frame.name)
            value = got if got is not None else UNKNOWN
        elif (
            not self.specialize
            and summ.return_annotation is None
            and (
                (
                    (value is UNKNOWN or specialized.lost_shape(value))
                    and specialized.plain_data(args, kwargs, tensors=True, unknown=True)
                )
                or (_lost_size(value) and specialized.plain_data(args, kwargs))
                or specialized.none_decides(fd, args, kwargs)
                or (
                    contradicted
                    and specialized.plain_data(args, kwargs, tensors=True, unknown=True)
                )
            )
        ):
            # The summary, made for any argument, lost the shape that these give
            # (`F.normalize(x, dim=1) * self.g` of a 4-d x; an argument of no known
            # kind beside them is no less known than the summary's parameter, so
            # `attention(q, k_x)` with an optional k_x keeps q's shape), or joined the paths of
            # a parameter this call leaves at None (`default(context, x)`): their
            # run says it.
            got = argument_runs.value_at(self, fd, recv, node, args, kwargs, frame.name)
            if got is not None:
                value = got
        elif (
            not self.specialize
            and not refused
            and specialized.plain_data(args, kwargs, tensors=True)
            and self._annotated(fd, summ)
        ):
            # The summary ran the body on the annotations' sizes and the constructor's
            # own parameters; this call's tensors and the sizes its instance was built
            # with (`DepthWiseConv2d(dim, dim * 2)`) may say more: the body on them
            # reports the conflicts they make, and sizes its value where the annotated
            # one has names of its own (`-> Float[Tensor, "b d h w"]`: d is any size).
            got = argument_runs.value_at(self, fd, recv, node, args, kwargs, frame.name)
            _returned_as_annotated(value, got, unnamed.value_names((recv, args, kwargs)))
            value = _filled(value, got)
        if not self.costs:
            self._record(node, frame, f"call {fd.qualname}", None, args, value, Cost())
            return value
        cost = Cost(
            flops=learning.subst_expr(summ.flops, binding),
            other_flops=learning.subst_expr(summ.other_flops, binding),
            bytes=learning.subst_expr(summ.bytes, binding),
        )
        if not summ.complete:
            cost.complete = False
            cost.notes.append(f"{fd.qualname}() has calls of unknown cost")
        if unbound:
            cost = unnamed.unbound_cost(
                cost, unbound, f"{fd.qualname}() needs {{names}}, which this call does not bind"
            )
        self._record(node, frame, f"call {fd.qualname}", None, args, value, cost)
        return value

    def _annotated(self, fd: FuncDef, summ: FunctionSummary) -> bool:
        """Whether a jaxtyping annotation on fd's signature stands for what a
        caller passes (or gets back) in its summary."""
        if summ.return_annotation is not None:
            return True
        return any(
            a.annotation is not None and self.annotations.tensor(a.annotation) is not None
            for a in named_params(fd.node)
        )

    def _learn_from_callee(self, summ, params, bound, binding, node: ast.Call, frame) -> None:
        """An argument of unknown shape takes the one the callee learnt for its
        parameter where the callee always runs: the call raises otherwise."""
        for pname, learnt in summ.params:
            if pname not in summ.inferred or pname not in bound:
                continue
            arg_node = _arg_node(node, params, pname)
            known = unify.taught_by_callee(learnt, bound[pname], binding)
            if (
                known is not None
                and isinstance(arg_node, ast.Name)
                and _given(frame, arg_node, bound[pname])
            ):
                learning.learn(self, arg_node, known, frame, node)

    def _call_qualified(self, qual: str, node: ast.Call, args, kwargs, open_kwargs, frame) -> Value:
        if qual == grad_mode.CHECKPOINT and args:
            return grad_mode.checkpoint(self, node, args, kwargs, frame)
        if qual in reparametrize.NAMES:
            built = reparametrize.apply(self, qual, args, kwargs, open_kwargs, frame)
            if built is not None:
                return built
        built = modules.qualified_call(self, qual, args, kwargs, open_kwargs)
        if built is None and self.specialize and qual.endswith(".__init__"):
            built = torch_containers.base_init(self, qual, node, args, kwargs, open_kwargs, frame)
        if built is not None:
            return built
        if qual == builtins.COMBINATIONS and not open_kwargs:
            built = builtins.combinations_of(self, node, args, kwargs, frame)
            if built is not None:
                return built
        if qual == "itertools.zip_longest" and not open_kwargs and set(kwargs) <= {"fillvalue"}:
            built = iterators.zipped(args, longest=True, fill=kwargs.get("fillvalue"))
            if built is not None:
                return built
        if qual == reduced.QUALNAME and not open_kwargs:
            built = reduced.fold(self, node, args, kwargs, frame)
            if built is not None:
                return built
        joined = sequences.stack_or_cat(qual, args, kwargs)
        if joined is not None:
            operands, named = sequences.as_operands(args), sequences.as_operands(kwargs)
            return backward.after_op(qual, operands, named, joined, STAND_IN_COST, self.costs)[0]
        scalar = scalars.call(qual, args)
        if scalar is None and qual.startswith("numpy.") and not open_kwargs:
            scalar = ndarrays.call(qual, args, kwargs)
        if scalar is None:
            scalar = builtins.copied(qual, args, kwargs)
        if scalar is None:
            scalar = builtins.ntuple(qual, args, kwargs)
        if scalar is None:
            scalar = builtins.torch_size(qual, args, kwargs)
        if scalar is None and qual == dataclass_runtime.FIELDS and self.specialize:
            scalar = dataclass_runtime.fields(self, args, kwargs)
        if scalar is None:
            scalar = pytypes.torch_predicate(qual, args)
        if scalar is None and self.specialize:
            scalar = forward_ad.call(qual, args, kwargs)
        if scalar is None:
            scalar = folding.operator_compare(qual, args, kwargs)
        if scalar is None:
            scalar = itemgetters.made(qual, args, kwargs)
        if scalar is None:
            scalar = pytree.call(qual, args, kwargs)
        if scalar is None and self.specialize:
            # a target run knows the grad mode its caller set; a file's own pass does not
            scalar = grad_mode.queried(qual, args, kwargs)
        if scalar is None and qual in compiled.QUALNAMES and self.specialize:
            scalar = compiled.compile_value(args, kwargs)
        if scalar is None and qual == "importlib.util.find_spec":
            scalar = installed.find_spec(args, kwargs)
        if scalar is None and qual == "importlib.metadata.version":
            scalar = installed.distribution_version(args, kwargs)
        if scalar is None and self.specialize and not open_kwargs:
            scalar = stdlib_logging.call(qual, args, kwargs)
        if scalar is None and self.specialize and not open_kwargs:
            scalar = stdlib_re.call(qual, args, kwargs)
        if scalar is not None:
            return scalar
        args = [sequences.hidden(a) for a in args]
        kwargs = {k: sequences.hidden(v) for k, v in kwargs.items()}
        given, given_kw = list(args), dict(kwargs)
        self.naming.qualified_call(node, qual, args, kwargs, frame)
        if not open_kwargs:
            self._refine_einops_input(qual, node, args, kwargs, frame)
        if qual in unify.MATMULS and len(args) > 1 and len(node.args) > 1:
            learning.unify_matmul(self, qual, args, node.args[:2], frame, node)
        if qual == "torch.nn.functional.linear" and len(args) > 1 and node.args:
            w = args[1]
            if isinstance(w, TensorV) and w.shape is not None and len(w.shape) == 2:
                known = unify.ending_in(args[0], w.shape[1])  # type: ignore[arg-type]
                if known is not None:
                    args[0] = known
                    learning.learn(self, node.args[0], known, frame, node)
        for where, arg_node in unify.size_argument_nodes(qual, node):
            held = args[where] if isinstance(where, int) else kwargs.get(where)
            if held is UNKNOWN and isinstance(arg_node, ast.Name):
                size = IntV(Expr.name(arg_node.id))
                self.inferred_names.add(arg_node.id)
                if isinstance(where, int):
                    args[where] = size
                else:
                    kwargs[where] = size
                if arg_node.id in frame.env:
                    frame.env[arg_node.id] = size
        args = [backward.keep_grad(a, b) for a, b in zip(given, args)]
        kwargs = {k: backward.keep_grad(given_kw.get(k), v) for k, v in kwargs.items()}
        pattern_node, res, pattern = dispatch.call(
            qual, node, args, kwargs, open_kwargs, self.costs
        )
        res = _under_assumption(
            res, lambda: dispatch.call(qual, node, args, kwargs, open_kwargs, self.costs)[1]
        )
        if res is None:
            if attribute_stores.keeps_state_unbound(qual, args[1:], kwargs, self):
                # `nn.Linear.reset_parameters(self)`: nn.Module's own method, which
                # keeps the objects the module holds
                with aliasing.keeping():
                    return self._unknown_call(node, args, kwargs, frame, "not modelled")
            if uc.may_cost(qual) or not uc.library(qual):
                return self._unknown_call(node, args, kwargs, frame, "not modelled")
            if any(callable_values.computing_function(v) for v in (*args, *kwargs.values())):
                # `functools.reduce(operator.matmul, xs)`: a library function may
                # call what it is handed, which then runs where the analysis is not
                return self._unknown_call(
                    node, args, kwargs, frame, "calls a function it is handed"
                )
            return UNKNOWN
        if pattern is not None and isinstance(res.value, TensorV) and res.value.shape:
            declare_apart(res.value.shape)
        if res.refined:
            nodes = unify.tensor_arg_nodes(qual, node)
            for i, v in res.refined.items():
                if i < len(nodes):
                    learning.learn(self, nodes[i], v, frame, node)
        for issue in res.issues:
            if unify.binds_inferred(issue, self.inferred_names):
                continue
            issue = self.kept(issue)
            if issue is None:
                continue
            if pattern is not None and pattern not in issue.message:
                # Every message quotes the pattern it is about, einops-style.
                short = (
                    qual
                    if qual.endswith("einsum") and not qual.startswith("einops.")
                    else qual.rsplit(".", 1)[1]
                )
                issue = OpIssue(issue.code, f'{short}("{pattern}"): {issue.message}', issue.where)
            if pattern is not None and len(pattern) > _MAX_QUOTED:
                # A huge pattern is quoted by its ends; the column still points into it.
                brief = ends(pattern, _MAX_QUOTED)
                issue = OpIssue(issue.code, issue.message.replace(pattern, brief), issue.where)
            self.report_issue(issue, node, pattern_node)
        value, cost = backward.after_op(qual, args, kwargs, res.value, res.cost, self.costs)
        inplace.after_method(frame, node, qual, args, value)
        if dispatch.is_costed(qual, res) or (res.cost.flops is None and uc.may_cost(qual)):
            self._record(
                node,
                frame,
                qual,
                pattern,
                [a for a in args if isinstance(a, (TensorV, TupleV))],
                value,
                cost,
            )
        return value

    def _refine_einops_input(self, qual: str, node: ast.Call, args, kwargs, frame) -> None:
        """rearrange/reduce/repeat: the pattern's left side is the input's shape."""
        op = unify.einops_op(qual)
        if op is None:
            return
        pat = args[1] if len(args) > 1 else kwargs.get("pattern")
        in_args = bool(args)
        x = args[0] if in_args else kwargs.get("tensor", UNKNOWN)
        if not (isinstance(pat, StrV) and pat.value is not None):
            return
        lengths = {k: v for k, v in kwargs.items() if k not in ("tensor", "pattern", "reduction")}
        for kw in node.keywords:
            if kw.arg in lengths and (lengths[kw.arg] is UNKNOWN or lengths[kw.arg] == IntV(None)):
                # An axis length is an int: a variable of unknown value passed as
                # one is a size named after the variable (or, failing that, the axis).
                name = kw.value.id if isinstance(kw.value, ast.Name) else kw.arg
                lengths[kw.arg] = kwargs[kw.arg] = IntV(Expr.name(name))
                self.inferred_names.add(name)
                if isinstance(kw.value, ast.Name) and kw.value.id in frame.env:
                    frame.env[kw.value.id] = lengths[kw.arg]
        bound = unify.leading_var_binding(op, pat.value, x, lengths)
        given = unify.dim_names(x) | {
            n for v in lengths.values() if isinstance(v, IntV) and v.value for n in v.value.names()
        }
        if bound is not None:
            declare_learned({n for d in bound[1] if isinstance(d, Expr) for n in d.names()} - given)
            learning.bind_var(self, frame, *bound)
            x = learning.subst(x, {bound[0]: product(bound[1])}, {bound[0]: bound[1]})
            if in_args:
                args[0] = x
            else:
                kwargs["tensor"] = x
        known = unify.einops_input(op, pat.value, x, lengths)
        if known is None or _longer_than_slice(x, known):
            return
        declare_learned(unify.dim_names(known) - given)
        if in_args:
            args[0] = known
        else:
            kwargs["tensor"] = known
        learning.learn(self, unify.tensor_arg_nodes(qual, node)[0], known, frame, node)

    def _op_value(
        self, name: str, args: list[Value], kwargs: dict[str, Value], node, frame, arg_nodes=None
    ) -> Value:
        # (the rare test first: this runs for every op)
        if any(isinstance(a, OptionalV) for a in args) and any(
            isinstance(a, TensorV) for a in args
        ):
            # beside a tensor, an optional parameter's value, once given, may be a tensor
            # too (`x + self.extra`, extra=None): no size it names, a value not known
            args = [UNKNOWN if isinstance(a, OptionalV) else a for a in args]
        res = dispatch.stub(name, args, kwargs, self.costs)
        res = _under_assumption(res, lambda: dispatch.stub(name, args, kwargs, self.costs))
        if res is None:
            if isinstance(node, ast.Call) and (uc.may_cost(name) or name.startswith("<class>")):
                return self._unknown_call(
                    node,
                    args[1:] if name.startswith("<class>") else args,
                    kwargs,
                    frame,
                    "not modelled",
                )
            if (
                not isinstance(node, ast.Call)
                and uc.may_cost(name)
                and uc.tensor_args(args, kwargs)
            ):
                self._record(
                    node,
                    frame,
                    name,
                    None,
                    [],
                    UNKNOWN,
                    Cost(notes=["not modelled"], complete=False),
                )
            return UNKNOWN
        call = node if isinstance(node, ast.Call) else None
        for issue in res.issues:
            issue = self.kept(issue)
            if issue is None:
                continue
            if call is not None:
                self.report_issue(issue, call, None)
            elif (
                arg_nodes
                and issue.where
                and issue.where[0] == "arg"
                and issue.where[1] < len(arg_nodes)
            ):
                self.report(arg_nodes[issue.where[1]], issue.code, issue.message)
            else:
                self.report(node, issue.code, issue.message)
        value, cost = backward.after_op(name, args, kwargs, res.value, res.cost, self.costs)
        inplace.after_method(frame, node, name, args, value)
        if dispatch.is_costed(name, res) or (res.cost.flops is None and uc.may_cost(name)):
            self._record(
                node,
                frame,
                name,
                None,
                [a for a in args if isinstance(a, TensorV)],
                value,
                cost,
            )
        return value

    # ------------------------------------------------------------------ cost records
    def _class_stored_into(self, target: ast.Attribute, base, frame: _Frame) -> str | None:
        """The key of the project class `target` stores through in a target run
        (`Cfg.k = v`, `cls.k = v`, `type(self).k = v`, `self.__class__.k = v`),
        None where it stores into no class."""
        if not self.specialize or not class_state.active():
            return None
        node = target.value
        if base is None:
            typed = isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            typed = typed and node.func.id == "type" and len(node.args) == 1  # type: ignore[union-attr]
            of_instance = isinstance(node, ast.Attribute) and node.attr == "__class__"
            if not (isinstance(node, ast.Name) or typed or of_instance):
                return None
            base = self.eval(node, frame)
        return base.name if isinstance(base, callable_values.ClassRefV) else None

    def _unknown_call(
        self, node: ast.Call, args, kwargs, frame: _Frame, why: str, open_args: bool = False
    ) -> Value:
        """A call the analysis cannot follow: on the record with an unknown cost
        when it is given a tensor (or what may be one: open_args, a `**kw` or `*args`
        not known one by one), so no total leaves it out. Given a module while
        modules are built, it may change what they hold."""
        tensor_values.forget_all()  # it may write into any tensor it reaches
        if self.specialize and attribute_stores.passes_modules(self, args, kwargs):
            aliasing.lost()
        if open_args or uc.tensor_args(list(args), dict(kwargs)):
            cost = Cost(notes=[why], complete=False)
            self._record(node, frame, uc.op_text(node), None, [], UNKNOWN, cost)
        return UNKNOWN

    def _record(
        self, node, frame: _Frame, op: str, pattern, inputs, value: Value, cost: Cost
    ) -> CallRecord:
        line, col = self.src.node_start(node)
        cost = backward.in_mode(cost)  # under torch.no_grad(): nothing runs backward
        if not self.costs:
            # Only that the call is on the record counts (the second pass over a
            # function, the branches' alternatives), not what it says.
            rec = CallRecord(line, col, frame.name, op, pattern, [], None, cost)
            frame.records[_record_key(node, line, col, op)] = rec
            return rec
        out = value if isinstance(value, TensorV) else None
        if op == "einops.pack" and isinstance(value, TupleV) and value.items:
            out = value.items[0] if isinstance(value.items[0], TensorV) else None  # (packed, ps)
        # A list of tensors (pack's, or einops' stacking) lists each one as an input.
        flat: list = []
        for t in inputs:
            flat.extend(t.items if isinstance(t, TupleV) else [t])
        rec = CallRecord(
            line=line,
            column=col,
            function=frame.name,
            op=op,
            pattern=pattern,
            inputs=[_shape_py(t) for t in flat],
            output=_shape_py(out) if out is not None else None,
            cost=cost,
        )
        rec.callee = _callee_text(node)
        rec.result = backward.origins(value)
        frame.records[_record_key(node, line, col, op)] = rec
        return rec

    def _emit_records(self, frame: _Frame) -> None:
        self.result.records.extend(frame.records.values())

    # The entry points analysis/modules.py drives the interpretation through.
    def new_frame(self, func: FuncDef | None, name: str) -> _Frame:
        frame = _Frame(func, name)
        outer = func.closure if func is not None else None
        if outer is not None:  # a local class's method: the defining run's names, as scope()
            frame.env = dict(outer.env)
            frame.locals = set(outer.locals)
            frame.local_imports = dict(outer.local_imports)
        return frame

    def decide(self, test: ast.expr, frame: _Frame) -> bool | None:
        """The truth of a test on known values, None where it depends on others."""
        return folding.test_truth(self, test, frame)

    exec_block = _exec_block
    call_project = _call_project
    unknown_call = _unknown_call
    class_methods = _class_methods
    call_method = _call_method
    project_symbol = _project_symbol
    exec_statement = _exec
    emit_records = _emit_records
    analyze_nested = _analyze_nested
    qualname_of = _qualname
    assign = _assign
    record = _record
    call_value = _call_value
    invoke = _invoke
    call_local = _call_local
    op_value = _op_value
    call_qualified = _call_qualified
    join_env = staticmethod(lambda a, b: _join_env(a, b))
    join_all = staticmethod(lambda values: _join_all(values))


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


def _under_assumption(res: OpResult | None, again) -> OpResult | None:
    """An op whose only issues are constraints between independent sizes (SHP318, a
    warning) goes on as torch would for callers that meet them: its value and cost
    are those of a run under the equalities, its issues the constraints."""
    if res is None or not res.issues or not all(i.assumes for i in res.issues):
        return res
    with assuming():
        rerun = again()
    if rerun is None or rerun.issues:
        return res
    return dataclasses.replace(rerun, issues=res.issues)


def _plain_defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether every default of fn is made of constants and names (`8`, `-1`,
    `None`, `DIM`, `nn.GELU`, `(3, 3)`): evaluating one calls nothing (no call,
    operator or subscript that could run a method), so its value is the same at
    every evaluation once the module's names are final."""
    args = fn.args
    return all(
        isinstance(n, _PLAIN_DEFAULT)
        for d in (*args.defaults, *args.kw_defaults)
        if d is not None
        for n in walk(d)  # (without the Load and USub leaves)
    )


_PLAIN_DEFAULT = (ast.Constant, ast.Name, ast.Attribute, ast.UnaryOp, ast.Tuple, ast.List)


def _given(frame, arg: ast.expr, value: Value) -> bool:
    """Whether the argument written at a call still holds the value a callee was
    given there: an nn.Sequential's later layers are called at the same node, each
    on the output of the one before, which teaches nothing of the name."""
    if frame.chained is not None and any(arg is a for a in frame.chained.args):
        return False  # an output equal to the argument by chance (both [b, n, ?])
    return not isinstance(arg, ast.Name) or arg.id not in frame.env or frame.env[arg.id] == value


def _constructor_copies(fd: FuncDef, attrs: dict, names: set[str]) -> set[str]:
    """Of names the method binds, those it binds only to the instance's attribute of
    the same name while that attribute holds the constructor's size of that name
    (`b, c, h, w, heads = *x.shape, self.heads` after `self.heads = heads`): the
    constructor's size still, not one of the method's own."""
    positional = _positional_params(fd.node)
    if not positional or not names:
        return set()
    copies = attribute_copies(fd.node, positional[0].arg) & names
    return {
        n for n in copies
        if isinstance(attrs.get(n), IntV) and attrs[n].value is not None and attrs[n].value.as_name() == n
    }  # fmt: skip


def _compared_names(node: ast.ClassDef, sizes: set[str]) -> set[frozenset[str]]:
    """Pairs of sizes the class's code compares (`if dim != dim_out`, `assert
    self.heads == heads`): a relation the code knows about, whatever it is."""
    out: set[frozenset[str]] = set()
    for n in nodes_in_class(node, ast.Compare):
        sides = [
            {m.id if isinstance(m, ast.Name) else m.attr for m in walk(e)
             if isinstance(m, (ast.Name, ast.Attribute))} & sizes
            for e in (n.left, *n.comparators)
        ]  # fmt: skip
        for i, a in enumerate(sides):
            for b in sides[i + 1 :]:
                out.update(frozenset((x, y)) for x in a for y in b if x != y)
    return out


def _compared_gaps(node: ast.ClassDef, sizes: set[str]) -> set[Expr]:
    """Each comparison of sizes the class's code makes (`if dim != dim_out`,
    `self.heads == heads`, `dim == heads * dim_head`) as the difference of its two
    sides, an attribute read as the size it names."""
    out: set[Expr] = set()
    for n in nodes_in_class(node, ast.Compare):
        sides = [_size_side(e, sizes) for e in (n.left, *n.comparators)]
        for i, a in enumerate(sides):
            for b in sides[i + 1 :]:
                if a is not None and b is not None and (a - b).simplify().value is None:
                    out.add((a - b).simplify())
    return out


def _size_side(e: ast.expr, sizes: set[str]) -> Expr | None:
    """A side of a comparison as a formula of the sizes (`self.heads` is heads), or None."""
    if isinstance(e, (ast.Name, ast.Attribute)):
        name = e.id if isinstance(e, ast.Name) else e.attr
        return Expr.name(name) if name in sizes else None
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return Expr.const(e.value)
    if isinstance(e, ast.BinOp):
        left, right = _size_side(e.left, sizes), _size_side(e.right, sizes)
        return binop(e.op, left, right) if left is not None and right is not None else None
    return None


def _record_key(node, line: int, col: int, op: str) -> tuple:
    """A record per evaluated node, not per source position: `a @ b @ c` and
    `x.mm(w).mm(w)` are two calls that start at one column, told apart by where
    each ends."""
    return (line, col, op, getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))


def _positional_params(node) -> list[ast.arg]:
    return list(node.args.posonlyargs) + list(node.args.args)


def _returned_as_annotated(value: Value, run: Value | None, known: set[str]) -> None:
    """jaxtyping checks what the call returns against its annotation: where the
    run's dim is a formula of the call's own sizes (`2·dim` of RMSNorm(dim * 2)'s
    broadcast) and the annotation's is another (`v0`, the argument's channels), a call
    that returned made them equal, as an op's run-time check does."""
    if not (isinstance(value, TensorV) and isinstance(run, TensorV)):
        return
    if value.shape is None or run.shape is None or len(value.shape) != len(run.shape):
        return
    for d, r in zip(value.shape, run.shape, strict=True):
        if isinstance(d, Expr) and isinstance(r, Expr) and d != r and r.names() <= known:
            note_equal(d, r)


def _lost_size(v: Value) -> bool:
    """An int of no known value: a size the summary, made for any argument, lost
    (`self.forward(torch.zeros((1, n_channels, h, w))).shape[1]`), which a call
    with numbers may give."""
    return isinstance(v, IntV) and v.value is None


def _returned_only(summ: FunctionSummary) -> set[str]:
    """The names a function's return annotation writes that no parameter's
    annotation binds (`-> Float[Tensor, "b n dim"]` of a `forward(x: "b n d")`):
    jaxtyping binds them to what the body returns, so they are the callee's own
    whatever names the caller's instance holds."""
    ann = summ.return_annotation
    if ann is None or _has_anonymous_var(ann):
        return set()
    return unnamed.value_names(ann) - unnamed.value_names(tuple(v for _, v in summ.params))


def _filled(value: Value, run: Value | None) -> Value:
    """value with the dims it leaves unknown taken from a run's value of the same
    call, where both are tensors of one known rank."""
    if not (isinstance(value, TensorV) and isinstance(run, TensorV)):
        return value
    if value.shape is None or run.shape is None or len(value.shape) != len(run.shape):
        return value
    if any(isinstance(d, Var) for d in (*value.shape, *run.shape)):
        return value
    if all(d is not None for d in value.shape):
        return value
    shape = tuple(d if d is not None else r for d, r in zip(value.shape, run.shape, strict=True))
    return dataclasses.replace(value, shape=shape)


def _has_anonymous_var(t: TensorV | None) -> bool:
    return (
        t is not None
        and t.shape is not None
        and any(isinstance(d, Var) and d.name.startswith("_") for d in t.shape)
    )


def _has_unknown_item(v: Value) -> bool:
    return v is UNKNOWN or (
        isinstance(v, TupleV) and any(isinstance(i, IntV) and i.value is None for i in v.items)
    )


def _unpackable(t: TensorV, n: int) -> bool:
    if t.shape is None or not t.shape or isinstance(t.shape[0], Var):
        return False
    first = t.shape[0]
    return first is None or first.value is None or first.value == n


def _shape_py(t: TensorV | TupleV | Value) -> list[str | None] | None:
    if isinstance(t, TensorV):
        if t.shape is None:
            return None
        return [dim_py(d) for d in t.shape]
    return None


def _join(a: Value, b: Value) -> Value:
    if isinstance(a, TupleV) and isinstance(b, TupleV) and a.kind != b.kind:
        a, b = TupleV(a.items), TupleV(b.items)  # a tuple on one path, a list on the other
    if a == b:
        if a is not b and aliasing.recorders() and module_kinds.is_module(a):
            # two modules alike, two objects: which one a module being built holds
            # decides what torch counts (`self.b = self.a if c else nn.Linear(d, d)`)
            return choices.join(a, b) or UNKNOWN
        if isinstance(a, TensorV) and isinstance(b, TensorV) and a.origin != b.origin:
            # made on either path
            return dataclasses.replace(a, origin=_join_origins(a, b), storage=storage_of(a))
        return a
    if isinstance(a, TensorV) and isinstance(b, TensorV):
        dtype = a.dtype if a.dtype == b.dtype else None
        grad = backward.requires(a) if backward.requires(a) == backward.requires(b) else None
        origin = _join_origins(a, b)
        shape = None
        if a.shape is not None and b.shape is not None and len(a.shape) == len(b.shape):
            shape = _join_dims(a.shape, b.shape)
        if isinstance(a, ParameterV) and isinstance(b, ParameterV):
            # a Parameter on either path, of sizes joined: still one the module registers
            trains = a.requires_grad if a.requires_grad == b.requires_grad else None
            return ParameterV(shape, dtype, grad=grad, origin=origin, requires_grad=trains)
        kind = BufferV if isinstance(a, BufferV) and isinstance(b, BufferV) else TensorV
        # a module's attribute registered on one path only: instance_state.join
        return kind(shape, dtype, grad=grad, origin=origin)
    if isinstance(a, IntV) and isinstance(b, IntV):
        return IntV(None)
    if isinstance(a, _MAYBE) or isinstance(b, _MAYBE):  # else neither test below can hold
        given = folding.given_or(a, b) or folding.given_or(b, a)
        if given is not None:
            return given  # `val if exists(val) else d`, lucidrains' default(val, d)
        maybe = _or_none(a, b) or _or_none(b, a)
        if maybe is not None:
            return maybe
    if isinstance(a, FloatV) and isinstance(b, FloatV):
        return FloatV(None)
    if type(a) is type(b) and isinstance(a, (BoolV, StrV)):  # a flag, a name: one of two
        return type(a)(None)
    if isinstance(a, TupleV) and isinstance(b, TupleV) and len(a.items) == len(b.items):
        return TupleV(tuple(_join(x, y) for x, y in zip(a.items, b.items)), a.kind)
    either = compiled.join(a, b)
    if either is not None:
        return either
    # `DropPath(p) if p > 0. else nn.Identity()`; one nested def or another
    return choices.join(a, b) or choices.join_functions(a, b) or UNKNOWN


# given_or wants an OptionalV on one side, _or_none a NoneV
_MAYBE = (OptionalV, NoneV)


def _or_none(a: Value, b: Value) -> OptionalV | None:
    """A module or a tuple on one path and None on the other (`self.mlp = nn.Sequential(...)
    if exists(time_emb_dim) else None`, `scale_shift = x.chunk(2)` under an `if`): what
    calling or unpacking it gives is the module's or the tuple's, since None raises there."""
    inner = a.value if isinstance(a, OptionalV) else a
    if isinstance(b, NoneV) and (module_kinds.is_module(inner) or isinstance(inner, TupleV)):
        return OptionalV(inner)
    return None


def _join_origins(a: TensorV, b: TensorV) -> frozenset | None:
    oa, ob = backward.origins(a), backward.origins(b)
    return None if oa is None or ob is None else oa | ob


def _join_dims(a: tuple, b: tuple) -> tuple | None:
    """Two shapes of as many entries, dim by dim; a variadic stands for any number
    of dims, so two variadics at one place are a variadic, and a variadic against a
    dim leaves the rank unknown."""
    out = []
    for x, y in zip(a, b, strict=True):
        if x == y:
            out.append(x)
        elif isinstance(x, Var) and isinstance(y, Var):
            out.append(fresh_var())
        elif isinstance(x, Var) or isinstance(y, Var):
            return None
        else:
            out.append(None)
    return tuple(out)


def _join_all(values: list[Value]) -> Value:
    out = values[0]
    for v in values[1:]:
        out = _join(out, v)
    return out


_ABSENT = object()


def _join_env(a: dict[str, Value], b: dict[str, Value]) -> dict[str, Value]:
    # Joined at every branch with unknown test: one lookup per name, no union set.
    out = {}
    for k, va in a.items():
        vb = b.get(k, _ABSENT)
        out[k] = UNKNOWN if vb is _ABSENT else va if va is vb else _join(va, vb)
    for k in b:
        if k not in a:
            out[k] = UNKNOWN
    return out


def _bind_call(params: list[str], args: list[Value], kwargs: dict[str, Value]) -> dict[str, Value]:
    out: dict[str, Value] = {}
    for p, a in zip(params, args):
        out[p] = a
    for k, v in kwargs.items():
        if k in params:
            out[k] = v
    return out


def _arg_node(node: ast.Call, params: list[str], pname: str) -> ast.expr | None:
    for kw in node.keywords:
        if kw.arg == pname:
            return kw.value
    if pname in params:
        i = params.index(pname)
        if i < len(node.args):
            return node.args[i]
    return None


def _instance_binding(recv: ObjectV, template: dict[str, Value]) -> dict[str, Expr]:
    """Map __init__ parameter symbols to the values this instance was built with,
    by comparing the class's symbolic attributes with the instance's."""
    out: dict[str, Expr] = {}
    # recv.attr by name, one scan instead of one per attribute (a layer with many
    # attributes made it quadratic); reversed, so the first of a repeated name wins.
    attrs = dict(reversed(recv.attrs))
    for k, tv in template.items():
        iv = attrs.get(k, UNKNOWN)
        if isinstance(tv, (modules.ModuleListV, TupleV)):  # what _held_binding reads
            for k2, v2 in _held_binding(tv, iv).items():
                out.setdefault(k2, v2)
        if (
            isinstance(tv, IntV)
            and isinstance(iv, IntV)
            and tv.value is not None
            and iv.value is not None
        ):
            n = tv.value.as_name()
            if n is not None:
                out.setdefault(n, iv.value)
        elif isinstance(tv, ObjectV) and isinstance(iv, ObjectV):
            out.update(
                {
                    k2: v2
                    for k2, v2 in _instance_binding(iv, dict(tv.attrs)).items()
                    if k2 not in out
                }
            )
        elif (
            isinstance(tv, TensorV)
            and isinstance(iv, TensorV)
            and tv.shape is not None
            and iv.shape is not None
            and len(tv.shape) == len(iv.shape)
        ):
            # A parameter built from constructor sizes (`torch.empty(d_out, d_in)`).
            for td, d in zip(tv.shape, iv.shape, strict=True):
                n = td.as_name() if isinstance(td, Expr) else None
                if n is not None and isinstance(d, Expr):
                    out.setdefault(n, d)
    return out


def _held_binding(tv: Value, iv: Value) -> dict[str, Expr]:
    """The sizes a container's layers (`self.net = nn.Sequential(nn.LayerNorm(dim),
    ...)`) or a tuple of sizes were built with: the same layer at the same place
    of the class's attribute and of the instance's binds its constructor's names."""
    out: dict[str, Expr] = {}
    if isinstance(tv, modules.ModuleListV) and isinstance(iv, modules.ModuleListV):
        pairs = zip(tv.items, iv.items, strict=False) if len(tv.items) == len(iv.items) else ()
    elif isinstance(tv, TupleV) and isinstance(iv, TupleV) and len(tv.items) == len(iv.items):
        pairs = zip(tv.items, iv.items, strict=True)
    else:
        return out
    for t, i in pairs:
        if isinstance(t, ObjectV) and isinstance(i, ObjectV) and t.kind == i.kind:
            found = _instance_binding(i, dict(t.attrs))
        elif isinstance(t, IntV) and isinstance(i, IntV) and t.value is not None:
            n = t.value.as_name()
            found = {n: i.value} if n is not None and i.value is not None else {}
        else:
            found = _held_binding(t, i)
        for k, v in found.items():
            out.setdefault(k, v)
    return out


def _unknown_calls(records) -> list[dict]:
    out = []
    for r in sorted(records, key=lambda r: (r.line, r.column)):
        if r.cost.flops is None or not r.cost.complete:
            why = r.cost.notes[0] if r.cost.notes else "cost unknown"
            out.append({"line": r.line, "op": r.op, "why": why})
    return out


def _rebuilt(v: Value) -> Value:
    """v built again, so its sizes simplify with the facts of the current scope."""
    return dataclasses.replace(v) if isinstance(v, (IntV, TensorV)) else v


def _sum_costs(records) -> tuple[Expr | None, Expr | None, Expr | None, bool]:
    flops = Expr.const(0)
    other = Expr.const(0)
    byts = Expr.const(0)
    complete = True
    for r in records:
        c = r.cost
        if c.flops is None:
            complete = False
        else:
            flops = flops + c.flops
        if c.other_flops is not None:
            other = other + c.other_flops
        if c.bytes is not None:
            byts = byts + c.bytes
        if not c.complete:
            complete = False
    return flops, other, byts, complete


def _callee_text(node) -> str | None:
    if isinstance(node, ast.Call):
        return ast.unparse(node.func)
    if isinstance(node, ast.For):
        return ast.unparse(node.target)
    return None


__all__ = [
    "ModuleAnalyzer",
    "ModuleResult",
    "CallRecord",
    "FunctionSummary",
    "RawDiagnostic",
    "OpResult",
]


def _own_method(an, v: Value, name: str) -> bool:
    """Whether v is an instance of a project class with its own (or a project
    base's) method `name`, which Python's syntax (`v[k] = x`, `k in v`) calls."""
    if type(v) is not ObjectV or not v.kind.startswith("<class>"):
        return False
    return name in an.class_methods(v.kind[len("<class>") :])


def _from_self(target: ast.Attribute) -> bool:
    node: ast.expr = target
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"


def _miscounted(n: int, names: int, star) -> bool:
    """Python's rule for `a, b, *c = value` with n values: a ValueError."""
    return n != names if star is None else n < names - 1


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _longer_than_slice(x: Value, known: Value) -> bool:
    """Whether the pattern's left side (known) gives a dim that x holds as a slice of
    unknown length (`pos[:n - 1]`) a size above every bound the slice has: that is
    einops' check failing, which the op reports, not a size to learn."""
    if not (isinstance(x, TensorV) and x.at_most and isinstance(known, TensorV)):
        return False
    if x.shape is None or known.shape is None or len(x.shape) != len(known.shape):
        return False
    return any(
        x.shape[pos] is None
        and isinstance(known.shape[pos], Expr)
        and exceeds_every_length(known.shape[pos], bounds) is not None
        for pos, bounds in x.at_most
    )
