"""Batch, instance and group norms against torch, on generated ranks, channel counts,
groups and flags: shapelint reports an error exactly where torch raises one (known
sizes), and its shapes and weights are torch's."""

from __future__ import annotations

import pytest
import torch
from _stubcheck import check_value, check_verdict, run_both, symbol_names, to_value
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapelint.ops.stub_ops import stub_call
from shapelint.ops.values import BufferV, ParameterV

SETTINGS = settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
pytestmark = pytest.mark.filterwarnings("ignore:input's size at dim")


def _kw(kwargs):
    return {k: to_value(v) for k, v in kwargs.items()}


def _statistics_error(o) -> bool:
    """Too few values per channel to normalize: a fact about the sizes at run time in
    training mode, which static analysis does not claim."""
    return o.error is not None and "more than 1" in str(o.error)


@st.composite
def layer_case(draw):
    kind = draw(st.sampled_from(["BatchNorm", "InstanceNorm", "GroupNorm"]))
    c = draw(st.integers(1, 6))
    rank = draw(st.integers(1, 5))
    shape = [draw(st.integers(1, 4)) for _ in range(rank)]
    channel_axis = 1 if rank > 1 else 0
    shape[channel_axis] = c if draw(st.integers(0, 3)) else draw(st.integers(1, 6))
    if kind == "GroupNorm":
        g = draw(st.integers(1, 3))
        num_c = g * draw(st.integers(1, 2)) if draw(st.integers(0, 4)) else draw(st.integers(1, 6))
        shape[channel_axis] = num_c if draw(st.integers(0, 3)) else shape[channel_axis]
        flags = {"affine": draw(st.booleans()), "bias": draw(st.booleans())}
        return "torch.nn.GroupNorm", (g, num_c), flags, shape
    nd = draw(st.integers(1, 3))
    flags = {"affine": draw(st.booleans()), "track_running_stats": draw(st.booleans())}
    flags["bias"] = draw(st.booleans())
    return f"torch.nn.{kind}{nd}d", (c,), flags, shape


@SETTINGS
@given(layer_case(), st.booleans())
def test_norm_layers_generated(case, training):
    name, ctor, kwargs, shape = case
    cls = getattr(torch.nn, name.rsplit(".", 1)[1])
    built = stub_call(name, [to_value(a) for a in ctor], _kw(kwargs))
    try:
        module = cls(*ctor, **kwargs)
    except ValueError:
        assert built.issues, "torch refused the layer, shapelint did not"
        return
    assert not built.issues, built.issues
    check_value(built.value, module, {}, strict=False)
    # weights= are its parameters, buffers= its buffers (`bias=False` drops the bias)
    for kind, held in ((ParameterV, module.parameters()), (BufferV, module.buffers())):
        stub = sum(v.numel().value for _, v in built.value.attrs if isinstance(v, kind))
        assert stub == sum(t.numel() for t in held), (kind.__name__, ctor, kwargs)
    module.train(training)
    x = torch.randn(*shape)
    o = run_both(
        f"{name}.__call__", [module, x], fn=lambda m, t: m(t), values=[built.value, to_value(x)]
    )
    if _statistics_error(o):
        return
    check_verdict(o)


@SETTINGS
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=4),
    st.integers(1, 4),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_group_norm_generated(shape, groups, affine, perturb, symbolic):
    x = torch.randn(*shape)
    c = shape[1] if len(shape) > 1 else 1
    args = [x, groups]
    if affine:
        args += [torch.randn(c + int(perturb)), torch.randn(c)]
    names = symbol_names(args[:1] + args[2:], {}) if symbolic else None
    o = run_both("torch.nn.functional.group_norm", args, names=names)
    if _statistics_error(o):
        return
    check_verdict(o, decisive=not symbolic)


@SETTINGS
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=4),
    st.sampled_from(["torch.nn.functional.batch_norm", "torch.nn.functional.instance_norm"]),
    st.booleans(),
    st.booleans(),
)
def test_functional_norms_generated(shape, name, perturb, training):
    x = torch.randn(*shape)
    c = shape[1] if len(shape) > 1 else shape[0]
    stats = [torch.zeros(c + int(perturb)), torch.ones(c)]
    args = [x, *stats] if name.endswith("batch_norm") else [x]
    kwargs = (
        {"training": training}
        if name.endswith("batch_norm")
        else {"running_mean": stats[0], "running_var": stats[1], "use_input_stats": training}
    )
    o = run_both(name, args, kwargs)
    if _statistics_error(o):
        return  # torch raised (a statistics error first): any issue shapelint saw is real
    if o.error is not None and len(shape) < 2:
        return  # a 1-d input: torch complains about the running statistics' size
    check_verdict(o)


def test_group_norm_layer_checks_its_groups():
    res = stub_call("torch.nn.GroupNorm", [to_value(32), to_value(48)], {})
    assert [i.code for i in res.issues] == ["SHP309"]
    ok = stub_call("torch.nn.GroupNorm", [to_value(32), to_value(64)], {})
    assert ok.value.attr("weight").shape[0].value == 64


def test_a_batch_norm_of_any_rank_derived_from_the_base(tmp_path):
    # `class BN(nn.modules.batchnorm._BatchNorm)` supplying its own `_check_input_dim`
    # (a SyncBatchNorm converted back): the base's forward, at any rank.
    from tests.test_modules import counted, static_target, write

    path = write(
        tmp_path,
        "bnxd.py",
        """
        import torch.nn as nn

        class BNXd(nn.modules.batchnorm._BatchNorm):
            def _check_input_dim(self, input):
                return

        class Net(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.bn = BNXd(c, affine=False)
                self.fc = nn.Linear(c, c)

            def forward(self, x):
                return self.fc(self.bn(x).transpose(1, -1))
        """,
    )
    for shape in ((2, 4), (2, 4, 3), (2, 4, 3, 5)):
        t = static_target(path, "Net", {"c": "4"}, {"x": ",".join(map(str, shape))})
        truth = counted(path, "Net(4)", {"x": torch.randn(*shape)})
        assert t["complete"], t["unknown"]
        assert t["flops_value"] == truth


CONV_NORM = """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim, dim_out):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(dim, dim_out * 2, 3), nn.{norm}({width}, affine=True))

    def forward(self, x):
        return self.net(x)
"""


@pytest.mark.parametrize("norm", ["BatchNorm2d", "InstanceNorm2d"])
def test_a_channel_norm_after_a_conv_on_an_input_of_unknown_rank(norm):
    # the conv takes (C, H, W) or (N, C, H, W), so its output's rank is not known; the
    # norm's channels are 3 from the end in every rank it takes
    from tests.helpers import diagnose

    for width, bad in (("dim_out", True), ("dim_out * 2", False)):
        source = CONV_NORM.format(norm=norm, width=width)
        ns: dict = {}
        exec(compile(source, "m.py", "exec"), ns)  # noqa: S102 - the test's own module
        try:
            ns["Block"](3, 4)(torch.randn(2, 3, 9, 9))
            raised = False
        except (RuntimeError, ValueError):  # InstanceNorm's count: a ValueError
            raised = True
        assert raised == bad
        errors = [(d.code, d.message) for d in diagnose(source) if d.severity == "error"]
        if bad:
            ((code, message),) = errors
            assert code == "SHP309" and "2·dim_out channels at dim -3, the layer dim_out" in message
        else:
            assert errors == []
