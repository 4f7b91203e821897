"""[tool.shapelint.targets]: entry points `shapelint check` runs at real sizes.

    [tool.shapelint.targets]
    "model.py::GPT" = { init = { config = "GPTConfig(n_layer=2)" }, input = { idx = "B,T:int" } }

Each key is `PATH::QUALNAME` (PATH relative to the pyproject's directory), `init`
the constructor arguments and `input` the forward's argument shapes, spelt as
`cost PATH::QUALNAME --init NAME=VALUE --input NAME=SHAPE` spells them. What can be
told from the configuration alone (the key, the file, the spelling of each value)
is checked here, as a configuration error naming the key's line; what needs the file's
classes (a class it does not define, a call Python would refuse) is said when the
target runs (analysis/entry_points.py), with the same location.
"""

from __future__ import annotations

from pathlib import Path

from shapelint.notation.target import Target
from shapelint.options import ConfiguredTarget

ENTRY_KEYS = ("init", "input")


class TargetConfigError(ValueError):
    """A bad entry, said with its location (config.py reports it as a ConfigError)."""


def configured_targets(table, pyproject: Path, raw: str) -> list[ConfiguredTarget]:
    """The entries of [tool.shapelint.targets]; a TargetConfigError for a bad one."""
    if not isinstance(table, dict):
        raise TargetConfigError(f"{pyproject}: [tool.shapelint.targets] must be a table")
    return [_entry(key, value, pyproject, raw) for key, value in table.items()]


def key_line(raw: str, key: str) -> int | None:
    """The line of the pyproject that spells the key (quoted, as a key with `::`
    must be), or of the [tool.shapelint.targets] header; None when neither shows."""
    header = None
    lines = raw.splitlines()
    # From the first [tool.shapelint...] table on: the key elsewhere is not this one.
    start = next((i for i, line in enumerate(lines) if "tool.shapelint" in line), 0)
    for n, line in enumerate(lines[start:], start + 1):
        if f'"{key}"' in line or f"'{key}'" in line:
            return n
        if header is None and line.strip().replace(" ", "") == "[tool.shapelint.targets]":
            header = n
    return header


def _entry(key: str, value, pyproject: Path, raw: str) -> ConfiguredTarget:
    line = key_line(raw, key)
    where = f"{pyproject}:{line}" if line is not None else str(pyproject)

    def bad(why: str) -> TargetConfigError:
        return TargetConfigError(f"{where}: [tool.shapelint.targets] {key!r}: {why}")

    target = Target.parse(key)
    if not target.qualname or not target.path:
        raise bad("a key is PATH::QUALNAME (a class or function of a file), e.g. 'model.py::GPT'")
    if not isinstance(value, dict):
        raise bad(f"must be a table with {' and '.join(ENTRY_KEYS)}, not {value!r}")
    unknown = sorted(set(value) - set(ENTRY_KEYS))
    if unknown:
        raise bad(f"unknown key(s) {', '.join(unknown)} (known: {', '.join(ENTRY_KEYS)})")
    file = (pyproject.parent / target.path).resolve()
    if not file.is_file():
        raise bad(f"no such file: {file}")
    init = _table(value.get("init", {}), "init", bad)
    inputs = _table(value.get("input", {}), "input", bad)
    from shapelint.analysis.target import TargetError, parse_input, parse_value

    try:
        for name, text in init:
            parse_value(text, f"init {name}")
        for name, text in inputs:
            parse_input(text, f"input {name}")
    except TargetError as e:
        raise bad(str(e)) from None
    return ConfiguredTarget(key, where, str(file), target.qualname, init, inputs)


def _table(value, what: str, bad) -> tuple[tuple[str, str], ...]:
    """A table of NAME = VALUE as (name, Python text) pairs. init takes a string
    (a Python expression: `"GPTConfig(n_layer=2)"`), an integer, a float or a
    boolean; input a string (`"B,T:int"`)."""
    if not isinstance(value, dict):
        raise bad(f"{what} must be a table of NAME = VALUE, not {value!r}")
    out = []
    for name, v in value.items():
        if not name.isidentifier():
            raise bad(f"{what}: {name!r} is not a parameter name")
        if isinstance(v, str):
            text = v
        elif what == "init" and isinstance(v, (bool, int, float)):
            text = repr(v)
        else:
            kinds = "a string, an integer, a float or a boolean" if what == "init" else "a string"
            raise bad(f"{what} {name}: expected {kinds}, not {v!r}")
        out.append((name, text))
    return tuple(out)
