"""GitHub workflow commands: diagnostics (`shapelint check --format github`) and
cost notices (`shapelint cost --format github`) as annotations on the lines."""

from __future__ import annotations

import os
from pathlib import Path

from shapelint.diagnostics import Diagnostic, safe_text

_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(s: str) -> str:
    """A workflow command's message, escaped as the Actions runner unescapes it."""
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    """A workflow command's property value: as data, plus ':' and ','."""
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def workflow_command(kind: str, message: str, **props: object) -> str:
    """`::kind k=v,...::message` with every part escaped; None properties are left out.
    Control characters other than the runner's own (CR, LF) would reach the log raw:
    they are written as Python escapes first."""
    parts = ",".join(
        f"{k}={escape_property(safe_text(str(v)))}" for k, v in props.items() if v is not None
    )
    data = escape_data(safe_text(message))
    return f"::{kind} {parts}::{data}" if parts else f"::{kind}::{data}"


def github_path(path: str) -> str:
    """GitHub resolves annotation paths against the workspace: relative, forward slashes."""
    p = Path(path)
    try:
        return os.path.relpath(p.resolve(), Path.cwd().resolve()).replace(os.sep, "/")
    except (ValueError, OSError):  # another drive on Windows
        return p.as_posix()


def format_github(diags: list[Diagnostic], n_files: int) -> str:
    lines = []
    # Errors first: GitHub shows only so many annotations per step.
    rank = {"error": 0, "warning": 1, "info": 2}
    for d in sorted(diags, key=lambda d: rank.get(d.severity, 0)):
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
    from shapelint.report.numbers import flops_figure, human, si

    lines = [
        workflow_command(
            "error",
            f"{d['code']} {d['message']} (not costed)",
            file=safe_text(github_path(d["path"])),
            line=d["line"],
            title="not analyzed",
        )
        for d in report.get("not_analyzed", ())
    ]
    unit = report.get("unit", "FLOPs")
    for f in report.get("functions", []):
        if f.get("complete", True):
            continue
        # A partial total is a lower bound, and says which calls it is missing.
        lines.append(
            workflow_command(
                "notice",
                f"{f['name']}: {unit} {flops_figure(f, limit=5)}",
                file=safe_text(github_path(f["path"])),
                line=f["line"],
                title=f"{unit} (incomplete)",
            )
        )
    for c in report["calls"]:
        what = c["op"] + (f' "{c["pattern"]}"' if c.get("pattern") else "")
        if c.get("flops") is None and not c.get("complete", True):
            # A call that may cost FLOPs and whose cost is unknown: never left out.
            message = f"? ({what}; {'; '.join(c.get('notes') or ['cost unknown'])})"
        elif c.get("flops") in (None, "0"):
            continue
        else:
            formula = human(c["flops"])
            value = c.get("flops_value")
            if dims and value is not None and formula != str(value) and c.get("complete", True):
                formula += f" = {si(value)}"
            if not c.get("complete", True):
                formula = f"≥ {formula}"
            detail = [what, f"bytes {flops_figure(c, 'bytes')}", *(c.get("notes") or [])]
            message = f"{formula} ({'; '.join(detail)})"
        lines.append(
            workflow_command(
                "notice",
                message,
                file=safe_text(github_path(c["path"])),
                line=c["line"],
                col=c.get("column"),
                title=unit,
            )
        )
    return "".join(line + "\n" for line in lines)
