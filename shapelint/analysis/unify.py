"""Shapes read off the code where no annotation gives them.

A tensor of unknown origin (an unannotated parameter, an unmodelled call's
result) starts with an unknown shape; each use that needs a certain shape tells
the analysis what it is: an einops pattern's left side (`rearrange(x, "b n (h d)
-> ...", h=h)` makes x `[b, n, h·d]`), einsum subscripts, `b, n, d = x.shape`,
a layer's input size (`nn.Linear(dim, inner)(x)`: x ends in `dim`). The
dimension takes the name the code gives it; nothing the code does not say is
assumed: a dim no code names stays unknown, and where a pattern has an ellipsis
the rank stays open.

What is learnt this way holds from the use on (the op raises otherwise). A
parameter learnt about in straight-line code at the top of the function, before
anything can return or raise, has that shape from the start of the function:
the function is analysed again with it, so a cost before the use knows it too.
"""

from __future__ import annotations

import ast
import re

from shapelint.notation.einops_pattern import parse
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import UNKNOWN, IntV, ObjectV, OpIssue, TensorV, Value, Var, fresh_var

_EINOPS = {"einops.rearrange": "rearrange", "einops.reduce": "reduce", "einops.repeat": "repeat"}
_LETTER_EINSUM = {"torch.einsum", "numpy.einsum", "torch.Tensor.einsum"}


def is_open(v: Value) -> bool:
    """A value a use may tell more about: a tensor with an unknown rank or dim."""
    if v is UNKNOWN:
        return True
    return isinstance(v, TensorV) and (v.shape is None or None in v.shape)


def _left_groups(op: str, pattern: str, kwargs: dict[str, Value] | None) -> list | None:
    """Each group of the left side as a size (None: the ellipsis), or None when
    the pattern or its lengths say nothing usable."""
    pat = parse(op, pattern)
    if not pat.ok or pat.output is None:
        return None
    lengths: dict[str, Expr] = {}
    for k, v in (kwargs or {}).items():
        if isinstance(v, IntV) and v.value is not None:
            lengths[k] = v.value
        else:
            return None  # a length einops cannot use: the op reports it, nothing to learn
    groups: list = []
    for g in pat.left.groups:
        if g.is_ellipsis:
            groups.append(None)
            continue
        size = Expr.const(1)
        for a in g.axes:
            if a.is_anonymous:
                size = size * Expr.const(a.value)  # type: ignore[arg-type]
            elif a.is_ellipsis:
                return None  # '(...)' on the left: a product of dims of unknown number
            else:
                size = size * lengths.get(a.name, Expr.name(a.name))
        groups.append(size)
    return groups


def leading_var_binding(
    op: str, pattern: str, x: Value, kwargs: dict[str, Value] | None
) -> tuple[str, tuple] | None:
    """`[..., inner]` (a variadic no code names, then known dims) meets a left side
    without an ellipsis: the variadic is the pattern's leading groups."""
    if not (isinstance(x, TensorV) and x.shape and isinstance(x.shape[0], Var)):
        return None
    var = x.shape[0]
    if not var.name.startswith("_v") or any(isinstance(d, Var) for d in x.shape[1:]):
        return None
    groups = _left_groups(op, pattern, kwargs)
    if groups is None or None in groups:
        return None
    k = len(x.shape) - 1
    if len(groups) < k:
        return None  # the op reports the rank
    return var.name, tuple(groups[: len(groups) - k])


def einops_input(
    op: str, pattern: str, x: Value, kwargs: dict[str, Value] | None
) -> TensorV | None:
    """What rearrange/reduce/repeat's left side says x is, where x's shape is
    unknown in part; None when the pattern tells nothing new (or x is not a
    plain tensor: a list einops stacks, a tensor with a variadic)."""
    if not is_open(x) or isinstance(x, ObjectV):
        return None
    groups = _left_groups(op, pattern, kwargs)
    if groups is None:
        return None
    shape = x.shape if isinstance(x, TensorV) else None
    dtype = x.dtype if isinstance(x, TensorV) else None
    has_ell = None in groups
    if shape is None:
        dims = [fresh_var() if s is None else s for s in groups]
        return TensorV(tuple(dims), dtype)
    if any(isinstance(d, Var) for d in shape):
        return None
    n = len(groups) - has_ell
    if (has_ell and len(shape) < n) or (not has_ell and len(shape) != n):
        return None  # the op reports the rank
    if has_ell:
        at = groups.index(None)
        after = len(groups) - at - 1
        wanted: list = groups[:at] + [None] * (len(shape) - n) + groups[at + 1 :]
        assert len(wanted) == len(shape) and after >= 0
    else:
        wanted = groups
    dims = tuple(w if d is None else d for d, w in zip(shape, wanted, strict=True))
    return TensorV(dims, dtype) if dims != shape else None


def shape_unpacked(x: Value, names: list[str | None]) -> TensorV | None:
    """`b, n, _ = x.shape`: x has exactly as many dims as there are names (Python
    raises otherwise), and a dim of unknown size takes the name it is given."""
    if x is UNKNOWN or (isinstance(x, TensorV) and x.shape is None):
        shape: tuple = (None,) * len(names)
    elif isinstance(x, TensorV) and len(x.shape) == len(names) and None in x.shape:  # type: ignore[arg-type]
        shape = x.shape  # type: ignore[assignment]
    else:
        return None
    dims = tuple(
        Expr.name(n) if d is None and n is not None and n != "_" else d
        for d, n in zip(shape, names, strict=True)
    )
    return TensorV(dims, x.dtype if isinstance(x, TensorV) else None)


def ending_in(x: Value, size: Expr | None) -> TensorV | None:
    """x's last dim is `size` (a layer's input size, `d = x.shape[-1]`), whatever
    comes before it; None when x says so already or size is unknown."""
    if size is None or not isinstance(size, Expr):
        return None
    dtype = x.dtype if isinstance(x, TensorV) else None
    if x is UNKNOWN or (isinstance(x, TensorV) and x.shape is None):
        return TensorV((fresh_var(), size), dtype)
    if isinstance(x, TensorV) and x.shape and x.shape[-1] is None:
        return TensorV((*x.shape[:-1], size), dtype)
    return None


def last_dim_source(node: ast.expr | None) -> ast.Name | None:
    """The tensor variable behind `x.shape[-1]` or `x.size(-1)`."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
        and isinstance(node.value.value, ast.Name)
        and _is_minus_one(node.slice)
    ):
        return node.value.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and isinstance(node.func.value, ast.Name)
        and len(node.args) == 1
        and _is_minus_one(node.args[0])
    ):
        return node.func.value
    return None


def _is_minus_one(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and node.operand.value == 1
    )


# Layer constructors whose leading arguments are sizes: a variable of unknown
# value passed there is a size named after the variable (`nn.Linear(dim, inner)`).
SIZE_ARGUMENTS = {
    "torch.nn.Linear": ("in_features", "out_features"),
    "torch.nn.Embedding": ("num_embeddings", "embedding_dim"),
}


def size_argument_nodes(qual: str, node: ast.Call) -> list[tuple[int | str, ast.expr]]:
    """(position or keyword, node) of the size arguments of a layer constructor."""
    names = SIZE_ARGUMENTS.get(qual)
    if names is None:
        return []
    out: list[tuple[int | str, ast.expr]] = []
    for i, a in enumerate(node.args[: len(names)]):
        if isinstance(a, ast.Starred):
            return out
        out.append((i, a))
    out += [(k.arg, k.value) for k in node.keywords if k.arg in names]
    return out


def dim_names(v: Value) -> set[str]:
    """The size names in a tensor's shape."""
    if not isinstance(v, TensorV) or v.shape is None:
        return set()
    return {n for d in v.shape if isinstance(d, Expr) for n in d.names()}


_NAME_CONFLICT = re.compile(r"is '([^']+)' in one operand and '([^']+)' in another")


def binds_inferred(issue: OpIssue, inferred: set[str]) -> bool:
    """An op equating two dim names (SHP304) where a use, not an annotation, gave
    one of them: the names are one dimension, which is no error."""
    if issue.code != "SHP304":
        return False
    m = _NAME_CONFLICT.search(issue.message)
    return m is not None and bool({m.group(1), m.group(2)} & inferred)


def tensor_arg_nodes(qual: str, node: ast.Call) -> list[ast.expr | None]:
    """The source expression of each tensor an op was given, in the order the op
    numbers them (OpResult.refined's keys)."""
    args = list(node.args)
    if any(isinstance(a, ast.Starred) for a in args):
        return []
    if qual == "einops.einsum":
        return list(args[:-1])
    if qual in _LETTER_EINSUM:
        return list(args[1:])
    if qual in _EINOPS:
        if args:
            return [args[0]]
        return [next((k.value for k in node.keywords if k.arg == "tensor"), None)]
    return []


def einops_op(qual: str) -> str | None:
    return _EINOPS.get(qual)


def runs_unconditionally(body: list[ast.stmt], site: ast.AST) -> bool:
    """Whether `site` (a call, or an assignment's value) runs whenever the function
    does: in a simple statement at the top of its body, before the first compound
    statement that may return or raise, outside conditional expressions, lambdas
    and comprehensions."""
    line = getattr(site, "lineno", None)
    if line is None:
        return False
    for stmt in body:
        if stmt.lineno > line:
            return False
        if stmt.end_lineno is not None and stmt.end_lineno < line:
            if _is_compound(stmt) and any(
                isinstance(n, (ast.Return, ast.Raise)) for n in ast.walk(stmt)
            ):
                return False  # what follows runs only when this did not leave
            if isinstance(stmt, (ast.Return, ast.Raise)):
                return False
            continue
        return not _is_compound(stmt) and _reached(stmt, site)
    return False


def _reached(node: ast.AST, site: ast.AST) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n is site:
            return True
        if isinstance(n, _CONDITIONAL):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False


def _is_compound(stmt: ast.stmt) -> bool:
    return isinstance(
        stmt,
        (
            ast.If,
            ast.For,
            ast.AsyncFor,
            ast.While,
            ast.With,
            ast.AsyncWith,
            ast.Try,
            ast.FunctionDef,
            ast.AsyncFunctionDef,
            ast.ClassDef,
        ),
    ) or type(stmt).__name__ in ("Match", "TryStar")


_CONDITIONAL = (
    ast.IfExp,
    ast.BoolOp,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
