"""What the analysis of one file depends on besides its text: the one options
object every face passes through the driver (shapelint/analysis/driver.py).

The cache is not in it (it is how results are kept, not what they are): the
driver takes it as a separate argument."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ConfiguredTarget:
    """One entry of [tool.shapelint.targets] (`"model.py::GPT" = { init = {...},
    input = {...} }`), as plain data: `check` runs it when it checks its file.
    path is the file's real path (the key's path, relative to the pyproject's
    directory); where, the key's place in the pyproject (`PATH:LINE`) for errors."""

    key: str
    where: str
    path: str
    qualname: str
    init: tuple[tuple[str, str], ...] = ()
    inputs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class AnalysisOptions:
    """stubs: the project's stub files ([tool.shapelint] stubs), on top of the
    built-in ones. naming: [tool.shapelint.naming] (axis names). dtype: the dtype of
    tensors whose dtype is not known (None: float32). dims: sizes bound by the user
    (--dim, [tool.shapelint] dims); they evaluate figures and do not change what
    the analysis computes. check_dims: sizes `check` checks at as well (its --dim
    and [tool.shapelint] dims): annotated dims and int parameters of those names
    are those numbers, so sizes that disagree there are errors. project: False
    analyses each file on its own; otherwise (None, the default) a file inside a
    package, or a script importing a module beside it, sees the project files it
    imports (analysis/project.py); a tuple of directories adds them to the roots
    absolute imports are looked up along ([tool.shapelint] roots). installed:
    False leaves installed packages unread; otherwise a target run reads the source
    of the installed packages its code calls into (analysis/installed.py). time_budget:
    seconds one file's analysis may take. costs: False leaves out what only the cost
    records need (FLOP and byte formulas, function totals): `check` and the flake8
    plugin print diagnostics only, and those are the same either way. targets:
    [tool.shapelint.targets]; the analysis of a target's file runs it and adds the
    errors on its path (analysis/entry_points.py); the faces that print diagnostics
    (check, the flake8 plugin, the language server) pass them, `cost` and `run`
    do not (they run the one target they are given)."""

    stubs: tuple[str, ...] = ()
    naming: Mapping[str, Any] = field(default_factory=dict)
    dtype: str | None = None
    dims: Mapping[str, int] = field(default_factory=dict)
    check_dims: Mapping[str, int] = field(default_factory=dict)
    project: Any = None
    installed: bool = True
    # Seconds one file may take (None: budget.DEFAULT_SECONDS; 0: no budget). Not in
    # the cache key: a result cut short by it is never cached.
    time_budget: float | None = None
    costs: bool = True
    # Not in the cache key: a file with targets is never cached (its findings depend
    # on every file the targets read), and no other file's result depends on them.
    targets: tuple[ConfiguredTarget, ...] = ()

    def __post_init__(self) -> None:
        # Copies, so that a caller's later edits do not reach a frozen object.
        object.__setattr__(self, "stubs", tuple(str(s) for s in self.stubs))
        object.__setattr__(self, "naming", dict(self.naming or {}))
        object.__setattr__(self, "dims", dict(self.dims or {}))
        object.__setattr__(self, "check_dims", dict(self.check_dims or {}))
        object.__setattr__(self, "targets", tuple(self.targets or ()))

    @classmethod
    def from_config(cls, cfg, **overrides: Any) -> AnalysisOptions:
        """The options [tool.shapelint] gives, with a face's own (dtype, dims) on top."""
        values: dict[str, Any] = {
            "stubs": tuple(cfg.stubs),
            "naming": dict(cfg.naming),
            "time_budget": cfg.time_budget,
            "project": tuple(cfg.roots) or None,
            "installed": cfg.installed,
        }
        values.update(overrides)
        return cls(**values)

    @classmethod
    def coerce(cls, options: AnalysisOptions | Mapping[str, Any] | None) -> AnalysisOptions:
        """The options object for options given as one, as a mapping of its fields
        (tests and scripts), or as None (the defaults)."""
        if isinstance(options, AnalysisOptions):
            return options
        if not options:
            return cls()
        known = {k: v for k, v in options.items() if k in cls.__dataclass_fields__}
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise TypeError(f"unknown analysis options: {', '.join(unknown)}")
        if known.get("stubs") is None:
            known.pop("stubs", None)
        return cls(**known)

    def cache_key(self) -> dict[str, Any]:
        """The options that change what the analysis computes, as plain data."""
        return {
            "stubs": list(self.stubs),
            "naming": dict(self.naming),
            "dtype": self.dtype,
            "check_dims": sorted(self.check_dims.items()),
            "project": list(self.project)
            if isinstance(self.project, tuple)
            else self.project is not False,
            "installed": self.installed,
            "costs": self.costs,
        }
