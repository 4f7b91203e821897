"""Where stub files are: the built-in ones and the paths a project names. Light (no
parsing), so that the cache can fingerprint the stubs without loading them."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path


def builtin_stub_dir() -> Path:
    """stubs/ of a checkout, or the installed shapelint._stubs package. The checkout
    comes first: an editable install elsewhere maps shapelint._stubs to its own
    stubs, which need not match this checkout's code."""
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / "stubs").is_dir():
        return checkout / "stubs"
    try:
        import shapelint._stubs as pkg  # installed layout (pyproject maps stubs/ here)

        return Path(pkg.__file__).parent
    except ImportError:
        return Path(__file__).resolve().parents[2] / "stubs"


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
