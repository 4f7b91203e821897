"""Python's builtins, in one table: the name a call resolves to (a builtin the
code does not shadow) -> the handlers that may know its result, tried in order.

`len` of a module list or dict, of a grown list (a SeqV), of a tuple or tensor;
`int`, `float`, `min`, `max` on sizes; `sum` of sizes, numbers or tensors; `dict`, `range`, `callable`,
`isinstance`, `list`/`tuple` and `map` (over a lambda, or a function known by
name); in a target run, `hasattr` of a library name the stubs describe. A builtin that costs nothing and is not in the table is UNKNOWN, not an
unknown call."""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from shapelint.analysis import (
    absence,
    aliasing,
    attribute_hooks,
    attribute_stores,
    callable_values,
    copies,
    decorators,
    dict_entries,
    dict_keys,
    dict_values,
    dynamic,
    enums,
    folding,
    frame_locals,
    index_iteration,
    iterators,
    joined_objects,
    lambdas,
    may_raise,
    module_kinds,
    module_state,
    modules,
    namespace,
    nodes,
    plain,
    plain_instances,
    pytypes,
    small_sets,
    torch_absence,
    torch_containers,
    unfollowed,
)
from shapelint.analysis import unknown_cost as uc
from shapelint.analysis.attributes import (
    all_methods,
    base_classes,
    derives_from,
    derives_from_object_alone,
    mro,
    plain_type,
    setattr_call,
)
from shapelint.analysis.callable_values import (
    BoundMethodV,
    ClassRefV,
    FunctionRefV,
    LayerClassV,
    PartialV,
    TensorMethodV,
)
from shapelint.analysis.defs import ClassDef
from shapelint.analysis.dict_values import dict_value, mapping
from shapelint.analysis.module_kinds import DICT_KINDS
from shapelint.analysis.module_loops import MAP_MAX, MAX_UNROLL
from shapelint.analysis.modules import ModuleListV, SelfRecorder, as_items
from shapelint.analysis.sequences import FramedV, SeqV, characters, hidden
from shapelint.notation.symbolic import Expr
from shapelint.ops import dtypes, stub_ops
from shapelint.ops.indexing import provably_nonnegative, size_at_least
from shapelint.ops.values import (
    DICT_KIND,
    UNKNOWN,
    BoolV,
    DeviceV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    ParameterV,
    SliceV,
    StrV,
    TensorV,
    TupleV,
    Value,
    Var,
    constant_value,
    python_constant,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

# handler(analyzer, call node, args, kwargs, frame) -> the value, or None: not known here
Handler = Callable[..., "Value | None"]


def call(an: Analyzer, name: str, node: ast.Call, args, kwargs, frame) -> Value | None:
    """The value of builtin `name` called so; None when the call stays unresolved."""
    for handler in BUILTINS.get(name, ()):
        v = handler(an, node, args, kwargs, frame)
        if v is not None:
            return v
    if name in _MAY_BE_HELD:
        held = _MAY_BE_HELD[name](args, kwargs)
        fresh = {id(v) for v, n in zip(args, node.args) if _fresh_display(n, v)}
        linked = joined_objects.either_among(v for v in held if id(v) not in fresh)
        if linked is not None:
            return linked
    if name in _BOOL_RESULT:
        return BoolV(None)
    return UNKNOWN if uc.free_builtin(name) else None


# Builtins that return a bool whenever they return (a plain value, never a module or
# tensor: x-transformers' `self.can_cache_kv = all([...])`, read by another module
# into `n == 0 and ... and self.attn_layers.can_cache_kv`, left its parameters `?`).
_BOOL_RESULT = frozenset({"any", "all", "bool", "callable", "isinstance", "issubclass", "hasattr"})


def _fresh_display(node: ast.expr, v: Value) -> bool:
    """A list, dict or set the call's own display made (`getattr(o, n, [])`), holding
    no object: no other name holds it, nor anything a change of it reaches."""
    displays = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
    return isinstance(node, displays) and not joined_objects.holds_object(v)


# Builtins whose result may be an object an argument is or holds, and what it may
# be: `max(a, b, key=len)` is a or b (of one iterable, an item of it), `vars(o)` o's
# namespace. Where the handler does not say which, the result is linked to each
# (joined_objects.EitherV): read, it is not known, and a change through it forgets
# them wherever they are held, as Python changed one of them. (`getattr(o, name)` of
# a name not known, one of o's attributes, is not linked: a config's attributes read
# so, `getattr(self, key)` over keys the analysis cannot list, would all be
# forgotten wherever the result is read into a name.)
_MAY_BE_HELD: dict[str, Callable[[list, dict], list]] = {
    "min": lambda args, kwargs: [*args, *kwargs.values()],
    "max": lambda args, kwargs: [*args, *kwargs.values()],
    "vars": lambda args, kwargs: args[:1],
}


def _iterated(an, node, v: Value, frame) -> Value:
    """What iterating v walks: the items its project `__getitem__` gives where it is
    walked so (index_iteration), else torch_containers.iterated's answer."""
    walked = index_iteration.items(an, v, node, frame)
    return walked if walked is not None else torch_containers.iterated(an, v)


def _len_method(an, node, args, kwargs, frame) -> Value | None:
    """`len(obj)`: what its class's `__len__` returns."""
    return index_iteration.length(an, args[0], node, frame) if len(args) == 1 else None


def _len_container(an, node, args, kwargs, frame) -> Value | None:
    """A module list (its count) or a dict (its keys)."""
    if len(args) != 1:
        return None
    v = torch_containers.iterated(an, args[0])
    if isinstance(v, ModuleListV):
        if v.count is not None:
            return IntV(v.count)
        return IntV(Expr.const(len(v.items))) if v.known else IntV(None)
    if isinstance(v, ObjectV) and v.kind in DICT_KINDS:
        return IntV(Expr.const(len(v.attrs)))
    entries = dict_entries.mapping_entries(an, v)
    if entries is not None:  # dict.__len__ of a dict subclass's instance
        return IntV(Expr.const(len(entries.attrs)))
    n = small_sets.size(v)
    return None if n is None else IntV(Expr.const(n))


def _len_sized(an, node, args, kwargs, frame) -> Value | None:
    """A grown list's count; a tuple's items; a known string's characters; a
    tensor's first dimension."""
    if len(args) != 1:
        return None
    a = args[0]
    if isinstance(a, StrV) and a.value is not None:
        return IntV(Expr.const(len(a.value)))
    if isinstance(a, SeqV):
        return IntV(a.count)
    if isinstance(a, FramedV):
        return IntV(a.count + Expr.const(len(a.head) + len(a.tail)))
    if isinstance(a, TupleV):
        return IntV(Expr.const(len(a.items)))
    if isinstance(a, TensorV) and a.shape and not isinstance(a.shape[0], Var):
        return IntV(a.shape[0])
    return IntV(None)


def _plain_dict(v: Value) -> bool:
    return type(v) is ObjectV and v.kind == DICT_KIND


def _sequence(an, node, args, kwargs, frame) -> Value | None:
    """`list(xs)` / `tuple(xs)` of a list the analysis holds: the same list; of a
    dict, its keys; of a module list (`list(zip(self.layers, args))`), its items, a plain list's;
    `tuple()` / `list()` with no argument, an empty one."""
    kind = node.func.id if isinstance(node.func, ast.Name) else None
    if not args and not kwargs and kind in _SEQUENCES:
        return TupleV((), kind)
    if len(args) == 1 and not kwargs:
        walked = index_iteration.items(an, args[0], node, frame)
        args = args if walked is None else [walked]
    if len(args) == 1 and isinstance(args[0], TupleV):
        return TupleV(args[0].items, kind if kind in _SEQUENCES else None)
    if len(args) == 1 and isinstance(args[0], SeqV):
        return args[0]
    walked = small_sets.iterated(args[0]) if len(args) == 1 and not kwargs else None
    if walked is not None and kind in _SEQUENCES:
        return TupleV(walked.items, kind)
    chars = characters(args[0]) if len(args) == 1 and not kwargs else None
    if isinstance(chars, TupleV) and kind in _SEQUENCES:
        return TupleV(chars.items, kind)  # a str's characters
    if len(args) == 1 and not kwargs and _plain_dict(args[0]) and kind in _SEQUENCES:
        # iterating a dict yields its keys, in insertion order
        return TupleV(dict_keys.keys(args[0]), kind)
    v = torch_containers.iterated(an, args[0]) if len(args) == 1 else None
    if isinstance(v, ModuleListV):
        return ModuleListV(v.items, False, v.count, v.known)
    if len(args) == 1 and isinstance(args[0], TensorV) and not kwargs:
        # iterating a tensor yields its slices along dim 0, as unbind() does
        items = an.op_value("torch.Tensor.unbind", [args[0]], {}, node, frame, arg_nodes=[node])
        return items if isinstance(items, TupleV) else None
    return None


# torch.nn.modules.utils' `_ntuple` helpers (`_pair(k)`, which conv layers and the
# code that builds them call on a size): an iterable as a tuple, anything else n times.
_NTUPLE = {"_single": 1, "_pair": 2, "_triple": 3, "_quadruple": 4}


def ntuple(qual: str, args, kwargs) -> Value | None:
    """`_pair(x)` and its siblings as torch defines them; None for any other call, or
    an argument whose iterability is not known here."""
    module, _, name = qual.rpartition(".")
    n = _NTUPLE.get(name)
    if n is None or not module.startswith("torch.nn.modules") or len(args) != 1 or kwargs:
        return None
    x = args[0]
    if isinstance(x, TupleV):
        return TupleV(x.items, "tuple")
    if isinstance(x, (IntV, FloatV, BoolV, NoneV)):
        return TupleV((x,) * n, "tuple")
    return None


def torch_size(qual: str, args, kwargs) -> Value | None:
    """`torch.Size()` / `torch.Size(seq)`: a tuple of the sizes (torch.Size subclasses
    tuple), as a default `batch_shape=torch.Size()` is unpacked into a shape. None
    where an item is not known to be an int (torch raises for a float)."""
    if qual != "torch.Size" or kwargs or len(args) > 1:
        return None
    if not args:
        return TupleV((), "tuple")
    x = hidden(args[0])
    if isinstance(x, TupleV) and all(type(i) is IntV for i in x.items):
        return TupleV(x.items, "tuple")
    return None


def torch_device(qual: str) -> Value | None:
    """`torch.device(...)`: a device, which `x.to(d)` moves x to keeping its dtype."""
    return DeviceV() if qual == "torch.device" else None


# The fields of torch's dtype descriptions: numbers (what each is, not which one:
# `x + torch.finfo(x.dtype).tiny` adds a float, no tensor) and the dtype's name.
_INFO_FIELDS = {
    "torch.finfo": {
        "bits": IntV,
        **dict.fromkeys(("eps", "max", "min", "tiny", "smallest_normal", "resolution"), FloatV),
    },
    "torch.iinfo": dict.fromkeys(("bits", "max", "min"), IntV),
}


def torch_info(qual: str) -> Value | None:
    """`torch.finfo(d)`, `torch.iinfo(d)`: an object whose fields are numbers."""
    fields = _INFO_FIELDS.get(qual)
    if fields is None:
        return None
    return ObjectV(qual, (*((k, t(None)) for k, t in fields.items()), ("dtype", StrV(None))))


def _int(an, node, args, kwargs, frame) -> Value | None:
    if len(args) != 1:
        return None
    a = args[0]
    if isinstance(a, FloatV):
        v = a.value
        ok = v is not None and v == v and abs(v) < 2**62
        return IntV(Expr.const(int(v))) if ok else IntV(None)  # type: ignore[arg-type]
    if isinstance(a, StrV) and a.value is not None:
        try:  # `int("2")`, as Python parses it
            return IntV(Expr.const(int(a.value)))
        except ValueError:
            return None  # Python raises
    if isinstance(a, BoolV):  # bool is a subclass of int: `int(False)` is 0
        return IntV(None) if a.value is None else IntV(Expr.const(int(a.value)))
    a = hidden(a)
    return a if isinstance(a, IntV) else IntV(None)


def _slice(an, node, args, kwargs, frame) -> Value | None:
    """`slice(stop)`, `slice(start, stop[, step])`: the value `start:stop:step` has
    (an absent or None bound is absent)."""
    if kwargs or not 1 <= len(args) <= 3:
        return None  # Python raises
    bounds = [None, args[0], None] if len(args) == 1 else [*args, None][:3]
    return SliceV(*(None if b is None or isinstance(b, NoneV) else b for b in bounds))


def _float(an, node, args, kwargs, frame) -> Value | None:
    """`float(x)` of a known number, bool or numeric string: Python's value (an int
    too large for a float raises, as Python does)."""
    if len(args) != 1 or kwargs:
        return None
    a = args[0]
    if isinstance(a, StrV) and a.value is not None:
        try:  # `float("1e-5")`, as Python parses it
            return FloatV(float(a.value))
        except ValueError:
            return None  # Python raises
    n = _number(hidden(a) if not isinstance(a, (FloatV, BoolV)) else a)
    if n is None:
        return FloatV(None)
    try:
        return FloatV(float(n))
    except OverflowError:
        return None  # Python raises


def _number(v: Value) -> int | float | None:
    if isinstance(v, FloatV):
        return v.value
    if isinstance(v, BoolV):
        return None if v.value is None else int(v.value)
    if isinstance(v, IntV) and v.value is not None:
        return v.value.value
    return None


def _extreme(pick: Callable[..., int]) -> Handler:
    """`min(...)` / `max(...)` of ints: of numbers, the number; of sizes, the one
    provably on the picked side of every other (`min(t, block_size)` is t once
    `t <= block_size` is asserted), else an unknown int."""

    def handler(an, node, args, kwargs, frame) -> Value | None:
        if not kwargs and len(args) > 1 and any(isinstance(a, FloatV) for a in args):
            # of known numbers, one a float: the one Python picks, of its own type
            numbers = [_number(a) for a in args]
            if None in numbers:
                return None
            picked = pick(range(len(numbers)), key=numbers.__getitem__)
            return args[picked]
        if pick is max and not kwargs and len(args) > 1:
            bounded = at_least_all(args)
            if bounded is not None:
                return bounded
        if kwargs or not args or not all(isinstance(a, IntV) and a.value is not None for a in args):
            return None
        values = [a.value for a in args]
        if all(v.value is not None for v in values):
            return IntV(Expr.const(pick(v.value for v in values)))
        if len(args) == 1:
            return None  # min(iterable)
        sign = 1 if pick is min else -1
        for v in values:  # v <= every other (for max, >=)
            if all(provably_nonnegative((w - v) * sign) for w in values):
                return IntV(v)
        return IntV(None)

    return handler


def at_least_all(args: list[Value]) -> IntV | None:
    """`max(u, n)` of ints some of which are not known (an int, or a 0-d integer
    tensor: `max(idx.max() + 1, n)`, whose comparisons count no FLOPs): a size no
    code names, at least each known one (indexing.size_at_least), so that
    `t[..., :n]` of an axis that long is n long. None where any is neither an int nor
    such a tensor, or no known one is surely at least 1."""
    known: list[Expr] = []
    for a in args:
        if isinstance(a, IntV):
            if a.value is not None:
                known.append(a.value)
        elif not (
            isinstance(a, TensorV)
            and a.shape == ()
            and a.dtype is not None
            and dtypes.category(a.dtype) == 1  # an integer dtype (0 bool, 2 float)
        ):
            return None
    size = size_at_least(known) if len(known) < len(args) else None
    return None if size is None else IntV(size)


def _dict(an, node, args, kwargs, frame) -> Value | None:
    if node.args and len(args) != 1:
        return None
    if not _kwargs_spelt(an, node, kwargs, frame):
        return None
    base = mapping(args[0]) if args else None
    if args and base is None:
        return None
    return dict_value({**(dict(base.attrs) if base else {}), **kwargs})


def _kwargs_spelt(an, node, kwargs, frame) -> bool:
    """Whether kwargs holds the call's keywords one by one: each `**m` a name of a
    dict known entry by entry (read again: a name has no side effect), and no key
    given twice (Python raises a TypeError then)."""
    named = [kw.arg for kw in node.keywords if kw.arg is not None]
    count = len(named)
    for kw in node.keywords:
        if kw.arg is None:
            if not isinstance(kw.value, ast.Name):
                return False
            known = dict_values.expand_kwargs(an.eval(kw.value, frame))
            if known is None:
                return False
            count += len(known)
    return count == len(kwargs)


def _zip(an, node, args, kwargs, frame) -> Value | None:
    if set(kwargs) - {"strict"}:
        return None
    args = [_slices(an, node, _iterated(an, node, a, frame), frame) for a in args]
    strict = truth(kwargs["strict"]) if "strict" in kwargs else False
    if strict is None:
        return None
    if strict:
        # zip(..., strict=True) raises where the lengths differ: it is zip's
        # pairs only where every length is known and they agree
        items = [modules.as_items(a) for a in args]
        if any(i is None for i in items) or len({len(i) for i in items}) > 1:  # type: ignore[arg-type]
            return None
    return iterators.zipped(args)


def _slices(an, node, v: Value, frame) -> Value:
    """A tensor iterated (`zip(slots, self.experts)`): its slices along dim 0, as
    unbind() gives them, where that dim is a known number; else v."""
    if not isinstance(v, TensorV) or not v.shape or not isinstance(v.shape[0], Expr):
        return v  # a rank not known, a leading run, or a dim not known
    if v.shape[0].value is None:
        return v
    items = an.op_value("torch.Tensor.unbind", [v], {}, node, frame, arg_nodes=[node])
    return items if isinstance(items, TupleV) else v


COMBINATIONS = "itertools.combinations"


def combinations_of(an, node, args, kwargs, frame) -> Value | None:
    """`itertools.combinations(xs, r)` of a list known item by item (a tensor: its
    slices along dim 0, as iterating it gives them): the r-tuples of its items in the
    order of their positions, as Python yields them (none where r > len(xs)), iterated
    as zip's result is. None where xs or r is not known, or past MAX_UNROLL tuples."""
    if len(args) + len(kwargs) != 2 or set(kwargs) - {"r"} or not args:
        return None
    r = args[1] if len(args) > 1 else kwargs["r"]
    k = r.value.value if isinstance(r, IntV) and r.value is not None else None
    seq = _slices(an, node, _iterated(an, node, args[0], frame), frame)
    if isinstance(seq, ModuleListV) and seq.known and seq.count is None:
        items = seq.items
    elif isinstance(seq, TupleV):
        items = seq.items
    else:
        return None
    if k is None or k < 0 or math.comb(len(items), k) > MAX_UNROLL:
        return None
    picks = itertools.combinations(range(len(items)), k)
    return TupleV(tuple(TupleV(tuple(items[i] for i in c), "tuple") for c in picks))


def _enumerate(an, node, args, kwargs, frame) -> Value | None:
    if not 1 <= len(args) + len(kwargs) <= 2 or set(kwargs) - {"start"}:
        return None
    start = args[1] if len(args) > 1 else kwargs.get("start", IntV(Expr.const(0)))
    return iterators.enumerated(_iterated(an, node, args[0], frame), start) if args else None


def _reversed(an, node, args, kwargs, frame) -> Value | None:
    if len(args) != 1 or kwargs:
        return None
    return iterators.reversed_of(torch_containers.iterated(an, args[0]))


def _range(an, node, args, kwargs, frame) -> Value | None:
    return _range_items(args) if 1 <= len(args) <= 3 and not kwargs else None


def _callable_of(an, node, args, kwargs, frame) -> Value | None:
    return _callable(args[0]) if len(args) == 1 else None


def _hasattr(an, node, args, kwargs, frame) -> Value | None:
    """`hasattr(torch.nn.functional, "scaled_dot_product_attention")` in a target
    run: a library name the stubs describe exists in the torch they describe. On a
    dataclass instance built here: True for what it holds, False for what it surely
    lacks (absence.py)."""
    if len(node.args) != 2 or kwargs:
        return None  # Python refuses it
    if not an.specialize or not isinstance(args[1], StrV):
        return BoolV(None)  # a bool whatever it finds: `hasattr(...) and False` is false
    config = isinstance(args[0], ObjectV) or absence.config_being_built(an, args[0]) is not None
    if config and args[1].value:
        if (
            isinstance(args[0], ObjectV)
            and args[0].kind.startswith(absence.CONFIG_PREFIX)
            and any(k == args[1].value for k, _ in args[0].attrs)
        ):
            return BoolV(True)
        if absence.surely_lacks(an, args[0], args[1].value):
            return BoolV(False)
        if attribute_hooks.hooked(an, args[0]):  # what its __getattribute__ finds
            with may_raise.apart():
                start = may_raise.count()
                found = attribute_of(an, node, args[0], args[1].value, frame)
                steps = may_raise.count() != start
            if attribute_hooks.absent(args[0], args[1].value):
                # the hook surely raised AttributeError (taken as a `try` takes a sure
                # raise), which hasattr catches: the call returns False
                return BoolV(False)
            if steps:
                may_raise.mark()
            if found is not UNKNOWN:
                return BoolV(True)
    if args[1].value and torch_absence.lacks(an, args[0], args[1].value):
        return BoolV(False)
    if args[1].value and torch_absence.holds(an, args[0], args[1].value):
        return BoolV(True)
    if not isinstance(node.args[0], (ast.Name, ast.Attribute)) or not args[1].value:
        return BoolV(None)
    owner = (frame.func.owner if frame.func is not None else None) or an
    qual = owner.imports.resolve(node.args[0])
    if qual is not None and stub_ops.describes(f"{qual}.{args[1].value}"):
        return BoolV(True)
    return BoolV(None)  # a bool whatever it finds: `hasattr(...) and False` is false


def _isinstance_of(an, node, args, kwargs, frame) -> Value | None:
    if len(args) == 2 and len(node.args) == 2:
        return _isinstance(an, args[0], node.args[1], frame)
    return None


def _issubclass_of(an, node, args, kwargs, frame) -> Value | None:
    """`issubclass(C, D)` / `issubclass(C, (D, E))` of project classes, along
    C's bases as Python's MRO walks them (all of them, not only the first), and of
    torch's layer classes (`issubclass(conv_op, nn.Conv2d)`)."""
    if len(args) != 2 or kwargs:
        return None
    targets = args[1].items if isinstance(args[1], TupleV) else (args[1],)
    if pytypes.tensor_class(args[0]) is not None:
        verdicts = [pytypes.torch_subclass(args[0], t) for t in targets]
        if any(verdicts):
            return BoolV(True)
        return BoolV(None) if None in verdicts or not targets else BoolV(False)
    if isinstance(args[0], LayerClassV):
        verdicts = [_torch_subclass(args[0], t) for t in targets]
        if any(verdicts):
            return BoolV(True)
        return BoolV(None) if None in verdicts or not targets else BoolV(False)
    if not isinstance(args[0], ClassRefV):
        return None
    cd = an.class_of(args[0].name)
    if cd is None or not targets:
        return None
    verdicts = []
    for t in targets:
        other = an.class_of(t.name) if isinstance(t, ClassRefV) else None
        verdicts.append(derives_from(an, cd, other) if other is not None else None)
    if any(verdicts):
        return BoolV(True)
    return BoolV(None) if None in verdicts else BoolV(False)


def _torch_subclass(sub: LayerClassV, target: Value) -> bool | None:
    """`issubclass(sub, target)` of a torch.nn layer class: True of its own class
    (under any path torch exports it by); False of a project class (torch derives
    from none) and of another public layer no public layer derives from (as
    `instance_of` decides an instance of one); else not known."""
    if pytypes.is_class(sub) is not True:
        return None  # a torch function: issubclass raises
    if isinstance(target, ClassRefV):
        return False
    if not isinstance(target, LayerClassV) or pytypes.is_class(target) is not True:
        return None
    mine, cls = sub.qual.rsplit(".", 1)[-1], target.qual.rsplit(".", 1)[-1]
    if not (sub.qual.startswith("torch.nn.") and target.qual.startswith("torch.nn.")):
        return None
    if mine == cls:
        return True
    unsure = (
        cls.startswith("_")
        or cls in TORCH_PUBLIC_BASES
        or mine.startswith(("Lazy", "NonDynamically"))
    )
    return None if unsure else False


def _map(an, node, args, kwargs, frame) -> Value | None:
    # `map(lambda conv: conv(x), self.convs)` walks the module list as a for does
    args = [args[0], *(_walked(_iterated(an, node, a, frame)) for a in args[1:])] if args else args
    if len(args) >= 2 and not kwargs:
        mapped = map_named(an, node, args, frame)
        return mapped if mapped is not None else lambdas.map_call(an, node, args, frame)
    if len(node.args) == 2 and isinstance(node.args[0], ast.Lambda):
        return _map_lambda(an, node, args[1], frame)
    return None


def _filter(an, node, args, kwargs, frame) -> Value | None:
    """`filter(f, xs)` / `filter(None, xs)` over a sequence known item by item:
    the items whose `f(item)` (or whose own truth) Python surely finds true, each
    call of f run as `map` runs it. None where one truth is not known."""
    if len(args) != 2 or kwargs:
        return None
    items = as_items(_walked(_iterated(an, node, args[1], frame)))
    if items is None or len(items) > MAX_UNROLL:
        return None
    if isinstance(args[0], NoneV):
        tests: tuple[Value, ...] | None = items
    else:
        # every item's test, however many (a list of kept items is only known so)
        seq = [args[0], TupleV(items)]
        mapped = map_named(an, node, seq, frame, MAX_UNROLL)
        if mapped is None:
            mapped = lambdas.map_call(an, node, seq, frame, MAX_UNROLL)
        tests = (
            mapped.items if isinstance(mapped, TupleV) and len(mapped.items) == len(items) else None
        )
    # an item's own truth may be an object's (a module: true unless its class says
    # otherwise), which only the analyzer's view of its class decides
    truths = [folding.truth(v, an) for v in tests] if tests is not None else [None]
    if None in truths:
        return None
    return TupleV(tuple(v for v, keep in zip(items, truths, strict=True) if keep))


def _iter(an, node, args, kwargs, frame) -> Value | None:
    """`iter(xs)` of a list known item by item (an iterator of one: itself)."""
    if len(args) != 1 or kwargs:
        return None
    if isinstance(args[0], iterators.IteratorV):
        return args[0]
    items = as_items(_walked(_iterated(an, node, args[0], frame)))
    return iterators.IteratorV(items) if items is not None else None


def _next(an, node, args, kwargs, frame) -> Value | None:
    if not 1 <= len(args) <= 2 or kwargs:
        return None
    first, it = node.args[0], args[0]
    default = args[1] if len(args) == 2 else None
    if _parameters_generator(first, it):
        # `next(self.parameters())`: nn.Module.parameters() makes a new generator at
        # each call, whose first item is the first Parameter in registration order
        return it.items[0] if it.items else default  # type: ignore[attr-defined]
    if not isinstance(it, iterators.IteratorV):
        return None
    fresh = (
        isinstance(first, ast.Call)
        and isinstance(first.func, ast.Name)
        and first.func.id == "iter"
        and an.is_builtin("iter", frame)
    )
    in_place = (
        isinstance(first, ast.Name)
        and frame.func is not None
        and frame.env.get(first.id) is it
        and iterators.consumed_in_place(frame.func.node, first.id)
    )
    value = iterators.next_of(it, default, fresh or in_place)
    if in_place:
        # the name now holds what is left (used up: StopIteration, or the default)
        frame.env[first.id] = iterators.IteratorV(it.items[1:]) if value is not None else UNKNOWN
    return value


def _parameters_generator(node: ast.expr, v: Value) -> bool:
    """node, `m.parameters()` with no argument, is nn.Module's: the list of m's
    Parameters that call_resolution makes of it (a project method of that name is
    run instead, and a list it returned would make `next` raise)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "parameters"
        and not node.args
        and not node.keywords
        and isinstance(v, TupleV)
        and v.kind == "list"
        and all(isinstance(i, ParameterV) for i in v.items)
    )


def _walked(v: Value) -> Value:
    """A module list as the sequence iterating it walks: its items, or count copies."""
    if not isinstance(v, ModuleListV) or not v.known:
        return v
    if v.count is not None:
        return SeqV(v.items[0], v.count) if v.items else v
    return TupleV(v.items)


def _known(v: Value) -> int | float | bool | None:
    """A number the analysis knows exactly (an int, a float, a bool), else None."""
    if isinstance(v, IntV) and v.value is not None:
        return v.value.value
    if isinstance(v, (FloatV, BoolV)):
        return v.value
    return None


def _number_value(x: int | float | bool) -> Value:
    if isinstance(x, bool):
        return BoolV(x)
    return IntV(Expr.const(x)) if isinstance(x, int) else FloatV(x)


def truth(v: Value) -> bool | None:
    """Python's truth of a value, where the analysis knows it."""
    if isinstance(v, NoneV):
        return False
    if isinstance(v, StrV):
        return None if v.value is None else bool(v.value)
    if isinstance(v, TupleV):
        return bool(v.items)
    known = _known(v)
    return None if known is None else bool(known)


def _any_all(want: bool) -> Handler:
    """`any(...)` (want True) / `all(...)` (want False) of an iterable known item by
    item: one item of that truth decides, whatever the others are."""

    def handler(an, node, args, kwargs, frame) -> Value | None:
        items = as_items(args[0]) if len(args) == 1 and not kwargs else None
        if items is None:
            return None
        truths = [truth(v) for v in items]
        if want in truths:  # any: one true item; all: one false item
            return BoolV(want)
        return BoolV(None) if None in truths else BoolV(not want)

    return handler


def _sum(an, node, args, kwargs, frame) -> Value | None:
    """`sum(xs, start)` of ints, symbolic ones too (`sum(depths)`), of numbers, or
    of lists (`sum(rows, [])`)."""
    items = as_items(args[0]) if args and len(args) <= 2 else None
    if items is None or kwargs.keys() - {"start"}:
        return None
    start = args[1] if len(args) > 1 else kwargs.get("start", IntV(Expr.const(0)))
    terms = [start, *items]
    if all(isinstance(t, IntV) for t in terms):
        total = Expr.const(0)
        for t in terms:
            if t.value is None:  # type: ignore[union-attr]
                return IntV(None)
            total = total + t.value  # type: ignore[union-attr]
        return IntV(total)
    if all(isinstance(t, TupleV) for t in terms):
        # `sum(rows, [])`: the lists joined, as `+` joins them; a list with a tuple,
        # or a value that may be either, is Python's TypeError or not known
        kinds = {t.kind for t in terms}  # type: ignore[union-attr]
        if len(kinds) != 1 or None in kinds:
            return None
        joined = tuple(i for t in terms for i in t.items)  # type: ignore[union-attr]
        return TupleV(joined, kinds.pop())
    vals = [_known(t) for t in terms]
    if all(v is not None for v in vals) and any(isinstance(t, FloatV) for t in terms):
        return FloatV(float(sum(vals)))  # type: ignore[arg-type]
    if any(isinstance(t, TensorV) for t in terms) and all(
        isinstance(t, (TensorV, IntV, FloatV)) for t in terms
    ):
        # `sum([fn(x) for fn in self.fns])`: start + t1 + t2 + ..., each `+` as torch
        # broadcasts it (and refuses it).
        total = terms[0]
        for t in terms[1:]:
            total = an.op_value("operator.add", [total, t], {}, node, frame, arg_nodes=[node, node])
        return total
    return None


def _numeric(fn: Callable, arity: tuple[int, ...]) -> Handler:
    """A builtin of known numbers (`abs`, `round`, `divmod`, `pow`): its value,
    computed as Python computes it; unknown numbers give an unknown of the type
    Python would return where that type is certain."""

    def handler(an, node, args, kwargs, frame) -> Value | None:
        if len(args) not in arity or kwargs:
            return None
        vals = [_known(a) for a in args]
        if any(v is None for v in vals):
            return None
        try:
            out = fn(*vals)
        except (ArithmeticError, ValueError, TypeError):  # Python's own refusal
            return None
        if isinstance(out, tuple):
            return TupleV(tuple(_number_value(x) for x in out))
        return _number_value(out)

    return handler


def _operator_of_tensor(qual: str, arity: int) -> Handler:
    """`abs(t)` and `pow(t, e)` of a tensor: Python calls the operand's `__abs__` /
    `__pow__` (or `e.__rpow__`), so the op is the operator's (`abs(a - b)` as
    `operator.abs`, `pow(t, 2)` as `t ** 2`)."""

    def handler(an, node, args, kwargs, frame) -> Value | None:
        if len(args) != arity or kwargs or not any(isinstance(a, TensorV) for a in args):
            return None
        return an.op_value(qual, list(args), {}, node, frame)

    return handler


def _bool(an, node, args, kwargs, frame) -> Value | None:
    """`bool(x)`: the truth `if x` tests (an object whose class defines neither
    `__bool__` nor `__len__`, a torch layer among them, is true)."""
    if len(args) != 1 or kwargs:
        return None
    return BoolV(folding.truth(args[0], an))


def _str(an, node, args, kwargs, frame) -> Value | None:
    """`str(x)` of a number, bool, None or string known exactly: Python's text of
    it (`'conv' + str(i)` as a layer's key); `str()` is the empty string."""
    if kwargs or len(args) > 1:
        return None
    if not args:
        return StrV("")
    if isinstance(args[0], TupleV):
        return None  # a list and a tuple print differently
    text = pytypes.class_text(an, args[0])
    if text is not None:
        return StrV(text)
    ok, v = python_constant(args[0])
    return StrV(str(v)) if ok else None


def _type(an, node, args, kwargs, frame) -> Value | None:
    """`type(x)` of one argument in a target run: its class, where pytypes knows it."""
    if kwargs or len(args) != 1 or not an.specialize:
        return None
    return pytypes.type_of(an, args[0])


def _repr(an, node, args, kwargs, frame) -> Value | None:
    """`repr(cls)` of a class: what str prints (type defines no `__str__`)."""
    if kwargs or len(args) != 1:
        return None
    text = pytypes.class_text(an, args[0])
    return StrV(text) if text is not None else None


# Methods of str that answer from the string alone.
STR_METHODS = {
    "lower": str.lower,
    "upper": str.upper,
    "casefold": str.casefold,
    "strip": str.strip,
    "lstrip": str.lstrip,
    "rstrip": str.rstrip,
    "startswith": str.startswith,
    "endswith": str.endswith,
    "replace": str.replace,
    "isdigit": str.isdigit,
    "isdecimal": str.isdecimal,
    "isnumeric": str.isnumeric,
    "isalpha": str.isalpha,
    "isalnum": str.isalnum,
    "isspace": str.isspace,
    "islower": str.islower,
    "isupper": str.isupper,
    "isidentifier": str.isidentifier,  # a key `setattr` can store as an attribute
    "split": str.split,  # a list, as a tuple of strings: the analysis's list value
    "rsplit": str.rsplit,
    "partition": str.partition,
    "rpartition": str.rpartition,
}


def str_method(recv: StrV, name: str, args, kwargs) -> Value | None:
    """`padding.lower()`, `name.startswith("conv")`: the method of a known string
    with known string arguments; None when that is not the case."""
    if name == "format" and recv.value is not None:
        return _formatted(recv.value, args, kwargs)
    if name == "join" and recv.value is not None and len(args) == 1 and not kwargs:
        return _joined(recv.value, args[0])
    fn = STR_METHODS.get(name)
    if fn is None or recv.value is None or kwargs:
        return None
    vals = []
    for a in args:
        if isinstance(a, StrV) and a.value is not None:
            vals.append(a.value)
        elif isinstance(a, TupleV) and all(isinstance(i, StrV) and i.value for i in a.items):
            vals.append(tuple(i.value for i in a.items))  # type: ignore[union-attr]
        elif isinstance(a, IntV) and a.value is not None and a.value.value is not None:
            vals.append(a.value.value)  # `split(".", 1)`
        else:
            return None
    try:
        out = fn(recv.value, *vals)
    except (TypeError, ValueError):
        return None
    if isinstance(out, (list, tuple)):
        return TupleV(tuple(StrV(x) for x in out))
    return BoolV(out) if isinstance(out, bool) else StrV(out)


def _joined(sep: str, items: Value) -> Value | None:
    """`sep.join(xs)` of a list or tuple of known strings, or of a dict's keys (what
    iterating it walks, in insertion order); None where an item is not a known
    string (Python's TypeError for a non-string: no text to hand on)."""
    if type(items) is ObjectV and items.kind == DICT_KIND:
        return StrV(sep.join(k for k, _ in items.attrs)) if dict_keys.all_str(items) else None
    if not isinstance(items, TupleV):
        return None
    texts = [i.value for i in items.items if isinstance(i, StrV) and i.value is not None]
    return StrV(sep.join(texts)) if len(texts) == len(items.items) else None


def _formatted(text: str, args, kwargs) -> Value | None:
    """`"conv{}".format(i + 1)` of numbers, strings, bools and None known exactly:
    Python's text; None where an argument is anything else."""
    pos, named = [], {}
    for a in args:
        ok, v = python_constant(a)
        if not ok or isinstance(a, TupleV):
            return None
        pos.append(v)
    for k, a in kwargs.items():
        ok, v = python_constant(a)
        if not ok or isinstance(a, TupleV):
            return None
        named[k] = v
    try:
        return StrV(text.format(*pos, **named))
    except (ValueError, IndexError, KeyError, AttributeError, TypeError):
        return None  # what Python would raise: not a text the analysis hands on


def float_method(recv: FloatV, name: str, args, kwargs) -> Value | None:
    """`(n / k).is_integer()` of a known float; None where not known."""
    if name == "is_integer" and not args and not kwargs and recv.value is not None:
        return BoolV(recv.value.is_integer())
    return None


def int_method(recv: IntV, name: str, args, kwargs) -> Value | None:
    """`out_size.bit_length()` / `.bit_count()` of a known int, as Python counts the
    bits of its absolute value; None where the int is not known."""
    n = recv.value.value if recv.value is not None else None
    if n is None or args or kwargs or name not in ("bit_length", "bit_count"):
        return None
    return IntV(Expr.const(n.bit_length() if name == "bit_length" else bin(n).count("1")))


def tuple_method(recv: TupleV, name: str, args, kwargs) -> Value | None:
    """`names.index("use_cache")`, `dims.count(1)` of a tuple (or list) known
    item by item; None when that is not the case, or Python would raise."""
    ok, items = python_constant(recv)
    found = [python_constant(a) for a in args]
    if name not in ("index", "count") or not ok or kwargs or not all(f for f, _ in found):
        return None
    try:
        out = getattr(items, name)(*(v for _, v in found))
    except (ValueError, TypeError):
        return None  # not there: Python raises
    return IntV(Expr.const(out))


def size_numel(recv: TupleV, args, kwargs) -> Value | None:
    """`x.shape.numel()`: torch.Size's product of its sizes (1 for `torch.Size([])`).
    A tuple or list surely made as one has no numel (Python raises): None, as for
    sizes not all ints or arguments torch would refuse."""
    if args or kwargs or recv.kind is not None:
        return None
    total = Expr.const(1)
    for item in recv.items:
        if not isinstance(item, IntV) or item.value is None:
            return None
        total = total * item.value
    return IntV(total)


def _range_items(args) -> Value | None:
    """`tuple(range(n))` at known bounds: the ints (a range indexes and iterates so)."""
    bounds = []
    for a in args:
        if not (isinstance(a, IntV) and a.value is not None and a.value.value is not None):
            return None
        bounds.append(a.value.value)
    r = range(*bounds) if bounds[-1:] != [0] or len(bounds) < 3 else None
    if r is None or len(r) > MAX_UNROLL:
        return None
    return TupleV(tuple(IntV(Expr.const(i)) for i in r))


# The builtins TupleV stands for: a value of it is one of them, which one is not kept.
_SEQUENCES = frozenset({"tuple", "list"})
_PY_TYPES = {
    "tuple": (TupleV,),
    "list": (TupleV,),
    "int": (IntV, BoolV),
    "float": (FloatV,),
    "str": (StrV,),
    "bool": (BoolV,),
    "dict": (),
    "slice": (SliceV,),  # a final class: no int, str or tuple is one
}


def _callable(v: Value) -> Value:
    if isinstance(v, (IntV, BoolV, FloatV, StrV, NoneV, TensorV, TupleV)):
        return BoolV(False)
    if isinstance(v, (LayerClassV, ClassRefV, PartialV, FunctionRefV, ModuleListV)):
        return BoolV(True)
    if isinstance(v, (lambdas.ClosureV, decorators.FunctionV, BoundMethodV, TensorMethodV)):
        return BoolV(True)  # a lambda, a nested def, a method bound to its object
    return BoolV(None)


# The abstract collection types a value of a plain kind, or a tensor, is or is not
# an instance of (timm's to_2tuple: `isinstance(x, collections.abc.Iterable)`):
# tuples, lists and strings are iterable sequences and no mappings; numbers,
# booleans and None are none of them. A torch.Tensor has __len__, __iter__ and
# __contains__ (an Iterable, a Collection) and is registered as no Sequence or
# Mapping. Per class: (the plain kinds that are instances, a tensor's answer).
_ABCS: dict[str, tuple[tuple[type[Value], ...], bool]] = {
    "Iterable": ((TupleV, StrV), True),
    "Collection": ((TupleV, StrV), True),
    "Sequence": ((TupleV, StrV), False),
    "Mapping": ((), False),
}
_ABSTRACT = {f"{m}.{t}": v for m in ("collections.abc", "typing") for t, v in _ABCS.items()}
# `isinstance(supported, enum.EnumMeta)`: only an enum class is one
_ENUM_METACLASSES = ("enum.EnumMeta", "enum.EnumType")
_NOT_COLLECTIONS = (IntV, BoolV, FloatV, NoneV)
_PLAIN_VALUES = (*_NOT_COLLECTIONS, StrV, TupleV)
# values that are no class: numbers, strings, None, tuples, lists, sets, tensors,
# dicts and instances (an enum's members, modules, objects)
_NO_CLASSES = (*_PLAIN_VALUES, small_sets.SetV, TensorV, ObjectV, ModuleListV)
# Values that are Python functions or methods, never an instance of a class of a module's
_FUNCTIONS = (lambdas.ClosureV, FunctionRefV, BoundMethodV, TensorMethodV)
# The numeric tower: int and bool are Integral, float only Real; a str, a tuple, None
# or a tensor is no Number.
_NUMBERS = {
    **{f"numbers.{t}": (IntV, BoolV, FloatV) for t in ("Number", "Complex", "Real")},
    **{f"numbers.{t}": (IntV, BoolV) for t in ("Rational", "Integral")},
}


def _isinstance(an: Analyzer, v: Value, types: ast.expr, frame) -> Value:
    """isinstance(v, types): true when v is an instance of one of them, false when
    of none, unknown when one test is not known here."""
    names = types.elts if isinstance(types, ast.Tuple) else _union_members(types)
    if isinstance(v, TupleV) and _SEQUENCES <= {
        n.id
        for n in names
        if isinstance(n, ast.Name)
        and an.imports.resolve(n, frame.locals, frame.local_imports) is None
    }:
        return BoolV(True)  # a tuple or a list, whichever it is
    unknown = False
    for n in names:
        hit = instance_of(an, v, n, frame)
        if hit:
            return BoolV(True)
        unknown = unknown or hit is None
    return BoolV(None) if unknown else BoolV(False)


def _dict_subclass(an, v: ObjectV) -> bool:
    cd = an.class_of(v.kind[len("<class>") :])
    return cd is not None and module_kinds.torch_base(an, cd) == module_kinds.MAPPING


def _mapping_test(qual: str | None, builtin: str | None) -> bool:
    """`isinstance(x, dict)`, or against Mapping / MutableMapping."""
    if builtin == "dict":
        return True
    return qual is not None and qual.rpartition(".")[::2] in {
        (m, t) for m in ("collections.abc", "typing") for t in ("Mapping", "MutableMapping")
    }


def _union_members(types: ast.expr) -> list[ast.expr]:
    """The classes of `A | B | C` (a types.UnionType, which isinstance reads as the
    tuple (A, B, C)), where each is a name or a dotted name; else [types] itself."""
    if not (isinstance(types, ast.BinOp) and isinstance(types.op, ast.BitOr)):
        return [types]
    members = [*_union_members(types.left), *_union_members(types.right)]
    if all(isinstance(m, (ast.Name, ast.Attribute)) for m in members):
        return members
    return [types]


def _project_class(an: Analyzer, n: ast.expr, qual, builtin, frame) -> ClassDef | None:
    """The project class the class expression n names; None where it names another."""
    if qual is not None:
        sym = an.project_symbol(n, qual, frame)
    else:  # a class of this file
        ref = an.eval(n, frame) if builtin not in _PY_TYPES else None
        sym = an.class_of(ref.name) if isinstance(ref, ClassRefV) else None
    return sym if isinstance(sym, ClassDef) else None


def _module_instance_of(an: Analyzer, v: ObjectV, cls: ClassDef | None) -> bool | None:
    """isinstance(v, cls) of a torch layer or a project class's instance v and a project
    class cls that Python's type answers for (no metaclass: ABCMeta's `register`
    makes other classes its instances): a torch layer is an instance of no project
    class, a project instance of the classes along its bases; None where not known."""
    if cls is None or not plain_type(an, cls):
        return None
    if v.kind.startswith("torch.nn."):
        return False
    key = _instance_class(v)
    mine = an.class_of(key) if key is not None else None
    return derives_from(an, mine, cls) if mine is not None else None


def _instance_class(v: Value) -> str | None:
    """The key of the project class v is an instance of (a class's instance, or a
    dataclass config as construction builds it); None for any other value."""
    if type(v) is not ObjectV:
        return None
    if v.kind.startswith(absence.CONFIG_PREFIX):
        return v.kind[len(absence.CONFIG_PREFIX) :]
    return pytypes.class_key(v)


# torch's classes a ModuleListV may be an instance of
_CONTAINERS = frozenset({"Sequential", "ModuleList", "ParameterList", "Container"})


def _module_class_def(an: Analyzer, v: Value) -> ClassDef | None:
    """The project class of v, the module being built or a project class's instance."""
    if isinstance(v, SelfRecorder):
        return an.class_of(v.cls)
    if type(v) is ObjectV and v.kind.startswith("<class>"):
        return an.class_of(v.kind[len("<class>") :])
    return None


def _module_alone(an: Analyzer, v: Value) -> bool:
    """v is the module being built or an instance of a project class every class along
    whose bases is a project class or nn.Module itself (no metaclass or keyword)."""
    cd = _module_class_def(an, v)
    if cd is None:
        return False
    for c in mro(an, cd):
        owner = c.owner or an
        modules = [
            b
            for b in c.node.bases
            if isinstance(b, (ast.Name, ast.Attribute))
            and owner.imports.resolve(b) == "torch.nn.Module"
        ]
        if c.node.keywords or len(base_classes(an, c)) + len(modules) != len(c.node.bases):
            return False
    return True


def _derives_from_torch(an: Analyzer, v: Value, qual: str) -> bool:
    """Whether v, the module being built or a project class's instance, has the
    torch class qual (named by any path torch exports it by) first among torch's
    along its class's bases: Python's isinstance is then true."""
    cd = _module_class_def(an, v)
    first = module_kinds.torch_ancestor(an, cd) if cd is not None else None
    return first is not None and first.rsplit(".", 1)[-1] == qual.rsplit(".", 1)[-1]


TORCH_PUBLIC_BASES = frozenset(
    {"RNNBase", "RNNCellBase", "NLLLoss", "Hardtanh", "Upsample"}
    | {f"ConstantPad{n}d" for n in (1, 2, 3)}
)


def instance_of(an: Analyzer, v: Value, n: ast.expr, frame) -> bool | None:
    """isinstance(v, n) for one class expression n: True, False, or None where not known."""
    qual = an.imports.resolve(n, frame.locals, frame.local_imports)
    builtin = n.id if isinstance(n, ast.Name) and qual is None else None
    known = pytypes.instance_test(qual, builtin, v)
    if known is not None or v is UNKNOWN:
        return known
    if qual in _ENUM_METACLASSES and isinstance(v, _NO_CLASSES):
        return False  # enum's metaclass has classes for instances, never such a value
    if builtin is not None and enums.is_member(v):
        if builtin not in pytypes.BUILTIN_CLASSES:
            return None
        return enums.builtin_instance(an, v, builtin)
    if enums.is_member(v) or isinstance(v, (IntV, BoolV, FloatV, StrV, NoneV)):
        cls = _project_class(an, n, qual, builtin, frame)
        found = enums.instance_of(an, v, cls) if cls is not None else None
        if found is not None:
            return found
    mapping = type(v) is ObjectV and v.kind.startswith("<class>") and _dict_subclass(an, v)
    if mapping and _mapping_test(qual, builtin):
        return True  # an instance of a dict subclass is a dict, and a mapping
    if mapping and builtin in _PY_TYPES:
        return False  # and no tuple, list, number or string (a dict's layout excludes them)
    if type(v) is ObjectV and v.kind == DICT_KIND:
        if _mapping_test(qual, builtin):
            return True
        if builtin in _PY_TYPES:
            return False  # a dict is no tuple, list, number or string
        # a plain dict is an instance of no project class Python's type answers for
        cls = _project_class(an, n, qual, builtin, frame)
        if cls is not None and plain_type(an, cls):
            return False
    if isinstance(v, ObjectV) and v.kind.startswith(
        ("torch.nn.", "<class>", absence.CONFIG_PREFIX)
    ):
        found = _module_instance_of(an, v, _project_class(an, n, qual, builtin, frame))
        if found is not None:
            return found
    if isinstance(v, (SelfRecorder, ModuleListV)):
        # the module being built is an instance of the class being built and its
        # bases; torch's own ModuleList or Sequential (a project subclass's instance
        # is an ObjectV of its class) of no project class
        kind = f"<class>{v.cls}" if isinstance(v, SelfRecorder) else "torch.nn.ModuleList"
        found = _module_instance_of(an, ObjectV(kind), _project_class(an, n, qual, builtin, frame))
        if found is not None:
            return found
    if qual is not None and qual.startswith("torch.nn.") and _derives_from_torch(an, v, qual):
        # an instance of a project class deriving from that torch class (through
        # project classes too: `class Pad(nn.Conv1d)`, `class S(Pad, Mixin)`)
        return True
    if qual is not None and qual.startswith("torch.nn.") and _module_alone(an, v):
        # a project module whose only base of torch's is nn.Module: of no other torch class
        return qual == "torch.nn.Module"
    if qual is not None and qual.startswith("torch.nn.") and isinstance(v, ModuleListV):
        # torch's own Sequential, ModuleList or ParameterList, which no public torch
        # class derives from: an instance of Module, and of its own class, which the
        # value leaves open among the three
        leaf = qual.rpartition(".")[2]
        if leaf == "Module":
            return True
        return None if leaf in _CONTAINERS or leaf.startswith("_") else False
    if qual is not None and qual.startswith("torch.nn.") and isinstance(v, _PLAIN_VALUES):
        return False  # a number, string, None or tuple is no module, layer or Parameter
    if qual is not None and qual.startswith("torch.nn.") and pytypes.is_class(v):
        # a class object (`norm=nn.LayerNorm` asked `isinstance(norm, nn.Module)`) is an
        # instance of its metaclass, a subclass of type, which no class of torch.nn is
        return False
    if isinstance(v, _FUNCTIONS):
        # a function or method object (x-transformers' `default(project_in, lambda:
        # nn.Identity())` asks `not isinstance(d, Module) and callable(d)`): an instance
        # of no torch.nn class, nor of a project class Python's type answers for
        if qual is not None and qual.startswith("torch.nn."):
            return False
        cls = _project_class(an, n, qual, builtin, frame)
        if cls is not None and plain_type(an, cls):
            return False
    if qual is not None and isinstance(v, ObjectV) and v.kind.startswith("torch.nn."):
        # a torch layer is an instance of its class (under any path torch exports it
        # by) and of nn.Module; of another class, maybe (torch's layers subclass
        # each other: BatchNorm2d is a _BatchNorm)
        cls, mine = qual.rsplit(".", 1)[-1], v.kind.rsplit(".", 1)[-1]
        if (cls == mine and qual.startswith("torch.nn.")) or qual == "torch.nn.Module":
            return True
        if qual.startswith("torch.nn.") and not cls.startswith("_"):
            # torch's public layers that are bases of others (tests/test_python_types.py
            # holds the list to torch's issubclass), and the lazy and quantizable
            # variants of theirs (LazyLinear is a Linear): of any other, no instance
            unsure = cls in TORCH_PUBLIC_BASES or mine.startswith(("Lazy", "NonDynamically"))
            return None if unsure else False
    if (
        isinstance(v, (IntV, BoolV, FloatV, StrV, NoneV))
        and qual not in _ABSTRACT | _NUMBERS.keys()
    ):
        # a number, string or None is no instance of a project class none of whose
        # bases is a builtin type (`isinstance(units, Wiring)` of an int)
        sym = _project_class(an, n, qual, builtin, frame)
        if sym is not None and derives_from_object_alone(an, sym):
            return False
    if qual in _ABSTRACT:
        kinds, tensor = _ABSTRACT[qual]
        if isinstance(v, TensorV):
            return tensor
        if isinstance(v, small_sets.SetV):
            return qual.endswith((".Iterable", ".Collection"))  # no sequence, no mapping
        if not isinstance(v, _PLAIN_VALUES):
            return None
    elif builtin in _PY_TYPES:
        kinds = _PY_TYPES[builtin]
    elif qual in _NUMBERS:
        kinds = _NUMBERS[qual]
    else:
        return None
    if isinstance(v, TupleV) and builtin in _SEQUENCES:
        # a display or list()/tuple() says which; any other value may be either
        return None if v.kind is None else v.kind == builtin
    if isinstance(v, (IntV, BoolV, FloatV, StrV, NoneV, TupleV, SliceV)):
        return isinstance(v, kinds)
    # a tensor, a module list, a class, a function: no number, string or sequence;
    # a grown list (SeqV): not known; an instance of a class whose bases are all
    # the project's (or object): no builtin's, whatever its attributes
    if pytypes.no_builtin_instance(v):
        return False
    if builtin in _PY_TYPES and isinstance(v, ObjectV) and v.kind.startswith("torch.nn."):
        return False  # torch's layers derive from nn.Module alone (`activation=nn.GELU()`)
    key = _instance_class(v)
    if builtin in _PY_TYPES and key is not None:
        cd = an.class_of(key)
        return False if cd is not None and derives_from_object_alone(an, cd) else None
    return None


def _map_lambda(an: Analyzer, node: ast.Call, seq: Value, frame) -> Value | None:
    """`map(lambda t: f(t), xs)` over a sequence known item by item: each item
    through the lambda's body (its calls recorded once per item)."""
    lam = node.args[0]
    assert isinstance(lam, ast.Lambda)
    items = as_items(seq)
    params = [a.arg for a in lam.args.args]
    if items is None or len(params) != 1 or lam.args.vararg or lam.args.kwonlyargs:
        return None
    out = []
    for i, item in enumerate(items):
        inner = an.new_frame(frame.func, frame.name)
        inner.env = dict(frame.env)
        inner.env[params[0]] = item
        inner.locals = set(frame.locals) | {params[0]}
        inner.local_imports = frame.local_imports
        out.append(an.eval(lam.body, inner))
        for key, rec in inner.records.items():
            frame.records[(*key, "map", i)] = rec
    return TupleV(tuple(out))


_MAP_ITEM = ".map item"  # not a Python name: nothing in the code can see it


def map_named(an: Analyzer, node: ast.Call, args, frame, limit: int = MAP_MAX) -> Value | None:
    """`map(f, (a, b))` with f a function known by name, not as a value, over a
    sequence known item by item (up to `limit` items): `f(a), f(b)`, each call run
    as the code would run it (`map(cache_fn, (get_block, ...))`). None: not that case."""
    if len(args) != 2 or args[0] is not UNKNOWN or not isinstance(node.args[0], ast.Name):
        return None
    items = as_items(args[1])
    if items is None or len(items) > limit:
        return None
    call = ast.copy_location(
        ast.Call(node.args[0], [ast.copy_location(ast.Name(_MAP_ITEM, ast.Load()), node)], []),
        node,
    )
    out = []
    for i, item in enumerate(items):
        inner = an.new_frame(frame.func, frame.name)
        inner.env = {**frame.env, _MAP_ITEM: item}
        inner.locals = set(frame.locals) | {_MAP_ITEM}
        inner.local_imports = frame.local_imports
        out.append(an.eval(call, inner))
        for key, rec in inner.records.items():
            frame.records[(*key, "map", i)] = rec
    return TupleV(tuple(out))


_GETATTR_OBJ = "<getattr>"  # the object getattr reads, bound to a name no code can use


def _getattr(an, node, args, kwargs, frame) -> Value | None:
    """`getattr(obj, "name"[, default])` with a known name: `obj.name` as the
    analysis reads it. Where that is not known the default is not taken (the
    attribute may be set where the analysis does not see), and the value is unknown."""
    if kwargs or len(args) not in (2, 3) or not isinstance(args[1], StrV):
        return None
    name = args[1].value
    if not name:
        return None
    if not name.isidentifier():
        # `getattr(self, f"q_{0.25}_transform", "none")`: no attribute syntax reads or
        # writes such a name; only setattr and the instance's __dict__ give it, which
        # the run follows as it does any store of a computed name: the default, where
        # the object surely lacks it
        lacking = len(args) == 3 and (
            absence.surely_lacks(an, args[0], name) or torch_absence.lacks(an, args[0], name)
        )
        return args[2] if lacking else None
    if args[0] is UNKNOWN:
        # a name no value stands for, as an imported module (`getattr(nn, act)`):
        # `nn.ELU` read where the call is, names resolved as the attribute's are;
        # with no default, Python's getattr is that read (or its AttributeError)
        obj = node.args[0] if node.args else None
        if not nodes.dotted_name(obj):
            return None
        if len(args) == 3 and an.qualname_of(obj, frame) is None:
            return None
        read = ast.copy_location(ast.Attribute(obj, name, ast.Load()), node)
        value = an.eval(read, frame)
        # with a default (`getattr(torch, reduction, None)`), off an imported module:
        # a read that finds a value found the attribute (a function the stubs
        # describe, a class or function of the project), which getattr returns
        # whatever the default; one it does not find may be absent: not known
        return None if value is UNKNOWN else value
    value = attribute_of(an, node, args[0], name, frame)
    if value is UNKNOWN and len(args) == 3:
        if (
            absence.surely_lacks(an, args[0], name)
            or attribute_hooks.absent(args[0], name)
            or torch_absence.lacks(an, args[0], name)
        ):
            return args[2]  # an attribute that surely does not exist: the default
    return None if value is UNKNOWN else value


def attribute_of(an, node, obj: Value, name: str, frame) -> Value:
    """`obj.name` as the analysis reads it, obj given as a value (UNKNOWN where not
    known), node the place it is read at."""
    read = ast.copy_location(
        ast.Attribute(
            ast.copy_location(ast.Name(_GETATTR_OBJ, ast.Load()), node), name, ast.Load()
        ),
        node,
    )
    inner = an.new_frame(frame.func, frame.name)
    inner.env = {**frame.env, _GETATTR_OBJ: obj}
    inner.locals = set(frame.locals) | {_GETATTR_OBJ}
    inner.local_imports = frame.local_imports
    inner.records = frame.records
    return an.eval(read, inner)


def _setattr(an, node, args, kwargs, frame) -> Value | None:
    """`setattr(obj, name, value)`: on the module or config being built, the
    attribute it stores; while modules are built, any other store is followed as
    `obj.name = value` is (a name not known: a store the analysis cannot place);
    elsewhere a write the analysis does not apply, which leaves that attribute
    (any, where the name is not known) possibly present."""
    if kwargs or len(args) != 3:
        return None
    name = args[1].value if isinstance(args[1], StrV) and args[1].value else None
    if node.args and namespace.own_module(an, node.args[0], frame):
        namespace.store(an, name, args[2], frame)  # a global, no object's attribute
        return NoneV()
    if an.specialize and name == "forward" and len(node.args) == 3 and _name_path(node.args[0]):
        # Python's `obj.forward = f`, judged where it runs as that store is
        # (dynamic.forward_stored); obj a name or a path of attributes from one, read
        # again without running anything of its own
        target = ast.copy_location(ast.Attribute(node.args[0], name, ast.Store()), node)
        an.assign(target, args[2], frame, None)
        return NoneV()
    if len(node.args) > 1 and not isinstance(node.args[1], ast.Constant):
        _computed_name(an, args[0], name)
    if isinstance(args[0], ClassRefV) and not an.trial:
        absence.class_write(name)  # a class attribute its instances read
    if an.specialize and len(node.args) == 3 and _own_setattr(an, args[0]):
        # `type(obj).__setattr__(obj, name, value)`: the class's own decides what
        # the object keeps, whatever the name (an unknown one leaves it unknown)
        call = setattr_call(node.args[0], node.args[1], node.args[2], node)
        with module_state.store_statement():
            an.call_method(args[0], "__setattr__", call, [args[1], args[2]], {}, frame)
        return NoneV()
    held = node.args[0] if node.args else None
    if an.specialize and isinstance(held, ast.Name) and _plain_instance(args[0]):
        # a local holding an instance of a project class: `obj.name = value`, as the
        # name is given (in_place counts the change as followed); an unknown name
        # may have set any attribute
        if name is None:
            if held.id in frame.env:
                frame.env[held.id] = UNKNOWN
        else:
            an.assign(
                ast.copy_location(ast.Attribute(held, name, ast.Store()), node),
                args[2],
                frame,
                None,
            )
        return NoneV()
    if name is None and not an.trial and absence.config_being_built(an, args[0]) is not None:
        absence.stored_while_built(None)  # the config being built: any name, from now on
    if isinstance(args[0], SelfRecorder) and name is not None:
        an.outer_writes += 1  # a store that outlives the frame: counted in a trial turn
        if not an.trial and not (
            an.specialize and attribute_hooks.store(an, args[0], name, args[2])
        ):
            attrs = args[0].attrs
            none_plain = isinstance(args[2], NoneV) and plain.none_stays_plain(attrs, name)
            attrs[name] = args[2]
            if isinstance(args[2], NoneV):  # None in a registry, or a plain attribute
                plain.mark(attrs, name, none_plain)
        return NoneV()
    # a local surely holding an instance of a plain class: the store reaches that
    # object alone, whatever the name
    apart = args[0] is UNKNOWN and plain_instances.holds_plain(an, node.args[0], frame)
    if an.specialize and aliasing.recorders():
        an.outer_writes += 1
        if not an.trial and not apart:
            attribute_stores.store_attr(an, args[0], name, args[2], frame)
            absence.unapplied_write(args[0], name)
        return NoneV()
    if apart:
        return NoneV()
    if not an.trial and frame.func is not None:
        # `setattr(obj, r, 0)` with obj a parameter: in a target run's pass over the
        # function with its parameters not known, no write of the run (absence.py)
        through = bool(node.args) and absence.through_parameter(an.specialize, node.args[0], frame)
        absence.unapplied_write(args[0], name, through)
    elif not an.trial:
        absence.stored_elsewhere(name)  # kept on no value (a file's top level)
    return None


def _name_path(node: ast.expr) -> bool:
    """A name, or attributes read from one (`self.b0`)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _plain_instance(v: Value) -> bool:
    return type(v) is ObjectV and v.kind.startswith(("<class>", absence.CONFIG_PREFIX))


def _own_setattr(an, v: Value) -> bool:
    """An instance of a project class whose MRO defines `__setattr__` (not the
    module being built: attribute_hooks runs that one)."""
    if type(v) is not ObjectV or not v.kind.startswith("<class>"):
        return False
    cd = an.class_of(v.kind[len("<class>") :])
    return cd is not None and "__setattr__" in all_methods(an, cd)


def _computed_name(an, holder: Value, name: str | None) -> None:
    """A setattr whose name was computed, as it runs (dynamic.py): a method of the
    holder's class it may replace from now on. A holder that is one of several
    modules (an undecided `if` chose it) is each of them: what is lost is their
    classes' methods, not every class's."""
    if isinstance(holder, callable_values.ChoiceV) and holder.items:
        keys = [_holder_class(h) for h in holder.items]
        if all(k is not None for k in keys):
            for h in holder.items:
                _computed_name(an, h, name)
            return
    key = _holder_class(holder)
    on_class = key is None  # an object not known may be a class
    if isinstance(holder, callable_values.ClassRefV):
        key, on_class = holder.name, True
    cd = an.class_of(key) if key is not None else None
    methods = set(all_methods(an, cd)) if cd is not None else None
    cls = key.rpartition(":")[2].rpartition(".")[2] if key is not None else None
    dynamic.set_at_run_time(an, cls, name, on_class, methods)


def _holder_class(holder: Value) -> str | None:
    """The key of the class _computed_name finds for holder; None where it finds none."""
    if isinstance(holder, SelfRecorder):
        return holder.cls
    if isinstance(holder, ObjectV) and holder.kind.startswith(("<class>", absence.CONFIG_PREFIX)):
        return holder.kind.partition(">")[2]
    return None


def _delattr(an, node, args, kwargs, frame) -> Value | None:
    """`delattr(obj, name)` while modules are built: a module's own attribute of a
    known name is gone; anything else may remove what was counted."""
    if kwargs or len(args) != 2:
        return None
    name = args[1].value if isinstance(args[1], StrV) else None
    own = isinstance(args[0], modules.SelfRecorder) and name is not None
    if an.specialize and not own:
        absence.stored_elsewhere(name)  # an object's value that still holds it
    if not (an.specialize and aliasing.recorders()):
        return None
    if own:
        args[0].attrs.pop(name, None)
    else:
        aliasing.lost()
    return NoneV()


def _sorted(an, node, args, kwargs, frame) -> Value | None:
    """`sorted(xs)` / `sorted(xs, reverse=b)` of numbers or strings all known, or
    tuples of them: the list Python builds (a `key=` function is not followed)."""
    if len(args) != 1 or set(kwargs) - {"reverse"}:
        return None
    ok, items = python_constant(small_sets.sorted_items(args[0]) or args[0])
    ok_r, reverse = python_constant(kwargs.get("reverse", BoolV(False)))
    if not (ok and ok_r and isinstance(items, tuple) and isinstance(reverse, bool)):
        return None
    if not all(_sortable(i) for i in items):
        return None
    try:
        ordered = sorted(items, reverse=reverse)
    except TypeError:  # numbers beside strings: Python raises too
        return None
    return TupleV(tuple(_as_value(i) for i in ordered))


def _sortable(c) -> bool:
    """A number, a string, or a tuple of them (`sorted(zip(perm, range(n)))`),
    which Python orders item by item."""
    if isinstance(c, tuple):
        return all(_sortable(i) for i in c)
    return isinstance(c, (int, float, str))


def _as_value(c) -> Value:
    if isinstance(c, tuple):
        return TupleV(tuple(_as_value(i) for i in c), "tuple")
    return constant_value(c)


def _set(an, node, args, kwargs, frame) -> Value | None:
    """`set()` / `frozenset(xs)` of items all known constants (small_sets.py)."""
    if kwargs or len(args) > 1:
        return None
    if not args:
        return small_sets.SetV(())
    if isinstance(args[0], small_sets.SetV):
        return small_sets.built(args[0].items)
    return small_sets.built(args[0].items) if isinstance(args[0], TupleV) else None


def _dir(an, node, args, kwargs, frame) -> Value | None:
    """`dir(torch.nn.functional)`: the names of a library module the stubs model."""
    if len(node.args) != 1 or node.keywords:
        return None
    qual = an.imports.resolve(node.args[0], frame.locals, frame.local_imports)
    if qual is None or qual.split(".")[0] not in ("torch", "einops"):
        return None
    return pytypes.ModuleNamesV(qual)


def _locals(an, node, args, kwargs, frame) -> Value | None:
    return frame_locals.locals_of(an, node, frame)


BUILTINS: dict[str, tuple[Handler, ...]] = {
    "dir": (_dir,),
    "locals": (_locals,),
    "sorted": (_sorted,),
    "set": (_set,),
    "frozenset": (_set,),
    "getattr": (_getattr,),
    "setattr": (_setattr,),
    "delattr": (_delattr,),
    "len": (_len_method, _len_container, _len_sized),
    "list": (_sequence,),
    "tuple": (_sequence,),
    "int": (_int,),
    "float": (_float,),
    "slice": (_slice,),
    "min": (_extreme(min),),
    "max": (_extreme(max),),
    "dict": (_dict,),
    "range": (_range,),
    "zip": (_zip,),
    "enumerate": (_enumerate,),
    "reversed": (_reversed,),
    "callable": (_callable_of,),
    "isinstance": (_isinstance_of,),
    "issubclass": (_issubclass_of,),
    "hasattr": (_hasattr,),
    "map": (_map,),
    "filter": (_filter,),
    "iter": (_iter,),
    "next": (_next,),
    "any": (_any_all(True),),
    "all": (_any_all(False),),
    "sum": (_sum,),
    "abs": (_operator_of_tensor("operator.abs", 1), _numeric(abs, (1,))),
    "round": (_numeric(round, (1, 2)),),
    "divmod": (_numeric(divmod, (2,)),),
    "pow": (_operator_of_tensor("operator.pow", 2), _numeric(pow, (2,))),
    "bool": (_bool,),
    "str": (_str,),
    "repr": (_repr,),
    "type": (_type,),
}


_COPIES = frozenset({"copy.copy", "copy.deepcopy"})


def copied(qual: str, args, kwargs) -> Value | None:
    """`copy.copy(x)` / `copy.deepcopy(x)` of plain data (numbers, strings, None,
    tuples, lists and dicts of them): a value equal to x, which is all the analysis
    holds of it, and, for a dict or a list, another value object, as Python makes
    another object (`fresh_copy`); `copy.deepcopy` of a module: a new one
    (copies.deep_copied). None for anything else holding a tensor, a module or an
    object: a copy of those is a new object with new tensors, which counts apart.
    `typing.cast(T, x)` is x itself, whatever it holds."""
    at = unfollowed.RETURNS_ARGUMENT.get(qual)
    if at is not None:
        return args[at] if len(args) == 2 and not kwargs else None
    if qual not in _COPIES or len(args) != 1 or kwargs:
        return None
    if qual == "copy.deepcopy" and module_kinds.is_module(args[0]):
        return copies.deep_copied(args[0])
    if not _plain_data(args[0]):
        return None
    return fresh_copy(args[0], deep=qual == "copy.deepcopy")


def fresh_copy(v: Value, deep: bool, memo: list | None = None) -> Value:
    """v's copy as a value object of its own where Python makes a new object (a
    dict; a list, surely one): a change made through one holder of the original
    (`r = d; r[k] = x`) forgets the holders of that very object (in_place.forget_held,
    by identity), never the copy's, and a change through the copy never the
    original's. deep: the dicts and lists it holds copied too, as
    `copy.deepcopy` copies them, one copy per object as its memo keeps (`{"a": xs,
    "b": xs}` gives one new list twice); a shallow copy holds the same ones. A
    tuple, or a sequence that may be one, is itself, as `copy.copy` returns a tuple.
    The memo is matched by equality: the analysis may hold two equal values for
    one object (a join), whose copies must stay one object; two objects that
    merely look alike then share a copy, which a change forgets in both."""
    memo = [] if memo is None else memo
    for was, got in memo:
        if was is v or (type(was) is type(v) and was == v):
            return got
    res = v
    if type(v) is ObjectV and v.kind == DICT_KIND:
        attrs = tuple((k, fresh_copy(i, deep, memo)) for k, i in v.attrs) if deep else v.attrs
        res = ObjectV(v.kind, attrs)
    elif isinstance(v, TupleV) and (deep or v.kind == "list"):
        items = tuple(fresh_copy(i, deep, memo) for i in v.items) if deep else v.items
        if v.kind == "list" or any(a is not b for a, b in zip(items, v.items)):
            res = TupleV(items, v.kind)
    if res is not v:
        memo.append((v, res))
    return res


def _plain_data(v: Value, depth: int = 0) -> bool:
    if depth > 8:
        return False
    if isinstance(v, TensorV):
        return False
    if isinstance(v, (*_NOT_COLLECTIONS, StrV)):
        return True
    if isinstance(v, TupleV):
        return all(_plain_data(i, depth + 1) for i in v.items)
    if type(v) is ObjectV and v.kind == DICT_KIND:
        return all(_plain_data(i, depth + 1) for _, i in v.attrs)
    return False
