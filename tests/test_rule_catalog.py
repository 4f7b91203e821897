"""The catalog's examples are the rules' tests, pinned as snapshots are: every
example that triggers its rule states every diagnostic the analysis gives on it
(line, column, code, message) and what `--fix` writes, with and without
--unsafe-fixes, and is held to it exactly; every valid one stays clean of its rule.
The docs are generated from the same entries."""

from pathlib import Path

import pytest

from shapelint.analysis.driver import analyze_text
from shapelint.fixes import fix_text
from shapelint.rules import RULES
from shapelint.rules.docs import render_markdown
from tests.helpers import codes

ROOT = Path(__file__).resolve().parent.parent
PATH = "example.py"

INVALID = [(r.code, i, ex) for r in RULES.values() for i, ex in enumerate(r.invalid)]
VALID = [(r.code, i, ex) for r in RULES.values() for i, ex in enumerate(r.valid)]


def said(source: str) -> list[str]:
    return [
        f"{d.line}:{d.column} {d.code} {d.message}"
        for d in analyze_text(PATH, source, None).diagnostics
    ]


@pytest.mark.parametrize(
    ("code", "i", "example"), INVALID, ids=[f"{c}-invalid{i}" for c, i, _ in INVALID]
)
def test_invalid_example_says_exactly_what_it_states(code, i, example):
    assert said(example.source) == list(example.expect), f"{code} example {i}"
    assert any(line.split()[1] == code for line in example.expect), f"{code} example {i}"


@pytest.mark.parametrize(
    ("code", "i", "example"), INVALID, ids=[f"{c}-invalid{i}" for c, i, _ in INVALID]
)
def test_invalid_example_fixes_exactly_as_it_states(code, i, example):
    safe = fix_text(PATH, example.source)
    assert safe.fixed == (example.fixed or example.source), f"{code} example {i}: --fix"
    # Withheld fixes are counted, and only where --unsafe-fixes would make them.
    assert bool(safe.need_unsafe) == (example.unsafe_fixed is not None)
    unsafe = fix_text(PATH, example.source, unsafe=True)
    expected = example.unsafe_fixed or example.fixed or example.source
    assert unsafe.fixed == expected, f"{code} example {i}: --fix --unsafe-fixes"


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
        # run (tests/test_budget.py); SHP322 and SHP323 are found in target runs only,
        # which a snippet checked alone is not (tests/test_dtype_match.py,
        # tests/test_sure_raise.py).
        if r.code not in ("SHP002", "SHP003", "SHP322", "SHP323"):
            assert r.invalid, f"{r.code} has no example that triggers it"


def test_every_fix_is_shown_and_its_safety_stated():
    for r in RULES.values():
        if r.fix is None:
            continue
        assert r.fix.description and r.fix.safety in ("safe", "unsafe"), r.code
        shown = [ex for ex in r.invalid if ex.fixed or ex.unsafe_fixed]
        assert shown, f"{r.code}'s fix has no example"
        if r.fix.unsafe:
            # --fix alone never applies it: an example it rewrites shows that under
            # --unsafe-fixes only.
            alone = [ex for ex in shown if [ln.split()[1] for ln in ex.expect] == [r.code]]
            assert alone and all(ex.fixed is None for ex in alone), r.code
        if r.fix.unsafe_when:
            assert any(ex.fixed for ex in shown) and any(ex.unsafe_fixed for ex in shown)


def test_einsum_rewrites_are_unsafe_and_reshuffles_safe():
    """A matmul or letter einsum rewritten as einops.einsum may sum in another order
    (the rules' own texts say so; tests/test_fixes.py shows a case where torch
    does); a rearrange returns the same values."""
    assert RULES["SHP404"].fix.safety == RULES["SHP405"].fix.safety == "unsafe"
    assert RULES["SHP401"].fix.safety == RULES["SHP402"].fix.safety == "safe"
    assert RULES["SHP403"].fix.safety == "safe" and RULES["SHP403"].fix.unsafe_when


def test_docs_rules_md_is_generated_from_catalog():
    doc = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert doc == render_markdown(list(RULES.values())), (
        "docs/rules.md is stale: run `python -m shapelint rules --format markdown > docs/rules.md`"
    )


def test_docs_show_each_fix_and_its_safety():
    doc = render_markdown(list(RULES.values()))
    assert "| [SHP404](#shp404) | transposed-matmul | warning | unsafe |" in doc
    assert "Fix (unsafe: the einsum computes the same product" in doc
    assert "`check --fix --unsafe-fixes` writes:" in doc
