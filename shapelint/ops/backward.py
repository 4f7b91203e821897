"""Which tensors autograd tracks, and what one call's backward costs.

torch's flop counter, under `out.sum().backward()`, counts the matrix products
each op's backward runs, and an op's backward computes only the gradients its
operands need: `x @ W.T` costs `2·B·K·D` for `W`'s gradient, and another
`2·B·K·D` for `x`'s only when `x` requires grad. A tensor requires grad when it
derives from a trainable parameter (or an input given as requiring it); a frozen
parameter, a buffer, an input, anything made under `torch.no_grad()` or cut by
`.detach()` does not. `TensorV.grad` carries that through the analysis, None
where it is not known, and a backward that depends on an unknown one is unknown.

A stub states an op's backward as a formula (`backward=`), with `grad(x)` the 1
or 0 of whether operand x requires grad; an op without one costs 0 backward where
its forward costs 0, and is unknown otherwise (Cost.backward).
"""

from __future__ import annotations

from contextvars import ContextVar

from shapelint.notation.symbolic import Expr
from shapelint.ops import dtypes, einx_ops, no_derivative, versions
from shapelint.ops import saved as saving
from shapelint.ops.values import (
    UNKNOWN,
    BoolV,
    BufferV,
    Cost,
    ObjectV,
    ParameterV,
    TensorV,
    TupleV,
    Value,
    Var,
    replaced,
    tracked,
)

ZERO = Expr.const(0)


class Origin:
    """One run of an op, which the tensors it made carry (TensorV.origin): the
    graph `out.sum().backward()` walks back from the loss. parents: the Origins
    of the operands that require grad, through which the gradient flows on
    (BROKEN for one whose origin is not known); in_place: it wrote into its
    first operand, whose other names keep the Origin before the write.

    A function's run is a region of its own, so that a memoised run's ops serve
    every call of it: each tensor argument enters as a boundary (token: the run;
    path: which argument), whose parents are the first call's arguments; each
    tensor it returns leaves as an exit (inner: what made it inside; parents:
    the arguments of this call at the paths it reaches; token: the run). A walk
    that enters a region through an exit stops at its boundaries.

    side: an item of an op's tuple result whose gradient reaches less than the
    op's whole backward (nn.MultiheadAttention's weights: the q and k
    projections, not v's nor the output's), a node of its own: (the op's
    backward where the loss reaches it alone,); None for any other."""

    __slots__ = ("parents", "in_place", "inner", "token", "path", "needs", "side")

    def __init__(
        self,
        parents: frozenset,
        in_place: bool = False,
        inner: frozenset | None = None,
        token: object = None,
        path: tuple | None = None,
    ) -> None:
        self.parents = parents
        self.in_place = in_place
        self.inner = inner
        self.token = token
        self.path = path
        self.needs: frozenset | None = None  # an exit: the argument paths it reaches
        self.side: tuple | None = None


# Where the chain is lost: a tensor the analysis made without following its op,
# or one it could not see (an unknown operand): what reaches it is not known.
BROKEN = Origin(frozenset())
LEAF: frozenset = frozenset()  # made by no op backward differentiates
# A target's input: a plain torch.Tensor, as the command line gives it (it needs no
# grad, so no walk of the graph goes through it; pytypes.type_of reads it).
INPUT: frozenset = frozenset((Origin(frozenset()),))

# torch 2.13's flop counter counts a grouped convolution's weight gradient as if
# groups were 1 (conv_backward_flop ignores groups): shapelint counts the real work.
GROUPED_CONV_NOTE = (
    "backward of a grouped or depthwise convolution counted as the work it does: "
    "torch 2.13's flop counter counts its weight gradient groups times over"
)


# A loop whose count is a formula of sizes (`range(T)`) runs at least one turn, every
# size being positive: its backward is that of T >= 1 turns (at no turn nothing in it
# runs and the loss reaches what the names held before it, a figure of its own).
TURNS_NOTE = (
    "backward of a loop of symbolic count taken at one turn or more, its count being "
    "a formula of positive sizes"
)


# Whether autograd tracks tensor v (None: not known): values.tracked, which the ops
# below this module (attention_path) read too.
requires = tracked


def row(t: TensorV) -> TensorV:
    """One item of iterating tensor t, as Python's `for r in t` and `a, b = t` take
    it: `t[i]`, a view of t's storage that autograd tracks where it tracks t, and
    that derives from t (what the loss reaches through it reaches t)."""
    shape = None if t.shape is None else t.shape[1:]
    part = TensorV(shape, t.dtype, grad=requires(t), origin=origins(t))
    return saving.first_axis_part(part, t)


def operand_grads(values, unseen: bool = True) -> list[bool | None]:
    """requires() of every tensor among values: a tuple's items, and a module's
    tensors (a layer's weights are operands of its call: its Parameters, and a
    weight a reparametrization recomputed from Parameters it holds deeper, a tensor
    that requires grad where they do). A value not known at all may be a tensor that
    requires grad (`x * (self.g if flag else 1.0)`): None, unless unseen is False
    (the result was shown made without it)."""
    out: list[bool | None] = []
    for v in values:
        if isinstance(v, TupleV):
            out += operand_grads(v.items, unseen)
        elif isinstance(v, ObjectV):
            out += [requires(a) for _, a in v.attrs if isinstance(a, TensorV)]
        elif isinstance(v, TensorV):
            out.append(requires(v))
        elif v is UNKNOWN and unseen:
            out.append(None)
    return out


def any_grad(values, unseen: bool = True) -> bool | None:
    """Whether an op's result requires grad: True if an operand does, False if
    none does, None otherwise (an operand not known at all counts as one that may,
    unless unseen is False)."""
    grads = operand_grads(values, unseen)
    if True in grads:
        return True
    return None if None in grads else False


def _untracked(v: Value) -> bool:
    """No walk of the backward graph goes through v: no tensor, a parameter or
    buffer (a leaf), or a tensor that requires no grad."""
    return isinstance(v, (ParameterV, BufferV)) or not isinstance(v, TensorV) or v.grad is False


def _came(v: TensorV) -> frozenset:
    """v's Origins, BROKEN where they are not known: the parents of a node put
    in front of it (a run's boundary, a loop turn's entry)."""
    return v.origin if v.origin is not None else frozenset((BROKEN,))


def parents(values) -> frozenset:
    """The Origins an op's gradient flows on to from these operands: those of the
    tensors that may require grad; a parameter is a leaf; BROKEN for a tensor of
    unknown origin."""
    out: set = set()
    for v in values:
        if isinstance(v, TupleV):
            out |= parents(v.items)
        elif isinstance(v, ObjectV):
            # a layer's tensors are operands of its call (operand_grads): a weight
            # recomputed by ops before the call (a parametrization, a property)
            # passes the gradient on to them
            out |= parents([a for _, a in v.attrs if isinstance(a, TensorV)])
        elif not _untracked(v):
            out |= _came(v)
    return frozenset(out)


def _lost(operands, result: Value) -> bool:
    """An operand not known at all (a tensor the analysis lost, or a flag, size or
    fill value it could not read), where the result's rank is not known either
    (a shape with a variadic part, `x * g` of a g not known, is of no known rank):
    what it derives from may be a tensor the walk cannot see. A result of known
    rank was made without it (a size, a fill value, a dtype). An item not known
    of a list that holds tensors (`torch.stack([t, u])`) is a lost tensor, whatever
    the rank: a list of sizes holds none."""
    if any(_tensor_list_lost(v) for v in operands):
        return True
    if not any(v is UNKNOWN or _item_unknown(v) for v in operands):
        return False
    items = result.items if isinstance(result, TupleV) else (result,)
    return not items or any(not isinstance(i, TensorV) or not _rank_known(i) for i in items)


def _rank_known(t: TensorV) -> bool:
    return t.shape is not None and not any(isinstance(d, Var) for d in t.shape)


def _item_unknown(v: Value) -> bool:
    """A tuple or list with an item not known at all, at any depth."""
    return isinstance(v, TupleV) and any(i is UNKNOWN or _item_unknown(i) for i in v.items)


def _tensor_list_lost(v: Value) -> bool:
    """A tuple or list that holds a tensor and an item not known at all."""
    if not isinstance(v, TupleV):
        return False
    flat: list = []
    todo = list(v.items)
    while todo:
        i = todo.pop()
        if isinstance(i, TupleV):
            todo.extend(i.items)
        else:
            flat.append(i)
    return any(i is UNKNOWN for i in flat) and any(isinstance(i, TensorV) for i in flat)


def origins(v: Value) -> frozenset | None:
    """The Origins of v's tensors that may require grad (None: one's is not known;
    a value that is no tensor has none)."""
    if isinstance(v, TupleV):
        out: set = set()
        for i in v.items:
            o = origins(i)
            if o is None:
                return None
            out |= o
        return frozenset(out)
    if v is UNKNOWN:
        return None
    if _untracked(v):
        return LEAF
    return v.origin


_SAME_GRAD = object()


def made_by(v: Value, origin: Origin | None, grad: object = _SAME_GRAD) -> Value:
    """v's tensors as made by origin (None: by no op backward differentiates), a
    tensor marked as requiring grad or not where grad is given; an integer or bool
    tensor never requires grad."""
    if isinstance(v, (ParameterV, BufferV)):
        return v
    if isinstance(v, TensorV):
        cat = dtypes.tensor_category(v.dtype)
        if cat is not None and cat < 2:
            return replaced(v, grad=False, origin=LEAF)
        made = LEAF if origin is None else frozenset((origin,))
        if cat is None:
            # of a dtype not known: an integer one autograd never tracks, a float one
            # it tracks where an operand requires grad; made from none that does, it
            # requires none whatever its dtype
            kept = v.grad if grad is _SAME_GRAD else grad
            return replaced(v, grad=False if kept is False else None, origin=made)
        if grad is _SAME_GRAD:
            return replaced(v, origin=made)
        return replaced(v, grad=grad, origin=made)
    if isinstance(v, TupleV):
        return replaced(v, items=tuple(made_by(i, origin) for i in v.items))
    return v


def surely_reached(starts: frozenset, eithers: dict) -> set[int]:
    """The ids of the Origins the loss reaches whichever path each undecided join
    took (versions.either): from a set of parents two paths joined, what both sides
    reach, each side walked so (every way the set was joined: what all of them
    reach). Short of walk's: a boundary's parents (the first call's arguments) are
    not followed, nor a cycle of joins, nor a joined set among other parents (an op
    of the join and another operand: the join's side not told apart)."""
    memo: dict[frozenset, set[int]] = {}

    def side(s: frozenset) -> set[int]:
        if s not in memo:
            memo[s] = set()  # met again while walked: nothing sure through it
            memo[s] = along(s)
        return memo[s]

    def along(s: frozenset) -> set[int]:
        seen: set[int] = set()
        todo = [s]
        while todo:
            parents = todo.pop()
            ways = eithers.get(parents)
            if ways:
                both = [side(a) & side(b) for a, b in ways]
                seen |= set.intersection(*both)
                continue
            for o in parents:
                if o is BROKEN or id(o) in seen:
                    continue
                seen.add(id(o))
                if o.path is None:
                    todo.append(o.parents)
                    if o.inner is not None:
                        todo.append(o.inner)
        return seen

    return side(starts)


def walk(
    starts,
    stops: frozenset = frozenset(),
    closed: frozenset = frozenset(),
    fence: frozenset = frozenset(),
) -> tuple[set[int], list[Origin]] | None:
    """The ids of the Origins reached from starts, and the boundaries met of the
    runs in stops; None where BROKEN is reached (what depends on what, lost).
    An exit of a run in closed leads to its arguments only, not into the run;
    an Origin whose id is in fence is reached, but not what it leads to."""
    seen: set = set()
    met: list[Origin] = []
    todo = [(o, stops) for o in starts]
    while todo:
        o, st = todo.pop()
        if o is BROKEN:
            return None
        key = (id(o), st)
        if key in seen:
            continue
        seen.add(key)
        if o.path is not None and o.token in st:
            met.append(o)  # an argument of a run entered through its exit
            continue
        if id(o) in fence:
            continue
        todo.extend((p, st) for p in o.parents)
        if o.inner is not None and o.token not in closed:
            inside = st | {o.token}
            todo.extend((p, inside) for p in o.inner)
    return {k[0] for k in seen}, met


def entered(args, kwargs, token: object) -> tuple[list, dict]:
    """A run's arguments, each tensor that may require grad as a boundary of it."""
    return (
        [_bound(a, token, ("a", i)) for i, a in enumerate(args)],
        {k: _bound(v, token, ("k", k)) for k, v in kwargs.items()},
    )


def _same_or_new(v: TupleV, items: tuple) -> TupleV:
    """v itself where no item changed: the code that follows a list handed to a
    function and changed there (analysis/in_place.py) knows it by identity."""
    return v if all(a is b for a, b in zip(items, v.items)) else replaced(v, items=items)


def _bound(v: Value, token: object, path: tuple) -> Value:
    if isinstance(v, TupleV):
        return _same_or_new(v, tuple(_bound(x, token, (*path, j)) for j, x in enumerate(v.items)))
    if _untracked(v):
        return v
    edge = Origin(_came(v), token=token, path=path)
    return replaced(v, origin=frozenset((edge,)), storage=saving.storage_of(v))


def left(v: Value, token: object, args, kwargs) -> Value:
    """What a run returns, each tensor that may require grad as an exit of it:
    the loss reaches through it the arguments its making reached."""
    if isinstance(v, TupleV):
        items = tuple(left(x, token, args, kwargs) for x in v.items)
        return _same_or_new(v, items)
    if _untracked(v):
        return v
    if v.origin is None:
        return v
    got = walk(v.origin, frozenset((token,)))
    paths = None if got is None else frozenset(b.path for b in got[1] if b.token is token)
    exit_ = Origin(frozenset(), inner=v.origin, token=token, path=None)
    return _exit(v, exit_, paths, args, kwargs)


def called(v: Value, args, kwargs) -> Value:
    """A memoised run's result handed to another call: its exits anew, reaching
    this call's arguments."""
    if isinstance(v, TupleV):
        return _same_or_new(v, tuple(called(x, args, kwargs) for x in v.items))
    if not isinstance(v, TensorV) or isinstance(v, (ParameterV, BufferV)) or not v.origin:
        return v
    (old,) = v.origin if len(v.origin) == 1 else (None,)
    if old is None or old.inner is None:
        return v
    exit_ = Origin(frozenset(), inner=old.inner, token=old.token, path=None)
    return _exit(v, exit_, old.needs, args, kwargs)


def _exit(v: TensorV, exit_: Origin, paths, args, kwargs) -> TensorV:
    if paths is None:
        exit_.parents = frozenset((BROKEN,))
    else:
        found: set = set()
        for p in paths:
            found |= _at(args, kwargs, p)
        exit_.parents = frozenset(found)
    exit_.needs = paths
    return replaced(v, origin=frozenset((exit_,)), storage=saving.storage_of(v))


def turn_entries(env: dict) -> dict:
    """A loop turn counted for all its turns: each name holding a tensor that may
    require grad rebound, in env, to the same tensor entering the turn (an Origin
    of its own), so that what the turn reads of what a turn before left is told
    apart from every other use of it."""
    entries: dict = {}
    for k, v in list(env.items()):
        if _untracked(v):
            continue
        entries[k] = Origin(_came(v))
        env[k] = replaced(v, origin=frozenset((entries[k],)), storage=saving.storage_of(v))
    return entries


def carried(env: dict, entries: dict) -> list | None:
    """(what the name holds after the turn, its entry) for each name the turn
    rebound; None where one's origin is not known."""
    out = []
    for k, entry in entries.items():
        o = origins(env.get(k, UNKNOWN))
        if o is None:
            return None
        if o != {entry}:
            out.append((o, entry))
    return out


_SETTLE_MAX = 8  # turns followed back, one by one, before a first turn is not known


def settle(env: dict, entries: dict, count: Expr | None) -> None:
    """The entries of a loop counted by one turn (turn_entries; env: the names
    after the turn) made to lead where autograd's graph leads from the last of
    count turns: to the values before the loop that the first turn reads on the
    way there. A name the last turn reads holds what the turn before left, which
    read other names of the turn before it: read back turn by turn, the first
    turn's reads of the names before the loop are the ones the loss reaches
    (`w = q(v); v = p(u)`: the last turn's v is the turn before's p(u), so the
    loss reaches the u before the loop and not the v, where there are two turns
    or more). At a count not known, the names where the reads back settle: the
    first turn's where the names the loss reaches settle at once, the only case
    whose loop has a figure (analysis/reached.py), and a turn enough before the
    last for a bound; where they never settle, nothing known."""
    if not entries:
        return
    fence = frozenset(id(e) for e in entries.values())
    index = {id(e): k for k, e in entries.items()}
    afters: dict = {}
    for k in entries:
        o = origins(env.get(k, UNKNOWN))
        if o is None:
            return  # what the turn left is not known: the loop's figure is not either
        afters[k] = o
    n = None if count is None else count.value
    reads: dict = {}  # name -> the names a turn reads of the turn before, to make it
    for k in entries:
        got = walk(afters[k], fence=fence)
        reads[k] = None if got is None else frozenset(index[i] for i in got[0] if i in index)
    before = {k: e.parents for k, e in entries.items()}  # what each name held before the loop
    for k, entry in entries.items():
        names = _first_reads(k, reads, n)
        if names is None:
            entry.parents = frozenset((BROKEN,))
        elif names != {k}:
            entry.parents = frozenset().union(*(before[j] for j in names))


def _first_reads(k, reads: dict, n: int | None) -> frozenset | None:
    """The names the first of n turns reads on the way to the last turn's read
    of name k (n None: where the names read back settle, as they do after
    enough turns); None where not followed, or they never settle (`u, v = v, u`
    at a count not known: which one depends on its parity)."""
    names = frozenset((k,))
    for step in range(_SETTLE_MAX):
        if n is not None and step >= n - 1:
            return names
        nxt: frozenset = frozenset()
        for j in names:
            if reads[j] is None:
                return None
            nxt |= reads[j]
        if nxt == names:
            return names
        names = nxt
    return None


def _at(args, kwargs, path: tuple) -> set:
    """The Origins of the argument at path (BROKEN where there is none there)."""
    kind, key, *rest = path
    if kind == "a":
        v = args[key] if key < len(args) else None
    else:
        v = kwargs.get(key)
    for j in rest:
        v = v.items[j] if isinstance(v, TupleV) and j < len(v.items) else None
    if v is None:
        return {BROKEN}
    o = origins(v)
    return {BROKEN} if o is None else set(o)


def _integral(v: Value) -> bool:
    """Whether every tensor of v is of an integer or bool dtype (and there is one)."""
    if isinstance(v, TupleV):
        items = [i for i in v.items if isinstance(i, (TensorV, TupleV))]
        return bool(items) and all(_integral(i) for i in items)
    return (
        isinstance(v, TensorV)
        and dtypes.tensor_category(v.dtype) in (0, 1)
        and not isinstance(v, (ParameterV, BufferV))
    )


def with_grad(v: Value, grad: bool | None) -> Value:
    """v's tensors marked as requiring grad or not (a tuple's items too); a
    parameter or buffer keeps what it is."""
    if isinstance(v, (ParameterV, BufferV)):
        return v
    if isinstance(v, TensorV):
        return v if v.grad is grad else replaced(v, grad=grad)
    if isinstance(v, TupleV):
        items = tuple(with_grad(i, grad) for i in v.items)
        return v if all(a is b for a, b in zip(items, v.items)) else TupleV(items)
    return v


def unlinked(v: Value) -> Value:
    """v's tensors that autograd may track (a tuple's items too) as made by ops no
    record holds: what the loss reaches through them is not known."""
    if isinstance(v, TupleV):
        items = tuple(unlinked(i) for i in v.items)
        return v if all(a is b for a, b in zip(items, v.items)) else replaced(v, items=items)
    if _untracked(v):
        return v
    return replaced(v, origin=frozenset((BROKEN,)))


def keep_grad(old: Value, new: Value) -> Value:
    """new, a refined view of tensor old (a shape learnt from a use), with old's grad."""
    if isinstance(new, TensorV) and isinstance(old, TensorV) and requires(new) is None:
        new = with_grad(new, requires(old))
    if isinstance(new, TensorV) and isinstance(old, TensorV) and new.origin is None:
        if not isinstance(new, (ParameterV, BufferV)):
            new = replaced(new, origin=old.origin)
    return saving.same_tensor(old, new)


def in_mode(c: Cost) -> Cost:
    """c as recorded in the current grad mode: no backward where it is off, an
    unknown one where it is not known."""
    mode = GRAD_MODE.get()
    if mode is False:
        return no_backward(c)
    if mode is None and c.backward is not None and c.backward != ZERO:
        c = replaced(c, backward=None)
    if mode is None and c.saved != ZERO:
        c = replaced(c, saved=None)
    return c


RECOMPUTED = "run again inside backward (torch.utils.checkpoint): its forward counts there too"
EARLY_STOP = (
    "checkpointed with use_reentrant=False: backward recomputes its forward up to the "
    "last tensor it saved (torch's early stop), which is not modelled: backward unknown"
)


def recomputed(c: Cost, grad: bool | None, whole: bool) -> Cost:
    """c of a call inside a checkpointed function, whose result requires grad or
    not (grad): its forward runs again in backward (all of it when whole), before
    its own backward."""
    if grad is False:
        return no_backward(c)
    c = replaced(c, saved=ZERO)  # checkpoint keeps its inputs, not what runs inside
    if not whole:
        return replaced(c, backward=None, notes=[*c.notes, EARLY_STOP])
    if grad is None or c.flops is None or c.backward is None:
        return replaced(c, backward=None)
    return replaced(c, backward=c.flops + c.backward, notes=[*c.notes, RECOMPUTED])


def no_backward(c: Cost) -> Cost:
    """c where nothing it runs is differentiated (no operand requires grad, or
    grad mode is off)."""
    if c.backward == ZERO and c.saved == ZERO:
        return c
    return replaced(c, backward=ZERO, saved=ZERO)


def matmul_backward(flops: Expr | None, grads: list[bool | None]) -> Expr | None:
    """A product of two operands: each operand's gradient is a product of the
    forward's size (grad_A = G @ Bᵀ, grad_B = Aᵀ @ G), run for the operands that
    require grad. More operands (an einsum contracted pairwise): every
    intermediate requires grad when every operand does, so twice the forward;
    a mix depends on the order, and is not known."""
    if flops is None or None in grads:
        return None
    n = sum(1 for g in grads if g)
    if len(grads) <= 2:
        return flops * Expr.const(n)
    if n == len(grads):
        return flops * Expr.const(2)
    return ZERO if n == 0 else None


# Grad mode: off inside `torch.no_grad()` / `torch.inference_mode()` (and what
# they decorate), where no op records anything for backward. A context variable,
# since a call runs its callee in another file's analyzer, and the language
# server analyses documents on threads of their own.
# None: set by a flag the analysis cannot read.
GRAD_MODE: ContextVar[bool | None] = ContextVar("grad_mode", default=True)
KEEP = object()  # a context manager or decorator that leaves grad mode as it is

_DETACH = frozenset(
    {
        "torch.detach",
        "torch.Tensor.detach",
        "torch.Tensor.detach_",
        "torch.Tensor.data",
        *einx_ops.DETACHED,
    }
)
_REQUIRES_GRAD = frozenset({"torch.Tensor.requires_grad_"})
# A detached view that requires grad only where asked (`Variable(t, requires_grad=True)`).
_WRAPPED = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
# Ops whose other tensors give only a dtype, device or shape: the result derives
# from the first operand alone (`a.type_as(x)` does not require grad where x does).
_FIRST_ONLY = frozenset(
    "torch.Tensor." + m for m in ("type_as", "to", "view_as", "reshape_as", "expand_as")
)
# Fresh tensors, shaped like another or made from sizes, a fill value (read as a
# number) or data copied (`torch.tensor`): nothing autograd tracks, whatever
# their arguments (a device or size the analysis does not know among them).
_FRESH = frozenset(
    [f"torch.{k}_like" for k in ("zeros", "ones", "empty", "full", "rand", "randn", "randint")]
    + [f"torch.Tensor.new_{k}" for k in ("zeros", "ones", "empty", "full", "tensor")]
    + [
        f"torch.{k}"
        for k in (
            "tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace",
            "eye", "rand", "randn", "randint", "randperm", "empty_strided",
        )
    ]
)  # fmt: skip
# Products of several operands whose cost the op computes itself (not a stub
# formula): each pairwise contraction's gradient is a product of its size.
_CONTRACTIONS = frozenset({"torch.einsum", "torch.Tensor.einsum", "einops.einsum"})


# The graph nodes of the ops a target's constructor ran (its modules being built),
# while a target run collects them: a tensor the module keeps that such an op made
# (`self.w2 = self.w @ self.w` in __init__) carries their graph, and the first
# backward through it runs their backward too, which no record of the forward
# holds (analysis/target.py: the loss reaching one leaves the backward not known).
_BUILT: ContextVar[BuiltNodes | None] = ContextVar("built_nodes", default=None)


class BuiltNodes:
    """The graph nodes the ops run in a `with` block make: their ids, and the
    nodes themselves, which keep the ids theirs while this object lives."""

    __slots__ = ("ids", "_nodes", "_token")

    def __init__(self) -> None:
        self.ids: set[int] = set()
        self._nodes: list[Origin] = []

    def add(self, node: Origin) -> None:
        self.ids.add(id(node))
        self._nodes.append(node)

    def __enter__(self) -> BuiltNodes:
        self._token = _BUILT.set(self)
        return self

    def __exit__(self, *exc) -> None:
        _BUILT.reset(self._token)


def after_op(
    name: str, args, kwargs, value: Value, cost: Cost, graph: bool = True, site=None
) -> tuple[Value, Cost]:
    """An op's result marked with whether it requires grad, and its cost with
    its backward: 0 where no operand requires grad (nothing to differentiate)
    or grad mode is off. Without graph (an analysis that builds no cost: `check`)
    the result's Origin is a node of its own with no parents: only a walk from
    the loss reads them, and the walks are costs' (analysis/reached.py). site:
    (path, line) of the call, which a later write into what it saved names
    (ops/versions.py)."""
    operands = [*args, *kwargs.values()]
    mode = GRAD_MODE.get()
    if name in _FIRST_ONLY and args:
        operands = [args[0]]
    if name in _DETACH or mode is False or _integral(value):
        g: bool | None = False
    elif name in _FRESH:  # unless made with requires_grad=True
        flag = kwargs.get("requires_grad")
        g = False if flag is None else _bool(flag)
    elif name in _REQUIRES_GRAD or name in _WRAPPED:
        flag = args[1] if len(args) > 1 else kwargs.get("requires_grad")
        g = (name in _REQUIRES_GRAD) if flag is None else _bool(flag)
    else:
        # A positional operand not known at all may be a tensor that requires grad
        # (`x * (self.g if flag else 1.0)`), unless the result's rank is known (it
        # was a size or a fill value, as for the walk's parents: _lost); a keyword
        # one is read as an option (dim, keepdim, eps, device).
        first = name in _FIRST_ONLY and args
        pos = [args[0]] if first else list(args)
        opts = [] if first else [v for v in kwargs.values() if v is not UNKNOWN]
        g = any_grad([*pos, *opts], _lost(pos, value))
        if _bool(kwargs.get("requires_grad")) is True:  # torch.zeros(..., requires_grad=True)
            g = True
        if mode is None and g is not False:
            g = None
    if g is False:
        cost = no_backward(cost)
    elif name in _CONTRACTIONS and cost.backward is None:
        cost = replaced(cost, backward=matmul_backward(cost.flops, operand_grads(operands)))
    result = saving.same_storage(cost.saving, args, value)
    # A tensor's grad is set with its origin below, in one copy (two were 1% of a check).
    single = isinstance(result, TensorV) and not isinstance(result, (ParameterV, BufferV))
    result = saving.aliased(name, args, kwargs, result if single else with_grad(result, g))
    # A tensor made fresh, or made to require grad itself, is a leaf of the graph.
    leaf = g is False or name in _FRESH or name in _REQUIRES_GRAD or name in _WRAPPED
    node = None
    if not leaf and not graph:
        node = Origin(LEAF)  # as distinct as the node it stands for, for joins
    elif not leaf:
        came = parents(operands) | ({BROKEN} if _lost(operands, result) else frozenset())
        node = Origin(came, saving.writes_in_place(name))
        built = _BUILT.get()
        if built is not None and cost.backward != ZERO:
            built.add(node)  # (one whose backward costs nothing misses nothing)
    each = None if node is None or not graph else saving.one_per_operand(name, args, result)
    if each is not None:
        # autograd sends a gradient only to the operand of a result the loss reaches
        items = zip(result.items, each, strict=True)  # type: ignore[union-attr]
        result = TupleV(tuple(_own_view(i, o, g) for i, o in items))
    elif single:
        result = made_by(result, node, g)
    else:
        result = made_by(result, node)
        if node is not None and graph and cost.alone and isinstance(result, TupleV):
            result = _sides(result, cost.alone, node)
    if cost.alone:
        cost = replaced(cost, alone=())
    items = None
    if g is not False and cost.saving is not None:
        items = saving.with_result(cost.saving, value, result)
        figure, why = saving.weigh(items) if g is True else (None, None)
        notes = cost.notes if why is None else [*cost.notes, f"saved for backward: {why}"]
        cost = replaced(cost, saved=figure, notes=notes)
    if name == "torch.Tensor.data" and args and isinstance(args[0], TensorV):
        versions.data_taken(saving.named_storage(args[0]))
    if versions.active():
        for t in saving.fresh_results(result, args):
            versions.made(t)
    if g is not False and node is not None and graph and versions.active():
        # what autograd checks the version of when the backward runs this node
        where = (*(site or (None, None)), name)
        for root, sure in saving.save_roots(
            name, items, [*args, *kwargs.values()], result, cost.saved
        ):
            versions.saved(root, node, where, sure, g)
        refuses = no_derivative.refuses(name, args, kwargs)
        if refuses is not False:
            versions.refused(node, where, refuses is True, g)
    if cost.saving is not None:
        cost = replaced(cost, saving=None)
    return result, cost


def _sides(result: TupleV, alone: tuple, node: Origin) -> TupleV:
    """result, each item a rule says is reached apart (index, backward alone,
    the operands it derives from) a node of its own, whose gradient flows to those
    operands only."""
    items = list(result.items)
    for i, figure, sources in alone:
        if i < len(items) and isinstance(items[i], TensorV):
            side = Origin(parents(sources) | (node.parents & {BROKEN}))
            side.side = (figure,)
            items[i] = made_by(items[i], side)
    return replaced(result, items=tuple(items))


def _own_view(item: Value, operand: TensorV, g: bool | None) -> Value:
    """item, a view of operand alone: a node of its own whose gradient flows to
    operand, requiring grad where operand does (g: where any operand does)."""
    grad = requires(operand) if g is True else g
    if grad is False:
        return made_by(item, None, False)
    return made_by(item, Origin(parents([operand])), grad)


def _bool(v) -> bool | None:
    return v.value if isinstance(v, BoolV) else None


_INPUT_NODE = next(iter(INPUT))
# torch's refusals of a change to what autograd tracks (torch 2.13's messages)
NON_LEAF_FLAG = "you can only change requires_grad flags of leaf variables"
VIEW_DETACHED = "Can't detach views in-place"


def non_leaf(v: Value) -> bool | None:
    """Whether v is a tensor an op autograd recorded made (grad_fn set: no leaf):
    it requires grad and each of its Origins is an op's run, not a leaf, a target's
    input, nor a function's boundary or exit. False for a leaf (a Parameter or
    buffer, a tensor that needs no grad, one made fresh) or no tensor; None where
    not known."""
    if not isinstance(v, TensorV) or isinstance(v, (ParameterV, BufferV)) or v.grad is False:
        return False
    made = v.origin
    if made is None:
        return None
    if not made or all(o is _INPUT_NODE for o in made):
        return False
    ops = all(o.token is None and o.inner is None and o is not _INPUT_NODE for o in made)
    return True if ops and v.grad is True else None


def flag_refused(name: str, args, kwargs) -> tuple[bool, str] | None:
    """torch's refusal of `t.requires_grad_(flag)` or `t.detach_()` as the forward
    runs it: (True, why) where it surely raises, (False, why) where it may, None
    where it does not. requires_grad_(False) of a non-leaf raises (True leaves it
    as it is); detach_ of a view raises, and a tensor on another's storage (a view,
    or an in-place result) may be one."""
    if name == "torch.Tensor.requires_grad_" and args:
        flag = _bool(args[1] if len(args) > 1 else kwargs.get("requires_grad", BoolV(True)))
        made = non_leaf(args[0])
        if flag is True or made is False:
            return None
        return (flag is False and made is True), NON_LEAF_FLAG
    if name == "torch.Tensor.detach_" and args:
        t = args[0]
        if isinstance(t, TensorV) and not isinstance(t, (ParameterV, BufferV)):
            return None if t.storage is None else (False, VIEW_DETACHED)
    return None


def flag_stored(t: Value) -> tuple[bool, str] | None:
    """`t.requires_grad = flag`: torch refuses any flag stored on a non-leaf, as
    flag_refused says."""
    made = non_leaf(t)
    return None if made is False else (made is True, NON_LEAF_FLAG)
