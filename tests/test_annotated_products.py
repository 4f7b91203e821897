"""A product of sizes an op checked equal to another (`s·p²` against `channels·p²`,
the patch embedding's LayerNorm on a flattened patch) fixes the factor the two do
not share: sizes are positive, so `s = channels` (issue 25's annotated suite).
With an annotation naming the input's channels (`"b s h w"`) the op after it meets
the constructor's `channels`, as without the annotation; with a concrete one
(`"2 3 32 32"`) channels is 3 from there on, which is the caller's input size, no
constraint between two of the constructor's sizes. A name the annotation binds
checked against a number of the constructor's formula (`s0·p²` against `3·p²`) is
that number, `s0 = 3`. Each verdict is torch's under jaxtyping's run-time check."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose, jaxtyped_class

EMBED = """
from einops.layers.torch import Rearrange
from jaxtyping import Float
from torch import Tensor, nn


class Embed(nn.Module):
    def __init__(self, *, patch_size, dim, channels=3):
        super().__init__()
        patch_dim = {patch_dim}
        self.to_patch_embedding = nn.Sequential(
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch_size, p2=patch_size),
            nn.LayerNorm(patch_dim),
            nn.Linear({linear_in}, dim),
        )

    def forward(self, img: Float[Tensor, "{spec}"]):
        return self.to_patch_embedding(img)
"""
SYMBOLIC, CONCRETE = "b s1 image_size image_size", "2 3 32 32"
BY_CHANNELS = "channels * patch_size * patch_size"
GOOD, TWICE, DIM = "patch_dim", "patch_dim * 2", "dim"


def _errors(linear_in: str, spec: str, patch_dim: str = BY_CHANNELS) -> list[tuple[int, str, str]]:
    source = EMBED.format(linear_in=linear_in, spec=spec, patch_dim=patch_dim)
    return [(d.line, d.code, d.message) for d in diagnose(source) if d.severity == "error"]


@pytest.mark.parametrize("spec", [SYMBOLIC, CONCRETE])
def test_the_patch_embedding_as_written_is_no_error(spec):
    # main: the concrete 3·p² against channels·p² was two constructor sizes (SHP321)
    assert _errors(GOOD, spec) == []


def test_a_layer_of_twice_the_patch_width_after_a_concrete_input_is_an_error():
    ((line, code, message),) = _errors(TWICE, CONCRETE)
    assert (line, code) == (18, "SHP307")
    assert "(channels = 3: an op before took it)" in message


def test_a_layer_of_twice_the_patch_width_after_a_named_input_is_an_error():
    ((line, code, message),) = _errors(TWICE, SYMBOLIC)
    assert (line, code) == (18, "SHP307")
    assert "(s1 = channels: an op before took it)" in message


@pytest.mark.parametrize("spec", [SYMBOLIC, CONCRETE])
def test_a_layer_of_the_model_width_on_the_patch_is_the_constructors_constraint(spec):
    # main: with the named input nothing, the name s1 hid that it is channels
    ((line, code, message),) = _errors(DIM, spec)
    assert (line, code) == (18, "SHP321")
    want = "dim = channels·patch_size²" if spec == SYMBOLIC else "dim = 3·patch_size²"
    assert f"this needs {want}, sizes the constructor takes separately" in message


def test_torch_under_jaxtyping_runs_the_embedding_and_refuses_the_bugs():
    torch = pytest.importorskip("torch")
    pytest.importorskip("einops")

    def run(linear_in: str, spec: str, patch_dim: str = BY_CHANNELS):
        source = EMBED.format(linear_in=linear_in, spec=spec, patch_dim=patch_dim)
        cls = jaxtyped_class(source, "Embed")
        return cls(patch_size=8, dim=48)(torch.randn(2, 3, 32, 32))

    for spec in (SYMBOLIC, CONCRETE):
        assert run(GOOD, spec).shape == (2, 16, 48)
        for bug in (TWICE, DIM):
            with pytest.raises(RuntimeError):
                run(bug, spec)
    for spec in NAMED:
        assert run(GOOD, spec, BY_NUMBER).shape == (2, 16, 48)
        with pytest.raises(RuntimeError):
            run(TWICE, spec, BY_NUMBER)


# A name the annotation binds (`s0` of `"b s0 h w"`) that an op checked against a
# number of the constructor's formula (LayerNorm(3·p²) on `p²·s0`) is that number:
# jaxtyping gives the name one size per call (cait's patch embedding).
BY_NUMBER = "3 * patch_size ** 2"
NAMED = ("b s0 image_size image_size", "b s0 h w")


@pytest.mark.parametrize("spec", NAMED)
def test_the_patch_embedding_of_three_channels_as_written_is_no_error(spec):
    assert _errors(GOOD, spec, BY_NUMBER) == []


@pytest.mark.parametrize("spec", NAMED)
def test_a_layer_of_twice_the_patch_width_after_the_norm_fixed_the_name_is_an_error(spec):
    # main: nothing, the annotated s0 hid the 3 LayerNorm(3·p²) had given it
    ((line, code, message),) = _errors(TWICE, spec, BY_NUMBER)
    assert (line, code) == (18, "SHP307")
    assert "6·patch_size²" in message
    assert "(s0 = 3: an op before took it)" in message


FEED_FORWARD = """
from jaxtyping import Float
from torch import Tensor, nn


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, hidden_dim), nn.GELU(), nn.Linear(hidden_dim, {out}))

    def forward(self, x: Float[Tensor, "b n dim"]) -> Float[Tensor, "b n dim"]:
        return self.net(x)
"""


@pytest.mark.parametrize(
    ("out", "built", "code"),
    [
        ("hidden_dim", "", "SHP321"),  # nothing in the file constructs it
        ("hidden_dim", "FeedForward(48, 96)", "SHP321"),
        ("hidden_dim", "FeedForward(48, 48)", None),
        ("dim", "", None),
    ],
)
def test_a_return_of_a_constructor_size_the_annotation_names_otherwise(out, built, code):
    # jaxtyping checks the return at run time, as an op checks its operands: the
    # hidden width returned where the input's `dim` is annotated is SHP318's
    # constraint, judged on the file's constructions (main: nothing)
    source = FEED_FORWARD.format(out=out) + (f"\n\nff = {built}\n" if built else "")
    errors = [(d.line, d.code, d.message) for d in diagnose(source) if d.severity == "error"]
    if code is None:
        assert errors == []
        return
    ((line, got, message),) = errors
    assert (line, got) == (12, code)
    assert "hidden_dim where dim is expected; this needs hidden_dim = dim" in message


def test_jaxtyping_refuses_the_hidden_width_returned():
    torch = pytest.importorskip("torch")
    jaxtyping = pytest.importorskip("jaxtyping")

    def run(out: str, hidden: int):
        cls = jaxtyped_class(FEED_FORWARD.format(out=out), "FeedForward")
        return cls(48, hidden)(torch.randn(2, 17, 48))

    assert run("dim", 96).shape == (2, 17, 48)
    assert run("hidden_dim", 48).shape == (2, 17, 48)
    with pytest.raises(jaxtyping.TypeCheckError):
        run("hidden_dim", 96)


# nest's patch embedding: a LayerNorm of its own, `x * g` with g [1, dim, 1, 1], built at
# `2·channels·p²` on a patch of three channels. Neither side can be 1 and no channels
# makes 2·channels·p² = 3·p²: torch refuses the broadcast for every size.
NORM = """
import torch
from einops.layers.torch import Rearrange
from jaxtyping import Float
from torch import Tensor, nn


class ChanNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.g = nn.Parameter(torch.ones(1, dim, 1, 1))

    def forward(self, x):
        return x * self.g


class Embed(nn.Module):
    def __init__(self, patch_size, channels=3):
        super().__init__()
        patch_dim = channels * patch_size ** 2
        self.net = nn.Sequential(
            Rearrange('b c (h p1) (w p2) -> b (p1 p2 c) h w', p1=patch_size, p2=patch_size),
            ChanNorm({width}),
        )

    def forward(self, img: Float[Tensor, "2 3 32 32"]):
        return self.net(img)
"""


def test_a_broadcast_no_integers_make_is_an_error():
    found = [d for d in diagnose(NORM.format(width="patch_dim * 2")) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(14, "SHP308")]
    assert "3·patch_size² vs 2·channels·patch_size²" in found[0].message
    # channels·p² meets 3·p² at channels = 3, and 1 broadcasts
    for width in ("patch_dim", "1"):
        assert [d for d in diagnose(NORM.format(width=width)) if d.severity == "error"] == []


def test_torch_refuses_the_doubled_norm_for_every_channels():
    torch = pytest.importorskip("torch")
    pytest.importorskip("einops")
    ns: dict = {}
    exec(compile(NORM.format(width="patch_dim * 2"), "m.py", "exec"), ns)  # noqa: S102
    for patch_size in (2, 4):
        for channels in (1, 2, 3):
            with pytest.raises(RuntimeError):
                ns["Embed"](patch_size, channels)(torch.randn(2, 3, 32, 32))
    exec(compile(NORM.format(width="patch_dim"), "m.py", "exec"), ns)  # noqa: S102
    assert ns["Embed"](4)(torch.randn(2, 3, 32, 32)).shape == (2, 48, 8, 8)
