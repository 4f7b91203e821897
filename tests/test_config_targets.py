"""Entry points in config (issue 25): `[tool.shapelint.targets]` makes `check` (and so
the flake8 plugin, the language server, the baseline, SARIF) run each configured
target of the files it checks and report every error on its path as an ordinary
finding at the line where it happens, with the call path that led there.

The model's bug shows only at real sizes: Block's `down` is Linear(dim, dim), fed the
output of Linear(dim, hidden), and nothing in the file says hidden is not dim (two
independent names). Torch judges it: Net(32, 64) raises, Net(32, 32) runs."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from shapelint.cli import main

MODEL = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self, dim, hidden):
            super().__init__(); self.wide = hidden != dim  # compared: no SHP318 in plain mode
            self.up = nn.Linear(dim, hidden)
            self.down = nn.Linear(dim, dim)

        def forward(self, x):
            h = self.up(x)
            return self.down(h)


    class Net(nn.Module):
        def __init__(self, dim=32, hidden=32):
            super().__init__()
            self.block = Block(dim, hidden)

        def forward(self, x):
            return self.block(x)
    """
)
BUG = 13  # `return self.down(h)`
CALL = 22  # `return self.block(x)`
ENTRY = '"model.py::Net" = { init = { dim = 32, hidden = 64 }, input = { x = "2,8,32" } }'
PYPROJECT = f"[tool.shapelint.targets]\n{ENTRY}\n"


def _torch_raises(dim: int, hidden: int) -> bool:
    torch = pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(MODEL, "model.py", "exec"), ns)  # noqa: S102 - the test's own module
    try:
        ns["Net"](dim, hidden)(torch.randn(2, 8, dim))
    except RuntimeError:
        return True
    return False


def _project(tmp_path: Path, model: str = MODEL, pyproject: str = PYPROJECT) -> Path:
    (tmp_path / "pyproject.toml").write_text(pyproject)
    (tmp_path / "model.py").write_text(model)
    return tmp_path


def _check(d: Path, *args: str):
    r = CliRunner().invoke(main, ["check", str(d), "--format", "json", *args])
    return r, (json.loads(r.output) if r.exit_code in (0, 1) else None)


def test_the_bug_needs_real_sizes():
    assert MODEL.splitlines()[BUG - 1].strip() == "return self.down(h)"
    assert MODEL.splitlines()[CALL - 1].strip() == "return self.block(x)"
    assert _torch_raises(32, 64) and not _torch_raises(32, 32)


def test_check_reports_a_targets_error_at_its_line(tmp_path):
    d = _project(tmp_path)
    (d / "plain").mkdir()
    (d / "plain" / "model.py").write_text(MODEL)
    r, plain = _check(d / "plain", "--no-cache")
    assert r.exit_code == 0 and plain == []  # plain mode cannot tell
    r, found = _check(d, "--no-cache")
    assert r.exit_code == 1, r.output
    (f,) = found
    assert (f["path"], f["line"], f["code"], f["severity"]) == (
        str(d / "model.py"),
        BUG,
        "SHP307",
        "error",
    )
    assert f["message"].endswith(f"(via Net.forward:{CALL} → Block.forward:{BUG})")
    assert "64" in f["message"]


def test_a_benign_entry_finds_nothing(tmp_path):
    d = _project(tmp_path, pyproject=PYPROJECT.replace("hidden = 64", "hidden = 32"))
    r, found = _check(d, "--no-cache")
    assert r.exit_code == 0 and found == []


@pytest.mark.parametrize(
    "comment, silenced",
    [
        ("  # noqa", True),
        ("  # noqa: SHP307", True),
        ("  # noqa: SHP3", True),
        ("  # noqa: SHP308", False),
    ],
)
def test_noqa_applies(tmp_path, comment, silenced):
    lines = MODEL.splitlines()
    lines[BUG - 1] += comment
    d = _project(tmp_path, "\n".join(lines) + "\n")
    r, found = _check(d, "--no-cache")
    assert (r.exit_code, len(found)) == ((0, 0) if silenced else (1, 1))


def test_select_ignore_and_per_file_ignores_apply(tmp_path):
    d = _project(tmp_path)
    assert _check(d, "--no-cache", "--ignore", "SHP307")[1] == []
    assert _check(d, "--no-cache", "--select", "SHP2")[1] == []
    ignored = PYPROJECT.replace(
        "[tool.shapelint.targets]",
        '[tool.shapelint]\nper-file-ignores = { "model.py" = ["SHP3"] }\n\n[tool.shapelint.targets]',
    )
    (d / "pyproject.toml").write_text(ignored)
    assert _check(d, "--no-cache")[1] == []


def test_baseline_records_and_then_hides_it(tmp_path):
    d = _project(tmp_path)
    base = tmp_path / "baseline.json"
    r = CliRunner().invoke(main, ["check", str(d), "--no-cache", "--write-baseline", str(base)])
    assert r.exit_code == 0 and "Wrote 1 finding" in r.output
    r, found = _check(d, "--no-cache", "--baseline", str(base))
    assert r.exit_code == 0 and found == []


def test_sarif_and_text_carry_it(tmp_path):
    d = _project(tmp_path)
    r = CliRunner().invoke(main, ["check", str(d), "--no-cache", "--format", "sarif"])
    (res,) = json.loads(r.output)["runs"][0]["results"]
    assert res["ruleId"] == "SHP307"
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == BUG
    r = CliRunner().invoke(main, ["check", str(d), "--no-cache"])
    assert f"model.py:{BUG}:" in r.output and "via Net.forward" in r.output


def test_the_cache_never_serves_a_target_file(tmp_path):
    d = _project(tmp_path)
    (d / "other.py").write_text("import torch\n")  # cached as usual
    for _ in range(2):  # cold, then warm
        r, found = _check(d)
        assert r.exit_code == 1 and [f["line"] for f in found] == [BUG]
    assert list((d / ".shapelint_cache").glob("results-*"))
    # The entry changes, the file does not: the warm run sees the new entry.
    (d / "pyproject.toml").write_text(PYPROJECT.replace("hidden = 64", "hidden = 32"))
    assert _check(d)[1] == []


# A package: the target in pkg/model.py, the bug in pkg/layers.py.
LAYERS = MODEL[: MODEL.index("class Net")].rstrip() + "\n"
PKG_MODEL = (
    "from torch import nn\n\nfrom .layers import Block\n\n\n" + MODEL[MODEL.index("class Net") :]
)


def _package(tmp_path: Path, layers: str = LAYERS) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "layers.py").write_text(layers)
    (tmp_path / "pkg" / "model.py").write_text(PKG_MODEL)
    entry = ENTRY.replace('"model.py::Net"', '"pkg/model.py::Net"')
    (tmp_path / "pyproject.toml").write_text(f"[tool.shapelint.targets]\n{entry}\n")
    return tmp_path


def test_an_error_in_another_file_is_reported_there(tmp_path):
    d = _package(tmp_path)
    r, found = _check(d, "--no-cache")
    (f,) = found
    assert (f["path"], f["line"], f["code"]) == (str(d / "pkg" / "layers.py"), BUG, "SHP307")
    assert f["message"].endswith(f"(via Net.forward:12 → Block.forward:{BUG})")
    # checking the target's file alone still runs it (and reports where it happens)
    r, alone = _check(d / "pkg" / "model.py", "--no-cache")
    assert [(f["path"], f["line"]) for f in alone] == [(str(d / "pkg" / "layers.py"), BUG)]
    # a file that is not a target's runs nothing
    assert _check(d / "pkg" / "layers.py", "--no-cache")[1] == []


def test_noqa_in_the_other_file_applies(tmp_path):
    lines = LAYERS.splitlines()
    lines[BUG - 1] += "  # noqa: SHP307"
    d = _package(tmp_path, "\n".join(lines) + "\n")
    r, found = _check(d, "--no-cache")
    assert r.exit_code == 0 and found == []


# A bug plain mode sees too (literal sizes): one finding, not two.
LITERAL = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.Linear(32, 128)
            self.down = nn.Linear(64, 64)

        def forward(self, x):
            return self.down(self.up(x))
    """
)


def test_a_finding_plain_mode_has_is_said_once(tmp_path):
    entry = '[tool.shapelint.targets]\n"model.py::Net" = { input = { x = "2,32" } }\n'
    d = _project(tmp_path, LITERAL, entry)
    r, found = _check(d, "--no-cache")
    assert [(f["line"], f["code"]) for f in found] == [(12, "SHP307")]
    assert "via" not in found[0]["message"]  # the plain finding is kept


BAD_ENTRIES = [
    ('"nofile.py::Net" = {}', "no such file"),
    ('"model.py" = {}', "PATH::QUALNAME"),
    ('"model.py::Net" = { init = { dim = [1] } }', "init dim"),
    ('"model.py::Net" = { inputs = { x = "2,8" } }', "unknown key(s) inputs"),
    ('"model.py::Net" = { input = { x = "2,x-1" } }', "a dimension is an int or a name"),
    ('"model.py::Net" = { init = { dim = "1 +" } }', "not a Python value"),
    ('"model.py::Nett" = {}', "no class or function 'Nett'"),
    ('"model.py::Net" = { init = { width = 3 } }', "takes no parameter 'width'"),
    ('"model.py::Net" = { init = { dim = "Block(1, 2, 3)" } }', "Block"),
]


@pytest.mark.parametrize("entry, why", BAD_ENTRIES)
def test_a_bad_entry_is_a_configuration_error(tmp_path, entry, why):
    d = _project(tmp_path, pyproject=f"[tool.shapelint]\n\n[tool.shapelint.targets]\n{entry}\n")
    r = CliRunner().invoke(main, ["check", str(d), "--no-cache"])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert f"{d / 'pyproject.toml'}:4: [tool.shapelint.targets]" in r.output
    assert why in r.output and "Traceback" not in r.output


def test_flake8_sees_it(tmp_path):
    pytest.importorskip("flake8")
    from tests.test_flake8_plugin import flake8, write_flake8_config

    d = _project(tmp_path)
    write_flake8_config(d)
    got = flake8(d, "model.py")
    assert [(g[1], g[3]) for g in got] == [(BUG, "SHP307")]
    assert "via Net.forward" in got[0][4]


def test_the_language_server_sees_it(tmp_path):
    from shapelint import lsp

    d = _project(tmp_path)
    path = str(d / "model.py")
    diags, _ = lsp.analyze_document(path, MODEL)
    assert [(x.line, x.code) for x in diags] == [(BUG, "SHP307")]
    # the buffer, not the file on disk: fixed in the editor, gone
    fixed = MODEL.replace("nn.Linear(dim, dim)", "nn.Linear(hidden, dim)")
    assert lsp.analyze_document(path, fixed)[0] == []
    # a target's finding in another file is not this document's
    (tmp_path / "p").mkdir()
    p = _package(tmp_path / "p")
    model = p / "pkg" / "model.py"
    assert lsp.analyze_document(str(model), model.read_text())[0] == []


def test_cost_honours_noqa(tmp_path):
    """`run` reads the same static report (cost/target.target_report)."""
    lines = MODEL.splitlines()
    args = ["--init", "dim=32", "--init", "hidden=64", "--input", "x=2,8,32", "--no-cache"]
    d = _project(tmp_path, pyproject="")
    r = CliRunner().invoke(main, ["cost", f"{d / 'model.py'}::Net", *args, "--format", "json"])
    assert r.exit_code == 1 and json.loads(r.output)["target"]["diagnostics"]
    lines[BUG - 1] += "  # noqa: SHP307"
    (d / "model.py").write_text("\n".join(lines) + "\n")
    r = CliRunner().invoke(main, ["cost", f"{d / 'model.py'}::Net", *args, "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.output)["target"]["diagnostics"] == []


def test_each_target_run_finds_its_errors(tmp_path):
    """A second run in one process (check's, then cost's; an editor's at each change)
    finds the error a memoised call of the first run had noted."""
    from shapelint.analysis.driver import AnalysisOptions, analyze_target

    d = _package(tmp_path)
    path = str(d / "pkg" / "model.py")
    text = (d / "pkg" / "model.py").read_text()
    for _ in range(2):
        res = analyze_target(
            path, text, "Net", {"hidden": "64"}, {"x": "2,8,32"}, AnalysisOptions()
        )
        assert [(f.line, f.code) for f in res.errors] == [(BUG, "SHP307")]


def test_static_mode_still_imports_nothing_heavy(tmp_path):
    d = _project(tmp_path)
    code = (
        "import sys\nfrom shapelint.cli import main\ntry:\n"
        f"    main(['check', {str(d)!r}, '--no-cache'])\nexcept SystemExit as e:\n"
        "    print('exit', e.code)\n"
        "print(sorted(m for m in ('torch','einops','numpy','sympy','jaxtyping','libcst') "
        "if m in sys.modules))"
    )
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True
    ).stdout
    assert "via Net.forward" in out and "exit 1" in out
    assert out.strip().endswith("[]")


def test_a_target_past_its_budget_says_so(tmp_path, monkeypatch):
    """A target runs under its own budget, after its file's analysis: cut short, it is
    an SHP003 at its definition, never silence."""

    from shapelint.analysis import target
    from shapelint.analysis.driver import AnalysisOptions, analyze_text
    from shapelint.config import load

    def endless(*args, **kwargs):
        while True:  # work, as a runaway analysis does: the budget counts CPU time
            sum(range(1000))

    monkeypatch.setattr(target, "evaluate_target", endless)
    d = _project(tmp_path)
    cfg = load(d)
    opts = AnalysisOptions.from_config(cfg, targets=tuple(cfg.targets), time_budget=2)
    analyze_text(str(d / "model.py"), MODEL, AnalysisOptions())  # imports: not in the budget
    res = analyze_text(str(d / "model.py"), MODEL, opts)
    (diag,) = res.diagnostics
    forward = MODEL.splitlines().index("    def forward(self, x):", CALL - 3) + 1
    assert (diag.code, diag.line) == ("SHP003", forward)
    assert "target 'model.py::Net' stopped after 2 s" in diag.message
    assert "not checked" in diag.message


def test_faces_that_cannot_exit_2_warn_of_a_bad_entry(tmp_path, capsys):
    """The flake8 plugin and the language server say it on stderr, once, and go on."""
    from shapelint import lsp
    from shapelint.flake8_plugin import ShapelintChecker

    d = _project(tmp_path, pyproject='[tool.shapelint.targets]\n"model.py::Nett" = {}\n')
    path = str(d / "model.py")
    assert list(ShapelintChecker(None, MODEL.splitlines(keepends=True), path).run()) == []
    assert lsp.analyze_document(path, MODEL)[0] == []
    err = capsys.readouterr().err
    assert err.count("no class or function 'Nett'") == 1
    assert f"{d / 'pyproject.toml'}:2: [tool.shapelint.targets]" in err


def test_a_finding_in_another_file_plain_mode_has_is_said_once(tmp_path):
    """The target in pkg/model.py meets the bug plain mode reports in pkg/layers.py:
    checking both files, it is said once (the plain finding); checking the target's
    file alone, the target's finding is the one."""
    literal = LITERAL.replace("class Net", "class Block")
    d = _package(tmp_path, literal)
    model = PKG_MODEL.replace("Block(dim, hidden)", "Block()")
    (d / "pkg" / "model.py").write_text(model)
    (d / "pyproject.toml").write_text(
        '[tool.shapelint.targets]\n"pkg/model.py::Net" = { input = { x = "2,32" } }\n'
    )
    layers = str(d / "pkg" / "layers.py")
    r, found = _check(d, "--no-cache")
    assert [(f["path"], f["line"], f["code"]) for f in found] == [(layers, 12, "SHP307")]
    assert "via" not in found[0]["message"]
    r, alone = _check(d / "pkg" / "model.py", "--no-cache")
    assert [(f["path"], f["line"]) for f in alone] == [(layers, 12)]
    assert "via Net.forward:12 → Block.forward:12" in alone[0]["message"]


def test_a_worker_pool_carries_findings_in_other_files_and_problems(tmp_path, monkeypatch):
    from shapelint.analysis import driver
    from shapelint.config import load

    monkeypatch.setattr(driver, "POOL_MIN_FILES", 1)
    monkeypatch.setattr(driver, "POOL_MIN_BYTES", 0)
    d = _package(tmp_path)
    cfg = load(d)
    opts = driver.AnalysisOptions.from_config(cfg, costs=False, targets=tuple(cfg.targets))
    files = sorted((d / "pkg").glob("*.py"))
    results = driver.analyze_files(files, opts, jobs=2)
    found = [(x.path, x.line, x.code) for r in results for x in r.diagnostics]
    assert found == [(str(d / "pkg" / "layers.py"), BUG, "SHP307")]
    bad = [replace(t, qualname="Nett") for t in opts.targets]
    results = driver.analyze_files(files, replace(opts, targets=tuple(bad)), jobs=2)
    (problem,) = [p for r in results for p in r.problems]
    assert "no class or function 'Nett'" in problem


def test_the_keys_line_is_the_one_in_the_targets_table():
    from shapelint.config_targets import key_line

    raw = '[tool.other]\nx = "model.py::Net"\n\n[tool.shapelint.targets]\n"model.py::Net" = {}\n'
    assert key_line(raw, "model.py::Net") == 5
    assert key_line(raw, "other.py::Net") == 4  # not spelt so: the table's header
