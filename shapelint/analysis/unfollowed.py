"""Calls the analysis does not follow: what their cost is (unknown where they
took a tensor or a module, nothing where they only hand references on).

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from shapelint.analysis import decorators, dict_keys, namedtuples, pytree
from shapelint.analysis.absence import CONFIG_PREFIX
from shapelint.analysis.callable_values import PartialV
from shapelint.analysis.dict_values import dict_value
from shapelint.analysis.module_kinds import CONTAINERS, DICT_KINDS
from shapelint.analysis.module_lists import ModuleListV
from shapelint.analysis.unknown_cost import cost_not_known
from shapelint.analysis.vmapped import VmappedV
from shapelint.notation.symbolic import Expr
from shapelint.ops import stub_ops
from shapelint.ops.values import (
    BoolV,
    BufferV,
    Cost,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    ParameterV,
    StrV,
    TensorV,
    TupleV,
    Value,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer


PASS_THROUGH = {"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"}


# Calls that take tensors and cost nothing a flop counter sees.
WRAPS_KIND = "functools.wraps"
_FREE_CALLS = {"isinstance", "len", "print", "hasattr", "getattr", "id", "type", "super"}
# Calls that only hand on references to what they are given (a container, an
# iterator): what they hold costs where it is used. Not `reversed` of a tensor
# (a flip, which copies).
_HANDS_ON = {"dict", "zip", "enumerate", "iter", "list", "tuple", "reversed", "zip_longest"}
# Functions of the typing module that return one of their arguments as it is, for
# a type checker's sake: the argument's position.
RETURNS_ARGUMENT = {"typing.cast": 1, "typing_extensions.cast": 1, "typing.assert_type": 0}


def unfollowed_call(an: Analyzer, node: ast.Call, frame, args, value: Value) -> None:
    """A call that took a tensor (or a module) and left no record: its cost is
    unknown, and a target's total says so rather than counting it as 0."""
    if isinstance(node.func, ast.Name) and node.func.id in _FREE_CALLS:
        return
    name = node.func.id if isinstance(node.func, ast.Name) else an.qualname_of(node.func, frame)
    qual = an.qualname_of(node.func, frame)
    if qual in RETURNS_ARGUMENT or (qual in CONTAINERS and isinstance(value, ModuleListV)):
        return  # a container built of the modules given runs none of them
    if qual in PASS_THROUGH and isinstance(value, (ParameterV, BufferV)):
        # `nn.Parameter(t)` in a forward (a lazy init): a new leaf over t's storage,
        # nothing computed or copied on a device
        return
    if pytree.hands_on(qual, value):
        return
    if (name or "").removeprefix("itertools.") in _HANDS_ON and not (
        name == "reversed" and any(isinstance(a, TensorV) for a in args)
    ):
        return
    if isinstance(node.func, ast.Attribute) and node.func.attr in _FREE_METHODS:
        return
    if (
        isinstance(node.func, ast.Attribute)
        and node.func.attr in _VIEWS
        and isinstance(value, TupleV)
    ):
        return  # a mapping's view the analysis read off it: what it holds costs where used
    if isinstance(value, ObjectV) and value.kind == WRAPS_KIND or isinstance(value, PartialV):
        return  # a decorator, a partial: what they wrap costs when it is called
    if isinstance(value, (decorators.CompiledV, VmappedV)):
        return  # torch.compile, torch.vmap: the function they wrap costs when called
    if isinstance(value, namedtuples.NamedTupleV):
        return  # a namedtuple holds what it is given
    if isinstance(value, ObjectV) and value.kind.startswith(CONFIG_PREFIX):
        cd = an.class_of(value.kind[len(CONFIG_PREFIX) :])
        if cd is not None and "__post_init__" not in cd.methods:
            return  # a dataclass's own __init__ only stores its fields
    if not any(isinstance(a, (TensorV, ObjectV, ModuleListV)) for a in args if not _is_dict(a)):
        return
    if isinstance(value, (IntV, BoolV, FloatV, StrV, NoneV)) and not isinstance(value, TensorV):
        return  # a size, a flag: nothing was computed on a device
    src = ast.unparse(node.func)
    if (
        isinstance(node.func, ast.Attribute)
        and args
        and isinstance(args[-1], TensorV)  # the receiver
        and stub_ops.declares_flops(f"torch.Tensor.{node.func.attr}") is False
    ):
        # `x.max(dim=d)` where d is not known: a tensor method whose stub runs no
        # product costs 0 FLOPs whatever the arguments; only its bytes are unknown.
        why = f"{src}(): no product (0 FLOPs); bytes unknown (a shape or size unknown)"
        cost = Cost(Expr.const(0), None, None, [why], complete=True)
        an.record(node, frame, f"call {src}", None, [args[-1]], value, cost)
        return
    an.record(
        node,
        frame,
        f"call {src}",
        None,
        [a for a in args if isinstance(a, TensorV)],
        value,
        cost_not_known(
            f"{src}(): cost not known here (a shape or size unknown, or no stub and no source)"
        ),
    )


_VIEWS = frozenset({"values", "items", "keys"})
_FREE_METHODS = {
    "register_buffer",
    "register_parameter",
    "add_module",
    "size",
    "dim",
    "numel",
    # a tensor's layout and memory queried: a flag, nothing computed on the device
    "is_contiguous",
    "is_pinned",
    "append",
    "extend",
    # nn.Module's walks of its tree: they hand out what it holds, computing nothing
    "modules",
    "named_modules",
    "children",
    "named_children",
    "parameters",
    "named_parameters",
    "buffers",
    "named_buffers",
    "_named_members",
}


def without_item(v: Value, index: Value) -> Value | None:
    """A module list or a tuple without the item at a known index (`del v[i]`), a
    dict without the entry of a known key it holds (as `d.pop(k)` leaves it); None
    where that is not known (a key it lacks: Python raises KeyError)."""
    if _is_dict(v):
        key = dict_keys.key_of(index)
        entries = dict(v.attrs)  # type: ignore[attr-defined]
        if not dict_keys.known(key) or key not in entries:
            return None
        del entries[key]
        return dict_value(entries, v.kind)  # type: ignore[attr-defined]
    i = index.value.value if isinstance(index, IntV) and index.value is not None else None
    if i is None:
        return None
    if isinstance(v, ModuleListV) and v.known and v.count is not None:
        return replace(v, count=v.count - Expr.const(1))
    if isinstance(v, (ModuleListV, TupleV)) and getattr(v, "known", True):
        items = list(v.items)
        if not -len(items) <= i < len(items):
            return None
        del items[i]
        return replace(v, items=tuple(items))
    return None


def _is_dict(v: Value) -> bool:
    return isinstance(v, ObjectV) and v.kind in DICT_KINDS
