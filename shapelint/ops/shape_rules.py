"""The shape rules stub lines name (``rule=reduce(input, dim, keepdim)``), written once.

A rule receives the abstract values of its arguments and returns the result
value, names for the stub's cost formulas, and the issues it is certain of.
Unknown stays unknown: a size that is a name is never a conflict, a dimension
index that cannot be placed (``dim=-1`` past a ``*batch``) gives an unknown
shape, not an error. Known numbers that cannot work are errors, with the codes
of shapelint/rules/torch_ops.py.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

from shapelint.notation.symbolic import (
    Expr,
    assumed_equal,
    broadcasting,
    cancelled,
    given_formulas,
    given_sizes,
    kept_by_broadcast,
    learned_equal,
    learned_name,
    name_clash,
    note_equal,
    product,
    sized_as,
    total,
)
from shapelint.ops import attention_path, dtypes, saved, strides, tensor_values
from shapelint.ops.indexing import exceeds_every_length, size_at_least
from shapelint.ops.values import (
    UNKNOWN,
    ArrayV,
    BoolV,
    Dim,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    OpIssue,
    ParameterV,
    StrV,
    TensorV,
    TupleV,
    Value,
    Var,
    dim_str,
    dtype_of,
    fresh_var,
)

MATMUL = "SHP307"
BROADCAST = "SHP308"
SIGNATURE = "SHP309"
DIM_RANGE = "SHP310"
RANK = "SHP311"
RESHAPE = "SHP312"
CAT = "SHP313"
SPLIT = "SHP314"
NAME_CLASH = "SHP315"

Shape = tuple[Dim, ...]


@dataclass
class RuleOut:
    value: Value = UNKNOWN
    bind: dict[str, Expr | None] = field(default_factory=dict)
    issues: list[OpIssue] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Items of a tuple result whose gradient reaches less than the op's whole backward:
    # (index, the backward where the loss reaches that item alone, the operands it
    # derives from) (values.Cost.alone).
    alone: tuple = ()
    # An operand the rule's result does not depend on but the call reads, whose
    # tensor the analysis does not know (nn.MultiheadAttention's key of no known
    # value): the bytes the call moves are not known either.
    unread: bool = False


class NotApplicable:
    """The call is not one the stub describes (``operator.add`` on two ints)."""


NOT_APPLICABLE = NotApplicable()


@dataclass
class RuleContext:
    op: str  # the qualified name, for messages
    wheres: tuple[tuple, ...]  # OpIssue.where of each rule argument

    def where(self, i: int) -> tuple:
        return self.wheres[i] if i < len(self.wheres) else ("call",)

    def issue(self, code: str, message: str, arg: int | None = None) -> OpIssue:
        return OpIssue(
            code,
            f"{self.op}: {message}",
            self.where(arg) if arg is not None else ("call",),
            **take_note(),
        )


RuleFn = Callable[..., "RuleOut | NotApplicable"]
RULES: dict[str, RuleFn] = {}


def rule(fn: RuleFn) -> RuleFn:
    RULES[fn.__name__.rstrip("_")] = fn
    return fn


# -- small helpers --------------------------------------------------------------------------


def shape_of(v: Value) -> Shape | None:
    return v.shape if isinstance(v, TensorV) else None


def const(d: Dim) -> int | None:
    return d.value if isinstance(d, Expr) else None


def int_value(v: Value) -> Expr | None:
    if isinstance(v, IntV):
        return v.value
    if isinstance(v, BoolV) and v.value is not None:
        return Expr.const(int(v.value))
    return None


def const_int(v: Value) -> int | None:
    e = int_value(v)
    return None if e is None else e.value


def is_none(v: Value) -> bool:
    return isinstance(v, NoneV)


def int_list(v: Value) -> list[Expr | None] | None:
    """An int or a sequence of ints (``dim=(0, 1)``, ``x.view(b, -1)``); None if not one."""
    if isinstance(v, IntV):
        return [v.value]
    if isinstance(v, TupleV):
        items = list(v.items)
        if len(items) == 1 and isinstance(items[0], TupleV):
            items = list(items[0].items)  # view((b, -1)) as well as view(b, -1)
        items = [tensor_values.index_of(i) or i if isinstance(i, TensorV) else i for i in items]
        if all(isinstance(i, (IntV, BoolV)) for i in items):
            return [int_value(i) for i in items]
    return None


def has_var(shape: Shape) -> bool:
    return any(isinstance(d, Var) for d in shape)


def known_tail(shape: Shape) -> int:
    """How many trailing dimensions come after the last Var (all of them without one)."""
    last = max((i for i, d in enumerate(shape) if isinstance(d, Var)), default=-1)
    return len(shape) - last - 1


def known_rank(shape: Shape | None) -> int | None:
    if shape is None or has_var(shape):
        return None
    return len(shape)


def shape_text(shape: Shape | None) -> str:
    if shape is None:
        return "[?...]"
    return "[" + ", ".join(dim_str(d) for d in shape) + "]"


def numel(shape: Shape | None) -> Expr | None:
    return TensorV(shape).numel() if shape is not None else None


# What the last `differs` rested on, for the issue the op then raises to carry
# (RuleContext.issue, the stub interpreter): OpIssue.names and OpIssue.assumes.
_NOTE: ContextVar[dict | None] = ContextVar("shapelint_differs_note", default=None)


def take_note() -> dict:
    note = _NOTE.get()
    if note is None:
        return {}
    _NOTE.set(None)
    return note


def differs(a: Dim, b: Dim) -> bool:
    """Whether two sizes the op requires equal are certainly different numbers,
    formulas no positive sizes make equal (`dim` and `2·dim`, `n` and `n + 1`: the
    issue then carries their names, which the analysis keeps where each is one size),
    or formulas over independent sizes (constructor parameters nothing relates: the
    issue carries the pair as `assumes`). When they may be equal, the op's run-time
    check makes them so from here on: what that proves (a divisibility, two names
    for one dim) is recorded."""
    if not (isinstance(a, Expr) and isinstance(b, Expr)):
        return False
    if a.definitely_differs(b) or a.never_equal(b):
        # `2·channels` against 3 too: whatever integer channels is
        return True
    given = given_sizes(a.names() | b.names())
    if given:
        fixed_a, fixed_b = a.substitute(given), b.substitute(given)
        if fixed_a.definitely_differs(fixed_b) or (
            fixed_a != fixed_b and only_one_broadcasts(fixed_a, fixed_b) is not None
        ):
            # `2·dim` against 48 after LayerNorm(dim) took 48
            # the names it rests on are those left: a size an op fixed is one size
            said = tuple(f"{n} = {v}" for n, v in sorted(given.items()))
            _NOTE.set({"names": frozenset(fixed_a.names() | fixed_b.names()), "given": said})
            return True
        note_equal(fixed_a, fixed_b)  # `dim_out` against `dim_in` once dim_in is 48
    equal = given_formulas(a.names() | b.names())
    if equal:
        fixed_a, fixed_b = a.substitute(equal), b.substitute(equal)
        said = tuple(f"{n} = {e.to_human()}" for n, e in sorted(equal.items()))
        names = frozenset(fixed_a.names() | fixed_b.names())
        if fixed_a != fixed_b and only_one_broadcasts(fixed_a, fixed_b) is not None:
            # `2·dim` against an annotated `d` after LayerNorm(dim) took d
            _NOTE.set({"names": names, "given": said})
            return True
        fields = _assumed(fixed_a, fixed_b)
        if fields and not fields.get("learned"):
            # `dim` against an annotated `s·p²` after LayerNorm(channels·p²) took
            # s: two of the constructor's sizes, as without the annotation
            _NOTE.set({"names": names, "given": said, **fields})
            return True
    if only_one_broadcasts(a, b) is not None:
        _NOTE.set({"names": frozenset(a.names() | b.names())})
        return True
    fields = _fixed_alike(a, b)
    if fields:
        _NOTE.set(fields)
        # said once: from here on the formula is the number too, as the op checks
        note_equal(a, b)
        return True
    fields = _assumed(a, b)
    if fields:
        _NOTE.set({"names": frozenset(a.names() | b.names()), **fields})
        return True
    note_equal(a, b)
    return False


def clash_issue(ctx: RuleContext, what: str, a: Dim, b: Dim, arg: int) -> OpIssue | None:
    """SHP315 when the op equates two dims its annotations name differently."""
    names = name_clash(a, b) if isinstance(a, Expr) and isinstance(b, Expr) else None
    if names is None:
        return None
    return ctx.issue(
        NAME_CLASH,
        f"{what} '{names[0]}' and '{names[1]}', which the annotations name as different dimensions",
        arg,
    )


def locate(shape: Shape, d: int, extra: int = 0) -> tuple[int | None, str | None]:
    """Where dimension index d falls in the shape tuple: (position, None), (None, error)
    when it is certainly out of range, or (None, None) when a Var hides it.

    extra=1 for unsqueeze/stack, which address the result's rank + 1 slots.
    """
    if not has_var(shape):
        rank = len(shape) + extra
        span = max(rank, 1)  # torch wraps dims of a 0-d tensor as if it had one
        if not -span <= d < span:
            return None, f"dimension {d} is out of range for a tensor of rank {len(shape)}"
        return (d % span if rank == 0 else d + rank if d < 0 else d), None
    first = next(i for i, x in enumerate(shape) if isinstance(x, Var))
    last = max(i for i, x in enumerate(shape) if isinstance(x, Var))
    if d >= 0:
        return (d if d < first + extra else None), None
    after = len(shape) - last - 1 + extra
    if -d <= after:
        return len(shape) + extra + d, None
    return None, None


def opened(shape: Shape, v: Value) -> Shape:
    """The shape with the axes a negative dim reaches inside a leading run of
    unknown length spelled out (`[..., d]` at -2 is `[..., ?, d]`): the op raises
    unless x has that many, and what stands right of them stays known. As is
    where the dim lands elsewhere, or a run left of it may hold it (`[a, ..., d]`)."""
    d = const_int(v)
    if d is None or d >= 0 or not shape or not isinstance(shape[0], Var) or has_var(shape[1:]):
        return shape
    missing = -d - (len(shape) - 1)
    if missing <= 0:
        return shape
    return (fresh_var(), *([None] * missing), *shape[1:])


def locate_arg(ctx: RuleContext, shape: Shape, v: Value, arg: int, extra: int = 0, out=None):
    """Position of a dim argument, appending an issue to out when certainly out of range."""
    d = const_int(v)
    if d is None:
        return None
    pos, err = locate(shape, d, extra)
    if err and out is not None:
        out.append(ctx.issue(DIM_RANGE, err, arg))
    return pos


def dim_positions(
    ctx: RuleContext,
    shape: Shape,
    out: RuleOut,
    *dims: tuple[Value, int],
    extra: int = 0,
    needs: str | None = None,
) -> list[int | None] | None:
    """Positions of the dim arguments, given as (value, argument index) pairs; None once
    out holds an issue: a 0-d tensor where the op needs an axis (needs= the issue code), or
    a dimension certainly out of range."""
    if needs is not None and not needs_axes(ctx, shape, needs, out.issues):
        return None
    positions = [locate_arg(ctx, shape, v, arg, extra, out.issues) for v, arg in dims]
    return None if out.issues else positions


def replaced(shape: Shape, pos: int, *new: Dim) -> Shape:
    """The shape with dimension pos replaced by the dimensions new (none: dropped)."""
    return shape[:pos] + new + shape[pos + 1 :]


def needs_axes(ctx: RuleContext, shape: Shape, code: str, out: list) -> bool:
    """False (with an issue) for a 0-d tensor where the op needs a real axis."""
    if shape == ():
        message = (
            "expects at least a 1-dimensional tensor"
            if code == RANK
            else "the tensor has no dimensions to index"
        )
        out.append(ctx.issue(code, message, 0))
        return False
    return True


def broadcast_dim(a: Dim, b: Dim) -> tuple[Dim, bool]:
    """(result, certain conflict) for two sizes meeting in broadcasting."""
    if isinstance(a, Expr) and isinstance(b, Expr):
        if a == b:
            return a, False
        av, bv = a.value, b.value
        if av == 1:
            return b, False
        if bv == 1:
            return a, False
        if av is not None and bv is not None:
            return None, True
        # One known c != 1 and one name: valid only when the name is 1 or c.
        if av is not None:
            return (None, True) if _never_broadcast(a, b) else (a, False)
        if bv is not None:
            return (None, True) if _never_broadcast(a, b) else (b, False)
        if only_one_broadcasts(a, b) is not None or _assumed(a, b) or _never_broadcast(a, b):
            return None, True
        # Two expressions: torch's check makes them one size (or one of them 1):
        # kv·(h//kv) against h proves kv | h, and the two are then the same. Either
        # may be 1, so their agreeing fixes no size (`v0` against `2·dim`, where an
        # op before made v0 dim: v0 is 1, not 2·dim).
        with broadcasting():
            learnt = note_equal(a, b)
        if learnt and a.simplify() == b.simplify():
            return b.simplify(), False
        # One that cannot be 1 (`2·d`, `n + 1`) is the result, or torch raises.
        for e in (a, b):
            if _never_one(e):
                return e, False
        # A size of the input's against one of the constructor's: see _kept.
        for e, other in ((a, b), (b, a)):
            if learned_name(other) and kept_by_broadcast(e):
                return e, False
        return None, False
    known = a if isinstance(a, Expr) else b
    if isinstance(known, Expr) and _kept(known):
        return known, False
    return None, False


def _kept(e: Expr) -> bool:
    """A size that is the broadcast's whatever unknown size of the input meets it:
    one that cannot be 1, or a formula of the constructor's own sizes (`dim` of a
    norm's `g` of [1, dim, 1, 1] against channels nobody named). The input's side
    may be 1 or the same size; only a constructor that is handed `dim = 1` lets the
    input's size through instead, and a conflict it then meets (`Conv2d(2·dim)`)
    holds for every other dim, as `d` against `2·d` does (only_one_broadcasts)."""
    return _never_one(e) or kept_by_broadcast(e)


def _never_broadcast(a: Expr, b: Expr) -> bool:
    """Two sizes torch broadcasts together for no values of their names: neither
    can be 1, and no integers make them equal once the factors both share cancel
    (sizes are positive): `2·c` against 3, `3·p²` against `2·c·p²`."""
    if not (_never_one(a) and _never_one(b)):
        return False
    x, y = cancelled(a, b)
    return x.never_equal(y)


def _fixed_alike(a: Expr, b: Expr) -> dict:
    """The OpIssue fields of a formula over the constructor's sizes checked against
    a number of a concrete annotation (`Linear(dim)` on 48) that an op before
    checked against another such formula (`LayerNorm(hidden_dim)` took 48): the
    two formulas meet as they would without the annotation (`dim` against
    `hidden_dim`, which holds only for callers that pass them equal). None where
    the formulas may be one (the code compares them, or they are the same)."""
    if (a.value is None) == (b.value is None):
        return {}
    size, formula = (a, b) if a.value is not None else (b, a)
    for other in sized_as(size.value):
        if other == formula:
            return {}
    for other in sized_as(size.value):
        pair = assumed_equal(formula, other)
        if pair is not None:
            names = frozenset(formula.names() | other.names())
            said = (f"{other.to_human()} = {size.value}",)
            return {"names": names, "given": said, "assumes": pair, "sides": (formula, other)}
    return {}


def _assumed(x: Dim, y: Dim) -> dict:
    """The OpIssue fields of a conflict that holds unless two independent sizes are
    equal: two of the constructor's (`assumes`), or one a use named against one of
    the constructor's (`assumes` and `learned`); none for any other."""
    if not (isinstance(x, Expr) and isinstance(y, Expr)):
        return {}
    # learned first: `heads·dim_head` against `2·dim_head`, the 2 an annotated
    # input's, is 2 = heads, the input's size against the constructor's, not two
    # of the constructor's
    pair = learned_equal(x, y)
    if pair is not None:
        return {"assumes": pair, "learned": True}
    pair = assumed_equal(x, y)
    return {"assumes": pair, "sides": (x, y)} if pair is not None else {}


def _only_when(x: Dim, y: Dim) -> str:
    if not (isinstance(x, Expr) and isinstance(y, Expr)):
        return ""
    when = only_one_broadcasts(x, y)
    return "" if when is None or when == "never" else f"; they broadcast only when {when}"


def only_one_broadcasts(a: Expr, b: Expr) -> str | None:
    """For two sizes no positive values make equal (`d` and `2·d`, `n` and `n + 1`):
    the one assignment under which they still broadcast (`d = 1`), or "never" (`2·d`
    and `4·d`); None when values may make them equal or the rule cannot tell."""
    if a.value is not None or b.value is not None or a == b:
        return None
    if a.constant_ratio(b) is not None:
        small = a if sum(a.terms.values()) < sum(b.terms.values()) else b
    else:
        gap = (a - b).value
        if gap is None or gap == 0:
            return None
        small = b if gap > 0 else a
    ((mono, coeff),) = small.terms.items() if len(small.terms) == 1 else ((None, 0),)
    if coeff != 1 or not mono:
        return "never"
    if not all(isinstance(atom, str) for atom, _ in mono):
        # A quotient (`seq_len//patch_size`) is 1 at many sizes, and may be 0: then
        # `q` against `2·q` are both 0, and `q + 1` against `q` is 1 against 0.
        zero_too = a.constant_ratio(b) is not None or abs((a - b).value or 0) == 1
        return f"{small.to_human()} = {'0 or 1' if zero_too else '1'}"
    return " = ".join(sorted(small.names())) + " = 1"


def broadcast_shapes(a: Shape, b: Shape) -> tuple[Shape | None, list[tuple[int, Dim, Dim]]]:
    """Right-aligned broadcast; conflicts as (axis counted from the right, a, b)."""
    out: list[Dim] = []
    conflicts: list[tuple[int, Dim, Dim]] = []
    i = 1
    while i <= len(a) and i <= len(b):
        x, y = a[-i], b[-i]
        if isinstance(x, Var) or isinstance(y, Var):
            rest_a, rest_b = a[: len(a) - i + 1], b[: len(b) - i + 1]
            if rest_a == rest_b:
                return tuple(rest_a) + tuple(reversed(out)), conflicts
            # Two runs of dims no code named: the axes both sides hold right of them
            # line up whatever they hide, and broadcast as sized; what the runs make
            # is a run of its own, ending in the sizes one side holds left of where the
            # other's run starts that are the broadcast's whatever the run holds there
            # (`[..., h, w] + [b, 2·d, h, w]` ends in 2·d, h, w).
            past = _past_run(rest_b if isinstance(x, Var) else rest_a)
            if not out and not past:
                return None, conflicts
            return (fresh_var(), *past, *reversed(out)), conflicts
        d, bad = broadcast_dim(x, y)
        if bad:
            conflicts.append((-i, x, y))
        out.append(d)
        i += 1
    longer = a if len(a) >= len(b) else b
    head = longer[: len(longer) - i + 1]
    return tuple(head) + tuple(reversed(out)), conflicts


def _past_run(rest: Shape) -> tuple[Dim, ...]:
    """The sizes a run of unknown length on the other side meets, right of the last
    run in rest: each one _kept says a broadcast keeps whatever meets it, else
    unknown; nothing where none is kept."""
    tail = rest[len(rest) - known_tail(rest) :]
    kept = tuple(d if isinstance(d, Expr) and _kept(d) else None for d in tail)
    while kept and kept[0] is None:
        kept = kept[1:]
    return kept


def groups_divide(ctx: RuleContext, out: RuleOut, what: str, n: Dim, groups: Dim, arg: int) -> bool:
    """False (with an issue in out) when known numbers say groups does not divide n
    (the channels of a grouped convolution or a group norm)."""
    a, g = const(n), const(groups)
    if a is not None and g is not None and g > 0 and a % g:
        out.issues.append(ctx.issue(SIGNATURE, f"groups={g} does not divide {what} ({a})", arg))
        return False
    return True


def _tensor(shape: Shape | None, like: Value | None = None) -> TensorV:
    dtype = dtype_of(like)
    return TensorV(shape, dtype)


# -- identity-shaped -------------------------------------------------------------------------


@rule
def same(ctx: RuleContext, x: Value, *_: Value) -> RuleOut:
    """Output shaped like x (activations, dropout, contiguous, casts)."""
    if not isinstance(x, TensorV):
        return RuleOut(TensorV(None))
    return RuleOut(saved.iterated(ctx.op, _tensor(x.shape, x), [x]))


@rule
def prelu(ctx: RuleContext, x: Value, weight: Value) -> RuleOut:
    """F.prelu: shaped like x; weight a scalar or 1-d tensor of one slope, or of one
    per channel (x's dim 1; an x of rank below 2 has one channel), else torch raises."""
    out = same(ctx, x)
    w, shape = shape_of(weight), shape_of(x)
    if w is None or has_var(w):
        return out
    if len(w) > 1:
        out.issues.append(ctx.issue(RANK, f"weight must be a scalar or 1-d, got rank {len(w)}", 1))
        return out
    n = const(w[0]) if w else 1
    if n is None or n == 1 or shape is None or has_var(shape):
        return out
    channels = const(shape[1]) if len(shape) > 1 else 1
    if channels is not None and channels != n:
        what = f"{n} slopes for {channels} input channel{'s' if channels != 1 else ''}"
        out.issues.append(ctx.issue(SIGNATURE, what, 1))
    return out


@rule
def along(ctx: RuleContext, x: Value, dim: Value) -> RuleOut:
    """Shaped like x, with dim a valid dimension (softmax, cumsum, flip by one dim)."""
    out = RuleOut(_tensor(x.shape, x) if isinstance(x, TensorV) else TensorV(None))
    shape = shape_of(x)
    if shape is not None:
        for d in int_list(dim) or []:
            if d is not None and d.value is not None:
                _, err = locate(shape, d.value)
                if err:
                    out.issues.append(ctx.issue(DIM_RANGE, err, 1))
    return out


@rule
def along_iterated(ctx: RuleContext, x: Value, dim: Value) -> RuleOut:
    """along(x, dim), laid out as TensorIterator lays an elementwise op of x out
    (F.normalize divides x by its norm: the result keeps x's order of strides)."""
    out = along(ctx, x, dim)
    if isinstance(x, TensorV):
        out.value = saved.iterated(ctx.op, out.value, [x])
    return out


@rule
def like(ctx: RuleContext, other: Value) -> RuleOut:
    """The shape of another tensor (``zeros_like``, ``view_as``)."""
    return RuleOut(TensorV(shape_of(other)))


# -- matrix products ----------------------------------------------------------------------


def _matrix_view(shape: Shape) -> tuple[str, Shape, Dim, Dim] | None:
    """("vec"|"mat", batch, rows, cols) as torch.matmul sees an operand; None if unsure."""
    if not has_var(shape):
        if len(shape) == 1:
            return "vec", (), None, shape[0]
        if len(shape) >= 2:
            return "mat", shape[:-2], shape[-2], shape[-1]
        return None
    last = max(i for i, x in enumerate(shape) if isinstance(x, Var))
    if len(shape) - last - 1 >= 2:
        return "mat", shape[:-2], shape[-2], shape[-1]
    return None


def _folds_to_mv(a, b, kind_a, kind_b, batch_a, batch_b) -> Expr | None:
    """1 where torch runs the product as a matrix-vector one (aten.mv, which its
    flop counter counts 0), 0 where it runs bmm, None: not known.

    A vector and batched matrices (torch's matmul, should_fold): the batched
    operand (b.mT for a vector on the left) is folded into one matrix when the
    vector requires grad, whatever the layout (under no_grad only a leaf does);
    otherwise only when its leading axes merge without a copy (each stride the
    next one's times its length). Unfolded, torch expands the vector and runs
    bmm, which is counted."""
    if kind_a == "vec" and kind_b == "mat" and batch_b:
        vector, batched, swap = a, b, True
    elif kind_b == "vec" and kind_a == "mat" and batch_a:
        vector, batched, swap = b, a, False
    else:
        return Expr.const(int(kind_b == "vec"))
    leaf = isinstance(vector, ParameterV)
    grad = vector.requires_grad if leaf else getattr(vector, "grad", None)
    if grad is True and leaf:
        return Expr.const(1)  # a leaf that requires grad: folded under no_grad too
    merges = _merges(batched, swap, batch_b if swap else batch_a)
    if merges is None or (grad is not False and not merges):
        # Which of the two runs, counted differently, is not known: a result that
        # requires grad folds in a training forward, not under no_grad (the
        # forward the counts are judged by), where it needs no grad.
        return None
    return Expr.const(int(merges))


def _merges(batched, swap: bool, batch) -> bool | None:
    """Whether the leading axes of batched (of its .mT where swap) merge into one
    without a copy; None: not known."""
    if getattr(batched, "contiguous", None) is True:
        if not swap:
            return True
        # a contiguous b's .mT has strides (..., 1, n) for lengths (..., n, k):
        # its batch merges with the n axis only where k == 1
        k = const(batched.shape[-2]) if batched.shape else None
        if k is None:
            return None
        if k != 1:
            return False
        # a batch of variadic axes only may be empty: a plain matrix, then counted
        return True if any(not isinstance(d, Var) for d in batch) else None
    laid = saved.layout_of(batched)
    if laid is None:
        return None
    sizes, steps = list(laid[0]), list(laid[1])
    if swap:
        sizes[-2:], steps[-2:] = sizes[:-3:-1], steps[:-3:-1]
    if 0 in sizes:
        return True
    return all(steps[i] == steps[i + 1] * sizes[i + 1] for i in range(len(sizes) - 2))


@rule
def matmul(ctx: RuleContext, a: Value, b: Value) -> RuleOut | NotApplicable:
    """torch.matmul: 1-D, 2-D and batched operands, batch dims broadcast.

    Binds m, k, n, b (batch elements) and vec (1 when torch takes the
    matrix-vector path, which its flop counter counts as 0).
    """
    if not isinstance(a, TensorV) and not isinstance(b, TensorV):
        return NOT_APPLICABLE
    sa, sb = shape_of(a), shape_of(b)
    if sa is None or sb is None:
        return RuleOut(TensorV(None))
    out = RuleOut()
    for i, s in ((0, sa), (1, sb)):
        if known_rank(s) == 0:
            out.issues.append(
                ctx.issue(RANK, "both arguments need at least 1 dimension, got a 0-d tensor", i)
            )
    if out.issues:
        return out
    va, vb = _matrix_view(sa), _matrix_view(sb)
    if va is None or vb is None:
        out.value = TensorV(None)
        return out
    kind_a, batch_a, m, ka = va
    kind_b, batch_b, kb, n = vb
    if kind_a == "vec":
        ka = sa[0]
    if kind_b == "vec":
        kb, n = sb[0], None
    clash = clash_issue(ctx, f"{shape_text(sa)} @ {shape_text(sb)} contracts", ka, kb, 1)
    if clash is not None:
        out.issues.append(clash)
    elif differs(ka, kb):
        out.issues.append(
            ctx.issue(
                MATMUL,
                f"inner dimensions differ: {shape_text(sa)} @ {shape_text(sb)} "
                f"({dim_str(ka)} != {dim_str(kb)})",
                1,
            )
        )
    batch, conflicts = broadcast_shapes(batch_a, batch_b)
    for axis, x, y in conflicts:
        issue = ctx.issue(
            BROADCAST,
            f"batch dimensions do not broadcast: {shape_text(sa)} @ {shape_text(sb)} "
            f"({dim_str(x)} vs {dim_str(y)} at batch axis {axis})",
            1,
        )
        out.issues.append(dataclasses.replace(issue, **_assumed(x, y)))
    if out.issues:
        return out
    shape: Shape | None = None
    if batch is not None:
        shape = tuple(batch) + ((m,) if kind_a == "mat" else ()) + ((n,) if kind_b == "mat" else ())
    out.value = TensorV(shape)
    k = ka if const(ka) is not None or const(kb) is None else kb
    vec = _folds_to_mv(a, b, kind_a, kind_b, batch_a, batch_b)
    out.bind = {
        "m": m if kind_a == "mat" else Expr.const(1),
        "k": k,
        "n": n if kind_b == "mat" else Expr.const(1),
        "b": numel(batch),
        "vec": vec,
    }
    if vec is not None and vec.value:
        out.notes.append(
            "torch's flop counter counts matrix-vector products (aten.mv, aten.dot) as 0; "
            "their 2·m·k is in other_flops"
        )
    return out


@rule
def linear_vector(ctx: RuleContext, x: Value, w: Value, bias: Value) -> RuleOut | NotApplicable:
    """F.linear with a 1-D weight and a bias: torch takes only a 0-d bias, and for a
    2-D input runs addmm, which refuses a 1-D weight; of another rank it runs matmul
    (one output per row) and adds the bias. Binds b (rows) and i."""
    if not isinstance(w, TensorV) or known_rank(w.shape) != 1:
        return NOT_APPLICABLE
    sx = shape_of(x)
    out = RuleOut()
    rank_b = known_rank(shape_of(bias)) if isinstance(bias, TensorV) else None
    if rank_b not in (None, 0):
        out.issues.append(ctx.issue(RANK, f"a 1-D weight takes a 0-d bias, got {rank_b}-d", 2))
    if known_rank(sx) == 2:
        out.issues.append(ctx.issue(RANK, "a 2-D input with a 1-D weight and a bias (addmm)", 1))
    if out.issues:
        return out
    if sx is None or known_tail(sx) < 1:
        out.value = TensorV(None)
        return out
    what = f"{shape_text(sx)} @ {shape_text(w.shape)} contracts"
    clash = clash_issue(ctx, what, sx[-1], w.shape[0], 1)  # type: ignore[index]
    if clash is not None:
        out.issues.append(clash)
        return out
    out.value = TensorV(sx[:-1])
    out.bind = {"b": numel(sx[:-1]), "i": sx[-1]}
    return out


# -- broadcasting elementwise ------------------------------------------------------------------


@rule
def broadcast(ctx: RuleContext, *xs: Value) -> RuleOut | NotApplicable:
    """Elementwise ops: operands broadcast; Python numbers take part in dtype only."""
    tensors = [(i, x) for i, x in enumerate(xs) if isinstance(x, TensorV)]
    if not tensors:
        return NOT_APPLICABLE
    out = RuleOut()
    shape: Shape | None = ()
    seen: list[TensorV] = []  # shapes known
    for i, t in tensors:
        if t.shape is None:
            shape = None
            continue
        for earlier in seen:
            prev = earlier.shape
            clash = _broadcast_clash(ctx, prev, t.shape, i)
            if clash is not None:
                out.issues.append(clash)
                break
            _, conflicts = broadcast_shapes(prev, t.shape)
            for _axis, x, y in conflicts[:1]:
                out.issues.append(_cannot_broadcast(ctx, prev, t.shape, x, y, i))
            if conflicts:
                break
            short = _slice_too_short(earlier, t) or _slice_too_short(t, earlier)
            if short is not None:
                size, bound = short
                out.issues.append(
                    ctx.issue(
                        BROADCAST,
                        f"shapes {shape_text(prev)} and {shape_text(t.shape)} cannot "
                        f"broadcast ({dim_str(size)} vs a slice at most {dim_str(bound)} "
                        "long; they broadcast only when the slice is 1 long)",
                        i,
                    )
                )
                break
        seen.append(t)
        if shape is not None:
            shape, _ = broadcast_shapes(shape, t.shape)
    if out.issues:
        return out
    unknown_operand = any(x is UNKNOWN or isinstance(x, ObjectV) for x in xs)
    if shape is None and not unknown_operand:
        shape = _past_unknown_rank([t.shape for _, t in tensors])
    out.value = saved.iterated(ctx.op, TensorV(None if unknown_operand else shape), xs)
    return out


def into_receiver(op: str, receiver: TensorV, value: Value) -> tuple[Value, OpIssue | None]:
    """The result of an op that writes into its receiver (`x.add_(y)`, `x += y`): the
    receiver itself, so its shape and dtype, and torch refuses operands that
    broadcast past it (`output with shape [2, 1, 4] doesn't match the broadcast
    shape [2, 3, 4]`), even by a leading 1."""
    if not isinstance(value, TensorV):
        return value, None
    kept = dataclasses.replace(value, shape=receiver.shape, dtype=receiver.dtype)
    r, o = receiver.shape, value.shape
    if r is None or o is None or has_var(r) or has_var(o) or r == o:
        return kept, None
    past = len(o) > len(r) or any(
        (x.value is not None and y.value is not None and x.value != y.value)
        or (x.value == 1 and _never_one(y))
        for x, y in zip(reversed(r), reversed(o))
        if isinstance(x, Expr) and isinstance(y, Expr)
    )
    if not past:
        return kept, None
    message = (
        f"{op}: output with shape {shape_text(r)} doesn't match the broadcast shape "
        f"{shape_text(o)} (an in-place op cannot grow the tensor it writes into)"
    )
    return kept, OpIssue(BROADCAST, message, ("call",))


def _slice_too_short(a: TensorV, b: TensorV) -> tuple[Expr, Expr] | None:
    """(size, bound) where an axis of b is a slice provably shorter than the size a
    has on the same axis (right-aligned): `x + pos[:, :n - 1]` with x [b, n, d]."""
    if not b.at_most or a.shape is None or b.shape is None:
        return None
    for pos, bounds in b.at_most:
        axis = pos - len(b.shape)  # counted from the right, as broadcasting aligns
        if any(isinstance(d, Var) for d in b.shape[pos:]) or -axis > len(a.shape):
            continue
        if any(isinstance(d, Var) for d in a.shape[axis:]):
            continue
        size = a.shape[axis]
        if isinstance(size, Expr) and size.value != 1:
            bound = exceeds_every_length(size, bounds)
            if bound is not None:
                return size, bound
    return None


def _past_unknown_rank(shapes: list[Shape | None]) -> Shape | None:
    """The broadcast of tensors some of unknown rank: at least as many axes as the
    known ones have, right-aligned; an axis of a size that cannot be 1 (`2·d`, 3),
    or one of the constructor's own sizes (_kept), keeps it whatever meets it (the
    other side is 1 or the same size), any other is unknown. None when the known
    shapes say nothing."""
    known: Shape | None = None
    for sh in shapes:
        if sh is None:
            continue
        # the axes right of a run of unknown length line up as the others' do
        sh = sh[len(sh) - known_tail(sh) :]
        known = sh if known is None else broadcast_shapes(known, sh)[0]
        if known is None:
            return None
    if not known:
        return None
    tail = tuple(d if isinstance(d, Expr) and _kept(d) else None for d in known)
    return None if all(d is None for d in tail) else (fresh_var(), *tail)


def _never_one(e: Expr) -> bool:
    """A size no positive values of its names make 1: a constant other than 1, or
    a polynomial in plain names whose coefficients are positive and sum past 1."""
    if e.value is not None:
        return e.value != 1
    return (
        all(c > 0 for c in e.terms.values())
        and sum(e.terms.values()) > 1
        and all(atom.__class__ is str for m in e.terms for atom, _ in m)
    )


def _broadcast_clash(ctx: RuleContext, a: Shape, b: Shape, arg: int) -> OpIssue | None:
    """SHP315 for the first right-aligned pair of differently named dims."""
    for x, y in zip(reversed(a), reversed(b)):
        if isinstance(x, Var) or isinstance(y, Var):
            return None
        clash = clash_issue(
            ctx, f"broadcasting {shape_text(a)} with {shape_text(b)} lines up", x, y, arg
        )
        if clash is not None:
            return clash
    return None


# -- reductions ------------------------------------------------------------------------------


def _distinct_positions(
    ctx: RuleContext, shape: Shape, dims: list[Expr | None], out: RuleOut, name: str
) -> list[int] | None:
    """Positions of the dims listed in argument 1 (name, for the message), in order; None
    at the first that is unknown or cannot be placed, or once out holds an issue: a
    dimension out of range or given twice."""
    positions = []
    for d in dims:
        if d is None or d.value is None:
            return None
        pos, err = locate(shape, d.value)
        if err:
            out.issues.append(ctx.issue(DIM_RANGE, err, 1))
            return None
        if pos is None:
            return None
        positions.append(pos)
    if len(set(positions)) != len(positions):
        out.issues.append(ctx.issue(DIM_RANGE, f"a dimension appears twice in {name}", 1))
        return None
    return positions


def _reduced(
    ctx: RuleContext, x: Value, dim: Value, keepdim: Value, out: RuleOut
) -> Shape | None | bool:
    """The reduced shape, None if unknown, False after an issue."""
    shape = shape_of(x)
    keep = keepdim.value if isinstance(keepdim, BoolV) else None
    if shape is None or keep is None:
        return None
    if is_none(dim) or (isinstance(dim, TupleV) and not dim.items):
        if has_var(shape):
            return None if keep else ()
        return tuple(Expr.const(1) for _ in shape) if keep else ()
    dims = int_list(dim)
    if dims is None or any(d is None or d.value is None for d in dims):
        return None
    positions = _distinct_positions(ctx, shape, dims, out, "dim")
    if positions is None:
        return False if out.issues else None
    if keep:
        return tuple(Expr.const(1) if i in positions else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in positions)


@rule
def reduce(ctx: RuleContext, x: Value, dim: Value, keepdim: Value) -> RuleOut:
    """sum/mean/amax/...: dim None (all), an int or a tuple; keepdim keeps size-1 axes."""
    out = RuleOut()
    shape = _reduced(ctx, x, dim, keepdim, out)
    if shape is not False:
        out.value = _tensor(shape, x)  # type: ignore[arg-type]
    return out


@rule
def reduce_pair(ctx: RuleContext, x: Value, dim: Value, keepdim: Value) -> RuleOut:
    """max/min/median/mode with dim: a (values, indices) pair."""
    out = reduce(ctx, x, dim, keepdim)
    if isinstance(out.value, TensorV):
        v = out.value
        out.value = TupleV((v, TensorV(v.shape, "int64")))
    return out


@rule
def reduce_two(ctx: RuleContext, x: Value, dim: Value, keepdim: Value) -> RuleOut:
    """var_mean / std_mean: two reductions of x, both of its dtype."""
    out = reduce(ctx, x, dim, keepdim)
    if isinstance(out.value, TensorV):
        out.value = TupleV((out.value, out.value))
    return out


@rule
def cosine(ctx: RuleContext, x1: Value, x2: Value, dim: Value) -> RuleOut | NotApplicable:
    """cosine_similarity / pairwise-style reductions: x1 and x2 broadcast, then dim
    (of the broadcast shape) is reduced away."""
    both = broadcast(ctx, x1, x2)
    if isinstance(both, NotApplicable) or both.issues or not isinstance(both.value, TensorV):
        return both
    out = reduce(ctx, _tensor(both.value.shape, x1), dim, BoolV(False))
    out.issues = [*both.issues, *out.issues]
    return out


@rule
def pairwise(ctx: RuleContext, x1: Value, x2: Value, keepdim: Value) -> RuleOut | NotApplicable:
    """F.pairwise_distance: `norm(x1 - x2 + eps, p, -1, keepdim)`, as ATen runs it: the
    operands broadcast, then the last axis of that shape is reduced (a 0-d one stays
    0-d: dim -1 of a scalar is the scalar)."""
    both = broadcast(ctx, x1, x2)
    if isinstance(both, NotApplicable) or both.issues or not isinstance(both.value, TensorV):
        return both
    if both.value.shape == ():
        return RuleOut(_tensor((), x1))
    out = reduce(ctx, _tensor(both.value.shape, x1), IntV(Expr.const(-1)), keepdim)
    out.issues = [*both.issues, *out.issues]
    return out


def _cannot_broadcast(ctx: RuleContext, a: Shape, b: Shape, x: Dim, y: Dim, arg: int) -> OpIssue:
    """Shapes a and b cannot broadcast, x against y: the issue, resting on the
    names of x and y (dropped where learning gave one)."""
    issue = ctx.issue(
        BROADCAST,
        f"shapes {shape_text(a)} and {shape_text(b)} cannot broadcast "
        f"({dim_str(x)} vs {dim_str(y)}{_only_when(x, y)})",
        arg,
    )
    names = {n for d in (x, y) if isinstance(d, Expr) for n in d.names()}
    return dataclasses.replace(issue, names=frozenset(names), **_assumed(x, y))


@rule
def broadcast_sizes(ctx: RuleContext, shapes: Value) -> RuleOut:
    """torch.broadcast_shapes: the sizes the shapes given broadcast to (an int is a
    1-d shape), a tuple of ints; shapes that cannot broadcast are torch's error."""
    if not isinstance(shapes, TupleV):
        return RuleOut(UNKNOWN)
    merged: Shape = ()
    for i, given in enumerate(shapes.items):
        dims = [given.value] if isinstance(given, IntV) else int_list(given)
        if dims is None or any(d is not None and d.value is not None and d.value < 0 for d in dims):
            return RuleOut(UNKNOWN)  # not sizes the analysis reads (or torch refuses: < 0)
        one: Shape = tuple(dims)
        result, conflicts = broadcast_shapes(merged, one)
        for _axis, x, y in conflicts[:1]:
            return RuleOut(issues=[_cannot_broadcast(ctx, merged, one, x, y, i)])
        if result is None:
            return RuleOut(UNKNOWN)
        merged = result
    return RuleOut(TupleV(tuple(IntV(d) for d in merged)))  # type: ignore[arg-type]


@rule
def cdist(ctx: RuleContext, x1: Value, x2: Value, p: Value, mode: Value) -> RuleOut:
    """torch.cdist: x1 [*b, P, M], x2 [*b, R, M] -> [*b, P, R], batch dims broadcast.
    Binds b (batch elements), rows1 (P), rows2 (R), m, mm (1 when torch takes the
    matrix-product path: p = 2 and compute_mode says so, or by default P or R > 25;
    its backward then runs two batched products) and expanded (1 when a batch
    broadcast copies an operand)."""
    out = RuleOut()
    s1, s2 = shape_of(x1), shape_of(x2)
    if s1 is None or s2 is None or has_var(s1) or has_var(s2):
        out.value = TensorV(None, dtype_of(x1))
        return out
    for i, s in ((0, s1), (1, s2)):
        if len(s) < 2:
            out.issues.append(ctx.issue(RANK, f"needs at least 2 dimensions, got {len(s)}", i))
    if out.issues:
        return out
    if differs(s1[-1], s2[-1]):
        out.issues.append(
            ctx.issue(
                SIGNATURE,
                f"the last dimensions differ: {shape_text(s1)} and {shape_text(s2)}",
                1,
            )
        )
        return out
    batch, conflicts = broadcast_shapes(s1[:-2], s2[:-2])
    if conflicts or batch is None:
        if conflicts:
            out.issues.append(
                ctx.issue(
                    BROADCAST,
                    f"batch dimensions do not broadcast: {shape_text(s1)} and {shape_text(s2)}",
                    1,
                )
            )
        return out
    out.value = TensorV((*batch, s1[-2], s2[-2]), dtype_of(x1))
    rows1, rows2 = s1[-2], s2[-2]
    out.bind = {
        "b": numel(batch),
        "rows1": rows1,
        "rows2": rows2,
        "m": s1[-1],
        "mm": _cdist_mm(p, mode, const(rows1), const(rows2)),
        "expanded": Expr.const(int(tuple(s1[:-2]) != tuple(s2[:-2]))),
    }
    return out


def _cdist_mm(p: Value, mode: Value, rows1: int | None, rows2: int | None) -> Expr | None:
    """Whether torch.cdist computes through matrix products (aten._euclidean_dist)."""
    norm = p.value if isinstance(p, (FloatV, IntV)) else None
    if isinstance(norm, Expr):
        norm = norm.value
    how = mode.value if isinstance(mode, StrV) else "none" if is_none(mode) else None
    if norm is None or how is None:
        return None
    if norm != 2 or how == "donot_use_mm_for_euclid_dist":
        return Expr.const(0)
    if how == "use_mm_for_euclid_dist":
        return Expr.const(1)
    if rows1 is None or rows2 is None:
        return None
    return Expr.const(int(rows1 > 25 or rows2 > 25))


@rule
def qr(ctx: RuleContext, a: Value, mode: Value) -> RuleOut:
    """torch.linalg.qr: a [*b, m, n] -> (Q, R), k = min(m, n): "reduced" Q [*b, m, k],
    R [*b, k, n]; "complete" Q [*b, m, m], R [*b, m, n]; "r" an empty Q. Binds
    undone: the backward nobody derived here (unknown)."""
    out = RuleOut(TupleV((TensorV(None, dtype_of(a)), TensorV(None, dtype_of(a)))))
    out.bind = {"undone": None}
    shape = shape_of(a)
    how = mode.value if isinstance(mode, StrV) else None
    if shape is None or has_var(shape) or how is None:
        return out
    if len(shape) < 2:
        out.issues.append(ctx.issue(RANK, f"needs at least 2 dimensions, got {len(shape)}", 0))
        return out
    *batch, m, n = shape
    k = m if how == "complete" else _min_side(m, n)
    if k is None:
        return out
    q = (Expr.const(0),) if how == "r" else (*batch, m, k)
    r = (*batch, k, n) if how != "complete" else (*batch, m, n)
    out.value = TupleV((_tensor(q, a), _tensor(r, a)))
    return out


def _min_side(m: Dim, n: Dim) -> Dim | None:
    """min(m, n) of a matrix's sides, where it is known: both sizes, or the same one."""
    km, kn = const(m), const(n)
    if km is not None and kn is not None:
        return Expr.const(min(km, kn))
    return m if m == n else None


def _values_backward(batch, m: Dim, n: Dim, k: Dim | None) -> Expr | None:
    """The backward of singular values alone (svd_backward with neither U's nor Vh's
    gradient: `U @ (gS * Vh)`, one product [m, k] x [k, n] per matrix of the batch),
    as torch's flop counter counts it: 2·b·m·k·n; None where a size is not known."""
    sizes = [*batch, m, n, k]
    if not all(isinstance(d, Expr) for d in sizes):
        return None
    total = Expr.const(2)
    for d in sizes:
        total = total * d
    return total


@rule
def svdvals(ctx: RuleContext, a: Value) -> RuleOut:
    """torch.linalg.svdvals: a [*b, m, n] -> its singular values [*b, min(m, n)], real.
    Binds svbw: its backward where a requires grad (torch computes U and Vh for it
    then: _values_backward); None where not known."""
    out = RuleOut(TensorV(None, dtype_of(a)))
    out.bind = {"svbw": None}
    shape = shape_of(a)
    if shape is None or has_var(shape):
        return out
    if len(shape) < 2:
        out.issues.append(ctx.issue(RANK, f"needs at least 2 dimensions, got {len(shape)}", 0))
        return out
    *batch, m, n = shape
    k = _min_side(m, n)
    if k is not None:
        out.value = _tensor((*batch, k), a)
        out.bind["svbw"] = _values_backward(batch, m, n, k)
    return out


@rule
def svd(ctx: RuleContext, a: Value, flag: Value, uv: Value, kind: Value) -> RuleOut:
    """A singular value decomposition of a [*b, m, n], k = min(m, n): (U, S, V) of
    torch.svd (kind "V", flag its `some`: U [*b, m, k], V [*b, n, k]; else, or where
    compute_uv is False, U [*b, m, m] and V [*b, n, n], zero-filled then) or (U, S, Vh)
    of torch.linalg.svd (kind "Vh", flag its full_matrices: U [*b, m, m], Vh [*b, n, n];
    else U [*b, m, k], Vh [*b, k, n]); S [*b, k], real. Binds undone: the backward
    nobody derived here where the loss reaches U or V (unknown); where it reaches S
    alone, the singular values' (RuleOut.alone, _values_backward)."""
    real = dtypes.to_real(dtype_of(a))
    out = RuleOut(
        TupleV((TensorV(None, dtype_of(a)), TensorV(None, real), TensorV(None, dtype_of(a))))
    )
    out.bind = {"undone": None}
    shape = shape_of(a)
    how = kind.value if isinstance(kind, StrV) else None
    on = flag.value if isinstance(flag, BoolV) else None
    computed = uv.value if isinstance(uv, BoolV) else None
    if shape is None or has_var(shape) or how not in ("V", "Vh") or on is None or computed is None:
        return out
    if len(shape) < 2:
        out.issues.append(ctx.issue(RANK, f"needs at least 2 dimensions, got {len(shape)}", 0))
        return out
    *batch, m, n = shape
    k = _min_side(m, n)
    if k is None:
        return out
    full = (not on or not computed) if how == "V" else on
    u = (*batch, m, m) if full else (*batch, m, k)
    if how == "V":
        v = (*batch, n, n) if full else (*batch, n, k)
    else:
        v = (*batch, n, n) if full else (*batch, k, n)
    out.value = TupleV((_tensor(u, a), TensorV((*batch, k), real), _tensor(v, a)))
    # S reached alone: svd_backward's singular-values case, whatever full_matrices
    out.alone = ((1, _values_backward(batch, m, n, k), (a,)),)
    return out


@rule
def inverse(ctx: RuleContext, a: Value) -> RuleOut:
    """torch.linalg.inv / torch.inverse of a [*b, n, n]: shaped like a. Binds invbw,
    its backward where a requires grad: `-Aᵢₙᵥᴴ @ (G @ Aᵢₙᵥᴴ)`, two products of
    [n, n] per matrix, 4·b·n³ as torch's flop counter counts them; None where a size
    is not known or the matrix is not square."""
    out = same(ctx, a)
    out.bind = {"invbw": None}
    shape = shape_of(a)
    if shape is None or len(shape) < 2 or not all(isinstance(d, Expr) for d in shape):
        return out
    *batch, m, n = shape
    if m != n:
        return out
    total = Expr.const(4) * n * n * n
    for d in batch:
        total = total * d
    out.bind["invbw"] = total
    return out


@rule
def matrix_norm(ctx: RuleContext, x: Value, order: Value, dim: Value, keepdim: Value) -> RuleOut:
    """torch.linalg.matrix_norm: reduce's shape over dim (two axes). Binds mnbw, its
    backward where x requires grad: 0 for "fro" and the orders of sums of absolute
    values (1, -1, inf, -inf: no product), the singular values' (_values_backward)
    for 2, -2 and "nuc", which torch computes through svdvals; None where the order
    or a size is not known."""
    out = reduce(ctx, x, dim, keepdim)
    out.bind = {"mnbw": None}
    how = _norm_order(order)
    if how in _SUMMED_ORDERS:
        out.bind["mnbw"] = Expr.const(0)
        return out
    if how in (2, -2, "nuc"):
        out.bind["mnbw"] = _svd_norm_backward(x, dim)
    return out


def _svd_norm_backward(x: Value, dim: Value) -> Expr | None:
    """The backward of a matrix norm torch computes through svdvals (ord 2, -2,
    "nuc") over the pair of axes dim names: the singular values' (_values_backward),
    the other axes a batch; None where the pair or a size is not known."""
    shape, pair = shape_of(x), dim.items if isinstance(dim, TupleV) else None
    if shape is None or has_var(shape) or pair is None or len(pair) != 2:
        return None
    at = [const_int(i) for i in pair]
    if None in at or not all(-len(shape) <= i < len(shape) for i in at):  # type: ignore[operator]
        return None
    rows, cols = (i % len(shape) for i in at)  # type: ignore[operator]
    if rows == cols:
        return None
    batch = [d for i, d in enumerate(shape) if i not in (rows, cols)]
    m, n = shape[rows], shape[cols]
    return _values_backward(batch, m, n, _min_side(m, n))


@rule
def undone_same(ctx: RuleContext, a: Value) -> RuleOut:
    """A matrix function shaped like its input (torch.linalg.inv, cholesky). Binds
    undone: the backward nobody derived here (unknown)."""
    out = same(ctx, a)
    out.bind = {"undone": None}
    return out


@rule
def linalg_norm(ctx: RuleContext, x: Value, ord: Value, dim: Value, keepdim: Value) -> RuleOut:
    """torch.linalg.norm: a vector norm where dim is an int or a 1-tuple, or where dim
    and ord are both None (over every axis); a matrix norm where dim is a pair, or dim
    None with ord given on a 2-D input (on a 1-D one, a vector norm). Dim None with
    ord given on another rank torch refuses: the result is not known here. Binds
    undone to 0 where the flop counter counts no backward (a vector norm; a matrix
    norm by sums, "fro" (ord None), 1, inf), to matrix_norm's for an SVD's (ord 2,
    -2, "nuc": linalg.norm runs linalg.matrix_norm over dim, (0, 1) where dim is
    None), None (unknown) for an ord not known."""
    shape = shape_of(x)
    if is_none(dim):
        if is_none(ord):
            matrix: bool | None = False
        elif shape is None or len(shape) not in (1, 2):
            matrix = None
        else:
            matrix = len(shape) == 2
    elif isinstance(dim, TupleV):
        matrix = {1: False, 2: True}.get(len(dim.items))
    else:
        matrix = False
    if matrix is None:
        out = RuleOut(TensorV(None, dtype_of(x)))
    else:
        out = reduce(ctx, x, dim, keepdim)
    if matrix is False or (matrix and _summed_matrix_norm(ord)):
        out.bind = {"undone": Expr.const(0)}
    elif matrix and _norm_order(ord) in (2, -2, "nuc"):
        whole = TupleV((IntV(Expr.const(0)), IntV(Expr.const(1))))
        pair = dim if isinstance(dim, TupleV) else whole
        out.bind = {"undone": _svd_norm_backward(x, pair)}
    else:
        out.bind = {"undone": None}
    return out


def _summed_matrix_norm(ord: Value) -> bool:
    """A matrix norm torch computes by sums and maxima of abs, no SVD (ord None:
    linalg.norm's "fro")."""
    return is_none(ord) or _norm_order(ord) in _SUMMED_ORDERS


def _norm_order(order: Value) -> str | int | float | None:
    """A norm's order as written ("fro", "nuc", an int or a float); None where it
    is not known."""
    return order.value if isinstance(order, (StrV, FloatV)) else const_int(order)


# The matrix norms torch computes by sums and maxima of absolute values: no product
# forward or backward (2, -2 and "nuc" go through an SVD).
_SUMMED_ORDERS = ("fro", 1, -1, math.inf, -math.inf)


@rule
def qr_some(ctx: RuleContext, a: Value, some: Value) -> RuleOut:
    """torch.qr (deprecated): some=True is linalg.qr's "reduced", False its "complete"."""
    flag = some.value if isinstance(some, BoolV) else None
    return qr(ctx, a, StrV(None if flag is None else "reduced" if flag else "complete"))


@rule
def diag(ctx: RuleContext, x: Value, diagonal: Value) -> RuleOut:
    """torch.diag: a vector [n] -> the matrix [n + |d|, n + |d|]; a matrix [r, c] ->
    its d-th diagonal, of max(0, min(r, c - d)) entries for d >= 0 (min(r + d, c) for d < 0)."""
    out = RuleOut(TensorV(None, dtype_of(x)))
    shape, d = shape_of(x), const_int(diagonal)
    if shape is None or has_var(shape) or d is None:
        return out
    if len(shape) == 1:
        if not isinstance(shape[0], Expr):
            return out
        side = shape[0] + Expr.const(abs(d))
        out.value = _tensor((side, side), x)
    elif len(shape) == 2:
        r, c = const(shape[0]), const(shape[1])
        if r is not None and c is not None:
            n = min(r, c - d) if d >= 0 else min(r + d, c)
            out.value = _tensor((Expr.const(max(0, n)),), x)
    else:
        out.issues.append(ctx.issue(RANK, f"needs 1 or 2 dimensions, got {len(shape)}", 0))
    return out


@rule
def same_pair(ctx: RuleContext, x: Value, dim: Value) -> RuleOut:
    """sort / cummax: (values, indices) shaped like x."""
    out = along(ctx, x, dim)
    if isinstance(out.value, TensorV) and not out.issues:
        out.value = TupleV((out.value, TensorV(out.value.shape, "int64")))
    return out


@rule
def topk(ctx: RuleContext, x: Value, k: Value, dim: Value) -> RuleOut:
    """(values, indices) with k entries along dim; k larger than a known size is an error."""
    out = RuleOut()
    shape = shape_of(x)
    kk = int_value(k)
    pos = None
    if shape is not None:
        positions = dim_positions(ctx, shape, out, (dim, 2))
        if positions is None:
            return out
        (pos,) = positions
    new: Shape | None = None
    if shape == ():
        # torch treats a 0-d tensor as one entry: k may be 0 or 1.
        if kk is not None and (kk.value or 0) > 1:
            out.issues.append(ctx.issue(DIM_RANGE, f"k={kk} exceeds the size 1 of a 0-d tensor", 1))
            return out
        new = ()
    elif shape is not None and pos is not None:
        new = replaced(shape, pos, kk)
        size = shape[pos]
        if kk is not None and const(size) is not None and (kk.value or 0) > const(size):  # type: ignore[operator]
            out.issues.append(ctx.issue(DIM_RANGE, f"k={kk} exceeds the size {dim_str(size)}", 1))
            return out
    values = _tensor(new, x)
    out.value = TupleV((values, TensorV(new, "int64")))
    return out


# -- dimension shuffles ------------------------------------------------------------------------


def _dim_pair(
    ctx: RuleContext, x: Value, d0: Value, d1: Value, scalar: Shape
) -> tuple[Shape, int, int] | RuleOut:
    """x's shape and the positions of two dim arguments (transpose, flatten), or the
    finished result: unknown, a dimension out of range, or scalar for a 0-d tensor."""
    shape = shape_of(x)
    if shape is None:
        return RuleOut(_tensor(None, x))
    out = RuleOut()
    positions = dim_positions(ctx, shape, out, (d0, 1), (d1, 2))
    if positions is None:
        return out
    if shape == ():
        return RuleOut(_tensor(scalar, x))
    p0, p1 = positions
    if p0 is None or p1 is None:
        return RuleOut(_tensor(None, x))
    return shape, p0, p1


@rule
def transpose(ctx: RuleContext, x: Value, d0: Value, d1: Value) -> RuleOut:
    """Two dimensions swapped (a 0-d tensor stays one)."""
    found = _dim_pair(ctx, x, d0, d1, ())  # torch wraps dims of a 0-d tensor
    if isinstance(found, RuleOut):
        return found
    shape, p0, p1 = found
    new = list(shape)
    new[p0], new[p1] = new[p1], new[p0]
    return RuleOut(_tensor(tuple(new), x))


@rule
def rot90(ctx: RuleContext, x: Value, k: Value, dims: Value) -> RuleOut:
    """k quarter turns in the plane of the two dims: an odd k swaps their sizes. A
    tensor of rank under 2, or dims not a pair, torch refuses: not modelled here."""
    turns, pair, shape = const_int(k), int_list(dims), shape_of(x)
    if turns is None or pair is None or len(pair) != 2 or shape is None or len(shape) < 2:
        return RuleOut(_tensor(None, x))
    found = _dim_pair(ctx, x, IntV(pair[0]), IntV(pair[1]), ())
    if isinstance(found, RuleOut):
        return found
    shape, p0, p1 = found
    if p0 == p1:
        return RuleOut(_tensor(None, x))
    new = list(shape)
    if turns % 2:
        new[p0], new[p1] = new[p1], new[p0]
    return RuleOut(_tensor(tuple(new), x))


@rule
def permute(ctx: RuleContext, x: Value, dims: Value) -> RuleOut:
    """The dimensions in the order dims gives, each exactly once."""
    out = RuleOut()
    shape = shape_of(x)
    order = int_list(dims)
    if shape is None or order is None or has_var(shape):
        return RuleOut(_tensor(None, x))
    if len(order) != len(shape):
        out.issues.append(
            ctx.issue(RANK, f"{len(order)} dims given for a tensor of rank {len(shape)}", 1)
        )
        return out
    positions = _distinct_positions(ctx, shape, order, out, "permute")
    if positions is None:
        return out if out.issues else RuleOut(_tensor(None, x))
    out.value = _tensor(tuple(shape[p] for p in positions), x)
    return out


@rule
def movedim(ctx: RuleContext, x: Value, source: Value, destination: Value) -> RuleOut:
    """The source dimensions at the destination positions, the others after one
    another in their order (torch.movedim; torch raises where the lists differ in
    length, and then nothing is known here)."""
    out = RuleOut()
    shape = shape_of(x)
    src, dst = int_list(source), int_list(destination)
    if shape is None or src is None or dst is None or has_var(shape) or len(src) != len(dst):
        return RuleOut(_tensor(None, x))
    moved = _distinct_positions(ctx, shape, src, out, "movedim")
    to = _distinct_positions(ctx, shape, dst, out, "movedim")
    if moved is None or to is None:
        return out if out.issues else RuleOut(_tensor(None, x))
    rest = iter(d for i, d in enumerate(shape) if i not in moved)
    placed = dict(zip(to, (shape[p] for p in moved)))
    out.value = _tensor(
        tuple(placed[i] if i in placed else next(rest) for i in range(len(shape))), x
    )
    return out


@rule
def T(ctx: RuleContext, x: Value) -> RuleOut:
    """``.T``: all dimensions reversed (torch deprecates it beyond 2-D)."""
    shape = shape_of(x)
    if shape is None or has_var(shape):
        return RuleOut(_tensor(None, x))
    return RuleOut(_tensor(tuple(reversed(shape)), x))


@rule
def mT(ctx: RuleContext, x: Value) -> RuleOut:
    """``.mT`` / ``.mH``: the last two dimensions swapped."""
    shape = shape_of(x)
    if shape is None:
        return RuleOut(_tensor(None, x))
    if shape == ():
        return RuleOut(_tensor((), x))  # deprecated identity on 0-d tensors
    if known_rank(shape) is not None and len(shape) < 2:
        return RuleOut(
            issues=[ctx.issue(RANK, f"needs at least 2 dimensions, got {shape_text(shape)}", 0)]
        )
    if known_tail(shape) < 2:
        return RuleOut(_tensor(None, x))
    return RuleOut(_tensor(shape[:-2] + (shape[-1], shape[-2]), x))


@rule
def unsqueeze(ctx: RuleContext, x: Value, dim: Value) -> RuleOut:
    """A size-1 axis inserted at dim (one past the rank allowed)."""
    out = RuleOut()
    shape = shape_of(x)
    if shape is None:
        return RuleOut(_tensor(None, x))
    positions = dim_positions(ctx, shape, out, (dim, 1), extra=1)
    if positions is None:
        return out
    (pos,) = positions
    out.value = _tensor(None if pos is None else shape[:pos] + (Expr.const(1),) + shape[pos:], x)
    return out


@rule
def bincount(ctx: RuleContext, x: Value, weights: Value, minlength: Value) -> RuleOut:
    """torch.bincount of a 1-d tensor of non-negative ints: a count per value, as long
    as the largest element + 1 or minlength, whichever is more (elements known: that
    length; else a size no code names, at least minlength: indexing.size_at_least).
    int64 counts, or sums of float32 / float64 weights in their dtype."""
    shape = shape_of(x)
    if not isinstance(x, TensorV):
        return RuleOut()
    if shape is not None and not has_var(shape) and len(shape) != 1:
        return RuleOut(
            issues=[ctx.issue(RANK, f"bincount takes a 1-d tensor, got {len(shape)}-d", 0)]
        )
    dtype = "int64" if is_none(weights) else dtype_of(weights)
    if dtype not in ("int64", "float32", "float64"):
        return RuleOut()
    least = int_value(minlength)
    elems = tensor_values.elements(x)
    length: Dim = None
    if elems is not None and least is not None and least.value is not None:
        length = Expr.const(max([least.value, *(int(e) + 1 for e in elems)]))
    elif least is not None:
        length = size_at_least([least])
    return RuleOut(TensorV((length,), dtype))


@rule
def cross(ctx: RuleContext, x: Value, other: Value, dim: Value) -> RuleOut | NotApplicable:
    """torch.linalg.cross: x and other of one rank, broadcast, each 3 long at dim
    (torch raises for other ranks or a known other length)."""
    out = broadcast(ctx, x, other)
    if not isinstance(out, RuleOut) or out.issues:
        return out
    a, b = shape_of(x), shape_of(other)
    if a is not None and b is not None and not has_var(a) and not has_var(b) and len(a) != len(b):
        message = f"inputs of {len(a)} and {len(b)} dimensions; the cross product needs one rank"
        return RuleOut(issues=[ctx.issue(SIGNATURE, message, 1)])
    for i, v in enumerate((x, other)):
        shape = shape_of(v)
        if shape is None or has_var(shape):
            continue
        positions = dim_positions(ctx, shape, out, (dim, 2), needs=RANK)
        if positions is None:
            return out
        (pos,) = positions
        length = const(shape[pos]) if pos is not None else None
        if length is not None and length != 3:
            message = f"dimension {pos} has length {length}; the cross product needs 3"
            out.issues.append(ctx.issue(SIGNATURE, message, i))
            out.value = UNKNOWN
            return out
    return out


@rule
def atleast(ctx: RuleContext, x: Value, n: Value) -> RuleOut:
    """torch.atleast_1d / 2d / 3d of one tensor: x itself when it has n axes or more,
    else a view with size-1 axes added as torch places them (0-d: all of them; 2d of
    [k]: [1, k]; 3d of [k]: [1, k, 1], of [j, k]: [j, k, 1]). Of a tuple of tensors,
    a tuple, which this rule does not give."""
    shape, need = shape_of(x), const_int(n)
    if not isinstance(x, TensorV) or need not in (1, 2, 3):
        return RuleOut()
    if shape is None or has_var(shape):
        return RuleOut(_tensor(None, x))
    one = Expr.const(1)
    if len(shape) >= need:
        return RuleOut(_tensor(shape, x))
    if not shape:
        return RuleOut(_tensor((one,) * need, x))
    if need == 2 or len(shape) == 2:  # [k] -> [1, k]; [j, k] -> [j, k, 1]
        grown = (one, *shape) if need == 2 else (*shape, one)
    else:  # [k] -> [1, k, 1]
        grown = (one, *shape, one)
    return RuleOut(_tensor(grown, x))


@rule
def squeeze(ctx: RuleContext, x: Value, dim: Value) -> RuleOut:
    """Without dim: drop every size-1 axis (unknown if any size is a name)."""
    out = RuleOut()
    shape = shape_of(x)
    if shape is None:
        return RuleOut(_tensor(None, x))
    if is_none(dim):
        if has_var(shape) or any(const(d) is None for d in shape):
            return RuleOut(_tensor(None, x))
        return RuleOut(_tensor(tuple(d for d in shape if const(d) != 1), x))
    dims = int_list(dim)
    if dims is None:
        return RuleOut(_tensor(None, x))
    drop = set()
    for d in dims:
        if d is None or d.value is None:
            return RuleOut(_tensor(None, x))
        pos, err = locate(shape, d.value)
        if err:
            out.issues.append(ctx.issue(DIM_RANGE, err, 1))
            return out
        if pos is None:
            return RuleOut(_tensor(None, x))
        if shape == ():
            continue
        size = const(shape[pos])
        if size is None:
            return RuleOut(_tensor(None, x))  # a name may or may not be 1
        if size == 1:
            drop.add(pos)
    out.value = _tensor(tuple(d for i, d in enumerate(shape) if i not in drop), x)
    return out


@rule
def flatten(ctx: RuleContext, x: Value, start: Value, end: Value) -> RuleOut:
    """Dimensions start..end merged into their product."""
    found = _dim_pair(ctx, x, start, end, (Expr.const(1),))
    if isinstance(found, RuleOut):
        return found
    shape, p0, p1 = found
    if p0 > p1:
        return RuleOut(issues=[ctx.issue(DIM_RANGE, "start_dim comes after end_dim", 1)])
    merged = shape[p0 : p1 + 1]
    size = None if any(d is None for d in merged) else numel(merged)
    return RuleOut(_tensor(shape[:p0] + (size,) + shape[p1 + 1 :], x))


@rule
def unflatten(ctx: RuleContext, x: Value, dim: Value, sizes: Value) -> RuleOut:
    """Dimension dim split into sizes (one -1 inferred); the product must match."""
    out = RuleOut()
    shape = shape_of(x)
    new = int_list(sizes)
    if shape is None or new is None:
        return RuleOut(_tensor(None, x))
    positions = dim_positions(ctx, shape, out, (dim, 1), needs=DIM_RANGE)
    if positions is None:
        return out
    (pos,) = positions
    if pos is None:
        return RuleOut(_tensor(None, x))
    filled = _fill_minus_one(ctx, (shape[pos],), new, out, 2)
    if filled is False:
        return out
    out.value = _tensor(replaced(shape, pos, *filled), x)  # type: ignore[arg-type]
    return out


def _fill_minus_one(
    ctx: RuleContext, source: Shape, sizes: list[Expr | None], out: RuleOut, arg: int
) -> list[Dim] | bool:
    """sizes with -1 inferred from source's element count; False after an issue."""
    minus = [i for i, s in enumerate(sizes) if s is not None and s.value == -1]
    if len(minus) > 1:
        out.issues.append(ctx.issue(RESHAPE, "only one dimension can be inferred (-1)", arg))
        return False
    for s in sizes:
        if s is not None and s.value is not None and s.value < -1:
            out.issues.append(ctx.issue(RESHAPE, f"invalid size {s.value}", arg))
            return False
    total_in = None if any(d is None for d in source) else numel(source)
    rest = [s for i, s in enumerate(sizes) if i not in minus]
    known_rest = None if any(s is None for s in rest) else product(rest)  # type: ignore[arg-type]
    if minus:
        inferred: Dim = None
        if total_in is not None and known_rest is not None:
            # torch rejects a -1 that does not divide: the quotient is exact.
            q = total_in.divide_exact(known_rest) if known_rest.value != 0 else None
            a, b = total_in.value, known_rest.value
            if a is not None and b is not None and (b == 0 or a % b):
                out.issues.append(
                    ctx.issue(
                        RESHAPE,
                        f"shape {_sizes_text(sizes)} is invalid for input of size {a}",
                        arg,
                    )
                )
                return False
            inferred = q
        return [inferred if i in minus else s for i, s in enumerate(sizes)]
    if total_in is not None and known_rest is not None:
        ratio = total_in.constant_ratio(known_rest)
        if ratio is not None or differs(total_in, known_rest):
            out.issues.append(
                ctx.issue(
                    RESHAPE,
                    f"shape {_sizes_text(sizes)} is invalid for input of size "
                    f"{total_in.to_human()}"
                    + ("" if ratio is None else f" (it holds {known_rest.to_human()})"),
                    arg,
                )
            )
            return False
    return list(sizes)


def _sizes_text(sizes: Sequence[Expr | None]) -> str:
    return "[" + ", ".join(dim_str(s) for s in sizes) + "]"


@rule
def reshape(ctx: RuleContext, x: Value, sizes: Value) -> RuleOut:
    """view/reshape: -1 inferred; a known element count that differs is an error."""
    out = RuleOut()
    shape = shape_of(x)
    new = int_list(sizes)
    if new is None:
        return RuleOut(_tensor(None, x))
    source: Shape = shape if shape is not None and not has_var(shape) else (None,)
    if shape is not None and has_var(shape):
        source = (TensorV(shape).numel(),)
    filled = _fill_minus_one(ctx, source, new, out, 1)
    if filled is False:
        return out
    out.value = _tensor(tuple(filled), x)  # type: ignore[arg-type]
    return out


def _per_axis(
    ctx: RuleContext, x: Value, sizes: Value, what: str
) -> tuple[Shape, list[Expr | None]] | RuleOut:
    """x's shape and the size list of expand/repeat, or the finished result: unknown,
    or fewer sizes (what: "sizes", "repeats") than x has dimensions."""
    shape = shape_of(x)
    new = int_list(sizes)
    if shape is None or new is None or has_var(shape):
        return RuleOut(_tensor(None, x))
    if len(new) < len(shape):
        message = f"the number of {what} ({len(new)}) is smaller than the rank ({len(shape)})"
        return RuleOut(issues=[ctx.issue(RANK, message, 1)])
    return shape, new


@rule
def expand(ctx: RuleContext, x: Value, sizes: Value) -> RuleOut:
    """expand: -1 keeps a size, new leading axes allowed, existing ones must be 1 or equal."""
    found = _per_axis(ctx, x, sizes, "sizes")
    if isinstance(found, RuleOut):
        return found
    shape, new = found
    out = RuleOut()
    lead = len(new) - len(shape)
    result: list[Dim] = list(new[:lead])
    for i, d in enumerate(shape):
        want = new[lead + i]
        if want is not None and want.value == -1:
            result.append(d)
            continue
        if differs(d, want) and const(d) != 1:
            out.issues.append(
                ctx.issue(
                    BROADCAST,
                    f"cannot expand {shape_text(shape)} to {_sizes_text(new)}: "
                    f"size {dim_str(d)} is not 1",
                    1,
                )
            )
            return out
        result.append(want)
    out.value = _tensor(tuple(result), x)
    return out


@rule
def expand_as(ctx: RuleContext, x: Value, other: Value) -> RuleOut:
    """expand to another tensor's shape."""
    target = shape_of(other)
    if target is None or has_var(target):
        return RuleOut(_tensor(target, x))
    return expand(ctx, x, TupleV(tuple(IntV(d) for d in target)))  # type: ignore[arg-type]


@rule
def repeat(ctx: RuleContext, x: Value, sizes: Value) -> RuleOut:
    """Each dimension times its repeat count; extra counts add leading axes."""
    found = _per_axis(ctx, x, sizes, "repeats")
    if isinstance(found, RuleOut):
        return found
    shape, reps = found
    out = RuleOut()
    padded = (Expr.const(1),) * (len(reps) - len(shape)) + tuple(shape)
    result = tuple(
        None if r is None or d is None else d * r for d, r in zip(padded, reps, strict=True)
    )
    out.value = _tensor(result, x)
    return out


# -- joining and splitting -------------------------------------------------------------------


def _tensor_items(v: Value) -> list[Value] | None:
    return list(v.items) if isinstance(v, TupleV) else None


@rule
def cat(ctx: RuleContext, tensors: Value, dim: Value) -> RuleOut:
    """Concatenation: sizes add along dim and must match elsewhere (beside a tensor of unknown rank, the others' shape with dim's size unknown)."""
    items = _tensor_items(tensors)
    if items is None:
        return RuleOut(TensorV(None))
    out = RuleOut()
    # torch skips legacy empty 1-D tensors of size 0 when concatenating.
    shapes = [shape_of(t) for t in items]
    if any(s is None or has_var(s) for s in shapes) or not shapes:
        return _cat_in_part(ctx, items, shapes, dim)
    shapes = [s for s in shapes if not (len(s) == 1 and const(s[0]) == 0)] or shapes  # type: ignore[arg-type]
    ranks = {len(s) for s in shapes}  # type: ignore[arg-type]
    if len(ranks) > 1:
        out.issues.append(
            ctx.issue(CAT, "tensors of different ranks: " + ", ".join(map(shape_text, shapes)), 0)
        )
        return out
    first = shapes[0]
    assert first is not None
    if not first:
        out.issues.append(ctx.issue(RANK, "zero-dimensional tensors cannot be concatenated", 0))
        return out
    positions = dim_positions(ctx, first, out, (dim, 1))
    if positions is None:
        return out
    (pos,) = positions
    if pos is None:
        return RuleOut(TensorV(None, _first_dtype(items)))
    result = list(first)
    for s in shapes[1:]:
        for i, (a, b) in enumerate(zip(first, s, strict=True)):  # type: ignore[arg-type]
            clash = None
            if i != pos:
                clash = clash_issue(ctx, f"concatenating along dimension {pos} lines up", a, b, 0)
            if clash is not None:
                out.issues.append(clash)
                return out
            if i != pos and differs(a, b):
                out.issues.append(
                    ctx.issue(
                        CAT,
                        f"sizes must match except in dimension {pos}: "
                        + ", ".join(map(shape_text, shapes)),
                        0,
                    )
                )
                return out
    along_sizes = [s[pos] for s in shapes]  # type: ignore[index]
    result[pos] = None if any(d is None for d in along_sizes) else total(along_sizes)  # type: ignore[arg-type]
    out.value = TensorV(tuple(result), _first_dtype(items))
    return out


def _cat_in_part(ctx: RuleContext, items: list[Value], shapes: list, dim: Value) -> RuleOut:
    """A concatenation where some tensor's rank is not known (a parameter,
    `torch.cat((x, context), dim=1)`): torch takes each other tensor only at the
    rank and, but along dim, the sizes of the ones whose shape is known, or skips
    it as a legacy empty 1-D tensor; either way the result has their shape with
    dim's size unknown. Nothing is judged: the conflicts are the full rule's."""
    unknown = RuleOut(TensorV(None, _first_dtype(items)))
    known = [
        s
        for s in shapes
        if s is not None and not has_var(s) and not (len(s) == 1 and const(s[0]) == 0)
    ]
    if not known or len({len(s) for s in known}) != 1 or not known[0]:
        return unknown
    positions = dim_positions(ctx, known[0], RuleOut(), (dim, 1))
    if positions is None or positions[0] is None:
        return unknown
    (pos,) = positions
    result: list[Dim | None] = []
    for i, d in enumerate(known[0]):
        if i == pos or d is None or any(s[i] is None or differs(d, s[i]) for s in known[1:]):
            result.append(None)
        else:
            result.append(d)
    return RuleOut(TensorV(tuple(result), _first_dtype(items)))


def _first_dtype(items: list[Value]) -> str | None:
    dtypes = {t.dtype for t in items if isinstance(t, TensorV)}
    return dtypes.pop() if len(dtypes) == 1 else None


@rule
def stack(ctx: RuleContext, tensors: Value, dim: Value) -> RuleOut:
    """A new axis of len(tensors) at dim; the tensors must have one shape."""
    items = _tensor_items(tensors)
    if items is None:
        return RuleOut(TensorV(None))
    out = RuleOut()
    shapes = [shape_of(t) for t in items]
    if not shapes or any(s is None or has_var(s) for s in shapes):
        return RuleOut(TensorV(None, _first_dtype(items)))
    first = shapes[0]
    assert first is not None
    for s in shapes[1:]:
        if len(s) != len(first) or any(differs(a, b) for a, b in zip(first, s, strict=True)):  # type: ignore[arg-type]
            out.issues.append(
                ctx.issue(
                    CAT,
                    "stack expects each tensor to be equal size: "
                    + ", ".join(map(shape_text, shapes)),
                    0,
                )
            )
            return out
    positions = dim_positions(ctx, first, out, (dim, 1), extra=1)
    if positions is None:
        return out
    (pos,) = positions
    if pos is None:
        return RuleOut(TensorV(None, _first_dtype(items)))
    n = Expr.const(len(items))
    out.value = TensorV(first[:pos] + (n,) + first[pos:], _first_dtype(items))
    return out


_ONE = Expr.const(1)

# How torch's atleast_Nd lifts a tensor of lower rank (0-d to 1-d alike: numel 1 is
# size 1), the shape of each rank below N: hstack (1), vstack and row_stack (2),
# dstack (3), column_stack's own (a 0-d or 1-d tensor a column).
_LIFTS: dict[str, Callable[[Shape], Shape]] = {
    "1": lambda s: s or (_ONE,),
    "2": lambda s: (_ONE, *(s or (_ONE,))) if len(s) < 2 else s,
    "3": lambda s: ((_ONE,) * 3, (_ONE, *s, _ONE), (*s, _ONE))[len(s)] if len(s) < 3 else s,
    "column": lambda s: ((s or (_ONE,))[0], _ONE) if len(s) < 2 else s,
}


def _stacked(ctx: RuleContext, tensors: Value, lift: str, dim_of) -> RuleOut:
    """torch's hstack / vstack / dstack / column_stack: each tensor lifted to a
    least rank (`_LIFTS`), then one `cat` along the dim the first lifted tensor's
    rank gives (`dim_of`); a tensor of rank not known leaves that dim not known
    where it decides it, and is the cat's own otherwise."""
    items = _tensor_items(tensors)
    if items is None:
        return RuleOut(TensorV(None))
    lifted: list[Value] = []
    for t in items:
        s = shape_of(t)
        lifted.append(t if s is None or has_var(s) else _tensor(_LIFTS[lift](s), t))
    first = shape_of(lifted[0]) if lifted else None
    if first is None or has_var(first):
        return RuleOut(TensorV(None, _first_dtype(items)))
    return cat(ctx, TupleV(tuple(lifted)), IntV(Expr.const(dim_of(len(first)))))


@rule
def hstack(ctx: RuleContext, tensors: Value) -> RuleOut:
    """torch.hstack: each tensor at least 1-d, joined along dim 0 where they are 1-d, else dim 1."""
    return _stacked(ctx, tensors, "1", lambda rank: 0 if rank == 1 else 1)


@rule
def vstack(ctx: RuleContext, tensors: Value) -> RuleOut:
    """torch.vstack / row_stack: each tensor at least 2-d (a 1-d one a row), joined along dim 0."""
    return _stacked(ctx, tensors, "2", lambda rank: 0)


@rule
def dstack(ctx: RuleContext, tensors: Value) -> RuleOut:
    """torch.dstack: each tensor at least 3-d (`[n]` is `[1, n, 1]`, `[a, b]` is `[a, b, 1]`), joined along dim 2."""
    return _stacked(ctx, tensors, "3", lambda rank: 2)


@rule
def column_stack(ctx: RuleContext, tensors: Value) -> RuleOut:
    """torch.column_stack: a 0-d or 1-d tensor a column `[n, 1]`, the rest as they are, joined along dim 1."""
    return _stacked(ctx, tensors, "column", lambda rank: 1)


def _pieces(x: Value, shape: Shape, pos: int, sizes: Sequence[Dim]) -> TupleV:
    """The tensors x splits into along dimension pos, one for each size."""
    return TupleV(tuple(_tensor(replaced(shape, pos, s), x) for s in sizes))


def _cuts(n: int, step: int) -> list[Dim]:
    """Sizes of n cut into pieces of step, the last one smaller."""
    return [Expr.const(min(step, n - i)) for i in range(0, n, step)]


def _cut_axis(ctx: RuleContext, x: Value, dim: Value) -> tuple[Shape, int] | RuleOut:
    """(x's shape, the position of dim in it) for an op that cuts x along dim; the
    rule's answer instead where either is not known, or dim is out of x's rank."""
    out = RuleOut()
    shape = shape_of(x)
    if shape is None:
        return RuleOut(UNKNOWN)
    shape = opened(shape, dim)
    positions = dim_positions(ctx, shape, out, (dim, 2), needs=RANK)
    if positions is None:
        return out
    (pos,) = positions
    if pos is None:
        return RuleOut(UNKNOWN)
    return shape, pos


@rule
def split(ctx: RuleContext, x: Value, size: Value, dim: Value) -> RuleOut:
    """split(int): pieces of that size (the last smaller); split(list): exact sections."""
    cut = _cut_axis(ctx, x, dim)
    if isinstance(cut, RuleOut):
        return cut
    shape, pos = cut
    out = RuleOut()
    n = shape[pos]
    if isinstance(size, TupleV):
        sections = int_list(size)
        if sections is None:
            return RuleOut(UNKNOWN)
        if n is not None and all(s is not None for s in sections):
            if total(sections).definitely_differs(n):  # type: ignore[arg-type]
                out.issues.append(
                    ctx.issue(
                        SPLIT,
                        f"sections {_sizes_text(sections)} do not sum to the size "
                        f"{dim_str(n)} of dimension {pos}",
                        1,
                    )
                )
                return out
        out.value = _pieces(x, shape, pos, sections)  # type: ignore[arg-type]
        return out
    step = int_value(size)
    if step is None or not isinstance(n, Expr):
        return RuleOut(UNKNOWN)
    if n.value is not None and step.value is not None:
        if step.value <= 0:
            if n.value == 0 and step.value == 0:
                return RuleOut(TupleV((_tensor(shape, x),)))
            out.issues.append(ctx.issue(SPLIT, f"split size must be positive, got {step.value}", 1))
            return out
        out.value = _pieces(x, shape, pos, _cuts(n.value, step.value) or [Expr.const(0)])
        return out
    count = n.exact_div(step)
    if count is not None and count.value is not None:
        return RuleOut(_pieces(x, shape, pos, [step] * count.value))
    return RuleOut(UNKNOWN)


@rule
def chunk(ctx: RuleContext, x: Value, chunks: Value, dim: Value) -> RuleOut:
    """chunk(c): pieces of ceil(n/c) (possibly fewer than c pieces, as torch does);
    of a size not known to divide, the c pieces code unpacks, the last what is left."""
    out = RuleOut()
    shape = shape_of(x)
    c = const_int(chunks)
    if shape is None or c is None:
        return RuleOut(UNKNOWN)
    if c <= 0:
        return RuleOut(issues=[ctx.issue(SPLIT, f"chunk expects a positive count, got {c}", 1)])
    shape = opened(shape, dim)
    positions = dim_positions(ctx, shape, out, (dim, 2), needs=RANK)
    if positions is None:
        return out
    (pos,) = positions
    if pos is None:
        return RuleOut(UNKNOWN)
    n = shape[pos]
    if not isinstance(n, Expr):
        return RuleOut(_pieces(x, shape, pos, [None] * c))
    if n.value is not None:
        step = -(-n.value // c) if n.value else 0
        if step == 0:
            sizes = [Expr.const(0)] * c  # torch returns c empty chunks of an empty dimension
        else:
            sizes = _cuts(n.value, step)
        out.value = _pieces(x, shape, pos, sizes)
        return out
    piece = n.exact_div(c)
    if piece is not None:
        return RuleOut(_pieces(x, shape, pos, [piece] * c))
    # A size not known to divide: torch cuts pieces of ceil(n/c), the last one
    # what is left, and may make fewer than c of them (7 in 3 is 3, 3, 1; 4 in 3
    # is 2, 2). Code unpacks c names, which holds only where there are c pieces,
    # and then the last one is n - (c-1)·ceil(n/c).
    step = (n + (c - 1)) // c
    return RuleOut(_pieces(x, shape, pos, [step] * (c - 1) + [n - step * (c - 1)]))


@rule
def tensor_split(ctx: RuleContext, x: Value, sections: Value, dim: Value) -> RuleOut:
    """tensor_split(k): k pieces, the first n % k of them one longer; tensor_split(list of
    indices): the slices between them, as Python slices them ([5, 2] of 7 is 5, 0, 5)."""
    cut = _cut_axis(ctx, x, dim)
    if isinstance(cut, RuleOut):
        return cut
    shape, pos = cut
    n = shape[pos]
    if isinstance(sections, TupleV):
        cuts = int_list(sections)
        known = n.value if isinstance(n, Expr) else None
        if cuts is None or known is None or any(c is None or c.value is None for c in cuts):
            return RuleOut(UNKNOWN)
        bounds = [None, *(c.value for c in cuts), None]  # type: ignore[union-attr]
        sizes = [len(range(*slice(a, b).indices(known))) for a, b in zip(bounds, bounds[1:])]
        return RuleOut(_pieces(x, shape, pos, [Expr.const(v) for v in sizes]))
    k = const_int(sections)
    if k is None or not isinstance(n, Expr):
        return RuleOut(UNKNOWN)
    if k <= 0:
        return RuleOut(
            issues=[ctx.issue(SPLIT, f"tensor_split expects a positive count, got {k}", 1)]
        )
    if n.value is not None:
        q, r = divmod(n.value, k)
        return RuleOut(_pieces(x, shape, pos, [Expr.const(q + (i < r)) for i in range(k)]))
    piece = n.exact_div(k)
    return RuleOut(_pieces(x, shape, pos, [piece] * k)) if piece is not None else RuleOut(UNKNOWN)


@rule
def glu(ctx: RuleContext, x: Value, dim: Value) -> RuleOut:
    """GLU: dim halved (one half gates the other)."""
    shape = shape_of(x)
    if shape is None:
        return RuleOut(_tensor(None, x))
    out = RuleOut()
    positions = dim_positions(ctx, shape, out, (dim, 1), needs=DIM_RANGE)
    if positions is None:
        return out
    (pos,) = positions
    n = shape[pos] if pos is not None else None
    half = None
    if isinstance(n, Expr) and n.value is not None:
        if n.value % 2:
            return RuleOut(_tensor(None, x))  # torch refuses it (not yet a diagnostic)
        half = Expr.const(n.value // 2)
    elif isinstance(n, Expr):
        half = n.exact_div(2)
    if pos is None:
        return RuleOut(_tensor(None, x))
    out.value = _tensor((*shape[:pos], half, *shape[pos + 1 :]), x)
    return out


@rule
def unbind(ctx: RuleContext, x: Value, dim: Value) -> RuleOut:
    """A tuple of the slices along dim (its size must be a number)."""
    out = RuleOut()
    shape = shape_of(x)
    if shape is None:
        return RuleOut(UNKNOWN)
    positions = dim_positions(ctx, shape, out, (dim, 1), needs=DIM_RANGE)
    if positions is None:
        return out
    (pos,) = positions
    if pos is None or const(shape[pos]) is None:
        return RuleOut(UNKNOWN)
    piece = _tensor(replaced(shape, pos), x)
    return RuleOut(TupleV((piece,) * const(shape[pos])))  # type: ignore[operator]


# -- attention, losses, normalization ----------------------------------------------------------


@rule
def sdpa(
    ctx: RuleContext, q: Value, k: Value, v: Value, gqa: Value, mask: Value, drop: Value
) -> RuleOut:
    """scaled_dot_product_attention: q [*b l e], k [*b s e], v [*b s ev] -> [*b l ev].

    Batch axes broadcast; with enable_gqa the head axis (-3) of q may be a
    multiple of k's. Binds b (query batch elements), l, s, e, ev for the cost,
    and the kernel CPU runs it with (ops/attention_path.py).
    """
    sq, sk, sv = shape_of(q), shape_of(k), shape_of(v)
    out = RuleOut()
    if sq is None or sk is None or sv is None:
        return RuleOut(_tensor(None, q))
    for i, s in enumerate((sq, sk, sv)):
        r = known_rank(s)
        if r is not None and r < 2:
            out.issues.append(
                ctx.issue(RANK, f"needs at least 2 dimensions, got {shape_text(s)}", i)
            )
    if out.issues:
        return out
    views = [_matrix_view(s) for s in (sq, sk, sv)]
    if any(vw is None for vw in views):
        return RuleOut(_tensor(None, q))
    (_, bq, lq, e), (_, bk, s_k, ek), (_, bv, s_v, ev) = views  # type: ignore[misc]
    enable_gqa = isinstance(gqa, BoolV) and bool(gqa.value)
    clash = (
        clash_issue(ctx, "query and key embeddings line up", e, ek, 1)
        or clash_issue(ctx, "key and value sequences line up", s_k, s_v, 2)
        or _broadcast_clash(ctx, bk, bv, 2)
        or (None if enable_gqa else _broadcast_clash(ctx, bq, bk, 1))
    )
    if clash is not None:
        out.issues.append(clash)
        return out
    if differs(e, ek):
        out.issues.append(
            ctx.issue(
                SIGNATURE,
                f"query and key embedding sizes differ: {shape_text(sq)}, {shape_text(sk)}",
                1,
            )
        )
    if differs(s_k, s_v):
        out.issues.append(
            ctx.issue(
                SIGNATURE,
                f"key and value sequence lengths differ: {shape_text(sk)}, {shape_text(sv)}",
                2,
            )
        )
    bkv, conflicts = broadcast_shapes(bk, bv)
    if conflicts:
        out.issues.append(
            ctx.issue(
                BROADCAST,
                f"key and value batch axes do not broadcast: {shape_text(sk)}, {shape_text(sv)}",
                2,
            )
        )
    if out.issues:
        return out
    batch: Shape | None = bq
    if bkv is not None:
        if enable_gqa and bq and bkv and not has_var(bq[-1:]) and not has_var(bkv[-1:]):
            hq, hk = const(bq[-1]), const(bkv[-1])
            if hq is not None and hk is not None and hk and hq % hk:
                out.issues.append(
                    ctx.issue(
                        SIGNATURE,
                        f"query heads ({hq}) are not a multiple of key/value heads ({hk})",
                        1,
                    )
                )
                return out
            head_b, conflicts = broadcast_shapes(bq[:-1], bkv[:-1])
            batch = None if head_b is None else head_b + bq[-1:]
        else:
            batch, conflicts = broadcast_shapes(bq, bkv)
        if conflicts:
            out.issues.append(
                ctx.issue(
                    BROADCAST,
                    f"query and key/value batch axes do not broadcast: "
                    f"{shape_text(sq)}, {shape_text(sk)}",
                    1,
                )
            )
            return out
    shape = None if batch is None else tuple(batch) + (lq, ev)
    out.value = _tensor(shape, q)
    out.bind = {
        "b": numel(batch),
        "l": lq,
        "s": s_k if const(s_k) is not None else s_v,
        "e": e,
        "ev": ev,
    } | attention_path.fused_binds(q, k, v, mask, drop, gqa)
    return out


def _loss_value(x: Value, per_item: Shape | None, reduction: str | None) -> TensorV:
    """A loss: a scalar when reduced, per_item with reduction="none", else unknown."""
    if reduction in ("mean", "sum"):
        return _tensor((), x)
    return _tensor(per_item if reduction == "none" else None, x)


@rule
def cross_entropy(ctx: RuleContext, x: Value, target: Value, reduction: Value) -> RuleOut:
    """input [N, C, d...] or [C]; target class indices [N, d...] or probabilities like input."""
    sx, st = shape_of(x), shape_of(target)
    red = reduction.value if isinstance(reduction, StrV) else None
    out = RuleOut()
    rx, rt = known_rank(sx), known_rank(st)
    per_item: Shape | None = None
    if sx is not None and st is not None and rx is not None and rt is not None:
        t_dtype = dtype_of(target)
        probs = (t_dtype is not None and t_dtype.startswith(("float", "bfloat"))) or (
            t_dtype is None and rt == rx
        )
        if probs:
            if rt != rx or any(differs(a, b) for a, b in zip(sx, st, strict=True)):
                out.issues.append(
                    ctx.issue(
                        SIGNATURE,
                        f"probability targets must match the input: {shape_text(sx)} vs "
                        f"{shape_text(st)}",
                        1,
                    )
                )
                return out
            per_item = sx[:1] + sx[2:] if rx >= 2 else ()
        else:
            expected = sx[:1] + sx[2:] if rx >= 2 else ()
            if rt != len(expected) or any(differs(a, b) for a, b in zip(expected, st, strict=True)):
                out.issues.append(
                    ctx.issue(
                        SIGNATURE,
                        f"class-index target {shape_text(st)} does not fit input "
                        f"{shape_text(sx)} (expected {shape_text(expected)})",
                        1,
                    )
                )
                return out
            per_item = st
    out.value = _loss_value(x, per_item, red)
    return out


def _layer_reduction(reduction: Value, size_average: Value, reduce: Value) -> Value:
    """A loss layer's reduction as torch's _Loss.__init__ sets it: the deprecated
    size_average / reduce, where either is given, decide it
    (_Reduction.legacy_get_string); unknown where they are not known."""
    if isinstance(size_average, NoneV) and isinstance(reduce, NoneV):
        return reduction
    flags = []
    for v in (size_average, reduce):
        if isinstance(v, NoneV):
            flags.append(True)
        elif isinstance(v, BoolV) and v.value is not None:
            flags.append(v.value)
        else:
            return StrV(None)
    size_avg, red = flags
    return StrV("none" if not red else "mean" if size_avg else "sum")


@rule
def loss_layer(
    ctx: RuleContext, x: Value, target: Value, reduction: Value, size_average: Value, reduce: Value
) -> RuleOut:
    """nn.L1Loss / nn.MSELoss / nn.BCELoss...: pointwise_loss at the layer's reduction."""
    return pointwise_loss(ctx, x, target, _layer_reduction(reduction, size_average, reduce))


@rule
def cross_entropy_layer(
    ctx: RuleContext, x: Value, target: Value, reduction: Value, size_average: Value, reduce: Value
) -> RuleOut:
    """nn.CrossEntropyLoss / nn.NLLLoss: cross_entropy at the layer's reduction."""
    return cross_entropy(ctx, x, target, _layer_reduction(reduction, size_average, reduce))


@rule
def pointwise_loss(ctx: RuleContext, x: Value, target: Value, reduction: Value) -> RuleOut:
    """mse_loss / l1_loss / binary_cross_entropy: input and target broadcast."""
    return _broadcast_loss(ctx, reduction, x, target)


def _broadcast_loss(ctx: RuleContext, reduction: Value, *xs: Value) -> RuleOut:
    """A loss of elementwise terms over its operands broadcast, at the reduction."""
    red = reduction.value if isinstance(reduction, StrV) else None
    out = broadcast(ctx, *xs)
    if isinstance(out, NotApplicable) or out.issues:
        return RuleOut(TensorV(None)) if isinstance(out, NotApplicable) else out
    out.value = _loss_value(xs[0], shape_of(out.value), red)
    return out


@rule
def margin_ranking_loss(
    ctx: RuleContext, x1: Value, x2: Value, target: Value, reduction: Value
) -> RuleOut:
    """F.margin_ranking_loss: the three tensors of one rank (torch's functional form
    raises otherwise), broadcast; then the loss at the reduction."""
    ranks = [known_rank(shape_of(v)) for v in (x1, x2, target)]
    if None not in ranks and len(set(ranks)) > 1:
        out = RuleOut(TensorV(None))
        out.issues.append(
            ctx.issue(SIGNATURE, f"margin_ranking_loss takes operands of one rank, not {ranks}", 0)
        )
        return out
    return _broadcast_loss(ctx, reduction, x1, x2, target)


@rule
def margin_ranking_layer(
    ctx: RuleContext,
    x1: Value,
    x2: Value,
    target: Value,
    reduction: Value,
    size_average: Value,
    reduce: Value,
) -> RuleOut:
    """nn.MarginRankingLoss: margin_ranking_loss at the layer's reduction."""
    red = _layer_reduction(reduction, size_average, reduce)
    return margin_ranking_loss(ctx, x1, x2, target, red)


@rule
def embedding_bag(
    ctx: RuleContext, x: Value, offsets: Value, weights: Value, dim: Value, mode: Value, last: Value
) -> RuleOut:
    """nn.EmbeddingBag's forward: a 2-d input is bags of equal length (offsets None),
    one row of dim per bag; a 1-d input is cut into bags at offsets (1-d), one row per
    offset, the last one an end where include_last_offset. per_sample_weights only
    with mode "sum", shaped like the input. Anything else torch refuses."""
    shape, d = shape_of(x), int_value(dim)
    out = RuleOut(TensorV(None))
    if shape is None or has_var(shape) or d is None:
        return out
    how = mode.value if isinstance(mode, StrV) else None
    if not is_none(weights) and how is not None and how != "sum":
        out.issues.append(ctx.issue(SIGNATURE, f"per_sample_weights with mode={how!r}", 2))
        return out
    if len(shape) == 2:
        if not is_none(offsets):
            out.issues.append(ctx.issue(SIGNATURE, "offsets given with a 2-d input", 1))
            return out
        out.value = TensorV((shape[0], d))
        return out
    if len(shape) != 1:
        out.issues.append(ctx.issue(RANK, f"input must be 1-d or 2-d, got rank {len(shape)}", 0))
        return out
    cuts = shape_of(offsets)
    if cuts is None or has_var(cuts) or len(cuts) != 1 or not isinstance(last, BoolV):
        return out
    if last.value is None or cuts[0] is None:
        return out
    bags = cuts[0] - Expr.const(1) if last.value else cuts[0]
    out.value = TensorV((bags, d))
    return out


@rule
def layer_norm(ctx: RuleContext, x: Value, normalized_shape: Value) -> RuleOut:
    """The trailing axes of x must equal normalized_shape; the output is shaped like x."""
    out = RuleOut(_tensor(x.shape, x) if isinstance(x, TensorV) else TensorV(None))
    shape = shape_of(x)
    norm = int_list(normalized_shape)
    if shape is None or norm is None:
        return out
    tail = known_tail(shape)
    if known_rank(shape) is not None and len(shape) < len(norm):
        out.issues.append(
            ctx.issue(
                SIGNATURE,
                f"input {shape_text(shape)} has fewer axes than normalized_shape "
                f"{_sizes_text(norm)}",
                0,
            )
        )
        return out
    k = min(tail, len(norm))
    for a, b in zip(shape[len(shape) - k :], norm[len(norm) - k :], strict=True):
        clash = clash_issue(ctx, f"layer norm over {shape_text(shape)} lines up", a, b, 0)
        if clash is not None:
            out.issues.append(clash)
            break
        if differs(a, b):
            out.issues.append(
                ctx.issue(
                    SIGNATURE,
                    f"input {shape_text(shape)} does not end with normalized_shape "
                    f"{_sizes_text(norm)}",
                    0,
                )
            )
            break
    return out


# -- constructors and introspection -------------------------------------------------------------


@rule
def sizes(ctx: RuleContext, size: Value) -> RuleOut:
    """zeros(2, 3), zeros((2, 3)), zeros(x.shape), zeros([]): the shape is the sizes."""
    dims = int_list(size)
    if (
        dims is None
        and isinstance(size, TupleV)
        and len(size.items) > 1
        and all(i is UNKNOWN or isinstance(i, (IntV, BoolV)) for i in size.items)
    ):
        # zeros(n, d) with n not known: torch takes several sizes only as ints, so
        # each is one axis (a lone argument may be a sequence of any length).
        dims = [None if i is UNKNOWN else int_value(i) for i in size.items]
    if dims is None:
        return RuleOut(TensorV(None))
    for d in dims:
        if d is not None and d.value is not None and d.value < 0:
            return RuleOut(
                issues=[ctx.issue(RESHAPE, f"negative dimension {d.value} in the size", 0)]
            )
    return RuleOut(TensorV(tuple(dims)))


@rule
def legacy_sizes(ctx: RuleContext, size: Value) -> RuleOut:
    """torch.Tensor(2, 3) / torch.FloatTensor(n, d): a tensor of those sizes where
    every argument is an int; torch.Tensor() is empty. One list or tuple display of
    numbers is data (`torch.Tensor([.5, .2])`: shape [2]); a torch.Size is sizes, so a
    sequence that may be one (`x.shape`) is data only where it holds a float."""
    items = size.items if isinstance(size, TupleV) else None
    if items is None:
        return RuleOut(TensorV(None))
    if len(items) == 1 and isinstance(items[0], ArrayV):  # data, of the constructor's dtype
        return RuleOut(TensorV(items[0].shape))
    if not items:
        return RuleOut(TensorV((Expr.const(0),)))
    if len(items) == 1 and isinstance(items[0], TupleV):
        nested = nested_numbers(items[0])
        surely_data = items[0].kind is not None or (nested is not None and "float" in nested[1])
        if nested is None or not surely_data:
            return RuleOut(TensorV(None))
        return RuleOut(TensorV(nested[0]))
    if not all(isinstance(i, IntV) and not isinstance(i, BoolV) for i in items):
        return RuleOut(TensorV(None))
    return sizes(ctx, size)


@rule
def arange(ctx: RuleContext, start: Value, end: Value, step: Value) -> RuleOut:
    """arange(n), arange(a, b), arange(a, b, s): ceil((end - start) / step) elements."""
    if is_none(end):
        start, end = IntV(Expr.const(0)), start
    if any(isinstance(v, FloatV) for v in (start, end, step)):
        nums = [v.value if isinstance(v, FloatV) else const_int(v) for v in (start, end, step)]
        if any(n is None for n in nums) or not nums[2]:
            return RuleOut(TensorV((None,)))
        lo, hi, st = nums
        return RuleOut(TensorV((Expr.const(max(0, math.ceil((hi - lo) / st))),)))  # type: ignore[operator]
    a, b, s = int_value(start), int_value(end), int_value(step)
    if a is None or b is None:
        return RuleOut(TensorV((None,)))
    if s is None:
        return RuleOut(TensorV((None,)))
    span = b - a
    if s.value == 1:
        return RuleOut(TensorV((span,)))
    if span.value is not None and s.value:
        return RuleOut(TensorV((Expr.const(max(0, -(-span.value // s.value))),)))
    if s.value:
        # ceil(span / s) as a floor quotient by |s|: torch refuses a span whose sign
        # is not the step's, so the numerator is never negative.
        if s.value < 0:
            span, s = -span, -s
        return RuleOut(TensorV(((span + s - 1) // s,)))
    q = span.exact_div(s)
    return RuleOut(TensorV((q,)))


@rule
def eye(ctx: RuleContext, n: Value, m: Value) -> RuleOut:
    """[n, m], m defaulting to n."""
    rows = int_value(n)
    cols = rows if is_none(m) else int_value(m)
    return RuleOut(TensorV((rows, cols)))


@rule
def shape(ctx: RuleContext, x: Value) -> RuleOut:
    """``x.shape`` / ``x.size()``: a tuple of ints, if the rank is known."""
    s = shape_of(x)
    if s is None or has_var(s):
        return RuleOut(UNKNOWN)
    return RuleOut(TupleV(tuple(IntV(d) for d in s)))  # type: ignore[arg-type]


@rule
def size(ctx: RuleContext, x: Value, dim: Value) -> RuleOut:
    """``x.size(dim)``: one size; without dim, as shape."""
    if is_none(dim):
        return shape(ctx, x)
    out = RuleOut()
    s = shape_of(x)
    if s is None:
        return RuleOut(IntV())
    positions = dim_positions(ctx, s, out, (dim, 1), needs=DIM_RANGE)
    if positions is None:
        return out
    (pos,) = positions
    d = s[pos] if pos is not None else None
    return RuleOut(IntV(d if isinstance(d, Expr) else None))


@rule
def stride(ctx: RuleContext, x: Value, dim: Value) -> RuleOut:
    """``x.stride(dim)``: one stride; without dim, the tuple of them. Where the
    analysis follows x's strides (ops/strides.py: through views, or a contiguous
    tensor's), else an int not known."""
    laid = saved.sym_layout_of(x)
    if laid is None:
        return RuleOut(UNKNOWN if is_none(dim) else IntV())
    sizes, steps = laid
    if is_none(dim):
        return RuleOut(TupleV(tuple(IntV(st) for st in steps)))
    out = RuleOut()
    positions = dim_positions(ctx, sizes, out, (dim, 1), needs=DIM_RANGE)
    if positions is None:
        return out
    (pos,) = positions
    return RuleOut(IntV(steps[pos] if pos is not None else None))


@rule
def as_strided(
    ctx: RuleContext, x: Value, size: Value, step: Value, offset: Value
) -> RuleOut | NotApplicable:
    """``x.as_strided(size, stride, storage_offset)``: a view of x's storage of
    shape size. Followed where every element it reaches surely lies within x
    itself (ints, x row-major, from x's own first element); an error where x holds
    its storage alone and the view reaches past its end, as torch refuses it
    (setStorage: out of bounds). Any other call is not described here."""
    sizes, steps = int_list(size), int_list(step)
    laid = saved.layout_of(x)
    if sizes is None or steps is None or len(sizes) != len(steps) or laid is None:
        return NOT_APPLICABLE
    known = [const(d) for d in [*sizes, *steps]]
    if any(k is None or k < 0 for k in known) or not is_none(offset):
        return NOT_APPLICABLE
    n = len(sizes)
    shape, each = [int(k) for k in known[:n]], [int(k) for k in known[n:]]  # type: ignore[arg-type]
    if not strides.is_contiguous(*laid):
        return NOT_APPLICABLE
    end = sum((d - 1) * st for d, st in zip(shape, each, strict=True)) + 1
    total = math.prod(laid[0])
    if 0 not in shape and end > total:
        if not isinstance(x, TensorV) or x.storage is not None or x.view:
            return NOT_APPLICABLE  # a view: its storage may reach further
        out = RuleOut()
        message = (
            f"sizes {shape} with strides {each} reach element {end - 1} of a "
            f"storage of {total}: out of bounds"
        )
        out.issues.append(ctx.issue(RESHAPE, message, 1))
        return out
    return RuleOut(_tensor(tuple(Expr.const(d) for d in shape), x))


@rule
def as_subclass(ctx: RuleContext, x: Value, cls: Value) -> RuleOut | NotApplicable:
    """``x.as_subclass(torch.Tensor)``: x's data, strides and place on the autograd
    graph as a plain tensor. Of any other class, that class's methods and
    ``__torch_function__`` decide what later ops on it do: not described."""
    if getattr(cls, "qual", None) != "torch.Tensor" or not isinstance(x, TensorV):
        return NOT_APPLICABLE
    return RuleOut(_tensor(x.shape, x))


@rule
def ndim(ctx: RuleContext, x: Value) -> RuleOut:
    """``x.dim()`` / ``x.ndim``: the rank, if known."""
    r = known_rank(shape_of(x))
    return RuleOut(IntV(None if r is None else Expr.const(r)))


@rule
def count(ctx: RuleContext, x: Value) -> RuleOut:
    """``x.numel()``."""
    s = shape_of(x)
    return RuleOut(IntV(numel(s)))


@rule
def item(ctx: RuleContext, x: Value) -> RuleOut:
    """``x.item()``: a Python number of the tensor's kind (its value where the
    tensor's one element is known)."""
    known = tensor_values.python_number(x)
    if known is not None:
        return RuleOut(known)
    dtype = dtype_of(x)
    if dtype is None:
        return RuleOut(UNKNOWN)
    if dtype == "bool":
        return RuleOut(BoolV())
    if dtype.startswith(("int", "uint")):
        return RuleOut(IntV())
    return RuleOut(FloatV())


@rule
def equal(ctx: RuleContext, x: Value, other: Value) -> RuleOut:
    """``torch.equal(x, other)``: a Python bool, False where the shapes differ
    (never an error), its value not known."""
    return RuleOut(BoolV())


# The most numbers `x.tolist()` is held as item by item; beyond, a list not known.
_LIST_ITEMS = 4096


@rule
def tolist(ctx: RuleContext, x: Value) -> RuleOut:
    """``x.tolist()``: nested lists of Python numbers of the tensor's kind (a
    number for a 0-d tensor), never a tensor; not known where its shape is not."""
    number = item(ctx, x).value
    s = shape_of(x)
    sizes = None if s is None else [d.value if isinstance(d, Expr) else None for d in s]
    if number is UNKNOWN or sizes is None or None in sizes or math.prod(sizes) > _LIST_ITEMS:
        return RuleOut(UNKNOWN)
    known = tensor_values.elements(x)
    if known is not None and 0 not in sizes:
        # the elements themselves, as Python reads them back (`dims = torch.arange(1,
        # x.dim()).tolist()` then `x.mean(dim=dims)`)
        bools = dtype_of(x) == "bool"
        flat: list[Value] = [BoolV(bool(e)) if bools else IntV(Expr.const(int(e))) for e in known]
        for n in reversed(sizes):
            flat = [TupleV(tuple(flat[i : i + n]), "list") for i in range(0, len(flat), n)]
        return RuleOut(flat[0])
    out = number
    for n in reversed(sizes):
        out = TupleV((out,) * n, "list")
    return RuleOut(out)


@rule
def rnn_layer(ctx: RuleContext, x: Value, hx: Value, cx: Value) -> RuleOut:
    """oneDNN's LSTM over one layer and direction (torch.mkldnn_rnn_layer): x (seq,
    batch, input), hx and cx (batch, hidden) -> (output (seq, batch, hx's hidden),
    hy, cy, and the kernel's uint8 workspace, whose size oneDNN decides)."""
    xs, hs, cs = shape_of(x), shape_of(hx), shape_of(cx)
    if xs is None or hs is None or cs is None or len(xs) != 3 or len(hs) != 2:
        return RuleOut(UNKNOWN)
    out = _tensor((xs[0], xs[1], hs[1]), x)
    return RuleOut(TupleV((out, _tensor(hs, hx), _tensor(cs, cx), TensorV(None, "uint8"))))


@rule
def unknown(ctx: RuleContext, *_: Value) -> RuleOut:
    """Described, but the result cannot be told statically (data-dependent shapes)."""
    return RuleOut(UNKNOWN)


@rule
def unknown_tensor(ctx: RuleContext, *_: Value) -> RuleOut:
    """A tensor whose shape depends on the data (nonzero, masked_select, unique)."""
    return RuleOut(TensorV(None))


@rule
def unique_consecutive(
    ctx: RuleContext, x: Value, inverse: Value, counts: Value, dim: Value
) -> RuleOut:
    """torch.unique_consecutive: how many runs there are depends on the data, so that
    length is not known (dim None: x flattened; else x's size along dim). Then, as
    asked, the run of each element (int64, x's shape; its size along dim) and each
    run's length (int64): a tuple in that order where either flag is set."""
    shape = shape_of(x)
    d = int_value(dim) if not is_none(dim) else None
    if shape is None or has_var(shape) or not (is_none(dim) or d is not None):
        return RuleOut(TensorV(None))
    flags = [f.value if isinstance(f, BoolV) else None for f in (inverse, counts)]
    if None in flags or (d is not None and d.value is None):
        return RuleOut(TensorV(None))
    dtype = dtype_of(x)
    if d is None:
        runs, inv = TensorV((None,), dtype), TensorV(shape, "int64")
    else:
        at, err = locate(shape, d.value)  # type: ignore[arg-type]
        if at is None:
            out = RuleOut(TensorV(None))
            if err:
                out.issues.append(ctx.issue(DIM_RANGE, err, 3))
            return out
        runs = TensorV((*shape[:at], None, *shape[at + 1 :]), dtype)
        inv = TensorV((shape[at],), "int64")
    items = [runs] + ([inv] if flags[0] else []) + ([TensorV((None,), "int64")] if flags[1] else [])
    return RuleOut(TupleV(tuple(items)) if len(items) > 1 else runs)


@rule
def data_tensor(ctx: RuleContext, data: Value) -> RuleOut:
    """torch.tensor(data): nested lists of Python numbers give one dim per level,
    where every list of a level has one length (ragged lists: unknown, nothing said);
    an array or a tensor gives its own shape and dtype."""
    if isinstance(data, (ArrayV, TensorV)):  # torch.tensor(a) / from_numpy(a): a's dtype
        # of a tensor: torch.tensor copies it, torch.as_tensor is the tensor itself
        # or, where a dtype is given, `data.to(dtype)` (ops/saved.py's casts)
        return RuleOut(TensorV(data.shape, data.dtype))
    nested = nested_numbers(data)
    if nested is None:
        return RuleOut(TensorV(None))
    shape, kinds = nested
    # No number at all (`[]`) is a float tensor, as torch.tensor([]) is.
    dtype = dtypes.result_type([], [], sorted(kinds)) if kinds else dtypes.DEFAULT_FLOAT
    return RuleOut(TensorV(shape, dtype))


@rule
def array_tensor(ctx: RuleContext, data: Value) -> RuleOut:
    """torch.from_numpy(a): a's shape and dtype, sharing its memory."""
    if isinstance(data, ArrayV):
        return RuleOut(TensorV(data.shape, data.dtype))
    return RuleOut(TensorV(None))


def nested_numbers(v: Value, depth: int = 0) -> tuple[tuple[Dim, ...], set[str]] | None:
    """The shape of nested lists of Python numbers (every list of a level of one
    length) and the kinds of number they hold; None for anything else."""
    if isinstance(v, TensorV):
        return None
    if isinstance(v, BoolV):
        return (), {"bool"}
    if isinstance(v, IntV):
        return (), {"int"}
    if isinstance(v, FloatV):
        return (), {"float"}
    if not isinstance(v, TupleV) or depth > 8:
        return None
    inner = [nested_numbers(i, depth + 1) for i in v.items]
    if any(i is None for i in inner) or len({i[0] for i in inner}) > 1:  # type: ignore[index]
        return None
    kinds = set().union(*(i[1] for i in inner)) if inner else set()  # type: ignore[index]
    return (Expr.const(len(v.items)), *(inner[0][0] if inner else ())), kinds  # type: ignore[index]


@rule
def diff(
    ctx: RuleContext, x: Value, n: Value, dim: Value, prepend: Value, append: Value
) -> RuleOut:
    """torch.diff: x with prepend and append joined along dim, n fewer entries there."""
    out = RuleOut()
    shape = shape_of(x)
    steps = int_value(n)
    dtype = x.dtype if isinstance(x, TensorV) else None
    if shape is None or has_var(shape) or steps is None or not shape:
        return RuleOut(TensorV(None, dtype))
    positions = dim_positions(ctx, shape, out, (dim, 2))
    if positions is None:
        return out
    (pos,) = positions
    if pos is None:
        return RuleOut(TensorV(None, dtype))
    sizes = [shape[pos]]
    for extra in (prepend, append):
        if isinstance(extra, NoneV):
            continue
        eshape = shape_of(extra)
        if eshape is None or has_var(eshape) or len(eshape) != len(shape):
            return RuleOut(TensorV(None, dtype))
        sizes.append(eshape[pos])
    if any(d is None for d in sizes):
        return RuleOut(TensorV(None, dtype))
    out.value = TensorV(replaced(shape, pos, total(sizes) - steps), dtype)  # type: ignore[arg-type]
    return out
