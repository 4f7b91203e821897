"""`shapelint [check] PATH...`: the diagnostics, and --fix/--diff.

Exit codes: 0 clean, 1 a finding that fails the run, 2 usage error, missing path
or bad configuration. As in ESLint, errors fail a run and warnings are shown but
fail it only with `--fail-on warning` (or `fail-on = "warning"` in
[tool.shapelint]); info notes such as reveal_shape never do.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import click

from shapelint.cli.options import (
    analysis_options,
    analysis_run_options,
    checked_codes,
    load_config,
    parse_dims,
    run_analysis,
)


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "sarif", "github"]),
    default="text",
    show_default=True,
)
@click.option(
    "--select",
    multiple=True,
    help="Codes or prefixes to enable (e.g. SHP2,SHP301). Replaces the default set.",
)
@click.option(
    "--extend-select", multiple=True, help="Codes or prefixes to enable on top of the selection."
)
@click.option("--ignore", multiple=True, help="Codes or prefixes to disable.")
@click.option(
    "--dim",
    "dims",
    multiple=True,
    help="Also check at this size: NAME=INT (repeatable, or comma-separated; adds to "
    "[tool.shapelint] dims).",
)
@analysis_run_options
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning"]),
    default=None,
    help="The lowest severity that fails the run (default: error, or fail-on in [tool.shapelint]).",
)
@click.option(
    "--statistics", is_flag=True, help="Count the findings by code instead of listing them."
)
@click.option(
    "--baseline",
    "baseline_path",
    type=click.Path(dir_okay=False),
    help="Report only findings not in this baseline file (see --write-baseline).",
)
@click.option(
    "--write-baseline",
    "write_baseline_path",
    type=click.Path(dir_okay=False),
    help="Record the current findings in FILE (for --baseline) and exit 0.",
)
@click.option(
    "--time-budget",
    type=click.FloatRange(min=0),
    default=None,
    help="CPU seconds one file may take before it is reported as SHP003 (default 10; 0: none).",
)
@click.option(
    "--fix",
    is_flag=True,
    help="Rewrite positional reshuffles (SHP4xx) as named einops calls where provably equivalent.",
)
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="With --fix/--diff: also apply the fixes the catalog marks unsafe (an einsum for a "
    "matmul, a .view on a possibly non-contiguous tensor).",
)
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="Print the fixes as a unified diff instead of writing them (exit 1 if any).",
)
def check(
    paths,
    fmt,
    select,
    extend_select,
    ignore,
    config_path,
    dims,
    no_cache,
    jobs,
    exit_zero,
    fail_on,
    statistics,
    baseline_path,
    write_baseline_path,
    time_budget,
    fix,
    unsafe_fixes,
    show_diff,
):
    """Check einops patterns and tensor shapes in PATHS (default: .)."""
    from shapelint.analysis.driver import filter_diagnostics
    from shapelint.report import FORMATTERS

    cfg = load_config([Path(p) for p in paths], config_path)
    if select:
        cfg.select = checked_codes(select, "--select")
    cfg.extend_select += checked_codes(extend_select, "--extend-select")
    cfg.ignore += checked_codes(ignore, "--ignore")
    if time_budget is not None:
        cfg.time_budget = time_budget
    bound = dict(cfg.dims)
    bound.update(parse_dims(dims))
    # check prints diagnostics only: no FLOP or byte formulas (its cache is its own).
    options = analysis_options(cfg, check_dims=bound, costs=False, targets=tuple(cfg.targets))
    if fix or show_diff:
        # The rewrites need no target's run.
        changed = _run_fixes(paths, cfg, replace(options, targets=()), unsafe_fixes, show_diff)
        if show_diff:
            sys.exit(0 if exit_zero or not changed else 1)
    files, results = run_analysis(paths, cfg, options, no_cache, jobs)
    problems = [p for r in results for p in r.problems]
    if problems:
        # A [tool.shapelint.targets] entry that cannot run is a bad configuration.
        for p in dict.fromkeys(problems):
            click.echo(f"shapelint: error: {p}", err=True)
        sys.exit(2)
    diags = []
    for r in results:
        diags.extend(filter_diagnostics(r, cfg))
    if write_baseline_path:
        from shapelint import baseline

        n = baseline.write(Path(write_baseline_path), diags, cfg.root)
        click.echo(f"Wrote {n} finding{'s' * (n != 1)} to {write_baseline_path}.", err=True)
        sys.exit(0)
    if baseline_path:
        diags = _new_since(Path(baseline_path), diags, cfg.root)
    if statistics:
        from shapelint.report.text import format_statistics

        click.echo(format_statistics(diags), nl=False)
    else:
        formatter = FORMATTERS[fmt]
        color = fmt == "text" and sys.stdout.isatty()
        out = (
            formatter(diags, len(files), color=color)
            if fmt == "text"
            else formatter(diags, len(files))
        )
        click.echo(out, nl=False)
    failing_severities = (
        {"error", "warning"} if (fail_on or cfg.fail_on) == "warning" else {"error"}
    )
    failing = any(d.severity in failing_severities for d in diags)
    sys.exit(0 if exit_zero or not failing else 1)


def _new_since(path: Path, diags, root: Path):
    from shapelint import baseline

    try:
        known = baseline.load(path)
    except baseline.BaselineError as e:
        click.echo(f"shapelint: error: {e}", err=True)
        sys.exit(2)
    return baseline.new_findings(diags, known, root)


def _run_fixes(paths, cfg, options, unsafe: bool, show_diff: bool) -> int:
    """Apply (or, with show_diff, print) the fixes; the number of files changed."""
    from shapelint.analysis.driver import collect_files
    from shapelint.fixes import fix_files

    files, _ = collect_files(
        [Path(p) for p in (paths or (".",))], cfg
    )  # missing paths: reported by the check
    results = fix_files(files, cfg, options, unsafe=unsafe, write=not show_diff)
    changed = [r for r in results if r.changed]
    if show_diff:
        for r in changed:
            click.echo(r.diff(), nl=False)
    for r in results:
        for note in r.notes:
            click.echo(f"shapelint: {r.path}: {note}", err=True)
    applied = sum(r.applied for r in results)
    verb = "Would fix" if show_diff else "Fixed"
    msg = f"{verb} {applied} finding{'s' * (applied != 1)} in {len(changed)} file{'s' * (len(changed) != 1)}."
    need_unsafe = sum(r.need_unsafe for r in results)
    if need_unsafe and not unsafe:
        s = "es" * (need_unsafe != 1)
        msg += f" {need_unsafe} unsafe fix{s} withheld (--unsafe-fixes applies them)."
    click.echo(msg, err=True)
    return len(changed)
