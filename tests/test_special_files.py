"""Files that are not regular files are refused with SHP001, never opened for
reading (a FIFO would block, /dev/zero would read forever); unreadable directories
and files under unsearchable ones are reported, not skipped, never a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from shapelint.analysis.driver import analyze_files, collect_files
from shapelint.config import Config

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX special files")
BAD = 'from einops import rearrange\ndef f(x):\n    return rearrange(x, "b c -> b d")\n'


def check(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "shapelint", "check", "--no-cache", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,  # a FIFO or /dev/zero used to block or read until MemoryError
    )


@pytest.fixture
def special(tmp_path):
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock.py"))
    (tmp_path / "good.py").write_text(BAD)
    yield tmp_path
    sock.close()


@pytest.mark.parametrize("name", ["fifo.py", "zero.py", "sock.py"])
def test_named_special_file_is_shp001(special, name):
    r = check(name, cwd=special)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert f"{name}:1:1: SHP001" in r.stdout and "not a regular file" in r.stdout


def test_walked_special_files_are_shp001_and_the_rest_is_checked(special):
    r = check(".", cwd=special)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    refused = [ln for ln in r.stdout.splitlines() if "not a regular file" in ln]
    assert len(refused) == 3
    assert "good.py:3" in r.stdout


def test_fifo_stub_path_is_a_usage_error(tmp_path):
    os.mkfifo(tmp_path / "s.stub")
    (tmp_path / "pyproject.toml").write_text('[tool.shapelint]\nstubs = ["s.stub"]\n')
    (tmp_path / "m.py").write_text(BAD)
    r = check(".", cwd=tmp_path)
    assert r.returncode == 2 and "s.stub" in r.stderr and "Traceback" not in r.stderr


def test_unreadable_directory_in_a_walk_is_reported(tmp_path, monkeypatch):
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "m.py").write_text(BAD)
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "m.py").write_text(BAD)
    real = os.scandir

    def scandir(p="."):
        if Path(p) == locked:
            raise PermissionError(13, "Permission denied", str(p))
        return real(p)

    monkeypatch.setattr(os, "scandir", scandir)
    files, missing = collect_files([tmp_path], Config(root=tmp_path))
    assert not missing
    monkeypatch.setattr(os, "scandir", real)
    real_open = os.open

    def deny(p, *a, **k):
        if Path(p) == locked:
            raise PermissionError(13, "Permission denied", str(p))
        return real_open(p, *a, **k)

    monkeypatch.setattr(os, "open", deny)
    results = analyze_files(files, {}, jobs=1)
    by_path = {r.path: r for r in results}
    [d] = by_path[str(locked)].diagnostics
    assert d.code == "SHP001" and "cannot list directory" in d.message
    assert by_path[str(tmp_path / "ok" / "m.py")].diagnostics


def test_file_under_unsearchable_directory_is_a_message(tmp_path, monkeypatch):
    f = tmp_path / "hidden" / "m.py"
    f.parent.mkdir()
    f.write_text(BAD)
    real_stat = os.stat

    def stat(p, *a, **k):
        if str(p).startswith(str(f.parent) + os.sep):
            raise PermissionError(13, "Permission denied", str(p))
        return real_stat(p, *a, **k)

    monkeypatch.setattr(os, "stat", stat)
    files, missing = collect_files([f], Config(root=tmp_path))
    assert files == [f] and not missing
