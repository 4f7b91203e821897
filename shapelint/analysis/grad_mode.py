"""Grad mode as the code sets it: `with torch.no_grad():`, `torch.inference_mode()`,
`torch.enable_grad()`, `torch.set_grad_enabled(flag)`, and the same as decorators
of a function the target runs. Inside, no op is recorded for backward: its
result requires no grad and its backward costs nothing (ops/backward.py). A flag
the analysis cannot read leaves grad mode unknown, and the backward of what runs
there unknown with it.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from shapelint.analysis import unknown_cost as uc
from shapelint.ops import saved as storages
from shapelint.ops.backward import GRAD_MODE, KEEP, ZERO, any_grad, recomputed, with_grad
from shapelint.ops.values import UNKNOWN, BoolV, TensorV, Value

_OFF = frozenset({"torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"})
_INFERENCE = frozenset(
    {
        "torch.inference_mode",
        "torch.autograd.inference_mode",
        "torch.autograd.grad_mode.inference_mode",
    }
)
_ON = frozenset(
    {"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"}
)
_SET = frozenset(
    {
        "torch.set_grad_enabled",
        "torch.autograd.set_grad_enabled",
        "torch.autograd.grad_mode.set_grad_enabled",
    }
)


@dataclass(frozen=True, slots=True)
class GradModeV(Value):
    """A grad-mode context manager as a value (`ctx = torch.no_grad()`, `torch.no_grad()
    if frozen else nullcontext()`), which a `with` of it enters: the mode it sets
    (None: not known, one of two an undecided path left), and whether it may be
    inference mode (its tensors refused by autograd after it)."""

    mode: bool | None = None
    inference: bool = False


def made(qual: str, args, kwargs) -> GradModeV | None:
    """`torch.no_grad()`, `torch.enable_grad()`, `torch.inference_mode(mode)` called
    as a value, not as a `with` item or a decorator (mode_of reads those)."""
    if qual in _OFF and not args and not kwargs:
        return GradModeV(False)
    if qual in _ON and not args and not kwargs:
        return GradModeV(True)
    if qual in _INFERENCE and len(args) + len(kwargs) <= 1 and set(kwargs) <= {"mode"}:
        flag = args[0] if args else kwargs.get("mode", BoolV(True))
        on = flag.value if isinstance(flag, BoolV) else None
        return GradModeV(None if on is None else not on, inference=on is not False)
    return None


def joined(a: Value, b: Value) -> GradModeV:
    """A grad-mode context manager on one path, another value on the other: the
    mode a `with` of it sets is known only where both set the same."""
    if isinstance(a, GradModeV) and a == b:
        return a
    inference = any(isinstance(v, GradModeV) and v.inference for v in (a, b))
    return GradModeV(None, inference=inference)


def mode_of(an, expr: ast.expr, frame) -> bool | None | object:
    """The grad mode a context manager or decorator sets: True, False, None (not
    known), or KEEP (it is none of them). `inference_mode(mode)` and
    `set_grad_enabled(mode)` take their flag by position or as `mode=`."""
    call = expr if isinstance(expr, ast.Call) else None
    func = call.func if call is not None else expr
    if not isinstance(func, (ast.Name, ast.Attribute)):
        return KEEP
    qual = an.imports.resolve(func)
    if qual in _OFF:
        return False
    if qual in _INFERENCE:
        flag = _mode_argument(call) if call is not None else None
        return False if flag is None else _flag(an, flag, frame, invert=True)
    if qual in _ON:
        return True
    if qual in _SET:
        flag = _mode_argument(call) if call is not None else None
        return None if flag is None else _flag(an, flag, frame)
    return KEEP


def inference_tensors(an, expr: ast.expr, frame, cm: Value = UNKNOWN) -> None:
    """`torch.inference_mode()` (a `with` item, or a value cm of one, or a
    decorator) with its mode on or not known, entered where grad mode may be on:
    the tensors made inside are inference tensors, which torch refuses to save for
    backward once outside ("Inference tensors cannot be saved for backward"), a
    refusal this analysis does not follow: on the record as a call not followed
    (a target run)."""
    if not an.specialize or GRAD_MODE.get() is False:
        return
    if isinstance(cm, GradModeV):
        hazard = cm.inference
    elif not isinstance(expr, ast.Call) or not isinstance(expr.func, (ast.Name, ast.Attribute)):
        return
    elif an.imports.resolve(expr.func) not in _INFERENCE:
        return
    else:
        flag = _mode_argument(expr)
        hazard = flag is None or _flag(an, flag, frame) is not False
    if hazard:
        why = "inference_mode: its tensors raise where autograd saves them (not followed)"
        at = expr if isinstance(expr, ast.Call) else ast.copy_location(ast.Call(expr, [], []), expr)
        uc.record_not_known(an, at, frame, "torch.inference_mode", why)


def _mode_argument(call: ast.Call) -> ast.expr | None:
    """The expression given as the `mode` parameter (the first) of the call."""
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "mode"), None)


def _flag(an, node: ast.expr, frame, invert: bool = False) -> bool | None:
    v = an.eval(node, frame)
    if isinstance(v, BoolV) and v.value is not None:
        return not v.value if invert else v.value
    return None


@contextmanager
def entered(mode) -> Iterator[None]:
    """Grad mode set to mode for the block (KEEP: as it is)."""
    if mode is KEEP:
        yield
        return
    token = GRAD_MODE.set(mode)  # type: ignore[arg-type]
    try:
        yield
    finally:
        GRAD_MODE.reset(token)


def set_here(an, stmt: ast.Expr, frame) -> bool:
    """`torch.set_grad_enabled(flag)` called as a statement, not entered: torch
    sets the mode at the call, for everything after it (the callers of the
    function too) until another call sets it or a grad-mode block around it ends
    (which restores the mode it found, as `entered` does). Set for the rest of a
    target run (not known where the flag is not); a pass that is not the run
    (a function's summary, a trial turn) sets nothing. Whether stmt is such a call."""
    call = stmt.value
    if not isinstance(call, ast.Call) or not isinstance(call.func, (ast.Name, ast.Attribute)):
        return False
    if an.imports.resolve(call.func) not in _SET:
        return False
    given = _mode_argument(call)
    flag = _flag(an, given, frame) if given is not None else None
    if an.specialize and getattr(frame, "runs", False):
        an.outer_writes += 1  # a loop whose turn does this is not the same each turn
        if not an.trial:
            GRAD_MODE.set(flag)
    return True


def sets_globally(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether fd's body calls `set_grad_enabled` as a statement (set_here): its
    run changes the mode its caller goes on in, which a memoised run would not
    do again. Read off the source (any such name), kept on the node."""
    known = node.__dict__.get(_SETS)
    if known is None:
        known = any(
            isinstance(n, ast.Expr)
            and isinstance(n.value, ast.Call)
            and _last_name(n.value.func) == "set_grad_enabled"
            for n in ast.walk(node)
        )
        setattr(node, _SETS, known)
    return known


_SETS = "_shapelint_sets_grad_mode"


def _last_name(func: ast.expr) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


@contextmanager
def run_scope() -> Iterator[None]:
    """One target run: what `set_here` set ends with it."""
    token = GRAD_MODE.set(GRAD_MODE.get())
    try:
        yield
    finally:
        GRAD_MODE.reset(token)


def decorated(an, fd, frame) -> object:
    """The grad mode fd's decorators set for its body (KEEP when none does)."""
    mode: object = KEEP
    for d in fd.node.decorator_list:
        m = mode_of(an, d, frame)
        if m is not KEEP:
            mode = m
    return mode


_AUTOCAST = frozenset(
    {"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"}
)


def casts(an, expr: ast.expr, frame) -> bool:
    """`torch.autocast(...)` (a `with` item or a decorator) not surely disabled
    (`enabled=False`): the ops it covers run at another dtype (saved.cast_region)."""
    if not isinstance(expr, ast.Call) or not isinstance(expr.func, (ast.Name, ast.Attribute)):
        return False
    if an.imports.resolve(expr.func) not in _AUTOCAST:
        return False
    for kw in expr.keywords:
        if kw.arg == "enabled":
            flag = an.eval(kw.value, frame)
            return not (isinstance(flag, BoolV) and flag.value is False)
    return True


_QUERY = frozenset({"torch.is_grad_enabled", "torch.autograd.grad_mode.is_grad_enabled"})


def queried(qual: str, args, kwargs) -> BoolV | None:
    """`torch.is_grad_enabled()`: the grad mode the run is in (not known where a flag
    the analysis cannot read set it); None where the call is not that."""
    if qual not in _QUERY or args or kwargs:
        return None
    return BoolV(GRAD_MODE.get())


CHECKPOINT = "torch.utils.checkpoint.checkpoint"
# checkpoint's own keywords; the others go to the function it runs.
_CHECKPOINT_OPTIONS = frozenset(
    {"use_reentrant", "context_fn", "determinism_check", "debug", "preserve_rng_state"}
)


def checkpoint(an, node: ast.Call, args, kwargs, frame):
    """`checkpoint(fn, *args, use_reentrant=...)`: fn runs once forward, and again
    inside backward, before its backward: each call it makes costs its forward
    once more there. The reentrant variant (torch's default when use_reentrant is
    not given) is an autograd Function of its tensor arguments only: its result
    requires grad only if one of them does, and nothing in it runs backward
    otherwise (the parameters inside get no gradient). The non-reentrant variant
    stops recomputing once the last tensor its backward saved is back, which
    depends on what each op saves: its backward is not known (a lower bound)."""
    fn, rest = args[0], list(args[1:])
    passed = {k: v for k, v in kwargs.items() if k not in _CHECKPOINT_OPTIONS}
    flag = kwargs.get("use_reentrant")
    reentrant = True if flag is None else flag.value if isinstance(flag, BoolV) else None
    before = dict(frame.records)
    # What it saves: the reentrant variant its tensor arguments (ctx.save_for_backward),
    # and nothing of what runs inside; the other is not modelled.
    inputs = [*rest, *passed.values()]
    keeps = _kept_inputs(inputs, any_grad(inputs) if reentrant else None, reentrant)
    with storages.apart():
        value = an.call_value(fn, node, rest, passed, frame)
    if reentrant is True:
        grad = any_grad([*rest, *passed.values()])
        value = with_grad(value, grad)
    else:
        grad = any_grad([value]) if reentrant is False else None
    runs = ast.unparse(node.args[0]) if node.args else None
    for key, rec in list(frame.records.items()):
        if before.get(key) is not rec:
            new = _recomputed_tree(rec, grad, reentrant is True, {})
            if runs is not None and rec.callee == ast.unparse(node.func):
                new.callee = runs  # the module it runs, for the per-module table
            if keeps != ZERO:
                new.cost = dataclasses.replace(
                    new.cost, saved=None if keeps is None or new.cost.saved is None else keeps
                )
                keeps = ZERO
            frame.records[key] = new
    return value


def _kept_inputs(inputs, grad, reentrant: bool | None):
    """The bytes checkpoint saves of its inputs (None: not known)."""
    if grad is False:
        return ZERO
    if reentrant is not True or grad is None:
        return None
    return storages.weigh(tuple(("tensor", v, False) for v in inputs if isinstance(v, TensorV)))[0]


def _recomputed_tree(rec, grad, whole: bool, done: dict):
    """A copy of rec and the calls it ran, each recomputed in backward (a callee's
    records may be shared with its runs elsewhere: they are never changed)."""
    if id(rec) not in done:
        children = [_recomputed_tree(ch, grad, whole, done) for ch in rec.children]
        cost = recomputed(rec.cost, grad, whole)
        done[id(rec)] = dataclasses.replace(rec, cost=cost, children=children)
    return done[id(rec)]
