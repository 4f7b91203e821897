"""`x.dtype == torch.float64` decided where the tensor's dtype is known, as Python
compares torch's dtype singletons; against numpy's scalar type (never equal to a
torch dtype) not decided here. Figures against FlopCounterMode."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")
pytest.importorskip("numpy")

SOURCE = """
import numpy as np
import torch
import torch.nn as nn


class Pick(nn.Module):
    def __init__(self, dt="float64", against="float64"):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.dt = getattr(torch, dt)
        self.against = getattr(torch, against)

    def forward(self, x):
        y = x.to(self.dt)
        if y.dtype == self.against:
            return self.lin(x)
        if y.dtype != torch.float32:
            return x * self.lin.bias
        return self.lin(self.lin(x))


class Member(nn.Module):
    def __init__(self, dt="int64", how="list"):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.dt = getattr(torch, dt)
        self.how = how

    def forward(self, x):
        y = x.to(self.dt)
        kinds = [torch.int32, torch.int64] if self.how == "list" else (torch.int32, torch.int64)
        if y.dtype in kinds:
            return self.lin(self.lin(x))
        if y.dtype not in {torch.float16, torch.bfloat16}:
            return self.lin(x)
        return x * self.lin.bias


class Numpy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        if x.double().dtype == np.float64:
            return self.lin(x)
        return x * self.lin.bias
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("dtcmp"), "dtype_modules", SOURCE)


@pytest.mark.parametrize(
    ("cls", "kw"),
    [
        ("Pick", {}),
        ("Pick", {"dt": "float32"}),
        ("Pick", {"dt": "float16", "against": "float32"}),
        ("Pick", {"dt": "float32", "against": "float32"}),
        # `t.dtype in [torch.int32, torch.int64]` (diffwave's DiffusionEmbedding):
        # Python compares each item with ==, and torch's dtypes are singletons
        ("Member", {}),
        ("Member", {"how": "tuple"}),
        ("Member", {"dt": "int32"}),
        ("Member", {"dt": "float32"}),
        ("Member", {"dt": "bfloat16", "how": "tuple"}),
    ],
)
def test_dtype_comparison_decides_the_branch(source, cls, kw):
    path, mod = source
    t = run_class(path, cls, kw, {"x": (4, 8)}, False)
    fwd, _bwd, _params, _shape = torch_figures(mod, cls, kw, {"x": (4, 8)}, training=False)
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fwd


def test_numpy_scalar_type_is_not_decided(source):
    # torch.float64 == np.float64 is False in Python: never taken as equal
    path, mod = source
    t = run_class(path, "Numpy", {}, {"x": (4, 8)}, False)
    fwd, _bwd, _params, _shape = torch_figures(mod, "Numpy", {}, {"x": (4, 8)}, training=False)
    assert fwd == 0
    assert t["flops_value"] != 2 * 4 * 8 * 8


KEYED = """
import torch
import torch.nn as nn


class Keyed(nn.Module):
    def __init__(self, names=("a", "b")):
        super().__init__()
        self.heads = nn.ModuleDict()
        self.names = list(names)
        for n in names:
            self.add(n)

    def add(self, name):
        self.heads[name] = nn.Linear(8, 8)

    def forward(self, x):
        out = x
        for name in self.names:
            if name not in self.heads.keys():
                continue
            out = self.heads[name](out).transpose(0, 1)
        return out
"""


def test_membership_in_a_container_a_files_pass_holds_in_part_is_not_decided(tmp_path):
    # peft's `if active_adapter not in self.lora_A.keys(): continue`: `check` reads
    # the forward with the ModuleDict's keys not known, so the loop body is reached
    # and its findings are reported; a target run decides it by the keys it built
    import json

    from click.testing import CliRunner

    from shapelint.cli import main

    path, mod = written_module(tmp_path, "keyed", KEYED)
    r = CliRunner().invoke(
        main, ["check", str(path), "--select", "ALL", "--format", "json", "--no-cache"]
    )
    codes = [d["code"] for d in json.loads(r.output)]
    assert "SHP401" in codes, r.output
    t = run_class(path, "Keyed", {}, {"x": (8, 8)}, False)
    fwd, _bwd, _params, _shape = torch_figures(mod, "Keyed", {}, {"x": (8, 8)}, training=False)
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fwd
