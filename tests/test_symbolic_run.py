"""`shapelint run PATH::Class --input idx=B,T:int`: confirmation for all sizes. The
module is built under FakeTensorMode with a ShapeEnv and FlopCounterMode's symbolic
count is compared with the static formula as polynomials (torch is the oracle)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")
sympy = pytest.importorskip("sympy")

from click.testing import CliRunner  # noqa: E402

from shapelint.cli import main  # noqa: E402
from shapelint.runtime import symbolic  # noqa: E402

GPT = Path(__file__).parent / "data" / "modules" / "nanogpt_like.py"
CFG = "config=GPTConfig(n_layer=2, n_head=2, n_embd=16, flash={})"  # block_size 64


def run(*args: str):
    r = CliRunner().invoke(main, ["run", *args, "--format", "json"])
    return r.exit_code, json.loads(r.output) if r.output.startswith("{") else r.output


@pytest.mark.parametrize("flash", [False, True])
def test_nanogpt_confirmed_for_all_sizes(flash):
    code, rep = run(
        f"{GPT}::GPT", "--init", CFG.format(flash), "--input", "idx=B,T:int", "--device", "cpu"
    )
    assert code == 0, rep
    assert rep["mode"] == "symbolic" and rep["confirmed"]
    assert rep["flops_verdict"] == "agree"
    # torch's own formula, in the user's names, with the attention's T² term
    assert rep["flops_adjusted"] == "128*B*T**2 + 12288*B*T + 3200*B" == rep["flops_static"]
    if flash:  # CPU SDPA: FlopCounterMode registers 0, the adjusted count adds the CUDA formula
        assert rep["flops_torch"] == "12288*B*T + 3200*B"
        assert rep["adjusted_ops"]
    else:
        assert rep["flops_torch"] == rep["flops_adjusted"] and not rep["adjusted_ops"]
    assert rep["params_verdict"] == "agree"
    assert rep["params_torch"] == rep["params_static"]
    assert rep["params_torch"][0] == "9216"
    assert rep["output_shape"] == ["B", "1", "100"] and rep["shape_verdict"] == "agree"
    assert "T ≤ 64" in rep["guards"]  # the assert, as torch records it
    assert rep["device"] == "cpu"


@pytest.mark.parametrize("flash", [False, True])
def test_backward_confirmed_for_all_sizes(flash):
    """`--backward`: FlopCounterMode under the backward of the output's sum (the
    inputs needing no grad), a formula in B and T, against the static flops_backward
    as polynomials; without it, no backward is counted or claimed."""
    args = [f"{GPT}::GPT", "--init", CFG.format(flash), "--input", "idx=B,T:int"]
    code, rep = run(*args, "--backward")
    if flash:  # torch registers 0 for CPU flash attention's backward too
        assert "B*T**2" not in rep["backward_torch"] and rep["backward_adjusted_ops"]
        assert "B*T**2" in rep["backward_adjusted"]
        # which kernel CPU runs SDPA with depends on each operand's last-axis stride,
        # followed as a formula in B and T (ops/sym_strides.py): the fused kernel's
        # backward, complete for all sizes and equal to torch's adjusted formula
        assert rep["backward_static_complete"] is True
        assert rep["backward_verdict"] == "agree" and rep["confirmed"], rep
        assert rep["backward_adjusted"] == rep["backward_static"]
        assert code == 0, rep
    else:
        assert code == 0, rep
        assert rep["backward_verdict"] == "agree" and rep["confirmed"]
        assert rep["backward_adjusted"] == rep["backward_static"]
        assert "B*T**2" in rep["backward_static"]  # the attention's backward grows with T²
        assert rep["backward_torch"] == rep["backward_adjusted"]
    code, rep = run(*args)
    assert code == 0 and "backward_verdict" not in rep


def test_a_static_backward_that_differs_is_no_confirmation(monkeypatch):
    from shapelint.runtime import modules

    real = modules.static_target

    def half_backward(*a, **k):
        out = real(*a, **k)
        out["flops_backward"] = f"({out['flops_backward']})//2"
        return out

    monkeypatch.setattr(modules, "static_target", half_backward)
    code, rep = run(f"{GPT}::GPT", "--init", CFG.format(False), "--input", "idx=B,T:int",
                    "--backward")  # fmt: skip
    assert code == 1 and rep["flops_verdict"] == "agree"
    assert rep["backward_verdict"] in ("differ", "undecided") and not rep["confirmed"]


def test_text_face_prints_both_formulas_and_the_verdict():
    r = CliRunner().invoke(
        main,
        ["run", f"{GPT}::GPT", "--init", CFG.format(True), "--input", "idx=B,T:int",
         "--device", "cpu"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert "[symbolic, FakeTensorMode, forward]" in lines[0]
    assert lines[1].split() == ["flops", "agree"]
    assert any(line.split()[:2] == ["FlopCounterMode", "12288·B·T"] for line in lines)
    assert any(line.split()[:2] == ["static", "128·B·T²"] for line in lines)
    assert "holds where T ≤ 64 (torch's guards)" in r.output
    assert "counted by torch's CUDA formula" in r.output  # the SDPA convention


def test_a_static_formula_that_differs_says_by_how_much(monkeypatch):
    from shapelint.runtime import modules

    real = modules.static_target

    def off_by_one_layer(*a, **k):
        out = real(*a, **k)
        out["flops"] = out["flops"].replace("128*B*T**2", "64*B*T**2")
        return out

    monkeypatch.setattr(modules, "static_target", off_by_one_layer)
    code, rep = run(f"{GPT}::GPT", "--init", CFG.format(False), "--input", "idx=B,T:int")
    assert code == 1
    assert rep["flops_verdict"] == "differ" and rep["flops_difference"] == "64*B*T**2"
    assert not rep["confirmed"]


def test_an_incomplete_static_figure_is_not_confirmed(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(
        textwrap.dedent("""
        import torch
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self, n=64):
                super().__init__()
                self.register_buffer("bias", torch.ones(n, n))

            def forward(self, x):
                B, T, C = x.size()
                return x.transpose(1, 2) @ self.bias[:T, :T]
        """)
    )
    code, rep = run(f"{p}::M", "--input", "x=B,T,8")
    assert code == 1
    assert rep["flops_verdict"] == "static incomplete" and not rep["static_complete"]
    assert rep["flops_torch"] == "16*B*T**2"  # torch counts it; the static side cannot
    assert "T ≤ 64" in rep["guards"]  # what torch assumed to run the slice as T


def test_dims_are_hints_and_symbolic_forces_the_mode():
    code, rep = run(
        f"{GPT}::GPT", "--init", CFG.format(False), "--input", "idx=B,T:int",
        "--dim", "B=3,T=5", "--symbolic",
    )  # fmt: skip
    assert code == 0, rep
    assert rep["hints"] == {"B": 3, "T": 5} and rep["flops_verdict"] == "agree"


def test_a_hint_torch_refuses_is_a_usage_error_naming_it():
    r = CliRunner().invoke(
        main,
        ["run", f"{GPT}::GPT", "--init", CFG.format(False), "--input", "idx=B,T:int",
         "--dim", "T=100", "--symbolic"],
    )  # fmt: skip
    assert r.exit_code == 2
    assert "T=100" in r.output and "AssertionError" in r.output and "Traceback" not in r.output


def test_a_model_too_big_for_memory_builds_fake():
    # 24 layers of width 4096: 5.1e9 parameters, 20 GB in float32, built without memory
    cfg = "config=GPTConfig(n_layer=24, n_head=32, n_embd=4096, vocab_size=50304, block_size=2048)"
    code, rep = run(f"{GPT}::GPT", "--init", cfg, "--input", "idx=B,T:int")
    assert code == 0, rep
    assert int(rep["params_torch"][0]) > 5e9
    assert rep["params_verdict"] == "agree" and rep["flops_verdict"] == "agree"


def test_compare_as_polynomials():
    B, T = sympy.symbols("B T", integer=True, positive=True)
    user = {"B": B, "T": T}
    assert symbolic.compare(2 * B * (T + 1), "2*B*T + 2*B", user) == ("agree", None)
    verdict, diff = symbolic.compare(2 * B * T**2, "2*B*T", user)
    assert verdict == "differ" and sympy.expand(diff - (2 * B * T**2 - 2 * B * T)) == 0
    assert symbolic.compare(B, "?", user) == ("?", None)
    # floors: equal where they are, different where not
    assert symbolic.compare(sympy.floor(B / 2) * 2, "(B//2)*2", user)[0] == "agree"
    assert symbolic.compare(sympy.floor(B / 2), "B//3", user)[0] == "differ"


def test_a_size_torch_fixes_at_its_hint_is_no_confirmation():
    # T = block_size: the mask slice is the whole buffer, and torch fixes T to 64
    code, rep = run(
        f"{GPT}::GPT", "--init", CFG.format(False), "--input", "idx=B,T:int",
        "--dim", "T=64", "--symbolic",
    )  # fmt: skip
    assert code == 1
    assert rep["flops_verdict"] == "specialised" and not rep["confirmed"]
    assert "B" in rep["flops_torch"] and "T" not in rep["flops_torch"]
    assert any("fixed T to 64" in n for n in rep["notes"])


def test_hints_of_0_or_1_are_refused():
    r = CliRunner().invoke(
        main,
        ["run", f"{GPT}::GPT", "--init", CFG.format(False), "--input", "idx=B,T:int",
         "--dim", "B=1", "--symbolic"],
    )  # fmt: skip
    assert r.exit_code == 2 and "at least 2" in r.output and "Traceback" not in r.output
