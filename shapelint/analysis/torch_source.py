"""torch layers the analysis reads as Python source (issue 24: torch's layers are
classes of the object model): `stubs/source/` holds their classes as torch writes
them, read as a project file is read, so that a layer's submodules, forward and
helper methods are what a user subclass inherits (`class L(nn.TransformerEncoderLayer)`
reading `self.norm1`, overriding `_sa_block`), and a construction builds the
Parameters its submodules' stubs describe.

A layer belongs here, rather than in a stub, where torch builds it from other layers:
its figures are then theirs, counted as a run of its source counts them.
"""

from __future__ import annotations

from shapelint.ops.stub_dir import builtin_stub_dir

# The file under stubs/source/ (a module name no project can take: it is looked up
# on this root only) and the public names torch gives its classes.
MODULE = "shapelint_torch_transformer"
_CLASSES = (
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
)
# torch.nn re-exports torch.nn.modules, which re-exports torch.nn.modules.transformer.
_PREFIXES = ("torch.nn.", "torch.nn.modules.", "torch.nn.modules.transformer.")
NAMES = {p + c: c for p in _PREFIXES for c in _CLASSES}

_ROOT: tuple[str, ...] | None = None


def root() -> tuple[str, ...]:
    """The import root the source modules are found on."""
    global _ROOT
    if _ROOT is None:
        _ROOT = (str(builtin_stub_dir() / "source"),)
    return _ROOT


def source_name(qual: str) -> str | None:
    """The class name in MODULE of a torch qualified name it models, else None."""
    return NAMES.get(qual)
