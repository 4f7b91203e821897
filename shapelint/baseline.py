"""A baseline: the findings a project already has, so that it adopts shapelint
today and is told only about new ones (`--write-baseline FILE`, `--baseline FILE`).

A finding is matched by its path (relative to the project root), its code and a
fingerprint of its message and the text of its line, not the line number: code
added above a known finding does not make it new. Identical findings match as a
multiset (two known, three now: one is new).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from shapelint.diagnostics import Diagnostic

VERSION = 1


class BaselineError(Exception):
    pass


def _relative(path: str, root: Path) -> str:
    p = Path(path).resolve()
    try:
        return p.relative_to(root.resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def _key(d: Diagnostic, root: Path, lines: dict[str, list[str]]) -> tuple[str, str, str]:
    if d.path not in lines:
        try:
            lines[d.path] = Path(d.path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            lines[d.path] = []
    src = lines[d.path]
    text = src[d.line - 1].strip() if 0 < d.line <= len(src) else ""
    digest = hashlib.sha256(f"{d.code}\0{text}\0{d.message}".encode("utf-8", "surrogatepass"))
    return _relative(d.path, root), d.code, digest.hexdigest()[:16]


def write(path: Path, diags: list[Diagnostic], root: Path) -> int:
    lines: dict[str, list[str]] = {}
    keys = sorted(_key(d, root, lines) for d in diags)
    entries = [{"path": p, "code": c, "fingerprint": f} for p, c, f in keys]
    path.write_text(json.dumps({"version": VERSION, "findings": entries}, indent=1) + "\n")
    return len(entries)


def load(path: Path) -> Counter:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data["findings"]
        return Counter((e["path"], e["code"], e["fingerprint"]) for e in entries)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BaselineError(f"{path}: not a shapelint baseline ({type(e).__name__}: {e})") from None


def new_findings(diags: list[Diagnostic], known: Counter, root: Path) -> list[Diagnostic]:
    """The findings the baseline does not account for."""
    left = Counter(known)
    lines: dict[str, list[str]] = {}
    out = []
    for d in diags:
        k = _key(d, root, lines)
        if left[k] > 0:
            left[k] -= 1
        else:
            out.append(d)
    return out
