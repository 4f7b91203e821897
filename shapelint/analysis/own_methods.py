"""A method of the instance being built, read off it in a target run's construction
(`self.state_function = self._base_sub`).

Python binds `self._base_sub` to the instance; stored into that very instance it stays
bound to it, and `self.state_function(x)` in forward runs `_base_sub` on the module.
The value is an `OwnMethodV`: while it is read off the instance being built, bound to
that instance (`holder`, held weakly: the instance's own attributes may hold the value,
and a strong reference back would be a reference cycle per construction); stored into
that instance, bound to whichever instance holds it (`holder` None), which a read
through the built instance binds to it, as `copy.deepcopy` binds a method to the copy
of its `__self__`. Called anywhere but in a method run on its holder while it is
built, it is not followed: a holder that construction left behind is stale.
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shapelint.analysis.attributes import find_method
from shapelint.ops.values import Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef, FuncDef


@dataclass(frozen=True)
class OwnMethodV(Value):
    qualname: str
    fd: FuncDef = field(compare=False, repr=False)
    holder: weakref.ref | None = field(default=None, compare=False, repr=False)


def read(an: Analyzer, cd: ClassDef, recorder: object, name: str) -> OwnMethodV | None:
    """`self.name` where name is a plain method of cd (or of a base) and self the
    instance being built; None where cd has none, or where a decorator (static or
    class method, a property, any other) makes it something else."""
    fd = find_method(an, cd, name)
    if fd is None or not isinstance(fd.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if fd.node.decorator_list:
        return None
    return OwnMethodV(fd.qualname, fd, weakref.ref(recorder))


def stored(recorder: object, value: Value) -> Value:
    """What `recorder.attr = value` keeps: a method of recorder itself, bound to the
    instance that holds it."""
    if isinstance(value, OwnMethodV) and value.holder is not None and value.holder() is recorder:
        return OwnMethodV(value.qualname, value.fd)
    return value


def read_back(recorder: object, value: Value) -> Value:
    """`recorder.attr` where attr holds value: a method it holds, bound to it."""
    if isinstance(value, OwnMethodV) and value.holder is None:
        return OwnMethodV(value.qualname, value.fd, weakref.ref(recorder))
    return value


def callable_on(value: OwnMethodV, self_value: object) -> bool:
    """Whether calling value runs its method on self_value, the instance being built
    that the calling frame runs on."""
    return value.holder is not None and value.holder() is self_value
