"""Abstract values the interpreter tracks, and the result every op returns.

Unknown stays unknown: an op that cannot tell returns UNKNOWN (or a tensor of
unknown rank) and never reports an error from a guess.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Any

from shapelint.frozen_init import fast_init
from shapelint.notation.symbolic import Expr, bounded, bounded_dims, product
from shapelint.ops.dtypes import result_type


def replaced(obj: Any, /, **changes: Any) -> Any:
    """`dataclasses.replace(obj, **changes)` for this package's dataclasses: the
    same new object, its `__init__` and `__post_init__` run on the same arguments,
    without replace's test of every field's kind at each call (an op's result is
    remade several times: its origin, its grad, its storage). changes name fields
    `__init__` takes, as replace requires; a class with an InitVar or a ClassVar
    pseudo-field (none here) goes to replace itself."""
    cls = obj.__class__
    names = _INIT_FIELDS.get(cls)
    if names is None:
        names = _INIT_FIELDS[cls] = _init_fields(cls)
    if not names:
        return dataclasses.replace(obj, **changes)
    for name in names[0]:
        if name not in changes:
            changes[name] = getattr(obj, name)
    return cls(**changes)


def _init_fields(cls: type) -> tuple:
    """(the names of cls's fields its __init__ takes,), or () where replace's
    own checks are needed."""
    declared = cls.__dataclass_fields__  # type: ignore[attr-defined]
    fields = dataclasses.fields(cls)  # (without the pseudo-fields)
    if len(fields) != len(declared):
        return ()
    return (tuple(f.name for f in fields if f.init),)


_INIT_FIELDS: dict[type, tuple] = {}


@fast_init
@dataclass(frozen=True, slots=True)
class Var:
    """Zero or more dimensions bound together (jaxtyping ``*batch`` or ``...``).

    Its element count is the symbolic ``Expr.name(name)``: the product of the
    dimensions it stands for.
    """

    name: str

    def __str__(self) -> str:
        # Anonymous variadics (`...`, `*_`) get generated names starting with "_".
        return "..." if self.name.startswith("_") else f"*{self.name}"


_fresh = itertools.count()


def fresh_var() -> Var:
    """A variadic no code names: printed as `...`, its size as `?`."""
    return Var(f"_v{next(_fresh)}")


# One entry of a shape: a size expression, None for an unknown size, or a Var.
Dim = Expr | None | Var


def dim_str(d: Dim) -> str:
    if d is None:
        return "?"
    if isinstance(d, Var):
        return str(d)
    return d.to_human()


def dim_py(d: Dim) -> str | None:
    if d is None:
        return None
    if isinstance(d, Var):
        return f"*{d.name}"
    return d.to_python()


class Value:
    """Base class of abstract values."""

    __slots__ = ()


class _Unknown(Value):
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


@fast_init
@dataclass(frozen=True, slots=True)
class TensorV(Value):
    """A tensor. shape None: rank unknown. dtype None: unknown (costs use the default)."""

    shape: tuple[Dim, ...] | None = None
    dtype: str | None = None
    # Whether autograd tracks it (it derives from a trainable parameter): None
    # where the analysis cannot tell. ops/backward.py reads it through requires().
    grad: bool | None = field(default=None, kw_only=True)
    # Which storage it is (ops/saved.py), outside equality: None, the tensor is its
    # own storage; else the tensor whose storage it shares (a view, an in-place
    # result, the same tensor with a shape learnt). view: it may be a part of that
    # storage. contiguous: True; PERMUTED (a transpose of a contiguous tensor); SWAPPED
    # (its last two axes swapped, the leading ones in place); GAPPED
    # (a part of longer rows, which no reordering makes contiguous); None (not known).
    storage: object = field(default=None, kw_only=True, compare=False, repr=False)
    view: bool = field(default=False, kw_only=True, compare=False, repr=False)
    contiguous: object = field(default=True, kw_only=True, compare=False, repr=False)
    # Its strides where known: (sizes, strides) as ints (ops/strides.py), or as
    # formulas where some size is a name (ops/sym_strides.py), which hold only while
    # sizes are its shape's; None: a contiguous tensor's where contiguous is True,
    # else not known.
    layout: object = field(default=None, kw_only=True, compare=False, repr=False)
    # Which ops made it (ops/backward.py's Origin nodes), outside equality: the
    # graph backward walks from the loss. None: not known (a tensor the analysis
    # made without following the op, or lost on the way).
    origin: frozenset | None = field(default=None, kw_only=True, compare=False, repr=False)
    # Axes whose length is not known but has upper bounds, as (position, bounds):
    # `pos[:, :n]` of a dim of k is min(n, k) long, so it cannot meet a size above n.
    # Outside equality; an op that builds a new shape drops it.
    at_most: tuple[tuple[int, tuple[Expr, ...]], ...] = field(
        default=(), kw_only=True, compare=False, repr=False
    )
    # Its elements, where a small integer tensor's are known (ops/tensor_values.py's
    # Known, which says whether they still hold); None: not known.
    known: object = field(default=None, kw_only=True, repr=False)

    def __post_init__(self) -> None:
        # A size past the budget is unknown; a quotient an op proved exact cancels.
        if self.shape is not None:
            dims = bounded_dims(self.shape)
            if dims is not self.shape:
                object.__setattr__(self, "shape", dims)

    @property
    def rank(self) -> int | None:
        if self.shape is None or any(isinstance(d, Var) for d in self.shape):
            return None
        return len(self.shape)

    @property
    def min_rank(self) -> int:
        if self.shape is None:
            return 0
        return sum(1 for d in self.shape if not isinstance(d, Var))

    def numel(self) -> Expr | None:
        """Element count; a Var counts as its own symbolic product."""
        if self.shape is None or any(d is None for d in self.shape):
            return None
        return product(Expr.name(d.name) if isinstance(d, Var) else d for d in self.shape)

    def shape_str(self) -> str:
        if self.shape is None:
            return "[?...]"
        return "[" + ", ".join(dim_str(d) for d in self.shape) + "]"


@fast_init
@dataclass(frozen=True, slots=True)
class ParameterV(TensorV):
    """An nn.Parameter: a tensor a module registers as its parameter.
    requires_grad None: not known (a freeze the analysis cannot follow)."""

    requires_grad: bool | None = True


@fast_init
@dataclass(frozen=True, slots=True)
class ArrayV(Value):
    """A numpy array: its shape and numpy dtype (None: not known). No tensor: torch's
    ops refuse it but for the constructors that copy it (`torch.Tensor(a)`,
    `torch.from_numpy(a)`); what numpy computes, no flop counter of torch's sees."""

    shape: tuple[Dim, ...] | None = None
    dtype: str | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class BufferV(TensorV):
    """A tensor a module registers as a buffer (register_buffer, a layer's running
    statistics): part of its state, not of its parameters."""

    # The tensor register_buffer was given, outside equality: torch's buffers()
    # yields one tensor once, however many names or modules hold it. None: a
    # tensor of its own (a layer's running statistics, nn.Buffer's).
    of: object = field(default=None, kw_only=True, compare=False, repr=False)


def as_buffer(value: TensorV) -> BufferV:
    """`register_buffer(name, value)`: the very tensor, now a buffer. A buffer
    given again is the one object it already is."""
    if isinstance(value, BufferV):
        return value
    return BufferV(value.shape, value.dtype, known=value.known, of=value)


@fast_init
@dataclass(frozen=True, slots=True)
class IntV(Value):
    """An integer: known symbolically (Expr) or None for an int of unknown value."""

    value: Expr | None = None

    def __post_init__(self) -> None:
        if self.value is not None:
            v = bounded(self.value)
            if v is not self.value:
                object.__setattr__(self, "value", v)


@fast_init
@dataclass(frozen=True, slots=True)
class FloatV(Value):
    value: float | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class ComplexV(Value):
    """A Python complex number (`1j`): a scalar that makes a real tensor it meets in
    an elementwise op complex (torch.result_type)."""

    value: complex | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class StrV(Value):
    value: str | None = None
    # A literal of name characters only, which CPython interns when it compiles
    # the code: two such literals of one text are one object (`kind is 'proj'`).
    # Outside equality: the flag says which object, not which value.
    interned: bool = field(default=False, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class BoolV(Value):
    value: bool | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class NoneV(Value):
    pass


@fast_init
@dataclass(frozen=True, slots=True)
class NoneBufferV(NoneV):
    """None registered as a buffer (`register_buffer(name, None)`): None where it
    is read, while the module's `_buffers` keeps the name, so a later
    `register_buffer(name, t)` stores t there, where over a plain attribute torch
    raises KeyError."""


@fast_init
@dataclass(frozen=True, slots=True)
class OptionalV(Value):
    """None, or `value` where a caller gives one: a constructor parameter whose
    default is None (`hidden_features: Optional[int] = None`). Its truth and whether
    it `is None` are not known; `p or q` and `default(p, q)` are the size p names once
    given (the analysis relates it to nothing else, so q's case is covered too)."""

    value: Value


def dtype_of(v: Value) -> str | None:
    """A tensor's dtype; None for anything else or when unknown."""
    return v.dtype if isinstance(v, TensorV) else None


# The value of a small int literal, shared (values are immutable): the
# interpreter makes one for every literal it evaluates.
_SMALL = 4096
_SMALL_INTS: dict[int, IntV] = {}


def constant_value(v: object) -> Value:
    """The abstract value of a Python constant (a literal in source, or a value
    a test hands over): bool before int, since bool is an int."""
    if isinstance(v, bool):
        return BoolV(v)
    if isinstance(v, int):
        iv = _SMALL_INTS.get(v)
        if iv is None:
            iv = IntV(Expr.const(v))
            if -_SMALL <= v <= _SMALL:
                _SMALL_INTS[v] = iv
        return iv
    if isinstance(v, float):
        return FloatV(v)
    if isinstance(v, complex):
        return ComplexV(v)
    if isinstance(v, str):
        return StrV(v)
    if v is None:
        return NoneV()
    return UNKNOWN


def python_constant(v: Value):
    """(True, the Python value) of a value known exactly, else (False, None): the
    inverse of constant_value, tuples included."""
    if isinstance(v, NoneV):
        return True, None
    if isinstance(v, IntV) and v.value is not None and v.value.value is not None:
        return True, v.value.value
    if isinstance(v, (BoolV, FloatV, ComplexV, StrV)) and v.value is not None:
        return True, v.value
    if isinstance(v, TupleV):
        parts = [python_constant(i) for i in v.items]
        if all(ok for ok, _ in parts):
            return True, tuple(p for _, p in parts)
    return False, None


@fast_init
@dataclass(frozen=True, slots=True)
class TupleV(Value):
    """A tuple or list of abstract values (``x.shape`` is a TupleV of IntV).

    `kind` is "tuple" or "list" where the value is surely that (a display, `list(x)`),
    None where it may be either; equality ignores it (a join of two kinds drops it)."""

    items: tuple[Value, ...]
    kind: str | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class SliceV(Value):
    """`lo:hi:step` inside a subscript, each bound a value (None when absent)."""

    lower: Value | None = None
    upper: Value | None = None
    step: Value | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class DtypeV(Value):
    """A torch dtype object such as ``torch.bfloat16`` (canonical name); numpy: one of
    numpy's scalar types (``numpy.float32``), never equal to a torch dtype. name
    None: the dtype of a tensor whose dtype the analysis does not name (`x.dtype`
    of an input given no dtype): whatever it is, `ids.to(x.dtype)` is of it, and
    no device, which `.to` would take and keep ids' dtype for."""

    name: str | None
    numpy: bool = False


@fast_init
@dataclass(frozen=True, slots=True)
class DeviceV(Value):
    """A torch.device (`x.device`): where a tensor lives, which no shape, dtype or
    cost here depends on; `x.to(d)` of one keeps x's dtype."""


DICT_KIND = "<dict>"  # the ObjectV of a dict, OrderedDict, SimpleNamespace: attrs by key


@fast_init
@dataclass(frozen=True, slots=True)
class ObjectV(Value):
    """An instance the analysis knows something about: an nn.Linear, a layer, a
    same-module class instance. ``kind`` is a qualified name; ``attrs`` holds
    what the constructor told us (e.g. in_features/out_features)."""

    kind: str
    attrs: tuple[tuple[str, Value], ...] = ()

    def attr(self, name: str) -> Value:
        for k, v in self.attrs:
            if k == name:
                return v
        return UNKNOWN


DERIVE: Any = object()  # the default of Cost.backward: derived from flops


@dataclass
class Cost:
    """What one call costs. flops follows torch.utils.flop_counter (2 per
    multiply-add of the matrix products torch runs); other_flops counts
    elementwise and reduction work, reported beside it, never mixed in."""

    flops: Expr | None = None
    other_flops: Expr | None = None
    bytes: Expr | None = None
    notes: list[str] = field(default_factory=list)
    # False when a part of the cost is unknown although flops has a value (a
    # same-module callee with calls of unknown cost).
    complete: bool = True
    # The FLOPs of its backward under `out.sum().backward()`, as torch's flop
    # counter counts them (ops/backward.py); None: unknown. Left out, it is 0
    # where the forward's FLOPs are a known 0 (no matrix product runs backward
    # where none ran forward) and unknown otherwise, so that a sum nobody taught
    # about backward never passes for a figure.
    backward: Expr | None = field(default=DERIVE, kw_only=True)  # type: ignore[assignment]
    # The bytes of the tensors it saves for backward that no earlier call saved
    # (ops/saved.py); None: unknown. Left out, it is 0 for a call that does no
    # arithmetic (a view, a creation) and unknown otherwise.
    saved: Expr | None = field(default=DERIVE, kw_only=True)  # type: ignore[assignment]
    # What a stub says the op saves, before ops/saved.py weighs it (None: no rule).
    saving: tuple | None = field(default=None, kw_only=True, compare=False, repr=False)
    # A stub rule's items of a tuple result reached apart (shape_rules.RuleOut.alone),
    # before ops/backward.after_op gives each its node.
    alone: tuple = field(default=(), kw_only=True, compare=False, repr=False)

    def __post_init__(self) -> None:
        zero = Expr.const(0)
        if self.backward is DERIVE:
            self.backward = zero if self.flops == zero else None
        if self.saved is DERIVE:
            idle = self.flops == zero and (self.other_flops is None or self.other_flops == zero)
            self.saved = zero if idle else None
        self.simplify()

    def simplify(self) -> None:
        """Past the size budget a figure is unknown; a flop count that becomes
        unknown so makes the cost incomplete. Quotients the scope knows exact cancel."""
        if self.flops is not None and self.flops.is_too_big():
            self.complete = False
        self.flops = bounded(self.flops)
        self.other_flops = bounded(self.other_flops)
        self.bytes = bounded(self.bytes)
        self.backward = bounded(self.backward)
        self.saved = bounded(self.saved)


# The cost a call gets where no face reads costs (`check`, AnalysisOptions.costs):
# one shared object, never changed (each Cost made runs the size budget over its
# figures). A known 0, so that what goes on the record is decided as with figures.
STAND_IN_COST = Cost(Expr.const(0), Expr.const(0), Expr.const(0))


@fast_init
@dataclass(frozen=True, slots=True)
class OpIssue:
    """A diagnostic an op raises, before it has a file position.

    ``where`` says what it points at: ("pattern", start, end) offsets in the
    pattern string, ("arg", i) the i-th positional argument, ("kwarg", name),
    or ("call",) the whole call.
    """

    code: str
    message: str
    where: tuple = ("call",)
    # A conflict between formulas (`n` and `n + 1`) holds only while each name is
    # one size: the names it rests on, for the analysis to drop it where a name was
    # given by learning (two uses may have named two dims alike).
    names: frozenset = frozenset()
    # Two independent sizes the op needs equal (`dim`, `hidden_dim`: constructor
    # parameters nothing relates): the conflict holds unless a caller passes equal values.
    assumes: tuple = ()
    # The two formulas themselves, where `assumes` names two of the constructor's: the
    # constraint the constructions of the class discharge (analysis/size_ties.py).
    sides: tuple = ()
    # `assumes` pairs a size a use named (an einops axis) with the constructor's.
    learned: bool = False
    # Sizes an op before on this path fixed (`dim = 48`: LayerNorm(dim) took an
    # input of 48), that the conflict rests on.
    given: tuple = ()


@dataclass
class OpResult:
    value: Value = UNKNOWN
    cost: Cost = field(default_factory=Cost)
    issues: list[OpIssue] = field(default_factory=list)
    # What the op's signature says about its tensor inputs (index among the
    # tensors the op was given -> a more precise value): the analysis carries it
    # back to the variables they came from.
    refined: dict[int, TensorV] = field(default_factory=dict)


def promoted_dtype(operands) -> str | None:
    """The dtype torch.result_type gives an elementwise op of operands: tensors,
    Python bools / ints / floats / complexes, None (an operand left out) skipped; None where a
    dtype is not known or an operand is something else. A tensor whose rank is not
    known may be 0-dim (a lower tier) or not: the answer only where both agree."""
    dims: list[str | None] = []
    zero: list[str | None] = []
    unranked: list[str | None] = []
    scalars: list[str] = []
    for v in operands:
        if isinstance(v, TensorV):
            (unranked if v.shape is None else zero if v.shape == () else dims).append(v.dtype)
        elif isinstance(v, BoolV):
            scalars.append("bool")
        elif isinstance(v, IntV):
            scalars.append("int")
        elif isinstance(v, FloatV):
            scalars.append("float")
        elif isinstance(v, ComplexV):
            scalars.append("complex")
        elif not isinstance(v, NoneV):
            return None
    as_dims = result_type(dims + unranked, zero, scalars)
    if not unranked:
        return as_dims
    return as_dims if as_dims == result_type(dims, zero + unranked, scalars) else None


def tracked(v: Value) -> bool | None:
    """Whether autograd tracks tensor v (None: not known)."""
    if isinstance(v, ParameterV):
        return v.requires_grad
    if isinstance(v, BufferV):
        return False
    if isinstance(v, TensorV):
        return v.grad
    return None
