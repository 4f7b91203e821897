"""Pooling, resampling, padding, im2col, pixel shuffles and one-hot against torch,
on generated sizes, windows, strides, paddings and flags (known sizes: an error
exactly where torch raises one; names: what is said evaluates to torch's numbers)."""

from __future__ import annotations

import pytest
import torch
from _stubcheck import check_verdict, run_both, symbol_names, to_value
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapelint.notation.symbolic import Expr
from shapelint.ops.stub_ops import stub_call
from shapelint.ops.values import IntV, NoneV, TensorV, TupleV

SETTINGS = settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
F = "torch.nn.functional."


def _sizes(nd, lo, hi):
    return st.one_of(st.integers(lo, hi), st.tuples(*[st.integers(lo, hi)] * nd))


@st.composite
def pool_case(draw):
    nd = draw(st.integers(1, 3))
    kind = draw(st.sampled_from(["max", "avg"]))
    batched = draw(st.booleans())
    x = torch.randn(*([2] if batched else []), 3, *[draw(st.integers(1, 7)) for _ in range(nd)])
    kwargs = {"kernel_size": draw(_sizes(nd, 1, 3)), "ceil_mode": draw(st.booleans())}
    if draw(st.booleans()):
        kwargs["stride"] = draw(_sizes(nd, 1, 3))
    kwargs["padding"] = draw(_sizes(nd, 0, 2))
    if kind == "max":
        kwargs["dilation"] = draw(_sizes(nd, 1, 2))
        kwargs["return_indices"] = draw(st.booleans())
    return f"{F}{kind}_pool{nd}d", x, kwargs


@SETTINGS
@given(pool_case(), st.booleans())
def test_pooling_generated(case, symbolic):
    name, x, kwargs = case
    names = symbol_names([x], {}) if symbolic else None
    o = run_both(name, [x], kwargs, names=names)
    if o.error is not None and "smaller than kernel size" in str(o.error):
        # avg_pool3d's CPU-only refusal: with known sizes shapelint claims no shape (an
        # error only where the output would be empty on any device); with names it
        # cannot tell, and claims what other devices compute.
        if not symbolic:
            assert o.result.issues or o.result.value.shape is None
        return
    # ceil_mode drops a last window that would start in the padding, a comparison of
    # the size with the stride: with names the pooled sizes are not claimed (the batch
    # and channel axes and the dtype still are).
    pooled = range(x.dim() - int(name[-2]), x.dim()) if symbolic and kwargs["ceil_mode"] else ()
    check_verdict(o, decisive=not symbolic, unknown_axes=pooled)


@SETTINGS
@given(
    st.integers(1, 3),
    st.sampled_from(["avg", "max"]),
    st.lists(st.integers(1, 6), min_size=3, max_size=3),
    st.data(),
)
def test_adaptive_pooling_generated(nd, kind, sizes, data):
    x = torch.randn(2, 3, *sizes[:nd])
    out = data.draw(
        st.one_of(st.integers(1, 4), st.tuples(*[st.one_of(st.none(), st.integers(1, 4))] * nd))
    )
    kwargs = {"return_indices": data.draw(st.booleans())} if kind == "max" else {}
    check_verdict(run_both(f"{F}adaptive_{kind}_pool{nd}d", [x, out], kwargs))


@SETTINGS
@given(
    st.integers(1, 3),
    st.lists(st.integers(1, 6), min_size=3, max_size=3),
    st.one_of(
        st.sampled_from([2, 3, 2.0, 0.5, 1.5, 0.3]).map(lambda f: {"scale_factor": f}),
        st.integers(1, 8).map(lambda s: {"size": s}),
    ),
    st.booleans(),
)
def test_interpolate_generated(nd, sizes, kwargs, symbolic):
    x = torch.randn(2, 3, *sizes[:nd])
    names = symbol_names([x], {}) if symbolic else None
    o = run_both(F + "interpolate", [x], kwargs, names=names)
    # 0.5 and 1.5 multiply a size exactly, so floor(n·f) of a name is a formula; 0.3 is
    # rounded by the product, and floor(n·0.3) of a name is unknown (never a guess).
    rounded = symbolic and kwargs.get("scale_factor") == 0.3
    check_verdict(o, decisive=not symbolic, strict=not rounded)


@SETTINGS
@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=4),
    st.lists(st.integers(-3, 3), min_size=1, max_size=8),
    st.sampled_from(["constant", "reflect", "replicate", "circular"]),
    st.booleans(),
)
def test_pad_generated(shape, pads, mode, symbolic):
    x = torch.randn(*shape)
    if mode != "constant":
        pads = [abs(p) for p in pads[: 2 * min(3, len(shape) - 1)]]  # modes pad spatial dims
        if not pads or len(shape) < 2:
            return
    names = symbol_names([x], {}) if symbolic else None
    o = run_both(F + "pad", [x, tuple(pads)], {"mode": mode}, names=names)
    if o.error is not None and mode != "constant" and not o.result.issues:
        # Replicate/circular limits (and non-constant modes on some ranks) are not
        # modelled: shapelint must then not claim a shape either way.
        return
    check_verdict(o, decisive=not symbolic and mode in ("constant", "reflect"))


@SETTINGS
@given(
    st.lists(st.integers(1, 7), min_size=2, max_size=2),
    _sizes(2, 1, 3),
    _sizes(2, 1, 2),
    _sizes(2, 0, 1),
    _sizes(2, 1, 2),
    st.booleans(),
    st.booleans(),
)
def test_unfold_fold_roundtrip_generated(hw, k, d, p, s, batched, perturb):
    x = torch.randn(*([2] if batched else []), 3, *hw)
    kw = {"kernel_size": k, "dilation": d, "padding": p, "stride": s}
    o = run_both(F + "unfold", [x], kw)
    check_verdict(o)
    if o.error is not None:
        return
    cols = o.out
    if perturb:
        cols = torch.randn(*cols.shape[:-1], cols.shape[-1] + 1)
    check_verdict(run_both(F + "fold", [cols, tuple(hw)], kw))


@SETTINGS
@given(
    st.lists(st.integers(1, 3), max_size=2),
    st.integers(1, 9),
    st.integers(1, 6),
    st.integers(1, 6),
    st.integers(1, 3),
    st.booleans(),
)
def test_pixel_shuffle_generated(batch, c, h, w, r, inverse):
    x = torch.randn(*batch, c, h, w)
    name = F + ("pixel_unshuffle" if inverse else "pixel_shuffle")
    check_verdict(run_both(name, [x, r]))


@SETTINGS
@given(st.lists(st.integers(1, 4), max_size=3), st.integers(1, 6), st.booleans())
def test_one_hot_generated(shape, n, given_classes):
    idx = torch.randint(0, n, tuple(shape))
    args = [idx, n] if given_classes else [idx]
    o = run_both(F + "one_hot", args)
    # Without num_classes the width is the data's largest value + 1: unknown.
    check_verdict(o, unknown_axes=() if given_classes else (len(shape),))


@pytest.mark.parametrize(
    "name, ctor, x",
    [
        ("torch.nn.MaxPool2d", ((2,), {}), torch.randn(2, 3, 8, 8)),
        ("torch.nn.MaxPool1d", ((3,), {"stride": 2, "return_indices": True}), torch.randn(2, 3, 9)),
        ("torch.nn.AvgPool3d", ((2,), {"ceil_mode": True}), torch.randn(1, 2, 5, 5, 5)),
        ("torch.nn.AdaptiveAvgPool2d", (((1, None),), {}), torch.randn(2, 3, 5, 6)),
        (
            "torch.nn.Upsample",
            ((), {"scale_factor": 2, "mode": "nearest"}),
            torch.randn(2, 3, 4, 5),
        ),
        ("torch.nn.ReflectionPad2d", ((1,), {}), torch.randn(2, 3, 4, 5)),
        ("torch.nn.ZeroPad2d", (((1, 2, 0, -1),), {}), torch.randn(2, 3, 4, 5)),
        ("torch.nn.Unfold", ((3,), {"padding": 1}), torch.randn(2, 3, 4, 5)),
        ("torch.nn.PixelShuffle", ((2,), {}), torch.randn(2, 8, 3, 3)),
        ("torch.nn.Flatten", ((), {}), torch.randn(2, 3, 4, 5)),
        ("torch.nn.Unflatten", ((1, (3, 4)), {}), torch.randn(2, 12, 5)),
        ("torch.nn.RReLU", ((), {}), torch.randn(2, 3, 5)),
        ("torch.nn.RReLU", ((0.1, 0.2), {"inplace": True}), torch.randn(2, 3)),
    ],
)
def test_layer_modules_agree_with_torch(name, ctor, x):
    args, kwargs = ctor
    module = eval(name, {"torch": torch})(*args, **kwargs)
    built = stub_call(
        name, [to_value(a) for a in args], {k: to_value(v) for k, v in kwargs.items()}
    )
    assert built is not None and not built.issues
    o = run_both(
        f"{name}.__call__", [module, x], fn=lambda m, t: m(t), values=[built.value, to_value(x)]
    )
    check_verdict(o)


def _python(v):
    """An attribute as the analysis holds it, as the Python value torch keeps."""
    if isinstance(v, IntV):
        return v.value.value if v.value is not None else None
    if isinstance(v, TupleV):
        return tuple(_python(i) for i in v.items)
    return None if isinstance(v, NoneV) else v


@pytest.mark.parametrize(
    "name",
    [f"torch.nn.{k}Pool{n}d" for k in ("Max", "Avg") for n in (1, 2, 3)],
)
@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((3,), {}),
        ((3,), {"stride": 2}),
        ((2,), {"stride": None, "padding": 1}),
        ((2,), {"stride": (1, 2)}),
    ],
)
def test_pooling_layer_attributes_are_torch_s(name, args, kwargs):
    """What a subclass reads off a pooling layer (`self.stride != self.kernel_size`,
    deel-torchlip's check): stride None kept as the kernel size, AvgPool1d's sizes
    as 1-tuples, as torch's constructors keep them (before: stride None, and the
    check made building the module raise)."""
    module = eval(name, {"torch": torch})(*args, **kwargs)
    built = stub_call(
        name, [to_value(a) for a in args], {k: to_value(v) for k, v in kwargs.items()}
    )
    assert built is not None and not built.issues
    attrs = dict(built.value.attrs)
    for attr in ("kernel_size", "stride", "padding"):
        assert _python(attrs[attr]) == getattr(module, attr), attr


def test_symbolic_pooling_halves():
    b, c, h = Expr.name("b"), Expr.name("c"), Expr.name("h")
    x = TensorV((b, c, 2 * h, 2 * h))
    res = stub_call(F + "max_pool2d", [x, IntV(Expr.const(2))], {})
    assert res.value.shape == (b, c, h, h)


PRELU = """
import torch.nn as nn
import torch.nn.functional as F
import torch


class P(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.full((n,), 0.25))

    def forward(self, x):
        return F.prelu(x, self.w) @ torch.ones(x.shape[-1], 3)
"""


@pytest.mark.parametrize(("n", "shape"), [(1, (2, 4)), (4, (2, 4, 5)), (1, (5,)), (3, (2, 4))])
def test_functional_prelu_is_held_to_torch(tmp_path, n, shape):
    from tests.helpers import run_class, torch_figures, written_module

    path, mod = written_module(tmp_path, "prelu_mod", PRELU)
    try:
        fwd, _, _, out = torch_figures(mod, "P", {"n": n}, {"x": shape}, training=False)
    except RuntimeError:  # slopes for another number of channels: torch refuses
        fwd = None
    t = run_class(path, "P", {"n": n}, {"x": shape}, False)
    if fwd is None:
        errors = [d for d in t["diagnostics"] if d["severity"] == "error"]
        assert not t["complete"] and errors, t["diagnostics"]
        assert errors[0]["code"] == "SHP309" and "slopes" in errors[0]["message"], errors
        return
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fwd
    assert tuple(int(d) for d in t["output"]) == out


EMBEDDING_BAG = """
import torch.nn as nn
import torch


class B(nn.Module):
    def __init__(self, mode, last):
        super().__init__()
        self.e = nn.EmbeddingBag(17, 8, mode=mode, include_last_offset=last)

    def forward(self, z):
        idx = torch.arange(z.shape[1]).expand_as(z)
        weights = z if self.e.mode == "sum" else None
        h = self.e(idx, per_sample_weights=weights)
        g = self.e(torch.arange(6), torch.tensor([0, 2, 4]))
        return torch.cat([h, g]) @ torch.ones(8, 3)
"""


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("last", [False, True])
def test_embedding_bag_is_held_to_torch(tmp_path, mode, last):
    """Bags of equal length (2-d), bags cut at offsets (1-d, the last offset an end
    where include_last_offset), per-sample weights with mode "sum"."""
    from tests.helpers import run_class, torch_figures, written_module

    path, mod = written_module(tmp_path, "bag_mod", EMBEDDING_BAG)
    kw = {"mode": mode, "last": last}
    fwd, _, params, out = torch_figures(mod, "B", kw, {"z": (2, 16)}, training=False)
    t = run_class(path, "B", kw, {"z": (2, 16)}, False)
    assert t["complete"], t["unknown"]
    assert (t["flops_value"], t["params_value"]) == (fwd, params)
    assert tuple(int(d) for d in t["output"]) == out


def test_embedding_bag_refuses_what_torch_refuses(tmp_path):
    from tests.helpers import run_class, written_module

    src = EMBEDDING_BAG.replace('if self.e.mode == "sum" else None', "")  # weights with "mean"
    path, _ = written_module(tmp_path, "bag_bad", src)
    t = run_class(path, "B", {"mode": "mean", "last": False}, {"z": (2, 16)}, False)
    errors = [d for d in t["diagnostics"] if d["severity"] == "error"]
    assert not t["complete"] and errors and "per_sample_weights" in errors[0]["message"], errors
