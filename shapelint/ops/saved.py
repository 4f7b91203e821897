"""The tensors autograd saves for backward, and the bytes they hold.

A stub states what its op saves (`saved=`, docs/stubs.md): operands as they are
(`input`), operands as the op reshapes them first (`flat(input)`: a view of a
contiguous tensor, a copy of another), its result (`out`), tensors it makes
for backward alone (`new(BYTES)`: layer_norm's mean and rstd), or something
not modelled (`?`), each under an optional condition (`if grad(weight)`).

The figure is torch's: the bytes of the distinct storages the forward saves,
as `torch.autograd.graph.saved_tensors_hooks` sees them and deduplicated by
storage. Parameters and buffers are not activations, nor are the target's own
inputs (its caller holds them); a view counts its whole storage, once. Storage
identity is the abstract value's (`TensorV.storage`); the ledger of storages
already saved lives as long as one target's run (`ledger()`), and outside one
nothing is known (None).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from shapelint.notation.symbolic import Expr
from shapelint.ops import attention_path, dtypes, strides, sym_strides, versions
from shapelint.ops.values import (
    BoolV,
    BufferV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    ParameterV,
    StrV,
    TensorV,
    TupleV,
    Value,
    replaced,
)

ZERO = Expr.const(0)

# id(storage) -> storage, for the target being run; None outside a target run.
_LEDGER: ContextVar[dict | None] = ContextVar("saved_ledger", default=None)
# The Parameters and buffers of the module a target run calls, by identity, as
# (those its parameters() and buffers() yield, those it holds otherwise: a layer in
# a plain list); None where not known. torch's saved-tensor hooks see a Parameter no
# module of the target registers as any tensor: an activation where it is saved.
_OWN: ContextVar[tuple[dict, dict, bool] | None] = ContextVar("registered_tensors", default=None)
# Set (for the rest of the run) once an autocast region may have run: its ops save
# tensors cast to another dtype, which no stub's saved= says (the casts themselves,
# results of another size), and what later ops save of its results differs too.
_CAST: ContextVar[list | None] = ContextVar("autocast_seen", default=None)
CAST_WHY = "an autocast region ran ops at another dtype: what they save is not modelled"
_UNPLACED_WHY = "whether it saves a Parameter its module registers is not known"
# `training` of a torch layer that holds no flag of its own (one built in the
# target run, in training mode as nn.Module.__init__ leaves it; analysis/modes.py):
# a list so that a mode lost on the way (modes.lose) reaches the stubs' formulas.
_AS_BUILT: ContextVar[list | None] = ContextVar("layer_mode", default=None)
# The note of a call whose analysis was reused from an equal call: its saved
# tensors are not followed (which of them were saved before it differs).
REUSED = "saved for backward: a call run before with equal arguments, whose saved tensors are not followed again"
# A storage nobody can name: a reshape of a tensor that may or may not be
# contiguous is a view or a copy; a result indexed by a tensor the analysis
# did not see. Saving one is an unknown figure.
UNSURE = object()

# Ops whose result is (a view of) their first operand's storage, and what they
# do to contiguity (sizes taken > 1): a transpose or permute reorders it, a split
# or chunk along an inner axis leaves parts of longer rows, an expand or an index
# may do anything.
PERMUTED, GAPPED = "permuted", "gapped"  # TensorV.contiguous
# A part along an inner axis whose axes longer than 1, the last one left out, all lie
# on one side of the split axis (`x.split(1, dim=1)` of [b, n, d], a chunk along the
# last axis): not contiguous, yet the reshape that merges all but its last axis
# (a layer's or matmul's fold) is a view of it; anything else treats it as GAPPED.
FOLDS = "folds"
# The last two axes of a contiguous tensor swapped (`k.transpose(-2, -1)`, `.mT`):
# its leading axes still merge into one as a view, so matmul's reshape of a
# batched operand to (b, k, n) copies nothing (torch saves the view).
SWAPPED = "swapped"
# The layouts a fold copies: "flat" merges all but the last axis (a Linear, matmul
# beside a matrix), which a swap of the last two axes puts out of order; "batch"
# merges the batch axes, all but the last two (batched matmul), which that swap
# leaves in place. A part a fold reads as a view (FOLDS) is copied by neither.
_COPIED_BY = {"flat": (PERMUTED, GAPPED, SWAPPED), "batch": (PERMUTED, GAPPED)}
_REORDERS = frozenset(
    {"transpose", "swapaxes", "swapdims", "permute", "movedim", "moveaxis", "t", "adjoint"}
    | {"T", "H", "mT", "mH"}
)
_PARTS = frozenset({"split", "chunk", "tensor_split", "unbind", "narrow"})
_SPREAD = frozenset({"expand", "broadcast_to", "expand_as"})
# Ops returning one expanded view of each tensor operand, in order.
_EACH_SPREAD = frozenset({"broadcast_tensors", "meshgrid"})
# reshape copies a tensor that is not contiguous (and so does contiguous()).
_MAYBE_COPY = frozenset({"reshape", "flatten", "reshape_as", "contiguous"})
# Those of _SAME that keep their operand's sizes and strides: the same data (`conj`: a
# real tensor's is the tensor itself, a complex one's a view with the conjugate bit set).
_SAME_DATA = ("detach", "detach_", "Variable", "data", "as_subclass", "conj")
_SAME = frozenset(
    {"view", "view_as", "unflatten", "unsqueeze", "squeeze", *_SAME_DATA}
    | {"view_as_real", "view_as_complex"}
)
# Those of _SAME that view their operand with strides of their own (ATen's computeStride).
_VIEWS = frozenset({"view", "view_as", "unflatten", "unsqueeze", "squeeze"})
# Fused kernels whose result's memory layout depends on the kernel torch picks:
# known only on the path their saved= rule takes (`_fused_attention_layout`).
_LAYOUT_UNKNOWN = frozenset({"scaled_dot_product_attention"})
# Results whose storage is larger than the tensor, by a size no rule here derives:
# F.fold's (col2im on CPU keeps the padded buffer: [2, 8, 16, 1] over 704 floats).
_STORAGE_UNKNOWN = frozenset({"fold"})
# Casts and moves: a tensor already of that dtype (and on that device) is returned
# itself, never copied (`x.float()` of a float32 x is x).
_CASTS = frozenset(
    {"to", "type", "type_as", "float", "double", "half", "bfloat16", "int", "long", "short",
     "bool", "byte", "cpu", "cuda"}
)  # fmt: skip


# The storages of the target's inputs, for the run: a caller may hand one tensor
# as several of them (the differential's truth does), so two of them may be one.
_GIVEN: ContextVar[frozenset] = ContextVar("given_storages", default=frozenset())


@contextmanager
def ledger(inputs: list[Value], own: tuple[dict, dict, bool] | None = None) -> Iterator[None]:
    """A target run: its inputs count as saved already (their caller holds them).
    own: the module's Parameters and buffers by identity, those it surely registers
    and those it holds otherwise, and whether its count is complete
    (parameters.registered); None (a function's target): every one is taken for
    registered."""
    book: dict = {}
    for v in _tensors(inputs):
        root = storage_of(v)
        book[id(root)] = root
    token = _LEDGER.set(book)
    owned = _OWN.set(own)
    cast = _CAST.set([False])
    given = _GIVEN.set(frozenset(book))
    mode = _AS_BUILT.set([True])
    try:
        yield
    finally:
        _LEDGER.reset(token)
        _OWN.reset(owned)
        _CAST.reset(cast)
        _GIVEN.reset(given)
        _AS_BUILT.reset(mode)


def distinct(a: TensorV, b: TensorV) -> bool:
    """Whether a and b are surely two tensors: of two storages the analysis names,
    not both the target's inputs (which its caller may give as one tensor)."""
    ra, rb = storage_of(a), storage_of(b)
    if ra is rb or UNSURE in (ra, rb) or _LEDGER.get() is None:
        return False
    given = _GIVEN.get()
    return not (id(ra) in given and id(rb) in given)


# The storages of tensors a repeated turn finds and does not replace (a loop
# counted as one turn times n, a comprehension's element): saving one there is
# saving it once, not once a turn.
_OUTER: ContextVar[tuple] = ContextVar("outer_storages", default=())


@contextmanager
def repeated_turn(values) -> Iterator[None]:
    """A turn whose records count several times, run with values (the tensors it
    finds and does not replace) from outside it."""
    roots = frozenset(id(storage_of(v)) for v in _tensors(values))
    token = _OUTER.set((*_OUTER.get(), roots))
    try:
        with versions.repeated():
            yield
    finally:
        _OUTER.reset(token)


# The storages the first of the turns counted as one finds under the names it
# rebinds (`x = layer(x)` fed a tensor made before the loop), each with a flag set
# where the turn saves one: every later turn finds the turn before's result there
# instead, which that turn may have saved already (`x = exp(lin(x))`: exp saved it)
# or not, where the tensor from before the loop was saved by an earlier op, or
# was a Parameter or an input, or not. What the first turn saves of it says
# nothing of what the others save.
_CARRIED: ContextVar[tuple] = ContextVar("carried_storages", default=())


@contextmanager
def first_turn(values, strict: bool = False) -> Iterator[list]:
    """The first turn of a loop counted as one turn times n, run with values (the
    tensors its names held before it, which it rebinds); yields two flags: [0] set
    where it saves one of them that costs it nothing (saved before, registered),
    [1] where it saves one of them at its bytes (a later turn, finding the turn
    before's result, saves as much unless that turn saved it: `is_saved`).
    strict: what it saves of them is not known instead (a turn standing for the
    others, which no later run tells)."""
    roots = frozenset(id(storage_of(v)) for v in _tensors(values))
    flag = [False, False]
    token = _CARRIED.set((*_CARRIED.get(), (roots, flag, strict)))
    try:
        yield flag
    finally:
        _CARRIED.reset(token)


CARRIED_WHY = (
    "it saves a tensor a loop's turn finds under a name it rebinds: what later turns"
    " save there is not known"
)


def _carried_saved(root: object, fresh: bool = False) -> bool:
    """root is saved, at its bytes where fresh: a first turn that found it under a
    name it rebinds saves other bytes than its later turns may (first_turn); True
    where a strict turn found it, whose figure is then not known."""
    unknown = False
    for roots, flag, strict in _CARRIED.get():
        if id(root) in roots:
            flag[1 if fresh else 0] = True
            unknown = unknown or strict
    return unknown


def is_saved(v: Value) -> bool:
    """Whether v may hold a tensor whose saving costs nothing in this target's run
    (saved already, or registered: `status`), so that a later turn that saves it
    saves nothing: any value other than tensors, tuples of them and numbers may."""
    book = _LEDGER.get()
    if book is None:
        return False
    if isinstance(v, TupleV):
        return any(is_saved(i) for i in v.items)
    if isinstance(v, TensorV):
        root = storage_of(v)
        return root is UNSURE or _saved_already(root, book) is not False
    return not isinstance(v, (IntV, FloatV, BoolV, NoneV))


@contextmanager
def apart() -> Iterator[None]:
    """Calls whose saved tensors are dropped (inside torch.utils.checkpoint): what
    they save is entered in a scratch ledger, so that nothing later counts on it."""
    book = _LEDGER.get()
    token = _LEDGER.set(None if book is None else dict(book))
    try:
        with versions.apart():
            yield
    finally:
        _LEDGER.reset(token)


def mark() -> tuple | None:
    """The ledger as it is now, for `undo`: a trial turn whose records may be
    dropped enters what it saves, and a dropped turn saved nothing (nor wrote
    over a save: ops/versions.py)."""
    book = _LEDGER.get()
    return None if book is None else (dict(book), versions.mark())


def undo(marked: tuple | None) -> None:
    """The ledger back as `mark` found it (in place: enclosing runs share it)."""
    book = _LEDGER.get()
    if book is not None and marked is not None:
        book.clear()
        book.update(marked[0])
        versions.undo(marked[1])


def status(values) -> tuple:
    """For each tensor among values, whether its storage counts as saved already
    (a parameter, a buffer, or in the ledger); () outside a target run."""
    book = _LEDGER.get()
    if book is None:
        return ()
    return tuple(_saved_already(storage_of(v), book) for v in _tensors(values))


def _saved_already(root: object, book: dict) -> bool | None:
    """Whether saving root costs nothing: in the ledger, or a Parameter or buffer
    the module registers (None: not known)."""
    return True if id(root) in book else registered(root)


def registered(root: object) -> bool | None:
    """Whether root, a storage, is a Parameter or buffer the target's module
    registers (no activation): False for any other tensor, None where a Parameter
    is none the module held as the run began (made in the forward, or a value the
    analysis made anew) while the module holds some it does not register, or where
    the module's count is not complete and its walk did not reach it."""
    own = _OWN.get()
    if own is not None and id(root) in own[0]:
        return True  # a buffer's tensor held under another name too
    if not isinstance(root, (ParameterV, BufferV)):
        return False
    if own is None:
        return True
    yielded, held, complete = own
    # held otherwise: an activation, where the count proves torch does not yield it
    return False if complete and id(root) in held else None


def extents(values) -> tuple:
    """For each tensor among values, the bytes a save of it weighs (`weigh`: the
    whole storage of a view): a run that saved a view of a larger storage saved
    more than one given a tensor of its own of the same shape."""
    out = []
    for v in _tensors(values):
        root = storage_of(v)
        out.append("?" if root is UNSURE else nbytes(root if v.view else v))
    return tuple(out)


def layouts(values) -> tuple:
    """For each tensor among values, what is known of its strides (its tag and its
    (sizes, strides)): a run of a function given a transposed tensor saves and
    lays out otherwise than one given a contiguous tensor of the same shape (an
    einsum or reshape copies it), so the two are not one memoised run."""
    return tuple((v.contiguous, layout_of(v)) for v in _tensors(values))


def enter(values, flags: tuple) -> None:
    """Mark the storages of the tensors among values whose flag is true as saved."""
    book = _LEDGER.get()
    if book is None:
        return
    for v, saved in zip(_tensors(values), flags, strict=False):
        root = storage_of(v)
        if saved and root is not UNSURE:
            book[id(root)] = root


def layer_training() -> bool | None:
    """`training` of a torch layer built in this target run (None: not known)."""
    flag = _AS_BUILT.get()
    return None if flag is None else flag[0]


def mode_lost() -> None:
    flag = _AS_BUILT.get()
    if flag is not None:
        flag[0] = None


def cast_region() -> None:
    """An autocast region that may be enabled runs: from now on in the target run,
    what ops save is not known."""
    flag = _CAST.get()
    if flag is not None:
        flag[0] = True


def cast_seen() -> bool:
    """Whether an autocast region may have run in the target run so far: its ops
    cast their operands to another dtype (ops/dtype_match.py checks none then)."""
    flag = _CAST.get()
    return flag is not None and bool(flag[0])


def storage_of(v: TensorV) -> object:
    return v if v.storage is None else v.storage


def same_tensor(old: Value, new: Value) -> Value:
    """new, a refined view of tensor old (a shape learnt), as the same storage."""
    if isinstance(new, TensorV) and isinstance(old, TensorV) and new is not old:
        if new.storage is None and not isinstance(new, (ParameterV, BufferV)):
            return replaced(
                new,
                storage=storage_of(old),
                view=old.view,
                contiguous=old.contiguous,
                layout=old.layout,
            )
    return new


def renewed(v: Value) -> Value:
    """v as a new storage: a cached result handed to another call is another tensor."""
    if isinstance(v, (ParameterV, BufferV)):
        return v
    if isinstance(v, TensorV):
        return replaced(v, storage=None, view=False)
    if isinstance(v, TupleV):
        return TupleV(tuple(renewed(i) for i in v.items))
    return v


def held_arguments(v: Value, given: list[Value]) -> tuple | None:
    """For v (or each item of a tuple v), the index in given of the tensor whose
    storage it shares (a function returning its argument, or a view of it), else
    None: what a reuse of the run must hand back as the reusing call's tensors."""
    roots = [storage_of(g) if isinstance(g, TensorV) else None for g in given]

    def index(t: Value) -> int | None:
        if not isinstance(t, TensorV) or isinstance(t, (ParameterV, BufferV)):
            return None
        root = storage_of(t)
        return next((i for i, r in enumerate(roots) if r is not None and r is root), None)

    if isinstance(v, TupleV):
        return tuple(index(i) for i in v.items)
    return (index(v),)


def renewed_as(v: Value, held: tuple | None, given: list[Value]) -> Value:
    """renewed(v), except that a tensor the first run took from its argument i
    (held_arguments) is on the storage of this call's argument i: `default(c, x)`
    returning x hands back this call's x, not a new tensor (torch saves x once)."""

    def one(t: Value, i: int | None) -> Value:
        g = given[i] if i is not None and i < len(given) else None
        if not isinstance(t, TensorV) or not isinstance(g, TensorV):
            return renewed(t)
        return replaced(t, storage=storage_of(g))

    if held is None:
        return renewed(v)
    if isinstance(v, TupleV):
        if len(held) != len(v.items):
            return renewed(v)
        return TupleV(tuple(one(t, i) for t, i in zip(v.items, held, strict=True)), v.kind)
    return one(v, held[0])


# Python's augmented assignments: `x += y` calls `x.__iadd__(y)` (operator.iadd).
_AUGMENTED = frozenset(
    "iadd isub imul itruediv ifloordiv imod ipow imatmul iand ior ixor ilshift irshift".split()
)
# The in-place methods that change their tensor's shape; every other one keeps it.
RESHAPING_IN_PLACE = frozenset(
    "unsqueeze_ squeeze_ transpose_ t_ swapdims_ swapaxes_ resize_ resize_as_ as_strided_ "
    "set_".split()
)


def writes_in_place(name: str) -> bool:
    """An op that writes into its first operand: a method `add_`, `x += y`
    (`__iadd__`, `operator.iadd`); not `__iter__`, `__index__`, `operator.invert`."""
    short = name.rsplit(".", 1)[-1]
    if short.startswith("__") and short.endswith("__"):
        return short[2:-2] in _AUGMENTED
    if name.startswith("operator."):
        return short in _AUGMENTED
    return short.endswith("_")


def aliased(name: str, args, kwargs, value: Value) -> Value:
    """The result of op `name` marked with the storage it shares with its first
    operand: a view, an in-place op, an eval-mode identity."""
    base = next(iter(_tensors(args)), None)
    if base is None or isinstance(value, (ParameterV, BufferV)):
        return value
    parts = name.split(".")
    short = parts[-1]
    if short in ("__call__", "forward") and len(parts) > 2 and name.startswith("torch.nn."):
        short = parts[-2].lower()  # a layer's call: nn.Flatten as flatten
    if short == "as_strided":
        # the strides it is given: overlapping or gapped, never read as row-major
        steps = args[2] if len(args) > 2 else kwargs.get("stride")
        laid = (int_sizes(value), _int_tuple(steps))
        if laid[0] is None or laid[1] is None or len(laid[0]) != len(laid[1]):
            return _mark(value, base, view=True, contiguous=None)
        return _laid(value, base, (tuple(laid[0]), tuple(laid[1])))
    if short == "einsum" and name.startswith("torch.") and _einsum_view(args):
        # torch.einsum of one operand that sums no letter runs only diagonal and
        # permute: a view of it (`bii->bi` of an input saves no storage of its own)
        return _mark(value, base, view=True, contiguous=None)
    pattern = _rearrange_pattern(name, args)
    if pattern is not None:
        lengths = _rearrange_lengths(name, args, kwargs)
        exact = _rearranged_layout(pattern, lengths, base, value)
        if exact is None and int_sizes(value) is None:
            exact = _rearranged_sym(pattern, lengths, base, value)
        if exact is not None:
            laid, viewed = exact
            if sym_strides.is_layout(laid):
                return _sym_laid(value, base if viewed else None, laid)
            return _laid(value, base if viewed else None, laid)
        layout = _rearranged(pattern, base.contiguous)
        if layout is _COPY:
            return _own(value)  # its last reshape copies: a storage of its own, contiguous
        if layout is not None:
            return _mark(value, base, view=True, contiguous=layout)
    if name.startswith("einops.") and ("rearrange" in name.lower() or "repeat" in name.lower()):
        # einops reshapes, permutes and expands: a view or a copy, by the pattern.
        return _mark(value, UNSURE, view=True, contiguous=None)
    if short in _LAYOUT_UNKNOWN:
        laid = _fused_attention_layout(args, kwargs, value)
        if laid is None:
            return _contiguity(value, None)
        if sym_strides.is_layout(laid):
            return _sym_laid(value, None, laid)
        return _laid(value, None, laid)
    if short in _STORAGE_UNKNOWN and isinstance(value, TensorV):
        # a buffer the op makes, of a size not derived: no other tensor's storage
        return _mark(value, _Buffer(None, value.dtype), view=True, contiguous=True)
    if short in _STORAGE_UNKNOWN:
        return _mark(value, UNSURE, view=True, contiguous=True)
    cast = short in _CASTS and name.startswith("torch.Tensor.")
    if name == "torch.as_tensor":  # of a tensor, a cast of it (of data, a tensor of its own)
        cast = bool(args) and args[0] is base
    if cast and isinstance(value, TensorV):
        # an unnamed dtype is the default float, as the stubs' `dtype_changed` reads it
        if (value.dtype or dtypes.DEFAULT_FLOAT) == (base.dtype or dtypes.DEFAULT_FLOAT):
            marked = _mark(value, base, view=base.view, contiguous=base.contiguous)
            return _with_layout(marked, layout_of(base) or _kept_sym(base, value))
        return value  # converted: a storage of its own
    in_place = writes_in_place(name)
    if short in _REORDERS:
        marked = _mark(
            value, base, view=True, contiguous=_reorder_layout(short, args, kwargs, base)
        )
        order = _reorder(short, args, kwargs, base.rank)
        laid = layout_of(base)
        if order is not None and laid is None and int_sizes(value) is None:
            sym = sym_layout_of(base)
            if sym is not None and len(order) == len(sym[0]):
                return _sym_laid(marked, base, sym_strides.permuted(sym, order))
        if order is None or laid is None or len(order) != len(laid[0]):
            return marked
        return _laid(value, base, strides.permuted(laid, order))
    if short in _PARTS:
        layout = _part_layout(short, args, kwargs, base)
        marked = _mark(value, base, view=True, contiguous=layout)
        if layout is GAPPED and base.contiguous is True:
            marked = _folding(marked, _part_axis(short, args, kwargs, base))
        return _parts_laid(marked, base, _part_axis(short, args, kwargs, base), short == "unbind")
    if short in _SPREAD:
        marked = _mark(value, base, view=True, contiguous=None)
        laid, sizes = layout_of(base), int_sizes(value)
        spread = None if laid is None or sizes is None else strides.expanded(laid, sizes)
        return marked if spread is None else _laid(value, base, spread)
    if short in _EACH_SPREAD and name.startswith("torch.") and isinstance(value, TupleV):
        bases = list(_tensors(args))
        if len(bases) != len(value.items):
            return _mark(value, UNSURE, view=True, contiguous=None)
        marked = (_spread(v, b) for v, b in zip(value.items, bases, strict=True))
        return TupleV(tuple(marked))
    if short in _SAME or in_place:
        marked = _mark(value, base, view=True, contiguous=base.contiguous)
        if in_place and short in RESHAPING_IN_PLACE:
            return marked
        laid, sizes = layout_of(base), int_sizes(value)
        if sizes is None and not in_place and short in _VIEWS:
            return _sym_viewed(marked, base, value)
        if sizes is None and (in_place or short in _SAME_DATA):
            return _with_layout(marked, _kept_sym(base, value))
        if laid is None or sizes is None:
            return marked
        if in_place or short in _SAME_DATA:
            return _with_layout(marked, laid if tuple(sizes) == laid[0] else None)
        viewed = strides.compute_stride(laid[0], laid[1], sizes)
        return marked if viewed is None else _laid(value, base, (tuple(sizes), viewed))
    if short in _MAYBE_COPY:
        laid, sizes = layout_of(base), int_sizes(value)
        if sizes is None:
            got = _sym_reshaped(short, base, value)
            if got is not None:
                return got
        if laid is not None and sizes is not None:
            if short == "contiguous":
                viewed = laid if strides.is_contiguous(*laid) else None
            else:
                got, ok = strides.reshaped(laid[0], laid[1], sizes)
                viewed = (tuple(sizes), got) if ok else None
            return _own(value) if viewed is None else _laid(value, base, viewed)
        if base.contiguous is True:
            return _mark(value, base, view=True, contiguous=True)
        if base.contiguous is None or (base.contiguous is GAPPED and short != "contiguous"):
            # A part of longer rows reshapes to a view where the axes it merges lie
            # within the part (ultralytics' `v.reshape(B, C, H, W)` of a split), to
            # a copy where they span the gap: the strides, not kept here, decide.
            return _mark(value, UNSURE, view=True, contiguous=True)
        if base.contiguous is FOLDS:
            # a view where the axes it merges skip the gap (or torch finds the part
            # contiguous, its longer axes all past the cut), else a copy
            return _mark(value, UNSURE, view=True, contiguous=None)
        return _own(value)  # a copy: a storage of its own, contiguous
    if name == "operator.getitem":
        return _mark(value, UNSURE, view=True, contiguous=None)
    return _laid_out(short, args, value)


# Ops whose result is a fresh row-major tensor whatever their operands' layout: the
# products (mm's result, reshaped back by matmul's fold), layer_norm (written
# contiguous); nn.MultiheadAttention's rule lays its own out.
_FRESH = frozenset(
    {"matmul", "mm", "bmm", "addmm", "baddbmm", "linear", "layer_norm", "layernorm"}
    | {"multiheadattention", "multi_head_attention_forward"}
)


_JOINED = frozenset(
    {"cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack"}
    | {"column_stack"}
)


def _einsum_view(args) -> bool:
    """torch.einsum(equation, operand): one tensor, and every letter of the
    equation's input kept in its output (written, or implicit: the letters that
    appear once, in order)."""
    if len(list(_tensors(args[1:]))) != 1 or not args or not isinstance(args[0], StrV):
        return False
    eq = args[0].value
    if eq is None or "," in eq:
        return False
    eq = eq.replace(" ", "").replace(".", "")
    lhs, arrow, rhs = eq.partition("->")
    if not arrow:
        rhs = "".join(c for c in lhs if lhs.count(c) == 1)
    return set(lhs) <= set(rhs)


def _laid_out(short: str, args, value: Value) -> Value:
    """A new result, laid out as torch lays it: TensorIterator (elementwise ops,
    reductions) and empty_like follow an operand's strides, so the result of an op
    given a reordered tensor (a transpose or permute, SWAPPED) is reordered in its turn, which the analysis does not follow: its layout
    is not known (a later fold may copy it). A part of longer rows (GAPPED) keeps
    the row-major order, and so does its result. An operand of unknown layout (an
    expand's) is left as before: read as row-major (docs/costs.md says so)."""
    if short in _FRESH or not isinstance(value, (TensorV, TupleV)):
        return value
    if short in _JOINED and isinstance(value, TensorV) and value.rank not in (None, 4, 5):
        return value  # cat's result is row-major but for channels-last 4-d and 5-d
    if not any(t.contiguous in (PERMUTED, SWAPPED) and _reorderable(t) for t in _tensors(args)):
        return value
    if isinstance(value, TupleV):
        return TupleV(tuple(_laid_out(short, args, i) for i in value.items), value.kind)
    if isinstance(value, (ParameterV, BufferV)) or value.contiguous is not True:
        return value
    return replaced(value, contiguous=None) if _reorderable(value) else value


def _reorderable(t: TensorV) -> bool:
    """Whether t has two axes a layout could order otherwise: more than one of its
    axes not known to be 1 (a row, a column or a scalar is contiguous in any order)."""
    if t.shape is None:
        return True
    return sum(1 for d in t.shape if not (isinstance(d, Expr) and d.value == 1)) > 1


# Ops shaped like their operand (or its broadcast) whose result is contiguous
# whatever their operands' strides: they do not lay it out as TensorIterator does.
_CONTIGUOUS_RESULT = frozenset(
    {"tril", "triu", "logsigmoid", "renorm", "masked_fill", "roll", "scatter", "scatter_add",
     "scatter_reduce", "index_add", "index_copy", "index_put", "contiguous", "eye"}
)  # fmt: skip


def iterated(op: str, out: Value, operands) -> Value:
    """out, the result of elementwise op `op` on operands, laid out as TensorIterator
    lays it (ops/strides.iterated): an operand that is not contiguous may make it
    not contiguous either (`x.transpose(1, 2) * 2` keeps the transpose's order).
    Where an operand's strides are not known, neither are the result's, unless
    every operand is contiguous."""
    if not isinstance(out, TensorV) or isinstance(out, (ParameterV, BufferV)):
        return out
    tensors = [v for v in operands if isinstance(v, TensorV)]
    parts = op.split(".")
    short = (
        parts[-2].lower() if parts[-1] in ("__call__", "forward") and len(parts) > 2 else parts[-1]
    )
    if not tensors or short in _CONTIGUOUS_RESULT:
        return out
    layouts = [layout_of(t) for t in tensors]
    sizes = int_sizes(out)
    if sizes is not None and all(laid is not None for laid in layouts):
        scalars = any(isinstance(v, (IntV, FloatV, BoolV)) for v in operands)
        laid = strides.iterated(layouts, sizes, scalars)
        if strides.is_contiguous(*laid):
            return replaced(out, contiguous=True, layout=None)
        return replaced(out, contiguous=None, layout=laid)
    if all(t.contiguous is True for t in tensors):
        return out
    if sizes is None and _formula_shape(out) is not None:
        numbers = any(isinstance(v, (IntV, FloatV, BoolV)) for v in operands)
        syms = [sym_layout_of(t) for t in tensors]
        got = None
        if all(sym is not None for sym in syms):
            got = sym_strides.iterated(syms, out.shape, numbers)
        if got is not None:
            if sym_strides.is_contiguous(*got) is True:
                return replaced(out, contiguous=True, layout=None)
            return replaced(out, contiguous=None, layout=got)
    if len(tensors) == 1 and tensors[0].contiguous in (PERMUTED, SWAPPED):
        return replaced(out, contiguous=tensors[0].contiguous, layout=None)
    return replaced(out, contiguous=None, layout=None)


def _fused_attention_layout(args, kwargs, value: Value) -> strides.Layout | None:
    """The layout of scaled_dot_product_attention's result where CPU's fused
    (flash) kernel runs it (ops/attention_path.py; the math path is not modelled):
    laid out like the query (`empty_like`): the query's strides where it is dense,
    else dense in the order of its strides (as TensorIterator lays out a result).
    None where not known."""
    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
    given = dict(zip(names, args)) | {k: v for k, v in kwargs.items() if k in names}
    if any(n not in given for n in names[:3]):
        return None
    q, k, v = (given[n] for n in names[:3])
    flags = (given.get("attn_mask"), given.get("dropout_p"), given.get("enable_gqa"))
    if attention_path.cpu_flash(q, k, v, *flags) is not True:
        return None
    laid, out = layout_of(q), int_sizes(value)
    if out is None and isinstance(value, TensorV):
        sym = sym_layout_of(q)
        if sym is None or value.shape != sym[0]:
            return None
        return sym_strides.iterated([sym], sym[0])
    if laid is None or out is None or tuple(out) != laid[0]:
        return None
    return strides.iterated([laid], laid[0])


def one_per_operand(name: str, args, value: Value) -> list[TensorV] | None:
    """The tensor operands of an op that returns a view of each, in order
    (torch.broadcast_tensors, torch.meshgrid: each result is its operand expanded,
    autograd's node of its own): the i-th result derives from the i-th operand
    alone. None for another op, or where the counts differ."""
    short = name.rsplit(".", 1)[-1]
    if short not in _EACH_SPREAD or not name.startswith("torch.") or not isinstance(value, TupleV):
        return None
    bases = list(_tensors(args))
    return bases if len(bases) == len(value.items) else None


def first_axis_part(v: TensorV, base: TensorV) -> TensorV:
    """v, one index of base's first axis (`base[i]`), as a view of base's storage:
    contiguous where base is; base's strides less its first axis where known."""
    marked = _mark(v, base, view=True, contiguous=True if base.contiguous is True else None)
    laid = layout_of(base) or sym_layout_of(base)
    if laid is None or not laid[0]:
        return marked  # type: ignore[return-value]
    if sym_strides.is_layout(laid) and (v.shape is None or tuple(v.shape) != laid[0][1:]):
        return marked  # type: ignore[return-value]
    return _with_layout(marked, (laid[0][1:], laid[1][1:]))  # type: ignore[return-value]


def same_storage(items: tuple | None, args, value: Value) -> Value:
    """value, where the stub says the op returns its first operand itself
    (dropout in eval mode), marked as that operand's storage."""
    base = next(iter(_tensors(args)), None)
    if base is None or not items or not any(i[0] == "same" for i in items):
        return value
    marked = _mark(value, base, view=base.view, contiguous=base.contiguous)
    return _with_layout(marked, layout_of(base) or _kept_sym(base, value))


def _rearrange_pattern(name: str, args) -> str | None:
    """The pattern of einops.rearrange or einops.repeat, or of a Rearrange layer's
    call."""
    if name in _EINOPS_VIEWS and len(args) > 1 and isinstance(args[1], StrV):
        return args[1].value
    if name.startswith("einops.layers.") and ".Rearrange." in name and args:
        held = args[0].attr("pattern") if isinstance(args[0], ObjectV) else None
        return held.value if isinstance(held, StrV) else None
    return None


def _rearrange_lengths(name: str, args, kwargs) -> dict:
    """The axis lengths a rearrange is given: its keywords, or those a Rearrange
    layer holds (`axis:NAME`, as ops/einops_ops.py builds it)."""
    if name in _EINOPS_VIEWS:
        return kwargs
    layer = args[0] if args else None
    if not isinstance(layer, ObjectV):
        return {}
    return {k[5:]: v for k, v in layer.attrs if k.startswith("axis:")}


_COPY = object()
# einops' functions that reshape, permute and expand (einops._apply_recipe), no more.
_EINOPS_VIEWS = frozenset({"einops.rearrange", "einops.repeat"})
_TOKEN = re.compile(r"\(|\)|\.\.\.|[A-Za-z_]\w*|\d+")


def _rearranged(pattern: str | None, layout: object) -> object:
    """What einops.rearrange makes of a contiguous tensor: it reshapes (a view),
    permutes (a view) and reshapes again, which is a view only where each merged
    group of axes was a run, in order, of the input's (sizes taken > 1). True (a
    contiguous view), PERMUTED, GAPPED (a part of longer rows, split and permuted
    but not merged: still one), _COPY, or None (not known)."""
    if layout is FOLDS:
        layout = GAPPED
    if layout not in (True, GAPPED) or pattern is None or pattern.count("->") != 1:
        return None
    sides = [_groups(side) for side in pattern.split("->")]
    if sides[0] is None or sides[1] is None:
        return None
    order = [a for g in sides[0] for a in g]
    out = [a for g in sides[1] for a in g]
    if sorted(order) != sorted(out) or len(set(order)) != len(order):
        return None  # axes added or dropped: not a plain rearrangement
    merged = [g for g in sides[1] if len(g) > 1]
    if layout is GAPPED:
        return None if merged else GAPPED
    for g in merged:
        i = order.index(g[0])
        if order[i : i + len(g)] != g:
            return _COPY
    return True if out == order else PERMUTED


def _groups(side: str) -> list[list[str]] | None:
    """One side of a pattern as its groups of named axes (`1` and `()` dropped)."""
    groups = _elementary(side)
    return None if groups is None else [g for g in groups if g]


def _reorder_layout(short: str, args, kwargs, base: TensorV) -> object:
    """The layout of a reorder of base: PERMUTED, or SWAPPED where it swaps the last
    two axes and leaves the others in place. An axis of size 1 has no stride torch
    looks at (its contiguity test skips it), so a reorder that moves only such axes
    keeps base's layout (`x.view(b, n, 1, d).movedim(2, 1)` is contiguous)."""
    layout = {True: PERMUTED, GAPPED: GAPPED, FOLDS: GAPPED}.get(base.contiguous)  # type: ignore[call-overload]
    order = _reorder(short, args, kwargs, base.rank)
    if layout is None or order is None:
        return layout
    shape = base.shape or ()
    moved = [a for a in order if not (len(shape) == len(order) and shape[a] == Expr.const(1))]
    if moved == sorted(moved):
        return base.contiguous
    rank = len(order)
    if order == [*range(rank - 2), rank - 1, rank - 2] and (
        layout is PERMUTED or base.contiguous is FOLDS
    ):
        # the batch axes, left in place, merge as a view: of a contiguous tensor, and
        # of a part whose axes all but the last merge so (FOLDS)
        return SWAPPED
    return layout


def _ints(v) -> list[int | None]:
    items = v.items if isinstance(v, TupleV) else (v,)
    return [i.value.value if isinstance(i, IntV) and i.value is not None else None
            for i in items]  # fmt: skip


def _reorder(short: str, args, kwargs, rank: int | None) -> list[int] | None:
    """The result's axes, each as the axis of the operand it is, or None (not known)."""
    if rank is None:
        return None
    if short in ("mT", "mH", "adjoint") or (short in ("t", "T", "H") and rank <= 2):
        short, args, kwargs = "transpose", [None, _int(-2), _int(-1)], {}
        if rank < 2:
            return list(range(rank))
    elif short in ("T", "H"):
        return list(reversed(range(rank)))  # every axis reversed (deprecated beyond 2-D)
    rest = [*args[1:], *(kwargs[k] for k in _REORDER_KEYS.get(short, ()) if k in kwargs)]
    given = [d for v in rest for d in _ints(v)]
    if None in given or any(not -rank <= d < rank for d in given):  # type: ignore[operator]
        return None
    dims = [d % rank for d in given]  # type: ignore[operator]
    if short == "permute":
        return dims if sorted(dims) == list(range(rank)) else None
    if short in ("transpose", "swapaxes", "swapdims") and len(dims) == 2:
        order = list(range(rank))
        order[dims[0]], order[dims[1]] = order[dims[1]], order[dims[0]]
        return order
    if short in ("movedim", "moveaxis") and len(rest) == 2:
        src, dst = _ints(rest[0]), _ints(rest[1])
        src, dst = [d % rank for d in src], [d % rank for d in dst]  # type: ignore[operator]
        if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
            return None
        placed: list[int | None] = [None] * rank
        for s_, d_ in zip(src, dst, strict=True):
            placed[d_] = s_
        others = iter(a for a in range(rank) if a not in src)
        return [next(others) if a is None else a for a in placed]
    return None


def _int(n: int) -> IntV:
    return IntV(Expr.const(n))


_REORDER_KEYS = {
    "permute": ("dims",),
    "transpose": ("dim0", "dim1"),
    "swapaxes": ("axis0", "axis1"),
    "swapdims": ("dim0", "dim1"),
    "movedim": ("source", "destination"),
    "moveaxis": ("source", "destination"),
}


def _part_layout(short: str, args, kwargs, base: TensorV) -> object:
    """The layout of split/chunk/tensor_split/unbind/narrow's parts: along the first axis, each
    part of a contiguous tensor is contiguous; along another, parts of longer rows."""
    d = _part_axis(short, args, kwargs, base)
    if d is None or base.contiguous not in (True, GAPPED, FOLDS):
        return None
    if d == 0:
        return base.contiguous
    return GAPPED


def _part_axis(short: str, args, kwargs, base: TensorV) -> int | None:
    """The axis split/chunk/tensor_split/unbind/narrow cuts, from 0; None where not known."""
    pos = {"split": 2, "chunk": 2, "tensor_split": 2, "unbind": 1, "narrow": 1}[short]
    dim = args[pos] if len(args) > pos else kwargs.get("dim")
    if dim is None and short != "narrow":
        dim = IntV(ZERO)  # the default
    d = dim.value.value if isinstance(dim, IntV) and dim.value is not None else None
    if d is None or base.rank is None or not -base.rank <= d < base.rank:
        return None
    return d % base.rank


def _folding(v: Value, d: int | None) -> Value:
    """Each GAPPED part of a contiguous tensor cut along axis d, FOLDS where its
    axes longer than 1 (the last left out; a size not known counts as longer) all
    lie before d or all from d on: merging them then skips the gap, which sits
    between d and the axis before it."""
    if isinstance(v, TupleV):
        return TupleV(tuple(_folding(i, d) for i in v.items), v.kind)
    if not isinstance(v, TensorV) or v.contiguous is not GAPPED or d is None or not v.shape:
        return v
    if any(not isinstance(s, Expr) for s in v.shape):
        return v
    long = [i for i, s in enumerate(v.shape[:-1]) if s.value != 1]
    if all(i < d for i in long) or all(i >= d for i in long):
        return replaced(v, contiguous=FOLDS)
    return v


def _contiguity(v: Value, contiguous: bool | None) -> Value:
    if isinstance(v, TensorV) and not isinstance(v, (ParameterV, BufferV)):
        return replaced(v, contiguous=contiguous)
    return v


def _mark(v: Value, base, view: bool, contiguous: bool | None) -> Value:
    root = base if base is UNSURE else storage_of(base)
    if isinstance(v, TensorV) and not isinstance(v, (ParameterV, BufferV)):
        return replaced(v, storage=root, view=view, contiguous=contiguous, layout=None)
    if isinstance(v, TupleV):
        return TupleV(tuple(_mark(i, base, view, contiguous) for i in v.items))
    return v


def _own(v: Value) -> Value:
    """v, a copy: a contiguous storage of its own."""
    if isinstance(v, TensorV) and not isinstance(v, (ParameterV, BufferV)):
        return replaced(v, storage=None, view=False, contiguous=True, layout=None)
    return v


def layout_of(v: Value) -> strides.Layout | None:
    """v's (sizes, strides) where its sizes are known ints and its strides are
    known: followed through views, or a contiguous tensor's."""
    if not isinstance(v, TensorV):
        return None
    sizes = int_sizes(v)
    if sizes is None:
        return None
    if v.layout is not None and not sym_strides.is_layout(v.layout) and v.layout[0] == tuple(sizes):
        return v.layout
    if v.contiguous is True:
        return tuple(sizes), strides.contiguous(sizes)
    return None


def _int_tuple(v: Value | None) -> list[int] | None:
    """A tuple of known ints (`x.as_strided(size, (4, 1))`), else None."""
    if not isinstance(v, TupleV):
        return None
    items = [i.value for i in v.items if isinstance(i, IntV)]
    if len(items) != len(v.items) or any(not isinstance(i, Expr) or i.value is None for i in items):
        return None
    return [int(i.value) for i in items]


def int_sizes(v: Value) -> list[int] | None:
    if not isinstance(v, TensorV) or v.shape is None:
        return None
    out = []
    for d in v.shape:
        if not isinstance(d, Expr) or d.value is None:
            return None
        out.append(int(d.value))
    return out


def _with_layout(v: Value, laid) -> Value:
    if isinstance(v, TensorV) and not isinstance(v, (ParameterV, BufferV)) and laid is not None:
        if sym_strides.is_layout(laid):
            if int_sizes(v) is not None:
                return v  # formula strides are kept for formula sizes alone
            if sym_strides.is_contiguous(*laid) is True:
                return replaced(v, layout=laid, contiguous=True)
            return replaced(v, layout=laid)
        if strides.is_contiguous(*laid):
            return replaced(v, layout=laid, contiguous=True)
        return replaced(v, layout=laid)
    return v


def _laid(v: Value, base: TensorV | None, laid) -> Value:
    """v with the strides laid: a view of base's storage, or where base is None a
    tensor of its own (a copy). Contiguous where the strides say so; else the tags
    read as not known, the strides deciding where they are read."""
    if not isinstance(v, TensorV) or isinstance(v, (ParameterV, BufferV)):
        return v
    if int_sizes(v) != list(laid[0]):
        return v if base is None else _mark(v, base, view=True, contiguous=None)
    dense = strides.is_contiguous(*laid)
    if base is None:
        return replaced(v, storage=None, view=False, contiguous=True, layout=laid)
    contiguous = True if dense else (base.contiguous if base.contiguous is not True else None)
    return replaced(v, storage=storage_of(base), view=True, contiguous=contiguous, layout=laid)


def _parts_laid(v: Value, base: TensorV, axis: int | None, dropped: bool) -> Value:
    """Each part of split/chunk/narrow (base's strides, its own sizes) or unbind
    (base's strides less the axis cut), where base's strides are known."""
    laid = layout_of(base)
    if isinstance(v, TupleV):
        return TupleV(tuple(_parts_laid(i, base, axis, dropped) for i in v.items), v.kind)
    if laid is None and axis is not None and isinstance(v, TensorV) and int_sizes(v) is None:
        sym = sym_layout_of(base)
        if sym is None:
            return v
        steps = sym[1][:axis] + sym[1][axis + 1 :] if dropped else sym[1]
        shape = _formula_shape(v)
        if shape is None or len(shape) != len(steps):
            return v
        return _with_layout(v, (shape, steps))
    if laid is None or axis is None or not isinstance(v, TensorV):
        return v
    steps = laid[1][:axis] + laid[1][axis + 1 :] if dropped else laid[1]
    sizes = int_sizes(v)
    if sizes is None or len(sizes) != len(steps):
        return v
    return _with_layout(v, (tuple(sizes), steps))


def _spread(v: Value, base: TensorV) -> Value:
    marked = _mark(v, base, view=True, contiguous=None)
    laid, sizes = layout_of(base), int_sizes(v)
    spread = None if laid is None or sizes is None else strides.expanded(laid, sizes)
    return marked if spread is None else _laid(v, base, spread)


def indexed(value: Value, base: TensorV, entries: list | None, basic: bool = False) -> Value:
    """`base[entries]` as torch makes it: a basic index (ints, slices, None,
    Ellipsis) a view with strides of its own; an index holding a tensor or a list
    a tensor of its own (its layout not followed); None: not known, unless basic
    (a basic index of values not known: a view of base, its strides not known)."""
    if not isinstance(value, TensorV) or isinstance(value, (ParameterV, BufferV)):
        return value
    if entries is None:
        return _mark(value, base, view=True, contiguous=None) if basic else value
    if any(e == "advanced" for e in entries):
        return replaced(value, storage=None, view=False, contiguous=None, layout=None)
    laid = layout_of(base)
    got = None if laid is None else strides.indexed(laid, entries)
    if got is None or int_sizes(value) != list(got[0]):
        return value
    return _laid(value, base, got)


def _rearranged_layout(pattern: str, kwargs, base: TensorV, value: Value):
    """einops.rearrange or repeat as its torch backend runs them (einops'
    _apply_recipe: reshape to the elementary axes, permute, unsqueeze and expand
    the axes repeat adds, reshape to the output's groups): (the result's strides,
    whether it is a view of base), None where a size or stride is not known or the
    pattern drops or repeats an axis."""
    laid, out_sizes = layout_of(base), int_sizes(value)
    if laid is None or out_sizes is None:
        return None
    axes = _einops_axes(pattern, len(laid[0]))
    if axes is None:
        return None
    left, order, out = axes
    sizes: dict[str, int] = {}
    for k, v in kwargs.items():
        if isinstance(v, IntV) and v.value is not None and v.value.value is not None:
            sizes[k] = int(v.value.value)
    for g, n in zip(left, laid[0], strict=True):
        open_ = [a for a in g if a not in sizes]
        known = 1
        for a in g:
            known *= sizes.get(a, 1)
        if len(open_) > 1 or (not open_ and known != n) or known == 0 or n % known:
            return None
        if open_:
            sizes[open_[0]] = n // known
    if any(a not in sizes for a in out):
        return None
    elementary = [sizes[a] for a in order]
    got, view1 = strides.reshaped(laid[0], laid[1], elementary)
    kept = [a for a in out if a in order]
    moved = strides.permuted((tuple(elementary), got), [order.index(a) for a in kept])
    added = _added_axes(moved, out, order, 1)
    spread = strides.expanded(added, [sizes[a] for a in out])
    if spread is None:
        return None
    final, view2 = strides.reshaped(spread[0], spread[1], out_sizes)
    return (tuple(out_sizes), final), view1 and view2


def _einops_axes(pattern: str, rank: int):
    """(the input's groups, its elementary axes in order, the output's elementary
    axes in order) of a rearrange or repeat pattern over rank axes, `...` as one
    name per axis it stands for; None where the pattern is not one of those (an
    axis dropped, a name twice, an output that is not the input's axes plus new
    ones)."""
    if pattern.count("->") != 1:
        return None
    left, right = (_elementary(side) for side in pattern.split("->"))
    if left is None or right is None:
        return None
    fixed = sum(1 for g in left if g != ["..."])
    if ["..."] in left:
        dots = [f"...{i}" for i in range(rank - fixed)]
        left = [x for g in left for x in ([[d] for d in dots] if g == ["..."] else [g])]
        right = [[n for a in g for n in (dots if a == "..." else [a])] for g in right]
    if len(left) != rank or any("..." in g for g in (*left, *right)):
        return None
    order = [a for g in left for a in g]
    out = [a for g in right for a in g]
    if len(set(order)) != len(order) or len(set(out)) != len(out) or not set(order) <= set(out):
        return None
    return left, order, out


def _added_axes(laid, out, order, one):
    """laid with an axis of size 1 unsqueezed at each place out has an axis order
    lacks, as torch.unsqueeze strides it (the next axis' extent, 1 at the end)."""
    sizes, steps = list(laid[0]), list(laid[1])
    for p, a in enumerate(out):
        if a in order:
            continue
        steps.insert(p, sizes[p] * steps[p] if p < len(sizes) else one)
        sizes.insert(p, one)
    return tuple(sizes), tuple(steps)


def _elementary(side: str) -> list[list[str]] | None:
    """One side of a pattern as its groups of axis names (`...` one name; `1` and
    `()` dropped: an axis of size 1 has no stride that matters)."""
    groups: list[list[str]] = []
    current: list[str] | None = None
    for tok in _TOKEN.findall(side):
        if tok == "(":
            if current is not None:
                return None
            current = []
        elif tok == ")":
            if current is None:
                return None
            groups.append(current)
            current = None
        elif tok.isdigit():
            if tok != "1":
                return None
            if current is None:
                groups.append([])
        elif current is not None:
            current.append(tok)
        else:
            groups.append([tok])
    return None if current is not None else groups


def with_result(items: tuple, before: Value, after: Value) -> tuple:
    """items with the op's result as the analysis keeps it (marked with its grad
    and storage after the stub made it): `out` is that tensor."""
    if before is after:
        return items
    return tuple(_with_result(i, before, after) for i in items)


def _with_result(item: tuple, before: Value, after: Value) -> tuple:
    # (a module-level function: a nested one calling itself is a reference cycle)
    if item[0] == "tensor" and item[1] is before:
        return ("tensor", after, item[2])
    if item[0] == "?" and len(item) > 2:
        return (*item[:2], _with_result(item[2], before, after))  # what it may save
    return item


def weigh(items: tuple) -> tuple[Expr | None, str | None]:
    """The bytes of the storages items save that no earlier call saved, and
    entered in the ledger; (None, why) where a part is not known. items come
    from stub_ops: ("tensor", TensorV, flat), ("new", Expr | None), ("?", why)."""
    book = _LEDGER.get()
    if book is None:
        return None, "outside a target run"
    cast = _CAST.get()
    if cast is not None and cast[0] and items:
        return None, CAST_WHY
    total = ZERO
    for item in items:
        kind = item[0]
        if kind == "same":
            continue
        if kind == "?":
            return None, item[1]
        if kind == "new":
            if item[1] is None:
                return None, "the size of a tensor it saves is not known"
            total = total + item[1]
            continue
        v, flat = item[1], item[2]
        if isinstance(v, (IntV, FloatV, BoolV, NoneV)):
            continue  # a Python number
        if isinstance(v, (ParameterV, BufferV)) and v.storage is None:
            # a parameter or a buffer on its own storage (not moved by `p.data = t`
            # onto one the run made): no activation where the module registers it
            own = registered(v)
            if own is None:
                return None, _UNPLACED_WHY
            if own:
                if _carried_saved(v):
                    return None, CARRIED_WHY
                continue
        if not isinstance(v, TensorV):
            return None, "it saves a value the analysis does not see into"
        copied = _copied(v, flat)
        if copied is not None:
            # its strides decide: a copy of its own, or (False) the view it saves
            flat = "copy" if copied else None
        if flat == "copy":
            b = nbytes(v)
        elif flat == "dense" and v.contiguous is not True:
            # `.contiguous()` in the layout torch suggests: a copy of a tensor of
            # at most 3 axes that is not contiguous; of more, a permuted one may
            # be channels-last already, which torch keeps
            if not _surely_strided(v):
                return None, "whether it copies its input to make it contiguous is not known"
            b = nbytes(v)
        elif flat == "tflat":
            return None, "it reshapes a tensor that may not be contiguous (a view or a copy)"
        elif flat and flat != "dense" and v.contiguous in _COPIED_BY[flat]:
            b = nbytes(v)  # reshaped first: a copy of its own
        elif flat and flat != "dense" and v.contiguous is None:
            return None, "it reshapes a tensor that may not be contiguous (a view or a copy)"
        else:
            root = storage_of(v)
            if root is UNSURE:
                return None, "it saves a view of a storage the analysis cannot name"
            if id(root) in book:
                if _carried_saved(root):
                    return None, CARRIED_WHY
                continue
            own = registered(root)
            if own is None:
                return None, _UNPLACED_WHY
            if own:
                if _carried_saved(root):
                    return None, CARRIED_WHY
                continue
            if any(id(root) in outer for outer in _OUTER.get()):
                return None, "it saves a tensor from outside a turn counted several times"
            if _carried_saved(root, fresh=True):
                return None, CARRIED_WHY
            b = nbytes(root if v.view else v)
            if b is not None:
                book[id(root)] = root
        if b is None:
            return None, "the size of a tensor it saves is not known"
        total = total + b
    return total, None


# In-place methods whose backward keeps the tensor they wrote (their result, the
# receiver's storage at its new version), where no stub's saved= says what they
# keep: a later write into that tensor makes their backward raise. Every other
# in-place method keeps a copy of what it overwrote, or nothing of it. Held to
# torch by tests/test_versions.py.
KEEPS_RESULT_IN_PLACE = frozenset(
    "exp_ sigmoid_ tanh_ exp2_ expm1_ tan_ reciprocal_ sqrt_ rsqrt_ relu_ sgn_ hypot_".split()
)


def save_roots(name: str, items: tuple | None, operands, result: Value, saved: Expr | None) -> list:
    """The storages op `name`'s saves hold, as autograd checks their versions
    (ops/versions.py): (storage, sure) for each tensor it saves, storage None
    where the analysis cannot name it, sure False where it may save that storage
    or a copy of its own. items: the stub's (`weigh`'s), None for an op with no
    rule, which saves nothing where its figure is a known 0 (a view, an index)
    and may save any of its tensors otherwise (an in-place method its result
    only where KEEPS_RESULT_IN_PLACE says so). A copy it makes first (a reshape
    of a tensor that is not contiguous) is a storage no one else writes into."""
    every = [(_named(storage_of(t)), False) for t in _tensors([*operands, result])]
    if items is None:
        if saved == ZERO:
            return []
        short = name.rsplit(".", 1)[-1]
        if name.startswith("torch.Tensor.") and short.endswith("_") and not short.endswith("__"):
            kept = [(_named(storage_of(t)), False) for t in _tensors(operands[1:])]
            mine = list(_tensors([result]))
            if short in KEEPS_RESULT_IN_PLACE:
                kept += [(_named(storage_of(t)), True) for t in mine]
            return kept
        return every
    out: list = []
    for item in items:
        may = item[0] == "?"
        if may:
            if len(item) < 3:
                return every  # not modelled: any of its tensors
            item = item[2]  # one it saves under a condition not known: it may
        if item[0] != "tensor" or isinstance(item[1], (IntV, FloatV, BoolV, NoneV)):
            continue
        v = item[1]
        if not isinstance(v, TensorV):
            return every
        copied = copies(v, item[2])
        if copied is not True:
            root = _named(storage_of(v))
            out.append((root, copied is False and root is not None and not may))
    return out


def _named(root: object) -> object:
    return None if root is UNSURE else root


def named_storage(v: TensorV) -> object:
    """v's storage, None where the analysis cannot name it (ops/versions.py's)."""
    return _named(storage_of(v))


def fresh_results(result: Value, operands) -> list:
    """The storages of the tensors among an op's result that are their own, none an
    operand's (ops/versions.made): a tensor itself, or the buffer it views that the
    op made (F.fold's)."""
    given = {id(storage_of(t)) for t in _tensors(operands)}
    return [
        t.storage if isinstance(t.storage, _Buffer) else t
        for t in _tensors([result])
        if (t.storage is None or isinstance(t.storage, _Buffer))
        and not isinstance(t, (ParameterV, BufferV))
        and id(storage_of(t)) not in given
    ]


class _Buffer(TensorV):
    """The storage an op makes for its result, larger than the result by a size no
    rule here derives (F.fold's: col2im keeps the padded buffer, [2, 8, 16, 1] over
    704 floats): its bytes are not known, and it is no other tensor's storage."""

    __slots__ = ()


def storages_among(values) -> list:
    """named_storage of each tensor among values, tuples' items in order."""
    return [named_storage(t) for t in _tensors(values)]


def copies(v: TensorV, flat) -> bool | None:
    """Whether what an op saves of v under its reshape (flat, as `weigh` reads
    it) is a copy of its own (True), v's storage (False), or not known (None)."""
    if flat == "copy":
        return True
    copied = _copied(v, flat)
    if copied is not None:
        return copied
    if flat == "dense":
        return False if v.contiguous is True else (True if _surely_strided(v) else None)
    if flat == "tflat":
        return None
    if flat in _COPIED_BY:
        if v.contiguous in _COPIED_BY[flat]:
            return True
        if v.contiguous is None:
            return None
    return False


def _copied(v: TensorV, flat) -> bool | None:
    """Whether the reshape an op runs before it saves v (flat, batch, dense: see
    `weigh`) copies v, where v's strides are known; None where they are not, or
    for a 4-D or 5-D dense one that is not contiguous (torch keeps channels-last)."""
    if flat not in ("flat", "tflat", "batch", "dense"):
        return None
    laid = layout_of(v)
    if laid is None:
        return _copied_sym(v, flat)
    if flat == "tflat" and len(laid[0]) < 2:
        return None
    sizes, steps = laid
    if flat == "tflat":
        order = [*range(len(sizes) - 2), len(sizes) - 1, len(sizes) - 2]
        (sizes, steps), flat = strides.permuted(laid, order), "flat"
    if flat == "dense":
        if strides.is_contiguous(sizes, steps):
            return False
        return True if len(sizes) <= 3 else None
    keep = 1 if flat == "flat" else 2
    if len(sizes) <= keep:
        return False
    lead = 1
    for n in sizes[:-keep]:
        lead *= n
    return strides.compute_stride(sizes, steps, (lead, *sizes[-keep:])) is None


def _surely_strided(v: TensorV) -> bool:
    """v, of at most 3 axes, is not contiguous to torch: reordered (a reorder that
    moves only axes of size 1 keeps the layout), or a part of longer rows all of
    whose axes are known longer than 1 (torch's test skips an axis of size 1, so a
    part of a batch of one may be contiguous)."""
    if v.rank is None or v.rank > 3:
        return False
    if v.contiguous in (PERMUTED, SWAPPED):
        return True
    if v.contiguous in (GAPPED, FOLDS) and v.shape is not None:
        return all(isinstance(d, Expr) and d.value is not None and d.value > 1 for d in v.shape)
    return False


def nbytes(v) -> Expr | None:
    if not isinstance(v, TensorV):
        return None
    n, item = v.numel(), dtypes.dtype_bytes(v.dtype)
    if n is None or item is None:
        return None
    return n * Expr.const(item)


def _tensors(values) -> Iterator[TensorV]:
    for v in values:
        if isinstance(v, TupleV):
            yield from _tensors(v.items)
        elif isinstance(v, TensorV):
            yield v


# -- strides of tensors whose sizes are formulas (ops/sym_strides.py) -----------------


def _formula_shape(v: Value) -> tuple[Expr, ...] | None:
    """v's shape where every size is a formula (no size unknown, a known rank)."""
    if not isinstance(v, TensorV) or v.shape is None:
        return None
    if not all(isinstance(d, Expr) for d in v.shape):
        return None
    return tuple(v.shape)


def sym_layout_of(v: Value) -> sym_strides.SymLayout | None:
    """v's (sizes, strides) as formulas: followed through views where some size is
    not a known int (kept in `layout`, holding only while those sizes are its
    shape), a contiguous tensor's, or its int strides as formulas."""
    if not isinstance(v, TensorV) or v.shape is None:
        return None
    if not all(isinstance(d, Expr) for d in v.shape):
        return None
    shape = tuple(v.shape)
    laid = v.layout
    if sym_strides.is_layout(laid) and laid[0] == shape:  # type: ignore[index]
        return laid  # type: ignore[return-value]
    known = layout_of(v)
    if known is not None:
        return shape, tuple(Expr.const(s) for s in known[1])
    if v.contiguous is True:
        return shape, sym_strides.contiguous(shape)
    return None


def _kept_sym(base: TensorV, value: Value):
    """base's formula strides for value, a tensor of the same shape on the same
    storage (a cast to its own dtype, a detach); None where they do not hold."""
    sym = sym_layout_of(base)
    if sym is None or not isinstance(value, TensorV) or value.shape is None:
        return None
    return sym if tuple(value.shape) == sym[0] else None


def _sym_laid(v: Value, base: TensorV | None, laid) -> Value:
    """_laid for formula strides: a view of base's storage, or (base None) a tensor
    of its own; the contiguity tag as _laid sets it, True only where the strides
    prove it for every value (the strides decide where they are read)."""
    if not isinstance(v, TensorV) or isinstance(v, (ParameterV, BufferV)):
        return v
    if _formula_shape(v) != laid[0] or int_sizes(v) is not None:
        if base is None or v.storage is not None:
            return v  # a tensor of its own, or one an op's rule marked already
        return _mark(v, base, view=True, contiguous=None)
    flag = True if sym_strides.is_contiguous(*laid) is True else None
    if base is None:
        return replaced(v, storage=None, view=False, contiguous=flag, layout=laid)
    if flag is None and base.contiguous is not True:
        flag = base.contiguous
    return replaced(v, storage=storage_of(base), view=True, contiguous=flag, layout=laid)


def _sym_viewed(marked: Value, base: TensorV, value: Value) -> Value:
    """A view (view, unflatten, unsqueeze, squeeze) of base at formula sizes: its
    strides where a view of base's is decided (ATen's computeStride; a size-1
    axis a view adds steps as computeStride sets it)."""
    sym = sym_layout_of(base)
    if sym is None or not isinstance(value, TensorV) or value.shape is None:
        return marked
    if not all(isinstance(d, Expr) for d in value.shape):
        return marked
    got = sym_strides.viewed(sym[0], sym[1], tuple(value.shape))
    if got is None or got == sym_strides.COPY:
        return marked
    return _sym_laid(marked, base, (tuple(value.shape), got))


def _sym_reshaped(short: str, base: TensorV, value: Value) -> Value | None:
    """reshape/flatten/contiguous at formula sizes: a view where the strides allow
    it, a copy of its own where they do not for any value of the names; None
    where not decided (the contiguity tags then decide, as before)."""
    sym = sym_layout_of(base)
    if sym is None or not isinstance(value, TensorV) or value.shape is None:
        return None
    if not all(isinstance(d, Expr) for d in value.shape):
        return None
    if short == "contiguous":
        flag = sym_strides.is_contiguous(*sym)
        if flag is None:
            return None
        return _sym_laid(value, base, sym) if flag else _own(value)
    got = sym_strides.reshaped(sym[0], sym[1], tuple(value.shape))
    if got is None:
        return None
    steps, view = got
    laid = (tuple(value.shape), steps)
    return _sym_laid(value, base, laid) if view else _sym_laid(_own(value), None, laid)


def _copied_sym(v: TensorV, flat) -> bool | None:
    """_copied for formula strides: whether the fold copies v, decided for every
    value of the names; None where not decided."""
    sym = sym_layout_of(v)
    if sym is None or int_sizes(v) is not None:
        return None
    sizes, steps = sym
    if flat == "tflat":
        if len(sizes) < 2:
            return None
        order = [*range(len(sizes) - 2), len(sizes) - 1, len(sizes) - 2]
        (sizes, steps), flat = sym_strides.permuted(sym, order), "flat"
    if flat == "dense":
        flag = sym_strides.is_contiguous(sizes, steps)
        if flag is None:
            return None
        return False if flag else (True if len(sizes) <= 3 else None)
    keep = 1 if flat == "flat" else 2
    if len(sizes) <= keep:
        return False
    lead = Expr.const(1)
    for n in sizes[:-keep]:
        lead = lead * n
    got = sym_strides.viewed(sizes, steps, (lead, *sizes[-keep:]))
    if got is None:
        return None
    return got == sym_strides.COPY


def _rearranged_sym(pattern: str, kwargs, base: TensorV, value: Value):
    """_rearranged_layout at formula sizes: each step decided for every value of
    the names; None where a size, a stride or a step is not."""
    sym = sym_layout_of(base)
    if sym is None or not isinstance(value, TensorV) or value.shape is None:
        return None
    if not all(isinstance(d, Expr) for d in value.shape):
        return None
    axes = _einops_axes(pattern, len(sym[0]))
    if axes is None:
        return None
    left, order, out = axes
    sizes: dict[str, Expr] = {
        k: v.value for k, v in kwargs.items() if isinstance(v, IntV) and v.value is not None
    }
    for g, n in zip(left, sym[0], strict=True):
        open_ = [a for a in g if a not in sizes]
        known = Expr.const(1)
        for a in g:
            known = known * sizes.get(a, Expr.const(1))
        if len(open_) > 1 or known.value == 0:
            return None
        if not open_:
            if known != n:
                return None
            continue
        rest = n.exact_div(known)
        if rest is None:
            return None
        sizes[open_[0]] = rest
    if any(a not in sizes for a in out):
        return None
    elementary = tuple(sizes[a] for a in order)
    first = sym_strides.reshaped(sym[0], sym[1], elementary)
    if first is None:
        return None
    kept = [a for a in out if a in order]
    moved = sym_strides.permuted((elementary, first[0]), [order.index(a) for a in kept])
    added = _added_axes(moved, out, order, sym_strides.ONE)
    spread = sym_strides.expanded(added, tuple(sizes[a] for a in out))
    if spread is None:
        return None
    final = sym_strides.reshaped(spread[0], spread[1], tuple(value.shape))
    if final is None:
        return None
    return (tuple(value.shape), final[0]), first[1] and final[1]
