"""Plain `check` of a call on a project module built inside another: the instance
holds the caller's sizes and layers, so a method run on it meets the conflicts torch
meets (issue 25's annotated class mutants: ddpm's `ResnetBlock(..., time_emb_dim=
time_dim)`, perceiver's `PreNorm(dim, Attention(...))` and `FeedForward(latent_dim)`
called on latents of another width). Each verdict is torch's."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose, torch_raises

KEYWORD_ONLY = """
from jaxtyping import Float
from torch import Tensor, nn


class Block(nn.Module):
    def __init__(self, dim, *, emb_dim=None):
        super().__init__()
        self.mlp = nn.Sequential(nn.SiLU(), nn.Linear({width}, dim)) if emb_dim is not None else None

    def forward(self, x: Float[Tensor, "b c"], emb: Float[Tensor, "b e"]) -> Float[Tensor, "b c"]:
        if self.mlp is not None:
            x = x + self.mlp(emb)
        return x


class Net(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.emb = nn.Linear(emb_dim, 2 * emb_dim)
        self.block = Block(emb_dim, emb_dim=2 * emb_dim)

    def forward(self, x: Float[Tensor, "b c"]):
        return self.block(x, self.emb(x))
"""

HANDED = """
from torch import nn


class Wrap(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.wrapped = Wrap(nn.Linear({width}, dim))

    def forward(self, x):
        return self.wrapped(self.proj(x))
"""

REFUTED = """
import torch
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Linear(dim, dim)

    def forward(self, x):
        return self.net(x)


class Net(nn.Module):
    def __init__(self, num_latents, latent_dim):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(num_latents, {width}))
        self.ff = FeedForward(latent_dim)

    def forward(self, data):
        return self.ff(self.latents) + data
"""


def _errors(source: str) -> list[str]:
    return [f"{d.line} {d.code} {d.message}" for d in diagnose(source) if d.severity == "error"]


def _judged(source: str, widths: tuple[str, str], runs: list, raises: list) -> list[str]:
    """The bug's errors, once torch ran the benign width's module on each of `runs`
    (build, input shape) and saw the bug's raise on each of `raises`, and the benign
    module has none."""
    benign, bug = (source.format(width=w) for w in widths)
    assert not any(torch_raises(benign, build, shape) for build, shape in runs)
    assert _errors(benign) == []
    assert all(torch_raises(bug, build, shape) for build, shape in raises)
    return _errors(bug)


def test_a_keyword_only_argument_sizes_the_instance_in_the_callers_names():
    # Block's own `emb_dim` is not Net's: read as Net's, the benign Linear(emb_dim)
    # met Net's 2·emb_dim (a false SHP307 before), and the doubled one met nothing
    sizes = [(f"Net({d})", (2, d)) for d in (1, 8)]
    errors = _judged(KEYWORD_ONLY, ("emb_dim", "emb_dim * 2"), sizes, sizes)
    assert len(errors) == 1
    assert errors[0].startswith("13 SHP307")
    assert "4·emb_dim" in errors[0] and "[b, 2·emb_dim]" in errors[0]


def test_a_module_handed_to_the_constructor_is_the_one_its_forward_calls():
    sizes = [(f"Net({d})", (2, d)) for d in (1, 8)]
    errors = _judged(HANDED, ("dim", "2 * dim"), sizes, sizes)
    assert len(errors) == 1
    assert errors[0].startswith("11 SHP307")
    assert "2·dim" in errors[0] and "(via Net.forward:" in errors[0]


def test_an_argument_the_callees_learnt_shape_refutes_runs_its_body():
    # FeedForward's summary holds for inputs of `dim` features; latents of twice
    # that run its body, which meets the Linear
    runs = [(f"Net(4, {d})", (4, d)) for d in (1, 8)]
    raises = [(f"Net(4, {d})", (4, 2 * d)) for d in (1, 8)]
    errors = _judged(REFUTED, ("latent_dim", "2 * latent_dim"), runs, raises)
    assert len(errors) == 1
    assert errors[0].startswith("12 SHP307")
    assert "[num_latents, 2·latent_dim]" in errors[0]


RETURNED = """
import torch
import torch.nn.functional as F
from jaxtyping import Float
from torch import Tensor, nn


class Norm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.g = nn.Parameter(torch.ones(1, dim, 1, 1))

    def forward(self, x: Float[Tensor, "b c h w"]) -> Float[Tensor, "b c h w"]:
        return F.normalize(x, dim=1) * self.g


class Attn(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = Norm({width})
        self.proj = nn.Conv2d(dim, dim, 1)

    def forward(self, x: Float[Tensor, "b c h w"]) -> Float[Tensor, "b c h w"]:
        return self.proj(self.norm(x))
"""


def test_an_annotated_return_equates_its_names_with_what_the_run_returns():
    # Norm(2·dim) returns `c` channels only where c = 2·dim (the broadcast with g,
    # then jaxtyping's return check): the conv of dim inputs after it then raises
    runs = [("Attn(4)", (2, 4, 5, 5))]
    raises = [("Attn(4)", (2, c, 5, 5)) for c in (1, 4, 8)]
    errors = _judged(RETURNED, ("dim", "dim * 2"), runs, raises)
    assert errors and errors[0].startswith("24 SHP309")
    assert "c = 2·dim" in errors[0]


ITEMS = """
import torch
from jaxtyping import Float
from torch import Tensor, nn


class Head(nn.Module):
    def __init__(self, channels, num_classes):
        super().__init__()
        init_dim, *_, last_dim = channels
        self.stem = nn.Conv2d(init_dim, channels[{k}], 1)
        self.conv = nn.Conv2d(channels[-2], last_dim, 1)
        self.fc = nn.Linear({fc_in}, num_classes)

    def forward(self, x: Float[Tensor, "b c h w"]) -> Float[Tensor, "b k"]:
        x = self.conv(self.stem(x)).mean(dim=(2, 3))
        return self.fc(x)
"""


def _items(fc_in: str, k: str = "-2") -> str:
    return ITEMS.format(fc_in=fc_in, k=k)


def _errors_of(source: str) -> list:
    return [(d.line, d.code) for d in diagnose(source) if d.severity == "error"]


def test_an_item_of_a_sequence_parameter_is_a_size_of_its_own():
    # last_dim is channels[-1]: a Linear of twice its width is fed it, for every list
    bug = _items("channels[-1] * 2")
    assert _errors_of(bug) == [(17, "SHP307")]
    assert "2·channels[-1]" in next(d.message for d in diagnose(bug))
    for channels in ([4, 8, 16], [4, 6, 8, 16]):
        assert torch_raises(bug, f"Head({channels}, 10)", (2, 4, 5, 5))
        assert not torch_raises(_items("channels[-1]"), f"Head({channels}, 10)", (2, 4, 5, 5))
    assert _errors_of(_items("channels[-1]")) == []
    assert _errors_of(_items("last_dim")) == []


def test_items_that_may_be_one_item_are_no_conflict():
    # channels[1] is channels[-2] for three channels: the list's length decides
    source = _items("channels[-1]", k="1")
    assert _errors_of(source) == []
    assert not torch_raises(source, "Head([4, 8, 16], 10)", (2, 4, 5, 5))
    assert torch_raises(source, "Head([4, 6, 8, 16], 10)", (2, 4, 5, 5))


OUTER = """

class Outer(nn.Module):
    def __init__(self, channels, num_classes):
        super().__init__()
        self.proj = nn.Conv2d(3, {proj}, 1)
        self.head = Head({given}, num_classes)

    def forward(self, x: Float[Tensor, "b c h w"]):
        return self.head.fc(self.head.conv(self.proj(x)).mean(dim=(2, 3)))
"""


def test_a_caller_gives_the_items_or_none_of_them():
    # Head's channels[-2] is the caller's channels[-3] for `channels[:-1]`: a name of
    # the callee's own, read as the caller's channels[-2], would be a false conflict
    source = _items("channels[-1]") + OUTER.format(proj="channels[-3]", given="channels[:-1]")
    assert _errors_of(source) == []
    assert not torch_raises(source, "Outer([4, 6, 8, 16], 10)", (2, 3, 5, 5))
    # a listed sequence gives its items: Head's conv takes 6 channels, proj gives 5
    listed = _items("channels[-1]") + OUTER.format(proj="5", given="[3, 6, 8]")
    assert _errors_of(listed) == [(27, "SHP309")]
    assert torch_raises(listed, "Outer([4, 6, 8, 16], 10)", (2, 3, 5, 5))
    fits = _items("channels[-1]") + OUTER.format(proj="6", given="[3, 6, 8]")
    assert _errors_of(fits) == []
    assert not torch_raises(fits, "Outer([4, 6, 8, 16], 10)", (2, 3, 5, 5))


CLASS_HANDED = """
from jaxtyping import Float
from torch import Tensor, nn


class Block(nn.Module):
    def __init__(self, dim, hidden, act=None):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 2 * hidden), act(), nn.Linear(hidden, dim))

    def forward(self, x):
        return self.net(x)


class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.block = Block(dim, 4 * dim, act=nn.{act})

    def forward(self, x: Float[Tensor, "b dim"]):
        return self.block(x)
"""


def test_a_layer_class_handed_to_the_constructor_builds_its_layer():
    # act() is any layer in Block's own pass; Net hands it nn.ReLU, which keeps the
    # 8·dim that the Linear of 4·dim inputs after it rejects, or nn.GLU, which halves it
    glu, relu = (CLASS_HANDED.format(act=a) for a in ("GLU", "ReLU"))
    assert not torch_raises(glu, "Net(8)", (2, 8))
    assert torch_raises(relu, "Net(8)", (2, 8))
    assert _errors(glu) == []
    errors = _errors(relu)
    assert len(errors) == 1
    assert errors[0].startswith("12 SHP307")
    assert "8·dim" in errors[0] and "(via Net.forward:21)" in errors[0]


CHOSEN_CLASS = """
import torch


class Up(torch.nn.Module):
    def __init__(self, channels: int, dims: int = 3):
        super().__init__()
        self.dims = dims
        ConvNd = torch.nn.Conv2d if dims == 2 else torch.nn.Conv3d
        self.conv = ConvNd(channels, channels, kernel_size=3, padding=1)

    def forward(self, x):
        b, c, f, h, w = x.shape
        if self.dims == 2:
            return self.conv(x.permute(0, 2, 1, 3, 4).flatten(0, 1))
        return self.conv(x)
"""


def test_a_layer_class_chosen_at_an_open_test_is_no_layer_of_either_class():
    # the forward's own test picks the input each class is given; read as a choice of
    # both layers, the Conv2d one was judged on the 5-d input (a false SHP311)
    assert _errors(CHOSEN_CLASS) == []
    for dims in (2, 3):
        assert not torch_raises(CHOSEN_CLASS, f"Up(4, {dims})", (2, 4, 3, 8, 8))


TOKENIZER = """
from einops import rearrange
from jaxtyping import Float
from torch import Tensor, nn


def exists(v):
    return v is not None


class Tokenizer(nn.Module):
    def __init__(self, n_layers, c_in, c_out, planes=16, activation=None):
        super().__init__()
        chans = [c_in] + [planes for _ in range(n_layers - 1)] + [c_out]
        pairs = zip(chans[:-1], chans[1:])
        self.convs = nn.Sequential(
            *[
                nn.Sequential(
                    nn.Conv2d(a, {conv_out}, 3, padding=1),
                    nn.Identity() if not exists(activation) else activation(),
                    nn.MaxPool2d(2),
                )
                for a, b in pairs
            ]
        )

    def forward(self, x: Float[Tensor, "b s0 s1 s2"]) -> Float[Tensor, "b s3 dim"]:
        return rearrange(self.convs(x), "b c h w -> b (h w) c")


class CCT(nn.Module):
    def __init__(self, dim, n_layers=1):
        super().__init__()
        self.tok = Tokenizer(n_layers, 3, dim, activation=nn.ReLU)
        self.norm = nn.LayerNorm(dim)

    def forward(self, img: Float[Tensor, "b 3 s1 s2"]) -> Float[Tensor, "b s3 dim"]:
        return self.norm(self.tok(img))
"""


def test_the_framed_sequential_a_layer_class_completes_is_rebuilt_for_the_call():
    # Tokenizer's own pass leaves activation() unknown, and the chain with it; CCT's
    # instance is built with nn.ReLU, so its last conv's 2·dim reaches the norm of
    # dim. Tokenizer's return names `dim` too, but only the return writes it: it is
    # whatever the body returns, none of CCT's sizes
    bug, ok = (TOKENIZER.format(conv_out=c) for c in ("b * 2", "b"))
    for n_layers in (1, 3):
        assert torch_raises(bug, f"CCT(8, {n_layers})", (2, 3, 16, 16))
        assert not torch_raises(ok, f"CCT(8, {n_layers})", (2, 3, 16, 16))
    assert _errors(ok) == []
    errors = _errors(bug)
    assert len(errors) == 1
    assert errors[0].startswith("38 SHP309")
    assert "[b, h·w, 2·dim]" in errors[0]


SEQUENCE_LENGTH = """
import torch
from einops import rearrange
from torch import nn


class Tokenizer(nn.Module):
    def __init__(self, c_in, c_out, act=None):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d({conv_in}, c_out, 3, padding=1), act())

    def sequence_length(self, n_channels=3, height=224, width=224):
        return self.forward(torch.zeros((1, n_channels, height, width))).shape[1]

    def forward(self, x):
        return rearrange(self.conv(x), "b c h w -> b (h w) c")


class Net(nn.Module):
    def __init__(self, channels, dim, size):
        super().__init__()
        self.tokenizer = Tokenizer(channels, dim, act=nn.ReLU)
        self.pos = nn.Parameter(torch.zeros(1, self.tokenizer.sequence_length(channels, size, size), dim))

    def forward(self, img):
        return self.tokenizer(img) + self.pos
"""


def test_a_size_the_summary_lost_is_what_a_run_on_the_calls_numbers_gives():
    # sequence_length's summary cannot size the tokens (act() is any layer there);
    # run on Net's numbers it runs forward on `channels` channels, which the conv of
    # 2·channels rejects: torch raises building Net. The conflict is found inside
    # forward's run within sequence_length's, and said once, at the conv
    bug, ok = (SEQUENCE_LENGTH.format(conv_in=c) for c in ("c_in * 2", "c_in"))
    with pytest.raises(RuntimeError):
        _build(bug, "Net(3, 8, 16)")
    assert _build(ok, "Net(3, 8, 16)") is not None
    assert _errors(ok) == []
    errors = _errors(bug)
    assert len(errors) == 1
    assert errors[0].startswith("16 SHP309")
    assert "got channels (via Net.__init__:23 → Tokenizer.sequence_length:13)" in errors[0]


def _build(source: str, build: str):
    pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(source, "m.py", "exec"), ns)  # noqa: S102 - the tests' own modules
    return eval(build, ns)  # noqa: S307
