"""The dtype vocabulary: torch dtype names and their aliases, sizes, categories and
type promotion, and the short names people type (fp32, bf16, tf32, fp8). Every
other module that names a dtype reads it from here.

Mirrors ``torch.result_type`` (tests hold the two together): tensors with
dimensions outrank zero-dimensional tensors, which outrank Python numbers,
unless the lower-ranked participant is of a higher category (bool < integer <
floating < complex).
"""

from __future__ import annotations

from collections.abc import Iterable

DEFAULT_FLOAT = "float32"
DEFAULT_INT = "int64"
DEFAULT_COMPLEX = "complex64"

# A dtype the code names that the analysis cannot read (`x.to(cfg.dtype)` of a cfg not
# known). None is another thing: the run's default float, what an input given no dtype
# is. This one may be any dtype, so no byte figure built on it is complete, no
# promotion with it is known, and whether autograd tracks a tensor of it is not known.
NOT_KNOWN = "?"

# A float (complex) dtype of a width not known: two paths give two float dtypes
# (`torch.float32 if half else x.dtype`), or a promotion with one. A tensor of it is
# a float (complex) one: autograd tracks it where its source requires grad, and
# `is_floating_point()` holds; its bytes are not known. Never an fp8 float (no join or
# promotion here makes one of it), so it promotes with every other float.
FLOAT_NOT_KNOWN = "?float"
COMPLEX_NOT_KNOWN = "?complex"
_WIDTH_NOT_KNOWN = {FLOAT_NOT_KNOWN: 2, COMPLEX_NOT_KNOWN: 3}

_CATEGORY = {
    "bool": 0,
    "uint8": 1,
    "uint16": 1,
    "uint32": 1,
    "uint64": 1,
    "int8": 1,
    "int16": 1,
    "int32": 1,
    "int64": 1,
    "float8_e4m3fn": 2,
    "float8_e5m2": 2,
    "float8_e4m3fnuz": 2,
    "float8_e5m2fnuz": 2,
    "float16": 2,
    "bfloat16": 2,
    "float32": 2,
    "float64": 2,
    "complex32": 3,
    "complex64": 3,
    "complex128": 3,
}

# Aliases torch accepts (torch.float is torch.float32, torch.half, torch.long...).
ALIASES = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "long": "int64",
    "int": "int32",
    "short": "int16",
    "cfloat": "complex64",
    "cdouble": "complex128",
    "chalf": "complex32",
}

_BITS = {
    "bool": 1,
    "uint8": 8,
    "int8": 8,
    "int16": 16,
    "uint16": 16,
    "int32": 32,
    "uint32": 32,
    "int64": 64,
    "uint64": 64,
    "float16": 16,
    "bfloat16": 16,
    "float32": 32,
    "float64": 64,
    "complex32": 32,
    "complex64": 64,
    "complex128": 128,
    "float8_e4m3fn": 8,
    "float8_e5m2": 8,
    "float8_e4m3fnuz": 8,
    "float8_e5m2fnuz": 8,
}

# Bytes per element as stored (bool takes a byte).
DTYPE_BYTES = {name: max(1, bits // 8) for name, bits in _BITS.items()}

# Floating dtypes torch reduces with mean (einops' mean of anything else fails).
MEAN_DTYPES = ("float16", "float32", "float64", "bfloat16")

# The short names of the command line and the hardware table -> torch's name.
# tf32 is float32 stored, multiplied on tensor cores at a lower precision.
SHORT_NAMES = {
    "fp32": "float32",
    "tf32": "float32",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp64": "float64",
    "fp8": "float8_e4m3fn",
}


# `shapelint cost --dtype` (and [tool.shapelint] dtype): a short name, or torch's
# name of a floating dtype.
DTYPE_ALIASES = {**SHORT_NAMES, "half": "float16", **{d: d for d in MEAN_DTYPES}}


def unnamed(dtype: str | None) -> bool:
    """NOT_KNOWN, or a float or complex dtype of a width not known: no one dtype."""
    return dtype == NOT_KNOWN or dtype in _WIDTH_NOT_KNOWN


def dtype_bytes(dtype: str | None, default: str = "float32") -> int | None:
    """Bytes per element (dtype None: the default, float32); None where unnamed."""
    if unnamed(dtype):
        return None
    return DTYPE_BYTES.get(dtype or default, DTYPE_BYTES[default])


# Tensor.type's legacy type names (`x.type("torch.HalfTensor")`; a CUDA one,
# `torch.cuda.HalfTensor`, of the same dtype).
_LEGACY_TYPES = {
    "FloatTensor": "float32",
    "DoubleTensor": "float64",
    "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16",
    "ByteTensor": "uint8",
    "CharTensor": "int8",
    "ShortTensor": "int16",
    "IntTensor": "int32",
    "LongTensor": "int64",
    "BoolTensor": "bool",
}


def legacy_type(name: str) -> str | None:
    """The dtype of a legacy tensor type name (`torch.cuda.LongTensor` -> int64);
    None for any other string."""
    module, _, base = name.rpartition(".")
    return _LEGACY_TYPES.get(base) if module in ("torch", "torch.cuda") else None


def short_name(dtype: str | None) -> str | None:
    """torch's name -> the hardware table's column (bfloat16 -> bf16); None if none."""
    if dtype is None:
        return None
    if dtype in SHORT_NAMES:
        return dtype
    return next((k for k, v in SHORT_NAMES.items() if v == dtype and k != "tf32"), None)


def canonical(name: str) -> str | None:
    """``torch.half`` / ``half`` / ``float16`` -> "float16"; None if not a torch dtype."""
    base = name.rsplit(".", 1)[-1]
    base = ALIASES.get(base, base)
    return base if base in _CATEGORY else None


def category(dtype: str) -> int:
    return _CATEGORY.get(dtype, _WIDTH_NOT_KNOWN.get(dtype, 2))


def tensor_category(dtype: str | None) -> int | None:
    """The category of a tensor of this dtype: None, the default float, is 2; a dtype
    NOT_KNOWN may be of any."""
    if dtype == NOT_KNOWN:
        return None
    return 2 if dtype is None else category(dtype)


def kind(dtype: str) -> str:
    """bool, int, float or complex (an unknown name counts as float)."""
    return ("bool", "int", "float", "complex")[category(dtype)]


_WIDE_UNSIGNED = {"uint16", "uint32", "uint64"}


def join(a: str | None, b: str | None) -> str | None:
    """The dtype of a tensor of dtype a on one path and b on another: a float (complex)
    one of a width not known where both are floats (complexes), else NOT_KNOWN. None,
    the run's default float, is a float."""
    if a == b:
        return a
    ca, cb = tensor_category(a), tensor_category(b)
    if ca != cb or ca not in (2, 3) or any(d and d.startswith("float8") for d in (a, b)):
        return NOT_KNOWN
    return FLOAT_NOT_KNOWN if ca == 2 else COMPLEX_NOT_KNOWN


def promote_pair(a: str, b: str) -> str | None:
    """torch.promote_types for the common dtypes; None where torch refuses or we do not know."""
    if a == b:
        return a
    if a in _WIDTH_NOT_KNOWN or b in _WIDTH_NOT_KNOWN:
        return _promote_width_not_known(a, b)
    if a not in _CATEGORY or b not in _CATEGORY:
        return None
    ca, cb = category(a), category(b)
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if _WIDE_UNSIGNED & {a, b} and (category(hi) == 3 or lo == "bool"):
            return None  # torch has no promotion of uint16/32/64 with bool or complex
        if category(hi) == 3 and lo == "float64":
            return "complex128"
        if category(hi) == 3 and hi == "complex32" and lo in ("float32", "bfloat16"):
            return "complex64"
        if hi.startswith("float8") or lo.startswith("float8"):
            return None
        return hi
    if ca == 0:
        return a
    if ca == 1:
        unsigned = {x for x in (a, b) if x.startswith("uint")}
        if unsigned == {"uint8"} and len({a, b} - unsigned) == 1:
            signed = ({a, b} - unsigned).pop()
            return "int16" if signed == "int8" else signed
        if unsigned:
            return None  # uint16/32/64 mixed with signed: torch refuses
        return a if _BITS[a] >= _BITS[b] else b
    if ca == 2:
        if {a, b} == {"float16", "bfloat16"}:
            return "float32"
        if a.startswith("float8") or b.startswith("float8"):
            return None
        return a if _BITS[a] >= _BITS[b] else b
    if {a, b} == {"complex32", "complex64"}:
        return "complex64"
    return a if _BITS[a] >= _BITS[b] else b


def _promote_width_not_known(a: str, b: str) -> str | None:
    """promote_pair where one side is a float or complex of a width not known: what
    torch gives for every width it may be, or that dtype's kind of a width not known."""
    wide, other = (a, b) if a in _WIDTH_NOT_KNOWN else (b, a)
    if other != NOT_KNOWN and other not in _CATEGORY and other not in _WIDTH_NOT_KNOWN:
        return None
    if other == NOT_KNOWN or other.startswith("float8"):
        return None
    hi = max(category(wide), category(other))
    if category(other) < 2:
        return None if other in _WIDE_UNSIGNED and hi == 3 else wide
    if other in ("float64", "complex128"):
        # the widest of its kind: a float64 wins over every narrower float and makes
        # a complex one complex128
        return other if category(other) == hi else "complex128"
    return FLOAT_NOT_KNOWN if hi == 2 else COMPLEX_NOT_KNOWN


def promote_all(dtypes: Iterable[str | None]) -> str | None:
    """torch.promote_types over all of them; None where torch refuses or one is None,
    NOT_KNOWN where one is."""
    out: str | None = None
    for d in dtypes:
        if d is None or d == NOT_KNOWN:
            return d
        out = d if out is None else promote_pair(out, d)
        if out is None:
            return None
    return out


def promote_types(a: str | None, b: str | None) -> str | None:
    """torch.promote_types of two dtypes, None among them the run's default float: what
    every default float gives, their join where they give several; NOT_KNOWN where a
    dtype is; None where torch refuses (for some default float)."""
    if NOT_KNOWN in (a, b):
        return NOT_KNOWN
    each = {d: promote_pair(a or d, b or d) for d in _DEFAULT_FLOATS}
    if all(out == d for d, out in each.items()):
        return None  # the default float, whichever it is
    outs = set(each.values())
    if None in outs:
        return None
    out = outs.pop()
    for other in outs:
        out = join(out, other)
    return out


def result_type(
    dim_tensors: list[str | None],
    zero_dim_tensors: list[str | None],
    scalars: list[str],
) -> str | None:
    """Result dtype of an elementwise op; scalars are "bool", "int", "float" or "complex".

    torch's ResultTypeState: each tier is promoted on its own, then tiers combine
    with ``combine_categories``. A tensor of dtype None is of the run's default
    float: the answer is the one every such default gives (a float64 operand wins
    over any), else None, as where torch refuses. NOT_KNOWN where a tensor's is.
    """
    if NOT_KNOWN in dim_tensors or NOT_KNOWN in zero_dim_tensors:
        return NOT_KNOWN
    if None not in dim_tensors and None not in zero_dim_tensors:
        return _result_type(dim_tensors, zero_dim_tensors, scalars)  # type: ignore[arg-type]
    outs = {
        _result_type([d or s for d in dim_tensors], [d or s for d in zero_dim_tensors], scalars)
        for s in _DEFAULT_FLOATS
    }
    return outs.pop() if len(outs) == 1 else None


# What a tensor given no dtype may be: the run's default float (`cost --dtype`'s
# choices but fp8, which promotes with nothing).
_DEFAULT_FLOATS = ("float32", "bfloat16", "float16", "float64")


def _result_type(dim_tensors: list[str], zero_dim_tensors: list[str], scalars: list[str]):
    wrapped = [
        {"bool": "bool", "int": DEFAULT_INT, "float": DEFAULT_FLOAT}.get(s, DEFAULT_COMPLEX)
        for s in scalars
    ]
    tiers = []
    for tier in (dim_tensors, zero_dim_tensors, wrapped):
        best = promote_all(tier) if tier else _UNDEFINED  # type: ignore[arg-type]
        if best is None:
            return None
        tiers.append(best)
    dim, zero, wrap = tiers
    out = _combine(dim, _combine(zero, wrap))
    return None if out in (None, _UNDEFINED) else out


_UNDEFINED = "undefined"
_TO_COMPLEX = {
    FLOAT_NOT_KNOWN: COMPLEX_NOT_KNOWN,
    "float16": "complex32",
    "bfloat16": "complex64",
    "float32": "complex64",
    "float64": "complex128",
}


_TO_REAL = {
    COMPLEX_NOT_KNOWN: FLOAT_NOT_KNOWN,
    "complex32": "float16",
    "complex64": "float32",
    "complex128": "float64",
}


def to_complex(dtype: str | None) -> str | None:
    """The complex dtype of a float one's precision (an FFT's result); None else."""
    if dtype == NOT_KNOWN:
        return dtype
    return _TO_COMPLEX.get(dtype) if dtype in _TO_COMPLEX and dtype != "bfloat16" else None


def to_real(dtype: str | None) -> str | None:
    """The float dtype of a complex one's parts (abs, real); other dtypes as they are."""
    return _TO_REAL.get(dtype, dtype) if dtype is not None else None


def _combine(higher: str | None, lower: str | None) -> str | None:
    """c10's combine_categories: the higher tier wins unless the lower one is of a
    higher category; a complex lower tier keeps a float higher tier's precision."""
    if higher is None or lower is None:
        return None
    if higher != _UNDEFINED and category(higher) == 3:
        return higher
    if lower != _UNDEFINED and category(lower) == 3:
        if higher != _UNDEFINED and category(higher) == 2:
            return _TO_COMPLEX.get(higher)
        return lower
    if higher != _UNDEFINED and category(higher) == 2:
        return higher
    if higher == "bool" or (lower != _UNDEFINED and category(lower) == 2):
        if higher == _UNDEFINED:
            return lower
        if lower == _UNDEFINED:
            return higher
        return promote_pair(higher, lower)
    if higher != _UNDEFINED:
        return higher
    return lower
