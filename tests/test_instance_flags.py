"""Plain mode's instances know what their constructor's arguments decide: a flag
`__init__` computes from them (`self.use_res_connect = self.stride == 1 and inp ==
oup`, mobile_vit's MV2Block) is settled for each layer a loop over a ModuleList
calls, so the run of its forward on that turn's input follows the branch that layer
takes, as torch does (issue 25: 0 false errors). Each verdict is torch's, at channel
counts the module allows."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose, torch_raises

STEM = """
from jaxtyping import Float
from torch import Tensor, nn


class Block(nn.Module):
    def __init__(self, inp, oup, stride=1):
        super().__init__()
        self.stride = stride
        self.use_res_connect = {test}
        self.conv = nn.Conv2d(inp, oup, 3, stride, 1)

    def forward(self, x):
        out = self.conv(x)
        if self.use_res_connect:
            out = out + x
        return out


class Net(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.stem = nn.ModuleList([])
        self.stem.append(Block({a}, 1))
        self.stem.append(Block({b}, 2))
        self.stem.append(Block({c}, 1))

    def forward(self, x: Float[Tensor, "2 16 32 32"]):
        for conv in self.stem:
            x = conv(x)
        return x
"""
RESIDUAL = "self.stride == 1 and inp == oup"
SYMBOLIC = dict(
    a="channels[0], channels[1]", b="channels[1], channels[2]", c="channels[2], channels[3]"
)
CONCRETE = dict(a="16, 16", b="16, 32", c="32, 64")


def _errors(source: str) -> list[str]:
    return [f"{d.line} {d.code} {d.message}" for d in diagnose(source) if d.severity == "error"]


@pytest.mark.parametrize("sizes", [SYMBOLIC, CONCRETE], ids=["symbolic", "concrete"])
def test_the_stride_two_block_takes_no_residual(sizes):
    source = STEM.format(test=RESIDUAL, **sizes)
    for channels in ([16, 16, 32, 32], [16, 16, 32, 64], [16, 8, 8, 8]):
        build = f"Net({channels})"
        assert not torch_raises(source, build, (2, 16, 32, 32))
    assert _errors(source) == []


def test_a_residual_test_without_the_channel_check_is_the_stride_one_blocks_error():
    # the stride-2 block still adds nothing; the last (32 -> 64, stride 1) adds
    source = STEM.format(test="self.stride == 1", **CONCRETE)
    assert torch_raises(source, "Net([16, 16, 32, 64])", (2, 16, 32, 32))
    errors = [e for e in _errors(source) if "SHP308" in e]
    assert len(errors) == 1
    assert errors[0].startswith(
        "16 SHP308 operator.add: shapes [2, 64, 16, 16] and [2, 32, 16, 16]"
    )


def test_the_stride_two_block_taking_the_residual_is_an_error():
    source = STEM.format(test="self.stride == 2", **SYMBOLIC)
    assert torch_raises(source, "Net([16, 16, 32, 32])", (2, 16, 32, 32))
    errors = [e for e in _errors(source) if "SHP308" in e]
    assert len(errors) == 1
    # the channels are the list's items, sizes of their own (item_sizes.py)
    assert "[2, channels[2], 16, 16] and [2, channels[1], 32, 32]" in errors[0]


# A module attribute `__init__` stores on each path of a flag it cannot decide for
# any arguments (perceiver's PerceiverBlock: `self.cross_attn = PreNorm(dim, ...)`
# where has_cross_attn, else None): plain mode kept the last path's None, so a
# forward reached through an instance built with the flag left at True called None
# and checked nothing. The call's arguments decide the flag: the run of `__init__`
# at them says which layer the instance holds.
PATHS = """
import torch
from jaxtyping import Float
from torch import Tensor, nn


class FF(nn.Module):
    def __init__(self, dim, mult=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim * mult), nn.Linear(dim * mult, dim))

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    def __init__(self, dim, has_norm=True):
        super().__init__()
        self.has_norm = has_norm
        if has_norm:
            # FF's mult, left at its default, is a size of FF's own name
            self.norm = nn.Sequential(nn.LayerNorm(dim), FF(dim))
        else:
            self.norm = None

    def forward(self, x):
        if self.has_norm:
            x = self.norm(x)
        return x


class Net(nn.Module):
    def __init__(self, dim{param}):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(3, {width}))
        self.block = Block(dim{flag})

    def forward(self, x: Float[Tensor, "b dim"]):
        return self.block(self.latents)
"""


def test_the_layer_a_flag_left_at_its_default_stores_is_called():
    source = PATHS.format(param="", width="dim * 2", flag="")
    assert torch_raises(source, "Net(4)", (2, 4))
    errors = _errors(source)
    assert len(errors) == 1
    assert "SHP309" in errors[0] and "[3, 2·dim]" in errors[0]


@pytest.mark.parametrize(
    ("param", "width", "flag", "build"),
    [
        ("", "dim * 2", ", has_norm=False", "Net(4)"),  # the path without the layer
        ("", "dim", "", "Net(4)"),  # the layer at the width it is given
        # a flag the caller does not decide: either path may run
        (", has_norm", "dim * 2", ", has_norm", "Net(4, False)"),
    ],
    ids=["flag-off", "same-width", "caller-flag"],
)
def test_a_path_the_arguments_do_not_take_is_no_error(param, width, flag, build):
    source = PATHS.format(param=param, width=width, flag=flag)
    assert not torch_raises(source, build, (2, 4))
    assert _errors(source) == []


# A float the constructor stores (`self.eps = eps`, left at its default 1e-5) is a
# float on the instance, whatever its value: nest's channel-first LayerNorm returns
# `(x - mean) / (var + self.eps).sqrt() * self.g + self.b`, whose shape the run of its
# forward on the caller's 4-d tensor knows only where `self.eps` is no value of
# unknown kind (a tensor there could broadcast to any rank). Without it the norm's
# output was of unknown rank, and the chunk after it, of unknown count.
CHANNEL_NORM = """
import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.g = nn.Parameter(torch.ones(1, dim, 1, 1))
        self.b = nn.Parameter(torch.zeros(1, dim, 1, 1))

    def forward(self, x):
        var = torch.var(x, dim=1, unbiased=False, keepdim=True)
        mean = torch.mean(x, dim=1, keepdim=True)
        return (x - mean) / (var + self.eps).sqrt() * self.g + self.b


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm = LayerNorm(dim)
        self.to_qkv = nn.Conv2d(dim, dim * 3, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        x = self.norm(x)
        q, k, v = self.to_qkv(x).chunk({count}, dim=1)
        return q * k + v
"""


@pytest.mark.parametrize(("count", "wrong"), [(2, True), (3, False)])
def test_a_float_the_constructor_stores_keeps_the_norms_shape(count, wrong):
    torch = pytest.importorskip("torch")
    source = CHANNEL_NORM.format(count=count)
    ns: dict = {}
    exec(compile(source, "m.py", "exec"), ns)  # noqa: S102 - the test's own module
    try:
        ns["Attention"](6, 2)(torch.randn(2, 6, 4, 4))
        raised = False
    except ValueError:  # not enough values to unpack
        raised = True
    assert raised == wrong
    errors = _errors(source)
    assert [e.split()[1] for e in errors] == (["SHP316"] if wrong else [])


# Modules handed to a constructor's `*fns` and kept in a ModuleList (parallel_vit's
# Parallel): the summary's fns is a tuple of no known length, so the list and every
# call of its items were unknown; the run of `__init__` at the call's arguments holds
# the call's very modules, which the forward's run then calls one by one.
PARALLEL = """
import torch
from torch import nn


class Parallel(nn.Module):
    def __init__(self, *fns):
        super().__init__()
        self.fns = nn.ModuleList(fns)

    def forward(self, x):
        return sum([fn(x) for fn in self.fns])


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.branches = Parallel(nn.Linear(dim, {out}), nn.Linear(dim, {out}))

    def forward(self, x):
        x = self.norm(x)
        return self.branches(x) + x
"""


@pytest.mark.parametrize(("out", "wrong"), [("dim * 2", True), ("dim", False)])
def test_the_modules_handed_to_a_list_of_branches_are_called(out, wrong):
    _residual_judged(PARALLEL.format(out=out), "Block(6)", wrong)


def _residual_judged(source: str, build: str, wrong: bool) -> None:
    """torch raises on the block's residual exactly where the check says SHP308 of
    the handed module's `2·dim` against the input's dim."""
    assert torch_raises(source, build, (2, 5, 6)) == wrong
    errors = _errors(source)
    assert [e.split()[1] for e in errors] == (["SHP308"] if wrong else [])
    if wrong:
        assert "[..., 2·dim] and [..., dim]" in errors[0]


# A module handed to the constructor and stored (`self.fn = fn`, vit-pytorch's PreNorm
# around a FeedForward), called on the block's input of unknown shape: the summary of
# PreNorm.forward calls an unknown (its `fn` a parameter of any value), so the block's
# residual `self.ff(x) + x` met nothing; the forward run on the instance that holds the
# call's very module gives the FeedForward's width, as torch computes it.
PRENORM = """
import torch
from torch import nn


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x, **kwargs):
        return self.fn(self.norm(x), **kwargs)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, hidden_dim), nn.GELU(), nn.Linear(hidden_dim, {out})
        )

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.ff = PreNorm(dim, FeedForward(dim, hidden_dim))

    def forward(self, x):
        return self.ff(x) + x
"""


@pytest.mark.parametrize(("out", "wrong"), [("dim * 2", True), ("dim", False)])
def test_a_module_handed_to_the_constructor_is_called_on_an_input_of_unknown_shape(out, wrong):
    _residual_judged(PRENORM.format(out=out), "Block(6, 10)", wrong)
