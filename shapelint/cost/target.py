"""`shapelint cost PATH::QUALNAME`: the report of analysis/target.py in every face.
Text leads with the target's total, then its calls, each module's calls indented
under the call that runs it; markdown and github say the same."""

from __future__ import annotations

import ast
from pathlib import Path

from shapelint.diagnostics import safe_text
from shapelint.notation.target import Target
from shapelint.report.conventions import convention_lines, conventions_json
from shapelint.report.numbers import unit_figure


def run_target(target: Target, init, inputs, dims: dict[str, int], options: dict) -> dict:
    """The target's json object; raises TargetError (a usage error) or OSError."""
    from shapelint.analysis.target import parse_assignments

    path = target.path
    text = Path(path).read_text(encoding="utf-8")
    init_, inputs_ = parse_assignments(init, "--init"), parse_assignments(inputs, "--input")
    return target_report(path, text, target.qualname or "", init_, inputs_, dims, options)


def target_report(
    path: str, text: str, qual: str, init: dict, inputs: dict, dims: dict[str, int], options
) -> dict:
    """analysis/target.py's json of one target, with what every face adds: its
    path, its definition's line, the conventions its figures rest on."""
    from shapelint.analysis.driver import analyze_target
    from shapelint.analysis.target import target_json

    res = analyze_target(path, text, qual, init, inputs, options)
    out = target_json(res, dims)
    out["path"] = path
    out["line"] = definition_line(text, qual)
    out["conventions"] = conventions_json(res.records)
    return out


def definition_line(text: str, qual: str) -> int:
    """The line of the `class` or `def` qual names (1 if it is not found there:
    an annotation needs a line that exists)."""
    body: list[ast.stmt] = ast.parse(text).body
    line = 1
    for part in qual.split("."):
        node = next(
            (
                n
                for n in body
                if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and n.name == part
            ),
            None,
        )
        if node is None:
            return line
        line, body = node.lineno, node.body
    return line


def summary_lines(t: dict) -> list[str]:
    """The target's head: total, bytes, the defaults applied, the conventions its
    figures rest on. Every face prints these lines."""
    unit = t.get("unit", "FLOPs")
    lines = [
        f"{t['path']}::{t['name']}  {unit_figure(t, unit)}",
        f"  bytes {unit_figure(t, 'B', key='bytes', limit=0)}",
    ]
    if t.get("defaults"):
        lines.append(
            "  constructor defaults: " + ", ".join(f"{k}={v!r}" for k, v in t["defaults"].items())
        )
    lines += [f"  note: {line}" for line in convention_lines(t)]
    return lines


def not_costed_lines(t: dict) -> list[str]:
    if not t["unknown"]:
        return []
    lines = ["  not costed:"]
    # A call in a layer that runs n times is missing n times: one line, counted.
    runs: dict[tuple, int] = {}
    for u in t["unknown"]:
        key = (u["line"], u["op"], u["why"])
        runs[key] = runs.get(key, 0) + 1
    for (line, op, why), n in runs.items():
        times = f" (×{n})" if n > 1 else ""
        lines.append(f"    line {line}  {op}{times}: {why}")
    return lines


def call_rows(t: dict) -> list[tuple[int, dict]]:
    """(depth, call) for every call of the target's tree, depth-first."""
    rows: list[tuple[int, dict]] = []

    def walk(c: dict, depth: int) -> None:
        rows.append((depth, c))
        for ch in c["calls"]:
            walk(ch, depth + 1)

    for c in t["calls"]:
        walk(c, 1)
    return rows


def _what(c: dict) -> str:
    return c["op"] + (f' "{c["pattern"]}"' if c.get("pattern") else "")


def render_target(t: dict) -> str:
    # The same figure as every other face: a lower bound names the calls it misses.
    unit = t.get("unit", "FLOPs")
    lines = summary_lines(t)
    for depth, c in call_rows(t):
        mark = "" if c["complete"] else "  (incomplete)"
        lines.append(
            f"{'  ' * depth}{c['line']}:{c['column']}  {_what(c)}  "
            f"{unit_figure(c, unit, limit=0)}{mark}"
        )
    lines += not_costed_lines(t)
    return "\n".join(lines) + "\n"


def _md(s: str) -> str:
    return safe_text(s).replace("|", "\\|")


def render_target_markdown(t: dict) -> str:
    unit = t.get("unit", "FLOPs")
    head, *rest = summary_lines(t)
    lines = [f"### `{_md(t['path'])}::{_md(t['name'])}`: {_md(unit_figure(t, unit))}", ""]
    lines += [f"- {_md(line.strip())}" for line in rest]
    lines += ["", f"| Line | Call | {unit} |", "| --- | --- | --- |"]
    for depth, c in call_rows(t):
        indent = "&nbsp;&nbsp;" * (depth - 1)
        fig = unit_figure(c, unit, limit=0) + ("" if c["complete"] else " (incomplete)")
        lines.append(f"| {c['line']}:{c['column']} | {indent}`{_md(_what(c))}` | {_md(fig)} |")
    missing = not_costed_lines(t)
    if missing:
        lines += ["", "Not costed:", ""]
        lines += [f"- {_md(line.strip())}" for line in missing[1:]]
    return "\n".join(lines) + "\n"


def render_target_github(t: dict) -> str:
    """One notice on the target's definition: the summary every face prints."""
    from shapelint.report.github import github_path, workflow_command

    unit = t.get("unit", "FLOPs")
    message = "\n".join(line.strip() for line in summary_lines(t) + not_costed_lines(t))
    return (
        workflow_command(
            "notice",
            message,
            file=safe_text(github_path(t["path"])),
            line=t.get("line") or 1,
            title=f"{unit} of {t['name']}" + ("" if t["complete"] else " (lower bound)"),
        )
        + "\n"
    )


TARGET_RENDERERS = {
    "text": render_target,
    "markdown": render_target_markdown,
    "github": render_target_github,
}
