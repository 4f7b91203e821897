"""`shapelint cost --diff BASE`: which functions became more or less expensive
between git revision BASE and the working tree.

Both sides go through the same driver with the same options: the files at BASE
are read with git into a temporary directory and analyzed there, then functions
are matched by (path relative to the repository root, qualified name).
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from shapelint.report import numbers

_REGULAR_BLOB_MODES = {"100644", "100755"}


class GitError(Exception):
    """Not a repository, an unknown revision, or git itself missing: a usage error."""


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args], input=stdin, capture_output=True, check=False
        )
    except OSError as e:
        raise GitError(f"cannot run git: {e}") from None
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(msg[-1] if msg else f"git {args[0]} failed")
    return proc.stdout


def git_root(start: Path) -> Path:
    d = start if start.is_dir() else start.parent
    out = _git(d, "rev-parse", "--show-toplevel")
    return Path(out.decode().strip()).resolve()


def resolve_revision(root: Path, rev: str) -> str:
    if rev.startswith("-"):
        raise GitError(f"not a revision: {rev!r}")
    try:
        return _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").decode().strip()
    except GitError:
        raise GitError(f"unknown revision {rev!r}") from None


# ---------------------------------------------------------------------- files at BASE


def _pathspecs(root: Path, paths: list[Path]) -> tuple[list[str], set[str]]:
    """Root-relative pathspecs for the paths given, and those that name single files
    (which, as on the command line, are checked even where exclude would skip them)."""
    specs: list[str] = []
    files: set[str] = set()
    for p in paths:
        try:
            rel = p.resolve().relative_to(root).as_posix()
        except ValueError:
            raise GitError(f"{p} is outside the repository at {root}") from None
        specs.append(rel if rel != "." else ".")
        if p.is_file():
            files.add(rel)
    return specs, files


def _excluded(root: Path, rel: str, cfg) -> bool:
    from shapelint.config import is_excluded_dir

    parts = rel.split("/")
    if any(is_excluded_dir(part) for part in parts[:-1]):
        return True
    if not cfg.exclude:
        return False
    return any(cfg.is_excluded(root.joinpath(*parts[:i])) for i in range(1, len(parts) + 1))


def files_at(root: Path, commit: str, paths: list[Path], cfg) -> list[tuple[str, str]]:
    """(root-relative path, blob id) of the Python files under paths at commit,
    with the same exclusions a walk of the working tree applies."""
    specs, explicit = _pathspecs(root, paths)
    out = _git(root, "ls-tree", "-r", "-z", commit, "--", *specs)
    entries = []
    for item in out.split(b"\0"):
        if not item:
            continue
        meta, _, name = item.partition(b"\t")
        mode, kind, blob = meta.decode().split()
        rel = name.decode("utf-8", "surrogateescape")
        if kind != "blob" or mode not in _REGULAR_BLOB_MODES or not rel.endswith(".py"):
            continue
        if rel not in explicit and _excluded(root, rel, cfg):
            continue
        entries.append((rel, blob))
    return sorted(entries)


def materialize(root: Path, entries: list[tuple[str, str]], dest: Path) -> list[Path]:
    """Write each blob to dest/<path> with one `git cat-file --batch`."""
    if not entries:
        return []
    out = _git(root, "cat-file", "--batch", stdin="".join(f"{b}\n" for _, b in entries).encode())
    written = []
    pos = 0
    for rel, _ in entries:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].split()
        size = int(header[2])
        data = out[nl + 1 : nl + 1 + size]
        pos = nl + 1 + size + 1
        target = dest.joinpath(*rel.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append(target)
    return written


def analyze_revision(root: Path, commit: str, paths: list[Path], cfg, options, jobs: int | None):
    """FileResults for the files at commit, with paths relative to root."""
    from shapelint.analysis.driver import analyze_files

    entries = files_at(root, commit, paths, cfg)
    with tempfile.TemporaryDirectory(prefix="shapelint-base-") as tmp:
        base = Path(tmp)
        files = materialize(root, entries, base)
        results = analyze_files(files, options, jobs=jobs)
    for r, (rel, _) in zip(results, entries, strict=True):
        _repath(r, rel)
    return results


def _repath(result, rel: str) -> None:
    result.path = rel
    for f in result.functions:
        f["path"] = rel
    for c in result.calls:
        c["path"] = rel


def relative_results(results, root: Path):
    for r in results:
        try:
            rel = Path(r.path).resolve().relative_to(root).as_posix()
        except ValueError:
            rel = Path(r.path).as_posix()
        _repath(r, rel)
    return results


# ---------------------------------------------------------------------- comparing


@dataclass
class Delta:
    """How one metric (flops or bytes) of one function moved."""

    before: str | None
    after: str | None
    direction: str  # same | more | less | changed
    change: str  # "×2", "÷D", "+2·B·D", "unknown now", ...
    before_value: int | None = None
    after_value: int | None = None
    # after − before, as a formula (program form) and in percent of before; None
    # where a side is unknown or the percent depends on sizes no dim binds.
    delta: str | None = None
    percent: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.before_value and self.after_value is not None:
            return self.after_value / self.before_value
        return None


@dataclass
class ModuleChange:
    """A row of a module target's per-module table (cost/table.py) that changed:
    its parameters and FLOPs at BASE and now (a side without the row: None)."""

    name: str  # as named_modules() names it; identical items collapsed (`h.0-11`)
    kind: str
    status: str  # more | less | changed | new | removed
    params: Delta
    flops: Delta


@dataclass
class FunctionChange:
    path: str
    name: str
    line: int
    status: str  # more | less | changed | new | removed | incomplete
    flops: Delta
    bytes: Delta
    complete: bool = True
    # The calls of unknown cost on the side that has them (after, else before):
    # their totals are lower bounds, so "the same" is not "no change".
    unknown: list[dict] = field(default_factory=list)
    bytes_complete: bool = True
    target: bool = False  # the row of a `cost PATH::QUALNAME` target
    notes: list[str] = field(default_factory=list)  # conventions its figures rest on
    # A module target's parameter count at BASE and now (`sum(p.numel() ...)`);
    # a side not known is None; None for a function or a file's rows
    params: Delta | None = None
    # A module target's per-module rows (named_modules() names) that changed
    modules: list[ModuleChange] = field(default_factory=list)

    def to_json(self) -> dict:
        d = asdict(self)
        d["flops"]["ratio"] = self.flops.ratio
        d["bytes"]["ratio"] = self.bytes.ratio
        if self.params is not None:
            d["params"]["ratio"] = self.params.ratio
        return d


def _parse(s: str | None):
    if s is None:
        return None
    from shapelint.notation.symbolic import parse_expr

    try:
        return parse_expr(s)
    except ValueError:
        return None


def compare_metric(before: str | None, after: str | None, dims: dict[str, int]) -> Delta:
    from shapelint.report.numbers import evaluate, human

    bv, av = evaluate(before, dims), evaluate(after, dims)
    delta = Delta(before, after, "same", "", bv, av)
    b, a = _parse(before), _parse(after)
    if b is not None and a is not None:
        delta.delta = (a - b).to_python()
        delta.percent = _percent(b, a, bv, av)
    if before == after:
        return delta
    if b is None or a is None:
        delta.direction = "changed"
        delta.change = "unknown now" if a is None else "known now"
        return delta
    if a == b:
        return delta
    direction, change = _symbolic_change(b, a)
    if bv is not None and av is not None and bv != av:
        # Bound sizes settle what the symbols cannot (e.g. 2·B·D → B·D + D²).
        direction = "more" if av > bv else "less"
    elif bv is not None and bv == av:
        direction = "same" if direction == "changed" else direction
    delta.direction, delta.change = direction, change or f"{human(before)} → {human(after)}"
    return delta


def _percent(b, a, bv: int | None, av: int | None) -> float | None:
    """(a − b) / b in percent: from the values, or from a constant ratio of the
    formulas (the same for every size)."""
    if bv is not None and av is not None:
        return (av - bv) * 100 / bv if bv else None
    ratio = _constant_ratio(b, a)
    return float((ratio - 1) * 100) if ratio is not None else None


# A factor people read at a glance (×2, ÷4, ×3/2); past it, the difference says more.
_READABLE = 16


def _symbolic_change(b, a) -> tuple[str, str]:
    """Direction and a short description of the change before b → after a, sizes unknown."""
    ratio = _constant_ratio(b, a)
    if ratio is not None and max(ratio.numerator, ratio.denominator) <= _READABLE:
        if ratio > 1:
            return "more", f"×{ratio}"
        if ratio > 0:
            return "less", f"÷{1 / ratio}"
    q = _monomial_factor(b, a)
    if q is not None and all(c > 0 for c in q.terms.values()):
        return "more", f"×{q.to_human()}"
    q = _monomial_factor(a, b)
    if q is not None and all(c > 0 for c in q.terms.values()):
        return "less", f"÷{q.to_human()}"
    diff = a - b
    coeffs = list(diff.terms.values())
    if coeffs and all(c > 0 for c in coeffs):
        return "more", f"+{diff.to_human()}"
    if coeffs and all(c < 0 for c in coeffs):
        return "less", f"−{(-diff).to_human()}"
    return "changed", ""


def _constant_ratio(b, a):
    """a / b when it is the same for every term (a is b scaled), else None."""
    from fractions import Fraction

    if not b.terms or set(a.terms) != set(b.terms):
        return None
    m, c = next(iter(b.terms.items()))
    ratio = Fraction(a.terms[m], c)
    if all(Fraction(a.terms[k], v) == ratio for k, v in b.terms.items()):
        return ratio
    return None


def _monomial_factor(b, a):
    """q with a == b·q for a single non-constant term q (a grew by a factor S, or 2·S), else None."""
    if not b.terms:
        return None
    from shapelint.notation.symbolic import Expr

    mb, cb = next(iter(b.terms.items()))
    for ma, ca in a.terms.items():
        q = Expr({ma: ca}).exact_div(Expr({mb: cb}))
        if q is not None and q.value is None and b * q == a:
            return q
    return None


def _function_index(results) -> dict[tuple[str, str], dict]:
    return {(f["path"], f["name"]): f for r in results for f in r.functions}


def _costless(f: dict) -> bool:
    return f.get("flops") in ("0", None) and f.get("bytes") in ("0", None)


_ORDER = {"more": 0, "less": 1, "changed": 2, "new": 3, "removed": 4, "incomplete": 5}


def with_defaults(f: dict, dims: dict[str, int]) -> dict:
    """f's figures with its defaults (int parameters, and a method's constructor
    parameters) substituted where no --dim binds the name: a PR that changes a
    default width or depth changes the formula the review compares."""
    defaults = {k: v for k, v in (f.get("defaults") or {}).items() if k not in dims}
    if not defaults:
        return f
    out = dict(f)
    for key in ("flops", "bytes"):
        e = _parse(f.get(key))
        if e is not None:
            out[key] = e.substitute(defaults).to_python()
    return out


def compare(before_results, after_results, dims: dict[str, int]) -> list[FunctionChange]:
    before = {k: with_defaults(f, dims) for k, f in _function_index(before_results).items()}
    after = {k: with_defaults(f, dims) for k, f in _function_index(after_results).items()}
    changes: list[FunctionChange] = []
    for key in sorted(set(before) | set(after)):
        b, a = before.get(key), after.get(key)
        if b is None or a is None:
            f = a if a is not None else b
            assert f is not None
            if _costless(f):
                continue  # every new helper would be a row otherwise
            status = "new" if b is None else "removed"
            flops = compare_metric(b and b["flops"], a and a["flops"], dims)
            byts = compare_metric(b and b["bytes"], a and a["bytes"], dims)
            flops.direction = byts.direction = status
            changes.append(
                FunctionChange(
                    key[0], key[1], f["line"], status, flops, byts, f.get("complete", True)
                )
            )
            continue
        flops = compare_metric(b["flops"], a["flops"], dims)
        byts = compare_metric(b["bytes"], a["bytes"], dims)
        complete = a.get("complete", True) and b.get("complete", True)
        if flops.direction == "same" and byts.direction == "same":
            if complete and numbers.complete(a, "bytes") and numbers.complete(b, "bytes"):
                continue
            # Equal lower bounds say nothing about the calls they leave out.
            unknown = a.get("unknown") or b.get("unknown") or []
            changes.append(
                FunctionChange(key[0], key[1], a["line"], "incomplete", flops, byts, False, unknown)
            )
            continue
        # FLOPs decide the row's verdict; bytes decide only when FLOPs did not move.
        lead = flops if flops.direction != "same" else byts
        changes.append(
            FunctionChange(
                key[0], key[1], a["line"], lead.direction, flops, byts, complete,
                a.get("unknown") or b.get("unknown") or [],
            )
        )  # fmt: skip
    for c in changes:
        sides = [s.get((c.path, c.name)) for s in (before, after)]
        c.bytes_complete = c.complete and all(
            f is None or numbers.complete(f, "bytes") for f in sides
        )
    changes.sort(key=lambda c: (_ORDER[c.status], -(c.flops.ratio or 0), c.path, c.name))
    return changes


def target_change(before: dict | None, after: dict, dims: dict[str, int]) -> FunctionChange:
    """The row of a `cost PATH::QUALNAME` target: its figure at BASE and now
    (constructor defaults applied on both sides, as the target is built)."""
    from shapelint.report.conventions import convention_lines

    name, line = after["name"], after.get("line") or 1
    notes = convention_lines(after)
    if before is None:
        flops = compare_metric(None, after["flops"], dims)
        byts = compare_metric(None, after["bytes"], dims)
        flops.direction = byts.direction = "new"
        return FunctionChange(
            after["path"], name, line, "new", flops, byts, after["complete"],
            list(after["unknown"]), numbers.complete(after, "bytes"), True, notes,
        )  # fmt: skip
    flops = compare_metric(before["flops"], after["flops"], dims)
    byts = compare_metric(before["bytes"], after["bytes"], dims)
    lead = flops if flops.direction != "same" else byts
    complete = before["complete"] and after["complete"]
    bytes_complete = complete and all(numbers.complete(t, "bytes") for t in (before, after))
    status = lead.direction
    if status == "same" and not bytes_complete:
        status = "incomplete"  # equal lower bounds say nothing of what they leave out
    unknown = list(after["unknown"] or before["unknown"])
    params = None
    if "params" in after:  # a module: its parameters beside its FLOPs
        params = compare_metric(_count(before), _count(after), dims)
    return FunctionChange(
        after["path"], name, line, status, flops, byts, complete, unknown, bytes_complete,
        True, notes, params, module_changes(before, after, dims),
    )  # fmt: skip


def module_changes(before: dict, after: dict, dims: dict[str, int]) -> list[ModuleChange]:
    """The per-module rows whose parameters or FLOPs differ between the two runs of
    a module target, in the order of the table now (rows gone last); a row whose
    figure is not known on a side shows `?` there, never 0."""
    from shapelint.cost.table import flat_rows

    was, now = flat_rows(before, dims), flat_rows(after, dims)
    out: list[ModuleChange] = []
    for name in [*now, *(n for n in was if n not in now)]:
        b, a = was.get(name), now.get(name)
        row = a if a is not None else b
        assert row is not None
        params = compare_metric(_text(b, "params"), _text(a, "params"), dims)
        flops = compare_metric(_text(b, "flops"), _text(a, "flops"), dims)
        if b is None or a is None:
            status = "new" if b is None else "removed"
        elif flops.direction == "same" and params.direction == "same":
            continue  # (a figure known on one side only is "changed", not the same)
        else:
            status = flops.direction if flops.direction != "same" else params.direction
        out.append(ModuleChange(name, row.kind, status, params, flops))
    return out


def _text(row, key: str) -> str | None:
    e = getattr(row, key) if row is not None else None
    return e.to_python() if e is not None else None


def _count(t: dict) -> str | None:
    """A target's complete parameter count (a formula), None where it is not known."""
    v = t.get("params")
    return None if v in (None, "?") else v


def target_at_revision(base: str, path: Path, analyze, cfg) -> dict | None:
    """analyze(path) on the tree at git revision BASE: the target's file and its
    package materialized in a scratch directory (None: the file is not there)."""
    from shapelint.analysis.project import module_name

    root = git_root(path.resolve().parent)
    commit = resolve_revision(root, base)
    pkg_root, modname = module_name(str(path))
    top = Path(pkg_root, modname.split(".")[0]) if pkg_root and modname else path.parent
    entries = files_at(root, commit, [top], cfg)
    rel = path.resolve().relative_to(root).as_posix()
    if rel not in {r for r, _ in entries}:
        return None
    with tempfile.TemporaryDirectory(prefix="shapelint-base-") as tmp:
        materialize(root, entries, Path(tmp))
        return analyze(Path(tmp, *rel.split("/")))


def compare_revision(
    base: str, paths: tuple[str, ...], cfg, options, after, jobs: int | None, unit=None
) -> list[FunctionChange]:
    """The per-function changes between git revision BASE and the working tree's
    results (after), both analysed with the same options, each function's figures
    through unit (report/numbers.to_macs, say) first. Raises GitError."""
    ps = [Path(p) for p in (paths or (".",))]
    root = git_root(ps[0].resolve())
    commit = resolve_revision(root, base)
    before = analyze_revision(root, commit, ps, cfg, options, jobs)
    after = relative_results(after, root)
    if unit is not None:
        for r in (*before, *after):
            r.functions = [unit(dict(f)) for f in r.functions]
    return compare(before, after, dict(options.dims))
