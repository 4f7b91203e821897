"""nn.MultiheadAttention and F.multi_head_attention_forward against torch.

Generated widths, heads, lengths, kdim/vdim, batch_first, unbatched inputs,
need_weights, averaged weights, add_bias_kv and add_zero_attn. FLOPs are compared
on the path that computes the attention products in the open (the math backend of
scaled_dot_product_attention when need_weights=False): on CPU torch's fused kernels
are not registered by its flop counter, which then reports the projections only.
"""

from __future__ import annotations

import torch
from _stubcheck import check_verdict, run_both, symbol_names, to_value
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from shapelint.ops.stub_ops import stub_call

SETTINGS = settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
MHA = "torch.nn.MultiheadAttention"


def _kw(kwargs):
    return {k: to_value(v) for k, v in kwargs.items()}


def _math(fn):
    def run(*args, **kwargs):
        with sdpa_kernel(SDPBackend.MATH):
            return fn(*args, **kwargs)

    return run


@st.composite
def mha_case(draw):
    h = draw(st.integers(1, 3))
    e = h * draw(st.integers(1, 3))
    kdim = draw(st.sampled_from([None, e + 1, e + 2]))
    vdim = kdim if kdim is None else draw(st.integers(1, 5))
    ctor = {
        "batch_first": draw(st.booleans()),
        "add_bias_kv": draw(st.booleans()),
        "add_zero_attn": draw(st.booleans()),
        "bias": draw(st.booleans()),
    }
    if kdim is not None:
        ctor.update(kdim=kdim, vdim=vdim)
    L, S, N = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    unbatched = draw(st.booleans())

    def make(length, width):
        if unbatched:
            return torch.randn(length, width)
        return (
            torch.randn(N, length, width) if ctor["batch_first"] else torch.randn(length, N, width)
        )

    kd, vd = kdim or e, vdim or e
    if draw(st.integers(0, 5)) == 0:
        kd += 1  # a key of the wrong width
    q, k, v = make(L, e), make(S, kd), make(S, vd)
    if draw(st.booleans()) and kdim is None and kd == e:
        k = v = q  # self-attention: torch packs the projections
    call = {"need_weights": draw(st.booleans()), "average_attn_weights": draw(st.booleans())}
    return (e, h), ctor, (q, k, v), call


@SETTINGS
@given(mha_case(), st.booleans())
def test_multihead_attention_generated(case, symbolic):
    ctor_args, ctor_kw, qkv, call = case
    module = torch.nn.MultiheadAttention(*ctor_args, **ctor_kw)
    names = symbol_names(list(qkv), {}) if symbolic else None
    built = stub_call(
        MHA,
        [to_value(a, names) for a in ctor_args],
        {k: to_value(v, names) for k, v in ctor_kw.items()},
    )
    assert built is not None and not built.issues, built
    o = run_both(
        f"{MHA}.__call__",
        [module, *qkv],
        call,
        names=names,
        fn=_math(lambda m, *a, **k: m(*a, **k)),
        values=[built.value, *[to_value(t, names) for t in qkv]],
    )
    check_verdict(o, decisive=not symbolic)


@SETTINGS
@given(mha_case())
def test_multi_head_attention_forward_generated(case):
    ctor_args, ctor_kw, qkv, call = case
    ctor_kw = {**ctor_kw, "batch_first": False}
    m = torch.nn.MultiheadAttention(*ctor_args, **ctor_kw)
    e, h = ctor_args
    q, k, v = (
        (t if t.dim() == 2 else t.transpose(0, 1) for t in qkv)
        if ctor_kw.get("batch_first")
        else qkv
    )
    args = [q, k, v, e, h, m.in_proj_weight, m.in_proj_bias, m.bias_k, m.bias_v, m.add_zero_attn, 0.0,
            m.out_proj.weight, m.out_proj.bias]  # fmt: skip
    kwargs = dict(call)
    if not m._qkv_same_embed_dim:
        kwargs.update(use_separate_proj_weight=True, q_proj_weight=m.q_proj_weight,
                      k_proj_weight=m.k_proj_weight, v_proj_weight=m.v_proj_weight)  # fmt: skip
    args = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
    kwargs = {k: a.detach() if isinstance(a, torch.Tensor) else a for k, a in kwargs.items()}
    o = run_both(
        "torch.nn.functional.multi_head_attention_forward",
        args,
        kwargs,
        fn=_math(torch.nn.functional.multi_head_attention_forward),
    )
    # The functional form checks only what torch checks with the weights it is given.
    if o.error is None or o.result.issues:
        check_verdict(o)


def test_embed_dim_must_divide_into_heads():
    res = stub_call(MHA, [to_value(10), to_value(3)], {})
    assert [i.code for i in res.issues] == ["SHP309"]


def test_cross_attention_flops_match_the_counter_on_the_weights_path():
    m = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    q, kv = torch.randn(2, 5, 16), torch.randn(2, 9, 16)
    with FlopCounterMode(display=False) as counter:
        m(q, kv, kv)
    built = stub_call(MHA, [to_value(16), to_value(4)], {"batch_first": to_value(True)})
    res = stub_call(f"{MHA}.__call__", [built.value, to_value(q), to_value(kv), to_value(kv)], {})
    assert res.cost.flops.value == counter.get_total_flops() > 0
    assert any("fused kernel" in n for n in res.cost.notes)


def test_a_key_of_no_known_shape_leaves_the_output_the_querys_shape():
    # `k_x if k_x is not None else q_x` on an optional argument: whatever the key's
    # length, torch's output has the query's shape; the weights and the cost do not.
    from shapelint.ops.values import UNKNOWN

    m = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    q = torch.randn(2, 5, 16)
    for kv in (torch.randn(2, 9, 16), torch.randn(2, 1, 16)):
        assert m(q, kv, kv, need_weights=False)[0].shape == q.shape
    built = stub_call(MHA, [to_value(16), to_value(4)], {"batch_first": to_value(True)})
    for need in (False, True):
        res = stub_call(
            f"{MHA}.__call__",
            [built.value, to_value(q), UNKNOWN, UNKNOWN],
            {"need_weights": to_value(need)},
        )
        out, weights = res.value.items
        assert [d.value for d in out.shape] == [2, 5, 16]
        assert (weights is UNKNOWN) is need
        assert res.cost.flops is None and res.cost.bytes is None  # the key's are not known


def test_a_layout_the_caller_gives_leaves_the_output_the_querys_shape():
    # batch_first not known: (L, N, E) or (N, L, E), the output keeps the query's layout
    from shapelint.ops.values import UNKNOWN

    q, kv = torch.randn(2, 5, 16), torch.randn(2, 9, 16)
    for bf in (True, False):
        # read (N, L, E) or (L, N, E): the same tensors, either way
        m = torch.nn.MultiheadAttention(16, 4, batch_first=bf)
        assert (
            m(q, kv if bf else torch.randn(9, 5, 16), kv if bf else torch.randn(9, 5, 16))[0].shape
            == q.shape
        )
    built = stub_call(MHA, [to_value(16), to_value(4)], {"batch_first": UNKNOWN})
    res = stub_call(
        f"{MHA}.__call__",
        [built.value, to_value(q), to_value(kv), to_value(kv)],
        {"need_weights": to_value(False)},
    )
    assert [d.value for d in res.value.items[0].shape] == [2, 5, 16]
    assert res.cost.flops is None
    wrong = stub_call(
        f"{MHA}.__call__",
        [built.value, to_value(torch.randn(2, 5, 12)), UNKNOWN, UNKNOWN],
        {"need_weights": to_value(False)},
    )
    assert [i.code for i in wrong.issues] == ["SHP309"]
