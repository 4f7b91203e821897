"""`shapelint cost PATH::QUALNAME`: the report of analysis/target.py. Text leads
with the target's total, then its calls, each module's calls indented under the
call that runs it."""

from __future__ import annotations

from pathlib import Path

from shapelint.notation.target import Target
from shapelint.report.numbers import flops_figure, si


def run_target(target: Target, init, inputs, dims: dict[str, int], options: dict) -> dict:
    """The target's json object; raises TargetError (a usage error) or OSError."""
    from shapelint.analysis.driver import analyze_target
    from shapelint.analysis.target import parse_assignments, target_json

    path = target.path
    text = Path(path).read_text(encoding="utf-8")
    res = analyze_target(
        path,
        text,
        target.qualname or "",
        parse_assignments(init, "--init"),
        parse_assignments(inputs, "--input"),
        options,
    )
    out = target_json(res, dims)
    out["path"] = path
    return out


def render_target(t: dict) -> str:
    # The same figure as every other face: a lower bound names the calls it misses.
    head = f"{t['path']}::{t['name']}  flops {flops_figure(t)}"
    if t["flops_value"] is not None:
        head += f" = {t['flops_value']} ({si(t['flops_value'])})"
    lines = [
        head,
        f"  bytes {flops_figure(t, 'bytes', limit=0)}"
        + (f" = {si(t['bytes_value'])}" if t["bytes_value"] is not None else ""),
    ]
    if t.get("defaults"):
        lines.append(
            "  constructor defaults: " + ", ".join(f"{k}={v!r}" for k, v in t["defaults"].items())
        )
    for c in t["calls"]:
        _render_call(c, 1, lines)
    if t["unknown"]:
        lines.append("  not costed:")
        # A call in a layer that runs n times is missing n times: one line, counted.
        runs: dict[tuple, int] = {}
        for u in t["unknown"]:
            key = (u["line"], u["op"], u["why"])
            runs[key] = runs.get(key, 0) + 1
        for (line, op, why), n in runs.items():
            times = f" (×{n})" if n > 1 else ""
            lines.append(f"    line {line}  {op}{times}: {why}")
    return "\n".join(lines) + "\n"


def _render_call(c: dict, depth: int, lines: list[str]) -> None:
    what = c["op"] + (f' "{c["pattern"]}"' if c.get("pattern") else "")
    val = f" = {si(c['flops_value'])}" if c.get("flops_value") is not None else ""
    mark = "" if c["complete"] else "  (incomplete)"
    lines.append(
        f"{'  ' * depth}{c['line']}:{c['column']}  {what}  flops {flops_figure(c, limit=0)}{val}{mark}"
    )
    for ch in c["calls"]:
        _render_call(ch, depth + 1, lines)
