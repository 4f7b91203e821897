"""Exceptions a target surely raises, and where they are caught.

In a specialized run (a `cost PATH::QUALNAME` target) a `raise`, or an `assert`
whose test is known false, that surely runs ends its block, and goes on the
record as a call of unknown cost: a forward that raises has no total. A `try`
whose handler surely catches it (by the exception's class, builtin classes by
their hierarchy) runs that handler in its place, and so does a
`with contextlib.suppress(...)` that names it; a branch that raises where the
analysis cannot decide the test is no alternative (the function goes on in the
other one, and nothing the raising branch ran, in its callees included, is part
of the cost of a call that returns), and neither is a handler that re-raises.

Where nothing surely raises, Python runs a handler only if some step of the
body raises. A specialized run counts the steps it cannot vouch for
(may_raise.py: an unknown call, an op on values not known, a tensor op, a
statement it does not model): a body that added none is known not to raise, so
its handlers are dead, its `else` runs and the figure stays complete; a body
that may raise keeps each handler's calls as alternatives (analysis/branches.py)
and the figure is a lower bound. A plain run's handlers are always alternatives.
"""

from __future__ import annotations

import ast
import builtins
from contextlib import contextmanager

from shapelint.analysis import call_path, instance_state, may_raise
from shapelint.analysis import unknown_cost as uc
from shapelint.analysis.branches import alternative
from shapelint.analysis.repetition import ONE, collected, merge
from shapelint.ops.values import UNKNOWN, Cost

OP = "raise"

# What the call being evaluated surely raised (a callee's body, a constructor),
# for the caller's frame to take: specialized runs evaluate one call at a time.
_PENDING: list[str] = []
# Where each sure raise of the run is, by its record: the finding (SURELY) a target
# whose call ends in it reports.
_SITES: dict[int, tuple] = {}
SURELY = "SHP323"


def pending(exc: str) -> None:
    _PENDING.append(exc)


def take() -> str | None:
    return _PENDING.pop() if _PENDING else None


def reset() -> None:
    _PENDING.clear()
    _SITES.clear()


def snapshot() -> tuple[str, ...]:
    """What is pending now, for restore."""
    return tuple(_PENDING)


def restore(saved: tuple[str, ...]) -> None:
    """Pending again what snapshot saw: a run cut short (import_time.py) surely
    raised nothing the analysis can vouch for."""
    _PENDING[:] = saved


@contextmanager
def apart():
    """A run that is no step of the caller's (plain mode's constructor run):
    what it surely raised is no exception of the call being evaluated."""
    saved = list(_PENDING)
    try:
        yield
    finally:
        _PENDING[:] = saved


def of_records(records) -> str | None:
    """The exception the run that made these records surely raised, if any."""
    for r in records:
        if r.raises is not None:
            return r.raises
    return None


def surely(an, node: ast.stmt, frame, exc: str | None) -> None:
    """The statement raises whenever it runs: the block stops here."""
    what = exc or "an exception"
    note = f"raises {what} here: the call does not return"
    rec = uc.record_not_known(an, node, frame, OP, note)
    rec.raises = exc or ""  # what a handler is matched against
    calls = call_path.calls_here(node.lineno)
    if calls is not None:
        (l1, c1), (l2, c2) = an.src.node_start(node), an.src.node_end(node)
        message = f"surely raises {what}, which nothing catches: the call does not return"
        where = (an.src.path, l1, c1, l2, c2, SURELY, message, calls)
        _SITES[id(rec)] = (rec, call_path.Finding(*where))
    frame.done = True
    frame.raised = True


def last_raised(exc: str) -> list:
    """The finding of the last sure raise the run reached (the one a constructor that
    surely raised ended in), where it raised exc; as surely_raised gives it."""
    if not _SITES:
        return []
    rec, finding = next(reversed(_SITES.values()))
    return [finding] if rec.raises == exc else []


def surely_raised(records, exc: str | None) -> list:
    """The finding of the sure raise of exc a target's call ended in (records: the
    run's, depth first in order: the first sure raise reached ends it); none where
    the analysis did not see where (a raise it did not place)."""
    todo = list(reversed(list(records)))
    while todo:
        r = todo.pop()
        site = _SITES.get(id(r))
        if r.raises is not None and r.raises == exc and site is not None and site[0] is r:
            return [site[1]]
        todo.extend(reversed(r.children))
    return []


def settle(frame) -> None:
    """At the end of a run's body: a raise it reached after a path of it had
    returned (`if a: (if b: return x) elif c: return y` then `raise`, where the rest
    is not one branch's to merge into: branches.with_rest) ran on the paths that did
    not return, so the call is no sure raise: it returns by the paths that did. What
    ran after the last return ran on those raising paths only (each return before it
    on a path of its own), and is no part of a call that returns."""
    if not (frame.raised and frame.returns and frame.returned_at is not None):
        return
    for k in list(frame.records)[frame.returned_at :]:
        del frame.records[k]
    frame.raised = False


def refused(an, node: ast.AST, frame, refusal: tuple[bool, str] | None) -> None:
    """torch's refusal of a step (ops/backward.flag_refused): where it surely
    raises, the block stops there; where it may, the step is a call of unknown
    cost, so that no total is printed as complete."""
    if refusal is None:
        return
    sure, why = refusal
    if sure:
        surely(an, node, frame, "RuntimeError")  # type: ignore[arg-type]
        return
    note = f"may raise RuntimeError here ({why})"
    uc.record_not_known(an, node, frame, OP, note)


def raises_cost(cost: Cost, building: str | None) -> Cost:
    """A target's cost when its call surely raises: no total."""
    where = "building the module raises" if building is not None else "the call raises"
    note = f"{where} {building or ''}".rstrip() + ": no total"
    return Cost(
        cost.flops,
        cost.other_flops,
        cost.bytes,
        [*cost.notes, note],
        False,
        backward=None,
        saved=None,
    )


def exception_name(exc: ast.expr | None) -> str | None:
    """`raise ValueError(...)` or `raise ValueError`: its class's name."""
    node = exc.func if isinstance(exc, ast.Call) else exc
    return node.id if isinstance(node, ast.Name) else None


def drop(frame, keys) -> None:
    """The raise markers among frame's records at keys: the exception was caught."""
    for k in keys:
        if getattr(frame.records.get(k), "raises", None) is not None:
            del frame.records[k]


def raised_here(frame, keys) -> str | None:
    """The class name of the exception the records at keys surely raise ("" when
    it is not a name)."""
    for k in keys:
        r = getattr(frame.records.get(k), "raises", None)
        if r is not None:
            return r
    return None


def catches(types: ast.expr | None, exc: str) -> bool | None:
    """Whether an `except types:` surely catches exc (True), surely does not
    (False), or it depends on classes the analysis does not compare (None)."""
    if types is None:
        return True
    names = types.elts if isinstance(types, ast.Tuple) else [types]
    verdicts = [_catches(n, exc) for n in names]
    if any(v is True for v in verdicts):
        return True
    return False if all(v is False for v in verdicts) else None


def _catches(node: ast.expr, exc: str) -> bool | None:
    if not isinstance(node, ast.Name) or not exc:
        return None
    if node.id == exc:
        return True
    handler, raised = getattr(builtins, node.id, None), getattr(builtins, exc, None)
    if not (_is_exception(handler) and _is_exception(raised)):
        # a class of the user's own: any of theirs may derive from Exception
        return True if node.id in ("Exception", "BaseException") and raised is None else None
    return issubclass(raised, handler)


def _is_exception(c) -> bool:
    return isinstance(c, type) and issubclass(c, BaseException)


# What torch and einops raise where shapes conflict (einops' EinopsError is a
# RuntimeError): a handler that catches one of them may run in place of such an error.
SHAPE_ERRORS = ("RuntimeError", "ValueError", "IndexError", "TypeError")


def catches_shape_errors(handlers: list[ast.ExceptHandler]) -> bool:
    """Whether one of the handlers may catch what a shape conflict raises."""
    return any(catches(h.type, exc) is not False for h in handlers for exc in SHAPE_ERRORS)


def exec_try(an, stmt, frame) -> None:
    before = dict(frame.env)
    state = instance_state.fork(an)
    start = set(frame.records)
    steps = may_raise.count()
    # In a target's run, the body and each handler are alternatives of one construct
    # (call_path): an error in the body raises only where no handler catches it, one in
    # a handler only where the body raised; definite where every one of them raises.
    group = call_path.undecided() if stmt.handlers else None
    caught = group is not None and catches_shape_errors(stmt.handlers)
    body_why = f"no handler of the `try` at line {stmt.lineno} catches it"
    with call_path.taking(group if caught else None, body_why):
        an.exec_block(stmt.body, frame)
    if not caught:  # the body's way, where it raises nothing
        call_path.untaken(group, f"the `try` at line {stmt.lineno} raises")
    if frame.raised:
        if caught:  # a handler runs in the body's place
            call_path.untaken(group, f"a handler of the `try` at line {stmt.lineno} runs")
        new = [k for k in frame.records if k not in start]
        exc = raised_here(frame, new)
        for h in stmt.handlers:
            hit = catches(h.type, exc or "")
            if hit is None:
                break  # which handler runs is not known: the raise stays on the record
            if hit:
                drop(frame, new)
                frame.done = frame.raised = False
                if h.name:
                    frame.env[h.name] = UNKNOWN
                an.exec_block(h.body, frame)
                break
        _finally(an, stmt, frame)
        return
    quiet = an.specialize and may_raise.count() == steps
    an.exec_block(stmt.orelse, frame)
    if quiet:  # the body is known not to raise: no handler runs
        _finally(an, stmt, frame)
        return
    after, done, jump = frame.env, frame.done, frame.jump
    jumps = {jump}
    if stmt.handlers:
        why = f"runs only if the `try` at line {stmt.lineno} raises, not known here"
        with collected(frame) as records:
            for h in stmt.handlers:
                frame.env, frame.done, frame.jump = dict(before), False, None
                frame.raised = False
                path = instance_state.taken(state)
                instance_state.restore(state)
                if h.name:
                    frame.env[h.name] = UNKNOWN
                n = len(records)
                why = _handler_runs(stmt, h) if group is not None else ""
                with call_path.taking(group, why) as alt:
                    an.exec_block(h.body, frame)
                if frame.raised:
                    call_path.surely_raised(alt)
                    # a handler that surely raises (re-raises) is no way to return:
                    # what it ran is no part of a call that returns
                    for k in list(records)[n:]:
                        del records[k]
                    continue
                after = an.join_env(after, frame.env)
                jumps.add(frame.jump)
                instance_state.join(an, path)
        for rec in records.values():
            alternative(rec, why, "if it runs")
        merge(frame.records, records, ONE, "")
    frame.env, frame.done, frame.jump, frame.raised = after, done, None, False
    if stmt.handlers:
        frame.done = False  # an exception may skip the body's return
    if len(jumps) > 1:
        # the body's path breaks or continues and a handler's does not (or the
        # other way): which turn the loop ends on is not known
        frame.exit_unsure = True
    else:
        frame.jump = jump
    _finally(an, stmt, frame)


def _handler_runs(stmt: ast.Try, h: ast.ExceptHandler) -> str:
    """When handler h runs, as a finding in it says it."""
    handler = "a bare `except`" if h.type is None else f"`except {ast.unparse(h.type)}`"
    return f"the body of the `try` at line {stmt.lineno} raises and {handler} catches it"


def _finally(an, stmt, frame) -> None:
    """finally runs on every way out: after a return, a raise, a break or a
    continue too; a jump of its own replaces the body's."""
    if not stmt.finalbody:
        return
    done, raised, jump = frame.done, frame.raised, frame.jump
    frame.done = frame.raised = False
    frame.jump = None
    an.exec_block(stmt.finalbody, frame)
    if frame.jump is None and not frame.done:
        frame.jump = jump
    frame.done = frame.done or done
    frame.raised = frame.raised or raised


def after_with(an, stmt, frame, start: set) -> None:
    """A with block that surely raised: `contextlib.suppress` of that class
    swallows it; any other context manager may, so what follows is analysed as
    running (the raise stays on the record: the figure is a lower bound)."""
    if not frame.raised:
        return
    new = [k for k in frame.records if k not in start]
    exc = raised_here(frame, new) or ""
    for item in stmt.items:
        call = item.context_expr
        if (
            isinstance(call, ast.Call)
            and an.imports.resolve(call.func, frame.locals, frame.local_imports)
            == "contextlib.suppress"
            and not call.keywords
            and call.args
            and catches(ast.Tuple(elts=list(call.args)), exc)
        ):
            drop(frame, new)
    frame.done = frame.raised = False
