"""Plain `check` on sizes a constructor takes separately (issue 25): an op that needs
two of them equal states the constraint, which the constructions of the class in the
file decide (size_ties.py): none, or one passing two different numbers, is an error
(SHP321, the constraint handed on through constructors that forward their own
parameters); every one passing equal values, nothing; a construction the analysis
cannot decide leaves the warning (SHP318). Formulas no positive sizes make equal
(`dim` and `2·dim`) are errors in every op that compares sizes. Torch judges each
case at sizes that all differ: the code flagged raises."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import analyze, diagnose, torch_raises

HEAD = "import torch\nfrom torch import nn\n\n\n"


def _found(source: str, severity: str) -> list[tuple[int, str, str]]:
    return [(d.line, d.code, d.message) for d in diagnose(source) if d.severity == severity]


def _module(init: str, forward: str, params: str = "dim, hidden_dim") -> str:
    def body(lines: str) -> str:
        return "".join(f"        {line}\n" for line in lines.splitlines())

    return (
        HEAD
        + "class Block(nn.Module):\n"
        + f"    def __init__(self, {params}):\n"
        + "        super().__init__()\n"
        + body(init)
        + "\n    def forward(self, x):\n"
        + body(forward)
    )


FEED_FORWARD = _module(
    "self.up = nn.Linear(dim, hidden_dim)\nself.down = nn.Linear(dim, dim)\n",
    "return self.down(self.up(x))\n",
)


def test_a_layer_of_dim_fed_hidden_dim_in_a_class_nothing_constructs_is_an_error():
    assert torch_raises(FEED_FORWARD, "Block(48, 96)", (2, 5, 48))
    assert not _found(FEED_FORWARD, "warning")
    ((line, code, message),) = _found(FEED_FORWARD, "error")
    assert code == "SHP321" and line == 12
    assert "dim in Linear(in_features=dim) must equal hidden_dim" in message
    assert "this needs dim = hidden_dim" in message
    assert message.endswith("nothing in this file constructs Block")


def test_a_residual_of_another_width_is_an_error():
    source = _module("self.proj = nn.Linear(dim, hidden_dim)\n", "return x + self.proj(x)\n")
    assert torch_raises(source, "Block(48, 96)", (2, 5, 48))
    ((_, code, message),) = _found(source, "error")
    assert code == "SHP321" and "(dim vs hidden_dim)" in message


def test_a_product_of_sizes_against_a_size_is_an_error():
    source = _module(
        "inner = heads * dim_head\nself.to_v = nn.Linear(dim, inner)\nself.out = nn.Linear(dim, dim)\n",
        "return self.out(self.to_v(x))\n",
        params="dim, heads=8, dim_head=64",
    )
    assert torch_raises(source, "Block(48, 4, 16)", (2, 5, 48))
    ((_, code, message),) = _found(source, "error")
    assert code == "SHP321" and "this needs dim = dim_head·heads" in message


CHUNKED = _module(
    "self.to_qkv = nn.Linear(dim, {qkv})\nself.to_out = nn.Linear(heads * dim_head, dim)\n",
    "q, k, v = self.to_qkv(x).chunk(3, dim=-1)\nreturn self.to_out(v)\n",
    params="dim, heads=8, dim_head=64",
)


def test_a_projection_chunked_into_pieces_of_another_width_is_an_error():
    # chunk(3) of dim cuts pieces of ceil(dim/3), the last one what is left: v has
    # dim - 2·ceil(dim/3) features where to_out takes heads·dim_head, two sizes the
    # constructor takes apart (48 - 2·16 = 16 against 4·16 = 64: torch raises)
    source = CHUNKED.format(qkv="dim")
    assert torch_raises(source, "Block(48, 4, 16)", (2, 5, 48))
    ((_, code, message),) = _found(source, "error")
    assert code == "SHP321" and "this needs dim_head·heads = dim - 2·((dim + 2)//3)" in message
    # as written, 3·heads·dim_head divides into three: nothing to say
    as_written = CHUNKED.format(qkv="heads * dim_head * 3")
    assert not torch_raises(as_written, "Block(48, 4, 16)", (2, 5, 48))
    assert not _found(as_written, "error")


def test_the_halves_of_one_size_of_unknown_parity_are_no_constraint():
    # (d + 1)//2 against d//2 holds for every even d: one size's parity, which the
    # code holds, not two sizes the constructor takes apart
    source = _module(
        "self.up = nn.Linear(dim, dim)\nself.proj = nn.Linear(dim // 2, dim)\n",
        "a, gate = self.up(x).chunk(2, dim=-1)\nreturn self.proj(a) * self.proj(gate)\n",
        params="dim",
    )
    assert not torch_raises(source, "Block(48)", (2, 5, 48))
    assert not _found(source, "error") and not _found(source, "warning")


def test_the_analysis_goes_on_under_the_constraint():
    # the warning does not turn what follows into unknowns: the second Linear runs
    # as torch runs it for callers that pass dim = hidden_dim
    result = analyze(FEED_FORWARD)
    (down,) = [c for c in result.calls if c["line"] == 12 and c["column"] == 16]
    assert down["inputs"] == [["...", "hidden_dim"]] and down["output"] == ["...", "dim"]
    assert "2·?·dim²" in down["notes"][0]


def test_parameters_the_class_compares_are_left_alone():
    source = _module(
        "self.proj = nn.Linear(dim, hidden_dim)\nself.keep = dim == hidden_dim\n",
        "return x + self.proj(x) if self.keep else self.proj(x)\n",
    )
    assert not _found(source, "warning") and not _found(source, "error")


def test_a_name_the_method_binds_is_not_the_constructors():
    # `b, dim = x.shape` names x's last dim `dim`, whatever the constructor's is
    source = _module(
        "self.proj = nn.Linear(hidden_dim, hidden_dim)\n",
        "b, dim = x.shape\ny = torch.zeros(b, dim)\nreturn self.proj(x) + y\n",
    )
    assert not [f for f in _found(source, "warning") if f[1] == "SHP318"]


def test_equal_parameters_run():
    # the constraint is real: the same module with equal sizes runs
    assert not torch_raises(FEED_FORWARD, "Block(48, 48)", (2, 5, 48))


def test_a_norm_of_twice_the_width_is_an_error():
    source = _module(
        "self.proj = nn.Linear(hidden_dim, dim)\nself.norm = nn.LayerNorm(dim * 2)\n",
        "return self.norm(self.proj(x))\n",
    )
    assert torch_raises(source, "Block(48, 96)", (2, 5, 96))
    ((_, code, message),) = _found(source, "error")
    assert code == "SHP309" and "normalized_shape [2·dim]" in message


def test_a_conv_fed_half_its_channels_is_an_error():
    source = _module(
        "self.a = nn.Conv2d(hidden_dim, dim, 3, padding=1)\n"
        "self.b = nn.Conv2d(dim * 2, dim, 3, padding=1)\n",
        "b, c, h, w = x.shape\nreturn self.b(self.a(x))\n",
    )
    assert torch_raises(source, "Block(8, 6)", (2, 6, 5, 5))
    ((_, code, message),) = _found(source, "error")
    assert code == "SHP309" and "expect 2·dim input channels, got dim" in message


def test_a_batch_norm_of_another_width_after_a_conv_is_an_error():
    source = _module(
        "self.a = nn.Conv2d(dim, hidden_dim, 3, padding=1)\nself.bn = nn.BatchNorm2d(dim)\n",
        "b, c, h, w = x.shape\nreturn self.bn(self.a(x))\n",
    )
    assert torch_raises(source, "Block(8, 6)", (2, 8, 5, 5))
    ((_, code, message),) = _found(source, "error")
    assert code == "SHP321" and "this needs hidden_dim = dim" in message


def test_a_size_a_submodule_was_given_no_value_for_is_not_the_callers_name():
    # Inner's `out_channels` is unknown here (an undecided conditional), not the
    # outer class's own parameter of the same name
    source = HEAD + textwrap.dedent(
        """
        class Inner(nn.Module):
            def __init__(self, in_channels, out_channels):
                super().__init__()
                self.conv = nn.Conv2d(in_channels, out_channels, 1)

            def forward(self, x):
                b, c, h, w = x.shape
                return self.conv(x)


        class Outer(nn.Module):
            def __init__(self, in_channels, out_channels, double: bool = True):
                super().__init__()
                width = 2 * out_channels if double else out_channels
                self.inner = Inner(in_channels, width)
                self.post = nn.Conv2d(2 * out_channels, 2 * out_channels, 1)

            def forward(self, x):
                b, c, h, w = x.shape
                return self.post(self.inner(x))
        """
    )
    assert not torch_raises(source, "Outer(3, 4)", (2, 3, 5, 5))
    assert not _found(source, "error")


def test_a_layer_norm_names_an_input_no_code_shaped():
    # the input's last dim is unknown until LayerNorm(dim) meets it: from there on it is dim
    source = _module(
        "self.net = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim * 2, hidden_dim))\n",
        "return self.net(x)\n",
    )
    assert torch_raises(source, "Block(8, 6)", (2, 5, 8))
    ((_, code, message),) = _found(source, "error")
    assert code == "SHP307" and "2·dim in Linear(in_features=2·dim) must equal dim" in message


def test_a_conv_names_the_channels_of_an_input_of_unknown_rank():
    # a conv's input is [N, C, H, W] or [C, H, W]: its channel axis is in_channels either way
    source = _module(
        "self.a = nn.Conv2d(dim, hidden_dim, 3)\nself.b = nn.Conv2d(hidden_dim * 2, dim, 3)\n",
        "return self.b(self.a(x))\n",
    )
    assert torch_raises(source, "Block(8, 6)", (2, 8, 9, 9))
    ((_, code, message),) = _found(source, "error")
    assert code == "SHP309" and "expect 2·hidden_dim input channels, got hidden_dim" in message


def test_a_parameter_of_twice_the_width_with_a_size_of_unknown_value():
    # torch.randn(h // 2, 2 * dim), with h from pair(dim) (dim itself, the helper run
    # on it), is [dim//2, 2·dim]; a parameter of any first size conflicts all the same
    source = _module(
        "h, w = pair(dim)\n"
        "self.proj = nn.Linear(hidden_dim, dim)\n"
        "self.pos = nn.Parameter(torch.randn(h // 2, dim * 2))\n",
        "return self.proj(x) + self.pos\n",
    ).replace(
        "class Block",
        "def pair(t):\n    return t if isinstance(t, tuple) else (t, t)\n\n\nclass Block",
    )
    assert torch_raises(source, "Block(8, 6)", (2, 4, 6))
    ((_, code, message),) = _found(source, "error")
    assert code == "SHP308" and "(dim vs 2·dim" in message


CALLEE = HEAD + textwrap.dedent(
    """
    class Inner(nn.Module):
        def __init__(self, dim, hidden_dim):
            super().__init__()
            self.norm = nn.LayerNorm(dim)
            self.up = nn.Linear(dim, hidden_dim)
            self.down = nn.Linear(hidden_dim, dim * 2)

        def forward(self, x):
            x = self.norm(x)
            return self.down(self.up(x))


    class Outer(nn.Module):
        def __init__(self, dim, hidden_dim):
            super().__init__()
            self.inner = Inner(dim, hidden_dim)

        def forward(self, x):
            return self.inner(x) + x
    """
)


def test_an_argument_takes_the_shape_its_callee_learnt():
    # Inner.forward raises unless x ends in dim: so does Outer's x after the call
    assert torch_raises(CALLEE, "Outer(8, 6)", (2, 5, 8))
    ((_, code, message),) = _found(CALLEE, "error")
    assert code == "SHP308" and "(2·dim vs dim" in message


def test_a_broadcast_with_a_tensor_of_unknown_rank_keeps_a_size_that_is_never_one():
    # x * g, x of unknown rank, g [1, 2·dim, 1, 1]: the product's channels are 2·dim
    source = _module(
        "self.g = nn.Parameter(torch.ones(1, dim * 2, 1, 1))\nself.conv = nn.Conv2d(dim, dim, 1)\n",
        "return self.conv(torch.sigmoid(x) * self.g)\n",
    )
    assert torch_raises(source, "Block(8, 6)", (2, 8, 5, 5))
    ((_, code, message),) = _found(source, "error")
    assert code == "SHP309" and "expect dim input channels, got 2·dim" in message


def test_a_size_that_may_be_one_broadcasts_with_a_tensor_of_unknown_rank():
    # g [1, dim, 1, 1] with dim = 1 broadcasts against any channel count: nothing to say
    source = _module(
        "self.g = nn.Parameter(torch.ones(1, dim, 1, 1))\nself.conv = nn.Conv2d(hidden_dim, dim, 1)\n",
        "return self.conv(torch.sigmoid(x) * self.g)\n",
    )
    assert not torch_raises(source, "Block(1, 6)", (2, 6, 5, 5))
    assert not _found(source, "error")


# A channel-first norm of the constructor's width (`g` of [1, dim, 1, 1]) on an input
# of unknown channels: the product has dim channels, or the input's where dim is 1.
CHANNEL_NORM = HEAD + textwrap.dedent(
    """
    class ChanNorm(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.g = nn.Parameter(torch.ones(1, dim, 1, 1))

        def forward(self, x):
            var = torch.var(x, dim=1, unbiased=False, keepdim=True)
            mean = torch.mean(x, dim=1, keepdim=True)
            return (x - mean) / (var + 1e-5).sqrt() * self.g


    class Block(nn.Module):
        def __init__(self, dim, hidden_dim):
            super().__init__()
            self.norm = ChanNorm(dim)
            self.conv = nn.Conv2d({conv_in}, hidden_dim, 1)

        def forward(self, x):
            return self.conv(self.norm(x))
    """
)


def test_a_conv_after_a_channel_norm_of_another_width_is_an_error():
    source = CHANNEL_NORM.format(conv_in="dim * 2")
    assert torch_raises(source, "Block(8, 6)", (2, 8, 5, 5))
    ((line, code, message),) = _found(source, "error")
    assert (line, code) == (24, "SHP309")
    assert "expect 2·dim input channels, got dim" in message


def test_a_conv_after_a_channel_norm_of_its_width_is_no_error():
    source = CHANNEL_NORM.format(conv_in="dim")
    assert not torch_raises(source, "Block(8, 6)", (2, 8, 5, 5))
    assert not _found(source, "error") and not _found(source, "warning")


def test_a_channel_norm_of_width_one_lets_any_width_through_its_caller_too():
    # ChanNorm(1) broadcasts to the input's 6 channels, which hidden_dim takes: the
    # size the norm's call gives may be the input's, so no constraint is stated
    source = CHANNEL_NORM.format(conv_in="hidden_dim")
    assert not torch_raises(source, "Block(1, 6)", (2, 6, 5, 5))
    assert not _found(source, "error")


def _one_error_fixed_by_dim(source: str, code: str, text: str, shape=(2, 5, 8)) -> None:
    """One error of that code and text; the source with `dim * 2` made `dim` runs in
    torch (Block(8, 6) on that shape) and has none."""
    ((_, found, message),) = _found(source, "error")
    assert found == code and text in message
    fixed = source.replace("dim * 2", "dim")
    assert not torch_raises(fixed, "Block(8, 6)", shape)
    assert not _found(fixed, "error")


@pytest.mark.parametrize(
    "forward",
    [
        # MHA on a query of unknown rank ends in embed_dim, the out-projection's width
        "x = x + self.attn(x, x, x, need_weights=False)[0]\nreturn self.fc(x)\n",
        # torch asserts the query's last dim is embed_dim, so x ends in dim after the call
        "a = self.attn(x, x, x, need_weights=False)[0]\nreturn self.fc(x) + a.sum()\n",
    ],
)
def test_attention_on_a_query_of_unknown_rank_gives_its_embedding_width(forward):
    source = _module(
        "self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)\n"
        "self.fc = nn.Linear(dim * 2, hidden_dim)\n",
        forward,
    )
    assert torch_raises(source, "Block(8, 6)", (2, 5, 8))
    _one_error_fixed_by_dim(source, "SHP307", "must equal dim in dim -1 of input [..., dim]")


def test_attention_checks_the_width_of_a_query_of_unknown_rank():
    # Conv1d takes (C, L) or (N, C, L): its output's rank is not known, its width is
    source = _module(
        "self.conv = nn.Conv1d(dim, dim * 2, 1)\nself.attn = nn.MultiheadAttention(dim, 2)\n",
        "y = self.conv(x).transpose(-1, -2)\nreturn self.attn(y, y, y, need_weights=False)[0]\n",
    )
    with pytest.raises(AssertionError):  # torch's own check of the query's width
        torch_raises(source, "Block(8, 6)", (2, 8, 5))
    _one_error_fixed_by_dim(
        source, "SHP309", "query has 2·dim features, the layer expects dim", (2, 8, 5)
    )


# A model class built by its users, handing its sizes on to the layer that needs them
# equal: ViT(dim, mlp_dim) -> Transformer(dim, mlp_dim) -> FeedForward(dim, hidden_dim).
FORWARDED = HEAD + textwrap.dedent(
    """
    class FeedForward(nn.Module):
        def __init__(self, dim, hidden_dim):
            super().__init__()
            self.norm = nn.LayerNorm(hidden_dim)
            self.up = nn.Linear(dim, hidden_dim)

        def forward(self, x):
            return self.up(self.norm(x))


    class Transformer(nn.Module):
        def __init__(self, dim, depth, mlp_dim):
            super().__init__()
            self.layers = nn.ModuleList([FeedForward(dim, mlp_dim) for _ in range(depth)])

        def forward(self, x):
            for ff in self.layers:
                x = ff(x)
            return x


    class Model(nn.Module):
        def __init__(self, *, dim, mlp_dim, depth=2):
            super().__init__()
            self.transformer = Transformer(dim, depth, mlp_dim=mlp_dim)

        def forward(self, x):
            return self.transformer(x)
    """
)


def test_the_constraint_is_handed_on_through_forwarding_constructors():
    assert torch_raises(FORWARDED, "Model(dim=48, mlp_dim=96)", (2, 5, 48))
    assert not torch_raises(FORWARDED, "Model(dim=48, mlp_dim=48)", (2, 5, 48))
    errors = _found(FORWARDED, "error")
    assert [(line, code) for line, code, _ in errors] == [(13, "SHP321")]
    message = errors[0][2]
    assert "this needs dim = hidden_dim" in message
    assert "line 19 passes it on as Transformer's dim = mlp_dim" in message
    assert "line 30 passes it on as Model's dim = mlp_dim" in message
    assert message.endswith("nothing in this file constructs Model")


def test_constructions_that_pass_one_value_twice_meet_the_constraint():
    # every construction passes equal values: torch runs them, nothing to say
    source = FORWARDED.replace("Transformer(dim, depth, mlp_dim=mlp_dim)", "Transformer(dim, depth, dim)")
    source += "\n\nwide = Transformer(96, 1, 96)\n"
    assert not torch_raises(source, "Model(dim=48, mlp_dim=96)", (2, 5, 48))
    assert not torch_raises(source, "lambda x: wide(x.repeat(1, 1, 2))", (2, 5, 48))
    found = _found(source, "error") + _found(source, "warning")
    assert not [f for f in found if f[1] in ("SHP318", "SHP321")]


def test_a_construction_with_two_different_numbers_is_an_error():
    source = FEED_FORWARD + "\n\nblock = Block(48, 96)\n"
    assert torch_raises(source, "block", (2, 5, 48))
    ((line, code, message),) = _found(source, "error")
    assert code == "SHP321" and line == 12
    assert message.endswith("line 15 constructs Block with 48 and 96")


def test_constructions_the_analysis_cannot_decide_leave_the_warning():
    # widths picked at run time, the class handed out as a value, **kwargs over the
    # two: constructions that may pass equal sizes (torch runs those) or not
    for tail in (
        "def build(widths):\n    return Block(widths[0], widths[1])\n",
        "def build(widths, cls=Block):\n    return cls(*widths)\n",
        "def build(sizes):\n    return Block(**sizes)\n",
    ):
        source = FEED_FORWARD + "\n\n" + tail
        assert torch_raises(source, "build((48, 96)) if 'sizes' not in build.__code__.co_varnames "
                            "else build(dict(dim=48, hidden_dim=96))", (2, 5, 48))
        assert not torch_raises(source, "build((48, 48)) if 'sizes' not in build.__code__.co_varnames "
                                "else build(dict(dim=48, hidden_dim=48))", (2, 5, 48))
        assert not _found(source, "error"), tail
        assert [f[1] for f in _found(source, "warning")] == ["SHP318"], tail


def test_a_name_rebound_after_the_construction_in_a_loop_hands_its_first_turn_on():
    # `for ...: Transformer(dim, mlp_dim); dim *= 2`: the first turn builds with the
    # caller's dim, a later one with a dim of its own; rebound before the
    # construction, even the first turn's dim is no longer the caller's
    grown = FORWARDED.replace(
        "self.transformer = Transformer(dim, depth, mlp_dim=mlp_dim)",
        "self.stages = nn.ModuleList()\n"
        "        for _ in range(depth):\n"
        "            self.stages.append(Transformer(dim, 1, mlp_dim=mlp_dim))\n"
        "            dim *= 2",
    ).replace("return self.transformer(x)", "return self.stages[0](x)")
    assert torch_raises(grown, "Model(dim=48, mlp_dim=96)", (2, 5, 48))
    assert not torch_raises(grown, "Model(dim=48, mlp_dim=48, depth=1)", (2, 5, 48))
    ((_, code, message),) = _found(grown, "error")
    assert code == "SHP321"
    assert "passes it on as Model's dim = mlp_dim" in message
    before = grown.replace(
        "            self.stages.append(Transformer(dim, 1, mlp_dim=mlp_dim))\n"
        "            dim *= 2",
        "            dim *= 2\n"
        "            self.stages.append(Transformer(dim, 1, mlp_dim=mlp_dim))",
    )
    assert before != grown
    assert not torch_raises(before, "Model(dim=24, mlp_dim=48, depth=1)", (2, 5, 48))
    assert not _found(before, "error")
    assert [f[1] for f in _found(before, "warning")] == ["SHP318"]
    # a comprehension's own `for` binds before its element runs, whatever the text
    own = FORWARDED.replace(
        "self.transformer = Transformer(dim, depth, mlp_dim=mlp_dim)",
        "self.stages = nn.ModuleList(\n"
        "            [Transformer(dim, 1, mlp_dim=mlp_dim) for dim in (mlp_dim, mlp_dim)]\n"
        "        )",
    ).replace("return self.transformer(x)", "return self.stages[0](x)")
    assert own != FORWARDED
    assert not torch_raises(own, "Model(dim=48, mlp_dim=96)", (2, 5, 96))
    assert not _found(own, "error")


def test_a_construction_in_a_closure_of_the_constructor_hands_the_constraint_on():
    # `block = lambda: FeedForward(dim, mlp_dim)` reads Transformer's own parameters
    source = FORWARDED.replace(
        "self.layers = nn.ModuleList([FeedForward(dim, mlp_dim) for _ in range(depth)])",
        "block = lambda: FeedForward(dim, mlp_dim)\n"
        "        self.layers = nn.ModuleList([block() for _ in range(depth)])",
    )
    assert torch_raises(source, "Model(dim=48, mlp_dim=96)", (2, 5, 48))
    assert not torch_raises(source, "Model(dim=48, mlp_dim=48)", (2, 5, 48))
    ((_, code, message),) = _found(source, "error")
    assert code == "SHP321" and "passes it on as Transformer's dim = mlp_dim" in message


def test_a_default_that_makes_the_sizes_differ_at_a_construction_is_an_error():
    # FeedForward(dim=width) takes mult = 4: its norm of dim·4 meets a tensor of dim
    source = HEAD + textwrap.dedent(
        """
        class FeedForward(nn.Module):
            def __init__(self, dim, mult=4):
                super().__init__()
                inner = dim * mult
                self.norm = nn.LayerNorm(inner)
                self.up = nn.Linear(dim, inner)

            def forward(self, x):
                return self.up(self.norm(x))


        class Model(nn.Module):
            def __init__(self, widths):
                super().__init__()
                self.layers = nn.ModuleList([FeedForward(dim=width) for width in widths])

            def forward(self, x):
                return self.layers[0](x)
        """
    )
    assert torch_raises(source, "Model((48,))", (2, 5, 48))
    ((_, code, message),) = _found(source, "error")
    assert code == "SHP321"
    assert message.endswith("line 20 constructs FeedForward with width and 4·width")


def test_a_whole_number_computed_from_a_size_at_a_construction_is_that_size():
    # `int(widths[0] * 2)` is twice the value `widths[0]` reads (mobile_vit's blocks)
    built = "Transformer(widths[0], depth, int(widths[0] * MULT))"
    model = FORWARDED.replace("*, dim, mlp_dim, depth=2", "widths, depth=2").replace(
        "Transformer(dim, depth, mlp_dim=mlp_dim)", built
    )
    twice, once = model.replace("MULT", "2"), model.replace("MULT", "1")
    assert torch_raises(twice, "Model((48,))", (2, 5, 48))
    ((_, code, message),) = _found(twice, "error")
    assert code == "SHP321"
    assert message.endswith("line 30 constructs Transformer with widths[0] and 2·widths[0]")
    assert not torch_raises(once, "Model((48,))", (2, 5, 48))
    found = _found(once, "error") + _found(once, "warning")
    assert not [f for f in found if f[1] in ("SHP318", "SHP321")]


# vit-pytorch's Attention: the output projection is left out where heads == 1 and
# dim_head == dim, the one case where inner_dim is dim.
ATTENTION = HEAD + textwrap.dedent(
    """
    class Attention(nn.Module):
        def __init__(self, dim, heads=8, dim_head=64):
            super().__init__()
            inner_dim = dim_head * heads
            project_out = not (heads == 1 and dim_head == dim)
            self.heads = heads
            self.norm = nn.LayerNorm(NORM)
            self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
            self.to_out = nn.Linear(inner_dim, dim) if project_out else nn.Identity()

        def forward(self, x):
            x = self.norm(x)
            q, k, v = self.to_qkv(x).chunk(3, dim=-1)
            b, n, _ = q.shape
            q, k, v = (t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in (q, k, v))
            out = (q @ k.transpose(-1, -2)).softmax(dim=-1) @ v
            return self.to_out(out.transpose(1, 2).reshape(b, n, -1))
    """
)


def test_a_comparison_of_a_part_of_the_constraint_leaves_it_to_the_constructions():
    # `dim_head == dim` is compared; the norm of inner_dim fed x needs dim = heads·dim_head
    bad = ATTENTION.replace("NORM", "inner_dim")
    assert torch_raises(bad, "Attention(48, heads=4, dim_head=16)", (2, 5, 48))
    ((_, code, message),) = _found(bad, "error")
    assert code == "SHP321" and "this needs dim = dim_head·heads" in message
    good = ATTENTION.replace("NORM", "dim")
    assert not torch_raises(good, "Attention(48, heads=4, dim_head=16)", (2, 5, 48))
    assert not torch_raises(good, "Attention(48, heads=1, dim_head=48)", (2, 5, 48))
    found = _found(good, "error") + _found(good, "warning")
    assert not [f for f in found if f[1] in ("SHP318", "SHP321")]


def test_the_comparison_of_the_two_sides_leaves_the_constraint_alone():
    # `if dim != dim_out:` builds the projection; its else path runs only with them equal
    source = _module(
        "self.block = nn.Linear(dim, hidden_dim)\n"
        "if dim != hidden_dim:\n    self.res = nn.Linear(dim, hidden_dim)\n"
        "else:\n    self.res = nn.Identity()\n",
        "return self.block(x) + self.res(x)\n",
    )
    assert not torch_raises(source, "Block(48, 96)", (2, 5, 48))
    assert not torch_raises(source, "Block(48, 48)", (2, 5, 48))
    found = _found(source, "error") + _found(source, "warning")
    assert not [f for f in found if f[1] in ("SHP318", "SHP321")]


# levit's FeedForward(dim, mult) with its second conv made a layer of dim: it needs
# dim·mult = dim, that is mult = 1 (sizes are positive), whatever dim the site passes;
# Transformer passes a dim_out it rebinds, which the constraint no longer needs.
MULTIPLIED = HEAD + textwrap.dedent(
    """
    class FeedForward(nn.Module):
        def __init__(self, dim, mult):
            super().__init__()
            self.up = nn.Linear(dim, dim * mult)
            self.down = nn.Linear(dim, dim)

        def forward(self, x):
            return self.down(self.up(x))


    class Transformer(nn.Module):
        def __init__(self, dim, mlp_mult=2, dim_out=None):
            super().__init__()
            dim_out = dim if dim_out is None else dim_out
            self.ff = FeedForward(dim_out, mlp_mult)

        def forward(self, x):
            return self.ff(x)


    class Model(nn.Module):
        def __init__(self, *, dim, mult):
            super().__init__()
            self.transformer = Transformer(dim, mult)

        def forward(self, x):
            return self.transformer(x)
    """
)


def test_a_factor_both_sides_share_cancels_before_the_constructions_judge():
    assert torch_raises(MULTIPLIED, "Model(dim=48, mult=2)", (2, 5, 48))
    assert not torch_raises(MULTIPLIED, "Model(dim=48, mult=1)", (2, 5, 48))
    errors = _found(MULTIPLIED, "error")
    assert [(line, code) for line, code, _ in errors] == [(13, "SHP321")]
    message = errors[0][2]
    assert "this needs dim = dim·mult" in message
    assert "line 20 passes it on as Transformer's mlp_mult = 1" in message
    assert "line 29 passes it on as Model's mult = 1" in message
    assert message.endswith("nothing in this file constructs Model")


def test_a_default_factor_at_a_construction_is_an_error():
    # Transformer(dim) takes mlp_mult = 2: its FeedForward needs 2 = 1
    source = MULTIPLIED.replace("Transformer(dim, mult)", "Transformer(dim)")
    assert torch_raises(source, "Model(dim=48, mult=1)", (2, 5, 48))
    ((_, code, message),) = _found(source, "error")
    assert code == "SHP321" and message.endswith("line 29 constructs Transformer with 2 and 1")


def test_a_factor_the_class_compares_is_left_to_the_warning():
    # `if mult == 1:` says the code knows the case apart: the constraint stays SHP318
    source = MULTIPLIED.replace(
        "self.down = nn.Linear(dim, dim)\n",
        "self.down = nn.Linear(dim, dim)\n        self.same = mult == 1\n",
    )
    assert torch_raises(source, "Model(dim=48, mult=2)", (2, 5, 48))
    assert not _found(source, "error")
    assert [f[1] for f in _found(source, "warning")] == ["SHP318"]


def test_a_parameter_whose_default_none_the_body_fills_leaves_the_warning():
    # `dim_out = dim_out or dim`: the default construction ties the two, so a class
    # nothing in the file constructs is not known to pick them apart (timm's Attention)
    source = _module(
        "dim_out = dim_out or dim\nself.proj = nn.Linear(dim, dim_out)\n",
        "return x + self.proj(x)\n",
        params="dim, heads=8, dim_out=None",
    )
    assert not torch_raises(source, "Block(48)", (2, 5, 48))
    assert torch_raises(source, "Block(48, dim_out=96)", (2, 5, 48))
    assert not _found(source, "error")
    ((_, code, message),) = _found(source, "warning")
    assert code == "SHP318" and "(dim vs dim_out)" in message


def test_a_parameter_with_a_number_for_default_is_still_picked_apart():
    source = _module(
        "self.proj = nn.Linear(dim, dim_out)\n", "return x + self.proj(x)\n",
        params="dim, dim_out=96",
    )
    assert torch_raises(source, "Block(48)", (2, 5, 48))
    ((_, code, _),) = _found(source, "error")
    assert code == "SHP321"


# The channel norm run on the caller's input, whose sizes a use named (`b, c, h, w =
# x.shape`): c is the input's, dim the caller's constructor's, and the product has dim
# channels (or c where dim is 1), as in the norm's own pass.
NAMED_INPUT = CHANNEL_NORM.replace(
    "        return self.conv(self.norm(x))",
    "        b, c, h, w = x.shape\n        return self.conv(self.norm(x))",
)
assert NAMED_INPUT != CHANNEL_NORM


def _bug_and_fix(template: str, bug: dict, fix: dict, shape, at: tuple, text: str) -> None:
    """The template filled with bug: torch raises on Block(8, 6) and the one error is
    at (line, code), saying text; filled with fix: torch runs it and there is none."""
    source = template.format(**bug)
    assert torch_raises(source, "Block(8, 6)", shape)
    ((line, code, message),) = _found(source, "error")
    assert (line, code) == at and text in message
    fixed = template.format(**fix)
    assert not torch_raises(fixed, "Block(8, 6)", shape)
    assert not _found(fixed, "error")


def test_a_channel_norm_run_on_named_sizes_gives_its_width():
    _bug_and_fix(
        NAMED_INPUT,
        {"conv_in": "dim * 2"},
        {"conv_in": "dim"},
        (2, 8, 5, 5),
        (25, "SHP309"),
        "expect 2·dim input channels, got dim",
    )


def test_a_channel_norm_of_width_one_run_on_named_sizes_lets_any_width_through():
    source = NAMED_INPUT.format(conv_in="hidden_dim")
    assert not torch_raises(source, "Block(1, 6)", (2, 6, 5, 5))
    assert not _found(source, "error")


# A residual whose input's leading dims are a run no code named (`*_, h, w = x.shape`)
# added to a block's output of 3·dim channels: the sum has 3·dim channels whatever the
# run holds (the input's are 1 or 3·dim), which a layer taking 2·dim refuses.
RESIDUAL = HEAD + textwrap.dedent(
    """
    class Block(nn.Module):
        def __init__(self, dim, hidden_dim):
            super().__init__()
            self.up = nn.Conv2d(1, {up}, 1)
            self.out = nn.Conv2d(dim * 2, hidden_dim, 1)

        def forward(self, x):
            *_, h, w = x.shape
            x = self.up(x.mean(dim=-3, keepdim=True)) + x
            return self.out(x)
    """
)


def test_a_residual_over_a_run_keeps_the_blocks_width():
    _bug_and_fix(
        RESIDUAL, {"up": "dim * 3"}, {"up": "dim * 2"}, (2, 1, 5, 5), (15, "SHP309"), "got 3·dim"
    )
