"""The napkin of a model file (`cost PATH::Class --tokens --gpus --hardware`):
the seed's questions answered from examples/llama.py, its parameter count held to
torch's, the days held to the chain of numbers the seed writes, and every figure
that is not known left unknown."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from shapelint.cli import main
from shapelint.cost.napkin import target_figures
from shapelint.napkin.formulas import NapkinError, train_time
from shapelint.napkin.model import Counted, ModelFigures, Plan, Span, model_napkin
from shapelint.notation.symbolic import parse_expr

LLAMA = Path(__file__).resolve().parents[1] / "examples" / "llama.py"
SEED_DAY = 1979e12 / 2 * 0.5 * 1024 * 60 * 60 * 24  # the seed's flops_per_day
TINY = "config=LlamaConfig(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=96, vocab_size=100)"


def cost(*args: str, fmt: str = "json"):
    r = CliRunner().invoke(main, ["cost", f"{LLAMA}::Llama", *args, "--format", fmt])
    return r


def napkin_of(*args: str) -> dict:
    r = cost(*args)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)["target"]["napkin"]


def llama_module():
    spec = importlib.util.spec_from_file_location("llama_example", LLAMA)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up by name
    try:
        spec.loader.exec_module(mod)
    finally:
        del sys.modules[spec.name]
    return mod


SEED = ("--tokens", "15e12", "--gpus", "1024", "--hardware", "h100", "--mfu", "0.5")


def test_params_at_a_tiny_config_are_torchs():
    torch = pytest.importorskip("torch")
    mod = llama_module()
    m = mod.Llama(
        mod.LlamaConfig(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=96, vocab_size=100)
    )
    n = napkin_of("--init", TINY, "--input", "tokens=B,T:int", *SEED)
    assert n["params"]["value"] == sum(p.numel() for p in m.parameters())
    assert n["trainable_params"]["value"] == sum(
        p.numel() for p in m.parameters() if p.requires_grad
    )
    del torch


def test_params_at_70b_are_torchs_on_the_meta_device_and_the_formula():
    torch = pytest.importorskip("torch")
    mod = llama_module()
    with torch.device("meta"):  # no memory: torch's own count of the 70B module
        m = mod.Llama()
    n = napkin_of("--input", "tokens=B,T:int", *SEED)
    d, layers, heads, kv, ffn, vocab = 8192, 80, 64, 8, 28672, 128256
    head_dim = d // heads
    per_layer = 2 * d * d + 2 * d * kv * head_dim + 3 * d * ffn + 2 * d
    formula = 2 * vocab * d + layers * per_layer + d
    assert n["params"]["value"] == formula == sum(p.numel() for p in m.parameters())
    assert formula == 70_553_706_496
    assert "LlamaConfig at" in n["params"]["source"] and "llama.py:" in n["params"]["source"]


def test_six_nd_days_follow_the_seeds_chain_with_n_counted():
    n = napkin_of("--input", "tokens=B,T:int", *SEED)
    six = n["training"]["six_nd"]
    N = n["params"]["value"]
    assert n["plan"]["peak_flop_per_sec"] == 1979e12 / 2
    assert n["training"]["flops_per_day"] == pytest.approx(SEED_DAY)
    assert six["days"]["value"] == pytest.approx(6 * N * 15e12 / SEED_DAY)
    assert round(six["days"]["value"], 1) == 145.1  # N = 70.55B counted
    # The seed's ≈143 days are the same chain at its round N = 70e9.
    assert round(6 * 70e9 * 15e12 / SEED_DAY, 1) == 143.9
    assert round(train_time(70e9, 15e12, 1024, "h100", 0.5).days, 1) == 143.9


def test_counted_days_are_the_counted_figures_and_a_bound_without_backward():
    r = cost("--input", "tokens=B,T:int", "--dim", "T=8192", *SEED)
    assert r.exit_code == 0, r.output
    t = json.loads(r.output)["target"]
    c = t["napkin"]["training"]["counted"]
    fwd = 2621440 * 8192 + 139003428864  # the target's forward ÷ B·T at T = 8192
    assert c["forward_per_token"]["value"] == fwd
    diff = "\n".join(t["napkin"]["training"]["difference"])
    assert "2621440·T = 2.147e10" in diff and "attention" in diff
    assert "1.05B parameters do no multiply-add" in diff
    if t.get("flops_backward") is not None and t.get("backward_complete"):
        # The analysis counts the backward: the days are exact, from both.
        bwd = parse_expr(t["flops_backward"]).evaluate({"B": 1, "T": 8192}) / 8192
        assert c["backward_per_token"]["value"] == pytest.approx(bwd)
        assert c["days"]["value"] == pytest.approx((fwd + bwd) * 15e12 / SEED_DAY)
    else:  # it does not: a lower bound, the forward and the backward's known part,
        # never a guessed 2×
        back = c["backward_per_token"]
        assert back["value"] is None and back["high"] is None and back["why"]
        known = back["low"] or 0
        if t.get("flops_backward") is not None:
            low = parse_expr(t["flops_backward"]).evaluate({"B": 1, "T": 8192}) / 8192
            assert known == pytest.approx(low)
        assert c["days"]["value"] is None and c["days"]["high"] is None
        assert c["days"]["low"] == pytest.approx((fwd + known) * 15e12 / SEED_DAY)


def test_at_concrete_sizes_the_counted_days_are_complete():
    """At one 8192-token sequence every call is costed, the backward included
    (which SDPA kernel runs depends on the operands' strides, followed at concrete
    sizes): the days are the forward and backward per token on the seed's chain."""
    r = cost("--input", "tokens=1,8192:int", *SEED)
    assert r.exit_code == 0, r.output
    t = json.loads(r.output)["target"]
    assert t["complete"] and t["backward_complete"]
    c = t["napkin"]["training"]["counted"]
    fwd, bwd = int(t["flops"]) / 8192, int(t["flops_backward"]) / 8192
    assert fwd == 2621440 * 8192 + 139003428864
    assert c["days"]["value"] == pytest.approx((fwd + bwd) * 15e12 / SEED_DAY)
    assert t["napkin"]["memory"]["activations"]["value"] == int(t["activation_bytes"])
    # at concrete sizes attention's products are in the per-token constant: the
    # excess over 2·N is not put on shared weights alone
    diff = "\n".join(t["napkin"]["training"]["difference"])
    assert "at these sizes" in diff and "attention" in diff and "whatever the sizes" not in diff


def test_an_unbound_sequence_length_gives_a_bound_and_names_it():
    n = napkin_of("--input", "tokens=B,T:int", *SEED)
    c = n["training"]["counted"]
    assert c["forward_per_token"]["value"] is None
    assert c["forward_per_token"]["low"] == 2621440 + 139003428864  # T ≥ 1
    assert "T not bound" in c["forward_per_token"]["why"]
    # forward and backward stop on the same free size: the days name it once
    assert c["why"].count("T not bound") == 1


def test_twelve_bytes_per_param_and_the_verdict_on_8_h100s():
    n = napkin_of("--input", "tokens=B,T:int", "--gpus", "8", "--hardware", "h100")
    assert "training" not in n  # no --tokens: no days
    m = n["memory"]
    N = n["params"]["value"]
    assert m["bytes_per_param"] == {
        "weights": 2,
        "gradients": 2,
        "master": 0,
        "optimizer": 8,
        "total": 12,
    }
    assert m["state"]["value"] == 12 * N
    assert m["capacity"] == 8 * 80e9
    assert round(m["max_params"] / 1e9, 1) == 53.3  # the seed's 8 · 80 GB / 12
    assert m["verdict"] == "does not fit"
    assert m["min_gpus"] == math.ceil(12 * N / 80e9) == 11
    assert m["activations"]["value"] is None  # unknown stays unknown


def test_on_1024_gpus_the_state_fits_but_activations_stay_unknown():
    m = napkin_of("--input", "tokens=B,T:int", *SEED)["memory"]
    assert m["verdict"] == "fits before activations"
    assert m["state_per_gpu_sharded"]["value"] == pytest.approx(m["state"]["value"] / 1024)


@pytest.mark.parametrize("fmt", ["text", "markdown", "github"])
def test_every_face_carries_the_napkin(fmt):
    args = ("--input", "tokens=1,8192:int", *SEED)
    saved = json.loads(cost(*args).output)["target"]["activation_bytes"]
    r = cost(*args, fmt=fmt)
    assert r.exit_code == 0, r.output
    shown = f"activations {round(int(saved) / 1e9)} GB"
    for part in ("145.1 days", "12 B", shown, "70,553,706,496"):
        assert part in r.output, part


def test_activations_of_one_sequence_decide_the_verdict():
    """At T = 8192 the tensors one forward saves (517 GB: the code's float32, no
    checkpointing) alone exceed an H100, whatever the state's sharding. Every call's
    saved tensors are known for all sizes (the attention's kernel and layout from
    formula strides): the figure is a bound only because B is free, taken at 1, and
    it is the one sequence's figure at tokens=1,8192."""
    n = napkin_of("--input", "tokens=B,T:int", "--dim", "T=8192", *SEED)
    m = n["memory"]
    assert m["verdict"] == "does not fit"
    assert m["activations"]["value"] is None and m["activations"]["low"] > 80e9
    assert "B not bound" in m["activations_why"] and "line" not in m["activations_why"]
    one = napkin_of("--input", "tokens=1,8192:int", *SEED)["memory"]["activations"]
    assert one["value"] == m["activations"]["low"]


def test_usage_errors_are_messages():
    r = CliRunner().invoke(main, ["cost", str(LLAMA), "--gpus", "8", "--hardware", "h100"])
    assert r.exit_code == 2 and "PATH::Class" in r.output
    r = cost("--input", "tokens=B,T:int", "--tokens", "1e9", "--gpus", "8")
    assert r.exit_code == 2 and "--hardware" in r.output
    r = cost("--input", "tokens=B,T:int", "--gpus", "8", "--hardware", "h100", "--optimizer", "x")
    assert r.exit_code == 2 and "unknown optimizer" in r.output and "Traceback" not in r.output
    r = cost("--input", "tokens=B,T:int", "--gpus", "8", "--hardware", "h100", "--mfu", "2")
    assert r.exit_code == 2 and "mfu" in r.output


def test_no_token_input_leaves_the_counted_days_unknown():
    n = napkin_of("--input", "tokens=B,T", *SEED)  # a float input: no token ids to count
    c = n["training"]["counted"]
    assert c["forward_per_token"]["value"] is None and c["forward_per_token"]["low"] == 0
    assert "no token-id input" in c["why"]
    assert n["training"]["six_nd"]["days"]["value"] is not None


# ---------------------------------------------------------------- pure figures

PLAN = Plan(15e12, 8, "h100")


def figs(params: Span, trainable: Span | None = None, backward=None) -> ModelFigures:
    return ModelFigures(
        Counted(params, "here"), Counted(trainable or params, "here"), None, backward
    )


def test_a_counted_backward_makes_the_days_exact():
    t = {
        "path": "m.py",
        "line": 3,
        "name": "M",
        "flops": "6*B*T",
        "complete": True,
        "flops_backward": "12*B*T",
        "backward_complete": True,
        "params": "3",
        "params_value": 3,
        "trainable_params": "3",
        "trainable_params_value": 3,
        "input_dtypes": {"x": "int64"},
    }
    f = target_figures(t, "class M: pass\n", {}, {"x": "B,T:int"}, {})
    assert f.forward.total.span.value == 6
    assert f.backward.span.value == 12
    tr = model_napkin(f, PLAN)["training"]
    c = tr["counted"]
    assert c["train_per_token"]["value"] == 18
    assert tr["difference"][0] == "counted 18 FLOPs per token against 6·N = 18: +0.0%"
    assert "2× the counted forward" in tr["difference"][-1]
    assert c["days"]["value"] == pytest.approx(18 * 15e12 / (989.5e12 * 0.5 * 8 * 86400))
    # An incomplete backward is a lower bound.
    f = target_figures({**t, "backward_complete": False}, "", {}, {"x": "B,T:int"}, {})
    assert f.backward.span == Span(12) and f.backward.why


def test_a_term_per_sequence_gives_a_value_at_the_bound_sizes_and_no_split():
    t = {
        "path": "m.py",
        "line": 1,
        "name": "M",
        "flops": "512*B*T**2 + 12800*B",  # a last-token head: per sequence, not per token
        "complete": True,
        "params": "10",
        "params_value": 10,
        "trainable_params": "10",
        "trainable_params_value": 10,
        "input_dtypes": {"idx": "int64"},
    }
    f = target_figures(t, "", {}, {"idx": "B,T:int"}, {})
    assert not f.forward.total.span.known and "T" in f.forward.total.why
    f = target_figures(t, "", {}, {"idx": "B,T:int"}, {"T": 100})
    assert f.forward.total.span.value == pytest.approx(512 * 100 + 12800 / 100)
    assert f.forward.constant is None  # no "whatever the sizes" part claimed
    assert model_napkin(f, PLAN)["training"]["difference"] == []


def test_nothing_times_zero_is_zero_not_unknown():
    m = model_napkin(figs(Span()), PLAN)["memory"]
    assert m["master"]["value"] == 0 and m["weights"]["value"] is None
    assert m["verdict"] == "unknown"


def test_frozen_parameters_pay_weights_only_and_unknown_trainable_is_a_range():
    m = model_napkin(figs(Span.exact(100), Span.exact(40)), PLAN)["memory"]
    assert m["state"]["value"] == 100 * 2 + 40 * (2 + 8)
    m = model_napkin(figs(Span.exact(100), Span()), PLAN)["memory"]
    assert (m["state"]["low"], m["state"]["high"]) == (200, 1200)


def test_a_partial_parameter_count_decides_only_what_it_can():
    huge = model_napkin(figs(Span(1e12)), PLAN)["memory"]
    assert huge["verdict"] == "does not fit"  # a lower bound already over capacity
    small = model_napkin(figs(Span(10)), PLAN)["memory"]
    assert small["verdict"] == "unknown" and small["min_gpus"] is None


def test_bad_plans_are_napkin_errors():
    with pytest.raises(NapkinError):
        model_napkin(figs(Span.exact(1)), Plan(15e12, 8, "h100", mfu=0))
    with pytest.raises(NapkinError):
        model_napkin(figs(Span.exact(1)), Plan(-1, 8, "h100"))
    with pytest.raises(NapkinError):
        model_napkin(figs(Span.exact(1)), Plan(1, 8, "nochip"))


def test_spans_print_what_is_known():
    assert Span.exact(2).show() == "2"
    assert Span(2).show() == "≥ 2"
    assert Span().show() == "?"
    assert Span(1, 3).show() == "1 – 3"
    assert (Span.exact(1) + Span()).show() == "≥ 1"


def test_a_function_target_has_no_parameter_count_and_says_so():
    demo = Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "attention.py"
    r = CliRunner().invoke(
        main,
        ["cost", f"{demo}::split_heads", "--input", "x=2,8,768", "--gpus", "8", "--hardware",
         "h100", "--format", "json"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    n = json.loads(r.output)["target"]["napkin"]
    assert n["params"]["value"] is None and n["params"]["why"] == "a function has no parameters()"
    assert n["memory"]["verdict"] == "unknown"


def test_the_forward_the_napkin_divides_is_torchs_at_a_tiny_config():
    pytest.importorskip("torch")
    r = CliRunner().invoke(
        main, ["run", f"{LLAMA}::Llama", "--init", TINY, "--input", "tokens=2,16:int"]
    )
    assert r.exit_code == 0, r.output
    assert "flops    ok" in r.output and "static 4,603,904" in r.output
    assert "params   ok" in r.output
    n = napkin_of("--init", TINY, "--input", "tokens=B,T:int", "--dim", "T=16", *SEED)
    assert n["training"]["counted"]["forward_per_token"]["value"] * 2 * 16 == 4_603_904
