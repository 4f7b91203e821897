"""Command line: `shapelint [check] PATH...`, `shapelint cost`, `shapelint rules`,
`shapelint napkin`, `shapelint run`.

Exit codes (as ruff): 0 clean, 1 findings (errors or warnings; info notes such as
reveal_shape do not fail a run), 2 usage error, missing path or bad configuration.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from shapelint import __version__

# Subcommands that live in their own modules, imported only when named (or listed
# by --help): `shapelint check` on one file must not pay for napkin math.
LAZY_COMMANDS = {
    "cost": ("shapelint.costcli", "cost"),
    "lsp": ("shapelint.lsp", "lsp"),  # imports pygls only when it runs
    "napkin": ("shapelint.napkin_cli", "napkin"),
    "run": ("shapelint.runtime_cli", "run"),
}


class DefaultToCheck(click.Group):
    """`shapelint src/` means `shapelint check src/`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if (
            args
            and args[0] not in self.commands
            and args[0] not in LAZY_COMMANDS
            and args[0] not in ("--help", "-h", "--version")
        ):
            args = ["check", *args]
        elif not args:
            args = ["check"]
        return super().parse_args(ctx, args)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        cmd = super().get_command(ctx, name)
        if cmd is None and name in LAZY_COMMANDS:
            cmd = self._load(name)
        return cmd

    def list_commands(self, ctx: click.Context) -> list[str]:
        for name in LAZY_COMMANDS:
            if name not in self.commands:
                self._load(name)
        return super().list_commands(ctx)

    def _load(self, name: str) -> click.Command | None:
        import importlib

        module, attr = LAZY_COMMANDS[name]
        try:
            cmd = getattr(importlib.import_module(module), attr)
        except ImportError:  # an optional part not built in this checkout
            return None
        self.add_command(cmd, name)
        return cmd


def _codes(values: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for v in values:
        out += [c.strip().upper() for c in v.split(",") if c.strip()]
    return out


def load_config(paths: list[Path], config_path: str | None):
    from shapelint.config import ConfigError, load

    try:
        start = paths[0] if paths else Path.cwd()
        return load(
            start if start.exists() else Path.cwd(), Path(config_path) if config_path else None
        )
    except ConfigError as e:
        click.echo(f"shapelint: error: {e}", err=True)
        sys.exit(2)


def _progress_printer(enabled: bool):
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


def run_analysis(
    paths: tuple[str, ...], cfg, no_cache: bool, jobs: int | None, options: dict | None = None
):
    """Collect files and analyze them; exits with 2 on a missing path."""
    from shapelint.analysis.driver import analyze_files, collect_files

    ps = [Path(p) for p in (paths or (".",))]
    files, missing = collect_files(ps, cfg)
    if missing:
        for m in missing:
            click.echo(f"shapelint: error: {m}: no such file or directory", err=True)
        sys.exit(2)
    options = dict(options or {})
    options.update({"stubs": list(cfg.stubs), "naming": dict(cfg.naming)})
    if cfg.time_budget is not None:
        options["_time_budget"] = cfg.time_budget
    if cfg.stubs:
        _load_user_stubs(cfg.stubs)
    if not no_cache:
        from shapelint.cache import Cache

        options["_cache"] = Cache.for_config(cfg, options)
    progress = _progress_printer(sys.stderr.isatty() and len(files) >= 200)
    results = analyze_files(files, options, jobs=jobs, progress=progress)
    cache = options.get("_cache")
    if cache is not None:
        cache.flush()
        for w in cache.warnings:
            click.echo(f"shapelint: warning: {w}", err=True)
    return files, results


def _load_user_stubs(paths: list[str]) -> None:
    """[tool.shapelint] stubs: a broken stub file is a configuration error (exit 2),
    reported with its path and line."""
    from shapelint.analysis.driver import configure_stubs

    errors = configure_stubs(paths)
    if errors:
        for e in errors:
            click.echo(f"shapelint: error: {e.path}:{e.line}: {e.message}", err=True)
        sys.exit(2)


@click.group(cls=DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="shapelint")
def main() -> None:
    """Static checks and symbolic costs for einops shape strings in PyTorch code.

    `shapelint src/` checks every einops/einsum call under src/ without running
    or importing any of it. See `shapelint COMMAND --help`.
    """
    # The last guard: what escaped escaping (safe_text) is written, not a traceback.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


@main.command()
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
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False),
    help="pyproject.toml to read [tool.shapelint] from.",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write .shapelint_cache/.")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes (default: all cores, for large trees).",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option(
    "--time-budget",
    type=click.FloatRange(min=0),
    default=None,
    help="Seconds one file may take before it is reported as SHP003 (default 10; 0: none).",
)
@click.option(
    "--fix",
    is_flag=True,
    help="Rewrite positional reshuffles (SHP4xx) as named einops calls where provably equivalent.",
)
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="With --fix/--diff: also rewrite a .view on a possibly non-contiguous tensor.",
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
    no_cache,
    jobs,
    exit_zero,
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
        cfg.select = _codes(select)
    cfg.extend_select += _codes(extend_select)
    cfg.ignore += _codes(ignore)
    if time_budget is not None:
        cfg.time_budget = time_budget
    if fix or show_diff:
        changed = _run_fixes(paths, cfg, unsafe_fixes, show_diff)
        if show_diff:
            sys.exit(0 if exit_zero or not changed else 1)
    files, results = run_analysis(paths, cfg, no_cache, jobs)
    diags = []
    for r in results:
        diags.extend(filter_diagnostics(r, cfg))
    formatter = FORMATTERS[fmt]
    color = fmt == "text" and sys.stdout.isatty()
    out = (
        formatter(diags, len(files), color=color) if fmt == "text" else formatter(diags, len(files))
    )
    click.echo(out, nl=False)
    failing = any(d.severity in ("error", "warning") for d in diags)
    sys.exit(0 if exit_zero or not failing else 1)


def _run_fixes(paths, cfg, unsafe: bool, show_diff: bool) -> int:
    """Apply (or, with show_diff, print) the fixes; the number of files changed."""
    from shapelint.analysis.driver import collect_files
    from shapelint.fixes import fix_files

    files, _ = collect_files(
        [Path(p) for p in (paths or (".",))], cfg
    )  # missing paths: reported by the check
    options = {"stubs": list(cfg.stubs), "naming": dict(cfg.naming)}
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
        msg += f" {need_unsafe} more with --unsafe-fixes."
    click.echo(msg, err=True)
    return len(changed)


@main.command()
@click.argument("code", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
)
def rules(code, fmt):
    """List the rules, or explain one (e.g. `shapelint rules SHP201`)."""
    from shapelint.rules import RULES
    from shapelint.rules.docs import render_json, render_markdown, render_text

    if code is not None:
        code = code.upper()
        if code not in RULES:
            click.echo(
                f"shapelint: error: unknown rule {code!r}; `shapelint rules` lists them", err=True
            )
            sys.exit(2)
        selected = [RULES[code]]
    else:
        selected = list(RULES.values())
    render = {"text": render_text, "markdown": render_markdown, "json": render_json}[fmt]
    click.echo(render(selected, single=code is not None), nl=False)
