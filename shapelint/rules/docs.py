"""`shapelint rules` and docs/rules.md, rendered from the catalog."""

from __future__ import annotations

import json

from shapelint.rules.record import Rule

FAMILIES = {
    "SHP0": "The tool itself",
    "SHP1": "Pattern syntax",
    "SHP2": "What einops would reject at run time",
    "SHP3": "Shape mismatches",
    "SHP4": "Naming (positional reshuffles)",
}


def render_text(rules: list[Rule], single: bool = False) -> str:
    if not single:
        lines = []
        for r in rules:
            off = "" if r.default else " (off by default)"
            lines.append(f"{r.code}  {r.name:<34} {r.severity:<8} {r.summary}{off}")
        return "\n".join(lines) + "\n"
    r = rules[0]
    out = [
        f"{r.code} {r.name} ({r.severity}{'' if r.default else ', off by default'})",
        "",
        r.summary,
        "",
        r.explanation,
    ]
    if r.invalid:
        out += ["", "Triggers on:"]
        for ex in r.invalid:
            out += ["", _indent(ex)]
    if r.valid:
        out += ["", "Does not trigger on:"]
        for ex in r.valid:
            out += ["", _indent(ex)]
    if r.fix:
        out += ["", f"Fix: {r.fix}"]
    return "\n".join(out) + "\n"


def _indent(code: str) -> str:
    return "\n".join("    " + line for line in code.rstrip("\n").splitlines())


def render_markdown(rules: list[Rule], single: bool = False) -> str:
    out = []
    if not single:
        out += [
            "# Rules",
            "",
            "Generated from the rule catalog (`shapelint/rules/`) by "
            "`shapelint rules --format markdown`; do not edit by hand.",
            "",
            "| Code | Name | Severity | Summary |",
            "| --- | --- | --- | --- |",
        ]
        for r in rules:
            off = " (off by default)" if not r.default else ""
            out.append(
                f"| [{r.code}](#{r.code.lower()}) | {r.name} | {r.severity} | {r.summary}{off} |"
            )
        out.append("")
    family = None
    for r in rules:
        if not single and r.code[:4] != family:
            family = r.code[:4]
            out += [f"## {family}xx: {FAMILIES.get(family, '')}", ""]
        out += [
            f"### {r.code}",
            "",
            f"**{r.name}** ({r.severity}{'' if r.default else ', off by default'}): {r.summary}",
            "",
            r.explanation,
            "",
        ]
        for title, examples in (("Triggers on", r.invalid), ("Does not trigger on", r.valid)):
            if examples:
                out += [f"{title}:", ""]
                for ex in examples:
                    out += ["```python", ex.rstrip("\n"), "```", ""]
        if r.fix:
            out += [f"Fix: {r.fix}", ""]
    return "\n".join(out)


def render_json(rules: list[Rule], single: bool = False) -> str:
    data = [
        {
            "code": r.code,
            "name": r.name,
            "severity": r.severity,
            "summary": r.summary,
            "explanation": r.explanation,
            "default": r.default,
            "invalid": list(r.invalid),
            "valid": list(r.valid),
        }
        for r in rules
    ]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
