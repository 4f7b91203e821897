"""numpy arrays as values (`ops.values.ArrayV`): the shape and dtype numpy gives the
arrays a module builds before handing them to torch, `torch.Tensor(a[:, None] *
a[None, :])` a filter of known shape. Only what numpy and torch agree on is read:
arrays of literal numbers, `arange` and `linspace` of numbers, basic indexing
(ints, slices, None, ...), arithmetic with broadcasting, `outer`, elementwise
functions of one array (`np.cos`), `-a`, `a.T`, `a.shape`, a tensor's `numpy()` (of a
tensor that requires no grad, of a dtype numpy has); anything else of numpy's is not known. numpy's work costs nothing torch's flop counter sees.
"""

from __future__ import annotations

import ast
import math

from shapelint.analysis import indexing, scalars
from shapelint.notation.symbolic import Expr
from shapelint.ops import dtypes, values
from shapelint.ops.shape_rules import broadcast_shapes, nested_numbers
from shapelint.ops.values import (
    UNKNOWN,
    ArrayV,
    BoolV,
    FloatV,
    IntV,
    TensorV,
    TupleV,
    Value,
)

# numpy's dtype of an array of Python numbers of these kinds.
_KIND_DTYPE = {"bool": "bool", "int": "int64", "float": "float64"}
_FROM_DATA = ("numpy.array", "numpy.asarray")
_FILLED = ("numpy.zeros", "numpy.ones", "numpy.empty")
# Elementwise ufuncs of one array: its shape; a float array keeps its dtype.
_UNARY = frozenset(
    f"numpy.{f}" for f in ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "arctan")
)


def _dtype(v: Value | None, default: str | None) -> str | None:
    """The dtype= given (None where not; a literal None is numpy's default too)."""
    if v is None or isinstance(v, values.NoneV):
        return default
    named = isinstance(v, values.DtypeV) and v.name is not None
    return dtypes.canonical(v.name) if named else None  # type: ignore[union-attr,arg-type]


def call(qual: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """A numpy function's array, or None where it is not one read here."""
    if qual in _FROM_DATA and len(args) == 1 and set(kwargs) <= {"dtype"}:
        data = args[0]
        if isinstance(data, ArrayV):
            shape, kind = data.shape, data.dtype
        else:
            nested = nested_numbers(data)
            if nested is None or not nested[1]:
                return UNKNOWN
            shape = nested[0]
            kind = _KIND_DTYPE[max(nested[1], key=("bool", "int", "float").index)]
        return ArrayV(shape, _dtype(kwargs.get("dtype"), kind))
    if qual in _FILLED and len(args) == 1 and set(kwargs) <= {"dtype"}:
        size = args[0]
        items = size.items if isinstance(size, TupleV) else (size,)
        if not all(isinstance(i, IntV) and not isinstance(i, BoolV) for i in items):
            return UNKNOWN
        return ArrayV(tuple(i.value for i in items), _dtype(kwargs.get("dtype"), "float64"))  # type: ignore[attr-defined]
    if qual in _UNARY and len(args) == 1 and not kwargs and isinstance(args[0], ArrayV):
        x = args[0]
        return ArrayV(x.shape, x.dtype if x.dtype in ("float32", "float64") else None)
    if qual == "numpy.arange" and 1 <= len(args) <= 3 and set(kwargs) <= {"dtype"}:
        return _arange(args, kwargs.get("dtype"))
    if qual == "numpy.linspace" and len(args) >= 2:
        return _linspace(args, kwargs)
    if qual == "numpy.outer" and len(args) == 2 and not kwargs:
        sizes = [_size(a) for a in args]
        if None in sizes or not all(isinstance(a, ArrayV) for a in args):
            return UNKNOWN
        return ArrayV(tuple(sizes), _promoted(args[0], args[1], None))  # type: ignore[arg-type]
    return None


def _arange(args: list[Value], dtype: Value | None) -> Value:
    """`np.arange([start,] stop[, step])` of numbers: ceil((stop - start) / step)
    values (none where that is not positive), int64 for ints, else float64."""
    nums = [scalars.number(a) for a in args]
    if None in nums:
        return UNKNOWN
    start, stop, step = (0, nums[0], 1) if len(nums) == 1 else (*nums[:2], 1)
    if len(nums) == 3:
        step = nums[2]
    if step == 0:
        return UNKNOWN  # numpy raises
    n = max(0, math.ceil((stop - start) / step))  # type: ignore[operator]
    kind = "int64" if all(isinstance(a, IntV) for a in args) else "float64"
    return ArrayV((Expr.const(n),), _dtype(dtype, kind))


def _linspace(args: list[Value], kwargs: dict[str, Value]) -> Value:
    """`np.linspace(start, stop, num=50)` of scalar bounds: num values, float64 unless
    dtype= says (`retstep`, `axis` and array bounds not read)."""
    names = ("start", "stop", "num", "endpoint")
    if len(args) > len(names) or set(kwargs) - {*names[len(args) :], "dtype"}:
        return UNKNOWN
    given = dict(zip(names, args)) | kwargs
    if any(scalars.number(given[k]) is None for k in ("start", "stop")):
        return UNKNOWN
    num = given.get("num", IntV(Expr.const(50)))
    if not isinstance(num, IntV) or isinstance(num, BoolV) or num.value is None:
        return UNKNOWN
    if num.value.value is not None and num.value.value < 0:
        return UNKNOWN  # numpy raises
    return ArrayV((num.value,), _dtype(given.get("dtype"), "float64"))


def _size(v: Value) -> Expr | None:
    """The number of elements of an array of known shape (outer flattens)."""
    if not isinstance(v, ArrayV) or v.shape is None or None in v.shape:
        return None
    n = Expr.const(1)
    for d in v.shape:
        n = n * d  # type: ignore[operator]
    return n


def _promoted(a: Value, b: Value, op: ast.operator | None) -> str | None:
    """numpy's dtype of a ∘ b for arrays of bool, int64 and float64 and Python
    numbers (which take part by kind only); None where not one of those."""
    kinds = []
    for v in (a, b):
        if isinstance(v, ArrayV):
            kinds.append({"bool": 0, "int64": 1, "float64": 2}.get(v.dtype or ""))
        elif isinstance(v, (IntV, FloatV)) and not isinstance(v, BoolV):
            kinds.append(-1 if isinstance(v, IntV) else -2)
        else:
            return None
    if None in kinds:
        return None
    top = max(2 if k == -2 else k for k in kinds)  # type: ignore[operator]
    if top == 0 or (top == 1 and isinstance(op, ast.Div)):
        return None if top == 0 else "float64"
    return ("bool", "int64", "float64")[top]


_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def binop(op: ast.operator, left: Value, right: Value) -> Value:
    """An arithmetic operator where an operand is an array: numpy broadcasts as torch
    does. An array with a tensor is not read (which of the two is made depends on
    the operator's side)."""
    if not isinstance(op, _ARITHMETIC) or isinstance(left, TensorV) or isinstance(right, TensorV):
        return UNKNOWN
    shapes = []
    for v in (left, right):
        if isinstance(v, ArrayV):
            shapes.append(v.shape)
        elif isinstance(v, (IntV, FloatV)):
            shapes.append(())
        else:
            return UNKNOWN
    if None in shapes:
        return ArrayV(None, _promoted(left, right, op))
    shape, conflicts = broadcast_shapes(shapes[0], shapes[1])  # type: ignore[arg-type]
    if conflicts or shape is None:
        return UNKNOWN
    return ArrayV(shape, _promoted(left, right, op))


def _basic(sl: ast.expr, idx: Value) -> bool:
    """Indexing numpy and torch agree on: ints, slices, None and Ellipsis, spelled
    in the subscript."""
    elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    values = idx.items if isinstance(sl, ast.Tuple) and isinstance(idx, TupleV) else (idx,)
    if len(elts) != len(values):
        return False
    for e, v in zip(elts, values):
        if isinstance(e, ast.Slice) or (
            isinstance(e, ast.Constant) and (e.value is None or e.value is Ellipsis)
        ):
            continue
        if not isinstance(v, IntV) or isinstance(v, BoolV):
            return False
    return True


def index(base: ArrayV, sl: ast.expr, idx: Value) -> Value:
    """a[sl] by basic indexing: its shape as a tensor's."""
    if not _basic(sl, idx):
        return ArrayV(None, base.dtype)
    item = indexing.tensor_index(TensorV(base.shape, base.dtype), sl, idx)
    if not isinstance(item, TensorV):
        return ArrayV(None, base.dtype)
    return ArrayV(item.shape, base.dtype)


# torch's dtypes numpy has a type for: `Tensor.numpy()` raises TypeError on any other
_NUMPY_DTYPES = frozenset(
    "bool uint8 int8 int16 int32 int64 float16 float32 float64 complex64 complex128".split()
)


def from_tensor(
    t: TensorV, requires_grad: bool | None, default: str | None = None
) -> ArrayV | None:
    """`t.numpy()`: an array of t's shape and dtype, sharing its memory; None where
    torch may raise instead (a tensor that requires grad, a dtype numpy lacks) or
    the dtype is not known. default: the run's default float (`--dtype`; None:
    float32), the dtype of a tensor of dtype None."""
    dtype = (
        t.dtype
        if t.dtype is not None
        else dtypes.DTYPE_ALIASES.get(default or "", default or dtypes.DEFAULT_FLOAT)
    )
    if requires_grad is not False or dtype not in _NUMPY_DTYPES:
        return None
    return ArrayV(t.shape, dtype)


def negative(a: ArrayV) -> Value:
    """`-a`: numpy's negative, of a's shape and dtype (a bool array raises)."""
    return ArrayV(a.shape, a.dtype) if a.dtype not in (None, "bool") else UNKNOWN


def attribute(a: ArrayV, name: str) -> Value | None:
    """`a.T` (the axes reversed), `a.shape`, `a.ndim`; None: not one read here."""
    if a.shape is None or any(not isinstance(d, Expr) for d in a.shape):
        return UNKNOWN if name in ("T", "shape", "ndim") else None
    if name == "T":
        return ArrayV(tuple(reversed(a.shape)), a.dtype)
    if name == "shape":
        return TupleV(tuple(IntV(d) for d in a.shape), "tuple")
    if name == "ndim":
        return IntV(Expr.const(len(a.shape)))
    return None
