"""jaxtyping annotations read from the syntax tree, and the binding rule that
checks values against them (one name, one size per call)."""

from __future__ import annotations

import ast
import dataclasses
from typing import TYPE_CHECKING

from shapelint import pyparse
from shapelint.notation.dimspec import is_dtype_class
from shapelint.notation.symbolic import (
    Expr,
    assumed_equal,
    given_formulas,
    given_sizes,
    name_clash,
    never_equal_in_call,
    product,
    sized_as,
)
from shapelint.ops.annotations import tensor_from_annotation
from shapelint.ops.values import TensorV, Var

if TYPE_CHECKING:  # pragma: no cover
    from shapelint.analysis.defs import Analyzer

_OPTIONAL_WRAPPERS = {"typing.Optional", "Optional"}
_UNION_WRAPPERS = {"typing.Union", "Union"}


def _union_members(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left) + _union_members(node.right)
    return [node]


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


class AnnotationReader:
    def __init__(self, analyzer: Analyzer):
        self.analyzer = analyzer
        self._cache: dict[int, TensorV | None] = {}
        self._anon = 0

    def tensor(self, node: ast.expr | None) -> TensorV | None:
        """The tensor an annotation describes, or None if it is not a jaxtyping one."""
        if node is None:
            return None
        key = id(node)
        if key not in self._cache:
            t = self._tensor(node)
            sizes = self.analyzer.options.check_dims
            if t is not None and t.shape is not None and sizes:
                # `check --dim`: the named dims are those numbers.
                shape = tuple(d.substitute(sizes) if isinstance(d, Expr) else d for d in t.shape)
                t = dataclasses.replace(t, shape=shape)
            self._cache[key] = t
        return self._cache[key]

    def _tensor(self, node: ast.expr) -> TensorV | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                inner = pyparse.parse(node.value.strip(), mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            return self._tensor(inner)
        # `Float[...] | None` and Optional[Float[...]]: the tensor case is what we check.
        # A union of several tensor annotations fixes no shape; one with anything else
        # (a tuple, a float) is not a tensor annotation at all.
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self._union(_union_members(node))
        if not isinstance(node, ast.Subscript):
            return None
        base_name = self._dtype_class(node.value)
        if base_name is None:
            wrapper = _name_of(node.value)
            if wrapper in _OPTIONAL_WRAPPERS:
                return self._tensor(node.slice)
            if wrapper in _UNION_WRAPPERS:
                sl = node.slice
                return self._union(list(sl.elts) if isinstance(sl, ast.Tuple) else [sl])
            return None
        sl = node.slice
        spec_node: ast.expr | None = None
        array_type: str | None = None
        if isinstance(sl, ast.Tuple) and len(sl.elts) == 2:
            spec_node = sl.elts[1]
            array_type = _name_of(sl.elts[0]) or "Tensor"
        elif isinstance(sl, ast.Constant):
            spec_node = sl  # the single-string alias style: Float["b n d"]
        if not (isinstance(spec_node, ast.Constant) and isinstance(spec_node.value, str)):
            return None
        # Each `...` (and `*_`) is its own variadic in jaxtyping: a prefix per
        # annotation keeps two of them from binding to each other.
        self._anon += 1
        t = tensor_from_annotation(
            base_name, array_type, spec_node.value, prefix=f"_e{self._anon}_"
        )
        if not isinstance(t, TensorV):
            return None
        default = self.analyzer.options.dtype
        if t is not None and t.dtype is None and default:
            t = TensorV(t.shape, default)  # --dtype: for dtype classes that admit several
        return t

    def _union(self, members: list[ast.expr]) -> TensorV | None:
        members = [m for m in members if not _is_none(m)]
        tensors = [self._tensor(m) for m in members]
        if not tensors or any(t is None for t in tensors):
            return None
        if len(tensors) == 1:
            return tensors[0]
        dtypes = {t.dtype for t in tensors}  # type: ignore[union-attr]
        return TensorV(None, dtypes.pop() if len(dtypes) == 1 else None)

    def _dtype_class(self, node: ast.expr) -> str | None:
        q = self.analyzer.imports.resolve(node)
        if q is not None:
            if q.startswith("jaxtyping."):
                name = q.rsplit(".", 1)[1]
                return name if is_dtype_class(name) else None
            return None
        # Locally defined aliases (lucidrains' `Float = TorchTyping(Float)`) keep the name.
        if isinstance(node, ast.Name) and is_dtype_class(node.id):
            return node.id
        return None

    def is_int(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == "int"

    def is_optional_int(self, node: ast.expr) -> bool:
        """`Optional[int]`, `int | None`, `Union[int, None]` (a string of one too)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = pyparse.parse(node.value.strip(), mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return False
        if isinstance(node, ast.Subscript) and _name_of(node.value) in _OPTIONAL_WRAPPERS:
            return self.is_int(node.slice)
        if isinstance(node, ast.Subscript) and _name_of(node.value) in _UNION_WRAPPERS:
            sl = node.slice
            members = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
        else:
            members = _union_members(node)
        rest = [m for m in members if not _is_none(m)]
        return len(members) == 2 and len(rest) == 1 and self.is_int(rest[0])


def _name_of(node: ast.expr) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _aligned(declared: TensorV, actual: TensorV):
    """Pairs (declared dim, actual dim) where both shapes pin them down, or a
    string saying why the ranks cannot match. Variadic parts are skipped."""
    ds, as_ = declared.shape, actual.shape
    if ds is None or as_ is None:
        return []
    d_var = [i for i, d in enumerate(ds) if isinstance(d, Var)]
    a_var = [i for i, d in enumerate(as_) if isinstance(d, Var)]
    if not d_var and not a_var:
        if len(ds) != len(as_):
            return f"rank {len(as_)} where {len(ds)} is expected"
        return list(zip(ds, as_))
    if d_var and not a_var:
        fixed = len(ds) - 1
        if len(as_) < fixed:
            return f"rank {len(as_)} where at least {fixed} is expected"
    # Align the fixed prefix and suffix around the first variadic part of either.
    pre = min(d_var[0] if d_var else len(ds), a_var[0] if a_var else len(as_))
    post = min(
        len(ds) - 1 - d_var[-1] if d_var else len(ds),
        len(as_) - 1 - a_var[-1] if a_var else len(as_),
    )
    pairs = list(zip(ds[:pre], as_[:pre]))
    if post:
        pairs += list(zip(ds[-post:], as_[-post:]))
    return pairs


def shape_conflict(actual: TensorV, declared: TensorV) -> str | None:
    pairs = _aligned(declared, actual)
    if isinstance(pairs, str):
        return pairs
    for d, a in pairs:
        if isinstance(d, Expr) and isinstance(a, Expr) and d.definitely_differs(a):
            return f"size {a.value} where {d.value} is expected"
        if isinstance(d, Expr) and isinstance(a, Expr) and never_equal_in_call(a, d):
            return f"{a.to_human()} where {d.to_human()} is expected"
        given = (
            given_sizes(a.names() | d.names())
            if isinstance(d, Expr) and isinstance(a, Expr)
            else None
        )
        if given and a.substitute(given).definitely_differs(d.substitute(given)):
            # `dim_out` returned as 96 once an op on the way made dim_out 48
            said = ", ".join(f"{n} = {v}" for n, v in sorted(given.items()))
            return f"{a.to_human()} where {d.to_human()} is expected ({said}: an op before took it)"
        equal = (
            given_formulas(a.names() | d.names())
            if isinstance(d, Expr) and isinstance(a, Expr)
            else None
        )
        if equal and never_equal_in_call(a.substitute(equal), d.substitute(equal)):
            # `2·dim` returned where `d` is annotated, once Linear(dim, ...) took d
            said = ", ".join(f"{n} = {e.to_human()}" for n, e in sorted(equal.items()))
            return f"{a.to_human()} where {d.to_human()} is expected ({said}: an op before took it)"
    return None


def untied_sizes(actual: TensorV, declared: TensorV) -> tuple[Expr, Expr, Expr, tuple, str] | None:
    """(actual dim, declared dim, the formula it meets, the pair for people, what
    an op fixed) where the two are formulas over the constructor's sizes nothing
    relates (symbolic.assumed_equal): `hidden_dim` where `dim` is annotated; or
    where the annotation writes a number that an op before checked against another
    such formula (symbolic.sized_as): `hidden_dim` where 48 is annotated once
    LayerNorm(dim) took 48 is `hidden_dim` against `dim`."""
    pairs = _aligned(declared, actual)
    if isinstance(pairs, str):
        return None
    for d, a in pairs:
        if not (isinstance(d, Expr) and isinstance(a, Expr)):
            continue
        pair = assumed_equal(a, d)
        if pair is not None:
            return a, d, d, pair, ""
        if d.value is None or a.value is not None:
            continue
        took = sized_as(d.value)
        for g in () if a in took else took:
            pair = assumed_equal(a, g)
            if pair is not None:
                return a, d, g, pair, f" ({g.to_human()} = {d.value}: an op before took it)"
    return None


def name_conflict(actual: TensorV, declared: TensorV) -> str | None:
    """A dim the value has as one name where the annotation has another, both bound
    by the parameters' annotations (jaxtyping checks them against each other at
    run time; a name first seen here would bind to anything)."""
    pairs = _aligned(declared, actual)
    if isinstance(pairs, str):
        return None
    for d, a in pairs:
        if not (isinstance(d, Expr) and isinstance(a, Expr)):
            continue
        clash = name_clash(a, d, bound=True)
        if clash is not None:
            return f"'{clash[0]}' where '{clash[1]}' is expected"
    return None


def bind_shape(
    declared: TensorV,
    actual: TensorV,
    binding: dict[str, Expr],
    var_binding: dict[str, tuple] | None = None,
) -> str | None:
    """Check actual against declared, binding declared dimension names to the
    actual sizes (jaxtyping: within one call, a name has one size). A variadic
    part (`*batch`, `...`) binds to the dims it covers: in var_binding as the
    tuple of dims, in binding as their product (its element count)."""
    pairs = _aligned(declared, actual)
    if isinstance(pairs, str):
        return pairs
    _bind_variadic(declared, actual, binding, var_binding)
    for d, a in pairs:
        if not isinstance(d, Expr) or not isinstance(a, Expr):
            continue
        if d.definitely_differs(a):
            return f"size {a.value} where {d.value} is expected"
        name = d.as_name()
        if name is None:
            continue
        prev = binding.get(name)
        if prev is None:
            binding[name] = a
        elif prev.definitely_differs(a):
            return (
                f"dimension '{name}' is {a.value} here but {prev.value} elsewhere in the same call"
            )
    return None


def _bind_variadic(declared: TensorV, actual: TensorV, binding, var_binding) -> None:
    ds, as_ = declared.shape, actual.shape
    if ds is None or as_ is None:
        return
    d_var = [i for i, d in enumerate(ds) if isinstance(d, Var)]
    if len(d_var) != 1:
        return
    i = d_var[0]
    post = len(ds) - 1 - i
    a_var = [j for j, d in enumerate(as_) if isinstance(d, Var)]
    if a_var and (len(a_var) != 1 or a_var[0] != i or len(as_) - 1 - a_var[0] != post):
        return
    if not a_var and len(as_) < len(ds) - 1:
        return
    covered = tuple(as_[i : len(as_) - post])
    name = ds[i].name  # type: ignore[union-attr]
    if var_binding is not None:
        var_binding.setdefault(name, covered)
    if all(isinstance(d, (Expr, Var)) for d in covered):
        binding.setdefault(
            name, product(Expr.name(d.name) if isinstance(d, Var) else d for d in covered)
        )
