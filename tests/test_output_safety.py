"""Every string that reaches output is encodable and inert: lone surrogates and
control characters from analysed literals or file names are escaped in every
format, and one diagnostic never spans two output lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shapelint.diagnostics import Diagnostic

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = [
    "\\ud800 -> (",
    "a b -> b a\\n::warning file=README.md,line=1::forged",
    "a \\x1b]0;owned\\x07b -> a",
    "a \\x1b[2J b -> \\r\\u202e c",
]
SRC = "from einops import rearrange, einsum\n\ndef f(x, y):\n" + "".join(
    f'    x = rearrange(x, "{p}")\n    x = einsum(x, y, "{p}")\n' for p in HOSTILE
)


def shapelint(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "shapelint", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=120,
    )


@pytest.fixture
def hostile_tree(tmp_path):
    (tmp_path / "m.py").write_text(SRC)
    weird = os.fsdecode(b"bad\xff\n::warning file=x::y\x1b[31m.py")
    (tmp_path / weird).write_text(SRC)
    return tmp_path


def inert_output(*args, cwd) -> str:
    """stdout of a run that ended with findings or none, never a traceback, and inert."""
    r = shapelint(*args, cwd=cwd)
    assert r.returncode in (0, 1), r.stderr.decode(errors="replace")
    assert b"Traceback" not in r.stderr
    return inert(r.stdout)


def inert(out: bytes) -> str:
    text = out.decode("utf-8")  # encodable: valid UTF-8
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert "\u202e" not in text
    return text


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_check_output_is_encodable_and_inert(hostile_tree, fmt):
    text = inert_output("check", "--no-cache", "--format", fmt, ".", cwd=hostile_tree)
    lines = text.splitlines()
    if fmt == "text":
        diag_lines = [ln for ln in lines if ": SHP" in ln]
        assert len(diag_lines) == len(lines) - 1  # one line each, and the summary
        assert len(diag_lines) >= 2 * len(HOSTILE)
    elif fmt == "github":
        assert all(ln.startswith(("::error ", "::warning ", "::notice ")) for ln in lines)
        assert not any(ln.startswith("::warning file=README.md") for ln in lines)
        assert not any("file=x::" in ln for ln in lines)
    else:
        json.loads(text)


def test_cache_then_check_still_prints(hostile_tree):
    for _ in range(2):  # the second run is served by the cache
        r = shapelint("check", ".", cwd=hostile_tree)
        assert r.returncode == 1 and b"Traceback" not in r.stderr
        inert(r.stdout)


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "github"])
def test_cost_output_is_encodable_and_inert(hostile_tree, fmt):
    text = inert_output("cost", "--no-cache", "--format", fmt, ".", cwd=hostile_tree)
    if fmt == "github":
        assert not any(ln.startswith("::warning") for ln in text.splitlines())


def test_flake8_plugin_messages_are_inert(tmp_path):
    from shapelint.flake8_plugin import ShapelintChecker

    f = tmp_path / "m.py"
    f.write_text(SRC)
    import ast

    checker = ShapelintChecker(ast.parse(SRC), SRC.splitlines(True), str(f))
    messages = [m for _, _, m, _ in checker.run()]
    assert messages
    for m in messages:
        m.encode("utf-8")
        assert m.isprintable()


def test_diagnostic_messages_are_escaped_once_where_built():
    from shapelint.diagnostics import safe_text

    d = Diagnostic("p.py", 1, 1, 1, 1, "SHP101", "error", "bad \ud800\n\x1b[31m x")
    assert d.message == "bad \\ud800\\n\\x1b[31m x"
    assert safe_text("plain · ≥ text") == "plain · ≥ text"
    assert safe_text(d.message) == d.message  # idempotent on escaped text


# A comment that clears the screen and sets the title, on lines Python warns about
# (a bad numeric literal: SyntaxWarning), and a syntax error further down.
ESCAPES = "\x1b[2J\x1b]0;owned\x07"
WARNED = f"import torch\nx = 1if True else 2  # {ESCAPES}\ny = 0x1for  # {ESCAPES}\ndef f(:\n"
WARNED_ONLY = f"import torch\n\n\ndef f(x):\n    return 1if x else 2  # {ESCAPES}\n"


@pytest.mark.parametrize("command", ["check", "cost"])
@pytest.mark.parametrize("source", [WARNED, WARNED_ONLY], ids=["syntax-error", "parses"])
def test_parse_warnings_never_echo_source(tmp_path, command, source):
    (tmp_path / "m.py").write_text(source)
    r = shapelint(command, "--no-cache", "m.py", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr.decode(errors="replace")
    err = r.stderr.decode("utf-8")
    assert "\x1b" not in err and "\x07" not in err
    assert "SyntaxWarning" not in err and "1if" not in err, err
    inert(r.stdout)


def test_parse_warnings_are_caught_with_a_location():
    from shapelint import pyparse

    tree, warned = pyparse.parse_caught(WARNED_ONLY, "m.py")
    assert tree.body
    assert [(w.path, w.line, w.category) for w in warned] == [("m.py", 5, "SyntaxWarning")]
    assert warned[0].text == "m.py:5: SyntaxWarning: invalid decimal literal"


def test_run_mode_shows_python_warnings_escaped(tmp_path):
    """`shapelint run` executes the file and what it imports: Python shows their
    warnings, and shapelint shows them escaped, on one line, without the source."""
    (tmp_path / "helper.py").write_text(f"z = 1if True else 2  # {ESCAPES}\n")
    (tmp_path / "m.py").write_text(
        "import helper\n"
        f"w = 0x1for 0  # {ESCAPES}\n"
        "import torch\n"
        "from jaxtyping import Float\n"
        "def f(x: Float[torch.Tensor, 'n']) -> Float[torch.Tensor, 'n']:\n"
        "    return x\n"
    )
    r = shapelint("run", "m.py::f", "--dim", "n=2", "--device", "cpu", cwd=tmp_path)
    err = r.stderr.decode("utf-8")
    assert r.returncode == 0, err
    assert "\x1b" not in err and "\x07" not in err
    lines = [ln for ln in err.splitlines() if "SyntaxWarning" in ln]
    assert any(ln.endswith("m.py:2: SyntaxWarning: invalid hexadecimal literal") for ln in lines)
    assert any(ln.endswith("helper.py:1: SyntaxWarning: invalid decimal literal") for ln in lines)
    assert "1if" not in err and "0x1for" not in err
