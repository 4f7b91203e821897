"""A content-keyed result cache in .shapelint_cache/ at the project root (as ruff's).

Entries are keyed by the file's content digest under a salt made of the
shapelint version, the stubs and the analysis options, so a change to any of
them starts a fresh cache. A stat index (path, mtime, size -> digest) lets a
warm re-run of an unchanged tree skip reading files at all. Only the parent
process writes; workers return what they computed.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from pathlib import Path

from shapelint import __version__

CACHE_DIR_NAME = ".shapelint_cache"


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _stubs_fingerprint(paths: list[str]) -> str:
    h = hashlib.blake2b(digest_size=8)
    try:
        from importlib.resources import files

        for res in sorted(files("shapelint._stubs").iterdir(), key=lambda r: r.name):
            if res.name.endswith(".stub"):
                h.update(res.name.encode())
                h.update(res.read_bytes())
    except (ModuleNotFoundError, OSError, TypeError):
        pass
    for p in paths:
        try:
            h.update(Path(p).read_bytes())
        except OSError:
            h.update(p.encode())
    return h.hexdigest()


class Cache:
    def __init__(self, directory: Path, salt: str):
        self.dir = directory
        self.file = directory / f"results-{salt}.pickle"
        self.by_digest: dict[str, dict] = {}
        self.by_stat: dict[str, tuple[int, int, str]] = {}
        self._dirty = False
        try:
            with open(self.file, "rb") as f:
                data = pickle.load(f)
            if isinstance(data, dict) and data.get("version") == __version__:
                self.by_digest = data["by_digest"]
                self.by_stat = data["by_stat"]
        except (OSError, EOFError, pickle.UnpicklingError, KeyError, AttributeError, ValueError):
            pass

    @staticmethod
    def for_config(cfg, options: dict) -> Cache:
        key = json.dumps(
            {
                "v": __version__,
                "stubs": _stubs_fingerprint(list(options.get("stubs", []))),
                "opts": {k: options.get(k) for k in ("naming", "dtype")},
            },
            sort_keys=True,
            default=str,
        )
        salt = hashlib.blake2b(key.encode(), digest_size=8).hexdigest()
        return Cache(Path(cfg.root) / CACHE_DIR_NAME, salt)

    def lookup_stat(self, path: str, st: os.stat_result) -> dict | None:
        entry = self.by_stat.get(path)
        if entry and entry[0] == st.st_mtime_ns and entry[1] == st.st_size:
            return self.by_digest.get(entry[2])
        return None

    def get(self, dig: str) -> dict | None:
        return self.by_digest.get(dig)

    def store(self, path: str, st: os.stat_result | None, dig: str, result: dict) -> None:
        self.by_digest[dig] = result
        if st is not None:
            self.by_stat[path] = (st.st_mtime_ns, st.st_size, dig)
        self._dirty = True

    def flush(self) -> None:
        if not self._dirty:
            return
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            gitignore = self.dir / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# Automatically created by shapelint.\n*\n")
            fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                pickle.dump(
                    {"version": __version__, "by_digest": self.by_digest, "by_stat": self.by_stat},
                    f,
                    protocol=pickle.HIGHEST_PROTOCOL,
                )
            os.replace(tmp, self.file)
        except OSError:
            pass  # a read-only tree still gets its results; only the cache is lost
        self._dirty = False
