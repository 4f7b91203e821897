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
    "fail-on",
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
    fail_on: str = "error"  # warnings fail a run only when this is "warning"
    source: Path | None = None  # the pyproject.toml read, if any

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
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            if "shapelint" in data.get("tool", {}):
                return candidate
    return None


def load(start: Path | None = None, explicit: Path | None = None) -> Config:
    path = explicit or find_pyproject(start or Path.cwd())
    if path is None:
        return Config(
            root=(start or Path.cwd()).resolve() if (start and start.is_dir()) else Path.cwd()
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    section = data.get("tool", {}).get("shapelint", {})
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

    cfg.select = [s.upper() for s in str_list("select")]
    cfg.extend_select = [s.upper() for s in str_list("extend-select")]
    cfg.ignore = [s.upper() for s in str_list("ignore")]
    cfg.exclude = str_list("exclude") + str_list("extend-exclude")
    cfg.stubs = [str(path.parent / s) for s in str_list("stubs")]
    pfi = section.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{path}: [tool.shapelint] per-file-ignores must be a table")
    for pat, codes in pfi.items():
        if isinstance(codes, str):
            codes = [codes]
        if not isinstance(codes, list):
            raise ConfigError(f"{path}: per-file-ignores[{pat!r}] must be a list of codes")
        cfg.per_file_ignores[pat] = [c.upper() for c in codes]
    dims = section.get("dims", {})
    if not isinstance(dims, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in dims.values()
    ):
        raise ConfigError(f"{path}: [tool.shapelint] dims must map names to positive integers")
    cfg.dims = dict(dims)
    dtype = section.get("dtype")
    if dtype is not None and not isinstance(dtype, str):
        raise ConfigError(f"{path}: [tool.shapelint] dtype must be a string")
    cfg.dtype = dtype
    hw = section.get("hardware", {})
    if not isinstance(hw, dict):
        raise ConfigError(f"{path}: [tool.shapelint.hardware] must be a table")
    cfg.hardware = hw
    naming = section.get("naming", {})
    if not isinstance(naming, dict):
        raise ConfigError(f"{path}: [tool.shapelint.naming] must be a table")
    cfg.naming = naming
    fail_on = section.get("fail-on", "error")
    if fail_on not in FAIL_ON:
        raise ConfigError(
            f"{path}: [tool.shapelint] fail-on must be one of {', '.join(map(repr, FAIL_ON))}"
        )
    cfg.fail_on = fail_on
    return cfg


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
                elif e.name.endswith(".py") and e.is_file():
                    p = Path(e.path)
                    if cfg.exclude and cfg.is_excluded(p):
                        continue
                    yield p
            except OSError:
                continue
        stack.extend(reversed(subdirs))


# The names flake8 uses for a file it did not read from disk.
STDIN_NAMES = {"stdin", "-", "<stdin>"}

_configs: dict[Path, object] = {}
_warned: set[str] = set()


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
            if str(e) not in _warned:
                _warned.add(str(e))
                sys.stderr.write(f"shapelint: warning: {e}; using the default rules\n")
            cfg = Config(root=Path.cwd())
        _configs[start] = cfg
    return cfg
