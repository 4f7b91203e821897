"""An attribute the module being built does not have yet: reading it raises
AttributeError, as nn.Module.__getattr__ does, so that `try: self.val ... except
AttributeError:` runs its handler (snntorch's neurons register their reset buffer
there). Absent where the run applied every store into the instance and its classes
name the attribute only as their methods' own (`self.val = ...`,
`self.register_buffer("val", ...)`); a class attribute of that name, or a method
that hands its variables out (`self.__dict__.update(locals())`), leaves it not
known. Figures against torch: FlopCounterMode, parameters and buffers."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import torch
import torch.nn as nn


class Neuron(nn.Module):
    def __init__(self, d=8, learn=True):
        super().__init__()
        self.lin = nn.Linear(d, d)
        try:
            # loaded from a checkpoint: keep it
            if torch.is_tensor(self.reset_val):
                self.mode = "loaded"
        except AttributeError:
            self._reset_buffer(d, learn)

    def _reset_buffer(self, d, learn):
        \"\"\"Creates reset_val (and the scale) the first time.\"\"\"
        reset_val = torch.zeros(d)
        self.register_buffer("reset_val", reset_val)
        if learn:
            self.scale = nn.Parameter(torch.ones(d))
        else:
            self.scale = torch.ones(d)

    def forward(self, x):
        return self.lin(x) * self.scale + self.reset_val


class ClassLevel(nn.Module):
    reset_val = None

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        try:
            if self.reset_val is None:
                self.scale = nn.Parameter(torch.ones(d))
        except AttributeError:
            self.scale = nn.Parameter(torch.ones(2 * d))

    def forward(self, x):
        return self.lin(x) * self.scale


class Namespace(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self._setup(d)
        try:
            if self.reset_val is None:
                self.scale = nn.Parameter(torch.ones(d))
        except AttributeError:
            self.scale = nn.Parameter(torch.ones(2 * d))

    def _setup(self, d):
        reset_val = None
        self.__dict__.update({k: v for k, v in locals().items() if k != "self"})

    def forward(self, x):
        return self.lin(x) * self.scale
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("absent_built"), "absent_built", SOURCE)


def _torch_counts(mod, name, kw):
    m = getattr(mod, name)(**kw)
    return sum(p.numel() for p in m.parameters()), sum(b.numel() for b in m.buffers())


@pytest.mark.parametrize("kw", [{}, {"learn": False}])
def test_the_handler_of_an_absent_attribute_runs(source, kw):
    path, mod = source
    t = run_class(path, "Neuron", kw, {"x": (2, 8)}, True)
    fwd, bwd, params, out = torch_figures(mod, "Neuron", kw, {"x": (2, 8)}, training=True)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert t["buffers_value"] == _torch_counts(mod, "Neuron", kw)[1]
    assert tuple(int(d) for d in t["output"]) == out


@pytest.mark.parametrize("name", ["ClassLevel", "Namespace"])
def test_an_attribute_that_may_exist_is_not_taken_absent(source, name):
    """The class binds it, or a method may: no figure from the handler's model."""
    path, mod = source
    t = run_class(path, name, {}, {"x": (2, 8)}, True)
    fwd, _, params, _ = torch_figures(mod, name, {}, {"x": (2, 8)}, training=True)
    assert t["complete"] is False or t["flops_value"] == fwd
    assert t["params_value"] in (None, params)
