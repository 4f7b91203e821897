"""A function or class of another file read as a module's attribute and handed on as
a value (`apply_all(x, F.hflip)`, torchsr's transforms over torchvision's functional
module; `getattr(litgpt.model, config.mlp_class_name)`): calling it runs its body where
it is defined, as `from m import f` then `f` does. Figures against FlopCounterMode,
forward and backward."""

from __future__ import annotations

import sys
import textwrap

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

OPS = """
import torch
import torch.nn as nn


class Wide(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, 3 * d)

    def forward(self, x):
        return self.lin(x)


def project(x, w):
    return x @ w


def flipped(x):
    return torch.rot90(x, 1, (-2, -1))
"""

SOURCE = """
import torch
import torch.nn as nn

import attr_value_ops as F


def apply_all(x, func, *more):
    if isinstance(x, (list, tuple)):
        return [func(t, *more) for t in x]
    return func(x, *more)


class Transform(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, 2 * d))

    def forward(self, x):
        y = apply_all(x, F.project, self.w)
        return apply_all(y.unsqueeze(0), F.flipped)


class Named(nn.Module):
    def __init__(self, d=8, kind="Wide"):
        super().__init__()
        self.a = getattr(F, kind)(d)
        self.b = F.Wide(3 * d)

    def forward(self, x):
        return self.b(self.a(x))
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    d = tmp_path_factory.mktemp("attr_values")
    (d / "attr_value_ops.py").write_text(textwrap.dedent(OPS))
    sys.path.insert(0, str(d))
    try:
        yield written_module(d, "attr_value_model", SOURCE)
    finally:
        sys.path.remove(str(d))
        sys.modules.pop("attr_value_ops", None)


def _agrees_with_torch(source, cls: str) -> None:
    path, mod = source
    t = run_class(path, cls, {}, {"x": (4, 8)}, True)
    fwd, bwd, params, shape = torch_figures(mod, cls, {}, {"x": (4, 8)}, training=True)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert tuple(int(d) for d in t["output"]) == shape


def test_a_function_read_off_a_module_runs_where_it_is_called(source):
    _agrees_with_torch(source, "Transform")


def test_a_class_read_off_a_module_builds_where_it_is_called(source):
    """`F.Wide(d)`, `getattr(F, kind)(d)`: the class, as `from m import Wide` gives it
    (main: each a module not modelled, the figure unknown)."""
    _agrees_with_torch(source, "Named")
