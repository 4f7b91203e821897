"""Attributes of an instance whose class defines `__getattribute__` or `__setattr__`.

Python runs `type(obj).__getattribute__(obj, name)` for every attribute read, so a
class that defines it (an alias table: `attribute_map = {"hidden_size": "n_embd"}`)
decides what each name reads. A target run does the same: the class's own
`__getattribute__` runs on the instance with the name, and its
`super().__getattribute__(key)` (or `object.__getattribute__(self, key)`) is the
plain lookup: the instance's own attribute, a property's getter, a class
attribute, or AttributeError where the instance surely lacks it (absence.py).
`getattr(obj, name, default)` takes the default, and `hasattr` is False, when the
run surely raised AttributeError and the class has no `__getattr__` to answer.
A store into the instance being built (`self.name = v`, `setattr`) runs the
class's own `__setattr__` the same way, whose `super().__setattr__(key, v)` is
object's store: a property's setter, else the instance's attribute.

An instance the analysis has built is a value that does not change: one read per
instance and name is run once in a target run and kept (`reset` starts a run),
until a write the run could not apply (absence.py) may have changed what it finds.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import absence, dataclass_runtime, dynamic, may_raise, raising
from shapelint.analysis.attributes import find_method
from shapelint.analysis.construction import property_set
from shapelint.analysis.modules import SelfRecorder
from shapelint.analysis.specialized import run_body
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import UNKNOWN, NoneV, ObjectV, StrV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, Frame

ABSENT = object()  # the read surely raised AttributeError
_PREFIXES = ("<class>", absence.CONFIG_PREFIX)
_OBJ = "<getattribute>"  # the instance a plain lookup reads, a name no code can use
# (id of the instance, name) -> (the instance, kept so that its id stays its own; the read;
# whether its run may have raised: may_raise.py)
_MEMO: dict[tuple[int, str, int], tuple[Value, object, bool]] = {}
_FLIGHT: set[tuple[int, str, int]] = set()  # reads under way (a getter reading itself)
_PLAIN: set[tuple[int, str]] = set()  # plain lookups under way: no hook for them
# The last read of an instance being built that surely raised AttributeError: its
# key, the instance, and what the instance held then (its names and values), so
# that `absent` answers for it only while nothing was stored into it since.
_BUILDING_ABSENT: list = []


def reset() -> None:
    _MEMO.clear()
    _BUILDING_ABSENT.clear()
    _PLAIN.clear()
    _FLIGHT.clear()


def _hook(an: Analyzer, obj: Value, name: str):
    if isinstance(obj, SelfRecorder):
        cd = an.class_of(obj.cls)
    elif isinstance(obj, ObjectV) and obj.kind.startswith(_PREFIXES):
        cd = an.class_of(obj.kind.partition(">")[2])
    else:
        return None
    return find_method(an, cd, name) if cd is not None else None


def hooked(an: Analyzer, obj: Value) -> bool:
    """Whether obj's class defines `__getattribute__`."""
    return _hook(an, obj, "__getattribute__") is not None


def read(an: Analyzer, obj: Value, node: ast.Attribute, frame: Frame):
    """`obj.name` through obj's class's `__getattribute__`: its value, ABSENT, or
    None where the class defines none (or the read is the hook's own plain lookup)."""
    name = node.attr
    # What the hook finds may change with a write the run could not apply.
    key = (id(obj), name, absence.unapplied_count())
    if key[:2] in _PLAIN or key in _FLIGHT:
        return None
    building = isinstance(obj, SelfRecorder)  # an instance still changing: no memo
    if key in _MEMO and not building:
        if _MEMO[key][2]:
            may_raise.mark()  # the hook's first run may have raised: so may this read
        return _MEMO[key][1]
    fd = _hook(an, obj, "__getattribute__")
    if fd is None:
        return None
    cls = fd.cls.name if fd.cls is not None else ""
    if dynamic.not_modelled(an, fd, [cls], decorators=False, special=True) is not None:
        return None
    start = may_raise.count()
    _FLIGHT.add(key)
    try:
        value, exc, free = run_hook(an, fd, obj, [StrV(name)])
    finally:
        _FLIGHT.discard(key)
    got: object = value
    if exc == "AttributeError" and _hook(an, obj, "__getattr__") is None:
        got = ABSENT
    elif exc is not None or not free:
        got = UNKNOWN  # an exception of another kind, or work done: not this model's
    if building:
        # as below: writes the hook's run left unapplied leave its finding standing
        # where none of them may have given the instance that name
        after = (id(obj), name, absence.unapplied_count())
        kept = got is ABSENT and (after == key or not absence.may_be_written(name))
        _BUILDING_ABSENT[:] = [after, obj, _held(obj)] if kept else []
    else:
        _MEMO[key] = (obj, got, may_raise.count() != start)
        # The hook's own run may leave writes unapplied (a note kept on an object the
        # run does not know): what it found holds after them too, as long as none of
        # them may have given the instance that name.
        after = (id(obj), name, absence.unapplied_count())
        if after != key and not absence.may_be_written(name):
            _MEMO[after] = _MEMO[key]
    return got


def run_hook(an: Analyzer, fd, obj: Value, args: list) -> tuple[Value, str | None, bool]:
    """(value, the exception its run surely raised, whether it did no work a flop
    counter sees) of the attribute hook fd run on obj with args, the caller's
    pending exception kept apart from the hook's own."""
    pending = raising.take()
    try:
        value, records = run_body(fd.owner or an, fd, obj, args, {})
        exc = raising.take()
    finally:
        if pending is not None:
            raising.pending(pending)
    exc = raising.of_records(records) or exc
    return value, exc, all(_free(r) for r in _records(records))


def _free(r) -> bool:
    return r.op == raising.OP or (r.cost.complete and r.cost.flops == Expr.const(0))


def _records(records: list) -> list:
    out, todo = [], list(records)
    while todo:
        r = todo.pop()
        out.append(r)
        todo.extend(r.children)
    return out


def _held(obj: SelfRecorder) -> list:
    return list(obj.attrs.items())


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(k == j and v is w for (k, v), (j, w) in zip(a, b))


def absent(obj: Value, name: str) -> bool:
    """Whether the read of obj.name this run made surely raised AttributeError (of
    an instance being built: its last read, with nothing stored into it since)."""
    key = (id(obj), name, absence.unapplied_count())
    if isinstance(obj, SelfRecorder):
        last = _BUILDING_ABSENT
        return bool(last) and last[0] == key and last[1] is obj and _same(last[2], _held(obj))
    got = _MEMO.get(key)
    return got is not None and got[1] is ABSENT


def plain_read(an: Analyzer, obj: Value, name: str, node: ast.expr, frame: Frame) -> Value:
    """`object.__getattribute__(obj, name)`: what the read finds without the
    class's hook; AttributeError (pending, as a callee's raise is) where obj surely
    lacks it."""
    if not isinstance(obj, (ObjectV, SelfRecorder)):
        return UNKNOWN
    if name == "__dict__":
        if isinstance(obj, SelfRecorder):  # the dataclass being built: what it holds so far
            held = dataclass_runtime.recorder_dict(an, obj)
            return UNKNOWN if held is None else held
        return absence.instance_dict(obj)
    key = (id(obj), name)
    inner = an.new_frame(frame.func, frame.name)
    inner.env = {**frame.env, _OBJ: obj}
    inner.locals = set(frame.locals) | {_OBJ}
    inner.local_imports = frame.local_imports
    inner.records = frame.records
    read_node = ast.copy_location(
        ast.Attribute(ast.copy_location(ast.Name(_OBJ, ast.Load()), node), name, ast.Load()),
        node,
    )
    _PLAIN.add(key)
    try:
        value = an.eval(read_node, inner)
    finally:
        _PLAIN.discard(key)
    if value is UNKNOWN and absence.surely_lacks(an, obj, name, hooked=True):
        raising.pending("AttributeError")
    return value


def store(an: Analyzer, obj: SelfRecorder, name: str, value: Value) -> bool:
    """`obj.name = value` (or setattr) on the instance being built, whose class
    defines `__setattr__`: that method runs with the name and value, and its
    `super().__setattr__(key, value)` stores (plain_store). False where the class
    defines none: the caller stores as object's `__setattr__` does."""
    cd = an.class_of(obj.cls)
    fd = find_method(an, cd, "__setattr__") if cd is not None else None
    key = (id(obj), name, -1)
    if fd is None or key in _FLIGHT:
        return False
    _FLIGHT.add(key)
    try:
        _, records = run_body(fd.owner or an, fd, obj, [StrV(name), value], {})
    finally:
        _FLIGHT.discard(key)
    exc = raising.of_records(records)
    if exc is not None:
        raising.pending(exc)
    return True


def plain_store(an: Analyzer, obj: Value, name: str, value: Value, node: ast.expr) -> Value:
    """`object.__setattr__(obj, name, value)` on the instance being built: a
    property's setter, else the instance's own attribute."""
    if isinstance(obj, SelfRecorder):
        target = ast.copy_location(
            ast.Attribute(ast.Name("self", ast.Load()), name, ast.Store()), node
        )
        if not property_set(an, obj, target, value, None):
            obj.attrs[name] = value
    return NoneV()
