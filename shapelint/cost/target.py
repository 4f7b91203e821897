"""`shapelint cost PATH::QUALNAME`: the report of analysis/target.py in every face.
Text leads with the target's total, then its calls, each module's calls indented
under the call that runs it; markdown and github say the same."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from shapelint.diagnostics import safe_text
from shapelint.notation.target import Target
from shapelint.report.conventions import (
    convention_lines,
    conventions_json,
    loss_convention,
    mode_convention,
)
from shapelint.report.numbers import human, same_file, si, unit_figure


def run_target(
    target: Target, init, inputs, dims: dict[str, int], options: dict, training: bool = True
) -> dict:
    """The target's json object, the module in training mode as built or in eval
    mode (training False); raises TargetError (a usage error) or OSError."""
    from shapelint.analysis.target import parse_assignments

    path = target.path
    text = Path(path).read_text(encoding="utf-8")
    init_, inputs_ = parse_assignments(init, "--init"), parse_assignments(inputs, "--input")
    return target_report(path, text, target.qualname or "", init_, inputs_, dims, options, training)


def target_report(
    path: str,
    text: str,
    qual: str,
    init: dict,
    inputs: dict,
    dims: dict[str, int],
    options,
    training: bool = True,
) -> dict:
    """analysis/target.py's json of one target, with what every face adds: its
    path, its definition's line, the conventions its figures rest on."""
    from shapelint.analysis.driver import analyze_target
    from shapelint.analysis.target import TargetError, target_json

    res = analyze_target(path, text, qual, init, inputs, options, training)
    broken = broken_facts(res.facts, dims)
    if broken:
        # The figures are formulas that hold where the run's comparisons of sizes do;
        # at sizes that break one, the forward raises (the assert, the raise) there.
        raise TargetError(
            f"--dim {', '.join(f'{k}={v}' for k, v in dims.items())}: the forward establishes "
            + ", ".join(broken)
            + " (an assert or a raise on its way), which these sizes break: it raises there, "
            "so no figure holds"
        )
    out = target_json(res, dims)
    out["path"] = path
    out["line"] = definition_line(text, qual)
    out["conventions"] = (
        conventions_json(res.records) + mode_convention(res.mode) + loss_convention(out["unsummed"])
    )
    if res.params is not None:  # a module (a function has no parameters())
        from shapelint.analysis.parameters import params_json

        out.update(params_json(res.params, dims))
    return out


def broken_facts(facts, dims: dict[str, int]) -> list[str]:
    """The facts `e >= 0` of a target's run that the bound dims break, as people
    read them (`T ≤ 1024`); a fact over a name left free is not judged."""
    out = []
    for e in facts:
        try:
            v = e.evaluate(dims)
        except (KeyError, ValueError, ZeroDivisionError):
            continue
        if v < 0:
            out.append(fact_text(e))
    return sorted(out)


def fact_text(e) -> str:
    """`e >= 0` as a comparison: its negative terms moved right (`1024 - T` is
    `T ≤ 1024`)."""
    from shapelint.notation.symbolic import Expr

    pos = Expr({m: c for m, c in e.terms.items() if c > 0})
    neg = Expr({m: -c for m, c in e.terms.items() if c < 0})
    return f"{neg.to_human()} ≤ {pos.to_human()}"


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
    figures rest on. Every face prints these lines; for a forward that would raise,
    its errors instead."""
    if t.get("diagnostics"):
        return error_lines(t)
    unit = t.get("unit", "FLOPs")
    lines = [
        f"{t['path']}::{t['name']}  {unit_figure(t, unit)}",
        f"  bytes {unit_figure(t, 'B', key='bytes', limit=0)}",
    ]
    if t.get("train"):
        lines += train_lines(t)
    if "params" in t:
        lines.append("  " + params_line(t))
    if t.get("defaults"):
        lines.append(
            "  constructor defaults: " + ", ".join(f"{k}={v!r}" for k, v in t["defaults"].items())
        )
    lines += [f"  note: {line}" for line in convention_lines(t)]
    return lines + conditional_lines(t)


def conditional_lines(t: dict) -> list[str]:
    """The errors found on one of alternatives the run cannot decide, where another
    may run: warnings, each with its condition and the calls that lead to it (the
    figures above are of the alternatives, a lower bound at most)."""
    lines = []
    for d in t.get("conditional", []):
        lines.append(
            f"  warning: {d['path']}:{d['line']}:{d['column']}: {d['code']} {d['message']}"
        )
        lines.append(f"    in {d['call_path']}")
    return lines


def train_lines(t: dict) -> list[str]:
    """`--train`: the forward, its backward under `out.sum().backward()` and the
    step, each in the unit of the report; the calls whose backward is not known;
    the bytes the forward saves for backward (ops/saved.py) and the calls whose
    saved tensors are not known."""
    unit = t.get("unit", "FLOPs")
    raises = t.get("backward_raises") or []
    backward = raises[0]["why"] if raises else unit_figure(t, unit, key="flops_backward", limit=0)
    lines = [
        f"  forward   {unit_figure(t, unit, limit=0)}",
        f"  backward  {backward}",
        f"  step      {unit_figure(t, unit, key='flops_step', limit=0)} (forward + backward)",
    ]
    for u in raises[1:5]:
        lines.append(f"    also: {u['why']}")
    for u in t.get("backward_unknown", [])[:5]:
        lines.append(f"    backward not known: line {u['line']}  {u['op']}: {u['why']}")
    if "activation_bytes" in t:
        figure = unit_figure(t, "B", key="activation_bytes", limit=0)
        lines.append(f"  activations {figure} (saved for backward)")
        for u in t.get("activation_unknown", [])[:5]:
            lines.append(f"    saved not known: line {u['line']}  {u['op']}: {u['why']}")
    return lines


def count_figure(t: dict, key: str) -> str:
    """An element count for people: `124,475,904 (124M)`, a formula with its value
    where the dims give one, `≥ ...` for what is known of a partial count, `?`."""
    expr = t[key]
    if expr == "?":
        known = t.get(f"{key}_known")
        return f"≥ {human(known)}" if known not in (None, "0") else "?"
    formula, value = human(expr), t.get(f"{key}_value")
    if value is None:
        return formula
    shown = f"{value:,}" + (f" ({si(value)})" if value >= 1000 else "")
    return shown if formula == str(value) else f"{formula} = {shown}"


def params_line(t: dict) -> str:
    line = (
        f"params {count_figure(t, 'params')}, trainable {count_figure(t, 'trainable_params')}, "
        f"buffers {count_figure(t, 'buffers')}"
    )
    if t.get("params_unknown"):
        shown = ", ".join(t["params_unknown"][:3])
        more = f" and {len(t['params_unknown']) - 3} more" if len(t["params_unknown"]) > 3 else ""
        line += f" (not known: {shown}{more})"
    return line


def not_costed_lines(t: dict) -> list[str]:
    if not t["unknown"]:
        return []
    lines = ["  not costed:"]
    # A call in a layer that runs n times is missing n times: one line, counted.
    runs: dict[tuple, int] = {}
    for u in t["unknown"]:
        key = (_where(t, u), u["op"], u["why"])
        runs[key] = runs.get(key, 0) + u.get("times", 1)
    for (where, op, why), n in runs.items():
        times = f" (×{n})" if n > 1 else ""
        lines.append(f"    {where}  {op}{times}: {why}")
    return lines


def _where(t: dict, u: dict) -> str:
    """`line 14`, or `lib.py:5` for an entry in a file other than the target's,
    named as the target's path names its own (as the warnings name theirs)."""
    path = u.get("path")
    if path is None or same_file(path, t.get("path")):
        return f"line {u['line']}"
    from shapelint.analysis.entry_points import shown_path

    return f"{shown_path(path, t['path'])}:{u['line']}"


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


def napkin_lines(t: dict) -> list[str]:
    from shapelint.cost.napkin import napkin_lines as lines

    return lines(t["napkin"])


def _what(c: dict) -> str:
    return c["op"] + (f' "{c["pattern"]}"' if c.get("pattern") else "")


@dataclass(frozen=True)
class View:
    """How much of a target a face shows: the per-module table to `depth` (rows
    that hold and cost nothing with all_rows), or the full call tree."""

    depth: int = 4
    tree: bool = False
    all_rows: bool = False
    dims: dict = field(default_factory=dict)


def _table(t: dict, view: View, markdown: bool = False) -> list[str]:
    if view.tree:
        return []
    from shapelint.cost.table import table_lines, table_markdown

    make = table_markdown if markdown else table_lines
    return make(t, view.dims, view.depth, view.all_rows)


def render_target(t: dict, view: View = View()) -> str:
    if t.get("diagnostics"):
        return "\n".join(error_lines(t)) + "\n"
    # The same figure as every other face: a lower bound names the calls it misses.
    unit = t.get("unit", "FLOPs")
    lines = summary_lines(t)
    table = _table(t, view)
    if table:
        lines += ["", *table, ""]
    else:
        for depth, c in call_rows(t):
            mark = "" if c["complete"] else "  (incomplete)"
            if c.get("repeated"):
                mark += "  (its calls as listed above)"
            lines.append(
                f"{'  ' * depth}{c['line']}:{c['column']}  {_what(c)}  "
                f"{unit_figure(c, unit, limit=0)}{mark}"
            )
    lines += not_costed_lines(t)
    lines += ["", *napkin_lines(t)] if "napkin" in t else []
    return "\n".join(lines).rstrip("\n") + "\n"


def _md(s: str) -> str:
    return safe_text(s).replace("|", "\\|")


def render_target_markdown(t: dict, view: View = View()) -> str:
    if t.get("diagnostics"):
        head, *rest = error_lines(t)
        title = f"### `{_md(t['path'])}::{_md(t['name'])}`: {_md(head.split('  ', 1)[1])}"
        return "\n".join([title, "", *(f"- {_md(line.strip())}" for line in rest)]) + "\n"
    unit = t.get("unit", "FLOPs")
    head, *rest = summary_lines(t)
    lines = [f"### `{_md(t['path'])}::{_md(t['name'])}`: {_md(unit_figure(t, unit))}", ""]
    lines += [f"- {_md(line.strip())}" for line in rest]
    table = _table(t, view, markdown=True)
    if table:
        lines += ["", *table]
    else:
        lines += ["", f"| Line | Call | {unit} |", "| --- | --- | --- |"]
        for depth, c in call_rows(t):
            indent = "&nbsp;&nbsp;" * (depth - 1)
            fig = unit_figure(c, unit, limit=0) + ("" if c["complete"] else " (incomplete)")
            lines.append(f"| {c['line']}:{c['column']} | {indent}`{_md(_what(c))}` | {_md(fig)} |")
    missing = not_costed_lines(t)
    if missing:
        lines += ["", "Not costed:", ""]
        lines += [f"- {_md(line.strip())}" for line in missing[1:]]
    if "napkin" in t:
        head, *rest = napkin_lines(t)
        lines += ["", f"**{_md(head)}**", ""]
        lines += [f"{'  ' * _indent(line)}- {_md(line.strip())}" for line in rest]
    return "\n".join(lines) + "\n"


def _indent(line: str) -> int:
    """A napkin line's nesting: 2 spaces per level below the first."""
    return (len(line) - len(line.lstrip(" "))) // 2 - 1


def render_target_github(t: dict, view: View = View()) -> str:
    """One notice on the target's definition: what the text face prints."""
    from shapelint.report.github import github_path, workflow_command

    unit = t.get("unit", "FLOPs")
    if t.get("diagnostics"):  # each error where it happens, with its call path
        return "".join(
            workflow_command(
                "error",
                f"{d['message']} (in {d['call_path']})",
                file=safe_text(github_path(d["path"])),
                line=d["line"],
                title=d["code"],
            )
            + "\n"
            for d in t["diagnostics"]
        )
    body = summary_lines(t) + _table(t, view) + not_costed_lines(t)
    body += ["", *napkin_lines(t)] if "napkin" in t else []
    message = "\n".join(line[2:] if line.startswith("  ") else line for line in body)
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


def error_lines(t: dict) -> list[str]:
    """A forward that would raise: its errors, each with the calls that lead to it,
    and no total (a figure of a run that never finishes is no figure)."""
    n = len(t["diagnostics"])
    lines = [f"{t['path']}::{t['name']}  would raise: {n} error{'s' if n != 1 else ''}, no total"]
    if t.get("defaults"):
        lines.append(
            "  constructor defaults: " + ", ".join(f"{k}={v!r}" for k, v in t["defaults"].items())
        )
    for d in t["diagnostics"]:
        lines.append(f"  {d['path']}:{d['line']}:{d['column']}: {d['code']} {d['message']}")
        lines.append(f"    in {d['call_path']}")
    return lines
