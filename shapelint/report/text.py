"""The text (ruff-like) and json diagnostic formats."""

from __future__ import annotations

import json

from shapelint.diagnostics import Diagnostic, safe_text


def format_text(diags: list[Diagnostic], n_files: int, color: bool = False) -> str:
    lines = []
    for d in diags:
        loc = f"{safe_text(d.path)}:{d.line}:{d.column}:"
        code = d.code
        if color:
            loc = f"\x1b[1m{loc}\x1b[0m"
            code = f"\x1b[{31 if d.severity == 'error' else 33 if d.severity == 'warning' else 36}m{code}\x1b[0m"
        lines.append(f"{loc} {code} {d.message}")
    counts = {s: sum(1 for d in diags if d.severity == s) for s in ("error", "warning", "info")}
    files = len({d.path for d in diags})
    if diags:
        parts = [f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n]
        lines.append(
            f"Found {len(diags)} diagnostic{'s' if len(diags) != 1 else ''} "
            f"({', '.join(parts)}) in {files} of {n_files} file{'s' if n_files != 1 else ''}."
        )
    else:
        lines.append(f"All checks passed! ({n_files} file{'s' if n_files != 1 else ''} checked)")
    return "\n".join(lines) + "\n"


def format_json(diags: list[Diagnostic], n_files: int) -> str:
    rows = [{**d.to_json(), "path": safe_text(d.path)} for d in diags]
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"


def format_statistics(diags: list[Diagnostic]) -> str:
    """`--statistics`: how many findings of each code, most first (as ruff prints them)."""
    from shapelint.rules import RULES

    counts: dict[str, int] = {}
    for d in diags:
        counts[d.code] = counts.get(d.code, 0) + 1
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    width = max((len(str(n)) for _, n in rows), default=1)
    lines = []
    for code, n in rows:
        rule = RULES.get(code)
        severity = rule.severity if rule else "error"
        summary = rule.summary if rule else ""
        lines.append(f"{n:>{width}}  {code}  {severity:<7}  {summary}".rstrip())
    return "".join(line + "\n" for line in lines)
