"""Shape rules for the tensor ops of stubs/tensor.stub: tensordot, kron, sliding
windows (Tensor.unfold), repeat_interleave, diagonal, meshgrid, index_select, the
real FFTs, linalg.solve and the triangle indices. Known numbers that cannot work are
errors; names are never conflicts.
"""

from __future__ import annotations

import math

from shapelint.notation.symbolic import Expr, product
from shapelint.ops import dtypes, strides
from shapelint.ops.indexing import provably_nonnegative
from shapelint.ops.saved import layout_of
from shapelint.ops.shape_rules import (
    DIM_RANGE,
    MATMUL,
    RANK,
    SIGNATURE,
    NotApplicable,
    RuleContext,
    RuleOut,
    broadcast,
    broadcast_shapes,
    const,
    differs,
    dim_positions,
    has_var,
    int_list,
    int_value,
    is_none,
    known_rank,
    numel,
    replaced,
    rule,
    shape_of,
    shape_text,
)
from shapelint.ops.values import (
    UNKNOWN,
    BoolV,
    Dim,
    IntV,
    StrV,
    TensorV,
    TupleV,
    Value,
    dim_str,
    dtype_of,
)


def _known(shape) -> bool:
    return shape is not None and not has_var(shape)


def _axis(ctx: RuleContext, shape, dim: Value, arg: int, dtype: str | None):
    """(position of dim, an empty RuleOut), or the finished result: a dimension out of
    range, or an unknown shape when the dim cannot be placed."""
    out = RuleOut()
    positions = dim_positions(ctx, shape, out, (dim, arg), needs=DIM_RANGE)
    if positions is None:
        return out
    (pos,) = positions
    if pos is None:
        return RuleOut(TensorV(None, dtype))
    return pos, out


@rule
def tensordot(ctx: RuleContext, a: Value, b: Value, dims: Value) -> RuleOut:
    """torch.tensordot: dims=d contracts a's last d axes with b's first d; dims=(la, lb)
    lists them. torch runs one mm (a dot when neither side keeps more than one row).

    Binds m (a's free axes), k (contracted), n (b's) and dot; va and vb, whether
    the operand mm is given is a view of a (of b) or a copy (ATen's permute and
    reshape, by their strides; None where not known)."""
    sa, sb = shape_of(a), shape_of(b)
    if not _known(sa) or not _known(sb):
        return RuleOut(TensorV(None, dtype_of(a)))
    out = RuleOut()
    if isinstance(dims, TupleV) and len(dims.items) == 2:
        la, lb = int_list(dims.items[0]), int_list(dims.items[1])
        if la is None or lb is None or None in la + lb:
            return RuleOut(TensorV(None, dtype_of(a)))
        pa = dim_positions(ctx, sa, out, *[(IntV(d), 2) for d in la])
        pb = dim_positions(ctx, sb, out, *[(IntV(d), 2) for d in lb])
        if pa is None or pb is None:
            return out
        if len(pa) != len(pb):
            out.issues.append(ctx.issue(SIGNATURE, "both operands must contract as many axes", 2))
            return out
    else:
        d = int_value(dims)
        if d is None or d.value is None:
            return RuleOut(TensorV(None, dtype_of(a)))
        if d.value > min(len(sa), len(sb)) or d.value < 0:
            out.issues.append(
                ctx.issue(
                    RANK,
                    f"cannot contract {d.value} axes of {shape_text(sa)} and {shape_text(sb)}",
                    2,
                )
            )
            return out
        pa = list(range(len(sa) - d.value, len(sa)))
        pb = list(range(d.value))
    contracted: list[Dim] = []
    summed = False
    for i, j in zip(pa, pb, strict=True):
        # A size 1 against another is summed away first: it contracts as 1.
        if const(sa[i]) == 1 or const(sb[j]) == 1:
            summed = summed or const(sa[i]) != const(sb[j])
            contracted.append(Expr.const(1))
            continue
        contracted.append(sa[i])
        if differs(sa[i], sb[j]):
            out.issues.append(
                ctx.issue(
                    MATMUL,
                    f"contracted sizes differ: {dim_str(sa[i])} in {shape_text(sa)} and "
                    f"{dim_str(sb[j])} in {shape_text(sb)}",
                    1,
                )
            )
            return out
    free_a = [d for i, d in enumerate(sa) if i not in pa]
    free_b = [d for j, d in enumerate(sb) if j not in pb]
    out.value = TensorV(tuple(free_a + free_b), dtype_of(a))
    m, n = numel(tuple(free_a)), numel(tuple(free_b))
    # Both sides down to one row: torch takes aten.dot, which its counter counts as 0.
    dot = Expr.const(int(const(m) == 1 and const(n) == 1))
    out.bind = {"m": m, "k": numel(tuple(contracted)), "n": n, "dot": dot}
    free = [i for i in range(len(sa)) if i not in pa], [j for j in range(len(sb)) if j not in pb]
    views = (None, None) if summed else _mm_operands_viewed(a, b, pa, pb, free)
    out.bind.update(va=views[0], vb=views[1])
    return out


def _mm_operands_viewed(a, b, pa, pb, free) -> tuple[Expr | None, Expr | None]:
    """Whether ATen's tensordot hands mm a view of each operand (1) or a copy (0):
    `a.permute(free_a + pa).reshape(m, k)` and `b.permute(pb + free_b).reshape(k,
    n)` view where computeStride succeeds; None where the strides are not known."""
    out: list[Expr | None] = []
    for t, order, cut in ((a, [*free[0], *pa], len(free[0])), (b, [*pb, *free[1]], len(pb))):
        laid = layout_of(t)
        if laid is None:
            out.append(None)
            continue
        sizes, steps = strides.permuted(laid, order)
        rows = sizes[:cut]
        fold = (math.prod(rows), math.prod(sizes[cut:]))
        out.append(Expr.const(int(strides.reshaped(sizes, steps, fold)[1])))
    return out[0], out[1]


@rule
def kron(ctx: RuleContext, a: Value, b: Value) -> RuleOut:
    """torch.kron: ranks padded to the longer with leading 1s, sizes multiply."""
    sa, sb = shape_of(a), shape_of(b)
    if not _known(sa) or not _known(sb):
        return RuleOut(TensorV(None, dtype_of(a)))
    r = max(len(sa), len(sb))
    one = Expr.const(1)
    pa = (one,) * (r - len(sa)) + tuple(sa)
    pb = (one,) * (r - len(sb)) + tuple(sb)
    dims = tuple(
        x * y if isinstance(x, Expr) and isinstance(y, Expr) else None
        for x, y in zip(pa, pb, strict=True)
    )
    return RuleOut(TensorV(dims, dtype_of(a)))


@rule
def narrow(ctx: RuleContext, x: Value, dim: Value, start: Value, length: Value) -> RuleOut:
    """Tensor.narrow(dim, start, length): dim becomes length (a view). torch refuses a
    0-d tensor, a negative length, a start outside [-n, n] (a negative one counts
    from the end) and a window that passes the end."""
    shape = shape_of(x)
    if shape is None:
        return RuleOut(TensorV(None, dtype_of(x)))
    out = RuleOut()
    positions = dim_positions(ctx, shape, out, (dim, 0), needs=RANK)
    if positions is None:
        return out
    (pos,) = positions
    n = int_value(length)
    if pos is None or has_var(shape) or n is None:
        return RuleOut(TensorV(None, dtype_of(x)))
    at = int_value(start)
    size, first, count = const(shape[pos]), const(at) if at is not None else None, const(n)
    if count is not None and count < 0:
        out.issues.append(ctx.issue(SIGNATURE, "length must be non-negative", 3))
        return out
    if size is not None and first is not None and count is not None:
        if not -size <= first <= size:
            message = f"start {first} is out of range for dimension {pos} of size {size}"
            out.issues.append(ctx.issue(DIM_RANGE, message, 2))
            return out
        first += size if first < 0 else 0
        if first + count > size:
            message = f"start ({first}) + length ({count}) exceeds dimension size ({size})"
            out.issues.append(ctx.issue(SIGNATURE, message, 3))
            return out
    out.value = TensorV(replaced(tuple(shape), pos, n), dtype_of(x))
    return out


@rule
def sliding(ctx: RuleContext, x: Value, dim: Value, size: Value, step: Value) -> RuleOut:
    """Tensor.unfold(dim, size, step): dim becomes (n − size)//step + 1 windows and a new
    last axis of size (a view)."""
    shape = shape_of(x)
    if shape is None:
        return RuleOut(TensorV(None, dtype_of(x)))
    out = RuleOut()
    positions = dim_positions(ctx, shape, out, (dim, 0))
    if positions is None:
        return out
    (pos,) = positions
    k, s = int_value(size), int_value(step)
    if pos is None or has_var(shape) or k is None or s is None:
        return RuleOut(TensorV(None, dtype_of(x)))
    n = shape[pos]
    if const(s) is not None and const(s) <= 0:  # type: ignore[operator]
        out.issues.append(ctx.issue(SIGNATURE, f"step must be positive, got {const(s)}", 2))
        return out
    if const(n) is not None and const(k) is not None and const(k) > const(n):  # type: ignore[operator]
        out.issues.append(
            ctx.issue(
                SIGNATURE,
                f"window size {const(k)} exceeds the size {const(n)} of dimension {pos}",
                1,
            )
        )
        return out
    windows = (n - k) // s + 1 if isinstance(n, Expr) and s.value != 0 else None
    out.value = TensorV(replaced(tuple(shape), pos, windows) + (k,), dtype_of(x))
    return out


@rule
def repeat_interleave(
    ctx: RuleContext, x: Value, repeats: Value, dim: Value, output_size: Value
) -> RuleOut:
    """repeat_interleave with an int count: dim grows r times (no dim: the flattened
    tensor). A tensor of counts gives output_size, or an unknown size."""
    shape = shape_of(x)
    if shape is None:
        return RuleOut(TensorV(None, dtype_of(x)))
    r = int_value(repeats)
    given = None if is_none(output_size) else int_value(output_size)
    if is_none(dim):
        total = numel(tuple(shape)) if _known(shape) else None
        size = (
            given
            if given is not None
            else (total * r if total is not None and r is not None else None)
        )
        return RuleOut(TensorV((size,), dtype_of(x)))
    found = _axis(ctx, shape, dim, 2, dtype_of(x))
    if isinstance(found, RuleOut):
        return found
    pos, out = found
    n = shape[pos]
    size = (
        given if given is not None else (n * r if isinstance(n, Expr) and r is not None else None)
    )
    out.value = TensorV(replaced(tuple(shape), pos, size), dtype_of(x))
    return out


@rule
def diagonal(ctx: RuleContext, x: Value, offset: Value, dim1: Value, dim2: Value) -> RuleOut:
    """torch.diagonal: dim1 and dim2 removed, their diagonal (shifted by offset)
    appended as the last axis."""
    shape = shape_of(x)
    if shape is None or has_var(shape):
        return RuleOut(TensorV(None, dtype_of(x)))
    out = RuleOut()
    positions = dim_positions(ctx, shape, out, (dim1, 2), (dim2, 3), needs=DIM_RANGE)
    if positions is None:
        return out
    p1, p2 = positions
    if p1 == p2:
        out.issues.append(ctx.issue(DIM_RANGE, "diagonal dimensions cannot be identical", 2))
        return out
    off = int_value(offset)
    a, b = shape[p1], shape[p2]
    length: Dim = None
    if off is not None and off.value is not None and isinstance(a, Expr) and isinstance(b, Expr):
        rows, cols = (a, b - off.value) if off.value >= 0 else (a + off.value, b)
        if rows.value is not None and cols.value is not None:
            length = Expr.const(max(0, min(rows.value, cols.value)))
        elif rows == cols or provably_nonnegative(cols - rows) and provably_nonnegative(rows):
            length = rows
        elif provably_nonnegative(rows - cols) and provably_nonnegative(cols):
            length = cols
    rest = tuple(d for i, d in enumerate(shape) if i not in (p1, p2))
    out.value = TensorV(rest + (length,), dtype_of(x))
    return out


@rule
def meshgrid(ctx: RuleContext, tensors: Value, indexing: Value) -> RuleOut:
    """torch.meshgrid: every output is [n1, n2, ...] ("ij", the default) or with the
    first two swapped ("xy")."""
    items = tensors.items if isinstance(tensors, TupleV) else None
    if items and len(items) == 1 and isinstance(items[0], TupleV):
        items = items[0].items  # meshgrid([a, b]) as well as meshgrid(a, b)
    if items is None or not all(isinstance(t, TensorV) for t in items):
        return RuleOut(UNKNOWN)  # meshgrid(*grids) of a list not followed: not even a count
    sizes: list[Dim] = []
    out = RuleOut()
    for i, t in enumerate(items):
        s = shape_of(t)
        r = known_rank(s)
        if r is not None and r > 1:
            out.issues.append(
                ctx.issue(RANK, f"expects 0-d or 1-d tensors, got {shape_text(s)}", i)
            )
            return out
        sizes.append(s[0] if r == 1 else Expr.const(1) if r == 0 else None)  # type: ignore[index]
    mode = indexing.value if isinstance(indexing, StrV) else "ij" if is_none(indexing) else None
    if mode == "xy" and len(sizes) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    shape = tuple(sizes) if mode in ("ij", "xy") else None
    out.value = TupleV(tuple(TensorV(shape, dtype_of(t)) for t in items))
    return out


@rule
def broadcast_tensors(ctx: RuleContext, tensors: Value) -> RuleOut:
    """torch.broadcast_tensors: each operand expanded to the shape they broadcast to,
    its own dtype kept."""
    items = tensors.items if isinstance(tensors, TupleV) else None
    if items and len(items) == 1 and isinstance(items[0], TupleV):
        items = items[0].items  # broadcast_tensors(*pair) spelled with a tuple
    if items is None or not all(isinstance(t, TensorV) for t in items):
        return RuleOut(UNKNOWN)  # a list not followed: not even a count
    joint = broadcast(ctx, *items)
    if isinstance(joint, NotApplicable):
        return RuleOut(TupleV(()))
    if joint.issues:
        return joint
    shape = joint.value.shape if isinstance(joint.value, TensorV) else None
    joint.value = TupleV(tuple(TensorV(shape, dtype_of(t)) for t in items))
    return joint


@rule
def index_select(ctx: RuleContext, x: Value, dim: Value, index: Value) -> RuleOut:
    """index_select: dim becomes the length of the 1-d index."""
    shape, ishape = shape_of(x), shape_of(index)
    if shape is None:
        return RuleOut(TensorV(None, dtype_of(x)))
    out = RuleOut()
    if known_rank(ishape) is not None and len(ishape) > 1:  # type: ignore[arg-type]
        out.issues.append(ctx.issue(RANK, f"index must be 0-d or 1-d, got {shape_text(ishape)}", 2))
        return out
    positions = dim_positions(ctx, shape, out, (dim, 1))
    if positions is None:
        return out
    (pos,) = positions
    if shape == ():
        return RuleOut(TensorV((), dtype_of(x)))
    if pos is None:
        return RuleOut(TensorV(None, dtype_of(x)))
    n = None if ishape is None or has_var(ishape) else (ishape[0] if ishape else Expr.const(1))
    out.value = TensorV(replaced(tuple(shape), pos, n), dtype_of(x))
    return out


_COMPLEX = {"float32": "complex64", "float64": "complex128", "float16": "complex32"}
_REAL = {v: k for k, v in _COMPLEX.items()}


def _fft_dtype(x: Value, k: str | None) -> str | None:
    """The dtype of a transform of kind k ("c2c", "r2c", "c2r") of x."""
    dtype = dtype_of(x)
    if dtype is None and k in ("c2c", "r2c"):
        # an input of unknown dtype costs as the default float: its transform as the
        # default complex, twice the bytes (left unknown, it would cost as a float)
        dtype = dtypes.DEFAULT_FLOAT
    if dtype is not None and dtype.startswith(("int", "uint", "bool")):
        dtype = dtypes.DEFAULT_FLOAT  # promoted to the default float first
    if k == "c2c":
        dtype = _COMPLEX.get(dtype, dtype) if dtype is not None else None  # type: ignore[arg-type]
    elif k == "r2c":
        dtype = _COMPLEX.get(dtype) if dtype is not None else None  # type: ignore[arg-type]
    elif k == "c2r":
        # a real input is taken as complex with no imaginary part: its own float back
        real = dtype if dtype in ("float32", "float64") else None
        dtype = _REAL.get(dtype, real) if dtype is not None else None  # type: ignore[arg-type]
    return dtype


@rule
def fft(ctx: RuleContext, x: Value, n: Value, dim: Value, kind: Value) -> RuleOut:
    """torch.fft.fft / ifft (kind "c2c"), rfft ("r2c": n//2 + 1 frequencies) and irfft
    ("c2r": n, by default 2·(m − 1)) along one dim; n pads or trims the signal."""
    shape = shape_of(x)
    k = kind.value if isinstance(kind, StrV) else None
    dtype = _fft_dtype(x, k)
    if shape is None:
        return RuleOut(TensorV(None, dtype))
    found = _axis(ctx, shape, dim, 2, dtype)
    if isinstance(found, RuleOut):
        return found
    pos, out = found
    m = shape[pos]
    length = m if is_none(n) else int_value(n)
    if isinstance(length, Expr) and length.value is not None and length.value < 1:
        out.issues.append(
            ctx.issue(SIGNATURE, f"invalid number of data points ({length.value})", 1)
        )
        return out
    if k == "r2c":
        size = length // 2 + 1 if isinstance(length, Expr) else None
    elif k == "c2r":
        size = (2 * (m - 1) if isinstance(m, Expr) else None) if is_none(n) else length
    else:
        size = length
    if const(size) is not None and const(size) < 1:  # type: ignore[operator]
        out.issues.append(ctx.issue(SIGNATURE, f"invalid number of data points ({const(size)})", 0))
        return out
    out.value = TensorV(replaced(tuple(shape), pos, size), dtype)
    out.bind = {"points": product([length]) if isinstance(length, Expr) else None}
    return out


def _fft_plan(ctx: RuleContext, shape, s: Value, dim: Value, out: RuleOut):
    """(positions, sizes) of an n-d transform as torch's canonicalize_fft_shape_and_dim_args
    reads s and dim: s alone transforms the last len(s) dims, neither transforms every
    dim, an s of -1 keeps its dim's size; None where not known here (out then holds
    the error torch raises, if it surely raises one)."""
    sizes = None if is_none(s) else int_list(s)
    dims = None if is_none(dim) else int_list(dim)
    if (sizes is None and not is_none(s)) or (dims is None and not is_none(dim)):
        return None
    rank = len(shape)
    if dims is not None:
        if None in dims or any(d.value is None for d in dims):  # type: ignore[union-attr]
            return None
        need = DIM_RANGE if dims else None  # no axis of a 0-d tensor, as torch wraps them
        found = dim_positions(ctx, shape, out, *[(IntV(d), 2) for d in dims], needs=need)
        if found is None or None in found:
            return None
        if len(set(found)) != len(found):
            out.issues.append(ctx.issue(SIGNATURE, "FFT dims must be unique", 2))
            return None
        positions = [p for p in found if p is not None]
    if sizes is not None:
        if dims is not None and len(dims) != len(sizes):
            message = "When given, dim and shape arguments must have the same length"
            out.issues.append(ctx.issue(SIGNATURE, message, 1))
            return None
        if len(sizes) > rank:
            message = (
                f"Got shape with {len(sizes)} values but input tensor only has {rank} dimensions."
            )
            out.issues.append(ctx.issue(SIGNATURE, message, 1))
            return None
        if dims is None:
            positions = list(range(rank - len(sizes), rank))
        if None in sizes:
            return None
        lengths = [shape[p] if const(n) == -1 else n for n, p in zip(sizes, positions)]
    elif dims is None:
        positions, lengths = list(range(rank)), list(shape)
    else:
        lengths = [shape[p] for p in positions]
    for n in lengths:
        if const(n) is not None and const(n) < 1:  # type: ignore[operator]
            out.issues.append(
                ctx.issue(SIGNATURE, f"invalid number of data points ({const(n)})", 1)
            )
            return None
    return positions, lengths


@rule
def fftn(ctx: RuleContext, x: Value, s: Value, dim: Value, kind: Value) -> RuleOut:
    """torch.fft.fftn / ifftn (kind "c2c"), rfftn / ihfftn ("r2c": the last dim
    transformed becomes n//2 + 1) and irfftn / hfftn ("c2r": the last becomes s[-1],
    by default 2·(m − 1)), and their 2-d forms (dim=(-2, -1) by default): each dim
    transformed takes its size from s (padded or trimmed), the others are kept."""
    shape = shape_of(x)
    k = kind.value if isinstance(kind, StrV) else None
    dtype = _fft_dtype(x, k)
    if shape is None or has_var(shape) or k is None:
        return RuleOut(TensorV(None, dtype))
    out = RuleOut()
    plan = _fft_plan(ctx, shape, s, dim, out)
    if plan is None:
        return out if out.issues else RuleOut(TensorV(None, dtype))
    positions, lengths = plan
    if k != "c2c" and not positions:
        out.issues.append(ctx.issue(SIGNATURE, "a real FFT must transform at least one axis", 0))
        return out
    new = list(shape)
    for p, n in zip(positions, lengths):
        new[p] = n
    if k == "r2c":
        n = lengths[-1]
        new[positions[-1]] = n // 2 + 1 if isinstance(n, Expr) else None
    elif k == "c2r":
        last = int_list(s)[-1] if not is_none(s) else None  # type: ignore[index]
        if last is None or const(last) == -1:
            m = shape[positions[-1]]
            new[positions[-1]] = 2 * (m - 1) if isinstance(m, Expr) else None
        size = const(new[positions[-1]])
        if size is not None and size < 1:
            out.issues.append(ctx.issue(SIGNATURE, f"invalid number of data points ({size})", 0))
            return out
    out.value = TensorV(tuple(new), dtype)
    return out


@rule
def solve(ctx: RuleContext, a: Value, b: Value, left: Value) -> RuleOut:
    """torch.linalg.solve: A [*a, n, n]; B [*b, n, k] (AX = B), [*b, k, n] (XA = B,
    left=False) or, left, a batch of vectors [*b, n] (B 1-d, or of A's shape without
    its last axis); the batches broadcast, the result is shaped like B's solution.
    Nothing claimed where torch's choice is not known here (the result unknown).

    Binds batch (the broadcast batch's elements), n, and k (1 for vectors)."""
    return _solved(a, b, left, vectors=True)


def _solved(a: Value, b: Value, left: Value, vectors: bool) -> RuleOut:
    out = RuleOut(TensorV(None, dtype_of(a)))
    out.bind = {"batch": None, "n": None, "k": None}
    sa, sb = shape_of(a), shape_of(b)
    side = left.value if isinstance(left, BoolV) else None
    if not _known(sa) or not _known(sb) or side is None or len(sa) < 2 or not sb:
        return out
    n = sa[-1]
    if differs(sa[-2], n):
        return out
    vector = vectors and side and len(sb) == 1
    if vectors and side and len(sb) == len(sa) - 1:
        same = all(x == y for x, y in zip(sb, sa[:-1]))
        if not same and not any(differs(x, y) for x, y in zip(sb, sa[:-1])):
            return out  # a vector batch or a matrix: the sizes decide, not known here
        vector = same
    if vector:
        batch_b, k, tail = sb[:-1], Expr.const(1), (n,)
        shared = sb[-1]
    elif len(sb) >= 2:
        batch_b = sb[:-2]
        k, shared = (sb[-1], sb[-2]) if side else (sb[-2], sb[-1])
        tail = (n, k) if side else (k, n)
    else:
        return out
    batch, conflicts = broadcast_shapes(tuple(sa[:-2]), tuple(batch_b))
    if differs(shared, n) or batch is None or conflicts:
        return out
    out.value = TensorV((*batch, *tail), dtype_of(a))
    out.bind = {"batch": numel(batch), "n": n, "k": k}
    return out


@rule
def solve_triangular(ctx: RuleContext, a: Value, b: Value, left: Value) -> RuleOut:
    """torch.linalg.solve_triangular: solve's shapes, B always a matrix ([*b, n, k],
    or [*b, k, n] where not left), never a batch of vectors (torch raises for a 1-d
    B: the result is not claimed)."""
    return _solved(a, b, left, vectors=False)


# Rows past which the triangle is counted by its formula's terms no more.
_TRIANGLE_ROWS = 1 << 16


@rule
def tri_indices(ctx: RuleContext, row: Value, col: Value, offset: Value, upper: Value) -> RuleOut:
    """torch.triu_indices / tril_indices: [2, count], count the (i, j) of a row x col
    matrix with j - i >= offset (upper) or <= offset (lower); known at known sizes."""
    r, c, o = (const(int_value(v)) for v in (row, col, offset))
    if r is None or c is None or o is None or not isinstance(upper, BoolV) or r > _TRIANGLE_ROWS:
        return RuleOut(TensorV((Expr.const(2), None)))
    if upper.value:
        count = sum(max(0, c - max(0, i + o)) for i in range(r))
    else:
        count = sum(max(0, min(c, i + o + 1)) for i in range(r))
    return RuleOut(TensorV((Expr.const(2), Expr.const(count))))
