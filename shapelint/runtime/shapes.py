"""Runtime shape checks for `shapelint run`: jaxtyping judges, shapelint explains.

Every function and method the user's module defines is wrapped so that each call
opens its own jaxtyping memo (one name, one size per call) and checks each
annotated argument, the return value and every annotated assignment in its body
(the module is compiled from an instrumented syntax tree that calls the checker
after each ``x: Float[Tensor, "..."] = ...``). The verdict is jaxtyping's
(through beartype's ``is_bearable`` when installed, so nested hints such as
``tuple[Float[...], ...]`` work; plain ``isinstance`` otherwise). When the
verdict is no, a shadow memo kept here says which dimension disagrees and which
earlier value bound it.

Failures are recorded, never raised: the run goes on so that one report can say
everything. Imports jaxtyping and beartype lazily (static mode never loads this
module; runtime mode does, and only after torch).
"""

from __future__ import annotations

import ast
import functools
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shapelint import pyparse

CHECK_NAME = "__shapelint_check__"

_UNKNOWN = None  # a structural check that cannot tell


# ---------------------------------------------------------------------- dimension specs


@dataclass(frozen=True)
class SpecDim:
    """One whitespace-separated token of a jaxtyping dimension string."""

    kind: str  # "fixed" | "named" | "expr" | "anon" | "variadic" | "anon_variadic"
    text: str  # the token as written
    name: str = ""  # named / variadic: the name; expr: the expression
    size: int = 0  # fixed: the size
    broadcast: bool = False


def parse_spec(spec: str) -> list[SpecDim]:
    """jaxtyping's dimension grammar, enough to explain a failed check."""
    out = []
    for tok in spec.split():
        body = tok
        broadcast = variadic = False
        while body[:1] in ("#", "*", "?"):
            broadcast |= body[0] == "#"
            variadic |= body[0] == "*"
            body = body[1:]
        if "=" in body:  # "name=expr" documents the expression; jaxtyping checks the expression
            body = body.split("=", 1)[1]
        if body == "...":
            out.append(SpecDim("anon_variadic", tok, broadcast=broadcast))
        elif variadic:
            kind = "anon_variadic" if body.startswith("_") else "variadic"
            out.append(SpecDim(kind, tok, body, broadcast=broadcast))
        elif body.isdigit():
            out.append(SpecDim("fixed", tok, size=int(body), broadcast=broadcast))
        elif body.startswith("_"):
            out.append(SpecDim("anon", tok, broadcast=broadcast))
        elif body.isidentifier():
            out.append(SpecDim("named", tok, body, broadcast=broadcast))
        else:
            out.append(SpecDim("expr", tok, body, broadcast=broadcast))
    return out


@dataclass
class Memo:
    """What a call has bound so far: name -> (size, who bound it)."""

    single: dict[str, tuple[int, str]] = field(default_factory=dict)
    # name -> (axes, who bound them, bound by a broadcastable '#*name')
    variadic: dict[str, tuple[tuple[int, ...], str, bool]] = field(default_factory=dict)


def _eval_expr(text: str, memo: Memo) -> int | None:
    from shapelint.notation.symbolic import parse_expr

    try:
        return parse_expr(text).evaluate({k: v for k, (v, _) in memo.single.items()})
    except (KeyError, ValueError, ZeroDivisionError, SyntaxError):
        return None


def explain_shape(
    spec: str, shape: tuple[int, ...], memo: Memo
) -> tuple[list[str], dict[str, int], dict[str, tuple[tuple[int, ...], bool]]]:
    """Why ``shape`` fails ``spec`` under ``memo``, one message per dimension; and,
    when it does not fail, the names it would bind."""
    dims = parse_spec(spec)
    var_at = [i for i, d in enumerate(dims) if d.kind in ("variadic", "anon_variadic")]
    fixed = len(dims) - len(var_at)
    if not var_at and len(shape) != len(dims):
        return [f"rank {len(shape)} but '{spec}' has {len(dims)} dimensions"], {}, {}
    if var_at and len(shape) < fixed:
        return [f"rank {len(shape)} but '{spec}' needs at least {fixed} dimensions"], {}, {}
    pairs: list[tuple[int, SpecDim, int]] = []
    var_part: tuple[SpecDim, int, tuple[int, ...]] | None = None
    if var_at:
        v = var_at[0]
        n_after = len(dims) - v - 1
        pairs += [(i, dims[i], shape[i]) for i in range(v)]
        var_part = (dims[v], v, tuple(shape[v : len(shape) - n_after]))
        pairs += [
            (len(shape) - n_after + j, dims[v + 1 + j], shape[len(shape) - n_after + j])
            for j in range(n_after)
        ]
    else:
        pairs = [(i, d, s) for i, (d, s) in enumerate(zip(dims, shape, strict=False))]
    problems: list[str] = []
    new_single: dict[str, int] = {}
    new_var: dict[str, tuple[tuple[int, ...], bool]] = {}
    for i, d, size in pairs:
        if d.broadcast and size == 1:
            continue
        if d.kind == "fixed" and size != d.size:
            problems.append(f"axis {i} is {size} but '{spec}' fixes it to {d.size}")
        elif d.kind == "named":
            bound = memo.single.get(d.name)
            if bound is None and d.name in new_single:
                bound = (new_single[d.name], "an earlier axis of the same value")
            if bound is None:
                new_single[d.name] = size
            elif bound[0] != size:
                problems.append(
                    f"axis {i} ('{d.name}') is {size} but {d.name}={bound[0]} from {bound[1]}"
                )
        elif d.kind == "expr":
            want = _eval_expr(d.name, memo)
            if want is not None and want != size:
                problems.append(f"axis {i} ('{d.name}') is {size} but {d.name} = {want}")
    if var_part is not None:
        d, start, sizes = var_part
        if d.kind == "variadic":
            bound_v = memo.variadic.get(d.name)
            if bound_v is None:
                new_var[d.name] = (sizes, d.broadcast)
            else:
                merged = _merge_variadic(bound_v[0], bound_v[2], sizes, d.broadcast)
                if merged is None:
                    end = start + len(sizes) - 1
                    axes = f"axes {start}..{end}" if sizes else f"no axes at {start}"
                    problems.append(
                        f"{axes} ('*{d.name}') are {list(sizes)} but "
                        f"*{d.name}={list(bound_v[0])} from {bound_v[1]}"
                    )
                else:  # a broadcastable memo takes the new flag (jaxtyping does the same)
                    new_var[d.name] = (merged, d.broadcast if bound_v[2] else False)
    return problems, new_single, new_var


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b, strict=True):
        if x != y and x != 1 and y != 1:
            return None
        out.append(y if x == 1 else x)
    return tuple(out)


def _merge_variadic(
    prev: tuple[int, ...], prev_broadcast: bool, new: tuple[int, ...], broadcast: bool
) -> tuple[int, ...] | None:
    """jaxtyping's rule for a variadic name seen again ('#*name' broadcasts): the
    value the memo holds afterwards, or None when the shapes disagree."""
    if not prev_broadcast and not broadcast:
        return prev if prev == new else None
    both = _broadcast(new, prev)
    if both is None:
        return None
    if prev_broadcast:
        return both if broadcast or both == new else None
    return prev if both == prev else None


# ---------------------------------------------------------------------- hints


def is_array_hint(hint: Any) -> bool:
    """A jaxtyping array annotation such as Float[Tensor, "b n"] (duck-typed)."""
    return isinstance(hint, type) and hasattr(hint, "dim_str") and hasattr(hint, "dtypes")


def array_members(hint: Any) -> list[Any]:
    """The jaxtyping array annotations a hint mentions, through unions and containers."""
    if is_array_hint(hint):
        return [hint]
    out = []
    for sub in typing.get_args(hint):
        out += array_members(sub)
    return out


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def structural_check(value: Any, hint: Any) -> bool | None:
    """jaxtyping's own isinstance, through unions, tuples and lists; None: cannot tell."""
    if hint is None or hint is type(None):
        return value is None
    if hint is Any:
        return True
    if is_array_hint(hint) or (isinstance(hint, type) and typing.get_origin(hint) is None):
        try:
            return isinstance(value, hint)
        except TypeError:
            return _UNKNOWN
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if _is_union(hint):
        verdicts = [structural_check(value, a) for a in args]
        if any(v is True for v in verdicts):
            return True
        return _UNKNOWN if any(v is None for v in verdicts) else False
    if origin in (tuple, list):
        if not isinstance(value, origin):
            return False
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(args) != len(value):
                return False
            verdicts = [structural_check(v, a) for v, a in zip(value, args, strict=True)]
        else:
            verdicts = [structural_check(v, args[0]) for v in value] if args else []
        if any(v is False for v in verdicts):
            return False
        return _UNKNOWN if any(v is None for v in verdicts) else True
    return _UNKNOWN


def verdict(value: Any, hint: Any) -> bool | None:
    """Does value satisfy hint, by jaxtyping's rules (inside the current memo)?"""
    try:
        from beartype.door import is_bearable
    except ImportError:
        return structural_check(value, hint)
    try:
        return bool(is_bearable(value, hint))
    except Exception:  # noqa: BLE001 - a hint beartype does not support: fall back
        return structural_check(value, hint)


def value_pairs(value: Any, hint: Any) -> list[tuple[Any, Any]]:
    """(value part, array annotation) pairs a hint puts on a value, for explanations."""
    if is_array_hint(hint):
        return [(value, hint)]
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if _is_union(hint):
        if value is None:
            return []
        arrays = [a for a in args if array_members(a)]
        if len(arrays) == 1:
            return value_pairs(value, arrays[0])
        for a in arrays:
            if structural_check(value, a):
                return value_pairs(value, a)
        return value_pairs(value, arrays[0]) if arrays else []
    if origin in (tuple, list) and isinstance(value, (tuple, list)) and args:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if len(args) != len(value):
                return []
            return [p for v, a in zip(value, args, strict=True) for p in value_pairs(v, a)]
        return [p for v in value for p in value_pairs(v, args[0])]
    return []


def _dtype_name(value: Any) -> str | None:
    dt = getattr(value, "dtype", None)
    if dt is None:
        return None
    return str(dt).rsplit(".", 1)[-1]


def hint_name(hint: Any) -> str:
    if is_array_hint(hint):
        return hint.__name__
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def shape_of(value: Any) -> tuple[int, ...] | None:
    shape = getattr(value, "shape", None)
    if shape is None:
        return None
    try:
        return tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------------- the checker


@dataclass
class _Call:
    qualname: str
    memo: Memo = field(default_factory=Memo)


class ShapeChecker:
    """Collects shape errors of wrapped calls while ``active``."""

    def __init__(self) -> None:
        self.active = False
        self.errors: list[str] = []
        self.checks = 0
        self._stack: list[_Call] = []

    def reset(self) -> None:
        self.errors = []
        self.checks = 0
        self._stack = []

    # -- wrapping
    def wrap(self, fn: Callable, qualname: str) -> Callable:
        """fn, checked while the checker is active (a pass-through otherwise).
        A function the user already decorated with jaxtyping's checker is checked
        here instead (same verdicts, with per-dimension explanations)."""
        fn = _without_jaxtyped(fn)
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return fn
        from jaxtyping import jaxtyped

        hints_cache: list[dict[str, Any]] = []
        checker = self

        def inner(*args: Any, **kwargs: Any) -> Any:
            if not hints_cache:
                hints_cache.append(resolve_hints(fn))
            hints = hints_cache[0]
            checker._stack.append(_Call(qualname))
            try:
                if hints:
                    try:
                        bound = sig.bind(*args, **kwargs)
                    except TypeError:
                        bound = None
                    if bound is not None:
                        for name, value in bound.arguments.items():
                            h = hints.get(name)
                            if h is not None and sig.parameters[name].kind not in (
                                inspect.Parameter.VAR_POSITIONAL,
                                inspect.Parameter.VAR_KEYWORD,
                            ):
                                checker.check(value, h, f"argument '{name}'")
                out = fn(*args, **kwargs)
                h = hints.get("return")
                if h is not None:
                    checker.check(out, h, "return value")
                return out
            finally:
                checker._stack.pop()

        checked = jaxtyped(typechecker=None)(inner)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not checker.active:
                return fn(*args, **kwargs)
            return checked(*args, **kwargs)

        wrapper.__shapelint_unwrapped__ = fn  # type: ignore[attr-defined]
        return wrapper

    # -- checks
    def check(self, value: Any, hint: Any, where: str) -> None:
        if not self._stack or not array_members(hint):
            return
        call = self._stack[-1]
        self.checks += 1
        ok = verdict(value, hint)
        pairs = value_pairs(value, hint)
        if ok is None:
            return
        if ok:
            for part, cls in pairs:
                shape = shape_of(part)
                if shape is None:
                    continue
                problems, single, var = explain_shape(cls.dim_str, shape, call.memo)
                if not problems:
                    for k, v in single.items():
                        call.memo.single.setdefault(k, (v, where))
                    for k, (vs, bc) in var.items():
                        prev = call.memo.variadic.get(k)
                        call.memo.variadic[k] = (vs, prev[1] if prev else where, bc)
            return
        self.errors.append(f"{call.qualname}: {where}: {self._why(value, hint, pairs, call.memo)}")

    def _why(self, value: Any, hint: Any, pairs, memo: Memo) -> str:
        reasons = []
        for part, cls in pairs:
            shape = shape_of(part)
            if shape is None:
                reasons.append(f"{type(part).__name__} where {cls.__name__} is expected")
                continue
            problems, _, _ = explain_shape(cls.dim_str, shape, memo)
            dt = _dtype_name(part)
            allowed = cls.dtypes
            if dt is not None and isinstance(allowed, tuple) and dt not in allowed:
                problems.append(f"dtype {dt} is not one {cls.__name__.split('[')[0]} allows")
            if problems:
                reasons.append(f"shape {list(shape)}: " + "; ".join(problems))
        if reasons:
            return "; ".join(reasons)
        if is_array_hint(hint) and hasattr(hint, "__instancecheck_str__"):
            said = hint.__instancecheck_str__(value)  # jaxtyping's own words, same memo
            if said:
                return said
        shape = shape_of(value)
        got = f"shape {list(shape)}" if shape is not None else type(value).__name__
        return f"{got} does not match {hint_name(hint)}"

    def check_assignment(
        self, token: str, line: int, name: str, value: Any, annotation: Callable[[], Any]
    ) -> None:
        """Called after each instrumented ``name: Ann = value``; token says which
        function the statement belongs to, so that only its own memo judges it."""
        if not self.active or not self._stack or self._stack[-1].qualname != token:
            return
        try:
            hint = annotation()
        except Exception:  # noqa: BLE001 - an annotation that does not evaluate at run time
            return
        if isinstance(hint, str):
            return
        self.check(value, hint, f"line {line} '{name}'")


def _without_jaxtyped(fn: Callable) -> Callable:
    inner = getattr(fn, "__wrapped__", None)
    code = getattr(fn, "__code__", None)
    if inner is not None and code is not None and "jaxtyping" in Path(code.co_filename).parts:
        return inner
    return fn


def resolve_hints(fn: Callable) -> dict[str, Any]:
    """fn's annotations as objects; the ones that do not evaluate are left out."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # noqa: BLE001 - fall back to one annotation at a time
        pass
    raw = getattr(fn, "__annotations__", {}) or {}
    glb = getattr(inspect.unwrap(fn), "__globals__", {})
    out = {}
    for k, v in raw.items():
        if isinstance(v, str):
            try:
                v = eval(v, glb)  # noqa: S307 - the user's own annotation, in the user's module
            except Exception:  # noqa: BLE001
                continue
        out[k] = v
    return out


# ---------------------------------------------------------------------- instrumentation


class _Instrumenter(ast.NodeTransformer):
    """Adds a checker call after each annotated assignment in a module-level
    function or a method of a module-level class."""

    def __init__(self) -> None:
        self.scope: list[tuple[str, str]] = []  # (kind, name)
        self.count = 0

    def _token(self) -> str | None:
        kinds = [k for k, _ in self.scope]
        if kinds == ["def"]:
            return self.scope[0][1]
        if kinds == ["class", "def"]:
            return f"{self.scope[0][1]}.{self.scope[1][1]}"
        return None

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self.scope.append(("class", node.name))
        self.generic_visit(node)
        self.scope.pop()
        return node

    def visit_FunctionDef(self, node):  # also AsyncFunctionDef
        self.scope.append(("def", node.name))
        self.generic_visit(node)
        self.scope.pop()
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign):
        token = self._token()
        if token is None or node.value is None:
            return node
        target = _load(node.target)
        if target is None:
            return node
        ann = node.annotation
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                ann = pyparse.parse(ann.value.strip(), mode="eval").body
            except SyntaxError:
                return node
        call = ast.Call(
            func=ast.Name(CHECK_NAME, ast.Load()),
            args=[
                ast.Constant(token),
                ast.Constant(node.lineno),
                ast.Constant(ast.unparse(node.target)),
                target,
                ast.Lambda(
                    args=ast.arguments(
                        posonlyargs=[],
                        args=[],
                        vararg=None,
                        kwonlyargs=[],
                        kw_defaults=[],
                        kwarg=None,
                        defaults=[],
                    ),
                    body=_copy(ann),
                ),
            ],
            keywords=[],
        )
        check = ast.Expr(call)
        for n in ast.walk(check):
            ast.copy_location(n, node)
            if hasattr(n, "end_lineno"):
                n.end_lineno, n.end_col_offset = node.end_lineno, node.end_col_offset
        self.count += 1
        return [node, check]


def _copy(node: ast.expr) -> ast.expr:
    return pyparse.parse(ast.unparse(node), mode="eval").body


def _load(target: ast.expr) -> ast.expr | None:
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Load())
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return ast.Attribute(ast.Name(target.value.id, ast.Load()), target.attr, ast.Load())
    return None


def instrument(tree: ast.Module) -> int:
    """Insert the assignment checks in place; returns how many were added."""
    ins = _Instrumenter()
    ins.visit(tree)
    ast.fix_missing_locations(tree)
    return ins.count
