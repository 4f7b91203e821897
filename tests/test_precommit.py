"""The pre-commit hook, run the way pre-commit runs it: its entry plus the staged files
of the hook's type, from the root of a temporary git repository."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

yaml = pytest.importorskip("yaml")
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ROOT = Path(__file__).resolve().parent.parent
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())

BAD = (
    "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n\n"
    'def f(x: Float[Tensor, "b 8"]) -> Float[Tensor, "b 8 1"]:\n'
    "    return x\n"
)
CLEAN = (
    "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n\n"
    'def f(x: Float[Tensor, "b 8"]) -> Float[Tensor, "b 8"]:\n'
    "    return x\n"
)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def hook() -> dict:
    (h,) = [h for h in HOOKS if h["id"] == "shapelint"]
    return h


def test_hook_definition():
    h = hook()
    assert h["language"] == "python" and h["types"] == ["python"] and h["require_serial"] is False
    entry = shlex.split(h["entry"])
    # The entry's executable is the console script the package installs.
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert entry[0] in scripts and scripts[entry[0]] == "shapelint.cli:main"
    assert entry[1:] == ["check"]


def staged_python_files(repo: Path) -> list[str]:
    """What pre-commit would pass for `types: [python]` (.py files or a python shebang)."""
    names = git(repo, "diff", "--cached", "--name-only", "--diff-filter=ACMR", "-z").split("\0")
    out = []
    for name in filter(None, names):
        p = repo / name
        head = p.read_bytes()[:64]
        if name.endswith((".py", ".pyi")) or (head.startswith(b"#!") and b"python" in head):
            out.append(name)
    return out


def run_hook(repo: Path) -> subprocess.CompletedProcess:
    entry = shlex.split(hook()["entry"])
    files = staged_python_files(repo)
    assert files, "pre-commit does not run a hook without matching files"
    # `shapelint` is the console script of an installed package; run this checkout's.
    cmd = [sys.executable, "-m", "shapelint", *entry[1:], *files]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / "README.md").write_text("x\n")
    git(tmp_path, "add", "README.md")
    git(tmp_path, "commit", "-q", "-m", "init")
    return tmp_path


def test_bad_staged_file_blocks_the_commit(repo):
    (repo / "pkg").mkdir()
    (repo / "pkg" / "model.py").write_text(BAD)
    (repo / "notes.txt").write_text("reveal_shape(x) einops\n")  # not python: not passed
    git(repo, "add", "-A")
    assert staged_python_files(repo) == ["pkg/model.py"]
    proc = run_hook(repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "pkg/model.py:7:12: SHP306" in proc.stdout


def test_clean_staged_file_passes(repo):
    (repo / "model.py").write_text(CLEAN)
    (repo / "script").write_text("#!/usr/bin/env python\nimport torch\nprint(torch)\n")
    git(repo, "add", "-A")
    assert sorted(staged_python_files(repo)) == ["model.py", "script"]
    proc = run_hook(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All checks passed" in proc.stdout


def test_info_notes_do_not_block(repo):
    (repo / "m.py").write_text(
        CLEAN.replace("    return x\n", "    reveal_shape(x)\n    return x\n")
    )
    git(repo, "add", "-A")
    proc = run_hook(repo)
    assert proc.returncode == 0, proc.stdout
    assert "SHP390" in proc.stdout


# ---------------------------------------------------------------------- real pre-commit

PRE_COMMIT = shutil.which("pre-commit")


@pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed")
def test_real_pre_commit_with_this_repository(repo):
    """pre-commit clones this repository at HEAD and installs it into its own
    environment, as a user's `repo:` entry does (needs the package index)."""
    try:
        head = git(ROOT, "rev-parse", "HEAD").strip()
    except subprocess.CalledProcessError:
        pytest.skip("this checkout is not a git repository")
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {head}\n    hooks:\n      - id: shapelint\n"
    )
    (repo / "model.py").write_text(BAD)
    git(repo, "add", "-A")
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home")}
    proc = subprocess.run(
        [PRE_COMMIT, "run"], cwd=repo, env=env, capture_output=True, text=True, timeout=540
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model.py:7:12: SHP306" in proc.stdout
    (repo / "model.py").write_text(CLEAN)
    git(repo, "add", "-A")
    proc = subprocess.run(
        [PRE_COMMIT, "run"], cwd=repo, env=env, capture_output=True, text=True, timeout=540
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
