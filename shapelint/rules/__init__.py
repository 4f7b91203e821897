"""The rule catalog: one entry per code, which is also the docs and the tests.

Each family lives in its own module (tool, pattern, shapes, torch_ops, interproc,
naming) and exports ``RULES``; this module assembles them. ``shapelint rules`` and
docs/rules.md are generated from here, and tests/test_rule_catalog.py runs every
example: each ``invalid`` snippet must trigger its rule, each ``valid`` one must not.
"""

from __future__ import annotations

from shapelint.rules.record import Rule

__all__ = ["RULES", "Rule", "on_any_path", "severity_of"]


def _load() -> dict[str, Rule]:
    from shapelint.rules import interproc, naming, pattern, shapes, tool, torch_ops

    out: dict[str, Rule] = {}
    for mod in (tool, pattern, shapes, torch_ops, interproc, naming):
        for rule in mod.RULES:
            if rule.code in out:
                raise RuntimeError(f"duplicate rule code {rule.code}")
            out[rule.code] = rule
    return dict(sorted(out.items()))


RULES: dict[str, Rule] = _load()


def severity_of(code: str) -> str:
    rule = RULES.get(code)
    return rule.severity if rule else "error"


def on_any_path(code: str) -> bool:
    """The rule's finding is an error wherever its line may run (Rule.any_path)."""
    rule = RULES.get(code)
    return rule is not None and rule.any_path
