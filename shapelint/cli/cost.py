"""`shapelint cost`: the symbolic FLOPs and bytes of every call and function."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from shapelint.cli.options import analysis_options, load_config, parse_dims, run_analysis
from shapelint.cost.report import DTYPE_ALIASES


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
    from shapelint.cost.report import add_roofline, build_report, render_markdown, render_text

    cfg = load_config([Path(p) for p in paths], config_path)
    bound = dict(cfg.dims)
    bound.update(parse_dims(dims))
    dt = (
        DTYPE_ALIASES[dtype]
        if dtype
        else (DTYPE_ALIASES.get(cfg.dtype, cfg.dtype) if cfg.dtype else None)
    )
    options = analysis_options(cfg, dtype=dt, dims=bound)
    if diff_base is not None:
        click.echo(_run_diff(diff_base, paths, cfg, options, fmt, no_cache, jobs), nl=False)
        sys.exit(0)
    _, results = run_analysis(paths, cfg, options, no_cache, jobs)
    report = build_report(results, bound)
    if hardware:
        _roofline(report, hardware, dt, cfg, plot_path, add_roofline)
    if fmt == "github":
        from shapelint.report.github import format_cost_github

        click.echo(format_cost_github(report, bound), nl=False)
    elif fmt == "json":
        click.echo(json.dumps(report, indent=2))
    elif fmt == "markdown":
        click.echo(render_markdown(report, bound), nl=False)
    else:
        click.echo(render_text(report, bound), nl=False)
    sys.exit(0)


def _roofline(
    report: dict, hardware: str, dtype: str | None, cfg, plot_path: str | None, add_roofline
) -> None:
    from shapelint.cost.report import roofline_dtype
    from shapelint.napkin.hardware import HardwareError, lookup, merge_hardware

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
        from shapelint.napkin.plot import plot_roofline

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
                roofline_dtype(dtype),
                points,
                table=table,
            )
        except ImportError:
            click.echo(
                "shapelint: error: --plot needs matplotlib (pip install 'shapelint[plot]')",
                err=True,
            )
            sys.exit(2)


def _run_diff(base: str, paths: tuple[str, ...], cfg, options, fmt: str, no_cache: bool,
              jobs: int | None) -> str:  # fmt: skip
    """The body of `shapelint cost --diff BASE`; exits 2 on a git problem, as on any usage error."""
    from shapelint.cost.diff import RENDERERS, GitError, compare_revision

    _, after = run_analysis(paths, cfg, options, no_cache, jobs)  # exits 2 on a missing path
    try:
        changes = compare_revision(base, paths, cfg, options, after, jobs)
    except GitError as e:
        click.echo(f"shapelint: error: --diff {base}: {e}", err=True)
        sys.exit(2)
    return RENDERERS[fmt](changes, base, dict(options.dims))
