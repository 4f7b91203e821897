"""A property whose getter raises AttributeError, read on an nn.Module.

Python's attribute lookup calls `type(obj).__getattr__(obj, name)` when the
lookup through the type raises AttributeError, a property's getter included.
nn.Module defines `__getattr__` as a lookup among the module's registered
Parameters, buffers and submodules, and raises AttributeError for any other name
(an attribute in `__dict__` is not among them). So a getter that reads an
attribute not yet set (snntorch's `beta` property computes from `self.tau`, which
`__init__` registers after reading `self.beta`) gives the buffer `beta` a base
registered, not an exception."""

from __future__ import annotations

from shapelint.analysis.attributes import find_method, module_class
from shapelint.analysis.module_kinds import is_module
from shapelint.analysis.recorder import SelfRecorder
from shapelint.ops.values import UNKNOWN, BufferV, ObjectV, ParameterV, Value

EXC = "AttributeError"


def fallback(an, cd, recv, name: str) -> Value | None:
    """What nn.Module's `__getattr__` gives for name on recv (UNKNOWN where the
    attribute held is not known to be registered or not); None where it raises
    AttributeError too (nothing of that name is held), or the class is no
    nn.Module with torch's `__getattr__`."""
    if module_class(an, cd) is not True or find_method(an, cd, "__getattr__") is not None:
        return None
    if isinstance(recv, SelfRecorder):
        held = recv.attrs.get(name)
    elif isinstance(recv, ObjectV):
        found = [v for k, v in recv.attrs if k == name]
        held = found[0] if found else None
    else:
        return None
    if held is None:
        return None  # nothing registered by that name: __getattr__ raises
    if isinstance(held, (ParameterV, BufferV, SelfRecorder)) or is_module(held):
        return held
    return UNKNOWN  # in `__dict__` (never found there) or registered: not known
