"""What one module's analysis gives and the state it keeps per function: a
diagnostic, a call's record, a function's summary, the module's result, a
function's frame.

Split out of interpreter.py by benchmarks/split_class.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shapelint.analysis import in_place

if TYPE_CHECKING:
    import ast

    from shapelint.analysis.defs import FuncDef
    from shapelint.notation.symbolic import Expr
    from shapelint.ops.values import Cost, TensorV, Value


ASSUMED_EQUAL = "SHP318"

LEARNED_EQUAL = "SHP320"


@dataclass
class RawDiagnostic:
    line: int
    column: int  # 0-based chars
    end_line: int
    end_column: int
    code: str
    message: str
    # The condition under which an error raises, where that is one of undecided
    # alternatives (plain_paths.py): a warning then.
    condition: str | None = None


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
    # A call of the `if` branch of an undecided `if` whose branches cost the same
    # forward and backward, the `else` branch's counted as nothing: both branches'
    # calls, which analysis/reached.py holds to the same backward as the loss
    # reaches each (analysis/branches.py).
    alternatives: Alternatives | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Alternatives:
    """The calls of the two branches of an undecided `if` counted once: body, the
    `if` branch's records; other, copies of the `else` branch's with their own
    costs (the records themselves cost nothing, counted once)."""

    body: tuple
    other: tuple


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
    # Its constructor's sizes a broadcast kept against an input's unknown size
    # (symbolic.kept_by_broadcast): each may be the input's where it is 1.
    broadcast_kept: frozenset[str] = frozenset()


@dataclass
class ModuleResult:
    diagnostics: list[RawDiagnostic] = field(default_factory=list)
    records: list[CallRecord] = field(default_factory=list)
    functions: list[FunctionSummary] = field(default_factory=list)


class Frame:
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
        # the ids of the mutating calls on an item (`self.layers[i].update(k)`) whose
        # change in_place.follow placed in the item's holder, or could not
        self.placed: set[int] = set()
        self.unplaced: set[int] = set()
        # the ids of the method calls right on a name whose change in_place.follow
        # gave every holder of the one object in this frame, or could not
        self.through: set[int] = set()
        self.not_through: set[int] = set()
        # (a `**kwargs` dict's name, key) -> the changed object a call's follow put
        # there (item_paths.EntryPath)
        self.entries: dict[tuple[str, str], Value] = {}
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
        # how many records there were when a return last ran (raising.settle)
        self.returned_at: int | None = None
        # `global n` in a function a specialized run runs (specialized.run_body)
        self.global_names: set[str] = set()
        # a function a target run runs with its values (specialized.run_body, run_init):
        # what it changes in a module-level object, the module keeps (module_state.py)
        self.runs = False
        # A closure's run: the frame that made it and the names it rebinds there.
        self.cell: Frame | None = None
        self.nonlocal_names: set[str] = set()
        # An nn.Sequential call whose second or later layer runs: that layer's input
        # is the one before's output, whatever the argument written there holds.
        self.chained: ast.Call | None = None
        # A path split's path (path_split.py): the truth it gave each test it split
        # on, and whether a test the analysis decided went the other way.
        self.assumed: dict[str, bool] = {}
        self.infeasible = False
        self.lost: ast.If | None = None  # the last undecided `if` whose join lost a shape
