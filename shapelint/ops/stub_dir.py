"""Where the built-in stubs are: a module of its own, light enough for the cache
key (which fingerprints them) to find them without loading the stub machinery."""

from __future__ import annotations

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
