"""Defaults an existing codebase survives: errors fail a run, warnings only with
--fail-on warning, info never; --statistics; a baseline that knows old findings
across line shifts; GitHub annotations with errors first."""

from __future__ import annotations

import json

from click.testing import CliRunner

from shapelint.cli import main
from tests.helpers import corpus_package

WARNS = "import torch\ndef f(x):\n    return x.transpose(1, 2)\n"
ERROR = 'from einops import rearrange\ndef g(t):\n    return rearrange(t, "b c")\n'
INFO = "import torch\nreveal_shape(torch.zeros(2, 3))\n"


def run(args, cwd=None):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def test_warnings_alone_do_not_fail_a_run(tmp_path):
    (tmp_path / "a.py").write_text(WARNS)
    r = run(["check", str(tmp_path), "--no-cache"])
    assert r.exit_code == 0 and "SHP401" in r.output
    assert run(["check", str(tmp_path), "--no-cache", "--fail-on", "warning"]).exit_code == 1


def test_fail_on_from_the_config(tmp_path):
    (tmp_path / "a.py").write_text(WARNS)
    (tmp_path / "pyproject.toml").write_text('[tool.shapelint]\nfail-on = "warning"\n')
    assert run(["check", str(tmp_path), "--no-cache"]).exit_code == 1
    (tmp_path / "pyproject.toml").write_text('[tool.shapelint]\nfail-on = "warnings"\n')
    r = run(["check", str(tmp_path), "--no-cache"])
    assert r.exit_code == 2 and "fail-on" in r.output


def test_errors_fail_and_info_never_does(tmp_path):
    (tmp_path / "a.py").write_text(ERROR)
    assert run(["check", str(tmp_path), "--no-cache"]).exit_code == 1
    (tmp_path / "a.py").write_text(INFO)
    r = run(["check", str(tmp_path), "--no-cache", "--fail-on", "warning"])
    assert r.exit_code == 0 and "revealed shape" in r.output


def test_statistics_counts_by_code(tmp_path):
    (tmp_path / "a.py").write_text(WARNS + "def h(y):\n    return y.transpose(1, 2)\n")
    (tmp_path / "b.py").write_text(ERROR)
    r = run(["check", str(tmp_path), "--no-cache", "--statistics"])
    rows = [line.split() for line in r.output.splitlines()]
    assert [row[:3] for row in rows] == [["2", "SHP401", "warning"], ["1", "SHP101", "error"]]
    assert r.exit_code == 1


def test_baseline_reports_only_new_findings_across_line_shifts(tmp_path):
    src = tmp_path / "a.py"
    src.write_text(WARNS)
    base = tmp_path / "baseline.json"
    r = run(["check", str(tmp_path), "--no-cache", "--write-baseline", str(base)])
    assert r.exit_code == 0 and json.loads(base.read_text())["findings"]
    src.write_text("# a new first line\n\n" + WARNS)  # the old finding moved down two lines
    r = run(["check", str(tmp_path), "--no-cache", "--baseline", str(base), "--fail-on", "warning"])
    assert r.exit_code == 0 and "All checks passed" in r.output
    src.write_text(WARNS + "def h(y):\n    return y.permute(0, 2, 1)\n")
    r = run(["check", str(tmp_path), "--no-cache", "--baseline", str(base), "--fail-on", "warning"])
    assert r.exit_code == 1 and "SHP402" in r.output and "SHP401" not in r.output
    (tmp_path / "bad.json").write_text("{}")
    r = run(["check", str(tmp_path), "--no-cache", "--baseline", str(tmp_path / "bad.json")])
    assert r.exit_code == 2 and "not a shapelint baseline" in r.output


def test_github_output_puts_errors_first(tmp_path):
    (tmp_path / "a.py").write_text(WARNS)
    (tmp_path / "b.py").write_text(ERROR)
    r = run(["check", str(tmp_path), "--no-cache", "--format", "github"])
    kinds = [line.split(" ", 1)[0] for line in r.output.splitlines()]
    assert kinds[0].startswith("::error") and kinds[-1].startswith("::warning")


def test_released_packages_warnings_pass_errors_fail():
    performer = corpus_package("performer-pytorch")  # 13 naming warnings, no error
    r = run(["check", str(performer), "--no-cache"])
    assert r.exit_code == 0 and "warning" in r.output
    assert run(["check", str(performer), "--no-cache", "--fail-on", "warning"]).exit_code == 1
    # 7 real bugs (SHP101, SHP212), each on a branch the check cannot decide (after
    # `if self.use_flash: return ...`, under `if video_or_image.ndim == 4:`): errors all
    # the same, since the call's own text decides them (Rule.any_path: the line raises
    # wherever it runs), with no condition in their message
    vit = corpus_package("vit-pytorch")
    r = run(["check", str(vit), "--no-cache", "--select", "SHP1,SHP2,SHP3"])
    assert r.exit_code == 1 and "SHP101" in r.output and "SHP212" in r.output
    assert "it raises only if" not in r.output


# ---------------------------------------------------------------------- review faces

ANNOTATED = (
    "from jaxtyping import Float\nfrom torch import Tensor\n"
    'def f(x: Float[Tensor, "b n d"], w: Float[Tensor, "d k"]):\n    return x @ w\n'
)


def test_hardware_without_sizes_is_a_usage_error_naming_them(tmp_path):
    (tmp_path / "m.py").write_text(ANNOTATED)
    r = run(["cost", str(tmp_path), "--no-cache", "--hardware", "H100"])
    assert r.exit_code == 2
    assert "--hardware needs the sizes of b, d, k, n" in r.output and "--dim" in r.output


def test_roofline_header_names_its_dtype_and_where_it_came_from(tmp_path):
    (tmp_path / "m.py").write_text(ANNOTATED)
    args = ["cost", str(tmp_path), "--no-cache", "--hardware", "H100", "--dim", "b=2,n=3,d=4,k=5"]
    r = run(args)
    assert r.exit_code == 0 and r.output.splitlines()[0].startswith("Roofline on H100")
    assert "dtype float32 (from the default)" in r.output
    r = run([*args, "--dtype", "bf16"])
    assert "dtype bfloat16 (from --dtype)" in r.output and "bf16 peaks" in r.output
    (tmp_path / "pyproject.toml").write_text('[tool.shapelint]\ndtype = "float16"\n')
    r = run([*args, "--format", "markdown"])
    assert "dtype float16 (from [tool.shapelint] dtype)" in r.output


def test_cost_plot_without_matplotlib_is_one_line_exit_2(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    (tmp_path / "m.py").write_text(ANNOTATED)
    args = ["cost", str(tmp_path), "--no-cache", "--hardware", "H100", "--dim", "b=2,n=3,d=4,k=5"]
    r = CliRunner().invoke(main, [*args, "--plot", str(tmp_path / "r.png")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    (line,) = [x for x in r.output.splitlines() if "error" in x]
    assert "pip install matplotlib" in line
