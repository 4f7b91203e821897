"""Which mixes of floating dtypes torch refuses (ops/dtype_match.py), held to torch
on CPU: a matrix product or a convolution needs one dtype, a norm takes a float16 or
bfloat16 input beside float32 weights; and the stubs' same_dtype= / norm_dtype=
wiring, in a target run only."""

from __future__ import annotations

import itertools
import json
import textwrap

import pytest
from click.testing import CliRunner

from shapelint.cli import main
from shapelint.ops import dtype_match
from shapelint.ops.stub_format import parse_stub_text
from shapelint.ops.values import TensorV

FLOATS = ("float32", "float16", "bfloat16", "float64")


def _torch_ops():
    torch = pytest.importorskip("torch")
    f = torch.nn.functional

    def r(dtype, *shape):
        return torch.randn(*shape, dtype=getattr(torch, dtype))

    return {
        # name: (norm?, run(x dtype, weight dtype))
        "linear": (False, lambda a, b: f.linear(r(a, 2, 8), r(b, 4, 8), r(b, 4))),
        "matmul": (False, lambda a, b: r(a, 2, 8) @ r(b, 8, 4)),
        "conv2d": (False, lambda a, b: f.conv2d(r(a, 1, 3, 5, 5), r(b, 4, 3, 3, 3))),
        "layer_norm": (True, lambda a, b: f.layer_norm(r(a, 2, 8), (8,), r(b, 8), r(b, 8))),
        "group_norm": (True, lambda a, b: f.group_norm(r(a, 2, 8, 3), 2, r(b, 8), r(b, 8))),
    }


@pytest.mark.parametrize("op", ["linear", "matmul", "conv2d", "layer_norm", "group_norm"])
def test_the_mixes_refused_are_torchs(op):
    norm, run = _torch_ops()[op]
    for a, b in itertools.product(FLOATS, FLOATS):
        try:
            run(a, b)
            raises = False
        except RuntimeError:
            raises = True
        operands = [("input", TensorV((2, 8), a)), ("weight", TensorV((8,), b))]
        if not norm:
            operands.append(("bias", TensorV((4,), b)))
        else:
            operands.append(("bias", TensorV((8,), b)))
        with dtype_match.run(None):
            said = dtype_match.mismatch(operands, norm)
        assert (said is not None) == raises, (op, a, b, said)


def test_nothing_is_compared_outside_a_target_run_or_of_a_dtype_not_known():
    mixed = [("input", TensorV((2, 8), "float32")), ("weight", TensorV((8, 8), "float16"))]
    assert dtype_match.mismatch(mixed) is None  # no target run
    with dtype_match.run(None):
        assert dtype_match.mismatch(mixed) is not None
        # an input given no dtype is of the run's default float
        assert dtype_match.mismatch([("input", TensorV((2, 8))), mixed[1]]) is not None
        unknown = [("input", TensorV((2, 8), "?")), mixed[1]]
        assert dtype_match.mismatch(unknown) is None
        ints = [("input", TensorV((2, 8), "int64")), mixed[1]]
        assert dtype_match.mismatch(ints) is None  # integer operands are not judged here
    with dtype_match.run("float16"):  # --dtype float16: the input given none is half
        assert dtype_match.mismatch([("input", TensorV((2, 8))), mixed[1]]) is None


def test_the_clauses_name_two_operands_that_are_parameters():
    ok, errors = parse_stub_text("F.op(input, weight)  same_dtype='input weight'\n")
    assert not errors and ok[0].same_dtype == ("input", "weight")
    ok, errors = parse_stub_text("M.forward(self, input)  norm_dtype='input self.weight'\n")
    assert not errors and ok[0].norm_dtype == ("input", "self.weight")
    for bad in ("same_dtype='input'", "same_dtype='input other'"):
        _, errors = parse_stub_text(f"F.op(input, weight)  {bad}\n")
        assert errors, bad


FUNCTIONAL = textwrap.dedent(
    """
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Linear(nn.Module):
        def __init__(self, d=8):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(d, d, dtype=torch.float16))

        def forward(self, x):
            return F.linear(x, self.w)


    class Matmul(nn.Module):
        def __init__(self, d=8):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(d, d, dtype=torch.float64))

        def forward(self, x):
            return x @ self.w


    class Conv(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv1d(8, 4, 3).bfloat16()

        def forward(self, x):
            return self.c(x)


    class Promotes(nn.Module):  # elementwise ops promote: torch runs it
        def __init__(self, d=8):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(d, dtype=torch.float16))

        def forward(self, x):
            return x * self.w
    """
)


@pytest.mark.parametrize(
    ("name", "raises"), [("Linear", 1), ("Matmul", 1), ("Conv", 1), ("Promotes", 0)]
)
def test_a_target_reports_what_torch_refuses(tmp_path, name, raises):
    torch = pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(FUNCTIONAL, "fn.py", "exec"), ns)  # noqa: S102 - the test's own module
    try:
        ns[name]()(torch.randn(2, 8, 5) if name == "Conv" else torch.randn(2, 8))
        ran = True
    except RuntimeError:
        ran = False
    assert ran != bool(raises)
    p = tmp_path / "fn.py"
    p.write_text(FUNCTIONAL)
    shape = "x=2,8,5" if name == "Conv" else "x=2,8"
    args = ["cost", f"{p}::{name}", "--input", shape, "--no-cache", "--format", "json"]
    r = CliRunner().invoke(main, args)
    t = json.loads(r.output)["target"]
    assert r.exit_code == raises
    assert [d["code"] for d in t["diagnostics"]] == ["SHP322"] * raises
    # check (no target) compares nothing: which dtype x has there is not known
    r = CliRunner().invoke(main, ["check", str(p), "--no-cache", "--select", "ALL"])
    assert "SHP322" not in r.output


def test_check_reports_it_for_a_configured_target(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shapelint.targets]\n"fn.py::Linear" = { input = { x = "2,8" } }\n'
    )
    (tmp_path / "fn.py").write_text(FUNCTIONAL)
    r = CliRunner().invoke(main, ["check", str(tmp_path), "--format", "json", "--no-cache"])
    assert r.exit_code == 1, r.output
    (f,) = json.loads(r.output)
    line = next(i for i, s in enumerate(FUNCTIONAL.splitlines(), 1) if "F.linear(x" in s)
    assert (f["line"], f["code"], f["severity"]) == (line, "SHP322", "error")
    assert f["message"].endswith(f"(via Linear.forward:{line})")
