"""What the code establishes about sizes by comparing them (`assert t <= block_size`,
`if t > n: raise`) decides slices and min/max of a size symbolically: nanoGPT's causal
mask `self.bias[:, :, :T, :T]` of a buffer of block_size is T long once T <= block_size
holds. Judged by FlopCounterMode at several concrete sizes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from shapelint.analysis.driver import analyze_target
from shapelint.analysis.target import target_json
from shapelint.notation.symbolic import Expr, fact_scope, parse_expr, record_nonnegative
from shapelint.ops.indexing import provably_nonnegative

GPT = Path(__file__).parent / "data" / "modules" / "nanogpt_like.py"
CFG = "GPTConfig(n_layer=2, n_head=2, n_embd=16, flash={})"  # block_size 64


def target(path: Path, qual: str, init: dict, inputs: dict, **dims) -> dict:
    return target_json(analyze_target(str(path), path.read_text(), qual, init, inputs), dims)


# a module with a mask buffer of n × n; each test writes the rest of its forward
BUFFER = """
class M(nn.Module):
    def __init__(self, n=16):
        super().__init__()
        self.register_buffer("bias", torch.ones(n, n))
        self.n = n

    def forward(self, x):
        B, T, C = x.size()
"""


def write(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "m.py"
    p.write_text("import torch\nimport torch.nn as nn\n\n" + textwrap.dedent(body))
    return p


def test_facts_pay_for_negative_terms():
    T, S = Expr.name("T"), Expr.name("S")
    assert not provably_nonnegative(1024 - T)  # no fact: T may be larger
    with fact_scope():
        record_nonnegative(1024 - T)
        record_nonnegative(512 - S - 1)  # S < 512
        assert provably_nonnegative(1024 - T)
        assert provably_nonnegative(2048 - T * 2 + Expr.name("B"))
        assert provably_nonnegative(1535 - T - S)
        assert not provably_nonnegative(1536 - T - S * 2)
        assert not provably_nonnegative(1023 - T)
    assert not provably_nonnegative(1024 - T)  # the scope ended


@pytest.mark.parametrize("flash", [False, True])
def test_nanogpt_symbolic_sequence_keeps_the_attention(flash):
    res = target(GPT, "GPT", {"config": CFG.format(flash)}, {"idx": "B,T:int"})
    assert res["complete"], res["unknown"]
    flops = parse_expr(res["flops"])
    # 2 layers × 2 matmuls (q·kᵀ and p·v) × 2·B·T²·16: the T² term of attention
    assert flops.terms[(("B", 1), ("T", 2))] == 128


@pytest.mark.parametrize("flash", [False, True])
def test_nanogpt_formula_is_flop_counter_at_every_size(flash):
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    from shapelint.runtime import gap_formulas, split_counts
    from shapelint.runtime.modules import import_file

    res = target(GPT, "GPT", {"config": CFG.format(flash)}, {"idx": "B,T:int"})
    formula = parse_expr(res["flops"])
    mod = import_file(GPT)
    model = mod.GPT(eval(CFG.format(flash), vars(mod)))  # noqa: S307 - the test's own config
    for b, t in [(1, 1), (2, 7), (3, 33), (2, 64)]:  # 64: the whole block
        with torch.no_grad(), FlopCounterMode(display=False, custom_mapping=gap_formulas()) as fc:
            model(torch.zeros(b, t, dtype=torch.long))
        counts = {str(k): int(v) for k, v in fc.get_flop_counts()["Global"].items()}
        measured, adjusted, gaps = split_counts(counts)
        # CPU SDPA: torch registers 0; the static count is its CUDA formula (conventions.py)
        assert bool(gaps) == flash
        assert formula.evaluate({"B": b, "T": t}) == adjusted, (b, t)


def test_without_the_assert_the_slice_is_not_assumed(tmp_path):
    body = (
        BUFFER
        + """\
        {check}
        att = x @ x.transpose(-2, -1)
        att = att.masked_fill(self.bias[:T, :T] == 0, 0.0)
        return att @ x
"""
    )
    free = target(write(tmp_path, body.format(check="pass")), "M", {}, {"x": "B,T,8"})
    assert not free["complete"]  # T may exceed n: the slice is min(T, n)
    for check in ["assert T <= self.n", "assert 0 < T < self.n + 1", "assert self.n >= T"]:
        res = target(write(tmp_path, body.format(check=check)), "M", {}, {"x": "B,T,8"})
        assert res["complete"], check
        assert res["flops"] == "32*B*T**2", check


def test_a_raise_on_the_other_side_is_a_fact_and_decides_min(tmp_path):
    body = """
    class M(nn.Module):
        def __init__(self, n=16):
            super().__init__()
            self.w = nn.Parameter(torch.ones(n, 8))
            self.n = n

        def forward(self, x):
            B, T, C = x.size()
            {check}
            k = min(T, self.n)
            return x[:, :k] @ self.w[:k].transpose(0, 1)
    """
    free = target(write(tmp_path, body.format(check="pass")), "M", {}, {"x": "B,T,8"})
    assert not free["complete"]
    guarded = "if T > self.n:\n                raise ValueError('too long')"
    assert "raise" in body.format(check=guarded)
    res = target(write(tmp_path, body.format(check=guarded)), "M", {}, {"x": "B,T,8"})
    assert res["complete"] and res["flops"] == "16*B*T**2"


def test_a_fact_of_one_undecided_branch_does_not_leak(tmp_path):
    body = (
        BUFFER
        + """\
        if x.sum() > 0:
            assert T <= self.n
        return x.transpose(1, 2) @ self.bias[:T, :T]
"""
    )
    res = target(write(tmp_path, body), "M", {}, {"x": "B,T,8"})
    assert not res["complete"]
    body = body.replace("if x.sum() > 0:", "for _ in range(int(x.sum())):")
    assert "range(int(" in body
    res = target(write(tmp_path, body), "M", {}, {"x": "B,T,8"})
    assert not res["complete"]  # a loop's turn may not run
    body = body.replace("for _ in range(int(x.sum())):", "if True:")
    res = target(write(tmp_path, body), "M", {}, {"x": "B,T,8"})
    assert res["complete"]  # where the assert surely runs, its fact holds


def test_the_negation_is_of_the_values_tested_not_of_later_ones(tmp_path):
    body = """
    class M(nn.Module):
        def __init__(self, n=16):
            super().__init__()
            self.w = nn.Parameter(torch.ones(n, 8))
            self.n = n

        def forward(self, x):
            B, T, C = x.size()
            if T > self.n:
                raise ValueError("too long")
            else:
                T = T + {grow}
            return x[:, :T - {grow}] @ self.w[:T].transpose(0, 1)
    """
    # T <= n says nothing of T + 8 <= n: that slice stays min(T + 8, n)
    res = target(write(tmp_path, body.format(grow=8)), "M", {}, {"x": "B,T,8"})
    assert not res["complete"]
    res = target(write(tmp_path, body.format(grow=0)), "M", {}, {"x": "B,T,8"})
    assert res["complete"] and res["flops"] == "16*B*T**2"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_dims_that_break_a_fact_give_no_figure(fmt):
    """`--input idx=B,T:int` gives formulas that hold where `assert t <= block_size`
    does (T ≤ 64 here); `--dim T=65` is a size where the forward raises, so no
    figure holds there: a usage error naming the fact, never the formula's value."""
    import json

    from click.testing import CliRunner

    from shapelint.cli import main

    args = ["cost", "--no-cache", f"{GPT}::GPT", "--init", f"config={CFG.format(False)}"]
    args += ["--input", "idx=B,T:int", "--format", fmt]
    r = CliRunner().invoke(main, [*args, "--dim", "B=2,T=65"])
    assert r.exit_code == 2 and "T ≤ 64" in r.output and "raises" in r.output
    assert "FLOPs" not in r.output
    r = CliRunner().invoke(main, [*args, "--dim", "B=2,T=64"])
    assert r.exit_code == 0, r.output
    if fmt == "json":
        t = json.loads(r.output)["target"]
        assert t["flops_value"] == parse_expr(t["flops"]).evaluate({"B": 2, "T": 64})
    r = CliRunner().invoke(main, [*args, "--dim", "T=65"])  # B free: the fact is judged alone
    assert r.exit_code == 2 and "T ≤ 64" in r.output
