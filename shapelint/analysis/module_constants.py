"""A module-level constant of a project file read off its module (`c_f.COLLECT_STATS`,
`from ..utils import common_functions as c_f`), in a target run.

Python reads the module's attribute when the expression runs, where `from m import
NAME` read it once, at import: the two differ only where code stores into the module
object (`c_f.COLLECT_STATS = True` in another file, `setattr(c_f, name, v)`). A run
applies the writes it makes to a module's own names (`global NAME`) to the module's
env, which both forms read; a store through the module object it does not. So the
value is the one the import would give where no file of the defining module's top-level
package, nor of the reading one's, stores an attribute of that name through any object,
sets one of a name not written out on a name bound by an import, or hands the defining
module's namespace out (`globals()`, `vars()`, `__dict__`): read as text, as absence.py
reads a class's source. Only numbers, strings, None and tuples of them: a list or dict
changed in place through the module object (`c_f.TABLE[k] = v`) is a write the run does
not apply to the module's env. A package of more than `MAX_FILES` files is not read
(the value is then not known). The scans are kept for the process under the stats of
the files read, listed afresh for each file analysed, and those files are the reader's
dependencies (`an.peeked_paths`), as Project.peek keeps and records its own."""

from __future__ import annotations

import os
import re

from shapelint.analysis.project import file_stat
from shapelint.ops.values import BoolV, FloatV, IntV, NoneV, StrV, TupleV, Value

MAX_FILES = 600

# Kept for the process (a language server's, a warm check's), each under the stats
# of the files it read, so that an edit between two runs is read again:
# (package directory, name) -> (the package's files and their stats, whether some
# file may store that attribute, {path: digest} of the files the scan read)
_STORED: dict[tuple[str, str], tuple[tuple, bool, dict]] = {}
# path -> (its stat, whether it hands its namespace out, its digest)
_HANDED: dict[str, tuple] = {}


def readable(value: Value) -> bool:
    """A value no store into it can change: a known number, string, None, a tuple of them."""
    if isinstance(value, TupleV):
        return all(readable(v) for v in value.items)
    if isinstance(value, NoneV):
        return True
    return isinstance(value, (BoolV, IntV, FloatV, StrV)) and value.value is not None


def kept(an, value: Value, name: str, defining_path: str | None, dirs: list[str]) -> bool:
    """Whether `value`, the defining file's module-level `name`, is what reading it off
    the module object gives: readable, and no store through a module object may change it.
    The files read are an's dependencies (an.peeked_paths), as Project.peek's are."""
    if not readable(value) or defining_path is None or _hands_out(an, defining_path):
        return False
    return not any(_stored(an, d, name) for d in dict.fromkeys(dirs))


def package_dir(path: str, modname: str) -> str:
    """The directory of the top-level package that holds module `modname` at `path`."""
    d = os.path.dirname(os.path.abspath(path))
    depth = modname.count(".") - (0 if path.endswith("__init__.py") else 1)
    for _ in range(max(depth, 0)):
        d = os.path.dirname(d)
    return d


_NAMESPACE = re.compile(rb"\bglobals\s*\(|\bvars\s*\(|__dict__")


def _hands_out(an, path: str) -> bool:
    stat = file_stat(path)
    kept = _HANDED.get(path)
    if kept is None or kept[0] != stat or stat is None:
        try:
            with open(path, "rb") as f:
                data = f.read()
            kept = _HANDED[path] = (stat, bool(_NAMESPACE.search(data)), _digest(data))
        except OSError:
            return True
    _depends(an, {path: kept[2]})
    return kept[1]


def _stored(an, package: str, name: str) -> bool:
    listing = _listing(an, package)
    kept = _STORED.get((package, name))
    if kept is None or kept[0] != listing:
        read: dict[str, str] = {}
        kept = _STORED[(package, name)] = (listing, _scan(package, name, listing, read), read)
    _depends(an, kept[2])
    return kept[1]


def _listing(an, package: str) -> tuple | None:
    """The package's .py files with their stats, once per file analysed (the
    project's new_file clears them); None where it is no directory or holds more
    than MAX_FILES."""
    listings = an.project.listings if an.project is not None else {}
    if package not in listings:
        files: list[str] = []
        for d, _, names in os.walk(package):
            files.extend(os.path.join(d, f) for f in names if f.endswith(".py"))
            if len(files) > MAX_FILES:
                break
        ok = os.path.isdir(package) and len(files) <= MAX_FILES
        listings[package] = tuple((f, file_stat(f)) for f in sorted(files)) if ok else None
    return listings[package]


def _depends(an, read: dict[str, str]) -> None:
    if an.project is None:
        return
    for path, digest in read.items():
        an.peeked_paths.add(path)
        an.project.digests[path] = digest


def _digest(data: bytes) -> str:
    from shapelint.cache import digest

    return digest(data)


_SETATTR = re.compile(rb"\bsetattr\s*\(\s*([A-Za-z_]\w*)\s*,\s*([^,]+),")
_IMPORTED = rb"(?:^|\n)[ \t]*(?:import[ \t]+[\w.]+[ \t]+as[ \t]+%s\b|from[ \t]+[\w.]+[ \t]+import[^\n]*\b%s\b)"


def _scan(package: str, name: str, listing: tuple | None, read: dict) -> bool:
    """Whether a file of the package may store attribute `name` through an object;
    the digest of each file it read goes into read."""
    if listing is None:
        return True  # not read: may store it
    word = name.encode()
    store = re.compile(
        rb"\.\s*"
        + word
        + rb"\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)|\bdel\b[^\n]*\."
        + word
        + rb"\b"
    )
    for path, _ in listing:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return True
        read[path] = _digest(data)
        if word in data and store.search(data):
            return True
        for m in _SETATTR.finditer(data) if b"setattr" in data else ():
            attr = m.group(2).strip()
            if attr[:1] in (b"'", b'"'):
                if attr.strip(b"'\"") == word:
                    return True
            elif re.search(_IMPORTED % (m.group(1), m.group(1)), data):
                return True  # a name not written out, on what may be a module
    return False
