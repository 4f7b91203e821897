"""`class Options(TypedDict): alpha: bool` (typing's or typing_extensions'): calling
the class builds a plain dict of what it is given, as `dict(...)` does (TypedDict's
metaclass makes the class's call dict's; the annotated keys are not checked at run
time, and the result is no instance of the class). A class whose bases are all such
classes is one too. A TypedDict over `Generic[T]` is not modelled."""

from __future__ import annotations

import ast

from shapelint.analysis.attributes import base_classes

TYPED_DICT = frozenset({"typing.TypedDict", "typing_extensions.TypedDict"})


def is_typed_dict(an, cd, depth: int = 0) -> bool:
    """Whether calling the project class cd builds a plain dict: each of its bases
    is TypedDict or a project class that is one."""
    owner = cd.owner or an
    bases = cd.node.bases
    if not bases or depth > 20:
        return False
    named = sum(
        isinstance(b, (ast.Name, ast.Attribute)) and owner.imports.resolve(b) in TYPED_DICT
        for b in bases
    )
    project = base_classes(an, cd)
    if named + len(project) != len(bases):
        return False
    return all(is_typed_dict(an, p, depth + 1) for p in project)
