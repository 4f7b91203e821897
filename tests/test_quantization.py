"""Eager quantization's float helpers in a model built in Python (stubs/quantization.stub):
QuantStub and DeQuantStub pass their input through, FloatFunctional's methods are
the torch ops they name. Judged by FlopCounterMode (forward, and backward under
`out.sum().backward()`), `parameters()` and `buffers()` on the same module."""

from __future__ import annotations

import importlib.util

import pytest

from shapelint.cli.options import analysis_options, load_config
from shapelint.cost.target import run_target
from shapelint.notation.target import Target
from tests.test_modules import write

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

CODE = """
import torch
import torch.nn as nn
from torch.ao.quantization import DeQuantStub
from torch.quantization import QuantStub


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.quant = QuantStub()
        self.dequant = DeQuantStub()
        self.a = nn.Conv2d(c, c, 3, padding=1)
        self.b = nn.Conv2d(c, 2 * c, 1)
        self.skip = nn.quantized.FloatFunctional()
        self.gate = torch.ao.nn.quantized.FloatFunctional()
        self.join = nn.quantized.FloatFunctional()

    def forward(self, x):
        x = self.quant(x)
        y = self.skip.add_relu(self.a(x), x)
        y = self.gate.mul(y, self.skip.add_scalar(y, 1.0))
        z = self.join.cat([self.b(y), self.gate.mul_scalar(y, 0.5)], 1)
        return self.dequant(self.skip.add(z, z))
"""


def test_quantization_helpers_cost_as_the_float_model_runs(tmp_path):
    path = write(tmp_path, "qblock.py", CODE)
    options = analysis_options(load_config([path], None), dtype=None, dims={})
    t = run_target(Target(str(path), "Block"), ["c=4"], ["x=2,4,8,8"], {}, options)
    spec = importlib.util.spec_from_file_location("qblock", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    m = mod.Block(4)
    with FlopCounterMode(display=False) as fc:
        out = m(torch.randn(2, 4, 8, 8))
    forward = fc.get_total_flops()
    with FlopCounterMode(display=False) as fc:
        out.sum().backward()
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == forward
    assert t["backward_complete"], t["backward_unknown"]
    assert t["flops_backward_value"] == fc.get_total_flops()
    assert t["output"] == [str(n) for n in out.shape]
    assert t["params_value"] == sum(p.numel() for p in m.parameters())
    assert t["buffers_value"] == sum(b.numel() for b in m.buffers())
