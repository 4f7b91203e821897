"""[tool.shapelint] in pyproject.toml, merged with command-line options."""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


class ConfigError(Exception):
    """A usage problem in configuration: reported with exit code 2."""


KNOWN_KEYS = {
    "select",
    "ignore",
    "extend-select",
    "exclude",
    "extend-exclude",
    "per-file-ignores",
    "stubs",
    "dims",
    "dtype",
    "hardware",
    "cache-dir",
    "naming",
    "time-budget",
    "fail-on",
    "roots",
    "installed",
    "targets",
}
FAIL_ON = ("error", "warning")  # the lowest severity that fails a run

DEFAULT_EXCLUDE_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".eggs",
        "build",
        "dist",
        "node_modules",
        "site-packages",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".shapelint_cache",
        ".ipynb_checkpoints",
    }
)


@dataclass
class Config:
    root: Path
    select: list[str] = field(default_factory=list)  # empty: every default rule
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    stubs: list[str] = field(default_factory=list)
    dims: dict[str, int] = field(default_factory=dict)
    dtype: str | None = None
    hardware: dict = field(default_factory=dict)
    naming: dict = field(default_factory=dict)
    time_budget: float | None = None  # seconds per file; None: the default, 0: none
    installed: bool = True  # target runs read installed packages' source
    fail_on: str = "error"  # warnings fail a run only when this is "warning"
    source: Path | None = None  # the pyproject.toml read, if any
    # Where absolute imports of project modules are looked up, after the file's own
    # package root (or, for a script, its directory): `roots`, else the pyproject's
    # directory and its src/, then the directories a command is given (add_roots).
    roots: list[str] = field(default_factory=list)
    # [tool.shapelint.targets]: entry points `check` runs at real sizes
    # (options.ConfiguredTarget, validated here: a bad entry is a ConfigError).
    targets: list = field(default_factory=list)

    def add_roots(self, dirs) -> None:
        """Directories given on the command line, each with its src/ (a src layout)."""
        for d in dirs:
            for r in layout_roots(Path(d)):
                if r not in self.roots:
                    self.roots.append(r)

    # -- rule selection (ruff's semantics: prefixes, the most specific wins) -------------
    def is_enabled(self, code: str, path: str | None = None) -> bool:
        from shapelint.rules import RULES

        rule = RULES.get(code)
        default = rule.default if rule else True
        sel = _best_match(code, self.select + self.extend_select)
        if sel is None and not self.select and default:
            sel = 0  # no explicit select: every rule that is on by default
        if sel is None:
            return False
        ign = _best_match(code, self.ignore)
        if path is not None:
            for pat, codes in self.per_file_ignores.items():
                if _path_matches(path, pat, self.root):
                    m = _best_match(code, codes)
                    if m is not None and (ign is None or m > ign):
                        ign = m
        # The most specific selector wins; on a tie, ignore wins (as in ruff).
        return ign is None or sel > ign

    def is_excluded(self, path: Path) -> bool:
        return any(_path_matches(str(path), pat, self.root) for pat in self.exclude)


def _best_match(code: str, selectors: list[str]) -> int | None:
    """Length of the longest selector that is a prefix of code (ALL counts as 0)."""
    best = None
    for s in selectors:
        s = s.strip().upper()
        if s == "ALL" or (s and code.startswith(s)):
            n = 0 if s == "ALL" else len(s)
            best = n if best is None or n > best else best
    return best


def _path_matches(path: str, pattern: str, root: Path) -> bool:
    p = Path(path)
    try:
        rel = p.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        rel = p.as_posix()
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(p.as_posix(), pattern):
        return True
    parts = rel.split("/")
    # A bare name matches any path component (`exclude = ["generated"]`).
    if "/" not in pattern and any(fnmatch.fnmatch(part, pattern) for part in parts):
        return True
    return any(fnmatch.fnmatch("/".join(parts[:i]), pattern) for i in range(1, len(parts)))


def find_pyproject(start: Path) -> Path | None:
    cur = start.resolve()
    if cur.is_file():
        cur = cur.parent
    for d in (cur, *cur.parents):
        candidate = d / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
                # Skipping it could apply a parent directory's configuration instead.
                raise ConfigError(
                    f"{candidate}: {_why_unreadable(e)}; shapelint cannot tell whether it "
                    "configures shapelint (fix it, or name a file with --config)"
                ) from None
            tool = data.get("tool", {})
            if isinstance(tool, dict) and "shapelint" in tool:
                return candidate
    return None


def layout_roots(d: Path) -> list[str]:
    """d and, in a src layout, d/src: where a project's top-level modules live."""
    d = d.resolve()
    return [str(d)] + ([str(d / "src")] if (d / "src").is_dir() else [])


def _project_dir(start: Path) -> Path | None:
    """The directory of the nearest pyproject.toml, with or without [tool.shapelint]."""
    cur = start.resolve()
    cur = cur if cur.is_dir() else cur.parent
    return next((d for d in (cur, *cur.parents) if (d / "pyproject.toml").is_file()), None)


def load(start: Path | None = None, explicit: Path | None = None) -> Config:
    path = explicit or find_pyproject(start or Path.cwd())
    if path is None:
        cfg = Config(
            root=(start or Path.cwd()).resolve() if (start and start.is_dir()) else Path.cwd()
        )
        project = _project_dir(start or Path.cwd())
        cfg.roots = layout_roots(project) if project is not None else []
        return cfg
    try:
        raw = path.read_text(encoding="utf-8")
        data = tomllib.loads(raw)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{path}: {_why_unreadable(e)}") from None
    tool = data.get("tool", {})
    section = tool.get("shapelint", {}) if isinstance(tool, dict) else {}
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.shapelint] must be a table")
    unknown = set(section) - KNOWN_KEYS
    if unknown:
        raise ConfigError(
            f"{path}: unknown key(s) in [tool.shapelint]: {', '.join(sorted(unknown))} "
            f"(known: {', '.join(sorted(KNOWN_KEYS))})"
        )
    cfg = Config(root=path.parent, source=path)

    def str_list(key: str) -> list[str]:
        v = section.get(key, [])
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise ConfigError(f"{path}: [tool.shapelint] {key} must be a list of strings")
        return v

    def codes(key: str, value) -> list[str]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise ConfigError(
                f"{path}: [tool.shapelint] {key} must be a list of rule codes or prefixes "
                f'(strings such as "SHP2"), not {value!r}'
            )
        try:
            return check_codes([c.strip().upper() for c in value], key)
        except ConfigError as e:
            raise ConfigError(f"{path}: [tool.shapelint] {e}") from None

    cfg.select = codes("select", section.get("select", []))
    cfg.extend_select = codes("extend-select", section.get("extend-select", []))
    cfg.ignore = codes("ignore", section.get("ignore", []))
    cfg.exclude = str_list("exclude") + str_list("extend-exclude")
    cfg.stubs = [str(path.parent / s) for s in str_list("stubs")]
    pfi = section.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{path}: [tool.shapelint] per-file-ignores must be a table")
    for pat, value in pfi.items():
        cfg.per_file_ignores[pat] = codes(f"per-file-ignores[{pat!r}]", value)
    dims = section.get("dims", {})
    if not isinstance(dims, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in dims.values()
    ):
        raise ConfigError(f"{path}: [tool.shapelint] dims must map names to positive integers")
    cfg.dims = dict(dims)
    dtype = section.get("dtype")
    if dtype is not None:
        from shapelint.ops.dtypes import DTYPE_ALIASES

        # What `shapelint cost` takes, from the layer below.
        known = sorted({*DTYPE_ALIASES, *DTYPE_ALIASES.values()})
        if not isinstance(dtype, str) or dtype not in known:
            raise ConfigError(
                f"{path}: [tool.shapelint] dtype must be one of {', '.join(known)}, "
                f"not {dtype!r}{_did_you_mean(dtype, known)}"
            )
    cfg.dtype = dtype
    hw = section.get("hardware", {})
    if not isinstance(hw, dict):
        raise ConfigError(f"{path}: [tool.shapelint.hardware] must be a table")
    cfg.hardware = hw
    naming = section.get("naming", {})
    if not isinstance(naming, dict):
        raise ConfigError(f"{path}: [tool.shapelint.naming] must be a table")
    problem = _naming_problem(naming)
    if problem:
        raise ConfigError(f"{path}: [tool.shapelint.naming] {problem}")
    cfg.naming = naming
    budget = section.get("time-budget")
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget < 0
    ):
        raise ConfigError(
            f"{path}: [tool.shapelint] time-budget must be a number of seconds >= 0 "
            f"(0: no budget), not {budget!r}"
        )
    cfg.time_budget = budget
    installed = section.get("installed", True)
    if not isinstance(installed, bool):
        raise ConfigError(f"{path}: [tool.shapelint] installed must be true or false")
    cfg.installed = installed
    fail_on = section.get("fail-on", "error")
    if fail_on not in FAIL_ON:
        raise ConfigError(
            f"{path}: [tool.shapelint] fail-on must be one of {', '.join(map(repr, FAIL_ON))}"
        )
    cfg.fail_on = fail_on
    if "roots" in section:
        cfg.roots = [str((path.parent / r).resolve()) for r in str_list("roots")]
    else:
        cfg.roots = layout_roots(path.parent)
    if "targets" in section:
        from shapelint.config_targets import TargetConfigError, configured_targets

        try:
            cfg.targets = configured_targets(section["targets"], path, raw)
        except TargetConfigError as e:
            raise ConfigError(str(e)) from None
    return cfg


def _why_unreadable(e: Exception) -> str:
    if isinstance(e, tomllib.TOMLDecodeError):
        return f"invalid TOML: {e}"
    if isinstance(e, UnicodeDecodeError):
        return f"not UTF-8: {e}"
    return f"cannot read: {getattr(e, 'strerror', None) or e}"


def _did_you_mean(word: str, choices) -> str:
    import difflib

    close = difflib.get_close_matches(str(word).upper(), [c.upper() for c in choices], n=1)
    if not close:
        return ""
    original = next(c for c in choices if c.upper() == close[0])
    return f" (did you mean '{original}'?)"


def check_codes(codes: list[str], where: str) -> list[str]:
    """codes, when each is ALL, a rule code or a prefix of one; else a ConfigError
    naming where (a key or a flag) with the closest code: a typo would otherwise
    select nothing, or ignore nothing, without a word."""
    from shapelint.rules import RULES

    prefixes = {code[:n] for code in RULES for n in range(1, len(code) + 1)}
    for c in codes:
        if c != "ALL" and c not in prefixes:
            # Letters typed for the digits they look like (SHP2O1, SHP10l) first.
            digits = c[:3] + c[3:].translate(_LOOKALIKES)
            hint = (
                f" (did you mean '{digits}'?)"
                if digits in prefixes
                else _did_you_mean(c, list(RULES))
            )
            raise ConfigError(
                f"{where}: unknown rule code or prefix {c!r}{hint}; `shapelint rules` lists them"
            )
    return codes


_LOOKALIKES = str.maketrans("OILSB", "01158")


NAMING_KEYS = {"generic", "aliases", "lowercase", "quotient"}


def _naming_problem(naming: dict) -> str | None:
    """What is wrong with [tool.shapelint.naming], or None."""
    from shapelint.notation.axis_names import is_axis_name

    unknown = sorted(set(naming) - NAMING_KEYS)
    if unknown:
        return (
            f"unknown key(s): {', '.join(unknown)}{_did_you_mean(unknown[0], sorted(NAMING_KEYS))}"
            f" (known: {', '.join(sorted(NAMING_KEYS))})"
        )
    generic = naming.get("generic", [])
    names = generic.split() if isinstance(generic, str) else generic
    if not isinstance(names, list) or not all(
        isinstance(g, str) and is_axis_name(g) for g in names
    ):
        return f"generic must be a list of axis names, not {generic!r}"
    for key in ("aliases", "quotient"):
        table = naming.get(key, {})
        if not isinstance(table, dict) or not all(
            isinstance(v, str) and is_axis_name(v) for v in table.values()
        ):
            return f"{key} must map names to axis names (identifiers), not {table!r}"
    if not isinstance(naming.get("lowercase", True), bool):
        return f"lowercase must be true or false, not {naming['lowercase']!r}"
    return None


def is_excluded_dir(name: str) -> bool:
    return name in DEFAULT_EXCLUDE_DIRS or name.endswith(".egg-info")


def walk_python_files(root: Path, cfg: Config):
    """Python files under root, skipping VCS/venv/build dirs and never following
    directory symlinks (so a link loop cannot hang the walk)."""
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            yield d  # unreadable: the driver reports it (SHP001), it is never skipped
            continue
        subdirs = []
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    if is_excluded_dir(e.name) or (Path(e.path) / "pyvenv.cfg").exists():
                        continue
                    if cfg.exclude and cfg.is_excluded(Path(e.path)):
                        continue
                    subdirs.append(Path(e.path))
                    continue
            except OSError:
                pass  # cannot tell: a file, when it ends in .py (reading it will say why)
            if e.name.endswith(".py"):
                # Not only regular files: a FIFO or device named .py is refused when
                # read (SHP001, without blocking), not skipped.
                p = Path(e.path)
                if cfg.exclude and cfg.is_excluded(p):
                    continue
                yield p
        stack.extend(reversed(subdirs))


# The names flake8 uses for a file it did not read from disk.
STDIN_NAMES = {"stdin", "-", "<stdin>"}

_configs: dict[Path, object] = {}
_warned: set[str] = set()


def warn_once(message: str) -> None:
    """A warning for a face that cannot exit 2 (the flake8 plugin, the language
    server), written to stderr once per process."""
    if message not in _warned:
        _warned.add(message)
        sys.stderr.write(f"shapelint: warning: {message}\n")


def config_for_file(filename: str):
    """The [tool.shapelint] that applies to filename, loaded once per directory."""
    start = Path.cwd() if filename in STDIN_NAMES else Path(filename).resolve().parent
    cfg = _configs.get(start)
    if cfg is None:
        try:
            cfg = load(start if start.is_dir() else Path.cwd())
        except ConfigError as e:
            # A plugin cannot exit 2 as the CLI does; say it once and check with defaults
            # rather than stop flake8's other plugins.
            warn_once(f"{e}; using the default rules")
            cfg = Config(root=Path.cwd())
        _configs[start] = cfg
    return cfg
