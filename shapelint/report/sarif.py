"""The SARIF 2.1.0 diagnostic format (code scanning): a view of the same
Diagnostic list the text and json formats print."""

from __future__ import annotations

import json
from pathlib import Path

from shapelint import __version__
from shapelint.diagnostics import Diagnostic

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def relative_uri(path: str, base: Path | None = None) -> str:
    """path relative to base (the working directory), with forward slashes; an
    absolute path outside base stays absolute (a file: URI)."""
    base = (base or Path.cwd()).resolve()
    p = Path(path)
    try:
        rel = p.resolve().relative_to(base)
    except (ValueError, OSError):
        return p.resolve().as_uri() if p.is_absolute() else _uri_escape(p.as_posix())
    return _uri_escape(rel.as_posix())


def _uri_escape(rel: str) -> str:
    from urllib.parse import quote

    return quote(rel, safe="/-._~", errors="surrogateescape")  # undecodable bytes as %XX


# ---------------------------------------------------------------------- SARIF


def _rule_descriptor(rule) -> dict:
    markdown = [f"**{rule.name}** ({rule.severity}): {rule.summary}", "", rule.explanation]
    if rule.fix:
        markdown += ["", f"Fix ({rule.fix.label()}): {rule.fix.description}"]
    invalid = [ex.source for ex in rule.invalid]
    for title, examples in (("Triggers on", invalid), ("Does not trigger on", rule.valid)):
        for ex in examples:
            markdown += ["", f"{title}:", "", "```python", ex.rstrip("\n"), "```"]
    desc = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.explanation},
        "help": {"text": f"{rule.summary}\n\n{rule.explanation}", "markdown": "\n".join(markdown)},
        "defaultConfiguration": {
            "level": _SARIF_LEVEL.get(rule.severity, "warning"),
            "enabled": rule.default,
        },
        "properties": {"tags": [_family_tag(rule.code)]},
    }
    return desc


def _family_tag(code: str) -> str:
    from shapelint.rules.docs import FAMILIES

    return FAMILIES.get(code[:4], "shapelint")


def format_sarif(diags: list[Diagnostic], n_files: int, base: Path | None = None) -> str:
    """A SARIF 2.1.0 log with one run: every catalog rule in tool.driver.rules
    (so code scanning can show a rule's help), one result per diagnostic."""
    from shapelint.rules import RULES

    rules = list(RULES.values())
    index = {r.code: i for i, r in enumerate(rules)}
    base = (base or Path.cwd()).resolve()
    results = []
    for d in diags:
        region = {"startLine": d.line, "startColumn": d.column}
        # A zero-width or inverted span (a syntax error's point) stays a point.
        if (d.end_line, d.end_column) > (d.line, d.column):
            region.update({"endLine": d.end_line, "endColumn": d.end_column})
        result = {
            "ruleId": d.code,
            "level": _SARIF_LEVEL.get(d.severity, "warning"),
            "message": {"text": d.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": _artifact(d.path, base),
                        "region": region,
                    }
                }
            ],
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        results.append(result)
    run = {
        "tool": {
            "driver": {
                "name": "shapelint",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule_descriptor(r) for r in rules],
            }
        },
        "originalUriBaseIds": {"SRCROOT": {"uri": base.as_uri() + "/"}},
        # Diagnostic columns count characters (code points), not UTF-16 units.
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    log = {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _artifact(path: str, base: Path) -> dict:
    uri = relative_uri(path, base)
    if uri.startswith("file:"):
        return {"uri": uri}
    return {"uri": uri, "uriBaseId": "SRCROOT"}
