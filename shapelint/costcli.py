"""`shapelint cost`: the symbolic FLOPs and bytes of every call and function."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from shapelint.diagnostics import safe_text

DTYPE_ALIASES = {
    "fp32": "float32",
    "float32": "float32",
    "tf32": "float32",
    "fp16": "float16",
    "half": "float16",
    "float16": "float16",
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
    "fp64": "float64",
    "float64": "float64",
    "fp8": "float8_e4m3fn",
}


def parse_dim_values(values: tuple[str, ...]) -> tuple[dict[str, int], dict[str, tuple[int, ...]]]:
    """NAME=INT (repeatable or comma-separated); a variadic dim may take NAME=2x3.

    Returns sizes by name (a variadic dim's size is its element count) and the
    axis sizes of variadic dims given as products."""
    dims: dict[str, int] = {}
    shapes: dict[str, tuple[int, ...]] = {}
    for v in values:
        for item in v.split(","):
            item = item.strip()
            if not item:
                continue
            name, sep, num = item.partition("=")
            name = name.strip()
            try:
                sizes = tuple(int(p) for p in num.lower().split("x"))
            except ValueError:
                sizes = ()
            if not sep or not name.isidentifier() or not sizes or any(s < 0 for s in sizes):
                raise click.BadParameter(
                    f"expected NAME=INT (or NAME=2x3 for a variadic dim), got {item!r}",
                    param_hint="--dim",
                )
            n = 1
            for s in sizes:
                n *= s
            dims[name] = n
            if len(sizes) > 1:
                shapes[name] = sizes
    return dims, shapes


def parse_dims(values: tuple[str, ...]) -> dict[str, int]:
    """--dim values as sizes by name (a variadic NAME=2x3 counts its elements)."""
    return parse_dim_values(values)[0]


def evaluate(expr: str | None, dims: dict[str, int]) -> int | None:
    """Value of a printed expression with dims bound, or None if a name is unbound."""
    if expr is None:
        return None
    from shapelint.notation.symbolic import parse_expr

    try:
        return parse_expr(expr).evaluate(dims)
    except (KeyError, ZeroDivisionError, ValueError):
        return None


def human(expr: str | None) -> str:
    if expr is None:
        return "?"
    from shapelint.notation.symbolic import parse_expr

    try:
        return parse_expr(expr).to_human()
    except ValueError:
        return expr


def _si(n: int | float | None) -> str:
    if n is None:
        return "?"
    for unit, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{unit}"
    return str(n)


ROOFLINE_DTYPE = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16", "float8_e4m3fn": "fp8"}


def add_roofline(report: dict, hardware: str, dtype: str | None, table=None) -> None:
    """Per call and function with bound numbers: intensity, the chip's critical
    intensity, memory- or compute-bound, and the lower-bound time."""
    from shapelint.napkin import roofline_for

    peak_dtype = ROOFLINE_DTYPE.get(dtype or "float32", "fp32")
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
    calls, functions = [], []
    for r in results:
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
    return {"calls": calls, "functions": functions}


def _evaluate_item(item: dict, env: dict[str, int]) -> None:
    for key in ("flops", "other_flops", "bytes"):
        item[f"{key}_value"] = evaluate(item[key], env)


def render_text(report: dict, dims: dict[str, int]) -> str:
    by_fn: dict[tuple[str, str], list[dict]] = {}
    for c in report["calls"]:
        by_fn.setdefault((c["path"], c["function"]), []).append(c)
    out = []
    fn_index = {(f["path"], f["name"]): f for f in report["functions"]}
    for (path, fn), calls in by_fn.items():
        f = fn_index.get((path, fn))
        head = f"{path}::{fn}"
        if f is not None:
            total = human(f["flops"])
            head += f"  flops {total}"
            if dims:
                head += f" = {_si(f.get('flops_value'))}"
            if not f.get("complete", True):
                head += "  (some calls of unknown cost)"
        out.append(head)
        for c in calls:
            flops = human(c["flops"])
            val = f" = {_si(c.get('flops_value'))}" if dims else ""
            what = c["op"] + (f' "{c["pattern"]}"' if c.get("pattern") else "")
            out.append(f"  {c['line']}:{c['column']}  {what}")
            out.append(
                f"      flops {flops}{val}   bytes {human(c['bytes'])}"
                + (f" = {_si(c.get('bytes_value'))}" if dims else "")
            )
            rl = c.get("roofline")
            if rl:
                out.append(
                    f"      intensity {rl['intensity']:.3g} FLOP/B vs {rl['critical_intensity']:.3g} on "
                    f"{rl['hardware']}: {rl['bound']}-bound, >= {rl['seconds'] * 1e6:.3g} us"
                )
        out.append("")
    if not out:
        return "No calls with a cost found.\n"
    return "\n".join(out)


def render_markdown(report: dict, dims: dict[str, int]) -> str:
    lines = [
        "| Function | Line | FLOPs | Bytes |"
        + (" FLOPs (value) | Bytes (value) |" if dims else ""),
        "| --- | --- | --- | --- |" + (" --- | --- |" if dims else ""),
    ]
    for f in report["functions"]:
        row = f"| `{f['name']}` | {f['path']}:{f['line']} | `{human(f['flops'])}` | `{human(f['bytes'])}` |"
        if dims:
            row += f" {_si(f.get('flops_value'))} | {_si(f.get('bytes_value'))} |"
        lines.append(row)
    return "\n".join(lines) + "\n"


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--dim",
    "dims",
    multiple=True,
    help="Bind a dimension: NAME=INT (repeatable, or comma-separated).",
)
@click.option(
    "--dtype",
    type=click.Choice(sorted(DTYPE_ALIASES)),
    default=None,
    help="dtype for tensors whose dtype is not known (default float32).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "github"]),
    default="text",
    show_default=True,
)
@click.option(
    "--diff",
    "diff_base",
    metavar="BASE",
    default=None,
    help="Compare per-function FLOPs and bytes with git revision BASE (a markdown table).",
)
@click.option(
    "--hardware",
    default=None,
    help="Add a roofline per call and function for this chip (needs --dim): intensity, bound, time.",
)
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="With --hardware: draw the roofline with the calls on it (PNG; needs matplotlib).",
)
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False))
@click.option("--no-cache", is_flag=True)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None)
def cost(paths, dims, dtype, fmt, diff_base, hardware, plot_path, config_path, no_cache, jobs):
    """Symbolic FLOPs and bytes per call and per function in PATHS.

    FLOPs follow torch.utils.flop_counter (2 per multiply-add of the matrix
    products torch runs); elementwise and reduction work is other_flops.
    """
    from shapelint.cli import load_config, run_analysis

    cfg = load_config([Path(p) for p in paths], config_path)
    bound = dict(cfg.dims)
    bound.update(parse_dims(dims))
    dt = (
        DTYPE_ALIASES[dtype]
        if dtype
        else (DTYPE_ALIASES.get(cfg.dtype, cfg.dtype) if cfg.dtype else None)
    )
    if diff_base is not None:
        from shapelint.costdiff import run_diff

        click.echo(
            run_diff(diff_base, paths, cfg, bound, {"dtype": dt}, fmt, no_cache, jobs), nl=False
        )
        sys.exit(0)
    _, results = run_analysis(paths, cfg, no_cache, jobs, {"dtype": dt})
    report = build_report(results, bound)
    if hardware:
        _roofline(report, hardware, dt, cfg, plot_path)
    if fmt == "github":
        from shapelint.report_extra import format_cost_github

        click.echo(format_cost_github(report, bound), nl=False)
    elif fmt == "json":
        click.echo(json.dumps(report, indent=2))
    elif fmt == "markdown":
        click.echo(render_markdown(report, bound), nl=False)
    else:
        click.echo(render_text(report, bound), nl=False)
    sys.exit(0)


def _roofline(report: dict, hardware: str, dtype: str | None, cfg, plot_path: str | None) -> None:
    from shapelint.hardware import HardwareError, lookup, merge_hardware

    try:
        table = merge_hardware(cfg.hardware) if cfg.hardware else None
        lookup(hardware, table)  # an unknown chip is a usage error even with no --dim
        add_roofline(report, hardware, dtype, table)
    except HardwareError as e:
        click.echo(f"shapelint: error: {e}", err=True)
        sys.exit(2)
    except (KeyError, ValueError) as e:
        click.echo(f"shapelint: error: {e}", err=True)
        sys.exit(2)
    if plot_path:
        from shapelint.napkin_plot import plot_roofline

        points = [
            (
                f"{c['function']}:{c['line']} {c['op'].rsplit('.', 1)[-1]}",
                c["flops_value"] + (c.get("other_flops_value") or 0),
                c["bytes_value"],
            )
            for c in report["calls"]
            if c.get("roofline")
        ]
        try:
            plot_roofline(
                plot_path,
                hardware,
                ROOFLINE_DTYPE.get(dtype or "float32", "fp32"),
                points,
                table=table,
            )
        except ImportError:
            click.echo(
                "shapelint: error: --plot needs matplotlib (pip install 'shapelint[plot]')",
                err=True,
            )
            sys.exit(2)
