"""SIGTERM and SIGINT stop the pool's workers too (no orphans), and Ctrl-C exits
130, distinct from findings (1) and usage errors (2)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_budget import RUNAWAY

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def group_members(pgid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.append(int(d.name))
    return out


@pytest.fixture
def slow_tree(tmp_path):
    # Enough files and bytes for the process pool, each one endless without a budget.
    pad = "#" * 70_000 + "\n"
    for i in range(66):
        (tmp_path / f"m{i:02d}.py").write_text(RUNAWAY + pad)
    return tmp_path


def start(tree: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "shapelint", "check", "--no-cache", "-j", "2"]
        + ["--time-budget", "0", str(tree)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a shell job
        # A shell starts a foreground job with SIGINT at its default; a suite run as
        # a background job (`pytest &`) has it ignored, which the child would inherit
        # (Python then installs no KeyboardInterrupt handler) and Ctrl-C would not stop it.
        preexec_fn=_sigint_default,
    )


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_workers(proc: subprocess.Popen, n: int = 3) -> None:
    deadline = time.monotonic() + 60
    while len(group_members(proc.pid)) < n:
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "the pool never started"
        time.sleep(0.1)
    time.sleep(0.5)  # the workers are inside their first files


def wait_for_no_members(pgid: int) -> list[int]:
    deadline = time.monotonic() + 15
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return group_members(pgid)


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_sigterm_stops_the_workers(slow_tree):
    proc = start(slow_tree)
    try:
        wait_for_workers(proc)
        proc.send_signal(signal.SIGTERM)  # to the main process only
        rc = proc.wait(30)
        assert rc == 128 + signal.SIGTERM
        assert wait_for_no_members(proc.pid) == []
        assert b"Traceback" not in proc.stderr.read()
    finally:
        kill_group(proc.pid)


def test_ctrl_c_exits_130_and_stops_the_workers(slow_tree):
    proc = start(slow_tree)
    try:
        wait_for_workers(proc)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends: the whole group
        rc = proc.wait(30)
        assert rc == 130
        assert wait_for_no_members(proc.pid) == []
        err = proc.stderr.read()
        assert b"Traceback" not in err and b"KeyboardInterrupt" not in err
    finally:
        kill_group(proc.pid)


@pytest.fixture
def sigterm_default():
    """SIGTERM at its default for the test, and the runner's own handler back after."""
    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGTERM, before)


@pytest.mark.parametrize("args", [["--version"], ["check", "--no-cache"]])
def test_main_in_process_leaves_sigterm_alone(sigterm_default, tmp_path, args):
    """A test (or tool) that runs main in-process keeps SIGTERM's default: a runner's
    cancel must kill the process, not raise SystemExit inside whatever runs next."""
    from click.testing import CliRunner

    from shapelint.cli import main

    (tmp_path / "m.py").write_text("x = 1\n")
    result = CliRunner().invoke(main, [*args, str(tmp_path)] if "check" in args else args)
    assert result.exit_code == 0, result.output
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_main_as_the_program_restores_sigterm(sigterm_default, monkeypatch):
    """Run as the program (args from sys.argv), main handles SIGTERM while it runs
    and puts the previous handler back when it ends."""
    from shapelint.cli import main

    seen = []

    def during(*a, **k):
        seen.append(signal.getsignal(signal.SIGTERM))

    monkeypatch.setattr(sys, "argv", ["shapelint", "rules"])
    monkeypatch.setattr("click.Group.invoke", lambda self, ctx: during())
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 0
    assert len(seen) == 1 and callable(seen[0])  # its own handler, during the run
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_callers_sigterm_handler_survives_main(sigterm_default, monkeypatch):
    from shapelint.cli import main

    def mine(signum, frame):
        pass

    signal.signal(signal.SIGTERM, mine)
    monkeypatch.setattr(sys, "argv", ["shapelint", "--version"])
    with pytest.raises(SystemExit):
        main()
    assert signal.getsignal(signal.SIGTERM) is mine
