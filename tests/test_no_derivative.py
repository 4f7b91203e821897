"""Ops whose backward torch does not implement (ops/no_derivative.py): where the loss
reaches one that autograd recorded, `out.sum().backward()` raises, and the target has
no backward figure; where it does not (no grad, not reached, the operand whose
derivative is missing needs none) the backward is FlopCounterMode's. Each module is
judged by torch."""

from __future__ import annotations

import warnings

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import torch
from torch import nn


class Lin(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)


class Acosh(Lin):
    def forward(self, x):
        return (self.lin(x).abs() + 1.5).acosh_()


class Asinh(Lin):
    def forward(self, x):
        return self.lin(x).asinh_()


class Arctanh(Lin):
    def forward(self, x):
        return torch.tanh(self.lin(x)).mul(0.5).arctanh_()


class FloorDivide(Lin):
    def forward(self, x):
        return torch.floor_divide(self.lin(x), 2)


class FloorDivOp(Lin):
    def forward(self, x):
        return self.lin(x) // 2


class FloorDivInPlace(Lin):
    def forward(self, x):
        h = self.lin(x) * 1
        h //= 2
        return h


class Heaviside(Lin):
    def forward(self, x):
        return torch.heaviside(self.lin(x), torch.ones(8))


class Igamma(Lin):
    def forward(self, x):
        return torch.igamma(self.lin(x).abs(), torch.ones(8))


class ScatterReduce(Lin):
    def forward(self, x):
        h = self.lin(x)
        index = torch.zeros(1, 8, dtype=torch.long)
        return h.scatter_(0, index, torch.ones(1, 8), reduce="add")


class AcoshOutOfPlace(Lin):  # out of place, torch has its derivative
    def forward(self, x):
        return (self.lin(x).abs() + 1.5).acosh()


class AcoshDetached(Lin):  # acosh_ on what autograd does not record
    def forward(self, x):
        h = self.lin(x)
        g = (h.detach().abs() + 1.5).acosh_()
        return h + g


class AcoshNoGrad(Lin):
    def forward(self, x):
        h = self.lin(x)
        with torch.no_grad():
            g = (h.abs() + 1.5).acosh_()
        return h * g


class AcoshUnreached(Lin):  # recorded, but the loss does not reach it
    def forward(self, x):
        h = self.lin(x)
        (h.abs() + 1.5).acosh_()
        return h


class IgammaOther(Lin):  # igamma's derivative for its second operand exists
    def forward(self, x):
        return torch.igamma(torch.ones(8), self.lin(x).abs())


class ScatterPlain(Lin):  # scatter_ without reduce= has a derivative
    def forward(self, x):
        h = self.lin(x)
        index = torch.zeros(1, 8, dtype=torch.long)
        return h.scatter_(0, index, torch.ones(1, 8))


class FloorDivInt(Lin):  # integer results: nothing to differentiate
    def forward(self, x):
        k = torch.arange(8) // 2
        return self.lin(x) * k
"""

RAISES = [
    "Acosh", "Asinh", "Arctanh", "FloorDivide", "FloorDivOp", "FloorDivInPlace",
    "Heaviside", "Igamma", "ScatterReduce",
]  # fmt: skip
RUNS = [
    "AcoshOutOfPlace", "AcoshDetached", "AcoshNoGrad", "AcoshUnreached", "IgammaOther",
    "ScatterPlain", "FloorDivInt",
]  # fmt: skip
INPUTS = {"x": (4, 8)}


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("noderiv"), "noderiv_probe", SOURCE)


def _torch_raises(mod, name: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scatter's reduce= is deprecated
            torch_figures(mod, name, {}, INPUTS, training=True)
    except (RuntimeError, NotImplementedError) as e:
        assert "not implemented" in str(e), e
        return True
    return False


@pytest.mark.parametrize("name", RAISES)
def test_an_op_with_no_derivative_leaves_no_backward_figure(source, name):
    path, mod = source
    assert _torch_raises(mod, name)
    fwd, _, _, _ = torch_figures(mod, "AcoshOutOfPlace", {}, INPUTS, training=True)
    t = run_class(path, name, {}, INPUTS, True)
    assert t["complete"] and t["flops_value"] == fwd, t["unknown"]  # the forward stays
    assert t["flops_backward"] is None and t["flops_step"] is None
    said = t["backward_raises"]
    assert said and said[0]["why"].startswith("backward would raise: ")
    assert f"{path}:{said[0]['line']}" in said[0]["why"]
    assert "no derivative" in said[0]["why"]
    assert all(c["flops_backward"] is None for c in t["calls"])


@pytest.mark.parametrize("name", RUNS)
def test_a_backward_torch_runs_keeps_its_figure(source, name):
    path, mod = source
    assert not _torch_raises(mod, name)
    fwd, bwd, _, _ = torch_figures(mod, name, {}, INPUTS, training=True)
    t = run_class(path, name, {}, INPUTS, True)
    assert t["backward_raises"] == []
    assert t["complete"] and t["flops_value"] == fwd, t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert t["flops_backward_value"] == bwd


def _calls(y, ones) -> dict:
    """Each op of ops/no_derivative.py's tables called on y, which requires grad."""
    index = torch.zeros(1, 4, dtype=torch.long)
    plus = y + 1.5
    return {
        "floor_divide": lambda: torch.floor_divide(y, 2),
        "Tensor.floor_divide": lambda: y.floor_divide(2),
        "Tensor.floor_divide_": lambda: plus.floor_divide_(2),
        "operator.floordiv": lambda: y // 2,
        "operator.ifloordiv": lambda: plus.__ifloordiv__(2),
        "Tensor.__floordiv__": lambda: y.__floordiv__(2),
        "Tensor.__rfloordiv__": lambda: y.__rfloordiv__(2),
        "Tensor.__ifloordiv__": lambda: plus.__ifloordiv__(2),
        "heaviside": lambda: torch.heaviside(y, ones),
        "Tensor.heaviside": lambda: y.heaviside(ones),
        "Tensor.heaviside_": lambda: plus.heaviside_(ones),
        "unique": lambda: torch.unique(y),
        "Tensor.unique": lambda: y.unique(),
        "unique_consecutive": lambda: torch.unique_consecutive(y),
        "Tensor.unique_consecutive": lambda: y.unique_consecutive(),
        **{
            f"Tensor.{name}_": (lambda name=name: getattr(y * 0.5 + 1.5, f"{name}_")())
            for name in ("acosh", "asinh", "arccosh", "arcsinh")
        },
        **{
            f"Tensor.{name}_": (lambda name=name: getattr(y * 0.5, f"{name}_")())
            for name in ("atanh", "arctanh")
        },
        "igamma": lambda: torch.igamma(y, ones),
        "igammac": lambda: torch.igammac(y, ones),
        "Tensor.igamma": lambda: y.igamma(ones),
        "Tensor.igammac": lambda: y.igammac(ones),
        "Tensor.igamma_": lambda: plus.igamma_(ones),
        "Tensor.igammac_": lambda: plus.igammac_(ones),
        "special.gammainc": lambda: torch.special.gammainc(y, ones),
        "special.gammaincc": lambda: torch.special.gammaincc(y, ones),
        "special.zeta": lambda: torch.special.zeta(y + 1, ones),
        "scatter": lambda: torch.scatter(y, 0, index, ones[:1], reduce="add"),
        "Tensor.scatter": lambda: y.scatter(0, index, ones[:1], reduce="add"),
        "Tensor.scatter_": lambda: plus.scatter_(0, index, ones[:1], reduce="add"),
    }


def test_the_table_is_torchs():
    """Each name's backward raises in torch on a tensor that requires grad; a reduce=
    not known, or a first operand not known, is a maybe."""
    from shapelint.ops import no_derivative as nd
    from shapelint.ops.values import UNKNOWN, NoneV, StrV, TensorV

    names = sorted(nd.ANY | nd.FIRST | nd.WITH_REDUCE)
    for op in names:
        y = torch.rand(4, 4, requires_grad=True) * 0.4 + 0.3
        call = _calls(y, torch.ones(4, 4))[op.removeprefix("torch.")]
        with warnings.catch_warnings(), pytest.raises((RuntimeError, NotImplementedError)) as e:
            warnings.simplefilter("ignore")  # scatter's reduce= is deprecated
            call().sum().backward()
        assert "not implemented" in str(e.value), (op, e.value)
    t = TensorV(("a",), grad=True)
    assert nd.refuses("torch.igamma", [t, t], {}) is True
    assert nd.refuses("torch.igamma", [TensorV(("a",), grad=False), t], {}) is False
    assert nd.refuses("torch.igamma", [UNKNOWN, t], {}) is None
    assert nd.refuses("torch.Tensor.scatter_", [t], {}) is False
    assert nd.refuses("torch.Tensor.scatter_", [t], {"reduce": NoneV()}) is False
    assert nd.refuses("torch.Tensor.scatter_", [t], {"reduce": StrV("add")}) is True
    assert nd.refuses("torch.Tensor.scatter_", [t], {"reduce": UNKNOWN}) is None
    assert nd.refuses("torch.exp", [t], {}) is False
