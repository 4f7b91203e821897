"""The values of small integer tensors, known as Python ints are known.

`torch.tensor([1, 0])`, `torch.arange(2, x.ndim)`, their `torch.cat`, a comparison
with a number (`torch.as_tensor(0) == 0`) hold numbers the code then reads back:
unpacked into `x.permute(*perm)` (torch takes a 0-d integer tensor wherever it takes
an int, through `__index__`), tested by an `if`, `.item()`. A tensor of at most
`LIMIT` elements of an integer or bool dtype keeps its elements (`TensorV.known`,
a `Known`), through the ops of this module only: any other op makes a tensor
without them.

The analysis holds values, not memory: a write into a tensor changes no value it
holds. So a write is told here (`wrote`): it makes the elements of the tensor
written, and of the storage it is a view of, no longer known (`Known.stale`, shared
by every copy of the value, whatever name or holder has it); a write into a
storage the analysis cannot name, or a call it does not follow, which may write
into any tensor, makes every element known so far no longer known (`forget_all`).

A pass the run does not make (a function's summary over parameters not known,
entered with `Apart`) forgets for its own length only: its unknown call runs in no
target, so the elements the run knew before it hold again after it; the ones it
made itself do not.
"""

from __future__ import annotations

import math

from shapelint.notation.symbolic import Expr
from shapelint.ops.dtypes import unnamed
from shapelint.ops.values import UNKNOWN, BoolV, IntV, TensorV, TupleV, Value, replaced

# The most elements a tensor keeps: index lists, permutations, flags.
LIMIT = 64

# One level per pass entered with Apart, the run's at the bottom: [epoch, forgot],
# the epoch the Known objects made there carry (a forget gives the level a new one)
# and whether a forget there hides the levels below while it lasts.
_LEVELS: list[list] = [[0, False]]
_NEXT = [1]


def _current(epoch: int) -> bool:
    for level in reversed(_LEVELS):
        if level[0] == epoch:
            return True
        if level[1]:
            return False
    return False


class Apart:
    """`with Apart():` a pass of its own, whose forgets end with it."""

    __slots__ = ()

    def __enter__(self) -> None:
        _LEVELS.append([_NEXT[0], False])
        _NEXT[0] += 1

    def __exit__(self, *exc: object) -> None:
        _LEVELS.pop()


class Known:
    """A tensor's elements, flat in row-major order (ints; bools for a bool tensor).
    Whether they still hold is `valid`. Two records are equal where they are one, or
    both hold the same elements: a join of two paths keeps one of two equal values,
    and a write made on one path must not be lost there."""

    __slots__ = ("items", "epoch", "stale", "base")

    def __init__(self, items: tuple, base: Known | None = None) -> None:
        self.items = items
        self.epoch = _LEVELS[-1][0]
        self.stale = False
        self.base = base  # a view's: a write into the tensor it views

    def valid(self) -> bool:
        k: Known | None = self
        while k is not None:
            if k.stale or not _current(k.epoch):
                return False
            k = k.base
        return True

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (
            isinstance(other, Known)
            and other.items == self.items
            and self.valid()
            and other.valid()
        )

    def __hash__(self) -> int:
        return hash(self.items)

    def __repr__(self) -> str:
        return f"Known{self.items}"


def forget_all() -> None:
    """Every element known so far no longer is (a write that may reach any tensor)."""
    level = _LEVELS[-1]
    level[0], level[1] = _NEXT[0], True
    _NEXT[0] += 1


def wrote(v: Value) -> None:
    """A write into tensor v: its elements, and its storage's, are no longer known."""
    if not isinstance(v, TensorV):
        return
    if isinstance(v.known, Known):
        v.known.stale = True
    base = v.storage
    if isinstance(base, TensorV) and isinstance(base.known, Known):
        base.known.stale = True
    elif base is not None and not isinstance(base, TensorV):
        forget_all()  # a storage not named by a tensor: any may be it


# Python's in-place operators on a tensor, and a subscript store.
_WRITING_DUNDERS = frozenset(
    f"__i{op}__"
    for op in ("add sub mul matmul truediv floordiv mod pow and or xor lshift rshift".split())
) | {"__setitem__"}


# A tensor's memory handed to code that writes where the analysis does not see.
_HANDED_OUT = frozenset({"numpy", "__array__", "data_ptr", "untyped_storage", "storage"})


def before_op(name: str, args: list[Value], kwargs: dict[str, Value]) -> None:
    """What op `name` writes into: its first argument where it works in place
    (`add_`, `nn.init.zeros_`, `+=`), and its `out=`."""
    short = name.rsplit(".", 1)[-1]
    if args and (
        (short.endswith("_") and not short.endswith("__"))
        or short in _WRITING_DUNDERS
        or short in _HANDED_OUT
    ):
        wrote(args[0])
    out = kwargs.get("out")
    if out is not None:
        for t in out.items if isinstance(out, TupleV) else (out,):
            wrote(t)


def _sizes(v: TensorV) -> list[int] | None:
    if v.shape is None:
        return None
    out = []
    for d in v.shape:
        if not isinstance(d, Expr) or d.value is None:
            return None
        out.append(d.value)
    return out


# The dtypes whose elements are kept, with the ints each holds, [low, high): a
# number outside them torch refuses (or wraps), and the elements are then not known.
_KINDS = {
    "int64": (-(2**63), 2**63),
    "int32": (-(2**31), 2**31),
    "int16": (-(2**15), 2**15),
    "int8": (-(2**7), 2**7),
    "uint8": (0, 2**8),
    "bool": (0, 2),
}


def _exact_kind(v: TensorV) -> bool:
    return v.dtype in _KINDS


def elements(v: Value) -> tuple | None:
    """v's elements, flat, where v is a tensor whose elements are known."""
    if not isinstance(v, TensorV) or not isinstance(v.known, Known) or not v.known.valid():
        return None
    sizes = _sizes(v)
    if sizes is None or math.prod(sizes) != len(v.known.items) or not _exact_kind(v):
        return None
    return v.known.items


def scalar(v: Value) -> int | bool | None:
    """The one element of a tensor of one known element (a 0-d index tensor)."""
    items = elements(v)
    return items[0] if items is not None and len(items) == 1 else None


def index_of(v: Value) -> IntV | None:
    """A 0-d integer tensor of known value as the int `__index__` gives."""
    if not isinstance(v, TensorV) or v.shape != () or v.dtype == "bool" or unnamed(v.dtype):
        return None
    n = scalar(v)
    return None if n is None else IntV(Expr.const(int(n)))


def python_number(v: Value) -> Value | None:
    """`.item()` of a tensor of one known element."""
    n = scalar(v)
    if n is None or (isinstance(v, TensorV) and unnamed(v.dtype)):
        return None
    return BoolV(bool(n)) if isinstance(v, TensorV) and v.dtype == "bool" else IntV(Expr.const(n))


def items(v: Value) -> tuple[Value, ...] | None:
    """A 1-d tensor of known elements iterated (`*perm`): its 0-d views."""
    elems = elements(v)
    if elems is None or not isinstance(v, TensorV) or len(v.shape or ()) != 1:
        return None
    base = v.known
    storage = v if v.storage is None else v.storage
    return tuple(
        with_known(TensorV((), v.dtype, grad=v.grad, storage=storage, view=True), (e,), base)
        for e in elems
    )


def with_known(t: TensorV, elems: tuple, base: Known | None = None) -> TensorV:
    return replaced(t, known=Known(elems, base))


def _const(v: Value) -> int | None:
    if isinstance(v, BoolV):
        return None if v.value is None else int(v.value)
    if isinstance(v, IntV) and v.value is not None:
        return v.value.value
    return None


def _flat_ints(v: Value, out: list) -> bool:
    """The ints and bools of nested lists of Python ints and bools, flat (refine
    reads them as the result's dtype says: `torch.tensor(True)` is a bool tensor,
    `torch.tensor([True, 2])` an int64 one); False for anything else."""
    if isinstance(v, TupleV):
        return all(_flat_ints(i, out) for i in v.items)
    if isinstance(v, BoolV) and v.value is not None:
        out.append(v.value)
        return len(out) <= LIMIT
    if isinstance(v, BoolV) or not isinstance(v, IntV):
        return False
    n = _const(v)
    if n is None:
        return False
    out.append(n)
    return len(out) <= LIMIT


_COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}


def _compare_name(name: str) -> str | None:
    short = name.rsplit(".", 1)[-1].strip("_")
    if short in _COMPARE and (
        name.startswith(("operator.", "torch.Tensor.__")) or name == f"torch.{short}"
    ):
        return short
    return None


def refine(name: str, args: list[Value], kwargs: dict[str, Value], out: Value) -> Value:
    """out, the result of op `name`, with its elements where this module knows them."""
    if not isinstance(out, TensorV) or not _exact_kind(out):
        return out
    sizes = _sizes(out)
    if sizes is None or math.prod(sizes) > LIMIT:
        return out
    elems = _elements_of(name, args, kwargs)
    if elems is None or len(elems) != math.prod(sizes):
        return out
    low, high = _KINDS[out.dtype]  # type: ignore[index]
    if out.dtype != "bool" and any(not low <= e < high for e in elems):
        return out  # torch would wrap or refuse it
    if out.dtype == "bool":
        elems = tuple(bool(e) for e in elems)
    elif any(isinstance(e, bool) for e in elems):
        elems = tuple(int(e) for e in elems)
    return with_known(out, elems)


def _elements_of(name: str, args: list[Value], kwargs: dict[str, Value]) -> tuple | None:
    if name in ("torch.tensor", "torch.as_tensor"):
        data = args[0] if args else kwargs.get("data", UNKNOWN)
        if isinstance(data, TensorV):
            return elements(data) if name == "torch.as_tensor" else None
        flat: list = []
        return tuple(flat) if _flat_ints(data, flat) else None
    if name == "torch.arange":
        return _arange(args, kwargs)
    if name in ("torch.cat", "torch.concat", "torch.concatenate"):
        return _cat(args, kwargs)
    op = _compare_name(name)
    if op is not None and len(args) == 2 and not kwargs:
        return _compared(_COMPARE[op], args[0], args[1])
    return None


def _arange(args: list[Value], kwargs: dict[str, Value]) -> tuple | None:
    given = list(args[:3])
    for k in ("start", "end", "step")[len(given) :]:
        if k in kwargs:
            given.append(kwargs[k])
    if (
        not given
        or len(given) > 3
        or any(k in kwargs for k in ("start", "end", "step")[: len(args)])
    ):
        return None
    nums = [_const(v) if not isinstance(v, BoolV) else None for v in given]
    if None in nums:
        return None
    if len(nums) == 1:
        nums = [0, nums[0], 1]
    elif len(nums) == 2:
        nums.append(1)
    start, end, step = nums
    if step == 0:
        return None
    r = range(start, end, step)  # type: ignore[arg-type]
    return tuple(r) if len(r) <= LIMIT else None


def _cat(args: list[Value], kwargs: dict[str, Value]) -> tuple | None:
    tensors = args[0] if args else kwargs.get("tensors", UNKNOWN)
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if dim is not None and _const(dim) not in (0, -1):
        return None
    if not isinstance(tensors, TupleV) or not tensors.items:
        return None
    out: list = []
    for t in tensors.items:
        elems = elements(t)
        if elems is None or len(t.shape) != 1:  # type: ignore[union-attr, arg-type]
            return None
        out.extend(elems)
    return tuple(out)


def _compared(fn, a: Value, b: Value) -> tuple | None:
    left, right = _operand(a), _operand(b)
    if left is None or right is None:
        return None
    if len(left) == 1:
        left = left * len(right)
    elif len(right) == 1:
        right = right * len(left)
    if len(left) != len(right):
        return None  # shapes broadcast otherwise: not read here
    return tuple(fn(x, y) for x, y in zip(left, right))


def _operand(v: Value) -> tuple | None:
    if isinstance(v, TensorV):
        if v.shape is None:
            return None
        elems = elements(v)
        return elems
    n = _const(v)
    return None if n is None else (n,)
