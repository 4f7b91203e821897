"""Values Python and torch give that sizes and shapes depend on, each against torch:
`torch.as_tensor(t, dtype=..., device=...)` of a tensor (the tensor itself, or its
cast: differentiable, the same storage where nothing changes), `torch.tensor(t)` of
one (a detached copy), `np.prod(n)` of one int (that int, as numpy's int), and
`isinstance(v, A | B)` (a union reads as the tuple of its classes), `type(v) is C`
of a builtin class (an int's type is never tuple, a bool's is bool), `math.gcd`,
`lcm`, `isqrt`, `comb` of known ints, `t.tolist()` of a tensor of known elements
(those ints, in nested lists; a bool tensor's flags, whose summary pass meets a call
not followed), and an RNN's
`flatten_parameters()` (a no-op but on CUDA, where it packs the weights in place);
a target whose forward is a torch layer's keeps the defaults of the inputs not given. FLOPs forward
and backward by FlopCounterMode, parameters by torch, activation bytes by
saved_tensors_hooks."""

from __future__ import annotations

import pytest

from benchmarks.modules_differential import saved_bytes
from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")
pytest.importorskip("numpy")

SOURCE = """
import math
import warnings

import numpy as np
import torch
import torch.nn as nn


class AsTensor(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, 4)

    def forward(self, x):
        device = next(self.parameters()).device
        x = torch.as_tensor(x, device=device, dtype=torch.float32)
        y = torch.as_tensor(self.a(x))
        return self.b(y.relu())


class Copied(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, 4)

    def forward(self, x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = torch.tensor(self.a(x))  # a copy autograd does not track
        return self.b(y) * self.a(x).sum()


class Prod(nn.Module):
    def __init__(self, state_shape=8, action_shape=0, hidden=16):
        super().__init__()
        d = int(np.prod(state_shape))
        out = int(np.prod(action_shape))
        layers = [nn.Linear(d, hidden), nn.ReLU()]
        if out > 0:
            layers.append(nn.Linear(hidden, out))
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x.flatten(1))


class Packed(nn.Module):
    def __init__(self, d=8, lstm=False):
        super().__init__()
        if lstm:
            self.rnn = nn.LSTM(d, d, batch_first=True)
        else:
            self.rnn = nn.GRU(d, d, batch_first=True)
        self.out = nn.Linear(d, 4)

    def forward(self, x):
        self.rnn.flatten_parameters()  # on CPU it does nothing
        y, _ = self.rnn(x)
        return self.out(y[:, -1])


class TypeIs(nn.Module):
    def __init__(self, heads=2, depth=3, gated=True, d=8):
        super().__init__()
        if type(heads) is not tuple:
            heads = tuple([heads] * depth)
        self.layers = nn.ModuleList([nn.Linear(d, d * h // h) for h in heads])
        self.gated = type(gated) is bool and gated

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * x.sigmoid() if self.gated else x


class Upsample(nn.ConvTranspose1d):
    def __init__(self, *args, **kwargs):
        kwargs.pop("cumulative_delay", 0)
        super().__init__(*args, **kwargs)


class Ratio(nn.Module):
    def __init__(self, old=16, new=12):
        super().__init__()
        g = math.gcd(old, new)
        self.old, self.new = old // g, new // g
        width = math.lcm(self.old, self.new) + math.isqrt(old) + math.comb(4, 2)
        self.lin = nn.Linear(width, 1 if self.old == self.new else width)

    def forward(self, x):
        return self.lin(x)


class Listed(nn.Module):
    # a tensor's known elements read back as Python ints (asteroid's global layer
    # norm: `dims = torch.arange(1, len(x.shape)).tolist()`, then a mean over them)
    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        dims = torch.arange(1, len(x.shape)).tolist()
        rows = torch.tensor([[0, 1], [3, 0]]).tolist()
        return self.lin((x - x.mean(dim=dims, keepdim=True)) * rows[1][0])


class Initted(nn.Module):
    # flags kept as tensors, `torch.tensor(not kmeans_init)` a bool one, read by a
    # helper whose summary (a pass over parameters not known, which runs in no
    # target) meets a call the analysis does not follow: the run still knows the
    # flags (vector-quantize's Codebook, `if self.initted: return` before k-means)
    def __init__(self, kmeans_init=False, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.register_buffer("initted", torch.tensor(not kmeans_init))
        self.register_buffer("count", torch.tensor(0 if kmeans_init else 1))

    def init_(self, x):
        if self.initted and self.count:
            return x
        eval("0")
        return self.lin(x)

    def forward(self, x):
        return self.lin(self.init_(x))


class Union(nn.Module):
    def __init__(self, scale=2, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.scale = scale

    def forward(self, x):
        if isinstance(self.scale, int | float):
            return self.lin(x) * self.scale
        return self.lin(self.lin(x))
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("tensor_data"), "tensor_data_values", SOURCE)


CASES = [
    ("AsTensor", {}, (2, 8)),
    ("Copied", {}, (2, 8)),
    ("Prod", {}, (2, 8)),
    ("Prod", {"state_shape": 8, "action_shape": 3}, (2, 8)),
    ("Packed", {}, (2, 3, 8)),
    ("Packed", {"lstm": True}, (2, 3, 8)),
    ("TypeIs", {}, (2, 8)),
    ("TypeIs", {"heads": 4, "gated": 1}, (2, 8)),
    ("Ratio", {"old": 16, "new": 16}, (2, 11)),
    ("Ratio", {}, (2, 22)),
    ("Listed", {}, (2, 3, 8)),
    ("Initted", {}, (2, 8)),
    ("Initted", {"kmeans_init": True}, (2, 8)),
    ("Union", {}, (2, 8)),
    ("Union", {"scale": 0.5}, (2, 8)),
]


@pytest.mark.parametrize(("name", "kw", "shape"), CASES)
def test_forward_backward_and_params_as_torch(source, name, kw, shape):
    path, mod = source
    t = run_class(path, name, kw, {"x": shape}, True)
    fwd, bwd, params, out = torch_figures(mod, name, kw, {"x": shape}, training=True)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert tuple(int(d) for d in t["output"]) == out


@pytest.mark.parametrize("name", ["AsTensor", "Copied"])
def test_activation_bytes_as_saved_tensors(source, name):
    path, mod = source
    t = run_class(path, name, {}, {"x": (2, 8)}, True)
    torch.manual_seed(0)
    m = getattr(mod, name)().train(True)
    assert t["activation_complete"], t["activation_unknown"]
    assert t["activation_bytes_value"] == saved_bytes(m, torch.randn(2, 8))


def test_type_of_a_tuple_is_not_guessed(source):
    """`type(heads) is not tuple` of a tuple given: the analysis holds no answer (a
    torch.Size or a namedtuple is a tuple too, of another type); never a wrong figure."""
    path, mod = source
    kw = {"heads": (1, 2)}
    t = run_class(path, "TypeIs", kw, {"x": (2, 8)}, True)
    fwd, _, _, _ = torch_figures(mod, "TypeIs", kw, {"x": (2, 8)}, training=True)
    assert t["complete"] is False or t["flops_value"] == fwd


def test_a_torch_forward_input_not_given_keeps_its_default(source):
    """A target whose forward is nn.ConvTranspose1d's, `forward(input, output_size=None)`,
    given input alone: output_size is None, as Python binds it."""
    path, mod = source
    kw = {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "stride": 2}
    t = run_class(path, "Upsample", kw, {"input": (2, 4, 8)}, True)
    fwd, bwd, params, out = torch_figures(mod, "Upsample", kw, {"input": (2, 4, 8)}, training=True)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert tuple(int(d) for d in t["output"]) == out
