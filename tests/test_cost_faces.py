"""Every face of `cost PATH::QUALNAME` carries the target, and states the one
convention for attention; `run` prints torch's count beside the adjusted one."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from shapelint.cli import main
from shapelint.report.conventions import FUSED_ATTENTION, FUSED_ATTENTION_MARK

ROOT = Path(__file__).resolve().parent.parent
GPT = ROOT / "tests" / "data" / "modules" / "nanogpt_like.py"
SMALL = ["--init", "config=GPTConfig(n_layer=2, n_head=2, n_embd=32, vocab_size=50, flash=True)"]
SMALL += ["--input", "idx=2,16:int"]

MHA = """
import torch.nn as nn


class Enc(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ff = nn.Linear(dim, dim)

    def forward(self, x):
        y, _ = self.attn(x, x, x, need_weights=False)
        return self.ff(y)
"""


def cost(*args: str) -> str:
    r = CliRunner().invoke(main, ["cost", "--no-cache", *args])
    assert r.exit_code == 0, r.output
    return r.output


def test_the_stubs_give_attention_the_note_the_faces_look_for():
    text = (ROOT / "stubs" / "matmul.stub").read_text()
    macro = next(line for line in text.splitlines() if line.startswith("@fused_attention"))
    assert macro.split('note="', 1)[1].startswith(FUSED_ATTENTION_MARK)


def test_every_face_carries_the_target_and_the_attention_convention():
    target = f"{GPT}::GPT"
    t = json.loads(cost(target, *SMALL, "--format", "json"))["target"]
    assert t["line"] == GPT.read_text().splitlines().index("class GPT(nn.Module):") + 1
    # the attention convention, and the mode its dropout test ran in (as built)
    assert [c["name"] for c in t["conventions"]] == ["fused_attention", "train_mode"]
    conv = t["conventions"][0]
    # the call itself, not the loop and the module calls around it
    assert [(c["line"], c["op"].rsplit(".", 1)[-1]) for c in conv["calls"]] == [
        (_line_of("F.scaled_dot_product_attention("), "scaled_dot_product_attention")
    ]
    figure = f"{t['flops_value'] / 1e6:.3g} MFLOPs"
    text = cost(target, *SMALL)
    assert text.splitlines()[0] == f"{target}  {figure} ({t['flops_value']:,})"
    assert FUSED_ATTENTION in text
    md = cost(target, *SMALL, "--format", "markdown")
    assert md.startswith(f"### `{target}`: {figure}")
    assert FUSED_ATTENTION in md and "| Function |" not in md  # not the per-function table
    assert "`transformer.h.0-1.attn` | CausalSelfAttention |" in md  # the module table
    tree = cost(target, *SMALL, "--format", "markdown", "--tree")
    assert f"| {_line_of('F.scaled_dot_product_attention(')}:" in tree
    gh = cost(target, *SMALL, "--format", "github")
    (notice,) = gh.splitlines()
    assert notice.startswith(
        f"::notice file={_github_path(GPT)},line={t['line']},title=FLOPs of GPT::"
    )
    assert figure in notice and FUSED_ATTENTION.replace("\n", "%0A") in notice


def _line_of(text: str) -> int:
    return next(i for i, line in enumerate(GPT.read_text().splitlines(), 1) if text in line)


def _github_path(p: Path) -> str:
    from shapelint.report.github import escape_property, github_path

    return escape_property(github_path(str(p)))


def test_a_lower_bound_is_one_in_markdown_and_github_too(tmp_path):
    from tests.test_modules import PARTLY_KNOWN

    p = tmp_path / "net.py"
    p.write_text(PARTLY_KNOWN)
    args = [f"{p}::Net", "--init", "dim=8", "--init", "depth=3", "--input", "x=2,8"]
    md = cost(*args, "--format", "markdown")
    assert md.startswith(f"### `{p}::Net`: ≥ 768 FLOPs, 3 calls unknown")
    assert "self.mystery (×3)" in md
    gh = cost(*args, "--format", "github")
    assert "title=FLOPs of Net (lower bound)::" in gh and "≥ 768 FLOPs" in gh


def test_multihead_attention_states_the_convention(tmp_path):
    p = tmp_path / "enc.py"
    p.write_text(textwrap.dedent(MHA))
    args = [f"{p}::Enc", "--init", "dim=16", "--init", "heads=2", "--input", "x=2,5,16"]
    t = json.loads(cost(*args, "--format", "json"))["target"]
    assert [c["line"] for c in t["conventions"][0]["calls"]] == [12]
    for fmt in ("text", "markdown", "github"):
        assert FUSED_ATTENTION_MARK.split()[0] in cost(*args, "--format", fmt)


def test_a_target_without_attention_states_no_convention(tmp_path):
    from tests.test_modules import STACK

    p = tmp_path / "stack.py"
    p.write_text(textwrap.dedent(STACK))
    args = [f"{p}::Stack", "--init", "dim=32", "--init", "depth=2", "--input", "x=2,16,32"]
    assert json.loads(cost(*args, "--format", "json"))["target"]["conventions"] == []
    assert "CUDA" not in cost(*args)


def test_run_prints_torchs_count_beside_the_adjusted_one():
    torch = pytest.importorskip("torch")
    from tests.test_modules import counted  # FlopCounterMode as torch ships it

    args = ["run", f"{GPT}::GPT", *SMALL, "--device", "cpu"]
    r = CliRunner().invoke(main, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    build = "GPT(GPTConfig(n_layer=2, n_head=2, n_embd=32, vocab_size=50, flash=True))"
    idx = torch.zeros(2, 16, dtype=torch.long)
    assert rep["flops_measured"] == counted(GPT, build, {"idx": idx})
    sdpa = 2 * (4 * 2 * 16 * 16 * 32)  # 2 layers of q·kᵀ and p·v, 4·B·T²·C each
    assert rep["flops_adjusted"] == rep["flops_measured"] + sdpa == rep["flops_static"]
    assert rep["confirmed"]
    text = CliRunner().invoke(main, args).output
    line = next(x for x in text.splitlines() if x.strip().startswith("flops"))
    assert f"FlopCounterMode {rep['flops_measured']:,}, adjusted {rep['flops_adjusted']:,}" in line
    # the adjusted figure is never what was "measured"
    assert not re.search(rf"measured {rep['flops_adjusted']:,}", text)
    assert f"adjusted: +{sdpa:,}" in text


def test_run_backward_counts_the_backward_beside_the_adjusted_one():
    """`run PATH::Class --input ... --backward` at concrete sizes: torch's count of
    `out.sum().backward()` (CPU flash attention's backward registers 0), the
    adjusted one and the static flops_backward, never the adjusted one as measured."""
    pytest.importorskip("torch")
    args = ["run", f"{GPT}::GPT", *SMALL, "--device", "cpu", "--backward"]
    r = CliRunner().invoke(main, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    static = json.loads(cost(f"{GPT}::GPT", *SMALL, "--eval", "--format", "json"))["target"]
    assert rep["backward_static"] == static["flops_backward_value"] == rep["backward_adjusted"]
    assert rep["backward_measured"] < rep["backward_adjusted"]  # torch's own count stays
    assert list(rep["backward_adjusted_ops"]) == [
        "aten._scaled_dot_product_flash_attention_for_cpu_backward"
    ]
    assert rep["backward_verdict"] == "agree" and rep["confirmed"]
    text = CliRunner().invoke(main, args).output
    assert "forward+backward" in text.splitlines()[0]
    line = next(x for x in text.splitlines() if x.startswith("  backward"))
    assert f"FlopCounterMode {rep['backward_measured']:,}, adjusted" in line
    assert "measured" not in line
    plain = CliRunner().invoke(main, [*args[:-1], "--format", "json"])
    assert "backward_verdict" not in json.loads(plain.output)


def test_macs_are_half_the_flops_and_labelled_in_every_face(tmp_path):
    target = f"{GPT}::GPT"
    flops = json.loads(cost(target, *SMALL, "--format", "json"))
    macs = json.loads(cost(target, *SMALL, "--format", "json", "--macs"))
    assert macs["target"]["unit"] == "MACs"
    assert 2 * macs["target"]["flops_value"] == flops["target"]["flops_value"] > 0
    text = cost(target, *SMALL, "--macs")
    assert text.splitlines()[0].endswith(f"kMACs ({macs['target']['flops_value']:,})")
    assert "FLOPs (" not in text.splitlines()[0]
    assert "| module | kind | params | % | MACs | % |" in cost(
        target, *SMALL, "--macs", "--format", "markdown"
    )
    assert "title=MACs of GPT::" in cost(target, *SMALL, "--macs", "--format", "github")
    # a plain report: every function and call, labelled
    from tests.test_modules import STACK

    p = tmp_path / "stack.py"
    p.write_text(textwrap.dedent(STACK))
    plain = json.loads(cost(str(p), "--macs", "--format", "json"))
    before = {
        f["name"]: f["flops"] for f in json.loads(cost(str(p), "--format", "json"))["functions"]
    }
    after = {f["name"]: f["flops"] for f in plain["functions"]}
    from shapelint.notation.symbolic import parse_expr

    assert plain["unit"] == "MACs" and any(v not in (None, "0") for v in before.values())
    for name, f in before.items():
        if f is not None:
            assert 2 * parse_expr(after[name]) == parse_expr(f)
    text = cost(str(p), "--macs")
    assert "  MACs " in text and "FLOPs" not in text


def test_a_12_layer_gpt_fits_one_screen_in_every_face():
    cfg = "config=GPTConfig(n_layer=12, n_head=12, n_embd=768, vocab_size=50304, "
    cfg += "block_size=1024, flash=True)"
    args = [f"{GPT}::GPT", "--init", cfg, "--input", "idx=1,1024:int"]
    text = cost(*args)
    lines = text.splitlines()
    assert len(lines) <= 40, text
    assert "params 124,475,904 (124M)" in lines[2]  # GPT-2 small, wte tied to lm_head
    row = next(x for x in lines if "transformer.h.0-11 ×12" in x).split()
    assert row[2:] == ["Block", "85.1M", "68.3", "213G", "100.0"], row
    assert any("transformer.h.0-11.attn" in x for x in lines)
    assert not any("drop" in x for x in lines)  # holds nothing, costs nothing: hidden
    assert any("drop" in x for x in cost(*args, "--all-rows").splitlines())
    md = cost(*args, "--format", "markdown")
    assert (
        "| &nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;`transformer.h.0-11 ×12` | Block | 85.1M | 68.3 |"
        in md
    )
    gh = cost(*args, "--format", "github")
    assert "transformer.h.0-11 ×12" in gh and "params 124,475,904" in gh
    assert len(cost(*args, "--depth", "1").splitlines()) < len(lines)


def test_the_table_is_the_same_where_a_memoised_calls_calls_are_listed_once(monkeypatch):
    """Past MAX_LISTED records a memoised call's calls are listed where it first
    appears; a later call of it (`"same"`) is that very run, made by the module it
    names: its submodules keep their FLOPs (no `?`) and equal blocks still collapse,
    as where every call is listed (a Llama-70B decoder's 80 layers)."""
    from shapelint.analysis import target as analysis_target

    cfg = "config=GPTConfig(n_layer=6, n_head=2, n_embd=32, vocab_size=50, flash=True)"
    # concrete sizes: which SDPA kernel runs (so its backward) needs each operand's
    # strides, which are followed for concrete sizes only (ops/attention_path.py)
    args = [f"{GPT}::GPT", "--init", cfg, "--input", "idx=2,16:int", "--train", "--depth", "5"]
    whole = cost(*args)
    monkeypatch.setattr(analysis_target, "MAX_LISTED", 20)
    t = json.loads(cost(*args, "--format", "json"))["target"]
    blocks = next(c for c in t["calls"] if c["op"].startswith("for "))["calls"]
    assert blocks[1]["calls"][1].get("repeated") and "same" in blocks[1]["calls"][1]
    listed = cost(*args)
    assert listed == whole
    assert "transformer.h.0-5 ×6" in listed and "transformer.h.0-5.attn.c_attn" in listed
    assert not any(line.rstrip().endswith("?") for line in listed.splitlines())


def test_the_table_flags_need_a_target(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("import torch\n")
    for flag in (["--tree"], ["--all-rows"], ["--depth", "2"]):
        r = CliRunner().invoke(main, ["cost", "--no-cache", str(p), *flag])
        assert r.exit_code == 2 and "need a PATH::QUALNAME target" in r.output, flag


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "github"])
def test_a_file_that_cannot_be_read_is_named_and_fails_the_run(tmp_path, fmt):
    # Its costs were never counted: a report that left it out would read as complete.
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\n\ndef f(x:\n    return x @ x\n")
    good = tmp_path / "good.py"
    good.write_text("import torch\n\ndef g(a, b):\n    return a @ b\n")
    r = CliRunner().invoke(main, ["cost", "--no-cache", "--format", fmt, str(bad), str(good)])
    assert r.exit_code == 1, r.output
    if fmt == "json":
        (d,) = json.loads(r.output)["not_analyzed"]
        assert (d["code"], d["line"]) == ("SHP001", 3)
    else:
        assert "SHP001" in r.output and "not costed" in r.output
        assert re.search(r"bad\.py.*3", r.output)


def test_equal_items_at_the_root_collapse_without_a_parent(tmp_path):
    """A ModuleDict subclass as the target holds its items at the root, `0`, `1`:
    equal ones make one row `0-1 ×2`, with no parent name in front."""
    p = tmp_path / "m.py"
    p.write_text(
        textwrap.dedent(
            """
            from torch import nn


            class Items(nn.ModuleDict):
                def __init__(self, n):
                    layers = {}
                    for name, module in (("0", nn.Linear(n, n)), ("1", nn.Linear(n, n))):
                        layers[name] = module
                    super().__init__(layers)

                def forward(self, x):
                    for name, module in self.items():
                        x = module(x)
                    return x
            """
        )
    )
    text = cost(f"{p}::Items", "--init", "n=4", "--input", "x=2,4")
    assert any(line.split()[:3] == ["0-1", "×2", "Linear"] for line in text.splitlines()), text
