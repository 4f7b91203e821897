"""A handful of the mutation harness's mutants (benchmarks/mutations.py, issue 25),
fixed in advance, on vit-pytorch's ViT as released (tests/data/mutants/vit.py).

Each mutant is made by the harness's own operators (so the operators are tested too),
judged by torch at the subject's sizes (a bug raises; a benign rewrite runs to the
original's output shape), then checked three ways: `check`, `check --dim` and the
target `cost FILE::ViT --init ... --input ...`. A bug is caught when the mode reports an
error the original does not have; a benign rewrite must get none in any mode. What is
not caught yet is an xfail (strict, so that catching it makes the test fail until the
mark goes)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from shapelint.cli import main
from tests.helpers import diagnose

ROOT = Path(__file__).parents[1]
SOURCE = (Path(__file__).parent / "data" / "mutants" / "vit.py").read_text()
INIT = {
    "image_size": 32,
    "patch_size": 8,
    "num_classes": 10,
    "dim": 48,
    "depth": 1,
    "heads": 4,
    "mlp_dim": 96,
    "dim_head": 16,
}
IMG = (2, 3, 32, 32)
MODES = ("check", "check_dims", "target")


def _ops():
    spec = importlib.util.spec_from_file_location(
        "mutation_ops", ROOT / "benchmarks" / "mutation_ops.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("mutation_ops", module)
    spec.loader.exec_module(module)
    return module


# (id, operator, the line's text, old, new): each must be one the operators make.
BUGS = [
    (
        "ff-norm-width",
        "norm_size",
        "self.net = nn.Sequential(\nnn.LayerNorm(dim),",
        "dim",
        "hidden_dim",
    ),
    ("out-proj-in", "linear_in", "nn.Linear(inner_dim, dim),", "inner_dim", "dim"),
    ("out-proj-out", "linear_out", "nn.Linear(inner_dim, dim),", "dim", "inner_dim"),
    ("qkv-chunk-count", "chunk_count", ".chunk(3, dim = -1)", "3", "2"),
    ("qkv-chunk-dim", "chunk_dim", ".chunk(3, dim = -1)", "-1", "-2"),
    ("no-k-transpose", "transpose_removed", "k.transpose(-1, -2)", "k.transpose(-1, -2)", "k"),
    (
        "merge-heads-drop",
        "pattern_drop",
        "'b h n d -> b n (h d)'",
        "'b h n d -> b n (h d)'",
        "'b h n d -> b n'",
    ),
    ("cls-cat-dim", "cat_dim", "torch.cat((cls_tokens, x), dim = 1)", "1", "2"),
    ("patch-linear-in", "linear_in", "nn.Linear(patch_dim, dim),", "patch_dim", "dim"),
]
BENIGN = [
    ("residual-swap", "add_swap", "x = attn(x) + x", "attn(x) + x", "x + attn(x)"),
    (
        "qkv-keywords",
        "keyword_args",
        "self.to_qkv = nn.Linear(",
        "nn.Linear(dim, inner_dim * 3, bias = False)",
        None,
    ),
    (
        "transpose-order",
        "transpose_order",
        "k.transpose(-1, -2)",
        "k.transpose(-1, -2)",
        "k.transpose(-2, -1)",
    ),
]
# (id, mode) the analysis catches today; every other bug and mode is an xfail.
CAUGHT = {
    ("merge-heads-drop", "check"),
    ("merge-heads-drop", "check_dims"),
    ("qkv-chunk-count", "check"),
    ("qkv-chunk-count", "check_dims"),
    ("out-proj-in", "check_dims"),
    ("out-proj-out", "check_dims"),
    ("cls-cat-dim", "check"),
    ("no-k-transpose", "check"),
    ("cls-cat-dim", "check_dims"),
    ("qkv-chunk-dim", "check"),
    ("qkv-chunk-dim", "check_dims"),
    ("patch-linear-in", "check_dims"),
    # SHP321: the two sizes the constructor takes separately that nothing ties
    ("out-proj-out", "check"),
    ("patch-linear-in", "check"),
    ("ff-norm-width", "check"),
    ("ff-norm-width", "check_dims"),
    # SHP321 where the class compares only a part of the constraint (dim_head == dim)
    ("out-proj-in", "check"),
    *((case[0], "target") for case in BUGS),
}
WHY = {
    "check": "plain check does not compare definite sizes yet (issue 25: constraints)",
    "check_dims": "check --dim does not compare definite sizes yet (issue 25: constraints)",
    "target": "a LayerNorm's normalized_shape is not compared with its input in a target yet",
}


def _mutant(kind: str, line_text: str, old: str, new: str | None):
    """The one mutant of kind at the line line_text names (lines joined by newlines:
    the last of consecutive lines that hold them); an AssertionError, never an
    exception a torch test would take for the bug's, where none or several match."""
    lines = SOURCE.splitlines()
    want = line_text.split("\n")
    at = [
        i + len(want)
        for i in range(len(lines) - len(want) + 1)
        if all(w in lines[i + k] for k, w in enumerate(want))
    ]
    assert len(at) == 1, (line_text, at)
    line = at[0]
    found = [
        m
        for m in _ops().mutants(SOURCE, set(range(1, len(lines) + 1)))
        if m.kind == kind and m.line == line and m.old == old and (new is None or m.new == new)
    ]
    assert len(found) == 1, (kind, line_text, [(m.old, m.new) for m in found])
    return found[0]


def _torch(source: str):
    torch = pytest.importorskip("torch")
    pytest.importorskip("einops")
    ns: dict = {"__name__": "vit_mutant"}
    exec(compile(source, "vit_mutant.py", "exec"), ns)  # noqa: S102 - the test's own fixture
    torch.manual_seed(0)
    model = ns["ViT"](**INIT)
    with torch.no_grad():
        return tuple(model(torch.randn(*IMG)).shape)


def _errors(source: str, mode: str, tmp_path: Path) -> set[tuple]:
    if mode == "check":
        return {(d.line, d.code, d.message) for d in diagnose(source) if d.severity == "error"}
    if mode == "check_dims":
        found = diagnose(source, check_dims=INIT)
        return {(d.line, d.code, d.message) for d in found if d.severity == "error"}
    path = tmp_path / "vit.py"
    path.write_text(source)
    args = [
        "cost",
        f"{path}::ViT",
        "--format",
        "json",
        "--no-cache",
        "--input",
        "img=" + ",".join(map(str, IMG)),
    ]
    for k, v in INIT.items():
        args += ["--init", f"{k}={v}"]
    r = CliRunner().invoke(main, args)
    out = json.loads(r.output[r.output.index("{") :])
    diags = out.get("diagnostics", out["target"].get("diagnostics", []))
    return {(d["line"], d["code"], d["message"]) for d in diags if d["severity"] == "error"}


@pytest.fixture(scope="module")
def original_errors(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("original")
    return {mode: _errors(SOURCE, mode, tmp) for mode in MODES}


def _bug_params():
    for case in BUGS:
        for mode in MODES:
            marks = (
                []
                if (case[0], mode) in CAUGHT
                else [pytest.mark.xfail(strict=True, reason=WHY[mode])]
            )
            yield pytest.param(case, mode, id=f"{case[0]}-{mode}", marks=marks)


@pytest.mark.parametrize("case", BUGS, ids=[c[0] for c in BUGS])
def test_each_bug_raises_under_torch(case):
    _, kind, line_text, old, new = case
    # EinopsError is a RuntimeError; an unpacking of the wrong count a ValueError
    with pytest.raises((RuntimeError, ValueError, IndexError, TypeError)):
        _torch(_mutant(kind, line_text, old, new).apply(SOURCE))


@pytest.mark.parametrize(("case", "mode"), list(_bug_params()))
def test_a_bug_torch_rejects_is_an_error(case, mode, original_errors, tmp_path):
    _, kind, line_text, old, new = case
    mutated = _mutant(kind, line_text, old, new).apply(SOURCE)
    assert _errors(mutated, mode, tmp_path) - original_errors[mode]


@pytest.mark.parametrize("case", BENIGN, ids=[c[0] for c in BENIGN])
def test_a_benign_rewrite_is_no_error(case, original_errors, tmp_path):
    _, kind, line_text, old, new = case
    mutated = _mutant(kind, line_text, old, new).apply(SOURCE)
    assert _torch(mutated) == _torch(SOURCE) == (IMG[0], INIT["num_classes"])
    for mode in MODES:
        assert not (_errors(mutated, mode, tmp_path) - original_errors[mode]), mode
