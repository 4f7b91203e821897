"""The strides of tensors whose sizes are known ints, as ATen computes them.

A view shares its base's storage with strides of its own: a permute reorders them,
a part keeps them, an index drops or steps them, an expand sets 0, and a reshape
views where ATen's `computeStride` (TensorUtils.cpp) finds strides for the new
shape, else copies into a contiguous tensor of its own. Whether a later reshape
(a Linear's fold, matmul's, einsum's bmm) copies, and so what autograd saves,
follows from these strides; sizes not known as ints leave them not known (None).
"""

from __future__ import annotations

Layout = tuple[tuple[int, ...], tuple[int, ...]]  # (sizes, strides)


def contiguous(sizes) -> tuple[int, ...]:
    """A contiguous tensor's strides (an axis of size 0 or 1 steps as 1 would)."""
    out, step = [], 1
    for s in reversed(sizes):
        out.append(step)
        step *= max(s, 1)
    return tuple(reversed(out))


def is_contiguous(sizes, strides) -> bool:
    """torch's `is_contiguous`: an axis of size 1 has no stride it looks at, and an
    empty tensor is contiguous."""
    if 0 in sizes:
        return True
    step = 1
    for s, st in zip(reversed(sizes), reversed(strides), strict=True):
        if s == 1:
            continue
        if st != step:
            return False
        step *= s
    return True


def compute_stride(old_sizes, old_strides, new_sizes) -> tuple[int, ...] | None:
    """ATen's computeStride: the strides of old viewed as new_sizes, None where no
    view exists (reshape then copies)."""
    if not old_sizes:
        return (1,) * len(new_sizes)
    if 0 in old_sizes:
        return tuple(old_strides) if list(old_sizes) == list(new_sizes) else contiguous(new_sizes)
    new_strides = [0] * len(new_sizes)
    view_d = len(new_sizes) - 1
    chunk_base_stride = old_strides[-1] if old_strides else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_sizes) - 1, -1, -1):
        tensor_numel *= old_sizes[tensor_d]
        if tensor_d == 0 or (
            old_sizes[tensor_d - 1] != 1
            and old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_sizes[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_sizes[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def reshaped(sizes, strides, new_sizes) -> tuple[tuple[int, ...], bool]:
    """torch's reshape: (the result's strides, whether it is a view); a copy is
    contiguous."""
    if list(sizes) == list(new_sizes):
        return tuple(strides), True
    got = compute_stride(sizes, strides, new_sizes)
    if got is None:
        return contiguous(new_sizes), False
    return got, True


def permuted(layout: Layout, order) -> Layout:
    sizes, strides = layout
    return tuple(sizes[a] for a in order), tuple(strides[a] for a in order)


def part(layout: Layout, axis: int, length: int) -> Layout:
    """A part along axis (split, chunk, narrow, a slice of step 1): the same strides."""
    sizes, strides = layout
    return (*sizes[:axis], length, *sizes[axis + 1 :]), strides


def indexed(layout: Layout, entries) -> Layout | None:
    """A basic index (ints, slices of known bounds, None, Ellipsis) of a tensor, as
    torch views it; None where an entry is none of those or too many are given."""
    sizes, strides = layout
    given = [e for e in entries if e is not None and e is not Ellipsis]
    if len(given) > len(sizes) or sum(e is Ellipsis for e in entries) > 1:
        return None
    if Ellipsis in entries:
        at = entries.index(Ellipsis)
        fill = [slice(None)] * (len(sizes) - len(given))
        entries = [*entries[:at], *fill, *entries[at + 1 :]]
    else:
        entries = [*entries, *[slice(None)] * (len(sizes) - len(given))]
    out_sizes, out_strides, d = [], [], 0
    for e in entries:
        if e is None:  # unsqueeze at this place: the stride of the axis it precedes, times its size
            out_sizes.append(1)
            out_strides.append(sizes[d] * strides[d] if d < len(sizes) else 1)
            continue
        if isinstance(e, bool) or not isinstance(e, (int, slice)):
            return None
        if isinstance(e, int):
            if not -sizes[d] <= e < sizes[d]:
                return None  # IndexError in torch
            d += 1
            continue
        start, stop, step = e.indices(sizes[d])
        if step <= 0:
            return None  # torch refuses a negative step
        out_sizes.append(max(0, (stop - start + step - 1) // step))
        out_strides.append(strides[d] * step)
        d += 1
    return tuple(out_sizes), tuple(out_strides)


def expanded(layout: Layout, new_sizes) -> Layout | None:
    """expand: an axis of size 1 broadcast to a longer one steps 0; new leading
    axes step 0."""
    sizes, strides = layout
    extra = len(new_sizes) - len(sizes)
    if extra < 0:
        return None
    out = []
    for i, n in enumerate(new_sizes):
        if i < extra:
            out.append(0)
            continue
        s = sizes[i - extra]
        if n == s or n == -1:
            out.append(strides[i - extra])
        elif s == 1:
            out.append(0)
        else:
            return None
    return tuple(n if n != -1 else sizes[i - extra] for i, n in enumerate(new_sizes)), tuple(out)


def iterated(layouts, out_sizes, scalars: bool = False) -> Layout:
    """The layout of an elementwise op's result (TensorIterator's): the strides of
    operands of the result's shape where all share them (contiguous where all are),
    else dense in the order of the operands' strides, innermost first, a broadcast
    axis (stride 0) deciding nothing and the first operand that orders two axes
    ordering them."""
    nd = len(out_sizes)
    out_sizes = tuple(out_sizes)
    # a Python number (a 0-d tensor to TensorIterator) is an operand of another shape
    same_shape = not scalars and all(tuple(s) == out_sizes for s, _ in layouts)
    if same_shape and layouts:
        if all(is_contiguous(s, t) for s, t in layouts):
            return out_sizes, contiguous(out_sizes)
        firsts = {tuple(t) for _, t in layouts}
        if len(firsts) == 1 and all(dense(s, t) for s, t in layouts):
            return out_sizes, tuple(layouts[-1][1])
    ops = []
    for sizes, steps in layouts:
        off = nd - len(sizes)
        row = [0] * nd
        for i, (s, t) in enumerate(zip(sizes, steps, strict=True)):
            row[off + i] = 0 if (s == 1 and out_sizes[off + i] != 1) else t
        ops.append(row)

    def should_swap(d0: int, d1: int) -> int:
        for row in ops:
            s0, s1 = row[d0], row[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if out_sizes[d0] > out_sizes[d1]:
                return 1
        return 0

    perm = list(range(nd - 1, -1, -1))
    if nd > 1:
        for i in range(1, nd):
            d1 = i
            for d0 in range(i - 1, -1, -1):
                c = should_swap(perm[d0], perm[d1])
                if c > 0:
                    perm[d0], perm[d1] = perm[d1], perm[d0]
                    d1 = d0
                elif c < 0:
                    break
    steps_out = [0] * nd
    step = 1
    for d in perm:
        steps_out[d] = step
        step *= out_sizes[d]
    return out_sizes, tuple(steps_out)


def dense(sizes, steps) -> bool:
    """torch's is_non_overlapping_and_dense: some order of the axes is contiguous."""
    order = sorted(range(len(sizes)), key=lambda d: (steps[d], sizes[d]))
    step = 1
    for d in order:
        if sizes[d] == 1:
            continue
        if steps[d] != step:
            return False
        step *= sizes[d]
    return True
