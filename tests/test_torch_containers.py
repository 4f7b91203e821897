"""analysis/torch_containers: a project subclass of a torch layer run by the layer's
own forward reads its `weight` / `bias` through a property its class defines (Python's
lookup: a data descriptor on the class wins over the instance's dict), as
F.linear(input, self.weight, self.bias) does in torch. Figures held to FlopCounterMode
under out.sum().backward()."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

SOURCE = """
import torch
import torch.nn as nn


class NoisyLinear(nn.Linear):
    # torchrl's: nn.Linear's own parameters never made; weight and bias computed
    def __init__(self, d=8, frozen_mu=False):
        nn.Module.__init__(self)
        self.in_features = self.out_features = d
        self.weight_mu = nn.Parameter(torch.randn(d, d), requires_grad=not frozen_mu)
        self.weight_sigma = nn.Parameter(torch.randn(d, d))
        self.register_buffer("weight_epsilon", torch.randn(d, d))
        self.bias_mu = nn.Parameter(torch.randn(d))

    @property
    def weight(self):
        if self.training:
            return self.weight_mu + self.weight_sigma * self.weight_epsilon
        return self.weight_mu

    @property
    def bias(self):
        return self.bias_mu


class StandardizedConv(nn.Conv2d):
    # a weight-standardised convolution: the layer's parameter read through a property
    def __init__(self, c=4):
        super().__init__(c, 2 * c, 3, padding=1)

    @property
    def standardized(self):
        return self.weight

    def forward(self, x):
        return super().forward(x)
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    pytest.importorskip("torch")
    return written_module(tmp_path_factory.mktemp("containers"), "property_layers", SOURCE)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("kw", [{}, {"frozen_mu": True}])
def test_a_layer_reads_its_weight_through_its_class_property(source, training, kw):
    path, mod = source
    inputs = {"input": (2, 4, 8)}
    t = run_class(path, "NoisyLinear", kw, inputs, training)
    fwd, bwd, _params, _shape = torch_figures(mod, "NoisyLinear", kw, inputs, training)
    # main: the stub read the instance's attributes, no `weight`: backward not known
    assert t["complete"] and t["backward_complete"], t.get("backward_unknown")
    assert (t["flops_value"], t["flops_backward_value"]) == (fwd, bwd)


def test_a_property_of_another_name_leaves_the_layer_its_own_weight(source):
    path, mod = source
    inputs = {"x": (2, 4, 6, 6)}
    t = run_class(path, "StandardizedConv", {}, inputs, True)
    fwd, bwd, _params, _shape = torch_figures(mod, "StandardizedConv", {}, inputs, True)
    assert t["complete"] and t["backward_complete"]
    assert (t["flops_value"], t["flops_backward_value"]) == (fwd, bwd)
