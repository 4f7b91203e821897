"""Input shapes for the rewrites when the analysis does not know the tensor's:
templates of unknown rank, and the shapes a chain's reshapes suggest.

A guessed shape is only ever stated in a message (`(if k is [B, T, C])`), never
used by --fix.
"""

from __future__ import annotations

import ast

from shapelint.analysis.nodes import nodes_of
from shapelint.analysis.reshuffle_chain import SOURCE_SYMBOL
from shapelint.analysis.statements import nested_statements
from shapelint.notation import reshuffle as rs
from shapelint.notation.axis_names import NamePolicy
from shapelint.notation.reshuffle import Elem, Layout, Step
from shapelint.notation.symbolic import Expr, FloorDiv
from shapelint.ops.values import Var


def declared_hint(d) -> str | None:
    if isinstance(d, Expr):
        n = d.as_name()
        if n is not None:
            return n[1:] if n.startswith(SOURCE_SYMBOL) else "=" + n
    return None


def size_text(size) -> str:
    e = rs.frac_expr(size)
    if e is None:
        return "?"
    return e.to_python().replace(SOURCE_SYMBOL + "-1", "?").replace(SOURCE_SYMBOL, "")


def templates(shape, model: list[Step], min_suffix: int = 0):
    """Layouts for an input of unknown rank: the shape's named ends around its one
    variadic part, or generic ends, shortest first, up to what the steps' indices
    could need. The caller keeps the first that models and verifies."""
    if shape is not None:
        vars_ = [i for i, d in enumerate(shape) if isinstance(d, Var)]
        if len(vars_) != 1:
            return
        v = vars_[0]
        pre = [
            Elem(rs.frac(d) if isinstance(d, Expr) else None, declared_hint(d)) for d in shape[:v]
        ]
        suf = [
            Elem(rs.frac(d) if isinstance(d, Expr) else None, declared_hint(d))
            for d in shape[v + 1 :]
        ]
        yield Layout.template(pre, suf)
        return
    if any(m.op in ("reshape", "unflatten") for m in model):
        return
    p, s = 0, min_suffix
    for m in model:
        idx: list[int] = []
        if m.op == "transpose":
            idx = list(m.args)
        elif m.op == "movedim":
            idx = list(m.args[0]) + list(m.args[1])
        elif m.op == "permute":
            idx = list(m.args[0])
        elif m.op == "flatten":
            idx = [i for i in m.args if i != -1]
        for i in idx:
            if i >= 0:
                p = max(p, i + 1)
            else:
                s = max(s, -i)
    sizes = sorted(
        ((a, b) for a in range(p + 1) for b in range(min_suffix, s + 1)),
        key=lambda ab: (sum(ab), ab),
    )
    for a, b in sizes:
        yield Layout.template([Elem() for _ in range(a)], [Elem() for _ in range(b)])


def merge_split_pairs(sizes: list[rs.SizeArg], policy: NamePolicy):
    """view(B, T, nh, C // nh): the input was [B, T, C]. Merged are pairs
    `n, X // n` (or `X // n, n`) and pairs named heads then head size
    (`n_head, head_dim`, one of them possibly -1); None unless one is."""

    def floordiv(a: rs.SizeArg):
        e = a.expr
        if e is not None and e.is_atom():
            ((mono, _),) = e.terms.items()
            atom = mono[0][0]
            if isinstance(atom, FloorDiv):
                return atom
        return None

    def merge(a: rs.SizeArg, b: rs.SizeArg):
        if a.infer or b.infer:
            if a.infer and b.infer:
                return None
            if (policy.clean(a.hint), policy.clean(b.hint)) not in (("h", None), (None, "d")):
                return None
            return (rs.frac_mul(a.size or _UNKNOWN_SIZE, b.size or _UNKNOWN_SIZE), None)
        for q, d in ((b, a), (a, b)):
            fd = floordiv(q)
            if fd is not None and d.expr is not None and fd.den == d.expr:
                return (rs.frac(fd.num), _hint_of_expr(fd.num))
        if (policy.clean(a.hint), policy.clean(b.hint)) == ("h", "d"):
            return (rs.frac_mul(a.size, b.size), None)
        return None

    out = []
    merged = last_literal = False
    i = 0
    while i < len(sizes):
        a = sizes[i]
        b = sizes[i + 1] if i + 1 < len(sizes) else None
        whole = merge(a, b) if b is not None else None
        if whole is not None:
            # qkv packing: reshape(B, N, 3, nh, hd) splits one axis of 3·C.
            if last_literal:
                size, _ = out.pop()
                whole = (rs.frac_mul(size, whole[0]), None)
            out.append(whole)
            merged, last_literal = True, False
            i += 2
            continue
        if a.infer:
            return None
        out.append((a.size, a.hint))
        last_literal = _literal_count(a)
        i += 1
    return out if merged else None


def unpacked_names(frame, base: ast.expr) -> set[str]:
    """Names the function reads off base's shape: `b, c, h, w = x.shape`,
    `t = x.size(2)`, `h = x.shape[-2]`."""
    func = getattr(frame, "func", None)
    if func is None or not isinstance(base, ast.Name):
        return set()

    def reads_shape(v: ast.expr) -> bool:
        if isinstance(v, ast.Subscript):
            v = v.value
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "size":
            v = v.func
        elif not (isinstance(v, ast.Attribute) and v.attr == "shape"):
            return False
        return (
            isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and v.value.id == base.id
        )

    out: set[str] = set()
    for node in nested_statements(func.node.body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and reads_shape(node.value):
            t = node.targets[0]
            elts = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
            out |= {e.id for e in elts if isinstance(e, ast.Name)}
    return out


def unpacked_shape(frame, base: ast.expr, before: int) -> list[str | None] | None:
    """The names of `b, c, h, w = x.shape` (or `x.size()`) for base `x`, when that
    unpack comes before line `before` and x is never rebound in the function: it
    proves x's rank, and names its axes (`_` names nothing)."""
    func = getattr(frame, "func", None)
    if func is None or not isinstance(base, ast.Name):
        return None
    stores, unpacks = _shape_unpacks(func.node)
    found = unpacks.get(base.id, ())
    if not any(line < before for line, _ in found):
        return None
    if base.id in stores:
        return None  # rebound somewhere: the unpack may describe another tensor
    for line, names in found:
        if line < before and names is not None:
            return list(names)  # the first in ast.walk order
    return None


def _shape_unpacks(fn: ast.AST) -> tuple[frozenset[str], dict[str, list]]:
    """The names fn's code stores into, and name -> (line, the names or None where
    a target is no plain name) of each `... = name.shape` / `name.size()` unpack,
    in ast.walk order. Kept on the node: the naming rules ask at every chain of
    steps on a tensor of unknown shape, and the function does not change."""
    known = fn.__dict__.get(_UNPACKS)
    if known is None:
        stores = frozenset(n.id for n in nodes_of(fn, ast.Name) if isinstance(n.ctx, ast.Store))
        unpacks: dict[str, list] = {}
        for node in nodes_of(fn, ast.Assign):
            t = node.targets[0]
            if len(node.targets) != 1 or not isinstance(t, (ast.Tuple, ast.List)):
                continue
            name = _shape_base(node.value)
            if name is not None:
                elts = t.elts
                names = (
                    tuple(None if e.id == "_" else e.id for e in elts)  # type: ignore[attr-defined]
                    if all(isinstance(e, ast.Name) for e in elts)
                    else None
                )
                unpacks.setdefault(name, []).append((node.lineno, names))
        known = (stores, unpacks)
        setattr(fn, _UNPACKS, known)
    return known


_UNPACKS = "_shapelint_shape_unpacks"


def _shape_base(v: ast.expr) -> str | None:
    """x of `x.shape` or `x.size()`, else None."""
    if isinstance(v, ast.Call) and not v.args and not v.keywords:
        v = v.func
        if not (isinstance(v, ast.Attribute) and v.attr == "size"):
            return None
    elif not (isinstance(v, ast.Attribute) and v.attr == "shape"):
        return None
    return v.value.id if isinstance(v.value, ast.Name) else None


def _literal_count(a: rs.SizeArg) -> bool:
    v = a.expr.value if a.expr is not None else None
    return v is not None and v >= 2


# The length torch infers for a -1, as a symbol (only ever in a guessed shape).
_UNKNOWN_SIZE = (Expr.name(SOURCE_SYMBOL + "-1"), Expr.const(1))


def _hint_of_expr(e: Expr) -> str | None:
    n = e.as_name()
    if n is None:
        return None
    return n[1:] if n.startswith(SOURCE_SYMBOL) else n
