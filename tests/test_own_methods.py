"""A method of the module stored into the module while it is built
(`self.state_function = self._base_sub`, snntorch's neurons): Python binds it to the
instance, and forward's `self.state_function(x)` runs that method on the module (a
subclass's override where the subclass defines one). Stored into another module, it
stays bound to its own: that call is not followed. Figures against FlopCounterMode,
forward and backward."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import torch
import torch.nn as nn


class Neuron(nn.Module):
    def __init__(self, d=8, mode="sub"):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.proj = nn.Linear(d, 2 * d)
        if mode == "sub":
            self.state_function = self._sub
        elif mode == "proj":
            self.state_function = self._proj
        else:
            self.state_function = self._base
        self.first = self.state_function(torch.ones(1, d)).shape[-1]

    def _base(self, x):
        return self.lin(x)

    def _sub(self, x):
        return self._base(x) - 1

    def _proj(self, x):
        return self.proj(self._base(x))

    def forward(self, x):
        return self.state_function(x).sum(-1, keepdim=True) * self.first


class Wider(Neuron):
    def _base(self, x):
        return self.lin(self.lin(x))


class Child(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class Parent(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, 3 * d)
        self.child = Child(self._hook)

    def _hook(self, x):
        return self.lin(x)

    def forward(self, x):
        return self.child(x)
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("own_methods"), "own_methods", SOURCE)


@pytest.mark.parametrize(
    ("cls", "mode"), [("Neuron", "sub"), ("Neuron", "proj"), ("Neuron", "base"), ("Wider", "sub")]
)
@pytest.mark.parametrize("training", [True, False])
def test_a_method_stored_into_its_module_runs_on_it(source, cls, mode, training):
    path, mod = source
    kw = {"mode": mode}
    t = run_class(path, cls, kw, {"x": (4, 8)}, training)
    fwd, bwd, params, shape = torch_figures(mod, cls, kw, {"x": (4, 8)}, training=training)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert tuple(int(d) for d in t["output"]) == shape


def test_a_method_handed_to_another_module_is_not_run_on_that_one(source):
    # torch runs Parent._hook on the parent (3·d outputs); run on the child, which has
    # no `lin`, it would be no figure torch gives: the call is left unknown
    path, mod = source
    t = run_class(path, "Parent", {}, {"x": (4, 8)}, True)
    fwd, _, params, _ = torch_figures(mod, "Parent", {}, {"x": (4, 8)}, training=True)
    assert t["params_value"] == params
    assert not t["complete"]
    assert t["flops_value"] is None or t["flops_value"] < fwd
