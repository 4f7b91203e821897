"""Plain `check` on a size an einops pattern named on the input against one the
constructor takes (issue 25): `q @ k` without the transpose contracts the pattern's
`n` with `dim_head`, two pattern axes swapped put the batch where a layer of
`heads·dim_head` expects the heads. Each holds only for inputs of one size (SHP320).
Torch judges each case at sizes that all differ: the code flagged raises, the code
left alone runs."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose, torch_raises

pytest.importorskip("einops")

HEAD = "import torch\nfrom einops import rearrange\nfrom torch import nn\n\n\n"


def _attention(forward: str) -> str:
    return (
        HEAD
        + "class Attention(nn.Module):\n"
        + "    def __init__(self, dim, heads, dim_head):\n"
        + "        super().__init__()\n"
        + "        self.heads = heads\n"
        + "        self.to_qkv = nn.Linear(dim, heads * dim_head * 3)\n"
        + "        self.to_out = nn.Linear(heads * dim_head, dim)\n\n"
        + "    def forward(self, x):\n"
        + "        q, k, v = self.to_qkv(x).chunk(3, dim=-1)\n"
        + "".join(f"        {line}\n" for line in forward.strip().splitlines())
    )


SPLIT = "q, k, v = [rearrange(t, '{}', h=self.heads) for t in (q, k, v)]"
GOOD_SPLIT = SPLIT.format("b n (h d) -> b h n d")
MERGE = "return self.to_out(rearrange(attn @ v, '{}'))"
GOOD_MERGE = MERGE.format("b h n d -> b n (h d)")
BUILD = "Attention(48, 4, 16)"
INPUT = (2, 10, 48)


def _found(source: str) -> list[tuple[int, str, str, str]]:
    return [(d.line, d.code, d.severity, d.message) for d in diagnose(source)]


def test_a_matmul_without_the_transpose_needs_the_sequence_to_be_dim_head():
    source = _attention(f"{GOOD_SPLIT}\nattn = (q @ k).softmax(dim=-1)\n{GOOD_MERGE}")
    assert torch_raises(source, BUILD, INPUT)
    ((line, code, severity, message),) = [f for f in _found(source) if f[1] == "SHP320"]
    assert (line, severity) == (16, "error")
    assert "(dim_head != n)" in message and "this needs n = dim_head" in message


def test_heads_and_batch_swapped_in_a_pattern_need_the_batch_to_be_heads():
    split = SPLIT.format("b n (h d) -> h b n d")
    source = _attention(f"{split}\nattn = (q @ k.transpose(-1, -2)).softmax(dim=-1)\n{GOOD_MERGE}")
    assert torch_raises(source, BUILD, INPUT)
    ((line, code, severity, message),) = [f for f in _found(source) if f[1] == "SHP320"]
    assert (line, severity) == (17, "error")
    assert "input [heads, n, b·dim_head]" in message and "this needs b = heads" in message


def test_the_released_attention_is_left_alone():
    source = _attention(
        f"{GOOD_SPLIT}\nattn = (q @ k.transpose(-1, -2)).softmax(dim=-1)\n{GOOD_MERGE}"
    )
    assert not torch_raises(source, BUILD, INPUT)
    assert not [f for f in _found(source) if f[2] == "error" or f[1].startswith("SHP3")]


def test_a_pattern_axis_a_layer_then_sizes_is_learning():
    """`c` is the input's channel count until a layer of `channels` says what it is:
    the first size a pattern's name meets is what it learns, no constraint."""
    source = (
        HEAD
        + "class Embed(nn.Module):\n"
        + "    def __init__(self, channels, dim):\n"
        + "        super().__init__()\n"
        + "        self.proj = nn.Linear(channels, dim)\n\n"
        + "    def forward(self, x):\n"
        + "        return self.proj(rearrange(x, 'b c h w -> b (h w) c'))\n"
    )
    assert not torch_raises(source, "Embed(3, 48)", (2, 3, 4, 4))
    assert not _found(source)


def test_a_pair_the_code_compares_is_left_alone():
    source = _attention(
        f"{GOOD_SPLIT}\nassert q.shape[-2] == q.shape[-1]\nattn = (q @ k).softmax(dim=-1)\n{GOOD_MERGE}"
    )
    assert not [f for f in _found(source) if f[1] == "SHP320"]


def test_an_einsum_with_two_axes_swapped_needs_the_batch_to_be_heads():
    split = GOOD_SPLIT
    source = _attention(
        f"{split}\nattn = torch.einsum('h b i d, b h j d -> b h i j', q, k)\n{GOOD_MERGE}"
    )
    assert torch_raises(source, BUILD, INPUT)
    found = [f for f in _found(source) if f[1] == "SHP320"]
    assert found and all(f[0] == 16 and f[2] == "error" for f in found)
    assert "axis 'b' is heads in one operand and b in another" in found[0][3]


def test_names_beside_a_spread_shape_take_the_items_after_it():
    """`b, n, _, h = *x.shape, self.heads`: h is the constructor's heads and x has
    three dims, so the pattern's `b` and `n` are x's and the swap is found."""
    source = _attention(
        "b, n, _, h = *x.shape, self.heads\n"
        "q, k, v = [rearrange(t, 'b n (h d) -> b h n d', h=h) for t in (q, k, v)]\n"
        "attn = (q @ k.transpose(-1, -2)).softmax(dim=-1)\n"
        "return self.to_out(rearrange(attn @ v, 'h b n d -> b n (h d)'))\n"
    )
    assert torch_raises(source, BUILD, INPUT)
    ((line, _, severity, message),) = [f for f in _found(source) if f[1] == "SHP320"]
    assert (line, severity) == (18, "error") and "this needs b = heads" in message


STARRED_SPREAD = (
    "b, n, *_, h = *x.shape, self.heads\n"
    "q, k, v = [rearrange(t, 'b n (h d) -> b h n d', h=h) for t in (q, k, v)]\n"
    "attn = (q @ k.transpose(-1, -2)).softmax(dim=-1)\n"
    "return self.to_out(rearrange(attn @ v, '{} -> b n (h d)'))\n"
)


@pytest.mark.parametrize(("merge", "wrong"), [("h b n d", True), ("b h n d", False)])
def test_names_beside_a_star_take_the_items_written_at_that_end(merge, wrong):
    """`b, n, *_, h = *x.shape, self.heads` (levit's Attention) on an x of unknown
    rank: Python gives h the tuple's last item, self.heads, whatever x's rank, and b
    and n x's first two dims: the swap in the merge is found as with `b, n, _, h`."""
    source = _attention(STARRED_SPREAD.format(merge))
    assert torch_raises(source, BUILD, INPUT) == wrong
    found = [f for f in _found(source) if f[1] == "SHP320"]
    if wrong:
        ((line, _, severity, message),) = found
        assert (line, severity) == (18, "error") and "this needs b = heads" in message
    else:
        assert not [f for f in _found(source) if f[2] == "error" or f[1].startswith("SHP3")]


# nest's Attention: the method copies the constructor's heads into a local of that
# name, beside the input's sizes; the product then swaps batch and heads.
COPIED_HEADS = (
    "b, n, _, heads = *x.shape, self.heads\n"
    "q, k, v = [rearrange(t, 'b n (h d) -> b h n d', h=heads) for t in (q, k, v)]\n"
    "attn = torch.einsum('b h i d, b h j d -> b h i j', q, k).softmax(dim=-1)\n"
    "out = torch.einsum('{}, b h j d -> b h i d', attn, v)\n"
    "return self.to_out(rearrange(out, 'b h n d -> b n (h d)'))\n"
)


def test_a_local_copying_the_constructors_size_of_its_name_is_that_size():
    source = _attention(COPIED_HEADS.format("h b i j"))
    assert torch_raises(source, BUILD, INPUT)
    found = [f for f in _found(source) if f[1] == "SHP320"]
    assert found and all((f[0], f[2]) == (18, "error") for f in found)
    assert "this needs b = heads" in found[0][3]


def test_a_local_copying_the_constructors_size_with_the_product_released_is_left_alone():
    source = _attention(COPIED_HEADS.format("b h i j"))
    assert not torch_raises(source, BUILD, INPUT)
    assert not [f for f in _found(source) if f[2] == "error" or f[1].startswith("SHP3")]


def test_a_local_the_method_binds_from_the_input_is_its_own():
    # `heads` read off the input is the input's size: meeting the batch is learning
    source = _attention(COPIED_HEADS.format("h b i j")).replace(
        "b, n, _, heads = *x.shape, self.heads", "b, n, heads = x.shape[0], x.shape[1], x.shape[0]"
    )
    assert not [f for f in _found(source) if f[1] == "SHP320"]


KEYED_MERGE = "return self.to_out(rearrange(attn @ v, 'b h n d -> b n (h d)', h=self.heads))"


def test_a_merge_whose_keyword_meets_the_batch_needs_the_batch_to_be_heads():
    """The split swaps batch and heads in q, k and v alike, so the products agree;
    the merge's `h=self.heads` then meets the batch at axis h, which einops checks."""
    split = SPLIT.format("b n (h d) -> h b n d")
    source = _attention(f"{split}\nattn = (q @ k.transpose(-1, -2)).softmax(dim=-1)\n{KEYED_MERGE}")
    assert torch_raises(source, BUILD, INPUT)
    ((line, _, severity, message),) = [f for f in _found(source) if f[1] == "SHP320"]
    assert (line, severity) == (17, "error")
    assert "input dim b does not match 'h' = heads" in message and "this needs b = heads" in message


def test_a_merge_whose_keyword_meets_the_heads_is_left_alone():
    source = _attention(
        f"{GOOD_SPLIT}\nattn = (q @ k.transpose(-1, -2)).softmax(dim=-1)\n{KEYED_MERGE}"
    )
    assert not torch_raises(source, BUILD, INPUT)
    assert not [f for f in _found(source) if f[2] == "error" or f[1].startswith("SHP3")]


def test_a_keyword_the_input_names_is_learning():
    """The first size a pattern's name meets is what it learns: `n=self.tokens` on an
    input whose n nothing set apart from it is the input's n, no constraint."""
    source = (
        HEAD
        + "class Pool(nn.Module):\n"
        + "    def __init__(self, tokens, dim):\n"
        + "        super().__init__()\n"
        + "        self.tokens = tokens\n"
        + "        self.proj = nn.Linear(dim, dim)\n\n"
        + "    def forward(self, x):\n"
        + "        return self.proj(rearrange(x, 'b n d -> b d n', n=self.tokens))\n"
    )
    assert not torch_raises(source, "Pool(10, 10)", (2, 10, 10))
    assert not [f for f in _found(source) if f[1] == "SHP320"]


# max_vit's window attention: heads is a floor quotient of two constructor sizes,
# and the windows are merged into the batch, so the batch axis is a product of the
# input's sizes (b·x·y); the swapped einsum then needs that product equal to heads.
WINDOWS = HEAD + (
    "class Attention(nn.Module):\n"
    "    def __init__(self, dim, dim_head):\n"
    "        super().__init__()\n"
    "        self.heads = dim // dim_head\n"
    "        self.to_qkv = nn.Linear(dim, dim * 3)\n"
    "        self.to_out = nn.Linear(dim, dim)\n\n"
    "    def forward(self, x):\n"
    "        x = rearrange(x, 'b x y w1 w2 d -> (b x y) (w1 w2) d')\n"
    "        q, k, v = self.to_qkv(x).chunk(3, dim=-1)\n"
    "        q, k, v = [rearrange(t, 'b n (h d) -> b h n d', h=self.heads) for t in (q, k, v)]\n"
    "        attn = torch.einsum('{}, b h j d -> b h i j', q, k).softmax(dim=-1)\n"
    "        out = torch.einsum('b h i j, b h j d -> b h i d', attn, v)\n"
    "        return self.to_out(rearrange(out, 'b h n d -> b n (h d)'))\n"
)
WINDOW_INPUT = (2, 3, 3, 2, 2, 64)


def test_a_merged_batch_against_a_quotient_of_the_constructors_sizes_is_an_error():
    source = WINDOWS.format("h b i d")
    assert torch_raises(source, "Attention(64, 16)", WINDOW_INPUT)
    found = [f for f in _found(source) if f[1] == "SHP320"]
    assert found[0][0] == 17 and all(f[0] in (17, 18) and f[2] == "error" for f in found)
    assert "this needs b·x·y = dim//dim_head" in found[0][3]


def test_a_merged_batch_with_the_einsum_released_is_left_alone():
    source = WINDOWS.format("b h i d")
    assert not torch_raises(source, "Attention(64, 16)", WINDOW_INPUT)
    assert not [f for f in _found(source) if f[2] == "error" or f[1].startswith("SHP3")]


def test_the_batch_against_a_quotient_of_the_constructors_sizes_is_an_error():
    source = WINDOWS.format("h b i d").replace(
        "x = rearrange(x, 'b x y w1 w2 d -> (b x y) (w1 w2) d')", "x = x * 1"
    )
    assert torch_raises(source, "Attention(64, 16)", (2, 4, 64))
    found = [f for f in _found(source) if f[1] == "SHP320"]
    assert found and found[0][0] == 17 and "this needs b = dim//dim_head" in found[0][3]


POOL = """
import torch
from einops import rearrange
from torch import nn


class Pool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.cls_ff = nn.Linear({cls_in}, dim * 2)
        self.down = nn.Conv2d(dim, dim * 2, 3, padding=1)

    def forward(self, x):
        cls_token, tokens = x[:, :1], x[:, 1:]
        cls_token = self.cls_ff(cls_token)
        tokens = rearrange(tokens, "b (h w) c -> b c h w", h=4)
        tokens = rearrange(self.down(tokens), "b c h w -> b (h w) c")
        return torch.cat((cls_token, tokens), dim=1)
"""


def test_two_slices_of_a_parameter_share_the_dims_past_the_index():
    # pit's Pool: x[:, :1] and x[:, 1:] of a parameter of unknown shape share every
    # dim after the two the index uses, so the Linear's in_features on one and the
    # conv's channels on the other are the same size: 2·dim against dim
    bug, benign = POOL.format(cls_in="dim * 2"), POOL.format(cls_in="dim")
    assert torch_raises(bug, "Pool(8)", (2, 17, 8))
    assert not torch_raises(benign, "Pool(8)", (2, 17, 8))
    errors = [d for d in diagnose(bug) if d.severity == "error"]
    assert [(d.line, d.code) for d in errors] == [(17, "SHP309")]
    assert "expect dim input channels, got 2·dim" in errors[0].message
    assert [d for d in diagnose(benign) if d.severity == "error"] == []


def test_an_index_of_a_tensor_of_known_rank_is_unchanged():
    source = HEAD + "def f(x):\n    y = x.view(2, 3)\n    return y[:, :1]\n"
    assert [d for d in diagnose(source) if d.severity == "error"] == []


def test_a_variadic_spelled_with_a_dim_of_unknown_size_stays_unbound():
    # vit_with_patch_merger: an op spelled a slice's [?, ?, ...] out with a dim of
    # unknown size, which has no count to bind the variadic to (an internal error)
    from click.testing import CliRunner

    from shapelint.cli import main
    from tests.helpers import corpus_package

    path = corpus_package("vit-pytorch") / "vit_pytorch" / "vit_with_patch_merger.py"
    r = CliRunner().invoke(main, ["check", str(path), "--no-cache", "--select", "ALL"])
    assert "SHP002" not in r.output and r.exit_code == 0


LAYERS = (
    "import torch\nfrom einops.layers.torch import Rearrange\nfrom torch import nn\n\n\n"
    + "class Attention(nn.Module):\n"
    + "    def __init__(self, dim, heads, dim_head):\n"
    + "        super().__init__()\n"
    + "        self.to_qkv = nn.Linear(dim, heads * dim_head * 3)\n"
    + "        self.split = Rearrange('{split}', h=heads)\n"
    + "        self.merge = Rearrange('b h n d -> b n (h d)')\n"
    + "        self.to_out = nn.Linear(heads * dim_head, dim)\n\n"
    + "    def forward(self, x):\n"
    + "        q, k, v = self.to_qkv(x).chunk(3, dim=-1)\n"
    + "        q, k, v = [self.split(t) for t in (q, k, v)]\n"
    + "        attn = (q @ k.transpose(-1, -2)).softmax(dim=-1)\n"
    + "        return self.to_out(self.merge(attn @ v))\n"
)


def test_a_rearrange_layer_names_its_input_as_the_function_does():
    """The layer runs rearrange with the pattern it was built with: its left side
    is the input's shape, so the batch swapped with the heads meets the heads at
    to_out as with the function (test_heads_and_batch_swapped_...)."""
    source = LAYERS.format(split="b n (h d) -> h b n d")
    assert torch_raises(source, BUILD, INPUT)
    ((line, code, severity, message),) = [f for f in _found(source) if f[1] == "SHP320"]
    assert (line, severity) == (18, "error")
    assert "input [heads, n, b·dim_head]" in message and "this needs b = heads" in message


def test_the_released_rearrange_layers_are_left_alone():
    source = LAYERS.format(split="b n (h d) -> b h n d")
    assert not torch_raises(source, BUILD, INPUT)
    assert not [f for f in _found(source) if f[2] == "error" or f[1].startswith("SHP3")]


PATCHES = (
    "import torch\nfrom einops.layers.torch import Rearrange\nfrom torch import nn\n\n\n"
    + "class Patches(nn.Module):\n"
    + "    def __init__(self, patch, channels, dim):\n"
    + "        super().__init__()\n"
    + "        patch_dim = channels * patch * patch\n"
    + "        self.embed = nn.Sequential(\n"
    + "            Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=patch, p2=patch),\n"
    + "            nn.LayerNorm({norm}),\n"
    + "            nn.Linear({fc_in}, dim),\n"
    + "        )\n\n"
    + "    def forward(self, img):\n"
    + "        return self.embed(img)\n"
)


@pytest.mark.parametrize(("norm", "fc_in"), [("patch_dim", "dim"), ("dim", "patch_dim")])
def test_a_patch_product_learns_its_channels_from_the_first_layer_that_sizes_it(norm, fc_in):
    """`(p1 p2 c)` on an input of unknown channels: the first layer that checks it
    makes c what it needs (`channels`, or `dim/patch²`), so a Linear of another
    width after it needs two of the constructor's sizes equal, which nothing in the
    file passes (SHP321), where torch raises at sizes that differ."""
    source = PATCHES.format(norm=norm, fc_in=fc_in)
    assert torch_raises(source, "Patches(4, 3, 40)", (2, 3, 8, 8))
    ((line, code, severity, message),) = [f for f in _found(source) if f[2] == "error"]
    assert (line, code) == (17, "SHP321")
    assert "[b, h·w, " in message


def test_the_released_patch_embedding_is_left_alone():
    source = PATCHES.format(norm="patch_dim", fc_in="patch_dim")
    assert not torch_raises(source, "Patches(4, 3, 40)", (2, 3, 8, 8))
    assert not [f for f in _found(source) if f[2] == "error" or f[1].startswith("SHP3")]


def test_a_patch_product_sized_twice_alike_is_the_inputs_channels():
    """LayerNorm(dim) and Linear(dim) on `(p1 p2 c)`: both hold where the input has
    dim/patch² channels, which a caller picks: learning, no error."""
    source = PATCHES.format(norm="dim", fc_in="dim")
    assert not torch_raises(source, "Patches(4, 3, 48)", (2, 3, 8, 8))
    assert not [f for f in _found(source) if f[2] == "error" or f[1].startswith("SHP3")]


SUBCLASS = (
    "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
    + "class LayerNorm(nn.LayerNorm):\n"
    + "    def forward(self, x):\n"
    + "        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)\n\n\n"
    + "class Linear(nn.Linear):\n"
    + "    def extra_repr(self):\n"
    + "        return 'linear'\n\n\n"
    + "class Block(nn.Module):\n"
    + "    def __init__(self, dim, hidden):\n"
    + "        super().__init__()\n"
    + "        self.norm = LayerNorm({norm})\n"
    + "        self.fc1 = Linear(dim, hidden)\n"
    + "        self.fc2 = Linear({fc2_in}, dim)\n\n"
    + "    def forward(self, x):\n"
    + "        return self.fc2(self.fc1(self.norm(x)))\n"
)


@pytest.mark.parametrize(("norm", "fc2_in"), [("hidden", "hidden"), ("dim", "dim")])
def test_a_subclass_of_a_torch_layer_without_a_constructor_is_built_by_torchs(norm, fc2_in):
    """`class LayerNorm(nn.LayerNorm)` overriding forward alone, `class Linear(nn.Linear)`
    overriding neither: Python runs torch's __init__, so the instance holds the
    layer's sizes (normalized_shape, weight) as the layer does, the override's
    `F.layer_norm(x, self.normalized_shape, ...)` says what x ends in, and the
    inherited forward checks its input as nn.Linear's does."""
    source = SUBCLASS.format(norm=norm, fc2_in=fc2_in)
    assert torch_raises(source, "Block(48, 96)", (2, 10, 48))
    errors = [f for f in _found(source) if f[2] == "error"]
    assert [(line, code) for line, code, _, _ in errors] == [(24, "SHP321")]
    assert "this needs " in errors[0][3]


def test_the_released_subclasses_are_left_alone():
    source = SUBCLASS.format(norm="dim", fc2_in="hidden")
    assert not torch_raises(source, "Block(48, 96)", (2, 10, 48))
    assert not [f for f in _found(source) if f[2] == "error" or f[1].startswith("SHP3")]


def test_a_patch_product_learns_a_number_under_dim():
    """`check --dim patch=4,channels=3,dim=40`: `(p1 p2 c)` is 16·c, the LayerNorm of
    48 makes c 3, so a Linear of 96 after it is an error, as torch's run says."""
    source = PATCHES.format(norm="patch_dim", fc_in="patch_dim * 2")
    assert torch_raises(source, "Patches(4, 3, 40)", (2, 3, 8, 8))
    sizes = {"patch": 4, "channels": 3, "dim": 40}
    found = [(d.line, d.code, d.message) for d in diagnose(source, check_dims=sizes)]
    ((line, code, message),) = [f for f in found if f[1] == "SHP307"]
    assert line == 17 and "input [b, h·w, 48]" in message
