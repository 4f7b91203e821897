"""Static FLOPs of a whole annotated Transformer LM against torch's flop counter.

Each function of fixtures/models/transformer_lm.py runs under FlopCounterMode at
concrete sizes; shapelint's per-function FLOP formula (callees included),
evaluated at the same sizes, must give the same number."""

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from shapelint.analysis.driver import analyze_text  # noqa: E402
from shapelint.report.numbers import evaluate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "fixtures" / "models" / "transformer_lm.py"
DIMS = {"batch": 2, "seq": 8, "d_model": 16, "d_ff": 40, "vocab": 50, "heads": 4, "q": 8, "k": 8,
        "d_head": 4, "d_in": 16, "d_out": 24}  # fmt: skip


def _load():
    spec = importlib.util.spec_from_file_location("transformer_lm_fixture", MODEL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _inputs(name):
    B, S, D, F_, V, H, Dh = (
        DIMS[k] for k in ("batch", "seq", "d_model", "d_ff", "vocab", "heads", "d_head")
    )
    r = torch.randn
    return {
        "linear": (r(B, S, DIMS["d_in"]), r(DIMS["d_out"], DIMS["d_in"])),
        "embedding": (torch.randint(0, V, (B, S)), r(V, D)),
        "rmsnorm": (r(B, S, D), r(D)),
        "silu": (r(B, S, F_),),
        "swiglu": (r(B, S, D), r(F_, D), r(D, F_), r(F_, D)),
        "softmax": (r(B, H, S, S),),
        "attention": (r(B, H, S, Dh), r(B, H, S, Dh), r(B, H, S, Dh)),
        "multihead_self_attention": (r(B, S, D), r(D, D), r(D, D), r(D, D), r(D, D)),
        "transformer_block": (
            r(B, S, D),
            r(D),
            r(D, D),
            r(D, D),
            r(D, D),
            r(D, D),
            r(D),
            r(F_, D),
            r(D, F_),
            r(F_, D),
        ),
        "lm_head": (r(B, S, D), r(D, V)),
        "project_flinear": (r(B, S, D), r(F_, D)),
        "batched_scores": (r(B, S, Dh), r(B, Dh, S)),
    }[name]


STATIC = {f["name"]: f for f in analyze_text(str(MODEL), MODEL.read_text()).functions}
NAMES = ["linear", "embedding", "rmsnorm", "silu", "swiglu", "softmax", "attention",
         "multihead_self_attention", "transformer_block", "lm_head", "project_flinear", "batched_scores"]  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_function_flops_match_flop_counter(name):
    mod = _load()
    with FlopCounterMode(display=False) as counter:
        getattr(mod, name)(*_inputs(name))
    measured = counter.get_total_flops()
    static = STATIC[name]
    assert static["complete"], f"{name}: some calls have unknown cost: {static}"
    env = {**static["defaults"], **DIMS}
    assert evaluate(static["flops"], env) == measured, (name, static["flops"], measured)


def test_model_is_statically_clean():
    diags = analyze_text(str(MODEL), MODEL.read_text()).diagnostics
    assert diags == []


def test_ellipsis_annotated_model_confirmed_by_runtime_mode():
    """`... d_in` annotations: each `...` binds to the caller's batch dims; runtime
    mode runs every function and confirms shapes and FLOPs."""
    import json

    from click.testing import CliRunner

    from shapelint.cli import main

    path = ROOT / "fixtures" / "models" / "ellipsis_lm.py"
    dims = "batch=2,seq=8,d_model=16,d_ff=32,d_in=16,d_out=8"
    r = CliRunner().invoke(
        main,
        ["run", str(path), "--dim", dims, "--format", "json", "--repeat", "1", "--warmup", "0"],
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert {d["function"] for d in data} == {"linear", "mlp", "MHA.forward"}
    assert all(d["shape_ok"] and d["flops_match"] and d["flops_measured"] > 0 for d in data), data
