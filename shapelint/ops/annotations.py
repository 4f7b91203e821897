"""jaxtyping annotations as abstract values: ``Float[Tensor, "b n d"]`` -> TensorV.

The analysis hands over the pieces it read from the source (the dtype class
name after import resolution, the array type as written, the spec string);
nothing here knows about libcst.
"""

from __future__ import annotations

from shapelint.notation.dimspec import (
    ANONYMOUS,
    ANONYMOUS_VARIADIC,
    DTYPE_CLASSES,
    FIXED,
    NAMED,
    SYMBOLIC,
    VARIADIC,
    DimSpec,
    SpecError,
    dtype_for_class,
    parse_dimspec,
    parse_size_expr,
)
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import UNKNOWN, BoolV, Dim, FloatV, IntV, TensorV, Value, Var

# jaxtyping returns the Python type itself for these, if the spec has no fixed axes.
_SCALAR_TYPES = {"bool": "bool", "int": "int", "float": "float", "complex": "complex"}


def shape_from_spec(spec: DimSpec, prefix: str = "_v") -> tuple[Dim, ...]:
    """The abstract shape a spec promises.

    A name is its Expr; an integer a constant; ``dim+1`` / ``2*d`` / ``d//2`` an
    Expr over the other names; anything else, ``_`` and ``?name`` an unknown
    size. ``*name`` is ``Var(name)``; ``...``, ``*_`` and ``#*name`` get a fresh
    Var named ``prefix`` + position, so the caller keeps them apart per site.
    A broadcastable ``#name`` may be 1 where ``name`` is not, so it is an unknown
    size: it must never produce a size conflict.
    """
    out: list[Dim] = []
    for i, d in enumerate(spec.dims):
        if d.kind == NAMED:
            plain = d.name and not d.broadcastable and not d.treepath
            out.append(Expr.name(d.name) if plain else None)
        elif d.kind == FIXED:
            size = d.size if d.size is not None and d.size >= 0 else None
            if d.broadcastable and size != 1:
                size = None
            out.append(None if size is None else Expr.const(size))
        elif d.kind == SYMBOLIC:
            out.append(None if d.broadcastable else parse_size_expr(d.expr))
        elif d.kind == ANONYMOUS:
            out.append(None)
        elif d.kind == VARIADIC and d.name and not d.broadcastable and not d.treepath:
            out.append(Var(d.name))
        else:
            assert d.kind in (VARIADIC, ANONYMOUS_VARIADIC)
            out.append(Var(f"{prefix}{i}"))
    return tuple(out)


def tensor_from_annotation(
    dtype_class: str,
    array_type: str | None,
    spec: str,
    prefix: str = "_v",
) -> Value | SpecError:
    """The value an annotated parameter holds, or the error jaxtyping raises for it.

    dtype_class: the jaxtyping class name (``Float``, ``BFloat16``, ``jaxtyping.Shaped``...).
    array_type: as written (``Tensor``, ``torch.Tensor``, ``np.ndarray``), or None
    for a project alias written ``Float["b n d"]`` that fixes the array type.
    ``Float[float, ""]`` is a Python float, as jaxtyping makes it.
    """
    if dtype_class.startswith("jaxtyping."):
        dtype_class = dtype_class[len("jaxtyping.") :]
    if dtype_class not in DTYPE_CLASSES:
        return SpecError(spec, f"{dtype_class} is not a jaxtyping dtype class", 0, len(spec))
    # Leading and trailing spaces are harmless: jaxtyping strips, the tokenizer skips.
    parsed = parse_dimspec(spec)
    if isinstance(parsed, SpecError):
        return parsed
    base = (array_type or "").rsplit(".", 1)[-1]
    if base in _SCALAR_TYPES and array_type in (base, f"builtins.{base}"):
        return _scalar(dtype_class, _SCALAR_TYPES[base], parsed)
    return TensorV(shape_from_spec(parsed, prefix), dtype_for_class(dtype_class))


def _scalar(dtype_class: str, kind: str, spec: DimSpec) -> Value | SpecError:
    admitted = DTYPE_CLASSES[dtype_class]
    fixed_axes = any(d.kind not in (VARIADIC, ANONYMOUS_VARIADIC) for d in spec.dims)
    fits = admitted is None or any(d.startswith(kind) for d in admitted)
    if fixed_axes or not fits:
        return SpecError(spec.spec, "Invalid jaxtyping type annotation.", 0, len(spec.spec))
    if kind == "bool":
        return BoolV()
    if kind == "int":
        return IntV()
    if kind == "float":
        return FloatV()
    return UNKNOWN
