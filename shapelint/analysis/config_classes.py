"""Dataclasses as configs: whether a class is one (`@dataclass`, PEP 681's
`dataclass_transform`), the fields its `__init__` takes with their defaults,
and why Python would refuse a call of it.

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

import ast
import difflib
from typing import TYPE_CHECKING

from shapelint.analysis.attributes import base_classes, find_method
from shapelint.ops.values import UNKNOWN, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef


def _decorated(cd: ClassDef, name: str) -> bool:
    for d in cd.node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        found = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
        if found == name:
            return True
    return False


def _transform_bases(cd: ClassDef, seen: frozenset = frozenset()) -> list[ClassDef]:
    """The project bases of cd, for a dataclass's fields: those in its file, and in
    other files where the class's analyzer follows them (target runs)."""
    owner = cd.owner
    if owner is None or cd.key in seen:
        return []
    return [b for b in base_classes(owner, cd) if b.key not in seen]


def is_dataclass(cd: ClassDef, _seen: frozenset = frozenset()) -> bool:
    """`@dataclass`, or a subclass of a `@dataclass_transform()` class (PEP 681:
    `PreTrainedConfig`, whose `__init_subclass__` makes every subclass one)."""
    if _decorated(cd, "dataclass"):
        return True
    return any(_transforms(b, _seen | {cd.key}) for b in _transform_bases(cd, _seen))


def _transforms(cd: ClassDef, seen: frozenset) -> bool:
    """Whether a dataclass_transform base is above cd (its subclasses are dataclasses)."""
    return _decorated(cd, "dataclass_transform") or any(
        _transforms(b, seen | {cd.key}) for b in _transform_bases(cd, seen)
    )


def dataclass_fields(an: Analyzer, cd: ClassDef) -> list[tuple[str, ast.expr | None, ClassDef]]:
    """The fields a dataclass's __init__ takes, in order: its dataclass bases' first
    (a field a subclass redefines keeps its place), then its own; `ClassVar`s and
    `field(init=False)` are no parameters. Each with its default and its class."""
    out: dict[str, tuple[ast.expr | None, ClassDef]] = {}
    for base in reversed(base_classes(an, cd)):
        if is_dataclass(base):
            for name, default, owner in dataclass_fields(an, base):
                out[name] = (default, owner)
    for name, default in own_fields(cd.node):
        out[name] = (default, cd)
    return [(name, default, owner) for name, (default, owner) in out.items()]


def own_fields(node: ast.ClassDef) -> list[tuple[str, ast.expr | None]]:
    """The fields the class's own body declares, with their defaults: read off the
    tree once and kept on it (a config is built at every call of what builds it,
    and each annotation was unparsed again each time)."""
    known = node.__dict__.get(_OWN_FIELDS)
    if known is None:
        known = [
            (stmt.target.id, stmt.value)
            for stmt in node.body
            if isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and "ClassVar" not in ast.unparse(stmt.annotation)
            and not _init_false(stmt.value)
        ]
        setattr(node, _OWN_FIELDS, known)
    return known


_OWN_FIELDS = "_shapelint_own_fields"


def _init_false(node: ast.expr | None) -> bool:
    return (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", "")) == "field"
        and any(
            kw.arg == "init" and isinstance(kw.value, ast.Constant) and kw.value.value is False
            for kw in node.keywords
        )
    )


def rejected_call(an: Analyzer, cd: ClassDef, n_args: int, names: list[str]) -> str | None:
    """Why Python would refuse `cd(<n_args positional>, name=...)` (an unknown
    keyword, too many positional arguments, a required one missing), naming what
    the constructor takes; None when it would accept the call or the analysis
    cannot tell (a constructor it does not see, `**kwargs`)."""
    if is_dataclass(cd):
        fields = dataclass_fields(an, cd)
        params = [name for name, _, _ in fields]
        required = [name for name, default, _ in fields if default is None]
        open_kw = open_pos = False
        what = "fields"
    else:
        init = find_method(an, cd, "__init__")
        if init is None:
            return None
        a = init.node.args
        positional = [p.arg for p in [*a.posonlyargs, *a.args]][1:]
        n_req = len(positional) - len(a.defaults)
        params = positional + [p.arg for p in a.kwonlyargs]
        required = positional[:n_req] + [
            p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is None
        ]
        open_kw, open_pos = a.kwarg is not None, a.vararg is not None
        what = "parameters"
    taken = f"({what}: {', '.join(params) or 'none'})"
    if n_args > len(params) and not open_pos:
        return f"{cd.name}() takes {len(params)} positional arguments but {n_args} were given"
    for name in names:
        if name not in params and not open_kw:
            near = difflib.get_close_matches(name, params, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            return f"{cd.name}() got an unexpected keyword argument {name!r}{hint} {taken}"
    given = set(params[:n_args]) | set(names)
    missing = [name for name in required if name not in given]
    if missing:
        return f"{cd.name}() missing required argument {missing[0]!r} {taken}"
    return None


def default_value(an: Analyzer, node: ast.expr, frame) -> Value:
    """`field(default=...)`, or what `field(default_factory=f)` gives: f called with
    no argument for each instance, as dataclasses' `__init__` does (`dict` an empty
    dict of its own)."""
    if (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", "")) == "field"
    ):
        for kw in node.keywords:
            if kw.arg == "default":
                return an.eval(kw.value, frame)
            if kw.arg == "default_factory":
                made = ast.copy_location(ast.Call(kw.value, [], []), kw.value)
                return an.eval(ast.fix_missing_locations(made), frame)
        return UNKNOWN
    return an.eval(node, frame)
