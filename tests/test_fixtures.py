"""Fixture modules carry their expectations inline (mypy test-data style): a
`# expect: CODE [CODE...]` comment names every diagnostic that line must get, and
a line without one must get none."""

import re
from pathlib import Path

import pytest

from shapelint.analysis.driver import analyze_text

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "fixtures").rglob("*.py"))
EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9 ,]+)")


def expected(text: str) -> dict[int, list[str]]:
    out = {}
    for i, line in enumerate(text.splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out[i] = sorted(c for c in re.split(r"[\s,]+", m.group(1)) if c)
    return out


@pytest.mark.parametrize("path", FIXTURES, ids=[str(p.relative_to(ROOT)) for p in FIXTURES])
def test_fixture_expectations(path):
    text = path.read_text(encoding="utf-8")
    got: dict[int, list[str]] = {}
    for d in analyze_text(str(path), text).diagnostics:
        got.setdefault(d.line, []).append(d.code)
    got = {k: sorted(v) for k, v in got.items()}
    assert got == expected(text)


def test_there_are_fixtures():
    assert len(FIXTURES) >= 1
