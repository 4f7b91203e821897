"""Every face analyses a file through the driver's one door, so a project stub
named in [tool.shapelint] stubs is seen by all of them: check, check --diff and
--fix, cost, run, the flake8 plugin and the LSP. Without the stub nothing is known
of `mylib.mix`: no SHP309, no FLOPs, no rank for the fix to rewrite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from shapelint.cli import main

STUB = 'mylib.mix(x, w)  "x: b d, w: d k -> b k"  flops=2*b*d*k\n'

MODULE = """import torch
from jaxtyping import Float
from torch import Tensor

import mylib


def f(x: Float[Tensor, "b d"], w: Float[Tensor, "d k"]) -> Float[Tensor, "b k"]:
    return mylib.mix(x, w)


def g(x: Float[Tensor, "b d"], w: Float[Tensor, "d k"]):
    return mylib.mix(x, w).permute(1, 0)


def bad():
    return mylib.mix(torch.zeros(4, 8), torch.zeros(9, 3))
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "mylib.stub").write_text(STUB)
    (tmp_path / "pyproject.toml").write_text('[tool.shapelint]\nstubs = ["mylib.stub"]\n')
    (tmp_path / "mylib.py").write_text("def mix(x, w):\n    return x @ w\n")
    (tmp_path / "m.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    from shapelint.analysis.driver import configure_stubs

    configure_stubs(())  # the next test starts from the built-in stubs


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_check_sees_the_stub(project):
    r = invoke("check", "--no-cache", "--format", "json", "m.py")
    codes = {(d["code"], d["line"]) for d in json.loads(r.output)}
    assert ("SHP309", 17) in codes, r.output
    assert ("SHP402", 13) in codes, r.output  # the rank of mix's output is known


def test_check_diff_and_fix_see_the_stub(project):
    r = invoke("check", "--no-cache", "--diff", "m.py")
    assert r.exit_code == 1, r.output
    assert '+    return rearrange(mylib.mix(x, w), "b k -> k b")' in r.output
    assert "Would fix 1 finding in 1 file." in r.output
    r = invoke("check", "--no-cache", "--fix", "--exit-zero", "m.py")
    assert "Fixed 1 finding in 1 file." in r.output, r.output
    assert 'rearrange(mylib.mix(x, w), "b k -> k b")' in (project / "m.py").read_text()


def test_cost_sees_the_stub(project):
    r = invoke("cost", "--no-cache", "--format", "json", "--dim", "b=2,d=3,k=4", "m.py")
    report = json.loads(r.output)
    f = next(x for x in report["functions"] if x["name"] == "f")
    assert f["flops_value"] == 48 and f["complete"], f


def test_run_sees_the_stub(project):
    pytest.importorskip("torch")
    pytest.importorskip("jaxtyping")
    r = invoke("run", "m.py::f", "--dim", "b=2,d=3,k=4", "--format", "json")
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output[r.output.index("{") :])
    assert rep["flops_static"] == rep["flops_measured"] == 48, rep


def test_flake8_plugin_sees_the_stub(project):
    from shapelint.flake8_plugin import ShapelintChecker

    lines = MODULE.splitlines(keepends=True)
    got = [g[2].split()[0] for g in ShapelintChecker(None, lines, str(project / "m.py")).run()]
    assert "SHP309" in got, got


def test_lsp_sees_the_stub(project):
    from shapelint.lsp import analyze_document

    diags, calls = analyze_document(str(project / "m.py"), MODULE)
    assert "SHP309" in {d.code for d in diags}
    mix = [c for c in calls if c["op"] == "mylib.mix" and c["function"] == "f"]
    assert mix and mix[0]["flops"] is not None and mix[0]["flops"] != "0", calls


def test_options_object_is_frozen_and_carries_no_cache():
    from dataclasses import FrozenInstanceError, fields

    from shapelint.analysis.driver import AnalysisOptions

    opts = AnalysisOptions(stubs=[Path("a.stub")], naming={"b": "batch"}, dtype="float16")
    assert opts.stubs == ("a.stub",)
    with pytest.raises(FrozenInstanceError):
        opts.dtype = "float32"  # type: ignore[misc]
    assert "cache" not in {f.name for f in fields(AnalysisOptions)}
    with pytest.raises(TypeError):
        AnalysisOptions.coerce({"_cache": object()})
    # dims evaluate figures; they do not change what the analysis computes
    assert (
        opts.cache_key()
        == AnalysisOptions(
            stubs=("a.stub",), naming={"b": "batch"}, dtype="float16", dims={"b": 2}
        ).cache_key()
    )


def test_no_face_builds_an_analyzer_itself():
    root = Path(__file__).resolve().parent.parent / "shapelint"
    builders = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "ModuleAnalyzer(" in p.read_text() and p.name not in ("interpreter.py", "driver.py")
    )
    assert builders == [], builders
