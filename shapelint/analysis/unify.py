"""Shapes read off the code where no annotation gives them.

A tensor of unknown origin (an unannotated parameter, an unmodelled call's
result) starts with an unknown shape; each use that needs a certain shape tells
the analysis what it is: an einops pattern's left side (`rearrange(x, "b n (h d)
-> ...", h=h)` makes x `[b, n, h·d]`), einsum subscripts, `b, n, d = x.shape`,
a layer's input size (`nn.Linear(dim, inner)(x)`: x ends in `dim`). The
dimension takes the name the code gives it; nothing the code does not say is
assumed: a dim no code names stays unknown, and where a pattern has an ellipsis
the rank stays open.

What is learnt this way holds from the use on (the op raises otherwise). A
parameter learnt about in straight-line code at the top of the function, before
anything can return or raise, has that shape from the start of the function:
the function is analysed again with it, so a cost before the use knows it too.
"""

from __future__ import annotations

import ast
import re

from shapelint.analysis.literals import int_literal
from shapelint.analysis.nodes import children, walk
from shapelint.notation.einops_pattern import parse
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import (
    UNKNOWN,
    BoolV,
    IntV,
    ObjectV,
    OpIssue,
    StrV,
    TensorV,
    TupleV,
    Value,
    Var,
    dtype_of,
    fresh_var,
)

# torch tensors have at most 64 dims: a longer pattern fails anyway, and shaping
# a tensor after it would only cost time.
MAX_RANK = 64

_EINOPS = {"einops.rearrange": "rearrange", "einops.reduce": "reduce", "einops.repeat": "repeat"}
_LETTER_EINSUM = {"torch.einsum", "numpy.einsum", "torch.Tensor.einsum"}


def is_open(v: Value) -> bool:
    """A value a use may tell more about: a tensor with an unknown rank or dim."""
    if v is UNKNOWN:
        return True
    return isinstance(v, TensorV) and (v.shape is None or None in v.shape)


def _left_groups(
    op: str, pattern: str, kwargs: dict[str, Value] | None, local: dict[str, str] | None = None
) -> list | None:
    """Each group of the left side as a size (None: the ellipsis), or None when
    the pattern or its lengths say nothing usable. local: the size name an axis
    with no length takes where its own name is another size's (axis_names_apart)."""
    pat = parse(op, pattern)
    if not pat.ok or pat.output is None or len(pat.left.groups) > MAX_RANK:
        return None
    lengths: dict[str, Expr] = {}
    for k, v in (kwargs or {}).items():
        if isinstance(v, IntV) and v.value is not None:
            lengths[k] = v.value
        else:
            return None  # a length einops cannot use: the op reports it, nothing to learn
    groups: list = []
    for g in pat.left.groups:
        if g.is_ellipsis:
            groups.append(None)
            continue
        size = Expr.const(1)
        for a in g.axes:
            if a.is_anonymous:
                size = size * Expr.const(a.value)  # type: ignore[arg-type]
            elif a.is_ellipsis:
                return None  # '(...)' on the left: a product of dims of unknown number
            else:
                name = local.get(a.name, a.name) if local else a.name
                size = size * lengths.get(a.name, Expr.name(name))
        groups.append(size)
    return groups


def leading_var_binding(
    op: str,
    pattern: str,
    x: Value,
    kwargs: dict[str, Value] | None,
    local: dict[str, str] | None = None,
) -> tuple[str, tuple] | None:
    """`[..., inner]` or `[b, ?, ...]` (one variadic no code names, among dims)
    meets a left side without an ellipsis: the variadic is the pattern's groups
    at its place."""
    if not (isinstance(x, TensorV) and x.shape):
        return None
    at = [i for i, d in enumerate(x.shape) if isinstance(d, Var)]
    if len(at) != 1 or not x.shape[at[0]].name.startswith("_v"):  # type: ignore[union-attr]
        return None
    groups = _left_groups(op, pattern, kwargs, local)
    if groups is None or None in groups:
        return None
    k = len(x.shape) - 1
    if len(groups) < k:
        return None  # the op reports the rank
    return x.shape[at[0]].name, tuple(groups[at[0] : at[0] + len(groups) - k])  # type: ignore[union-attr]


def einops_input(
    op: str,
    pattern: str,
    x: Value,
    kwargs: dict[str, Value] | None,
    local: dict[str, str] | None = None,
) -> TensorV | None:
    """What rearrange/reduce/repeat's left side says x is, where x's shape is
    unknown in part; None when the pattern tells nothing new (or x is not a
    plain tensor: a list einops stacks, a tensor with a variadic)."""
    if not is_open(x) or isinstance(x, ObjectV):
        return None
    groups = _left_groups(op, pattern, kwargs, local)
    if groups is None:
        return None
    shape = x.shape if isinstance(x, TensorV) else None
    dtype = dtype_of(x)
    has_ell = None in groups
    if shape is None:
        dims = [fresh_var() if s is None else s for s in groups]
        return TensorV(tuple(dims), dtype)
    if any(isinstance(d, Var) for d in shape):
        return None
    n = len(groups) - has_ell
    if (has_ell and len(shape) < n) or (not has_ell and len(shape) != n):
        return None  # the op reports the rank
    if has_ell:
        at = groups.index(None)
        after = len(groups) - at - 1
        wanted: list = groups[:at] + [None] * (len(shape) - n) + groups[at + 1 :]
        assert len(wanted) == len(shape) and after >= 0
    else:
        wanted = groups
    dims = tuple(w if d is None else d for d, w in zip(shape, wanted, strict=True))
    return TensorV(dims, dtype) if dims != shape else None


def shape_unpacked(x: Value, names: list[str | None]) -> TensorV | None:
    """`b, n, _ = x.shape`: x has exactly as many dims as there are names (Python
    raises otherwise), and a dim of unknown size takes the name it is given."""
    if len(names) > MAX_RANK:
        return None
    if x is UNKNOWN or (isinstance(x, TensorV) and x.shape is None):
        shape: tuple = (None,) * len(names)
    elif isinstance(x, TensorV) and len(x.shape) == len(names) and None in x.shape:  # type: ignore[arg-type]
        shape = x.shape  # type: ignore[assignment]
    else:
        return None
    dims = tuple(
        Expr.name(n) if d is None and n is not None and n != "_" else d
        for d, n in zip(shape, names, strict=True)
    )
    return TensorV(dims, x.dtype if isinstance(x, TensorV) else None)


def ending_in(x: Value, size: Expr | None) -> TensorV | None:
    """x's last dim is `size` (a layer's input size, `d = x.shape[-1]`), whatever
    comes before it; None when x says so already or size is unknown."""
    if size is None or not isinstance(size, Expr):
        return None
    dtype = x.dtype if isinstance(x, TensorV) else None
    if x is UNKNOWN or (isinstance(x, TensorV) and x.shape is None):
        return TensorV((fresh_var(), size), dtype)
    if isinstance(x, TensorV) and x.shape and x.shape[-1] is None:
        return TensorV((*x.shape[:-1], size), dtype)
    if isinstance(x, TensorV) and x.shape and isinstance(x.shape[-1], Var):
        if x.shape[-1].name.startswith("_"):  # no code named it: it ends in size
            return TensorV((*x.shape[:-1], fresh_var(), size), dtype)
    return None


def dim_source(node: ast.expr | None) -> tuple[ast.Name, int] | None:
    """The tensor variable and literal index behind `x.shape[i]` or `x.size(i)`."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
        and isinstance(node.value.value, ast.Name)
    ):
        i = int_literal(node.slice)
        return None if i is None else (node.value.value, i)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and isinstance(node.func.value, ast.Name)
        and len(node.args) == 1
        and not node.keywords
    ):
        i = int_literal(node.args[0])
        return None if i is None else (node.func.value, i)
    return None


def shape_slice_source(node: ast.expr | None) -> tuple[ast.Name, int] | None:
    """`x.shape[:k]` (k a positive literal): the tensor variable and k."""
    if not (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
        and isinstance(node.value.value, ast.Name)
        and isinstance(node.slice, ast.Slice)
        and node.slice.lower is None
        and node.slice.step is None
    ):
        return None
    k = int_literal(node.slice.upper) if node.slice.upper is not None else None
    return (node.value.value, k) if k is not None and k > 0 else None


def dim_at(x: Value, i: int, size: Expr) -> TensorV | None:
    """x's dim i is `size` (`n = x.shape[1]`). Of a tensor of unknown rank, a
    non-negative index fixes a prefix and a negative one a suffix (the rest stays
    a variadic); a dim of unknown size at a known position takes the name. None
    when that tells nothing new, or where i may fall inside a variadic."""
    if abs(i) > MAX_RANK:
        return None
    if i >= 0:
        return named_ends(x, [None] * i + [size], [])
    return named_ends(x, [], [size] + [None] * (-i - 1))


def named_ends(x: Value, head: list, tail: list) -> TensorV | None:
    """x starts with dims `head` and ends with `tail` (a name, or None for a dim
    the code does not name), with any number in between: `b, *_, d = x.shape`,
    `b, n = x.shape[:2]`. None when x says so already or cannot be matched."""
    if len(head) + len(tail) > MAX_RANK:
        return None
    dtype = x.dtype if isinstance(x, TensorV) else None
    if x is UNKNOWN or (isinstance(x, TensorV) and x.shape is None):
        return TensorV((*head, fresh_var(), *tail), dtype)
    if not isinstance(x, TensorV) or x.shape is None:
        return None
    shape = list(x.shape)
    at = [k for k, d in enumerate(shape) if isinstance(d, Var)]
    fixed_head = len(shape) if not at else at[0]
    fixed_tail = len(shape) if not at else len(shape) - at[-1] - 1
    if len(head) > fixed_head or len(tail) > fixed_tail:
        return None  # a named position may fall inside a variadic (or the op raises)
    if not at and len(head) + len(tail) > len(shape):
        return None  # Python raises
    for k, n in enumerate(head):
        if n is not None and shape[k] is None:
            shape[k] = n
    for k, n in enumerate(tail):
        j = len(shape) - len(tail) + k
        if n is not None and shape[j] is None:
            shape[j] = n
    new = tuple(shape)
    return TensorV(new, dtype) if new != x.shape else None


# The matrix products whose operands unify: True where the op is batched
# without broadcasting (bmm: both 3-d, equal batch).
MATMULS = {
    "operator.matmul": False,
    "torch.matmul": False,
    "torch.Tensor.matmul": False,
    "torch.bmm": True,
    "torch.Tensor.bmm": True,
}


def matmul_operands(qual: str, a: Value, b: Value) -> tuple[TensorV, TensorV] | None:
    """What a matrix product says of operands known in part: the inner dims are
    one (a's last, b's second to last, or b's only dim when b is 1-d), and bmm's
    operands are 3-d with one batch size. A broadcast batch dim tells nothing (it
    may be 1). None when nothing new is learnt; a conflict is the op's to report."""
    if MATMULS[qual]:
        sa, sb = _of_rank(a, 3), _of_rank(b, 3)
        if sa is None or sb is None:
            return None
        na = (_meet(sa[0], sb[0]), sa[1], _meet(sa[2], sb[1]))
        nb = (_meet(sb[0], sa[0]), _meet(sb[1], sa[2]), sb[2])
    else:
        sa, sb = _shape_of(a), _shape_of(b)
        if not sa or not sb or isinstance(sa[-1], Var):
            return None
        if len(sb) >= 2 and not isinstance(sb[-2], Var) and not isinstance(sb[-1], Var):
            ib = len(sb) - 2
        elif len(sb) == 1 and not isinstance(sb[0], Var):
            ib = 0
        else:
            return None  # b's rank is open: its inner dim may be its last or not
        na = (*sa[:-1], _meet(sa[-1], sb[ib]))
        nb = (*sb[:ib], _meet(sb[ib], sa[-1]), *sb[ib + 1 :])
    if nb == sb and (na == sa or na[-1] is None):
        return None
    return TensorV(na, dtype_of(a)), TensorV(nb, dtype_of(b))


def transposed_source(node: ast.expr | None) -> ast.Name | None:
    """The variable behind `k.transpose(-1, -2)` / `k.mT`: a tensor of at least
    two dims whose last two are swapped."""
    if isinstance(node, ast.Attribute) and node.attr == "mT" and isinstance(node.value, ast.Name):
        return node.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "transpose"
        and isinstance(node.func.value, ast.Name)
        and len(node.args) == 2
        and not node.keywords
        and {int_literal(node.args[0]), int_literal(node.args[1])} == {-1, -2}
    ):
        return node.func.value
    return None


def swap_last_two(t: Value) -> TensorV | None:
    """What `k` is when `k.transpose(-1, -2)` is t; None where t's last two dims
    are not two plain dims."""
    shape = t.shape if isinstance(t, TensorV) else None
    if shape is None or len(shape) < 2 or isinstance(shape[-1], Var) or isinstance(shape[-2], Var):
        return None
    return TensorV((*shape[:-2], shape[-1], shape[-2]), t.dtype)  # type: ignore[union-attr]


def at_least_matrix(x: Value) -> TensorV | None:
    """A tensor of unknown rank that an op needs to have two dims or more."""
    if x is UNKNOWN or (isinstance(x, TensorV) and x.shape is None):
        return TensorV((fresh_var(), None, None), dtype_of(x))
    return None


def _shape_of(x: Value) -> tuple | None:
    return x.shape if isinstance(x, TensorV) else None


def _of_rank(x: Value, n: int) -> tuple | None:
    if x is UNKNOWN or (isinstance(x, TensorV) and x.shape is None):
        return (None,) * n
    if (
        isinstance(x, TensorV)
        and len(x.shape) == n
        and not any(  # type: ignore[arg-type]
            isinstance(d, Var)
            for d in x.shape  # type: ignore[union-attr]
        )
    ):
        return x.shape
    return None


def _meet(own, other):
    """A dim of unknown size takes the other operand's; a known one stays (a
    conflict between two known sizes is the op's to report)."""
    return other if own is None else own


def _size(v: Value) -> Expr | None:
    return v.value if isinstance(v, IntV) and isinstance(v.value, Expr) else None


def _flag(layer: ObjectV, *names: str) -> bool:
    """Whether any of the layer's bool flags is surely True (torch checks the input's
    channels against a weight or a running statistic only where there is one)."""
    return any(isinstance(f := layer.attr(n), BoolV) and f.value is True for n in names)


# nn.ConvNd / ConvTransposeNd: the channels stand before the N spatial axes.
_CONV_AXES = {f"torch.nn.{kind}{n}d": n for kind in ("Conv", "ConvTranspose") for n in (1, 2, 3)}
_BATCH_NORMS = {f"torch.nn.BatchNorm{n}d" for n in (1, 2, 3)}
_INSTANCE_NORMS = {f"torch.nn.InstanceNorm{n}d": n for n in (1, 2, 3)}


def layer_input(layer: ObjectV, x: Value) -> TensorV | None:
    """What calling a torch layer tells about an input known in part: the axes its
    constructor sized, as torch checks them (a Linear's last axis is in_features, an
    nn.MultiheadAttention query's embed_dim, a LayerNorm's last axes its
    normalized_shape, a conv's channel axis in_channels, a norm's channel axis
    num_features where a weight or running statistic checks it). Learning, as for a pattern: the dims take the sizes the layer names. None
    when that tells nothing new."""
    kind = layer.kind
    if kind == "torch.nn.Linear":
        return ending_in(x, _size(layer.attr("in_features")))
    if kind == "torch.nn.MultiheadAttention":
        # its query's width, the last dim in every layout, is embed_dim: torch asserts it
        return ending_in(x, _size(layer.attr("embed_dim")))
    if kind in ("torch.nn.LayerNorm", "torch.nn.RMSNorm"):
        return ending_with(x, layer.attr("normalized_shape"))
    # a conv's or a norm's one channel axis, at the position layer_checks gives
    checks = layer_checks(layer)
    return dim_at(x, *checks[0]) if checks else None


def layer_checks(layer: ObjectV) -> list[tuple[int, Expr]]:
    """The axes of its input a torch layer checks against a size its constructor
    took (layer_input's), each as (position, size): a Linear's last axis, a
    LayerNorm's last ones, a conv's channels, a norm's channels where a weight or
    a running statistic checks them."""
    kind = layer.kind
    sizes: list[tuple[int, Expr | None]] = []
    if kind == "torch.nn.Linear":
        sizes = [(-1, _size(layer.attr("in_features")))]
    elif kind == "torch.nn.MultiheadAttention":
        sizes = [(-1, _size(layer.attr("embed_dim")))]
    elif kind in ("torch.nn.LayerNorm", "torch.nn.RMSNorm"):
        norm = layer.attr("normalized_shape")
        items = norm.items if isinstance(norm, TupleV) else (norm,)
        sizes = [(k - len(items), _size(i)) for k, i in enumerate(items)]
    elif kind in _CONV_AXES:
        sizes = [(-_CONV_AXES[kind] - 1, _size(layer.attr("in_channels")))]
    elif kind in _BATCH_NORMS and _flag(layer, "affine", "track_running_stats"):
        sizes = [(1, _size(layer.attr("num_features")))]
    elif kind in _INSTANCE_NORMS and _flag(layer, "affine", "track_running_stats"):
        sizes = [(-_INSTANCE_NORMS[kind] - 1, _size(layer.attr("num_features")))]
    elif kind == "torch.nn.GroupNorm" and _flag(layer, "affine"):
        sizes = [(1, _size(layer.attr("num_channels")))]
    return [(k, v) for k, v in sizes if v is not None]


# einops' layers, whose call runs the function of the same name on the pattern
# and lengths their constructor stored (EinMix's weights are its own op's).
_EINOPS_LAYERS = {
    "einops.layers.torch.Rearrange": "rearrange",
    "einops.layers.torch.Reduce": "reduce",
}


def einops_layer_run(layer: Value) -> tuple[str, str, dict[str, Value]] | None:
    """The function a Rearrange or Reduce layer's call runs, with the pattern and
    lengths its constructor stored: (op, pattern, lengths), None for any other
    value or one whose lengths are not known one by one."""
    op = _EINOPS_LAYERS.get(layer.kind) if isinstance(layer, ObjectV) else None
    if op is None:
        return None
    pattern = layer.attr("pattern")
    if not isinstance(pattern, StrV) or pattern.value is None:
        return None
    if any(k == "axes_lengths" for k, _ in layer.attrs):
        return None
    return op, pattern.value, {k[5:]: v for k, v in layer.attrs if k.startswith("axis:")}


def ending_with(x: Value, normalized_shape: Value) -> TensorV | None:
    """x ends in the sizes of a layer norm's normalized_shape (an int or a tuple
    of them); None when x says so already or a size is unknown."""
    items = normalized_shape.items if isinstance(normalized_shape, TupleV) else (normalized_shape,)
    sizes = [_size(i) for i in items]
    if not sizes or None in sizes or len(sizes) > MAX_RANK:
        return None
    return named_ends(x, [], sizes)


def taught_by_callee(learnt: Value, arg: Value, binding: dict[str, Expr]) -> TensorV | None:
    """What a callee that learnt the shape of its parameter where it always runs
    (`self.norm(x)` at the top of a forward) tells its caller about the argument:
    the call raises unless the argument has that shape. Sizes in the callee's names
    the call binds are the caller's; a dim in names it does not bind (a size the
    callee's own pattern named) is a dim of unknown size. None when that tells
    nothing new."""
    if not isinstance(learnt, TensorV) or learnt.shape is None or not is_open(arg):
        return None
    dims: list = []
    for d in learnt.shape:
        if isinstance(d, Expr):
            dims.append(d.substitute(binding) if d.names() <= binding.keys() else None)
        else:
            dims.append(d)
    at = [i for i, d in enumerate(dims) if isinstance(d, Var)]
    if all(d is None or isinstance(d, Var) for d in dims) or len(at) > 1:
        return None
    if at:
        return named_ends(arg, dims[: at[0]], dims[at[0] + 1 :])
    shape = arg.shape if isinstance(arg, TensorV) else None
    if shape is None:
        return TensorV(tuple(dims), dtype_of(arg))
    if len(shape) != len(dims) or any(isinstance(d, Var) for d in shape):
        return None
    new = tuple(w if d is None else d for d, w in zip(shape, dims, strict=True))
    return TensorV(new, dtype_of(arg)) if new != shape else None


def refutes_learnt(learnt: TensorV, arg: TensorV, binding: dict[str, Expr]) -> bool:
    """Whether an argument has a dim that the shape a callee learnt for its parameter
    (`[*, dim]` from `self.net(x)`, a Linear of dim inputs) puts at a size no positive
    sizes make equal to it, in the names this call binds (`2·latent_dim` where the
    instance's dim is latent_dim): the callee's summary holds only for arguments of
    that shape, so only a run of its body on this one says what the call does."""
    ds, as_ = learnt.shape, arg.shape
    if ds is None or as_ is None or any(isinstance(d, Var) for d in as_):
        return False
    at = [i for i, d in enumerate(ds) if isinstance(d, Var)]
    if len(at) > 1:
        return False
    if len(as_) < len(ds) - len(at) or (not at and len(as_) != len(ds)):
        return True  # a rank the learnt shape has no room for
    if at:
        tail = len(ds) - at[0] - 1
        pairs = list(zip(ds[: at[0]], as_)) + list(
            zip(ds[len(ds) - tail :], as_[len(as_) - tail :])
        )
    else:
        pairs = list(zip(ds, as_))
    for d, a in pairs:
        if not (isinstance(d, Expr) and isinstance(a, Expr)) or not d.names() <= binding.keys():
            continue
        d = d.substitute(binding)
        if d.definitely_differs(a) or d.never_equal(a) or d.constant_ratio(a) is not None:
            return True
    return False


# Layer constructors whose leading arguments are sizes: a variable of unknown
# value passed there is a size named after the variable (`nn.Linear(dim, inner)`).
SIZE_ARGUMENTS = {
    "torch.nn.Linear": ("in_features", "out_features"),
    "torch.nn.Embedding": ("num_embeddings", "embedding_dim"),
}


def size_argument_nodes(qual: str, node: ast.Call) -> list[tuple[int | str, ast.expr]]:
    """(position or keyword, node) of the size arguments of a layer constructor."""
    names = SIZE_ARGUMENTS.get(qual)
    if names is None:
        return []
    out: list[tuple[int | str, ast.expr]] = []
    for i, a in enumerate(node.args[: len(names)]):
        if isinstance(a, ast.Starred):
            return out
        out.append((i, a))
    out += [(k.arg, k.value) for k in node.keywords if k.arg in names]
    return out


def dim_names(v: Value) -> set[str]:
    """The size names in a tensor's shape."""
    if not isinstance(v, TensorV) or v.shape is None:
        return set()
    return {n for d in v.shape if isinstance(d, Expr) for n in d.names()}


_NAME_CONFLICT = re.compile(r"is '([^']+)' in one operand and '([^']+)' in another")


def binds_inferred(issue: OpIssue, inferred: set[str]) -> bool:
    """An op equating two dim names (SHP304) where a use, not an annotation, gave
    one of them: the names are one dimension, which is no error."""
    if issue.code != "SHP304":
        return False
    m = _NAME_CONFLICT.search(issue.message)
    return m is not None and bool({m.group(1), m.group(2)} & inferred)


def tensor_arg_nodes(qual: str, node: ast.Call) -> list[ast.expr | None]:
    """The source expression of each tensor an op was given, in the order the op
    numbers them (OpResult.refined's keys)."""
    args = list(node.args)
    if any(isinstance(a, ast.Starred) for a in args):
        return []
    if qual == "einops.einsum":
        return list(args[:-1])
    if qual in _LETTER_EINSUM:
        return list(args[1:])
    if qual in _EINOPS:
        if args:
            return [args[0]]
        return [next((k.value for k in node.keywords if k.arg == "tensor"), None)]
    return []


def einops_op(qual: str) -> str | None:
    return _EINOPS.get(qual)


def runs_unconditionally(body: list[ast.stmt], site: ast.AST) -> bool:
    """Whether `site` (a call, or an assignment's value) runs whenever the function
    does: in a simple statement at the top of its body, before the first compound
    statement that may return or raise, outside conditional expressions, lambdas
    and comprehensions."""
    line = getattr(site, "lineno", None)
    if line is None:
        return False
    for stmt in body:
        if stmt.lineno > line:
            return False
        if stmt.end_lineno is not None and stmt.end_lineno < line:
            if _is_compound(stmt) and any(
                isinstance(n, (ast.Return, ast.Raise)) for n in walk(stmt)
            ):
                return False  # what follows runs only when this did not leave
            if isinstance(stmt, (ast.Return, ast.Raise)):
                return False
            continue
        return not _is_compound(stmt) and _reached(stmt, site)
    return False


def _reached(node: ast.AST, site: ast.AST) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n is site:
            return True
        if isinstance(n, _CONDITIONAL):
            continue
        stack.extend(children(n))
    return False


def _is_compound(stmt: ast.stmt) -> bool:
    return isinstance(
        stmt,
        (
            ast.If,
            ast.For,
            ast.AsyncFor,
            ast.While,
            ast.With,
            ast.AsyncWith,
            ast.Try,
            ast.FunctionDef,
            ast.AsyncFunctionDef,
            ast.ClassDef,
        ),
    ) or type(stmt).__name__ in ("Match", "TryStar")


_CONDITIONAL = (
    ast.IfExp,
    ast.BoolOp,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
