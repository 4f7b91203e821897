"""Command line: `shapelint [check] PATH...`, `shapelint cost`, `shapelint rules`,
`shapelint napkin`, `shapelint run`.

Exit codes (as ruff): 0 clean, 1 findings (errors or warnings; info notes such as
reveal_shape do not fail a run), 2 usage error, missing path or bad configuration,
130 interrupted by Ctrl-C (143 by SIGTERM).
"""

from __future__ import annotations

import os
import sys

import click

from shapelint import __version__

# Each subcommand lives in its own module, imported only when named (or listed
# by --help): `shapelint check` on one file must not pay for napkin math.
LAZY_COMMANDS = {
    "check": ("shapelint.cli.check", "check"),
    "cost": ("shapelint.cli.cost", "cost"),
    "lsp": ("shapelint.cli.lsp", "lsp"),  # imports pygls only when it runs
    "napkin": ("shapelint.cli.napkin", "napkin"),
    "rules": ("shapelint.cli.rules", "rules"),
    "run": ("shapelint.cli.run", "run"),
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

    def main(self, args=None, *rest, **kwargs):
        # Only as the program (console script, `python -m shapelint`: no args, so
        # click reads sys.argv): a caller that runs main in-process (a test, an
        # embedding tool) keeps its own SIGTERM, and gets it back after a run.
        previous = _exit_on_sigterm() if args is None else None
        self.as_program = args is None
        try:
            return super().main(args, *rest, **kwargs)
        finally:
            if previous is not None:
                _restore_sigterm(previous)

    def invoke(self, ctx: click.Context):
        # Here, before click turns Ctrl-C into "Aborted!" and exit 1: an interrupted
        # run must not read as a run with findings.
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("shapelint: interrupted", err=True)
            if getattr(self, "as_program", False):
                # The pool's workers are stopped by now; a normal exit would join
                # the queues' feeder threads, whose writes into the closed pipes
                # print "Exception ignored ... Bad file descriptor" at shutdown.
                for stream in (sys.stdout, sys.stderr):
                    try:
                        stream.flush()
                    except (OSError, ValueError):
                        pass
                os._exit(130)
            sys.exit(130)

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

    def _load(self, name: str) -> click.Command:
        # A subcommand that fails to import is a broken install: say so (the
        # ImportError), not "No such command". Optional dependencies (pygls, torch,
        # matplotlib) are imported by the commands when they run, never here.
        import importlib

        module, attr = LAZY_COMMANDS[name]
        cmd = getattr(importlib.import_module(module), attr)
        self.add_command(cmd, name)
        return cmd


def _exit_on_sigterm():
    """SIGTERM unwinds like an exception (so that the pool's workers are stopped on
    the way out) and exits 143, unless someone else already handles it. Returns
    the handler it replaced, or None when it installed nothing."""
    import signal

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    try:
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            return signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (an embedding application)
        pass
    return None


def _restore_sigterm(previous) -> None:
    import signal

    signal.signal(signal.SIGTERM, previous)


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
