"""Configuration errors are usage errors: exit 2, the file and the key named, and
never a silent fallback (a broken pyproject, an unknown code, a wrong type)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from shapelint.cli import main

BAD = 'from einops import rearrange\ndef f(x):\n    return rearrange(x, "b c -> b d")\n'


def run(tmp_path, *args, pyproject: str | None = None):
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    (tmp_path / "m.py").write_text(BAD)
    r = CliRunner().invoke(main, ["check", "--no-cache", *args, str(tmp_path)])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r


def test_unparsable_pyproject_is_an_error_not_a_fallback(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.shapelint]\nignore = ["SHP2"]\n')
    sub = tmp_path / "pkg"
    sub.mkdir()
    (sub / "pyproject.toml").write_text("[tool.shapelint\nselect = [")
    r = run(sub)
    assert r.exit_code == 2
    assert str(sub / "pyproject.toml") in r.output and "TOML" in r.output


@pytest.mark.parametrize(
    "args, pyproject, needle",
    [
        (["--select", "SHP999"], None, "SHP999"),
        (["--select", "SHP2O1"], None, "did you mean 'SHP201'"),
        (["--ignore", "SHP20l"], None, "SHP20L"),
        (["--extend-select", "SHQ"], None, "SHQ"),
        ([], '[tool.shapelint]\nselect = ["SHP9"]\n', "select"),
        ([], '[tool.shapelint]\nignore = ["SHP1O1"]\n', "did you mean 'SHP101'"),
        ([], '[tool.shapelint]\nper-file-ignores = {"*" = ["SHP77"]}\n', "per-file-ignores"),
    ],
)
def test_unknown_codes_are_usage_errors(tmp_path, args, pyproject, needle):
    r = run(tmp_path, *args, pyproject=pyproject)
    assert r.exit_code == 2, r.output
    assert needle in r.output
    if pyproject is not None:
        assert "pyproject.toml" in r.output


@pytest.mark.parametrize(
    "pyproject, key",
    [
        ('[tool.shapelint]\nper-file-ignores = {"*" = [5]}\n', "per-file-ignores"),
        ('[tool.shapelint]\nselect = "SHP1"\nignore = [1]\n', "ignore"),
        ("[tool.shapelint]\nstubs = [3]\n", "stubs"),
        ('[tool.shapelint]\ndtype = "float17"\n', "dtype"),
        ("[tool.shapelint]\ndtype = 5\n", "dtype"),
        ('[tool.shapelint]\ndims = {b = "x"}\n', "dims"),
        ("[tool.shapelint.naming]\ngeneric = [1, 2]\n", "naming"),
        ("[tool.shapelint.naming]\naliases = {d_model = 3}\n", "naming"),
        ('[tool.shapelint.naming]\nlowercase = "yes"\n', "naming"),
        ('[tool.shapelint.naming]\ncolour = "blue"\n', "naming"),
        ('[tool.shapelint.naming]\naliases = {x = "not an axis"}\n', "naming"),
        ("[tool.shapelint]\nexclude = {a = 1}\n", "exclude"),
    ],
)
def test_wrong_types_are_usage_errors(tmp_path, pyproject, key):
    r = run(tmp_path, pyproject=pyproject)
    assert r.exit_code == 2, r.output
    assert "pyproject.toml" in r.output and key in r.output
    assert "Traceback" not in r.output


@pytest.mark.parametrize(
    "pyproject",
    [
        '[tool.shapelint]\nselect = ["ALL"]\nignore = ["SHP4", "SHP201"]\n',
        '[tool.shapelint]\nper-file-ignores = {"tests/*" = ["SHP3"]}\ndtype = "bf16"\n',
        '[tool.shapelint.naming]\ngeneric = ["n"]\naliases = {d_model = "d"}\nlowercase = false\n',
    ],
)
def test_valid_configuration_still_runs(tmp_path, pyproject):
    assert run(tmp_path, pyproject=pyproject).exit_code in (0, 1)
