"""Where the built-in stubs are: a module of its own, light enough for the cache
key (which fingerprints them) to find them without loading the stub machinery."""

from __future__ import annotations

from pathlib import Path


def builtin_stub_dir() -> Path:
    """stubs/ of a checkout, or the installed shapelint._stubs package."""
    try:
        import shapelint._stubs as pkg  # installed layout (pyproject maps stubs/ here)

        return Path(pkg.__file__).parent
    except ImportError:
        return Path(__file__).resolve().parents[2] / "stubs"
