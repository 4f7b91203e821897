"""The catalog's examples are the rules' tests: every invalid snippet triggers its
rule, every valid one does not. The docs are generated from the same entries."""

from pathlib import Path

import pytest

from shapelint.rules import RULES
from shapelint.rules.docs import render_markdown
from tests.helpers import codes

ROOT = Path(__file__).resolve().parent.parent

INVALID = [(r.code, i, ex) for r in RULES.values() for i, ex in enumerate(r.invalid)]
VALID = [(r.code, i, ex) for r in RULES.values() for i, ex in enumerate(r.valid)]


@pytest.mark.parametrize(
    ("code", "i", "example"), INVALID, ids=[f"{c}-invalid{i}" for c, i, _ in INVALID]
)
def test_invalid_example_triggers(code, i, example):
    assert code in codes(example), f"{code} example {i} did not trigger:\n{example}"


@pytest.mark.parametrize(
    ("code", "i", "example"), VALID, ids=[f"{c}-valid{i}" for c, i, _ in VALID]
)
def test_valid_example_is_clean(code, i, example):
    assert code not in codes(example), f"{code} fired on its valid example {i}:\n{example}"


def test_every_rule_is_documented_and_exemplified():
    for r in RULES.values():
        assert r.severity in ("error", "warning", "info"), r.code
        assert r.summary and r.explanation, r.code
        # An internal error has no example by nature; SHP003's takes its budget to
        # run (tests/test_budget.py).
        if r.code not in ("SHP002", "SHP003"):
            assert r.invalid, f"{r.code} has no example that triggers it"


def test_docs_rules_md_is_generated_from_catalog():
    doc = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert doc == render_markdown(list(RULES.values())), (
        "docs/rules.md is stale: run `python -m shapelint rules --format markdown > docs/rules.md`"
    )
