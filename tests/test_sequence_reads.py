"""A parameter its function reads as a sequence is handed to a torch layer's
constructor as that sequence, never as one int (analysis/sequence_reads.py): a
LayerNorm of a tuple has one weight axis per item, a conv of a tuple kernel_size
one kernel axis per item. Each verdict is torch's."""

from __future__ import annotations

import ast

import pytest

from shapelint.analysis.sequence_reads import read_as_sequences
from shapelint.ops.stub_ops import sequence_parameters
from tests.helpers import analyze, diagnose, torch_raises

# transformers' ChameleonLayerNorm: stats over the last axis, one gamma per head
HEAD_NORM = """
import torch.nn.functional as F
from torch import nn


class HeadNorm(nn.LayerNorm):
    def __init__(self, hidden_size, *args, **kwargs):
        super().__init__(hidden_size, *args, **kwargs)
        self.normalized_shape = (hidden_size[-1],)

    def forward(self, hidden_states):
        hidden_states = F.layer_norm(hidden_states, self.normalized_shape, None, None, eps=1e-5)
        return hidden_states * self.weight + self.bias
"""


def test_a_layer_norm_of_a_parameter_read_as_a_sequence_has_its_axes():
    assert not torch_raises(HEAD_NORM, "HeadNorm((4, 8))", (2, 3, 4, 8))
    # the weight is [*hidden_size], not [hidden_size]: no `hidden_size[-1]` against it
    assert [d for d in diagnose(HEAD_NORM) if d.code.startswith("SHP3")] == []


def test_a_parameter_read_as_an_int_keeps_its_one_axis():
    # the same layer of a `dim` the code never reads as a sequence: its weight is
    # [dim], which a product with the [..., 2·dim] input cannot broadcast with
    source = HEAD_NORM.replace("hidden_size[-1]", "hidden_size * 2").replace("hidden_size", "dim")
    assert torch_raises(source, "HeadNorm(4)", (2, 3, 8))
    assert any("dim" in d.message for d in diagnose(source) if d.code.startswith("SHP3"))


PATCHES = """
import torch
from jaxtyping import Float
from torch import Tensor, nn


class Patches(nn.Module):
    def __init__(self, dim, patch_size):
        super().__init__()
        self.area = patch_size[0] * patch_size[1]
        self.proj = nn.Conv2d(3, dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x: Float[Tensor, "b 3 h w"]):
        return self.proj(x)
"""


def test_a_conv_of_a_kernel_size_read_as_a_sequence_has_one_axis_per_item():
    torch = pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(PATCHES, "m.py", "exec"), ns)  # noqa: S102 - the test's own module
    got = ns["Patches"](8, (4, 2))(torch.randn(2, 3, 32, 16)).shape
    assert tuple(got) == (2, 8, 32 // 4, 16 // 2)
    (conv,) = [c for c in analyze(PATCHES).calls if c["op"] == "torch.nn.Conv2d.__call__"]
    # each axis by its own item, never one `patch_size` for both
    assert conv["output"] == ["b", "dim", "h//patch_size[0]", "w//patch_size[1]"]
    assert "patch_size[0]*patch_size[1]" in conv["flops"]


def test_the_reads_that_make_a_name_a_sequence():
    fn = ast.parse(
        "def f(a, b, c, d, e, f, g, h):\n"
        "    x = a[0]\n"
        "    p, q = b\n"
        "    g(*c)\n"
        "    for i in d: pass\n"
        "    n = len(e)\n"
        "    y = [i for i in f]\n"
        "    z = g + 1\n"
        "    h[0] = 1\n"
    ).body[0]
    assert read_as_sequences(fn) == {"a", "b", "c", "d", "e", "f"}


def test_the_stubs_say_which_constructor_parameters_take_a_sequence():
    assert sequence_parameters("torch.nn.LayerNorm") == {"normalized_shape": 0}
    assert sequence_parameters("torch.nn.Conv2d")["kernel_size"] == 2
    assert sequence_parameters("torch.nn.Conv1d")["stride"] == 1
    assert sequence_parameters("torch.nn.Linear") == {}
