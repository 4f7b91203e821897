"""A module's dtype casts: `m.half()`, `float()`, `double()`, `bfloat16()`,
`to(dtype)`, `to(device, dtype)`, `to(tensor)`, `to(dtype=...)`, `type(dtype)`.

torch's `Module._apply` changes every Parameter and buffer of m and of each module
below it in place (a Parameter keeps its object: `param.data = fn(param.data)`) and
returns m. `half` / `float` / `double` / `bfloat16` cast the floating ones, `to` the
floating and complex ones, `type` every one. The dtype then flows into what reads
them: the bytes of the parameters and of the activations, and the ops that require
one dtype of their operands (ops/dtype_match.py: a float32 input into a `.half()`
Linear is torch's `mat1 and mat2 must have the same dtype`).

Followed where modules are built and in a target run's forward, each module one
object wherever it is held (`holders.each_changed`, as module_flags follows
`.eval()`); a dtype the analysis cannot read (`m.to(cfg.dtype)`, `m.to(u)` of a u
not known, which may be a dtype) leaves the tensors it would cast of a dtype not
known."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from shapelint.analysis.module_flags import changed_in_place, modules_below, reached_below
from shapelint.analysis.module_lists import ModuleListV
from shapelint.analysis.recorder import SelfRecorder
from shapelint.notation.symbolic import Expr
from shapelint.ops import dtypes
from shapelint.ops.values import (
    BoolV,
    BufferV,
    DeviceV,
    DtypeV,
    IntV,
    NoneV,
    ParameterV,
    StrV,
    TensorV,
    Value,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

# nn.Module's casts without arguments, and the dtype each gives a floating tensor.
_NAMED = {"half": "float16", "float": "float32", "double": "float64", "bfloat16": "bfloat16"}
METHODS = frozenset({*_NAMED, "to", "type"})

# Which tensors a cast reaches: the floating ones (half...), floating and complex
# (to), every one (type).
_FLOAT, _FLOAT_OR_COMPLEX, _EVERY = (2,), (2, 3), (0, 1, 2, 3)


class _Cast:
    """What one call does: the dtype (None: the run's default float) the tensors of
    the categories in `reaches` take."""

    __slots__ = ("dtype", "reaches")

    def __init__(self, dtype: str | None, reaches: tuple[int, ...]):
        self.dtype = dtype
        self.reaches = reaches

    def of(self, t: TensorV) -> TensorV:
        d = t.dtype
        if d == dtypes.NOT_KNOWN and self.reaches != _EVERY:
            return t  # may be an integer one, which the cast leaves: not known either way
        if d == dtypes.FLOAT_NOT_KNOWN:
            category = 2
        elif d == dtypes.COMPLEX_NOT_KNOWN:
            category = 3
        else:
            category = 2 if d is None else dtypes.category(d) if d != dtypes.NOT_KNOWN else 0
        if category not in self.reaches or d == self.dtype:
            return t
        return _with_dtype(t, self.dtype)


def _with_dtype(t: TensorV, dtype: str | None) -> TensorV:
    """t, the same Parameter or buffer, of another dtype (its values cast)."""
    return replace(t, dtype=dtype, known=None)


def _dtype_named(v: Value) -> tuple[bool, str | None]:
    """(whether v may name a dtype, the dtype it names: None the run's default
    float, NOT_KNOWN one the analysis cannot read)."""
    if isinstance(v, DtypeV):
        if v.numpy:
            return True, dtypes.NOT_KNOWN
        # name None: `x.dtype` of a tensor given none, the run's default float
        return True, v.name
    if isinstance(v, TensorV):
        return True, v.dtype
    if isinstance(v, (StrV, DeviceV, IntV, NoneV)):
        return False, None  # a device (or none)
    return True, dtypes.NOT_KNOWN


def cast_of(attr: str, args: list, kwargs: dict) -> _Cast | None:
    """The cast `m.<attr>(*args, **kwargs)` makes; None where it changes no dtype
    (a device alone) or is no call torch takes as written."""
    if attr in _NAMED:
        return _Cast(_NAMED[attr], _FLOAT) if not args and not kwargs else None
    if attr == "type":
        given = args[0] if len(args) == 1 and not kwargs else kwargs.get("dst_type")
        if given is None or len(args) + len(kwargs) != 1:
            return None
        if isinstance(given, StrV) and given.value is not None:
            return _Cast(dtypes.legacy_type(given.value) or dtypes.NOT_KNOWN, _EVERY)
        may, named = _dtype_named(given)
        return _Cast(named, _EVERY) if may and not isinstance(given, TensorV) else None
    if attr != "to" or set(kwargs) - {"device", "dtype", "non_blocking", "memory_format"}:
        return None
    if "dtype" in kwargs:
        if len(args) > 1:
            return None
        return _to(*_dtype_named(kwargs["dtype"]))
    if not args or len(args) > 4:
        return None  # `m.to(device=...)` alone moves it
    first = args[0]
    if isinstance(first, (DtypeV, TensorV)):
        return _to(*_dtype_named(first))  # to(dtype, ...), to(tensor, ...)
    if len(args) > 1 and not isinstance(args[1], BoolV):
        return _to(*_dtype_named(args[1]))  # to(device, dtype, ...)
    if isinstance(first, (StrV, DeviceV, IntV, NoneV)):
        return None  # `m.to("cuda")`, `m.to(0)`: a device alone
    return _to(*_dtype_named(first))  # a device, or a dtype not read


def _to(may: bool, named: str | None) -> _Cast | None:
    """Module.to's cast of the floating and complex tensors; an integer or bool
    dtype, which torch refuses (`nn.Module.to only accepts floating point or
    complex dtypes`), is not followed."""
    if not may or (named is not None and not dtypes.unnamed(named) and dtypes.category(named) < 2):
        return None
    return _Cast(named, _FLOAT_OR_COMPLEX)


def cast(
    an: Analyzer,
    recv: Value,
    attr: str,
    args: list,
    kwargs: dict,
    owner: SelfRecorder | None,
    frame,
    fresh: bool = False,
) -> tuple[Value, Expr | None] | None:
    """`m.half()` and the others: m, each of its tensors and its submodules' at the
    dtype the call gives, wherever they are held, and the bytes the cast moves (each
    tensor it changes read and written anew, as `Tensor.half` moves them; None: not
    known); None where the call is no cast."""
    how = cast_of(attr, args, kwargs)
    if how is None:
        return None
    reached = reached_below(recv, modules_below)
    registered = {
        id(a): a
        for m in reached.values()
        for a in (m.items if isinstance(m, ModuleListV) else (a for _, a in m.attrs))
        if isinstance(a, (ParameterV, BufferV))
    }
    if isinstance(recv, SelfRecorder):
        registered.update(
            {id(a): a for a in recv.attrs.values() if isinstance(a, (ParameterV, BufferV))}
        )
    moved: list[Expr | None] = []

    def then(old: Value, new: Value) -> Value:
        if id(old) not in registered or not isinstance(new, TensorV):
            return new
        made = how.of(new)
        if made is not new:
            moved.extend((_nbytes(new), _nbytes(made)))
        return made

    owners = None if owner is None else [owner]
    made, _ = changed_in_place(an, recv, then, owners, frame, fresh)
    total = None if any(b is None for b in moved) else sum(moved, Expr.const(0))
    return made, total


def _nbytes(t: TensorV) -> Expr | None:
    n, item = t.numel(), dtypes.dtype_bytes(t.dtype)
    return None if n is None or item is None else n * item
