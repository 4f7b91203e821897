"""A Parameter (or buffer) stored on the paths of a branch the analysis cannot
decide: after the paths meet, the attribute is still a Parameter where both paths
made one (its sizes joined: the count not known where they differ), and not known
at all where one path made a Parameter and the other a plain tensor. It was a
plain tensor of joined sizes, which registers nothing: a complete parameter count
that left it out, below torch's. Judged against torch's parameters() and buffers()."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import os

import torch
import torch.nn as nn


class Sizes(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        if os.environ.get("SHAPELINT_NEVER_SET"):
            self.scale = nn.Parameter(torch.ones(2 * d))
        else:
            self.scale = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return self.lin(x)


class Handler(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        try:
            import json  # noqa: F401

            self.scale = nn.Parameter(torch.ones(d))
        except ImportError:
            self.scale = nn.Parameter(torch.ones(2 * d))

    def forward(self, x):
        return self.lin(x)


class Kinds(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        if os.environ.get("SHAPELINT_NEVER_SET"):
            self.register_buffer("scale", torch.ones(d))
        else:
            self.scale = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return self.lin(x)


class Same(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        if os.environ.get("SHAPELINT_NEVER_SET"):
            self.scale = nn.Parameter(torch.zeros(d))
        else:
            self.scale = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return self.lin(x) * self.scale
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("parameter_joins"), "parameter_joins", SOURCE)


@pytest.mark.parametrize("name", ["Sizes", "Handler", "Kinds"])
def test_a_count_is_never_below_torch(source, name):
    path, mod = source
    t = run_class(path, name, {}, {"x": (2, 8)}, True)
    m = getattr(mod, name)()
    params = sum(p.numel() for p in m.parameters())
    buffers = sum(b.numel() for b in m.buffers())
    assert t["params_value"] in (None, params)
    assert t["buffers_value"] in (None, buffers)


def test_a_parameter_of_one_size_on_both_paths_is_counted(source):
    """A guard: the join keeps what both paths agree on (passes on main too)."""
    path, mod = source
    t = run_class(path, "Same", {}, {"x": (2, 8)}, True)
    fwd, bwd, params, _ = torch_figures(mod, "Same", {}, {"x": (2, 8)}, training=True)
    assert t["complete"], t["unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
