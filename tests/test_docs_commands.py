"""Every shell command in README.md and docs/ runs as written.

Commands are the lines of ```bash/sh/shell blocks and the `$ ` lines of any other
block. Each runs (shapelint as `python -m shapelint` from this checkout) in a
scratch git repository holding the checkout's fixtures/ and examples/ and, as the docs' `src/`,
a copy of fixtures/demo; it must exit 0 or 1 (1: findings), never 2 (a usage
error) and never with a traceback. Not run, and reported as skipped with the
reason: installs (`pip install`, which would replace the environment under test),
the test suite itself, and blocks marked `<!-- illustrative: why -->` on the line
before their fence.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"bash", "sh", "shell"}
NOT_RUN = {
    "pip install": "installs packages: the test runs this checkout instead",
    "python -m pytest": "the test suite itself",
}
_FENCE = re.compile(r"^```(\S*)\s*$")
_MARK = re.compile(r"<!--\s*illustrative:\s*(.+?)\s*-->")


def commands() -> list[tuple[str, str, str | None]]:
    """(where, command, reason it is not run) for every command in the docs."""
    out = []
    for doc in DOCS:
        if doc.name == "rules.md":
            continue  # generated from the rule catalog: python only
        lines = doc.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            m = _FENCE.match(lines[i])
            if not m or not m.group(1) or m.group(1) == "":
                if m:  # an untagged block: skip to its end
                    i += 1
                    while i < len(lines) and not lines[i].startswith("```"):
                        if lines[i].startswith("$ "):
                            out.append(_entry(doc, i, lines[i][2:], lines, None))
                        i += 1
                i += 1
                continue
            lang = m.group(1)
            mark = _MARK.search(lines[i - 1]) if i else None
            reason = f"marked illustrative: {mark.group(1)}" if mark else None
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                text = lines[i]
                if lang in SHELL and text.strip() and not text.lstrip().startswith("#"):
                    out.append(_entry(doc, i, text, lines, reason))
                elif lang not in SHELL and text.startswith("$ "):
                    out.append(_entry(doc, i, text[2:], lines, reason))
                i += 1
            i += 1
    return out


def _entry(doc: Path, i: int, text: str, lines: list[str], reason: str | None):
    while text.rstrip().endswith("\\") and i + 1 < len(lines):
        i += 1
        text = text.rstrip()[:-1] + " " + lines[i].strip()
    return f"{doc.relative_to(ROOT)}:{i + 1}", text, reason


def _segments(command: str) -> list[str]:
    # Comments after a command are the docs' explanations, not shell.
    parts = shlex.split(command, comments=True)
    out, cur = [], []
    for p in parts:
        if p == "&&":
            out.append(cur)
            cur = []
        else:
            cur.append(p)
    out.append(cur)
    return [shlex.join(c) for c in out if c]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    box = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "fixtures", box / "fixtures")
    shutil.copytree(ROOT / "examples", box / "examples")
    shutil.copytree(ROOT / "fixtures" / "demo", box / "src")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "docs"]):
        subprocess.run(["git", *args], cwd=box, env=env, check=True, capture_output=True)
    return box


CASES = commands()


def test_the_docs_have_commands_to_run():
    assert sum(1 for _, _, reason in CASES if reason is None) >= 10


@pytest.mark.parametrize(("where", "command", "reason"), CASES, ids=[c[0] for c in CASES])
def test_doc_command_runs(where, command, reason, sandbox):
    if reason is not None:
        pytest.skip(reason)
    ran, skipped = 0, []
    for seg in _segments(command):
        skip = next((why for prefix, why in NOT_RUN.items() if seg.startswith(prefix)), None)
        if skip is not None:
            skipped.append(f"`{seg}`: {skip}")
            continue
        argv = shlex.split(seg)
        if argv[0] == "shapelint":
            argv = [sys.executable, "-m", "shapelint", *argv[1:]]
        elif argv[0] == "flake8":
            argv = [sys.executable, "-m", "flake8", *argv[1:]]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        r = subprocess.run(argv, cwd=sandbox, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode in (0, 1), f"{where}: {seg}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        assert "Traceback" not in r.stderr, f"{where}: {seg}\n{r.stderr[-2000:]}"
        ran += 1
    if not ran:
        pytest.skip("; ".join(skipped))


def _precommit_snippet() -> str:
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = text.split("## pre-commit", 1)[1]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


@pytest.mark.skipif(shutil.which("pre-commit") is None, reason="pre-commit is not installed")
def test_the_documented_pre_commit_config_works_as_written(tmp_path):
    """The `repo: local` snippet, run by pre-commit itself: an error blocks the
    commit, a warning alone does not."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".pre-commit-config.yaml").write_text(_precommit_snippet())
    (repo / "ok.py").write_text("import torch\ndef f(x):\n    return x.transpose(1, 2)\n")
    shim = tmp_path / "bin"
    shim.mkdir()
    exe = shim / "shapelint"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m shapelint "$@"\n')
    exe.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }

    def precommit() -> subprocess.CompletedProcess:
        subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
        return subprocess.run(
            ["pre-commit", "run", "--all-files"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    subprocess.run(["git", "init", "-q"], cwd=repo, env=env, check=True)
    r = precommit()
    assert r.returncode == 0, r.stdout + r.stderr
    (repo / "bad.py").write_text(
        'from einops import rearrange\ndef g(t):\n    return rearrange(t, "b c")\n'
    )
    r = precommit()
    assert r.returncode == 1 and "SHP101" in r.stdout, r.stdout + r.stderr
