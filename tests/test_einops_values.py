"""An einops function held as a value (einops_exts' `rearrange_many = _many(rearrange)`,
whose closure calls `fn(tensor, pattern, **kwargs)`) is called
as its name is, in a target run. Figures against FlopCounterMode, forward and backward."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")
pytest.importorskip("einops")

SOURCE = """
from functools import wraps

import torch
import torch.nn as nn
from einops import rearrange, reduce

def _many(fn):
    @wraps(fn)
    def inner(tensors, pattern, **kwargs):
        # a tuple: einops_exts returns the generator itself, which the analysis
        # keeps only where it is surely walked once where it is made (one_shot.py):
        # returned, its items are not known, an honest lower bound
        return tuple(fn(tensor, pattern, **kwargs) for tensor in tensors)
    return inner

rearrange_many = _many(rearrange)

class Attention(nn.Module):
    def __init__(self, dim=16, heads=4):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = rearrange_many(qkv, "b n (h d) -> b h n d", h=self.heads)
        sim = torch.einsum("b h i d, b h j d -> b h i j", q, k)
        out = torch.einsum("b h i j, b h j d -> b h i d", sim.softmax(dim=-1), v)
        out = self.to_out(rearrange(out, "b h n d -> b n (h d)"))
        return reduce(out, "b n d -> b d", "mean")
"""

@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("einops_values"), "einops_values", SOURCE)

def test_an_einops_function_as_a_value_is_called_as_its_name(source):
    path, mod = source
    t = run_class(path, "Attention", {}, {"x": (2, 8, 16)}, True)
    fwd, bwd, params, shape = torch_figures(mod, "Attention", {}, {"x": (2, 8, 16)}, training=True)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert tuple(int(d) for d in t["output"]) == shape
