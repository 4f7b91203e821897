"""torch layers (and, as bases, the standard library's Mapping mixins: BASES) the
analysis reads as Python source (issue 24: torch's layers are
classes of the object model): `stubs/source/` holds their classes as torch writes
them, read as a project file is read, so that a layer's submodules, forward and
helper methods are what a user subclass inherits (`class L(nn.TransformerEncoderLayer)`
reading `self.norm1`, overriding `_sa_block`), and a construction builds the
Parameters its submodules' stubs describe.

A layer belongs here, rather than in a stub, where torch builds it from other layers:
its figures are then theirs, counted as a run of its source counts them; or where what
it registers and computes follows loops no stub line writes (the recurrent layers:
Parameters per layer and direction, a step per time step).
"""

from __future__ import annotations

from shapelint.ops.stub_dir import builtin_stub_dir

# The files under stubs/source/ (module names no project can take: they are looked
# up on this root only), each with torch's module of its classes and their names.
_MODULES = {
    "shapelint_torch_transformer": (
        "transformer",
        (
            "Transformer",
            "TransformerEncoder",
            "TransformerDecoder",
            "TransformerEncoderLayer",
            "TransformerDecoderLayer",
        ),
    ),
    "shapelint_torch_rnn": ("rnn", ("RNNBase", "RNN", "GRU", "LSTM")),
}
# torch.distributions' classes the source file holds, each with torch's file of it.
_DISTRIBUTIONS = {
    "Distribution": "distribution",
    "Normal": "normal",
    "Categorical": "categorical",
    "Independent": "independent",
    "Transform": "transforms",
}
# The standard library's abstract classes whose mixin methods are read as source
# where a project class derives from one (`class Registry(MutableMapping)`): only as
# a base, never as a value, which stays the class the analysis models by name
# (`isinstance(d, Mapping)` of a dict).
BASES = {
    f"{module}.{c}": ("shapelint_collections_abc", c)
    for module in ("collections.abc", "typing")
    for c in ("Mapping", "MutableMapping")
}
MODULES = frozenset((*_MODULES, "shapelint_torch_distributions", "shapelint_collections_abc"))
# torch.nn re-exports torch.nn.modules, which re-exports torch.nn.modules.<file>;
# torch.distributions re-exports torch.distributions.<file>.
NAMES = {
    **{
        prefix + c: (module, c)
        for module, (torch_file, classes) in _MODULES.items()
        for prefix in ("torch.nn.", "torch.nn.modules.", f"torch.nn.modules.{torch_file}.")
        for c in classes
    },
    **{
        prefix + c: ("shapelint_torch_distributions", c)
        for c, torch_file in _DISTRIBUTIONS.items()
        for prefix in ("torch.distributions.", f"torch.distributions.{torch_file}.")
    },
}

_ROOT: tuple[str, ...] | None = None


def root() -> tuple[str, ...]:
    """The import root the source modules are found on."""
    global _ROOT
    if _ROOT is None:
        _ROOT = (str(builtin_stub_dir() / "source"),)
    return _ROOT


def holds(path: str | None) -> bool:
    """Whether path is one of the source modules (torch's classes as modelled here)."""
    return path is not None and str(path).startswith(root()[0])


def source_name(qual: str) -> tuple[str, str] | None:
    """(source module, class name) of a torch qualified name one models, else None."""
    return NAMES.get(qual)


def base_name(qual: str) -> tuple[str, str] | None:
    """(source module, class name) of a class read as source where it is a base."""
    return NAMES.get(qual) or BASES.get(qual)
