"""A torch function held as a value (`self.activation = F.gelu` in __init__, `act =
torch.relu`) is called as that function: Python calls the object the name holds,
and an instance attribute is not bound to the instance. Its result's shape is then
known in plain `check`, so the layer after it is compared (issue 25: cct's
TransformerEncoderLayer, whose feed-forward went through `self.activation`).
Each verdict is torch's."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose, torch_raises

LAYER = """
import torch
import torch.nn.functional as F
from torch import nn


class Layer(nn.Module):
    def __init__(self, d_model, dim_feedforward):
        super().__init__()
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear({linear2_in}, d_model)
        self.activation = {activation}

    def forward(self, src):
        {forward}
"""
# the function held by the instance, or by a local name
ATTRIBUTE = "return self.linear2(self.activation(self.linear1(src)))"
LOCAL = "act = {activation}\n        return self.linear2(act(self.linear1(src)))"
ACTIVATIONS = ("F.gelu", "torch.relu")
GOOD, TWICE = "dim_feedforward", "dim_feedforward * 2"


def _source(forward: str, linear2_in: str, activation: str) -> str:
    body = forward.format(activation=activation)
    return LAYER.format(linear2_in=linear2_in, activation=activation, forward=body)


def _errors(forward: str, linear2_in: str, activation: str) -> list[tuple[int, str]]:
    source = _source(forward, linear2_in, activation)
    return [(d.line, d.code) for d in diagnose(source) if d.severity == "error"]


@pytest.mark.parametrize("forward", [ATTRIBUTE, LOCAL], ids=["attribute", "local"])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_the_layer_as_written_is_no_error(forward, activation):
    assert _errors(forward, GOOD, activation) == []


@pytest.mark.parametrize("forward", [ATTRIBUTE, LOCAL], ids=["attribute", "local"])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_a_layer_of_twice_the_width_after_the_function_value_is_an_error(forward, activation):
    # main: nothing, the function value's result had no shape
    line = 15 if forward == ATTRIBUTE else 16  # the call of linear2
    assert _errors(forward, TWICE, activation) == [(line, "SHP307")]


@pytest.mark.parametrize("forward", [ATTRIBUTE, LOCAL], ids=["attribute", "local"])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_torch_runs_the_layer_and_refuses_the_bug(forward, activation):
    build = "Layer(48, 96)"
    good, bad = (_source(forward, width, activation) for width in (GOOD, TWICE))
    assert not torch_raises(good, build, (2, 10, 48))
    assert torch_raises(bad, build, (2, 10, 48))


REDUCE = """
from functools import partial

import torch
from einops import reduce


def stats(embed):
    var_fn = partial(torch.var, unbiased=False)
    return reduce(embed, "h n d -> h 1 d", var_fn), reduce(embed, "h n d -> h 1 d", torch.amax)
"""


def test_a_function_value_is_a_reduction_einops_calls():
    # vector-quantize-pytorch's update_affine: with the partial now a function value,
    # the reduction check must take it as the callable einops calls (not SHP210)
    assert [d.code for d in diagnose(REDUCE) if d.severity == "error"] == []
    torch = pytest.importorskip("torch")
    pytest.importorskip("einops")
    ns: dict = {}
    exec(compile(REDUCE, "m.py", "exec"), ns)  # noqa: S102 - the test's own module
    var, top = ns["stats"](torch.randn(2, 5, 8))
    assert var.shape == top.shape == (2, 1, 8)
