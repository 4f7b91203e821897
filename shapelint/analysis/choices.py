"""A module attribute that is one of several modules, chosen by a test the analysis
cannot decide: timm's `self.drop_path1 = DropPath(p) if p > 0. else nn.Identity()`
with `p` read from a schedule of tensors.

Calling it runs each alternative on the same inputs, as an undecided `if` runs both
branches (branches.py): when they cost the same FLOPs the cost is known and counted
once; otherwise every call that costs FLOPs is unknown and says on what it depends.
The result is what the results of the alternatives that meet no error on the call's
arguments have in common (one that meets one raises there); a conflict found by
running an alternative's body on the call's arguments is reported only where every
alternative meets it, and an error an alternative's own layer meets only where every
alternative raises: an undecided choice is no error on one alternative. In a target's
run, an error one alternative meets is a warning unless every alternative meets one
(call_path.settle).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shapelint.analysis import call_path
from shapelint.analysis.branches import alternative, free, total_of
from shapelint.analysis.callable_values import ChoiceV, FunctionRefV
from shapelint.analysis.lambdas import ClosureV
from shapelint.analysis.module_kinds import is_module
from shapelint.analysis.modules import ModuleListV
from shapelint.analysis.pytypes import class_name, is_class
from shapelint.analysis.unknown_cost import op_text
from shapelint.ops.values import Cost, ObjectV, Value
from shapelint.rules import severity_of

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

# More alternatives than this (a choice of choices of choices...) is not followed.
MAX_ALTERNATIVES = 4


@dataclass(frozen=True)
class FunctionChoiceV(Value):
    """One of several functions written in Python (nested defs, module-level
    functions), chosen by a test the analysis cannot decide: torchtune's
    `_sdpa_or_flex_attention()`, which defines one `_attention_call` or another
    by `torch.cuda.is_available()`. No module: it holds no Parameter, and a
    module that stores it registers nothing. Calling it runs each, as a ChoiceV."""

    items: tuple[Value, ...]


def _function(v: Value) -> bool:
    return isinstance(v, (ClosureV, FunctionRefV))


def join_functions(a: Value, b: Value) -> FunctionChoiceV | None:
    """The choice of a and b when both are functions written in Python (or choices
    of them); None otherwise."""
    items: list[Value] = []
    for v in (a, b):
        for item in v.items if isinstance(v, FunctionChoiceV) else (v,):
            if not _function(item):
                return None
            if not any(item is i for i in items):
                items.append(item)
    if len(items) > MAX_ALTERNATIVES:
        return None
    return FunctionChoiceV(tuple(items))


def join(a: Value, b: Value) -> ChoiceV | None:
    """The choice of a and b when both are modules (or choices of modules), or both
    classes (a name one arm of a module-level `if` binds to a class of its own and
    the other to a torch class): calling the choice builds one of the modules."""
    items: list[Value] = []
    for v in (a, b):
        for item in v.items if isinstance(v, ChoiceV) else (v,):
            if not (is_module(item) or is_class(item)):
                return None
            if not any(item is i for i in items):  # two equal layers are two modules
                items.append(item)
    if len({bool(is_module(item)) for item in items}) > 1:
        return None  # a module or a class: no one use fits both
    if len(items) > MAX_ALTERNATIVES:
        return None
    return ChoiceV(tuple(items))


def _name(v: Value) -> str:
    if isinstance(v, ClosureV):
        return f"{getattr(v.node, 'name', 'a lambda')} (line {v.node.lineno})"
    if isinstance(v, FunctionRefV):
        return v.name
    if is_class(v):
        return class_name(v) or "a class"
    if isinstance(v, ObjectV):
        kind = v.kind[len("<class>") :] if v.kind.startswith("<class>") else v.kind
        return kind.rsplit(":", 1)[-1]
    return "nn.Sequential" if isinstance(v, ModuleListV) and v.sequential else "nn.ModuleList"


def call(
    an: Analyzer, choice: ChoiceV | FunctionChoiceV, node: ast.Call, args, kwargs, frame
) -> Value:
    base = frame.records
    results: list[Value] = []
    groups: list[list] = []
    said: list[list] = []
    what = op_text(node)
    group = call_path.undecided()
    for alt in choice.items:
        frame.records = dict(base)
        try:
            why = f"`{what}` is {_name(alt)}" if group is not None else ""
            with an.diverted() as found, call_path.taking(group, why):
                results.append(an.call_value(alt, node, args, kwargs, frame))
        finally:
            added = [r for k, r in frame.records.items() if base.get(k) is not r]
            frame.records = base
        groups.append(added)
        said.append(found)
    # A conflict a run of one alternative's body on these arguments meets (`via`,
    # argument_runs.value_at) may not happen: which alternative runs may go with which
    # arguments come (timm's LeViT: ConvNorm on 4-d inputs, LinearNorm on 3-d ones).
    # One every alternative meets is the call's. An alternative's own layer that
    # raises is an error only where every alternative raises: the same undecided test
    # may have shaped the arguments (diffusers' LTX upsampler, `Conv2d if dims == 2
    # else Conv3d` called on a 5-d input only where `self.dims != 2`).
    # (A target's run noted each where its alternative ran: call_path tells whether
    # every alternative raises.)
    every_raises = all(_raises(found) for found in said)
    with call_path.paused():
        for i, found in enumerate(said):
            for d in found:
                run = " (via " in d.message
                if run and (i or not all(d in other for other in said[1:])):
                    continue
                if not every_raises and severity_of(d.code) == "error":
                    continue
                an.report((d.line, d.column, d.end_line, d.end_column), d.code, d.message)
    returned = _returned(results, said)
    names = ", ".join(_name(v) for v in choice.items)
    flops = [total_of(g, "flops") for g in groups]
    if all(free(r) for g in groups for r in g) or (
        flops[0] is not None and all(f == flops[0] for f in flops)
    ):
        same_bytes = len({total_of(g, "bytes") for g in groups}) == 1
        same_backward = len({total_of(g, "backward") for g in groups}) == 1
        same_saved = len({total_of(g, "saved") for g in groups}) == 1
        note = f"`{what}` is one of {names}, which cost the same: counted once"
        for rec in groups[0]:
            c = rec.cost
            notes = c.notes if free(rec) else [*c.notes, note]
            # alternatives that move different bytes: the bytes are not known
            rec.cost = Cost(
                c.flops,
                c.other_flops,
                c.bytes if same_bytes else None,
                notes,
                c.complete,
                backward=c.backward if same_backward else None,
                saved=c.saved if same_saved else None,
            )
            base[(rec.line, rec.column, rec.op)] = rec
        return an.join_all(returned)
    why = f"`{what}` is one of {names} (not known here), which cost differently"
    placed: set = set()
    for alt, group in zip(choice.items, groups, strict=True):
        for rec in group:
            alternative(rec, why, f"if {_name(alt)}")
            key = (rec.line, rec.column, rec.op)
            # Alternatives called at one spot record under one key (an empty
            # nn.Sequential and a filled one): a free record there must not hide
            # another alternative's, whose cost is what is not known.
            if key in placed and free(rec):
                continue
            placed.add(key)
            base[key] = rec
    return an.join_all(returned)


def _returned(results: list[Value], said: list[list]) -> list[Value]:
    """The results of the alternatives whose run on these arguments meets no
    conflict: one that meets one raises there, so where the call returns, another
    ran (DropPath-or-Identity on a residual a mutant widened: Identity's result
    reaches the add). Every alternative's where each meets one: nothing is known."""
    kept = [r for r, found in zip(results, said, strict=True) if not _raises(found)]
    return kept or results


def _raises(found: list) -> bool:
    return any(severity_of(d.code) == "error" for d in found)
