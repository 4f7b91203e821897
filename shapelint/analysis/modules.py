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


Its parts are modules of their own, split by concern (benchmarks/split_modules.py):
callable_values.py, module_kinds.py, unfollowed.py, dict_values.py, module_tree.py,
torch_containers.py, holders.py, module_flags.py, attribute_stores.py, copies.py,
module_loops.py, config_classes.py, specialized.py, argument_runs.py,
construction.py, super_calls.py. What stays here are the calls on module values
(qualified_call, call_value, method_call) and their own helpers.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from shapelint.analysis import (
    aliasing,
    autograd_function,
    decorators,
    dict_keys,
    framed,
    in_place,
    module_casts,
    module_state,
    namedtuples,
    open_dicts,
    own_methods,
    plain,
    registering,
    typeddicts,
)
from shapelint.analysis.attribute_stores import store_attr, store_attribute
from shapelint.analysis.attributes import (
    all_methods,
    call_unsure,
    is_static,
    own_call,
)
from shapelint.analysis.callable_values import (
    BoundMethodV,
    ClassRefV,
    FunctionRefV,
    LayerClassV,
    PartialV,
    TensorMethodV,
    TorchForwardV,
)
from shapelint.analysis.construction import newly_made, typed_dict_built
from shapelint.analysis.dict_values import dict_value, mapping
from shapelint.analysis.holders import grown_everywhere
from shapelint.analysis.module_flags import (
    made_parameter,
    mode_flag,
    set_mode,
    set_requires_grad,
    torch_mode_method,
    trainability_lost,
)
from shapelint.analysis.module_kinds import (
    CONTAINERS,
    DICT_KINDS,
    DICTS,
    REGISTERED_DICT_KIND,
    is_module,
    torch_ancestor,
    torch_base,
)
from shapelint.analysis.module_lists import ModuleListV, as_items, item_names
from shapelint.analysis.module_loops import MAX_UNROLL
from shapelint.analysis.module_tree import children, registered_modules
from shapelint.analysis.recorder import SelfRecorder
from shapelint.analysis.specialized import run_on_self, specialized_invoke
from shapelint.analysis.super_calls import class_overrides, register_on_self
from shapelint.analysis.torch_containers import call_sequential, container_of, torch_forward
from shapelint.analysis.unfollowed import PASS_THROUGH, WRAPS_KIND
from shapelint.notation.symbolic import Expr
from shapelint.ops import saved as storages
from shapelint.ops import versions
from shapelint.ops.values import (
    DICT_KIND,
    UNKNOWN,
    BoolV,
    BufferV,
    Cost,
    FloatV,
    IntV,
    NoneBufferV,
    NoneV,
    ObjectV,
    OptionalV,
    ParameterV,
    StrV,
    TensorV,
    TupleV,
    Value,
    as_buffer,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, FuncDef


# ---------------------------------------------------------------------- construction


def qualified_call(an: Analyzer, qual: str, args, kwargs, open_kwargs) -> Value | None:
    """torch.nn containers, Parameter, SimpleNamespace: values the stubs do not model."""
    if qual in CONTAINERS:
        if open_kwargs:  # `nn.Sequential(*layers)` with layers not known one by one
            ends = framed.spread(args, kwargs) if qual == "torch.nn.Sequential" else None
            if ends is not None and all(is_module(v) for v in ends):
                return ModuleListV((), True, known=False, ends=ends)
            return ModuleListV((), CONTAINERS[qual], known=False)
        made = container_of(args, sequential=CONTAINERS[qual])
        if qual == "torch.nn.ParameterList" and isinstance(made, ModuleListV):
            return replace(made, items=tuple(_wrapped(v) for v in made.items))
        return made
    if qual in DICTS:
        if open_kwargs:
            return UNKNOWN
        kind = DICTS[qual]
        if not args:
            entries = dict(kwargs)
        else:
            base = mapping(args[0]) if len(args) == 1 else None
            names = kind != DICT_KIND or qual == "types.SimpleNamespace"
            if base is None or names and not dict_keys.all_str(base):
                return UNKNOWN  # names that must be strs (a raise not modelled)
            entries = {**dict(base.attrs), **kwargs}
        if qual == "torch.nn.ParameterDict":
            entries = {k: _wrapped(v) for k, v in entries.items()}
        return dict_value(entries, kind)
    if qual == "functools.wraps":
        return ObjectV(WRAPS_KIND)  # a decorator copying a name and a docstring
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
    if qual in PASS_THROUGH:
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
        # the Parameter is data's storage: its elements are data's (one Known, which a
        # write through either makes stale), and no save made before data holds it either
        made = ParameterV(data.shape, data.dtype, flag, known=data.known)
        versions.made_from(made, storages.named_storage(data))
        return made
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


# ---------------------------------------------------------------------- calls


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
    if isinstance(callee, TorchForwardV) and isinstance(callee.recv, ObjectV):
        return torch_forward(an, callee.base, callee.recv, node, args, kwargs, frame)
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
        return call_sequential(an, callee, node, args, kwargs, frame)
    if isinstance(callee, OptionalV) and is_module(callee.value):
        # calling None raises TypeError: a path that goes on called the module
        return an.call_value(callee.value, node, args, kwargs, frame)
    return None


def _to_a_tensors_device(an: Analyzer, node: ast.Call, frame) -> bool:
    """Whether a `.to(...)` call passes only the device of a tensor (`x.device`, a
    torch.device whatever x's dtype; also as `device=`), and at most `non_blocking`.
    A dtype, a tensor (its dtype too) or a device named otherwise may change what the
    module holds or where: not this."""
    devices = [*node.args, *(k.value for k in node.keywords if k.arg == "device")]
    others = [k for k in node.keywords if k.arg not in ("device", "non_blocking")]
    if len(devices) != 1 or others:
        return False
    arg = devices[0]
    if not (
        isinstance(arg, ast.Attribute) and arg.attr == "device" and isinstance(arg.value, ast.Name)
    ):
        return False  # (a name's value is read again here: one that runs no code)
    return isinstance(an.eval(arg.value, frame), TensorV)


def method_call(an: Analyzer, recv: Value, func: ast.Attribute, node, args, kwargs, frame):
    """Module-building methods: list.append on a module list, register_buffer,
    add_module; dict access on dict-like values."""
    attr = func.attr
    if attr == "to" and an.specialize and is_module(recv) and _to_a_tensors_device(an, node, frame):
        # `layer.to(x.device)`: nn.Module.to moves each parameter and buffer to the
        # device x is on, in place, and returns the module; onto the device the
        # inputs are already on nothing is computed or copied, and no dtype changes
        an.record(node, frame, "call to", None, [], recv, Cost(*(Expr.const(0),) * 3))
        return recv
    if attr in ("named_children", "children"):
        walked = children(an, recv, attr, args, kwargs)
        if walked is not None:
            return walked
    if isinstance(recv, SelfRecorder):
        # a project class's own `register_parameter` (a base's override) runs as written
        got = registering.bound(attr, args, kwargs) if attr in registering.METHODS else None
        if got is not None and not class_overrides(an, recv, attr):
            return register_on_self(recv, attr, *got)
        if attr == "requires_grad_" and an.specialize:
            set_requires_grad(an, recv, recv, args, kwargs, frame)
            return recv
        if attr in ("train", "eval") and an.specialize and torch_mode_method(an, recv, attr):
            return set_mode(recv, mode_flag(attr, args, kwargs), recv, frame)
        if attr in module_casts.METHODS and an.specialize and torch_mode_method(an, recv, attr):
            got = module_casts.cast(an, recv, attr, args, kwargs, recv, frame)
            return got[0] if got is not None else None
        return None
    if (
        attr in ("train", "eval")
        and an.specialize
        and is_module(recv)
        and torch_mode_method(an, recv, attr)
    ):
        # `Block(dim).eval()`: a module just built, which nothing else holds yet
        fresh = isinstance(func.value, ast.Call)
        new = set_mode(recv, mode_flag(attr, args, kwargs), _self_of(frame), frame, fresh, an)
        an.record(node, frame, f"call {attr}", None, [], new, Cost(*(Expr.const(0),) * 3))
        return new
    if (
        attr in module_casts.METHODS
        and an.specialize
        and is_module(recv)
        and torch_mode_method(an, recv, attr)
    ):
        # `self.head.half()`, `Block(dim).to(torch.bfloat16)`: its tensors at the dtype
        fresh = isinstance(func.value, ast.Call)
        got = module_casts.cast(an, recv, attr, args, kwargs, _self_of(frame), frame, fresh)
        if got is not None:
            new, moved = got
            zero = Expr.const(0)
            an.record(node, frame, f"call {attr}", None, [], new, Cost(zero, zero, moved))
            return new
    if (
        attr == "requires_grad_"
        and an.specialize
        and isinstance(recv, ParameterV)
        and made_parameter(an, func.value, frame)
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
        return set_requires_grad(an, recv, _self_of(frame), args, kwargs, frame)
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
        and not class_overrides(an, recv, attr)
    ):
        # `self.head.register_parameter("weight", p)` while modules are built
        name, value = registering.bound(attr, args, kwargs) or (UNKNOWN, UNKNOWN)
        if attr == "register_buffer" and isinstance(value, TensorV):
            value = as_buffer(value)
        elif attr == "register_buffer" and isinstance(value, NoneV):
            value = NoneBufferV()
        known = name.value if isinstance(name, StrV) else None
        store_attr(an, recv, known, value, frame)
        return NoneV()
    if (
        attr == "register_buffer"
        and an.specialize
        and isinstance(func.value, ast.Name)
        and type(recv) is ObjectV
        and is_module(recv)
        and not class_overrides(an, recv, attr)
    ):
        stored = _buffer_stored_in_forward(an, recv, func.value, node, args, kwargs, frame)
        if stored is not None:
            return stored
    if isinstance(recv, ModuleListV) and attr in ("append", "extend", "insert"):
        new = _grown(recv, attr, args)
        _store(an, func.value, new, frame)
        # the one object grew: every other holder of it sees it (a partial of it,
        # another module's attribute), not the list before (complete 512 for 1,024)
        grown_everywhere(an, recv, new)
        return new if attr == "insert" and recv.sequential else NoneV()  # Sequential's: self
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
        key = dict_keys.key_of(args[0]) if args else dict_keys.key_of(UNKNOWN)
        named = dict_keys.known(key)
        if attr == "copy" and recv.kind == DICT_KIND and not args and not kwargs:
            # dict.copy(): a new dict of the same entries, the values themselves
            # (shallow), as `dict(d)` makes; a change to either leaves the other
            return ObjectV(recv.kind, recv.attrs)
        if attr == "get" and named and len(args) <= 2 and not kwargs:
            v = dict_keys.entry(recv, key)
            if v is None:
                if open_dicts.open_read(an.tree, func.value, key):
                    return UNKNOWN  # a registry other modules may have filled
                return args[1] if len(args) > 1 else NoneV()
            return v
        if attr in ("values", "items", "keys"):
            if attr == "values":
                return TupleV(tuple(v for _, v in recv.attrs))
            if attr == "keys":
                return TupleV(dict_keys.keys(recv))
            return TupleV(tuple(TupleV((dict_keys.key_value(k), v)) for k, v in recv.attrs))
        if attr == "update" and len(args) <= 1:
            other = args[0] if args else dict_value({})
            if (
                isinstance(other, ObjectV)
                and other.kind in DICT_KINDS
                and (recv.kind == DICT_KIND or dict_keys.all_str(other))  # a ModuleDict's: strs
            ):
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
        if attr in ("pop", "setdefault") and named and len(args) <= 2 and not kwargs:
            # `padding = kwargs.pop('padding', '')`: the entry, and the dict without it
            entries = dict(recv.attrs)
            if key not in entries and open_dicts.open_read(an.tree, func.value, key):
                return UNKNOWN  # a registry other modules may have filled
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


def _hashable(key: Value) -> bool:
    """A string, number, bool or None; or a key not known, taken as any other (an
    unhashable one raises TypeError: the analysis does not follow a raise it cannot
    see). A list, dict or set, or a tuple that may hold one, is not."""
    return key is UNKNOWN or isinstance(key, (StrV, IntV, FloatV, BoolV, NoneV))


def _buffer_stored_in_forward(
    an: Analyzer, recv: ObjectV, held: ast.Name, node, args, kwargs, frame
):
    """`self.register_buffer("name", t)` in a forward: torch stores t as the
    attribute `name` of the module (a buffer), as `self.name = t` would; None
    where torch would refuse it (a name that is not a string, or an attribute
    of that name that is no buffer: KeyError) or the name is not known, which
    stays a call not modelled."""
    got = registering.bound("register_buffer", args, kwargs)
    if got is None or not isinstance(got[0], StrV) or not got[0].value:
        return None
    name, value = got[0].value, got[1]
    if "." in name or not isinstance(value, (TensorV, NoneV)):
        return None
    before = dict(recv.attrs).get(name)
    if before is not None and not isinstance(before, (BufferV, NoneBufferV)):
        return None
    stored = as_buffer(value) if isinstance(value, TensorV) else NoneBufferV()
    target = ast.copy_location(ast.Attribute(held, name, ast.Store()), node)
    an.assign(target, stored, frame, None)
    return NoneV()


def _self_of(frame) -> SelfRecorder | None:
    rec = frame.env.get("self")
    return rec if isinstance(rec, SelfRecorder) else None


_LIST_MUTATORS = frozenset(("pop", "remove", "clear", "__setitem__", "__delitem__", "reverse"))


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
    if how == "insert":
        return _inserted(lst, args[0], args[1])
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


def _inserted(lst: ModuleListV, index: Value, module: Value) -> ModuleListV:
    """`layers.insert(i, m)`: torch moves each module from i on to the next index
    and registers m under i, so the items in order are lst's with m before the i-th
    (`self.decoder.insert(0, block)` builds a list back to front); Sequential takes
    an index from the end too. Known where i is a known int torch takes so
    (0 <= i <= len; Sequential also -len <= i < 0; ModuleList's own loop does
    something else with a negative one) and the items are named by index."""
    n = len(lst.items)
    i = index.value.value if isinstance(index, IntV) and index.value is not None else None
    if i is not None and lst.sequential and -n <= i < 0:
        i += n
    if i is None or not 0 <= i <= n or lst.names is not None or not is_module(module):
        return ModuleListV((), lst.sequential, known=False)
    return ModuleListV(lst.items[:i] + (module,) + lst.items[i:], lst.sequential)


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
        # self.cfg`) sees the change in Python, and holds the dict as changed, or
        # is forgotten where the change or the object is not known
        # (a global outside a target run binds no change: no holder is forgotten;
        # a closure's cell is placed by in_place when the call returns)
        local = target.id in frame.env
        old = frame.env[target.id] if local else module_state.held(an, target.id)
        placed = module_state.store(an, target.id, value, frame)
        if not placed:
            frame.env[target.id] = value
        own = local and in_place.own_local(frame, target.id)
        if (placed or own) and old is not None and old is not value:
            in_place.forget_held(an, old, value, frame)
    elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        store_attribute(an, target, value, frame)


# ---------------------------------------------------------------------- loops


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


# ---------------------------------------------------------------------- specialized calls


def _call_function(an: Analyzer, fd: FuncDef, node, args, kwargs, frame) -> Value:
    """Calling the function a decorator was given: its own body, undecorated (a
    method takes its instance as the first argument, as a plain function does)."""
    recv = None
    if fd.cls is not None and not is_static(fd.node):
        if not args:
            return an.unknown_call(node, args, kwargs, frame, f"{fd.qualname}() without self")
        recv, args = args[0], list(args[1:])
    return specialized_invoke(an, fd, recv, node, args, kwargs, frame, undecorated=True)
