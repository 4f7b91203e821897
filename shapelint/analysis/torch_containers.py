"""torch's containers on project modules: nn.Sequential, nn.ModuleList and
nn.ParameterList built, a torch base's __init__ and forward run on a project
instance, what iterating or slicing a container gives.

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import dict_keys, framed, joined_objects, parametrize, plain, specialized
from shapelint.analysis.attributes import all_methods, find_method
from shapelint.analysis.dict_entries import ITEMS
from shapelint.analysis.dict_values import dict_value, mapping
from shapelint.analysis.module_kinds import (
    CONTAINERS,
    DICT_KINDS,
    LAYERS,
    MAPPING,
    PARAMETRIZED,
    is_module,
    torch_base,
)
from shapelint.analysis.module_lists import ModuleListV, item_names
from shapelint.analysis.recorder import SelfRecorder
from shapelint.analysis.repetition import collected, holding, scale_cost
from shapelint.analysis.unknown_cost import cost_not_known
from shapelint.notation.symbolic import Expr
from shapelint.ops.stub_ops import layer_tensors, required_parameters
from shapelint.ops.values import (
    UNKNOWN,
    BoolV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    SliceV,
    StrV,
    TensorV,
    TupleV,
    Value,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef


def container_of(args, sequential: bool) -> Value:
    if sequential and len(args) == 1 and isinstance(args[0], ObjectV):
        if args[0].kind in DICT_KINDS:  # nn.Sequential(OrderedDict(...))
            if not dict_keys.all_str(args[0]):
                return UNKNOWN  # add_module refuses a name no str: a raise not modelled
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


def torch_init(an: Analyzer, base: str, recorder: SelfRecorder, node, args, kwargs, frame):
    """The torch base's __init__ on a project instance: a layer's attributes (its
    Parameters, sizes), or a container's layers."""
    if base in CONTAINERS:
        recorder.attrs[LAYERS] = container_of(args, sequential=CONTAINERS[base])
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


def inherited_init(an: Analyzer, cd: ClassDef, args, kwargs) -> dict[str, Value] | None:
    """What torch's constructor stores on an instance of a project class with no
    __init__ of its own on the way to the torch layer or container it derives from
    (`class LayerNorm(nn.LayerNorm)` overriding forward alone): Python runs the
    base's __init__ at the call's arguments. None where the class has one of its own
    or no such base."""
    base = torch_base(an, cd)
    if base is None or base == MAPPING or find_method(an, cd, "__init__") is not None:
        return None
    top = an.new_frame(None, cd.name)
    top.env = an.module_env
    call = ast.copy_location(ast.Call(ast.Name(cd.name, ast.Load()), [], []), cd.node)
    recorder = SelfRecorder(cd.key)
    torch_init(an, base, recorder, call, args, kwargs, top)
    return dict(recorder.attrs)


def inherited_template(an: Analyzer, cd: ClassDef) -> dict[str, Value] | None:
    """inherited_init in the names of the torch constructor's parameters a call
    must give (`normalized_shape`, `in_features`): what a method's summary reads
    off self, which a call binds to its instance's sizes (its other parameters at
    their defaults, as the summary reads them)."""
    base = torch_base(an, cd)
    if base is None or base in CONTAINERS or base == MAPPING:
        return None
    names = required_parameters(base)
    if names is None:
        return None
    return inherited_init(an, cd, [IntV(Expr.name(n)) for n in names], {})


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
        if base not in CONTAINERS:
            return None
        me.attrs[LAYERS] = ModuleListV((), CONTAINERS[base], known=False)
        return NoneV()
    torch_init(an, base, me, _without_self(node), list(args[1:]), kwargs, frame)
    return NoneV()


def _without_self(node):
    """The call `Base.__init__(self, *args)` as the layer's own call `Base(*args)`
    reads: its positional argument nodes line up with the values handed on
    (unify's size arguments are read by position). One per call site, kept on the
    node: records and memos are keyed on it."""
    if not isinstance(node, ast.Call) or not node.args:
        return node
    shifted = getattr(node, _SHIFTED, None)
    if shifted is None:
        shifted = ast.copy_location(ast.Call(node.func, node.args[1:], node.keywords), node)
        setattr(node, _SHIFTED, shifted)
    return shifted


_SHIFTED = "_shapelint_without_self"


def torch_forward(an: Analyzer, base: str, me: ObjectV, node, args, kwargs, frame) -> Value:
    """The torch base's forward on a project instance (inherited, or `super().forward`):
    a container chains its layers, a layer is its stub with the instance's attributes."""
    if base == MAPPING:
        return an.unknown_call(node, args, kwargs, frame, "a dict is not callable")
    if any(k == PARAMETRIZED for k, _ in me.attrs):
        why = "its weight is recomputed by a parametrization not followed"
        return an.unknown_call(node, args, kwargs, frame, why)
    if base in CONTAINERS:
        layers = _registered(an, me)
        if layers is not None and layers.sequential:
            return call_sequential(an, layers, node, args, kwargs, frame)
        return an.unknown_call(node, args, kwargs, frame, f"{base} of unknown layers")
    called = parametrize.layer_called(an, base, me, node, frame)
    if called is None:
        return an.unknown_call(node, args, kwargs, frame, parametrize.UNFOLLOWED_WHY)
    me = called
    layer = ObjectV(base, _through_properties(an, base, me, node, frame))
    if not an.specialize:
        # called as the layer itself is: what its checks say of an input known in part
        # is learnt (a target's inputs are known; there the call costs 3x on open_clip)
        return an.call_value(layer, node, args, kwargs, frame)
    return an.op_value(f"{base}.__call__", [layer, *args], kwargs, node, frame)


def _through_properties(an: Analyzer, base: str, me: ObjectV, node, frame) -> tuple:
    """me's attributes as the base's forward reads them: a parameter or buffer of the
    layer (`self.weight`) that me's class defines as a property is what its getter
    returns, run now, as each forward reads it (Python's lookup: a data descriptor on
    the class wins over the instance's dict; torchrl's NoisyLinear, `weight_mu +
    weight_sigma * weight_epsilon`)."""
    if not me.kind.startswith("<class>"):
        return me.attrs
    attrs = dict(me.attrs)
    for name in layer_tensors(base):
        read = getattr(node, _READ + name, None)
        if read is None:  # one node per call site, as records and memos are keyed on it
            read = ast.copy_location(
                ast.Attribute(ast.Name("self", ast.Load()), name, ast.Load()), node
            )
            setattr(node, _READ + name, read)
        got = specialized.property_get(an, me.kind[len("<class>") :], me, attrs, read, frame)
        if got is not None:
            attrs[name] = got
    return tuple(attrs.items())


_READ = "_shapelint_property_read_"


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
    is itself. The module being built walks what it has registered so far
    (`for layer in self:` after `super().__init__(*layers)`)."""
    if isinstance(v, SelfRecorder):
        key, v = v.cls, ObjectV(f"<class>{v.cls}", tuple(v.attrs.items()))
    elif isinstance(v, ObjectV) and v.kind.startswith("<class>"):
        key = v.kind[7:]
    else:
        return v
    cd = an.class_of(key)
    if cd is None or torch_base(an, cd) not in CONTAINERS:
        return v
    layers = _registered(an, v)
    return layers if layers is not None else ModuleListV(known=False)


def inherited_forward(
    an: Analyzer, base: str, me: ObjectV, cd: ClassDef, args: list, frame, kwargs=None
):
    """A target whose forward is its torch base's, given args (and kwargs): one call
    record, at the class, holding what the base's forward ran."""
    node = ast.copy_location(ast.Call(ast.Name(cd.name, ast.Load()), [], []), cd.node)
    with collected(frame) as children:
        value = torch_forward(an, base, me, node, args, kwargs or {}, frame)
    holding(an, node, frame, f"call {cd.name}.forward", args, value, children)
    return value


def call_sequential(an: Analyzer, seq: ModuleListV, node, args, kwargs, frame) -> Value:
    if seq.ends is not None and len(args) == 1 and not kwargs:
        saved = frame.records
        frame.records = {}  # its layers' calls cost what no one counted
        try:
            x = framed.chained(an, seq.ends, node, args[0], frame)
        finally:
            frame.records = saved
        why = "Sequential of a symbolic number of layers"
        an.record(node, frame, "call nn.Sequential", None, args, x, cost_not_known(why))
        return x
    if len(args) != 1 or kwargs or not seq.known:
        an.record(
            node,
            frame,
            "call nn.Sequential",
            None,
            args,
            UNKNOWN,
            cost_not_known("Sequential of unknown layers"),
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
    holding(an, node, frame, "call nn.Sequential", args, x, children)
    return x


def _repeat_call(an, item, count: Expr, node, x, frame) -> Value:
    """n copies of one layer in a row: its cost n times, if it keeps the shape."""
    y = an.call_value(item, node, [x], {}, frame)
    for rec in frame.records.values():
        rec.cost = scale_cost(rec.cost, count)
    if y != x:
        return UNKNOWN
    return y


def subscript(base: Value, idx: Value, node: ast.Subscript) -> Value | None:
    """`self.layers[0]`, `self.layers[1:]`, `config["n_embd"]`, `self.heads["cls"]`."""
    if isinstance(base, ObjectV) and base.kind in DICT_KINDS:
        key = dict_keys.key_of(idx)
        if dict_keys.known(key):
            found = dict_keys.entry(base, key)
            return UNKNOWN if found is None else found
        # a key not known: any entry, which a change through the name reaches
        return joined_objects.either_among(v for _, v in base.attrs) or UNKNOWN
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


def listed_items(v: Value) -> tuple[Value, ...] | None:
    """The items of a module list known one by one (`norm, block, residual = layer`
    unpacks an nn.ModuleList as iterating it does); None for anything else."""
    if isinstance(v, ModuleListV) and v.known and v.count is None:
        return v.items
    return None
