"""What nn.MultiheadAttention's forward (F.multi_head_attention_forward, batched)
saves for backward, as torch 2.x runs it, where every projection weight requires
grad: the names its stub's `saved=` reads (docs/costs.md, Activation memory).

The projections (`_in_projection_packed`): one linear of the query where query,
key and value are one tensor ("all": its result made contiguous as [3, L, N, E]),
one of the query and one of the key where key is value ("kv": [2, S, N, E]), else
one each ("sep"). Each linear keeps its input: the tensor given, folded to two
axes (a view of a contiguous one), or, under `batch_first`, the tensor transposed
to (L, N, E) first, which the fold copies unless the batch or the length is 1.

With `need_weights` (the math path): `q * scale` (a new tensor, kept by the
scores' bmm), the projection holding k (the bmm keeps k's view of it) and v, the
softmax's result, and the heads' output transposed and reshaped for the output
projection (a copy, or a view of the bmm's result, which nothing else keeps: L·N·E
either way). A mask changes none of them (baddbmm keeps the same two operands).
Without (`scaled_dot_product_attention`, CPU's flash kernel): q, k and v (views of
their projections), its output, laid out as q is (so the output projection's
reshape is a view of it), and a float32 logsumexp per query and head.
"""

from __future__ import annotations

from shapelint.notation.symbolic import Expr
from shapelint.ops import dtypes, saved
from shapelint.ops.backward import requires
from shapelint.ops.values import NoneV, TensorV, Value


def mha_saved(
    inputs: tuple[Value, Value, Value],
    separate: bool | None,
    batch_first: bool | None,
    need_weights: bool | None,
    extra: bool,
    weights_grad: bool,
    sizes: tuple,
    heads: Expr | None,
) -> dict[str, Expr | None]:
    """The names the stub's `saved=` reads: mok (1 where modelled), mq, mk, mv (1
    where the linear keeps the query, key or value given, folded: `flat()`), msv
    (the bytes of the tensors it makes and keeps)."""
    off = {"mok": Expr.const(0), "mq": Expr.const(0), "mk": Expr.const(0)}
    off |= {"mv": Expr.const(0), "msv": Expr.const(0)}
    lq, n, sk, e, kd, vd, sa = sizes
    query = inputs[0]
    packing = _packing(separate, inputs)
    if (
        packing is None
        or batch_first is None
        or need_weights is None
        or extra
        or not weights_grad
        or not isinstance(query, TensorV)
        or query.rank != 3
        or not all(isinstance(x, Expr) for x in (*sizes, heads))
    ):
        return off
    item = dtypes.dtype_bytes(query.dtype)
    if not need_weights and item != 4:
        return off  # the flash kernel's logsumexp is float32 for float32 alone here
    given = {"all": (0,), "kv": (0, 1), "sep": (0, 1, 2)}[packing]
    # One tensor projected twice or thrice ("sep" with query is key): each linear
    # folds it, a view of its storage where it is contiguous (weighed once, by
    # storage) and a copy of its own where not (under batch_first each operand is
    # transposed apart, each fold a copy): weighed per operand, as for any.
    keeps = [0, 0, 0]
    new = Expr.const(0)
    for i in given:
        v, length, width = inputs[i], (lq, sk, sk)[i], (e, kd, vd)[i]
        if not isinstance(v, TensorV):
            return off
        if not batch_first:
            keeps[i] = 1
            continue
        copies = _transposed_copies(v, n, length)
        if copies is None:
            return off
        if copies:
            new = new + length * n * width * item
        else:
            keeps[i] = 1
    lne, sne = lq * n * e, sk * n * e
    held = {"all": 3 * lne, "kv": 2 * sne, "sep": 2 * sne}[packing]
    if need_weights:
        new = new + (held + 2 * lne + n * heads * lq * sa) * item
    else:
        q_alone = 0 if packing == "all" else lne  # q's own projection, kept by the kernel
        new = new + (held + q_alone + lne) * item + n * heads * lq * 4
    return {
        "mok": Expr.const(1),
        "mq": Expr.const(keeps[0]),
        "mk": Expr.const(keeps[1]),
        "mv": Expr.const(keeps[2]),
        "msv": new,
    }


def _transposed_copies(v: TensorV, n: Expr, length: Expr) -> bool | None:
    """Whether linear's fold of v.transpose(1, 0) (batch_first) copies: a contiguous
    v so transposed is no longer contiguous where batch and length both exceed 1;
    None where v's layout or those sizes are not known."""
    if v.contiguous is not True:
        return None
    if n.value is None or length.value is None:
        return None
    return n.value > 1 and length.value > 1


def _packing(separate: bool | None, inputs: tuple[Value, Value, Value]) -> str | None:
    """F.multi_head_attention_forward's projections: "sep" with separate weights or
    where key is not value, "kv" where key is value and query another, "all" where
    the three are one tensor; None where `is` is not known."""
    if separate is None:
        return None
    if separate:
        return "sep"
    q, k, v = inputs
    kv, qk = _is(k, v), _is(q, k)
    if kv is None or (kv and qk is None):
        return None
    return "sep" if not kv else "all" if qk else "kv"


def _is(a: Value, b: Value) -> bool | None:
    """`a is b` of two tensors: the same value, or two values of one storage that
    neither views (the analysis keeps the tensor a cast to its own dtype, or a
    function's return, gives back as such: torch's same object); surely not where
    they are tensors of two storages (saved.distinct); None otherwise."""
    if a is b:
        return True
    if not (isinstance(a, TensorV) and isinstance(b, TensorV)):
        return None
    if saved.distinct(a, b):
        return False
    root = saved.storage_of(a)
    if (
        root is saved.storage_of(b)
        and root is not saved.UNSURE
        and not (a.view or b.view)
        and a.shape == b.shape
    ):
        return True
    return None


def mask_saved(
    masks: tuple[Value, Value],
    causal: Value,
    need_weights: bool | None,
    query: Value,
    sizes: tuple,
    heads,
) -> dict[str, Expr]:
    """What F.multi_head_attention_forward's masks add to what it keeps: nothing
    with need_weights (baddbmm keeps its two products' operands, not the mask);
    without, the mask scaled_dot_product_attention's fused kernel keeps: the float
    attn_mask given (mka), or the key_padding_mask (mkp, one head: its expand is no
    copy), else a tensor made here (mmsv bytes): a boolean mask converted to the
    query's dtype, the padding mask expanded over the heads and copied by reshape,
    or the sum of both masks over (batch·heads, query, key). A causal hint without
    a padding mask drops attn_mask (SDPA's is_causal). mmok: 1 where modelled,
    absent where not (a mask that may require grad takes the math path)."""
    none = {"mka": Expr.const(0), "mkp": Expr.const(0), "mmsv": Expr.const(0)}
    if need_weights is None:
        return {}
    attn, kpm = (None if m is None or isinstance(m, NoneV) else m for m in masks)
    if need_weights or (attn is None and kpm is None):
        return none | {"mmok": Expr.const(1)}
    hint = False if causal is None or isinstance(causal, NoneV) else getattr(causal, "value", None)
    if hint is None:
        return {}
    if hint and kpm is None:
        attn = None
    if attn is None and kpm is None:
        return none | {"mmok": Expr.const(1)}
    lq, n, sk = sizes[0], sizes[1], sizes[2]
    kinds = [_mask_dtype(m, query) for m in (attn, kpm) if m is not None]
    if None in kinds or not isinstance(query, TensorV):
        return {}
    item = dtypes.dtype_bytes(query.dtype)
    if item is None:
        return {}
    if attn is not None and kpm is not None:
        made = n * heads * lq * sk * item if isinstance(heads, Expr) else None
        return {} if made is None else none | {"mmok": Expr.const(1), "mmsv": made}
    mask = attn if attn is not None else kpm
    if kpm is not None and not (isinstance(heads, Expr) and heads.value == 1):
        if not isinstance(heads, Expr) or heads.value is None:
            return {}
        return none | {"mmok": Expr.const(1), "mmsv": n * heads * sk * item}
    if kinds[0] == "bool":
        count = mask.numel()  # type: ignore[union-attr]
        return {} if count is None else none | {"mmok": Expr.const(1), "mmsv": count * item}
    return none | {"mmok": Expr.const(1), ("mka" if attn is not None else "mkp"): Expr.const(1)}


def _mask_dtype(mask: Value, query: Value) -> str | None:
    """Which mask ("bool", or "float": the query's dtype) the fused kernel takes: one
    of no grad; None otherwise or where not known."""
    if not isinstance(mask, TensorV) or not isinstance(query, TensorV):
        return None
    if dtypes.unnamed(mask.dtype) or dtypes.unnamed(query.dtype) or mask.dtype is None:
        return None
    if requires(mask) is not False:
        return None
    if mask.dtype == "bool":
        return "bool"
    return "float" if mask.dtype == (query.dtype or dtypes.DEFAULT_FLOAT) else None
