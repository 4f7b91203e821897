"""Diagnostic formats for CI: SARIF 2.1.0 (code scanning) and GitHub workflow commands.

Both are views of the same Diagnostic list the text and json formats print.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from shapelint import __version__
from shapelint.diagnostics import Diagnostic, safe_text

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


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
    for title, examples in (("Triggers on", rule.invalid), ("Does not trigger on", rule.valid)):
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


# ---------------------------------------------------------------------- GitHub


def escape_data(s: str) -> str:
    """A workflow command's message, escaped as the Actions runner unescapes it."""
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    """A workflow command's property value: as data, plus ':' and ','."""
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def workflow_command(kind: str, message: str, **props: object) -> str:
    """`::kind k=v,...::message` with every part escaped; None properties are left out."""
    parts = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items() if v is not None)
    return (
        f"::{kind} {parts}::{escape_data(message)}"
        if parts
        else f"::{kind}::{escape_data(message)}"
    )


def github_path(path: str) -> str:
    """GitHub resolves annotation paths against the workspace: relative, forward slashes."""
    p = Path(path)
    try:
        return os.path.relpath(p.resolve(), Path.cwd().resolve()).replace(os.sep, "/")
    except (ValueError, OSError):  # another drive on Windows
        return p.as_posix()


def format_github(diags: list[Diagnostic], n_files: int) -> str:
    lines = []
    for d in diags:
        props: dict[str, object] = {
            "file": safe_text(github_path(d.path)),
            "line": d.line,
            "col": d.column,
        }
        if (d.end_line, d.end_column) > (d.line, d.column):
            props.update(endLine=d.end_line, endColumn=d.end_column)
        props["title"] = d.code
        lines.append(workflow_command(_GITHUB_COMMAND.get(d.severity, "error"), d.message, **props))
    return "".join(line + "\n" for line in lines)


# ---------------------------------------------------------------------- cost notes


def format_cost_github(report: dict, dims: dict[str, int]) -> str:
    """`shapelint cost --format github`: one ::notice per call with matrix-product FLOPs,
    so review shows each costly line's formula beside the code."""
    from shapelint.costcli import _si, human

    lines = []
    for c in report["calls"]:
        if c.get("flops") in (None, "0"):
            continue
        formula = human(c["flops"])
        value = c.get("flops_value")
        if dims and value is not None and formula != str(value):
            formula += f" = {_si(value)}"
        what = c["op"] + (f' "{c["pattern"]}"' if c.get("pattern") else "")
        detail = [what, f"bytes {human(c.get('bytes'))}"]
        detail += list(c.get("notes") or [])
        lines.append(
            workflow_command(
                "notice",
                f"{formula} ({'; '.join(detail)})",
                file=safe_text(github_path(c["path"])),
                line=c["line"],
                col=c.get("column"),
                title="FLOPs",
            )
        )
    return "".join(line + "\n" for line in lines)
