"""Convolutions against torch: shapes from running them, flops from FlopCounterMode.

Sizes, strides, paddings (ints, tuples, "same", "valid"), dilations, groups and
output paddings are drawn by hypothesis, with known sizes (shapelint must be
decisive: an error exactly where torch raises one) and with sizes as names (what
shapelint says must evaluate to torch's numbers).
"""

from __future__ import annotations

import pytest
import torch
from _stubcheck import check_agrees, check_value, check_verdict, run_both, symbol_names, to_value
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapelint.notation.symbolic import Expr
from shapelint.ops.stub_ops import stub_call
from shapelint.ops.values import IntV, TensorV

SETTINGS = settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def conv_case(draw, transposed: bool):
    nd = draw(st.integers(1, 3))
    g = draw(st.integers(1, 3))
    cin, cout = g * draw(st.integers(1, 2)), g * draw(st.integers(1, 2))
    spatial = draw(st.lists(st.integers(1, 7), min_size=nd, max_size=nd))
    kernel = draw(st.lists(st.integers(1, 3), min_size=nd, max_size=nd))
    batched = draw(st.booleans())
    n = draw(st.integers(1, 2))
    stride = draw(st.one_of(st.integers(1, 3), st.tuples(*[st.integers(1, 3)] * nd)))
    dilation = draw(st.one_of(st.integers(1, 2), st.tuples(*[st.integers(1, 2)] * nd)))
    padding = draw(st.one_of(st.integers(0, 2), st.tuples(*[st.integers(0, 2)] * nd)))
    kwargs = {"stride": stride, "dilation": dilation, "groups": g}
    if transposed:
        kwargs["output_padding"] = draw(st.integers(0, 2))
        kwargs["padding"] = padding
    else:
        kwargs["padding"] = draw(st.sampled_from([padding, padding, "same", "valid"]))
    x = torch.randn(*(([n] if batched else []) + [cin] + spatial))
    w_shape = [cin, cout // g] if transposed else [cout, cin // g]
    if draw(st.integers(0, 5)) == 0:
        w_shape[1] += 1  # channels that do not fit the groups
    w = torch.randn(*w_shape, *kernel)
    bias = torch.randn(cout) if draw(st.booleans()) else None
    return nd, x, w, bias, kwargs


def _conv_name(nd, transposed):
    return f"torch.nn.functional.conv{'_transpose' if transposed else ''}{nd}d"


@pytest.mark.parametrize("transposed", [False, True])
@SETTINGS
@given(data=st.data(), symbolic=st.booleans())
def test_conv_generated(transposed, data, symbolic):
    nd, x, w, bias, kwargs = data.draw(conv_case(transposed))
    args = [x, w] + ([bias] if bias is not None else [])
    names = symbol_names(args, {}) if symbolic else None
    o = run_both(_conv_name(nd, transposed), args, kwargs, names=names)
    _check_transposed(o, symbolic)


def _check_transposed(o, symbolic=False):
    """check_verdict, but for an empty transposed output, which torch returns or refuses
    depending on the layout: shapelint says neither (an unknown shape), never an error."""
    if o.result is not None and not o.result.issues and getattr(o.result.value, "shape", 0) is None:
        # At symbolic sizes shapelint is not decisive: torch may refuse for any
        # reason it cannot see (a bias of 2 beside 3 output channels, both names).
        assert symbolic or o.error is None or "too small" in str(o.error), o.error
        return
    check_verdict(o, decisive=not symbolic)


def _module_case(draw, transposed):
    nd, x, w, bias, kwargs = draw(conv_case(transposed))
    cin = x.shape[-nd - 1]
    g = kwargs["groups"]
    cout = (w.shape[1] * g) if transposed else w.shape[0]
    k = list(w.shape[2:])
    kernel = k[0] if draw(st.booleans()) and len(set(k)) == 1 else tuple(k)
    ctor = {"bias": bias is not None, **kwargs}
    if not transposed and draw(st.booleans()):
        ctor["padding_mode"] = "replicate"
    return nd, (cin, cout, kernel), ctor, x


@st.composite
def module_case(draw, transposed: bool):
    return _module_case(draw, transposed)


def _run_module(nd, ctor_args, ctor_kwargs, x, transposed):
    name = f"torch.nn.Conv{'Transpose' if transposed else ''}{nd}d"
    cls = getattr(torch.nn, name.rsplit(".", 1)[1])
    try:
        module = cls(*ctor_args, **ctor_kwargs)
    except ValueError:
        res = stub_call(name, [to_value(a) for a in ctor_args], _kw(ctor_kwargs))
        assert res is not None and res.issues, "torch refused the layer, shapelint did not"
        return None
    built = stub_call(name, [to_value(a) for a in ctor_args], _kw(ctor_kwargs))
    assert built is not None and not built.issues, built
    check_value(built.value, module, {}, strict=False)
    for p in ("weight", "bias"):
        t = built.value.attr(p)
        if isinstance(t, TensorV):
            assert t.shape is not None and tuple(d.value for d in t.shape) == tuple(
                getattr(module, p).shape
            ), p
    return run_both(
        f"{name}.__call__", [module, x], fn=lambda m, t: m(t), values=[built.value, to_value(x)]
    )


def _kw(kwargs):
    return {k: to_value(v) for k, v in kwargs.items()}


@pytest.mark.parametrize("transposed", [False, True])
@SETTINGS
@given(data=st.data())
def test_conv_modules_generated(transposed, data):
    nd, ctor_args, ctor_kwargs, x = data.draw(module_case(transposed))
    o = _run_module(nd, ctor_args, ctor_kwargs, x, transposed=transposed)
    if o is not None:
        _check_transposed(o)


def test_same_convolution_keeps_the_size_symbolically():
    h, w, c = Expr.name("h"), Expr.name("w"), Expr.name("c")
    x = TensorV((Expr.name("b"), c, h, w))
    weight = TensorV((Expr.const(64), c, Expr.const(3), Expr.const(3)))
    res = stub_call("torch.nn.functional.conv2d", [x, weight], {"padding": IntV(Expr.const(1))})
    assert res.value.shape == (Expr.name("b"), Expr.const(64), h, w)
    assert res.cost.flops == 2 * 64 * 9 * Expr.name("b") * c * h * w
    strided = stub_call(
        "torch.nn.functional.conv2d",
        [x, weight],
        {"stride": IntV(Expr.const(2)), "padding": IntV(Expr.const(1))},
    )
    assert strided.value.shape[2].to_python() == "((h - 1)//2) + 1"


def test_depthwise_layer_with_symbolic_width():
    d, k = Expr.name("d"), Expr.name("k")
    layer = stub_call(
        "torch.nn.Conv1d",
        [IntV(d), IntV(d)],
        {"kernel_size": IntV(k), "groups": IntV(d), "padding": IntV(k - 1)},
    )
    assert not layer.issues
    assert layer.value.attr("weight").shape == (d, Expr.const(1), k)
    x = TensorV((Expr.name("b"), d, Expr.name("L")))
    res = stub_call("torch.nn.Conv1d.__call__", [layer.value, x], {})
    assert res.value.shape == (Expr.name("b"), d, Expr.name("L") + k - 1)
    assert res.cost.flops == 2 * Expr.name("b") * d * k * (Expr.name("L") + k - 1)


@pytest.mark.parametrize(
    "ctor, kwargs",
    [
        ((4, 6, 3), {"groups": 4}),
        ((6, 4, 3), {"groups": 4}),
        ((4, 4, 3), {"stride": 2, "padding": "same"}),
    ],
)
def test_layers_torch_refuses_are_errors(ctor, kwargs):
    with pytest.raises(ValueError):
        torch.nn.Conv2d(*ctor, **kwargs)
    res = stub_call("torch.nn.Conv2d", [to_value(a) for a in ctor], _kw(kwargs))
    assert [i.code for i in res.issues] == ["SHP309"]


@pytest.mark.parametrize(
    "name, x, w, groups",
    [
        # Conv2d(4, 0, 3) builds; its forward raises (the weight's first axis < groups)
        ("torch.nn.functional.conv2d", (1, 4, 8, 8), (0, 4, 3, 3), 1),
        ("torch.nn.functional.conv1d", (1, 4, 8), (0, 2, 3), 2),
        # ConvTranspose2d(4, 0, 3): an empty weight
        ("torch.nn.functional.conv_transpose2d", (1, 4, 8, 8), (4, 0, 3, 3), 1),
    ],
)
def test_forwards_of_an_empty_weight_torch_refuses_are_errors(name, x, w, groups):
    fn = getattr(torch.nn.functional, name.rsplit(".", 1)[1])
    with pytest.raises(RuntimeError):
        fn(torch.randn(*x), torch.randn(*w), groups=groups)
    res = stub_call(
        name, [to_value(torch.randn(*x)), to_value(torch.randn(*w))], _kw({"groups": groups})
    )
    assert [i.code for i in res.issues] == ["SHP309"]


def test_symbolic_groups_are_not_errors():
    c = Expr.name("c")
    res = stub_call(
        "torch.nn.Conv2d", [IntV(c), IntV(c * 2), IntV(Expr.const(3))], {"groups": IntV(c)}
    )
    assert not res.issues


def test_unbatched_and_unknown_inputs():
    o = run_both("torch.nn.functional.conv1d", [torch.randn(4, 10), torch.randn(6, 4, 3)])
    check_agrees(o)
    res = stub_call("torch.nn.functional.conv2d", [TensorV(None), TensorV(None)], {})
    assert not res.issues and res.value == TensorV(None) and res.cost.flops is None
