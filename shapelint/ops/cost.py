"""FLOPs and bytes per call, by the convention of torch.utils.flop_counter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from shapelint.notation.symbolic import Expr


def einsum_flops(
    inputs: Sequence[Sequence[str]],
    output: Sequence[str],
    sizes: Mapping[str, Expr | None],
) -> tuple[Expr | None, list[str]]:
    """FLOPs torch's flop counter reports for an einsum (being written; see issue 3)."""
    raise NotImplementedError
