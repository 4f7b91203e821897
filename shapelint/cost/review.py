"""`shapelint cost --diff BASE` as a pull-request comment: the verdict first, then
the rows that changed with their totals in SI units, the change and its percent;
what cannot be compared (calls of unknown cost) is listed apart, as `?`, never as
no change and never as 0."""

from __future__ import annotations

import json

from shapelint.cost.diff import Delta, FunctionChange, ModuleChange
from shapelint.report import markdown as md
from shapelint.report.numbers import human, si, unknown_calls

MARKER = "<!-- shapelint-cost-diff -->"

_ARROW = {"more": "▲", "less": "▼", "changed": "◆"}
_SAID = {
    "more": "more expensive",
    "less": "cheaper",
    "changed": "changed (which way depends on the sizes)",
    "new": "new",
    "removed": "removed",
    "incomplete": "with calls of unknown cost",
}


# ---------------------------------------------------------------------- verdict


def verdict(changes: list[FunctionChange]) -> tuple[str, str]:
    """(status, sentence): the target's row decides where there is one, else the
    functions together."""
    target = next((c for c in changes if c.target), None)
    counts = {s: sum(1 for c in changes if c.status == s) for s in _SAID}
    if target is not None:
        status = target.status
    elif counts["more"] and counts["less"]:
        status = "mixed"
    else:
        status = next((s for s in ("more", "less", "changed", "new", "removed") if counts[s]), "")
        status = status or ("incomplete" if counts["incomplete"] else "same")
    parts = [f"{n} {_SAID[s]}" for s, n in counts.items() if n]
    if status == "same":
        return status, "No function's FLOPs or bytes changed."
    return status, f"Functions: {', '.join(parts)}." if parts else ""


def _headline(status: str) -> str:
    return {
        "more": "▲ more expensive",
        "less": "▼ cheaper",
        "changed": "◆ changed",
        "mixed": "▲▼ some more expensive, some cheaper",
        "new": "new",
        "removed": "removed",
        "incomplete": "? not known: calls of unknown cost",
        "same": "no change",
    }[status]


# ---------------------------------------------------------------------- cells


def figure(expr: str | None, value: int | None, whole: bool, unit: str) -> str:
    """One side of a row: `213 GFLOPs`, `` `2·b·d` = 8.39 MFLOPs``, `` `2·b·d` FLOPs``,
    a lower bound `≥ ...`, `?` where nothing is known, `—` where the function is
    not there."""
    if expr is None:
        return "—" if whole else "?"
    if not whole:
        return "?" if expr == "0" else f"≥ {md.code(human(expr))} {unit}"
    formula = human(expr)
    if value is None:
        return f"{md.code(formula)} {unit}"
    if formula == str(value):
        return si(value, unit)
    return f"{md.code(formula)} = {si(value, unit)}"


def percent(p: float | None) -> str:
    if p is None:
        return ""
    text = f"{p:+,.0f}%" if abs(p) >= 1000 else f"{p:+.3g}%"
    return text.replace("-", "−")


def change(d: Delta, whole: bool, unit: str | None) -> str:
    """Δ of one metric: the arrow, the difference (SI where the values are known,
    else the factor or the formula) and the percent; `?` for lower bounds."""
    if d.direction in ("new", "removed"):
        return d.direction
    if d.direction == "same":
        return "" if whole else "?"
    if not whole:
        return "?"
    arrow = _ARROW.get(d.direction, "")
    if d.before_value is not None and d.after_value is not None:
        diff = d.after_value - d.before_value
        sign = "+" if diff > 0 else "−" if diff < 0 else "±"
        text = f"{arrow} {sign}{si(abs(diff), unit)}"
    elif d.change:
        text = f"{arrow} {md.code(d.change)}"
    else:
        text = f"{arrow} {md.code(human(d.delta))}" if d.delta else arrow
    pct = percent(d.percent)
    return f"{text} ({pct})" if pct else text


def _sides(c: FunctionChange, key: str, unit: str = "B") -> tuple[str, str, str]:
    d: Delta = getattr(c, key)
    whole = c.complete if key == "flops" else c.bytes_complete
    return (
        figure(d.before, d.before_value, whole or d.before is None, unit),
        figure(d.after, d.after_value, whole or d.after is None, unit),
        change(d, whole, unit),
    )


def params_change(c: FunctionChange) -> str:
    """`; params 85.5k → 79.4k, ▼ −6.14k (−7.19%)` for a module target, `?` for a
    side not known; nothing for a function."""
    d = c.params
    if d is None:
        return ""

    def side(expr: str | None, value: int | None) -> str:
        if expr is None:
            return "?"
        return si(value) if value is not None else md.code(human(expr))

    text = f"; params {side(d.before, d.before_value)} → {side(d.after, d.after_value)}"
    if d.before is None or d.after is None:
        return text
    if d.before_value is not None and d.after_value is not None:
        if d.after_value == d.before_value:
            return text + ", the same"
        diff = d.after_value - d.before_value
        delta = f"{_ARROW.get(d.direction, '')} {'+' if diff > 0 else '−'}{si(abs(diff))}"
        pct = percent(d.percent)
        return text + f", {delta}" + (f" ({pct})" if pct else "")
    return text + (f", {change(d, True, '')}" if d.direction != "same" else ", the same")


def _name(c: FunctionChange) -> str:
    return f"{md.code(c.name)} (target)" if c.target else md.code(c.name)


def _where(c: FunctionChange, base: str) -> str:
    where = md.code(f"{c.path}:{c.line}")
    return where + (f" at {md.code(base)}" if c.status == "removed" else "")


# ---------------------------------------------------------------------- faces


def render_markdown(
    changes: list[FunctionChange], base: str, dims: dict[str, int], unit: str = "FLOPs"
) -> str:
    status, sentence = verdict(changes)
    lines = [MARKER, f"### shapelint: {_headline(status)} since {md.code(base, table=False)}", ""]
    target = next((c for c in changes if c.target), None)
    if target is not None:
        f, b = _sides(target, "flops", unit), _sides(target, "bytes")
        lines += [
            f"**{_name(target)}, {md.code(f'{target.path}:{target.line}', table=False)}: {unit} {f[0]} → {f[1]}"
            + (f", {f[2]}" if f[2] else "")
            + f"**; bytes {b[0]} → {b[1]}"
            + (f", {b[2]}" if b[2] else "")
            + params_change(target)
            + ".",
            "",
        ]
    if target is not None and target.modules:
        lines += _module_rows(target, unit)
    if sentence:
        lines += [sentence, ""]
    if dims:
        lines += ["With " + ", ".join(f"{k}={v}" for k, v in sorted(dims.items())) + ".", ""]
    changed = [c for c in changes if c.status != "incomplete"]
    if changed:
        lines += [
            f"| Function | Where | {unit} before | {unit} after | Δ {unit} "
            "| Bytes before | Bytes after | Δ Bytes |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for c in changed:
            f, b = _sides(c, "flops", unit), _sides(c, "bytes")
            lines.append(f"| {_name(c)} | {_where(c, base)} | {' | '.join((*f, *b))} |")
        lines.append("")
    unknown = [c for c in changes if c.status == "incomplete" or not c.complete]
    if unknown:
        lines += [
            f"<details><summary>{len(unknown)} with calls of unknown cost: their totals "
            "are lower bounds (≥) or ?, so the diff cannot say what changed there"
            "</summary>",
            "",
            f"| Function | Where | {unit} now | Calls of unknown cost |",
            "| --- | --- | --- | --- |",
        ]
        for c in unknown:
            now = _sides(c, "flops", unit)[1]
            why = unknown_calls({"unknown": c.unknown}) or "calls of unknown cost"
            lines.append(
                f"| {_name(c)} | {_where(c, base)} | {now} | {md.code(why) if c.unknown else why} |"
            )
        lines += ["", "</details>", ""]
    lines.append(
        "FLOPs count 2 per multiply-add of the matrix products torch runs "
        "(as `torch.utils.flop_counter`)"
        + ("; MACs count 1, half the FLOPs" if unit == "MACs" else "")
        + "; bytes are the tensors read and written."
    )
    for n in dict.fromkeys(n for c in changes for n in c.notes):
        lines += ["", f"Note: {md.prose(n)}."]
    return "\n".join(lines) + "\n"


# Module rows shown before the rest are counted in one line.
_MODULE_ROWS = 40


def _module_rows(target: FunctionChange, unit: str) -> list[str]:
    """The target's per-module rows that changed: params and FLOPs before and
    after with the change; a figure not known is `?`, a module not there `—`."""
    lines = [
        f"| Module | Kind | Params before | Params after | Δ params | {unit} before "
        f"| {unit} after | Δ {unit} |",
        "| --- | --- | ---: | ---: | --- | ---: | ---: | --- |",
    ]
    for m in target.modules[:_MODULE_ROWS]:
        cells = [md.code(m.name), md.text(m.kind)]
        for d, u in ((m.params, None), (m.flops, unit)):
            cells += [
                _module_side(m, d, False, u),
                _module_side(m, d, True, u),
                change(d, d.before is not None and d.after is not None, u).strip() or "the same",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    more = len(target.modules) - _MODULE_ROWS
    if more > 0:
        lines.append(f"| and {more} more modules | | | | | | | |")
    return [*lines, ""]


def _changed_leaves(target: FunctionChange, unit: str) -> list[str]:
    """The changed modules none of whose submodules changed (where the change is),
    one line each: `transformer.h.0-11.mlp.c_fc: 2.1 MFLOPs → 1.57 MFLOPs (−25%)`."""
    names = [m.name for m in target.modules]
    out = []
    for m in target.modules:
        if any(n.startswith(m.name + ".") for n in names):
            continue
        if m.name == target.name and len(names) > 1:
            continue  # the root: its submodules' names carry no prefix of it
        was, now = _module_side(m, m.flops, False, unit), _module_side(m, m.flops, True, unit)
        pct = percent(m.flops.percent)
        out.append(f"{m.name}: {was} → {now}" + (f" ({pct})" if pct else ""))
    return out[:_MODULE_ROWS]


def _module_side(m: ModuleChange, d: Delta, after: bool, unit: str | None) -> str:
    """One side (BASE, or now where after) of a module row's metric d: `—` where the
    module is not there, `?` where the figure is not known."""
    if m.status == ("removed" if after else "new"):
        return "—"
    expr, value = (d.after, d.after_value) if after else (d.before, d.before_value)
    if expr is None:
        return "?"
    if unit is None:  # a count, compact as the headline's params
        return si(value) if value is not None else md.code(human(expr))
    return figure(expr, value, True, unit)


def render_json(
    changes: list[FunctionChange], base: str, dims: dict[str, int], unit: str = "FLOPs"
) -> str:
    status, sentence = verdict(changes)
    data = {
        "base": base,
        "dims": dims,
        "unit": unit,
        "verdict": status,
        "summary": sentence,
        "changes": [c.to_json() for c in changes],
    }
    return json.dumps(data, indent=2) + "\n"


def render_github(
    changes: list[FunctionChange], base: str, dims: dict[str, int], unit: str = "FLOPs"
) -> str:
    """A notice on each changed function's line in the working tree; the functions
    that cannot be compared in one notice, as `?`."""
    from shapelint.report.github import workflow_command

    out = []
    for c in changes:
        if c.status in ("removed", "incomplete"):
            continue  # no line in the working tree; not compared (below)
        f = _sides(c, "flops", unit)
        title = {"new": "new function"}.get(c.status, f"{unit} {c.status} since {base}")
        msg = f"{c.name}{' (target)' if c.target else ''}: {f[0]} → {f[1]}"
        if f[2] and c.status != "new":
            msg += f", {f[2]}"
        if not c.complete:
            msg += f" (lower bounds: {unknown_calls({'unknown': c.unknown}) or 'calls of unknown cost'})"
        msg += params_change(c).replace("`", "")
        msg += "".join(f"\nmodule {line}" for line in _changed_leaves(c, unit))
        msg += "".join(f"\nnote: {n}" for n in c.notes)
        out.append(workflow_command("notice", msg.replace("`", ""), file=c.path, line=c.line,
                                    title=title))  # fmt: skip
    unknown = [c for c in changes if c.status == "incomplete"]
    if unknown:
        names = ", ".join(f"{c.path}::{c.name}" for c in unknown[:10])
        more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        out.append(
            workflow_command(
                "notice",
                f"{unit} ? for {len(unknown)} functions with calls of unknown cost "
                f"(lower bounds that did not move, so not compared): {names}{more}",
                title=f"{unit} not known since {base}",
            )
        )
    return "".join(line + "\n" for line in out)


RENDERERS = {
    "markdown": render_markdown,
    "text": render_markdown,
    "json": render_json,
    "github": render_github,
}
