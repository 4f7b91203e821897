"""Ops whose backward torch does not implement.

Autograd records such an op like any other (its result requires grad), and
`out.sum().backward()` raises where the loss reaches it: "derivative for
aten::floor_divide is not implemented" (RuntimeError), "the derivative for
'inplace version of acosh' is not implemented" (NotImplementedError). Which ops,
and under which arguments, is torch's derivatives.yaml (`not_implemented`, or no
entry) as torch 2.x runs it; tests/test_no_derivative.py holds each to torch.
"""

from __future__ import annotations

from shapelint.ops.values import UNKNOWN, NoneV, TensorV, tracked

# Any operand that requires grad: the whole op has no derivative.
ANY = frozenset(
    f"{prefix}{name}"
    for prefix in ("torch.", "torch.Tensor.")
    for name in (
        "floor_divide",
        "heaviside",
        "unique",
        "unique_consecutive",
    )
) | frozenset(
    {
        "torch.Tensor.floor_divide_",
        "torch.Tensor.heaviside_",
        "operator.floordiv",
        "operator.ifloordiv",
        "torch.Tensor.__floordiv__",
        "torch.Tensor.__rfloordiv__",
        "torch.Tensor.__ifloordiv__",
        # the inverse hyperbolic functions in place: their out-of-place forms have one
        *(
            f"torch.Tensor.{name}_"
            for name in ("acosh", "asinh", "atanh", "arccosh", "arcsinh", "arctanh")
        ),
    }
)
# The first operand's derivative alone is not implemented: the op raises where that
# operand requires grad (`torch.igamma(a, x)` with only x requiring grad runs).
FIRST = frozenset(
    {
        "torch.igamma",
        "torch.igammac",
        "torch.Tensor.igamma",
        "torch.Tensor.igammac",
        "torch.Tensor.igamma_",
        "torch.Tensor.igammac_",
        "torch.special.gammainc",
        "torch.special.gammaincc",
        "torch.special.zeta",
    }
)
# scatter given `reduce=` (the deprecated reductions of scatter_ and scatter): no
# derivative, whichever operand requires grad
WITH_REDUCE = frozenset({"torch.scatter", "torch.Tensor.scatter", "torch.Tensor.scatter_"})


def refuses(name: str, args, kwargs) -> bool | None:
    """Whether the backward of op name called with args and kwargs, recorded by
    autograd, raises for want of a derivative: True surely, None where it may
    (an argument that decides it not known), False where torch has one."""
    if name in ANY:
        return True
    if name in FIRST:
        first = args[0] if args else kwargs.get("input", kwargs.get("self"))
        if not isinstance(first, TensorV):
            return None if first is UNKNOWN else False
        return tracked(first)
    if name in WITH_REDUCE:
        reduce = kwargs.get("reduce")
        if reduce is None or isinstance(reduce, NoneV):
            return False
        return None if reduce is UNKNOWN else True
    return False
