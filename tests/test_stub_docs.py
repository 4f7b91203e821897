"""docs/stubs.md's rule table and coverage list are generated from the code and the
stub files: stale docs fail here."""

from pathlib import Path

from shapelint.ops import shape_rules, stub_docs
from shapelint.ops.stub_ops import StubRegistry

DOC = Path(__file__).resolve().parent.parent / "docs" / "stubs.md"


def test_docs_stubs_md_is_generated():
    text = DOC.read_text(encoding="utf-8")
    assert text == stub_docs.update(text), (
        "docs/stubs.md is stale: run `python -m shapelint.ops.stub_docs`"
    )


def test_every_rule_and_every_name_is_listed():
    rules, coverage = stub_docs.render_rules(), stub_docs.render_coverage()
    for name in shape_rules.RULES:
        assert rules.count(f"| `{name}(") == 1, name
    for name in StubRegistry.load().names():
        assert f"`{stub_docs.short_name(name)}`" in coverage, name


def test_every_rule_says_what_it_does():
    assert "|  |" not in stub_docs.render_rules(), "a rule without a docstring"
