"""A floating unary op in place (`x.clamp_(min=eps).log10_()`, pesto's ToLogMagnitude):
each returns the tensor it wrote, chained as torch chains it; no product (0 FLOPs) and,
what autograd keeps of the overwritten input not described, no activation figure where
a tensor requiring grad is written. Figures against FlopCounterMode."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import torch
import torch.nn as nn


class LogMagnitude(nn.Module):
    def __init__(self, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return (x * self.scale).clamp_(min=self.eps).log10_().mul_(20)


class Weighted(nn.Module):
    def __init__(self, d=8, op="log_"):
        super().__init__()
        self.l = nn.Linear(d, d)
        self.op = op

    def forward(self, x):
        y = self.l(x).abs().add_(1)
        return getattr(y, self.op)() @ self.l.weight
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("inplace_unary"), "inplace_unary", SOURCE)


def test_a_chain_of_in_place_ops_is_followed(source):
    path, mod = source
    t = run_class(path, "LogMagnitude", {}, {"x": (2, 16)}, True)
    fwd, bwd, params, shape = torch_figures(mod, "LogMagnitude", {}, {"x": (2, 16)}, training=True)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert tuple(int(d) for d in t["output"]) == shape


@pytest.mark.parametrize("op", ["log_", "log2_", "sqrt_", "rsqrt_", "sin_", "reciprocal_"])
def test_an_in_place_unary_op_keeps_its_tensor(source, op):
    path, mod = source
    kw = {"op": op}
    t = run_class(path, "Weighted", kw, {"x": (4, 8)}, True)
    fwd, bwd, params, shape = torch_figures(mod, "Weighted", kw, {"x": (4, 8)}, training=True)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert tuple(int(d) for d in t["output"]) == shape
    assert not t["activation_complete"]
