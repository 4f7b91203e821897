"""`shapelint cost`'s report: the symbolic FLOPs and bytes of every call and
function, evaluated at the bound dims, with a roofline per chip."""

from __future__ import annotations

from shapelint.diagnostics import safe_text
from shapelint.ops.dtypes import short_name
from shapelint.report import markdown as md
from shapelint.report.numbers import complete, evaluate, flops_figure, si, value_figure


def roofline_dtype(dtype: str | None) -> str:
    """The hardware table's column for this dtype (fp32 where the table has none)."""
    from shapelint.napkin.hardware import DTYPES

    short = short_name(dtype or "float32")
    return short if short in DTYPES else "fp32"


def add_roofline(report: dict, hardware: str, dtype: str | None, table=None) -> None:
    """Per call and function with bound numbers: intensity, the chip's critical
    intensity, memory- or compute-bound, and the lower-bound time."""
    from shapelint.napkin.formulas import roofline_for

    peak_dtype = roofline_dtype(dtype)
    for item in report["calls"] + report["functions"]:
        f, b = item.get("flops_value"), item.get("bytes_value")
        other = item.get("other_flops_value") or 0
        if f is None or b is None or b == 0:
            item["roofline"] = None
            continue
        # Elementwise work runs on the same units: it counts toward intensity too.
        item["roofline"] = roofline_for(f + other, b, hardware, peak_dtype, table)


def build_report(results, dims: dict[str, int]) -> dict:
    """Calls and functions; with dims, each figure is also evaluated, int parameters
    left unbound taking their default values (`n_heads: int = 8`)."""
    calls, functions, unread = [], [], []
    for r in results:
        # A file the tool could not read or finish (SHP0xx) has costs nobody counted:
        # the report names it rather than leaving it out in silence.
        unread += [d.to_json() for d in r.diagnostics if d.code.startswith("SHP0")]
        defaults = {(safe_text(f["path"]), f["name"]): f.get("defaults") or {} for f in r.functions}
        for c in r.calls:
            c = dict(c, path=safe_text(c["path"]))
            if dims:
                env = {**defaults.get((c["path"], c["function"]), {}), **dims}
                _evaluate_item(c, env)
            calls.append(c)
        for f in r.functions:
            f = dict(f, path=safe_text(f["path"]))
            if dims:
                _evaluate_item(f, {**(f.get("defaults") or {}), **dims})
            functions.append(f)
    report = {"calls": calls, "functions": functions}
    if unread:
        report["not_analyzed"] = unread
    return report


def not_analyzed_lines(report: dict) -> list[str]:
    return [
        f"{d['path']}:{d['line']}:{d['column']}: {d['code']} {d['message']} (not costed)"
        for d in report.get("not_analyzed", ())
    ]


def _evaluate_item(item: dict, env: dict[str, int]) -> None:
    # A partial sum evaluated is no figure: the value of an incomplete item is None.
    for key in ("flops", "other_flops", "bytes"):
        item[f"{key}_value"] = evaluate(item[key], env) if complete(item, key) else None


def render_text(report: dict, dims: dict[str, int]) -> str:
    by_fn: dict[tuple[str, str], list[dict]] = {}
    for c in report["calls"]:
        by_fn.setdefault((c["path"], c["function"]), []).append(c)
    out = [report["roofline_header"], ""] if report.get("roofline_header") else []
    missing = not_analyzed_lines(report)
    out += [*missing, ""] if missing else []
    unit = report.get("unit", "FLOPs")
    fn_index = {(f["path"], f["name"]): f for f in report["functions"]}
    for (path, fn), calls in by_fn.items():
        f = fn_index.get((path, fn))
        head = f"{path}::{fn}"
        if f is not None:
            head += f"  {unit} {flops_figure(f)}"
            if dims and f.get("complete", True):
                head += f" = {si(f.get('flops_value'))}"
        out.append(head)
        for c in calls:
            flops = flops_figure(c)
            if c["flops"] in (None, "0") and c.get("notes"):
                flops += f" ({c['notes'][0]})"
            val = f" = {value_figure(c)}" if dims and c.get("complete", True) else ""
            what = c["op"] + (f' "{c["pattern"]}"' if c.get("pattern") else "")
            out.append(f"  {c['line']}:{c['column']}  {what}")
            out.append(
                f"      {unit} {flops}{val}   bytes {flops_figure(c, 'bytes')}"
                + (f" = {value_figure(c, 'bytes')}" if dims and complete(c, "bytes") else "")
            )
            rl = c.get("roofline")
            if rl:
                out.append(
                    f"      intensity {rl['intensity']:.3g} FLOP/B vs {rl['critical_intensity']:.3g} on "
                    f"{rl['hardware']}: {rl['bound']}-bound, >= {rl['seconds'] * 1e6:.3g} us"
                )
        out.append("")
    if not by_fn:
        return "\n".join([*missing, "No calls with a cost found.", ""])
    return "\n".join(out)


def render_markdown(report: dict, dims: dict[str, int]) -> str:
    lines = [f"_{report['roofline_header']}_", ""] if report.get("roofline_header") else []
    lines += [f"- **Not costed:** {md.code(m)}" for m in not_analyzed_lines(report)]
    lines += [""] if report.get("not_analyzed") else []
    unit = report.get("unit", "FLOPs")
    lines += [
        f"| Function | Line | {unit} | Bytes |"
        + (f" {unit} (value) | Bytes (value) |" if dims else ""),
        "| --- | --- | --- | --- |" + (" --- | --- |" if dims else ""),
    ]
    for f in report["functions"]:
        # Names, paths and the calls a figure misses come from the files: inert spans.
        byts = md.code(flops_figure(f, "bytes", limit=0))
        where = md.code(f"{f['path']}:{f['line']}")
        row = f"| {md.code(f['name'])} | {where} | {md.code(flops_figure(f))} | {byts} |"
        if dims:
            row += f" {value_figure(f)} | {value_figure(f, 'bytes')} |"
        lines.append(row)
    return "\n".join(lines) + "\n"
