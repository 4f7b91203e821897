"""Shape learning: what a use says about a value the analysis held only in part.

A matrix product's operands tell each other their inner dim, `b, *_, d = x.shape`
names the ends of an x of unknown rank, an unknown size unpacked into a variable
takes its name, and a variadic no code named turns out to be some dims (the
function's values and costs so far say so too). A parameter learnt about where the
function always passes has it from the start. The rules of what unifies are
unify.py's; this module applies them to a frame through the Analyzer (defs.py).
Substitution of sizes into values (`subst`) lives here too: binding a call's
arguments uses it as well.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from shapelint.analysis import item_sizes, unify
from shapelint.analysis.modules import ModuleListV
from shapelint.notation.symbolic import Expr, declare_learned, learned_factor, product
from shapelint.ops.backward import keep_grad, requires
from shapelint.ops.values import (
    UNKNOWN,
    Cost,
    IntV,
    ObjectV,
    OptionalV,
    TensorV,
    TupleV,
    Value,
    Var,
    dim_py,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, Frame


def unify_matmul(an: Analyzer, qual: str, args: list, nodes: list, frame: Frame, site) -> None:
    """A matrix product's operands known in part tell each other their inner
    dim (analysis/unify.py); `k.mT` / `k.transpose(-1, -2)` of a k of unknown
    rank says k has two dims or more."""
    sources: list = [None, None]
    for k in (0, 1):
        src = unify.transposed_source(nodes[k]) if k < len(nodes) else None
        grown = unify.at_least_matrix(args[k]) if src is not None else None
        if grown is not None:
            args[k], sources[k] = grown, src
        elif src is not None and isinstance(args[k], TensorV):
            sources[k] = src
    met = unify.matmul_operands(qual, args[0], args[1])
    for k in (0, 1):
        if met is not None:
            args[k] = met[k]
        if sources[k] is not None:
            before = unify.swap_last_two(args[k])
            if before is not None:
                learn(an, sources[k], before, frame, site)
        elif met is not None and k < len(nodes):
            learn(an, nodes[k], args[k], frame, site)


def name_shape_ends(an: Analyzer, elts: list, star: int | None, value_node, frame: Frame) -> bool:
    """`b, *_, d = x.shape`, `b, n = x.shape[:2]` on an x of unknown rank: its
    leading (and trailing) dims take the names. True when the targets got
    their values here."""
    src = shape_source(value_node)
    if star is not None and isinstance(src, ast.Name):
        n_head, n_tail = star, len(elts) - star - 1
    else:
        sliced = unify.shape_slice_source(value_node)
        if sliced is None or star is not None or sliced[1] != len(elts):
            return False
        src, n_head, n_tail = sliced[0], len(elts), 0
    x = frame.env.get(src.id, UNKNOWN)
    if (
        isinstance(x, TensorV)
        and x.shape is not None
        and not any(isinstance(d, Var) for d in x.shape)
    ):
        return False  # a known rank: the tuple's items bind as they are
    names = [e.id if isinstance(e, ast.Name) and e.id != "_" else None for e in elts]
    syms = [None if n is None else Expr.name(n) for n in names]
    known = unify.named_ends(x, syms[:n_head], syms[len(elts) - n_tail :])
    if known is None:
        return False
    learn(an, src, known, frame, value_node)
    shape = known.shape or ()
    for k, e in enumerate(elts):
        if isinstance(e, ast.Starred):
            an.assign(e.value, UNKNOWN, frame, None)
            continue
        d = shape[k] if k < n_head else shape[len(shape) - (len(elts) - k)]
        an.assign(e, IntV(d) if isinstance(d, Expr) else IntV(None), frame, None)
    return True


def name_unknown_dim(shape_of: ast.expr, i: int, n: int, name: str, v: IntV, frame: Frame) -> IntV:
    """`b, s, d = x.shape`: an unknown size gets the variable's name, and x's
    shape learns it, so later uses agree on one symbol."""
    if v.value is not None or not isinstance(shape_of, ast.Name):
        return v
    t = frame.env.get(shape_of.id)
    if not isinstance(t, TensorV) or t.shape is None or len(t.shape) != n:
        return v
    if t.shape[i] is not None:
        return v
    sym = Expr.name(name)
    declare_learned((name,))
    shape = list(t.shape)
    shape[i] = sym
    frame.env[shape_of.id] = TensorV(tuple(shape), t.dtype)
    return IntV(sym)


def learn(an: Analyzer, node: ast.expr | None, value: TensorV, frame: Frame, site) -> None:
    """A use says what the tensor that `node` evaluated to is: the variable
    holds the more precise value from here on, and a parameter learnt about
    where the function always passes has it from the start (analysis/unify.py)."""
    if not isinstance(node, ast.Name):
        return
    name = node.id
    if name not in frame.env or frame.conditional:
        return
    cur = frame.env[name]
    if not (cur is UNKNOWN or isinstance(cur, TensorV)):
        return
    named = unify.dim_names(value) - unify.dim_names(cur)
    an.inferred_names |= named
    declare_learned(named)
    value = keep_grad(cur, value)  # a shape learnt, not another tensor
    _spelled_variadic(an, frame, cur, value)
    frame.env[name] = value
    if name in frame.param_values and frame.param_values[name] is cur:
        learn_param(name, value, frame, site)
    alias = frame.aliases.pop(name, None)
    if alias is None or alias[2] is not cur:
        return  # no alias, or the name no longer holds the op's result
    param, held, _ = alias
    # The parameter as received, not learnt about since (rebinding its name, as in
    # `x = F.relu(x)`, takes it out of param_values: the op still saw it).
    if frame.param_values.get(param, held) is held:
        dtype = held.dtype if isinstance(held, TensorV) else None
        shaped = keep_grad(held, TensorV(value.shape, dtype))
        if frame.env.get(param) is held:
            frame.env[param] = shaped
        learn_param(param, shaped, frame, site)


def _spelled_variadic(an: Analyzer, frame: Frame, cur: Value, value: TensorV) -> None:
    """cur's one variadic no code named (`[?, ?, ...]`, the dims past an index of a
    parameter: indexing.leading_dims) that value spells out, with the same dims
    around it: what it stands for is so in every value sharing it (`x[:, 1:]` once
    a Linear took `x[:, :1]`)."""
    if not (isinstance(cur, TensorV) and cur.shape and value.shape is not None):
        return
    at = [i for i, d in enumerate(cur.shape) if isinstance(d, Var)]
    if len(at) != 1 or not cur.shape[at[0]].name.startswith("_"):  # type: ignore[union-attr]
        return
    var = cur.shape[at[0]]
    after = len(cur.shape) - at[0] - 1
    end = len(value.shape) - after
    if var in value.shape or end < at[0]:
        return
    dims = tuple(value.shape[at[0] : end])
    if any(d is None for d in dims):
        return  # a dim of unknown size: no count for what the variadic stands for
    bind_var(an, frame, var.name, dims)  # type: ignore[arg-type]


def learn_param(name: str, value: TensorV, frame: Frame, site) -> None:
    frame.param_values[name] = value
    if frame.hoists and unify.runs_unconditionally(frame.func.node.body, site):  # type: ignore[union-attr]
        frame.learnt[name] = value
        frame.learnt_line = min(frame.learnt_line, getattr(site, "lineno", 0))


def bind_var(an: Analyzer, frame: Frame, name: str, dims: tuple) -> None:
    """A variadic no code named turns out to be `dims`: every value and cost
    of the function that mentions it says so, the calls before included."""
    # (a variadic among dims counts as its own element count)
    exprs = {name: product([Expr.name(d.name) if isinstance(d, Var) else d for d in dims])}
    an.inferred_names |= {n for d in dims if isinstance(d, Expr) for n in d.names()}
    _rebind(an, frame, exprs, {name: dims}, lambda v: Var(name) in v.shape)


def learn_factors(an: Analyzer, frame: Frame, x: Value, checks: list[tuple[int, Expr]]) -> Value:
    """A layer's checks on an input whose dim is a product holding one size a use
    named (`p1·p2·c`): the name learns what the check needs (learned_factor), in
    every value and cost of the function (the layer raises otherwise). Not on a
    path the function may not take (`frame.conditional`)."""
    if not isinstance(x, TensorV) or x.shape is None or frame.conditional:
        return x
    shape = x.shape
    exprs: dict[str, Expr] = {}
    for pos, size in checks:
        if not -len(shape) <= pos < len(shape):
            continue
        span = shape[pos:] if pos < 0 else shape[: pos + 1]
        dim = shape[pos]
        if any(isinstance(d, Var) for d in span) or not isinstance(dim, Expr):
            continue
        found = learned_factor(dim.substitute(exprs), size)
        if found is not None:
            exprs[found[0]] = found[1]
    if not exprs:
        return x
    names = set(exprs)

    def mentions(v: TensorV) -> bool:
        return any(isinstance(d, Expr) and d.names() & names for d in v.shape)

    _rebind(an, frame, exprs, {}, mentions)
    return subst(x, exprs, {})


def _rebind(an: Analyzer, frame: Frame, exprs: dict, var_binding: dict, mentions) -> None:
    """exprs (and var_binding) substituted in every value of frame whose shape
    `mentions` them, and in the figures of every call recorded so far."""
    new: dict[int, Value] = {}

    def sub(v: Value) -> Value:
        if id(v) not in new:
            hit = isinstance(v, TensorV) and v.shape is not None and mentions(v)
            new[id(v)] = subst(v, exprs, var_binding) if hit else v
        return new[id(v)]

    frame.env = {k: sub(v) for k, v in frame.env.items()}
    frame.param_values = {k: sub(v) for k, v in frame.param_values.items()}
    frame.learnt = {k: sub(v) for k, v in frame.learnt.items()}  # type: ignore[misc]
    if not an.costs:
        return  # the records' figures and shapes are read by no face
    spelled = {name: [dim_py(d) for d in dims] for name, dims in var_binding.items()}
    for rec in frame.records.values():
        c = rec.cost
        rec.cost = Cost(
            subst_expr(c.flops, exprs),
            subst_expr(c.other_flops, exprs),
            subst_expr(c.bytes, exprs),
            c.notes,
            c.complete,
            backward=subst_expr(c.backward, exprs),
            saved=subst_expr(c.saved, exprs),
        )
        for name, dims in spelled.items():
            rec.inputs = [_spell_var(s, name, dims) for s in rec.inputs]
            rec.output = _spell_var(rec.output, name, dims)


def shape_source(node: ast.expr | None) -> ast.expr | None:
    """The tensor expression behind `x.shape` / `x.size()`, for dimension naming."""
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return node.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and not node.args
    ):
        return node.func.value
    return None


def subst_expr(e: Expr | None, binding: dict[str, Expr]) -> Expr | None:
    if e is None or not binding:
        return e
    return e.substitute(binding)


def subst_value(
    v: Value,
    binding: dict[str, Value] | dict[str, Expr],
    var_binding: dict[str, tuple] | None = None,
) -> Value:
    exprs = binding_exprs(binding)
    # Nothing to substitute (an argument of unknown size binds nothing): v as is,
    # rather than a rebuilt copy of every nested attribute (a tenth of a run).
    return subst(v, exprs, var_binding or {}) if exprs or var_binding else v


def binding_exprs(binding: dict[str, Value] | dict[str, Expr]) -> dict[str, Expr]:
    """The sizes a binding gives its names (an int argument's value; a name bound
    to something else binds no size)."""
    out: dict[str, Expr] = {}
    for k, x in binding.items():
        if isinstance(x, IntV):
            x = x.value
        if isinstance(x, Expr):
            out[k] = x
    return out


def subst(v: Value, exprs: dict[str, Expr], var_binding: dict[str, tuple]) -> Value:
    if isinstance(v, TensorV) and v.shape is not None:
        dims: list = []
        for d in v.shape:
            if isinstance(d, Var) and d.name in var_binding:
                dims.extend(var_binding[d.name])
            elif isinstance(d, Expr):
                dims.append(d.substitute(exprs))
            else:
                dims.append(d)
        return TensorV(tuple(dims), v.dtype, grad=requires(v))
    if isinstance(v, IntV) and v.value is not None:
        return IntV(v.value.substitute(exprs))
    if isinstance(v, TupleV):
        return TupleV(tuple(subst(i, exprs, var_binding) for i in v.items))
    if isinstance(v, ObjectV):
        return ObjectV(v.kind, tuple((k, subst(x, exprs, var_binding)) for k, x in v.attrs))
    if isinstance(v, ModuleListV):  # an instance's Sequential holds its layers at its sizes
        ends = None if v.ends is None else tuple(subst(i, exprs, var_binding) for i in v.ends)
        return replace(v, items=tuple(subst(i, exprs, var_binding) for i in v.items), ends=ends)
    if isinstance(v, OptionalV):  # `nn.Sequential(...) if exists(time_emb_dim) else None`
        return OptionalV(subst(v.value, exprs, var_binding))
    return v


def item_binding(bound: dict[str, Value]) -> dict[str, Expr]:
    """The items a caller's listed sequence gives a constructor's item sizes
    (item_sizes.py): `channels[0]` and `channels[-3]` of three listed channels."""
    out: dict[str, Expr] = {}
    for p, v in bound.items():
        if isinstance(v, TupleV):
            n = len(v.items)
            for i, item in enumerate(v.items):
                if isinstance(item, IntV) and item.value is not None:
                    out[f"{p}[{i}]"] = out[f"{p}[{i - n}]"] = item.value
    return out


def _mentions(found: set[str], names: set[str]) -> bool:
    """Whether found names one of names, or an item of one (`channels[-1]`)."""
    return bool(found & names) or any(item_sizes.names_of(n) in names for n in found)


def forget(v: Value, names: set[str]) -> Value:
    """v with every size that mentions one of names unknown: a constructor's
    parameter a caller gave no size for is no name of the caller's (the callee's
    `out_channels` is not the caller's own `out_channels`)."""
    if not names:
        return v
    if isinstance(v, TensorV) and v.shape is not None:
        return TensorV(
            tuple(
                None if isinstance(d, Expr) and _mentions(d.names(), names) else d for d in v.shape
            ),
            v.dtype,
        )
    if isinstance(v, IntV) and v.value is not None and _mentions(v.value.names(), names):
        return IntV(None)
    if isinstance(v, TupleV):
        return TupleV(tuple(forget(i, names) for i in v.items))
    if isinstance(v, ObjectV):
        return ObjectV(v.kind, tuple((k, forget(x, names)) for k, x in v.attrs))
    if isinstance(v, ModuleListV):
        ends = None if v.ends is None else tuple(forget(i, names) for i in v.ends)
        return replace(v, items=tuple(forget(i, names) for i in v.items), ends=ends)
    if isinstance(v, OptionalV):
        return OptionalV(forget(v.value, names))
    return v


def _spell_var(shape: list | None, name: str, dims: list) -> list | None:
    if shape is None or f"*{name}" not in shape:
        return shape
    i = shape.index(f"*{name}")
    return shape[:i] + dims + shape[i + 1 :]


def spread_shape(
    an: Analyzer, elts: list, star: int | None, value_node, frame: Frame
) -> Value | None:
    """`b, n, _, h = *x.shape, self.heads`: the names beside the spread shape take
    the items after it, so x has exactly as many dims as the names left for it
    (Python raises otherwise), and those take their names as `b, n, _ = x.shape`
    would. None where the statement is not that form, or the items beside the
    spread are not plain names, attributes or literals (evaluated here again)."""
    if star is not None or not isinstance(value_node, ast.Tuple):
        return None
    spreads = [i for i, e in enumerate(value_node.elts) if isinstance(e, ast.Starred)]
    if len(spreads) != 1:
        return None
    at = spreads[0]
    src = shape_source(value_node.elts[at].value)  # type: ignore[attr-defined]
    others = [e for i, e in enumerate(value_node.elts) if i != at]
    if not isinstance(src, ast.Name) or not all(
        isinstance(e, (ast.Name, ast.Attribute, ast.Constant)) for e in others
    ):
        return None
    rank = len(elts) - len(others)
    if rank < 0:
        return None
    x = frame.env.get(src.id, UNKNOWN)
    names = [
        e.id if isinstance(e, ast.Name) and e.id != "_" else None for e in elts[at : at + rank]
    ]
    x = _spread_over_variadic(an, frame, src.id, x, names)
    known = unify.shape_unpacked(x, names)
    if known is not None:
        learn(an, src, known, frame, value_node)
        x = frame.env.get(src.id, known)
        x = x if isinstance(x, TensorV) else known
    if not isinstance(x, TensorV) or x.shape is None or len(x.shape) != rank:
        return None
    if any(isinstance(d, Var) for d in x.shape):
        return None
    items = [an.eval(e, frame, 0) for e in others]
    dims = [IntV(d) if isinstance(d, Expr) else IntV(None) for d in x.shape]
    return TupleV(tuple(items[:at] + dims + items[at:]))


def spread_ends(an: Analyzer, elts: list, star: int | None, value_node, frame: Frame) -> bool:
    """`b, n, *_, h = *x.shape, self.heads` on an x of unknown rank: Python gives the
    names before the star the tuple's first items and those after it its last, so a
    name beside the star takes the item written beside the spread (h is self.heads,
    whatever x's rank) or the dim x's shape holds at that end, if any. Only where
    every name lands on one of them for any rank that unpacks (no fewer names at an
    end than items written there; else the rank decides which). True when the
    targets got their values here."""
    if star is None or not isinstance(value_node, ast.Tuple):
        return False
    spreads = [i for i, e in enumerate(value_node.elts) if isinstance(e, ast.Starred)]
    if len(spreads) != 1:
        return False
    at = spreads[0]
    after = len(value_node.elts) - at - 1
    n_tail = len(elts) - star - 1
    src = shape_source(value_node.elts[at].value)  # type: ignore[attr-defined]
    others = [e for i, e in enumerate(value_node.elts) if i != at]
    if (
        not isinstance(src, ast.Name)
        or star < at
        or n_tail < after
        or not all(isinstance(e, (ast.Name, ast.Attribute, ast.Constant)) for e in others)
    ):
        return False
    # x is not taught the names: `[b, n, ...]` of unknown rank places a conv's channel
    # nowhere, where an x of no known shape learns `[..., c, h, w]` from it (levit)
    x = frame.env.get(src.id, UNKNOWN)
    items = [an.eval(e, frame, 0) for e in others]
    for k, e in enumerate(elts):
        if k == star:
            an.assign(e.value, UNKNOWN, frame, None)
            continue
        if k < star:
            v = items[k] if k < at else _end_dim(x, k - at, 0)
        else:
            back = len(elts) - 1 - k  # 0 for the last name
            v = items[len(items) - 1 - back] if back < after else _end_dim(x, None, back - after)
        an.assign(e, v, frame, None)
    return True


def _end_dim(x: Value, k: int | None, back: int) -> IntV:
    """x's dim k from the start (k None: `back` from the end), where x's shape holds it
    outside any variadic; IntV(None) where it does not."""
    shape = x.shape if isinstance(x, TensorV) else None
    if shape is None:
        return IntV(None)
    at = [j for j, d in enumerate(shape) if isinstance(d, Var)]
    j = k if k is not None else len(shape) - 1 - back
    if j < 0 or j >= len(shape) or any((j >= a) if k is not None else (j <= a) for a in at):
        return IntV(None)
    d = shape[j]
    return IntV(d) if isinstance(d, Expr) else IntV(None)


def _spread_over_variadic(an: Analyzer, frame: Frame, name: str, x: Value, names: list) -> Value:
    """x is `[..., dim]` (one variadic no code named) and the unpacking says its
    rank: the variadic is the names at its place, in every value of the function."""
    if not isinstance(x, TensorV) or x.shape is None:
        return x
    at = [k for k, d in enumerate(x.shape) if isinstance(d, Var)]
    if len(at) != 1 or not x.shape[at[0]].name.startswith("_v"):  # type: ignore[union-attr]
        return x
    span = names[at[0] : at[0] + len(names) - len(x.shape) + 1]
    if len(names) < len(x.shape) - 1 or None in span:
        return x
    an.inferred_names |= set(span)
    declare_learned(span)
    bind_var(an, frame, x.shape[at[0]].name, tuple(Expr.name(n) for n in span))  # type: ignore[union-attr]
    return frame.env.get(name, x)
