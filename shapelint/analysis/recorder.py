"""The module being built, as the analysis holds it while its constructor runs:
a mutable stand-in, apart from modules.py (which re-exports it) so that the
modules below modules.py in the import graph can tell it apart (generators.py)."""

from __future__ import annotations

from shapelint.ops.values import Value


class SelfRecorder(Value):
    """`self` inside __init__: records what gets assigned to self.<attr>."""

    def __init__(self, cls: str):
        self.cls = cls
        self.attrs: dict[str, Value] = {}
