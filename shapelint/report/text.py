"""The text (ruff-like) and json diagnostic formats."""

from __future__ import annotations

import json

from shapelint.diagnostics import Diagnostic


def format_text(diags: list[Diagnostic], n_files: int, color: bool = False) -> str:
    lines = []
    for d in diags:
        loc = f"{d.path}:{d.line}:{d.column}:"
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
    return json.dumps([d.to_json() for d in diags], indent=2, ensure_ascii=False) + "\n"
