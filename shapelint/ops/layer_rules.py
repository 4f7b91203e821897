"""Shape rules for the reshaping layers of stubs/layers.stub: padding, unfold/fold
(im2col), pixel (un)shuffle and one-hot encoding.

Each checks what torch checks with known numbers and leaves names alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from shapelint.notation.symbolic import Expr, product
from shapelint.ops.attention_saved import mask_saved, mha_saved
from shapelint.ops.backward import requires
from shapelint.ops.conv_rules import conv_size, per_dim, split_input
from shapelint.ops.saved import PERMUTED
from shapelint.ops.shape_rules import (
    RANK,
    RESHAPE,
    SIGNATURE,
    RuleContext,
    RuleOut,
    const,
    const_int,
    differs,
    has_var,
    int_list,
    int_value,
    known_rank,
    known_tail,
    rule,
    shape_of,
    shape_text,
)
from shapelint.ops.values import (
    UNKNOWN,
    BoolV,
    Dim,
    IntV,
    NoneV,
    StrV,
    TensorV,
    TupleV,
    Value,
    dim_str,
    dtype_of,
    fresh_var,
    replaced,
)


@rule
def pad(ctx: RuleContext, x: Value, pads: Value, mode: Value) -> RuleOut:
    """F.pad: pads (left, right) pairs from the last dimension backwards; negative
    pads crop. Reflect padding must be smaller than the dimension it pads."""
    shape, sizes = shape_of(x), int_list(pads)
    out = RuleOut()
    if shape is None or sizes is None:
        return RuleOut(TensorV(None, dtype_of(x)))
    if len(sizes) % 2:
        out.issues.append(ctx.issue(SIGNATURE, "the padding length must be divisible by 2", 1))
        return out
    n = len(sizes) // 2
    rank = known_rank(shape)
    if rank is not None and n > rank:
        out.issues.append(
            ctx.issue(
                SIGNATURE,
                f"{len(sizes)} pads for a tensor of rank {rank} (at most two per dimension)",
                1,
            )
        )
        return out
    if known_tail(shape) < n:
        return RuleOut(TensorV(None, dtype_of(x)))
    reflect = isinstance(mode, StrV) and mode.value == "reflect"
    new = list(shape)
    for i in range(n):
        lo, hi = sizes[2 * i], sizes[2 * i + 1]
        pos = len(shape) - 1 - i
        d = shape[pos]
        if lo is None or hi is None or not isinstance(d, Expr):
            new[pos] = None
            continue
        size = d + lo + hi
        # Negative pads crop before positive ones pad: the cropped size must be >= 0.
        cropped = d + min(const(lo) or 0, 0) + min(const(hi) or 0, 0)
        if const(cropped) is not None and const(cropped) < 0:  # type: ignore[operator]
            out.issues.append(
                ctx.issue(
                    SIGNATURE,
                    f"pads ({dim_str(lo)}, {dim_str(hi)}) leave a negative size at dim {pos} "
                    f"of {shape_text(shape)}",
                    1,
                )
            )
            return out
        if reflect and const(d) is not None:
            if any(const(p) is not None and const(p) >= const(d) for p in (lo, hi)):  # type: ignore[operator]
                out.issues.append(
                    ctx.issue(
                        SIGNATURE,
                        f"reflect padding ({dim_str(lo)}, {dim_str(hi)}) must be smaller than "
                        f"the size {dim_str(d)} of dim {pos}",
                        1,
                    )
                )
                return out
        new[pos] = size
    out.value = TensorV(tuple(new), dtype_of(x))
    return out


def _blocks(spatial, ks, dils, pads, strides) -> list[Dim]:
    return [
        conv_size(h, k, s, p, d)
        for h, k, s, p, d in zip(spatial, ks, strides, pads, dils, strict=True)
    ]


def _window(kernel_size, dilation, padding, stride):
    parts = [per_dim(v, 2) for v in (kernel_size, dilation, padding, stride)]
    return None if any(p is None for p in parts) else parts


def _known_product(sizes) -> Expr | None:
    return None if any(not isinstance(d, Expr) for d in sizes) else product(sizes)


@rule
def unfold(
    ctx: RuleContext, x: Value, kernel_size: Value, dilation: Value, padding: Value, stride: Value
) -> RuleOut:
    """F.unfold / nn.Unfold (im2col): [N, C, H, W] or [C, H, W] -> [N, C·kh·kw, L],
    L the number of blocks, counted like a convolution's output positions."""
    xs = shape_of(x)
    out = RuleOut()
    if xs is None:
        return RuleOut(TensorV(None, dtype_of(x)))
    layout = split_input(ctx, xs, 2, out)
    window = _window(kernel_size, dilation, padding, stride)
    if layout is None or window is None:
        return out if out.issues else RuleOut(TensorV(None, dtype_of(x)))
    lead, c, spatial = layout
    ks, dils, pads, strides = window
    blocks = _blocks(spatial, ks, dils, pads, strides)
    if any(const(b) is not None and const(b) < 1 for b in blocks):  # type: ignore[operator]
        out.issues.append(
            ctx.issue(SIGNATURE, f"input {shape_text(xs)} is smaller than the kernel", 0)
        )
        return out
    k = _known_product(ks)
    rows = c * k if isinstance(c, Expr) and k is not None else None
    out.value = TensorV(tuple(lead) + (rows, _known_product(blocks)), dtype_of(x))
    return out


@rule
def fold(
    ctx: RuleContext,
    x: Value,
    output_size: Value,
    kernel_size: Value,
    dilation: Value,
    padding: Value,
    stride: Value,
) -> RuleOut:
    """F.fold / nn.Fold (col2im): [N, C·kh·kw, L] or [C·kh·kw, L] -> [N, C, *output_size];
    kh·kw must divide the rows and L must be the number of blocks."""
    xs = shape_of(x)
    out = RuleOut()
    if xs is None or has_var(xs):
        return RuleOut(TensorV(None, dtype_of(x)))
    if len(xs) not in (2, 3):
        out.issues.append(
            ctx.issue(RANK, f"expected a 2-d (unbatched) or 3-d input, got {shape_text(xs)}", 0)
        )
        return out
    window = _window(kernel_size, dilation, padding, stride)
    size = per_dim(output_size, 2)
    if window is None or size is None:
        return RuleOut(TensorV(None, dtype_of(x)))
    ks, dils, pads, strides = window
    rows, cols = xs[-2], xs[-1]
    k = _known_product(ks)
    channels = rows.exact_div(k) if isinstance(rows, Expr) and k is not None else None
    if const(rows) is not None and const(k) is not None and const(rows) % const(k):  # type: ignore[operator]
        out.issues.append(
            ctx.issue(
                SIGNATURE,
                f"the {const(rows)} rows of {shape_text(xs)} are not a multiple of the kernel "
                f"size {const(k)}",
                0,
            )
        )
        return out
    blocks = _known_product(_blocks(size, ks, dils, pads, strides))
    if blocks is not None and differs(blocks, cols):
        out.issues.append(
            ctx.issue(
                SIGNATURE,
                f"{dim_str(cols)} columns in {shape_text(xs)} where output_size and the "
                f"kernel give {dim_str(blocks)} blocks",
                0,
            )
        )
        return out
    out.value = TensorV(tuple(xs[:-2]) + (channels, *size), dtype_of(x))
    return out


@rule
def pixel_shuffle(ctx: RuleContext, x: Value, factor: Value, inverse: Value) -> RuleOut:
    """pixel_shuffle: [*, C·r², H, W] -> [*, C, H·r, W·r]; pixel_unshuffle the reverse."""
    xs = shape_of(x)
    r = int_value(factor)
    out = RuleOut()
    if xs is None or r is None:
        return RuleOut(TensorV(None, dtype_of(x)))
    rank = known_rank(xs)
    if rank is not None and rank < 3:
        out.issues.append(
            ctx.issue(RANK, f"expected at least 3 dimensions, got {shape_text(xs)}", 0)
        )
        return out
    if known_tail(xs) < 3:
        return RuleOut(TensorV(None, dtype_of(x)))
    c, h, w = xs[-3:]
    unshuffle = const_int(inverse) == 1
    if unshuffle:
        bad = [
            (d, i)
            for i, d in ((-2, h), (-1, w))
            if const(d) is not None and const(r) and const(d) % const(r)
        ]  # type: ignore[operator]
        if bad:
            out.issues.append(
                ctx.issue(
                    SIGNATURE,
                    f"dimension {bad[0][1]} of {shape_text(xs)} is not divisible by the "
                    f"downscale factor {const(r)}",
                    0,
                )
            )
            return out
        new = (_times(c, r * r), _divided(h, r), _divided(w, r))
    else:
        rr = r * r
        if const(c) is not None and const(rr) and const(c) % const(rr):  # type: ignore[operator]
            out.issues.append(
                ctx.issue(
                    SIGNATURE,
                    f"the {const(c)} channels of {shape_text(xs)} are not divisible by the "
                    f"square of the upscale factor ({const(rr)})",
                    0,
                )
            )
            return out
        new = (_divided(c, rr), _times(h, r), _times(w, r))
    out.value = TensorV(tuple(xs[:-3]) + new, dtype_of(x))  # type: ignore[operator]
    return out


def _times(d: Dim, r: Expr) -> Dim:
    return d * r if isinstance(d, Expr) else None


def _divided(d: Dim, r: Expr) -> Dim:
    """d / r where torch has checked that r divides d."""
    return d.divide_exact(r) if isinstance(d, Expr) and r.value != 0 else None


@rule
def one_hot(ctx: RuleContext, x: Value, num_classes: Value) -> RuleOut:
    """F.one_hot: a new last axis of num_classes (-1: the data's maximum + 1, unknown)."""
    xs = shape_of(x)
    n = int_value(num_classes)
    if xs is None:
        return RuleOut(TensorV(None, "int64"))
    if n is not None and n.value is not None and n.value < -1:
        return RuleOut(issues=[ctx.issue(RESHAPE, f"num_classes={n.value} is negative", 1)])
    size = None if n is None or n.value == -1 else n
    return RuleOut(TensorV(tuple(xs) + (size,), "int64"))


@rule
def pad_layer(ctx: RuleContext, x: Value, padding: Value, nd_arg: Value, mode: Value) -> RuleOut:
    """nn.ZeroPad2d & co: an int pads every side of the last nd dimensions."""
    nd = const_int(nd_arg) or 1
    if isinstance(padding, IntV):
        padding = TupleV((padding,) * (2 * nd))
    return pad(ctx, x, padding, mode)


def _truthy(v: Value) -> bool | None:
    """A flag given as a bool, or as a tensor that is there (bias_k) or None."""
    if isinstance(v, BoolV):
        return v.value
    if isinstance(v, TensorV):
        return True
    if isinstance(v, NoneV):
        return False
    return None


def _attention_input(shape, batch_first: bool | None):
    """(sequence, batch, features) of an MHA input: (L, N, E), (N, L, E) with
    batch_first, or the unbatched (L, E) with N = 1; None when not told."""
    rank = known_rank(shape)
    if rank == 2:
        return shape[0], Expr.const(1), shape[1]
    if rank == 3 and batch_first is not None:
        return (shape[1], shape[0], shape[2]) if batch_first else tuple(shape)
    return None


def _query_only(ctx: RuleContext, query: Value, qs, e, need_weights) -> RuleOut:
    """MHA where the key's or value's shape, or the layout (a `batch_first` the
    caller gives), is not known (`k_x if k_x is not None else q_x` on an optional
    argument): the output, where the call runs, is the out-projection of one row
    per query position, in the query's own layout, so it has the query's shape
    whatever the key's length and whichever dim is the batch; the weights (one
    column per key position) and the cost (the key's length and width, the bytes
    it moves) stay unknown. The query's width, its last dim in every layout, is checked as on
    the full path."""
    if known_rank(qs) not in (2, 3):
        return _of_unknown_rank(ctx, query, e, need_weights)
    if differs(qs[-1], e):
        message = f"query has {dim_str(qs[-1])} features, the layer expects {dim_str(e)}"
        return RuleOut(issues=[ctx.issue(SIGNATURE, message, 0)])
    weights: Value = NoneV() if _truthy(need_weights) is False else UNKNOWN
    return RuleOut(TupleV((TensorV(tuple(qs), dtype_of(query)), weights)), unread=True)


def _of_unknown_rank(ctx: RuleContext, query: Value, e: Value, need_weights: Value) -> RuleOut:
    """MHA on a query of no known rank: the output is the out-projection's, so it
    ends in embed_dim in every layout (2-d or 3-d, batch first or not), as the
    query's width must (torch asserts it); the rest, the weights and the cost are
    not known."""
    dtype = dtype_of(query)
    qs = shape_of(query)
    if qs and known_tail(qs) and differs(qs[-1], e):
        message = f"query has {dim_str(qs[-1])} features, the layer expects {dim_str(e)}"
        return RuleOut(issues=[ctx.issue(SIGNATURE, message, 0)])
    if not isinstance(e, Expr):
        return RuleOut(TensorV(None, dtype))
    weights: Value = NoneV() if _truthy(need_weights) is False else UNKNOWN
    return RuleOut(TupleV((TensorV((fresh_var(), e), dtype), weights)), unread=True)


@rule
def multi_head_attention(
    ctx: RuleContext,
    query: Value,
    key: Value,
    value: Value,
    embed_dim: Value,
    num_heads: Value,
    kdim: Value,
    vdim: Value,
    batch_first: Value,
    need_weights: Value,
    average: Value,
    bias_kv: Value,
    zero_attn: Value,
    module: Value = UNKNOWN,
    in_w: Value = UNKNOWN,
    in_b: Value = UNKNOWN,
    q_w: Value = UNKNOWN,
    k_w: Value = UNKNOWN,
    v_w: Value = UNKNOWN,
    out_w: Value = UNKNOWN,
    out_b: Value = UNKNOWN,
    b_k: Value = UNKNOWN,
    b_v: Value = UNKNOWN,
    separate: Value = UNKNOWN,
    attn_mask: Value = UNKNOWN,
    padding_mask: Value = UNKNOWN,
    causal: Value = UNKNOWN,
) -> RuleOut:
    """nn.MultiheadAttention / F.multi_head_attention_forward: (output, weights). A key
    or value of no known shape, or a layout not known, leaves the output the query's
    shape and the weights and cost unknown.

    Binds l, s (query and key lengths), n (batch), e (embed_dim), h (heads), kd and vd
    (key and value widths), sa, the key positions attended: s, plus one for
    add_bias_kv and one for add_zero_attn, and bw, the backward (attention_backward).
    module: True for the layer (a weight it does not hold is not there), False for
    the function (one not known is not known). The masks and the causal hint: what
    attention_saved.mask_saved reads.
    """
    qs, ks, vs = shape_of(query), shape_of(key), shape_of(value)
    e, h = int_value(embed_dim), int_value(num_heads)
    bf = batch_first.value if isinstance(batch_first, BoolV) else None
    out = RuleOut()
    if const(e) is not None and const(h) and const(e) % const(h):  # type: ignore[operator]
        out.issues.append(
            ctx.issue(SIGNATURE, f"embed_dim {const(e)} is not divisible by num_heads {const(h)}")
        )
        return out
    if qs is None:
        return _of_unknown_rank(ctx, query, e, need_weights)
    if ks is None or vs is None or None in (known_rank(ks), known_rank(vs)):
        return _query_only(ctx, query, qs, e, need_weights)
    ranks = [known_rank(s) for s in (qs, ks, vs)]
    if any(r is not None and r not in (2, 3) for r in ranks) or (
        None not in ranks and len(set(ranks)) > 1
    ):
        out.issues.append(
            ctx.issue(
                RANK,
                f"query, key and value must all be 2-d (unbatched) or 3-d: {shape_text(qs)}, "
                f"{shape_text(ks)}, {shape_text(vs)}",
                0,
            )
        )
        return out
    parts = [_attention_input(s, bf) for s in (qs, ks, vs)]
    if any(p is None for p in parts):
        return _query_only(ctx, query, qs, e, need_weights)
    (lq, nq, eq), (sk, nk, kd), (sv, nv, vd) = parts  # type: ignore[misc]
    # None: the embedding width; a string: not checked (the functional form takes any
    # width with separate projection weights).
    want_k = e if isinstance(kdim, NoneV) else int_value(kdim)
    want_v = e if isinstance(vdim, NoneV) else int_value(vdim)
    for what, have, want, arg in (
        ("query", eq, e, 0),
        ("key", kd, want_k, 1),
        ("value", vd, want_v, 2),
    ):
        if differs(have, want):
            out.issues.append(
                ctx.issue(
                    SIGNATURE,
                    f"{what} has {dim_str(have)} features, the layer expects {dim_str(want)}",
                    arg,
                )
            )
    if differs(sk, sv) or differs(nk, nv):
        out.issues.append(
            ctx.issue(
                SIGNATURE,
                f"key {shape_text(ks)} and value {shape_text(vs)} differ in length or batch",
                2,
            )
        )
    if differs(nq, nk):
        out.issues.append(
            ctx.issue(
                SIGNATURE,
                f"query {shape_text(qs)} and key {shape_text(ks)} differ in batch size",
                1,
            )
        )
    if out.issues:
        return out
    extra = [_truthy(bias_kv), _truthy(zero_attn)]
    sa = None if None in extra or not isinstance(sk, Expr) else sk + sum(extra)  # type: ignore[arg-type]
    averaged, want_weights = _truthy(average), _truthy(need_weights)
    weights_shape = (lq, sa) if averaged else (h, lq, sa)
    if known_rank(qs) == 3:
        weights_shape = (nq, *weights_shape)
    output = replaced(TensorV(tuple(qs), dtype_of(query)), contiguous=_out_layout(bf, qs, lq, nq))
    if want_weights is None or (want_weights and averaged is None):
        weights: Value = UNKNOWN
    elif want_weights:
        weights = TensorV(weights_shape, dtype_of(query))
    else:
        weights = NoneV()
    out.value = TupleV((output, weights))
    out.bind = {"l": lq, "s": sk, "n": nq, "e": e, "h": h, "kd": kd, "vd": vd, "sa": sa}
    held = isinstance(module, BoolV) and module.value is True
    use_sep = not isinstance(in_w, TensorV) if held else _truthy(separate)
    grads = AttentionGrads(
        inputs=(requires(query), requires(key), requires(value)),
        proj=_projection_grads(held, use_sep, in_w, in_b, (q_w, k_w, v_w)),
        extra=(_held_grad(held, b_k), _held_grad(held, b_v)),
        out=(_held_grad(held, out_w), _held_grad(held, out_b)),
    )
    sizes = (lq, nq, sk, e, kd, vd, sa)
    out.bind["bw"] = attention_backward(grads, want_weights, sizes)
    trained = grads.proj is not None and all(w is True for w, _ in grads.proj)
    out.bind |= mha_saved(
        (query, key, value),
        use_sep,
        bf,
        want_weights,
        any(x is not False for x in extra),
        trained and grads.out[0] is True,
        sizes,
        h,
    )
    out.bind |= mask_saved((attn_mask, padding_mask), causal, want_weights, query, sizes, h)
    if isinstance(weights, TensorV):
        packing = _packing(use_sep, query, key, value)
        sources = [query, key, in_w, in_b, q_w, k_w, b_k]
        if packing != "sep":  # v is projected with q or k: the same product
            sources += [value, v_w]
        out.alone = ((1, weights_backward(grads, packing, sizes), tuple(sources)),)
    return out


def _out_layout(batch_first: bool | None, shape, length, batch) -> object:
    """The layout of MHA's output: (L, N, E) written row-major, under batch_first
    transposed to (N, L, E), which is not contiguous where both L and N exceed 1."""
    if batch_first is False or known_rank(shape) != 3:
        return True
    if batch_first is None or const(length) is None or const(batch) is None:
        return None
    return PERMUTED if const(length) > 1 and const(batch) > 1 else True  # type: ignore[operator]


def _packing(separate: bool | None, query: Value, key: Value, value: Value) -> str | None:
    """How F.multi_head_attention_forward projects q, k and v: three products
    ("sep": separate weights, or key is not value), k and v in one ("kv": key is
    value, query another), or all three in one ("all": one tensor); None where not
    known."""
    if separate is None:
        return None
    if separate:
        return "sep"
    kv = _same(key, value)
    qk = _same(query, key)
    if kv is None:
        return None
    if not kv:
        return "sep"
    return None if qk is None else "all" if qk else "kv"


def _same(a: Value, b: Value) -> bool | None:
    """Whether a and b are one tensor, as torch's `is` tells (the same value of the
    analysis), or surely two (of other shapes); None otherwise."""
    if a is b:
        return True
    sa, sb = shape_of(a), shape_of(b)
    if sa is None or sb is None:
        return None
    if len(sa) != len(sb) or any(differs(x, y) for x, y in zip(sa, sb, strict=True)):
        return False
    return None


def weights_backward(g: AttentionGrads, packing: str | None, sizes: tuple) -> Expr | None:
    """FLOPs of multi-head attention's backward where the loss reaches the
    attention weights alone (need_weights): the scores' batched product, each
    operand's gradient where it requires grad, and the products that projected q
    and k, whole where one projected v with them (its weight's gradient is of the
    whole product); not p·v, nor the output projection."""
    if packing is None or not _sized(g, sizes):
        return None
    lq, n, sk, e, kd, _, sa = sizes
    (gq, gk, _), (pq, pk, _) = g.inputs, g.proj
    rq = _any(gq, *pq)
    rk = _any(gk, *pk, g.extra[0])
    if any(f is None for f in (gq, pq[0], gk, pk[0], rq, rk)):
        return None
    one = lambda f: int(bool(f))  # noqa: E731
    if packing == "all":
        total = 2 * lq * n * e * 3 * e * (one(gq) + one(pq[0]))
    else:
        total = 2 * lq * n * e * e * (one(gq) + one(pq[0]))
        width = 2 * e if packing == "kv" else e
        total += 2 * sk * n * kd * width * (one(gk) + one(pk[0]))
    return total + 2 * n * lq * sa * e * (one(rq) + one(rk))


@dataclass(frozen=True)
class AttentionGrads:
    """Which operands of multi-head attention require grad (None: not known):
    the query, key and value given; their projections' weight and bias
    (q, k, v); bias_k and bias_v; the output projection's weight and bias."""

    inputs: tuple[bool | None, bool | None, bool | None]
    proj: tuple[tuple[bool | None, bool | None], ...] | None
    extra: tuple[bool | None, bool | None]
    out: tuple[bool | None, bool | None]


def attention_backward(g: AttentionGrads, weights: bool | None, sizes: tuple) -> Expr | None:
    """FLOPs of multi-head attention's backward as torch's flop counter counts
    them under `out.sum().backward()`: each projection (a linear: the weight's
    gradient when it requires grad, the input's when that does), then the core:
    with need_weights, the two batched products of the math path, each operand's
    gradient where it requires grad; without, scaled_dot_product_attention on
    (n, h, l, e/h), counted by the fused kernels' backward formula (the scores
    recomputed: five products) as F.scaled_dot_product_attention is."""
    if weights is None or not _sized(g, sizes):
        return None
    lq, n, sk, e, kd, vd, sa = sizes
    (gq, gk, gv), (pq, pk, pv) = g.inputs, g.proj
    rq = _any(gq, *pq)  # the projected q requires grad
    rk = _any(gk, *pk, g.extra[0])
    rv = _any(gv, *pv, g.extra[1])
    core_in = _any(rq, rk, rv)
    flags = [gq, pq[0], gk, pk[0], gv, pv[0], rq, rk, rv, core_in, g.out[0]]
    if any(f is None for f in flags):
        return None
    one = lambda f: int(bool(f))  # noqa: E731
    total = 2 * lq * n * e * e * (one(gq) + one(pq[0]))
    total += 2 * sk * n * kd * e * (one(gk) + one(pk[0]))
    total += 2 * sk * n * vd * e * (one(gv) + one(pv[0]))
    product_ = 2 * n * lq * sa * e  # one batched product over the heads
    if weights:
        total += product_ * (one(rq) + one(rk) + one(rq or rk) + one(rv))
    else:
        total += 5 * product_ * one(core_in)
    total += 2 * lq * n * e * e * (one(core_in) + one(g.out[0]))
    return total


def _sized(g: AttentionGrads, sizes: tuple) -> bool:
    """Whether the projections' grads are known and every size is a formula."""
    return g.proj is not None and all(isinstance(x, Expr) for x in sizes)


def _any(*flags: bool | None) -> bool | None:
    if True in flags:
        return True
    return None if None in flags else False


def _held_grad(held: bool, v: Value) -> bool | None:
    """requires grad of an operand: a tensor's; absent (None given, or a weight the
    layer does not hold) is False; anything else is not known."""
    if isinstance(v, NoneV) or held and v is UNKNOWN:
        return False
    return requires(v) if isinstance(v, TensorV) else None


def _projection_grads(held: bool, separate: bool | None, in_w, in_b, weights) -> tuple | None:
    """(weight, bias) requires grad for the q, k and v projections: in_proj's
    three slices, or q/k/v_proj_weight with in_proj_bias's slices."""
    if separate is None:
        return None
    bias = _held_grad(held, in_b)
    if separate:
        return tuple((_held_grad(held, w), bias) for w in weights)
    w = _held_grad(held, in_w)
    return ((w, bias),) * 3
