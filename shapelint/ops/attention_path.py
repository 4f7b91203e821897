"""Which kernel torch 2.x on CPU runs F.scaled_dot_product_attention with: the
fused (flash) kernel, whose saves and backward formula the stub states, or the
math path (two batched products, a softmax and the mask's add), which autograd
differentiates op by op and the flop counter counts product by product.

sdp_utils_cpp.cpp's `use_flash_attention_cpp` takes the fused kernel only where
there is no dropout, query, key and value are 4-D with one batch and one head
count (no broadcast; with enable_gqa, key and value may share a head count that
divides the query's), one head size for all three, each operand's last axis of
stride 1, and a mask, if any, does not require grad, is 2-D or 4-D, and its last
two axes are the query's and key's lengths or 1 (a 4-D mask's first two: the
batch and heads, or 1). A 3-D mask, a wider value, a transposed operand or a
dropout takes the math path (checked against torch 2.13 on CPU).

The mask the fused kernel keeps for backward is the float mask it was given (its
storage), or a boolean mask converted to the query's dtype (a new tensor of the
mask's shape); its logsumexp is float32, float64 for a float64 query.
"""

from __future__ import annotations

from shapelint.notation.symbolic import Expr
from shapelint.ops import dtypes, sym_strides
from shapelint.ops.values import BoolV, FloatV, IntV, NoneV, TensorV, Value, tracked


def fused_binds(q: Value, k: Value, v: Value, mask: Value, drop: Value, gqa: Value) -> dict:
    """The names the stub reads: `fused` (1 on the fused kernel, 0 on the math
    path; absent where not known), `mbool`/`mfloat` (which mask it keeps) and
    `lse` (the logsumexp's item size)."""
    path = cpu_flash(q, k, v, mask, drop, gqa)
    if path is None or dtypes.unnamed(getattr(q, "dtype", None)):
        return {}  # which kernel, or its logsumexp's item size, not known
    kind = _mask_kind(mask) if path else "none"
    return {
        "fused": Expr.const(int(path)),
        "mbool": Expr.const(int(kind == "bool")),
        "mfloat": Expr.const(int(kind == "float")),
        "lse": Expr.const(8 if q.dtype == "float64" else 4),  # type: ignore[union-attr]
    }


def cpu_flash(q: Value, k: Value, v: Value, mask: Value, drop: Value, gqa: Value) -> bool | None:
    """Whether CPU's fused kernel runs this call (False: the math path; None: not
    known)."""
    ops = (q, k, v)
    if not all(isinstance(t, TensorV) and t.rank is not None for t in ops):
        return None
    if any(t.rank != 4 for t in ops):  # type: ignore[union-attr]
        return False
    shapes = [t.shape for t in ops]  # type: ignore[union-attr]
    (b, h, lq, e), (bk, hk, s, ek), (bv, hv, sv, ev) = shapes  # type: ignore[misc]
    checks = [_no_dropout(drop), _mask_fits(mask, (b, h, lq, s))]
    checks += [_same(b, bk), _same(b, bv), _same(hk, hv), _same(e, ek), _same(e, ev)]
    heads = _same(h, hk)
    if heads is False:
        heads = _grouped(h, hk, gqa)
    checks += [heads, _same(s, sv), *(_last_stride_one(t) for t in ops)]  # type: ignore[arg-type]
    checks += [not _zero(lq), not _zero(s)]
    if False in checks:
        return False
    return None if None in checks else True


def _grouped(h, hk, gqa: Value) -> bool | None:
    """Query heads other than the key's: the fused kernel takes them where
    enable_gqa is set and the key's head count divides the query's (torch 2.5 on;
    checked against torch 2.13 on CPU, one head count and a 2-D or 4-D mask alike);
    without enable_gqa the math path, which refuses them."""
    grouped = _truthy(gqa)
    if grouped is not True:
        return grouped
    if not (isinstance(h, Expr) and isinstance(hk, Expr)):
        return None
    if h.value is None or hk.value is None or not hk.value:
        return None
    return h.value % hk.value == 0


def _mask_fits(mask: Value, scores: tuple) -> bool | None:
    """check_attn_mask_shape: no mask, or one of no grad, 2-D or 4-D, each axis
    the scores' (batch, heads, query and key lengths) or 1."""
    if mask is None or isinstance(mask, NoneV):
        return True
    if not isinstance(mask, TensorV) or mask.shape is None or _mask_kind(mask) is None:
        return None
    grad = tracked(mask)
    if grad is not False:
        return None if grad is None else False
    if mask.rank not in (2, 4):
        return False
    fits = [_one_or(d, want) for d, want in zip(mask.shape, scores[-mask.rank :])]
    if False in fits:
        return False
    return None if None in fits else True


def _one_or(d, want) -> bool | None:
    if isinstance(d, Expr) and d.value == 1:
        return True
    return _same(d, want)


def _mask_kind(mask: Value) -> str | None:
    if mask is None or isinstance(mask, NoneV):
        return "none"
    if not isinstance(mask, TensorV) or mask.dtype is None:
        return None
    if mask.dtype == "bool":
        return "bool"
    return "float" if mask.dtype in dtypes.MEAN_DTYPES else None


def _same(a, b) -> bool | None:
    if not (isinstance(a, Expr) and isinstance(b, Expr)):
        return None
    if a == b:
        return True
    return False if a.definitely_differs(b) else None


def _zero(d) -> bool:
    return isinstance(d, Expr) and d.value == 0


def _no_dropout(drop: Value) -> bool | None:
    if drop is None or isinstance(drop, NoneV):
        return True
    if isinstance(drop, FloatV) and drop.value is not None:
        return drop.value == 0
    if isinstance(drop, IntV) and drop.value is not None and drop.value.value is not None:
        return drop.value.value == 0
    return None


def _truthy(v: Value) -> bool | None:
    if v is None or isinstance(v, NoneV):
        return False
    if isinstance(v, BoolV):
        return v.value
    return None


def _last_stride_one(t: TensorV) -> bool | None:
    """Whether t's last axis has stride 1 (a size-1 axis too: torch checks the
    stride itself): its followed strides where they hold for its shape."""
    if t.contiguous is True:
        return True
    sizes = [d.value if isinstance(d, Expr) else None for d in t.shape or ()]
    laid = t.layout
    if laid is not None and t.shape is not None and laid[0] == tuple(sizes):
        return laid[1][-1] == 1
    if sym_strides.is_layout(laid) and t.shape is not None and laid[0] == tuple(t.shape):  # type: ignore[index]
        if laid[0][-1].value == 1:  # type: ignore[index]
            return None  # a view's size-1 last axis steps by a convention not followed
        return sym_strides.last_unit(laid)  # type: ignore[arg-type]
    return None
