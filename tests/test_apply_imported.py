"""`module.apply(fn)` with fn imported from another file of the project: its body is
read where it is defined, as for a function of the same file. One that only
initialises weights changes no layer (the figures are torch's); one that replaces
layers leaves the calls after it unknown."""

from __future__ import annotations

import sys
import textwrap

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

INITS = """
import torch
import torch.nn as nn


@torch.no_grad()
def init_plain(layer):
    if isinstance(layer, nn.Linear):
        nn.init.normal_(layer.weight, 0.0, 0.02)
        if layer.bias is not None:
            nn.init.zeros_(layer.bias)
    return layer


def swap(layer):
    for name, child in layer.named_children():
        if isinstance(child, nn.ReLU):
            setattr(layer, name, nn.Sequential(nn.Linear(8, 8), nn.ReLU()))
"""

SOURCE = """
import torch.nn as nn

from apply_inits import init_plain, swap


class Mlp(nn.Module):
    def __init__(self, d=8, n=3):
        super().__init__()
        self.layers = nn.Sequential(*[m for _ in range(n) for m in (nn.Linear(d, d), nn.ReLU())])
        self.layers.apply(init_plain)

    def forward(self, x):
        return self.layers(x)


class Swapped(nn.Module):
    def __init__(self, d=8, n=3):
        super().__init__()
        self.layers = nn.Sequential(*[m for _ in range(n) for m in (nn.Linear(d, d), nn.ReLU())])
        self.layers.apply(swap)

    def forward(self, x):
        return self.layers(x)
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    d = tmp_path_factory.mktemp("apply_imported")
    (d / "apply_inits.py").write_text(textwrap.dedent(INITS))
    sys.path.insert(0, str(d))
    try:
        yield written_module(d, "apply_model", SOURCE)
    finally:
        sys.path.remove(str(d))
        sys.modules.pop("apply_inits", None)


def test_an_imported_initialiser_changes_no_layer(source):
    path, mod = source
    t = run_class(path, "Mlp", {}, {"x": (4, 8)}, True)
    fwd, bwd, params, _shape = torch_figures(mod, "Mlp", {}, {"x": (4, 8)}, training=True)
    assert t["complete"], t["unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)


def test_an_imported_function_that_replaces_layers_is_not_followed(source):
    path, mod = source
    fwd, _bwd, _params, _shape = torch_figures(mod, "Swapped", {}, {"x": (4, 8)}, training=True)
    t = run_class(path, "Swapped", {}, {"x": (4, 8)}, True)
    assert not t["complete"] and t["flops_value"] != fwd
