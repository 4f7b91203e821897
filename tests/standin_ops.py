"""Einsum costs for tests of the cost faces, whichever einsum op this checkout has.

The real einops/einsum op is built on another branch; until it is merged the
provisional one reports no cost. The faces' tests need costs, not that op, so they
use the real one when it costs a two-operand einsum and this stand-in otherwise.
"""

from __future__ import annotations

from shapelint.notation.symbolic import Expr
from tests.helpers import analyze

_PROBE = (
    "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n"
    'def f(x: Float[Tensor, "b d"], w: Float[Tensor, "d h"]):\n'
    '    return torch.einsum("bd,dh->bh", x, w)\n'
)


def _standin_einsum(op, pattern, tensors, axes_lengths, reduction=None, **extra):
    """A two-operand letter einsum costed as torch's flop counter counts it (2 per
    multiply-add over every letter), used only while the real einsum op is not in
    this checkout (it is being built on another branch)."""
    from shapelint.notation.symbolic import product
    from shapelint.ops.values import Cost, OpResult, TensorV

    if op != "torch.einsum" or "->" not in pattern:
        return OpResult()
    ins, out = pattern.replace(" ", "").split("->")
    sizes: dict[str, Expr] = {}
    for spec, t in zip(ins.split(","), tensors, strict=False):
        if not isinstance(t, TensorV) or t.shape is None or len(t.shape) != len(spec):
            return OpResult()
        if any(not isinstance(d, Expr) for d in t.shape):
            return OpResult()
        sizes.update(zip(spec, t.shape, strict=True))
    shape = tuple(sizes[c] for c in out)
    moved = sum((product(t.shape) for t in tensors), product(shape))
    return OpResult(
        TensorV(shape, "float32"),
        Cost(flops=2 * product(sizes.values()), other_flops=Expr.const(0), bytes=4 * moved),
    )


def use_einsum_costs(monkeypatch) -> None:
    """Real einsum costs when this checkout has them, else the stand-in."""
    if not any(c["flops"] not in (None, "0") for c in analyze(_PROBE).calls):
        from shapelint.ops import einops_ops

        monkeypatch.setattr(einops_ops, "einops_call", _standin_einsum)
