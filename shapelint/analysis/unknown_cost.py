"""Which calls the analysis cannot cost may still cost FLOPs.

A total is honest only if every call that may run a matrix product is on the
record, known or not: a function is complete when none of its calls has an
unknown cost. torch's flop counter counts matrix products (mm, bmm, addmm,
baddbmm, the einsums and linears that lower to them), convolutions and
attention; a call that can reach one of those and that the analysis cannot
follow is recorded with an unknown cost instead of being left out.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from shapelint.ops import stub_ops
from shapelint.ops.values import UNKNOWN, Cost, TensorV, TupleV, Value

# Names of the torch functions, methods and modules that run counted products.
_PRODUCT = re.compile(
    r"conv|linear|matmul|^mm$|^bmm$|addmm|addbmm|baddbmm|addmv|einsum|tensordot|"
    r"bilinear|multi_dot|chain_matmul|attention|transformer|sequential|module(list|dict)?$|"
    r"^forward$|^__call__$|^cdist$|^inner$|^kron$",
    re.IGNORECASE,
)

# Builtins that never run a tensor product themselves (map/filter call their
# function argument, so they are not here).
_FREE_BUILTINS = frozenset(
    """print len isinstance issubclass getattr hasattr setattr delattr range zip enumerate
    list tuple dict set frozenset str int float bool complex type super min max sum abs any
    all sorted reversed iter next id hash repr round divmod pow callable vars format
    globals locals open slice object property staticmethod classmethod exit quit
    ValueError TypeError RuntimeError AssertionError NotImplementedError KeyError
    IndexError Exception""".split()
)

MAX_OP_TEXT = 48


def cost_not_known(why: str) -> Cost:
    """The cost of a call (or statement) the analysis does not follow: unknown, and why."""
    return Cost(None, None, None, [why], complete=False)


def record_not_known(an, node, frame, op: str, why: str):
    """On the record, a call whose cost is not known, given nothing the record
    names: no total it is part of is complete."""
    return an.record(node, frame, op, None, [], UNKNOWN, cost_not_known(why))


@lru_cache(maxsize=8192)
def may_cost(qual: str) -> bool:
    """A library function, method or module (qualified name) that may run a
    product the flop counter counts; a stub's own FLOP formula says so first."""
    declared = stub_ops.declares_flops(qual)
    if declared is not None:
        return declared
    parts = qual.split(".")
    return any(_PRODUCT.search(p) for p in parts[-2:] if p and p != "Tensor")


def tensor_args(args: list[Value], kwargs: dict[str, Value]) -> bool:
    """Whether a call is given a tensor, or a value that may be one."""
    return any(_maybe_tensor(v) for v in [*args, *kwargs.values()])


def _maybe_tensor(v: Value) -> bool:
    if v is UNKNOWN or isinstance(v, TensorV):
        return True
    return isinstance(v, TupleV) and any(_maybe_tensor(i) for i in v.items)


def free_builtin(name: str) -> bool:
    return name in _FREE_BUILTINS


def op_text(node: ast.Call) -> str:
    """How a record names a call it cannot cost: the callee as written."""
    f, attrs = node.func, []
    while isinstance(f, ast.Attribute):
        attrs.append(f.attr)
        f = f.value
    if isinstance(f, ast.Name):  # `a.b.c`, as ast.unparse spells it, without its cost
        text = ".".join([f.id, *reversed(attrs)])
    else:
        try:
            text = ast.unparse(node.func)
        except (ValueError, RecursionError):  # pragma: no cover - unparse of a parsed tree
            text = "<call>"
    return text if len(text) <= MAX_OP_TEXT else text[: MAX_OP_TEXT - 1] + "…"


# Libraries whose functions take tensors without running products on them.
_FREE_ROOTS = frozenset(
    """math typing collections functools itertools warnings logging os sys re copy inspect
    dataclasses abc enum operator contextlib random time json pathlib beartype jaxtyping
    einops numpy torch""".split()
)


def library(qual: str) -> bool:
    """A name from a library the stubs describe or that never runs tensor
    products; other names (the project's own modules) are code not analysed here."""
    return qual.split(".", 1)[0] in _FREE_ROOTS
