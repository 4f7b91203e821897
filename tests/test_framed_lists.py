"""Lists of symbolic length whose end items are known (analysis/framed.py):
`[c_in] + [planes for _ in range(n - 1)] + [c_out]` is n + 1 channels whatever n
is, the first c_in and the last c_out; the convs built over its neighbouring pairs
take c_in first and give c_out last. Each bug is confirmed by torch (and jaxtyping
for an annotated return) at two layer counts, one of which leaves the middle empty."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose, jaxtyped_class

TOKENIZER = """
from einops import rearrange
from jaxtyping import Float
from torch import Tensor, nn


class Tokenizer(nn.Module):
    def __init__(self, n_layers, c_in, c_out, planes=16):
        super().__init__()
        self.norm = nn.LayerNorm(c_out)
        chans = [c_in] + [planes for _ in range(n_layers - 1)] + [c_out]
        pairs = zip(chans[:-1], chans[1:])
        self.convs = nn.Sequential(
            *[
                nn.Sequential(nn.Conv2d({conv_in}, {conv_out}, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
                for a, b in pairs
            ]
        )

    def forward(self, x: Float[Tensor, "{spec}"]):
        return self.norm(rearrange(self.convs(x), "b c h w -> b (h w) c"))
"""


def _errors(source: str) -> list[str]:
    return [f"{d.line} {d.code}" for d in diagnose(source) if d.severity == "error"]


def test_the_last_conv_of_the_pairs_gives_the_lists_last_item():
    source = TOKENIZER.format(conv_in="a", conv_out="b * 2", spec="b c h w")
    assert _errors(source) == ["21 SHP309"]
    message = next(d.message for d in diagnose(source) if d.code == "SHP309")
    assert "2·c_out" in message


def test_the_first_conv_of_the_pairs_takes_the_lists_first_item():
    # a concrete 3 channels: 2·c_in is never 3, whatever the sizes
    source = TOKENIZER.format(conv_in="a * 2", conv_out="b", spec="2 3 16 16")
    assert _errors(source) == ["21 SHP309"]


@pytest.mark.parametrize("spec", ["b c h w", "2 3 16 16"])
def test_pairs_of_the_list_in_order_are_no_error(spec):
    assert _errors(TOKENIZER.format(conv_in="a", conv_out="b", spec=spec)) == []


@pytest.mark.parametrize("conv_in", ["b", "planes"])
def test_a_conv_whose_width_the_layer_count_decides_is_no_error(conv_in):
    # the first conv's b is c_out for one layer, planes for more: either may hold
    source = TOKENIZER.format(conv_in=conv_in, conv_out="b", spec="b c h w")
    assert _errors(source) == []


def _run(source: str, n_layers: int):
    torch = pytest.importorskip("torch")
    cls = jaxtyped_class(source, "Tokenizer")
    return cls(n_layers, 3, 8)(torch.randn(2, 3, 16, 16))


@pytest.mark.parametrize("n_layers", [1, 3])
def test_torch_refuses_the_doubled_widths_and_runs_the_pairs(n_layers):
    with pytest.raises(RuntimeError):
        _run(TOKENIZER.format(conv_in="a", conv_out="b * 2", spec="b c h w"), n_layers)
    with pytest.raises(RuntimeError):
        _run(TOKENIZER.format(conv_in="a * 2", conv_out="b", spec="b c h w"), n_layers)
    out = _run(TOKENIZER.format(conv_in="a", conv_out="b", spec="b c h w"), n_layers)
    assert out.shape[-1] == 8


def test_torch_runs_the_conv_of_the_tail_width_on_one_layer():
    # conv_in=b: the first conv takes c_out channels; with one layer c_out is the
    # tail, and nothing else is there to disagree only for 3 input channels
    source = TOKENIZER.format(conv_in="b", conv_out="b", spec="b c h w")
    torch = pytest.importorskip("torch")
    cls = jaxtyped_class(source, "Tokenizer")
    assert cls(1, 3, 3)(torch.randn(2, 3, 16, 16)).shape[-1] == 3


LAST_ITEM = """
from jaxtyping import Float
from torch import Tensor, nn


class Head(nn.Module):
    def __init__(self, depth, dim, hidden, classes):
        super().__init__()
        dims = [dim] + [hidden] * (depth - 1) + [2 * dim]
        self.norm = nn.LayerNorm(dims[-1])
        self.fc = nn.Linear({fc_in}, classes)

    def forward(self, x: Float[Tensor, "b d"]):
        return self.fc(self.norm(x))
"""


def test_the_last_item_of_a_framed_list_is_its_tail():
    assert _errors(LAST_ITEM.format(fc_in="dims[-1] * 2")) == ["14 SHP307"]
    assert _errors(LAST_ITEM.format(fc_in="dims[-1]")) == []


def test_the_first_item_of_a_framed_list_is_its_head():
    assert _errors(LAST_ITEM.format(fc_in="dims[0]")) == ["14 SHP307"]
    assert _errors(LAST_ITEM.format(fc_in="dims[0] * 2")) == []


def test_an_item_past_the_head_is_not_known():
    # dims[1] is hidden, or 2·dim when depth is 1: no verdict
    assert _errors(LAST_ITEM.format(fc_in="dims[1]")) == []


def test_torch_on_the_last_item():
    torch = pytest.importorskip("torch")
    cases = [("dims[-1] * 2", True), ("dims[-1]", False), ("dims[0]", True), ("dims[1]", False)]
    for fc_in, raises in cases:
        ns: dict = {}
        exec(compile(LAST_ITEM.format(fc_in=fc_in), "m.py", "exec"), ns)  # noqa: S102
        try:
            ns["Head"](1, 4, 6, 3)(torch.randn(2, 8))
        except RuntimeError:
            assert raises
        else:
            assert not raises
