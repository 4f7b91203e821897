"""A dtype the code names that the analysis cannot read (`x.to(self.dt)` of a dt it
cannot follow) is not the run's default float: bytes built on it are not complete,
and whether autograd tracks the tensor is not known. A device (`x.device`,
`torch.device(...)`) keeps the dtype: `.to(device)` stays known. Bytes checked
against the tensors torch makes (their nbytes), FLOPs against FlopCounterMode."""

from __future__ import annotations

import pytest

from shapelint.ops import dtypes
from tests.helpers import run_class, torch_figures, written_module

SOURCE = """
import os

import torch
import torch.nn as nn


def chosen():
    # a dtype this analysis cannot decide: one of two, by the environment
    return torch.float64 if os.environ.get("SHAPELINT_NO_SUCH_VARIABLE") is None else torch.int64


class Cast(nn.Module):
    def __init__(self, known=False):
        super().__init__()
        self.dt = torch.float64 if known else chosen()

    def forward(self, x):
        y = x.to(self.dt)
        return y * 2


class Zeros(nn.Module):
    def __init__(self, known=False):
        super().__init__()
        self.dt = torch.float64 if known else chosen()

    def forward(self, x):
        return torch.zeros(x.shape, dtype=self.dt) + x


class Keyword(nn.Module):
    def __init__(self, known=False):
        super().__init__()
        self.dt = torch.float64 if known else chosen()

    def forward(self, x):
        return x.to(dtype=self.dt).exp()


class Tracked(nn.Module):
    def __init__(self, known=False):
        super().__init__()
        self.dt = torch.float64 if known else chosen()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x).to(self.dt)
        return (y @ y.t()).exp()


class Device(nn.Module):
    def __init__(self, device="cpu"):
        super().__init__()
        self.dev = torch.device(device)
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x).to(self.dev)
        z = y.to(x.device, non_blocking=True)
        w = z.to(next(self.parameters()).device)
        return (w @ w.t()).exp()
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    pytest.importorskip("torch")
    return written_module(tmp_path_factory.mktemp("dtnk"), "dtype_not_known", SOURCE)


def _torch_bytes(mod, cls: str) -> int:
    """Bytes each op of Cast / Zeros / Keyword reads and writes, from the tensors
    torch makes (the reference the known run is held to)."""
    import torch

    m = getattr(mod, cls)(known=True)
    x = torch.randn(4, 8)
    if cls == "Cast":
        y = x.to(m.dt)
        return (x.nbytes + y.nbytes) + (y.nbytes + (y * 2).nbytes)
    if cls == "Zeros":
        z = torch.zeros(x.shape, dtype=m.dt)
        return z.nbytes + (z.nbytes + x.nbytes + (z + x).nbytes)
    y = x.to(dtype=m.dt)
    return (x.nbytes + y.nbytes) + (y.nbytes + y.exp().nbytes)


@pytest.mark.parametrize("cls", ["Cast", "Zeros", "Keyword"])
def test_a_dtype_not_read_leaves_the_bytes_open(source, cls):
    path, mod = source
    known = run_class(path, cls, {"known": True}, {"x": (4, 8)}, False)
    assert known["bytes_complete"]
    assert known["bytes_value"] == _torch_bytes(mod, cls)
    t = run_class(path, cls, {}, {"x": (4, 8)}, False)
    # was: complete, with the dtype costed as the default float32 (a wrong figure)
    assert not t["bytes_complete"]
    assert t["complete"]  # FLOPs do not depend on the dtype
    assert t["flops_value"] == known["flops_value"]


def test_a_dtype_not_read_leaves_the_backward_open(source):
    # an integer dtype would leave nothing for autograd to track
    path, mod = source
    t = run_class(path, "Tracked", {}, {"x": (4, 8)}, True)
    assert t["complete"]
    assert not t["backward_complete"]
    known = run_class(path, "Tracked", {"known": True}, {"x": (4, 8)}, True)
    fwd, bwd, _params, _shape = torch_figures(mod, "Tracked", {"known": True}, {"x": (4, 8)}, True)
    assert known["backward_complete"]
    assert (known["flops_value"], known["flops_backward_value"]) == (fwd, bwd)


def test_a_device_keeps_the_dtype(source):
    path, mod = source
    t = run_class(path, "Device", {}, {"x": (4, 8)}, True)
    fwd, bwd, _params, _shape = torch_figures(mod, "Device", {}, {"x": (4, 8)}, True)
    assert t["complete"] and t["bytes_complete"] and t["backward_complete"]
    assert (t["flops_value"], t["flops_backward_value"]) == (fwd, bwd)


def test_the_vocabulary_keeps_a_dtype_not_known_apart_from_the_default():
    assert dtypes.dtype_bytes(None) == 4
    assert dtypes.dtype_bytes(dtypes.NOT_KNOWN) is None
    assert dtypes.result_type([dtypes.NOT_KNOWN], [], ["float"]) == dtypes.NOT_KNOWN
    assert dtypes.result_type(["float16"], [dtypes.NOT_KNOWN], []) == dtypes.NOT_KNOWN
    # None, the run's default float: decided where every default gives one answer
    assert dtypes.result_type([None, "float64"], [], []) == "float64"  # was None: float32
    assert dtypes.result_type(["float16"], [None], []) == "float16"  # a 0-dim one ranks lower
    assert dtypes.result_type([None, "int64"], [], []) is None  # the default itself
    assert dtypes.promote_all(["float32", dtypes.NOT_KNOWN]) == dtypes.NOT_KNOWN
    assert dtypes.tensor_category(None) == 2
    assert dtypes.tensor_category("int32") == 1
    assert dtypes.tensor_category(dtypes.NOT_KNOWN) is None
    assert dtypes.to_complex(dtypes.NOT_KNOWN) == dtypes.NOT_KNOWN
