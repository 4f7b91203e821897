"""Runtime mode (`shapelint run`) on CPU; the CUDA path where a GPU is present.

Oracles: jaxtyping judges shapes (the explanations are checked against its
verdicts), torch.utils.flop_counter counts FLOPs (the formulas runtime mode adds
for the kernels it misses are checked against its count of the unfused paths).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jaxtyping import Float, jaxtyped
from torch import Tensor, nn
from torch.utils.flop_counter import FlopCounterMode

from shapelint import runtime
from shapelint.cli import main
from shapelint.cli.options import parse_dim_values
from shapelint.notation.symbolic import Expr, product
from shapelint.ops import einops_ops, stub_ops
from shapelint.ops.values import Cost, OpResult, TensorV
from shapelint.runtime.shapes import Memo, explain_shape, parse_spec

ROOT = Path(__file__).resolve().parent.parent
LIES = ROOT / "tests" / "data" / "runtime_lies.py"
TINY = ROOT / "fixtures" / "runtime" / "tiny_transformer.py"
JSON_KEYS = {
    "function", "device", "dims", "shape_ok", "shape_errors", "output_shape", "flops_measured",
    "flops_adjusted", "adjusted_ops", "flops_static", "flops_match", "seconds", "flops_per_second", "mfu", "peak_memory_bytes",
}  # fmt: skip
FAST = ["--repeat", "1", "--warmup", "0"]

HEADER = """\
import torch
from einops import einsum, rearrange
from jaxtyping import Float, Int
from torch import Tensor, nn
"""


def module(tmp_path: Path, body: str, name: str = "model.py") -> Path:
    p = tmp_path / name
    p.write_text(HEADER + textwrap.dedent(body))
    return p


def invoke(*args: str):
    return CliRunner().invoke(main, ["run", *args])


def run_json(*args: str):
    r = invoke(*args, "--format", "json", *FAST)
    return r, (json.loads(r.stdout) if r.exit_code in (0, 1) else None)


# A stand-in for the static matmul cost while the real stub ops are being written
# elsewhere: "*b n k @ k m -> *b n m", 2 FLOPs per multiply-add, as the counter says.
def _matmul_stub(name, args, kwargs, costs=True):
    if name not in ("torch.matmul", "operator.matmul") or len(args) != 2:
        return None
    a, w = args
    if not (isinstance(a, TensorV) and isinstance(w, TensorV) and a.rank and w.rank == 2):
        return None
    *batch, n, k = a.shape
    _, m = w.shape
    if None in (*batch, n, k, m):
        return None
    return OpResult(TensorV((*batch, n, m), a.dtype), Cost(flops=2 * product(batch) * n * k * m))


@pytest.fixture
def static_matmul(monkeypatch):
    monkeypatch.setattr(stub_ops, "stub_call", _matmul_stub)


def _static_costs_are_provisional() -> str | None:
    n, k, m = Expr.name("n"), Expr.name("k"), Expr.name("m")
    if stub_ops.stub_call("torch.matmul", [TensorV((n, k)), TensorV((k, m))], {}) is None:
        return "static torch op costs are provisional in this branch (ops/stub_ops.py)"
    res = einops_ops.einops_call(
        "torch.einsum", "nk,km->nm", [TensorV((n, k)), TensorV((k, m))], None
    )
    if res.cost.flops is None:
        return "static einsum costs are provisional in this branch (ops/einops_ops.py)"
    return None


# ---------------------------------------------------------------------- faces


def test_static_mode_never_imports_torch():
    code = "import sys, shapelint.cli, shapelint.cli.run; print(sorted(m for m in ('torch', 'jaxtyping', 'einops', 'shapelint.runtime') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_help_says_it_executes_user_code():
    r = CliRunner().invoke(main, ["run", "--help"])
    assert r.exit_code == 0
    assert "EXECUTES" in r.output and "--dim" in r.output and "--backward" in r.output


def test_dim_values():
    assert parse_dim_values(("b=2,n=3", "batch=2x3")) == (
        {"b": 2, "n": 3, "batch": 6},
        {"batch": (2, 3)},
    )
    for bad in ("b", "b=x", "1b=2", "b=-1", "b=2x"):
        r = invoke(f"{LIES}::project", "--dim", bad)
        assert r.exit_code == 2, bad
        assert "NAME=INT" in r.output


# ---------------------------------------------------------------------- confirmed


def test_matmul_confirmed_against_static_formula(tmp_path, static_matmul):
    p = module(
        tmp_path,
        """
        def mm(a: Float[Tensor, "b n k"], w: Float[Tensor, "k m"]) -> Float[Tensor, "b n m"]:
            return torch.matmul(a, w)
        """,
    )
    r, data = run_json(f"{p}::mm", "--dim", "b=2,n=3,k=4,m=5", "--device", "cpu")
    assert r.exit_code == 0, r.output
    assert set(data) == JSON_KEYS
    assert data["function"] == "mm" and data["device"] == "cpu"
    assert data["dims"] == {"b": 2, "n": 3, "k": 4, "m": 5}
    assert data["shape_ok"] is True and data["shape_errors"] == []
    assert data["output_shape"] == [2, 3, 5]
    assert data["flops_measured"] == data["flops_static"] == 2 * 2 * 3 * 4 * 5
    assert data["flops_match"] is True
    assert data["seconds"] > 0 and data["flops_per_second"] > 0
    assert data["mfu"] is None and data["peak_memory_bytes"] is None


def test_static_formula_disagreeing_is_exit_1_with_both_sides(tmp_path, monkeypatch):
    def half_cost(name, args, kwargs, costs=True):
        res = _matmul_stub(name, args, kwargs)
        if res is not None:
            res.cost.flops = res.cost.flops.exact_div(2)
        return res

    monkeypatch.setattr(stub_ops, "stub_call", half_cost)
    p = module(
        tmp_path,
        """
        def mm(a: Float[Tensor, "n k"], w: Float[Tensor, "k m"]) -> Float[Tensor, "n m"]:
            return a @ w
        """,
    )
    r = invoke(f"{p}::mm", "--dim", "n=3,k=4,m=5", *FAST)
    assert r.exit_code == 1
    assert "measured 120, static 60 = k·m·n" in r.output
    assert "measured forward: aten.mm 120" in r.output
    assert "static line 7: operator.matmul  k·m·n = 60" in r.output


def test_backward_counted_and_compared(tmp_path, static_matmul):
    p = module(
        tmp_path,
        """
        def mm(a: Float[Tensor, "n k"], w: Float[Tensor, "k m"]) -> Float[Tensor, "n m"]:
            return torch.matmul(a, w)
        """,
    )
    r, data = run_json(f"{p}::mm", "--dim", "n=3,k=4,m=5", "--backward")
    assert r.exit_code == 0, r.output
    assert data["flops_measured"] == data["flops_static"] == 3 * 2 * 3 * 4 * 5


def test_confirmed_against_real_static_ops(tmp_path):
    reason = _static_costs_are_provisional()
    if reason:
        pytest.skip(reason)
    p = module(
        tmp_path,
        """
        def mm(a: Float[Tensor, "b n k"], w: Float[Tensor, "k m"]) -> Float[Tensor, "b n m"]:
            return torch.matmul(a, w)


        def contract(x: Float[Tensor, "b s d"], w: Float[Tensor, "d e"]) -> Float[Tensor, "b s e"]:
            return einsum(x, w, "b s d, d e -> b s e")


        def batched(q: Float[Tensor, "b h s d"], k: Float[Tensor, "b h t d"]) -> Float[Tensor, "b h s t"]:
            return torch.einsum("bhsd,bhtd->bhst", q, k)
        """,
    )
    r, data = run_json(str(p), "--dim", "b=2,n=3,k=4,m=5,s=6,d=7,e=8,h=2,t=5")
    assert r.exit_code == 0, r.output
    assert [d["function"] for d in data] == ["mm", "contract", "batched"]
    assert all(d["flops_match"] and d["shape_ok"] for d in data)
    assert [d["flops_static"] for d in data] == [
        2 * 2 * 3 * 4 * 5,
        2 * 2 * 6 * 7 * 8,
        2 * 2 * 2 * 6 * 5 * 7,
    ]


# ---------------------------------------------------------------------- shapes


def test_lying_return_is_exit_1_with_per_dimension_message():
    r, data = run_json(f"{LIES}::project", "--dim", "batch=2,seq=3,d_in=4,d_out=5")
    assert r.exit_code == 1
    assert data["shape_ok"] is False
    assert data["shape_errors"] == [
        "project: return value: shape [2, 3, 5]: axis 2 ('d_in') is 5 but d_in=4 from argument 'x'"
    ]
    assert data["output_shape"] == [2, 3, 5]
    text = invoke(f"{LIES}::project", "--dim", "batch=2,seq=3,d_in=4,d_out=5", *FAST)
    assert text.exit_code == 1 and "shapes   FAILED" in text.output


def test_without_beartype_jaxtyping_isinstance_judges(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "beartype.door", None)  # import fails
    p = module(
        tmp_path,
        """
        def pair(x: Float[Tensor, "b n"]) -> tuple[Float[Tensor, "b n"], Float[Tensor, "n b"]]:
            return x, x


        def maybe(x: Float[Tensor, "b n"], m: Float[Tensor, "b n"] | None = None) -> Float[Tensor, "b n"] | None:
            return x if m is None else None
        """,
    )
    _, data = run_json(str(p), "--dim", "b=2,n=3")
    assert [d["shape_ok"] for d in data] == [False, True]
    assert data[0]["output_shape"] == [[2, 3], [2, 3]]
    assert "axis 0 ('n') is 2 but n=3 from argument 'x'" in data[0]["shape_errors"][0]


def test_lie_undetectable_when_sizes_coincide():
    r, data = run_json(f"{LIES}::project", "--dim", "batch=2,seq=3,d_in=4,d_out=4")
    assert data["shape_ok"] is True, data["shape_errors"]


def test_annotated_assignment_is_checked():
    _, data = run_json(f"{LIES}::scores", "--dim", "batch=2,seq=3,d=6")
    assert data["shape_errors"] == [
        "scores: line 19 'product': shape [2, 3, 3]: axis 2 ('d') is 3 but d=6 from argument 'q'"
    ]


def test_callee_has_its_own_memo_and_is_named():
    _, data = run_json(f"{LIES}::calls_helper", "--dim", "batch=2,d=6")
    assert data["shape_errors"] == [
        "helper: return value: shape [2, 6]: axis 0 ('d') is 2 but d=6 from argument 'x'; "
        "axis 1 ('n') is 6 but n=2 from argument 'x'"
    ]


def test_each_call_binds_its_own_sizes(tmp_path):
    p = module(
        tmp_path,
        """
        def double(x: Float[Tensor, "n"]) -> Float[Tensor, "n"]:
            return x * 2


        def both(a: Float[Tensor, "n"], b: Float[Tensor, "m"]) -> Float[Tensor, "n"]:
            wide: Float[Tensor, "m"] = double(b)
            return double(a) + wide.sum()
        """,
    )
    r, data = run_json(f"{p}::both", "--dim", "n=3,m=5")
    assert data["shape_ok"] is True, data["shape_errors"]
    assert r.exit_code == 0  # nothing costed statically, nothing counted: 0 == 0


def test_exception_in_user_function_is_a_finding(tmp_path):
    p = module(
        tmp_path,
        """
        def bad(x: Float[Tensor, "b n"]) -> Float[Tensor, "b n"]:
            return rearrange(x, "b (n two) -> b n two", two=2)
        """,
    )
    r, data = run_json(f"{p}::bad", "--dim", "b=2,n=3")
    assert r.exit_code == 1
    assert data["shape_ok"] is False
    assert data["shape_errors"][-1].startswith("bad raised EinopsError")
    assert "(line 7)" in data["shape_errors"][-1]


def test_variadic_dims(tmp_path):
    p = module(
        tmp_path,
        """
        def scale(x: Float[Tensor, "*batch d"], y: Float[Tensor, "... d"]) -> Float[Tensor, "*batch d"]:
            return x * y.sum()
        """,
    )
    _, data = run_json(f"{p}::scale", "--dim", "batch=2x3,d=4")
    assert data["output_shape"] == [2, 3, 4] and data["dims"] == {"batch": 6, "d": 4}
    _, data = run_json(f"{p}::scale", "--dim", "d=4")
    assert data["output_shape"] == [runtime.DEFAULT_AXIS, 4]


def test_nn_module_instantiated_from_defaults_and_dims(tmp_path):
    p = module(
        tmp_path,
        """
        class MLP(nn.Module):
            def __init__(self, d_model: int = 8, d_ff: int = 16, dropout: float = 0.0):
                super().__init__()
                self.up = nn.Linear(d_model, d_ff)
                self.down = nn.Linear(d_ff, d_model)

            def forward(self, x: Float[Tensor, "b d_model"]) -> Float[Tensor, "b d_model"]:
                hidden: Float[Tensor, "b d_ff"] = torch.relu(self.up(x))
                return self.down(hidden)
        """,
    )
    _, data = run_json(f"{p}::MLP", "--dim", "b=2,d_model=4")
    assert data["function"] == "MLP.forward"
    assert data["dims"] == {"b": 2, "d_model": 4, "d_ff": 16}
    assert data["shape_ok"] and data["output_shape"] == [2, 4]
    assert data["flops_measured"] == 2 * 2 * 4 * 16 * 2


def test_synthesized_dtypes(tmp_path):
    p = module(
        tmp_path,
        """
        from jaxtyping import Float32


        def f(ids: Int[Tensor, "b"], x: Float[Tensor, "b"], y: Float32[Tensor, "b"], n: int = 3):
            return ids, x, y
        """,
    )
    for dtype, want in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        opts = runtime.RunOptions(dims={"b": 4}, dtype=dtype)
        loaded = runtime.load(p, {})
        prep = runtime.prepare(loaded, "f", opts, torch.device("cpu"))
        ids, x, y = prep.call()
        assert ids.dtype == torch.int64 and set(ids.tolist()) <= {0, 1}
        assert x.dtype == want and y.dtype == torch.float32
        assert prep.env == {"b": 4, "n": 3}


# ---------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    "target, dims, says",
    [
        ("{lies}::nope", "b=1", "no function 'nope'"),
        ("{lies}::bad-name", "b=1", "is not FUNCTION"),
        ("{tmp}/missing.py::f", "b=1", "no such file"),
        ("{tmp}/broken.py::f", "b=1", "importing"),
        ("{lies}::project", "batch=2", "no size for seq, d_in, d_out; pass --dim seq=INT"),
    ],
)
def test_usage_errors_exit_2_without_traceback(tmp_path, target, dims, says):
    (tmp_path / "broken.py").write_text("import torch\nraise ImportError('no such thing')\n")
    r = invoke(target.format(lies=LIES, tmp=tmp_path), "--dim", dims)
    assert r.exit_code == 2, r.output
    assert says in r.output
    assert "Traceback" not in r.output


def test_import_error_names_the_line(tmp_path):
    p = tmp_path / "broken.py"
    p.write_text("import torch\n\n\nx = 1 / 0\n")
    r = invoke(f"{p}::f")
    assert r.exit_code == 2
    assert "ZeroDivisionError: division by zero (line 4)" in r.output


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
def test_cuda_requested_without_gpu_is_usage_error():
    r = invoke(f"{LIES}::project", "--device", "cuda", "--dim", "batch=1,seq=1,d_in=1,d_out=1")
    assert r.exit_code == 2
    assert "no CUDA device" in r.output


def test_path_mode_runs_what_it_can_and_says_what_it_skipped(tmp_path):
    p = module(
        tmp_path,
        """
        def known(x: Float[Tensor, "b"]) -> Float[Tensor, "b"]:
            print("user output goes to stderr")
            return x + 1


        def unknown(x: Float[Tensor, "b q"]) -> Float[Tensor, "b q"]:
            return x


        def untyped(x):
            return x


        if __name__ == "__main__":
            raise SystemExit("never runs")
        """,
    )
    r, data = run_json(str(p), "--dim", "b=3")
    assert r.exit_code == 0, r.output
    assert [d["function"] for d in data] == ["known"]
    assert "skipped unknown: no size for q; pass --dim q=INT" in r.stderr
    assert "user output goes to stderr" in r.stderr


# ---------------------------------------------------------------------- FLOP counter gaps


def test_cpu_sdpa_counted_like_the_math_path():
    q, k, v = torch.randn(2, 3, 7, 8), torch.randn(2, 3, 5, 8), torch.randn(2, 3, 5, 4)
    f = torch.nn.functional.scaled_dot_product_attention
    with FlopCounterMode(display=False, custom_mapping=runtime.gap_formulas()) as ours:
        f(q, k, v)
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as math:
        f(q, k, v)
    assert (
        ours.get_total_flops()
        == math.get_total_flops()
        == 2 * 2 * 3 * 7 * 5 * 8 + 2 * 2 * 3 * 7 * 5 * 4
    )


def test_cpu_sdpa_backward_counted():
    q, k, v = (torch.randn(2, 3, 6, 8, requires_grad=True) for _ in range(3))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    with FlopCounterMode(display=False, custom_mapping=runtime.gap_formulas()) as m:
        out.sum().backward()
    forward = 2 * 2 * 2 * 3 * 6 * 6 * 8
    assert m.get_total_flops() == forward * 5 // 2


@pytest.mark.parametrize("layer", ["encoder", "mha"])
def test_fused_eval_paths_counted_like_unfused(layer):
    torch.manual_seed(0)
    if layer == "encoder":
        m = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=48, batch_first=True)
    else:
        m = nn.MultiheadAttention(embed_dim=32, num_heads=4, batch_first=True)
    x = torch.randn(2, 6, 32)

    def call():
        return m(x) if layer == "encoder" else m(x, x, x, need_weights=False)

    with FlopCounterMode(display=False, custom_mapping=runtime.gap_formulas()) as unfused:
        call()
    m.eval()
    with (
        torch.no_grad(),
        FlopCounterMode(display=False, custom_mapping=runtime.gap_formulas()) as fused,
    ):
        call()
    fused_ops = {str(op) for op in fused.get_flop_counts()["Global"]}
    assert fused_ops & {"aten._transformer_encoder_layer_fwd", "aten._native_multi_head_attention"}
    assert fused.get_total_flops() == unfused.get_total_flops() > 0


# ---------------------------------------------------------------------- explanations vs jaxtyping

_SINGLE = st.sampled_from(["a", "b", "c", "#a", "#b", "_", "1", "2", "3"])
_VARIADIC = st.sampled_from(["*v", "*w", "#*v", "...", "*_"])


@st.composite
def _spec(draw):
    toks = draw(st.lists(_SINGLE, max_size=4))
    if draw(st.booleans()):
        toks.insert(draw(st.integers(0, len(toks))), draw(_VARIADIC))
    return " ".join(toks)


@settings(max_examples=400)
@given(
    st.lists(
        st.tuples(_spec(), st.lists(st.integers(1, 3), max_size=5).map(tuple)),
        min_size=1,
        max_size=4,
    )
)
def test_explanations_agree_with_jaxtyping(checks):
    """A sequence of checks in one call: explain_shape finds a problem exactly
    when jaxtyping's isinstance says no, memo included."""

    def theirs():
        return [isinstance(torch.zeros(shape), Float[Tensor, spec]) for spec, shape in checks]

    expected = jaxtyped(typechecker=None)(theirs)()
    memo, mine = Memo(), []
    for spec, shape in checks:
        problems, single, var = explain_shape(spec, shape, memo)
        mine.append(not problems)
        if not problems:
            for k, v in single.items():
                memo.single.setdefault(k, (v, "earlier"))
            for k, (v, bc) in var.items():
                memo.variadic[k] = (v, "earlier", bc)
    assert mine == expected


def test_spec_tokens():
    kinds = [(d.kind, d.name, d.broadcast) for d in parse_spec("#b *batch 3 _ ... d+1 *_ n=2*m")]
    assert kinds == [
        ("named", "b", True), ("variadic", "batch", False), ("fixed", "", False), ("anon", "", False),
        ("anon_variadic", "", False), ("expr", "d+1", False), ("anon_variadic", "_", False), ("expr", "2*m", False),
    ]  # fmt: skip


_PERMS = list(itertools.permutations(["b", "n", "m"]))
_PERM_SOURCE = HEADER + "".join(
    f'\n\ndef perm_{i}(a: Float[Tensor, "b n k"], w: Float[Tensor, "k m"]) -> Float[Tensor, "{" ".join(p)}"]:\n'
    "    return a @ w\n"
    for i, p in enumerate(_PERMS)
)
_LOADED: list = []


def _perm_module(tmp_path_factory) -> runtime.LoadedModule:
    if not _LOADED:
        p = tmp_path_factory.mktemp("perm") / "perms.py"
        p.write_text(_PERM_SOURCE)
        _LOADED.append(runtime.load(p, {}))
    return _LOADED[0]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.integers(0, len(_PERMS) - 1), st.fixed_dictionaries({n: st.integers(1, 4) for n in "bnkm"})
)
def test_return_annotation_permutations(tmp_path_factory, which, dims):
    """A return annotation naming the axes in another order is caught exactly when
    the sizes differ, and the message names each axis that differs."""
    loaded = _perm_module(tmp_path_factory)
    opts = runtime.RunOptions(dims=dims, repeat=1, warmup=0)
    rep = runtime.run_function(loaded, f"perm_{which}", opts, torch.device("cpu"))
    actual = [dims["b"], dims["n"], dims["m"]]
    wrong = [i for i, name in enumerate(_PERMS[which]) if dims[name] != actual[i]]
    assert rep.output_shape == actual
    assert rep.shape_ok == (not wrong)
    for i in wrong:
        name = _PERMS[which][i]
        assert f"axis {i} ('{name}') is {actual[i]} but {name}={dims[name]}" in rep.shape_errors[0]
    assert rep.flops_measured == 2 * dims["b"] * dims["n"] * dims["k"] * dims["m"]


# ---------------------------------------------------------------------- hardware, GPU


def test_mfu_peak_from_hardware_table(monkeypatch):
    chip = types.SimpleNamespace(
        key="h100-sxm",
        name="NVIDIA H100 SXM",
        aliases=("h100",),
        peak=lambda dt: {"bf16": 989.5e12}[dt],
    )
    pcie = types.SimpleNamespace(
        key="h100-pcie", name="NVIDIA H100 PCIe", aliases=(), peak=lambda dt: 756e12
    )
    fake = types.ModuleType("shapelint.napkin.hardware")
    fake.DEFAULT_HARDWARE = {"h100-sxm": chip, "h100-pcie": pcie}
    fake.lookup = lambda name, table: {"h100": chip}[name]
    monkeypatch.setitem(sys.modules, "shapelint.napkin.hardware", fake)
    # `from shapelint.napkin import hardware` reads the package attribute once the
    # real module has been imported by another test.
    import shapelint.napkin

    monkeypatch.setattr(shapelint.napkin, "hardware", fake, raising=False)
    assert runtime.chip_peak("NVIDIA H100 80GB HBM3", "bf16") == (989.5e12, "NVIDIA H100 SXM")
    assert runtime.chip_peak("NVIDIA H100 PCIe", "fp32") == (756e12, "NVIDIA H100 PCIe")
    assert runtime.chip_peak("NVIDIA H100 80GB HBM3", "fp8") == (None, "")  # no such peak
    assert runtime.chip_peak("Some Other GPU", "bf16") == (None, "")
    assert runtime.chip_peak("", "bf16", override="h100") == (989.5e12, "NVIDIA H100 SXM")
    assert runtime.peak_flops(torch.device("cpu"), "bf16") == (None, "")


def test_mfu_against_the_real_table():
    hw = pytest.importorskip("shapelint.napkin.hardware")
    peak, chip = runtime.chip_peak("NVIDIA H100 80GB HBM3", "bf16")
    assert peak == hw.lookup("h100").peak("bf16") and chip


def test_fixture_model_shapes_confirmed():
    r, data = run_json(  # the CPU kernel: torch's count of it is 0 there
        str(TINY), "--dim", "batch=2,seq=8,d_model=32,vocab=50,d_in=8,d_out=12,heads=4,d_head=8",
        "--device", "cpu",
    )  # fmt: skip
    assert r.exit_code in (0, 1), r.output
    names = [d["function"] for d in data]
    assert names == [
        "project",
        "split_heads",
        "attention",
        "fused_attention",
        "embed",
        "MLP.forward",
        "Block.forward",
    ]
    assert all(d["shape_ok"] for d in data), [d["shape_errors"] for d in data]
    by_name = {d["function"]: d for d in data}
    # torch's own count of the CPU kernel is 0; shapelint's convention is its CUDA formula
    fused = by_name["fused_attention"]
    assert fused["flops_measured"] == 0
    assert fused["flops_adjusted"] == fused["flops_static"] == 4 * 2 * 4 * 8 * 8 * 8
    assert set(fused["adjusted_ops"]) == {"aten._scaled_dot_product_flash_attention_for_cpu"}
    if _static_costs_are_provisional() is None:
        assert all(d["flops_match"] for d in data), [
            (d["function"], d["flops_static"], d["flops_measured"]) for d in data
        ]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_bf16_block():
    r = invoke(str(TINY) + "::Block", "--device", "cuda", "--dtype", "bf16", "--dim", "batch=8,seq=1024",
               "--format", "json", "--repeat", "5")  # fmt: skip
    data = json.loads(r.stdout)
    assert data["device"].startswith("cuda") and data["shape_ok"]
    assert data["peak_memory_bytes"] > 0 and data["seconds"] > 0
    assert data["flops_measured"] > 0
