"""A custom `torch.autograd.Function` called as torch calls it: `Fn.apply(*args)`, or
`Fn.apply` read as a value and called by another name (`sparsemax = Fn.apply`).

`apply` runs the class's static `forward(ctx, *args)` (`forward(*args)` where the
class defines `setup_context`, torch 2's style, whose run is not followed: what it
saves is not known) with a context object whose
`mark_dirty`, `mark_non_differentiable` and `set_materialize_grads` hand nothing
back, and whose attributes are the forward's to set. Its result requires grad where
an argument does. What autograd runs for it is the class's own `backward`, not the
backward of the ops its forward ran (those run with grad disabled and save nothing):

- saved for backward: what the forward hands `ctx.save_for_backward` (torch packs
  each through the saved-tensor hooks; a tensor stored as `ctx.x = t` is kept by
  the context alone, which the hooks never see);
- its backward: the class's `backward(ctx, *grads)` run as autograd runs it, with
  grad disabled, one gradient per tensor the forward returned (of its shape),
  `ctx.saved_tensors` what was saved and the attributes the forward set; the
  products it runs are what torch's flop counter counts.

Each is followed only where the forward surely did it: `save_for_backward` called
once, as a statement of the forward's own body before any return, and each
attribute the backward reads stored so (one stored under a test, a loop or in a
helper is not known). Otherwise the call says it is not known (a lower bound).
"""

from __future__ import annotations

import ast
import dataclasses
from contextvars import ContextVar

from shapelint.analysis import call_path, grad_mode
from shapelint.analysis.attributes import base_classes, find_method, is_class_method
from shapelint.analysis.repetition import add_costs, collected, holding
from shapelint.notation.symbolic import Expr
from shapelint.ops import saved as saving
from shapelint.ops import versions
from shapelint.ops.backward import Origin, any_grad, made_by, parents, requires
from shapelint.ops.values import (
    UNKNOWN,
    BoolV,
    Cost,
    NoneV,
    ObjectV,
    TensorV,
    TupleV,
    Value,
)
from shapelint.rules import severity_of

# InplaceFunction: Function with an `inplace` flag set by its __init__; the same apply
_FUNCTION = frozenset(
    {
        "torch.autograd.Function",
        "torch.autograd.function.Function",
        "torch.autograd.function.InplaceFunction",
    }
)
CTX_KIND = "torch.autograd.function.FunctionCtx"
CTX_METHODS = frozenset(
    {"save_for_backward", "mark_dirty", "mark_non_differentiable", "set_materialize_grads"}
)
ZERO = Expr.const(0)
BACKWARD_NOTE = (
    "a custom autograd.Function: its backward is its own `backward`, not followed "
    "(backward FLOPs and saved tensors not known)"
)


@dataclasses.dataclass(frozen=True, slots=True)
class ApplyV(Value):
    """`Fn.apply` read as a value (`sparsemax = SparsemaxFunction.apply`): a call of
    it is `Fn.apply(...)`. cls: the Function class's key."""

    cls: str


def is_function(an, cd, depth: int = 0) -> bool:
    """cd derives from torch.autograd.Function (through project classes too)."""
    owner = cd.owner or an
    for b in cd.node.bases:
        if isinstance(b, (ast.Name, ast.Attribute)) and owner.imports.resolve(b) in _FUNCTION:
            return True
    return depth < 20 and any(is_function(an, base, depth + 1) for base in base_classes(an, cd))


SAVED_NOTE = (
    "a custom autograd.Function: what its forward hands ctx.save_for_backward is not "
    "surely known (called under a test, a loop, in a helper, or more than once)"
)

GRAD_NOTE = (
    "whether an argument requires grad (and so whether autograd makes the node) is not known"
)

# The apply running now: the tensors its forward handed save_for_backward, and the
# attributes it stored on ctx, each UNKNOWN where the store is not surely made.
_RUNNING: ContextVar[dict | None] = ContextVar("function_ctx", default=None)


def ctx_method(recv: Value, name: str, args=()) -> Value | None:
    """`ctx.save_for_backward(...)` and the like: None (nothing handed back); what
    save_for_backward is given is kept for the apply running now."""
    if isinstance(recv, ObjectV) and recv.kind == CTX_KIND and name in CTX_METHODS:
        state = _RUNNING.get()
        if name == "save_for_backward" and state is not None:
            state["saves"].append(tuple(args))
        return NoneV()
    return None


def forward_running(fd) -> bool:
    """fd is the forward of the apply running now: run, never served from an equal
    call's analysis (what it hands save_for_backward is this call's)."""
    state = _RUNNING.get()
    return state is not None and state["forward"] is fd


def ctx_stored(base: Value, target: ast.Attribute, value: Value) -> None:
    """`ctx.attr = value` in the forward of the apply running now."""
    state = _RUNNING.get()
    if state is None or not isinstance(base, ObjectV) or base.kind != CTX_KIND:
        return
    state["attrs"][target.attr] = value if id(target) in state["sure"] else UNKNOWN


def _sure_statements(fn: ast.FunctionDef) -> tuple[set, int]:
    """The ctx attribute stores (ids of their targets) among the statements of fn's
    own body before any return, which run whenever fn returns; and how many of those
    statements call save_for_backward (-1 where one is called anywhere else)."""
    sure: set = set()
    calls = 0
    for stmt in fn.body:
        if isinstance(stmt, ast.Return):
            break
        if isinstance(stmt, ast.Assign):
            sure.update(id(t) for t in stmt.targets if isinstance(t, ast.Attribute))
        if _saves(stmt):
            calls += 1
    every = sum(1 for n in ast.walk(fn) if isinstance(n, ast.Call) and _saves_call(n))
    return sure, calls if calls == every else -1


def _saves_call(n: ast.Call) -> bool:
    return isinstance(n.func, ast.Attribute) and n.func.attr == "save_for_backward"


def _saves(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and _saves_call(stmt.value)
    )


def apply(an, cd, klass: Value, node: ast.Call, args, kwargs, frame) -> Value | None:
    """`Fn.apply(*args)`: its forward run with a fresh context, one record at the
    call holding what the forward ran; None where the class has no forward. klass
    is the class as a value, what a forward written as a classmethod binds."""
    forward = find_method(an, cd, "forward")
    if forward is None:
        return None
    # a forward written as a classmethod (`def forward(cls, ctx, x)`) has cls bound
    cls = klass if is_class_method(forward.node) else None
    sure, calls = _sure_statements(forward.node)
    state: dict = {"saves": [], "attrs": {}, "sure": sure, "forward": forward}
    # a Function that defines `setup_context` (torch 2's style) has a forward that
    # takes no context: apply calls `forward(*args)`, then `setup_context(ctx, args,
    # output)`, which fills the context (not run here: what it saves is not known)
    split = find_method(an, cd, "setup_context") is not None
    ctx = [] if split else [ObjectV(CTX_KIND)]
    token = _RUNNING.set(state)
    with collected(frame) as children:
        # torch runs a Function's forward with grad disabled: its ops record nothing
        # and save nothing for backward
        try:
            with grad_mode.entered(False):
                value = an.invoke(forward, cls, node, [*ctx, *args], kwargs, frame)
        finally:
            _RUNNING.reset(token)
        # autograd records the call as one node over its tensor arguments (torch
        # runs the forward without recording its ops, under no_grad or not): the
        # walk from the loss meets that node, whose backward is the class's own
        grad = any_grad([*args, *kwargs.values()])
        made = None if grad is False else Origin(parents([*args, *kwargs.values()]))
        # the same tensors, their storages those the forward made (and may have saved)
        value = _same_storages(value, made_by(value, made, grad))
        kept = _kept(state["saves"], calls, split)
        if made is not None:
            _versions_saved(an, node, cd, made, grad, kept, [*args, *kwargs.values(), value])
        if grad is False:  # no node: nothing saved, no backward
            own = Cost(flops=ZERO, backward=ZERO, saved=ZERO)
        else:
            own = _own_backward(an, cd, node, args, value, kept, state["attrs"], frame, grad)
        an.record(node, frame, f"{cd.name}.backward", None, args, value, own)
    holding(an, node, frame, f"call {cd.name}.apply", args, value, children, summed=False)
    return value


def _versions_saved(an, node, cd, made, grad, kept, tensors) -> None:
    """What ctx.save_for_backward kept, as autograd checks its versions when the
    node's backward unpacks it (ops/versions.py): each tensor kept, or, where
    which is not known, any of the call's tensors."""
    site = (an.src.path, getattr(node, "lineno", None), f"{cd.name}.apply")
    if kept is None:
        for root in saving.storages_among(tensors):
            versions.saved(root, made, site, False, grad)
        return
    for t in kept:
        if isinstance(t, TensorV):
            root = saving.named_storage(t)
            versions.saved(root, made, site, root is not None, grad)


def _kept(saves: list, calls: int, split: bool) -> tuple | None:
    """The tensors the forward surely handed save_for_backward: those of its one
    call, none where it has none; None where not surely known (a call under a test,
    a loop or in a helper, or a context `setup_context` fills, which is not run)."""
    if split:
        return None
    if calls == 0 and not saves:
        return ()
    return saves[0] if calls == 1 and len(saves) == 1 else None


def _own_backward(an, cd, node, args, value, kept, attrs, frame, grad) -> Cost:
    """The Function node's cost: what its forward saved (kept: the tensors handed
    save_for_backward; None where not surely known) and its backward's FLOPs; grad:
    True where an argument requires grad (the node is made), None where not known."""
    notes: list[str] = []
    saved = None
    if kept is None:
        notes.append(f"saved for backward: {SAVED_NOTE}")
    elif grad is None:
        kept = None
        notes.append(f"saved for backward: {GRAD_NOTE}")
    else:
        figure, why = saving.weigh(tuple(("tensor", t, None) for t in kept))
        saved = figure
        if why is not None:
            notes.append(f"saved for backward: {why}")
    backward = (
        None if kept is None else _backward_flops(an, cd, node, args, value, kept, attrs, frame)
    )
    if backward is None:
        notes.append(BACKWARD_NOTE)
    return Cost(flops=ZERO, backward=backward, saved=saved, notes=notes)


def _backward_flops(an, cd, node, args, value, kept, attrs, frame):
    """The FLOPs of the class's backward run on one gradient per tensor the forward
    returned, as autograd runs it (grad disabled); None where not known."""
    method = find_method(an, cd, "backward")
    outs = value.items if isinstance(value, TupleV) else (value,)
    if method is None or not all(isinstance(o, TensorV) and o.shape is not None for o in outs):
        return None
    grads = [TensorV(o.shape, o.dtype, grad=False) for o in outs]
    needs = TupleV(tuple(_needs(a) for a in args))
    fields = {**attrs, "saved_tensors": TupleV(tuple(kept)), "needs_input_grad": needs}
    ctx = ObjectV(CTX_KIND, tuple(fields.items()))
    cls = ObjectV(f"<class>{cd.key}") if is_class_method(method.node) else None
    # Its findings are no findings of the forward's (torch raises them at backward,
    # if at all): collected apart, and a backward that would raise has no figure.
    with call_path.collecting() as found:
        with collected(frame) as ran, grad_mode.entered(False):
            an.invoke(method, cls, node, [ctx, *grads], {}, frame)
    if any(severity_of(f.code) == "error" for f in found):
        return None
    cost = add_costs(r.cost for r in ran.values())
    return cost.flops if cost.complete else None


def _same_storages(old: Value, new: Value) -> Value:
    if isinstance(old, TupleV) and isinstance(new, TupleV) and len(old.items) == len(new.items):
        items = tuple(_same_storages(a, b) for a, b in zip(old.items, new.items, strict=True))
        return dataclasses.replace(new, items=items)
    return saving.same_tensor(old, new)


def _needs(v: Value) -> Value:
    """One item of ctx.needs_input_grad: whether argument v requires grad."""
    if not isinstance(v, TensorV):
        return BoolV(False)
    g = requires(v)
    return UNKNOWN if g is None else BoolV(g)
