"""A parameter its function reads as a sequence is no int, whatever size symbol it
was given: `hidden_size[-1]`, `a, b = patch_size`, `*shape`, `len(dims)`,
`for d in dims` all fail on an int, so where the code runs the parameter holds a
sequence.

A constructor parameter with neither default nor annotation is a size symbol
(specialized.init_param), and its items are sizes of their own (item_sizes.py). Where
such a parameter is handed to a torch layer's constructor in a place that takes an int
or a sequence of ints, reading the symbol as an int invents axes: `nn.LayerNorm(
hidden_size)` would get a weight of one axis, `hidden_size`, where torch gives it one
axis per item (`*normalized_shape`), and a later `x * self.weight` would compare
`hidden_size[-1]` with `hidden_size`. There the symbol stands for the sequence: of a
length not known where the layer keeps it whole (a normalized_shape: not known), or,
where torch's _ntuple makes an int n of itself (a conv's kernel_size, stride,
padding, dilation, whose forward takes exactly n), its n items, `p[0]` .. `p[n-1]`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import item_sizes
from shapelint.analysis.nodes import nodes_of
from shapelint.ops import stub_ops
from shapelint.ops.values import UNKNOWN, IntV, TupleV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

_KEPT = "_shapelint_sequence_reads"

# Builtins that iterate their argument (or take its length): an int makes each raise.
_ITERATING = frozenset(
    {"len", "list", "tuple", "iter", "reversed", "enumerate", "sorted", "zip", "set"}
)


def read_as_sequences(fn: ast.AST) -> frozenset[str]:
    """The names fn (nested scopes included) subscripts, unpacks, stars, iterates
    over or hands to a builtin that iterates it."""
    known = fn.__dict__.get(_KEPT)
    if known is not None:
        return known
    found: set[str] = set()
    for n in nodes_of(fn, ast.Subscript):
        if isinstance(n.value, ast.Name) and isinstance(n.ctx, ast.Load):
            found.add(n.value.id)
    for n in nodes_of(fn, ast.Starred):
        if isinstance(n.value, ast.Name) and isinstance(n.ctx, ast.Load):
            found.add(n.value.id)
    for n in nodes_of(fn, (ast.For, ast.AsyncFor, ast.comprehension)):
        if isinstance(n.iter, ast.Name):
            found.add(n.iter.id)
    for n in nodes_of(fn, ast.Assign):
        if isinstance(n.value, ast.Name) and any(
            isinstance(t, (ast.Tuple, ast.List)) for t in n.targets
        ):
            found.add(n.value.id)
    for n in nodes_of(fn, ast.Call):
        if isinstance(n.func, ast.Name) and n.func.id in _ITERATING:
            found.update(a.id for a in n.args if isinstance(a, ast.Name))
    known = frozenset(found)
    setattr(fn, _KEPT, known)
    return known


def _sequence_symbol(an: Analyzer, frame, v: Value) -> str | None:
    """The parameter of frame's function that v is the size symbol of, where the
    function reads that parameter as a sequence."""
    if not isinstance(v, IntV) or v.value is None:
        return None
    p = v.value.as_name()
    fd = frame.func
    if p is None or fd is None or frame.env.get(p) != v:
        return None
    params = fd.node.args
    if not any(a.arg == p for a in (*params.posonlyargs, *params.args, *params.kwonlyargs)):
        return None
    return p if p in read_as_sequences(fd.node) else None


def given_as_sequences(an: Analyzer, qual: str, args: list, kwargs: dict, frame):
    """args and kwargs of a call of qual, each symbol of a parameter read as a
    sequence, where qual's constructor takes a sequence, made that sequence."""
    if an.specialize or frame.func is None:
        return args, kwargs  # a target run's parameters hold what the caller gave
    if not any(_sequence_symbol(an, frame, v) for v in (*args, *kwargs.values())):
        return args, kwargs
    lengths = stub_ops.sequence_parameters(qual)
    names = stub_ops.parameter_names(qual) or ()
    if not lengths:
        return args, kwargs
    args = [
        _as_sequence(an, frame, v, lengths.get(names[i])) if i < len(names) else v
        for i, v in enumerate(args)
    ]
    kwargs = {k: _as_sequence(an, frame, v, lengths.get(k)) for k, v in kwargs.items()}
    return args, kwargs


def _as_sequence(an: Analyzer, frame, v: Value, n: int | None) -> Value:
    if n is None or _sequence_symbol(an, frame, v) is None:
        return v
    if n == 0:
        return UNKNOWN  # as many axes as the sequence has items: not known
    items = item_sizes.unpacked(an, frame, v, n, None)
    return TupleV(tuple(items) if items is not None else (IntV(None),) * n)
