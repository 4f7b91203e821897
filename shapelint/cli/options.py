"""What the subcommands share: configuration, code lists, --dim values, and the
analysis of the paths they are given, with click's way of failing (exit 2)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click


def analysis_run_options(func):
    """--config, --no-cache and --jobs: the options of every subcommand that
    analyses a tree (check, cost), defined once so their spelling and help agree."""
    func = click.option(
        "--jobs",
        "-j",
        type=click.IntRange(min=1),
        default=None,
        help="Worker processes (default: all cores, for large trees).",
    )(func)
    func = click.option(
        "--no-cache", is_flag=True, help="Neither read nor write .shapelint_cache/."
    )(func)
    return click.option(
        "--config",
        "config_path",
        type=click.Path(exists=True, dir_okay=False),
        help="pyproject.toml to read [tool.shapelint] from.",
    )(func)


def split_codes(values: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for v in values:
        out += [c.strip().upper() for c in v.split(",") if c.strip()]
    return out


def checked_codes(values: tuple[str, ...], flag: str) -> list[str]:
    """A code flag's values; an unknown code or prefix exits 2 (a typo must not
    select or ignore nothing without a word)."""
    from shapelint.config import ConfigError, check_codes

    try:
        return check_codes(split_codes(values), flag)
    except ConfigError as e:
        click.echo(f"shapelint: error: {e}", err=True)
        sys.exit(2)


def load_config(paths: list[Path], config_path: str | None):
    from shapelint.config import ConfigError, load

    # A target (PATH::QUALNAME) is configured by its file's project.
    paths = [Path(str(p).rpartition("::")[0]) if "::" in str(p) else p for p in paths]
    try:
        start = paths[0] if paths else Path.cwd()
        cfg = load(
            start if start.exists() else Path.cwd(), Path(config_path) if config_path else None
        )
        cfg.add_roots(p for p in paths if p.is_dir())
        return cfg
    except ConfigError as e:
        click.echo(f"shapelint: error: {e}", err=True)
        sys.exit(2)


def progress_printer(enabled: bool):
    if not enabled:
        return None
    state = {"last": -1}

    def show(done: int, total: int) -> None:
        pct = done * 100 // total
        if pct != state["last"]:
            state["last"] = pct
            sys.stderr.write(f"\rshapelint: {done}/{total} files ({pct}%)")
            if done == total:
                sys.stderr.write("\r" + " " * 60 + "\r")
            sys.stderr.flush()

    return show


def analysis_options(cfg, **overrides):
    """The one AnalysisOptions of a run: [tool.shapelint] (stubs, naming) with the
    command's own (dtype, dims) on top. A broken project stub exits 2 here, before
    any file is read, whichever command runs."""
    from shapelint.analysis.driver import AnalysisOptions

    if cfg.stubs:
        load_user_stubs(cfg.stubs)
    return AnalysisOptions.from_config(cfg, **overrides)


def run_analysis(paths: tuple[str, ...], cfg, options, no_cache: bool, jobs: int | None):
    """Collect files and analyze them with these options (analysis_options);
    exits with 2 on a missing path."""
    from shapelint.analysis.driver import analyze_files, collect_files

    ps = [Path(p) for p in (paths or (".",))]
    files, missing = collect_files(ps, cfg)
    if missing:
        for m in missing:
            click.echo(f"shapelint: error: {m}: no such file or directory", err=True)
        sys.exit(2)
    cache = None
    if not no_cache:
        from shapelint.cache import Cache

        cache = Cache.for_config(cfg, options)
    progress = progress_printer(sys.stderr.isatty() and len(files) >= 200)
    results = analyze_files(files, options, jobs=jobs, progress=progress, cache=cache)
    if cache is not None:
        cache.flush()
        for w in cache.warnings:
            click.echo(f"shapelint: warning: {w}", err=True)
    return files, results


def load_user_stubs(paths) -> None:
    """[tool.shapelint] stubs: a broken stub file is a configuration error (exit 2),
    reported with its path and line."""
    from shapelint.analysis.driver import configure_stubs

    errors = configure_stubs(paths)
    if errors:
        for e in errors:
            click.echo(f"shapelint: error: {e.path}:{e.line}: {e.message}", err=True)
        sys.exit(2)


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


class Quantity(click.ParamType):
    """A number with an optional scale: 70e9, 70B, 15T, '80 GB', '3.35 TB/s'."""

    name = "number"

    def __init__(self, whole: bool = False):
        self.whole = whole

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out = float(value)
        else:
            from shapelint.napkin.hardware import HardwareError, parse_quantity

            try:
                out = parse_quantity(value, "value")
            except HardwareError:
                self.fail(
                    f"{value!r} is not a number (examples: 70e9, 70B, 15T, '80 GB')", param, ctx
                )
        if self.whole:
            if out != int(out) or out < 1:
                self.fail(f"{value!r} must be a positive whole number", param, ctx)
            return int(out)
        return out


NUMBER = Quantity()
COUNT = Quantity(whole=True)


def recipe_options(func):
    """--optimizer and --precision: what each parameter costs in training (the
    napkin's max-params and memory, and cost's napkin), spelled once."""
    from shapelint.napkin.formulas import OPTIMIZER_BYTES, PRECISION_BYTES

    func = click.option(
        "--precision",
        default="mixed",
        show_default=True,
        help=f"One of {', '.join(PRECISION_BYTES)}: bf16 weights+grads, plus an fp32 master "
        "copy, or all fp32.",
    )(func)
    return click.option(
        "--optimizer",
        default="adamw",
        show_default=True,
        help=f"One of {', '.join(OPTIMIZER_BYTES)} (momentum = sgd-momentum).",
    )(func)
