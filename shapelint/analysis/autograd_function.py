"""A custom `torch.autograd.Function` called as torch calls it: `Fn.apply(*args)`, or
`Fn.apply` read as a value and called by another name (`sparsemax = Fn.apply`).

`apply` runs the class's static `forward(ctx, *args)` (`forward(*args)` where the
class defines `setup_context`, torch 2's style) with a context object whose
`save_for_backward`, `mark_dirty`, `mark_non_differentiable` and
`set_materialize_grads` hand nothing back, and whose attributes are the forward's to
set. Its result requires grad where an argument does. What autograd runs for it is
the class's own `backward`, not the backward of the ops its forward ran: neither the
backward FLOPs nor the tensors saved for it are known here, and the call says so (a
lower bound, never a figure).
"""

from __future__ import annotations

import ast
import dataclasses

from shapelint.analysis import grad_mode
from shapelint.analysis.attributes import base_classes, find_method, is_class_method
from shapelint.analysis.repetition import add_costs, collected
from shapelint.notation.symbolic import Expr
from shapelint.ops.backward import Origin, any_grad, made_by, parents
from shapelint.ops.values import Cost, NoneV, ObjectV, Value

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


def ctx_method(recv: Value, name: str) -> Value | None:
    """`ctx.save_for_backward(...)` and the like: None (nothing to model)."""
    if isinstance(recv, ObjectV) and recv.kind == CTX_KIND and name in CTX_METHODS:
        return NoneV()
    return None


def apply(an, cd, klass: Value, node: ast.Call, args, kwargs, frame) -> Value | None:
    """`Fn.apply(*args)`: its forward run with a fresh context, one record at the
    call holding what the forward ran; None where the class has no forward. klass
    is the class as a value, what a forward written as a classmethod binds."""
    forward = find_method(an, cd, "forward")
    if forward is None:
        return None
    # a forward written as a classmethod (`def forward(cls, ctx, x)`) has cls bound
    cls = klass if is_class_method(forward.node) else None
    # a Function that defines `setup_context` (torch 2's style) has a forward that
    # takes no context: apply calls `forward(*args)`, then `setup_context(ctx, args,
    # output)`, which only fills the context
    ctx = [] if find_method(an, cd, "setup_context") is not None else [ObjectV(CTX_KIND)]
    with collected(frame) as children:
        # torch runs a Function's forward with grad disabled: its ops record nothing
        # and save nothing for backward (what `ctx.save_for_backward` keeps is the
        # Function's own, not modelled)
        with grad_mode.entered(False):
            value = an.invoke(forward, cls, node, [*ctx, *args], kwargs, frame)
        # autograd records the call as one node over its tensor arguments (torch
        # runs the forward without recording its ops, under no_grad or not): the
        # walk from the loss meets that node, whose backward (the class's own) is
        # not known, whether the forward's ops would have had one or not
        grad = any_grad([*args, *kwargs.values()])
        made = None if grad is False else Origin(parents([*args, *kwargs.values()]))
        value = made_by(value, made, grad)
        unknown = Cost(flops=ZERO, backward=None, saved=None, notes=[BACKWARD_NOTE])
        an.record(node, frame, f"{cd.name}.backward", None, args, value, unknown)
    cost = add_costs(r.cost for r in children.values())
    cost = dataclasses.replace(cost, backward=None, saved=None, notes=[*cost.notes, BACKWARD_NOTE])
    rec = an.record(node, frame, f"call {cd.name}.apply", None, args, value, cost)
    rec.children = list(children.values())
    return value
