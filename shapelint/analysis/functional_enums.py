"""Enum classes made by enum's functional API, `NormType = Enum("NormType", "Batch
Weight")`, as the class statement Python's `EnumType.__call__` builds.

Python makes the same class as `class NormType(Enum): Batch = 1; Weight = 2`: the
names given as one string (split at commas and whitespace) or a sequence of names
take `start`, `start + 1`, ... (a StrEnum's the name lower-cased); a sequence of
(name, value) pairs or a dict gives each its value. Spelling the call as that class
statement lets enums.py model its members as any enum's. A call this does not read
(names not literal, `type=` or `boundary=`, a base other than enum's Enum, IntEnum
or StrEnum) makes no class here, and its value stays not known.
"""

from __future__ import annotations

import ast

_BASES = ("enum.Enum", "enum.IntEnum", "enum.StrEnum")
_IGNORED_KEYWORDS = ("module", "qualname")


def class_statement(imports, stmt: ast.stmt) -> tuple[str, ast.ClassDef] | None:
    """(the name bound, the class statement) where stmt is `NAME = Enum("Cls",
    names...)` of literals; None otherwise."""
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, (ast.Name, ast.Attribute))
    ):
        return None
    call = stmt.value
    base = imports.resolve(call.func)
    if base not in _BASES or len(call.args) != 2 or not _str(call.args[0]):
        return None
    start = 1
    for kw in call.keywords:
        if kw.arg == "start" and isinstance(kw.value, ast.Constant):
            start = kw.value.value
        elif kw.arg not in _IGNORED_KEYWORDS:
            return None  # `type=`, `boundary=`, `**opts`: not read here
    if type(start) is not int:
        return None
    members = _members(call.args[1], start, lower=base == "enum.StrEnum")
    if not members:
        return None
    body: list[ast.stmt] = [
        ast.Assign(targets=[ast.Name(name, ast.Store())], value=ast.Constant(value))
        for name, value in members
    ]
    node = ast.ClassDef(
        name=call.args[0].value,  # type: ignore[attr-defined]
        bases=[call.func],
        keywords=[],
        body=body,
        decorator_list=[],
    )
    for part in ast.walk(node):
        if part is not call.func:
            ast.copy_location(part, stmt)
    return stmt.targets[0].id, node


def _str(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _members(spec: ast.expr, start: int, lower: bool) -> list[tuple[str, object]] | None:
    """Each member's (name, value) as the functional API gives them."""
    if _str(spec):
        names = spec.value.replace(",", " ").split()  # type: ignore[attr-defined]
        return _numbered(names, start, lower)
    if isinstance(spec, (ast.List, ast.Tuple)):
        if all(_str(e) for e in spec.elts):
            return _numbered([e.value for e in spec.elts], start, lower)  # type: ignore[attr-defined]
        pairs = []
        for e in spec.elts:
            if not (isinstance(e, (ast.Tuple, ast.List)) and len(e.elts) == 2):
                return None
            name, value = e.elts
            if not (_str(name) and isinstance(value, ast.Constant)):
                return None
            pairs.append((name.value, value.value))  # type: ignore[attr-defined]
        return pairs
    if isinstance(spec, ast.Dict):
        pairs = []
        for k, v in zip(spec.keys, spec.values):
            if k is None or not (_str(k) and isinstance(v, ast.Constant)):
                return None  # `**other`: not read here
            pairs.append((k.value, v.value))  # type: ignore[attr-defined]
        return pairs
    return None


def _numbered(names: list[str], start: int, lower: bool) -> list[tuple[str, object]]:
    return [(n, n.lower() if lower else start + i) for i, n in enumerate(names)]
