"""`torch.compile(f)` of a function the analysis calls: a callable that computes what
f computes.

Under a dispatch mode (FlopCounterMode, the oracle of every figure here) dynamo runs
the frame eagerly: the compiled call's FLOPs, forward and backward, are those of f's
ops as torch runs them. What it saves for backward is not: outside such a mode AOT
autograd's partitioner decides which tensors the compiled graph keeps, so the call's
activation bytes are not known. A module given to torch.compile is the
OptimizedModule torch returns: a module that registers the module it was given as its
one child, `_orig_mod` (so parameters, `.eval()` and casts reach it, as torch's walks
do), and whose call runs that module's call, hooks and all, as compiled functions run:
its FLOPs, its saved bytes not known.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from shapelint.analysis.callable_values import BoundMethodV, FunctionRefV
from shapelint.analysis.decorators import CompiledV, FunctionV
from shapelint.analysis.lambdas import ClosureV
from shapelint.analysis.module_kinds import OPTIMIZED_KIND, ORIG_MOD, is_module
from shapelint.analysis.repetition import add_costs, collected, holding
from shapelint.ops.values import BoolV, ObjectV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

QUALNAMES = frozenset({"torch.compile"})
_SAVED_WHY = (
    "saved for backward: a function torch.compile compiled keeps what AOT autograd's "
    "partitioner picks, not what its ops save eagerly"
)


def compile_value(args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """`torch.compile(f, **options)`: f compiled, where f is a function of the project
    (a bound method too), or the OptimizedModule of a module f; None for anything
    else (the decorator factory `torch.compile(mode=...)`, arguments torch would
    refuse)."""
    if len(args) > 1 or (args and "model" in kwargs):
        return None
    f = args[0] if args else kwargs.get("model")
    if f is not None and is_module(f):
        disable = kwargs.get("disable", BoolV(False))
        if not isinstance(disable, BoolV) or disable.value is None:
            return None
        # `disable=True` hands the module back as it was given
        return f if disable.value else ObjectV(OPTIMIZED_KIND, ((ORIG_MOD, f),))
    if not isinstance(f, (FunctionV, ClosureV, FunctionRefV, BoundMethodV)):
        return None
    return CompiledV(f)


def compiled_module(v: Value) -> Value | None:
    """The module an OptimizedModule runs (None: v is none)."""
    if type(v) is not ObjectV or v.kind != OPTIMIZED_KIND:
        return None
    return dict(v.attrs).get(ORIG_MOD)


def join(a: Value, b: Value) -> CompiledV | None:
    """A function on one path and its compiled self on the other (`torch.compile(f)`
    where it succeeds, f where it raises or is turned off): either computes f's values
    at f's FLOPs, and what it saves is not known on the compiled path."""
    if isinstance(a, CompiledV) and (b == a.func or b == a):
        return a
    if isinstance(b, CompiledV) and a == b.func:
        return b
    return None


def call(an: Analyzer, callee: CompiledV | Value, node, args, kwargs, frame) -> Value:
    """The compiled function (or module: what compiled_module finds) called: its
    run, one record at the call holding its records, its saved bytes not known."""
    run = callee.func if isinstance(callee, CompiledV) else callee
    with collected(frame) as children:
        value = an.call_value(run, node, list(args), dict(kwargs), frame)
    cost = add_costs(r.cost for r in children.values())
    cost = dataclasses.replace(cost, saved=None, notes=[*cost.notes, _SAVED_WHY])
    holding(an, node, frame, "call torch.compile", args, value, children, cost)
    return value
