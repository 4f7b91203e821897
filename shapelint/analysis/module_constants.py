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
(the value is then not known)."""

from __future__ import annotations

import os
import re

from shapelint.ops.values import BoolV, FloatV, IntV, NoneV, StrV, TupleV, Value

MAX_FILES = 600

# (package directory, name) -> whether some file may store that attribute
_STORED: dict[tuple[str, str], bool] = {}
_HANDED: dict[str, bool] = {}


def readable(value: Value) -> bool:
    """A value no store into it can change: a known number, string, None, a tuple of them."""
    if isinstance(value, TupleV):
        return all(readable(v) for v in value.items)
    if isinstance(value, NoneV):
        return True
    return isinstance(value, (BoolV, IntV, FloatV, StrV)) and value.value is not None


def kept(value: Value, name: str, defining_path: str | None, dirs: list[str]) -> bool:
    """Whether `value`, the defining file's module-level `name`, is what reading it off
    the module object gives: readable, and no store through a module object may change it."""
    if not readable(value) or defining_path is None or _hands_out(defining_path):
        return False
    return not any(_stored(d, name) for d in dict.fromkeys(dirs))


def package_dir(path: str, modname: str) -> str:
    """The directory of the top-level package that holds module `modname` at `path`."""
    d = os.path.dirname(os.path.abspath(path))
    depth = modname.count(".") - (0 if path.endswith("__init__.py") else 1)
    for _ in range(max(depth, 0)):
        d = os.path.dirname(d)
    return d


_NAMESPACE = re.compile(rb"\bglobals\s*\(|\bvars\s*\(|__dict__")


def _hands_out(path: str) -> bool:
    if path not in _HANDED:
        try:
            with open(path, "rb") as f:
                _HANDED[path] = bool(_NAMESPACE.search(f.read()))
        except OSError:
            _HANDED[path] = True
    return _HANDED[path]


def _stored(package: str, name: str) -> bool:
    key = (package, name)
    if key not in _STORED:
        _STORED[key] = _scan(package, name)
    return _STORED[key]


_SETATTR = re.compile(rb"\bsetattr\s*\(\s*([A-Za-z_]\w*)\s*,\s*([^,]+),")
_IMPORTED = rb"(?:^|\n)[ \t]*(?:import[ \t]+[\w.]+[ \t]+as[ \t]+%s\b|from[ \t]+[\w.]+[ \t]+import[^\n]*\b%s\b)"


def _scan(package: str, name: str) -> bool:
    """Whether a file of the package may store attribute `name` through an object."""
    word = name.encode()
    store = re.compile(
        rb"\.\s*"
        + word
        + rb"\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)|\bdel\b[^\n]*\."
        + word
        + rb"\b"
    )
    files = []
    for d, _, names in os.walk(package):
        files.extend(os.path.join(d, f) for f in names if f.endswith(".py"))
        if len(files) > MAX_FILES:
            return True  # not read: may store it
    if not os.path.isdir(package):
        return True
    for path in files:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return True
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
