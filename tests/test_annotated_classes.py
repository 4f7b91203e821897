"""nn.Modules whose forwards carry jaxtyping annotations (issue 25's annotated
suite): the names and the numbers a parameter's annotation gives its dims are sizes
the caller's input picks, as a pattern's names on it are, so an op that needs one of
them equal to a size the constructor takes is SHP320, with symbolic annotations and
with concrete ones alike. Each bug is confirmed by torch at sizes the annotation
allows."""

from __future__ import annotations

import pytest

from tests.helpers import corpus_package, diagnose, jaxtyped_class, torch_raises

ATTENTION = """
import torch
from einops import rearrange
from jaxtyping import Float
from torch import Tensor, nn


class Attention(nn.Module):
    def __init__(self, dim, heads, dim_head):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, heads * dim_head * 3)

    def forward(self, x: Float[Tensor, "{spec}"]):
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q = rearrange(q, 'b n (h d) -> b h n d', h=self.heads)
        k = rearrange(k, 'b n (h d) -> b h n d', h=self.heads)
        return torch.matmul(q, {k})
"""
SPECS = ["b n dim", "2 17 48"]


def _errors(source: str) -> list[str]:
    return [f"{d.line} {d.code}" for d in diagnose(source) if d.severity == "error"]


@pytest.mark.parametrize("spec", SPECS)
def test_a_missing_transpose_under_an_annotated_input_is_an_error(spec):
    source = ATTENTION.format(spec=spec, k="k")
    assert _errors(source) == ["18 SHP320"]
    message = next(d.message for d in diagnose(source) if d.code == "SHP320")
    n = "n" if spec == "b n dim" else "17"
    assert f"this needs {n} = dim_head" in message


@pytest.mark.parametrize("spec", SPECS)
def test_the_transposed_key_is_no_error(spec):
    assert _errors(ATTENTION.format(spec=spec, k="k.transpose(-1, -2)")) == []


def test_an_annotated_number_a_layer_of_the_constructors_meets_is_no_error():
    # 48 meets the Linear's `dim` outside any pattern: the input says dim is 48
    source = ATTENTION.format(spec="2 17 48", k="k").replace(
        "return torch.matmul(q, k)", "return self.to_qkv(x)"
    )
    assert _errors(source) == []


def test_torch_raises_on_the_missing_transpose():
    torch = pytest.importorskip("torch")
    pytest.importorskip("einops")
    ns: dict = {}
    exec(compile(ATTENTION.format(spec="2 17 48", k="k"), "m.py", "exec"), ns)  # noqa: S102
    with pytest.raises(RuntimeError):
        ns["Attention"](48, 4, 16)(torch.randn(2, 17, 48))
    ns = {}
    exec(compile(ATTENTION.format(spec="2 17 48", k="k.transpose(-1, -2)"), "m.py", "exec"), ns)  # noqa: S102
    assert ns["Attention"](48, 4, 16)(torch.randn(2, 17, 48)).shape == (2, 4, 17, 17)


RETURNS = """
from jaxtyping import Float
from torch import Tensor, nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, {out})

    def forward(self, x: Float[Tensor, "b n {d}"]) -> Float[Tensor, "b n {ret}"]:
        return {body}
"""
# (out features, the input's last name, the return's, the body, the error's end)
RETURN_BUGS = [
    ("dim", "d", "d", "x[:, :, :-1]", "d - 1 where d is expected"),
    ("dim * 2", "dim", "dim", "self.proj(x)", "2·dim where dim is expected"),
]
RETURN_OK = [
    ("dim", "dim", "dim", "self.proj(x)"),
    ("dim * 2", "dim", "d2", "self.proj(x)"),  # a name the return sees first binds there
    ("dim", "d", "d", "x[:, :, :]"),
]


@pytest.mark.parametrize(("out", "d", "ret", "body", "why"), RETURN_BUGS)
def test_a_return_its_annotation_can_never_hold_for_is_an_error(out, d, ret, body, why):
    source = RETURNS.format(out=out, d=d, ret=ret, body=body)
    found = [x for x in diagnose(source) if x.severity == "error"]
    assert [(x.line, x.code) for x in found] == [(12, "SHP306")]
    assert found[0].message.endswith(why)
    # jaxtyping's run-time check rejects it at every size
    torch = pytest.importorskip("torch")
    pytest.importorskip("jaxtyping")
    beartype = pytest.importorskip("beartype")
    from jaxtyping import jaxtyped

    ns: dict = {}
    exec(compile(source, "m.py", "exec"), ns)  # noqa: S102 - the test's own module
    ns["Block"].forward = jaxtyped(typechecker=beartype.beartype)(ns["Block"].forward)
    with pytest.raises(Exception, match="Type-check error"):
        ns["Block"](6)(torch.randn(2, 3, 6))


@pytest.mark.parametrize(("out", "d", "ret", "body"), RETURN_OK)
def test_a_return_its_annotation_can_hold_for_is_no_error(out, d, ret, body):
    assert _errors(RETURNS.format(out=out, d=d, ret=ret, body=body)) == []


FIXED = """
from jaxtyping import Float
from torch import Tensor, nn


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear({fc_in}, hidden_dim)

    def forward(self, x: Float[Tensor, "2 9 48"]):
        x = self.norm(x)
        return self.fc(x)


class Branches(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: Float[Tensor, "2 9 48"], wide: bool):
        if wide:
            return self.norm(x)
        return self.norm(x[..., :24])
"""


def test_a_size_an_annotated_number_fixed_is_that_number_from_there_on():
    # LayerNorm(dim) took 48, so dim is 48: a Linear(2*dim) on the same 48 needs 96
    source = FIXED.format(fc_in="dim * 2")
    assert _errors(source) == ["14 SHP307"]
    message = next(d.message for d in diagnose(source) if d.code == "SHP307")
    assert "must equal 48" in message and "dim = 48" in message


def test_a_size_fixed_on_one_branch_is_free_on_the_other():
    assert _errors(FIXED.format(fc_in="dim")) == []


def test_torch_raises_where_the_fixed_size_conflicts():
    torch = pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(FIXED.format(fc_in="dim * 2"), "m.py", "exec"), ns)  # noqa: S102
    with pytest.raises(RuntimeError):
        ns["FeedForward"](48, 64)(torch.randn(2, 9, 48))
    ns = {}
    exec(compile(FIXED.format(fc_in="dim"), "m.py", "exec"), ns)  # noqa: S102
    assert ns["FeedForward"](48, 64)(torch.randn(2, 9, 48)).shape == (2, 9, 64)
    assert ns["Branches"](48)(torch.randn(2, 9, 48), True).shape == (2, 9, 48)
    assert ns["Branches"](24)(torch.randn(2, 9, 48), False).shape == (2, 9, 24)


CHAIN = """
from jaxtyping import Float
from torch import Tensor, nn


class DepthWise(nn.Module):
    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.a = nn.Conv2d(dim_in, dim_out, 3, padding=1, groups=dim_in)
        self.b = nn.Conv2d({b_in}, dim_out, 1)

    def forward(self, x: Float[Tensor, "2 48 7 7"]) -> Float[Tensor, "2 96 7 7"]:
        return self.b(self.a(x))
"""


def test_sizes_fixed_on_the_way_contradict_the_annotated_return():
    # a took 48 (dim_in = 48); b needs dim_out = dim_in, so dim_out is 48 where
    # the return says 96: no sizes run this forward as annotated; and b needs
    # dim_in = dim_out, which nothing in the file passes (SHP321)
    source = CHAIN.format(b_in="dim_in")
    assert _errors(source) == ["13 SHP306", "13 SHP321"]
    message = next(d.message for d in diagnose(source) if d.code == "SHP306")
    assert "dim_out = 48" in message
    assert _errors(CHAIN.format(b_in="dim_out")) == []


def test_torch_and_jaxtyping_refuse_the_chain():
    torch = pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(CHAIN.format(b_in="dim_in"), "m.py", "exec"), ns)  # noqa: S102
    with pytest.raises(RuntimeError):
        ns["DepthWise"](48, 96)(torch.randn(2, 48, 7, 7))
    ns = {}
    exec(compile(CHAIN.format(b_in="dim_out"), "m.py", "exec"), ns)  # noqa: S102
    assert ns["DepthWise"](48, 96)(torch.randn(2, 48, 7, 7)).shape == (2, 96, 7, 7)


SWAPPED = (
    ATTENTION.replace("'b n (h d) -> b h n d'", "'b n (h d) -> h b n d'")
    .replace("return torch.matmul(q, {k})", "return self.out(rearrange(q, 'b h n d -> b n (h d)'))")
    .replace(
        "self.to_qkv = nn", "self.out = nn.Linear(heads * dim_head, dim)\n        self.to_qkv = nn"
    )
)


@pytest.mark.parametrize("spec", SPECS)
def test_a_batch_swapped_with_the_heads_is_the_same_error_with_numbers(spec):
    # the annotated batch 2 moved where the heads go: 2·dim_head meets heads·dim_head,
    # which needs 2 = heads, the input's size against the constructor's (SHP320),
    # as b = heads does with names; not two of the constructor's sizes (SHP318)
    source = SWAPPED.format(spec=spec)
    assert _errors(source) == ["19 SHP320"]


def test_torch_raises_on_the_swapped_batch():
    torch = pytest.importorskip("torch")
    pytest.importorskip("einops")
    ns: dict = {}
    exec(compile(SWAPPED.format(spec="2 17 48"), "m.py", "exec"), ns)  # noqa: S102
    with pytest.raises(RuntimeError):
        ns["Attention"](48, 4, 16)(torch.randn(2, 17, 48))


# Symbolic annotations (session 15): what the code's own sizes prove about the
# annotated names, each bug confirmed by torch at sizes the annotations allow.

CALLER = """
from jaxtyping import Float
from torch import Tensor, nn


class DepthWise(nn.Module):
    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d({conv_in}, dim_out, 3, padding=1, groups=dim_in),
            nn.Conv2d(dim_out, dim_out, 1),
        )

    def forward(self, x: Float[Tensor, "b c h w"]) -> Float[Tensor, "b d h w"]:
        return self.net(x)


class Pool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.down = DepthWise(dim, dim * 2)

    def forward(self, x: Float[Tensor, "b dim h w"]):
        return self.down(x)
"""


def test_an_annotated_callee_runs_on_the_sizes_its_caller_built_it_with():
    # DepthWise alone needs only dim_out = c (a caller may pass equal sizes);
    # Pool builds it with dim and 2·dim and feeds it dim channels: 2·dim vs dim
    found = [d for d in diagnose(CALLER.format(conv_in="dim_out")) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(15, "SHP309")]
    assert "expect 2·dim input channels, got dim (via Pool.forward:24)" in found[0].message
    assert _errors(CALLER.format(conv_in="dim_in")) == []


def test_torch_raises_on_the_callee_built_at_other_sizes():
    pytest.importorskip("jaxtyping")
    assert torch_raises(CALLER.format(conv_in="dim_out"), "Pool(8)", (2, 8, 5, 5))
    assert not torch_raises(CALLER.format(conv_in="dim_in"), "Pool(8)", (2, 8, 5, 5))


PACK = """
import torch
from einops import pack, repeat
from jaxtyping import Float
from torch import Tensor, nn


class Registers(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.tokens = nn.Parameter(torch.randn(4, {width}))

    def forward(self, x: Float[Tensor, "b n dim"]):
        r = repeat(self.tokens, 'n d -> b n d', b=x.shape[0])
        x, ps = pack([x, r], 'b * d')
        return x
"""


def test_pack_of_formulas_no_size_makes_equal_is_an_error():
    found = [d for d in diagnose(PACK.format(width="dim * 2")) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(15, "SHP302")]
    assert "(dim vs 2·dim)" in found[0].message
    assert _errors(PACK.format(width="dim")) == []


def test_einops_refuses_the_pack():
    pytest.importorskip("einops")
    pytest.importorskip("jaxtyping")
    assert torch_raises(PACK.format(width="dim * 2"), "Registers(8)", (2, 5, 8))
    assert not torch_raises(PACK.format(width="dim"), "Registers(8)", (2, 5, 8))


PATCHES = """
import torch
from einops import pack, repeat
from einops.layers.torch import Rearrange
from jaxtyping import Float
from torch import Tensor, nn


class Embed(nn.Module):
    def __init__(self, seq_len, patch_size, dim):
        super().__init__()
        num_patches = seq_len // patch_size
        self.to_patches = nn.Sequential(
            Rearrange('b c (n p) -> b n (p c)', p=patch_size),
            nn.Linear(patch_size, dim),
        )
        self.pos = nn.Parameter(torch.randn(1, num_patches + 1, dim))
        self.cls = nn.Parameter(torch.randn(dim))

    def forward(self, series: Float[Tensor, "b 1 seq_len"]):
        x = self.to_patches(series)
        b, n, _ = x.shape
        cls = repeat(self.cls, 'd -> b d', b=b)
        x, ps = pack([cls, x], 'b * d')
        return x + self.pos[:, :{stop}]
"""


def test_a_slice_of_a_quotients_length_is_that_long():
    # x has seq_len//patch_size + 1 tokens, the slice seq_len//patch_size: a floor
    # quotient of sizes is at least 0, so the stop lies inside the parameter's axis
    found = [d for d in diagnose(PATCHES.format(stop="n")) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(25, "SHP308")]
    assert "seq_len//patch_size + 1 vs seq_len//patch_size" in found[0].message
    assert "only when seq_len//patch_size = 0 or 1" in found[0].message
    assert _errors(PATCHES.format(stop="n + 1")) == []


def test_torch_raises_on_the_short_slice():
    pytest.importorskip("einops")
    pytest.importorskip("jaxtyping")
    assert torch_raises(PATCHES.format(stop="n"), "Embed(32, 4, 16)", (2, 1, 32))
    assert not torch_raises(PATCHES.format(stop="n + 1"), "Embed(32, 4, 16)", (2, 1, 32))


NAMED = """
from jaxtyping import Float
from torch import Tensor, nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear({fc_in}, dim)

    def forward(self, x: Float[Tensor, "b n d"], flag: bool):
        if flag:
            return self.fc(x)
        x = self.norm(x)
        return self.fc(x)


class Proj(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, {out})

    def forward(self, x: Float[Tensor, "b n d"]) -> Float[Tensor, "b n d"]:
        return self.fc(x)
"""


def test_an_annotated_name_an_op_equated_with_the_constructors_is_that_size():
    # LayerNorm(dim) took d, so d is dim in this call: Linear(2·dim) on it needs
    # 2·dim = dim; on the other branch d is free (2·dim is a size it may have). It
    # follows an early return under an undecided test: it raises only where that
    # return is not taken, a warning with its condition (plain_paths.py; torch runs
    # the other way: test_torch_and_jaxtyping_refuse_the_equated_names)
    found = [d for d in diagnose(NAMED.format(fc_in="dim * 2", out="dim")) if d.code == "SHP307"]
    assert [(d.line, d.severity) for d in found] == [(16, "warning")]
    assert found[0].message.endswith(
        "(d = dim: an op before took it); it raises only if not `flag` (line 13), "
        "which is not known here"
    )


def test_a_return_an_equated_name_cannot_match_is_an_error():
    # Linear(dim, ...) took d: returning 2·dim where d is annotated needs dim = 2·dim
    found = [d for d in diagnose(NAMED.format(fc_in="dim", out="dim * 2")) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(25, "SHP306")]
    assert "2·dim where d is expected (d = dim: an op before took it)" in found[0].message
    assert _errors(NAMED.format(fc_in="dim", out="dim")) == []


def test_torch_and_jaxtyping_refuse_the_equated_names():
    torch = pytest.importorskip("torch")
    pytest.importorskip("jaxtyping")
    beartype = pytest.importorskip("beartype")
    from jaxtyping import jaxtyped

    ns: dict = {}
    exec(compile(NAMED.format(fc_in="dim * 2", out="dim * 2"), "m.py", "exec"), ns)  # noqa: S102
    with pytest.raises(RuntimeError):
        ns["Block"](8)(torch.randn(2, 3, 8), False)
    assert ns["Block"](8)(torch.randn(2, 3, 16), True).shape == (2, 3, 8)
    ns["Proj"].forward = jaxtyped(typechecker=beartype.beartype)(ns["Proj"].forward)
    with pytest.raises(Exception, match="Type-check error"):
        ns["Proj"](8)(torch.randn(2, 3, 8))


CONV_TOKENS = """
import torch
from jaxtyping import Float
from torch import Tensor, nn


class Tokens(nn.Module):
    def __init__(self, dim, patch_size, stride):
        super().__init__()
        self.conv = nn.Conv1d(1, dim, kernel_size=patch_size, stride=stride)
        self.cls = nn.Parameter(torch.randn(1, dim, 1))
        self.pos = nn.Parameter(torch.randn(1, dim, 64))

    def forward(self, x: Float[Tensor, "b 1 seq_len"]):
        x = self.conv(x)
        b, _, n = x.shape
        x = torch.cat((self.cls.expand(b, -1, -1), x), dim=2)
        return x + self.pos[:, :, :{stop}]
"""


def test_a_size_read_off_a_tensor_is_at_least_0():
    # n = (seq_len - patch_size)//stride + 1 is no size by its formula (seq_len may be
    # the smaller), but it is x's: pos[:, :, :n] is at most n long, x is n + 1
    found = [d for d in diagnose(CONV_TOKENS.format(stop="n")) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(18, "SHP308")]
    assert "vs a slice at most (-patch_size + seq_len)//stride + 1 long" in found[0].message
    assert _errors(CONV_TOKENS.format(stop="n + 1")) == []


def test_torch_raises_on_the_slice_of_the_read_size():
    pytest.importorskip("jaxtyping")
    assert torch_raises(CONV_TOKENS.format(stop="n"), "Tokens(8, 4, 2)", (2, 1, 32))
    assert not torch_raises(CONV_TOKENS.format(stop="n + 1"), "Tokens(8, 4, 2)", (2, 1, 32))


# A constructor's layer-class default (timm's SwiGLU, open_clip's blocks): the check
# of the annotated forward builds the instance as `SwiGLU(sizes...)` does.
GLU = """
from typing import Type
from jaxtyping import Float
from torch import Tensor, nn


class LayerNorm(nn.LayerNorm):
    def forward(self, x: Float[Tensor, "b n d"]) -> Float[Tensor, "b n d"]:
        return super().forward(x)


class SwiGLU(nn.Module):
    def __init__(self, dim: int, hidden: int, act_layer: Type[nn.Module] = nn.SiLU, norm_layer=LayerNorm):
        super().__init__()
        self.fc1_g = nn.Linear(dim, {gate})
        self.fc1_x = nn.Linear(dim, hidden)
        self.act = act_layer()
        self.norm = norm_layer(hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x{spec}):
        x = self.act(self.fc1_g(x)) * self.fc1_x(x)
        return self.fc2(self.norm(x))
"""


@pytest.mark.parametrize("spec", [': Float[Tensor, "b n dim"]', ': Float[Tensor, "2 17 48"]'])
def test_a_layer_class_default_is_the_layer_in_the_annotated_forwards_check(spec):
    source = GLU.format(gate="2 * hidden", spec=spec)
    assert _errors(source) == ["22 SHP308"]  # SiLU keeps 2·hidden against hidden
    assert torch_raises(source, "SwiGLU(48, 32)", (2, 17, 48))
    assert _errors(GLU.format(gate="hidden", spec=spec)) == []


def test_a_finding_that_rests_on_the_defaults_says_so():
    source = GLU.format(gate="2 * hidden", spec=': Float[Tensor, "b n dim"]')
    [message] = [d.message for d in diagnose(source) if d.severity == "error"]
    assert message.endswith(" (with act_layer = nn.SiLU, norm_layer = LayerNorm, their defaults)")


def test_an_unannotated_forward_leaves_a_layer_class_parameter_unknown():
    # nn.GLU halves the gate, which a caller may pass: without a contract the
    # check does not assume the default
    assert _errors(GLU.format(gate="2 * hidden", spec="")) == []


def test_a_caller_of_another_rank_is_not_judged_by_the_default():
    # An unannotated class whose default norm is the annotated 3-d LayerNorm, run
    # on 2-d queries: its check keeps the parameter unknown (open_clip's
    # AttentionalPooler), so the callee's annotation is not held against it.
    source = (
        GLU.format(gate="hidden", spec=': Float[Tensor, "b n dim"]')
        + """

class Pooler(nn.Module):
    def __init__(self, dim: int, norm_layer=LayerNorm):
        super().__init__()
        self.ln_q = norm_layer(dim)

    def forward(self, q):
        return self.ln_q(q.mean(dim=1))
"""
    )
    assert _errors(source) == []


HEAD = """
from jaxtyping import Float
from torch import Tensor, nn


class Head(nn.Module):
    def __init__(self, dim: int, act_layer=nn.Identity):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * dim)
        self.act = act_layer()

    def forward(self, x: Float[Tensor, "b dim"]):
        return self.act(self.proj(x))


class Outer(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.head = Head(d, act_layer=nn.GLU)
        self.out = nn.Linear(d, 3)

    def forward(self, x{spec}):
        return self.out(self.head(x))
"""


@pytest.mark.parametrize("spec", ["", ': Float[Tensor, "b d"]'])
def test_a_caller_that_passes_another_layer_does_not_get_the_defaults_shapes(spec):
    # Head at its default (Identity) returns 2·dim; Outer's nn.GLU halves it back
    # to d: the summary Outer calls through is not the default construction's.
    source = HEAD.format(spec=spec)
    assert _errors(source) == []
    assert not torch_raises(source, "Outer(4)", (2, 4))


# A gate broadcast against its input (max_vit's SqueezeExcitation): `x * gate` with x's
# channels annotated `c`, which Linear(dim, ...) took, and a gate of `2·dim` channels.
# The multiply runs only where c is 1 (dim 1); either way the return is not `c` wide.
GATE = """
import torch
from einops.layers.torch import Rearrange, Reduce
from jaxtyping import Float
from torch import Tensor, nn


class Gate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gate = nn.Sequential(
            Reduce('b c h w -> b c', 'mean'),
            nn.Linear(dim, {out}),
            Rearrange('b c -> b c 1 1'),
        )

    def forward(self, x: Float[Tensor, "{spec}"]) -> Float[Tensor, "{spec}"]:
        return x * self.gate(x)
"""


@pytest.mark.parametrize("spec", ["b c h w", "2 c h w"])
def test_a_broadcast_fixes_no_size_an_op_before_took(spec):
    # the broadcast of c against 2·dim told main c = 2·dim (either side may be 1),
    # beside Linear's c = dim: the return's 2·dim then matched
    found = [d for d in diagnose(GATE.format(out="dim * 2", spec=spec)) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(18, "SHP306")]
    assert "2·dim where c is expected (c = dim: an op before took it)" in found[0].message
    assert _errors(GATE.format(out="dim", spec=spec)) == []


def test_jaxtyping_refuses_the_widened_gate():
    torch = pytest.importorskip("torch")
    cls = jaxtyped_class(GATE.format(out="dim * 2", spec="b c h w"), "Gate")
    with pytest.raises(Exception):  # noqa: B017 - torch's RuntimeError or jaxtyping's
        cls(8)(torch.randn(2, 8, 4, 4))
    with pytest.raises(Exception, match="Type-check error"):
        cls(1)(torch.randn(2, 1, 4, 4))  # c = dim = 1 broadcasts; the return is 2 wide
    ok = jaxtyped_class(GATE.format(out="dim", spec="b c h w"), "Gate")
    assert ok(8)(torch.randn(2, 8, 4, 4)).shape == (2, 8, 4, 4)


# A positional table sliced to a read size and laid out by an einops pattern (nest's
# Transformer): `pos[:h * w - 1]` is at most h·w - 1 long, and '(h w)' needs h·w.
POS_TABLE = """
import torch
from einops import rearrange
from jaxtyping import Float
from torch import Tensor, nn


class Positions(nn.Module):
    def __init__(self, seq_len):
        super().__init__()
        self.pos_emb = nn.Parameter(torch.randn(seq_len))

    def forward(self, x: Float[Tensor, "{spec}"]) -> Float[Tensor, "{spec}"]:
        *_, h, w = x.shape
        pos_emb = self.pos_emb[:{stop}]
        pos_emb = rearrange(pos_emb, '(h w) -> () () h w', h = h, w = w)
        return x + pos_emb
"""


@pytest.mark.parametrize("spec", ["b c s s", "2 c 4 4"])
def test_a_slice_shorter_than_an_einops_group_is_an_error(spec):
    found = [
        d
        for d in diagnose(POS_TABLE.format(stop="(h * w) - 1", spec=spec))
        if d.severity == "error"
    ]
    assert [(d.line, d.code) for d in found] == [(16, "SHP302")]
    assert "input dim is a slice at most" in found[0].message
    # the table may be shorter than h·w (then einops raises too), but that is no
    # finding: a slice to h·w is as long as the table allows
    assert _errors(POS_TABLE.format(stop="h * w", spec=spec)) == []
    assert _errors(POS_TABLE.format(stop="", spec=spec)) == []


def test_einops_refuses_the_short_slice():
    torch = pytest.importorskip("torch")
    pytest.importorskip("einops")
    cls = jaxtyped_class(POS_TABLE.format(stop="(h * w) - 1", spec="b c s s"), "Positions")
    for seq_len in (15, 16, 64):  # shorter than h·w, as long, longer
        with pytest.raises(Exception, match="Shape mismatch|Error while processing"):
            cls(seq_len)(torch.randn(2, 3, 4, 4))
    ok = jaxtyped_class(POS_TABLE.format(stop="h * w", spec="b c s s"), "Positions")
    assert ok(16)(torch.randn(2, 3, 4, 4)).shape == (2, 3, 4, 4)


# Two asserts give the annotated `d` two formulas of the constructor's sizes, which
# ties them (dim = 2·hidden on every run past them); the Linear(dim) after them
# holds on every such run. given_formulas took the first of a set of facts, so
# the verdict hung on PYTHONHASHSEED (seed 0: a false SHP321, seed 1: none).
TWO_FORMULAS = """
import torch
from jaxtyping import Float
from torch import Tensor, nn


class M(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.dim = dim
        self.hidden = hidden
        self.proj = nn.Linear({proj}, 7)

    def forward(self, x: Float[Tensor, "b n d"]):
        assert x.shape[-1] == self.dim
        {second}
        return self.proj(x)
"""


def _check_under_seed(tmp_path, source: str, seed: int) -> str:
    import os
    import subprocess
    import sys

    path = tmp_path / "m.py"
    path.write_text(source)
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    run = [sys.executable, "-m", "shapelint", "check", str(path), "--select", "ALL", "--no-cache"]
    return subprocess.run(run, capture_output=True, text=True, env=env, check=False).stdout


def test_a_verdict_does_not_hang_on_the_hash_seed(tmp_path):
    source = TWO_FORMULAS.format(proj="dim", second="assert x.shape[-1] == self.hidden * 2")
    outputs = {seed: _check_under_seed(tmp_path, source, seed) for seed in (0, 1)}
    assert outputs[0] == outputs[1]
    assert "SHP321" not in outputs[0] and "SHP307" not in outputs[0]
    # one formula still stands for d: Linear(2·dim) after the first assert alone
    one = TWO_FORMULAS.format(proj="dim * 2", second="pass")
    assert _errors(one) == ["17 SHP307"]
    assert "(d = dim: an op before took it)" in _check_under_seed(tmp_path, one, 1)


def test_torch_runs_the_module_the_two_asserts_tie():
    torch = pytest.importorskip("torch")
    source = TWO_FORMULAS.format(proj="dim", second="assert x.shape[-1] == self.hidden * 2")
    cls = jaxtyped_class(source, "M")
    assert cls(8, 4)(torch.randn(2, 3, 8)).shape == (2, 3, 7)
    one = TWO_FORMULAS.format(proj="dim * 2", second="pass")
    assert torch_raises(one, "M(8, 4)", (2, 3, 8))


POOLED = """
import torch
from einops import rearrange
from jaxtyping import Float
from torch import Tensor, einsum, nn


class Classifier(nn.Module):
    def __init__(self, dim, num_classes, seq_pool=True):
        super().__init__()
        self.seq_pool = seq_pool
        self.use_cls = not seq_pool
        if seq_pool:
            self.attention_pool = nn.Linear(dim, 1)
        else:
            self.class_emb = nn.Parameter(torch.zeros(1, 1, dim))
        self.fc = nn.Linear(dim, num_classes)

    def forward(self, x: Float[Tensor, "{spec}"]) -> Float[Tensor, "{out}"]:
        if self.use_cls:
            cls_token = self.class_emb.expand(x.shape[0], -1, -1)
            x = torch.cat((cls_token, x), dim=1)
        if self.seq_pool:
            weights = rearrange(self.attention_pool(x), 'b n 1 -> b n')
            x = einsum('{pool}', weights.softmax(dim=1), x)
        {tail}
"""
SPLIT = "else:\n            x = x[:, 0]\n        return self.fc(x)"
# `self.use_cls` goes with `not self.seq_pool` through the constructor: on the pooled
# path, its branch would index the pooled [b, d] to [b], a path Python never takes
TOGETHER = (
    "if self.use_cls:\n            x = self.fc(x[:, 0])\n"
    "        else:\n            x = self.fc(x)\n        return x"
)
POOL_SPECS = [("b n dim", "b num_classes"), ("2 5 8", "2 3")]


def _pooled(spec, out, pool, tail=SPLIT):
    return POOLED.format(spec=spec, out=out, pool=pool, tail=tail)


@pytest.mark.parametrize(("spec", "out"), POOL_SPECS)
def test_a_conflict_on_one_path_of_a_constructor_flag_is_an_error_there(spec, out):
    # the pooled path gives fc a [b] tensor, the other path [b, dim]: the join after
    # `if self.seq_pool:` is a tensor of unknown rank, each path's is not
    found = [d for d in diagnose(_pooled(spec, out, "b n, b n d -> b")) if d.severity == "error"]
    assert found and {d.line for d in found} == {28}
    assert all("on the path where `self.seq_pool` is true (line 23)" in d.message for d in found)


@pytest.mark.parametrize(("spec", "out"), POOL_SPECS)
@pytest.mark.parametrize("tail", [SPLIT, TOGETHER])
def test_each_path_of_a_constructor_flag_kept_apart_finds_no_error_in_correct_code(spec, out, tail):
    assert _errors(_pooled(spec, out, "b n, b n d -> b d", tail)) == []


def test_torch_refuses_the_pooled_path_only():
    torch = pytest.importorskip("torch")
    pytest.importorskip("einops")
    cls = jaxtyped_class(_pooled("b n dim", "b num_classes", "b n, b n d -> b"), "Classifier")
    with pytest.raises(Exception, match="mat1 and mat2"):
        cls(8, 3, seq_pool=True)(torch.randn(2, 5, 8))
    assert cls(8, 3, seq_pool=False)(torch.randn(2, 5, 8)).shape == (2, 3)
    for tail in (SPLIT, TOGETHER):
        ok = jaxtyped_class(
            _pooled("b n dim", "b num_classes", "b n, b n d -> b d", tail), "Classifier"
        )
        for flag in (True, False):
            assert ok(8, 3, seq_pool=flag)(torch.randn(2, 5, 8)).shape == (2, 3)


def test_a_path_split_drops_only_its_own_findings():
    # vivit's Attention.forward splits on `self.use_flash_attn`; a branch of another
    # test on that path (`if exists(mask):`) is where a summary was first reached:
    # muted there, its naming finding was lost for good (the corpus check on the first
    # version of the branch), diverted, it is the function's own
    path = corpus_package("vit-pytorch") / "vit_pytorch" / "vivit.py"
    found = [(d.line, d.code) for d in diagnose(path.read_text(), str(path))]
    assert (89, "SHP404") in found


# cct's TransformerClassifier: which embedding the instance holds is a constructor's
# flag, an `elif` chain at the top of __init__; `check` keeps the attributes of its
# last branch (the sine table), so the learnable table's width was never met by the
# annotated forward (init_paths.py)
EMBEDDED = """
import torch
from jaxtyping import Float
from torch import Tensor, nn


class Classifier(nn.Module):
    def __init__(self, dim, seq_len, positional_embedding='sine'):
        super().__init__()
        if positional_embedding == 'none':
            self.positional_emb = None
        elif positional_embedding == 'learnable':
            self.positional_emb = nn.Parameter(torch.zeros(1, seq_len, {width}))
        else:
            self.positional_emb = nn.Parameter(torch.ones(1, seq_len, dim), requires_grad=False)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: Float[Tensor, "{spec}"]) -> Float[Tensor, "{spec}"]:
        x = self.norm(x)
        if self.positional_emb is not None:
            x += self.positional_emb
        return x
"""
EMBED_SPECS = ["b n dim", "2 5 8"]


def test_a_conflict_on_a_path_of_the_constructors_flag_is_an_error_there():
    source = EMBEDDED.format(width="dim * 2", spec="b n dim")
    found = [d for d in diagnose(source) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(21, "SHP308")]
    assert "on the path where `positional_embedding == 'learnable'` is true (line 12)" in (
        found[0].message
    )


@pytest.mark.parametrize("spec", EMBED_SPECS)
def test_every_path_of_the_constructors_flag_agreeing_is_no_error(spec):
    assert _errors(EMBEDDED.format(width="dim", spec=spec)) == []


def test_torch_refuses_the_learnable_path_only():
    torch = pytest.importorskip("torch")
    bad = jaxtyped_class(EMBEDDED.format(width="dim * 2", spec="b n dim"), "Classifier")
    with pytest.raises(RuntimeError):
        bad(8, 5, positional_embedding="learnable")(torch.randn(2, 5, 8))
    for flag in ("none", "sine"):
        assert bad(8, 5, positional_embedding=flag)(torch.randn(2, 5, 8)).shape == (2, 5, 8)
    ok = jaxtyped_class(EMBEDDED.format(width="dim", spec="b n dim"), "Classifier")
    for flag in ("none", "learnable", "sine"):
        assert ok(8, 5, positional_embedding=flag)(torch.randn(2, 5, 8)).shape == (2, 5, 8)


# The method's own test of the flag (`if self.pooled:`) is no test the path decides
# (`self.pooled` is the parameter's value, not its truth on the path): on the pooled
# instance, the branch Python never takes there would sum the 1-d bias over dim 2
POOLED_BIAS = """
import torch
from jaxtyping import Float
from torch import Tensor, nn


class Pool(nn.Module):
    def __init__(self, dim, pooled):
        super().__init__()
        self.pooled = pooled
        if pooled:
            self.bias = nn.Parameter(torch.zeros(dim))
        else:
            self.bias = nn.Parameter(torch.zeros(1, 1, dim))

    def forward(self, x: Float[Tensor, "b n dim"]):
        if self.pooled:
            return x.mean(1) + self.bias
        return x + self.bias.sum(dim=2, keepdim=True)
"""


def test_a_method_test_going_with_the_flag_finds_nothing_on_its_other_branch():
    torch = pytest.importorskip("torch")
    cls = jaxtyped_class(POOLED_BIAS, "Pool")
    assert cls(8, True)(torch.randn(2, 5, 8)).shape == (2, 8)
    assert cls(8, False)(torch.randn(2, 5, 8)).shape == (2, 5, 8)
    assert _errors(POOLED_BIAS) == []


# A callee run on its caller's arguments (argument_runs.value_at): the caller's annotated
# names and constructor's sizes stay one size each through the run, so a layer that
# checks one against another fixes it there as it would in the caller's own body.
# (CrossAttention alone says nothing: its context may be any tensor.)

LENT = """
from jaxtyping import Float
from torch import Tensor, nn


class CrossAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.pre = nn.LayerNorm(dim)
        self.kv = nn.Linear({kv_in}, dim)

    def forward(self, x, context=None):
        x = self.pre(x)
        if context is None:
            context = x
        return self.kv(context)


class Encoder(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.layers = nn.ModuleList([CrossAttention(dim) for _ in range(depth)])

    def forward(self, x: Float[Tensor, "{spec}"]) -> Float[Tensor, "{spec}"]:
        for attn in self.layers:
            x = attn(x) + x
        return x
"""
LENT_SPECS = ["2 v0 v1", "b n d", "2 17 48"]


@pytest.mark.parametrize("spec", LENT_SPECS)
def test_a_callee_checks_the_callers_annotated_size_against_a_size_it_fixed(spec):
    # LayerNorm(dim) on the caller's last dim makes it dim (or dim 48): the
    # Linear's 2·dim after it can then never match
    found = [d for d in diagnose(LENT.format(kv_in="dim * 2", spec=spec)) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(16, "SHP307")]
    assert "(via Encoder.forward:26)" in found[0].message


@pytest.mark.parametrize("spec", LENT_SPECS)
def test_a_callee_whose_layers_agree_on_the_callers_size_is_no_error(spec):
    assert _errors(LENT.format(kv_in="dim", spec=spec)) == []


def test_torch_raises_on_the_doubled_key_width():
    torch = pytest.importorskip("torch")
    for kv_in, raises in (("dim * 2", True), ("dim", False)):
        cls = jaxtyped_class(LENT.format(kv_in=kv_in, spec="b n d"), "Encoder")
        try:
            cls(48, 2)(torch.randn(2, 17, 48))
        except RuntimeError:
            assert raises
        else:
            assert not raises


# A number of a concrete annotation that two formulas over the constructor's sizes
# met one after the other: the formulas meet each other, as without the annotation.

FIXED_ALIKE = """
from jaxtyping import Float
from torch import Tensor, nn


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.net = nn.Sequential(
            nn.LayerNorm({norm}), nn.Linear(dim, hidden_dim), nn.GELU(), nn.Linear(hidden_dim, {out})
        )

    def forward(self, x: Float[Tensor, "2 17 48"]) -> Float[Tensor, "2 17 48"]:
        return self.net(x)
"""

TWO_48S = """
import torch
from jaxtyping import Float
from torch import Tensor, nn


class Mixer(nn.Module):
    def __init__(self, dim, num_patches, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.pos = nn.Parameter(torch.randn(num_patches, dim))
        self.mix = nn.Linear(num_patches, hidden)
        self.out = nn.Linear(hidden, num_patches)

    def forward(self, x: Float[Tensor, "2 48 48"]) -> Float[Tensor, "2 48 48"]:
        x = self.norm(x) + self.pos
        y = self.mix(x.transpose(1, 2))
        return self.out(y).transpose(1, 2)
"""


def test_two_formulas_that_took_one_annotated_number_meet_each_other():
    found = [
        d
        for d in diagnose(FIXED_ALIKE.format(norm="hidden_dim", out="dim"))
        if d.severity == "error"
    ]
    assert [(d.line, d.code) for d in found] == [(14, "SHP321")]
    assert "(hidden_dim = 48: an op before took it)" in found[0].message
    assert "this needs dim = hidden_dim" in found[0].message


def test_one_formula_meeting_the_annotated_number_twice_is_no_error():
    assert _errors(FIXED_ALIKE.format(norm="dim", out="dim")) == []


def test_a_return_of_another_formula_than_the_one_that_took_its_number_is_an_error():
    found = [
        d
        for d in diagnose(FIXED_ALIKE.format(norm="dim", out="hidden_dim"))
        if d.severity == "error"
    ]
    assert [(d.line, d.code) for d in found] == [(14, "SHP321")]
    assert "hidden_dim where 48 is expected (dim = 48: an op before took it)" in found[0].message


def test_a_number_the_annotation_writes_for_two_dims_ties_no_formulas():
    # the 48 the Linear meets is the patches', not the one LayerNorm(dim) took
    assert _errors(TWO_48S) == []


def test_torch_raises_where_the_two_formulas_differ():
    torch = pytest.importorskip("torch")
    x = torch.randn(2, 17, 48)
    with pytest.raises(RuntimeError):
        jaxtyped_class(FIXED_ALIKE.format(norm="hidden_dim", out="dim"), "FeedForward")(48, 96)(x)
    assert (
        jaxtyped_class(FIXED_ALIKE.format(norm="dim", out="dim"), "FeedForward")(48, 96)(x).shape
        == x.shape
    )
    with pytest.raises(Exception, match="Type-check error"):
        jaxtyped_class(FIXED_ALIKE.format(norm="dim", out="hidden_dim"), "FeedForward")(48, 96)(x)
    y = torch.randn(2, 48, 48)
    assert jaxtyped_class(TWO_48S, "Mixer")(48, 48, 32)(y).shape == y.shape


# vit's Attention: which output layer the instance holds is a constructor's flag that
# an `IfExp` decides (`... if project_out else nn.Identity()`), through a name bound
# once from the parameters. `check` keeps the join of both layers, so the projection's
# width was never met by the annotated return (init_paths.py). The path where the flag
# is false needs `heads == 1 and dim_head == dim`, an equality the analysis does not
# hold there: that path is not run (its Identity would return heads·dim_head).
PROJECTED = """
import torch
from einops import rearrange
from jaxtyping import Float
from torch import Tensor, nn


class Attention(nn.Module):
    def __init__(self, dim, heads=8, dim_head=4):
        super().__init__()
        inner_dim = dim_head * heads
        project_out = not (heads == 1 and dim_head == dim)
        self.heads = heads
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
        self.to_out = nn.Sequential(
            nn.Linear(inner_dim, {out}), nn.Dropout(0.0)
        ) if project_out else nn.Identity()

    def forward(self, x: Float[Tensor, "{spec}"]) -> Float[Tensor, "{spec}"]:
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=self.heads), (q, k, v))
        attn = torch.einsum("b h i d, b h j d -> b h i j", q, k).softmax(-1)
        out = torch.einsum("b h i j, b h j d -> b h i d", attn, v)
        return self.to_out(rearrange(out, "b h n d -> b n (h d)"))
"""


@pytest.mark.parametrize("spec", EMBED_SPECS)
def test_a_conflict_on_the_path_an_ifexp_flag_chooses_is_an_error_there(spec):
    source = PROJECTED.format(out="dim * 2", spec=spec)
    found = [d for d in diagnose(source) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(24, "SHP306")]
    assert "on the path where `project_out` is true (line 17)" in found[0].message


@pytest.mark.parametrize("spec", EMBED_SPECS)
def test_the_agreeing_attention_is_no_error_on_any_path(spec):
    assert _errors(PROJECTED.format(out="dim", spec=spec)) == []


# The path where `dim == 4` is true holds only where dim is 4; the input's 8 made it
# 8 (LayerNorm), so the Identity's 8 against the annotated 4 is no conflict Python can
# meet: a path whose truth rests on sizes being equal is not run (by an `IfExp` or by
# an `if`).
FITTED = """
from jaxtyping import Float
from torch import Tensor, nn


class Fit(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
{body}

    def forward(self, x: Float[Tensor, "b 8"]) -> Float[Tensor, "b 4"]:
        return self.fit(self.norm(x))
"""
FIT_IFEXP = "        self.fit = nn.Identity() if dim == 4 else nn.Linear(dim, 4)"
FIT_IF = (
    "        if dim == 4:\n"
    "            self.fit = nn.Identity()\n"
    "        else:\n"
    "            self.fit = nn.Linear(dim, 4)"
)


@pytest.mark.parametrize("body", [FIT_IFEXP, FIT_IF])
def test_a_path_that_needs_sizes_equal_is_not_run(body):
    source = FITTED.format(body=body)
    assert _errors(source) == []
    torch = pytest.importorskip("torch")
    assert jaxtyped_class(source, "Fit")(8)(torch.randn(2, 8)).shape == (2, 4)


def test_torch_refuses_the_projected_path_only():
    torch = pytest.importorskip("torch")
    bad = jaxtyped_class(PROJECTED.format(out="dim * 2", spec="b n dim"), "Attention")
    with pytest.raises(Exception, match="shape|size|Type-check"):
        bad(8)(torch.randn(2, 5, 8))
    assert bad(8, heads=1, dim_head=8)(torch.randn(2, 5, 8)).shape == (2, 5, 8)
    ok = jaxtyped_class(PROJECTED.format(out="dim", spec="b n dim"), "Attention")
    assert ok(8)(torch.randn(2, 5, 8)).shape == (2, 5, 8)
    assert ok(8, heads=1, dim_head=8)(torch.randn(2, 5, 8)).shape == (2, 5, 8)


# A flag parameter that chooses a layer, by an `IfExp` or by an `if` statement: the
# path's instance holds another layer (not only another tensor), and the method runs
# on it once more.
FLAGGED_LAYER = """
from jaxtyping import Float
from torch import Tensor, nn


class Block(nn.Module):
    def __init__(self, dim, project=True):
        super().__init__()
{body}

    def forward(self, x: Float[Tensor, "b n dim"]) -> Float[Tensor, "b n dim"]:
        return self.out(x)
"""
AS_IFEXP = "        self.out = nn.Linear(dim, {width}) if project else nn.Identity()"
AS_IF = (
    "        if project:\n"
    "            self.out = nn.Linear(dim, {width})\n"
    "        else:\n"
    "            self.out = nn.Identity()"
)


@pytest.mark.parametrize("body", [AS_IFEXP, AS_IF])
def test_a_layer_a_flag_chooses_is_checked_on_its_path(body):
    source = FLAGGED_LAYER.format(body=body.format(width="dim * 2"))
    found = [d for d in diagnose(source) if d.severity == "error"]
    returned = 12 if body is AS_IFEXP else 15
    assert [(d.line, d.code) for d in found] == [(returned, "SHP306")]
    assert "on the path where `project` is true (line 9)" in found[0].message
    assert _errors(FLAGGED_LAYER.format(body=body.format(width="dim"))) == []


def test_torch_refuses_the_flagged_layer_on_its_path_only():
    torch = pytest.importorskip("torch")
    for body in (AS_IFEXP, AS_IF):
        cls = jaxtyped_class(FLAGGED_LAYER.format(body=body.format(width="dim * 2")), "Block")
        with pytest.raises(Exception, match="shape|size|Type-check"):
            cls(8)(torch.randn(2, 5, 8))
        assert cls(8, project=False)(torch.randn(2, 5, 8)).shape == (2, 5, 8)


def test_a_flag_name_bound_twice_is_no_settled_path():
    # `project = project and dim > 1`: the name is rebound in the constructor, so
    # the test reads no settled value (a second binding may change it)
    source = FLAGGED_LAYER.format(
        body="        project = project and dim > 1\n" + AS_IFEXP.format(width="dim * 2")
    )
    assert _errors(source) == []


# An annotated name inside a product (`s·p²`, the channels of a patch under a
# rearrange) that an op checked equal to a constructor's size (`LayerNorm(dim)`):
# s is dim/p², so its meeting `channels` after that is `channels·p² = dim`, a
# constraint between the constructor's sizes, as the unannotated class reads it.
PATCH_NORM = """
from einops.layers.torch import Rearrange
from jaxtyping import Float
from torch import Tensor, nn


class Embed(nn.Module):
    def __init__(self, channels, patch, dim):
        super().__init__()
        patch_dim = channels * patch ** 2
        self.to_patches = nn.Sequential(
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch, p2=patch),
            nn.LayerNorm({norm}),
            nn.Linear({linear}, dim),
        )

    def forward(self, x: Float[Tensor, "{spec}"]):
        return self.to_patches(x)
"""


@pytest.mark.parametrize("spec", ["b s h w", "b c h w"])
def test_an_annotated_name_in_a_product_a_size_took_meets_another_size(spec):
    source = PATCH_NORM.format(norm="dim", linear="patch_dim", spec=spec)
    assert _errors(source) == ["18 SHP321"]
    message = next(d.message for d in diagnose(source) if d.code == "SHP321")
    assert "this needs channels·patch² = dim" in message


@pytest.mark.parametrize("spec", ["b s h w", "b c h w"])
@pytest.mark.parametrize(("norm", "linear"), [("patch_dim", "patch_dim"), ("dim", "dim")])
def test_an_annotated_name_in_a_product_one_size_took_is_no_error(spec, norm, linear):
    assert _errors(PATCH_NORM.format(norm=norm, linear=linear, spec=spec)) == []


def test_torch_refuses_the_norm_of_the_embedding_width():
    torch = pytest.importorskip("torch")
    for norm, linear, raises in (
        ("dim", "patch_dim", True),
        ("patch_dim", "patch_dim", False),
        ("dim", "dim", True),  # 48 channels against 32: no error said, torch's sizes
    ):
        cls = jaxtyped_class(PATCH_NORM.format(norm=norm, linear=linear, spec="b s h w"), "Embed")
        try:
            cls(3, 4, 32)(torch.randn(2, 3, 16, 16))
        except RuntimeError:
            assert raises
        else:
            assert not raises
    # the LayerNorm(dim), Linear(dim) class runs where channels·patch² is dim
    ok = jaxtyped_class(PATCH_NORM.format(norm="dim", linear="dim", spec="b s h w"), "Embed")
    assert ok(3, 4, 48)(torch.randn(2, 3, 16, 16)).shape == (2, 16, 48)


# cait's positions sliced one short of the patches: `(image//patch)²` rows (the
# rearrange checked patch | image), `[:, :n - 1]` of them is n - 1 long, never n
# nor 1, so the sum cannot broadcast, for an input annotated either way.
POS_SHORT = """
import torch
from einops.layers.torch import Rearrange
from jaxtyping import Float
from torch import Tensor, nn


class Patches(nn.Module):
    def __init__(self, image_size, patch_size, dim):
        super().__init__()
        num_patches = (image_size // patch_size) ** 2
        self.to_patches = nn.Sequential(
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch_size, p2=patch_size),
            nn.Linear(3 * patch_size ** 2, dim),
        )
        self.pos = nn.Parameter(torch.randn(1, num_patches, dim))

    def forward(self, img: Float[Tensor, "{spec}"]):
        x = self.to_patches(img)
        b, n, _ = x.shape
        x += self.pos[:, :{stop}]
        return x
"""


@pytest.mark.parametrize("spec", ["b 3 image_size image_size", "2 3 32 32"])
def test_a_slice_one_short_of_the_exact_patches_is_an_error(spec):
    assert _errors(POS_SHORT.format(spec=spec, stop="n - 1")) == ["21 SHP308"]
    assert _errors(POS_SHORT.format(spec=spec, stop="n")) == []


def test_torch_refuses_the_short_positions():
    torch = pytest.importorskip("torch")
    for stop, raises in (("n - 1", True), ("n", False)):
        cls = jaxtyped_class(
            POS_SHORT.format(spec="b 3 image_size image_size", stop=stop), "Patches"
        )
        for image, patch in ((32, 4), (8, 4)):  # 64 and 4 patches
            try:
                cls(image, patch, 16)(torch.randn(2, 3, image, image))
            except RuntimeError:
                assert raises
            else:
                assert not raises


RETURN_ONLY = """
from jaxtyping import Float
from torch import Tensor, nn


class Proj(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, {out})

    def forward(self, x: Float[Tensor, "b w"]) -> Float[Tensor, "b dim"]:
        return self.fc(x)


class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = Proj(dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: Float[Tensor, "b dim"]):
        return self.norm(self.proj(x))
"""


def test_a_name_only_the_return_annotation_writes_is_what_the_body_returns():
    # Proj's `dim` is bound by nothing but its return: jaxtyping takes whatever the
    # Linear gives, here 2·dim of Net's, not the `dim` the instance Net built holds
    bug, ok = (RETURN_ONLY.format(out=o) for o in ("width * 2", "width"))
    assert _errors(bug) == ["22 SHP309"]
    assert "[b, 2·dim]" in next(d.message for d in diagnose(bug) if d.code == "SHP309")
    assert _errors(ok) == []
    torch = pytest.importorskip("torch")
    x = torch.randn(2, 8)
    assert jaxtyped_class(ok, "Net")(8)(x).shape == (2, 8)
    with pytest.raises(RuntimeError):
        jaxtyped_class(bug, "Net")(8)(x)


AXIS_APART = """
import torch
from einops import rearrange
from jaxtyping import Float
from torch import Tensor, nn


class Attention(nn.Module):
    def __init__(self, dim, heads=4, dim_head=8):
        super().__init__()
        inner = heads * dim_head
        self.heads = heads
        self.norm = nn.LayerNorm(dim)
        self.to_q = nn.Linear({width}, inner, bias=False)
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x: Float[Tensor, "b n d"], pos) -> Float[Tensor, "b n d"]:
        x = self.norm(x)
        q = rearrange(self.to_q(x), "b n (h d) -> b h n d", h=self.heads)
        pos = rearrange(pos, "n (h d) -> h n d", h=self.heads)
        out = rearrange(q + pos, "b h n d -> b n (h d)")
        return self.to_out(out)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attention(16, 4, 8)

    def forward(self, x, pos):
        return self.attn(x, pos)
"""


def test_a_pattern_axis_named_as_an_annotated_dim_is_its_own_size():
    # the pattern's `d` (dim_head, learnt on pos of no known shape) is not the
    # annotation's `d` (the model's dim): tied, `q + pos` made dim_head·heads meet
    # dim·heads at to_out, a false SHP321
    ok, bug = (AXIS_APART.format(width=w) for w in ("dim", "dim * 2"))
    assert _errors(ok) == []
    assert _errors(bug) == ["19 SHP307"]
    torch = pytest.importorskip("torch")
    x, pos = torch.randn(2, 5, 16), torch.randn(5, 32)
    assert jaxtyped_class(ok, "Attention")(16, 4, 8)(x, pos).shape == (2, 5, 16)
    with pytest.raises(RuntimeError):
        jaxtyped_class(bug, "Attention")(16, 4, 8)(x, pos)


# ddpm's ResnetBlock: a time MLP built where the constructor is given its width
# (`self.mlp = ... if exists(time_emb_dim) else None`, with `def exists(v): return v
# is not None`), run where the forward's `exists(self.mlp) and exists(emb)` holds.
# On the path where the width is given the MLP's in_features is that width (the
# path's truth narrows the optional parameter as the test's does), the forward's
# `exists(self.mlp)` is true there (a layer is never None), so a MLP of another
# width is an error on that path, as `self.mlp is not None` made it already.
OPTIONAL_MLP = """
from jaxtyping import Float
from torch import Tensor, nn


def exists(v):
    return v is not None


class Block(nn.Module):
    def __init__(self, dim, emb_dim=None):
        super().__init__()
        self.mlp = nn.Linear({width}, dim) if exists(emb_dim) else None

    def forward(self, x: Float[Tensor, "b dim"], emb: Float[Tensor, "b emb_dim"]):
        if exists(self.mlp) and exists(emb):
            x = x + self.mlp(emb)
        return x
"""


def test_a_layer_built_where_an_optional_width_is_given_has_that_width():
    source = OPTIONAL_MLP.format(width="emb_dim * 2")
    found = [d for d in diagnose(source) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(17, "SHP307")]
    assert "2·emb_dim" in found[0].message
    assert "on the path where `exists(emb_dim)` is true (line 13)" in found[0].message


def test_the_layer_of_the_given_width_is_no_error():
    assert _errors(OPTIONAL_MLP.format(width="emb_dim")) == []


def test_torch_refuses_the_doubled_width_where_the_width_is_given():
    torch = pytest.importorskip("torch")
    bad = jaxtyped_class(OPTIONAL_MLP.format(width="emb_dim * 2"), "Block")
    with pytest.raises(RuntimeError):
        bad(4, emb_dim=3)(torch.randn(2, 4), torch.randn(2, 3))
    assert bad(4)(torch.randn(2, 4), torch.randn(2, 3)).shape == (2, 4)
    ok = jaxtyped_class(OPTIONAL_MLP.format(width="emb_dim"), "Block")
    assert ok(4, emb_dim=3)(torch.randn(2, 4), torch.randn(2, 3)).shape == (2, 4)


def test_a_none_test_of_a_layer_is_decided():
    # `exists(self.proj)` of a layer the constructor always builds: true, the
    # forward's conflict is no condition's
    source = OPTIONAL_MLP.format(width="emb_dim").replace(
        "nn.Linear(emb_dim, dim) if exists(emb_dim) else None", "nn.Linear(dim, dim)"
    )
    found = [d for d in diagnose(source) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(17, "SHP315")]
    assert "raises only if" not in found[0].message


# perceiver_io's decoder: PreNorm's annotated forward called with the queries and a
# context of no known kind (the latents after layers the check cannot follow)
UNKNOWN_CONTEXT = """
from jaxtyping import Float
from torch import Tensor, nn


class PreNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm({width})

    def forward(self, x: Float[Tensor, "b n q"], context=None) -> Float[Tensor, "b n q"]:
        return self.norm(x)


class Decoder(nn.Module):
    def __init__(self, queries_dim):
        super().__init__()
        self.cross = PreNorm(queries_dim)

    def forward(self, queries: Float[Tensor, "b n queries_dim"], context):
        return self.cross(queries, context=context)
"""


def test_an_annotated_callee_runs_beside_an_argument_of_no_known_kind():
    # the body reads `context` as its summary reads a parameter it knows nothing of;
    # the queries and the sizes Decoder built PreNorm with say 2·queries_dim vs queries_dim
    found = [d for d in diagnose(UNKNOWN_CONTEXT.format(width="dim * 2")) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(12, "SHP309")]
    assert "[2·queries_dim]" in found[0].message
    assert "via Decoder.forward:21" in found[0].message
    assert _errors(UNKNOWN_CONTEXT.format(width="dim")) == []


def test_torch_refuses_the_doubled_norm_whatever_the_context():
    torch = pytest.importorskip("torch")
    bad = jaxtyped_class(UNKNOWN_CONTEXT.format(width="dim * 2"), "Decoder")
    with pytest.raises(RuntimeError):
        bad(4)(torch.randn(2, 3, 4), object())
    ok = jaxtyped_class(UNKNOWN_CONTEXT.format(width="dim"), "Decoder")
    assert ok(4)(torch.randn(2, 3, 4), object()).shape == (2, 3, 4)
