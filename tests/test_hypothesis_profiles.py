"""The hypothesis profiles of tests/conftest.py: in CI the verdict is the same on
every run, whatever an earlier run left in .hypothesis/, and no test overrides the
profile's deadline, database, seed or phases."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

from hypothesis import Phase, settings

TESTS = Path(__file__).resolve().parent
PROFILE_KEYS = {"deadline", "database", "derandomize", "phases", "report_multiple_bugs"}


def test_the_ci_profile_is_reproducible_and_bounded():
    ci = settings.get_profile("ci")
    assert ci.derandomize and ci.database is None
    assert ci.deadline is not None
    assert Phase.shrink not in ci.phases and Phase.generate in ci.phases
    assert not ci.report_multiple_bugs
    dev = settings.get_profile("dev")
    assert not dev.derandomize and dev.database is not None and Phase.shrink in dev.phases
    assert dev.deadline is None


def test_no_test_overrides_what_the_profiles_decide():
    """A test's own @settings composes with the profile: it may set max_examples or
    health checks, never the deadline, database, seed or phases."""
    offenders = []
    for path in sorted(TESTS.glob("*.py")):
        if path.name == "conftest.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "settings":
                keys = {k.arg for k in node.keywords} & PROFILE_KEYS
                if keys:
                    offenders.append(f"{path.name}:{node.lineno} {sorted(keys)}")
    assert not offenders


PROPERTY = """
import os
from hypothesis import given, strategies as st

@given(st.integers(0, 2**60))
def test_property(n):
    if os.environ["MODE"] == "wide":
        assert n <= 1000  # fails; shrinks to 1001, which the database keeps
    else:
        assert n != 1001  # fails only where 1001 is drawn: replayed from the database
"""


def _pytest(where: Path, mode: str, ci: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
    env.update(MODE=mode, PYTHONDONTWRITEBYTECODE="1")
    if ci:
        env["CI"] = "true"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_p.py"]
    return subprocess.run(cmd, cwd=where, env=env, capture_output=True, text=True, timeout=300)


def test_a_database_left_by_a_failing_run_does_not_decide_ci(tmp_path):
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_p.py").write_text(PROPERTY)
    first = _pytest(tmp_path, "wide", ci=False)  # the dev profile: shrinks, saves 1001
    assert first.returncode == 1 and "n=1001" in first.stdout, first.stdout
    assert (tmp_path / ".hypothesis").is_dir()
    ci = _pytest(tmp_path, "narrow", ci=True)
    assert ci.returncode == 0, ci.stdout
    dev = _pytest(tmp_path, "narrow", ci=False)  # the database was there to replay
    assert dev.returncode == 1 and "n=1001" in dev.stdout, dev.stdout
