"""Strides of tensors whose sizes are formulas (`[B, T, 768]`), as ATen lays them.

ops/strides.py follows strides where every size is a known int; this module
follows the same ops where some are names, with each stride a formula in them.
A result is given only where it holds for every value of the names from 1 up.
Each is worked out for names of at least 2 (where a comparison of two formulas
is decided by their difference), then again with each set of names at 1, where
torch skips an axis of that size in its contiguity test and ties strides: the
result stands only where every case gives it (strides compared on the axes
longer than 1, which alone any copy, view or kernel choice reads; the last
axis' is read by the fused attention kernel, which `last_unit` decides for a
last axis of a known length alone). Where one case is not decided or differs,
the result is None (not known), never a guess. A tensor of size 0 is left out.

A view's strides are found by matching groups of axes whose sizes multiply to one
formula (`[B, T, 768]` viewed as `[B, T, 12, 64]`: 768 against 12·64): within a
group the old axes must lie one after another in memory, as ATen's computeStride
requires; a group the formulas cannot match, or axes that may or may not lie so,
is not known.
"""

from __future__ import annotations

from itertools import combinations

from shapelint.notation.symbolic import Expr
from shapelint.ops import strides

SymLayout = tuple[tuple[Expr, ...], tuple[Expr, ...]]  # (sizes, strides)
ONE = Expr.const(1)
ZERO = Expr.const(0)
# A reshape that cannot be a view for any value of the names: it copies.
COPY = "copy"


def is_layout(laid: object) -> bool:
    """Whether laid is a (sizes, strides) of formulas."""
    return (
        isinstance(laid, tuple)
        and len(laid) == 2
        and all(isinstance(part, tuple) for part in laid)
        and all(isinstance(d, Expr) for part in laid for d in part)
    )


def contiguous(sizes) -> tuple[Expr, ...]:
    out, step = [], ONE
    for s in reversed(sizes):
        out.append(step)
        step = step * s
    return tuple(reversed(out))


def compare(a: Expr, b: Expr) -> int | None:
    """-1, 0 or 1 as a is below, equal to or above b for every value of the names
    from 2 up (the public functions below check the names at 1 apart); None where
    that is not decided."""
    if a == b:
        return 0
    if _positive(b - a):
        return -1
    if _positive(a - b):
        return 1
    return None


def _positive(e: Expr) -> bool:
    """e > 0 for all names ≥ 2: e with each name n written 2 + n has no negative
    coefficient and a positive constant (a floor division or an unknown: not decided)."""
    if e.is_too_big():
        return False
    names = e.names()
    shifted = e.substitute({n: Expr.name(n) + 2 for n in names}) if names else e
    if shifted.is_too_big():
        return False
    for mono, c in shifted.terms.items():
        if any(not isinstance(atom, str) for atom, _ in mono):
            return False
        if c < 0:
            return False
    return shifted.terms.get((), 0) > 0


def _is_one(d: Expr) -> bool:
    return d.value == 1


def _is_contiguous(sizes, steps) -> bool | None:
    """torch's is_contiguous (an axis of size 1 skipped); None where not decided."""
    step = ONE
    for s, st in zip(reversed(sizes), reversed(steps), strict=True):
        if _is_one(s):
            continue
        if st != step:
            return False if compare(st, step) not in (0, None) else None
        step = step * s
    return True


def permuted(laid: SymLayout, order) -> SymLayout:
    sizes, steps = laid
    return tuple(sizes[a] for a in order), tuple(steps[a] for a in order)


def _viewed(sizes, steps, new_sizes) -> tuple[Expr, ...] | str | None:
    """The strides of a tensor (sizes, steps) viewed as new_sizes: a tuple, COPY
    where no view exists for any value of the names (reshape copies, view raises),
    None where not decided."""
    old = [(s, st) for s, st in zip(sizes, steps, strict=True) if not _is_one(s)]
    if not old or any(s.value == 0 for s in new_sizes):
        return None
    out: list[Expr | None] = [None] * len(new_sizes)
    j = len(new_sizes) - 1
    base = steps[-1]  # an inner axis of size 1 steps as the last old axis (ATen's chunk base)
    while j >= 0 and _is_one(new_sizes[j]):
        out[j] = base
        j -= 1
    i = len(old) - 1
    copy = False
    while i >= 0:
        if j < 0:
            return None
        base = old[i][1]
        po, pn = old[i][0], new_sizes[j]
        group_new = [j]
        group_old = [i]
        while po != pn:
            if _grows(pn, po) and j - len(group_new) >= 0:
                pn = pn * new_sizes[j - len(group_new)]
                group_new.append(j - len(group_new))
            elif _grows(po, pn) and i - len(group_old) >= 0:
                k = i - len(group_old)
                po = po * old[k][0]
                group_old.append(k)
            else:
                return None
        for k in group_old[1:]:
            inner = old[k + 1]
            joined = compare(old[k][1], inner[0] * inner[1])
            if joined is None:
                return None
            if joined != 0:
                copy = True
        step = base
        for n in group_new:
            out[n] = step
            step = step * new_sizes[n]
        i -= len(group_old)
        j -= len(group_new)
        while j >= 0 and _is_one(new_sizes[j]):
            out[j] = step  # a size-1 axis after a group: ATen's view_numel·chunk stride
            j -= 1
    if j >= 0:
        return None
    if copy:
        return COPY
    return tuple(out)  # type: ignore[arg-type]


def _grows(small: Expr, big: Expr) -> bool:
    """Whether big is small times a formula (so the group on small's side takes its
    next axis): the groups' products are then one formula at every value."""
    q = big.exact_div(small)
    return q is not None and q.value != 1


def reshaped(sizes, steps, new_sizes) -> tuple[tuple[Expr, ...], bool] | None:
    """torch's reshape: (strides, whether a view); a copy is contiguous. None where
    not decided."""
    if tuple(sizes) == tuple(new_sizes):
        return tuple(steps), True  # as ops/strides.reshaped
    got = viewed(sizes, steps, new_sizes)
    if got is None:
        return None
    if got == COPY:
        return contiguous(new_sizes), False
    return got, True  # type: ignore[return-value]


def _expanded(laid: SymLayout, new_sizes) -> SymLayout | None:
    """expand (ops/strides.expanded: an axis of size 1 spread to a longer one, and a
    new leading axis, step 0); None where a size spread from 1 may be 1 itself."""
    sizes = laid[0]
    extra = len(new_sizes) - len(sizes)
    for i, s in enumerate(sizes):
        n = new_sizes[i + extra] if 0 <= i + extra < len(new_sizes) else None
        if n is not None and _is_one(s) and n != s and compare(n, ONE) != 1:
            return None
    got = strides.expanded(laid, new_sizes)
    if got is None:
        return None
    return got[0], tuple(Expr.const(t) if isinstance(t, int) else t for t in got[1])


def _dense(sizes, steps) -> bool | None:
    """is_non_overlapping_and_dense: some order of the axes is contiguous."""
    axes = [d for d, s in enumerate(sizes) if not _is_one(s)]
    order = _sorted(axes, lambda d: steps[d])
    if order is None:
        return None
    step = ONE
    for d in order:
        if steps[d] != step:
            return False if compare(steps[d], step) not in (0, None) else None
        step = step * sizes[d]
    return True


def _sorted(axes, key) -> list[int] | None:
    """axes by key, strictly increasing; None where two are not ordered."""
    out: list[int] = []
    for a in axes:
        at = len(out)
        for pos, b in enumerate(out):
            c = compare(key(a), key(b))
            if c is None or c == 0:
                return None
            if c < 0:
                at = pos
                break
        out.insert(at, a)
    return out


def _iterated(layouts, out_sizes, scalars: bool = False) -> SymLayout | None:
    """TensorIterator's result layout (ops/strides.iterated) for formula strides;
    None where an order it needs is not decided."""
    out_sizes = tuple(out_sizes)
    nd = len(out_sizes)
    # a Python number (a 0-d tensor to TensorIterator) is an operand of another shape
    same_shape = not scalars and all(tuple(s) == out_sizes for s, _ in layouts)
    if same_shape and layouts:
        flags = [_is_contiguous(s, t) for s, t in layouts]
        if all(flags):
            return out_sizes, contiguous(out_sizes)
        firsts = {tuple(t) for _, t in layouts}
        if len(firsts) == 1:
            densities = [_dense(s, t) for s, t in layouts]
            if all(densities):
                return out_sizes, tuple(layouts[-1][1])
            if None in densities:
                return None
    rows = []
    for sizes, steps in layouts:
        off = nd - len(sizes)
        if off < 0:
            return None
        row = [ZERO] * nd
        for i, (s, t) in enumerate(zip(sizes, steps, strict=True)):
            row[off + i] = ZERO if (_is_one(s) and not _is_one(out_sizes[off + i])) else t
        rows.append(row)

    def should_swap(d0: int, d1: int) -> int | None:
        for row in rows:
            s0, s1 = row[d0], row[d1]
            if s0.value == 0 or s1.value == 0:
                continue
            c = compare(s0, s1)
            if c is None:
                return None
            if c != 0:
                return c
            by_size = compare(out_sizes[d0], out_sizes[d1])
            if by_size is None:
                return None
            if by_size > 0:
                return 1
        return 0

    perm = list(range(nd - 1, -1, -1))
    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c is None:
                return None
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    steps_out: list[Expr] = [ZERO] * nd
    step = ONE
    for d in perm:
        steps_out[d] = step
        step = step * out_sizes[d]
    return out_sizes, tuple(steps_out)


def last_unit(laid: SymLayout) -> bool | None:
    """Whether the last axis steps 1 at every value of the names; None for a tensor
    of no axis or a last axis whose length is not a known number above 1 (one of
    size 1 steps as each op's convention sets it, which is not followed)."""
    sizes, steps = laid
    if not steps or sizes[-1].value is None or sizes[-1].value < 2:
        return None
    one = _for_all(lambda st: st == ONE, steps[-1])
    return None if one is None else bool(one)


def is_contiguous(sizes, steps) -> bool | None:
    """torch's is_contiguous (an axis of size 1 skipped); None where not decided."""
    return _for_all(_is_contiguous, tuple(sizes), tuple(steps))


def viewed(sizes, steps, new_sizes) -> tuple[Expr, ...] | str | None:
    """The strides of a tensor (sizes, steps) viewed as new_sizes: a tuple, COPY
    where no view exists for any value of the names (reshape copies, view raises),
    None where not decided."""
    return _for_all(_viewed, tuple(sizes), tuple(steps), tuple(new_sizes), sizes_at=2)


def expanded(laid: SymLayout, new_sizes) -> SymLayout | None:
    return _for_all(_expanded, laid, tuple(new_sizes))


def dense(sizes, steps) -> bool | None:
    """is_non_overlapping_and_dense: some order of the axes is contiguous."""
    return _for_all(_dense, tuple(sizes), tuple(steps))


def iterated(layouts, out_sizes, scalars: bool = False) -> SymLayout | None:
    """TensorIterator's result layout (ops/strides.iterated) for formula strides;
    None where an order it needs is not decided."""
    return _for_all(_iterated, tuple(layouts), tuple(out_sizes), scalars)


_MOST_NAMES = 4  # 2**4 cases at most


def _for_all(fn, *args, sizes_at: int | None = None):
    """fn(*args), worked out for names from 2 up, where it also holds with each set
    of the names at 1 (see the module's docstring); None where not. The strides of
    a result are compared on the axes longer than 1: those of a layout result's
    sizes, or of args[sizes_at] for a bare tuple of strides."""
    got = fn(*args)
    if got is None:
        return None
    names = sorted(_names(args))
    if len(names) > _MOST_NAMES:
        return None
    for r in range(1, len(names) + 1):
        for ones in combinations(names, r):
            env = dict.fromkeys(ones, 1)
            case = _at(args, env)
            there = fn(*case)
            if there is None:
                return None
            sizes = case[sizes_at] if sizes_at is not None else None
            if not _agree(_at(got, env), there, sizes):
                return None
    return got


def _names(x) -> set[str]:
    if isinstance(x, Expr):
        return x.names()
    if isinstance(x, (tuple, list)):
        return set().union(*(_names(i) for i in x)) if x else set()
    return set()


def _at(x, env):
    if isinstance(x, Expr):
        return x.substitute(env)
    if isinstance(x, tuple):
        return tuple(_at(i, env) for i in x)
    if isinstance(x, list):
        return [_at(i, env) for i in x]
    return x


def _agree(a, b, sizes) -> bool:
    """Whether two results are one: equal, or strides equal on the axes longer than 1."""
    if is_layout(a) and is_layout(b):
        return a[0] == b[0] and _agree(a[1], b[1], a[0])
    if isinstance(a, tuple) and isinstance(b, tuple) and sizes is not None:
        if len(a) != len(b) or len(a) != len(sizes):
            return False
        return all(x == y for x, y, n in zip(a, b, sizes, strict=True) if not _is_one(n))
    return a == b
