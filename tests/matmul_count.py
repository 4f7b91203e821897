"""The FLOPs torch.utils.flop_counter reports for ``torch.matmul``, as a formula: the
oracle tests/test_cost_helpers.py holds against the counter (test-only: the package
counts matmul through its stubs)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from shapelint.notation.symbolic import Expr, product
from shapelint.ops.cost import bmm_flops
from shapelint.ops.values import Dim, Var


def matmul_flops(a_shape: Sequence[Dim], b_shape: Sequence[Dim]) -> Expr | None:
    """FLOPs the flop counter reports for ``torch.matmul(a, b)`` (also ``a @ b``).

    torch lowers matmul to mm or bmm, which the counter counts, except where it
    runs ``mv`` or ``dot``, which it does not: when ``b`` is a vector, and when a
    vector ``a`` meets a batched ``b`` whose batch dimensions fold into a matrix
    without a copy (for a contiguous ``b``: the contracted size is 1). Assumes
    contiguous operands and a vector ``a`` that does not require grad (torch
    then folds to mv as well). Batch dimensions broadcast. None when a size the
    count depends on is unknown.
    """
    if len(a_shape) == 0 or len(b_shape) == 0:
        return None  # torch rejects 0-d operands
    if len(b_shape) == 1:
        return Expr.const(0)
    if len(a_shape) == 1:
        m: Dim = Expr.const(1)
        k = a_shape[0]
        if len(b_shape) >= 3 and k == 1:
            return Expr.const(0)
    else:
        m, k = a_shape[-2], a_shape[-1]
    n = b_shape[-1]
    batch = _broadcast_numel(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
    if batch is None or any(d is None or isinstance(d, Var) for d in (m, k, n)):
        return None
    return bmm_flops(batch, m, k, n)  # type: ignore[arg-type]


def _broadcast_numel(a: tuple[Dim, ...], b: tuple[Dim, ...]) -> Expr | None:
    """Element count of the broadcast of two batch shapes, or None if unknowable."""
    if any(isinstance(d, Var) for d in a + b):
        # A variadic group broadcasts against nothing or against itself only.
        if not a or not b or a == b:
            return _numel(a or b)
        return None
    out: list[Dim] = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else Expr.const(1)
        y = b[-i] if i <= len(b) else Expr.const(1)
        out.append(_broadcast_dim(x, y))
    return _numel(tuple(out))


def _broadcast_dim(x: Dim, y: Dim) -> Dim:
    if x is None or y is None:
        return None
    assert not isinstance(x, Var) and not isinstance(y, Var)
    if x == 1:
        return y
    if y == 1 or x == y:
        return x
    # In a valid program a symbolic size broadcast against a number N is 1 or N.
    if x.value is not None:
        return x
    if y.value is not None:
        return y
    return None  # two different names: either could be 1


def _numel(shape: Iterable[Dim]) -> Expr | None:
    dims = list(shape)
    if any(d is None for d in dims):
        return None
    return product(Expr.name(d.name) if isinstance(d, Var) else d for d in dims)  # type: ignore[misc]
