"""The flake8 plugin, run through real flake8: the same diagnostics as `shapelint check`.

Without an installed shapelint (the shared development environment) flake8 loads the
plugin through `[flake8:local-plugins]` in a temporary setup.cfg; after `pip install -e
.[test]` (CI) the package's own `flake8.extension` entry point is used instead, and
the local one is left out so the plugin does not run twice.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from shapelint.flake8_plugin import ShapelintChecker
from tests.helpers import analyze

pytest.importorskip("flake8")

ROOT = Path(__file__).resolve().parent.parent
ENTRY = "shapelint.flake8_plugin:ShapelintChecker"

HEADER = "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n\n"

MODEL = HEADER + textwrap.dedent(
    """\
    def norm(x: Float[Tensor, "b d"]) -> Float[Tensor, "b d"]:
        return x


    def main(y: Float[Tensor, "b s d"], z: Float[Tensor, "b 8"]):
        s = "héllo wörld — ünïcode"; return norm(y)


    def f(x: Float[Tensor, "b 8"]) -> Float[Tensor, "b 8 1"]:
        return x


    def g(x: Float[Tensor, "b s d"]):
        reveal_shape(x)
        return norm(x)  # noqa: SHP305


    def h(x: Float[Tensor, "b s d"]):
    \tpass; return norm(
            x,
        )
    """
)

CLEAN = HEADER + 'def f(x: Float[Tensor, "b d"]) -> Float[Tensor, "b d"]:\n    return x\n'
UNRELATED = "import os\n\nprint(os.getcwd())\n"


def entry_point_installed() -> bool:
    return any(
        ep.name == "SHP" and ep.value == ENTRY
        for ep in metadata.entry_points(group="flake8.extension")
    )


def write_flake8_config(d: Path) -> None:
    lines = ["[flake8]", "max-line-length = 200"]
    if not entry_point_installed():
        lines += [
            "",
            "[flake8:local-plugins]",
            "extension =",
            f"    SHP = {ENTRY}",
            f"paths = {ROOT}",
        ]
    (d / "setup.cfg").write_text("\n".join(lines) + "\n")


def _env() -> dict[str, str]:
    # The checkout under test comes first, whether or not a copy is installed.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) (?P<msg>.*)$")


def flake8(cwd: Path, *args: str) -> list[tuple]:
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "SHP", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    assert proc.returncode in (0, 1), proc.stderr
    out = []
    for line in proc.stdout.splitlines():
        m = LINE.match(line)
        assert m, f"unexpected flake8 output line: {line!r}"
        out.append((m["path"], int(m["line"]), int(m["col"]), m["code"], m["msg"]))
    return sorted(out)


def cli(cwd: Path, *args: str) -> list[tuple]:
    proc = subprocess.run(
        [sys.executable, "-m", "shapelint", "check", "--format", "json", "--no-cache", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    assert proc.returncode in (0, 1), proc.stderr
    return sorted(
        (d["path"], d["line"], d["column"], d["code"], d["message"])
        for d in json.loads(proc.stdout)
    )


@pytest.fixture
def project(tmp_path):
    write_flake8_config(tmp_path)
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "unrelated.py").write_text(UNRELATED)
    (tmp_path / "crlf.py").write_bytes(MODEL.replace("\n", "\r\n").encode("utf-8"))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "deep.py").write_text(MODEL, encoding="utf-8")
    return tmp_path


FILES = ["model.py", "clean.py", "unrelated.py", "crlf.py", "pkg/deep.py"]


def test_flake8_reports_what_the_cli_reports(project):
    expected = cli(project, *FILES)
    assert {d[3] for d in expected} == {"SHP305", "SHP306", "SHP390"}, expected
    # On the non-ASCII line the column counts characters (46), not UTF-8 bytes (52).
    assert ("model.py", 11, 46, "SHP305") in {d[:4] for d in expected}
    assert flake8(project, *FILES) == expected


def test_noqa_is_flake8s_own(project):
    with_noqa = flake8(project, "model.py")
    assert not any(d[1] == 20 for d in with_noqa)  # line 20 carries a noqa comment for SHP305
    without = flake8(project, "--disable-noqa", "model.py")
    assert [d for d in without if d not in with_noqa] == [
        (
            "model.py",
            20,
            17,
            "SHP305",
            "argument 'x' of norm() has shape [b, s, d] but is annotated [b, d]: rank 3 where 2 is expected",
        )
    ]


def test_flake8_select_and_ignore_apply(project):
    got = flake8(project, "--extend-ignore", "SHP306,SHP39", "model.py")
    assert {d[3] for d in got} == {"SHP305"}
    per_file = flake8(project, "--per-file-ignores", "pkg/*:SHP3", "model.py", "pkg/deep.py")
    assert {d[0] for d in per_file} == {"model.py"}


def test_tool_shapelint_config_applies(project):
    (project / "pyproject.toml").write_text(
        "[tool.shapelint]\n"
        'ignore = ["SHP390"]\n'
        '[tool.shapelint.per-file-ignores]\n"pkg/*" = ["SHP305"]\n'
    )
    expected = cli(project, *FILES)
    assert "SHP390" not in {d[3] for d in expected}
    assert not any(d[0] == "pkg/deep.py" and d[3] == "SHP305" for d in expected)
    assert any(d[0] == "pkg/deep.py" and d[3] == "SHP306" for d in expected)
    assert flake8(project, *FILES) == expected


def test_tool_shapelint_exclude_applies_to_directory_walks(project):
    (project / "pyproject.toml").write_text('[tool.shapelint]\nexclude = ["pkg"]\n')
    expected = cli(project, ".")
    assert expected and not any(d[0].startswith("pkg") for d in expected)
    assert flake8(project, ".") == [(f"./{d[0]}", *d[1:]) for d in expected]


def test_bad_tool_shapelint_config_warns_and_checks_with_defaults(project):
    (project / "pyproject.toml").write_text("[tool.shapelint]\nnot-a-key = 1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "SHP", "model.py"],
        cwd=project,
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "unknown key(s) in [tool.shapelint]: not-a-key" in proc.stderr
    assert "SHP305" in proc.stdout


# ---------------------------------------------------------------------- in process


def test_plugin_columns_are_zero_based_views_of_the_cli_ones():
    res = analyze(MODEL, path="m.py")
    got = list(ShapelintChecker(None, MODEL.splitlines(keepends=True), "m.py").run())
    want = [(d.line, d.column - 1, f"{d.code} {d.message}") for d in res.diagnostics]
    assert [g[:3] for g in got] == want
    assert all(g[3] is ShapelintChecker for g in got)


def test_plugin_is_cheap_on_files_with_nothing_to_check():
    code = textwrap.dedent(
        """\
        import sys
        import shapelint.flake8_plugin as p
        assert "shapelint.analysis.driver" not in sys.modules, "imported at load time"
        out = list(p.ShapelintChecker(None, ["import os\\n", "print(os.sep)\\n"], "a.py").run())
        assert out == [], out
        print(sorted(m for m in sys.modules if m.startswith("shapelint.")))
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    loaded = proc.stdout
    for heavy in (
        "shapelint.analysis.interpreter",
        "shapelint.config",
        "shapelint.rules'",
        "torch",
        "einops",
    ):
        assert heavy not in loaded, loaded


def test_internal_error_becomes_shp002(monkeypatch):
    from shapelint.analysis.interpreter import ModuleAnalyzer

    def boom(*a, **k):
        raise RuntimeError("kaput")

    monkeypatch.setattr(ModuleAnalyzer, "run", boom)
    got = list(ShapelintChecker(None, MODEL.splitlines(keepends=True), "m.py").run())
    assert [(g[0], g[1], g[2]) for g in got] == [
        (1, 0, "SHP002 internal error: RuntimeError: kaput")
    ]
