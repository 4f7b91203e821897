"""`shapelint cost`: the symbolic FLOPs and bytes of every call and function."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from shapelint.cli.options import (
    COUNT,
    NUMBER,
    analysis_options,
    analysis_run_options,
    load_config,
    parse_dims,
    recipe_options,
    run_analysis,
)
from shapelint.notation.target import Target
from shapelint.ops.dtypes import DTYPE_ALIASES


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
@click.option(
    "--init",
    "init",
    multiple=True,
    metavar="NAME=VALUE",
    help="With PATH::Class: a constructor argument (a literal, or a call of a class "
    "the file defines or imports, with literal arguments); the rest take their defaults.",
)
@click.option(
    "--input",
    "inputs",
    multiple=True,
    metavar="PARAM=D1,D2,...[:int]",
    help=(
        "With PATH::QUALNAME: the shape of a forward (or function) argument; dims are ints "
        "or names (`:int` for token ids; a parameter annotated Int[...] or Bool[...] takes "
        "that dtype without it)."
    ),
)
@click.option(
    "--eval",
    "eval_mode",
    is_flag=True,
    help="With PATH::Class: the module in eval mode, as after `.eval()` (`self.training` "
    "False); without it, in training mode, as torch builds it.",
)
@click.option(
    "--depth",
    type=click.IntRange(min=0),
    default=4,
    show_default=True,
    help="With PATH::Class: the per-module table down to modules named with this many parts.",
)
@click.option(
    "--all-rows",
    is_flag=True,
    help="With PATH::Class: also the modules that hold no parameters and cost no FLOPs.",
)
@click.option(
    "--tree",
    is_flag=True,
    help="With PATH::QUALNAME: every call as a tree, instead of the per-module table.",
)
@click.option(
    "--train",
    is_flag=True,
    help="With PATH::Class: the forward, the backward (as torch's flop counter counts "
    "out.sum().backward(), frozen parameters and checkpointing included) and the step.",
)
@click.option(
    "--macs",
    is_flag=True,
    help="Count multiply-accumulates (MACs, half the FLOPs) instead of FLOPs, labelled so.",
)
@click.option(
    "--tokens",
    type=NUMBER,
    default=None,
    help="With PATH::Class: training tokens (15e12, 15T); the napkin gives the training days.",
)
@click.option(
    "--gpus",
    type=COUNT,
    default=None,
    help="With PATH::Class and --hardware: chips to train on; the napkin (days with --tokens, "
    "memory and a verdict).",
)
@click.option(
    "--mfu", type=float, default=0.5, show_default=True, help="With --gpus: the fraction of peak."
)
@recipe_options
@analysis_run_options
def cost(
    paths,
    dims,
    dtype,
    fmt,
    diff_base,
    hardware,
    plot_path,
    init,
    inputs,
    eval_mode,
    depth,
    all_rows,
    tree,
    train,
    macs,
    tokens,
    gpus,
    mfu,
    optimizer,
    precision,
    config_path,
    no_cache,
    jobs,
):
    """Symbolic FLOPs and bytes per call and per function in PATHS.

    PATH::QUALNAME asks about one target: one forward of the class built with
    --init arguments (or one call of the function) at the --input shapes; the
    report then leads with the target's total and its parameters, then a row per
    module (--depth, --all-rows) or every call as a tree (--tree). Nothing is
    imported or run.

    FLOPs follow torch.utils.flop_counter (2 per multiply-add of the matrix
    products torch runs); elementwise and reduction work is other_flops. --macs
    prints multiply-accumulates instead (half the FLOPs), labelled MACs.
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
    parsed = [Target.parse(p) for p in paths]
    targets = [t for t in parsed if t.qualname is not None]
    paths = tuple(t.path for t in parsed)
    if (init or inputs or eval_mode) and not targets:
        click.echo(
            "shapelint: error: --init, --input and --eval need a PATH::QUALNAME target", err=True
        )
        sys.exit(2)
    if (tree or all_rows or train or depth != 4) and not targets:
        click.echo(
            "shapelint: error: --depth, --all-rows, --tree and --train need a "
            "PATH::QUALNAME target",
            err=True,
        )
        sys.exit(2)
    napkin = gpus is not None or tokens is not None
    if napkin and (not targets or gpus is None or not hardware or diff_base is not None):
        click.echo(
            "shapelint: error: --tokens and --gpus need a PATH::Class target, --gpus and "
            "--hardware, and no --diff",
            err=True,
        )
        sys.exit(2)
    if diff_base is not None:
        target = (targets, init, inputs, not eval_mode) if targets else None
        click.echo(
            _run_diff(diff_base, paths, cfg, options, fmt, no_cache, jobs, target, macs), nl=False
        )
        sys.exit(0)
    _, results = run_analysis(paths, cfg, options, no_cache, jobs)
    report = build_report(results, bound)
    if targets:
        report["target"] = _target(targets, init, inputs, bound, options, not eval_mode)
        if train:
            report["target"]["train"] = True
    if napkin:
        plan = (tokens, gpus, hardware, mfu, optimizer, precision)
        _napkin(report["target"], targets[0], init, inputs, bound, plan, cfg)
    if hardware:
        origin = "--dtype" if dtype else "[tool.shapelint] dtype" if cfg.dtype else "the default"
        _roofline(report, hardware, dt, cfg, plot_path, add_roofline)
        if not napkin:  # the napkin names the sizes it needs itself
            _require_sizes(report, bound)
        from shapelint.cost.report import roofline_dtype

        peaks = roofline_dtype(dt)
        report["roofline_header"] = (
            f"Roofline on {hardware} at its {peaks} peaks: dtype {dt or 'float32'} "
            f"(from {origin}) for tensors of unknown dtype"
        )
    if macs:
        from shapelint.report.numbers import to_macs

        to_macs(report)  # after the roofline, whose intensity is FLOPs per byte
    if "target" in report and fmt != "json":
        from shapelint.cost.target import TARGET_RENDERERS, View

        view = View(depth, tree, all_rows, bound)
        click.echo(TARGET_RENDERERS[fmt](report["target"], view), nl=False)
    elif fmt == "github":
        from shapelint.report.github import format_cost_github

        click.echo(format_cost_github(report, bound), nl=False)
    elif fmt == "json":
        click.echo(json.dumps(report, indent=2))
    elif fmt == "markdown":
        click.echo(render_markdown(report, bound), nl=False)
    else:
        click.echo(render_text(report, bound), nl=False)
    # A target whose forward would raise fails the run, as an error fails `check`; so
    # does a file that could not be read, whose cost nobody counted.
    failed = report.get("target", {}).get("diagnostics") or report.get("not_analyzed")
    sys.exit(1 if failed else 0)


def _target(
    targets: list[Target], init, inputs, bound: dict[str, int], options, training: bool = True
) -> dict:
    from shapelint.analysis.target import TargetError
    from shapelint.cost.target import run_target

    if len(targets) > 1:
        click.echo("shapelint: error: one PATH::QUALNAME target at a time", err=True)
        sys.exit(2)
    try:
        return run_target(targets[0], init, inputs, bound, options, training)
    except TargetError as e:
        click.echo(f"shapelint: error: {e}", err=True)
    except OSError as e:
        click.echo(f"shapelint: error: cannot read {targets[0]}: {e.strerror}", err=True)
    except Exception as e:  # noqa: BLE001 - a bug of shapelint's: a message, never a traceback
        click.echo(
            f"shapelint: internal error in target {targets[0]}: {type(e).__name__}: {e} "
            "(a bug in shapelint: please report it with the file)",
            err=True,
        )
    sys.exit(2)


def _napkin(t: dict, target: Target, init, inputs, bound, plan: tuple, cfg) -> None:
    """`target.napkin`; a forward that would raise has none (no figure of a run
    that never finishes)."""
    from shapelint.analysis.target import parse_assignments
    from shapelint.cost.napkin import target_napkin
    from shapelint.napkin.formulas import NapkinError
    from shapelint.napkin.hardware import HardwareError, merge_hardware
    from shapelint.napkin.model import Plan

    if t.get("diagnostics"):
        return
    tokens, gpus, hardware, mfu, optimizer, precision = plan
    try:
        table = merge_hardware(cfg.hardware) if cfg.hardware else None
        p = Plan(tokens, gpus, hardware, mfu, optimizer, precision, table)
        text = Path(target.path).read_text(encoding="utf-8")
        init_ = parse_assignments(init, "--init")
        inputs_ = parse_assignments(inputs, "--input")
        t["napkin"] = target_napkin(t, text, init_, inputs_, bound, p)
    except (NapkinError, HardwareError) as e:
        click.echo(f"shapelint: error: {e}", err=True)
        sys.exit(2)


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
        from shapelint.napkin.formulas import NapkinError
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
        except NapkinError as e:  # matplotlib missing, or the file cannot be written
            click.echo(f"shapelint: error: --plot: {e}", err=True)
            sys.exit(2)


def _require_sizes(report: dict, bound: dict[str, int]) -> None:
    """--hardware needs numbers: with no call evaluated, a usage error that names
    the sizes to bind."""
    import re

    items = report["calls"]
    if not items or any(c.get("roofline") for c in items):
        return
    free: set[str] = set()
    for c in items:
        for key in ("flops", "bytes"):
            if c.get(f"{key}_value") is None and c.get(key):
                free |= set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", c[key])) - set(bound)
    if not free:
        return
    names = sorted(free)
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    click.echo(
        f"shapelint: error: --hardware needs the sizes of {shown}: bind them with "
        f"--dim {names[0]}=... (repeatable) or [tool.shapelint] dims",
        err=True,
    )
    sys.exit(2)


def _run_diff(base: str, paths: tuple[str, ...], cfg, options, fmt: str, no_cache: bool,
              jobs: int | None, target=None, macs: bool = False) -> str:  # fmt: skip
    """The body of `shapelint cost --diff BASE`; exits 2 on a git problem, as on any
    usage error. With a PATH::QUALNAME target, its row comes first."""
    from shapelint.cost.diff import (
        GitError,
        compare_revision,
        target_at_revision,
        target_change,
    )
    from shapelint.cost.review import RENDERERS
    from shapelint.report.numbers import to_macs

    _, after = run_analysis(paths, cfg, options, no_cache, jobs)  # exits 2 on a missing path
    dims = dict(options.dims)
    try:
        unit = to_macs if macs else (lambda report: report)
        changes = compare_revision(base, paths, cfg, options, after, jobs, unit)
        if target is not None:
            targets, init, inputs, training = target
            now = unit(_target(targets, init, inputs, dims, options, training))
            qual = targets[0].qualname

            def at(p: Path) -> dict:
                return unit(_target([Target(str(p), qual)], init, inputs, dims, options, training))

            before = target_at_revision(base, Path(targets[0].path), at, cfg)
            if before is not None:
                before["path"] = now["path"]
            changes.insert(0, target_change(before, now, dims))
    except GitError as e:
        click.echo(f"shapelint: error: --diff {base}: {e}", err=True)
        sys.exit(2)
    return RENDERERS[fmt](changes, base, dims, "MACs" if macs else "FLOPs")
