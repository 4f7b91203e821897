"""The ops layer for einops calls: what the analysis calls for each one.

    einops_call(op, pattern, tensors, axes_lengths, reduction=None) -> OpResult

``op`` is one of ``rearrange reduce repeat einsum pack unpack`` (einops
functions), ``torch.einsum`` / ``numpy.einsum`` (letter notation; ``np.einsum``
is accepted too), or ``layer:Rearrange layer:Reduce layer:EinMix`` (checked at
construction, as einops does; ``layer_call`` applies a constructed layer).

Arguments, as the analysis sees them:

- ``tensors``: the positional values other than the pattern. For
  rearrange/reduce/repeat, ``[x]``, where a list passed as ``x`` arrives as a
  TupleV (einops stacks it). For einsum, the tensors before the pattern; a
  string among them means the pattern was not last. For pack, the tensors of the
  list (or ``[TupleV]``; ``[UNKNOWN]`` for a list we cannot see). For unpack,
  ``[packed_tensor, packed_shapes]``.
- ``axes_lengths``: keyword arguments, name -> Value; None when ``**kwargs``
  hides them. ``reduction``, ``weight_shape`` and ``bias_shape`` may be given
  there too (as keywords are in the source).
- ``reduction``: reduce's third argument, or the Reduce layer's second.

Issues point at ``("pattern", start, end)`` (offsets into the pattern string),
``("kwarg", name)``, ``("kwarg", name, start, end)`` (offsets into the string
passed as that keyword: EinMix's weight_shape/bias_shape), ``("arg", i)`` or
``("call",)``.
"""

from __future__ import annotations

from shapelint.notation.einops_pattern import parse
from shapelint.ops import einops_transform as tr
from shapelint.ops.values import (
    UNKNOWN,
    Cost,
    ObjectV,
    OpIssue,
    OpResult,
    StrV,
    Value,
)

LAYER_KINDS = {
    "Rearrange": "einops.layers.torch.Rearrange",
    "Reduce": "einops.layers.torch.Reduce",
    "EinMix": "einops.layers.torch.EinMix",
}


def _split_kwargs(
    axes_lengths: dict[str, Value] | None, *names: str
) -> tuple[dict[str, Value] | None, dict[str, Value]]:
    """Take the keywords that are arguments (reduction=, weight_shape=, ...) out of
    the axis lengths."""
    if axes_lengths is None:
        return None, {}
    rest = dict(axes_lengths)
    taken = {n: rest.pop(n) for n in names if n in rest}
    return rest, taken


def einops_call(
    op: str,
    pattern: str | None,
    tensors: list[Value],
    axes_lengths: dict[str, Value] | None,
    reduction: Value | None = None,
    *,
    weight_shape: Value | None = None,
    bias_shape: Value | None = None,
    costs: bool = True,
) -> OpResult:
    """Judge one einops (or torch/numpy einsum) call; see the module docstring.
    costs=False: a stand-in cost (ops.values.STAND_IN_COST) for the figures."""
    if op in ("rearrange", "reduce", "repeat"):
        # rearrange/repeat pass reduction= on to reduce() themselves: a keyword of
        # that name is theirs to reject, and stays an axis length here.
        kwargs, taken = _split_kwargs(axes_lengths, *(("reduction",) if op == "reduce" else ()))
        if reduction is None:
            reduction = taken.get("reduction")
        if op == "reduce" and reduction is None and kwargs is not None:
            return _missing_reduction(pattern)
        if pattern is None:
            return OpResult()
        x = tensors[0] if tensors else UNKNOWN
        return tr.run(op, parse(op, pattern), x, kwargs, reduction, costs=costs)
    if op == "einsum":
        from shapelint.ops.einsum_ops import einops_einsum

        return einops_einsum(pattern, tensors, costs)
    if op in ("torch.einsum", "numpy.einsum", "np.einsum"):
        from shapelint.ops.einsum_ops import letters_einsum

        flavor = "torch" if op == "torch.einsum" else "numpy"
        return letters_einsum(pattern, tensors, flavor, costs)
    if op in ("pack", "unpack"):
        from shapelint.ops.einops_pack import pack, unpack

        if pattern is None:
            return OpResult()
        return pack(pattern, tensors) if op == "pack" else unpack(pattern, tensors)
    if op.startswith("layer:"):
        return _construct_layer(op[6:], pattern, axes_lengths, reduction, weight_shape, bias_shape)
    raise ValueError(f"unknown einops operation {op!r}")


def _missing_reduction(pattern: str | None) -> OpResult:
    return OpResult(
        UNKNOWN,
        Cost(),
        [
            OpIssue(
                "SHP210",
                f'reduce("{pattern}"): no reduction given; pass one of '
                + ", ".join(tr.REDUCTIONS)
                + " as the third argument",
                ("call",),
            )
        ],
    )


def _construct_layer(
    kind: str,
    pattern: str | None,
    axes_lengths: dict[str, Value] | None,
    reduction: Value | None,
    weight_shape: Value | None,
    bias_shape: Value | None,
) -> OpResult:
    if kind not in LAYER_KINDS:
        raise ValueError(f"unknown einops layer {kind!r}")
    if kind == "EinMix":
        kwargs, taken = _split_kwargs(axes_lengths, "weight_shape", "bias_shape")
        weight_shape = weight_shape if weight_shape is not None else taken.get("weight_shape")
        bias_shape = bias_shape if bias_shape is not None else taken.get("bias_shape")
        if pattern is None:
            return OpResult()
        from shapelint.ops.einmix import construct

        issues = construct(pattern, weight_shape, bias_shape, kwargs)
        attrs = (("weight_shape", weight_shape or UNKNOWN), ("bias_shape", bias_shape or UNKNOWN))
    else:
        op = "rearrange" if kind == "Rearrange" else "reduce"
        kwargs, taken = _split_kwargs(axes_lengths, "reduction")
        if reduction is None:
            reduction = taken.get("reduction")
        if pattern is None:
            return OpResult()
        if op == "reduce" and reduction is None and kwargs is not None:
            return _missing_reduction(pattern)
        res = tr.run(
            op, parse(op, pattern), UNKNOWN, kwargs, reduction, layer=True, construct_only=True
        )
        issues = res.issues
        attrs = (("reduction", reduction or UNKNOWN),)
    if issues:
        return OpResult(UNKNOWN, Cost(), issues)
    kw_attrs = tuple((f"axis:{k}", v) for k, v in (kwargs or {}).items())
    if kwargs is None:
        kw_attrs = (("axes_lengths", UNKNOWN),)
    obj = ObjectV(LAYER_KINDS[kind], (("pattern", StrV(pattern)), *attrs, *kw_attrs))
    return OpResult(obj, Cost(), [])


def layer_call(
    kind: str,
    pattern: str,
    axes_lengths: dict[str, Value] | None,
    reduction: Value | None,
    x: Value,
    *,
    weight_shape: Value | None = None,
    bias_shape: Value | None = None,
) -> OpResult:
    """Apply a layer built as ``kind(pattern, reduction?, **axes_lengths)`` to ``x``.

    Construction problems are not reported again (einops_call reported them where
    the layer was built); the result is then UNKNOWN.
    """
    built = _construct_layer(kind, pattern, axes_lengths, reduction, weight_shape, bias_shape)
    if built.issues:
        return OpResult()
    if kind == "EinMix":
        kwargs, taken = _split_kwargs(axes_lengths, "weight_shape", "bias_shape")
        from shapelint.ops.einmix import apply as einmix_apply

        return einmix_apply(
            pattern,
            weight_shape if weight_shape is not None else taken.get("weight_shape"),
            bias_shape if bias_shape is not None else taken.get("bias_shape"),
            kwargs,
            x,
        )
    op = "rearrange" if kind == "Rearrange" else "reduce"
    kwargs, taken = _split_kwargs(axes_lengths, "reduction")
    if reduction is None:
        reduction = taken.get("reduction")
    return tr.run(op, parse(op, pattern), x, kwargs, reduction, layer=True)


def apply_layer(layer: Value, x: Value) -> OpResult:
    """Apply a layer value that einops_call("layer:...") returned."""
    if not isinstance(layer, ObjectV):
        return OpResult()
    kind = next((k for k, q in LAYER_KINDS.items() if q == layer.kind), None)
    pattern = layer.attr("pattern")
    if kind is None or not isinstance(pattern, StrV) or pattern.value is None:
        return OpResult()
    attrs = dict(layer.attrs)
    kwargs: dict[str, Value] | None = {k[5:]: v for k, v in layer.attrs if k.startswith("axis:")}
    if "axes_lengths" in attrs:
        kwargs = None
    if kind == "EinMix":
        return layer_call(
            kind,
            pattern.value,
            kwargs,
            None,
            x,
            weight_shape=attrs.get("weight_shape"),
            bias_shape=attrs.get("bias_shape"),
        )
    return layer_call(kind, pattern.value, kwargs, attrs.get("reduction"), x)
