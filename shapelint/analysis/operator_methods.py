"""A binary operator on an instance of a project class that defines it.

`a + b` is `type(a).__add__(a, b)`; where a has none, or it returns
NotImplemented (a tensor's, or an int's, given an object it does not know), it is
`type(b).__radd__(b, a)`; `a += b` is `type(a).__iadd__(a, b)` first, bound to a's
name, and falls back to `a = a + b` where the class has none. The analysis held
such an operation as a value not known, or as a tensor's op with an operand of
no size (`x + Shift(lin)` cost nothing where `Shift.__radd__` runs a Linear): in a
target run the method runs as written. Which one runs is decided by the classes
alone, where Python's rules leave one choice; otherwise (two project classes, a
method that may return NotImplemented) the operation is a call not known.
"""

from __future__ import annotations

import ast

from shapelint.ops.values import ObjectV, Value

# (method, reflected, in place) for each operator
METHODS = {
    ast.Add: ("__add__", "__radd__", "__iadd__"),
    ast.Sub: ("__sub__", "__rsub__", "__isub__"),
    ast.Mult: ("__mul__", "__rmul__", "__imul__"),
    ast.MatMult: ("__matmul__", "__rmatmul__", "__imatmul__"),
    ast.Div: ("__truediv__", "__rtruediv__", "__itruediv__"),
    ast.FloorDiv: ("__floordiv__", "__rfloordiv__", "__ifloordiv__"),
    ast.Mod: ("__mod__", "__rmod__", "__imod__"),
    ast.Pow: ("__pow__", "__rpow__", "__ipow__"),
    ast.BitAnd: ("__and__", "__rand__", "__iand__"),
    ast.BitOr: ("__or__", "__ror__", "__ior__"),
    ast.BitXor: ("__xor__", "__rxor__", "__ixor__"),
    ast.LShift: ("__lshift__", "__rlshift__", "__ilshift__"),
    ast.RShift: ("__rshift__", "__rrshift__", "__irshift__"),
}

_INSTANCE = "<class>"


def _class_key(v: Value) -> str | None:
    if type(v) is ObjectV and v.kind.startswith(_INSTANCE):
        return v.kind[len(_INSTANCE) :]
    return None


def run(
    an, op: ast.operator, left: Value, right: Value, node, frame, lnode, rnode, in_place=False
) -> Value | None:
    """What `left op right` (in_place: `left op= right`) gives where an operand is
    an instance of a project class that defines the operator's method (None where
    neither is: the caller's rules apply). A target run only."""
    names = METHODS.get(type(op))
    lkey, rkey = _class_key(left), _class_key(right)
    if names is None or (lkey is None and rkey is None) or not an.specialize:
        return None
    method, reflected, inplace = names
    lmethods = an.class_methods(lkey) if lkey is not None else {}
    rmethods = an.class_methods(rkey) if rkey is not None else {}
    if in_place and inplace in lmethods:
        return _call(an, left, inplace, right, node, lnode, rnode, frame)
    if lkey is not None and rkey is not None and lkey != rkey:
        if method in lmethods or reflected in rmethods:
            # a subclass's reflected method first, a NotImplemented handed on: not decided here
            return _not_known(an, node, frame, f"{method} of two classes")
        return None
    if method in lmethods:
        return _call(an, left, method, right, node, lnode, rnode, frame)
    if reflected in rmethods and lkey != rkey:
        return _call(an, right, reflected, left, node, rnode, lnode, frame)
    return None


def _call(an, recv: ObjectV, name: str, other: Value, node, on, arg, frame) -> Value:
    """recv.name(other), written at node (on: recv's expression, arg: other's)."""
    fd = an.class_methods(_class_key(recv)).get(name)
    if fd is not None and _may_hand_on(fd.node):
        return _not_known(an, node, frame, f"{name} may return NotImplemented")
    call = ast.copy_location(ast.Call(ast.Attribute(on, name, ast.Load()), [arg], []), node)
    return an.call_method(recv, name, call, [other], {}, frame)


def _may_hand_on(fn) -> bool:
    """The method names NotImplemented: Python then tries the other operand's."""
    return any(isinstance(n, ast.Name) and n.id == "NotImplemented" for n in ast.walk(fn))


def _not_known(an, node, frame, why: str) -> Value:
    call = ast.copy_location(ast.Call(ast.Name("operator", ast.Load()), [], []), node)
    return an.unknown_call(call, [], {}, frame, why)
