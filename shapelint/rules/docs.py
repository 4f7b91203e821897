"""`shapelint rules` and docs/rules.md, rendered from the catalog."""

from __future__ import annotations

import json

from shapelint.rules.record import Example, Rule

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
            fix = f" [fix: {r.fix.short}]" if r.fix else ""
            lines.append(f"{r.code}  {r.name:<34} {r.severity:<8} {r.summary}{off}{fix}")
        return "\n".join(lines) + "\n"
    r = rules[0]
    out = [
        f"{r.code} {r.name} ({r.severity}{'' if r.default else ', off by default'})",
        "",
        r.summary,
        "",
        r.explanation,
    ]
    if _judged_on_paths(r):
        out += ["", _on_paths(r)]
    if r.fix:
        out += ["", f"Fix ({r.fix.label()}): {r.fix.description}"]
    if r.invalid:
        out += ["", "Triggers on:"]
        for ex in r.invalid:
            out += ["", _indent(ex.source), "", "  shapelint says:", _indent(_said(ex))]
            for title, fixed in _fixes(ex):
                out += ["", f"  {title}:", _indent(fixed)]
    if r.valid:
        out += ["", "Does not trigger on:"]
        for ex in r.valid:
            out += ["", _indent(ex)]
    return "\n".join(out) + "\n"


def _judged_on_paths(r: Rule) -> bool:
    """An error of the code's own (not the tool's, SHP0xx): judged on undecided paths."""
    return r.severity == "error" and not r.code.startswith("SHP0")


def _on_paths(r: Rule) -> str:
    """What the finding is on a path `check` cannot decide (analysis/plain_paths.py)."""
    if r.any_path:
        return (
            "On a branch `check` cannot decide: an error all the same (the call's own text "
            "decides it: the line raises wherever it runs)."
        )
    return (
        "On a branch `check` cannot decide: a warning naming the condition under which it "
        "raises; an error where every alternative raises."
    )


def _said(ex: Example) -> str:
    return "\n".join(ex.expect)


def _fixes(ex: Example) -> list[tuple[str, str]]:
    """What --fix (and --unsafe-fixes) make of an example: nothing, one or both."""
    out = []
    if ex.fixed is not None:
        out.append(("`check --fix` writes", ex.fixed))
    if ex.unsafe_fixed is not None:
        out.append(("`check --fix --unsafe-fixes` writes", ex.unsafe_fixed))
    return out


def _indent(code: str) -> str:
    return "\n".join("    " + line for line in code.rstrip("\n").splitlines())


def render_markdown(rules: list[Rule], single: bool = False) -> str:
    out = []
    if not single:
        out += [
            "# Rules",
            "",
            "Generated from the rule catalog (`shapelint/rules/`) by "
            "`shapelint rules --format markdown`; do not edit by hand. Each example that "
            "triggers a rule shows what shapelint says on it, and what `--fix` writes, "
            "exactly: tests/test_rule_catalog.py holds the analysis to it. `--fix` applies "
            "safe fixes only; `--unsafe-fixes` also those marked unsafe.",
            "",
            "| Code | Name | Severity | Fix | Summary |",
            "| --- | --- | --- | --- | --- |",
        ]
        for r in rules:
            off = " (off by default)" if not r.default else ""
            fix = r.fix.short if r.fix else ""
            out.append(
                f"| [{r.code}](#{r.code.lower()}) | {r.name} | {r.severity} | {fix} "
                f"| {r.summary}{off} |"
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
        if _judged_on_paths(r):
            out += [_on_paths(r), ""]
        if r.fix:
            out += [f"Fix ({r.fix.label()}): {r.fix.description}", ""]
        if r.invalid:
            out += ["Triggers on:", ""]
            for ex in r.invalid:
                out += _fence("python", ex.source) + ["shapelint says:", ""]
                out += _fence("text", _said(ex))
                for title, fixed in _fixes(ex):
                    out += [f"{title}:", ""] + _fence("python", fixed)
        if r.valid:
            out += ["Does not trigger on:", ""]
            for ex in r.valid:
                out += _fence("python", ex)
    return "\n".join(out)


def _fence(lang: str, text: str) -> list[str]:
    return [f"```{lang}", text.rstrip("\n"), "```", ""]


def render_json(rules: list[Rule], single: bool = False) -> str:
    data = [
        {
            "code": r.code,
            "name": r.name,
            "severity": r.severity,
            "summary": r.summary,
            "explanation": r.explanation,
            "default": r.default,
            "any_path": r.any_path,
            "fix": None
            if r.fix is None
            else {
                "description": r.fix.description,
                "safety": r.fix.safety,
                "unsafe": r.fix.unsafe or None,
                "unsafe_when": r.fix.unsafe_when or None,
            },
            "invalid": [
                {
                    "source": ex.source,
                    "expect": list(ex.expect),
                    "fixed": ex.fixed,
                    "unsafe_fixed": ex.unsafe_fixed,
                }
                for ex in r.invalid
            ],
            "valid": list(r.valid),
        }
        for r in rules
    ]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
