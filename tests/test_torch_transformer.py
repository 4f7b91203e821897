"""torch's transformer layers read from their source (analysis/torch_source.py):
nn.TransformerEncoderLayer / DecoderLayer / Encoder / Decoder / Transformer and a
user subclass of one, against torch: FlopCounterMode forward and backward (with the
kernels its counter registers as 0 counted as shapelint counts them:
runtime.gap_formulas), `sum(p.numel())`, and the output's shape."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from shapelint.runtime import gap_formulas  # noqa: E402

SOURCE = """
import torch
import torch.nn as nn
import torch.nn.functional as F


def _act(name):
    # a string, a function, or a module: torch's layer takes any callable
    return {"silu": F.silu, "module": nn.GELU()}.get(name, name)


class Enc(nn.Module):
    def __init__(self, d=32, h=4, ff=48, nf=False, act="relu", bf=True):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d, h, ff, dropout=0.0, activation=_act(act),
                                                batch_first=bf, norm_first=nf)

    def forward(self, x):
        return self.layer(x)


class Dec(nn.Module):
    def __init__(self, d=32, h=4, ff=48, nf=False, bf=False):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(d, h, ff, dropout=0.0, batch_first=bf,
                                                norm_first=nf, activation="gelu")

    def forward(self, x, mem):
        return self.layer(x, mem)


class Stack(nn.Module):
    def __init__(self, d=32, h=4, n=3, bf=True):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d, h, 2 * d, dropout=0.0, batch_first=bf)
        self.enc = nn.TransformerEncoder(layer, n, norm=nn.LayerNorm(d),
                                         enable_nested_tensor=False)

    def forward(self, x):
        return self.enc(x)


class DecStack(nn.Module):
    def __init__(self, d=32, h=4, n=2):
        super().__init__()
        layer = nn.TransformerDecoderLayer(d, h, 2 * d, dropout=0.0)
        self.dec = nn.TransformerDecoder(layer, n)

    def forward(self, x, mem):
        return self.dec(x, mem)


class Full(nn.Module):
    def __init__(self, d=32, h=4, bf=False):
        super().__init__()
        self.t = nn.Transformer(d, h, 2, 1, 40, dropout=0.0, batch_first=bf)

    def forward(self, src, tgt):
        return self.t(src, tgt)


class Padded(nn.Module):
    # a padding mask: in eval, with no weight requiring grad, torch's encoder runs
    # the nested-tensor path, whose cost depends on the mask's values
    def __init__(self, d=32, frozen=False):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d, 4, 64, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        if frozen:
            self.enc.requires_grad_(False)

    def forward(self, x):
        pad = torch.zeros(x.shape[0], x.shape[1], dtype=torch.bool)
        return self.enc(x, src_key_padding_mask=pad)


class ReadsNorm(nn.TransformerEncoderLayer):
    # a subclass that overrides forward and reads the base's submodules
    def forward(self, src):
        x = self.norm1(src)
        x = src + self._sa_block(x, None, None)
        return x + self.linear2(self.activation(self.linear1(self.norm2(x))))


class Sub(nn.Module):
    def __init__(self, d=32, h=4):
        super().__init__()
        self.layer = ReadsNorm(d, h, 3 * d, dropout=0.0, batch_first=True)
        self.head = nn.Linear(d, 5)

    def forward(self, x):
        return self.head(self.layer(x))


class OwnBlock(nn.TransformerEncoderLayer):
    # a subclass that overrides one helper and keeps torch's forward
    def _ff_block(self, x):
        return self.linear2(torch.tanh(self.linear1(x)))


class Over(nn.Module):
    def __init__(self, d=32, h=4):
        super().__init__()
        self.layer = OwnBlock(d, h, 64, dropout=0.0, norm_first=True)

    def forward(self, x):
        return self.layer(x)
"""

# (class, constructor keywords, input shapes)
CASES = [
    ("Enc", {}, {"x": (2, 10, 32)}),
    ("Enc", {"nf": True, "act": "gelu"}, {"x": (2, 10, 32)}),
    ("Enc", {"bf": False, "act": "silu"}, {"x": (10, 2, 32)}),
    ("Enc", {"act": "module"}, {"x": (2, 10, 32)}),
    ("Dec", {}, {"x": (7, 2, 32), "mem": (11, 2, 32)}),
    ("Dec", {"nf": True, "bf": True}, {"x": (2, 7, 32), "mem": (2, 11, 32)}),
    ("Stack", {}, {"x": (2, 9, 32)}),
    ("DecStack", {}, {"x": (7, 2, 32), "mem": (5, 2, 32)}),
    ("Full", {}, {"src": (9, 2, 32), "tgt": (6, 2, 32)}),
    ("Sub", {}, {"x": (2, 10, 32)}),
    ("Over", {}, {"x": (10, 2, 32)}),
]


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("transformer"), "transformer_modules", SOURCE)


def _static(path, name, kw, inputs, training):
    return run_class(path, name, kw, inputs, training)


def _torch(mod, name, kw, inputs, training):
    return torch_figures(mod, name, kw, inputs, training, gap_formulas())


@pytest.mark.parametrize(("name", "kw", "inputs"), CASES)
def test_figures_equal_torch(source, name, kw, inputs):
    path, mod = source
    t = _static(path, name, kw, inputs, training=True)
    fwd, bwd, params, shape = _torch(mod, name, kw, inputs, training=True)
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fwd
    assert t["backward_complete"], t["backward_unknown"]
    assert t["flops_backward_value"] == bwd
    assert t["params_value"] == params
    assert tuple(int(d) for d in t["output"]) == shape


def test_fused_eval_path_counts_the_same(source):
    """Eval under no_grad, batch first: torch runs _transformer_encoder_layer_fwd for
    each layer; its count (the gap formula) is the static figure of the unfused path."""
    path, mod = source
    torch.manual_seed(0)
    m = mod.Stack().eval()
    x = torch.randn(2, 9, 32)
    with torch.no_grad(), FlopCounterMode(display=False, custom_mapping=gap_formulas()) as fc:
        m(x)
    assert "_transformer_encoder_layer_fwd" in str(fc.get_flop_counts())
    t = _static(path, "Stack", {}, {"x": (2, 9, 32)}, training=False)
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fc.get_total_flops()


def test_subclass_modules_are_the_bases(source):
    """named_modules of a subclass: the submodules torch's constructor registers."""
    path, mod = source
    t = _static(path, "Sub", {}, {"x": (2, 10, 32)}, training=True)
    names = {m["name"].removeprefix("layer.") for m in t["modules"]["modules"][0]["modules"]}
    assert names == {n for n, _ in mod.Sub().layer.named_children()}


def test_a_padding_mask_on_the_nested_path_is_not_known(source):
    """Eval with a padding mask: where every weight requires grad torch runs the
    layers unfused (the forward is exact; the backward is not compared: on CPU a
    mask sends attention to the math path, not the CUDA formula); frozen, it packs the tokens the mask keeps
    into a nested tensor, and what runs depends on the mask's values: unknown."""
    path, mod = source
    inputs = {"x": (2, 10, 32)}
    t = _static(path, "Padded", {}, inputs, training=False)
    fwd, _, params, _ = _torch(mod, "Padded", {}, inputs, training=False)
    assert t["complete"], t["unknown"]
    assert (t["flops_value"], t["params_value"]) == (fwd, params)
    t = _static(path, "Padded", {"frozen": True}, inputs, training=False)
    assert not t["complete"]
