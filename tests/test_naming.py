"""SHP4xx: which reshuffles are flagged, and whether the rewrite each message shows
computes what the original does. The oracle is torch and einops themselves: the
original expression and the suggested einops call run on the same random
tensors, on hand-written cases and on hypothesis-generated chains."""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import codes, diagnose
from tests.rewrite_support import findings, only, original_text, run_original, run_rewrite

JAX = "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n"
SETTINGS = settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])


def shp4(code: str, **options) -> list[str]:
    return [c for c in codes(code, **options) if c.startswith("SHP4")]


def same(finding, a, b) -> bool:
    """Rearranges move data: bitwise. An einsum computes the same sums, but torch
    may run another kernel or sum in another order (einops renames the letters):
    equal up to rounding."""
    if finding.rewrite.func == "einsum":
        return a.shape == b.shape and torch.allclose(a, b, rtol=1e-5, atol=1e-6)
    return torch.equal(a, b)


# ---------------------------------------------------------------------- what is flagged


def test_nanogpt_attention_as_written():
    code = """
    import math
    import torch
    import torch.nn as nn

    class CausalSelfAttention(nn.Module):
        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            y = att @ q
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return y
    """
    got = findings(code)
    assert [f.code for f in got] == ["SHP403", "SHP403", "SHP404", "SHP403"]
    split, _, scores, merge = got
    assert split.rewrite.call() == 'rearrange(k, "b t (h d) -> b h t d", h=self.n_head)'
    assert "(if k is [B, T, C])" in split.message
    assert (
        scores.rewrite.call() == 'einsum(q, k, "... i l, ... j l -> ... i j")'
    )  # no axis called k
    assert merge.rewrite.call() == 'rearrange(y, "b h t d -> b t (h d)")'
    # Shapes unknown: the messages guess, so none of it is fixable.
    assert not any(f.fixable for f in got)


def test_nanogpt_guesses_compute_the_same_on_the_assumed_shapes():
    code = """
    import torch
    def f(k, y, B, T, C, n_head):
        a = k.view(B, T, n_head, C // n_head).transpose(1, 2)
        b = y.transpose(1, 2).contiguous().view(B, T, C)
        return a, b
    """
    split, merge = findings(code)
    B, T, nh, hd = 2, 3, 4, 5
    env = {"B": B, "T": T, "C": nh * hd, "n_head": nh}
    env["k"] = torch.randn(B, T, nh * hd)
    env["y"] = torch.randn(B, nh, T, hd)
    for f in (split, merge):
        assert torch.equal(run_rewrite(f, env), run_original(code, f, env)), f.message


def test_annotated_attention_uses_the_annotation_names():
    code = (
        JAX
        + 'def f(q: Float[Tensor, "batch heads seq d_head"], k: Float[Tensor, "batch heads seq d_head"]):\n'
        + "    return q @ k.transpose(-2, -1)\n"
    )
    f = only(code)
    assert f.code == "SHP404"
    assert f.rewrite.pattern == (
        "batch heads seq_q d_head, batch heads seq_k d_head -> batch heads seq_q seq_k"
    )
    assert f.fixable


@pytest.mark.parametrize(
    ("body", "code", "call"),
    [
        ("x.transpose(0, 1)", "SHP401", 'rearrange(x, "b t c -> t b c")'),
        ("x.swapaxes(-1, -2)", "SHP401", 'rearrange(x, "b t c -> b c t")'),
        ("x.swapdims(0, 2)", "SHP401", 'rearrange(x, "b t c -> c t b")'),
        ("torch.transpose(x, 1, 2)", "SHP401", 'rearrange(x, "b t c -> b c t")'),
        ("x.permute(2, 0, 1)", "SHP402", 'rearrange(x, "b t c -> c b t")'),
        ("x.permute((1, 2, 0))", "SHP402", 'rearrange(x, "b t c -> t c b")'),
        ("torch.permute(x, (1, 0, 2))", "SHP402", 'rearrange(x, "b t c -> t b c")'),
        ("x.movedim(-1, 0)", "SHP402", 'rearrange(x, "b t c -> c b t")'),
        ("x.transpose(0, 1).transpose(1, 2)", "SHP401", 'rearrange(x, "b t c -> t c b")'),
        ("x.permute(0, 2, 1).flatten(1)", "SHP403", 'rearrange(x, "b t c -> b (c t)")'),
        ("x.transpose(1, 2).reshape(-1, x.shape[1])", "SHP403", 'rearrange(x, "b t c -> (b c) t")'),
    ],
)
def test_positional_steps_on_an_annotated_tensor(body, code, call):
    src = JAX + f'def f(x: Float[Tensor, "b t c"]):\n    return {body}\n'
    f = only(src)
    assert (f.code, f.rewrite.call()) == (code, call)
    x = torch.randn(2, 3, 4)
    assert torch.equal(run_rewrite(f, {"x": x}), run_original(src, f, {"x": x}))


def test_trailing_contiguous_stays_outside_the_rewrite():
    src = (
        JAX + 'def f(x: Float[Tensor, "b c h w"]):\n    return x.permute(0, 2, 3, 1).contiguous()\n'
    )
    f = only(src)
    assert original_text(src, f) == "x.permute(0, 2, 3, 1)"


def test_vit_patchify_in_one_chain():
    src = """
    import torch
    def patchify(x, p):
        B, C, H, W = x.shape
        return x.view(B, C, H // p, p, W // p, p).permute(0, 2, 4, 3, 5, 1).reshape(B, (H // p) * (W // p), p * p * C)
    """
    f = only(src)
    assert f.code == "SHP403"
    assert f.rewrite.call() == 'rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p)'
    env = {"x": torch.randn(2, 3, 8, 12), "p": 4, "B": 2, "C": 3, "H": 8, "W": 12}
    assert torch.equal(run_rewrite(f, env), run_original(src, f, env))


def test_patch_embedding_flatten_transpose_on_unknown_rank():
    src = "import torch\ndef f(self, x):\n    return self.proj(x).flatten(2).transpose(1, 2)\n"
    f = only(src)
    assert f.rewrite.pattern == "i j ... -> i (...) j"
    y = torch.randn(2, 3, 4, 5)
    env = {"self": type("S", (), {"proj": staticmethod(lambda t: t)})(), "x": y}
    assert torch.equal(run_rewrite(f, env), run_original(src, f, env))


def test_a_variadic_shape_whose_ends_do_not_place_the_positions_reads_as_unknown_rank():
    """x is `[*b, h, n, d]`: `.transpose(1, 2)` counts from the front, which the named
    ends do not place, so its suggestion is the one for an unknown rank, never none;
    the matmul with a transposed operand keeps its named contraction, and a permute
    names every axis (its arity the rank)."""
    src = """
    import torch
    from jaxtyping import Float
    from torch import Tensor

    def f(x: Float[Tensor, "*b h n d"], v: Float[Tensor, "*b h n e"]):
        return (x @ x.transpose(-2, -1) @ v).transpose(1, 2), x.permute(0, 2, 3, 1)
    """
    got = [(f.code, f.rewrite.pattern) for f in findings(src)]
    assert got == [
        ("SHP404", "... n d, ... i d -> ... n i"),
        ("SHP401", "i j k ... -> i k j ..."),
        ("SHP402", "i j k l -> i k l j"),
    ]
    x, v = torch.randn(2, 4, 8, 16), torch.randn(2, 4, 8, 5)
    f = next(f for f in findings(src) if f.code == "SHP401")
    env = {"x": x, "v": v}
    assert torch.equal(run_rewrite(f, env), (x @ x.transpose(-2, -1) @ v).transpose(1, 2))


def test_llama_style_head_split_is_guessed_from_the_names():
    src = """
    import torch
    def f(self, q, bsz, seqlen):
        return q.view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
    """
    f = only(src)
    assert f.rewrite.call() == 'rearrange(q, "bsz seqlen (h d) -> bsz h seqlen d", h=self.n_heads)'


def test_gram_and_bmm():
    src = (
        JAX
        + 'def g(x: Float[Tensor, "n d"], f: Float[Tensor, "b c n"]):\n'
        + "    return x @ x.T, torch.bmm(f, f.transpose(1, 2)), x.T.matmul(x)\n"
    )
    got = findings(src)
    assert [(f.code, f.rewrite.pattern) for f in got] == [
        ("SHP404", "n1 d, n2 d -> n1 n2"),
        ("SHP404", "b c1 n, b c2 n -> b c1 c2"),
        ("SHP404", "n d1, n d2 -> d1 d2"),
    ]
    env = {"x": torch.randn(3, 5), "f": torch.randn(2, 4, 6)}
    for f in got:
        assert same(f, run_rewrite(f, env), run_original(src, f, env)), f.message


def test_matmul_broadcasts_batch_axes_like_torch():
    src = (
        JAX
        + 'def g(a: Float[Tensor, "b h i d"], w: Float[Tensor, "j d"]):\n'
        + "    return a @ w.mT\n"
    )
    f = only(src)
    assert f.rewrite.pattern == "b h i d, j d -> b h i j"
    env = {"a": torch.randn(2, 3, 4, 5), "w": torch.randn(6, 5)}
    assert same(f, run_rewrite(f, env), run_original(src, f, env))


def test_one_finding_for_a_matmul_of_two_transposes():
    src = JAX + 'def g(a: Float[Tensor, "k m"], b: Float[Tensor, "n k"]):\n    return a.T @ b.T\n'
    f = only(src)
    assert f.code == "SHP404"
    env = {"a": torch.randn(3, 4), "b": torch.randn(5, 3)}
    assert same(f, run_rewrite(f, env), run_original(src, f, env))


def test_letter_einsum_named_from_annotations():
    src = (
        JAX
        + 'def f(q: Float[Tensor, "batch heads seq d_head"], k: Float[Tensor, "batch heads seq d_head"]):\n'
        + '    return torch.einsum("bhqd,bhkd->bhqk", q, k)\n'
    )
    f = only(src)
    assert f.code == "SHP405"
    assert f.rewrite.pattern == (
        "batch heads seq_q d_head, batch heads seq_k d_head -> batch heads seq_q seq_k"
    )


@pytest.mark.parametrize(
    "spec",
    [
        "ij,jk->ik",
        "ij,jk",
        "bij,bjk->bik",
        "ii->i",
        "ij->",
        "i,j->ij",
        "...ij,...jk->...ik",
        "bhqd,bhkd",
    ],
)
def test_letter_einsum_rewrites_agree_with_torch(spec):
    sizes = {"b": 2, "h": 3, "q": 4, "k": 5, "d": 6, "i": 3, "j": 4}
    terms = spec.split("->")[0].split(",")
    ops = []
    for t in terms:
        dims = [sizes[c] for c in t.replace("...", "")]
        if t.startswith("..."):
            dims = [2, 3] + dims
        if spec == "ii->i":
            dims = [3, 3]
        ops.append(torch.randn(*dims))
    names = [f"t{i}" for i in range(len(ops))]
    src = f"import torch\ndef f({', '.join(names)}):\n    return torch.einsum({spec!r}, {', '.join(names)})\n"
    f = only(src)
    env = dict(zip(names, ops, strict=True))
    assert same(f, run_rewrite(f, env), run_original(src, f, env))


# ---------------------------------------------------------------------- what is not


@pytest.mark.parametrize(
    "body",
    [
        "x @ w",
        "x.sum(dim=-1)",
        "torch.split(x, 3, dim=2)",
        "x.split(64, dim=2)",
        "x.view(x.size(0), -1)",
        "x.reshape(4, -1)",
        "x.T",  # unknown: numpy arrays and DataFrames have .T
        "x.t()",
        "x.transpose(dim, -1)",  # positions we cannot read
        "x.permute(*dims)",
        "list(zip(*rows))",
        "[1, 2].transpose(0, 1)",
        "img.transpose(Image.FLIP_LEFT_RIGHT)",
        "x.transpose(0, 0)",  # moves nothing
        "x.transpose(1, 2).transpose(1, 2)",
        'rearrange(x, "b t c -> t b c")',
        'einsum(x, w, "i k, k j -> i j")',
    ],
)
def test_not_a_positional_reshuffle(body):
    src = f"import torch\nfrom PIL import Image\nfrom einops import einsum, rearrange\ndef f(x, w, dim, dims, rows, img):\n    return {body}\n"
    assert shp4(src) == []


def test_numpy_code_is_left_alone():
    src = "import numpy as np\ndef f(a, b):\n    return a.transpose(1, 0) @ b.T, np.zeros((2, 3)).transpose(1, 0), a.mT\n"
    assert shp4(src) == []


def test_mT_on_unknown_counts_in_torch_only_files():
    assert shp4("import torch\ndef f(a):\n    return a.mT\n") == ["SHP401"]
    assert shp4("import torch\nimport numpy as np\ndef f(a):\n    return a.mT\n") == []


def test_transpose_without_torch_import_is_not_flagged():
    assert shp4("def f(x):\n    return x.transpose(1, 2)\n") == []


def test_non_tensor_values_are_not_flagged():
    src = "import torch\ndef f():\n    s = (1, 2, 3)\n    n = 3\n    return s.transpose(0, 1), n.permute(1, 0)\n"
    assert shp4(src) == []


def test_known_tensor_with_T_is_flagged():
    src = JAX + 'def f(x: Float[Tensor, "n d"]):\n    return x.T\n'
    assert shp4(src) == ["SHP401"]


def test_diagnostic_points_at_the_whole_chain():
    src = "import torch\ndef f(k, B, T, nh, C):\n    return k.view(B, T, nh, C // nh).transpose(1, 2)\n"
    (d,) = [d for d in diagnose(src) if d.code == "SHP403"]
    assert (d.line, d.column, d.end_line) == (3, 12, 3)
    assert d.end_column == len("    return k.view(B, T, nh, C // nh).transpose(1, 2)") + 1
    assert d.severity == "warning"


# ---------------------------------------------------------------------- names


def test_generic_names_are_configurable():
    src = "import torch\ndef f(x):\n    return x.transpose(-2, -1)\n"
    assert only(src).rewrite.pattern == "... i j -> ... j i"
    assert (
        only(src, naming={"generic": ["row", "col"]}).rewrite.pattern
        == "... row col -> ... col row"
    )
    assert only(src, naming={"generic": "a b"}).rewrite.pattern == "... a b -> ... b a"


def test_aliases_and_lowercase_are_configurable():
    src = "import torch\ndef f(k, B, T, n_head, C):\n    return k.view(B, T, n_head, C // n_head).transpose(1, 2)\n"
    assert only(src).rewrite.pattern == "b t (h d) -> b h t d"
    custom = only(src, naming={"aliases": {"n_head": "heads"}, "lowercase": False})
    assert custom.rewrite.pattern == "B T (heads C) -> B heads T C"


def test_colliding_names_are_numbered_and_still_valid():
    src = JAX + 'def f(x: Float[Tensor, "n n"]):\n    return x.transpose(0, 1)\n'
    f = only(src)
    assert f.rewrite.pattern == "n1 n2 -> n2 n1"
    x = torch.randn(3, 3)
    assert torch.equal(run_rewrite(f, {"x": x}), x.transpose(0, 1))


# ---------------------------------------------------------------------- generated chains

_REORDERS = ["transpose", "swapaxes", "permute", "movedim", "mT", "T", "t", "torch.transpose"]


@st.composite
def reorder_chains(draw):
    rank = draw(st.integers(1, 5))
    expr = "x"
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(_REORDERS))
        index = st.integers(-rank, rank - 1)
        if kind in ("transpose", "swapaxes"):
            expr += f".{kind}({draw(index)}, {draw(index)})"
        elif kind == "torch.transpose":
            expr = f"torch.transpose({expr}, {draw(index)}, {draw(index)})"
        elif kind == "permute":
            perm = draw(st.permutations(list(range(rank))))
            expr += f".permute({', '.join(str(p) for p in perm)})"
        elif kind == "movedim":
            expr += f".movedim({draw(index)}, {draw(index)})"
        elif kind == "mT" and rank >= 2:
            expr += ".mT"
        elif kind == "T" and rank == 2:
            expr += ".T"
        elif kind == "t" and rank <= 2:
            expr += ".t()"
    return rank, expr


@SETTINGS
@given(reorder_chains())
def test_generated_reorders_match_torch(case):
    rank, expr = case
    names = "abcde"[:rank]
    src = JAX + f'def f(x: Float[Tensor, "{" ".join(names)}"]):\n    return {expr}\n'
    got = findings(src)
    x = torch.randn(*[2 + i for i in range(rank)])
    expected = eval(expr, {"x": x, "torch": torch})  # noqa: S307
    if torch.equal(expected.reshape(-1), x.reshape(-1)):
        assert got == []  # no element moved: nothing to name
        return
    assert len(got) == 1, [f.message for f in got]
    f = got[0]
    assert f.fixable and f.rewrite.safe
    assert torch.equal(run_rewrite(f, {"x": x}), expected), (expr, f.message)


@st.composite
def split_chains(draw):
    """x: [D0, D1, D2] -> split one axis by a literal factor -> permute -> maybe merge two."""
    rank = draw(st.integers(1, 3))
    sizes = [draw(st.sampled_from([2, 3, 5])) for _ in range(rank)]
    i = draw(st.integers(0, rank - 1))
    f = draw(st.sampled_from([2, 3]))
    sizes[i] *= f
    dims = [f"D{k}" for k in range(rank)]
    view = dims[:i] + [str(f), f"D{i} // {f}"] + dims[i + 1 :]
    perm = draw(st.permutations(list(range(rank + 1))))
    after = [view[p] for p in perm]
    expr = f"x.reshape({', '.join(view)}).permute({', '.join(map(str, perm))})"
    if draw(st.booleans()) and len(after) >= 2:
        j = draw(st.integers(0, len(after) - 2))
        merged = after[:j] + [f"({after[j]}) * ({after[j + 1]})"] + after[j + 2 :]
        expr += f".reshape({', '.join(merged)})"
    return sizes, dims, expr


@SETTINGS
@given(split_chains())
def test_generated_split_permute_merge_match_torch(case):
    sizes, dims, expr = case
    rank = len(sizes)
    names = "abc"[:rank]
    unpack = f"    {', '.join(dims)}{',' if rank == 1 else ''} = x.shape\n"
    src = JAX + f'def f(x: Float[Tensor, "{" ".join(names)}"]):\n' + unpack + f"    return {expr}\n"
    got = findings(src)
    x = torch.randn(*sizes)
    env = {"x": x, **{d: s for d, s in zip(dims, sizes, strict=True)}}
    expected = eval(expr, {"torch": torch, **env})  # noqa: S307
    if torch.equal(expected.reshape(-1), x.reshape(-1)):
        assert got == [], [g.message for g in got]  # only reshaped: nothing to name
        return
    assert len(got) == 1, [g.message for g in got]
    g = got[0]
    assert g.code == "SHP403" and g.fixable, g.message
    assert original_text(src, g) == expr  # the whole chain, once
    assert torch.equal(run_rewrite(g, env), expected), (expr, g.message)


@st.composite
def unknown_rank_chains(draw):
    kind = draw(st.sampled_from(["transpose", "movedim", "flatten+transpose", "mT"]))
    index = st.integers(-3, 2)
    if kind == "transpose":
        return f"x.transpose({draw(index)}, {draw(index)})"
    if kind == "movedim":
        return f"x.movedim({draw(index)}, {draw(index)})"
    if kind == "mT":
        return "x.mT"
    return f"x.flatten({draw(st.integers(0, 2))}).transpose({draw(index)}, {draw(index)})"


@SETTINGS
@given(unknown_rank_chains())
def test_generated_unknown_rank_templates_hold_for_every_rank(expr):
    """The `...` rewrite for a tensor of unknown rank: at every rank torch accepts,
    einops accepts it too and computes the same; where the chain means different
    things at different ranks, the message says the rank is unknown and offers
    no pattern."""
    src = f"import torch\ndef f(x):\n    return {expr}\n"
    got = findings(src)
    checked = 0
    # From rank 1: on a 0-d tensor torch wraps dims as if it had one axis, and
    # accepts a deprecated .mT; nobody reshuffles a scalar, and no pattern covers it.
    for rank in range(1, 7):
        x = torch.randn([2 + i for i in range(rank)])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = eval(expr, {"x": x, "torch": torch})  # noqa: S307
        except (IndexError, RuntimeError):
            continue
        for f in got:
            assert not f.fixable  # rank unknown: message only
            if f.rewrite.pattern is None:
                assert "rank of x is unknown" in f.message
                continue
            actual = run_rewrite(f, {"x": x})
            assert torch.equal(actual, expected), (expr, rank, f.message)
            checked += 1
    if any(f.rewrite.pattern is not None for f in got):
        assert checked, (expr, [f.message for f in got])


def test_rules_can_be_ignored_like_any_other(tmp_path):
    from click.testing import CliRunner

    from shapelint.cli import main

    (tmp_path / "a.py").write_text("import torch\ndef f(x):\n    return x.transpose(1, 2)\n")
    r = CliRunner().invoke(main, ["check", str(tmp_path), "--no-cache", "--fail-on", "warning"])
    assert r.exit_code == 1 and "SHP401" in r.output
    r = CliRunner().invoke(main, ["check", str(tmp_path), "--no-cache", "--ignore", "SHP4"])
    assert r.exit_code == 0, r.output


def test_unpacked_shape_names_the_axes_and_the_rewrite_computes_the_same():
    code = """
    import torch
    def f(x):
        b, c, h, w = x.shape
        return x.permute(0, 2, 3, 1).reshape(b, h * w, c)
    def rebound(x, other):
        b, c, h, w = x.shape
        x = other
        return x.permute(0, 2, 3, 1)
    """
    named, other = findings(code)
    assert named.rewrite.call() == 'rearrange(x, "b c h w -> b (h w) c")'
    assert "placeholder" not in named.message
    assert "placeholder" in other.message  # x rebound: the unpack may be another tensor's
    x = torch.randn(2, 3, 4, 5)
    env = {"x": x, "b": 2, "c": 3, "h": 4, "w": 5}
    assert torch.equal(run_rewrite(named, env), run_original(code, named, env))


# glm4v's position grid: `side = int(n ** 0.5)` of a float is a size of its own in check
# (`side'`, analysis.int_sizes); the suggestion names its axes after the variable.
GRID = (
    JAX
    + """

def grid(weight: Float[Tensor, "n hidden"]):
    hidden = weight.shape[1]
    side = int(weight.shape[0] ** 0.5)
    return weight.view(side, side, hidden).permute(2, 0, 1)
"""
)


def test_a_size_of_its_own_is_named_after_its_variable():
    (finding,) = [d for d in diagnose(GRID) if d.code == "SHP402"]
    assert '"side1 side2 hidden -> hidden side1 side2"' in finding.message
    w = torch.randn(16, 5)
    expected = w.view(4, 4, 5).permute(2, 0, 1)
    from einops import rearrange

    assert torch.equal(
        rearrange(w.view(4, 4, 5), "side1 side2 hidden -> hidden side1 side2"), expected
    )
