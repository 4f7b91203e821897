"""flake8 plugin: `flake8 --select SHP` reports what `shapelint check` reports.

A view of the one analysis (driver.analyze_text), not a second implementation.
flake8 runs every installed plugin on every file whatever --select says, so a
file the driver's prefilter rejects costs one regex search, and the analysis
modules are imported on the first file that needs them.

flake8 handles `# noqa`, --select/--ignore/--extend-ignore and per-file-ignores
itself; [tool.shapelint] select/ignore/per-file-ignores are applied here first,
so `flake8 --select SHP` and `shapelint check` agree on the same tree.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

from shapelint import __version__

# The names flake8 uses for a file it did not read from disk.
_STDIN_NAMES = {"stdin", "-", "<stdin>"}

_configs: dict[Path, object] = {}
_warned: set[str] = set()


def config_for_file(filename: str):
    """The [tool.shapelint] that applies to filename, loaded once per directory."""
    from shapelint.config import Config, ConfigError, load

    start = Path.cwd() if filename in _STDIN_NAMES else Path(filename).resolve().parent
    cfg = _configs.get(start)
    if cfg is None:
        try:
            cfg = load(start if start.is_dir() else Path.cwd())
        except ConfigError as e:
            # A plugin cannot exit 2 as the CLI does; say it once and check with defaults
            # rather than stop flake8's other plugins.
            if str(e) not in _warned:
                _warned.add(str(e))
                sys.stderr.write(f"shapelint: warning: {e}; using the default rules\n")
            cfg = Config(root=Path.cwd())
        _configs[start] = cfg
    return cfg


class ShapelintChecker:
    name = "shapelint"
    version = __version__

    # flake8 classifies a plugin by its parameter names and only runs "tree" plugins
    # once per file, so `tree` must be asked for; it is not used: the analysis parses
    # the lines itself so that every position is computed the way the CLI computes it.
    def __init__(self, tree, lines: list[str], filename: str):
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from shapelint.analysis import driver

        text = "".join(self.lines)
        if not driver._NEEDLES.search(text.encode("utf-8", "surrogatepass")):
            return
        cfg = config_for_file(self.filename)
        # flake8 walks directories with its own excludes; [tool.shapelint] exclude is the
        # user saying these files are not shapelint's business either.
        if (
            cfg.exclude
            and self.filename not in _STDIN_NAMES
            and cfg.is_excluded(Path(self.filename))
        ):
            return
        options = {"stubs": list(cfg.stubs), "naming": dict(cfg.naming)}
        try:
            result = driver.analyze_text(self.filename, text, options)
        except Exception as e:  # noqa: BLE001 - as the CLI: a bug becomes SHP002, not a traceback
            result = driver.FileResult(
                self.filename,
                [
                    driver._diag(
                        self.filename,
                        1,
                        0,
                        1,
                        0,
                        "SHP002",
                        f"internal error: {type(e).__name__}: {e}",
                    )
                ],
            )
        for d in result.diagnostics:
            if not cfg.is_enabled(d.code, d.path):
                continue
            # flake8 prints the column it is given plus one; Diagnostic columns are 1-based.
            yield d.line, d.column - 1, f"{d.code} {d.message}", type(self)
