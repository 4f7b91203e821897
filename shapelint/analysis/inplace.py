"""Writes into a tensor: what they change in the names that hold it.

An in-place method changes its tensor itself: after `x.unsqueeze_(0)` every name
bound to that tensor sees the new shape (a view made before is another tensor,
and keeps its own). A write into a tensor (`x.add_(y)`, `x[..., 0].copy_(y)`,
`x[i] = y`) makes its storage require grad when what is written does: autograd
then tracks x and every view of it. Where the storage written is not one the
analysis can name (the root of the write is no local name, or a view of a base
it lost), whether the tensors that did not require grad do now is not known.
"""

from __future__ import annotations

import ast
import dataclasses

from shapelint.analysis import modes, scalars, torch_source
from shapelint.notation.symbolic import Expr
from shapelint.ops import stub_ops, versions
from shapelint.ops.backward import GRAD_MODE, origins, requires
from shapelint.ops.saved import (
    RESHAPING_IN_PLACE,
    UNSURE,
    named_storage,
    storage_of,
    writes_in_place,
)
from shapelint.ops.values import (
    BoolV,
    BufferV,
    Cost,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    ParameterV,
    SliceV,
    TensorV,
    TupleV,
    Value,
)


def in_place(name: str) -> bool:
    """A tensor method that writes into its tensor (`add_`, `copy_`, `unsqueeze_`)."""
    short = name.rsplit(".", 1)[-1]
    return name.startswith("torch.Tensor.") and short.endswith("_") and not short.endswith("__")


def after_method(
    frame, node, name: str, args, result: Value, kwargs=None, path: str | None = None
) -> None:
    """After in-place method `name` ran on args[0] (the receiver, as node writes it);
    any op that wrote into a tensor (an `inplace=True`, `out=`) bumped its version
    (path: the file node is in)."""
    if versions.active():
        _bumps(node, name, args, kwargs or {}, result, path)
    if not (in_place(name) and args and isinstance(node, ast.Call)):
        return
    if not isinstance(node.func, ast.Attribute):
        return  # `torch.Tensor.add_(x, y)`: the receiver is an argument
    before = args[0]
    if not _activation(before):
        return
    if name == "torch.Tensor.detach_" and isinstance(result, TensorV):
        # detach_() makes the tensor itself a leaf that needs no grad: every name of
        # it holds the result (main kept y.detach_()'s y tracked: the layers before
        # it counted in a backward torch never runs)
        _rebind(frame, before, result)
        return
    reshaped = name.rsplit(".", 1)[-1] in RESHAPING_IN_PLACE
    if reshaped and isinstance(result, TensorV) and result.shape != before.shape:
        _rebind(frame, before, dataclasses.replace(result, storage=storage_of(before)))
    written(frame, node.func.value, before, requires(result), origins(result))


def _rebind(frame, before: Value, now: Value) -> None:
    """Every name of the frame that holds the tensor before (under any name) holds
    it as it is now."""
    for k, v in list(frame.env.items()):
        if v is before:
            frame.env[k] = now


# Methods named as in-place ones that write no element: they leave the version as it is.
_NO_WRITE = frozenset({"requires_grad_", "detach_", "share_memory_", "retain_grad_"})
# In place on the tensor's metadata alone, a no-op where the size is unchanged.
_MAYBE_WRITE = frozenset({"resize_", "resize_as_"})


def _bumps(node, name: str, args, kwargs: dict, result: Value, path: str | None) -> None:
    """The writes op `name` made, each checked against what was saved before it
    (ops/versions.py): into its first operand where it works in place (a method
    `add_`, `x += y`, `torch.relu_(x)`, a layer or function given `inplace=True`),
    into `out=`."""
    line = getattr(node, "lineno", None)
    short = name.rsplit(".", 1)[-1]
    own = origins(result)
    where = (path, line, name)
    first = next((a for a in args if isinstance(a, TensorV)), None)
    if writes_in_place(name) and short not in _NO_WRITE and args and isinstance(args[0], TensorV):
        target = None
        if isinstance(node, ast.AugAssign):
            target = node.target
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value if name.startswith("torch.Tensor.") else None
        bumped(where, target, args[0], own, short not in _MAYBE_WRITE)
    elif first is not None:
        flag = _inplace_flag(name, args, kwargs)
        if flag is not False:
            target = node.args[0] if isinstance(node, ast.Call) and node.args else None
            bumped(where, target, first, own, flag is True)
    out = kwargs.get("out")
    if isinstance(out, TensorV):
        target = next((k.value for k in getattr(node, "keywords", ()) if k.arg == "out"), None)
        bumped(where, target, out, own)


def _inplace_flag(name: str, args, kwargs: dict) -> bool | None:
    """Whether an op whose signature has an `inplace` argument (torch's in-place
    activations and dropout, functional or a layer's attribute) writes into its
    input: True, False, or None where not known. Dropout given `inplace=True`
    writes only in training and of a p other than 0: else ATen's `_dropout_impl`
    returns its input itself."""
    layer = args[0] if args and isinstance(args[0], ObjectV) else None
    if layer is not None and name.endswith(".__call__"):
        names = stub_ops.parameter_names(name.removesuffix(".__call__"))
        if names is None or "inplace" not in names:
            return False
        held = layer.attr("inplace")
        flag = held.value if isinstance(held, BoolV) else None
        training, p = modes.read(layer.attr(modes.ATTR)), layer.attr("p")
    else:
        names = stub_ops.parameter_names(name)
        if names is None or "inplace" not in names:
            return False
        given = _argument(names, "inplace", args, kwargs)
        if given is None:
            return False  # its default
        flag = given.value if isinstance(given, BoolV) else None
        training = _argument(names, "training", args, kwargs) or BoolV(True)  # F.dropout's
        p = _argument(names, "p", args, kwargs)
    if flag is False or "dropout" not in name.lower():
        return flag
    rate = scalars.number(p)
    if (isinstance(training, BoolV) and training.value is False) or rate == 0:
        return False
    if not (isinstance(training, BoolV) and training.value) or rate is None:
        return None
    return flag


def _argument(names: list[str], name: str, args, kwargs: dict) -> Value | None:
    """The value given for parameter `name` (None: not given)."""
    if name not in names:
        return None
    given = kwargs.get(name)
    i = names.index(name)
    return args[i] if given is None and i < len(args) else given


def leaf_written(node, name: str, args) -> bool:
    """Whether tensor method `name` surely writes in place into a Parameter that
    requires grad while grad mode is on: torch refuses it in the forward ("a leaf
    Variable that requires grad is being used in an in-place operation"). Not
    under `torch.no_grad()`, nor through `.data`."""
    short = name.rsplit(".", 1)[-1]
    if not name.startswith("torch.Tensor.") or not writes_in_place(name) or short in _NO_WRITE:
        return False
    if not args or not isinstance(args[0], ParameterV) or args[0].requires_grad is not True:
        return False
    if GRAD_MODE.get() is not True or args[0].storage is not None:
        return False  # a Parameter moved onto another tensor's storage is not followed here
    if isinstance(node, ast.AugAssign):
        target = node.target
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        target = node.func.value
    else:
        return False
    while isinstance(target, ast.Subscript):
        target = target.value
    return not (isinstance(target, ast.Attribute) and target.attr == "data")


def bumped(where: tuple, target, value: Value, own: frozenset | None, sure: bool = True) -> None:
    """A write into tensor `value` (which the expression `target` names, where
    the source writes one) at where (path, line, op): the version of its storage
    bumped (ops/versions.py). A write through `.data`, or a view of it, bumps none."""
    if not isinstance(value, TensorV) or not versions.active():
        return
    while isinstance(target, ast.Subscript):
        target = target.value
    if isinstance(target, ast.Attribute) and target.attr == "data":
        return
    if torch_source.holds(where[0]):
        # torch's own kernels as the source stubs write them never trip the check:
        # ATen's GRU cell writes into `unsafe_chunk` views, whose counters are their own
        return
    versions.written(named_storage(value), where, own, sure)


def written(
    frame, target: ast.expr, value: Value, grad: bool | None, made: frozenset | None
) -> None:
    """A write of something whose grad is `grad`, made by the Origins `made`
    (ops/backward.py), into tensor `value`, which `target` names (`x`, `x[..., 0]`,
    `self.buf[i]`): every name of that storage is made by them too."""
    if grad is False or not _activation(value):
        return
    root = target
    while isinstance(root, ast.Subscript):
        root = root.value
    held = frame.env.get(root.id) if isinstance(root, ast.Name) else None
    if isinstance(root, ast.Name) and _activation(held):
        token = storage_of(held)  # type: ignore[arg-type]
    elif root is target and value.storage is not UNSURE:  # type: ignore[union-attr]
        token = storage_of(value)  # type: ignore[arg-type]
    else:
        token = UNSURE
    _made_by(frame, token, made)
    if value.grad is True:  # type: ignore[union-attr]
        return
    new = True if grad else None
    if value.grad is None and new is None:  # type: ignore[union-attr]
        return
    for k, v in list(frame.env.items()):
        if not _activation(v) or v.grad is True:
            continue
        if token is UNSURE:
            if v.grad is False:
                frame.env[k] = dataclasses.replace(v, grad=None, storage=storage_of(v))
        elif storage_of(v) is token:
            frame.env[k] = dataclasses.replace(v, grad=new, storage=token)


def _made_by(frame, token, made: frozenset | None) -> None:
    """The tensors of storage token (every tensor, where it is UNSURE: none is
    known apart) made also by `made`: what the loss reaches through them."""
    for k, v in list(frame.env.items()):
        if not _activation(v) or (token is not UNSURE and storage_of(v) is not token):
            continue
        o = origins(v)
        both = None if o is None or made is None or token is UNSURE else o | made
        if both is not None:
            # a name that may hold another storage (a join's) reaches the write on
            # one path only: an undecided join, as far as what surely raises goes
            versions.either(o, made)
        if both != v.origin:
            frame.env[k] = dataclasses.replace(v, origin=both, storage=storage_of(v))


def _activation(v) -> bool:
    return isinstance(v, TensorV) and not isinstance(v, (ParameterV, BufferV))


def written_grad(value: Value) -> bool | None:
    """Whether what a write stores requires grad: a Python number never does."""
    return False if isinstance(value, (IntV, FloatV, BoolV)) else requires(value)


INDEX_PUT = (
    "saved for backward: a write through an index of tensors, lists or arrays runs "
    "index_put_, which keeps its index tensors: not modelled"
)


def index_put_cost(index: ast.expr, key: Value, target: Value, value: Value) -> Cost | None:
    """The cost of `target[index] = value` where torch runs it as index_put_ (an
    index that is not only ints, slices, None and `...`) under grad: no FLOPs
    forward or backward, and saved tensors not known (its index tensors). None
    for a view written by copy_ (basic indexing), which keeps nothing, or where
    neither side requires grad."""
    if requires(target) is False and written_grad(value) is False:
        return None
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    keys = key.items if isinstance(index, ast.Tuple) and isinstance(key, TupleV) else None
    if keys is not None and len(keys) != len(parts):
        keys = None
    for i, part in enumerate(parts):
        if isinstance(part, ast.Slice):
            continue
        if isinstance(part, ast.Constant) and (
            part.value is Ellipsis or part.value is None or type(part.value) is int
        ):
            continue
        k = key if not isinstance(index, ast.Tuple) else (keys[i] if keys else None)
        if isinstance(k, (IntV, NoneV, SliceV)):
            continue
        zero = Expr.const(0)
        return Cost(zero, zero, zero, [INDEX_PUT], backward=zero, saved=None)
    return None
