"""jaxtyping's run-time shape check on concrete sizes, copied token for token: the
oracle tests/test_dimspec.py holds jaxtyping itself to, and shapelint's parser to.
Test-only (the package never checks concrete sizes this way)."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Sequence
from dataclasses import dataclass, field

from shapelint.notation.dimspec import (
    ANONYMOUS,
    ANONYMOUS_VARIADIC,
    FIXED,
    SYMBOLIC,
    DimElem,
    DimSpec,
)

MAX_POW = 64  # as dimspec's parse_size_expr


class _Unsupported(Exception):
    pass


# -- the run-time check, on concrete sizes ----------------------------------------------

PASS = "pass"
FAIL = "fail"
RAISES = "raises"  # jaxtyping raises an AnnotationError (a symbolic axis names an unbound dim)
UNKNOWN = "unknown"  # a symbolic axis shapelint does not evaluate


@dataclass
class ShapeMemo:
    """What jaxtyping remembers within one ``jaxtyped`` call."""

    single: dict[str, int] = field(default_factory=dict)
    variadic: dict[str, tuple[bool, tuple[int, ...]]] = field(default_factory=dict)

    def copy(self) -> ShapeMemo:
        return ShapeMemo(dict(self.single), dict(self.variadic))


def check_shape(spec: DimSpec, shape: Sequence[int], memo: ShapeMemo) -> tuple[str, str]:
    """(verdict, reason) for a tensor of this shape against spec, updating memo.

    Mirrors jaxtyping's order (prefix, suffix, then the variadic part) so that
    names bind in the same order; on FAIL the memo is left as it was.
    """
    saved = memo.copy()
    verdict, why = _check_shape(spec, tuple(shape), memo)
    if verdict != PASS:
        memo.single, memo.variadic = saved.single, saved.variadic
    return verdict, why


def _check_shape(spec: DimSpec, shape: tuple[int, ...], memo: ShapeMemo) -> tuple[str, str]:
    dims = spec.dims
    if spec.index_variadic is None:
        if len(shape) != len(dims):
            return FAIL, f"has {len(shape)} dimensions, not {len(dims)}"
        return _check_dims(dims, shape, memo)
    if len(shape) < len(dims) - 1:
        return FAIL, f"has {len(shape)} dimensions, fewer than {len(dims) - 1}"
    i = spec.index_variadic
    n_suffix = len(dims) - i - 1
    j = len(shape) - n_suffix
    verdict, why = _check_dims(dims[:i], shape[:i], memo)
    if verdict != PASS:
        return verdict, why
    if n_suffix:
        verdict, why = _check_dims(dims[i + 1 :], shape[j:], memo)
        if verdict != PASS:
            return verdict, why
    var = dims[i]
    if var.kind == ANONYMOUS_VARIADIC:
        return PASS, ""
    return _check_variadic(var, shape[i:j], memo)


def _check_dims(dims: Sequence[DimElem], shape: Sequence[int], memo: ShapeMemo) -> tuple[str, str]:
    for d, size in zip(dims, shape, strict=True):
        if d.kind == ANONYMOUS:
            continue
        if d.broadcastable and size == 1:
            continue
        if d.kind == FIXED:
            if d.size != size:
                return FAIL, f"size {size} is not {d.size}"
        elif d.kind == SYMBOLIC:
            verdict, value = _eval_symbolic(d.expr, memo.single)
            if verdict != PASS:
                return verdict, f"cannot evaluate {d.expr!r}"
            if value != size:
                return FAIL, f"size {size} is not {d.expr}={value}"
        else:
            have = memo.single.get(d.name)
            if have is None:
                memo.single[d.name] = size
            elif have != size:
                return FAIL, f"size of {d.name} is {size}, not the earlier {have}"
    return PASS, ""


def _check_variadic(var: DimElem, new: tuple[int, ...], memo: ShapeMemo) -> tuple[str, str]:
    prev = memo.variadic.get(var.name)
    if prev is None:
        memo.variadic[var.name] = (var.broadcastable, new)
        return PASS, ""
    prev_broadcastable, old = prev
    if prev_broadcastable or var.broadcastable:
        both = broadcast_sizes(new, old)
        if both is None:
            return FAIL, f"*{var.name} {new} does not broadcast with {old}"
        if prev_broadcastable:
            if not var.broadcastable and both != new:
                return FAIL, f"*{var.name} {old} does not broadcast to {new}"
            memo.variadic[var.name] = (var.broadcastable, both)
        elif both != old:
            return FAIL, f"*{var.name} {new} does not broadcast to {old}"
        return PASS, ""
    if new != old:
        return FAIL, f"*{var.name} is {new}, not the earlier {old}"
    return PASS, ""


def broadcast_sizes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """numpy.broadcast_shapes on concrete sizes; None when they do not broadcast."""
    out: list[int] = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(reversed(out))


def _eval_symbolic(text: str, single: dict[str, int]) -> tuple[str, object]:
    """Evaluate a symbolic axis the way jaxtyping's ``eval`` would, on a safe subset."""
    if any(c in text for c in "{}'\"\\"):
        return UNKNOWN, None  # jaxtyping first formats it as an f-string over the arguments
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError):
        return UNKNOWN, None
    try:
        return PASS, _eval_node(tree.body, single)
    except _Unbound:
        return RAISES, None
    except (_Unsupported, ArithmeticError, TypeError, ValueError):
        return UNKNOWN, None


class _Unbound(Exception):
    pass


def _eval_node(node: ast.AST, env: dict[str, int]) -> object:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        if hasattr(builtins, node.id):
            raise _Unsupported  # eval would find the builtin object itself
        raise _Unbound
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval_node(node.operand, env)
        return -v if isinstance(node.op, ast.USub) else +v  # type: ignore[operator]
    if isinstance(node, ast.BinOp):
        a, b = _eval_node(node.left, env), _eval_node(node.right, env)
        op = node.op
        if isinstance(op, ast.Add):
            return a + b  # type: ignore[operator]
        if isinstance(op, ast.Sub):
            return a - b  # type: ignore[operator]
        if isinstance(op, ast.Mult):
            return a * b  # type: ignore[operator]
        if isinstance(op, ast.FloorDiv):
            return a // b  # type: ignore[operator]
        if isinstance(op, ast.Div):
            return a / b  # type: ignore[operator]
        if isinstance(op, ast.Mod):
            return a % b  # type: ignore[operator]
        if isinstance(op, ast.Pow):
            if not isinstance(b, int) or abs(b) > MAX_POW:
                raise _Unsupported
            return a**b  # type: ignore[operator]
    raise _Unsupported
