"""The dtypes torch requires equal among an op's floating operands (a stub's
`same_dtype=` and `norm_dtype=`): `F.linear`, `matmul`, `conv` refuse a float32
input with a float16 weight (`mat1 and mat2 must have the same dtype`), where an
elementwise op promotes; a norm takes a float16 or bfloat16 input with float32
weights and statistics, and refuses any other mix. Probed against torch 2.13 on CPU
(tests/test_dtype_match.py holds the two together).

Checked in a target run only, where a tensor given no dtype is of the run's default
float (`--dtype`, float32 without one) and the dtypes the module's Parameters hold
are followed (a module's `.half()`, analysis/module_casts.py); never once an
autocast region may have run (its ops cast their operands: saved.cast_seen), nor
for an operand whose dtype is not known, an integer or a complex one."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from shapelint.ops import dtypes
from shapelint.ops import saved as storages
from shapelint.ops.values import TensorV, Value

CODE = "SHP322"

# The run's default float while a target runs; None: no dtype is checked.
_DEFAULT: ContextVar[str | None] = ContextVar("dtype_match_default", default=None)

# The reduced-precision inputs a norm takes beside float32 weights.
_NORM_LOW = ("float16", "bfloat16")


@contextmanager
def run(default: str | None) -> Iterator[None]:
    """A target run, whose tensors given no dtype are of default (None: float32)."""
    named = dtypes.canonical(default) if default else None
    token = _DEFAULT.set(named or dtypes.DEFAULT_FLOAT)
    try:
        yield
    finally:
        _DEFAULT.reset(token)


def _floating(v: Value, default: str) -> str | None:
    """v's dtype where v is a tensor of one floating dtype the analysis names."""
    if not isinstance(v, TensorV):
        return None
    d = v.dtype or default
    if dtypes.unnamed(d) or dtypes.category(d) != 2:
        return None
    return d


def mismatch(operands: Sequence[tuple[str, Value]], norm: bool = False) -> str | None:
    """Why torch refuses these operands' dtypes (None: it does not, or which it
    does is not known). operands: (name, value), the input first; norm: the rest
    (weights, statistics) share one dtype, which a float16 or bfloat16 input may
    differ from where it is float32."""
    default = _DEFAULT.get()
    if default is None or storages.cast_seen():
        return None
    named = [(n, d) for n, v in operands if (d := _floating(v, default)) is not None]
    if len({d for _, d in named}) < 2:
        return None
    listed = ", ".join(f"{n} {d}" for n, d in named)
    if not norm:
        return f"operands of different dtypes ({listed}): torch requires one dtype"
    first, rest = operands[0][0], {d for n, d in named if n != operands[0][0]}
    given = dict(named)
    if len(rest) == 1 and first in given:
        (weights,) = rest
        if weights == "float32" and given[first] in _NORM_LOW:
            return None  # torch's mixed-precision norm
    return (
        f"operands of different dtypes ({listed}): torch requires the weights' dtype, "
        f"or a float16 or bfloat16 {first} beside float32 weights"
    )
