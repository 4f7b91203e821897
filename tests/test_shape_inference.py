"""Shapes and costs where nobody wrote annotations (issue 16, parts 1-3 and 5).

The oracles: torch's FlopCounterMode for FLOPs, einops/torch at run time for
shapes. Generated unannotated functions must come out exact or marked
incomplete, never wrong.
"""

from __future__ import annotations

import re
import textwrap
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapelint.report.numbers import evaluate, flops_figure
from tests.helpers import analyze, codes

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

LECTURE = """
from einops import einsum


def forward(x, w1, w2):
    h1 = einsum(x, w1, "batch in, in hidden -> batch hidden")
    h2 = einsum(h1, w2, "batch hidden, hidden out -> batch out")
    return h2


def backward(g, h1, w2):
    grad_w2 = einsum(h1, g, "batch hidden, batch out -> hidden out")
    grad_h1 = einsum(g, w2, "batch out, hidden out -> batch hidden")
    return grad_w2, grad_h1


def grad_input(h2_grad, w2):
    return einsum(h2_grad, w2, "batch out, in out -> batch in")
"""


def _functions(code: str) -> dict[str, dict]:
    return {f["name"]: f for f in analyze(code).functions}


def _load(code: str):
    mod = types.ModuleType("generated")
    exec(compile(textwrap.dedent(code), "generated.py", "exec"), mod.__dict__)  # noqa: S102
    return mod


def _measure(fn, *args) -> int:
    with FlopCounterMode(display=False) as counter:
        fn(*args)
    return counter.get_total_flops()


def test_lecture_backward_pass_has_a_formula_from_the_pattern_alone():
    f = _functions(LECTURE)["grad_input"]
    assert f["complete"] and f["unknown"] == []
    assert flops_figure(f) == "2·batch·in·out"
    assert f["flops"] == "2*batch*in_*out"  # the program form escapes the keyword


# Sizes from 2: torch multiplies elementwise (0 FLOPs) over a contracted axis of
# size 1, which a formula over names cannot know (every axis is contracted somewhere).
_SIZE = st.integers(2, 9)


@settings(max_examples=25)
@given(batch=_SIZE, d_in=_SIZE, hidden=_SIZE, out=_SIZE)
def test_lecture_einsums_cost_what_the_flop_counter_counts(batch, d_in, hidden, out):
    mod = _load(LECTURE)
    fns = _functions(LECTURE)
    dims = {"batch": batch, "in": d_in, "hidden": hidden, "out": out}
    x, w1, w2 = torch.randn(batch, d_in), torch.randn(d_in, hidden), torch.randn(hidden, out)
    h1, g = torch.randn(batch, hidden), torch.randn(batch, out)
    cases = {
        "forward": (x, w1, w2),
        "backward": (g, h1, w2),
        "grad_input": (g, torch.randn(d_in, out)),
    }
    for name, args in cases.items():
        f = fns[name]
        assert f["complete"], f
        assert evaluate(f["flops"], dims) == _measure(getattr(mod, name), *args), name


def test_shapes_flow_backward_from_a_later_use():
    code = """
    import math
    from einops import rearrange, einsum

    def f(x, w):
        y = einsum(x, w, "b n d, d e -> b n e")
        z = rearrange(x, "b n (h k) -> b h n k", h=4)
        reveal_shape(x)
        return y
    """
    diags = analyze(code).diagnostics
    assert [d.message for d in diags if d.code == "SHP390"] == ["revealed shape: [b, n, d]"]
    # `b, n, _ = x.shape` after the call still fixes its cost.
    code = """
    def g(x, w):
        y = x @ w
        b, n, d = x.shape
        k, e = w.shape
        return y
    """
    f = {f["name"]: f for f in analyze(code).functions}["g"]
    assert f["complete"] and f["flops"] == "2*b*d*e*n"


def test_last_dim_and_linear_weights_name_what_comes_after():
    code = """
    import torch.nn.functional as F
    from einops import rearrange

    def f(x, w):
        d = x.shape[-1]
        w = rearrange(w, "o i -> o i")
        y = F.linear(x, w)
        return rearrange(y, "b n e -> b e n")
    """
    f = analyze(code).functions[0]
    # The last pattern names x's leading dims for the linear on the line before.
    assert f["complete"] and flops_figure(f) == "2·b·d·n·o"


def test_any_shape_index_names_a_prefix_or_a_suffix():
    code = """
    def f(x, y, z, u):
        n = x.shape[1]
        t = y.size(-2)
        b, m = z.shape[:2]
        c, *_, e = u.shape
        reveal_shape(x)
        reveal_shape(y)
        reveal_shape(z)
        reveal_shape(u)
        k = u.shape[1]
        reveal_shape(u)
    """
    revealed = [d.message for d in analyze(code).diagnostics if d.code == "SHP390"]
    # Position 1 of [c, ..., e] may lie inside the variadic: nothing is guessed.
    assert revealed == [
        "revealed shape: [?, n, ...]",
        "revealed shape: [..., t, ?]",
        "revealed shape: [b, m, ...]",
        "revealed shape: [c, ..., e]",
        "revealed shape: [c, ..., e]",
    ]
    # A known rank just binds; a position outside it tells nothing.
    code = """
    def g(x):
        a, b, _ = x.shape
        c = x.shape[-1]
        reveal_shape(x)
    """
    revealed = [d.message for d in analyze(code).diagnostics if d.code == "SHP390"]
    assert revealed == ["revealed shape: [a, b, c]"]


def test_a_matmul_operand_known_in_part_takes_the_inner_dim_of_the_other():
    code = """
    import torch
    from torch import Tensor
    from jaxtyping import Float

    def f(q: Float[Tensor, "b h n d"], k):
        b, h, m, _ = k.shape
        s = q @ k.transpose(-1, -2)
        reveal_shape(k)
        return s

    def g(q: Float[Tensor, "b h n d"], k):
        s = q @ k.mT
        reveal_shape(k)
        return s

    def h(x: Float[Tensor, "b n d"], y):
        e = y.shape[-1]
        return torch.bmm(x, y)
    """
    res = analyze(code)
    revealed = [d.message for d in res.diagnostics if d.code == "SHP390"]
    # k's batch may broadcast (a 1 or no dim at all): only its last dim is certain.
    assert revealed == ["revealed shape: [b, h, m, d]", "revealed shape: [..., ?, d]"]
    fs = {f["name"]: f for f in res.functions}
    assert fs["f"]["complete"] and fs["f"]["flops"] == "2*b*d*h*m*n"
    assert not fs["g"]["complete"]
    # bmm: y is [b, d, e] (3-d, one batch, the inner dim).
    assert fs["h"]["complete"] and fs["h"]["flops"] == "2*b*d*e*n"


def test_rank_from_shape_unpacking_is_checked_against_a_pattern():
    code = """
    from einops import rearrange

    def f(x):
        b, s, d = x.shape
        return rearrange(x, "b t h d -> b h t d")
    """
    assert codes(code) == ["SHP301"]


def test_a_use_in_one_branch_says_nothing_about_the_other():
    # From rotary-embedding-torch and denoising-diffusion-pytorch: a conditional
    # expression picks the pattern by rank.
    code = """
    from einops import rearrange

    def f(mask, loss):
        mask = rearrange(mask, "b j -> b 1 1 j") if mask.ndim == 2 else rearrange(mask, "b i j -> b 1 i j")
        loss = rearrange(loss, "-> 1 1") if loss.ndim == 0 else rearrange(loss, "b ... -> b (...)")
        return mask, loss

    def g(x):
        ok = x.ndim == 2 and rearrange(x, "b j -> b 1 j")
        if x.ndim == 3:
            b, n, d = x.shape
        return rearrange(x, "b c h w -> b (c h w)")
    """
    assert codes(code) == []


def test_names_from_patterns_layers_and_unpacking():
    code = """
    import torch.nn as nn
    from einops import rearrange

    class Attend(nn.Module):
        def __init__(self, dim, inner):
            super().__init__()
            self.to_q = nn.Linear(dim, inner)

        def forward(self, x, heads):
            q = self.to_q(x)
            reveal_shape(x)
            q = rearrange(q, "b n (h d) -> b h n d", h=heads)
            reveal_shape(q)
            return q
    """
    res = analyze(code)
    msgs = [d.message for d in res.diagnostics]
    # Before the pattern, only the layer has spoken; the pattern then names the
    # leading dims, and the layer's cost (on the line before) knows them too.
    assert msgs == ["revealed shape: [..., dim]", "revealed shape: [b, heads, n, inner//heads]"]
    fwd = next(f for f in res.functions if f["name"] == "Attend.forward")
    assert fwd["complete"] and flops_figure(fwd) == "2·b·dim·inner·n"


def test_name_conflicts_between_inferred_names_are_bindings_not_errors():
    code = """
    from einops import einsum, rearrange

    def f(x, w):
        x = rearrange(x, "b n d -> b n d")
        w = rearrange(w, "e f -> e f")
        return einsum(x, w, "b n d, d f -> b n f")
    """
    assert [c for c in codes(code) if c != "SHP390"] == []


# -- honest totals ----------------------------------------------------------------------------

HONEST = """
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


def scores(q, k, v, d):
    s = (q @ k.mT) / math.sqrt(d)
    return s @ v


class LLaMAMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.fc_1 = nn.Linear(config.n_embd, config.intermediate_size, bias=False)
        self.fc_2 = nn.Linear(config.n_embd, config.intermediate_size, bias=False)
        self.proj = nn.Linear(config.intermediate_size, config.n_embd, bias=False)

    def forward(self, x):
        x_fc_1 = self.fc_1(x)
        x_fc_2 = self.fc_2(x)
        x = F.silu(x_fc_1) * x_fc_2
        return self.proj(x)


def conv(x, w, net):
    y = F.conv2d(x, w)
    return net(y)
"""


def test_products_on_lost_shapes_are_recorded_and_the_total_is_a_lower_bound():
    fns = _functions(HONEST)
    s = fns["scores"]
    assert not s["complete"]
    assert [u["line"] for u in s["unknown"]] == [9, 10]
    assert flops_figure(s).startswith("?, 2 calls unknown: line 9 operator.matmul")
    mlp = fns["LLaMAMLP.forward"]
    assert not mlp["complete"] and len(mlp["unknown"]) == 3
    assert "flops 0" not in flops_figure(mlp) and flops_figure(mlp) != "0"
    c = fns["conv"]
    assert not c["complete"]
    assert [u["op"] for u in c["unknown"]] == ["torch.nn.functional.conv2d", "net"]


def test_text_face_never_prints_a_partial_total_as_a_number(tmp_path):
    from click.testing import CliRunner

    from shapelint.cli import main

    p = tmp_path / "m.py"
    p.write_text(HONEST)
    out = CliRunner().invoke(main, ["cost", str(p), "--no-cache"]).output
    line = next(x for x in out.splitlines() if x.endswith("::scores") or "::scores " in x)
    assert "FLOPs ?, 2 calls unknown: line 9 operator.matmul, line 10 operator.matmul" in line
    md = CliRunner().invoke(main, ["cost", str(p), "--no-cache", "--format", "markdown"]).output
    row = next(x for x in md.splitlines() if "`conv`" in x)
    assert "?, 2 calls unknown: line 28 torch.nn.functional.conv2d, line 29 net" in row


def test_a_caller_of_an_incomplete_function_is_incomplete():
    code = (
        HONEST
        + """

def outer(q, k, v):
    return scores(q, k, v, 64)
"""
    )
    f = _functions(code)["outer"]
    assert not f["complete"] and f["unknown"][0]["op"] == "call scores"


# -- generated unannotated functions ---------------------------------------------------------

_NAMES = "abcdefgmpqrstuvz"


@st.composite
def _programs(draw):
    """A chain of unannotated steps on x and weights of unknown shape. Returns the
    source, the sizes of every named axis, and how to build the inputs."""
    sizes: dict[str, int] = {}
    pool = iter(_NAMES)

    def axis() -> str:
        n = next(pool)
        sizes[n] = draw(st.integers(2, 5))
        return n

    rank = draw(st.integers(2, 3))
    cur = [axis() for _ in range(rank)]
    inputs = {"x": list(cur)}
    lines = []
    first = draw(
        st.sampled_from(["unpack", "last", "rearrange", "none", "index", "prefix", "star"])
    )
    if first == "unpack":
        lines.append(f"{', '.join(cur)} = x.shape")
    elif first == "last":
        lines.append(f"{cur[-1]} = x.shape[-1]")
    elif first == "index":
        i = draw(st.integers(-rank, rank - 1))
        how = draw(st.sampled_from(["x.shape[{}]", "x.size({})"]))
        lines.append(f"{cur[i]} = {how.format(i)}")
    elif first == "prefix":
        k = draw(st.integers(1, rank))
        lines.append(f"{', '.join(cur[:k])}{',' if k == 1 else ''} = x.shape[:{k}]")
    elif first == "star":
        k = draw(st.integers(0, rank - 1))
        tail = draw(st.integers(0 if k else 1, rank - k))
        names = [*cur[:k], "*_", *cur[len(cur) - tail :]]
        lines.append(f"{', '.join(names)} = x.shape")
    elif first == "rearrange":
        lines.append(f'x = rearrange(x, "{" ".join(cur)} -> {" ".join(cur)}")')
    var = "x"
    for i in range(draw(st.integers(1, 4))):
        step = draw(
            st.sampled_from(
                [
                    "einsum",
                    "matmul_named",
                    "matmul_unknown",
                    "matmul_transposed",
                    "bmm",
                    "linear",
                    "linear_named",
                    "sum",
                    "layer",
                ]
            )
        )
        w = f"w{i}"
        new = axis()
        out = f"y{i}"
        if step == "einsum":
            inputs[w] = [cur[-1], new]
            spec = " ".join(cur)
            lines.append(
                f'{out} = einsum({var}, {w}, "{spec}, {cur[-1]} {new} -> {" ".join(cur[:-1])} {new}")'
            )
            cur = cur[:-1] + [new]
        elif step == "matmul_named":
            inputs[w] = [cur[-1], new]
            lines.append(f'{w} = rearrange({w}, "{cur[-1]} {new} -> {cur[-1]} {new}")')
            lines.append(f"{out} = {var} @ {w}")
            cur = cur[:-1] + [new]
        elif step == "matmul_unknown":
            inputs[w] = [cur[-1], new]
            lines.append(f"{out} = {var} @ {w}")
            cur = cur[:-1] + [new]
        elif step == "matmul_transposed":
            # w of unknown shape, used transposed; named (or not) before or after.
            inputs[w] = [new, cur[-1]]
            naming = draw(st.sampled_from(["", f"{new}, _ = {w}.shape", f"{new} = {w}.shape[-2]"]))
            before = draw(st.booleans())
            if naming and before:
                lines.append(naming)
            lines.append(f"{out} = {var} @ {w}.transpose(-1, -2)")
            if naming and not before:
                lines.append(naming)
            cur = cur[:-1] + [new]
        elif step == "bmm":
            if len(cur) != 3:
                continue
            inputs[w] = [cur[0], cur[-1], new]
            if draw(st.booleans()):
                lines.append(f"{new} = {w}.size(2)")
            lines.append(f"{out} = torch.bmm({var}, {w})")
            cur = cur[:-1] + [new]
        elif step in ("linear", "linear_named"):
            inputs[w] = [new, cur[-1]]
            if step == "linear_named":
                lines.append(f'{w} = rearrange({w}, "{new} {cur[-1]} -> {new} {cur[-1]}")')
            lines.append(f"{out} = F.linear({var}, {w})")
            cur = cur[:-1] + [new]
        elif step == "layer":
            lines.append(f"{out} = nn.Linear({sizes[cur[-1]]}, {sizes[new]}, bias=False)({var})")
            cur = cur[:-1] + [new]
        else:
            if len(cur) < 2:
                continue
            lines.append(f"{out} = {var}.sum(-1)")
            cur = cur[:-1]
        var = out
    lines.append(f"return {var}")
    params = ", ".join(inputs)
    src = (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "from einops import einsum, rearrange\n\n\n"
        f"def f({params}):\n" + "".join(f"    {x}\n" for x in lines)
    )
    return src, sizes, inputs


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(_programs())
def test_generated_functions_are_exact_or_marked_incomplete(program):
    src, sizes, inputs = program
    f = _functions(src)["f"]
    mod = _load(src)
    args = [torch.randn(*(sizes[n] for n in shape)) for shape in inputs.values()]
    measured = _measure(mod.f, *args)
    static = evaluate(f["flops"], sizes) if f["flops"] is not None else None
    if f["complete"] and static is not None:
        assert static == measured, (src, f["flops"], measured)
    else:
        # Not a figure: the record must say so (a lower bound never above the truth).
        assert not f["complete"] or static is None, src
        known = evaluate(f["flops"], sizes) if f["flops"] else 0
        if known is not None and not f["complete"]:
            assert known <= measured, (src, f["flops"], measured)


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(_programs())
def test_no_function_is_complete_while_a_call_in_it_has_an_unknown_cost(program):
    src, _, _ = program
    res = analyze(src)
    fn = next(f for f in res.functions if f["name"] == "f")
    calls = [c for c in res.calls if c["function"] == "f"]
    if any(c["flops"] is None or not c["complete"] for c in calls):
        assert not fn["complete"], src
    assert fn["complete"] == (fn["unknown"] == [])


# -- no internal name in any output -----------------------------------------------------------

REAL_STYLE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, repeat, einsum
from jaxtyping import Float
from torch import Tensor


class Attention(nn.Module):
    def __init__(self, dim, heads=8, dim_head=64):
        super().__init__()
        inner = heads * dim_head
        self.heads = heads
        self.to_qkv = nn.Linear(dim, inner * 3, bias=False)
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x, mask=None):
        qkv = self.to_qkv(x)
        q, k, v = qkv.chunk(3, dim=-1)
        q = rearrange(q, "b n (h d) -> b h n d", h=self.heads)
        k = rearrange(k, "b n (h d) -> b h n d", h=self.heads)
        v = rearrange(v, "b n (h d) -> b h n d", h=self.heads)
        sim = einsum(q, k, "b h i d, b h j d -> b h i j")
        attn = sim.softmax(dim=-1)
        out = einsum(attn, v, "b h i j, b h j d -> b h i d")
        out = rearrange(out, "b h n d -> b n (h d)")
        return self.to_out(out)


def pool(x: Float[Tensor, "... n d"]) -> Float[Tensor, "... d"]:
    return x.mean(dim=-2)


def cls(x, n_cls):
    b, n, d = x.shape
    tok = repeat(torch.zeros(d), "d -> b 1 d", b=b)
    reveal_shape(tok)
    return torch.cat((tok, x), dim=1)
"""

_INTERNAL = re.compile(r"(?<![A-Za-z0-9])_(e|v)\d")


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "github"])
def test_no_internal_name_reaches_a_human_output(tmp_path, fmt):
    from click.testing import CliRunner

    from shapelint.cli import main

    p = tmp_path / "real.py"
    p.write_text(REAL_STYLE)
    out = CliRunner().invoke(main, ["cost", str(p), "--no-cache", "--format", fmt]).output
    check = CliRunner().invoke(main, ["check", str(p), "--no-cache"]).output
    if fmt == "json":
        import json

        data = json.loads(out)
        # The program form (flops/bytes/inputs) keeps variadics a caller binds;
        # every field meant for people is clean.
        out = json.dumps([[c["op"], c["notes"]] for c in data["calls"]])
    assert not _INTERNAL.search(out), out
    assert not _INTERNAL.search(check), check


def test_cost_diff_never_says_no_change_over_unknowns():
    from types import SimpleNamespace

    from shapelint.cost.diff import compare
    from shapelint.cost.review import render_markdown

    f = {
        "path": "m.py",
        "name": "block",
        "line": 3,
        "flops": "2*b*d*n",
        "bytes": "0",
        "complete": False,
        "unknown": [{"line": 5, "op": "self.net", "why": "not modelled"}],
    }
    same = [SimpleNamespace(functions=[f])]
    changes = compare(same, same, {})
    assert [c.status for c in changes] == ["incomplete"]
    md = render_markdown(changes, "HEAD~1", {})
    assert "No function's FLOPs or bytes changed." not in md
    assert "≥ `2·b·d·n`" in md and "1 call unknown: line 5 self.net" in md
    done = dict(f, complete=True, unknown=[])
    assert (
        compare([SimpleNamespace(functions=[done])], [SimpleNamespace(functions=[done])], {}) == []
    )


def test_lsp_hint_marks_unknown_and_partial_costs():
    from shapelint.lsp import hint_label

    assert hint_label({"output": ["*_v3", "_e1_0", "d"], "flops": None, "complete": False}) == (
        "→ [..., ?, d] · ? FLOPs"
    )
    assert hint_label({"output": None, "flops": "2*b", "complete": False}) == "≥ 2·b FLOPs"


# -- an unannotated nanoGPT written with einops ------------------------------------------------

NANOGPT = __import__("pathlib").Path(__file__).parent.parent / "fixtures/models/nanogpt_einops.py"


@settings(max_examples=8)
@given(b=_SIZE, t=_SIZE, n_head=st.integers(2, 4), d=_SIZE, vocab=_SIZE)
def test_unannotated_nanogpt_costs_what_the_flop_counter_counts(b, t, n_head, d, vocab):
    res = analyze(NANOGPT.read_text(), path=str(NANOGPT))
    assert res.diagnostics == []
    fns = {f["name"]: f for f in res.functions}
    mod = _load(NANOGPT.read_text())
    c = n_head * d
    dims = {"B": b, "T": t, "n_embd": c, "n_head": n_head, "b": b, "t": t, "c": c}
    dims.update({"h": n_head, "d": d, "i": t, "j": t, "vocab": vocab})
    x, q = torch.randn(b, t, c), torch.randn(b, n_head, t, d)
    cases = {
        "CausalSelfAttention.forward": (mod.CausalSelfAttention(c, n_head).forward, (x,)),
        "scores": (mod.scores, (q, q)),
        "mix": (mod.mix, (torch.randn(b, n_head, t, t), q)),
        "lm_logits": (mod.lm_logits, (x, torch.randn(vocab, c))),
        "attention": (mod.attention, (x, torch.randn(3 * c, c), torch.randn(c, c), n_head)),
    }
    for name, (fn, args) in cases.items():
        f = fns[name]
        measured = _measure(fn, *args)
        static = evaluate(f["flops"], dims)
        if f["complete"]:
            assert static == measured, (name, f["flops"], measured)
        else:  # the weights of `attention` are unknown: a lower bound, and it says so
            assert name == "attention" and static <= measured and f["unknown"]
    # Every einops call has an inferred output shape, every einsum a formula.
    einops_calls = [r for r in res.calls if r["op"].startswith("einops.")]
    assert einops_calls and all(r["output"] is not None for r in einops_calls)
    assert all(r["flops"] is not None for r in einops_calls if r["op"] == "einops.einsum")


def test_lsp_hover_marks_unknown_costs_and_hides_internal_names():
    from shapelint.lsp import hover_text

    call = {"line": 3, "column": 5, "op": "self.net", "pattern": None, "inputs": [["*_v1", "d"]]}
    call.update(output=None, flops=None, complete=False, notes=["not modelled"])
    text = hover_text([call], 2, 6)
    assert "FLOPs: ? (not modelled)" in text and "[..., d]" in text and "_v1" not in text


def test_a_module_built_from_sizes_binds_them_through_its_parameter_tensors():
    # CS336 style: the weight is a Parameter made from the constructor sizes, and
    # the method's annotations use other names; the instance's sizes still bind.
    code = """
    import math
    import torch
    import torch.nn as nn
    from einops import einsum
    from jaxtyping import Float
    from torch import Tensor

    class Linear(nn.Module):
        def __init__(self, in_features: int, out_features: int):
            super().__init__()
            std = math.sqrt(2.0 / (in_features + out_features))
            w = torch.empty(out_features, in_features)
            self.weight = nn.Parameter(nn.init.trunc_normal_(w, std=std))

        def forward(self, x: Float[Tensor, "... d_in"]) -> Float[Tensor, "... d_out"]:
            return einsum(x, self.weight, "... d_in, d_out d_in -> ... d_out")

    def use(x: Float[Tensor, "b s e"]):
        y = Linear(8, 16)(x)
        reveal_shape(y)
        return y
    """
    res = analyze(code)
    revealed = [d.message for d in res.diagnostics if d.code == "SHP390"]
    assert revealed == ["revealed shape: [b, s, 16]"]
    f = {f["name"]: f for f in res.functions}["use"]
    assert f["complete"] and evaluate(f["flops"], {"b": 2, "s": 3, "e": 8}) == 2 * 2 * 3 * 8 * 16


JOINED_VARIADICS = """
from einops import rearrange


def f(x, y, flag: bool):
    d = x.shape[-1]
    e = y.shape[-1]
    z = x if flag else y
    return rearrange(z, "b n c -> b c n")
"""


def test_two_tensors_of_open_rank_joined_keep_an_open_rank():
    # [..., d] or [..., e] is a tensor of one dim or more, not of two: torch runs it
    ns: dict = {}
    exec(compile(JOINED_VARIADICS, "m.py", "exec"), ns)  # noqa: S102 - the test's own fixture
    x, y = torch.randn(2, 3, 4), torch.randn(2, 3, 5)
    assert ns["f"](x, y, True).shape == (2, 4, 3)
    assert ns["f"](x, y, False).shape == (2, 5, 3)
    assert codes(JOINED_VARIADICS) == []
