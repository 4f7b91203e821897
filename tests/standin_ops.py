"""Einsum costs for tests of the cost faces, whichever einsum op this checkout has.

The einsum op that calls shapelint.ops.cost is built on another branch; until it is
merged the provisional one reports no cost. The faces' tests need costs, not that
op, so they use the real one when it costs an einsum and this stand-in otherwise.
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
    """A letter einsum (no ellipsis) costed by shapelint.ops.cost, the module the
    real op uses: only the pattern parsing is stood in for."""
    from shapelint.ops.cost import call_bytes, einsum_flops
    from shapelint.ops.values import Cost, OpResult, TensorV

    if op != "torch.einsum" or "->" not in pattern or "." in pattern:
        return OpResult()
    ins, out = pattern.replace(" ", "").split("->")
    specs = ins.split(",")
    if len(specs) != len(tensors):
        return OpResult()
    sizes: dict[str, Expr] = {}
    for spec, t in zip(specs, tensors, strict=True):
        if not isinstance(t, TensorV) or t.shape is None or len(t.shape) != len(spec):
            return OpResult()
        if any(not isinstance(d, Expr) for d in t.shape):
            return OpResult()
        sizes.update(zip(spec, t.shape, strict=True))
    flops, notes = einsum_flops([list(s) for s in specs], list(out), sizes)
    result = TensorV(tuple(sizes[c] for c in out), "float32")
    cost = Cost(
        flops=flops, other_flops=Expr.const(0), bytes=call_bytes(tensors, result), notes=notes
    )
    return OpResult(result, cost)


def use_einsum_costs(monkeypatch) -> None:
    """Real einsum costs when this checkout has them, else the stand-in."""
    if not any(c["flops"] not in (None, "0") for c in analyze(_PROBE).calls):
        from shapelint.ops import einops_ops

        monkeypatch.setattr(einops_ops, "einops_call", _standin_einsum)
