"""A content-keyed result cache in .shapelint_cache/ at the project root (as ruff's).

Entries are keyed by the file's content digest; the file they live in is named
by a salt made of the shapelint version and code, the Python version, the stubs
(every stub file's content, also in stub directories) and the analysis options,
so a change to any of them starts a fresh cache. A stat index (absolute path ->
device, inode, ctime, mtime, size, digest) lets a warm re-run of an unchanged tree
skip reading files at all: ctime cannot be set back by `tar`, `cp -p` or `rsync -a`,
and the inode tells two files at one relative path apart. Only the parent process
writes; workers return what they computed.

One file per salt: a magic, a blake2b digest of the payload and the payload,
written with marshal (plain tuples, strings and bytes: it loads several times
faster than pickle and cannot run code when loaded). A file whose digest does not
match is ignored, and each entry is checked for its shape on load, so a damaged or
crafted cache is a miss, never a crash. An entry is (diagnostic rows, packed cost
records, the diagnostic lines that carry a `# noqa`, the (path, digest) of the
other project files the results depend on): the records stay one bytes blob until
a face asks for them, and the noqa lines spare `check` reading the files it
reports on, so a warm run reads no source file at all.

The analysed tree does not steer the writes: a `.shapelint_cache` or `.gitignore`
that is a symlink is refused with a warning, files are created with O_NOFOLLOW and
O_EXCL, and pruning removes only files named as this cache names them.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import time
from pathlib import Path

try:  # what hashlib.blake2b is, without hashlib loading OpenSSL (3 ms of start-up)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter without the builtin module
    from hashlib import blake2b

from shapelint import __version__

CACHE_DIR_NAME = ".shapelint_cache"
FORMAT = 5
MAGIC = b"shapelint-cache\x00"
_CACHE_FILE = re.compile(r"results-[0-9a-f]{16}\.marshal")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
KEEP_FILES = 4  # cache files of other salts (older versions, other options) kept
# A file modified this recently may change again within the same mtime tick
# without changing size; its stat is not trusted (it is re-read next time). The
# kernel stamps ctime from a coarse clock (a tick, at most 10 ms): a ctime this
# recent could be shared by a write still to come.
RACY_NS = 2_000_000_000
RACY_CTIME_NS = 100_000_000


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
    """Every stub file's name and content, those in stub directories too."""
    from shapelint.ops.stub_dir import stub_files

    files, problems = stub_files(paths)
    for f in files:
        h.update(f"{f}\0".encode())
        try:
            h.update(f.read_bytes())
        except OSError:
            h.update(b"<unreadable>")
    for path, problem in problems:
        h.update(f"{path}\0{problem}".encode())


def salt_for(options) -> str:
    """The cache's key for these analysis options (an AnalysisOptions, or a mapping
    of its fields): every option that changes what the analysis computes."""
    from shapelint.options import AnalysisOptions

    key = AnalysisOptions.coerce(options).cache_key()
    h = blake2b(digest_size=8)
    h.update(f"{__version__};{FORMAT};{sys.version_info[:2]};".encode())
    _code_fingerprint(h)
    _stubs_fingerprint(h, key["stubs"])
    import json

    h.update(json.dumps(key, sort_keys=True, default=str).encode())
    return h.hexdigest()


def encode_payload(data: dict) -> bytes:
    import marshal

    body = marshal.dumps(data)
    return MAGIC + blake2b(body, digest_size=16).digest() + body


def decode_payload(raw: bytes) -> dict | None:
    """The payload, or None when the file is not an intact cache file."""
    import marshal

    n = len(MAGIC)
    if raw[:n] != MAGIC or len(raw) < n + 16:
        return None
    body = raw[n + 16 :]
    if blake2b(body, digest_size=16).digest() != raw[n : n + 16]:
        return None
    try:
        data = marshal.loads(body)  # 3x faster than marshal.load(f)
    except (ValueError, EOFError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def read_payload(path: Path) -> dict | None:
    """A cache file's payload; None when absent, not a regular file or damaged."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return decode_payload(f.read())
    except OSError:
        return None
    finally:
        os.close(fd)


def write_payload(path: Path, data: dict) -> None:
    """Write atomically beside path (a fresh file, never through a symlink)."""
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(encode_payload(data))
        os.replace(tmp, path)  # rename replaces a symlink itself, never its target
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _valid_row(r) -> bool:
    return (
        type(r) is tuple
        and len(r) == 7
        and all(type(x) is int for x in r[:4])
        and all(type(x) is str for x in r[4:])
    )


def valid_entry(e) -> bool:
    """(diagnostic rows, packed records or None, {line: text}, deps) of the right
    types. The packed records are checked when unpacked (driver.unpack_records)."""
    if type(e) is not tuple or len(e) != 4:
        return False
    rows, packed, noqa, deps = e
    return (
        type(deps) is tuple
        and all(
            type(d) is tuple and len(d) == 2 and type(d[0]) is str and type(d[1]) is str
            for d in deps
        )
        and type(rows) is list
        and all(_valid_row(r) for r in rows)
        and (packed is None or (type(packed) is bytes and packed[:1] == b"M"))
        and type(noqa) is dict
        and all(type(k) is int and type(v) is str for k, v in noqa.items())
    )


def _valid_stat(v) -> bool:
    return (
        type(v) is tuple
        and len(v) == 6
        and all(type(x) is int for x in v[:5])
        and type(v[5]) is str
    )


def _stat_key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_size)


class Cache:
    def __init__(self, directory: Path, salt: str):
        self.dir = directory
        self.file = directory / f"results-{salt}.marshal"
        # absolute path -> (device, inode, ctime, mtime, size, digest)
        self.by_stat: dict[str, tuple[int, int, int, int, int, str]] = {}
        # digest -> (diagnostic rows, packed records, noqa lines, deps): deps are the
        # (path, digest) of the other project files the results were computed from.
        self.entries: dict[str, tuple] = {}
        self._dep_digests: dict[str, str | None] = {}
        self.warnings: list[str] = []
        self._dirty = False
        self._stored: set[str] = set()
        if self._dir_is_safe(create=False):
            self._load()

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def _dir_is_safe(self, create: bool) -> bool:
        """The cache directory is a real directory (not a symlink, which would send
        the reads and writes elsewhere); with create, made when missing."""
        try:
            st = os.lstat(self.dir)
        except FileNotFoundError:
            if not create:
                return False
            try:
                os.mkdir(self.dir)  # no parents: only inside an existing project root
            except OSError:
                return False
            return True
        except OSError:
            return False
        if stat.S_ISLNK(st.st_mode):
            self._warn(f"{self.dir} is a symlink; the cache is not used (remove it to cache)")
            return False
        if not stat.S_ISDIR(st.st_mode):
            self._warn(f"{self.dir} is not a directory; the cache is not used")
            return False
        return True

    def _load(self) -> None:
        data = read_payload(self.file)
        if data is None or data.get("format") != FORMAT:
            return
        by_stat, entries = data.get("by_stat"), data.get("entries")
        if type(by_stat) is not dict or type(entries) is not dict:
            return
        self.entries = {k: v for k, v in entries.items() if type(k) is str and valid_entry(v)}
        self.by_stat = {
            k: v
            for k, v in by_stat.items()
            if type(k) is str and _valid_stat(v) and v[5] in self.entries
        }

    @staticmethod
    def for_config(cfg, options) -> Cache:
        return Cache(Path(cfg.root) / CACHE_DIR_NAME, salt_for(options))

    def lookup_stat(self, path: str, st: os.stat_result) -> tuple | None:
        """The entry for an unchanged file (the same file at the same absolute path,
        with the same ctime, mtime and size), or None."""
        entry = self.by_stat.get(os.path.abspath(path))
        if entry is not None and entry[:5] == _stat_key(st):
            return self._valid(self.entries.get(entry[5]))
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
        read), else by reading it (a regular file only); once per path per run."""
        if path in self._dep_digests:
            return self._dep_digests[path]
        dig: str | None = None
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if st is not None and stat.S_ISREG(st.st_mode):
            known = self.by_stat.get(os.path.abspath(path))
            if known is not None and known[:5] == _stat_key(st):
                dig = known[5]
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
        key = os.path.abspath(path)
        now = time.time_ns()
        if (
            st is not None
            and now - st.st_mtime_ns > RACY_NS
            and now - st.st_ctime_ns > RACY_CTIME_NS
        ):
            self.by_stat[key] = (*_stat_key(st), dig)
        else:
            self.by_stat.pop(key, None)
        self._dirty = True

    def flush(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        # Content no path points at any more (edited files) is dropped, so the
        # cache grows with the tree, not with its history.
        live = {e[5] for e in self.by_stat.values()} | self._stored
        entries = {d: e for d, e in self.entries.items() if d in live}
        if not self._dir_is_safe(create=True):
            return
        try:
            self._write_gitignore()
            write_payload(
                self.file, {"format": FORMAT, "by_stat": self.by_stat, "entries": entries}
            )
            self._prune_other_files()
        except (OSError, ValueError):
            pass  # a read-only tree still gets its results; only the cache is lost

    def _write_gitignore(self) -> None:
        gitignore = self.dir / ".gitignore"
        try:
            st = os.lstat(gitignore)
        except FileNotFoundError:
            fd = os.open(gitignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
            with os.fdopen(fd, "w") as f:
                f.write("# Automatically created by shapelint.\n*\n")
            return
        if stat.S_ISLNK(st.st_mode):
            self._warn(f"{gitignore} is a symlink; not written through")

    def _prune_other_files(self) -> None:
        """Keep the few most recently written cache files of other salts; touch
        nothing this cache did not name."""
        others = []
        with os.scandir(self.dir) as it:
            for e in it:
                if e.name == self.file.name or not _CACHE_FILE.fullmatch(e.name):
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    others.append((st.st_mtime_ns, e.path))
        for _, p in sorted(others, reverse=True)[KEEP_FILES:]:
            try:
                os.unlink(p)
            except OSError:
                pass
