"""jaxtyping dimension specs ("*batch seq #d", "n+1", "rows=3", "..."), parsed as jaxtyping does.

The grammar and the annotation-time errors mirror ``_make_array_cached`` in
jaxtyping 0.3.11 token for token: a spec that jaxtyping rejects when the
annotation is built is a :class:`SpecError` here, and every spec it accepts is a
:class:`DimSpec`. The run-time check on concrete sizes, which tests hold against
jaxtyping's, is tests/jaxtyping_check.py.

Pure: no jaxtyping import. Turning a spec into an abstract shape lives in
``shapelint.ops.annotations`` (the ops layer owns ``Var`` and ``TensorV``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from shapelint import pyparse
from shapelint.notation.symbolic import Expr, expr_from_ast

# Element kinds.
NAMED = "named"  # b, #b, ?b, rows=b
FIXED = "fixed"  # 3, #3, rows=3
SYMBOLIC = "symbolic"  # n+1, 2*d, d//2 (anything not a name or an int)
ANONYMOUS = "anonymous"  # _, _name
VARIADIC = "variadic"  # *batch, #*batch
ANONYMOUS_VARIADIC = "anonymous_variadic"  # ..., *_


@dataclass(frozen=True)
class DimElem:
    """One whitespace-separated token of a spec, with its modifiers decoded."""

    kind: str
    token: str  # as written
    start: int  # offset of the token in the spec string as given (before strip)
    name: str = ""  # NAMED / VARIADIC: the bound name (jaxtyping allows "")
    size: int | None = None  # FIXED
    expr: str = ""  # SYMBOLIC: the source text jaxtyping evaluates
    broadcastable: bool = False
    treepath: bool = False

    @property
    def end(self) -> int:
        return self.start + len(self.token)

    @property
    def variadic(self) -> bool:
        return self.kind in (VARIADIC, ANONYMOUS_VARIADIC)


@dataclass(frozen=True)
class DimSpec:
    spec: str
    dims: tuple[DimElem, ...]
    index_variadic: int | None

    @property
    def min_rank(self) -> int:
        return len(self.dims) - (self.index_variadic is not None)

    @property
    def rank(self) -> int | None:
        """The exact rank, or None when a variadic element makes it open."""
        return None if self.index_variadic is not None else len(self.dims)

    def names(self) -> set[str]:
        """Names this spec binds (single and variadic)."""
        return {d.name for d in self.dims if d.kind in (NAMED, VARIADIC) and d.name}


@dataclass(frozen=True)
class SpecError:
    """A spec jaxtyping rejects when the annotation is built (a ValueError there)."""

    spec: str
    message: str
    start: int = 0  # offsets of the offending token in the spec; whole spec if unknown
    end: int = 0


def _tokens(spec: str) -> Iterator[tuple[int, str]]:
    """(offset, token) pairs, splitting exactly where ``str.split()`` does."""
    i, n = 0, len(spec)
    while i < n:
        while i < n and spec[i].isspace():
            i += 1
        if i >= n:
            break
        j = i
        while j < n and not spec[j].isspace():
            j += 1
        yield i, spec[i:j]
        i = j


@lru_cache(maxsize=4096)
def parse_dimspec(spec: str) -> DimSpec | SpecError:
    """Parse a jaxtyping shape string; a SpecError carries jaxtyping's complaint."""
    if not isinstance(spec, str):
        return SpecError(str(spec), "Shape specification must be a string.")
    dims: list[DimElem] = []
    index_variadic: int | None = None
    for index, (start, token) in enumerate(_tokens(spec)):
        parsed = _parse_token(token, start)
        if isinstance(parsed, str):
            return _err(spec, start, token, parsed)
        elem, late = parsed
        if elem.variadic:
            if index_variadic is not None:
                return _err(
                    spec,
                    start,
                    token,
                    "Cannot use variadic specifiers (`*name` or `...`) more than once.",
                )
            index_variadic = index
        if late:
            return _err(spec, start, token, late)
        dims.append(elem)
    return DimSpec(spec, tuple(dims), index_variadic)


def _err(spec: str, start: int, token: str, message: str) -> SpecError:
    return SpecError(spec, message, start, start + len(token))


def _parse_token(token: str, start: int) -> tuple[DimElem, str] | str:
    """(element, late error) or an early error message.

    jaxtyping raises some errors while reading the token and others only after
    its count of variadic elements; the late one is returned beside the element
    so parse_dimspec can keep that order (it decides which message wins).
    """
    elem = token
    if "," in elem and "(" not in elem:
        return "Axes should be separated with spaces, not commas"
    if elem.endswith("#"):
        return "Broadcastable axes are denoted with a # at the start, rather than at the end"
    if "..." in elem:
        if elem != "...":
            return f"Anonymous multiple axes '...' must be used on its own; got {elem}"
        return DimElem(ANONYMOUS_VARIADIC, token, start), ""

    broadcastable = variadic = anonymous = treepath = False
    # Same loop as jaxtyping: prefixes in any order, each at most once, and a
    # "name=" documentation prefix whenever no modifier character comes first.
    while elem:
        first = elem[0]
        if first == "#":
            if broadcastable:
                return "Do not use # twice to denote broadcastability, e.g. `##foo`"
            broadcastable = True
            elem = elem[1:]
        elif first == "*":
            if variadic:
                return "Do not use * twice to denote accepting multiple axes, e.g. `**foo`"
            variadic = True
            elem = elem[1:]
        elif first == "_":
            if anonymous:
                return "Do not use _ twice to denote anonymity, e.g. `__foo`"
            anonymous = True
            elem = elem[1:]
        elif first == "?":
            if treepath:
                return "Do not use ? twice to denote dependence on location in a PyTree"
            treepath = True
            elem = elem[1:]
        elif elem.count("=") == 1:
            elem = elem.split("=")[1]
        else:
            break

    flags = dict(broadcastable=broadcastable, treepath=treepath)
    if not elem or elem.isidentifier():
        if anonymous:
            kind = ANONYMOUS_VARIADIC if variadic else ANONYMOUS
            late = (
                "Cannot have an axis be both anonymous and broadcastable, e.g. `#_`."
                if broadcastable
                else ""
            )
            return DimElem(kind, token, start, **flags), late
        return DimElem(VARIADIC if variadic else NAMED, token, start, name=elem, **flags), ""
    try:
        size = int(elem)
    except ValueError:
        late = ""
        if anonymous:
            late = "Cannot have a symbolic axis be anonymous, e.g. `_foo+bar`."
        elif variadic:
            late = "Cannot have symbolic multiple-axes, e.g. `*foo+bar`."
        elif treepath:
            late = "Cannot have a symbolic axis with tree-path dependence, e.g. `?foo+bar`."
        # A symbolic token never counts as variadic, even if written `*a+b`.
        return DimElem(SYMBOLIC, token, start, expr=elem, **flags), late
    late = ""
    if variadic:
        late = "Cannot have a fixed axis bind to multiple axes, e.g. `*4` is not allowed."
    elif anonymous:
        late = "Cannot have a fixed axis be anonymous, e.g. `_4` is not allowed."
    elif treepath:
        late = "Cannot have a fixed axis have tree-path dependence, e.g. `?4` is not allowed."
    return DimElem(FIXED, token, start, size=size, **flags), late


# -- symbolic sizes -------------------------------------------------------------------

_MAX_POW = 64


@lru_cache(maxsize=4096)
def parse_size_expr(text: str) -> Expr | None:
    """``dim+1``, ``2*d``, ``d//2``, ``a*b``, ``(h*d)//8`` as an Expr; None when it is
    anything else (a call, a comparison, an f-string field): unknown size.

    ``d/2`` reads as ``d//2``: jaxtyping compares ``d/2`` with an integer size, so
    it only ever matches when the division is exact, where the two agree.
    """
    try:
        tree = pyparse.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return None
    try:
        return expr_from_ast(tree.body, true_div=True, max_pow=_MAX_POW)
    except ValueError:
        return None


# -- dtype classes ------------------------------------------------------------------------

_FLOAT8 = (
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
)
_FLOATS = ("float4_e2m1fn", *_FLOAT8, "bfloat16", "float16", "float32", "float64")
_UINTS = ("uint2", "uint4", "uint8", "uint16", "uint32", "uint64")
_INTS = ("int2", "int4", "int8", "int16", "int32", "int64")
_COMPLEX = ("complex64", "complex128")

# Every dtype class jaxtyping 0.3.11 defines, with the dtype strings it admits
# (None: any dtype). A torch tensor's dtype string is repr(dtype) after the dot.
DTYPE_CLASSES: dict[str, tuple[str, ...] | None] = {
    "Shaped": None,
    "Bool": ("bool", "bool_"),
    "UInt": _UINTS,
    "Int": _INTS,
    "Integer": _UINTS + _INTS,
    "Float": _FLOATS,
    "Complex": _COMPLEX,
    "Inexact": _FLOATS + _COMPLEX,
    "Real": _FLOATS + _UINTS + _INTS,
    "Num": _UINTS + _INTS + _FLOATS + _COMPLEX,
    "Key": ("prng_key",),
    "UInt2": ("uint2",),
    "UInt4": ("uint4",),
    "UInt8": ("uint8",),
    "UInt16": ("uint16",),
    "UInt32": ("uint32",),
    "UInt64": ("uint64",),
    "Int2": ("int2",),
    "Int4": ("int4",),
    "Int8": ("int8",),
    "Int16": ("int16",),
    "Int32": ("int32",),
    "Int64": ("int64",),
    "Float4e2m1fn": ("float4_e2m1fn",),
    "Float8e4m3b11fnuz": ("float8_e4m3b11fnuz",),
    "Float8e4m3fn": ("float8_e4m3fn",),
    "Float8e4m3fnuz": ("float8_e4m3fnuz",),
    "Float8e5m2": ("float8_e5m2",),
    "Float8e5m2fnuz": ("float8_e5m2fnuz",),
    "BFloat16": ("bfloat16",),
    "Float16": ("float16",),
    "Float32": ("float32",),
    "Float64": ("float64",),
    "Complex64": ("complex64",),
    "Complex128": ("complex128",),
}

# dtype strings torch tensors can carry (the rest exist only in numpy/JAX).
_TORCH_DTYPES = frozenset(
    (
        "bool",
        *_UINTS[2:],
        *_INTS[2:],
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e5m2",
        "float8_e5m2fnuz",
        "bfloat16",
        "float16",
        "float32",
        "float64",
        *_COMPLEX,
    )
)


def is_dtype_class(name: str) -> bool:
    return name in DTYPE_CLASSES


def dtype_for_class(name: str) -> str | None:
    """The one torch dtype a class admits (Float32 -> "float32", Bool -> "bool"),
    or None when it admits several (Float, Int, Shaped) or none of torch's."""
    admitted = DTYPE_CLASSES.get(name)
    if admitted is None:
        return None
    torch_ones = [d for d in admitted if d in _TORCH_DTYPES]
    return torch_ones[0] if len(torch_ones) == 1 else None


def class_admits(name: str, dtype: str) -> bool | None:
    """Whether a tensor of this dtype passes the class's dtype check (None: unknown class)."""
    if name not in DTYPE_CLASSES:
        return None
    admitted = DTYPE_CLASSES[name]
    return admitted is None or dtype in admitted
