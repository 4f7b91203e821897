"""torch's reparametrizations of a layer's weight (issue 24; audio codecs wrap every
convolution in `weight_norm`): the forward, its FLOPs and backward FLOPs, the
parameters and buffers of the layer they return, and the bytes the forward saves
for backward, judged by torch: FlopCounterMode over `m(x)` and
`m(x).sum().backward()`, `parameters()` and `buffers()` of the module built the
same way, the storages `saved_tensors_hooks` sees (parameters, buffers and the
input left out, as benchmarks/modules_differential.py measures them)."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
import warnings

import pytest
from click.testing import CliRunner

from shapelint.cli import main

torch = pytest.importorskip("torch")

LAYERS = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrizations, remove_weight_norm, spectral_norm, weight_norm


class Wrapped(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(c, 2 * c, 3))

    def forward(self, x):
        return self.conv(x)


class AlongInputs(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.utils.weight_norm(nn.Conv1d(c, c, 3, padding=1), dim=1)

    def forward(self, x):
        # twice: the weight is recomputed, and its norms saved, at each call
        return self.conv(self.conv(x))


class LastAxis(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(c, c, 3, padding=1), dim=2)

    def forward(self, x):
        return self.conv(self.conv(x))


class WholeNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.proj = weight_norm(nn.Linear(16, c), dim=None)

    def forward(self, x):
        return self.proj(x)


class InPlace(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 3)
        weight_norm(self.conv)
        conv = nn.Conv1d(c, c, 1)
        weight_norm(conv, name="weight")
        self.convs = nn.ModuleList([conv])

    def forward(self, x):
        for layer in self.convs:
            x = layer(x)
        return self.conv(x)


class Parametrized(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = parametrizations.weight_norm(nn.Conv1d(c, 2 * c, 3))
        self.up = parametrizations.spectral_norm(nn.Conv1d(2 * c, c, 1))

    def forward(self, x):
        return self.up(self.conv(x))


class Spectral(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.up = spectral_norm(nn.ConvTranspose1d(c, 3, 4, stride=2))
        self.proj = spectral_norm(nn.Linear(16, 5))

    def forward(self, x):
        return self.up(x), self.proj(x)


class Removed(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(c, 2 * c, 3))
        remove_weight_norm(self.conv)

    def forward(self, x):
        return self.conv(x)



class TwoLinear(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a = weight_norm(nn.Linear(16, 32))
        self.b = parametrizations.weight_norm(nn.Linear(32, 8))

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class Transposed(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.up = weight_norm(nn.ConvTranspose1d(c, 2 * c, 4, stride=2))
        self.seq = nn.Sequential(
            weight_norm(nn.Conv1d(2 * c, c, 3)), nn.GELU(), weight_norm(nn.Conv1d(c, c, 1), dim=2)
        )

    def forward(self, x):
        return self.seq(self.up(x))


class Conv2dList(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.convs = nn.ModuleList(
            [
                weight_norm(nn.Conv2d(1, 4, (3, 1), (2, 1), padding=(1, 0))),
                weight_norm(nn.Conv2d(4, 8, (3, 1), (2, 1), padding=(1, 0))),
            ]
        )

    def forward(self, x):
        x = x.unsqueeze(1)
        for l in self.convs:
            x = F.leaky_relu(l(x), 0.1)
        return x


class Unbiased(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = parametrizations.weight_norm(nn.Conv1d(c, c, 1, bias=False))

    def forward(self, x):
        return x + torch.ones_like(x[:, :1]) * self.conv(x)


class UnbiasedSpectral(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.proj = parametrizations.spectral_norm(nn.Linear(16, 5, bias=False))

    def forward(self, x):
        return self.proj(x)


class ChosenNorm(nn.Module):
    def __init__(self, c, spectral=False):
        super().__init__()
        # the function as a value, chosen by a flag, called through a local name
        norm_f = weight_norm if spectral is False else spectral_norm
        self.convs = nn.ModuleList([norm_f(nn.Conv1d(c, 2 * c, 3)), norm_f(nn.Conv1d(2 * c, c, 1))])
        make = nn.utils.spectral_norm
        self.post = make(nn.Conv1d(c, 1, 3, padding=1))

    def forward(self, x):
        for layer in self.convs:
            x = F.leaky_relu(layer(x), 0.1)
        return self.post(x)


def wrap(m):
    weight_norm(m)


class InHelper(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 3)
        wrap(self.conv)  # the layer the module being built holds, changed in place
        conv = nn.Conv1d(c, c, 1)
        wrap(conv)  # the caller's local, changed in place
        self.post = conv

    def forward(self, x):
        return self.post(self.conv(x))


class Frozen(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(c, c, 3))
        self.conv.requires_grad_(False)
        self.lin = nn.Linear(14, 3)

    def forward(self, x):
        return self.lin(self.conv(x))
"""

TARGETS = [
    "Wrapped",
    "AlongInputs",
    "LastAxis",
    "WholeNorm",
    "InPlace",
    "Parametrized",
    "Spectral",
    "Removed",
    "TwoLinear",  # the second's input requires grad: the layer saves its new weight
    "Transposed",  # in a Sequential, a transposed convolution, dim=2 its last axis
    "Conv2dList",  # a ModuleList walked in a loop
    "Frozen",  # requires_grad_(False): nothing recomputed is saved
    # no bias: the recomputed weight, no Parameter of the layer's own, is the one
    # operand of its call that requires grad (main: a backward of 0)
    "Unbiased",
    "UnbiasedSpectral",
    # weight_norm and spectral_norm read as values (main: `layer`, `self.post` not modelled)
    "ChosenNorm",
    # weight_norm in a helper handed the layer (main: the plain layers' 72 params)
    "InHelper",
]


def load_module(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return mod


def saved_bytes(m, x) -> int:
    """The bytes of what m's forward on x saves for backward, as torch's saved-tensor
    hooks see them: each storage once, its Parameters, buffers and input left out."""
    held = {t.untyped_storage().data_ptr() for t in [*m.parameters(), *m.buffers(), x]}
    seen: dict[int, int] = {}

    def pack(t):
        if t.untyped_storage().data_ptr() not in held:
            seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        m(x)
    return sum(seen.values())


def torch_truth(path, target: str, shape, train: bool = True) -> dict:
    """The figures torch gives for target(4) on a random input of that shape."""
    from torch.utils.flop_counter import FlopCounterMode

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch's old weight_norm
        m = getattr(load_module(path), target)(4).train(train)
    x = torch.randn(*shape)
    with FlopCounterMode(display=False) as fwd:
        out = m(x)
    with FlopCounterMode(display=False) as both:
        out = m(x)
        outs = out if isinstance(out, tuple) else (out,)
        sum(o.sum() for o in outs).backward()
    return {
        "saved": saved_bytes(m, x),
        "flops": fwd.get_total_flops(),
        "backward": both.get_total_flops() - fwd.get_total_flops(),
        "params": sum(p.numel() for p in m.parameters()),
        "trainable": sum(p.numel() for p in m.parameters() if p.requires_grad),
        "buffers": sum(b.numel() for b in m.buffers()),
        "output": [list(o.shape) for o in outs][0],
    }


def static_figures(path, target: str, shape, train: bool = True, arg: str = "x") -> tuple:
    """The same figures as `shapelint cost` gives them, and its JSON target."""
    dims = ",".join(map(str, shape))
    args = ["cost", "--no-cache", f"{path}::{target}", "--init", "c=4", "--input", f"{arg}={dims}"]
    args.append("--train" if train else "--eval")
    r = CliRunner().invoke(main, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    t = json.loads(r.output)["target"]
    return {
        "saved": t["activation_bytes_value"],
        "flops": t["flops_value"],
        "backward": t["flops_backward_value"],
        "params": t["params_value"],
        "trainable": t["trainable_params_value"],
        "buffers": t["buffers_value"],
        "output": [int(d) for d in t["output"]] if t["output"] else None,
    }, t


@pytest.mark.parametrize("target", TARGETS)
def test_a_reparametrized_layer_costs_and_holds_what_torch_says(tmp_path, target):
    """main: `self.conv: not modelled`, every figure `?`."""
    p = tmp_path / "reparam.py"
    p.write_text(textwrap.dedent(LAYERS))
    shape = (2, 4, 16)
    got, t = static_figures(p, target, shape)
    truth = torch_truth(p, target, shape)
    if target in UNSAVED:
        # what the recomputation saves is not followed: no complete figure
        assert not t["activation_complete"] and got["saved"] is None
        got["saved"] = truth["saved"]
    assert got == truth


# Over the whole tensor (dim=None), along a middle axis (a transposed copy of v) and
# under spectral_norm, torch saves intermediate results of the recomputation (norms,
# quotients, power-iteration vectors) that are not followed.
UNSAVED = {
    "AlongInputs",
    "WholeNorm",
    "Parametrized",
    "Spectral",
    "UnbiasedSpectral",
    "ChosenNorm",
}


# register_parametrization, and spectral_norm of the module being built, are
# tests/test_parametrize.py's: followed, held to torch.
