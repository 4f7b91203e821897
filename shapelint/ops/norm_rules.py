"""Shape rules for the channel normalizations (stubs/norm.stub): batch, instance and
group norm. Each output is shaped like its input; the rules check what torch checks:
the rank a layer accepts, the channel count against the layer's, and that the groups
divide the channels. torch's flop counter counts none of them (other_flops does).
"""

from __future__ import annotations

from shapelint.ops.shape_rules import (
    RANK,
    SIGNATURE,
    RuleContext,
    RuleOut,
    const_int,
    differs,
    groups_divide,
    has_var,
    int_value,
    known_rank,
    known_tail,
    rule,
    same,
    shape_of,
    shape_text,
)
from shapelint.ops.values import BoolV, Dim, NoneV, Value, dim_str


def _flag(v: Value) -> bool | None:
    return v.value if isinstance(v, BoolV) else None


def _rank_issue(ctx: RuleContext, out: RuleOut, shape, expected: str) -> RuleOut:
    out.issues.append(ctx.issue(RANK, f"expected {expected} input, got {shape_text(shape)}", 0))
    return out


def _channels_issue(ctx: RuleContext, out: RuleOut, shape, axis: int, want: Dim) -> None:
    out.issues.append(
        ctx.issue(
            SIGNATURE,
            f"input {shape_text(shape)} has {dim_str(shape[axis])} channels at dim {axis}, "
            f"the layer {dim_str(want)}",
            0,
        )
    )


def _channel_at(shape, axis: int) -> Dim:
    """The size at a front axis, unless a *batch comes before it."""
    if axis < len(shape) and not has_var(shape[: axis + 1]):
        return shape[axis]
    return None


@rule
def batch_norm(
    ctx: RuleContext, x: Value, num_features: Value, affine: Value, track: Value, nd_arg: Value
) -> RuleOut:
    """nn.BatchNorm1d (N, C) or (N, C, L), 2d (N, C, H, W), 3d (N, C, D, H, W);
    nd None: their base, whose rank check a subclass supplies (not checked here).

    The channel count is checked where torch uses it: against the affine weight or
    the running statistics (a layer with neither takes any count)."""
    out = same(ctx, x)
    shape = shape_of(x)
    nd = const_int(nd_arg)
    rank = known_rank(shape)
    if shape is None:
        return out
    if rank is not None and not isinstance(nd_arg, NoneV):
        ok = rank in (2, 3) if nd == 1 else rank == (nd or 0) + 2
        if not ok:
            want = "a 2-d or 3-d" if nd == 1 else f"a {(nd or 0) + 2}-d"
            return _rank_issue(ctx, RuleOut(), shape, want)
    checked = _flag(affine) or _flag(track)
    c, axis = _channel_at(shape, 1), 1
    if rank is None and nd in (2, 3) and known_tail(shape) > nd:
        # BatchNorm2d/3d take one rank, (N, C, *nd sizes): C is nd + 1 from the end,
        # whatever leading run the shape has (a conv's output on an input of unknown rank)
        c, axis = shape[-nd - 1], -nd - 1
    if checked and differs(c, int_value(num_features)):
        _channels_issue(ctx, out, shape, axis, int_value(num_features))
    return out


@rule
def instance_norm(
    ctx: RuleContext, x: Value, num_features: Value, affine: Value, track: Value, nd_arg: Value
) -> RuleOut:
    """nn.InstanceNorm1d/2d/3d: (N, C, *s) or unbatched (C, *s) with nd spatial axes."""
    out = same(ctx, x)
    shape = shape_of(x)
    nd = const_int(nd_arg) or 1
    rank = known_rank(shape)
    if shape is None or (rank is None and known_tail(shape) <= nd):
        return out
    if rank is not None and rank not in (nd + 1, nd + 2):
        return _rank_issue(ctx, RuleOut(), shape, f"a {nd + 1}-d or {nd + 2}-d")
    # batched or not, C is nd + 1 from the end, whatever leading run the shape has
    axis = rank - nd - 1 if rank is not None else -nd - 1
    # Without weights or running statistics torch only warns about the count.
    if (_flag(affine) or _flag(track)) and differs(shape[axis], int_value(num_features)):
        _channels_issue(ctx, out, shape, axis, int_value(num_features))
    return out


@rule
def group_norm(
    ctx: RuleContext, x: Value, num_groups: Value, num_channels: Value, affine: Value
) -> RuleOut:
    """F.group_norm / nn.GroupNorm: x (N, C, *); num_groups divides C; an affine layer's
    weight has num_channels entries."""
    out = same(ctx, x)
    shape = shape_of(x)
    rank = known_rank(shape)
    if shape is None:
        return out
    if rank is not None and rank < 2:
        return _rank_issue(ctx, RuleOut(), shape, "an at least 2-d")
    c = _channel_at(shape, 1)
    if not groups_divide(
        ctx, out, f"the channels of {shape_text(shape)}", c, int_value(num_groups), 0
    ):
        return out
    if _flag(affine) and differs(c, int_value(num_channels)):
        _channels_issue(ctx, out, shape, 1, int_value(num_channels))
    return out


@rule
def group_norm_layer(ctx: RuleContext, num_groups: Value, num_channels: Value) -> RuleOut:
    """nn.GroupNorm's constructor check: num_groups divides num_channels."""
    out = RuleOut()
    groups_divide(ctx, out, "num_channels", int_value(num_channels), int_value(num_groups), 1)
    return out
