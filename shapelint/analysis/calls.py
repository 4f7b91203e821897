"""Routes a resolved call to the op that owns it: einops functions and layers,
letter-notation einsum, and everything the stubs describe."""

from __future__ import annotations

import ast

from shapelint.analysis import stdlib_re, versions
from shapelint.ops import dtypes, einops_ops, einx_ops, stub_ops
from shapelint.ops.values import (
    UNKNOWN,
    DtypeV,
    FloatV,
    NoneV,
    ObjectV,
    OpResult,
    StrV,
    TupleV,
    Value,
)

EINOPS_FUNCTIONS = {
    "einops.rearrange": "rearrange",
    "einops.reduce": "reduce",
    "einops.repeat": "repeat",
    "einops.einsum": "einsum",
    "einops.pack": "pack",
    "einops.unpack": "unpack",
}
LETTER_EINSUM = {"torch.einsum", "numpy.einsum", "torch.Tensor.einsum"}
EINOPS_LAYERS = {"einops.layers.Rearrange", "einops.layers.Reduce", "einops.layers.EinMix"}


# Python floats these modules define (torch.pi too is a float, not a tensor).
_FLOAT_CONSTANTS = {
    "math": frozenset(("pi", "e", "tau", "inf", "nan")),
    "torch": frozenset(("pi", "e", "inf", "nan")),
    "numpy": frozenset(("pi", "e", "inf", "nan")),
}


def constant(qual: str) -> Value:
    """The value of a module attribute such as torch.bfloat16."""
    root, _, attr = qual.rpartition(".")
    name = dtypes.canonical(attr) if root in ("torch", "numpy") else None
    # numpy's aliases are not torch's (numpy.float was Python's float, a float64):
    # from numpy only the dtype names themselves.
    if name is not None and (root == "torch" or name == attr):
        return DtypeV(name, numpy=root == "numpy")
    if attr in _FLOAT_CONSTANTS.get(root, ()):
        return FloatV(None)
    if qual == "numpy.newaxis":
        return NoneV()  # None itself: `t[:, np.newaxis]` adds an axis as `t[:, None]`
    if qual == "torch.__version__":
        return versions.torch_version()
    found = stdlib_re.flag(qual)
    return found if found is not None else UNKNOWN


def _pattern_arg(
    node: ast.Call, args: list[Value], kwargs: dict[str, Value], index: int, name: str
):
    """(node, value) of a pattern given positionally at index or as keyword name."""
    if index < len(node.args) and not any(
        isinstance(a, ast.Starred) for a in node.args[: index + 1]
    ):
        return node.args[index], args[index]
    for kw in node.keywords:
        if kw.arg == name:
            return kw.value, kwargs.get(name, UNKNOWN)
    return None, UNKNOWN


def call(
    qual: str,
    node: ast.Call,
    args: list[Value],
    kwargs: dict[str, Value],
    open_kwargs: bool,
    costs: bool = True,
):
    """(pattern node, OpResult or None, pattern text) for a resolved call."""
    op = EINOPS_FUNCTIONS.get(qual)
    if op is not None:
        return _einops_function(op, node, args, kwargs, open_kwargs, costs)
    if qual in LETTER_EINSUM:
        if not node.args or isinstance(node.args[0], ast.Starred):
            return None, None, None
        pat = args[0]
        if not (isinstance(pat, StrV) and pat.value is not None):
            return None, None, None
        operands = args[1:]
        if len(operands) == 1 and isinstance(operands[0], TupleV):
            operands = list(operands[0].items)  # torch.einsum("ij,jk", [a, b])
        flavor = "torch.einsum" if qual.startswith("torch.") else "numpy.einsum"
        res = einops_ops.einops_call(flavor, pat.value, operands, None, costs=costs)
        return node.args[0], res, pat.value
    if qual in EINOPS_LAYERS:
        return _einops_layer(qual, node, args, kwargs, open_kwargs)
    if qual in einx_ops.FUNCTIONS:
        if open_kwargs or not node.args or isinstance(node.args[0], ast.Starred):
            return None, None, None
        res = einx_ops.einx_call(qual, args, kwargs)
        return None, res, None
    if open_kwargs and not stub_ops.free_of_arguments(qual):
        # `torch.mean(x, **kw)`: an op bound without what kw holds is another op
        return None, None, None
    res = stub(qual, args, kwargs, costs)
    return None, res, None


def _einops_function(op, node, args, kwargs, open_kwargs, costs=True):
    if op == "einsum":
        if not node.args or any(isinstance(a, ast.Starred) for a in node.args):
            return None, None, None
        if isinstance(args[-1], StrV):
            pnode, pattern, tensors = node.args[-1], args[-1].value, args[:-1]
        else:  # the pattern is not last: einops rejects a string anywhere else
            pnode, pattern, tensors = None, None, args
        return pnode, einops_ops.einops_call(op, pattern, tensors, None, costs=costs), pattern
    index = {"pack": 1, "unpack": 2}.get(op, 1)
    pnode, pat = _pattern_arg(node, args, kwargs, index, "pattern")
    if not (isinstance(pat, StrV) and pat.value is not None):
        return None, None, None
    reserved = {"tensor", "pattern", "reduction", "tensors", "packed_shapes"}
    if op == "unpack":
        tensor = args[0] if args else kwargs.get("tensor", UNKNOWN)
        shapes = args[1] if len(args) > 1 else kwargs.get("packed_shapes", UNKNOWN)
        return pnode, einops_ops.einops_call(op, pat.value, [tensor, shapes], None), pat.value
    if op == "pack":
        tensors = args[0] if args else kwargs.get("tensors", UNKNOWN)
        return pnode, einops_ops.einops_call(op, pat.value, [tensors], None), pat.value
    tensor = args[0] if args else kwargs.get("tensor", UNKNOWN)
    reduction = None
    if op == "reduce":
        reduction = args[2] if len(args) > 2 else kwargs.get("reduction", UNKNOWN)
    lengths = None if open_kwargs else {k: v for k, v in kwargs.items() if k not in reserved}
    res = einops_ops.einops_call(op, pat.value, [tensor], lengths, reduction, costs=costs)
    return pnode, res, pat.value


def _einops_layer(qual, node, args, kwargs, open_kwargs):
    kind = qual.rsplit(".", 1)[1]
    pnode, pat = _pattern_arg(node, args, kwargs, 0, "pattern")
    if not (isinstance(pat, StrV) and pat.value is not None):
        return None, None, None
    lengths = None if open_kwargs else {k: v for k, v in kwargs.items() if k != "pattern"}
    reduction = None
    extra: dict[str, Value] = {}
    if kind == "Reduce" and len(args) > 1:
        reduction = args[1]
    elif kind == "EinMix":
        if len(args) > 1:
            extra["weight_shape"] = args[1]
        if len(args) > 2:
            extra["bias_shape"] = args[2]
    res = einops_ops.einops_call(f"layer:{kind}", pat.value, [], lengths, reduction, **extra)
    return pnode, res, pat.value


def stub(
    name: str, args: list[Value], kwargs: dict[str, Value], costs: bool = True
) -> OpResult | None:
    if name.startswith("einops.layers.") and name.endswith(".__call__"):
        if len(args) < 2:
            return None
        return einops_ops.apply_layer(args[0], args[1])
    return stub_ops.stub_call(name, args, kwargs, costs)


def is_costed(name: str, res: OpResult) -> bool:
    if name in EINOPS_FUNCTIONS or name in LETTER_EINSUM or name.startswith("einops.layers."):
        return not isinstance(res.value, ObjectV)
    c = res.cost
    return c.flops is not None or c.other_flops is not None
