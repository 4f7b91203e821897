"""`shapelint cost --diff BASE` and `shapelint cost --format github`, on real git repos."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from shapelint.cli import main
from shapelint.cost.diff import compare_metric
from shapelint.notation.symbolic import Expr, parse_expr

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

BASE_MODEL = textwrap.dedent(
    """\
    import torch
    from jaxtyping import Float
    from torch import Tensor


    def mlp(x: Float[Tensor, "b d"], w: Float[Tensor, "d 1024"]) -> Float[Tensor, "b 1024"]:
        return torch.einsum("bd,dh->bh", x, w)


    def scores(q: Float[Tensor, "b d"], k: Float[Tensor, "b d"]):
        return torch.einsum("bd,bd->b", q, k)


    def block(x: Float[Tensor, "b d"], w: Float[Tensor, "d 1024"]):
        return mlp(x, w)


    def unchanged(x: Float[Tensor, "b d"], v: Float[Tensor, "d e"]):
        return torch.einsum("bd,de->be", x, v)
    """
)

# The hidden dimension doubles (1024 -> 2048) and scores() gains a sequence axis.
NEW_MODEL = (
    BASE_MODEL.replace('"d 1024"', '"d 2048"')
    .replace('"b 1024"', '"b 2048"')
    .replace(
        'def scores(q: Float[Tensor, "b d"], k: Float[Tensor, "b d"]):\n'
        '    return torch.einsum("bd,bd->b", q, k)',
        'def scores(q: Float[Tensor, "b s d"], k: Float[Tensor, "b s d"]):\n'
        '    return torch.einsum("bsd,bsd->bs", q, k)',
    )
)


def git(cwd, *args):
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text(BASE_MODEL)
    (tmp_path / "pkg" / "gone.py").write_text(
        "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n"
        'def old(x: Float[Tensor, "n m"], y: Float[Tensor, "m p"]):\n'
        '    return torch.einsum("nm,mp->np", x, y)\n'
    )
    (tmp_path / "build").mkdir()  # excluded by default on both sides
    (tmp_path / "build" / "skip.py").write_text(BASE_MODEL)
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    (tmp_path / "pkg" / "model.py").write_text(NEW_MODEL)
    (tmp_path / "pkg" / "gone.py").unlink()
    return tmp_path


def cost(args, cwd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["cost", "--no-cache", *args])
    finally:
        os.chdir(old)


def test_diff_shows_doubled_hidden_dimension(repo):
    r = cost(["--diff", "main", "--format", "json", "."], repo)
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    by_name = {c["name"]: c for c in data["changes"]}
    assert set(by_name) == {"mlp", "block", "scores", "old"}, by_name
    for name in ("mlp", "block"):  # block() reaches the change through its callee
        c = by_name[name]
        assert c["status"] == "more" and c["path"] == "pkg/model.py"
        assert c["flops"]["change"] == "×2"
        assert parse_expr(c["flops"]["after"]) == 2 * parse_expr(c["flops"]["before"])
    assert by_name["scores"]["status"] == "more"
    assert by_name["scores"]["flops"]["change"] == "×s"
    assert by_name["old"]["status"] == "removed"
    assert "unchanged" not in by_name


def test_diff_markdown_symbolic_and_numbers(repo):
    r = cost(["--diff", "main", "pkg"], repo)
    assert r.exit_code == 0, r.output
    md = r.output
    assert md.startswith("<!-- shapelint-cost-diff -->")
    # the verdict first
    assert md.splitlines()[1] == "### shapelint: ▲ more expensive since `main`"
    assert md.splitlines()[3] == "Functions: 3 more expensive, 1 removed."
    row = next(line for line in md.splitlines() if "`mlp`" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "`pkg/model.py:6`"
    assert cells[2:5] == ["`2048·b·d` FLOPs", "`4096·b·d` FLOPs", "▲ `×2` (+100%)"]
    r = cost(["--diff", "main", "--dim", "b=8,d=512,s=16", "pkg"], repo)
    row = next(line for line in r.output.splitlines() if "`mlp`" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    # 2048·8·512 and twice that, with units, the difference and its percent
    assert cells[2:5] == [
        "`2048·b·d` = 8.39 MFLOPs",
        "`4096·b·d` = 16.8 MFLOPs",
        "▲ +8.39 MFLOPs (+100%)",
    ]
    assert "With b=8, d=512, s=16." in r.output
    gone = next(line for line in r.output.splitlines() if "`old`" in line)
    assert "`pkg/gone.py:4` at `main`" in gone and "removed" in gone
    r = cost(["--diff", "main", "--macs", "pkg"], repo)
    assert "| Function | Where | MACs before | MACs after | Δ MACs |" in r.output
    row = next(line for line in r.output.splitlines() if "`mlp`" in line)
    assert "| `1024·b·d` MACs | `2048·b·d` MACs | ▲ `×2` (+100%) |" in row


def test_diff_against_head_of_clean_tree_is_empty(repo):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "wider")
    r = cost(["--diff", "HEAD"], repo)
    assert r.exit_code == 0, r.output
    assert "No function's FLOPs or bytes changed." in r.output
    r = cost(["--diff", "HEAD~1", "--format", "github"], repo)
    notices = r.output.splitlines()
    assert any(
        n.startswith("::notice file=pkg/model.py,line=6,title=FLOPs more since HEAD~1::mlp")
        for n in notices
    ), notices


def test_diff_from_a_subdirectory_and_single_file(repo):
    r = cost(["--diff", "main", "--format", "json", "model.py"], repo / "pkg")
    assert r.exit_code == 0, r.output
    names = {c["name"] for c in json.loads(r.output)["changes"]}
    assert names == {"mlp", "block", "scores"}


@pytest.mark.parametrize("base", ["no-such-rev", "--help"])
def test_diff_unknown_revision_is_usage_error(repo, base):
    r = cost(["--diff", base, "."], repo)
    assert r.exit_code == 2
    assert "shapelint: error" in r.output


def test_diff_outside_git_is_usage_error(tmp_path):
    (tmp_path / "a.py").write_text("import torch\n")
    r = cost(["--diff", "HEAD", str(tmp_path)], tmp_path)
    assert r.exit_code == 2
    assert "--diff HEAD" in r.output


def test_cost_github_notices(repo):
    r = cost(["--format", "github", "--dim", "b=2,d=4", "pkg/model.py"], repo)
    assert r.exit_code == 0, r.output
    notices = r.output.splitlines()
    first = next(n for n in notices if ",line=7," in n)
    assert first.startswith(
        '::notice file=pkg/model.py,line=7,col=12,title=FLOPs::4096·b·d = 32.8k (torch.einsum "bd,dh->bh"; bytes '
    )
    assert all(n.startswith("::notice file=pkg/model.py,") for n in notices)


# ---------------------------------------------------------------------- the comparison itself

names = st.sampled_from(["B", "D", "S", "H"])
monomials = st.builds(
    lambda c, ns: Expr.const(c) * _prod(ns), st.integers(1, 9), st.lists(names, max_size=3)
)


def _prod(ns):
    out = Expr.const(1)
    for n in ns:
        out = out * Expr.name(n)
    return out


@settings(max_examples=150)
@given(
    st.lists(monomials, min_size=1, max_size=3), st.lists(monomials, max_size=2), st.integers(2, 5)
)
def test_direction_agrees_with_numbers(before_terms, extra_terms, k):
    """Whatever the symbols say, bound sizes must agree: a positive added term or a
    constant factor above 1 is 'more', and the reverse is 'less'."""
    before = sum(before_terms[1:], before_terms[0])
    grown = [before + t for t in extra_terms] + [before * k]
    dims = {"B": 3, "D": 5, "S": 7, "H": 2}
    for after in grown:
        if after == before:
            continue
        for bound in ({}, dims):
            up = compare_metric(before.to_python(), after.to_python(), bound)
            down = compare_metric(after.to_python(), before.to_python(), bound)
            assert up.direction == "more", (before, after, up)
            assert down.direction == "less", (before, after, down)
            assert after.evaluate(dims) > before.evaluate(dims)
    scaled = compare_metric(before.to_python(), (before * k).to_python(), {})
    assert scaled.change == f"×{k}"


def test_metric_edge_cases():
    assert compare_metric("2*B*D", "2*B*D", {}).direction == "same"
    assert compare_metric(None, None, {}).direction == "same"
    d = compare_metric("2*B*D", None, {})
    assert (d.direction, d.change) == ("changed", "unknown now")
    d = compare_metric("2*B*D", "B*D + D**2", {})
    assert d.direction == "changed"  # depends on whether B or D is larger
    assert compare_metric("2*B*D", "B*D + D**2", {"B": 2, "D": 8}).direction == "more"
    assert compare_metric("2*B*D", "B*D + D**2", {"B": 8, "D": 2}).direction == "less"
    d = compare_metric("2*B*D", "2*B*D*S", {"B": 2, "D": 3, "S": 4})
    assert (d.direction, d.change, d.ratio) == ("more", "×S", 4.0)
    d = compare_metric("8*B*D", "2*B*D", {})
    assert (d.direction, d.change) == ("less", "÷4")
    d = compare_metric("4*B*D", "6*B*D", {})
    assert (d.direction, d.change) == ("more", "×3/2")
    d = compare_metric("8*B*D + 4*B", "8*B*D*S + 4*B*S", {})
    assert (d.direction, d.change) == ("more", "×S")
    d = compare_metric("8*B*D*S + 4*B*S", "8*B*D + 4*B", {})
    assert (d.direction, d.change) == ("less", "÷S")


# ---------------------------------------------------------------------- as a PR comment

GPT = Path(__file__).parent / "data" / "modules" / "nanogpt_like.py"
GPT_ARGS = ["gpt.py::GPT", "--input", "idx=2,64:int", "--init"]
GPT_ARGS += ["config=GPTConfig(n_layer=2, n_head=2, n_embd=32, vocab_size=50, flash=True)"]


@pytest.fixture
def gpt_repo(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "gpt.py").write_text(GPT.read_text())
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    # a narrower MLP: the kind of change whose ratio is no small fraction
    text = GPT.read_text().replace("4 * config.n_embd", "3 * config.n_embd")
    (tmp_path / "gpt.py").write_text(text)
    return tmp_path


def test_diff_of_a_target_reads_as_a_pull_request_comment(gpt_repo):
    r = cost(["--diff", "HEAD", "--format", "json", "gpt.py", *GPT_ARGS], gpt_repo)
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["verdict"] == "less"
    t = data["changes"][0]
    assert t["target"] and t["name"] == "GPT" and t["status"] == "less"
    class_line = GPT.read_text().splitlines().index("class GPT(nn.Module):") + 1
    assert t["line"] == class_line
    bv, av = t["flops"]["before_value"], t["flops"]["after_value"]
    assert t["flops"]["delta"] == str(av - bv) and t["flops"]["percent"] == (av - bv) * 100 / bv
    assert t["notes"] and "CUDA formula" in t["notes"][0]

    md = cost(["--diff", "HEAD", "gpt.py", *GPT_ARGS], gpt_repo).output
    lines = md.splitlines()
    assert lines[1] == "### shapelint: ▼ cheaper since `HEAD`"
    pct = f"{(av - bv) * 100 / bv:+.3g}%".replace("-", "−")
    head = f"**`GPT` (target), `gpt.py:{class_line}`: FLOPs {_si(bv)} → {_si(av)}, ▼ −{_si(bv - av)} ({pct})**"
    assert lines[3].startswith(head), lines[3]
    assert "÷" not in md  # no ratio of two large numbers
    row = next(line for line in lines if line.startswith("| `GPT` (target)"))
    assert f"| `gpt.py:{class_line}` |" in row
    # functions whose figures are lower bounds are apart, as ?, not as changed rows
    table = md.split("<details>")[0]
    assert "MLP.forward" not in table and "<details>" in md
    assert "Note: attention (F.scaled\\_dot\\_product\\_attention" in md  # markdown-escaped

    gh = cost(["--diff", "HEAD", "--format", "github", "gpt.py", *GPT_ARGS], gpt_repo).output
    assert "line=0" not in gh and "0 → 0" not in gh
    first = gh.splitlines()[0]
    assert first.startswith(f"::notice file=gpt.py,line={class_line},title=FLOPs less since HEAD::")
    assert f"GPT (target): {_si(bv)} → {_si(av)}" in first
    unknown = next(n for n in gh.splitlines() if "title=FLOPs not known since HEAD" in n)
    assert "FLOPs ? for" in unknown and "file=" not in unknown


def _si(n: int) -> str:
    from shapelint.report.numbers import si

    return si(n, "FLOPs")


def test_a_large_constant_ratio_is_a_difference_and_a_percent():
    d = compare_metric("212678148096", "183687118848", {})
    assert d.direction == "less" and d.change == "−28991029248"
    assert d.delta == "-28991029248" and round(d.percent, 2) == -13.63
    assert compare_metric("2*b", "3*b", {}).percent == 50.0
    assert compare_metric("2*b", "2*b*s", {}).percent is None  # depends on s
    assert compare_metric("2*b", "2*b*s", {"b": 1, "s": 4}).percent == 300.0


def test_a_target_whose_lower_bound_did_not_move_is_unknown_not_the_same():
    from shapelint.cost.diff import target_change
    from shapelint.cost.review import render_github, render_markdown

    t = {"name": "Net", "path": "net.py", "line": 7, "flops": "0", "bytes": "8192",
         "complete": False, "bytes_complete": False, "unknown": [], "conventions": []}  # fmt: skip
    c = target_change(t, t, {})
    assert c.status == "incomplete" and c.line == 7
    md = render_markdown([c], "HEAD", {})
    assert "? not known" in md.splitlines()[1]
    assert "| `Net` (target) | `net.py:7` | ? |" in md
    assert "0 → 0" not in render_github([c], "HEAD", {})


def _each_side(gpt_repo):
    """The model file at BASE, then now, imported as torch runs it."""
    import importlib.util

    for i, text in enumerate((GPT.read_text(), (gpt_repo / "gpt.py").read_text())):
        path = gpt_repo / f"as_torch_{i}.py"  # untracked: not part of the diff
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(f"_diff_gpt_{i}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        path.unlink()
        yield mod


def test_the_diff_of_a_module_target_gives_its_parameters_before_and_after(gpt_repo):
    """A narrower MLP changes the parameters too: the comment's lead line, the json
    and the github notice carry torch's counts at BASE and now, Δ and percent."""
    torch = pytest.importorskip("torch")

    counts = []
    for mod in _each_side(gpt_repo):
        with torch.device("meta"):
            m = mod.GPT(mod.GPTConfig(n_layer=2, n_head=2, n_embd=32, vocab_size=50, flash=True))
        counts.append(sum(p.numel() for p in m.parameters()))
    before, after = counts
    assert after < before
    r = cost(["--diff", "HEAD", "--format", "json", "gpt.py", *GPT_ARGS], gpt_repo)
    p = json.loads(r.output)["changes"][0]["params"]
    assert (p["before_value"], p["after_value"], p["direction"]) == (before, after, "less")
    assert p["percent"] == (after - before) * 100 / before
    from shapelint.report.numbers import si

    pct = f"{(after - before) * 100 / before:+.3g}%".replace("-", "−")
    said = f"; params {si(before)} → {si(after)}, ▼ −{si(before - after)} ({pct})."
    md = cost(["--diff", "HEAD", "gpt.py", *GPT_ARGS], gpt_repo).output
    assert md.splitlines()[3].endswith(said)
    gh = cost(["--diff", "HEAD", "--format", "github", "gpt.py", *GPT_ARGS], gpt_repo).output
    assert said[:-1].replace("%", "%25") in gh.splitlines()[0]


def test_the_diff_of_a_module_target_lists_the_modules_that_changed(gpt_repo):
    """The rows of the per-module table that changed, named as named_modules() names
    them (identical blocks collapsed), each side's parameters and FLOPs held to
    torch's: sum(p.numel()) of the modules and FlopCounterMode's count per module."""
    torch = pytest.importorskip("torch")

    from torch.utils.flop_counter import FlopCounterMode

    truth = []
    for mod in _each_side(gpt_repo):
        m = mod.GPT(mod.GPTConfig(n_layer=2, n_head=2, n_embd=32, vocab_size=50, flash=True))
        with FlopCounterMode(display=False) as fc:
            m(torch.randint(0, 50, (2, 64)))
        named = dict(m.named_modules())
        counts = fc.get_flop_counts()
        row = {}
        for leaf in ("c_fc", "c_proj"):
            names = [f"transformer.h.{k}.mlp.{leaf}" for k in range(2)]
            params = sum(p.numel() for n in names for p in named[n].parameters())
            flops = sum(sum(counts[f"GPT.{n}"].values()) for n in names)
            row[f"transformer.h.0-1.mlp.{leaf}"] = (params, flops)
        truth.append(row)
    r = cost(["--diff", "HEAD", "--format", "json", "gpt.py", *GPT_ARGS], gpt_repo)
    rows = {m["name"]: m for m in json.loads(r.output)["changes"][0]["modules"]}
    # the MLP's path changed, attention did not
    assert set(rows) == {
        "GPT",
        "transformer",
        "transformer.h",
        "transformer.h.0-1",
        "transformer.h.0-1.mlp",
        "transformer.h.0-1.mlp.c_fc",
        "transformer.h.0-1.mlp.c_proj",
    }
    for name, (before, after) in ((n, (truth[0][n], truth[1][n])) for n in truth[0]):
        m = rows[name]
        assert (m["params"]["before_value"], m["flops"]["before_value"]) == before, name
        assert (m["params"]["after_value"], m["flops"]["after_value"]) == after, name
        assert m["status"] == "less" and m["kind"] == "Linear"
    md = cost(["--diff", "HEAD", "gpt.py", *GPT_ARGS], gpt_repo).output
    assert "| `transformer.h.0-1.mlp.c_fc` | Linear |" in md
    assert "attn" not in md.split("Functions:")[0]
    gh = cost(["--diff", "HEAD", "--format", "github", "gpt.py", *GPT_ARGS], gpt_repo).output
    assert "\\nmodule transformer.h.0-1.mlp.c_fc: " in gh.splitlines()[0]
    assert "\\nmodule transformer.h.0-1.mlp:" not in gh  # where the change is, not above it


def test_a_notes_quoted_code_is_a_code_span_in_the_comment():
    from shapelint.report.markdown import prose

    assert prose("as torch builds it (`self.training` True; a_b)") == (
        "as torch builds it (`self.training` True; a\\_b)"
    )
