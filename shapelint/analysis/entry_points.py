"""[tool.shapelint.targets] in `check`: the errors on a configured target's path as
ordinary findings (issue 25).

The analysis of a target's file runs the target (driver.analyze_target: the run
`cost PATH::QUALNAME --init ... --input ...` makes) and adds each error found on its
path as a diagnostic at the line where it happens, in whichever file that is, its
message ending with the call path that led there (`(via GPT.forward:34 →
Block.forward:22)`). A finding the plain analysis already reports at that line with
that code is not said twice, nor one that two targets find. Filtering (select,
ignore, per-file-ignores, `# noqa`, the baseline) applies to them as to any other.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from shapelint.diagnostics import Diagnostic


def for_file(targets: Iterable, path: str) -> list:
    """The configured targets (options.ConfiguredTarget) whose file is path."""
    # The name first: a real path costs a stat per component, and most files are none.
    name = os.path.basename(path)
    targets = [t for t in targets if os.path.basename(t.path) == name]
    if not targets:
        return []
    real = os.path.realpath(path)
    return [t for t in targets if t.path == real]


def file_ids(targets: Iterable) -> set[tuple[int, int]]:
    """(device, inode) of each target's file: the files a cache must not serve."""
    out = set()
    for t in targets:
        try:
            st = os.stat(t.path)
        except OSError:
            continue
        out.add((st.st_dev, st.st_ino))
    return out


def shown_path(found: str, path: str) -> str:
    """How a finding in file `found`, reached from the target in `path`, names its
    file: as path names the target's file (the same file is path itself; a file
    beside or below it, that path's directory joined to it), else its real path."""
    if found == path:
        return path
    real, home = os.path.realpath(found), os.path.realpath(path)
    if real == home:
        return path
    rel = os.path.relpath(real, os.path.dirname(home))
    if rel.startswith(os.pardir):
        return real
    return os.path.normpath(os.path.join(os.path.dirname(path), rel))


def diagnostics(errors: Iterable, path: str) -> list[Diagnostic]:
    """A target's errors (call_path.Finding) as diagnostics, each with its call path
    (one that raises only on an undecided alternative: a warning with its condition)."""
    return [
        f.diagnostic(shown_path(f.path, path), f"{f.text()} (via {f.call_path()})") for f in errors
    ]


def merged(plain: list[Diagnostic], found: list[Diagnostic]) -> list[Diagnostic]:
    """plain, and each target finding whose (file, line, code) no diagnostic before
    it has."""
    seen = {(d.path, d.line, d.code) for d in plain}
    out = list(plain)
    for d in found:
        key = (d.path, d.line, d.code)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return sorted(out)


def drop_repeats(results: list) -> None:
    """Across the files of one run: a target finding in another file (one whose path
    is not its result's) that the result for that file, or an earlier target,
    already reports at that line with that code is dropped."""
    by_name: dict[str, list] = {}
    for r in results:
        by_name.setdefault(os.path.basename(r.path), []).append(r)
    real_keys: dict[str, set] = {}

    def keys_of(real: str) -> set:
        if real not in real_keys:
            keys = set()
            for r in by_name.get(os.path.basename(real), ()):
                if os.path.realpath(r.path) == real:
                    keys |= {(d.line, d.code) for d in r.diagnostics if d.path == r.path}
            real_keys[real] = keys
        return real_keys[real]

    for r in results:
        if all(d.path == r.path for d in r.diagnostics):
            continue
        kept = []
        for d in r.diagnostics:
            if d.path != r.path:
                keys = keys_of(os.path.realpath(d.path))
                if (d.line, d.code) in keys:
                    continue
                keys.add((d.line, d.code))
            kept.append(d)
        r.diagnostics = kept
