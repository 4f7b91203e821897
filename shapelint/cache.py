"""A content-keyed result cache in .shapelint_cache/ at the project root (as ruff's).

Entries are keyed by the file's content digest; the file they live in is named
by a salt made of the shapelint version and code, the Python version, the stubs
and the analysis options, so a change to any of them starts a fresh cache. A
stat index (path -> mtime, size, digest) lets a warm re-run of an unchanged tree
skip reading files at all. Only the parent process writes; workers return what
they computed.

One file per salt, written with marshal (plain tuples, strings and bytes: it
loads several times faster than pickle and cannot run code when loaded). An
entry is (diagnostic rows, packed cost records, the diagnostic lines that carry
a `# noqa`): the records stay one bytes blob until a face asks for them, and
the noqa lines spare `check` reading the files it reports on, so a warm run
reads no source file at all.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

try:  # what hashlib.blake2b is, without hashlib loading OpenSSL (3 ms of start-up)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter without the builtin module
    from hashlib import blake2b

from shapelint import __version__

CACHE_DIR_NAME = ".shapelint_cache"
FORMAT = 4
KEEP_FILES = 4  # cache files of other salts (older versions, other options) kept
# A file modified this recently may change again within the same mtime tick
# without changing size; its stat is not trusted (it is re-read next time).
RACY_NS = 2_000_000_000


def digest(data: bytes) -> str:
    return blake2b(data, digest_size=16).hexdigest()


def _code_fingerprint(h) -> None:
    """Names, sizes and mtimes of shapelint's own modules and built-in stubs: a
    checkout being edited must not be served results of the code before the edit.
    Stats only (about 60), no reads."""
    from shapelint.ops.stub_dir import builtin_stub_dir

    roots = (Path(__file__).resolve().parent, builtin_stub_dir())
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".py", ".stub")):
                    p = os.path.join(dirpath, name)
                    try:
                        st = os.stat(p)
                    except OSError:
                        continue
                    h.update(f"{os.path.relpath(p, root)}:{st.st_size}:{st.st_mtime_ns};".encode())


def _stubs_fingerprint(h, paths: list[str]) -> None:
    for p in paths:
        h.update(p.encode())
        try:
            h.update(Path(p).read_bytes())
        except OSError:
            h.update(b"<unreadable>")


def salt_for(options) -> str:
    """The cache's key for these analysis options (an AnalysisOptions, or a mapping
    of its fields): every option that changes what the analysis computes."""
    from shapelint.analysis.options import AnalysisOptions

    key = AnalysisOptions.coerce(options).cache_key()
    h = blake2b(digest_size=8)
    h.update(f"{__version__};{FORMAT};{sys.version_info[:2]};".encode())
    _code_fingerprint(h)
    _stubs_fingerprint(h, key["stubs"])
    import json

    h.update(json.dumps(key, sort_keys=True, default=str).encode())
    return h.hexdigest()


class Cache:
    def __init__(self, directory: Path, salt: str):
        self.dir = directory
        self.file = directory / f"results-{salt}.marshal"
        self.by_stat: dict[str, tuple[int, int, str]] = {}
        # digest -> (diagnostic rows, packed records, noqa lines, deps): deps are the
        # (path, digest) of the other project files the results were computed from.
        self.entries: dict[str, tuple] = {}
        self._dep_digests: dict[str, str | None] = {}
        self._dirty = False
        self._stored: set[str] = set()
        self._load()

    def _load(self) -> None:
        import marshal

        try:
            with open(self.file, "rb") as f:
                data = marshal.loads(f.read())  # 3x faster than marshal.load(f)
        except Exception:  # noqa: BLE001 - missing, truncated or foreign: start afresh
            return
        if isinstance(data, dict) and data.get("format") == FORMAT:
            by_stat, entries = data.get("by_stat"), data.get("entries")
            if isinstance(by_stat, dict) and isinstance(entries, dict):
                self.by_stat, self.entries = by_stat, entries

    @staticmethod
    def for_config(cfg, options) -> Cache:
        return Cache(Path(cfg.root) / CACHE_DIR_NAME, salt_for(options))

    def lookup_stat(self, path: str, st: os.stat_result) -> tuple | None:
        """The entry for an unchanged file (same path, mtime and size), or None."""
        entry = self.by_stat.get(path)
        if entry is not None and entry[0] == st.st_mtime_ns and entry[1] == st.st_size:
            return self._valid(self.entries.get(entry[2]))
        return None

    def get(self, dig: str) -> tuple | None:
        return self._valid(self.entries.get(dig))

    def _valid(self, entry: tuple | None) -> tuple | None:
        """The entry while every project file it depends on is as it was."""
        if entry is None:
            return None
        for path, dig in entry[3]:
            if self._current_digest(path) != dig:
                return None
        return entry

    def _current_digest(self, path: str) -> str | None:
        """A dependency's digest now: from the stat index when its stat holds (no
        read), else by reading it; once per path per run."""
        if path in self._dep_digests:
            return self._dep_digests[path]
        try:
            st = os.stat(path)
        except OSError:
            self._dep_digests[path] = None
            return None
        known = self.by_stat.get(path)
        if known is not None and known[0] == st.st_mtime_ns and known[1] == st.st_size:
            dig: str | None = known[2]
        else:
            try:
                with open(path, "rb") as f:
                    dig = digest(f.read())
            except OSError:
                dig = None
        self._dep_digests[path] = dig
        return dig

    def store(
        self,
        path: str,
        st: os.stat_result | None,
        dig: str,
        rows: list[tuple],
        packed: bytes | None,
        noqa_lines: dict[int, str],
        deps=(),
    ) -> None:
        self.entries[dig] = (list(rows), packed, dict(noqa_lines), tuple(tuple(d) for d in deps))
        self._stored.add(dig)
        if st is not None and time.time_ns() - st.st_mtime_ns > RACY_NS:
            self.by_stat[path] = (st.st_mtime_ns, st.st_size, dig)
        else:
            self.by_stat.pop(path, None)
        self._dirty = True

    def flush(self) -> None:
        if not self._dirty:
            return
        import marshal

        # Content no path points at any more (edited files) is dropped, so the
        # cache grows with the tree, not with its history.
        live = {e[2] for e in self.by_stat.values()} | self._stored
        entries = {d: e for d, e in self.entries.items() if d in live}
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            gitignore = self.dir / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# Automatically created by shapelint.\n*\n")
            tmp = self.dir / f".tmp-{os.getpid()}-{self.file.name}"
            try:
                with open(tmp, "wb") as f:
                    marshal.dump({"format": FORMAT, "by_stat": self.by_stat, "entries": entries}, f)
                os.replace(tmp, self.file)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
            self._prune_other_files()
        except (OSError, ValueError):
            pass  # a read-only tree still gets its results; only the cache is lost
        self._dirty = False

    def _prune_other_files(self) -> None:
        """Keep the few most recently written cache files of other salts."""
        others = []
        for p in self.dir.glob("results-*"):
            if p != self.file:
                try:
                    others.append((p.stat().st_mtime_ns, p))
                except OSError:
                    pass
        for _, p in sorted(others, reverse=True)[KEEP_FILES:]:
            try:
                p.unlink()
            except OSError:
                pass
