"""`torch.nn.utils.parametrize.register_parametrization` followed as torch runs it
(issues 24/26; deel-torchlip's Spectral*/Frobenius* layers, neural-ssm's TLIP):
each read of the weight runs the parametrization's forward on the original, so
FLOPs, backward FLOPs, parameters (the original under `parametrizations.weight`),
buffers (the steps' own), the output and the bytes saved for backward are held
to torch: FlopCounterMode over `m(x)` and `m(x).sum().backward()`, `parameters()`,
`buffers()`, the storages `saved_tensors_hooks` sees, in train and eval mode."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from shapelint.cli import main

torch = pytest.importorskip("torch")

from tests.test_reparametrize import load_module, static_figures, torch_truth  # noqa: E402

LAYERS = """
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils.parametrizations import spectral_norm


class Cached(nn.Module):
    # deel-torchlip's Björck normalization: in eval mode the parametrization returns
    # a buffer, so the layer's weight needs no gradient; in train mode it stores
    # the new weight on itself (run once at registration by torch's check)
    def __init__(self, weight):
        super().__init__()
        self.register_buffer("w", weight.data)

    def forward(self, weight):
        if self.training:
            w = weight * 2
            self.w = w.data
            return w
        return self.w


class Orthogonalized(nn.Module):
    # a parametrization whose forward runs products torch's counter counts
    def forward(self, weight):
        return weight @ weight.t() @ weight


class Mixed(nn.Module):
    # a product the counter counts, on a vector
    def forward(self, v):
        return (v[None] @ torch.ones(v.shape[0], v.shape[0]))[0]


class Scaled(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = nn.Parameter(torch.ones(1) * k)

    def forward(self, weight):
        return self.k * weight


def scaled(module, name="weight", k=2.0):
    parametrize.register_parametrization(module, name, Scaled(k))
    return module


class Held(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 3)
        parametrize.register_parametrization(self.conv, "weight", Cached(self.conv.weight))

    def forward(self, x):
        return self.conv(x)


class Own(nn.Conv1d):
    def __init__(self, c):
        super().__init__(c, c, 3)
        parametrize.register_parametrization(self, "weight", Cached(self.weight))


class OwnLinear(nn.Linear):
    def __init__(self, c):
        super().__init__(16, c)
        parametrize.register_parametrization(self, "weight", Orthogonalized(), unsafe=False)


class OwnSpectral(nn.Conv1d):
    def __init__(self, c):
        super().__init__(c, c, 3)
        spectral_norm(self, name="weight")


class Chain(nn.Linear):
    # torchlip's layers: spectral_norm, then a step that reads the weight back
    # through getattr (the whole list run), then one with a Parameter of its own
    def __init__(self, c):
        super().__init__(16, c)
        spectral_norm(self)
        parametrize.register_parametrization(self, "weight", Cached(getattr(self, "weight")))
        scaled(self, k=0.5)


class ReadTwice(nn.Linear):
    def __init__(self, c):
        super().__init__(16, c, bias=False)
        parametrize.register_parametrization(self, "weight", Orthogonalized())
        parametrize.register_parametrization(self, "weight", Orthogonalized())

    def forward(self, x):
        # each read runs the list again, as torch's property does
        return x @ self.weight.t() + x @ self.weight.t()


class HeldBias(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.proj = nn.Linear(16, c)
        scaled(self.proj, "bias")
        self.seq = nn.Sequential(scaled(nn.Linear(c, c)), nn.ReLU())

    def forward(self, x):
        return self.seq(self.proj(x))


class Helped(nn.Module):
    # the helper changes the layer in place, held by the module being built and by
    # the caller's local
    def __init__(self, c):
        super().__init__()
        self.proj = nn.Linear(16, c)
        scaled(self.proj)
        lin = nn.Linear(c, c)
        scaled(lin)
        self.out = lin

    def forward(self, x):
        return self.out(self.proj(x))


class HeldNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = scaled(nn.LayerNorm(16))
        parametrize.register_parametrization(self.norm, "bias", Mixed())

    def forward(self, x):
        return self.norm(x)
"""

TARGETS = [
    "Held",
    "Own",
    "OwnLinear",
    "OwnSpectral",
    "Chain",
    "ReadTwice",
    "HeldBias",
    "HeldNorm",
    "Helped",
]
# spectral_norm's recomputation saves what is not followed (reparametrize.SAVED_WHY)
UNSAVED = {"OwnSpectral", "Chain"}


_ARGS_X = ("Held", "ReadTwice", "HeldBias", "HeldNorm", "Helped")


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_parametrized_weight_costs_and_holds_what_torch_says(tmp_path, target, train):
    """main: every figure `?` (`its weight is recomputed by a parametrization not
    followed`)."""
    p = tmp_path / "parametrized.py"
    p.write_text(textwrap.dedent(LAYERS))
    shape = (2, 4, 16)
    arg = "x" if target in _ARGS_X else "input"
    got, t = static_figures(p, target, shape, train, arg)
    truth = torch_truth(p, target, shape, train)
    assert t["complete"] and t["backward_complete"], t["unknown"]
    if target in UNSAVED:
        assert not t["activation_complete"] and got["saved"] is None
        got["saved"] = truth["saved"]
    assert got == truth


NOT_MODELLED = """
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize


class Grow(nn.Module):
    # a result of another shape: torch refuses it at registration (unsafe=False)
    def forward(self, weight):
        return torch.cat([weight, weight])


class Mirror(nn.Module):
    def forward(self, weight):
        return weight * 2

    def right_inverse(self, weight):
        # changes the original at registration
        return weight / 2


class Grown(nn.Linear):
    def __init__(self, c):
        super().__init__(16, c)
        parametrize.register_parametrization(self, "weight", Grow(), unsafe=True)


class Inverted(nn.Linear):
    def __init__(self, c):
        super().__init__(16, c)
        parametrize.register_parametrization(self, "weight", Mirror())


class Recurrent(nn.Module):
    # a layer whose forward reads its weights through a flat list, not once each
    def __init__(self, c):
        super().__init__()
        self.rnn = nn.GRU(16, c, batch_first=True)
        parametrize.register_parametrization(self.rnn, "weight_hh_l0", Mirror())

    def forward(self, x):
        return self.rnn(x)[0]


class Attn(nn.Module):
    # a layer the stub holds no module for: the change is not placed
    def __init__(self, c):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
        parametrize.register_parametrization(self.attn.out_proj, "weight", Mirror())

    def forward(self, x):
        return self.attn(x, x, x)[0]


class Squared(nn.Module):
    def forward(self, weight):
        return weight @ weight.t() @ weight


class UnderCache(nn.Linear):
    # torch computes the weight once under cached(); a run of the list at each read
    # would count it twice
    def __init__(self, c):
        super().__init__(16, 16)
        parametrize.register_parametrization(self, "weight", Squared())

    def forward(self, x):
        with parametrize.cached():
            return x @ self.weight @ self.weight


class Refused(nn.Linear):
    def __init__(self, c):
        super().__init__(16, c)
        parametrize.register_parametrization(self, "weight", Grow())
"""


@pytest.mark.parametrize("target", ["Grown", "Inverted", "Recurrent", "Attn", "UnderCache"])
def test_a_parametrization_not_modelled_leaves_the_figures_not_known(tmp_path, target):
    """unsafe=True (no check at registration: a list of any shape), a right_inverse
    (the original changed at registration), a layer whose forward does not read the
    weight once: never the plain layer's figures."""
    p = tmp_path / "notmodelled.py"
    p.write_text(textwrap.dedent(NOT_MODELLED))
    m = getattr(load_module(p), target)(4)
    assert any(torch.nn.utils.parametrize.is_parametrized(c) for c in m.modules())
    arg = "x" if target in ("Recurrent", "Attn", "UnderCache") else "input"
    args = ["cost", "--no-cache", f"{p}::{target}", "--init", "c=4", "--input", f"{arg}=2,4,16"]
    r = CliRunner().invoke(main, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    t = json.loads(r.output)["target"]
    assert not t["complete"]
    # under cached() the module is the one torch builds: its parameters are known
    assert (t["params"] == "272") if target == "UnderCache" else (t["params"] == "?")


def test_a_parametrization_torch_refuses_is_no_figure(tmp_path):
    """A step whose result has another shape than the weight: torch raises
    ValueError at registration; no figure is printed for the plain layer."""
    p = tmp_path / "notmodelled.py"
    p.write_text(textwrap.dedent(NOT_MODELLED))
    with pytest.raises(ValueError):
        load_module(p).Refused(4)
    args = ["cost", "--no-cache", f"{p}::Refused", "--init", "c=4", "--input", "input=2,4,16"]
    r = CliRunner().invoke(main, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    t = json.loads(r.output)["target"]
    assert not t["complete"] and t["params"] == "?"
