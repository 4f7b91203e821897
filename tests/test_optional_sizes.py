"""Sizes and layers a constructor parameter whose default is None decides (issue 25's
annotated suite: timm's SwiGLU, ddpm's ResnetBlock). `hidden or dim`,
`default(hidden, 4 * dim)` and `hidden if hidden is not None else dim` are the size
`hidden` names once given, related to no other; a name that holds another size on each
path of an undecided `if` holds one size of its own after it; a layer built under
`exists(time_emb_dim)` or None is the layer where it is called (calling None raises),
and a tuple or None is the tuple where it is unpacked. Each bug is confirmed by torch,
for the default and for a given value alike."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose

SWIGLU = """
from typing import Optional

from torch import nn


def exists(val):
    return val is not None


def default(val, d):
    if exists(val):
        return val
    return d


class SwiGLU(nn.Module):
    def __init__(self, dim: int, hidden: Optional[int] = None, align: int = 0):
        super().__init__()
        hidden = {hidden}
        if align:
            hidden = hidden + (-hidden % align)
        self.gate = nn.Linear(dim, hidden * {mult})
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.down(self.gate(x) * self.up(x))
"""
HIDDEN = [
    "hidden or dim",
    "default(hidden, 4 * dim)",
    "hidden if hidden is not None else dim",
    "hidden if exists(hidden) else dim",
]


def _errors(source: str) -> list[str]:
    return [f"{d.line} {d.code}" for d in diagnose(source) if d.severity == "error"]


def _build(source: str):
    ns: dict = {}
    exec(compile(source, "m.py", "exec"), ns)  # noqa: S102
    return ns


@pytest.mark.parametrize("hidden", HIDDEN)
def test_twice_an_optional_size_against_it_is_an_error(hidden):
    source = SWIGLU.format(hidden=hidden, mult=2)
    assert _errors(source) == ["28 SHP308"]
    message = next(d.message for d in diagnose(source) if d.code == "SHP308")
    assert "2·hidden'" in message  # the size after the `if align:` that may round it


@pytest.mark.parametrize("hidden", HIDDEN)
def test_an_optional_size_used_alike_is_no_error(hidden):
    assert _errors(SWIGLU.format(hidden=hidden, mult=1)) == []


@pytest.mark.parametrize("hidden", HIDDEN)
def test_torch_raises_given_or_not(hidden):
    torch = pytest.importorskip("torch")
    ns = _build(SWIGLU.format(hidden=hidden, mult=2))
    for args in [(8,), (8, 16), (8, 16, 12), (8, None, 12)]:
        with pytest.raises(RuntimeError):
            ns["SwiGLU"](*args)(torch.randn(2, 3, 8))
    ns = _build(SWIGLU.format(hidden=hidden, mult=1))
    for args in [(8,), (8, 16), (8, 16, 12), (8, None, 12)]:
        assert ns["SwiGLU"](*args)(torch.randn(2, 3, 8)).shape == (2, 3, 8)


def test_without_the_rounding_the_size_keeps_its_parameters_name():
    source = SWIGLU.format(hidden="hidden or dim", mult=2).replace(
        "        if align:\n            hidden = hidden + (-hidden % align)\n", ""
    )
    message = next(d.message for d in diagnose(source) if d.code == "SHP308")
    assert "2·hidden vs hidden" in message


RESNET = """
import torch
from einops import rearrange
from jaxtyping import Float
from torch import Tensor, nn


def exists(x):
    return x is not None


class Block(nn.Module):
    def __init__(self, dim, dim_out):
        super().__init__()
        self.proj = nn.Conv2d(dim, dim_out, 3, padding=1)

    def forward(self, x, scale_shift=None):
        x = self.proj(x)
        if exists(scale_shift):
            scale, shift = scale_shift
            x = x * (scale + 1) + shift
        return x


class ResnetBlock(nn.Module):
    def __init__(self, dim, dim_out, *, time_emb_dim=None):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.SiLU(), nn.Linear({emb_in}, {emb_out})
        ) if exists(time_emb_dim) else None
        self.block1 = Block(dim, dim_out)

    def forward(
        self, x: Float[Tensor, "b dim h w"], time_emb: Float[Tensor, "b time_emb_dim"] = None
    ) -> Float[Tensor, "b dim_out h w"]:
        scale_shift = None
        if exists(self.mlp) and exists(time_emb):
            time_emb = self.mlp(time_emb)
            time_emb = rearrange(time_emb, 'b c -> b c 1 1')
            scale_shift = time_emb.chunk({chunks}, dim=1)
        return self.block1(x, scale_shift=scale_shift)
"""
GOOD = {"emb_in": "time_emb_dim", "emb_out": "dim_out * 2", "chunks": 2}
BUGS = [
    ({"emb_in": "time_emb_dim * 2"}, "38 SHP307"),  # the layer built under exists(time_emb_dim)
    ({"emb_out": "dim_out * 4"}, "21 SHP308"),  # scale of 2·dim_out in Block, through the tuple
    ({"chunks": 1}, "20 SHP316"),  # one chunk unpacked into two, in Block
]


def _conditional(source: str) -> list[str]:
    """The errors that raise only on one of undecided alternatives (plain_paths.py),
    each with the test of the branch it lies on."""
    return [
        f"{d.line} {d.code} {d.message.rpartition('it raises only if ')[2]}"
        for d in diagnose(source)
        if d.severity == "warning" and "; it raises only if " in d.message
    ]


# The bugs in Block lie, in Block's run on the call's tuple-or-None, where scale_shift
# exists: torch raises there and runs the block without one, so each is a warning
# naming that branch, not an error. The MLP's width is the constructor's flag's: on
# the path where time_emb_dim is given (init_paths.py), the MLP is the layer, the
# forward's `exists(self.mlp)` is true, and the annotated time_emb meets it there.
WHEN = {
    "21 SHP308": "`exists(scale_shift)` (line 19), which is not known here",
    "20 SHP316": "`exists(scale_shift)` (line 19), which is not known here",
}
ON_PATH = {"38 SHP307": "(on the path where `exists(time_emb_dim)` is true (line 30))"}


@pytest.mark.parametrize("change, error", BUGS)
def test_a_layer_or_none_is_the_layer_where_it_is_called(change, error):
    source = RESNET.format(**{**GOOD, **change})
    if error in ON_PATH:
        assert _errors(source) == [error]
        assert any(d.message.endswith(ON_PATH[error]) for d in diagnose(source))
        return
    assert _errors(source) == []
    assert _conditional(source) == [f"{error} {WHEN[error]}"]


def test_the_layer_or_none_used_right_is_no_error():
    assert _errors(RESNET.format(**GOOD)) == []


# A model that builds the block with its time width and hands it a time embedding beside
# an input of no known kind: the annotated forward's run on that call's instance decides
# `exists(self.mlp) and exists(time_emb)`, so the single chunk is the model's error
# (ddpm's Unet and ResnetBlock; the run reads the unknown input as the summary would)
CALLER = """

class Net(nn.Module):
    def __init__(self, dim, time_dim):
        super().__init__()
        self.time_mlp = nn.Linear(time_dim, time_dim)
        self.block = ResnetBlock(dim, dim, time_emb_dim=time_dim)

    def forward(self, x, time: Float[Tensor, "b time_dim"]):
        return self.block(x, self.time_mlp(time))
"""


def test_a_call_with_the_time_embedding_decides_the_blocks_tests():
    found = [
        d
        for d in diagnose(RESNET.format(**{**GOOD, "chunks": 1}) + CALLER)
        if d.severity == "error"
    ]
    assert [(d.line, d.code) for d in found] == [(20, "SHP316")]
    assert "raises only if" not in found[0].message
    assert _errors(RESNET.format(**GOOD) + CALLER) == []


def test_torch_and_jaxtyping_refuse_the_bugs():
    torch = pytest.importorskip("torch")
    pytest.importorskip("einops")
    jaxtyping = pytest.importorskip("jaxtyping")
    beartype = pytest.importorskip("beartype")

    def run(fmt):
        cls = _build(RESNET.format(**fmt))["ResnetBlock"]
        cls.forward = jaxtyping.jaxtyped(typechecker=beartype.beartype)(cls.forward)
        return cls(16, 24, time_emb_dim=20)(torch.randn(2, 16, 8, 8), torch.randn(2, 20))

    assert run(GOOD).shape == (2, 24, 8, 8)
    for change, _ in BUGS:
        with pytest.raises((RuntimeError, ValueError)):
            run({**GOOD, **change})
        # the other way through the forward, with no time embedding, runs
        bare = _build(RESNET.format(**{**GOOD, **change}))["ResnetBlock"](16, 24, time_emb_dim=20)
        assert bare(torch.randn(2, 16, 8, 8)).shape == (2, 24, 8, 8)


# The same block unannotated: Block.forward's summary reads scale_shift as a value of
# no known kind, so `scale, shift = scale_shift` counts nothing there; the call hands
# it a tuple or None (specialized.none_decides), and Block's run on that call unpacks
# the tuple's items.
BARE = RESNET.replace(
    """    def forward(
        self, x: Float[Tensor, "b dim h w"], time_emb: Float[Tensor, "b time_emb_dim"] = None
    ) -> Float[Tensor, "b dim_out h w"]:""",
    "    def forward(self, x, time_emb=None):",
)


def test_a_tuple_or_none_handed_to_an_unannotated_block_is_unpacked_by_its_run():
    assert BARE != RESNET
    found = [d for d in diagnose(BARE.format(**{**GOOD, "chunks": 1})) if d.code == "SHP316"]
    assert [f"{d.line} {d.severity}" for d in found] == ["20 warning"]  # on a branch
    assert "(via ResnetBlock.forward:" in found[0].message
    assert _errors(BARE.format(**GOOD)) == []


def test_torch_refuses_one_chunk_unpacked_into_two_unannotated():
    torch = pytest.importorskip("torch")
    pytest.importorskip("einops")

    def run(fmt):
        block = _build(BARE.format(**fmt))["ResnetBlock"](16, 24, time_emb_dim=20)
        return block(torch.randn(2, 16, 8, 8), torch.randn(2, 20))

    assert run(GOOD).shape == (2, 24, 8, 8)
    with pytest.raises(ValueError, match="not enough values to unpack"):
        run({**GOOD, "chunks": 1})


# `hidden = int(dim * rate)` with a float rate (max_vit's SqueezeExcitation): one
# integer, so a layer of twice it after a layer of it is a conflict for every rate.
SQUEEZE = """
import torch
from torch import nn


class Squeeze(nn.Module):
    def __init__(self, dim, rate=0.25):
        super().__init__()
        hidden = int(dim * rate)
        self.down = nn.Linear(dim, hidden)
        self.up = nn.Linear({up_in}, dim)

    def forward(self, x):
        return x * self.up(self.down(x)).sigmoid()


class Stages(nn.Module):
    def __init__(self, dim, rates=(0.5, 0.25)):
        super().__init__()
        layers, prev = [], dim
        for rate in rates:
            hidden = int(dim * rate)
            layers.append(nn.Linear(prev, hidden))
            prev = hidden
        self.net = nn.Sequential(*layers)
        self.out = nn.Linear(2 * prev, dim)

    def forward(self, x):
        y = self.net(x)
        return self.out(torch.cat([y, y], -1))
"""


def test_an_int_of_a_float_is_one_size_of_its_own():
    found = [d for d in diagnose(SQUEEZE.format(up_in="hidden * 2")) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(14, "SHP307")]
    assert "2·hidden'" in found[0].message
    # the benign layers, and a loop's int() (each turn another integer: `2·prev` is
    # the last turn's, which one size for every turn would have made wrong)
    assert _errors(SQUEEZE.format(up_in="hidden")) == []


def test_torch_raises_on_the_doubled_int_size():
    torch = pytest.importorskip("torch")
    for rate in (0.25, 0.5, 1.0):
        bad = _build(SQUEEZE.format(up_in="hidden * 2"))["Squeeze"](8, rate)
        with pytest.raises(RuntimeError):
            bad(torch.randn(2, 8))
        ok = _build(SQUEEZE.format(up_in="hidden"))["Squeeze"](8, rate)
        assert ok(torch.randn(2, 8)).shape == (2, 8)
    assert _build(SQUEEZE.format(up_in="hidden"))["Stages"](8)(torch.randn(2, 8)).shape == (2, 8)


def test_torch_refuses_the_single_chunk_through_the_caller():
    torch = pytest.importorskip("torch")
    pytest.importorskip("einops")
    net = _build(RESNET.format(**{**GOOD, "chunks": 1}) + CALLER)["Net"](4, 3)
    with pytest.raises(ValueError, match="not enough values to unpack"):
        net(torch.randn(2, 4, 5, 5), torch.randn(2, 3))
    ok = _build(RESNET.format(**GOOD) + CALLER)["Net"](4, 3)
    assert ok(torch.randn(2, 4, 5, 5), torch.randn(2, 3)).shape == (2, 4, 5, 5)
