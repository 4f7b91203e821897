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

from collections.abc import Iterator
from pathlib import Path

from shapelint import __version__


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
        if not driver.may_need_analysis(text.encode("utf-8", "surrogatepass")):
            return
        from shapelint.config import STDIN_NAMES, config_for_file, warn_once

        cfg = config_for_file(self.filename)
        # flake8 walks directories with its own excludes; [tool.shapelint] exclude is the
        # user saying these files are not shapelint's business either.
        if (
            cfg.exclude
            and self.filename not in STDIN_NAMES
            and cfg.is_excluded(Path(self.filename))
        ):
            return
        # Diagnostics only, with the configured targets of this file run.
        options = driver.AnalysisOptions.from_config(cfg, costs=False, targets=tuple(cfg.targets))
        result = driver.analyze_text(self.filename, text, options)
        for problem in result.problems:  # a [tool.shapelint.targets] entry that cannot run
            warn_once(problem)
        for d in result.diagnostics:
            # A configured target's finding in another file is that file's (flake8
            # reports on one file at a time); `shapelint check` shows it there.
            if d.path != result.path or not cfg.is_enabled(d.code, d.path):
                continue
            # flake8 prints the column it is given plus one; Diagnostic columns are 1-based.
            yield d.line, d.column - 1, f"{d.code} {d.message}", type(self)
