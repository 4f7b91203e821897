"""Shape rules for convolutions and pooling (``rule=conv(...)`` in stubs/conv.stub).

Output sizes follow torch's formulas with the floor division kept symbolic:
``(h + 2·p − d·(k−1) − 1)//s + 1`` for a convolution, which simplifies where it
cancels (a 3x3, stride-1, padding-1 convolution keeps ``h``). The names a rule binds
are what the stub's ``flops=`` formula multiplies, in the convention of
``torch.utils.flop_counter.conv_flop``: ``2·N·w0·w1·prod(kernel)·prod(positions)``,
where the positions are the output's for a convolution and the input's for a
transposed one, and the bias is not counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from shapelint.notation.symbolic import Expr, product
from shapelint.ops.backward import GROUPED_CONV_NOTE
from shapelint.ops.shape_rules import (
    RANK,
    SIGNATURE,
    RuleContext,
    RuleOut,
    const,
    const_int,
    differs,
    groups_divide,
    has_var,
    int_list,
    int_value,
    known_rank,
    known_tail,
    numel,
    rule,
    shape_of,
    shape_text,
)
from shapelint.ops.values import (
    BoolV,
    Dim,
    FloatV,
    IntV,
    NoneV,
    StrV,
    TensorV,
    TupleV,
    Value,
    dim_str,
    dtype_of,
)

Shape = tuple[Dim, ...]
_ONE = Expr.const(1)
_ZERO = Expr.const(0)
_FUNCTIONAL = NoneV()  # no padding_mode: F.conv*, which pads inside the kernel


def per_dim(v: Value, nd: int) -> list[Expr | None] | None:
    """An int, or a tuple of 1 or nd ints, as nd sizes (torch expands the first two)."""
    sizes = int_list(v)
    if sizes is None:
        return None
    if isinstance(v, TupleV) and len(sizes) == nd:
        return sizes
    if len(sizes) == 1:
        return sizes * nd
    return None


def split_input(
    ctx: RuleContext, shape: Shape, nd: int, out: RuleOut, what: str = "input"
) -> tuple[Shape, Dim, Shape] | None:
    """(leading axes, channels, spatial axes) of an input [N, C, *spatial] or the
    unbatched [C, *spatial]; None with an issue in out for a rank that cannot work, or
    None alone when a *batch hides the layout."""
    rank = known_rank(shape)
    if rank is not None:
        if rank not in (nd + 1, nd + 2):
            out.issues.append(
                ctx.issue(
                    RANK,
                    f"expected a {nd + 1}-d (unbatched) or {nd + 2}-d (batched) {what}, "
                    f"got {shape_text(shape)}",
                    0,
                )
            )
            return None
    elif known_tail(shape) < nd + 1:
        return None
    cut = len(shape) - nd - 1
    return tuple(shape[:cut]), shape[cut], tuple(shape[cut + 1 :])


def _batch(lead: Shape) -> Dim:
    """N as the flop counter sees it: an unbatched input is unsqueezed to N = 1."""
    return _ONE if not lead else numel(lead)


def _positive_sizes(
    ctx: RuleContext, sizes: Sequence[Dim], out: RuleOut, message: str, least: int = 1
) -> bool:
    bad = [d for d in sizes if const(d) is not None and const(d) < least]  # type: ignore[operator]
    if bad:
        out.issues.append(ctx.issue(SIGNATURE, message, 0))
        return False
    return True


def conv_size(h: Dim, k: Dim, s: Dim, p: Dim, d: Dim) -> Dim:
    """torch's output size of a convolution or max-pool along one axis."""
    if not all(isinstance(x, Expr) for x in (h, k, s, p, d)):
        return None
    if const(s) == 0:
        return None
    return floordiv_split(h + 2 * p - d * (k - 1) - 1, s) + 1  # type: ignore[operator, arg-type]


def floordiv_split(num: Expr, s: Expr) -> Expr:
    """num // s with the terms s divides taken out of the floor: floor((a + s·q) / s)
    is floor(a / s) + q, so a patch convolution's (h − p)//p + 1 reads h//p."""
    whole, rest = Expr.const(0), Expr.const(0)
    for mono, coeff in num.terms.items():
        term = Expr({mono: coeff})
        q = term.exact_div(s)
        if q is None:
            rest = rest + term
        else:
            whole = whole + q
    return rest // s + whole


def _padding(v: Value, nd: int) -> list[Expr | None] | str | None:
    if isinstance(v, StrV):
        return v.value if v.value in ("same", "valid") else None
    return per_dim(v, nd)


def _channel_issue(ctx: RuleContext, out: RuleOut, groups: Dim, w: Shape, c: Dim, want: Dim):
    out.issues.append(
        ctx.issue(
            SIGNATURE,
            f"groups={dim_str(groups)} and weight {shape_text(w)} expect {dim_str(want)} "
            f"input channels, got {dim_str(c)}",
            0,
        )
    )


def _check_bias(ctx: RuleContext, out: RuleOut, bias: Value, channels: Dim) -> None:
    bs = shape_of(bias)
    if bs is None or has_var(bs):
        return
    if len(bs) != 1 or differs(bs[0], channels):
        out.issues.append(
            ctx.issue(
                SIGNATURE,
                f"bias {shape_text(bs)} does not fit {dim_str(channels)} output channels",
                2,
            )
        )


def _layout(ctx: RuleContext, x: Value, nd_arg: Value):
    """(out, nd, x's shape, leading axes, channels, spatial axes) of a convolution or
    pooling input, or the finished result: unknown, or a rank that cannot work."""
    nd = const_int(nd_arg) or 2
    xs = shape_of(x)
    out = RuleOut()
    if xs is None:
        return RuleOut(TensorV(None))
    layout = split_input(ctx, xs, nd, out)
    if layout is None:
        return out if out.issues else RuleOut(TensorV(None))
    return (out, nd, xs, *layout)


def _operands(ctx: RuleContext, x: Value, weight: Value, nd_arg: Value):
    """_layout's tuple and the weight's shape (unknown sizes where it is unknown)."""
    found = _layout(ctx, x, nd_arg)
    if isinstance(found, RuleOut):
        return found
    out, nd = found[0], found[1]
    ws = shape_of(weight)
    if ws is not None and known_rank(ws) is not None and len(ws) != nd + 2:
        out.issues.append(ctx.issue(RANK, f"expected a {nd + 2}-d weight, got {shape_text(ws)}", 1))
        return out
    w = ws if ws is not None and not has_var(ws) else (None,) * (nd + 2)
    return (*found, w)


def _with_indices(value: TensorV, pair: Value) -> Value:
    """The pooled values, or (values, indices) with return_indices=True."""
    if not isinstance(pair, BoolV) or pair.value is None:
        return TensorV(None)
    return TupleV((value, TensorV(value.shape, "int64"))) if pair.value else value


@rule
def conv(
    ctx: RuleContext,
    x: Value,
    weight: Value,
    bias: Value,
    stride: Value,
    padding: Value,
    dilation: Value,
    groups: Value,
    nd_arg: Value,
    mode: Value = _FUNCTIONAL,
) -> RuleOut:
    """F.conv1d/2d/3d and nn.Conv*: x [N, C, *s] or [C, *s], weight [C_out, C/groups, *k].

    Binds n, c_out (weight's first axis), c_in_per_group (its second), kernel (the
    product of the kernel sizes), out_positions (of the output's spatial sizes) and,
    for a layer's padding_mode (mode), padded and pad_saves (_padded). A weight with
    fewer output channels than groups (`Conv2d(4, 0, 3)`, which builds) is refused, as
    torch's forward refuses it.
    """
    found = _operands(ctx, x, weight, nd_arg)
    if isinstance(found, RuleOut):
        return found
    out, nd, xs, lead, c, spatial, w = found
    g = int_value(groups) if not isinstance(groups, NoneV) else _ONE
    c_out, c_in_g, ksizes = w[0], w[1], tuple(w[2:])
    if g is not None:
        want = c_in_g * g if isinstance(c_in_g, Expr) else None
        if want is not None and differs(want, c):
            _channel_issue(ctx, out, g, w, c, want)
        divides = groups_divide(ctx, out, "the weight's output channels", c_out, g, 1)
        n, k = const(c_out), const(g)
        if divides and n is not None and k is not None and n < k:
            # torch's forward: "expected weight to be at least {groups} at dimension 0"
            # (Conv2d(4, 0, 3) builds, and its forward raises)
            what = f"groups={k} expects at least {k} output channels in the weight, got {n}"
            out.issues.append(ctx.issue(SIGNATURE, what, 1))
    _check_bias(ctx, out, bias, c_out)
    pad = _padding(padding, nd)
    strides, dils = per_dim(stride, nd), per_dim(dilation, nd)
    if pad == "same" and strides is not None and any(const(s) not in (1, None) for s in strides):
        out.issues.append(
            ctx.issue(SIGNATURE, "padding='same' is not supported for strided convolutions", 0)
        )
    if out.issues:
        return out
    if pad == "same":
        sizes: list[Dim] = list(spatial)
    elif pad == "valid" or isinstance(pad, list):
        pads = [_ZERO] * nd if pad == "valid" else pad
        if strides is None or dils is None:
            sizes = [None] * nd
        else:
            sizes = [
                conv_size(h, k, s, p, d)
                for h, k, s, p, d in zip(spatial, ksizes, strides, pads, dils, strict=True)  # type: ignore[arg-type]
            ]
    else:
        sizes = [None] * nd
    if not _positive_sizes(
        ctx, sizes, out, f"input {shape_text(xs)} is smaller than the kernel {shape_text(w)}"
    ):
        return out
    out.value = TensorV(lead + (c_out,) + tuple(sizes), dtype_of(x))
    out.bind = {
        "n": _batch(lead),
        "c_out": c_out,
        "c_in_per_group": c_in_g,
        "kernel": _product(ksizes),
        "out_positions": _product(sizes),
        **_padded(mode, pad, lead, c, spatial),
    }
    if pad == "same":
        out.bind.update(_same_padded(mode, lead, c, spatial, ksizes, dils))
    _grouped_note(out, g)
    return out


def _padded(mode: Value, pad, lead: Shape, c: Dim, spatial: Shape) -> dict[str, Expr | None]:
    """An nn.Conv* whose padding_mode is not "zeros" pads its input with F.pad first
    and convolves the copy unpadded, so the convolution saves that copy, not the
    input: padded, its elements (0 for "zeros" or the functional form, which pad
    inside the kernel); pad_saves, 1 where the pad itself saves its input for
    backward (reflect and replicate pads' backward reads it; circular's slices and
    cats do not). None: not known here."""
    if isinstance(mode, NoneV) or (isinstance(mode, StrV) and mode.value == "zeros"):
        return {"padded": _ZERO, "pad_saves": _ZERO}
    if not isinstance(mode, StrV) or mode.value not in ("reflect", "replicate", "circular"):
        return {"padded": None, "pad_saves": None}
    saves = Expr.const(int(mode.value != "circular"))
    if not isinstance(pad, list) or not isinstance(c, Expr):
        return {"padded": None, "pad_saves": saves}
    sizes = [
        h + 2 * p if isinstance(h, Expr) and p is not None else None
        for h, p in zip(spatial, pad, strict=True)
    ]
    found = _product([_batch(lead), c, *sizes])
    return {"padded": found, "pad_saves": saves}


def _same_padded(
    mode: Value, lead: Shape, c: Dim, spatial: Shape, ksizes: Shape, dils: list[Expr | None] | None
) -> dict[str, Expr | None]:
    """padding='same' pads d·(k−1) in all along each axis. ATen's _convolution_mode
    convolves with half of it on each side where that is even; where it is odd on
    some axis (an even kernel, odd dilation) it first makes a zero-padded copy one
    element longer on those axes (constant_pad_nd, which saves nothing) and
    convolves that, so the convolution saves the copy, not the input. A layer with
    another padding_mode pads all of it with F.pad instead (_padded's, not known)."""
    if not (isinstance(mode, NoneV) or (isinstance(mode, StrV) and mode.value == "zeros")):
        return {}
    unknown = {"padded": None, "pad_saves": _ZERO}
    if dils is None:
        return unknown
    odd: list[int] = []
    for k, d in zip(ksizes, dils, strict=True):
        kc, dc = const(k), const(d)
        if kc is None or dc is None:
            return unknown
        odd.append(dc * (kc - 1) % 2)
    if not any(odd):
        return {"padded": _ZERO, "pad_saves": _ZERO}
    if not isinstance(c, Expr):
        return unknown
    sizes = [h + o if isinstance(h, Expr) else None for h, o in zip(spatial, odd, strict=True)]
    return {"padded": _product([_batch(lead), c, *sizes]), "pad_saves": _ZERO}


def _grouped_note(out: RuleOut, g: Expr | None) -> None:
    if g is None or g.value != 1:
        out.notes.append(GROUPED_CONV_NOTE)


@rule
def conv_transpose(
    ctx: RuleContext,
    x: Value,
    weight: Value,
    bias: Value,
    stride: Value,
    padding: Value,
    output_padding: Value,
    groups: Value,
    dilation: Value,
    nd_arg: Value,
) -> RuleOut:
    """F.conv_transpose1d/2d/3d and nn.ConvTranspose*: weight [C_in, C_out/groups, *k],
    output size ``(h − 1)·s − 2·p + d·(k − 1) + output_padding + 1``.

    Binds n, c_in (weight's first axis), c_out_per_group (its second), kernel and
    in_positions: the flop counter counts a transposed convolution over the input's
    positions. An empty weight is refused, as torch's forward refuses it.
    """
    found = _operands(ctx, x, weight, nd_arg)
    if isinstance(found, RuleOut):
        return found
    out, nd, xs, lead, c, spatial, w = found
    g = int_value(groups) if not isinstance(groups, NoneV) else _ONE
    c_in, c_out_g, ksizes = w[0], w[1], tuple(w[2:])
    if any(const(d) == 0 for d in w):
        # torch's forward: "non-empty 2D or 4D weight tensor expected"
        what = f"weight {shape_text(w)} is empty: a transposed convolution needs a non-empty one"
        out.issues.append(ctx.issue(SIGNATURE, what, 1))
    if differs(c_in, c):
        out.issues.append(
            ctx.issue(
                SIGNATURE,
                f"weight {shape_text(w)} expects {dim_str(c_in)} input channels, got {dim_str(c)}",
                0,
            )
        )
    if g is not None:
        groups_divide(ctx, out, "the weight's input channels", c_in, g, 1)
        _check_bias(ctx, out, bias, c_out_g * g if isinstance(c_out_g, Expr) else None)
    strides, pads = per_dim(stride, nd), per_dim(padding, nd)
    opads, dils = per_dim(output_padding, nd), per_dim(dilation, nd)
    if strides is not None and dils is not None and opads is not None:
        for s, d, op in zip(strides, dils, opads, strict=True):
            if None not in (const(s), const(d), const(op)) and op.value >= max(s.value, d.value):  # type: ignore[union-attr]
                out.issues.append(
                    ctx.issue(
                        SIGNATURE,
                        f"output_padding {op.value} must be smaller than the stride "  # type: ignore[union-attr]
                        f"({s.value}) or the dilation ({d.value})",  # type: ignore[union-attr]
                        0,
                    )
                )
                break
    if out.issues:
        return out
    sizes: list[Dim] = [None] * nd
    if None not in (strides, pads, opads, dils):
        sizes = []
        for h, k, s, p, op, d in zip(spatial, ksizes, strides, pads, opads, dils, strict=True):  # type: ignore[arg-type]
            parts = (h, k, s, p, op, d)
            ok = all(isinstance(v, Expr) for v in parts)
            sizes.append((h - 1) * s - 2 * p + d * (k - 1) + op + 1 if ok else None)  # type: ignore[operator]
    message = f"the output of {shape_text(xs)} would have a negative size"
    if not _positive_sizes(ctx, sizes, out, message, least=0):
        return out
    if any(const(d) == 0 for d in sizes):
        # An empty output: torch returns it for some layouts and raises for others.
        return RuleOut(TensorV(None))
    ch = c_out_g * g if isinstance(c_out_g, Expr) and g is not None else None
    out.value = TensorV(lead + (ch,) + tuple(sizes), dtype_of(x))
    out.bind = {
        "n": _batch(lead),
        "c_in": c_in,
        "c_out_per_group": c_out_g,
        "kernel": _product(ksizes),
        "in_positions": _product(spatial),
    }
    _grouped_note(out, g)
    return out


@rule
def conv_layer(
    ctx: RuleContext, in_channels: Value, out_channels: Value, groups: Value, stride: Value,
    padding: Value,
) -> RuleOut:  # fmt: skip
    """The checks nn.Conv*/nn.ConvTranspose* make when built: groups divides both
    channel counts; padding='same' only without stride."""
    out = RuleOut()
    g = int_value(groups)
    for i, (what, n) in enumerate((("in_channels", in_channels), ("out_channels", out_channels))):
        groups_divide(ctx, out, what, int_value(n), g, i)
    if isinstance(padding, StrV) and padding.value == "same":
        strides = int_list(stride) or []
        if any(s is not None and s.value not in (1, None) for s in strides):
            out.issues.append(
                ctx.issue(SIGNATURE, "padding='same' is not supported for strided convolutions")
            )
    return out


def _product(sizes: Sequence[Dim]) -> Expr | None:
    if any(not isinstance(d, Expr) for d in sizes):
        return None
    return product(sizes)  # type: ignore[arg-type]


# -- pooling -------------------------------------------------------------------------------


def _ceil_adjust(size: Expr, h: Expr, p: Expr, s: Expr) -> Expr | None:
    """With ceil_mode torch rounds up, then drops a last window that would start in the
    right padding; told only with known numbers."""
    if None in (size.value, h.value, p.value, s.value):
        return None
    n = size.value
    if (n - 1) * s.value >= h.value + p.value:  # type: ignore[operator]
        n -= 1
    return Expr.const(n)


def pool_size(h: Dim, k: Dim, s: Dim, p: Dim, d: Dim, ceil: bool | None) -> Dim:
    """Output size of max/avg pooling along one axis (avg pooling has d = 1)."""
    if not all(isinstance(x, Expr) for x in (h, k, s, p, d)) or ceil is None:
        return None
    if not ceil:
        return conv_size(h, k, s, p, d)
    span = h + 2 * p - d * (k - 1) - 1  # type: ignore[operator]
    if span.value is None or s.value in (None, 0):  # type: ignore[union-attr]
        return None
    up = Expr.const(-(-span.value // s.value) + 1)  # type: ignore[operator, union-attr]
    return _ceil_adjust(up, h, p, s)  # type: ignore[arg-type]


@rule
def pool(
    ctx: RuleContext,
    x: Value,
    kernel_size: Value,
    stride: Value,
    padding: Value,
    dilation: Value,
    ceil_mode: Value,
    nd_arg: Value,
    pair: Value,
) -> RuleOut:
    """max_pool*/avg_pool*/lp_pool*: x [N, C, *s] or [C, *s]; stride None (or empty)
    means the kernel size; pair=True returns (values, indices) (return_indices)."""
    found = _layout(ctx, x, nd_arg)
    if isinstance(found, RuleOut):
        return found
    out, nd, xs, lead, c, spatial = found
    ks = per_dim(kernel_size, nd)
    no_stride = isinstance(stride, NoneV) or (isinstance(stride, TupleV) and not stride.items)
    strides = ks if no_stride else per_dim(stride, nd)
    pads, dils = per_dim(padding, nd), per_dim(dilation, nd)
    ceil = ceil_mode.value if isinstance(ceil_mode, BoolV) else None
    sizes: list[Dim] = [None] * nd
    if None not in (ks, strides, pads, dils):
        for k, p in zip(ks, pads, strict=True):  # type: ignore[arg-type]
            kk, pp = const(k), const(p)
            if kk is not None and pp is not None and 2 * pp > kk:
                out.issues.append(
                    ctx.issue(
                        SIGNATURE, f"padding {pp} should be at most half the kernel size {kk}", 0
                    )
                )
                return out
        sizes = [
            pool_size(h, k, s, p, d, ceil)
            for h, k, s, p, d in zip(spatial, ks, strides, pads, dils, strict=True)  # type: ignore[arg-type]
        ]
    if not _positive_sizes(ctx, sizes, out, f"input {shape_text(xs)} is smaller than the window"):
        return out
    out.value = _with_indices(TensorV(lead + (c,) + tuple(sizes), dtype_of(x)), pair)
    out.bind = {"window": _product(ks or [None])}
    return out


@rule
def adaptive_pool(
    ctx: RuleContext, x: Value, output_size: Value, nd_arg: Value, pair: Value
) -> RuleOut:
    """adaptive_{avg,max}_pool*: the spatial axes become output_size (None keeps one)."""
    found = _layout(ctx, x, nd_arg)
    if isinstance(found, RuleOut):
        return found
    out, nd, xs, lead, c, spatial = found
    if isinstance(output_size, TupleV) and len(output_size.items) == nd:
        sizes: list[Dim] = [
            h if isinstance(o, NoneV) else int_value(o)
            for h, o in zip(spatial, output_size.items, strict=True)
        ]
    else:
        sizes = per_dim(output_size, nd) or [None] * nd  # type: ignore[assignment]
    out.value = _with_indices(TensorV(lead + (c,) + tuple(sizes), dtype_of(x)), pair)
    return out


@rule
def adaptive_avg_pool(ctx: RuleContext, x: Value, output_size: Value, nd_arg: Value) -> RuleOut:
    """adaptive_avg_pool{2,3}d: where every output size is 1, torch takes the mean of
    the last nd axes, keeping them (ATen's shortcut), whatever the axes before: a 3-d
    input to AdaptiveAvgPool3d(1) is (1, 1, 1), a 6-d one keeps its first three. A
    tuple of sizes asks at least nd + 1 axes first (`_list_with_default`); any other
    case is adaptive_pool's."""
    nd = const_int(nd_arg)
    given = output_size.items if isinstance(output_size, TupleV) else (output_size,)
    ones = len(given) in (1, nd) and all(const_int(o) == 1 for o in given)
    rank = known_rank(shape_of(x))
    if nd is not None and nd >= 2 and ones and rank is not None:
        least = nd + 1 if isinstance(output_size, TupleV) else nd
        if rank >= least:
            xs = shape_of(x)
            return RuleOut(TensorV(tuple(xs[: rank - nd]) + (_ONE,) * nd, dtype_of(x)))  # type: ignore[index]
    return adaptive_pool(ctx, x, output_size, nd_arg, BoolV(False))


# -- resampling ----------------------------------------------------------------------------


def _scaled(h: Dim, f: Value) -> Dim:
    """floor(h · f) as torch computes the size of an upsampled axis."""
    if not isinstance(h, Expr):
        return None
    if isinstance(f, FloatV) and f.value is not None:
        if float(f.value).is_integer():
            return h * int(f.value)
        if h.value is not None:
            return Expr.const(math.floor(h.value * f.value))
        # A scale of few binary digits (0.5, 1.5, 0.75: p < 2^20) multiplies any size
        # below 2^33 exactly in double, so torch's floor(h * f) is floor(h * p / q); a
        # scale like 0.3 is rounded by the product, and then only numbers can tell.
        p, q = float(f.value).as_integer_ratio()
        return h * p // q if f.value > 0 and p < 2**20 else None
    e = int_value(f)
    return h * e if e is not None else None


@rule
def interpolate(ctx: RuleContext, x: Value, size: Value, scale_factor: Value) -> RuleOut:
    """F.interpolate / nn.Upsample: x [N, C, *s]; size, or floor(s · scale_factor)."""
    xs = shape_of(x)
    out = RuleOut()
    if xs is None or has_var(xs):
        return RuleOut(TensorV(None))
    if len(xs) < 3:
        out.issues.append(
            ctx.issue(
                RANK, f"expected an input with a batch and a channel axis, got {shape_text(xs)}", 0
            )
        )
        return out
    nd = len(xs) - 2
    lead, spatial = xs[:2], xs[2:]
    if not isinstance(size, NoneV):
        sizes: list[Dim] = per_dim(size, nd) or [None] * nd  # type: ignore[assignment]
    elif isinstance(scale_factor, TupleV) and len(scale_factor.items) == nd:
        sizes = [_scaled(h, f) for h, f in zip(spatial, scale_factor.items, strict=True)]
    elif isinstance(scale_factor, (FloatV, TupleV)) or int_value(scale_factor) is not None:
        f = (
            scale_factor.items[0]
            if isinstance(scale_factor, TupleV) and scale_factor.items
            else scale_factor
        )
        sizes = [_scaled(h, f) for h in spatial]
    else:
        sizes = [None] * nd
    out.value = TensorV(tuple(lead) + tuple(sizes), dtype_of(x))
    return out


@rule
def avg_pool3d(
    ctx: RuleContext, x: Value, kernel_size: Value, stride: Value, padding: Value, ceil_mode: Value
) -> RuleOut:
    """avg_pool3d: as pool, but torch's CPU kernel also refuses an input smaller than
    the kernel (padding aside), which other devices accept: no shape is claimed then."""
    out = pool(ctx, x, kernel_size, stride, padding, IntV(_ONE), ceil_mode, IntV(Expr.const(3)),
               BoolV(False))  # fmt: skip
    xs, ks = shape_of(x), per_dim(kernel_size, 3)
    if out.issues or xs is None or ks is None or known_tail(xs) < 3:
        return out
    # const, not differs: differs is also true of formulas (`h` and `h + 1`)
    if any(
        const(h) is not None and const(k) is not None and const(h) < const(k)  # type: ignore[operator]
        for h, k in zip(xs[-3:], ks, strict=True)
    ):
        out.value = TensorV(None, dtype_of(x))
        out.notes.append("avg_pool3d of an input smaller than its kernel fails on CPU")
    return out
