"""Where the stubs are (the built-in ones, and the files a project names): a module
of its own, light enough for the cache key (which fingerprints them) to find them
without loading the stub machinery."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path


def builtin_stub_dir() -> Path:
    """stubs/ of the checkout this package is in, else the installed shapelint._stubs.

    The checkout comes first: an editable install maps shapelint._stubs to the
    checkout it was made from, which need not be the one running."""
    root = Path(__file__).resolve().parents[2]
    here = root / "stubs"
    if here.is_dir() and (root / "pyproject.toml").is_file():
        return here
    try:
        import shapelint._stubs as pkg  # installed layout (pyproject maps stubs/ here)

        return Path(pkg.__file__).parent
    except ImportError:
        return here


def stub_files(paths: Iterable[str | Path]) -> tuple[list[Path], list[tuple[str, str]]]:
    """The stub files named, or in the directories named (their `*.stub`), and a
    (path, problem) for each that is neither a regular file nor a directory. Only
    stat() looks at them: opening a FIFO would block, a device could read forever."""
    files: list[Path] = []
    problems: list[tuple[str, str]] = []
    for p in map(Path, paths):
        try:
            mode = os.stat(p).st_mode
        except OSError as e:
            problems.append((str(p), f"cannot read stub file: {e.strerror or e}"))
            continue
        if stat.S_ISDIR(mode):
            for f in sorted(p.glob("*.stub")):
                if _is_regular(f):
                    files.append(f)
                else:
                    problems.append((str(f), "cannot read stub file: not a regular file"))
        elif stat.S_ISREG(mode):
            files.append(p)
        else:
            problems.append(
                (
                    str(p),
                    "cannot read stub path: neither a regular file nor a directory of .stub files",
                )
            )
    return files, problems


def _is_regular(p: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(p).st_mode)
    except OSError:
        return False
