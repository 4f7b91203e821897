"""Files in, results out: read, pre-filter, parse, analyze, in a process pool
on large trees, through a content-keyed cache. Every face (CLI check and cost,
flake8 plugin, runtime mode) calls this and nothing else."""

from __future__ import annotations

import ast
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from shapelint.analysis.source import DecodeFailure, SourceFile, decode_source
from shapelint.diagnostics import Diagnostic

# A file without any of these cannot contain anything shapelint checks; it costs a read.
_NEEDLES = re.compile(
    rb"einops|einsum|jaxtyping|reveal_shape|transpose|permute|swapaxes|swapdims|movedim"
    rb"|\.mT\b|\.T\b|torch"
)

# Options that change what the analysis computes (and so belong in the cache key).
ANALYSIS_OPTION_KEYS = ("stubs", "naming", "dtype")

POOL_MIN_FILES = 64
POOL_MIN_BYTES = 4_000_000


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    calls: list[dict] = field(default_factory=list)
    functions: list[dict] = field(default_factory=list)

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


def _diag(
    path: str, line: int, col0: int, end_line: int, end_col0: int, code: str, message: str
) -> Diagnostic:
    from shapelint.rules import severity_of

    return Diagnostic(
        path, line, col0 + 1, end_line, end_col0 + 1, code, severity_of(code), message
    )


def analyze_bytes(path: str, data: bytes, options: dict | None = None) -> FileResult:
    """Analyze one file's content. Never raises: problems become SHP001/SHP002."""
    res = FileResult(path)
    try:
        if not _NEEDLES.search(data):
            return res
        try:
            text = decode_source(data)
        except DecodeFailure as e:
            res.diagnostics.append(
                _diag(path, e.line, e.column - 1, e.line, e.column - 1, "SHP001", e.message)
            )
            return res
        return analyze_text(path, text, options)
    except Exception as e:  # noqa: BLE001 - one bad file must not stop the run
        res.diagnostics.append(
            _diag(path, 1, 0, 1, 0, "SHP002", f"internal error: {type(e).__name__}: {e}")
        )
        return res


_CONFIGURED_STUBS: tuple[str, ...] = ()


def configure_stubs(paths) -> list:
    """Load the built-in stubs plus the project's own; returns their errors."""
    global _CONFIGURED_STUBS
    from shapelint.ops import stub_ops

    _CONFIGURED_STUBS = tuple(paths)
    return stub_ops.configure(_CONFIGURED_STUBS).errors


def analyze_text(path: str, text: str, options: dict | None = None) -> FileResult:
    from shapelint.analysis.interpreter import ModuleAnalyzer

    res = FileResult(path)
    stubs = tuple((options or {}).get("stubs") or ())
    if stubs != _CONFIGURED_STUBS:
        configure_stubs(stubs)
    src = SourceFile(path, text)
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as e:
        line = e.lineno or 1
        col = max((e.offset or 1) - 1, 0)
        msg = e.msg if isinstance(e.msg, str) else str(e)
        res.diagnostics.append(_diag(path, line, col, line, col, "SHP001", f"syntax error: {msg}"))
        return res
    except (ValueError, RecursionError, MemoryError, OverflowError) as e:
        why = "nested too deeply" if isinstance(e, (RecursionError, MemoryError)) else str(e)
        res.diagnostics.append(_diag(path, 1, 0, 1, 0, "SHP001", f"cannot parse: {why}"))
        return res
    try:
        mres = ModuleAnalyzer(src, tree, options).run()
    except RecursionError:
        res.diagnostics.append(
            _diag(path, 1, 0, 1, 0, "SHP001", "cannot analyze: nested too deeply")
        )
        return res
    except Exception as e:  # noqa: BLE001
        res.diagnostics.append(
            _diag(path, 1, 0, 1, 0, "SHP002", f"internal error: {type(e).__name__}: {e}")
        )
        return res
    for d in mres.diagnostics:
        res.diagnostics.append(
            _diag(path, d.line, d.column, d.end_line, d.end_column, d.code, d.message)
        )
    res.diagnostics.sort()
    res.calls = [_record_json(path, r) for r in mres.records]
    res.functions = [_function_json(path, f) for f in mres.functions]
    return res


def _py(e) -> str | None:
    return None if e is None else e.to_python()


def _record_json(path: str, r) -> dict:
    c = r.cost
    return {
        "path": path,
        "line": r.line,
        "column": r.column + 1,
        "function": r.function,
        "op": r.op,
        "pattern": r.pattern,
        "inputs": r.inputs,
        "output": r.output,
        "flops": _py(c.flops),
        "other_flops": _py(c.other_flops),
        "bytes": _py(c.bytes),
        "notes": list(c.notes),
    }


def _function_json(path: str, f) -> dict:
    return {
        "path": path,
        "name": f.name,
        "line": f.line,
        "flops": _py(f.flops),
        "other_flops": _py(f.other_flops),
        "bytes": _py(f.bytes),
        "complete": f.complete,
        "calls": f.calls,
        "defaults": f.defaults,
    }


# ---------------------------------------------------------------------- many files


def collect_files(paths: Iterable[Path], cfg) -> tuple[list[Path], list[str]]:
    """Files to check, and the paths that do not exist (a usage error)."""
    from shapelint.config import walk_python_files

    files: list[Path] = []
    missing: list[str] = []
    seen: set[Path] = set()
    for p in paths:
        if not p.exists():
            missing.append(str(p))
            continue
        found = walk_python_files(p, cfg) if p.is_dir() else [p]
        for f in found:
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                files.append(f)
    return files, missing


# Set before the pool forks, so workers inherit the options and the cache
# snapshot instead of receiving a pickled copy with every file.
_WORKER_OPTIONS: dict = {}


def _work(path: str) -> tuple[dict, str | None]:
    """Runs in a worker (or inline): read, look up the content digest in the
    cache snapshot inherited from the parent, analyze on a miss."""
    options = _WORKER_OPTIONS
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        res = FileResult(
            path, [_diag(path, 1, 0, 1, 0, "SHP001", f"cannot read: {e.strerror or e}")]
        )
        return res.to_json(), None
    cache = options.get("_cache")
    dig = None
    if cache is not None:
        from shapelint.cache import digest

        dig = digest(data)
        hit = cache.get(dig)
        if hit is not None:
            return _with_path(hit, path), dig
    opts = {k: v for k, v in options.items() if k != "_cache"}
    return analyze_bytes(path, data, opts).to_json(), dig


def _with_path(result: dict, path: str) -> dict:
    if result["path"] == path:
        return result
    out = dict(result)
    out["path"] = path
    out["diagnostics"] = [{**d, "path": path} for d in result["diagnostics"]]
    out["calls"] = [{**c, "path": path} for c in result["calls"]]
    out["functions"] = [{**f, "path": path} for f in result["functions"]]
    return out


def analyze_files(
    files: list[Path],
    options: dict | None = None,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[FileResult]:
    """Analyze files, in a process pool when the tree is large enough to pay for it.
    Results come back in the order of files. With options["_cache"], unchanged
    files (same path, mtime and size) are not even read."""
    options = dict(options or {})
    cache = options.get("_cache")
    results: list[dict | None] = [None] * len(files)
    stats: list[os.stat_result | None] = [None] * len(files)
    todo: list[int] = []
    for i, f in enumerate(files):
        if cache is not None:
            try:
                st = f.stat()
            except OSError:
                st = None
            stats[i] = st
            hit = cache.lookup_stat(str(f), st) if st is not None else None
            if hit is not None:
                results[i] = _with_path(hit, str(f))
                continue
        todo.append(i)
    global _WORKER_OPTIONS
    _WORKER_OPTIONS = options
    items = [str(files[i]) for i in todo]
    n = len(files)
    done0 = n - len(todo)
    jobs = jobs or (os.cpu_count() or 1)
    use_pool = (
        jobs > 1
        and len(todo) >= POOL_MIN_FILES
        and _total_size([files[i] for i in todo]) >= POOL_MIN_BYTES
    )
    if not use_pool:
        outputs = map(_work, items)
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        ctx = mp.get_context("fork") if sys.platform.startswith("linux") else None
        chunk = max(1, min(16, len(items) // (jobs * 8)))
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)
        outputs = pool.map(_work, items, chunksize=chunk)
    try:
        for k, (i, (res, dig)) in enumerate(zip(todo, outputs)):
            results[i] = res
            if cache is not None and dig is not None:
                cache.store(str(files[i]), stats[i], dig, res)
            if progress:
                progress(done0 + k + 1, n)
    finally:
        if use_pool:
            pool.shutdown()
    return [FileResult.from_json(r) for r in results if r is not None]


def _total_size(files: list[Path]) -> int:
    total = 0
    for f in files:
        try:
            total += f.stat().st_size
        except OSError:
            pass
        if total >= POOL_MIN_BYTES:
            break
    return total


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


def _suppressed(code: str, codes: set[str] | None) -> bool:
    if codes is None:
        return False
    return not codes or any(code.startswith(c) for c in codes)


def filter_diagnostics(
    result: FileResult, cfg, text_lines: list[str] | None = None
) -> list[Diagnostic]:
    """Apply select/ignore/per-file-ignores and `# noqa` comments."""
    out = []
    lines = text_lines
    for d in result.diagnostics:
        if not cfg.is_enabled(d.code, d.path):
            continue
        if d.code != "SHP001":
            if lines is None:
                lines = _read_lines(d.path)
            if _suppressed(d.code, _line_noqa(lines, d.line)) or (
                d.end_line != d.line and _suppressed(d.code, _line_noqa(lines, d.end_line))
            ):
                continue
        out.append(d)
    return out


def _line_noqa(lines: list[str], lineno: int) -> set[str] | None:
    if 1 <= lineno <= len(lines) and "noqa" in lines[lineno - 1].lower():
        return noqa_codes(lines[lineno - 1])
    return None


def _read_lines(path: str) -> list[str]:
    try:
        return decode_source(Path(path).read_bytes()).splitlines()
    except (OSError, DecodeFailure):
        return []
