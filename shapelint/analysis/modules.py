"""nn.Module instances as values.

A project class's instance is an ObjectV carrying what its __init__ assigned to
self (layers with their sizes, tensors, other instances, containers, configs).
This module models what torch.nn gives those attributes beyond single layers:
containers (nn.Sequential, nn.ModuleList, nn.ModuleDict), nn.Parameter and
register_buffer, inheritance between project classes, plain config objects
(dataclasses with defaults, SimpleNamespace, dicts), loops over module lists,
and the *specialized* evaluation that `shapelint cost PATH::QUALNAME` runs: each
call of a project function or module re-interprets the callee with the values
it is given (constructor arguments, input shapes), so an unannotated forward is
costed at the sizes the caller passes.

The interpreter calls in through a handful of hooks; each returns None when the
case is not one this module models, and the interpreter carries on as before.
"""

from __future__ import annotations

import ast
import difflib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from shapelint.analysis import (
    absence,
    aliasing,
    autograd_function,
    call_path,
    decorators,
    dynamic,
    framed,
    generators,
    grad_mode,
    in_place,
    loops,
    may_raise,
    modes,
    module_state,
    namedtuples,
    one_shot,
    own_methods,
    plain,
    pytree,
    raising,
    recursion,
    registering,
    typeddicts,
    walrus,
)
from shapelint.analysis.absence import CONFIG_PREFIX
from shapelint.analysis.attributes import (
    all_methods,
    base_classes,
    builds_as_type,
    call_after,
    call_unsure,
    class_attribute,
    defining_class,
    derives_from,
    derives_from_module,
    derives_from_object_alone,
    descriptor,
    find_method,
    find_property,
    init_after,
    is_class_method,
    is_static,
    metaclass_call,
    module_class,
    own_call,
    settled,
    super_method,
)
from shapelint.analysis.calls import EINOPS_FUNCTIONS
from shapelint.analysis.defaults import at_call as default_at_call
from shapelint.analysis.dict_entries import ITEMS
from shapelint.analysis.lambdas import ClosureV
from shapelint.analysis.module_lists import ModuleListV, as_items, item_names
from shapelint.analysis.nodes import nodes_of
from shapelint.analysis.own_pass import OwnPass
from shapelint.analysis.recorder import SelfRecorder
from shapelint.analysis.repetition import (
    ONE,
    add_costs,
    add_turn,
    collected,
    loop_record,
    merge,
    scale_cost,
)
from shapelint.analysis.sequences import EndsV
from shapelint.analysis.statements import declared_names, nested_statements
from shapelint.analysis.unknown_cost import may_cost
from shapelint.notation import symbolic
from shapelint.notation.symbolic import Expr
from shapelint.ops import saved as storages
from shapelint.ops import stub_ops
from shapelint.ops.backward import GRAD_MODE, called, carried, entered, left, settle, turn_entries
from shapelint.ops.values import (
    DICT_KIND,
    UNKNOWN,
    ArrayV,
    BoolV,
    BufferV,
    Cost,
    DtypeV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    OptionalV,
    ParameterV,
    SliceV,
    StrV,
    TensorV,
    TupleV,
    Value,
    as_buffer,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef, FuncDef

# Longest loop (or comprehension) unrolled item by item; a longer one of known
# count repeats its first item's cost.
MAX_UNROLL = 256
MAP_MAX = 16  # items a map over named callables is run for, one by one
# Deepest chain of specialized calls (a recursion the in-progress set misses).
MAX_DEPTH = 40


@dataclass(frozen=True)
class ChoiceV(Value):
    """One of `items` (modules, never None: `is None` tests on it stay exact),
    chosen by a test the analysis cannot decide (choices.py)."""

    items: tuple[Value, ...]


@dataclass(frozen=True)
class ClassRefV(Value):
    """A project class used as a value (`norm_layer=LayerNorm`, `mlp_layer=Mlp`)."""

    name: str


@dataclass(frozen=True)
class FunctionRefV(Value):
    """A module-level function used as a value in a target run (`fn = identity`).
    `owner` is the analyzer of the file that defines it: the value travels to
    other files (timm's `to_2tuple = _ntuple(2)`), the function does not."""

    name: str
    owner: Analyzer | None = field(default=None, repr=False)


@dataclass(frozen=True)
class LayerClassV(Value):
    """A torch.nn layer class used as a value (`act_layer=nn.GELU`,
    `linear = nn.Linear if ... else ...`): calling it builds the layer."""

    qual: str


# torch's tensor classes, by every name the analysis reads them under: the module
# and qualified name Python gives each (`torch.nn.Parameter` is defined in
# torch.nn.parameter). pytypes answers what Python says of them.
TENSOR_CLASSES = {
    "torch.Tensor": ("torch", "Tensor"),
    "torch.nn.Parameter": ("torch.nn.parameter", "Parameter"),
    "torch.nn.parameter.Parameter": ("torch.nn.parameter", "Parameter"),
}


def layer_class(qual: str) -> Value | None:
    """The value of a qualified name that is a layer class the stubs describe."""
    from shapelint.ops.stub_ops import describes

    leaf = qual.rsplit(".", 1)[-1]
    if leaf.lstrip("_")[:1].isupper() and describes(f"{qual}.__call__"):  # `_BatchNorm` too
        return LayerClassV(qual)
    return torch_function(qual)


def torch_value(qual: str) -> Value | None:
    """The value of a qualified name in a target run: a layer class, a function the
    stubs describe, or a tensor class (`type(x) is torch.Tensor`; calling it is the
    call of its name). No base a project class derives from: a subclass of
    torch.Tensor is no layer. An einops function (`_many(rearrange)`, einops_exts)
    is called as its name is."""
    if qual in TENSOR_CLASSES or qual in EINOPS_FUNCTIONS:
        return LayerClassV(qual)
    return layer_class(qual)


def torch_function(qual: str) -> Value | None:
    """The value of a qualified name that is a function the stubs describe
    (`self.activation = F.gelu`, `attn_fn = partial(F.softmax, dim=-1)`): calling
    the value calls the function, as Python does; a layer class needs a target's run."""
    from shapelint.ops.stub_ops import describes

    leaf = qual.rsplit(".", 1)[-1]
    if leaf[:1].islower() and qual.startswith(("torch.", "operator.")) and describes(qual):
        return LayerClassV(qual)
    return None


def torch_base(an: Analyzer, cd: ClassDef) -> str | None:
    """The torch.nn layer a project class derives from (`class LayerNorm(nn.LayerNorm)`),
    when the stubs describe it, or the container (`class MLP(nn.Sequential)`)."""

    def described(owner, b: ast.expr) -> str | None:
        qual = owner.imports.resolve(b) if isinstance(b, (ast.Name, ast.Attribute)) else None
        if qual is None and isinstance(b, ast.Name) and b.id == "dict":
            qual = MAPPING if "dict" not in owner.classes else None
        if qual in _MAPPINGS:
            return MAPPING
        if qual is not None and (qual in _CONTAINERS or layer_class(qual) is not None):
            return qual
        return None

    return _first_base(an, cd, described)


def torch_ancestor(an: Analyzer, cd: ClassDef) -> str | None:
    """The first class of torch a project class derives from, along its bases as
    Python's MRO walks them, described by the stubs or not (`class L1Loss(nn.L1Loss,
    base.Loss)`): where its forward comes from when the project defines none."""

    def of_torch(owner, b: ast.expr) -> str | None:
        qual = owner.imports.resolve(b) if isinstance(b, (ast.Name, ast.Attribute)) else None
        ok = qual is not None and qual.startswith("torch.") and qual != "torch.nn.Module"
        return qual if ok else None

    return _first_base(an, cd, of_torch)


def undescribed_torch_base(an: Analyzer, cd: ClassDef) -> bool:
    """Whether a torch.nn class no stub describes is the first of torch's along cd's
    bases (`class Layer(nn.TransformerEncoderLayer)`): its constructor, which the
    analysis does not run, registers submodules and parameters of its own."""
    qual = torch_ancestor(an, cd)
    return (
        qual is not None
        and qual.startswith("torch.nn.")
        and not qual.endswith(".Module")
        and qual not in _DICTS  # a ModuleDict's entries are modelled as a mapping's
        and torch_base(an, cd) is None
    )


def _first_base(an: Analyzer, cd: ClassDef, pick) -> str | None:
    """pick(owner, base expression) of cd's own bases, then of its project bases'
    in turn: the first answer that is not None."""
    owner = cd.owner or an
    for b in cd.node.bases:
        found = pick(owner, b)
        if found is not None:
            return found
    for base in base_classes(an, cd):
        found = _first_base(an, base, pick)
        if found is not None:
            return found
    return None


@dataclass(frozen=True)
class PartialV(Value):
    """`functools.partial(f, *args, **kwargs)` of a callable the analysis follows."""

    func: Value
    args: tuple[Value, ...] = ()
    kwargs: tuple[tuple[str, Value], ...] = ()


@dataclass(frozen=True)
class BoundMethodV(Value):
    """`obj.method` read without a call (`apply_chunking_to_forward(self.ff_chunk,
    ...)`): calling it runs the method on obj, as `obj.method(...)` does."""

    qualname: str
    recv: Value
    fd: FuncDef | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class TensorMethodV(Value):
    """`t.mean` / `getattr(t, "sum")` read without a call: a method bound to the
    tensor, which runs (and costs) only when it is called, as `t.mean(...)`."""

    recv: TensorV
    name: str


def bind_own(value: Value, recv: Value) -> Value:
    """value, read off recv: a method of the instance that holds it (own_methods.py)
    bound to recv, as Python binds it."""
    if isinstance(value, own_methods.OwnMethodV) and value.holder is None:
        return BoundMethodV(value.qualname, recv, value.fd)
    return value


def bound_method(an: Analyzer, cd: ClassDef, recv: Value, name: str) -> BoundMethodV | None:
    """The method `name` of cd bound to recv; None where cd has none, or where it is
    a static or class method (bound otherwise)."""
    fd = find_method(an, cd, name)
    if fd is None:
        return None
    for d in fd.node.decorator_list:
        if isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod"):
            return None
    return BoundMethodV(fd.qualname, recv, fd)


def static_function(an: Analyzer, cd: ClassDef, name: str) -> Value | None:
    """`obj.name` / `Cls.name` where name is a `@staticmethod` of cd (or of a base):
    the plain function, which a static method is through an instance and its
    class alike (it binds nothing); None where there is none, or where another
    decorator wraps it too."""
    fd = find_method(an, cd, name)
    if fd is None or len(fd.node.decorator_list) != 1 or not is_static(fd.node):
        return None
    return decorators.function_value(an, fd)


def class_method(an: Analyzer, cd: ClassDef, name: str, cls: Value) -> BoundMethodV | None:
    """`Cls.name` where name is a `@classmethod` of cd (or of a base): the method
    bound to the class it is read off (`G.on()` with `on` defined by G's base binds
    `cls` to G), as Python binds it; None where there is none, or where another
    decorator wraps it too."""
    fd = find_method(an, cd, name)
    if fd is None or len(fd.node.decorator_list) != 1 or not is_class_method(fd.node):
        return None
    return BoundMethodV(fd.qualname, cls, fd)


# nn.ModuleDict / nn.ParameterDict: a dict whose items torch registers (they count in
# parameters() and named_modules()); a module's plain dict of layers registers nothing.
REGISTERED_DICT_KIND = "<dict:registered>"
DICT_KINDS = frozenset({DICT_KIND, REGISTERED_DICT_KIND})

# nn.ParameterList is a list too: its items are what counts (a tensor given it
# becomes a Parameter; parameters.py counts it so).
_CONTAINERS = {
    "torch.nn.Sequential": True,
    "torch.nn.ModuleList": False,
    "torch.nn.ParameterList": False,
}
_DICTS = {
    "torch.nn.ModuleDict": REGISTERED_DICT_KIND,
    "torch.nn.ParameterDict": REGISTERED_DICT_KIND,
    "types.SimpleNamespace": DICT_KIND,
    "collections.OrderedDict": DICT_KIND,
}
_PASS_THROUGH = {"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"}


def dict_value(entries: dict[str, Value], kind: str = DICT_KIND) -> ObjectV:
    return ObjectV(kind, tuple(entries.items()))


def mapping(v: Value) -> ObjectV | None:
    """What `dict(v)` / `OrderedDict(v)` holds: a dict's entries, or an iterable of
    (str, value) pairs known one by one, in order; None when that is not known."""
    if isinstance(v, ObjectV) and v.kind in DICT_KINDS:
        return v
    items = as_items(v)
    if items is None:
        return None
    entries: dict[str, Value] = {}
    for pair in items:
        kv = as_items(pair)
        if kv is None or len(kv) != 2 or not isinstance(kv[0], StrV) or kv[0].value is None:
            return None
        entries[kv[0].value] = kv[1]
    return dict_value(entries)


# ---------------------------------------------------------------------- construction


def qualified_call(an: Analyzer, qual: str, args, kwargs, open_kwargs) -> Value | None:
    """torch.nn containers, Parameter, SimpleNamespace: values the stubs do not model."""
    if qual in _CONTAINERS:
        if open_kwargs:  # `nn.Sequential(*layers)` with layers not known one by one
            ends = framed.spread(args, kwargs) if qual == "torch.nn.Sequential" else None
            if ends is not None and all(is_module(v) for v in ends):
                return ModuleListV((), True, known=False, ends=ends)
            return ModuleListV((), _CONTAINERS[qual], known=False)
        made = _container(args, sequential=_CONTAINERS[qual])
        if qual == "torch.nn.ParameterList" and isinstance(made, ModuleListV):
            return replace(made, items=tuple(_wrapped(v) for v in made.items))
        return made
    if qual in _DICTS:
        if open_kwargs:
            return UNKNOWN
        kind = _DICTS[qual]
        if not args:
            entries = dict(kwargs)
        else:
            base = mapping(args[0]) if len(args) == 1 else None
            if base is None:
                return UNKNOWN
            entries = {**dict(base.attrs), **kwargs}
        if qual == "torch.nn.ParameterDict":
            entries = {k: _wrapped(v) for k, v in entries.items()}
        return dict_value(entries, kind)
    if qual == "functools.wraps":
        return ObjectV(_WRAPS_KIND)  # a decorator copying a name and a docstring
    if qual == "collections.namedtuple" and not open_kwargs:
        return namedtuples.made(args, kwargs)
    if qual == "functools.partial" and args and not open_kwargs:
        if isinstance(
            args[0], (LayerClassV, ClassRefV, PartialV, FunctionRefV, BoundMethodV, TensorMethodV)
        ) or is_module(args[0]):
            # `block = partial(block, **forward_kwargs)`: a module with arguments bound;
            # `partial(self.f, signal)`: a method with its first arguments bound
            return PartialV(args[0], tuple(args[1:]), tuple(kwargs.items()))
        return None
    if qual in _PASS_THROUGH:
        data = args[0] if args else kwargs.get("data", UNKNOWN)
        if data is UNKNOWN:
            # a tensor, or the call raised (Parameter takes nothing else): a leaf of
            # sizes not known, trainable as the flag says
            data = TensorV(None)
        if not isinstance(data, TensorV):
            return UNKNOWN
        if qual == "torch.nn.Buffer":
            return BufferV(data.shape, data.dtype)
        grad = args[1] if len(args) > 1 else kwargs.get("requires_grad", BoolV(True))
        flag = grad.value if isinstance(grad, BoolV) else None
        return ParameterV(data.shape, data.dtype, flag)
    if qual == "itertools.repeat" and args and not open_kwargs:
        # `tuple(repeat(x, n))` (timm's to_2tuple): n copies, as the iterator yields
        times = args[1] if len(args) > 1 else kwargs.get("times", UNKNOWN)
        n = times.value.value if isinstance(times, IntV) and times.value is not None else None
        return TupleV((args[0],) * n) if n is not None and 0 <= n <= MAX_UNROLL else None
    return None


def _wrapped(v: Value) -> Value:
    """An item given nn.ParameterList or nn.ParameterDict: a plain tensor becomes
    `Parameter(t)`, which requires grad whatever t did."""
    if type(v) is TensorV:
        return ParameterV(v.shape, v.dtype, True)
    return v


def _container(args, sequential: bool) -> Value:
    if sequential and len(args) == 1 and isinstance(args[0], ObjectV):
        if args[0].kind in DICT_KINDS:  # nn.Sequential(OrderedDict(...))
            return ModuleListV(
                tuple(v for _, v in args[0].attrs), True, names=tuple(k for k, _ in args[0].attrs)
            )
    if not sequential or (len(args) == 1 and isinstance(args[0], (TupleV, ModuleListV))):
        if not args:
            return ModuleListV((), sequential)
        src = args[0]
        if isinstance(src, ModuleListV):
            return ModuleListV(src.items, sequential, src.count, src.known)
        if isinstance(src, TupleV):
            return ModuleListV(src.items, sequential)
        return ModuleListV((), sequential, known=False)
    return ModuleListV(tuple(args), sequential)


def comprehension(an: Analyzer, node: ast.ListComp | ast.GeneratorExp, frame) -> Value | None:
    """`[Block(cfg) for _ in range(n)]`: the list it builds, item by item when n
    is a known number, else n copies of one item; `(f(t) for t in (q, k, v))` over
    a sequence known item by item: one value per item (each item's calls recorded)."""
    if len(node.generators) != 1 or node.generators[0].ifs or node.generators[0].is_async:
        return None
    gen = node.generators[0]
    count = range_count(an, gen.iter, frame)
    inner = an.new_frame(frame.func, frame.name)
    inner.env = dict(frame.env)
    inner.locals = set(frame.locals)
    inner.local_imports = frame.local_imports
    each = None  # what the target takes each turn: a range's index where None
    if count is None:
        seq = an.eval(gen.iter, frame)
        if isinstance(seq, EndsV):
            return _over_ends(an, node, frame, inner, seq)
        items = as_items(seq)
        if items is None:
            # A sequence or tensor of known length, its items alike:
            # `[Block(r) for r in torch.linspace(0, p, depth)]` builds depth blocks.
            walked = loops.of_value(an, seq)
            if walked.count is None or walked.items is not None:
                return None
            count, each = walked.count, walked.item
        elif len(items) > MAX_UNROLL:
            return None
    if count is None:
        out = []
        for i, item in enumerate(items):
            inner.records = {}
            an.assign(gen.target, item, inner, None)
            out.append(an.eval(node.elt, inner))
            for key, rec in inner.records.items():
                frame.records[(*key, "item", i)] = rec
        return TupleV(tuple(out))
    inner.records = frame.records
    n = count.value
    # `range(a, b)` counts from a: the index each turn takes, where a is known
    start = _range_start(an, gen.iter, frame) if each is None else None  # type: ignore[arg-type]
    if n is not None and n <= MAX_UNROLL:
        items = []
        for i in range(n):
            index = IntV(None if start is None else Expr.const(start + i))
            an.assign(gen.target, index if each is None else each, inner, None)
            with collected(inner) as turn:
                items.append(an.eval(node.elt, inner))
            merge(frame.records, turn, ONE, "")  # each item's calls count
        return TupleV(tuple(items))
    an.assign(gen.target, IntV(None) if each is None else each, inner, None)
    walrus.inexact()  # one turn stands for all: what a walrus bound is not known
    with (
        collected(inner) as turn,
        storages.repeated_turn(loops.found_values(inner.env, gen.target)),
    ):
        item = an.eval(node.elt, inner)
    merge(frame.records, turn, count, "comprehension")  # count times
    return ModuleListV((item,), count=count)


def _over_ends(an: Analyzer, node, frame, inner, seq: EndsV) -> Value | None:
    """A comprehension over one or more items known at their ends (framed.py): its
    element's first and last, and one turn for any item, counted `count` times."""
    ends = framed.ends_of(an, node, inner, seq)
    if ends is None:
        return None
    inner.records = frame.records
    an.assign(node.generators[0].target, seq.item, inner, None)
    walrus.inexact()
    with collected(inner) as turn:
        item = an.eval(node.elt, inner)
    merge(frame.records, turn, seq.count, "comprehension")
    return EndsV(ends[0], ends[1], item, seq.count)


def range_count(an: Analyzer, it: ast.expr, frame) -> Expr | None:
    """Trip count of `range(n)` / `range(a, b)` when the bounds are known."""
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
        return None
    if it.keywords or not 1 <= len(it.args) <= 2 or "range" in frame.env:
        return None
    vals = [an.eval(a, frame) for a in it.args]
    if not all(isinstance(v, IntV) and v.value is not None for v in vals):
        return None
    exprs = [v.value for v in vals]  # type: ignore[union-attr]
    count = exprs[0] if len(exprs) == 1 else exprs[1] - exprs[0]
    if count.value is not None and count.value < 0:
        return Expr.const(0)
    return count


def _range_of_a_tensor(an: Analyzer, it: ast.expr, frame) -> bool:
    """`range(...)` (the builtin) with a tensor among its bounds."""
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
        return False
    if it.keywords or not 1 <= len(it.args) <= 3 or "range" in frame.env:
        return False
    return any(isinstance(an.eval(a, frame), TensorV) for a in it.args)


def _range_start(an: Analyzer, it: ast.Call, frame) -> int | None:
    """The first value of a `range(...)` loop range_count counted: 0, or `a` of
    `range(a, b)` when known (None: the loop variable's values are not known)."""
    if len(it.args) == 1:
        return 0
    v = an.eval(it.args[0], frame)
    if isinstance(v, IntV) and v.value is not None and v.value.value is not None:
        return v.value.value
    return None


def _decorated(cd: ClassDef, name: str) -> bool:
    for d in cd.node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        found = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
        if found == name:
            return True
    return False


def _transform_bases(cd: ClassDef, seen: frozenset = frozenset()) -> list[ClassDef]:
    """The project bases of cd, for a dataclass's fields: those in its file, and in
    other files where the class's analyzer follows them (target runs)."""
    owner = cd.owner
    if owner is None or cd.key in seen:
        return []
    return [b for b in base_classes(owner, cd) if b.key not in seen]


def is_dataclass(cd: ClassDef, _seen: frozenset = frozenset()) -> bool:
    """`@dataclass`, or a subclass of a `@dataclass_transform()` class (PEP 681:
    `PreTrainedConfig`, whose `__init_subclass__` makes every subclass one)."""
    if _decorated(cd, "dataclass"):
        return True
    return any(_transforms(b, _seen | {cd.key}) for b in _transform_bases(cd, _seen))


def _transforms(cd: ClassDef, seen: frozenset) -> bool:
    """Whether a dataclass_transform base is above cd (its subclasses are dataclasses)."""
    return _decorated(cd, "dataclass_transform") or any(
        _transforms(b, seen | {cd.key}) for b in _transform_bases(cd, seen)
    )


def dataclass_fields(an: Analyzer, cd: ClassDef) -> list[tuple[str, ast.expr | None, ClassDef]]:
    """The fields a dataclass's __init__ takes, in order: its dataclass bases' first
    (a field a subclass redefines keeps its place), then its own; `ClassVar`s and
    `field(init=False)` are no parameters. Each with its default and its class."""
    out: dict[str, tuple[ast.expr | None, ClassDef]] = {}
    for base in reversed(base_classes(an, cd)):
        if is_dataclass(base):
            for name, default, owner in dataclass_fields(an, base):
                out[name] = (default, owner)
    for name, default in own_fields(cd.node):
        out[name] = (default, cd)
    return [(name, default, owner) for name, (default, owner) in out.items()]


def own_fields(node: ast.ClassDef) -> list[tuple[str, ast.expr | None]]:
    """The fields the class's own body declares, with their defaults: read off the
    tree once and kept on it (a config is built at every call of what builds it,
    and each annotation was unparsed again each time)."""
    known = node.__dict__.get(_OWN_FIELDS)
    if known is None:
        known = [
            (stmt.target.id, stmt.value)
            for stmt in node.body
            if isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and "ClassVar" not in ast.unparse(stmt.annotation)
            and not _init_false(stmt.value)
        ]
        setattr(node, _OWN_FIELDS, known)
    return known


_OWN_FIELDS = "_shapelint_own_fields"


def _init_false(node: ast.expr | None) -> bool:
    return (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", "")) == "field"
        and any(
            kw.arg == "init" and isinstance(kw.value, ast.Constant) and kw.value.value is False
            for kw in node.keywords
        )
    )


def construct_config(an: Analyzer, cd: ClassDef, args, kwargs) -> Value:
    """A dataclass instance: its fields at their defaults, overridden by the call,
    then what its `__post_init__` sets (`self.head_dim = self.dim // self.n_head`)."""
    values: dict[str, Value] = {}
    for i, (name, default, owner) in enumerate(dataclass_fields(an, cd)):
        if i < len(args):
            values[name] = args[i]
        elif name in kwargs:
            values[name] = kwargs[name]
        elif default is not None:
            where = owner.owner or an
            top = where.new_frame(None, owner.name)
            top.env = where.module_env
            values[name] = _default_value(where, default, top)
        else:
            values[name] = UNKNOWN
    if torch_base(an, cd) == MAPPING:  # dict.__new__'s empty entries
        values[ITEMS] = dict_value({})
    post = find_method(an, cd, "__post_init__")
    if post is not None:
        recorder = SelfRecorder(cd.key)
        recorder.attrs.update(values)
        run_init(an, post, recorder, [], {})
        values = recorder.attrs
    return ObjectV(CONFIG_PREFIX + cd.key, tuple(values.items()))


def rejected_call(an: Analyzer, cd: ClassDef, n_args: int, names: list[str]) -> str | None:
    """Why Python would refuse `cd(<n_args positional>, name=...)` (an unknown
    keyword, too many positional arguments, a required one missing), naming what
    the constructor takes; None when it would accept the call or the analysis
    cannot tell (a constructor it does not see, `**kwargs`)."""
    if is_dataclass(cd):
        fields = dataclass_fields(an, cd)
        params = [name for name, _, _ in fields]
        required = [name for name, default, _ in fields if default is None]
        open_kw = open_pos = False
        what = "fields"
    else:
        init = find_method(an, cd, "__init__")
        if init is None:
            return None
        a = init.node.args
        positional = [p.arg for p in [*a.posonlyargs, *a.args]][1:]
        n_req = len(positional) - len(a.defaults)
        params = positional + [p.arg for p in a.kwonlyargs]
        required = positional[:n_req] + [
            p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is None
        ]
        open_kw, open_pos = a.kwarg is not None, a.vararg is not None
        what = "parameters"
    taken = f"({what}: {', '.join(params) or 'none'})"
    if n_args > len(params) and not open_pos:
        return f"{cd.name}() takes {len(params)} positional arguments but {n_args} were given"
    for name in names:
        if name not in params and not open_kw:
            near = difflib.get_close_matches(name, params, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            return f"{cd.name}() got an unexpected keyword argument {name!r}{hint} {taken}"
    given = set(params[:n_args]) | set(names)
    missing = [name for name in required if name not in given]
    if missing:
        return f"{cd.name}() missing required argument {missing[0]!r} {taken}"
    return None


def _default_value(an: Analyzer, node: ast.expr, frame) -> Value:
    """`field(default=...)`, or what `field(default_factory=f)` gives: f called with
    no argument for each instance, as dataclasses' `__init__` does (`dict` an empty
    dict of its own)."""
    if (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", "")) == "field"
    ):
        for kw in node.keywords:
            if kw.arg == "default":
                return an.eval(kw.value, frame)
            if kw.arg == "default_factory":
                made = ast.copy_location(ast.Call(kw.value, [], []), kw.value)
                return an.eval(ast.fix_missing_locations(made), frame)
        return UNKNOWN
    return an.eval(node, frame)


# ---------------------------------------------------------------------- classes


def init_param(fd: FuncDef, name: str) -> Value:
    """A constructor parameter with neither annotation nor default: a size symbol
    (`dim`, `depth`), so that the layers it sizes carry it into the formulas; a
    caller's value replaces it when the module is built."""
    if fd.cls is not None and fd.node.name == "__init__":
        return IntV(Expr.name(name))
    return UNKNOWN


# ---------------------------------------------------------------------- calls


def computing_function(v: Value) -> bool:
    """A function as a value whose call may run a product: a lambda or def of the
    project, a method bound to its object, a partial, or a library function that
    may (`operator.matmul`, `torch.bmm`; a class constructs, which runs none)."""
    if isinstance(v, (ClosureV, decorators.FunctionV, FunctionRefV, PartialV, BoundMethodV)):
        return True
    if isinstance(v, TensorMethodV):
        return may_cost(f"torch.Tensor.{v.name}")
    if isinstance(v, LayerClassV):
        leaf = v.qual.rpartition(".")[2]
        return leaf[:1].islower() and may_cost(v.qual)
    return False


def call_value(an: Analyzer, callee: Value, node: ast.Call, args, kwargs, frame):
    """Calling a container (nn.Sequential chains its items) or a class value."""
    if isinstance(callee, ClassRefV):
        cd = an.class_of(callee.name)
        if cd is None:
            return None
        made = namedtuples.of_class(an, cd)
        if made is not None:
            return namedtuples.built(made, args, kwargs) or UNKNOWN
        if typeddicts.is_typed_dict(an, cd):
            return typed_dict_built(node, args, kwargs)
        made_by_new = newly_made(an, cd, node, args, kwargs, frame)
        return made_by_new if made_by_new is not None else an.construct(cd, args, kwargs)
    if isinstance(callee, decorators.FunctionV) and callee.fd is not None:
        return _call_function(an, callee.fd, node, args, kwargs, frame)
    if isinstance(callee, FunctionRefV):
        owner = callee.owner or an
        if owner is an:
            return an.call_local(callee.name, node, args, kwargs, frame)
        return an.invoke(owner.functions[callee.name], None, node, args, kwargs, frame)
    if isinstance(callee, LayerClassV):
        return an.call_qualified(callee.qual, node, args, kwargs, False, frame)
    if isinstance(callee, autograd_function.ApplyV) and an.specialize:
        cd = an.class_of(callee.cls)
        return (
            autograd_function.apply(an, cd, ClassRefV(cd.key), node, args, kwargs, frame)
            if cd
            else None
        )
    if isinstance(callee, BoundMethodV) and callee.fd is not None:
        return an.invoke(callee.fd, callee.recv, node, args, kwargs, frame)
    me = frame.env.get("self")
    if isinstance(callee, own_methods.OwnMethodV) and own_methods.callable_on(callee, me):
        return run_on_self(an, callee.fd, me, node, args, kwargs, frame)
    if isinstance(callee, namedtuples.NamedTupleClassV):
        return namedtuples.built(callee, args, kwargs) or UNKNOWN
    if isinstance(callee, TensorMethodV):
        return an.op_value(f"torch.Tensor.{callee.name}", [callee.recv, *args], kwargs, node, frame)
    if isinstance(callee, PartialV):
        merged = {**dict(callee.kwargs), **kwargs}
        return an.call_value(callee.func, node, [*callee.args, *args], merged, frame)
    if isinstance(callee, ObjectV) and callee.kind.startswith("<class>"):
        cd = an.class_of(callee.kind[7:])
        call = own_call(an, cd) if cd is not None else None
        if call is not None:  # Python calls type(obj).__call__: the project's own
            return an.invoke(call, callee, node, args, kwargs, frame)
        if cd is not None and call_unsure(an, cd):
            why = f"{cd.name}: which __call__ runs is not known (the order of its bases)"
            return an.unknown_call(node, args, kwargs, frame, why)
        if cd is not None and "forward" not in all_methods(cd.owner or an, cd):
            base = torch_base(an, cd)
            if base is not None:  # forward inherited from the torch layer
                return torch_forward(an, base, callee, node, args, kwargs, frame)
    if isinstance(callee, ModuleListV) and callee.sequential:
        return _call_sequential(an, callee, node, args, kwargs, frame)
    if isinstance(callee, OptionalV) and is_module(callee.value):
        # calling None raises TypeError: a path that goes on called the module
        return an.call_value(callee.value, node, args, kwargs, frame)
    return None


# Where an instance of a container's subclass keeps the layers its torch
# constructor was given (`super().__init__(*layers)`); no Python name can clash.
LAYERS = "<layers>"
MAPPING = "builtins.dict"  # a project class deriving from dict or OrderedDict
_MAPPINGS = {MAPPING, "collections.OrderedDict", "typing.OrderedDict"}


def mapping_item(me: Value, key: Value) -> Value | None:
    """`inst[key]` of an instance of a dict subclass, as dict.__getitem__ answers;
    None when me is not one."""
    if not isinstance(me, ObjectV) or all(k != ITEMS for k, _ in me.attrs):
        return None
    items = me.attr(ITEMS)
    if isinstance(items, ObjectV) and isinstance(key, StrV) and key.value is not None:
        return items.attr(key.value)
    return UNKNOWN


def holds_entries(me: Value) -> bool:
    """Whether me is an instance of a dict subclass (its entries kept apart)."""
    if isinstance(me, SelfRecorder):
        return ITEMS in me.attrs
    return isinstance(me, ObjectV) and any(k == ITEMS for k, _ in me.attrs)


def entries_assigned(me: Value, key: Value, value: Value) -> Value | None:
    """`me[key] = value` where me is an instance of a dict subclass whose class
    defines no `__setitem__` of its own: dict's store into its entries. The
    instance being built changes in place (and is returned); a built one is
    returned changed. None when me holds no entries."""
    if isinstance(me, SelfRecorder) and ITEMS in me.attrs:
        items = me.attrs[ITEMS]
    elif isinstance(me, ObjectV) and any(k == ITEMS for k, _ in me.attrs):
        items = me.attr(ITEMS)
    else:
        return None
    known = isinstance(items, ObjectV) and items.kind == DICT_KIND
    new = item_assigned(items, key, value) if known else None
    return _with_entries(me, new if new is not None else UNKNOWN)


def entries_forgotten(me: ObjectV | SelfRecorder) -> Value:
    """me with its entries not known (a change of dict's the analysis does not follow)."""
    return _with_entries(me, UNKNOWN)


def _with_entries(me: ObjectV | SelfRecorder, items: Value) -> Value:
    if isinstance(me, SelfRecorder):
        me.attrs[ITEMS] = items
        return me
    attrs = dict(me.attrs)
    attrs[ITEMS] = items
    return ObjectV(me.kind, tuple(attrs.items()))


def _dict_method(me: ObjectV | SelfRecorder, meth: str, args: list | None, frame) -> Value | None:
    """`super().name(...)` in a method of a dict subclass: dict's own method on the
    instance's entries (a dict known key by key: a key it lacks is absent). A store
    rebinds `self` in the method's frame, which the caller takes back as any
    change a method makes to its `self` (in_place.py); the instance being built
    (a dataclass's `__post_init__`) changes in place. A change dict's method makes
    that is not modelled here leaves the entries unknown. args None: keywords were
    given."""
    building = isinstance(me, SelfRecorder)
    if args is None:
        if meth in MAPPING_MUTATORS and building:
            me.attrs[ITEMS] = UNKNOWN
        elif meth in MAPPING_MUTATORS and type(frame.env.get("self")) is ObjectV:
            frame.env["self"] = UNKNOWN
        return None
    items = me.attrs.get(ITEMS, UNKNOWN) if building else me.attr(ITEMS)
    known = isinstance(items, ObjectV) and items.kind == DICT_KIND
    key = args[0] if args else None
    name = key.value if isinstance(key, StrV) else None
    if meth == "__getitem__" and len(args) == 1:
        if building:
            return items.attr(name) if known and name is not None else UNKNOWN
        return mapping_item(me, key)
    if meth == "__setitem__" and len(args) == 2:
        changed = entries_assigned(me, key, args[1])
        if not building:
            frame.env["self"] = changed
        return NoneV()
    if meth in ("get", "__contains__") and 1 <= len(args) <= (2 if meth == "get" else 1):
        if not known or name is None:
            return UNKNOWN if meth == "get" else BoolV(None)
        held = any(k == name for k, _ in items.attrs)
        if meth == "__contains__":
            return BoolV(held)
        return items.attr(name) if held else args[1] if len(args) == 2 else NoneV()
    if meth == "__len__" and not args and known:
        return IntV(Expr.const(len(items.attrs)))
    if meth in MAPPING_MUTATORS and building:
        me.attrs[ITEMS] = UNKNOWN  # a change to the entries not modelled
    elif meth in MAPPING_MUTATORS and type(frame.env.get("self")) is ObjectV:
        frame.env["self"] = UNKNOWN
    return None


# dict's methods that change its entries.
MAPPING_MUTATORS = frozenset(
    {"__setitem__", "__delitem__", "pop", "popitem", "clear", "update", "setdefault", "__ior__"}
)


def torch_init(an: Analyzer, base: str, recorder: SelfRecorder, node, args, kwargs, frame):
    """The torch base's __init__ on a project instance: a layer's attributes (its
    Parameters, sizes), or a container's layers."""
    if base in _CONTAINERS:
        recorder.attrs[LAYERS] = _container(args, sequential=_CONTAINERS[base])
        return
    if base == MAPPING:
        given = mapping(args[0]) if len(args) == 1 else dict_value({}) if not args else None
        recorder.attrs[ITEMS] = (
            dict_value({**dict(given.attrs), **kwargs}) if given is not None else UNKNOWN
        )
        return
    layer = an.call_qualified(base, node, args, kwargs, False, frame)
    if isinstance(layer, ObjectV):
        recorder.attrs.update(dict(layer.attrs))


def base_init(an: Analyzer, qual: str, node, args, kwargs, open_kwargs, frame) -> Value | None:
    """`nn.Sequential.__init__(self, *layers)` in the constructor of a class that
    derives from it: the base's __init__ run on self, as `super().__init__` runs
    it; None when the call is not that."""
    me = args[0] if args else None
    func = getattr(frame, "func", None)
    if not (isinstance(me, SelfRecorder) and func is not None and func.cls is not None):
        return None
    if qual == "torch.nn.Module.__init__" and len(args) == 1 and not kwargs and not open_kwargs:
        # `nn.Module.__init__(self)` first thing, as super().__init__() is; later it
        # would empty the registries of what was stored before (left unknown)
        return NoneV() if set(me.attrs) <= {"training"} else None
    base = torch_base(an, func.cls)
    if base is None or qual != f"{base}.__init__" or base == MAPPING:
        return None
    if open_kwargs:  # layers not known one by one
        if base not in _CONTAINERS:
            return None
        me.attrs[LAYERS] = ModuleListV((), _CONTAINERS[base], known=False)
        return NoneV()
    torch_init(an, base, me, node, list(args[1:]), kwargs, frame)
    return NoneV()


def torch_forward(an: Analyzer, base: str, me: ObjectV, node, args, kwargs, frame) -> Value:
    """The torch base's forward on a project instance (inherited, or `super().forward`):
    a container chains its layers, a layer is its stub with the instance's attributes."""
    if base == MAPPING:
        return an.unknown_call(node, args, kwargs, frame, "a dict is not callable")
    if base in _CONTAINERS:
        layers = _registered(an, me)
        if layers is not None and layers.sequential:
            return _call_sequential(an, layers, node, args, kwargs, frame)
        return an.unknown_call(node, args, kwargs, frame, f"{base} of unknown layers")
    return an.op_value(f"{base}.__call__", [ObjectV(base, me.attrs), *args], kwargs, node, frame)


def _registered(an: Analyzer, me: ObjectV) -> ModuleListV | None:
    """A container subclass's layers in the order torch registers them: those its
    constructor was given, then every module assigned to an attribute or added
    (`self.add_module('bn', ...)`) after; None when an attribute set after them
    might be a module the analysis did not build."""
    keys = [k for k, _ in me.attrs]
    layers = me.attr(LAYERS)
    if not isinstance(layers, ModuleListV) or not layers.known or layers.count is not None:
        return None
    added = []
    marked = plain.names(me.attrs)
    for k, v in me.attrs[keys.index(LAYERS) + 1 :]:
        if isinstance(v, (IntV, FloatV, BoolV, StrV, NoneV, TensorV)) or _never_a_module(an, v):
            continue
        if v is UNKNOWN and k in marked:
            continue  # not known, but surely no module (`self.config.update(c)`: plain.py)
        if not is_module(v):
            return None
        if isinstance(v, ObjectV) and v.kind.startswith("<class>"):
            cd = an.class_of(v.kind[7:])  # a project object: a module only if it runs
            if cd is None or ("forward" not in all_methods(cd.owner or an, cd)
                              and torch_base(an, cd) is None):  # fmt: skip
                return None
        added.append(v)
    return ModuleListV(layers.items + tuple(added), layers.sequential)


def _never_a_module(an: Analyzer, v: Value) -> bool:
    """A value nn.Module.__setattr__ stores as a plain attribute, never registering
    it: a list, tuple or dict (modules in it included), an instance of a project
    class no nn.Module is a base of (plain.plain_instance)."""
    if isinstance(v, TupleV) or (isinstance(v, ObjectV) and v.kind in DICT_KINDS):
        return True
    return plain.plain_instance(an, v)


def iterated(an: Analyzer, v: Value) -> Value:
    """What iterating v walks: an instance of a container's subclass (`for mod in
    self` in a Sequential subclass's forward) walks its registered layers, as
    Sequential.__iter__ does (a module list of unknown length where an attribute
    set after them may be a module the analysis did not build); anything else
    is itself."""
    if not (isinstance(v, ObjectV) and v.kind.startswith("<class>")):
        return v
    cd = an.class_of(v.kind[7:])
    if cd is None or torch_base(an, cd) not in _CONTAINERS:
        return v
    layers = _registered(an, v)
    return layers if layers is not None else ModuleListV(known=False)


def inherited_forward(
    an: Analyzer, base: str, me: ObjectV, cd: ClassDef, args: list, frame, kwargs=None
):
    """A target whose forward is its torch base's, given args (and kwargs): one call
    record, at the class, holding what the base's forward ran."""
    node = ast.copy_location(ast.Call(ast.Name(cd.name, ast.Load()), [], []), cd.node)
    saved, children = frame.records, {}
    frame.records = children
    try:
        value = torch_forward(an, base, me, node, args, kwargs or {}, frame)
    finally:
        frame.records = saved
    cost = add_costs(r.cost for r in children.values())
    rec = an.record(node, frame, f"call {cd.name}.forward", None, args, value, cost)
    rec.children = list(children.values())
    return value


def _call_sequential(an: Analyzer, seq: ModuleListV, node, args, kwargs, frame) -> Value:
    if seq.ends is not None and len(args) == 1 and not kwargs:
        saved = frame.records
        frame.records = {}  # its layers' calls cost what no one counted
        try:
            x = framed.chained(an, seq.ends, node, args[0], frame)
        finally:
            frame.records = saved
        why = "Sequential of a symbolic number of layers"
        an.record(node, frame, "call nn.Sequential", None, args, x, unknown_cost(why))
        return x
    if len(args) != 1 or kwargs or not seq.known:
        an.record(
            node,
            frame,
            "call nn.Sequential",
            None,
            args,
            UNKNOWN,
            unknown_cost("Sequential of unknown layers"),
        )
        return UNKNOWN
    x = args[0]
    saved, chained = frame.records, frame.chained
    children: dict = {}
    frame.records = children
    try:
        if seq.count is not None:
            x = _repeat_call(an, seq.items[0], seq.count, node, x, frame)
        else:
            for i, item in enumerate(seq.items):
                frame.records = {}
                if i:
                    frame.chained = node
                x = an.call_value(item, node, [x], {}, frame)
                for key, rec in frame.records.items():
                    children[(*key, i)] = rec
    finally:
        frame.records = saved
        frame.chained = chained
    cost = add_costs(r.cost for r in children.values())
    rec = an.record(node, frame, "call nn.Sequential", None, args, x, cost)
    rec.children = list(children.values())
    return x


def _repeat_call(an, item, count: Expr, node, x, frame) -> Value:
    """n copies of one layer in a row: its cost n times, if it keeps the shape."""
    y = an.call_value(item, node, [x], {}, frame)
    for rec in frame.records.values():
        rec.cost = scale_cost(rec.cost, count)
    if y != x:
        return UNKNOWN
    return y


def method_call(an: Analyzer, recv: Value, func: ast.Attribute, node, args, kwargs, frame):
    """Module-building methods: list.append on a module list, register_buffer,
    add_module; dict access on dict-like values."""
    attr = func.attr
    if attr in ("named_children", "children"):
        walked = children(an, recv, attr, args, kwargs)
        if walked is not None:
            return walked
    if isinstance(recv, SelfRecorder):
        # a project class's own `register_parameter` (a base's override) runs as written
        got = registering.bound(attr, args, kwargs) if attr in registering.METHODS else None
        if got is not None and not _overridden(an, recv, attr):
            return _register_on_self(recv, attr, *got)
        if attr == "requires_grad_" and an.specialize:
            _set_requires_grad(an, recv, recv, args, kwargs, frame)
            return recv
        if attr in ("train", "eval") and an.specialize and _torch_mode_method(an, recv, attr):
            return _set_mode(recv, _mode_flag(attr, args, kwargs), recv, frame)
        return None
    if (
        attr in ("train", "eval")
        and an.specialize
        and is_module(recv)
        and _torch_mode_method(an, recv, attr)
    ):
        # `Block(dim).eval()`: a module just built, which nothing else holds yet
        fresh = isinstance(func.value, ast.Call)
        new = _set_mode(recv, _mode_flag(attr, args, kwargs), _self_of(frame), frame, fresh)
        an.record(node, frame, f"call {attr}", None, [], new, Cost(*(Expr.const(0),) * 3))
        return new
    if (
        attr == "requires_grad_"
        and an.specialize
        and isinstance(recv, ParameterV)
        and _made_parameter(an, func.value, frame)
    ):
        # `nn.Parameter(t).requires_grad_(False)`: Parameter() makes a new object,
        # which nothing holds yet: only the value the call returns changes
        flag = args[0] if args else kwargs.get("requires_grad", BoolV(True))
        grad = flag.value if isinstance(flag, BoolV) else None
        return ParameterV(recv.shape, recv.dtype, grad)
    if (
        attr == "requires_grad_"
        and an.specialize
        and (is_module(recv) or isinstance(recv, ParameterV))
    ):
        return _set_requires_grad(an, recv, _self_of(frame), args, kwargs, frame)
    if attr == "requires_grad_" and an.specialize and recv is UNKNOWN:
        # `for p in m.parameters(): p.requires_grad_(False)`: which parameter it
        # freezes is not known
        trainability_lost()
        return UNKNOWN
    if (
        attr in registering.METHODS
        and an.specialize
        and aliasing.recorders()
        and isinstance(recv, ObjectV)
        and is_module(recv)
        and not _overridden(an, recv, attr)
    ):
        # `self.head.register_parameter("weight", p)` while modules are built
        name, value = registering.bound(attr, args, kwargs) or (UNKNOWN, UNKNOWN)
        if attr == "register_buffer" and isinstance(value, TensorV):
            value = as_buffer(value)
        known = name.value if isinstance(name, StrV) else None
        store_attr(an, recv, known, value, frame)
        return NoneV()
    if isinstance(recv, ModuleListV) and attr in ("append", "extend", "insert"):
        new = _grown(recv, attr, args)
        _store(an, func.value, new, frame)
        # the one object grew: every other holder of it sees it (a partial of it,
        # another module's attribute), not the list before (complete 512 for 1,024)
        _grown_everywhere(an, recv, new)
        return NoneV()
    if isinstance(recv, ModuleListV) and attr in ("add_module", "register_module"):
        # A new name appends; a name of an item ("0") replaces it.
        name = args[0] if args else UNKNOWN
        known = name.value if isinstance(name, StrV) and name.value is not None else None
        if known is not None and recv.known and known in item_names(recv) and len(args) == 2:
            at = item_names(recv).index(known)  # torch replaces the module of that name
            items = (*recv.items[:at], args[1], *recv.items[at + 1 :])
            new = replace(recv, items=items, names=item_names(recv))
        elif known is not None and not known.isdigit():
            new = _grown(recv, "append", args[1:], known)
        else:
            new = ModuleListV((), recv.sequential, known=False)
        _store(an, func.value, new, frame)
        return NoneV()
    if isinstance(recv, ModuleListV) and attr in _LIST_MUTATORS:
        _store(an, func.value, ModuleListV((), recv.sequential, known=False), frame)
        return None
    if attr in ("values", "items", "keys") and not args and not kwargs:
        held = _module_dict_items(an, recv)
        if held is not None:  # a ModuleDict subclass's own modules, in registration order
            recv = dict_value(dict(held), REGISTERED_DICT_KIND)
    if isinstance(recv, ObjectV) and recv.kind in DICT_KINDS:
        if attr == "get" and args and isinstance(args[0], StrV) and args[0].value is not None:
            v = recv.attr(args[0].value)
            if v is UNKNOWN and args[0].value not in dict(recv.attrs):
                return args[1] if len(args) > 1 else NoneV()
            return v
        if attr in ("values", "items", "keys"):
            if attr == "values":
                return TupleV(tuple(v for _, v in recv.attrs))
            if attr == "keys":
                return TupleV(tuple(StrV(k) for k, _ in recv.attrs))
            return TupleV(tuple(TupleV((StrV(k), v)) for k, v in recv.attrs))
        if attr == "update" and len(args) <= 1:
            other = args[0] if args else dict_value({})
            if isinstance(other, ObjectV) and other.kind in DICT_KINDS:
                merged = dict_value({**dict(recv.attrs), **dict(other.attrs), **kwargs}, recv.kind)
                if isinstance(func.value, ast.Name):
                    # `kwargs.update(context=normed)`: the name sees the new entries
                    _store(an, func.value, merged, frame)
                    return NoneV()
                if (
                    isinstance(func.value, ast.Attribute)
                    and isinstance(func.value.value, ast.Name)
                    and store_attribute(an, func.value, merged, frame)
                ):
                    # `self.config.update(config)`: the attribute holds the merged
                    # entries (its other holders are forgotten)
                    return NoneV()
        key = args[0].value if args and isinstance(args[0], StrV) else None
        if attr in ("pop", "setdefault") and key is not None and len(args) <= 2 and not kwargs:
            # `padding = kwargs.pop('padding', '')`: the entry, and the dict without it
            entries = dict(recv.attrs)
            if key in entries:
                if attr == "pop":
                    found = entries.pop(key)
                    _store(an, func.value, dict_value(entries, recv.kind), frame)
                    return found
                return entries[key]
            default = args[1] if len(args) > 1 else (NoneV() if attr == "setdefault" else None)
            if default is not None:
                if attr == "setdefault":
                    _store(an, func.value, dict_value({**entries, key: default}, recv.kind), frame)
                return default
        if (
            attr == "pop"
            and len(args) == 2
            and not kwargs
            and not recv.attrs
            and _hashable(args[0])
        ):
            # `kwargs.pop(name, None)` with a name not known, on an empty dict: no entry
            # to take, whatever the key; the default, and the dict as it was
            return args[1]
        if attr in ("update", "pop", "setdefault", "__setitem__", "clear", "popitem"):
            _store(an, func.value, UNKNOWN, frame)
            if recv.kind == DICT_KIND:
                # entries changed in place, the object stays a dict: no module, no
                # Parameter (what `named_children()` and the counts need of it)
                _mark_plain(func.value, frame)
            return UNKNOWN
    return None


def _mark_plain(target: ast.expr, frame) -> None:
    """`self.name`, just stored unknown, marked surely plain on the module being built."""
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        me = frame.env.get(target.value.id)
        if isinstance(me, SelfRecorder) and me.attrs.get(target.attr) is UNKNOWN:
            plain.mark(me.attrs, target.attr, True)


# An attribute of a module's state the analysis could not follow (a name
# registered under a value it does not know, a nested store it cannot place, a
# requires_grad it cannot tell): its parameter count is then not known.
UNFOLLOWED = "<unfollowed>"
REQUIRES_GRAD_UNKNOWN = aliasing.REQUIRES_GRAD_UNKNOWN


def _hashable(key: Value) -> bool:
    """A string, number, bool or None; or a key not known, taken as any other (an
    unhashable one raises TypeError: the analysis does not follow a raise it cannot
    see). A list, dict or set, or a tuple that may hold one, is not."""
    return key is UNKNOWN or isinstance(key, (StrV, IntV, FloatV, BoolV, NoneV))


def _self_of(frame) -> SelfRecorder | None:
    rec = frame.env.get("self")
    return rec if isinstance(rec, SelfRecorder) else None


def _made_parameter(an, node: ast.expr, frame) -> bool:
    """Whether node is a call of nn.Parameter itself (a new Parameter object)."""
    if not isinstance(node, ast.Call):
        return False
    qual = an.imports.resolve(node.func, frame.locals, frame.local_imports)
    return qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter")


def _set_requires_grad(an, recv: Value, owner, args, kwargs, frame) -> Value:
    """`m.requires_grad_(False)`, `p.requires_grad_(flag)`: every parameter below
    recv takes the flag, in the module being built (found by identity)."""
    flag_v = args[0] if args else kwargs.get("requires_grad", BoolV(True))
    flag = flag_v.value if isinstance(flag_v, BoolV) else None
    # outside the constructor's own frame (a helper it calls, `freeze(self.head)`),
    # the modules being built may hold recv
    owners = [owner] if owner is not None else list(aliasing.recorders())
    if not owners:
        if getattr(frame, "runs", False):
            aliasing.retrained()  # a forward's: not placed (it was ignored: wrong backward)
        return recv
    if flag is None:
        trainability_lost(owners)
        return recv
    if isinstance(recv, SelfRecorder):
        for k, v in list(recv.attrs.items()):
            recv.attrs[k] = with_requires_grad(v, flag)
        return recv
    new = with_requires_grad(recv, flag)
    found = [replace_identical(o, recv, new, frame) for o in owners]
    if not any(found):
        trainability_lost(owners)
    return new


def retrains(obj: Value, flag: Value) -> bool:
    """`obj.requires_grad = flag` may change what autograd tracks: on a Parameter,
    or a tensor but for `False` on one known to need no grad (a grid made by
    `arange`: nothing changes)."""
    if isinstance(obj, ParameterV):
        return True
    if not isinstance(obj, TensorV):
        return False
    return not (isinstance(flag, BoolV) and flag.value is False and obj.grad is False)


def trainability_lost(owners=None) -> None:
    """A requires_grad set on what the analysis cannot place: which parameters of
    the modules being built (`owners`, else all of them) are trainable is not known,
    nor, therefore, which gradients backward computes."""
    for o in aliasing.recorders() if owners is None else owners:
        o.attrs[REQUIRES_GRAD_UNKNOWN] = UNKNOWN


def _torch_mode_method(an: Analyzer, recv: Value, attr: str) -> bool:
    """`m.train` / `m.eval` is nn.Module's: no class of the project on the way
    defines its own."""
    if isinstance(recv, ModuleListV) or (
        isinstance(recv, ObjectV) and not recv.kind.startswith("<class>")
    ):
        return True  # a torch layer or container
    key = recv.cls if isinstance(recv, SelfRecorder) else getattr(recv, "kind", "")[7:]
    cd = an.class_of(key)
    return cd is not None and attr not in all_methods(cd.owner or an, cd)


def _mode_flag(attr: str, args, kwargs) -> bool | None:
    if attr == "eval":
        return None if args or kwargs else False
    v = args[0] if args else kwargs.get("mode", BoolV(True))
    return v.value if isinstance(v, BoolV) and len(args) + len(kwargs) <= 1 else None


def _set_mode(
    recv: Value, flag: bool | None, owner: SelfRecorder | None, frame, fresh: bool = False
) -> Value:
    """`m.train(mode)` / `m.eval()`: m and every module below it take the mode,
    in the module being built (found by identity); anywhere else (a forward, a
    module held by no constructor at hand, a flag not known) later reads of
    `training` are undecided (modes.py)."""
    if flag is not None and fresh:
        return in_mode(recv, flag)
    if flag is None or owner is None:
        modes.lose()
        return recv
    if isinstance(recv, SelfRecorder):
        for k, v in list(recv.attrs.items()):
            recv.attrs[k] = in_mode(v, flag)
        if modes.ATTR in recv.attrs:
            recv.attrs[modes.ATTR] = BoolV(flag)
        return recv
    new = in_mode(recv, flag)
    if not replace_identical(owner, recv, new, frame):
        modes.lose()
    return new


def in_mode(v: Value, flag: bool, memo: dict | None = None) -> Value:
    """v after `v.train(flag)`: every module in it (a project module's
    `training`, a list's items) in that mode; a module held twice stays one."""
    memo = {} if memo is None else memo
    if id(v) in memo:
        return memo[id(v)]
    out = v
    # what torch's train() walks: modules and what registers them (a ModuleDict; a
    # plain dict or list of layers is no child)
    if isinstance(v, ObjectV) and (is_module(v) or v.kind == REGISTERED_DICT_KIND):
        attrs = [
            (k, BoolV(flag) if k == modes.ATTR else in_mode(a, flag, memo)) for k, a in v.attrs
        ]
        if v.kind.startswith("torch.nn.") and all(k != modes.ATTR for k, _ in attrs):
            attrs.append((modes.ATTR, BoolV(flag)))  # a torch layer holds it from then on
        out = ObjectV(v.kind, tuple(attrs))
    elif isinstance(v, ModuleListV):
        items = tuple(in_mode(i, flag, memo) for i in v.items)
        out = replace(v, items=items)
    memo[id(v)] = out
    return out


def with_requires_grad(v: Value, flag: bool) -> Value:
    """v with every parameter in it (a module's, a list's) at requires_grad=flag."""
    if isinstance(v, ParameterV):
        return ParameterV(v.shape, v.dtype, flag)
    if isinstance(v, ObjectV) and is_module(v) or isinstance(v, ObjectV) and v.kind in DICT_KINDS:
        return ObjectV(v.kind, tuple((k, with_requires_grad(a, flag)) for k, a in v.attrs))
    if isinstance(v, ModuleListV):
        return replace(v, items=tuple(with_requires_grad(i, flag) for i in v.items))
    return v


def replace_identical(owner: SelfRecorder, old: Value, new: Value, frame) -> bool:
    """Replace the object old (by identity) wherever the module being built holds
    it, and the local names bound to it; whether it was found there."""
    before = dict(owner.attrs)
    _swap_held(owner.attrs, old, new)
    found = any(v is not before[k] for k, v in owner.attrs.items())
    for k, v in list(frame.env.items()):
        if v is old:
            frame.env[k] = new
    return found


def assign_requires_grad(
    an, owner: SelfRecorder | None, target: ast.Attribute, value: Value, frame
):
    """`p.requires_grad = flag` while modules are built (owner: the one whose
    constructor's frame this is, None in a function it calls): the parameter p
    names takes it, where they hold it; anything else (a loop over parameters()
    the analysis does not follow) leaves what is trainable not known."""
    obj = an.eval(target.value, frame)
    flag = value.value if isinstance(value, BoolV) else None
    owners = [owner] if owner is not None else list(aliasing.recorders())
    if isinstance(obj, ParameterV) and flag is not None:
        new = ParameterV(obj.shape, obj.dtype, flag)
        if any([replace_identical(o, obj, new, frame) for o in owners]):
            return
    elif type(obj) is TensorV and flag is False and (owner is None or obj.grad is False):
        # `pe = torch.zeros(n, d); pe.requires_grad = False`: a plain tensor that
        # requires no grad keeps its flag, and no Parameter is that object (in a
        # function the constructor calls, a tensor that run made). A flag set True
        # makes a tensor autograd tracks wherever it is held, which the analysis
        # does not follow: what is trainable, and so the backward, is not known
        return
    trainability_lost(owners)


def store_shared(an: Analyzer, owner: SelfRecorder, target: ast.Attribute, value: Value) -> bool:
    """`self.config.mode = v` while the module is built: store_path, and the
    object the path goes through is changed, not copied. Python has one object
    there, which other names may hold: the name the constructor was handed it by
    (`self.config = config`), the caller's own after `super().__init__(config)`.
    Each holder of that very value (by identity, as store_attr places a store
    through another name: a frame's name, a module being built) takes the
    changed one; a holder of an equal value, which the analysis may have made
    of the same object (a join of paths), is forgotten, as in_place.py forgets
    the other holders of an object a callee changed. A memoised call hands
    back its objects anew (`fresh_objects`), so two results of one call are
    not one object here either."""
    olds = _path_values(owner, target)
    if not store_path(owner, target, value):
        return False
    for old, new in zip(olds, _path_values(owner, target)):
        if old is new or old == new or not _plain_object(an, old):
            continue
        for r in aliasing.recorders():
            _swap_held(r.attrs, old, new)
        for f in list(in_place.LIVE):
            for k, v in list(f.env.items()):
                if v is old:
                    f.env[k] = new
        in_place.forget_object(an, old)
    return True


def data_replaced(owner: SelfRecorder, target: ast.Attribute, value: Value) -> None:
    """`self.conv.weight.data = u` while the module is built, u not known to be of
    t's shape: Python changes t in place, so every holder of t (the layer whose
    forward reads it, a tied head) holds a tensor of u's shape from then on. The
    analysis has no in-place shape change for a tensor, so each holder of t holds
    an unknown value instead, never t at its old shape (torch would run, or refuse,
    the new one). Of t's shape, the old figure stands: the same sizes, other
    values."""
    olds = _path_values(owner, target)
    old = olds[-1] if olds else None
    if not isinstance(old, TensorV):
        return
    if isinstance(value, TensorV) and old.shape is not None and value.shape == old.shape:
        return
    held_nowhere(old, owner)


def held_nowhere(old: Value, owner: SelfRecorder | None = None) -> None:
    """old, and every module or module list holding it, unknown wherever the modules
    being built (and owner) and the live frames hold them: Python changed old in
    place in a way the analysis does not follow."""

    def at(w: Value) -> Value | None:
        # a stub layer's forward reads its sizes from its constructor's arguments,
        # not from its weight's shape, so the layer itself is no longer known
        holds = _holder(w) and any(a is old for _, a in w.attrs)  # type: ignore[union-attr]
        return UNKNOWN if w is old or holds else None

    _everywhere(_Rebuild(old, at), owner)


def held_as(old: Value, new: Value, through_plain: bool = False) -> None:
    """old (by identity) is new wherever the modules being built and the live
    frames hold it, through the modules, dicts and module lists holding it: one
    object Python changed in place, which every holder sees changed. through_plain:
    through the plain objects of project classes holding it too, each rebuilt once
    (one object stays one)."""
    _everywhere(_Rebuild(old, lambda w: new if w is old else None, through_plain))


def stored_into_built(an: Analyzer, obj: Value, attr: str, value: Value) -> bool:
    """`self.m.deep = True` in a target run's forward (a method of a helper object
    that holds the built module): the module, one object, keeps it wherever it is
    held (the helper, the caller's `self`); its attribute was left as it was, and
    a figure read through it was complete and wrong. False where obj is no built
    module of a project class."""
    if type(obj) is not ObjectV or not obj.kind.startswith("<class>"):
        return False
    cd = an.class_of(obj.kind[len("<class>") :])
    if cd is None or module_class(an, cd) is not True:
        return False
    an.outer_writes += 1
    if an.trial:
        return True
    if in_place.through_property(an, obj, attr):
        held_nowhere(obj)  # its setter decides, not run here
        return True
    new = ObjectV(obj.kind, tuple({**dict(obj.attrs), attr: value}.items()))
    held_as(obj, new, through_plain=True)
    return True


def _everywhere(change: _Rebuild, owner: SelfRecorder | None = None) -> None:
    recorders = [r.attrs for r in aliasing.recorders()]
    for held in (
        recorders
        + ([owner.attrs] if owner is not None else [])
        + [f.env for f in list(in_place.LIVE)]
    ):
        change.into(held)


def _plain_object(an: Analyzer, v: Value) -> bool:
    """An object Python changes in place that is no module: a config, a dict, an
    instance of a project class that is surely no nn.Module (a module being
    built lives on its recorder, shared already)."""
    if type(v) is not ObjectV or v.kind.startswith("torch.nn."):
        return False
    return not v.kind.startswith("<class>") or module_class_of(an, v.kind[7:]) is False


def fresh_objects(an: Analyzer, v: Value, given: list[Value], held: bool = False) -> Value:
    """A memoised call's value handed back again: each plain object it holds (no
    module, none the call was given) a new one of the same value, as a second
    run of the call makes (identity is what store_shared follows), and each plain
    tensor such an object holds (`{"t": torch.zeros(4)}`: the tensor of each call
    is its own, which two buffers registered from them are; storages.renewed_as
    renews the tensors the value is or lists)."""
    if any(v is g for g in given):
        return v
    if held and type(v) is TensorV and v.storage is None:
        # a tensor of its own storage (a view stays: its storage, a given one's
        # perhaps, is what the activations weigh)
        return storages.renewed(v)
    if isinstance(v, TupleV) and v.items:
        items = tuple(fresh_objects(an, i, given, held) for i in v.items)
        return TupleV(items, v.kind) if any(a is not b for a, b in zip(items, v.items)) else v
    if _plain_object(an, v):
        return ObjectV(v.kind, tuple((k, fresh_objects(an, a, given, True)) for k, a in v.attrs))
    return v


def _path_values(owner: SelfRecorder, target: ast.Attribute) -> list[Value]:
    """The objects `self.a.b.c = v` goes through: self.a, then self.a.b."""
    path: list[str] = []
    node: ast.expr = target.value
    while isinstance(node, ast.Attribute):
        path.append(node.attr)
        node = node.value
    path.reverse()
    out: list[Value] = []
    v: Value = owner
    for key in path:
        if isinstance(v, SelfRecorder):
            v = v.attrs.get(key, UNKNOWN)
        elif isinstance(v, ObjectV):
            v = dict(v.attrs).get(key, UNKNOWN)
        else:
            break
        out.append(v)
    return out


def held_at(owner: SelfRecorder, target: ast.Attribute) -> Value:
    """The object `self.a.b.c = v` stores into (self.a.b) as the module being built
    holds it, read without running anything; UNKNOWN where the path is not followed."""
    got = _path_values(owner, target)
    depth = 0
    node: ast.expr = target.value
    while isinstance(node, ast.Attribute):
        depth += 1
        node = node.value
    return got[-1] if got and len(got) == depth else UNKNOWN


def _swap_held(attrs: dict, old: Value, new: Value) -> None:
    """old replaced by new (by identity) wherever attrs holds it, in the modules,
    dicts and module lists they hold too."""
    _Rebuild(old, lambda w: new if w is old else None).into(attrs)


def _holder(v: Value) -> bool:
    return isinstance(v, ObjectV) and (is_module(v) or v.kind in DICT_KINDS)


def _grown_everywhere(an: Analyzer, old: ModuleListV, new: ModuleListV) -> None:
    """old, a module list changed in place into new: new wherever it is held."""
    an.outer_writes += 1
    if not an.trial:
        held_as(old, new)


# What may hold a module, a tensor or a module list (and so be rebuilt round it);
# any other value is kept as it is, without a call.
_CAN_HOLD = (ObjectV, ModuleListV, PartialV, TupleV)


class _Rebuild:
    """One change walked through held values: at(w) gives what w becomes (None:
    look inside), asked of old and of what may hold it only (at gives None for
    any other value). Values are rebuilt through the modules, dicts and module
    lists that hold a changed value, the others kept as they are (the same
    objects: identity is what the stores follow); through_plain: through plain
    objects of project classes too, each once (one object stays one).

    A value found unchanged is remembered (by id, and kept alive here so the id
    stays its own) for the rest of the change: the model's modules, reached from
    every recorder and every live frame, are walked once per change, not once
    per holder (not through plain objects, where a value inside one being
    rebuilt is found unchanged against the object as it was). The walk makes no
    call for a value that holds nothing: on CPython 3.11 each call at the depth
    of a frame-stack chunk boundary maps and unmaps a chunk, and a ModuleList
    append under a deep stack made hundreds of thousands of them."""

    __slots__ = ("old", "at", "plain", "kept", "flat")

    def __init__(self, old: Value, at, through_plain: bool = False):
        self.old = old
        self.at = at
        self.plain: dict | None = {} if through_plain else None
        self.kept: dict[int, Value] = {}
        # module lists, partials and tuples are walked without plain objects (None:
        # by this walk itself; a reference to itself would be a cycle, which the
        # batch analysis, its collector off, would keep alive with all it holds)
        self.flat = _Rebuild(old, at) if through_plain else None

    def into(self, held: dict) -> None:
        """held's values (a recorder's attributes, a frame's env) rebuilt in place."""
        old = self.old
        for k, v in list(held.items()):
            if v is old or isinstance(v, _CAN_HOLD):
                held[k] = self.of(v)

    def of(self, v: Value) -> Value:
        kept = self.kept.get(id(v))
        if kept is not None:
            return kept
        got = self.at(v)
        if got is not None:
            return got
        plain_memo = self.plain
        if (
            plain_memo is not None
            and type(v) is ObjectV
            and v.kind.startswith("<class>")
            and not _holder(v)
        ):
            known = plain_memo.get(id(v))
            if known is not None:
                return known[1]
            plain_memo[id(v)] = (v, v)  # a cycle finds it as it is
            held = self._each(v.attrs, True)
            new = v if held is None else ObjectV(v.kind, held)
            plain_memo[id(v)] = (v, new)
            return new
        new = v
        if _holder(v):
            held = self._each(v.attrs, True)  # type: ignore[union-attr]
            if held is not None:
                new = ObjectV(v.kind, held)  # type: ignore[union-attr]
        elif isinstance(v, ModuleListV):
            items = (self.flat or self)._each(v.items, False)
            if items is not None:
                new = replace(v, items=items)
        elif isinstance(v, PartialV):
            # `functools.partial(run, self.layers)` holds the very object
            flat = self.flat or self
            args = flat._each(v.args, False)
            kwargs = flat._each(v.kwargs, True)
            if args is not None or kwargs is not None:
                new = replace(
                    v,
                    args=v.args if args is None else args,
                    kwargs=v.kwargs if kwargs is None else kwargs,
                )
        elif isinstance(v, TupleV) and v.kind != "tuple":
            items = (self.flat or self)._each(v.items, False)
            if items is not None:
                new = TupleV(items, v.kind)
        if new is v and plain_memo is None:
            # (through plain objects, a value walked inside one being rebuilt
            # sees it as it was: not remembered there)
            self.kept[id(v)] = v
        return new

    def _each(self, items: tuple, keyed: bool) -> tuple | None:
        """items (or the values of (key, value) pairs) rebuilt; None where none
        changed."""
        old = self.old
        out = []
        changed = False
        for item in items:
            a = item[1] if keyed else item
            b = self.of(a) if a is old or isinstance(a, _CAN_HOLD) else a
            if b is not a:
                changed = True
            out.append((item[0], b) if keyed else b)
        return tuple(out) if changed else None


def store_path(owner: SelfRecorder, target: ast.Attribute, value: Value) -> bool:
    """`self.transformer.wte.weight = self.lm_head.weight`: the nested attribute of
    the module being built takes value (the same object: torch then shares it);
    whether the path could be followed."""
    path: list[str] = []
    node: ast.expr = target
    while isinstance(node, ast.Attribute):
        path.append(node.attr)
        node = node.value
    if not (isinstance(node, ast.Name) and node.id == "self") or len(path) < 2:
        return False
    path.reverse()
    head = owner.attrs.get(path[0], UNKNOWN)
    new = _set_in(head, path[1:], value)
    if new is None:
        owner.attrs[UNFOLLOWED] = UNKNOWN
        return False
    owner.attrs[path[0]] = new
    return True


def keeps_state_unbound(qual: str, rest, kwargs, an: Analyzer) -> bool:
    """`torch.nn.Linear.reset_parameters(self)`: a torch layer class's method that
    keeps what a module holds (aliasing.KEEPS_STATE), called through the class with
    no other module among its arguments."""
    cls, _, method = qual.rpartition(".")
    return (
        cls.startswith("torch.nn.")
        and method in aliasing.KEEPS_STATE
        and not passes_modules(an, rest, kwargs)
    )


def same_data(t: Value, value: Value) -> bool:
    """`t.data = value` leaves Parameter or buffer t what it is (the same object,
    numel, dtype and requires_grad, its values replaced): value is a tensor of t's
    known shape and dtype."""
    return (
        isinstance(t, (ParameterV, BufferV))
        and isinstance(value, TensorV)
        and t.shape is not None
        and value.shape == t.shape
        # a layer's own weights are of the default dtype (None)
        and value.dtype == (t.dtype or "float32")
    )


def store_attr(an: Analyzer, obj: Value, attr: str | None, value: Value, frame) -> None:
    """`obj.attr = value` (or `setattr(obj, attr, value)`; attr None: a name not
    known) while modules are built: obj is changed wherever they hold it, by
    identity (`out = self.head; out.weight = self.emb.weight` ties the two as
    torch does), and in the local names bound to it. A store the analysis cannot
    place, of a value that may be a parameter or a module, makes their counts
    unknown (aliasing.py)."""
    if isinstance(obj, SelfRecorder) and attr is not None:
        stays_plain = isinstance(value, NoneV) and plain.none_stays_plain(obj.attrs, attr)
        obj.attrs[attr] = value
        plain.mark(obj.attrs, attr, stays_plain)
        return
    if isinstance(obj, TensorV) and attr is not None and attr != "data":
        return  # `p._tags = s`: an attribute of the tensor object, no module's state
    if attr is not None and isinstance(obj, ObjectV):
        new: Value = ObjectV(obj.kind, tuple({**dict(obj.attrs), attr: value}.items()))
        if in_place.through_property(an, obj, attr):
            new = UNKNOWN  # a setter decides what the object keeps: not run here
        held = [replace_identical(r, obj, new, frame) for r in aliasing.recorders()]
        func = getattr(frame, "func", None)
        given = set(_parameter_names(func.node)) if func is not None else set()
        own = any(v is new and k not in given for k, v in frame.env.items())
        if any(held) or own or not is_module(obj):
            return
        # a module neither they nor a name of this function made holds (a
        # caller's, `self.make().weight = p`): the caller's copy is not changed
    if not may_replace(value):
        return
    if isinstance(obj, SelfRecorder) and module_class_of(an, obj.cls) is False:
        return  # an object that is no module registers nothing torch counts
    if attr is not None and all(module_class_of(an, r.cls) is False for r in aliasing.recorders()):
        # only objects that are no modules are being built (a config's __post_init__):
        # no count to lose, and the store of a known name is marked where it is made
        # (absence.unapplied_write), so that their attributes stay judged
        return
    # `p.data = t` of another shape: numel may change, requires_grad may not
    aliasing.lost(freezes=not (isinstance(obj, TensorV) and attr == "data"))


_NEVER_STATE = (
    IntV, FloatV, BoolV, StrV, SliceV, DtypeV, ClassRefV, FunctionRefV, LayerClassV, PartialV,
    ClosureV, ArrayV,
)  # fmt: skip


def may_replace(value: Value) -> bool:
    """Whether value stored over a module's attribute could be, or remove, a
    parameter, buffer or module there: torch refuses anything else in their
    place (a number, a string, a function), so only a new plain attribute takes
    it."""
    if isinstance(value, TupleV):
        return any(may_replace(v) for v in value.items)
    return not isinstance(value, _NEVER_STATE)


def module_class_of(an: Analyzer, key: str) -> bool | None:
    cd = an.class_of(key)
    return None if cd is None else module_class(an, cd)


def passes_modules(an: Analyzer, args, kwargs) -> bool:
    """A call given a module (the one being built, or one it may hold)."""
    return any(_reaches_module(an, v, 0) for v in [*args, *kwargs.values()])


def _reaches_module(an: Analyzer, v: Value, depth: int) -> bool:
    """Whether v is, or may hold, a module: an instance of a project class that is
    surely no nn.Module (`equals('a')`, a config) reaches one only through what it
    holds."""
    if isinstance(v, SelfRecorder):
        return True
    if not is_module(v):
        return False
    if not (isinstance(v, ObjectV) and v.kind.startswith("<class>")):
        return True
    return module_class_of(an, v.kind[len("<class>") :]) is not False or not all(
        _holds_no_module(an, a, depth + 1) for _, a in v.attrs
    )


def _holds_no_module(an: Analyzer, v: Value, depth: int) -> bool:
    """Surely no module inside v (an attribute of a plain object)."""
    if isinstance(v, (IntV, FloatV, BoolV, StrV, NoneV, DtypeV, SliceV)):
        return True
    if depth > 4:
        return False
    if isinstance(v, TupleV):
        return all(_holds_no_module(an, i, depth + 1) for i in v.items)
    if isinstance(v, ObjectV) and not v.kind.startswith(("<class>", "torch.nn.")):
        return all(_holds_no_module(an, a, depth + 1) for _, a in v.attrs)  # a dict, a config
    return isinstance(v, ObjectV) and not _reaches_module(an, v, depth)


def _parameter_names(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return names + [p.arg for p in (a.vararg, a.kwarg) if p is not None]


def _set_in(v: Value, path: list[str], value: Value) -> Value | None:
    key, rest = path[0], path[1:]
    if isinstance(v, ObjectV):
        attrs = dict(v.attrs)
        inner = value if not rest else _set_in(attrs.get(key, UNKNOWN), rest, value)
        if inner is None:
            return None
        attrs[key] = inner
        return ObjectV(v.kind, tuple(attrs.items()))
    if isinstance(v, ModuleListV) and key.isdigit() and int(key) < len(v.items) and v.count is None:
        items = list(v.items)
        inner = value if not rest else _set_in(items[int(key)], rest, value)
        if inner is None:
            return None
        items[int(key)] = inner
        return replace(v, items=tuple(items))
    return None


def renewed(v: Value, given: dict[int, Value]) -> Value:
    """v with a fresh object for every module, module list and tensor it holds,
    except what the constructor was given (`given`: by id in v, the object the
    call at hand handed in its place): a class built twice with equal arguments is
    two modules with their own parameters, though the analysis computes it once,
    and each holds the very modules its own call was given (`Wrap(layers[1])`
    holds layers[1], not an equal copy: torch counts a shared module once). An
    object v holds in two places is one fresh object in both (`self.conv` and
    `self.all_modules[0]`), as it was one: torch counts it once, as deepcopy's
    memo keeps it one."""
    return _renewed(v, dict(given))


def _renewed(v: Value, made: dict[int, Value]) -> Value:
    if id(v) in made:
        return made[id(v)]
    new: Value
    if isinstance(v, ObjectV) and (is_module(v) or v.kind in DICT_KINDS):
        new = ObjectV(v.kind, tuple((k, _renewed(a, made)) for k, a in v.attrs))
    elif isinstance(v, ModuleListV):
        new = replace(v, items=tuple(_renewed(i, made) for i in v.items))
    elif isinstance(v, ChoiceV):
        new = ChoiceV(tuple(_renewed(i, made) for i in v.items))
    elif isinstance(v, ParameterV):
        new = ParameterV(v.shape, v.dtype, v.requires_grad)
    elif isinstance(v, BufferV):
        new = BufferV(v.shape, v.dtype, of=_renewed_given(v.of, made))
    else:
        return v
    made[id(v)] = new
    return new


def _renewed_given(of: object, made: dict[int, Value]) -> object:
    """The tensor a renewed buffer was registered from: the one this call handed
    in its place, else a new one made once, so that two buffers of one tensor
    stay one tensor (parameters.py counts it once)."""
    if of is None or id(of) in made:
        return None if of is None else made[id(of)]
    stand = TensorV(of.shape, of.dtype) if isinstance(of, TensorV) else ObjectV("<tensor>")
    made[id(of)] = stand
    return stand


def handed(first, again) -> dict[int, Value]:
    """By id, each object the first call's arguments hold (modules, lists, tensors)
    mapped to the one in the same place of a later call's equal arguments."""
    out: dict[int, Value] = {}
    pending = list(zip(first, again, strict=True))
    while pending:
        old, new = pending.pop()
        if id(old) in out:
            continue
        out[id(old)] = new
        if isinstance(old, ObjectV) and isinstance(new, ObjectV):
            pending += [(a, b) for (_, a), (_, b) in zip(old.attrs, new.attrs, strict=False)]
        elif isinstance(old, (ModuleListV, TupleV, ChoiceV)) and type(new) is type(old):
            pending += list(zip(old.items, new.items, strict=False))  # type: ignore[union-attr]
    return out


def deep_copied(v: Value) -> Value | None:
    """`copy.deepcopy(module)`: a new module with new submodules, Parameters and
    buffers, equal to v (torch's `_get_clones`: a layer copied n times holds n times
    its parameters). None where v holds a module or a Parameter somewhere renewed
    does not make afresh (under a value of another kind): sharing it would count it
    once where torch counts each copy."""
    if not is_module(v) or not _renews_all(v, 0):
        return None
    return renewed(v, {})


def _renews_all(v: Value, depth: int) -> bool:
    if depth > 32:
        return False
    if isinstance(v, ObjectV) and (is_module(v) or v.kind in DICT_KINDS):
        return all(_renews_all(a, depth + 1) for _, a in v.attrs)
    if isinstance(v, (ModuleListV, ChoiceV)):
        return all(_renews_all(i, depth + 1) for i in v.items)
    if isinstance(v, (ParameterV, BufferV, TensorV)) or v is UNKNOWN:
        return True
    return not _holds_state(v)


def reachable(values) -> set[int]:
    """ids of the objects values hold (modules, lists, tensors), for renewed's keep."""
    out: set[int] = set()

    def walk(v) -> None:
        if id(v) in out:
            return
        out.add(id(v))
        if isinstance(v, ObjectV):
            for _, a in v.attrs:
                walk(a)
        elif isinstance(v, (ModuleListV, TupleV, ChoiceV)):
            for i in v.items:
                walk(i)

    for v in values:
        walk(v)
    return out


_LIST_MUTATORS = frozenset(("pop", "remove", "clear", "__setitem__", "__delitem__", "reverse"))


def item_assigned(container: Value, idx: Value, value: Value) -> Value | None:
    """`c[idx] = value` on a list, module list or dict known item by item: the
    container after it (an unknown one where idx is not known); None when c is
    none of these (a tensor: a write into part of it keeps its shape)."""
    if isinstance(container, ObjectV) and container.kind in DICT_KINDS:
        if isinstance(idx, StrV) and idx.value is not None:
            return dict_value({**dict(container.attrs), idx.value: value}, container.kind)
        return UNKNOWN
    items = as_items(container)
    if items is None:
        if isinstance(container, ModuleListV):
            return ModuleListV((), container.sequential, known=False)
        return UNKNOWN if isinstance(container, TupleV) else None
    i = idx.value.value if isinstance(idx, IntV) and idx.value is not None else None
    if i is None or not -len(items) <= i < len(items):
        if isinstance(container, ModuleListV):
            return ModuleListV((), container.sequential, known=False)
        return UNKNOWN
    new = list(items)
    new[i] = value
    if isinstance(container, ModuleListV):
        return ModuleListV(tuple(new), container.sequential)
    return TupleV(tuple(new))


def store(an: Analyzer, target: ast.expr, value: Value, frame) -> None:
    """value into a local name or an attribute of the self being built."""
    _store(an, target, value, frame)


def _grown(lst: ModuleListV, how: str, args, name: str | None = None) -> ModuleListV:
    """lst after append / extend (torch names a new item by its index; add_module
    by the name it is given)."""
    if not lst.known or lst.count is not None or len(args) != (2 if how == "insert" else 1):
        return ModuleListV((), lst.sequential, known=False)
    n = len(lst.items)
    if how == "append":
        names = None
        if name is not None or lst.names is not None:
            names = (*item_names(lst), name if name is not None else str(n))
        # a plain tensor is a ParameterList's item (ModuleList and Sequential refuse one)
        return ModuleListV(lst.items + (_wrapped(args[0]),), lst.sequential, names=names)
    items = as_items(args[-1])
    if items is None:
        return ModuleListV((), lst.sequential, known=False)
    if how == "extend":
        names = None
        if lst.names is not None:
            names = (*lst.names, *(str(n + i) for i in range(len(items))))
        return ModuleListV(
            lst.items + tuple(_wrapped(v) for v in items), lst.sequential, names=names
        )
    return ModuleListV((), lst.sequential, known=False)


# nn.Module's registries, which its attributes stand for (their reads above).
_REGISTRIES = frozenset({"_modules", "_buffers", "_parameters"})


def _store(an: Analyzer, target: ast.expr, value: Value, frame) -> None:
    if isinstance(target, ast.Attribute) and target.attr in _REGISTRIES:
        # `self._buffers.pop(k)`: a registration changed, which the module's
        # attributes here do not show
        if an.specialize:
            aliasing.lost()
        return
    if isinstance(target, ast.Name):
        # every caller changes the name's object in place (an item, an entry, a
        # list method): another holder of that object (`self.reg = REG`, `d =
        # self.cfg`) sees the change in Python, and is forgotten here
        # (a global outside a target run binds no change: no holder is forgotten;
        # a closure's cell is placed by in_place when the call returns)
        local = target.id in frame.env
        old = frame.env[target.id] if local else module_state.held(an, target.id)
        placed = module_state.store(an, target.id, value, frame)
        if not placed:
            frame.env[target.id] = value
        own = local and in_place.own_local(frame, target.id)
        if (placed or own) and old is not None and old is not value:
            in_place.forget_held(an, old)
    elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        store_attribute(an, target, value, frame)


def store_attribute(an: Analyzer, target: ast.Attribute, value: Value, frame) -> bool:
    """`name.attr` takes value, for the module being built or a plain object a
    local name holds (`cfg.table[k] = v`, `self.sizes.append(4)`): whether it
    could be placed. The object's other holders do not see it: they are
    forgotten."""
    name = target.value.id  # type: ignore[attr-defined]
    base = frame.env.get(name)
    if isinstance(base, SelfRecorder) or type(base) is ObjectV:
        an.outer_writes += 1  # state outside the frame: a trial turn counts it, makes none
        if an.trial:
            return True
    # (a function's summary, not the run, changes no class)
    runs = getattr(frame, "runs", False)
    held = class_held(an, base, target.attr) if base is not None and runs else None
    if held is not None:
        # `self.reg[k] = v` with `reg = {}` in the class body and none on the
        # instance: the class's one dict changes, which every instance reads
        cd = an.class_of(held)
        was = class_attribute(an, cd, target.attr) if cd is not None else None
        if module_state.store_class_attr(an, held, target.attr, value):
            if was is not None:
                in_place.forget_held(an, was)
            return True
    if isinstance(base, SelfRecorder):
        old = base.attrs.get(target.attr)
        if old is not None and old is not value:
            in_place.forget_value(an, old)
        base.attrs[target.attr] = own_methods.stored(base, value)
        return True
    if type(base) is ObjectV and base.kind.startswith("<class>"):
        # the object the attribute held changed: its other holders (a child
        # module handed `self.sizes`) see the change, and are forgotten
        was = dict(base.attrs).get(target.attr)
        if was is not None and was is not value:
            in_place.forget_held(an, was)
            base = frame.env.get(name)  # itself rebuilt where it held one
            if type(base) is not ObjectV:
                return False
        in_place.forget_value(an, base)
        frame.env[name] = ObjectV(
            base.kind, tuple({**dict(base.attrs), target.attr: value}.items())
        )
        return True
    return False


def class_held(an: Analyzer, base: Value, name: str) -> str | None:
    """The key of the class whose attribute `base.name` is, where base is an
    instance without one of its own (or the class itself); None otherwise."""
    if isinstance(base, ClassRefV):
        key = base.name
    elif isinstance(base, SelfRecorder):
        key = base.cls
        if name in base.attrs:
            return None
    elif type(base) is ObjectV and base.kind.startswith("<class>"):
        key = base.kind[len("<class>") :]
        if name in dict(base.attrs):
            return None
    else:
        return None
    cd = an.class_of(key) if an.specialize else None
    found = defining_class(an, cd, name) if cd is not None else None
    return found.key if found is not None else None


def retyped(an: Analyzer, target: ast.Attribute, frame) -> None:
    """`obj.__class__ = C` gives the object another class, and its methods (its
    forward) with it, for every holder: the analysis follows none of that. What
    names the object is no longer known, nor, in a constructor, the layers and
    state of the module being built, which may hold it."""
    obj = target.value
    me = frame.env.get("self")
    if isinstance(obj, ast.Name) and obj.id != "self":
        frame.env[obj.id] = UNKNOWN
    if not isinstance(me, SelfRecorder):
        return
    me.attrs[UNFOLLOWED] = UNKNOWN
    layers = me.attrs.get(LAYERS)
    if isinstance(layers, ModuleListV):
        me.attrs[LAYERS] = ModuleListV((), layers.sequential, known=False)
    if isinstance(obj, ast.Attribute) and isinstance(obj.value, ast.Name):
        if obj.value.id == "self":  # `self.lin.__class__ = C`
            me.attrs[obj.attr] = UNKNOWN
    elif isinstance(obj, ast.Attribute):
        store_path(me, obj, UNKNOWN)


def subscript(base: Value, idx: Value, node: ast.Subscript) -> Value | None:
    """`self.layers[0]`, `self.layers[1:]`, `config["n_embd"]`, `self.heads["cls"]`."""
    if isinstance(base, ObjectV) and base.kind in DICT_KINDS:
        if isinstance(idx, StrV) and idx.value is not None:
            return base.attr(idx.value)
        return UNKNOWN
    if isinstance(base, ModuleListV):
        if isinstance(idx, SliceV):
            return _sliced_list(base, idx)
        if not base.known or base.count is not None:
            return (
                base.items[0]
                if base.count is not None and isinstance(node.slice, ast.Constant)
                else UNKNOWN
            )
        if isinstance(idx, IntV) and idx.value is not None and idx.value.value is not None:
            i = idx.value.value
            return base.items[i] if -len(base.items) <= i < len(base.items) else UNKNOWN
        return UNKNOWN
    return None


def python_slice(sl: SliceV) -> slice | None:
    """The slice object Python builds from `lo:hi:step`, where each bound is
    absent, None or a known int; None where a bound is not known."""
    bounds: list[int | None] = []
    for b in (sl.lower, sl.upper, sl.step):
        if b is None or isinstance(b, NoneV):
            bounds.append(None)
        elif isinstance(b, IntV) and b.value is not None and b.value.value is not None:
            bounds.append(b.value.value)
        else:
            return None
    if bounds[2] == 0:
        return None  # ValueError in Python
    return slice(*bounds)


def _sliced_list(base: ModuleListV, sl: SliceV) -> Value:
    """`self.layers[:n]`, `self.blocks[1:]`, `seq[::-1]`: a ModuleList of the items
    Python's slice keeps (a Sequential's slice is a Sequential)."""
    if not base.known:
        return ModuleListV((), base.sequential, known=False)
    if base.count is None:
        s = python_slice(sl)
        if s is None:
            return ModuleListV((), base.sequential, known=False)
        # Sequential's slice keeps the names its items are registered under;
        # ModuleList's numbers them again
        names = item_names(base)[s] if base.sequential and base.names is not None else None
        return ModuleListV(base.items[s], base.sequential, names=names)
    # `count` copies of one item: a slice from the start, up to the count or past it,
    # keeps them all whatever the count is.
    lo, step = sl.lower, sl.step
    starts = (
        lo is None
        or isinstance(lo, NoneV)
        or (isinstance(lo, IntV) and lo.value is not None and lo.value.value == 0)
    )
    hi = sl.upper
    to_end = hi is None or isinstance(hi, NoneV)
    if isinstance(hi, IntV) and hi.value is not None and hi.value == base.count:
        to_end = True
    if starts and to_end and (step is None or isinstance(step, NoneV)):
        return base
    if base.count.value is not None:
        s = python_slice(sl)
        if s is not None:
            n = len(range(base.count.value)[s])
            return ModuleListV(base.items[:1] if n else (), base.sequential, Expr.const(n))
    return ModuleListV((), base.sequential, known=False)


def expand_kwargs(v: Value) -> dict[str, Value] | None:
    """`f(**kw)` where kw is a dict the analysis knows entry by entry."""
    if isinstance(v, ObjectV) and v.kind in DICT_KINDS:
        return dict(v.attrs)
    return None


# ---------------------------------------------------------------------- costs


def unknown_cost(why: str) -> Cost:
    return Cost(None, None, None, [why], complete=False)


# ---------------------------------------------------------------------- loops


def exec_for(an: Analyzer, stmt: ast.For, frame) -> bool:
    """Loops this module models: over a module list (the sum of its layers, or
    count × one layer), and `for _ in range(n)` of known count in __init__ (the
    layers it appends) or in a specialized call (unrolled). False: not one of
    those; the interpreter runs the loop as before."""
    if an.specialize and not stmt.orelse and _returns_only(stmt):
        return _search_loop(an, stmt, frame)
    if stmt.orelse or _breaks(stmt):
        return False
    it = stmt.iter
    count = range_count(an, it, frame)
    if count is not None:
        in_init = isinstance(frame.env.get("self"), SelfRecorder)
        if not (in_init or an.specialize):
            return False
        if count.value is not None and count.value <= MAX_UNROLL:
            start = _range_start(an, it, frame)
            items = [
                IntV(None if start is None else Expr.const(start + i)) for i in range(count.value)
            ]
            _unroll(an, stmt, items, frame)
            return True
        if in_init:
            _symbolic_init_loop(an, stmt, count, frame)
            return True
        return False
    if _range_of_a_tensor(an, it, frame):
        # `range(t)` calls t.__index__() (a one-element integer tensor): a count not
        # known, which the interpreter's loop runs as a loop of unknown length
        return False
    # `zip`, `enumerate`, `reversed` over module lists are module lists (iterators.py)
    book = storages.mark()
    seq = iterated(an, an.eval(it, frame))
    if not isinstance(seq, ModuleListV):
        in_init = isinstance(frame.env.get("self"), SelfRecorder)
        listed = as_items(seq) if in_init or an.specialize else None
        if listed is None or len(listed) > MAX_UNROLL:
            # the interpreter's loop evaluates the iterable again: what this run of
            # it saved for backward is not saved yet (a generator's ops, given the
            # caller's tensor, found it saved: 0 B for torch's 256)
            storages.undo(book)
            return False
        # a loop over values known one by one (`for kind in layer_types`), in a
        # constructor or a target run: each turn as Python runs it, as for `range(n)`
        _unroll(an, stmt, [_unpackable(v) for v in listed], frame)
        return True
    items = list(seq.items)
    if isinstance(stmt.target, (ast.Tuple, ast.List)):
        items = [_unpackable(v) for v in items]
    if not seq.known:
        _loop_body(
            an, stmt, [UNKNOWN], frame, unknown_cost("loop over a module list of unknown length")
        )
        return True
    if seq.count is not None:
        _loop_body(an, stmt, items, frame, None, seq.count)
        return True
    _unroll(an, stmt, items, frame)
    return True


def listed_items(v: Value) -> tuple[Value, ...] | None:
    """The items of a module list known one by one (`norm, block, residual = layer`
    unpacks an nn.ModuleList as iterating it does); None for anything else."""
    if isinstance(v, ModuleListV) and v.known and v.count is None:
        return v.items
    return None


def _module_dict_items(an: Analyzer, recv: Value) -> list[tuple[str, Value]] | None:
    """The modules an instance of a project subclass of nn.ModuleDict registered,
    in order (what its `values()` / `items()` / `keys()` walk); None where it is no
    such instance, or where an attribute may be a module the analysis lost."""
    if not isinstance(recv, ObjectV) or not recv.kind.startswith("<class>"):
        return None
    cd = an.class_of(recv.kind[7:])
    if cd is None or torch_ancestor(an, cd) != "torch.nn.ModuleDict":
        return None
    return registered_modules(recv)


def registered_modules(me: ObjectV) -> list[tuple[str, Value]] | None:
    """What `me._modules` holds, in the order torch registered it: a Sequential
    subclass's layers by their names, then every module assigned or added; None
    where an attribute may be a module the analysis lost (or a change was not
    followed)."""
    out: list[tuple[str, Value]] = []
    for k, v in me.attrs:
        if k == LAYERS:
            if not isinstance(v, ModuleListV) or not v.known or v.count is not None:
                return None
            out += zip(item_names(v), v.items)
            continue
        if v is UNKNOWN or k in (UNFOLLOWED, aliasing.ALIASED):
            return None
        if is_module(v) or (isinstance(v, ChoiceV) and all(is_module(i) for i in v.items)):
            out.append((k, v))
    return out


def registered_tensors(me: ObjectV, registry: str) -> list[tuple[str, Value]] | None:
    """What a project module's `me._buffers` (registry "_buffers") or
    `me._parameters` holds, in the order torch registered it: its buffers, or its
    Parameters. None where an entry may be hidden: an attribute not known or one of
    several values, a plain tensor (a tensor stored under a buffer's name stays a
    buffer in torch), None (which either registry holds where it was registered
    so), a registration the analysis lost; and a torch layer's registries."""
    if not me.kind.startswith("<class>"):
        return None
    want = BufferV if registry == "_buffers" else ParameterV
    surely_plain = plain.names(me.attrs)  # no module, Parameter or buffer
    out: list[tuple[str, Value]] = []
    for k, v in me.attrs:
        if k in (UNFOLLOWED, aliasing.ALIASED) or v is UNKNOWN and k not in surely_plain:
            return None
        if isinstance(v, NoneV) and k in surely_plain:
            continue
        if isinstance(v, (ChoiceV, NoneV, OptionalV)) or type(v) is TensorV:
            return None
        if isinstance(v, want):
            out.append((k, v))
    return out


def children(
    an: Analyzer, recv: Value, meth: str, args, kwargs, overridden: str | None = None
) -> Value | None:
    """`m.named_children()` / `m.children()` of the module being built or of a
    module built in a target run, as nn.Module's walk yields them: the registered
    submodules in registration order, None ones left out, each object once (by
    identity, as parameters.py counts them). None (not known) where an attribute
    may be a module the analysis cannot name (not known and not surely plain, a
    module on one path only) or where the class overrides the method (or
    `overridden`, the method a walk calls on each module: module_walk.py's)."""
    if args or kwargs or not an.specialize:
        return None
    if isinstance(recv, ObjectV) and _stub_leaf(recv.kind):
        return TupleV((), kind="list")
    if isinstance(recv, SelfRecorder):
        key, held = recv.cls, list(recv.attrs.items())
    elif isinstance(recv, ObjectV) and recv.kind.startswith("<class>"):
        key, held = recv.kind.partition(">")[2], list(recv.attrs)
    else:
        return None
    cd = an.class_of(key)
    if (
        cd is None
        or not derives_from_module(an, key)
        or find_method(an, cd, overridden or meth) is not None
    ):
        return None
    surely_plain = plain.names(held)
    # which Parameters require grad says nothing of which modules are held
    held = [
        (k, v)
        for k, v in held
        if k != REQUIRES_GRAD_UNKNOWN
        and not (v is UNKNOWN and k in surely_plain)
        and not (isinstance(v, ChoiceV) and plain.plain_alternatives(an, v.items))
    ]
    found = registered_modules(ObjectV("<class>", tuple(held)))
    if found is None or any(_may_hold_module(v) for _, v in held):
        return None
    kept = [(k, v) for k, v in found if _module_instance(an, v) is not False]
    if any(_module_instance(an, v) is None for _, v in kept):
        return None
    once, seen = [], set()
    for k, v in kept:
        if id(v) not in seen:
            seen.add(id(v))
            once.append((k, v))
    if meth == "children":
        return TupleV(tuple(v for _, v in once), kind="list")
    return TupleV(tuple(TupleV((StrV(k), v)) for k, v in once), kind="list")


# The stub-described torch layers that register submodules (torch's
# `nn.MultiheadAttention(...).out_proj`); every other layer a stub describes holds
# Parameters and buffers only (tests/test_object_model.py holds this to torch's own).
# The layers torch builds of other layers are read as source (torch_source.py).
STUB_LAYERS_WITH_CHILDREN = frozenset({"torch.nn.MultiheadAttention"})


def stub_layer(kind: str) -> bool:
    """An instance's kind that is a torch layer a stub describes (`torch.nn.Conv2d`)."""
    from shapelint.ops.stub_ops import describes

    return kind.startswith("torch.nn.") and describes(f"{kind}.__call__")


def _stub_leaf(kind: str) -> bool:
    """A torch layer a stub describes whose named_children() torch gives empty."""
    return kind not in STUB_LAYERS_WITH_CHILDREN and stub_layer(kind)


def _module_instance(an: Analyzer, v: Value) -> bool | None:
    """Whether v, which registered_modules counts among the modules, is one torch
    registers: an instance of a project class is one only where the class derives
    from nn.Module; a plain class's instance (plain.plain_instance) is an attribute
    torch leaves alone; None where a base is not seen, or where `__new__` or a
    metaclass decides what the class's call gave."""
    if isinstance(v, ChoiceV):
        each = [_module_instance(an, i) for i in v.items]
        return True if all(each) else None
    if isinstance(v, ObjectV) and v.kind.startswith("<class>"):
        if plain.plain_instance(an, v):
            return False
        return derives_from_module(an, v.kind[len("<class>") :]) or None
    return True


def _may_hold_module(v: Value) -> bool:
    """A value that is a module on some path (None or a module, one of several)."""
    if isinstance(v, OptionalV):
        return v.value is UNKNOWN or is_module(v.value) or _may_hold_module(v.value)
    if isinstance(v, ChoiceV):
        return not all(is_module(i) for i in v.items)
    return False


def is_module(v: Value) -> bool:
    """A layer, a project class instance or a module list."""
    if isinstance(v, ObjectV):
        return v.kind.startswith(("<class>", "torch.nn."))
    return isinstance(v, ModuleListV)


def _unpackable(v: Value) -> Value:
    # `for attn, ff in self.layers`: each item is a ModuleList of two.
    if isinstance(v, ModuleListV) and v.known and v.count is None:
        return TupleV(v.items)
    return v


def _returns_only(loop: ast.For) -> bool:
    """The loop's body may return and never breaks, continues or yields. Kept on
    the node: a specialized run meets the loop at every call of its function."""
    known = loop.__dict__.get(_RETURNS_ONLY)
    if known is None:
        kinds = {type(n) for stmt in loop.body for n in ast.walk(stmt)}
        known = ast.Return in kinds and not kinds & {ast.Break, ast.Continue, ast.Yield}
        setattr(loop, _RETURNS_ONLY, known)
    return known


_RETURNS_ONLY = "_shapelint_returns_only"


def _search_loop(an: Analyzer, stmt: ast.For, frame) -> bool:
    """`for arg in args: if exists(arg): return arg` over items known one by one,
    in a specialized run: turn by turn until a turn surely returns. False (all
    undone) where a turn may or may not return: the interpreter runs it as before."""
    seq = an.eval(stmt.iter, frame)
    if not isinstance(seq, TupleV) or len(seq.items) > MAP_MAX:
        return False
    env, records, returns = dict(frame.env), dict(frame.records), list(frame.returns)
    exits = list(frame.exits)
    for item in seq.items:
        before = len(frame.returns)
        an.assign(stmt.target, item, frame, None)
        an.exec_block(stmt.body, frame)
        if frame.done:
            return True
        if len(frame.returns) != before:
            frame.env, frame.records, frame.returns = env, records, returns
            frame.exits[:] = exits
            return False
    return True


def _breaks(loop: ast.For) -> bool:
    """A break or return anywhere in the loop's body; kept on the node, as
    _returns_only is: the loop is met at every pass over its function."""
    known = loop.__dict__.get(_BREAKS)
    if known is None:
        known = any(isinstance(n, (ast.Break, ast.Return)) for n in nested_statements(loop.body))
        setattr(loop, _BREAKS, known)
    return known


_BREAKS = "_shapelint_breaks"


def _unroll(an: Analyzer, stmt: ast.For, items, frame) -> None:
    if (
        an.specialize
        and len(items) > 1
        and all(isinstance(i, IntV) for i in items)
        and not any(isinstance(v, SelfRecorder) for v in frame.env.values())
    ):
        # `range(n)` of known n: one turn for all when every turn is the same. Not
        # in __init__: a turn there grows `self`, which no name compared shows.
        entries = turn_entries(frame.env)  # which turn's values the loss reaches
        turn = loops.same_each_turn(an, stmt, IntV(None), items[-1], frame, first_apart=True)
        if isinstance(turn, tuple):  # the first turn apart: it made a tensor require grad
            first, rest, entries = turn
            others = scale_cost(
                add_costs(r.cost for r in rest.values()), Expr.const(len(items) - 1)
            )
            cost = add_costs([*(r.cost for r in first.values()), others])
            rec = an.record(stmt, frame, f"for {ast.unparse(stmt.iter)} (×{len(items)})", None,
                            [], UNKNOWN, cost)  # fmt: skip
            rec.children = [*first.values(), *rest.values()]
            rec.weights = [Expr.const(1)] * len(first) + [Expr.const(len(items) - 1)] * len(rest)
            rec.carried = carried(frame.env, entries)
            settle(frame.env, entries, Expr.const(len(items) - 1))
            return
        if turn is not None:
            rec = loop_record(an, stmt, frame, turn, None, Expr.const(len(items)))
            if rec is not None:
                rec.carried = carried(frame.env, entries)
            settle(frame.env, entries, Expr.const(len(items)))
            return
    saved = frame.records
    children: dict = {}
    try:
        for i, item in enumerate(items):
            frame.records = {}
            frame.jump = None
            an.assign(stmt.target, item, frame, None)
            an.exec_block(stmt.body, frame)
            add_turn(children, frame.records, i)
            if frame.jump == "break" or frame.done:
                break
    finally:
        frame.records = saved
        frame.jump = None
    loop_record(an, stmt, frame, children, len(items))


def _loop_body(an, stmt, items, frame, extra: Cost | None, count: Expr | None = None) -> None:
    saved = frame.records
    entries = turn_entries(frame.env)  # which turn's values the loss reaches
    before = dict(frame.env)
    frame.records = {}

    def turn() -> None:
        an.assign(stmt.target, items[0] if items else UNKNOWN, frame, None)
        an.exec_block(stmt.body, frame)

    try:
        turn()
        children = frame.records
    finally:
        frame.records = saved
    turned = carried(frame.env, entries)
    settle(frame.env, entries, count)
    kept = loops.kept_shapes(an, frame, turn, before)
    after = frame.env
    frame.env = an.join_env(before, frame.env)
    frame.env.update(kept)
    loops.last_turn_left(frame.env, after, entries, count)
    rec = loop_record(an, stmt, frame, children, None, count, extra)
    if rec is not None:
        rec.carried = turned
        if turned:
            loops.at_least_once(rec, count)


@contextmanager
def grown_in_turns(frame) -> Iterator[None]:
    """A loop in a constructor: a module list of self that grew in a turn standing
    for an unknown number of them (loops.repeat) holds items not known one by one
    (`for _ in range(depth): self.layers.append(Block())` with depth not known: one
    item, where torch holds depth)."""
    recorder = frame.env.get("self")
    if not isinstance(recorder, SelfRecorder):
        yield
        return
    lists = {k: v for k, v in recorder.attrs.items() if isinstance(v, ModuleListV)}
    runs = loops.repeats()
    try:
        yield
    finally:
        if loops.repeats() != runs:
            for k, old in lists.items():
                new = recorder.attrs.get(k)
                if new is not old and isinstance(new, ModuleListV):
                    recorder.attrs[k] = ModuleListV((), new.sequential, known=False)


def _symbolic_init_loop(an: Analyzer, stmt: ast.For, count: Expr, frame) -> None:
    """`for _ in range(depth): self.layers.append(...)`: depth copies of one layer."""
    recorder = frame.env["self"]
    lists_before = {k: v for k, v in recorder.attrs.items() if isinstance(v, ModuleListV)}
    an.assign(stmt.target, IntV(None), frame, None)
    an.exec_block(stmt.body, frame)
    for k, old in lists_before.items():
        new = recorder.attrs.get(k)
        if new is old or not isinstance(new, ModuleListV):
            continue
        grown = new.items[len(old.items) :] if new.known else ()
        if old.known and old.count is None and not old.items and len(grown) == 1:
            recorder.attrs[k] = ModuleListV(grown, old.sequential, count)
        else:
            recorder.attrs[k] = ModuleListV((), old.sequential, known=False)


# ---------------------------------------------------------------------- specialized calls


# Calls that take tensors and cost nothing a flop counter sees.
_WRAPS_KIND = "functools.wraps"
_FREE_CALLS = {"isinstance", "len", "print", "hasattr", "getattr", "id", "type", "super"}
# Calls that only hand on references to what they are given (a container, an
# iterator): what they hold costs where it is used. Not `reversed` of a tensor
# (a flip, which copies).
_HANDS_ON = {"dict", "zip", "enumerate", "iter", "list", "tuple", "reversed", "zip_longest"}
# Functions of the typing module that return one of their arguments as it is, for
# a type checker's sake: the argument's position.
RETURNS_ARGUMENT = {"typing.cast": 1, "typing_extensions.cast": 1, "typing.assert_type": 0}


def unfollowed_call(an: Analyzer, node: ast.Call, frame, args, value: Value) -> None:
    """A call that took a tensor (or a module) and left no record: its cost is
    unknown, and a target's total says so rather than counting it as 0."""
    if isinstance(node.func, ast.Name) and node.func.id in _FREE_CALLS:
        return
    name = node.func.id if isinstance(node.func, ast.Name) else an.qualname_of(node.func, frame)
    qual = an.qualname_of(node.func, frame)
    if qual in RETURNS_ARGUMENT or (qual in _CONTAINERS and isinstance(value, ModuleListV)):
        return  # a container built of the modules given runs none of them
    if qual in _PASS_THROUGH and isinstance(value, (ParameterV, BufferV)):
        # `nn.Parameter(t)` in a forward (a lazy init): a new leaf over t's storage,
        # nothing computed or copied on a device
        return
    if pytree.hands_on(qual, value):
        return
    if (name or "").removeprefix("itertools.") in _HANDS_ON and not (
        name == "reversed" and any(isinstance(a, TensorV) for a in args)
    ):
        return
    if isinstance(node.func, ast.Attribute) and node.func.attr in _FREE_METHODS:
        return
    if (
        isinstance(node.func, ast.Attribute)
        and node.func.attr in _VIEWS
        and isinstance(value, TupleV)
    ):
        return  # a mapping's view the analysis read off it: what it holds costs where used
    if isinstance(value, ObjectV) and value.kind == _WRAPS_KIND or isinstance(value, PartialV):
        return  # a decorator, a partial: what they wrap costs when it is called
    if isinstance(value, decorators.CompiledV):
        return  # torch.compile: the function it compiles costs when it is called
    if isinstance(value, namedtuples.NamedTupleV):
        return  # a namedtuple holds what it is given
    if isinstance(value, ObjectV) and value.kind.startswith(CONFIG_PREFIX):
        cd = an.class_of(value.kind[len(CONFIG_PREFIX) :])
        if cd is not None and "__post_init__" not in cd.methods:
            return  # a dataclass's own __init__ only stores its fields
    if not any(isinstance(a, (TensorV, ObjectV, ModuleListV)) for a in args if not _is_dict(a)):
        return
    if isinstance(value, (IntV, BoolV, FloatV, StrV, NoneV)) and not isinstance(value, TensorV):
        return  # a size, a flag: nothing was computed on a device
    src = ast.unparse(node.func)
    if (
        isinstance(node.func, ast.Attribute)
        and args
        and isinstance(args[-1], TensorV)  # the receiver
        and stub_ops.declares_flops(f"torch.Tensor.{node.func.attr}") is False
    ):
        # `x.max(dim=d)` where d is not known: a tensor method whose stub runs no
        # product costs 0 FLOPs whatever the arguments; only its bytes are unknown.
        why = f"{src}(): no product (0 FLOPs); bytes unknown (a shape or size unknown)"
        cost = Cost(Expr.const(0), None, None, [why], complete=True)
        an.record(node, frame, f"call {src}", None, [args[-1]], value, cost)
        return
    an.record(
        node,
        frame,
        f"call {src}",
        None,
        [a for a in args if isinstance(a, TensorV)],
        value,
        unknown_cost(
            f"{src}(): cost not known here (a shape or size unknown, or no stub and no source)"
        ),
    )


_VIEWS = frozenset({"values", "items", "keys"})
_FREE_METHODS = {
    "register_buffer",
    "register_parameter",
    "add_module",
    "size",
    "dim",
    "numel",
    # a tensor's layout and memory queried: a flag, nothing computed on the device
    "is_contiguous",
    "is_pinned",
    "append",
    "extend",
    # nn.Module's walks of its tree: they hand out what it holds, computing nothing
    "modules",
    "named_modules",
    "children",
    "named_children",
    "parameters",
    "named_parameters",
    "buffers",
    "named_buffers",
    "_named_members",
}


def without_item(v: Value, index: Value) -> Value | None:
    """A module list or a tuple without the item at a known index (`del v[i]`);
    None where that is not known."""
    i = index.value.value if isinstance(index, IntV) and index.value is not None else None
    if i is None:
        return None
    if isinstance(v, ModuleListV) and v.known and v.count is not None:
        return replace(v, count=v.count - Expr.const(1))
    if isinstance(v, (ModuleListV, TupleV)) and getattr(v, "known", True):
        items = list(v.items)
        if not -len(items) <= i < len(items):
            return None
        del items[i]
        return replace(v, items=tuple(items))
    return None


def _is_dict(v: Value) -> bool:
    return isinstance(v, ObjectV) and v.kind in DICT_KINDS


def property_get(an: Analyzer, key: str, recv, attrs, node: ast.Attribute, frame) -> Value | None:
    """`obj.name` where obj's class (key) defines a property `name`: what its getter
    returns, run on obj (a target run only); None where there is no such property,
    or an instance attribute shadows a cached_property."""
    cd = an.class_of(key) if an.specialize else None
    held = descriptor(an, cd, node.attr) if cd is not None else None
    if held == "data" or (held == "get" and node.attr not in attrs):
        return UNKNOWN  # the descriptor's `__get__` decides, not run here
    found = find_property(an, cd, node.attr) if cd is not None else None
    if found is None or (not found[2] and node.attr in attrs):
        return None
    call = ast.copy_location(ast.Call(node, [], []), node)
    # A property lives on the type: a write on an instance runs its setter, never
    # replaces it (dynamic.py's `special`).
    return specialized_invoke(
        an, found[0], recv, call, [], {}, frame, undecorated=True, special=True
    )


def property_set(an: Analyzer, recv: SelfRecorder, node: ast.Attribute, value, frame) -> bool:
    """`self.name = value` where the class defines a property `name` with a setter:
    the setter runs on the instance being built (True); False where there is none."""
    cd = an.class_of(recv.cls)
    if cd is not None and descriptor(an, cd, node.attr) == "data":
        # its `__set__` runs instead of the store, not run here: what it changes on
        # the instance (another attribute, a layer) is not known
        aliasing.lost()
        return True
    found = find_property(an, cd, node.attr) if cd is not None else None
    if found is None or found[1] is None:
        return False
    # Run on the instance itself, as __init__ is: what the setter stores stays.
    exc = run_init(an, found[1], recv, [value], {})
    if exc is not None:
        raising.pending(exc)
    return True


def specialized_invoke(
    an: Analyzer,
    fd: FuncDef,
    recv,
    node,
    args,
    kwargs,
    frame,
    undecorated: bool = False,
    special: bool = False,
) -> Value:
    """Run fd's body with these arguments (and this instance as self): the exact
    value and cost at these sizes. One record at the call site, the callee's
    records as its children. A decorated fd runs what its decorators returned
    (undecorated: the body itself, called from a decorator's wrapper)."""
    owner = fd.owner or an
    names = [fd.cls.name] if fd.cls is not None else []
    if isinstance(recv, ObjectV) and recv.kind.startswith("<class>"):
        names.append(recv.kind[len("<class>") :].rpartition(":")[2])
    why = dynamic.not_modelled(an, fd, names, decorators=False, special=special)
    changed = recv.attr(dynamic.CHANGED) if isinstance(recv, ObjectV) else None
    if why is None and isinstance(changed, StrV):
        why = changed.value
    if why is None and not undecorated and dynamic.opaque_decorator(owner, fd.node) is not None:
        wrapped = decorators.decorated(an, fd)
        if wrapped is not None:
            return _call_decorated(an, fd, wrapped, recv, node, args, kwargs, frame)
        why = f"decorated with @{decorators.blocking(an, fd)}, whose wrapper is not followed"
    touches = bool(aliasing.recorders()) and passes_modules(an, [recv, *args], kwargs)
    reached = in_place.globals_before(an, fd)
    if why is not None:
        cost = unknown_cost(f"{fd.qualname}: {why}")
        an.record(node, frame, f"call {fd.qualname}", None, args, UNKNOWN, cost)
        if touches:
            aliasing.lost()  # what it does to the modules it is given, not seen
        absence.method_not_run(recv, fd.node)  # what it stores into a config, not seen
        _followed(an, fd, node, recv, args, kwargs, frame, reached, None, UNKNOWN)
        return UNKNOWN
    # A function that rebinds a global changes state a cached run would not; one
    # given modules being built changes them, and a cached run would not again.
    key = (
        None
        if fd.rebinds_globals
        or touches
        or grad_mode.sets_globally(fd.node)
        or autograd_function.forward_running(fd)
        else _call_key(fd, recv, args, kwargs, GRAD_MODE.get())
    )
    cached = owner.specialized.get(key) if key is not None else None
    given = [*args, *kwargs.values()]
    if cached is not None and _saves_otherwise(owner, key, given, cached):
        cached = None  # run again: what it saves is what this call finds unsaved
    if cached is not None and one_shot.holds(cached[0]):
        cached = None  # an iterator's items are its run's own tensors: run again
    hit = cached is not None
    mark = module_state.mark()
    if cached is None:
        before = (storages.status(given), storages.extents(given))
        # Runs not memoised are told apart by function, receiver, the modules they
        # are given and their other arguments: two such calls nested (a property's
        # getter reading another, a walk of the module tree calling itself on each
        # child, timm's named_apply, pytorch-metric-learning's
        # `add_to_recordable_attributes(obj, list_of_names=...)` calling itself with
        # `name=n` for each) are no recursion.
        flight = (
            key
            if key is not None
            else (
                "<not memoised>",
                fd.qualname,
                id(recv),
                *(id(v) for v in given if is_module(v)),
                _plain_arguments(args, kwargs),
            )
        )
        if flight in owner.in_flight or len(owner.in_flight) > MAX_DEPTH:
            why = (
                "calls itself"
                if flight in owner.in_flight
                else f"calls nested deeper than {MAX_DEPTH}"
            )
            cost = unknown_cost(f"{fd.qualname}(): {why}, not followed")
            an.record(node, frame, f"call {fd.qualname}", None, args, UNKNOWN, cost)
            if touches:
                aliasing.lost()
            absence.method_not_run(recv, fd.node)
            _followed(an, fd, node, recv, args, kwargs, frame, reached, None, UNKNOWN)
            return UNKNOWN
        owner.in_flight.add(flight)
        start = may_raise.count()
        try:
            with call_path.calling(fd.qualname, getattr(node, "lineno", None)):
                *cached, finals = run_followed(owner, fd, recv, args, kwargs)
        finally:
            owner.in_flight.discard(flight)
        cached = tuple(cached)
        if key is not None and not _holds_state(cached[0]):
            owner.specialized[key] = cached
            may_raise.keep(owner.specialized, key, start)
            # a global's value at its return came from the global's value before,
            # which the key does not hold: a reuse hands back its parameters only
            owner.specialized[("<finals>", key)] = in_place.parameters_only(fd, finals)
            # Which of its tensors were saved before and after it ran, and whether
            # its result was: what a reuse of this analysis must find and leave.
            after = (storages.status(given), storages.status([cached[0]]))
            owner.specialized[("<saved>", key)] = (before, *after)
            owner.specialized[("<held>", key)] = storages.held_arguments(cached[0], given)
    else:
        finals = owner.specialized.get(("<finals>", key))
        may_raise.replay(owner.specialized, key)
    value, children = cached
    if hit:  # its exits anew, reaching this call's arguments
        value = called(value, args, kwargs)
    cost = add_costs(r.cost for r in children)
    cache = (
        dynamic.caching(owner, fd.node)
        if not undecorated
        else dynamic.cached_getter(owner, fd.node)
        if special
        else None
    )
    if cache is not None and not (cost.complete and cost.flops == Expr.const(0)):
        # what the body costs is paid on a miss only, which no run here decides
        cost = unknown_cost(f"{fd.qualname}: @{cache} runs its body only on a cache miss")
    if (
        generators.is_generator(fd.node)
        and not (cost.complete and cost.flops == Expr.const(0))
        and not generators.consumed_whole(getattr(frame.func, "node", None), node)
    ):
        cost = unknown_cost(
            f"{fd.qualname}: a generator's body runs as far as its items are asked for"
        )
        children = ()  # its turns may not all run: no part of them is a bound
    if cache is not None and _changes_state(owner, fd):
        # ... and so is what it changes, and what it returns where that depends on
        # it (`self.n += 1; return k + self.n`): a hit returns the first call's value
        # and changes nothing (each call's run counted: 1,280 where torch has 1,024)
        value, finals, mark = UNKNOWN, None, module_state.mark()
        _forget_stored_on(an, fd, recv)
    if hit:  # another call's result, equal in shape: another tensor all the same
        held = owner.specialized.get(("<held>", key))
        value = fresh_objects(an, storages.renewed_as(value, held, given), given)
        first = owner.specialized.get(("<saved>", key))
        if first is not None and first[0] == (storages.status(given), storages.extents(given)):
            storages.enter(given, first[1])  # it saves what the first call saved
            storages.enter([value], first[2])
        elif cost.saved != Expr.const(0):
            # What it saves depends on which of its tensors were saved before this call.
            cost = replace(cost, saved=None, notes=[*cost.notes, storages.REUSED])
    rec = an.record(node, frame, f"call {fd.qualname}", None, args, value, cost)
    rec.children = list(children)
    exc = raising.of_records(children)
    if exc is not None:
        raising.pending(exc)
    placed = module_state.keys_since(mark) if not hit else frozenset()
    after = None if exc else finals
    return _followed(an, fd, node, recv, args, kwargs, frame, reached, after, value, placed)


def _changes_state(an: Analyzer, fd: FuncDef) -> bool:
    """Whether fd's run may change anything outside its own frame (read off its
    source: an object it was handed or reaches, `self` included, a global)."""
    return (
        bool(in_place.changed_names(an, fd))
        or fd.rebinds_globals
        or in_place.risks(fd)[1]
        or bool(_self_stores(fd.node))
    )


def _self_stores(node) -> frozenset[str]:
    """The attributes fd's source stores on its first parameter (`self.n += 1`)."""
    params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    if not params:
        return frozenset()
    first = params[0]
    found = set()
    for n in ast.walk(node):
        if (
            isinstance(n, ast.Attribute)
            and isinstance(n.ctx, ast.Store)
            and isinstance(n.value, ast.Name)
            and n.value.id == first
        ):
            found.add(n.attr)
    return frozenset(found)


def _forget_stored_on(an: Analyzer, fd: FuncDef, recv) -> None:
    """A cached method's run, which may not have run (a cache hit): what it stored on
    its instance is not known. On the instance being built, those attributes; a
    built module, and every holder of it (in_place would leave it as it was)."""
    stored = _self_stores(fd.node)
    if not stored or recv is None:
        return
    an.outer_writes += 1
    if an.trial:
        return
    if isinstance(recv, SelfRecorder):
        for name in stored:
            recv.attrs[name] = UNKNOWN
        aliasing.lost()  # one of them may have been a layer or a Parameter
    elif type(recv) is ObjectV and is_module(recv):
        # the one object, wherever it is held, without what the run stored on it
        kept = tuple((k, UNKNOWN if k in stored else v) for k, v in recv.attrs)
        held_as(recv, ObjectV(recv.kind, kept))
    else:
        in_place.forget_value(an, recv)


def _saves_otherwise(owner, key, given, cached) -> bool:
    """Whether a call served by the analysis of an equal one would save other
    tensors than that one's: its run saved some, and of the tensors it is given, a
    different set was saved already (a view of a storage the first call saved), or
    they weigh otherwise. Such a call is run again, its saved tensors followed
    (torch saves again on every call)."""
    first = owner.specialized.get(("<saved>", key))
    now = (storages.status(given), storages.extents(given))
    if first is not None and first[0] == now:
        return False
    saved = add_costs(r.cost for r in cached[1]).saved
    # an unknown figure stays unknown: the reuse names the call, as before; a known
    # 0 may be the first call's tensors saved already (each storage counts once,
    # where first saved): given others, it may save them
    return saved is not None and (saved != Expr.const(0) or first is not None)


def _followed(
    an: Analyzer, fd: FuncDef, node, recv, args, kwargs, frame, before, after, value, placed=()
):
    """What fd changed in place, in the caller's names (a call written as one),
    and in the call's value; placed: the module-level names its run bound anew
    (module_state.keys_since), which module_state owns."""
    if not isinstance(node, ast.Call):
        return value
    return in_place.follow(
        an, fd, node, recv, args, kwargs, frame, before, after, value, frozenset(placed)
    )


def _call_decorated(an: Analyzer, fd: FuncDef, wrapped, recv, node, args, kwargs, frame):
    """One record at the call site, holding what the decorators' wrapper ran."""
    if recv is not None and not is_static(fd.node):
        args = [recv, *args]
    saved, children = frame.records, {}
    frame.records = children
    try:
        value = an.call_value(wrapped, node, list(args), dict(kwargs), frame)
    finally:
        frame.records = saved
    rec = an.record(node, frame, f"call {fd.qualname}", None, args, value,
                    add_costs(r.cost for r in children.values()))  # fmt: skip
    rec.children = list(children.values())
    return value


def _call_function(an: Analyzer, fd: FuncDef, node, args, kwargs, frame) -> Value:
    """Calling the function a decorator was given: its own body, undecorated (a
    method takes its instance as the first argument, as a plain function does)."""
    recv = None
    if fd.cls is not None and not is_static(fd.node):
        if not args:
            return an.unknown_call(node, args, kwargs, frame, f"{fd.qualname}() without self")
        recv, args = args[0], list(args[1:])
    return specialized_invoke(an, fd, recv, node, args, kwargs, frame, undecorated=True)


def run_on_self(an: Analyzer, fd: FuncDef, me: SelfRecorder, node, args, kwargs, frame):
    """A method __init__ calls on the instance it builds, run on that instance (never
    memoised: what it assigns is the point of the call). One record at the call."""
    owner = fd.owner or an
    # the names it is given in the key: a hook run again on the instance for another
    # name while one runs (`__getattribute__` through a property's getter) is no
    # recursion of the same call; depth still bounds what calls itself
    names = tuple(a.value for a in args if isinstance(a, StrV))
    key = ("<on self>", fd.qualname, id(me), names)
    if key in owner.in_flight or len(owner.in_flight) > MAX_DEPTH:
        an.record(node, frame, f"call {fd.qualname}", None, args, UNKNOWN,
                  unknown_cost(f"{fd.qualname}() calls itself"))  # fmt: skip
        aliasing.lost()  # what it would have changed on the instance, not seen
        return UNKNOWN
    owner.in_flight.add(key)
    try:
        value, children = run_body(owner, fd, me, args, kwargs)
    finally:
        owner.in_flight.discard(key)
    rec = an.record(node, frame, f"call {fd.qualname}", None, args, value,
                    add_costs(r.cost for r in children))  # fmt: skip
    rec.children = list(children)
    return value


def _holds_state(v: Value, depth: int = 0) -> bool:
    """Whether a call's value holds a module or a parameter. Python builds a new one
    at each call of a factory (`create_conv2d(...)` twice: two convolutions), and
    parameters() counts objects by identity: such a run is not handed out again."""
    if depth > 4:
        return True
    if isinstance(v, (ParameterV, BufferV)) or (isinstance(v, ObjectV) and is_module(v)):
        return True
    if isinstance(v, ObjectV):
        return any(_holds_state(a, depth + 1) for _, a in v.attrs)
    items = getattr(v, "items", None)  # a tuple, a module list, a choice of modules
    return isinstance(items, tuple) and any(_holds_state(i, depth + 1) for i in items)


def plain_data(args, kwargs, tensors: bool = False, unknown: bool = False) -> bool:
    """Whether a call passes only values known by kind: numbers, strings, None and
    tuples of them (with tensors: and tensors some size of which is known, one at
    least; with unknown: and values of no known kind, which the body then reads as
    the summary reads a parameter it knows nothing of)."""
    given = [*args, *kwargs.values()]
    if not given or not all(_known_kind(v, tensors) or (unknown and v is UNKNOWN) for v in given):
        return False
    return not tensors or any(isinstance(v, TensorV) for v in given)


def _known_kind(v: Value, tensors: bool) -> bool:
    # a function of the module, not a closure: one calling itself is a cycle that
    # only the garbage collector frees
    if isinstance(v, TupleV):
        return all(_known_kind(i, tensors) for i in v.items)
    if isinstance(v, TensorV):
        return tensors and v.shape is not None and any(isinstance(d, Expr) for d in v.shape)
    if isinstance(v, OptionalV):  # None or a number: `default(hidden_dim, 4 * dim)`
        return _known_kind(v.value, tensors)
    return isinstance(v, (IntV, BoolV, FloatV, StrV, NoneV))


def none_decides(fd: FuncDef, args, kwargs) -> bool:
    """Whether the call leaves at None a parameter whose default is None and which
    the body reads (`context = default(context, x)`, `if mask is not None:`): the
    summary, made for any value of it, joined what each path gives, while this
    call takes one of them."""
    a = fd.node.args
    positional = list(a.posonlyargs) + list(a.args)
    if fd.cls is not None and not is_static(fd.node) and positional:
        positional = positional[1:]  # self: the receiver
    pos_defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    pairs = list(zip(positional, pos_defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))
    at_none = []
    for i, (param, dflt) in enumerate(pairs):
        if not (isinstance(dflt, ast.Constant) and dflt.value is None):
            continue
        given = kwargs.get(param.arg, args[i] if i < len(positional) and i < len(args) else None)
        if given is None or isinstance(given, NoneV):
            at_none.append(param.arg)
    if not at_none:
        return False
    # the other arguments as plain_data takes them, or tensors of any shape (the
    # summary's own parameters are no better known)
    given = [*args, *kwargs.values()]
    if not all(v is UNKNOWN or isinstance(v, TensorV) or _known_kind(v, True) for v in given):
        return False
    read = {n.id for n in nodes_of(fd.node, ast.Name) if isinstance(n.ctx, ast.Load)}
    return any(name in read for name in at_none)


def lost_shape(v: Value) -> bool:
    """A tensor whose rank or some size is not known."""
    return isinstance(v, TensorV) and (v.rank is None or any(d is None for d in v.shape))


# Findings of a run on a call's arguments that are not the call's to answer for:
# what the analysis reveals, and a name read before it is bound (the body's own).
_NOT_THE_CALLS = frozenset({"SHP390", "SHP319"})
_SAID = "<plain: said>"  # the spots a run on arguments reported, once each


def value_at(an: Analyzer, fd: FuncDef, recv, node, args, kwargs, caller: str) -> Value | None:
    """What fd returns run with these arguments, outside a target: its body
    evaluated on them, as a target's run would, memoised per arguments. A shape
    conflict the run meets is reported where it happens, as a target's is, with the
    call that led there (once per spot: the first call says it); in another file,
    at the call. None where no run says: a decorated function or a generator, a run
    nested too deep or recursive, or a body that returns no value."""
    body = fd.node
    # (the kept walk: a helper is reached at every call of it, with other arguments)
    if body.decorator_list or nodes_of(body, (ast.Yield, ast.YieldFrom, ast.Await)):
        return None
    owner = fd.owner or an
    # the caller's names that stay one size each through the run (symbolic.lend)
    names_lent = symbolic.lendable(_carried_names([*args, *kwargs.values()]))
    key = _call_key(fd, recv, args, kwargs, ("<plain>", GRAD_MODE.get(), names_lent))
    got = owner.specialized.get(key) if key is not None else None
    if got is None:
        flight = key if key is not None else ("<plain>", fd.qualname, id(recv))
        if flight in owner.in_flight or len(owner.in_flight) > MAX_DEPTH:
            return None
        owner.in_flight.add(flight)
        # the arguments' sizes are the caller's: a conflict in another file's body that
        # rests on the caller's constructor sizes is as definite as in the caller's own
        lent = an.size_params - owner.size_params if owner is not an else set()
        owner.size_params |= lent
        try:
            # a pass of its own, as a summary is: no fact, store or call path of the run
            with OwnPass(), owner.diverted() as found, owner.naming.paused():
                symbolic.lend(*names_lent)
                value, _ = run_body(owner, fd, recv, args, kwargs)
        finally:
            owner.in_flight.discard(flight)
            owner.size_params -= lent
        if isinstance(value, NoneV) or value is UNKNOWN:
            value = None
        kept = [
            d for d in found if d.code.startswith(("SHP2", "SHP3")) and d.code not in _NOT_THE_CALLS
        ]
        got = (value, kept)
        if key is not None:
            owner.specialized[key] = got
    value, found = got
    if value is not None:
        value = called(value, args, kwargs)
    where = f"{caller}:{getattr(node, 'lineno', '?')}"
    said = an.specialized.setdefault(_SAID, set())
    for d in found:
        if owner is not an:
            # said at the call, with where in the other file it happens
            at = f"{_file_from(an, owner)}:{d.line}, through {fd.qualname}"
            an.report(node, d.code, f"{d.message} (in {at})")
            continue
        spot = (d.line, d.column, d.code)
        if spot not in said:
            said.add(spot)
            an.report((d.line, d.column, d.end_line, d.end_column), d.code, _via(d.message, where))
    return value


def _carried_names(values: list) -> set[str]:
    """The names the sizes of these arguments hold (a tensor's, or one a tuple of
    them holds), which the caller's annotations may bind."""
    names: set[str] = set()
    for v in values:
        items = v.items if isinstance(v, TupleV) else (v,)
        for t in items:
            if isinstance(t, TensorV) and t.shape is not None:
                for d in t.shape:
                    if isinstance(d, Expr) and not d.is_too_big():
                        names |= d.names()
    return names


def _file_from(an: Analyzer, owner: Analyzer) -> str:
    """The other file as the caller's reader finds it: relative to the caller's
    directory where it lies under it (a sibling module), else by its name."""
    other, here = owner.project_path, an.project_path
    if other is None:
        return "?"
    if here is not None:
        rel = os.path.relpath(other, os.path.dirname(here))
        if not rel.startswith(".."):
            return rel
    return os.path.basename(other)


def said_before(an: Analyzer) -> set:
    """The spots runs on arguments reported so far (a copy), for a pass that must
    leave them as it found them (path_split.follow)."""
    return set(an.specialized.get(_SAID, ()))


def say_again(an: Analyzer, spots: set) -> None:
    """The spots said_before gave are the ones said: what a dropped pass said is not."""
    an.specialized[_SAID] = spots


def _via(message: str, where: str) -> str:
    """The message with the call that led to it first in its call path."""
    if message.endswith(")") and " (via " in message:
        head, _, path = message.rpartition(" (via ")
        return f"{head} (via {where} → {path}"
    return f"{message} (via {where})"


def _plain_arguments(args, kwargs) -> object:
    """The arguments of a call that are no module, as a key (one that cannot be
    hashed stands for any)."""
    items = (
        tuple(v for v in args if not is_module(v)),
        tuple(sorted((k, v) for k, v in kwargs.items() if not is_module(v))),
    )
    try:
        hash(items)
    except TypeError:
        return "<any>"
    return items


def _call_key(fd, recv, args, kwargs, mode):
    # A run under torch.no_grad() records no backward: one per grad mode. Tensors
    # equal in shape may differ in strides, which equality leaves out (ops/saved.py).
    items = tuple(sorted(kwargs.items(), key=lambda kv: kv[0]))
    laid = storages.layouts([*args, *kwargs.values()])
    key = (fd.qualname, recv, tuple(args), items, mode, module_state.generation(), laid)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def run_body(an: Analyzer, fd: FuncDef, recv, args, kwargs):
    """(return value, call records) of one specialized run of fd."""
    value, records, _ = run_followed(an, fd, recv, args, kwargs)
    return value, records


def run_followed(an: Analyzer, fd: FuncDef, recv, args, kwargs):
    """(return value, call records, what its watched names hold at its return:
    in_place.finals) of one specialized run of fd."""
    frame = an.new_frame(fd, fd.qualname)
    frame.global_names = declared_names(fd.node, ast.Global)
    frame.runs = True
    # A region of the backward graph of its own (ops/backward.Origin), which a
    # memoised run's other calls enter through their own arguments.
    token = object()
    bound_args, bound_kwargs = entered(args, kwargs, token)
    bind_arguments(an, fd, frame, recv, bound_args, bound_kwargs)
    handed_back = dynamic.returned_parameter(fd.node)
    given = frame.env.get(handed_back, UNKNOWN) if handed_back is not None else UNKNOWN
    if an.specialize and any(grad_mode.casts(an, d, frame) for d in fd.node.decorator_list):
        storages.cast_region()
    with grad_mode.entered(grad_mode.decorated(an, fd, frame)):
        an.exec_block(fd.node.body, frame)
    value = an.join_all(frame.returns) if frame.returns else NoneV()
    if frame.returns and given is not UNKNOWN:
        # it returns its argument, whatever the analysis read of the rest: the object
        # as the body left it, which the name, never rebound, holds (a change in
        # place, `out.requires_grad = False`, swaps the object wherever it is held)
        value = frame.env.get(handed_back, given)
    value = left(value, token, args, kwargs)
    return value, list(frame.records.values()), in_place.finals(an, frame)


def bind_arguments(an: Analyzer, fd: FuncDef, frame, recv, args, kwargs) -> None:
    """Parameters take the call's values; the rest their defaults, evaluated."""
    node = fd.node
    a = node.args
    positional = list(a.posonlyargs) + list(a.args)
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    args = list(args)
    if fd.cls is not None and not is_static(node) and positional:
        if is_class_method(node):
            recv = class_of_instance(recv)
        frame.env[positional[0].arg] = recv if recv is not None else UNKNOWN
        frame.locals.add(positional[0].arg)
        positional, defaults = positional[1:], defaults[1:]
    extra_kwargs = dict(kwargs)
    top = an.new_frame(None, "<defaults>")
    top.env = an.module_env
    owner = fd.owner or an
    if an.specialize:
        # Python raises TypeError where the call does not bind; the body runs here
        # all the same, so the call may raise
        skip = len(a.posonlyargs) + len(a.args) - len(positional)
        if _any_starred(args) or may_raise.refuses(a, len(args), list(kwargs), skip):
            may_raise.mark()
    for i, (p, default) in enumerate(zip(positional, defaults)):
        frame.locals.add(p.arg)
        if i < len(args):
            v = args[i]
        elif p.arg in extra_kwargs:
            v = extra_kwargs.pop(p.arg)
        elif default is not None:
            v = default_at_call(owner, node, default)
            v = an.eval(default, top) if v is None else v
        else:
            v = UNKNOWN
        frame.env[p.arg] = _annotated(an, p, v)
    for p, default in zip(a.kwonlyargs, a.kw_defaults):
        frame.locals.add(p.arg)
        if p.arg in extra_kwargs:
            v = extra_kwargs.pop(p.arg)
        elif default is not None:
            v = default_at_call(owner, node, default)
            v = an.eval(default, top) if v is None else v
        else:
            v = UNKNOWN
        frame.env[p.arg] = _annotated(an, p, v)
    if a.vararg is not None:
        frame.locals.add(a.vararg.arg)
        rest = args[len(positional) :]
        frame.env[a.vararg.arg] = UNKNOWN if _any_starred(rest) else TupleV(tuple(rest))
    if a.kwarg is not None:
        frame.locals.add(a.kwarg.arg)
        frame.env[a.kwarg.arg] = dict_value(extra_kwargs)


def _any_starred(vals) -> bool:
    return any(isinstance(v, ObjectV) and v.kind == "<starred>" for v in vals)


def _annotated(an: Analyzer, p: ast.arg, v: Value) -> Value:
    """An argument of unknown shape takes the parameter's annotation."""
    if p.annotation is not None and (v is UNKNOWN or (isinstance(v, TensorV) and v.shape is None)):
        t = an.annotations.tensor(p.annotation)
        if t is not None:
            return t
    return v


def class_of_instance(recv: Value | None) -> Value | None:
    """What a `@classmethod` called through recv binds its first parameter to: the
    class of the instance (`type(self)`, the class being built while a module is
    built), so that `cls.x = v` stores into the class, never into the instance;
    recv itself where it is a class already, None where the class is not known."""
    if isinstance(recv, SelfRecorder):
        return ClassRefV(recv.cls)
    if isinstance(recv, ObjectV) and recv.kind.startswith("<class>"):
        return ClassRefV(recv.kind[len("<class>") :])
    return recv if isinstance(recv, ClassRefV) else None


def construct(an: Analyzer, cd: ClassDef, args, kwargs) -> Value:
    """An instance built by running __init__ (inherited ones included) with these
    arguments: what it assigns to self, at these values."""
    if an.specialize and rejected_call(an, cd, len(args), list(kwargs)) is not None:
        may_raise.mark()  # Python raises TypeError; the analysis builds it all the same
    if is_dataclass(cd):
        return construct_config(an, cd, args, kwargs)
    an = cd.owner or an
    key = (
        "<init>",
        cd.key,
        tuple(args),
        tuple(sorted(kwargs.items(), key=lambda kv: kv[0])),
        module_state.generation(),
    )
    try:
        hash(key)
    except TypeError:
        key = None
    init = find_method(an, cd, "__init__")
    if key is not None and key in an.specialized:
        may_raise.replay(an.specialized, key)
        exc = an.specialized.get(("<raises>", key))
        if exc is not None:
            raising.pending(exc)
        if init is not None:
            in_place.forget_handed(an, init, args, kwargs, ran=False)
        given = handed(an.specialized[("<given>", key)], (*args, *(v for _, v in key[3])))
        return renewed(an.specialized[key], given)
    endless = None
    if an.specialize:  # once per class: the answer does not depend on the arguments
        ek = ("<endless>", cd.key)
        if ek not in an.specialized:
            an.specialized[ek] = recursion.endless(an, cd)
        endless = an.specialized[ek]
    if endless is not None:  # Python raises RecursionError: building it never ends
        an.report(endless[0], recursion.CODE, endless[1])
        raising.pending("RecursionError")
        return UNKNOWN
    start = may_raise.count()
    recorder = SelfRecorder(cd.key)
    if an.specialize and module_class(an, cd):
        recorder.attrs[modes.ATTR] = BoolV(True)  # nn.Module.__init__
    if an.specialize and torch_base(an, cd) == MAPPING:
        # dict.__new__'s empty entries, before any `__init__` (one that never calls
        # dict's, CFG's `setattr` loop, fills them through `super().__setitem__`)
        recorder.attrs[ITEMS] = dict_value({})
    base = torch_base(an, cd) if init is None else None
    exc = None
    made: list = []
    if init is not None:
        _MADE.append(made)
        try:
            exc = run_init(an, init, recorder, args, kwargs)
        finally:
            _MADE.pop()
        in_place.forget_handed(an, init, args, kwargs)
        if an.specialize and init.cls is not None:
            # `cls.__init__ = __init__` in a class decorator: another constructor may
            # run, which the analysis did not: nothing it stored is known
            names = list(dict.fromkeys([init.cls.name, cd.name]))
            why = dynamic.not_modelled(
                an, init, names, decorators=False, special=True, by_name=True
            )
            if why is not None:
                for k in list(recorder.attrs):
                    recorder.attrs[k] = UNKNOWN
                recorder.attrs[UNFOLLOWED] = UNKNOWN
    elif base is not None:  # no project __init__ on the way: the torch layer's runs
        top = an.new_frame(None, cd.name)
        top.env = an.module_env
        call = ast.copy_location(ast.Call(ast.Name(cd.name, ast.Load()), [], []), cd.node)
        torch_init(an, base, recorder, call, args, kwargs, top)
    elif init is None and undescribed_torch_base(an, cd):
        recorder.attrs[UNFOLLOWED] = UNKNOWN
    value = ObjectV(f"<class>{cd.key}", tuple(settled(an, cd, recorder.attrs).items()))
    if an.trial:
        # built in a loop's trial turn (loops.same_each_turn), whose stores into self
        # are not applied: no instance to hand out again
        key = None
    # A plain class whose __init__ ran, and its bases' through super(): building it
    # costs what their calls cost (`built`).
    plain = init is not None and exc is None and not module_class(an, cd) and builds_as_type(an, cd)
    an.built_made = made if plain else None
    if key is not None:
        an.specialized[key] = value
        an.specialized[("<given>", key)] = (*args, *(v for _, v in key[3]))
        may_raise.keep(an.specialized, key, start)
    if exc is not None:  # building it raises: so does the call that builds it
        raising.pending(exc)
        if key is not None:
            an.specialized[("<raises>", key)] = exc
    return value


def typed_dict_built(node: ast.Call, args, kwargs) -> Value:
    """A TypedDict class called: `dict(*args, **kwargs)`, where the call spells each
    keyword and at most one mapping known entry by entry."""
    spelt = all(kw.arg is not None for kw in node.keywords) and not any(
        isinstance(a, ast.Starred) for a in node.args
    )
    base = mapping(args[0]) if len(args) == 1 else None
    if not spelt or len(args) > 1 or args and base is None:
        return UNKNOWN
    return dict_value({**(dict(base.attrs) if base else {}), **kwargs})


def built(an: Analyzer, cd: ClassDef, node: ast.Call, args, kwargs, frame) -> Value:
    """`C(...)` of a plain project class: its instance, and a record of the call
    holding the calls its __init__ chain made (construct's `built_made`), so that a
    target's total follows it; a construction reused, or of a module, records
    nothing here (a call of unknown cost where it took a tensor)."""
    made_class = namedtuples.of_class(an, cd)
    if made_class is not None:  # a tuple: no __init__ of the project's runs
        return namedtuples.built(made_class, args, kwargs) or UNKNOWN
    if typeddicts.is_typed_dict(an, cd):  # a plain dict: no __init__ either
        return typed_dict_built(node, args, kwargs)
    made_by_new = newly_made(an, cd, node, args, kwargs, frame)
    if made_by_new is not None:
        return made_by_new
    owner = cd.owner or an
    owner.built_made = None
    value = an.construct(cd, args, kwargs)
    made, owner.built_made = owner.built_made, None
    if an.specialize and made is not None:
        tensors = [a for a in [*args, *kwargs.values()] if isinstance(a, TensorV)]
        cost = add_costs(r.cost for r in made)
        rec = an.record(node, frame, f"call {ast.unparse(node.func)}", None, tensors, value, cost)
        rec.children = list(made)
    return value


def newly_made(an: Analyzer, cd: ClassDef, node: ast.Call, args, kwargs, frame) -> Value | None:
    """`C(...)` where C (or a base) defines `__new__`, in a target run: Python's
    `type.__call__` calls `C.__new__(C, ...)` and runs `__init__` only on an
    instance of C, the call's value being what `__new__` returned. What it
    returned, where that is surely no instance of C (a torch layer, a number, an
    instance of a class not derived from C); not known where it may be one (the
    analysis would hold an instance its `__init__` did not build). None: no
    `__new__` of the project's, or a `__new__` that only returns
    `super().__new__(cls)` (object's: the instance `__init__` then builds)."""
    if not an.specialize:
        return None
    if metaclass_call(an, cd):  # the metaclass's `__call__` decides, not run here
        return an.unknown_call(node, args, kwargs, frame, f"{cd.name}'s metaclass decides the call")
    new = find_method(an, cd, "__new__")
    if new is None or _object_new_only(new.node):
        return None
    # (bound to cls as the first parameter, as a classmethod's call binds it)
    made = specialized_invoke(an, new, ClassRefV(cd.key), node, args, kwargs, frame)
    if made == ObjectV(_FRESH + cd.key):
        return None  # object's instance, untouched: `__init__` builds it
    if _surely_not_instance(an, made, cd):
        return made
    return an.unknown_call(node, args, kwargs, frame, f"{cd.name}.__new__ decides the call's value")


# The kind of the instance `super().__new__(cls)` gives in C.__new__ where that is
# object's `__new__`: nothing stored on it yet, `__init__` not run.
_FRESH = "<object.__new__>"


def _object_new(an: Analyzer, frame, args, kwargs) -> Value | None:
    """`super().__new__(cls)` in a `__new__` whose class has no base along the MRO
    with a `__new__` of its own but object (or nn.Module, which defines none): a
    fresh instance of cls (`newly_made` builds it as `type.__call__` would, where
    `__new__` returns it as it was given); None elsewhere."""
    if kwargs or len(args) != 1 or not isinstance(args[0], ClassRefV):
        return None
    cd = an.class_of(args[0].name)
    if cd is None or super_method(an, frame, "__new__", cd) is not None:
        return None
    if not (derives_from_object_alone(an, cd) or module_class(an, cd)):
        return None  # a builtin's or a library's `__new__`
    return ObjectV(_FRESH + cd.key)


def _object_new_only(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """fn's body is `return super().__new__(cls)` (or object's) alone, with a docstring."""
    body = [
        s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    call = body[0].value
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    return (
        isinstance(call, ast.Call)
        and bool(params)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "__new__"
        and _super_or_object(call.func.value)
        and len(call.args) == 1
        and not call.keywords
        and isinstance(call.args[0], ast.Name)
        and call.args[0].id == params[0]
    )


def _super_or_object(e: ast.expr) -> bool:
    if isinstance(e, ast.Name):
        return e.id == "object"
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id == "super"
        and not e.args
    )


def _surely_not_instance(an: Analyzer, v: Value, cd: ClassDef) -> bool:
    """isinstance(v, cd) is surely False: a torch layer (torch derives from no
    project class), an instance of a project class not derived from cd, or a
    tensor, number, string, None or tuple where cd derives from object alone."""
    if type(v) is ObjectV and v.kind.startswith("torch.nn."):
        return True
    if type(v) is ObjectV and v.kind.startswith("<class>"):
        mine = an.class_of(v.kind[len("<class>") :])
        return mine is not None and derives_from(an, mine, cd) is False
    plain_value = isinstance(v, (TensorV, IntV, BoolV, FloatV, StrV, NoneV)) or (type(v) is TupleV)
    return plain_value and derives_from_object_alone(an, cd)


# Per construction being run, the records its __init__ body made and those of its
# bases' bodies run through super() (which no caller keeps).
_MADE: list[list] = []


def run_init(an: Analyzer, init: FuncDef, recorder: SelfRecorder, args, kwargs) -> str | None:
    """Run __init__ on recorder; the exception it surely raises, if any."""
    an = init.owner or an
    frame = an.new_frame(init, init.qualname)
    frame.global_names = declared_names(init.node, ast.Global)
    frame.runs = True
    mark = module_state.mark()
    reached = in_place.globals_before(an, init) if an.specialize else {}
    with call_path.calling(init.qualname, None), aliasing.building(recorder):
        bind_arguments(an, init, frame, recorder, args, kwargs)
        an.exec_block(init.node.body, frame)
    if an.specialize:  # no call site names a constructor: in_place.follow's part
        in_place.forget_globals(an, init, reached, module_state.keys_since(mark), frame)
    if _MADE:
        _MADE[-1].extend(frame.records.values())
    return raising.of_records(frame.records.values()) if frame.raised else None


def _overridden(an: Analyzer, me: Value, meth: str) -> bool:
    cd = _instance_class(an, me)
    return cd is not None and find_method(an, cd, meth) is not None


def _register_on_self(me: SelfRecorder, meth: str, name: Value, value: Value) -> Value:
    """nn.Module's `register_buffer(name, t)` (or `register_parameter`, `add_module`)
    on the instance being built: the value stored under that name."""
    if meth == "register_buffer" and isinstance(value, TensorV):
        # persistent or not: a buffer, the very tensor (its elements too)
        value = as_buffer(value)
    elif meth == "register_buffer" and value is UNKNOWN:
        # torch takes a tensor or None there: a buffer, of a size not known,
        # never a parameter or a module
        value = BufferV(None)
    if isinstance(name, StrV) and name.value is not None:
        me.attrs[name.value] = value
        plain.mark(me.attrs, name.value, False)
    else:
        me.attrs[UNFOLLOWED] = UNKNOWN  # registered under a name not known
        aliasing.lost()  # which may be one it holds
    return NoneV()


def super_call(an: Analyzer, meth: str, node, args, kwargs, frame) -> Value | None:
    """`super().__init__(...)` runs the base's __init__ on the same self;
    `super().forward(x)` the base's forward on this instance; any other method of
    a base runs on the instance as `self.m()` would (on the one being built too:
    what it stores there is its state)."""
    if meth == "__new__" and frame.func is not None and frame.func.node.name == "__new__":
        return _object_new(an, frame, args, kwargs)
    me = frame.env.get("self")
    fd = super_method(an, frame, meth, _instance_class(an, me))
    if fd is None and meth == "__init__" and isinstance(me, SelfRecorder) and frame.func:
        base = torch_base(an, frame.func.cls) if frame.func.cls is not None else None
        if base is None and frame.func.cls is not None:
            mixed = _mixin_init(an, me, frame.func.cls)
            if mixed is not None:  # a mixin's `super().__init__` reaching a torch layer
                if mixed == UNFOLLOWED:
                    me.attrs[UNFOLLOWED] = UNKNOWN
                else:
                    torch_init(an, mixed, me, node, args, kwargs, frame)
                return NoneV()
        if base is not None:  # `super().__init__(dim)` of a torch layer
            torch_init(an, base, me, node, args, kwargs, frame)
        elif frame.func.cls is not None and undescribed_torch_base(an, frame.func.cls):
            me.attrs[UNFOLLOWED] = UNKNOWN
        return NoneV()
    if fd is None and isinstance(me, ObjectV) and frame.func and frame.func.cls is not None:
        base = torch_base(an, frame.func.cls)
        if base is not None and meth == "forward":
            return torch_forward(an, base, me, node, args, kwargs, frame)
        if meth == "__call__":
            mine = _instance_class(an, me)
            reached = call_after(an, mine, frame.func.cls) if mine is not None else None
            if reached is not None and reached.startswith("torch.nn."):
                return _module_call(an, me, node, args, kwargs, frame)  # nn.Module's
        if base == MAPPING:
            return _dict_method(me, meth, args if not kwargs else None, frame)
    if fd is None and isinstance(me, SelfRecorder) and ITEMS in me.attrs and frame.func:
        if frame.func.cls is not None and torch_base(an, frame.func.cls) == MAPPING:
            if meth in MAPPING_MUTATORS:  # a change to the instance being built
                an.outer_writes += 1
                if an.trial:
                    return None
            return _dict_method(me, meth, args if not kwargs else None, frame)
    if fd is None and meth in registering.METHODS and isinstance(me, SelfRecorder):
        # `super().register_parameter(name, p)` in an override: nn.Module's, on the
        # instance being built
        got = registering.bound(meth, args, kwargs)
        if got is not None:
            return _register_on_self(me, meth, *got)
        me.attrs[UNFOLLOWED] = UNKNOWN  # torch raises; what it stored is not known
        return None
    if fd is None:
        return NoneV() if meth == "__init__" else None
    if meth == "__init__":
        if isinstance(me, SelfRecorder):
            exc = run_init(an, fd, me, args, kwargs)
            if exc is not None:
                raising.pending(exc)
        return NoneV()
    if isinstance(me, ObjectV):
        return an.invoke(fd, me, node, args, kwargs, frame)
    if isinstance(me, SelfRecorder):  # `super().setup()` on the instance being built
        return run_on_self(an, fd, me, node, args, kwargs, frame)
    return None


def _mixin_init(an: Analyzer, me: SelfRecorder, cls: ClassDef) -> str | None:
    """What `super().__init__` in a method of cls, none of whose own bases is a torch
    layer, runs on the instance being built when that instance's class derives from
    a torch class too (`class Q(Mixin, nn.LayerNorm)`: the mixin's `super()` follows
    Q's order and reaches LayerNorm's): the layer or container the stubs describe
    (its qualified name, for torch_init); UNFOLLOWED for a torch class they do not
    describe, or an order not known (what it stores is then not known: reading
    nothing would make 0 parameters a complete figure); None where no torch class
    is reached (nn.Module's, object's, a project class's: the caller's reading)."""
    inst = _instance_class(an, me)
    if inst is None or inst.key == cls.key or torch_ancestor(an, inst) is None:
        return None
    if torch_ancestor(an, cls) is not None:
        return None  # cls's own bases reach torch: its reading stands
    reached = init_after(an, inst, cls)
    if reached is None:
        return UNFOLLOWED
    if reached in _MAPPINGS:
        return MAPPING
    if reached in _CONTAINERS or layer_class(reached) is not None:
        return reached
    if reached.startswith("torch.") and not reached.endswith(".Module"):
        return UNFOLLOWED
    return None


def _module_call(an: Analyzer, me: ObjectV, node, args, kwargs, frame) -> Value | None:
    """`super().__call__(*args)` reaching nn.Module's: the instance's forward, as
    `_call_impl` runs it (hooks are judged on forward: dynamic.py)."""
    cd = _instance_class(an, me)
    fwd = find_method(an, cd, "forward") if cd is not None else None
    if fwd is not None:
        return an.invoke(fwd, me, node, args, kwargs, frame)
    base = torch_base(an, cd) if cd is not None else None
    return torch_forward(an, base, me, node, args, kwargs, frame) if base is not None else None


def _instance_class(an: Analyzer, me: Value | None) -> ClassDef | None:
    """The project class of `self` (the module being built included): where its
    `super()` starts looking from, along that class's MRO."""
    if isinstance(me, SelfRecorder):
        return an.class_of(me.cls)
    if isinstance(me, ObjectV) and me.kind.startswith("<class>"):
        return an.class_of(me.kind[len("<class>") :])
    return None


def super_call_not_run(an: Analyzer, meth: str, frame) -> None:
    """`super().__init__(*layers)` with arguments not known one by one is not run;
    what the base's method stores on the instance being built is then not known
    either: a container's layers, a torch layer's weights, a project base's state
    (counted as absent, the parameters would be a complete figure too low).
    nn.Module's own __init__ stores nothing."""
    me = frame.env.get("self")
    cls = frame.func.cls if frame.func is not None else None
    if not isinstance(me, SelfRecorder) or cls is None:
        return
    if super_method(an, frame, meth, _instance_class(an, me)) is not None:
        me.attrs[UNFOLLOWED] = UNKNOWN
        return
    base = torch_base(an, cls)
    if meth != "__init__" or base is None or base == MAPPING:
        return
    if base in _CONTAINERS:
        me.attrs[LAYERS] = ModuleListV((), _CONTAINERS[base], known=False)
    else:
        me.attrs[UNFOLLOWED] = UNKNOWN


def unbound_method_call(an: Analyzer, ref: ClassRefV, meth: str, node, args, kwargs, frame):
    """`Base.__init__(self, c, k)`, `Base.forward(self, x)`: a method of a project
    class called through the class, the instance first, as `super()` would call it
    (pre-`super()` code does this); None where the call is not that."""
    cd = an.class_of(ref.name)
    if cd is None or not args:
        return None
    fd = find_method(an, cd, meth)
    me, rest = args[0], list(args[1:])
    if fd is not None and any(
        isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
        for d in fd.node.decorator_list
    ):
        return None
    if meth == "__init__":
        if not isinstance(me, SelfRecorder):
            return None
        if fd is None:  # the torch base's own, or object's
            base = torch_base(an, cd)
            if base is not None:
                torch_init(an, base, me, node, rest, kwargs, frame)
            return NoneV()
        exc = run_init(an, fd, me, rest, kwargs)
        if exc is not None:
            raising.pending(exc)
        return NoneV()
    if fd is None:
        return None
    if isinstance(me, SelfRecorder):
        return run_on_self(an, fd, me, node, rest, kwargs, frame)
    if isinstance(me, ObjectV):
        return an.invoke(fd, me, node, rest, kwargs, frame)
    return None


def is_super_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )
