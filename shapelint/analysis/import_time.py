"""A module-level call that runs too long at import time, read as a call the
analysis does not follow.

A target run reads the top level of every file its imports reach, and follows
the calls made there as Python makes them. One such call can reach far: a
notebook-exported module ends with `pcc(a, b)`, which calls
`scipy.stats.pearsonr`, whose first use reads scipy.stats, whose top level
decorates forty functions with a factory that parses each docstring. Followed
to the end, that one statement spent the whole time budget of every target
that imports the module, and the targets were stopped, not costed.

So each simple statement of a module's top level that makes a call (an
expression, an assignment) runs under an allowance of statements, counted
wherever they run (in its callees, and in the top levels of the files it reads
first): an import-time statement that runs past it is stopped there, and read
as a call the analysis does not follow (`ModuleAnalyzer.unknown_call`): its
value is not known, nor is any element of a tensor. Every name it binds, and
the root of every attribute or item it stores into, is then not known; so is
every name it reads whose value a call could change (anything but a number, a
string, None, a tuple of those, a function or a class), and every other
module-level name holding the very same value, since the stopped call may have
changed it in place; so is a class attribute it stored (`Cfg.k = v`) or first
read, since the rest of the call may store it again. The statement may have
raised (may_raise), it may have set the grad mode (grad_mode: not known), and
what it surely raised so far is dropped. A file whose top level it was reading,
not finished, is forgotten (`Project.drop_unfinished`), so that a later import
reads it whole (inside another allowance, one that would read it to the same
cut is cut at once: allowance.py). The cut is deterministic: the allowance counts statements, not
time, so the same source gives the same figures on any machine and at any load.

Statements counted inside an allowance open none of their own: the outer count
includes theirs, so the outermost import-time call is the one cut. Nothing is
cut outside a target run, nor in a function's body, nor in a target's forward:
only import time is bounded so.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from shapelint.analysis import class_state, grad_mode, may_raise, raising
from shapelint.analysis.allowance import ACTIVE, Allowance, StatementTooLong
from shapelint.analysis.callable_values import ClassRefV, FunctionRefV
from shapelint.ops import tensor_values
from shapelint.ops.values import UNKNOWN, BoolV, FloatV, IntV, NoneV, StrV, TupleV, Value

# Statements one import-time statement may run (its callees' and the top levels
# of the files it reads first included), about 1.5 s of the 10 s budget. Measured
# (session 25): matplotlib.use("Agg"), whose first use reads matplotlib, 4,438;
# transformers' `re.compile(...)` with `import regex as re`, whose pattern parser
# is Python, 22,234; tsai's `pcc(a, b)`, whose first use reads scipy.stats, over
# 60,000 when the 10 s budget stopped it. Most others run fewer than 500.
STEPS = 10_000

_UNITS = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign)
_CALLS = "_shapelint_import_call"


def bounded(an, stmt: ast.stmt, frame) -> bool:
    """Whether stmt runs under an allowance of its own: a simple statement making
    a call, at a module's top level, in a target run, inside no other allowance."""
    return (
        an.specialize
        and frame.func is None
        and frame.name == "<module>"
        and isinstance(stmt, _UNITS)
        and ACTIVE.get() is None
        and _makes_call(stmt)
    )


def run(an, stmt: ast.stmt, frame, body: Callable[[], None]) -> None:
    """Run body (stmt's step) under an allowance; past it, stmt is read as a call
    the analysis does not follow (see the module's docstring)."""
    allowance = Allowance(STEPS)
    token = ACTIVE.set(allowance)
    project = an.project
    loading = project.unfinished() if project is not None else frozenset()
    raised = raising.snapshot()
    mode = grad_mode.GRAD_MODE.get()
    classes = class_state.snapshot()
    try:
        body()
    except StatementTooLong as e:
        if e.allowance is not allowance:
            raise
        _cut(an, stmt, frame, loading, raised, mode, classes)
    finally:
        ACTIVE.reset(token)


def _cut(an, stmt: ast.stmt, frame, loading, raised, mode, classes) -> None:
    class_state.unknown_since(classes)
    if an.project is not None:
        an.project.drop_unfinished(loading)
    raising.restore(raised)
    may_raise.mark()
    tensor_values.forget_all()  # it may have written into any tensor it reaches
    if grad_mode.GRAD_MODE.get() != mode:
        grad_mode.GRAD_MODE.set(None)  # it may have set the mode, or not
    env = frame.env
    changed = [env[n] for n in _read_names(stmt) if n in env and not _immutable(env[n])]
    for name in list(env):
        if any(env[name] is v for v in changed):
            env[name] = UNKNOWN
    for name in _bound_names(stmt):
        env[name] = UNKNOWN
    note = "an import-time statement past its allowance of statements: not followed"
    an.unknown_call(_first_call(stmt), [], {}, frame, note, open_args=True)


def _immutable(v: Value) -> bool:
    """Whether no call can change v in place."""
    if isinstance(v, (IntV, FloatV, BoolV, StrV, NoneV)):
        return True
    if isinstance(v, TupleV) and v.kind == "tuple":
        return all(_immutable(x) for x in v.items)
    return isinstance(v, (FunctionRefV, ClassRefV))


def _makes_call(stmt: ast.stmt) -> bool:
    known = stmt.__dict__.get(_CALLS)
    if known is None:
        known = _first_call(stmt) is not None
        setattr(stmt, _CALLS, known)
    return known


def _first_call(stmt: ast.stmt) -> ast.Call | None:
    for node in _own_nodes(stmt):
        if isinstance(node, ast.Call):
            return node
    return None


def _own_nodes(stmt: ast.stmt):
    """The nodes of stmt outside lambda bodies (which run only when called)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.Lambda):
                stack.append(child)


def _read_names(stmt: ast.stmt) -> list[str]:
    return [n.id for n in _own_nodes(stmt) if isinstance(n, ast.Name) and type(n.ctx) is ast.Load]


def _bound_names(stmt: ast.stmt) -> set[str]:
    """The names stmt binds or stores into: its targets (the root of an attribute
    or item target), and its walruses'."""
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets.extend(stmt.targets)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets.append(stmt.target)
    targets.extend(n.target for n in _own_nodes(stmt) if isinstance(n, ast.NamedExpr))
    out: set[str] = set()
    while targets:
        t = targets.pop()
        if isinstance(t, ast.Name):
            out.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            targets.extend(t.elts)
        elif isinstance(t, ast.Starred):
            targets.append(t.value)
        elif isinstance(t, (ast.Attribute, ast.Subscript)):
            targets.append(t.value)
    return out
