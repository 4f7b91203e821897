"""The one door into the analysis. Files in, results out: read, pre-filter, parse,
analyze, in a process pool on large trees, through a content-keyed cache. Every
face (check, --fix, cost, run, the flake8 plugin, the LSP) analyses a file through
analyze_source (one text) or analyze_files (many), with one AnalysisOptions, and
nothing else builds a ModuleAnalyzer."""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shapelint import pyparse
from shapelint.analysis import call_path, unnamed
from shapelint.analysis.source import DecodeFailure, SourceFile, decode_source, split_lines
from shapelint.diagnostics import Diagnostic, safe_text
from shapelint.options import AnalysisOptions

__all__ = ["AnalysisOptions", "FileResult", "SourceAnalysis", "analyze_files", "analyze_source"]

# The pre-filter: a file containing none of these words cannot contain anything
# shapelint checks, and costs a read and a few substring searches (no regex: one
# alternation over 13 words scans a file 3x slower than 10 `in` tests). "torch"
# admits nearly every file of a PyTorch project, but the torch-op shape rules and
# costs need nothing else, and a torch file that does not parse must say so. Most
# frequent first, so a typical file stops at the first test.
_WORDS = (
    b"torch",
    b"transpose",
    b"permute",
    b"einsum",
    b"einops",
    b"jaxtyping",
    b"reveal_shape",
    b"movedim",
    b"swapaxes",
    b"swapdims",
)
_DOT_T = None  # re.compile(rb"\.m?T\b") on first need (`.T`, `.mT`)


def may_need_analysis(data: bytes) -> bool:
    """False when the file cannot contain anything shapelint checks."""
    for word in _WORDS:
        if word in data:
            return True
    if b".T" not in data and b".mT" not in data:
        return False
    global _DOT_T
    if _DOT_T is None:
        _DOT_T = re.compile(rb"\.m?T\b")
    return _DOT_T.search(data) is not None


POOL_MIN_FILES = 64
POOL_MIN_BYTES = 4_000_000


class FileResult:
    """What the analysis found in one file.

    `calls` and `functions` (the cost records) can arrive packed, as one bytes blob
    from a worker process or from the cache, and are unpacked on first access:
    `shapelint check` never reads them, so it never pays for them."""

    __slots__ = (
        "path",
        "diagnostics",
        "_calls",
        "_functions",
        "_packed",
        "noqa_lines",
        "deps",
        "_redo",
        "problems",
    )

    def __init__(
        self,
        path: str,
        diagnostics: list[Diagnostic] | None = None,
        calls: list[dict] | None = None,
        functions: list[dict] | None = None,
    ):
        self.path = path
        self.diagnostics = diagnostics if diagnostics is not None else []
        self._calls = calls if calls is not None else []
        self._functions = functions if functions is not None else []
        self._packed: bytes | None = None
        # Line number -> text of each diagnostic's line that carries a noqa comment,
        # when the analysis saw the file (then filtering reads no file); None: unknown.
        self.noqa_lines: dict[int, str] | None = None
        # (path, content digest) of the other project files the results depend on.
        self.deps: tuple[tuple[str, str], ...] = ()
        # Analyzes the file again when its packed records turn out malformed.
        self._redo: Callable[[], FileResult] | None = None
        # What is wrong with a [tool.shapelint.targets] entry of this file, said with
        # the entry's location: a configuration error (`check` exits 2).
        self.problems: list[str] = []

    @classmethod
    def _from_packed(
        cls,
        path: str,
        diagnostics: list[Diagnostic],
        packed: bytes | None,
        noqa_lines: dict[int, str] | None = None,
    ) -> FileResult:
        res = cls(path, diagnostics)
        res._packed = packed
        res.noqa_lines = noqa_lines
        return res

    def _unpack(self) -> None:
        packed, self._packed = self._packed, None
        try:
            calls, functions = unpack_records(packed)
        except ValueError:
            fresh = self._redo() if self._redo is not None else FileResult(self.path)
            calls, functions = fresh.calls, fresh.functions
        # Records from the cache name the path the content was first analyzed under.
        for rec in (*calls, *functions):
            if rec.get("path") != self.path:
                rec["path"] = self.path
        self._calls, self._functions = calls, functions

    @property
    def calls(self) -> list[dict]:
        if self._packed is not None:
            self._unpack()
        return self._calls

    @calls.setter
    def calls(self, value: list[dict]) -> None:
        if self._packed is not None:
            self._unpack()
        self._calls = value

    @property
    def functions(self) -> list[dict]:
        if self._packed is not None:
            self._unpack()
        return self._functions

    @functions.setter
    def functions(self, value: list[dict]) -> None:
        if self._packed is not None:
            self._unpack()
        self._functions = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileResult):
            return NotImplemented
        return (self.path, self.diagnostics, self.calls, self.functions) == (
            other.path,
            other.diagnostics,
            other.calls,
            other.functions,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it replaces

    def __repr__(self) -> str:
        return (
            f"FileResult(path={self.path!r}, diagnostics={self.diagnostics!r}, "
            f"calls={self.calls!r}, functions={self.functions!r})"
        )

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "calls": self.calls,
            "functions": self.functions,
        }

    @staticmethod
    def from_json(d: dict) -> FileResult:
        return FileResult(
            path=d["path"],
            diagnostics=[Diagnostic.from_json(x) for x in d["diagnostics"]],
            calls=d["calls"],
            functions=d["functions"],
        )


def pack_records(calls: list[dict], functions: list[dict]) -> bytes | None:
    """The cost records as one immutable blob (None when there are none), written
    with marshal, which is several times faster than pickle on plain data and
    cannot run code when read. Values marshal cannot write become plain data."""
    if not calls and not functions:
        return None
    import marshal

    try:
        return b"M" + marshal.dumps((calls, functions))
    except ValueError:
        return b"M" + marshal.dumps((_plain(calls), _plain(functions)))


def _plain(v):
    """v as str/int/float/bool/None, lists and str-keyed dicts (tuples and sets
    become lists; anything else its str())."""
    if v is None or type(v) in (str, int, float, bool):
        return v
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted((_plain(x) for x in v), key=repr)
    return str(v)


# The fields of the cost records every face reads, and their types.
_OPT_STR = (str, type(None))
_RECORD_FIELDS = {
    "path": (str,),
    "line": (int,),
    "flops": _OPT_STR,
    "other_flops": _OPT_STR,
    "bytes": _OPT_STR,
}
_CALL_FIELDS = {**_RECORD_FIELDS, "column": (int,), "op": (str,), "notes": (list,)}
_FUNCTION_FIELDS = {**_RECORD_FIELDS, "name": (str,), "complete": (bool,)}


def _valid_records(records, fields: dict) -> bool:
    return type(records) is list and all(
        type(r) is dict and all(type(r.get(k)) in types for k, types in fields.items())
        for r in records
    )


def unpack_records(packed: bytes | None) -> tuple[list[dict], list[dict]]:
    """The records pack_records wrote; ValueError for anything else (a damaged or
    crafted cache entry: the caller analyzes the file again)."""
    if not packed:
        return [], []
    if packed[:1] != b"M":
        raise ValueError("not a packed record blob")
    import marshal

    try:
        data = marshal.loads(packed[1:])
    except (EOFError, TypeError) as e:
        raise ValueError(str(e)) from None
    if (
        type(data) is not tuple
        or len(data) != 2
        or not _valid_records(data[0], _CALL_FIELDS)
        or not _valid_records(data[1], _FUNCTION_FIELDS)
    ):
        raise ValueError("malformed cost records")
    return data


def diagnostic(
    path: str, line: int, col0: int, end_line: int, end_col0: int, code: str, message: str
) -> Diagnostic:
    """A Diagnostic from 0-based columns, with its rule's severity."""
    from shapelint.rules import severity_of

    return Diagnostic(
        path, line, col0 + 1, end_line, end_col0 + 1, code, severity_of(code), message
    )


def internal_error(path: str, e: BaseException) -> Diagnostic:
    """SHP002: a bug in shapelint on this file. One bad file must not stop a run,
    and no face shows a traceback."""
    return diagnostic(path, 1, 0, 1, 0, "SHP002", f"internal error: {type(e).__name__}: {e}")


def analyze_bytes(
    path: str, data: bytes, options: AnalysisOptions | dict | None = None
) -> FileResult:
    """Analyze one file's content. Never raises: problems become SHP001/SHP002."""
    if not may_need_analysis(data):
        return FileResult(path)
    try:
        text = decode_source(data)
    except DecodeFailure as e:
        d = diagnostic(path, e.line, e.column - 1, e.line, e.column - 1, "SHP001", e.message)
        return FileResult(path, [d])
    except Exception as e:  # noqa: BLE001 - one bad file must not stop the run
        return FileResult(path, [internal_error(path, e)])
    return analyze_text(path, text, options)


_CONFIGURED_STUBS: tuple[str, ...] = ()


def configure_stubs(paths) -> list:
    """Load the built-in stubs plus the project's own; returns their errors."""
    global _CONFIGURED_STUBS
    from shapelint.ops import stub_ops

    _CONFIGURED_STUBS = tuple(str(p) for p in paths)
    return stub_ops.configure(_CONFIGURED_STUBS).errors


@dataclass
class SourceAnalysis:
    """One text analysed: the result every face reads, and for the faces that need
    more than diagnostics and cost records, what the analysis worked on."""

    result: FileResult
    tree: ast.Module | None = None  # None: the text does not parse
    module: Any = None  # analysis.interpreter.ModuleResult; None: it did not parse or run
    findings: list = field(default_factory=list)  # naming findings, with their rewrites


def analyze_text(path: str, text: str, options: AnalysisOptions | dict | None = None) -> FileResult:
    """analyze_source's result: diagnostics and cost records. Never raises."""
    return analyze_source(path, text, options, result_only=True).result


TIMED_OUT = "SHP003"


def analyze_source(
    path: str,
    text: str,
    options: AnalysisOptions | dict | None = None,
    result_only: bool = False,
) -> SourceAnalysis:
    """Analyse one text with these options (the project's stubs loaded first),
    within options.time_budget seconds (None: budget.DEFAULT_SECONDS; 0: none).
    Never raises: what goes wrong becomes SHP001 (cannot parse), SHP002 (a bug) or
    SHP003 (past the time budget). With result_only, only `result` is filled in,
    and what the analysis built is released as soon as it is read."""
    from shapelint.analysis import allowance
    from shapelint.analysis.budget import DEFAULT_SECONDS, BudgetExceeded, time_budget

    res = FileResult(path)
    allowance.reset()
    try:
        opts = AnalysisOptions.coerce(options)
        seconds = DEFAULT_SECONDS if opts.time_budget is None else opts.time_budget
        with time_budget(seconds):
            out = _analyze_source(path, text, opts, res, result_only)
        if opts.targets:
            # Each under its own budget (budgets do not nest), after the file's.
            _run_entry_points(out.result, text, opts)
        return out
    except BudgetExceeded:
        msg = (
            f"analysis stopped after {seconds:g} s (the time budget): nothing in this file "
            "was checked; raise `time-budget` in [tool.shapelint] or --time-budget"
        )
        return SourceAnalysis(FileResult(path, [diagnostic(path, 1, 0, 1, 0, TIMED_OUT, msg)]))
    except Exception as e:  # noqa: BLE001 - one bad file must not stop the run
        res.diagnostics = [internal_error(path, e)]
        return SourceAnalysis(res)


def _analyze_source(
    path: str, text: str, options: AnalysisOptions, res: FileResult, result_only: bool
):
    from shapelint.analysis.interpreter import ModuleAnalyzer

    if options.stubs != _CONFIGURED_STUBS:
        configure_stubs(options.stubs)
    src = SourceFile(path, text)
    try:
        tree = pyparse.parse(text, filename=path)
    except SyntaxError as e:
        line = e.lineno or 1
        col = max((e.offset or 1) - 1, 0)
        msg = e.msg if isinstance(e.msg, str) else str(e)
        res.diagnostics.append(
            diagnostic(path, line, col, line, col, "SHP001", f"syntax error: {msg}")
        )
        return SourceAnalysis(res)
    except (ValueError, RecursionError, MemoryError, OverflowError) as e:
        why = "nested too deeply" if isinstance(e, (RecursionError, MemoryError)) else str(e)
        res.diagnostics.append(diagnostic(path, 1, 0, 1, 0, "SHP001", f"cannot parse: {why}"))
        return SourceAnalysis(res)
    analyzer = ModuleAnalyzer(src, tree, options)
    try:
        from shapelint.analysis import project

        project.attach(analyzer, path, options)
        mres = analyzer.run()
        res.deps = tuple(project.dependencies(analyzer))
    except RecursionError:
        res.diagnostics.append(
            diagnostic(path, 1, 0, 1, 0, "SHP001", "cannot analyze: nested too deeply")
        )
        return SourceAnalysis(res, tree)
    for d in mres.diagnostics:
        found = diagnostic(path, d.line, d.column, d.end_line, d.end_column, d.code, d.message)
        if d.condition:  # raises only on one of undecided alternatives (plain_paths.py)
            found = dataclasses.replace(found, severity="warning")
        res.diagnostics.append(found)
    res.diagnostics.sort()
    if options.costs:
        records, functions = unnamed.honest_functions(mres.records, mres.functions)
        res.calls = [_record_json(path, r) for r in records]
        res.functions = [_function_json(path, f) for f in functions]
        unknown_bytes = {c["function"] for c in res.calls if not c["bytes_complete"]}
        for f in res.functions:
            f["bytes_complete"] = f["complete"] and f["name"] not in unknown_bytes
    if result_only:
        analyzer.release()
        return SourceAnalysis(res)
    return SourceAnalysis(res, tree, mres, list(analyzer.naming.findings))


def _run_entry_points(res: FileResult, text: str, options: AnalysisOptions) -> None:
    """The configured targets of this file (analysis/entry_points.py): their errors
    join its diagnostics; an entry that cannot be run is one of its problems."""
    from shapelint.analysis import entry_points
    from shapelint.analysis.target import TargetError

    specs = entry_points.for_file(options.targets, res.path)
    if not specs or any(d.code == "SHP001" for d in res.diagnostics):
        return  # a file that does not parse has no target to run
    # A target's run builds its figures (what `cost` runs), whatever the face.
    run_options = dataclasses.replace(options, costs=True)
    found: list[Diagnostic] = []
    for spec in specs:
        try:
            tr = analyze_target(
                res.path, text, spec.qualname, dict(spec.init), dict(spec.inputs), run_options
            )
        except TargetError as e:
            res.problems.append(f"{spec.where}: [tool.shapelint.targets] {spec.key!r}: {e}")
            continue
        except Exception as e:  # noqa: BLE001 - one bad target must not stop the run
            why = f"internal error in target {spec.key!r}: {type(e).__name__}: {e}"
            found.append(diagnostic(res.path, 1, 0, 1, 0, "SHP002", why))
            continue
        if tr.stopped is not None:
            line = tr.records[0].line if tr.records else 1
            msg = (
                f"target {spec.key!r} stopped after {_seconds(options):g} s (the time "
                "budget): the errors on its path were not checked; raise `time-budget` "
                "in [tool.shapelint] or --time-budget"
            )
            found.append(diagnostic(res.path, line, 0, line, 0, TIMED_OUT, msg))
        found += entry_points.diagnostics([*tr.errors, *tr.conditional], res.path)
    res.diagnostics = entry_points.merged(res.diagnostics, found)


def _seconds(options: AnalysisOptions) -> float:
    from shapelint.analysis.budget import DEFAULT_SECONDS

    return DEFAULT_SECONDS if options.time_budget is None else options.time_budget


def analyze_target(
    path: str,
    text: str,
    qualname: str,
    init: dict[str, str],
    inputs: dict[str, str],
    options: AnalysisOptions | dict | None = None,
    training: bool = True,
):
    """One target of a file (`cost PATH::QUALNAME`): its analyzer runs in
    specialized mode, every call interpreted with the values it receives
    (analysis/target.py), the module in training mode as built, or in eval mode
    (training False). Raises TargetError for a target or value it cannot use."""
    from shapelint.analysis import (
        allowance,
        built_objects,
        joined_objects,
        module_state,
        project,
        stdlib_logging,
    )
    from shapelint.analysis.budget import DEFAULT_SECONDS, BudgetExceeded, time_budget
    from shapelint.analysis.interpreter import ModuleAnalyzer
    from shapelint.analysis.target import TargetError, evaluate_target, stopped
    from shapelint.notation.target import Target

    opts = AnalysisOptions.coerce(options)
    if opts.stubs != _CONFIGURED_STUBS:
        configure_stubs(opts.stubs)
    try:
        tree = pyparse.parse(text, filename=path)
    except SyntaxError as e:
        raise TargetError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    an = ModuleAnalyzer(SourceFile(path, text), tree, opts, specialize=True)
    target = Target(path, qualname)
    seconds = DEFAULT_SECONDS if opts.time_budget is None else opts.time_budget
    try:
        with time_budget(seconds), module_state.run():
            allowance.reset()
            stdlib_logging.reset()  # before the file's top level runs
            joined_objects.reset()
            built_objects.reset()
            project.attach(an, path, opts, specialize=True)
            an.prepare()
            try:
                res = evaluate_target(an, target, init, inputs, training)
            finally:
                call_path.release_plain()  # what its summaries' passes grouped
    except BudgetExceeded:
        project.forget()
        why = (
            f"analysis stopped after {seconds:g} s (the time budget): not costed; "
            "raise `time-budget` in [tool.shapelint]"
        )
        return stopped(an, target, why)
    # A noqa comment, read in the text the analysis read (the target's own file: `text`).
    getters = {path: _getter(split_lines(text))} if res.errors or res.conditional else {}
    for f in [*res.errors, *res.conditional]:
        if f.path not in getters:
            getters[f.path] = _file_lines(f.path)
    res.errors = [f for f in res.errors if not silenced(getters[f.path], f)]
    res.conditional = [f for f in res.conditional if not silenced(getters[f.path], f)]
    return res


def _py(e) -> str | None:
    return None if e is None else e.to_python()


def _safe(v):
    """Strings from the analysed code (patterns, names, dims), escaped where the
    records are built (see diagnostics.safe_text)."""
    if isinstance(v, str):
        return safe_text(v)
    if isinstance(v, list):
        return [_safe(x) for x in v]
    return v


def _record_json(path: str, r) -> dict:
    c = r.cost
    return {
        "path": path,
        "line": r.line,
        "column": r.column + 1,
        "function": _safe(r.function),
        "op": r.op,
        "pattern": _safe(r.pattern),
        "inputs": _safe(r.inputs),
        "output": _safe(r.output),
        "flops": _py(c.flops),
        "other_flops": _py(c.other_flops),
        "bytes": _py(c.bytes),
        "complete": c.complete and c.flops is not None,
        "bytes_complete": c.complete and c.bytes is not None,
        "notes": list(c.notes),
    }


def _function_json(path: str, f) -> dict:
    return {
        "path": path,
        "name": _safe(f.name),
        "line": f.line,
        "flops": _py(f.flops),
        "other_flops": _py(f.other_flops),
        "bytes": _py(f.bytes),
        "complete": f.complete,
        "unknown": list(f.unknown),
        "calls": f.calls,
        "defaults": f.defaults,
    }


# ---------------------------------------------------------------------- many files


def collect_files(paths: Iterable[Path], cfg) -> tuple[list[Path], list[str]]:
    """Files to check, and the paths that do not exist (a usage error). A file
    reached twice (overlapping arguments, a symlink to a file already listed) is
    listed once."""
    from shapelint.config import walk_python_files

    files: list[Path] = []
    missing: list[str] = []
    seen: set[tuple[int, int]] = set()
    stats: dict[str, os.stat_result] = {}
    _COLLECTED[:] = [time.monotonic(), stats]
    for p in paths:
        try:
            is_dir = stat.S_ISDIR(os.stat(p).st_mode)
        except FileNotFoundError:
            missing.append(str(p))
            continue
        except OSError:  # under an unsearchable directory: reading it will say so
            files.append(p)
            continue
        found = walk_python_files(p, cfg) if is_dir else [p]
        for f in found:
            # One stat instead of resolve()'s lstat of every path component.
            try:
                st = os.stat(f)
            except OSError:
                files.append(f)  # reported when read (SHP001), never skipped
                continue
            key = (st.st_dev, st.st_ino)
            if key not in seen:
                seen.add(key)
                files.append(f)
                stats[str(f)] = st
    return files, missing


# The stats collect_files just took, so that analyze_files, called right after it,
# need not stat every file again for the cache (a tenth of a warm run). Trusted
# for a few seconds only: a long-lived caller must not see old stats.
_COLLECTED: list = [0.0, {}]
_COLLECTED_TTL = 5.0


def _recent_stats() -> dict[str, os.stat_result]:
    when, stats = _COLLECTED
    _COLLECTED[:] = [0.0, {}]
    return stats if time.monotonic() - when < _COLLECTED_TTL else {}


# Per worker process: the options and the cache (for content-digest hits on
# files whose stat changed), set once by the pool's initializer or inline.
_WORKER_OPTIONS = AnalysisOptions()
_WORKER_CACHE = None

# A row of a packed result: (line, column, end_line, end_column, code, severity, message).
DiagRow = tuple


def _init_worker(options: AnalysisOptions, cache, batch_gc: bool = True) -> None:
    global _WORKER_OPTIONS, _WORKER_CACHE
    _WORKER_OPTIONS = options
    _WORKER_CACHE = cache
    if batch_gc:
        _batch_gc()


def _init_pool_worker(options: AnalysisOptions, cache) -> None:
    """A pool worker leaves Ctrl-C to the parent (which stops it: a terminal sends
    SIGINT to every process of the job), dies at once on SIGTERM, and dies with the
    parent even when that is killed outright (Linux: PR_SET_PDEATHSIG)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's (which unwinds)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        if os.getppid() == 1:  # the parent died before the prctl
            os._exit(1)
    _init_worker(options, cache)


# Objects that outlived their file, collected past this many (see _batch_gc).
GC_SURVIVORS = 200_000


def _batch_gc() -> bool:
    """Turn the cyclic GC off for a batch of files; returns whether it was on.

    ast.parse and the interpreter allocate millions of objects that reference
    counting frees (ASTs have no cycles), yet each allocation brings the collector
    closer to a pass over everything young: about 20% of a run. Off, with a full
    collection whenever the objects that survived their file pile up (_gc_step),
    memory stays bounded. What was alive before (imported modules, the cache) is
    frozen out of the collector's sight, which also keeps a forked worker from
    copying the pages it shares with its parent."""
    import gc

    was = gc.isenabled()
    gc.freeze()
    gc.disable()
    return was


def _restore_gc(was_enabled: bool) -> None:
    import gc

    gc.unfreeze()
    if was_enabled:
        gc.enable()


def _gc_step() -> None:
    import gc

    if not gc.isenabled() and gc.get_count()[0] > GC_SURVIVORS:
        gc.collect()
        # What outlived a full collection is long-lived (stub tables, interned
        # symbols): frozen, the next collection does not walk it again.
        gc.freeze()


def _work(task: tuple[int, str, bool]) -> tuple:
    """Read one file, look its content digest up in the cache (unless the task says
    not to: a file with configured targets), analyze on a miss. Returns (index,
    diagnostic rows, packed records, noqa lines, digest, deps, targets' extras)."""
    i, path, cached = task
    data = read_source(path)
    if isinstance(data, str):
        return i, [_row(diagnostic(path, 1, 0, 1, 0, "SHP001", data))], None, {}, None, (), None
    dig = None
    if _WORKER_CACHE is not None and cached:
        from shapelint.cache import digest

        dig = digest(data)
        hit = _WORKER_CACHE.get(dig)
        if hit is not None:
            return i, hit[0], hit[1], hit[2], dig, hit[3], None
    res = analyze_bytes(path, data, _WORKER_OPTIONS)
    _gc_step()
    rows = [_row(d) for d in res.diagnostics if d.path == path]
    if any(r[4] == TIMED_OUT for r in rows):
        dig = None  # it depends on the machine's speed: analyzed again next time
    # A target's findings in other files keep their paths; its entry problems travel too.
    foreign = [(d.path, *_row(d)) for d in res.diagnostics if d.path != path]
    extras = (foreign, list(res.problems)) if foreign or res.problems else None
    packed = pack_records(res.calls, res.functions)
    return i, rows, packed, _noqa_lines(data, rows), dig, res.deps, extras


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_O_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read_source(path: str) -> bytes | str:
    """The bytes of a regular file, or why they cannot be read (a message). The file
    is opened without blocking and checked before any read: a FIFO would block the
    run, a device (/dev/zero behind a symlink) would be read until memory ran out."""
    try:
        problem = _not_regular(os.stat(path).st_mode)  # opening a device can act
        if problem is not None:
            return problem
        fd = os.open(path, _O_READ)
    except OSError as e:
        if os.path.isdir(path):
            return f"cannot list directory: {e.strerror or e}; nothing under it was checked"
        return f"cannot read: {e.strerror or e}"
    try:
        problem = _not_regular(os.fstat(fd).st_mode)  # replaced since the stat
        if problem is not None:
            return problem
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError as e:
        return f"cannot read: {e.strerror or e}"
    finally:
        os.close(fd)


def _not_regular(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "cannot list directory; nothing under it was checked"
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    return f"not a regular file ({kind}); not read"


def _noqa_lines(data: bytes, rows: list[DiagRow]) -> dict[int, str]:
    """The lines filter_diagnostics will look at for `# noqa`, as it would read them."""
    # bytes.lower folds ASCII only, as IGNORECASE does for a bytes pattern; lowering
    # and a plain `in` is ~5x faster than the case-blind regex scan of every file.
    if not rows or b"noqa" not in data.lower():
        return {}
    lines = _split_lines(data)
    out = {}
    for row in rows:
        for n in (row[0], row[2]):
            if 1 <= n <= len(lines) and "noqa" in lines[n - 1].lower():
                out[n] = lines[n - 1]
    return out


def _row(d: Diagnostic) -> DiagRow:
    return (d.line, d.column, d.end_line, d.end_column, d.code, d.severity, d.message)


def _result(
    path: str,
    rows: Iterable[DiagRow],
    packed: bytes | None,
    noqa,
    options: dict | None = None,
    extras: tuple | None = None,
) -> FileResult:
    diags = [Diagnostic(path, *r) for r in rows]
    if extras is not None:
        diags = sorted(diags + [Diagnostic(*r) for r in extras[0]])
    res = FileResult._from_packed(path, diags, packed, noqa)
    if extras is not None:
        res.problems = list(extras[1])
    if packed is not None:
        res._redo = lambda: _reanalyze(path, options or {})
    return res


def _reanalyze(path: str, options: dict) -> FileResult:
    data = read_source(path)
    return FileResult(path) if isinstance(data, str) else analyze_bytes(path, data, options)


def analyze_files(
    files: list[Path],
    options: AnalysisOptions | dict | None = None,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    cache=None,
) -> list[FileResult]:
    """Analyze files, in a process pool when the tree is large enough to pay for it.
    Results come back in the order of files. With a cache (shapelint.cache.Cache),
    unchanged files (same path, mtime and size) are not even read."""
    options = AnalysisOptions.coerce(options)
    n = len(files)
    results: list[FileResult | None] = [None] * n
    stats: list[os.stat_result | None] = [None] * n
    todo: list[int] = []
    sizes: dict[int, int] = {}
    known = _recent_stats() if cache is not None else {}
    uncached: set[int] = set()
    if cache is not None and options.targets:
        from shapelint.analysis import entry_points

        # A target's findings depend on every file it reads and on its entry: never cached.
        target_files = entry_points.file_ids(options.targets)
    for i, f in enumerate(files):
        if cache is not None:
            try:
                st = known.get(str(f)) or os.stat(f)
            except OSError:
                todo.append(i)
                continue
            stats[i] = st
            sizes[i] = st.st_size
            if options.targets and (st.st_dev, st.st_ino) in target_files:
                uncached.add(i)
                todo.append(i)
                continue
            hit = cache.lookup_stat(str(f), st)
            if hit is not None:
                results[i] = _result(str(f), *hit[:3], options)
                continue
        todo.append(i)
    done = n - len(todo)
    if progress and done:
        progress(done, n)
    jobs = min(jobs or (os.cpu_count() or 1), len(todo))
    if jobs > 1 and len(todo) < POOL_MIN_FILES:
        jobs = 1
    if jobs > 1:
        for i in todo:
            if i not in sizes:
                sizes[i] = _size(files[i])
        if sum(sizes[i] for i in todo) < POOL_MIN_BYTES:
            jobs = 1
    tasks = [(i, str(files[i]), i not in uncached) for i in todo]
    if jobs > 1:
        # Largest first, so that no big file is left to run alone at the end.
        tasks.sort(key=lambda t: -sizes[t[0]])
        outputs = _pool_outputs(tasks, sizes, jobs, options, cache)
    else:
        outputs = _inline_outputs(tasks, options, cache)
    try:
        for i, rows, packed, noqa, dig, deps, extras in outputs:
            path = str(files[i])
            results[i] = _result(path, rows, packed, noqa, options, extras)
            results[i].deps = tuple(deps)
            if cache is not None and dig is not None:
                cache.store(path, stats[i], dig, rows, packed, noqa, deps)
            done += 1
            if progress:
                progress(done, n)
    finally:
        outputs.close()  # now, not when a traceback lets go: it restores the GC
    if options.targets:
        from shapelint.analysis import entry_points

        entry_points.drop_repeats(results)
    return results  # type: ignore[return-value]


def _size(f: Path) -> int:
    try:
        return os.stat(f).st_size
    except OSError:
        return 0


def _inline_outputs(tasks, options: AnalysisOptions, cache):
    was_enabled = _batch_gc()
    try:
        _init_worker(options, cache, batch_gc=False)
        for t in tasks:
            yield _work(t)
    finally:
        _init_worker(AnalysisOptions(), None, batch_gc=False)
        _restore_gc(was_enabled)


def _work_chunk(chunk: list[tuple[int, str, bool]]) -> list:
    return [_work(t) for t in chunk]


def _chunks(
    tasks: list[tuple[int, str, bool]], sizes: dict[int, int], max_files=16, max_bytes=400_000
):
    """Tasks in batches of a few files (one message each way per batch)."""
    chunk: list[tuple[int, str, bool]] = []
    total = 0
    for t in tasks:
        chunk.append(t)
        total += sizes[t[0]]
        if len(chunk) >= max_files or total >= max_bytes:
            yield chunk
            chunk, total = [], 0
    if chunk:
        yield chunk


def _pool_outputs(tasks, sizes: dict[int, int], jobs: int, options: AnalysisOptions, cache):
    """Results as workers finish them. Workers are forked on Linux (they inherit
    the imported modules and the cache snapshot for free); elsewhere the options
    and the cache travel once per worker through the initializer. If the pool
    breaks (a worker killed, e.g. out of memory), what it had not finished is
    analyzed here, one file at a time."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    ctx = mp.get_context("fork") if sys.platform.startswith("linux") else None
    if ctx is not None:
        # Imported once here, inherited by every forked worker.
        import shapelint.analysis.interpreter  # noqa: F401

    leftover: list[tuple[int, str, bool]] = []
    pool = ProcessPoolExecutor(
        max_workers=jobs, mp_context=ctx, initializer=_init_pool_worker, initargs=(options, cache)
    )
    try:
        chunks = {pool.submit(_work_chunk, chunk): chunk for chunk in _chunks(tasks, sizes)}
        for fut in as_completed(chunks):
            try:
                out = fut.result()
            except (BrokenProcessPool, OSError, MemoryError):
                leftover.extend(chunks[fut])
                continue
            yield from out
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM) or abandoned: the workers stop now, not after
        # their current files (which may be long), and never outlive the run.
        pool.shutdown(wait=False, cancel_futures=True)
        for child in mp.active_children():
            child.terminate()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if leftover:
        leftover.sort()
        yield from _inline_outputs(leftover, options, cache)


# ---------------------------------------------------------------------- filtering

_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)


def noqa_codes(line: str) -> set[str] | None:
    """None: no noqa. Empty set: a bare noqa (everything). Else the codes."""
    m = _NOQA.search(line)
    if not m:
        return None
    if not m.group("codes"):
        return set()
    return {c.upper() for c in re.split(r"[\s,]+", m.group("codes")) if c}


def noqa_suppresses(line: str | None, code: str) -> bool:
    """Whether this line's `# noqa` comment, if it has one, silences code."""
    if line is None or "noqa" not in line.lower():
        return False
    codes = noqa_codes(line)
    return codes is not None and (not codes or any(code.startswith(c) for c in codes))


def silenced(line_at: Callable[[int], str | None], d) -> bool:
    """Whether a `# noqa` on d's line, or on its last line, silences d (a Diagnostic,
    or a target's finding), its lines read with line_at."""
    return noqa_suppresses(line_at(d.line), d.code) or (
        d.end_line != d.line and noqa_suppresses(line_at(d.end_line), d.code)
    )


def filter_diagnostics(
    result: FileResult, cfg, text_lines: list[str] | None = None
) -> list[Diagnostic]:
    """Apply select/ignore/per-file-ignores and `# noqa` comments. A configured
    target's finding in another file is held to that file's lines."""
    out = []
    getters: dict[str, Callable[[int], str | None]] = {}
    for d in result.diagnostics:
        if not cfg.is_enabled(d.code, d.path):
            continue
        if d.code != "SHP001":
            line_at = getters.get(d.path)
            if line_at is None:
                own = d.path == result.path
                line_at = getters[d.path] = (
                    _line_getter(result, text_lines, d.path) if own else _file_lines(d.path)
                )
            if silenced(line_at, d):
                continue
        out.append(d)
    return out


def _line_getter(result: FileResult, text_lines: list[str] | None, path: str):
    """line number -> its text, or None. The analysis kept the lines with a noqa
    comment (noqa_lines); otherwise the file is read."""
    noqa = getattr(result, "noqa_lines", None)
    if text_lines is None and noqa is not None:
        return noqa.get
    return _getter(text_lines if text_lines is not None else _read_lines(path))


def _file_lines(path: str) -> Callable[[int], str | None]:
    return _getter(_read_lines(path))


def _getter(lines: list[str]) -> Callable[[int], str | None]:
    return lambda n: lines[n - 1] if 1 <= n <= len(lines) else None


def _read_lines(path: str) -> list[str]:
    try:
        return _split_lines(Path(path).read_bytes())
    except OSError:
        return []


def _split_lines(data: bytes) -> list[str]:
    try:
        return split_lines(decode_source(data))
    except DecodeFailure:
        return []
