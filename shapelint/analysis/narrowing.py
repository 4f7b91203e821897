"""What an undecided test says of an optional value (OptionalV: None, or what a caller
gives) in the branch its truth runs: `x is not None`, `x`, `exists(x)` (a function of
the module whose body is `return param is not None`) and an `and` of them make x the
value it holds when given there, as a type checker narrows `Optional[int]` to int.
Outside the branch x is optional again, unless the branch bound it anew.

Such an `exists(v)` is, at a value of a known kind, the truth of `v is not None`
(`none_test`): `exists(self.mlp)` with mlp a layer is true, as `self.mlp is not None`
is, where the function's summary, made for any argument, knows neither."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from shapelint.ops.values import UNKNOWN, BoolV, NoneV, OptionalV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer


def given(an: Analyzer, test: ast.expr, frame) -> dict[str, tuple[OptionalV, Value]]:
    """Per name the test's truth narrows: (its optional value, the value given)."""
    out: dict[str, tuple[OptionalV, Value]] = {}
    for node in (
        test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    ):
        name = _tested(an, node, frame)
        v = frame.env.get(name) if name is not None else None
        if isinstance(v, OptionalV):
            out[name] = (v, v.value)  # type: ignore[index]
    return out


@contextmanager
def narrowed(frame, names: dict[str, tuple[OptionalV, Value]]) -> Iterator[None]:
    """The names bound to their given values while the branch runs."""
    for name, (_, inner) in names.items():
        frame.env[name] = inner
    try:
        yield
    finally:
        unnarrow(frame.env, names)


def unnarrow(env: dict, names: dict[str, tuple[OptionalV, Value]]) -> None:
    """Optional again where the branch left the given value bound (not bound anew)."""
    for name, (maybe, inner) in names.items():
        if env.get(name) is inner:
            env[name] = maybe


def rejoined(values: list, names: dict[str, tuple[OptionalV, Value]]) -> None:
    """What the branch gave back of a narrowed value (`if exists(val): return val`,
    `val if exists(val) else d`) stands as the optional value again, so that joined
    with the other path's int it is the size the parameter names (folding.given_or)."""
    for i, v in enumerate(values):
        for maybe, inner in names.values():
            if v is inner:
                values[i] = maybe


def _tested(an: Analyzer, node: ast.expr, frame) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.IsNot)
        and isinstance(node.left, ast.Name)
        and _is_none(node.comparators[0])
    ):
        return node.left.id
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id not in frame.env
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Name)
    ):
        fd = an.functions.get(node.func.id)
        if fd is not None and _is_not_none_test(fd.node):
            return node.args[0].id
    return None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_not_none_test(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`def exists(val): return val is not None`."""
    a = fn.args
    params = [p.arg for p in [*a.posonlyargs, *a.args]]
    if len(params) != 1 or len(fn.body) != 1 or fn.decorator_list:
        return False
    ret = fn.body[0]
    return (
        isinstance(ret, ast.Return)
        and isinstance(ret.value, ast.Compare)
        and len(ret.value.ops) == 1
        and isinstance(ret.value.ops[0], ast.IsNot)
        and isinstance(ret.value.left, ast.Name)
        and ret.value.left.id == params[0]
        and _is_none(ret.value.comparators[0])
    )


def none_test(fd, args, kwargs) -> BoolV | None:
    """The call `exists(v)` of fd, a function whose body is `return param is not
    None`: True where v surely holds something (a layer, a tensor, a number), False
    where it is None; None where v may be either (an optional value, unknown)."""
    if kwargs or len(args) != 1 or not _is_not_none_test(fd.node):
        return None
    v = args[0]
    if v is UNKNOWN or isinstance(v, OptionalV):
        return None
    return BoolV(not isinstance(v, NoneV))
