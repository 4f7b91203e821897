"""`torch.compile(f)` of a function the analysis calls: a callable that computes what
f computes.

Under a dispatch mode (FlopCounterMode, the oracle of every figure here) dynamo runs
the frame eagerly: the compiled call's FLOPs, forward and backward, are those of f's
ops as torch runs them. What it saves for backward is not: outside such a mode AOT
autograd's partitioner decides which tensors the compiled graph keeps, so the call's
activation bytes are not known. A module given to torch.compile (an OptimizedModule,
which registers the module under `_orig_mod`) is not modelled here.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from shapelint.analysis.callable_values import BoundMethodV, FunctionRefV
from shapelint.analysis.decorators import CompiledV, FunctionV
from shapelint.analysis.lambdas import ClosureV
from shapelint.analysis.repetition import add_costs, collected, holding
from shapelint.ops.values import Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

QUALNAMES = frozenset({"torch.compile"})
_SAVED_WHY = (
    "saved for backward: a function torch.compile compiled keeps what AOT autograd's "
    "partitioner picks, not what its ops save eagerly"
)


def compile_value(args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """`torch.compile(f, **options)`: f compiled, where f is a function of the project
    (a bound method too); None for anything else (a module, the decorator factory
    `torch.compile(mode=...)`, arguments torch would refuse)."""
    if len(args) > 1 or (args and "model" in kwargs):
        return None
    f = args[0] if args else kwargs.get("model")
    if not isinstance(f, (FunctionV, ClosureV, FunctionRefV, BoundMethodV)):
        return None
    return CompiledV(f)


def join(a: Value, b: Value) -> CompiledV | None:
    """A function on one path and its compiled self on the other (`torch.compile(f)`
    where it succeeds, f where it raises or is turned off): either computes f's values
    at f's FLOPs, and what it saves is not known on the compiled path."""
    if isinstance(a, CompiledV) and (b == a.func or b == a):
        return a
    if isinstance(b, CompiledV) and a == b.func:
        return b
    return None


def call(an: Analyzer, callee: CompiledV, node, args, kwargs, frame) -> Value:
    """The compiled function called: f's run, one record at the call holding f's
    records, its saved bytes not known."""
    with collected(frame) as children:
        value = an.call_value(callee.func, node, list(args), dict(kwargs), frame)
    cost = add_costs(r.cost for r in children.values())
    cost = dataclasses.replace(cost, saved=None, notes=[*cost.notes, _SAVED_WHY])
    holding(an, node, frame, "call torch.compile", args, value, children, cost)
    return value
