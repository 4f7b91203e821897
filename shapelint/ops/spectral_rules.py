"""Shape rules for the short-time Fourier transform (stubs/tensor.stub's torch.stft),
as torch's SpectralOps.cpp shapes it. torch's flop counter registers no FFT, so it
counts none of it, forward or backward.
"""

from __future__ import annotations

from shapelint.notation.symbolic import Expr
from shapelint.ops import dtypes
from shapelint.ops.shape_rules import (
    RANK,
    RuleContext,
    RuleOut,
    const,
    int_value,
    is_none,
    known_rank,
    rule,
    shape_of,
    shape_text,
)
from shapelint.ops.values import BoolV, TensorV, Value, dtype_of


def _flag(v: Value, default: bool | None) -> bool | None:
    if is_none(v):
        return default
    return v.value if isinstance(v, BoolV) else None


def _is_complex(v: Value) -> bool | None:
    """Whether a tensor is complex; one of no known dtype is of the default float
    dtype, as its bytes are counted."""
    if is_none(v):
        return False
    if not isinstance(v, TensorV):
        return None
    cat = dtypes.tensor_category(v.dtype)
    return None if cat is None else cat == 3


@rule
def stft(
    ctx: RuleContext,
    x: Value,
    n_fft: Value,
    hop_length: Value,
    window: Value,
    center: Value,
    onesided: Value,
    return_complex: Value,
) -> RuleOut:
    """torch.stft: input [T] or [B, T] -> [B?, freqs, frames], complex. freqs is
    n_fft // 2 + 1 where onesided (the default for a real input and window), else
    n_fft; frames 1 + (T' - n_fft) // hop, T' = T + 2·(n_fft // 2) where centred
    (the default), hop n_fft // 4 by default; return_complex=False gives the real
    and imaginary parts as a last axis of 2. A real input needs return_complex."""
    shape = shape_of(x)
    rank = known_rank(shape)
    if rank is None or shape is None:
        return RuleOut(TensorV(None))
    if rank not in (1, 2):
        issue = ctx.issue(RANK, f"expected a 1D or 2D input, got {shape_text(shape)}", 0)
        return RuleOut(issues=[issue])
    n = int_value(n_fft)
    hop = (None if n is None else n // Expr.const(4)) if is_none(hop_length) else int_value(hop_length)
    complex_in = [_is_complex(x), _is_complex(window)]
    centred = _flag(center, True)
    as_complex = _flag(return_complex, True in complex_in or None)
    one_sided = _flag(onesided, False if True in complex_in else True)
    if None in (n, hop, centred, as_complex, one_sided) or None in complex_in:
        return RuleOut(TensorV(None))
    assert n is not None and hop is not None
    length = shape[-1]
    if length is None or const(hop) == 0:
        return RuleOut(TensorV(None))
    if centred:
        length = length + Expr.const(2) * (n // Expr.const(2))
    span = length - n
    if const(span) is not None and const(span) < 0:  # type: ignore[operator]
        return RuleOut(TensorV(None))  # torch refuses a frame longer than the input
    frames = Expr.const(1) + span // hop
    freqs = n // Expr.const(2) + Expr.const(1) if one_sided else n
    dtype = dtype_of(x) or dtypes.DEFAULT_FLOAT
    complex_dtype = dtype if complex_in[0] else dtypes.to_complex(dtype)
    head = tuple(shape[:-1])
    if as_complex:
        return RuleOut(TensorV((*head, freqs, frames), complex_dtype))
    return RuleOut(TensorV((*head, freqs, frames, Expr.const(2)), dtypes.to_real(complex_dtype)))
