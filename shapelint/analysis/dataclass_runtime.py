"""What a dataclass instance tells about itself at run time, as Python answers.

`dataclasses.fields(obj)` (obj an instance of a project dataclass, or the class)
is the tuple of its fields, the bases' first, each a Field whose `name` and
`default` a program reads (transformers' `ModelOutput.__post_init__` walks them,
reads `self.__dict__.get(field.name)`, and enters each value that is not None as a
dict entry). A default the analysis cannot give (`field(default_factory=...)`, no
default: Python's MISSING) is not known. `obj.__dict__` of the dataclass instance
being built is what its construction has set so far (absence.instance_dict says
the same of a built one).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import absence
from shapelint.analysis.absence import CONFIG_PREFIX
from shapelint.analysis.attributes import base_classes, derives_from_module
from shapelint.analysis.callable_values import ClassRefV
from shapelint.analysis.config_classes import is_dataclass
from shapelint.analysis.dict_entries import ITEMS
from shapelint.analysis.modules import SelfRecorder
from shapelint.analysis.plain import PLAIN
from shapelint.ops.values import UNKNOWN, NoneV, ObjectV, StrV, TupleV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef

FIELDS = "dataclasses.fields"
FIELD_KIND = "dataclasses.Field"  # a Field as fields() hands it out
# Annotations that make a class-body name no field (PEP 557)
_NO_FIELD = ("ClassVar", "InitVar", "KW_ONLY")


def fields(an: Analyzer, args: list[Value], kwargs: dict) -> Value | None:
    """`dataclasses.fields(x)`: None where x is no dataclass the analysis reads."""
    if len(args) != 1 or kwargs:
        return None
    cd = _dataclass_of(an, args[0])
    if cd is None:
        return None
    found = _all_fields(an, cd, frozenset())
    if found is None:
        return None
    out = []
    for name, default in found.items():
        out.append(ObjectV(FIELD_KIND, (("name", StrV(name)), ("default", default))))
    return TupleV(tuple(out))


def recorder_dict(an: Analyzer, obj: SelfRecorder) -> Value | None:
    """`self.__dict__` in the methods a dataclass's construction runs (its
    `__post_init__`, its `__setattr__`): what the instance holds so far. None for
    any other instance being built (an nn.Module keeps its layers apart)."""
    cd = an.class_of(obj.cls)
    if cd is None or not is_dataclass(cd) or derives_from_module(an, obj.cls) is True:
        return None
    # a key of the analysis's own but a dict subclass's entries (which no
    # __dict__ holds): a change it could not place (aliasing.ALIASED)
    if any(k.startswith("<") and k not in (ITEMS, PLAIN) for k in obj.attrs):
        return UNKNOWN  # (PLAIN: a None that stays plain, no store unseen)
    held = {k: v for k, v in obj.attrs.items() if not k.startswith("<")}
    return absence.instance_dict(ObjectV(CONFIG_PREFIX + obj.cls, tuple(held.items())))


def _dataclass_of(an: Analyzer, v: Value) -> ClassDef | None:
    if isinstance(v, SelfRecorder):
        key = v.cls
    elif isinstance(v, ObjectV) and v.kind.startswith(CONFIG_PREFIX):
        key = v.kind[len(CONFIG_PREFIX) :]
    elif isinstance(v, ClassRefV):
        key = v.name
    else:
        return None
    cd = an.class_of(key)
    return cd if cd is not None and is_dataclass(cd) else None


def _all_fields(an: Analyzer, cd: ClassDef, seen: frozenset) -> dict[str, Value] | None:
    """Every field of cd in fields()' order (init=False ones too): a base's first,
    a redefined one in its first place with its last default. None where a base
    is neither read nor one that has no fields (a dataclass of a library would)."""
    bases = base_classes(an, cd)
    if len(bases) != len(cd.node.bases) and not _plain_bases(cd.owner or an, cd, bases):
        return None
    out: dict[str, Value] = {}
    for base in reversed(bases):
        if base.key not in seen and is_dataclass(base):
            more = _all_fields(base.owner or an, base, seen | {cd.key})
            if more is None:
                return None
            out.update(more)
    for stmt in cd.node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        if any(word in ast.unparse(stmt.annotation) for word in _NO_FIELD):
            continue
        out[stmt.target.id] = _default(stmt.value)
    return out


# Bases that bring no dataclass fields
_FIELDLESS = frozenset(
    {
        "object",
        "dict",
        "builtins.object",
        "builtins.dict",
        "collections.OrderedDict",
        "typing.OrderedDict",
        "abc.ABC",
        "typing.Generic",
        "typing.Protocol",
    }
)


def _plain_bases(an: Analyzer, cd: ClassDef, read: list) -> bool:
    """Whether every base of cd the analysis did not read is one without fields."""
    names = {b.name for b in read}
    for b in cd.node.bases:
        node = b.value if isinstance(b, ast.Subscript) else b  # Generic[T]
        if isinstance(node, ast.Name) and node.id in names:
            continue
        qual = an.imports.resolve(node) or (node.id if isinstance(node, ast.Name) else None)
        if qual not in _FIELDLESS:
            return False
    return True


def _default(node: ast.expr | None) -> Value:
    """A Field's `default` where the class body writes a literal None; not known
    otherwise (a value the program may compare by identity, MISSING, a factory)."""
    if isinstance(node, ast.Constant) and node.value is None:
        return NoneV()
    return UNKNOWN
