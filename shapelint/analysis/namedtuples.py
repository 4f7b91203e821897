"""`collections.namedtuple("Return", ["quantized", "indices", "loss"])`: a class
whose call builds a tuple of its fields, in order, positionally or by name, and
whose instances read a field by its name (`ret.indices`), as Python's does. Field
names given as a list or tuple of strings, or one string split at commas and
spaces; `defaults=` fills the last fields. A class over `typing.NamedTuple` whose
body is annotated fields (defaults on the last ones) and a docstring is the same
class (Python builds it with collections.namedtuple). Anything else is not modelled."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from shapelint.ops.values import UNKNOWN, StrV, TupleV, Value


@dataclass(frozen=True)
class NamedTupleClassV(Value):
    """The class namedtuple made: its name, fields and defaults (for the last ones)."""

    name: str
    fields: tuple[str, ...]
    defaults: tuple[Value, ...] = ()


@dataclass(frozen=True, slots=True)
class NamedTupleV(TupleV):
    """An instance: a tuple whose items also answer to the fields' names."""

    fields: tuple[str, ...] = field(default=(), compare=False)


def made(args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """The class `namedtuple(typename, field_names, defaults=...)` makes; None where
    its name or fields are not known here."""
    if len(args) != 2 or set(kwargs) - {"defaults"}:
        return None
    name, names = args
    if not (isinstance(name, StrV) and name.value):
        return None
    if isinstance(names, StrV) and names.value is not None:
        fields = tuple(names.value.replace(",", " ").split())
    elif isinstance(names, TupleV) and all(isinstance(i, StrV) and i.value for i in names.items):
        fields = tuple(i.value for i in names.items)  # type: ignore[union-attr,misc]
    else:
        return None
    defaults = kwargs.get("defaults")
    if defaults is not None and not (
        isinstance(defaults, TupleV) and len(defaults.items) <= len(fields)
    ):
        return None
    if not all(f.isidentifier() and not f.startswith("_") for f in fields):
        return None  # Python raises (or renames, with rename=True)
    return NamedTupleClassV(name.value, fields, defaults.items if defaults else ())


def of_class(an, cd) -> NamedTupleClassV | None:
    """The namedtuple class `class P(NamedTuple): a: int; b: dict = {}` makes, cd
    its project ClassDef; None where cd is no such class or has more than fields
    (methods, class variables: not modelled)."""
    owner = cd.owner or an
    bases = cd.node.bases
    if len(bases) != 1 or cd.node.keywords or cd.node.decorator_list:
        return None
    if not isinstance(bases[0], (ast.Name, ast.Attribute)):
        return None
    if owner.imports.resolve(bases[0]) != "typing.NamedTuple":
        return None
    fields: list[str] = []
    defaults: list[ast.expr] = []
    for i, stmt in enumerate(cd.node.body):
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            return None
        if "ClassVar" in ast.unparse(stmt.annotation):
            return None  # a class variable, no field
        if stmt.value is None and defaults:
            return None  # TypeError: a field without a default after one with
        fields.append(stmt.target.id)
        if stmt.value is not None:
            defaults.append(stmt.value)
    if not fields or not all(f.isidentifier() and not f.startswith("_") for f in fields):
        return None  # Python raises on a field named with an underscore
    top = owner.new_frame(None, cd.name)
    top.env = owner.module_env
    values = tuple(owner.eval(d, top) for d in defaults)
    return NamedTupleClassV(cd.name, tuple(fields), values)


def built(cls: NamedTupleClassV, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """cls(*args, **kwargs) as Python binds it; None where Python would raise."""
    n = len(cls.fields)
    if len(args) > n or set(kwargs) - set(cls.fields):
        return None
    items: list[Value | None] = [*args, *([None] * (n - len(args)))]
    for k, v in kwargs.items():
        i = cls.fields.index(k)
        if items[i] is not None:
            return None  # given twice
        items[i] = v
    first_default = n - len(cls.defaults)
    for i in range(n):
        if items[i] is None:
            if i < first_default:
                return None  # a field without a value: TypeError
            items[i] = cls.defaults[i - first_default]
    return NamedTupleV(tuple(items), "tuple", fields=cls.fields)  # type: ignore[arg-type]


def field_of(v: Value, name: str) -> Value | None:
    """`ret.indices` of an instance; None where v is none or has no such field."""
    if isinstance(v, NamedTupleV) and name in v.fields and len(v.items) == len(v.fields):
        return v.items[v.fields.index(name)]
    return None if not isinstance(v, NamedTupleV) else UNKNOWN
