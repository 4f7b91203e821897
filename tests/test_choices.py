"""A module attribute that is one of several layers, chosen by a test `check` cannot
decide (choices.py): a call of it is an error only where every alternative raises,
since the test that chose the layer may also have shaped the arguments. Every verdict
is torch's, at each construction."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose, jaxtyped_class

# diffusers' LTX upsampler: the forward flattens the frames into the batch only
# where the constructor chose Conv2d, and hands Conv3d the 5-d input
UPSAMPLER = """
import torch
from torch import nn


class Up(nn.Module):
    def __init__(self, dims: int, channels: int):
        super().__init__()
        self.dims = dims
        self.conv = {conv}

    def forward(self, x):
        b, c, f, h, w = x.shape
        if self.dims == 2:
            x = x.permute(0, 2, 1, 3, 4).flatten(0, 1)
            x = self.conv(x)
            x = x.unflatten(0, (b, f)).permute(0, 2, 1, 3, 4)
        else:
            x = self.conv(x)
        return x
"""
CONV_CHOICE = (
    "nn.Conv2d(channels, channels, 3, padding=1) if dims == 2 "
    "else nn.Conv3d(channels, channels, 3, padding=1)"
)

# a projection chosen by a constructor flag, after a norm that fixes the width
PROJECTION = """
import torch
from jaxtyping import Float
from torch import Tensor, nn


class Proj(nn.Module):
    def __init__(self, dim: int, flag: bool):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.proj = {proj} if flag else {other}

    def forward(self, x{spec}):
        return self.proj(self.norm(x))
"""


def _errors(source: str) -> list:
    return [d for d in diagnose(source) if d.severity == "error"]


def _runs(cls, *args, shape) -> bool:
    torch = pytest.importorskip("torch")
    try:
        cls(*args)(torch.randn(*shape))
    except RuntimeError:
        return False
    return True


def _class(source: str, name: str):
    ns: dict = {}
    exec(compile(source, "m.py", "exec"), ns)  # noqa: S102 - the tests' own modules
    return ns[name]


def test_a_conv_chosen_by_the_test_that_shapes_its_input_is_no_error():
    source = UPSAMPLER.format(conv=CONV_CHOICE)
    up = _class(source, "Up")
    assert _runs(up, 2, 4, shape=(2, 4, 3, 8, 8))
    assert _runs(up, 3, 4, shape=(2, 4, 3, 8, 8))
    assert _errors(source) == []


def test_a_call_every_alternative_refuses_is_an_error():
    source = PROJECTION.format(
        proj="nn.Linear(2 * dim, dim)", other="nn.LayerNorm(2 * dim)", spec=""
    )
    proj = _class(source, "Proj")
    assert not _runs(proj, 8, True, shape=(2, 5, 8))
    assert not _runs(proj, 8, False, shape=(2, 5, 8))
    assert {(d.line, d.code) for d in _errors(source)} == {(14, "SHP307"), (14, "SHP309")}


def test_a_call_one_alternative_refuses_is_no_error():
    # which layer the caller's flag builds is the caller's: Identity runs
    source = PROJECTION.format(proj="nn.Linear(2 * dim, dim)", other="nn.Identity()", spec="")
    proj = _class(source, "Proj")
    assert not _runs(proj, 8, True, shape=(2, 5, 8))
    assert _runs(proj, 8, False, shape=(2, 5, 8))
    assert _errors(source) == []


def test_an_annotated_forward_says_the_error_on_the_flags_path():
    # the check of an annotated forward runs each path of the constructor's flag
    # (init_paths.py): on the path that builds the Linear it surely raises
    spec = ': Float[Tensor, "b n dim"]'
    source = PROJECTION.format(proj="nn.Linear(2 * dim, dim)", other="nn.Identity()", spec=spec)
    proj = jaxtyped_class(source, "Proj")
    assert not _runs(proj, 8, True, shape=(2, 5, 8))
    assert _runs(proj, 8, False, shape=(2, 5, 8))
    found = _errors(source)
    assert [(d.line, d.code) for d in found] == [(14, "SHP307")]
    assert "on the path where `flag` is true (line 11)" in found[0].message


def test_the_agreeing_projection_is_clean():
    source = PROJECTION.format(proj="nn.Linear(dim, dim)", other="nn.Identity()", spec="")
    proj = _class(source, "Proj")
    assert _runs(proj, 8, True, shape=(2, 5, 8))
    assert _runs(proj, 8, False, shape=(2, 5, 8))
    assert _errors(source) == []
