"""Call resolution: which callee a call names and who runs it.

`call` resolves the callee, then hands the call to the resolver of its kind: a
project symbol (project.py), a qualified name (imports and stubs, through the
interpreter's call_qualified), a plain name (`call_name`: a local value, a
function or class of the module, a module-level value, a builtin: builtins.py),
a method (`call_attribute`: super(), the object model, a list's mutators, a
tensor method, a method of a project class), or any other callee. Running a
function of the module (binding, specialization, summaries) stays the
interpreter's; every step here calls back only through the Analyzer (defs.py).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import (
    absence,
    aliasing,
    attribute_hooks,
    attribute_stores,
    attributes,
    autograd_function,
    builtins,
    callable_values,
    construction,
    decorators,
    deferred,
    dict_values,
    dynamic,
    enums,
    exit_stacks,
    framed,
    generators,
    holders,
    in_place,
    instance_getattr,
    joined_objects,
    lambdas,
    learning,
    loops,
    module_flags,
    module_hooks,
    module_kinds,
    module_lists,
    module_state,
    module_values,
    module_walk,
    modules,
    namedtuples,
    namespace,
    ndarrays,
    one_shot,
    own_methods,
    parameters,
    plain,
    project,
    pytypes,
    raising,
    sequences,
    small_sets,
    specialized,
    stdlib_logging,
    super_calls,
    torch_source,
    unfollowed,
    unify,
    versions,
)
from shapelint.analysis import unknown_cost as uc
from shapelint.analysis.absence import CONFIG_PREFIX
from shapelint.analysis.defs import ClassDef, FuncDef
from shapelint.analysis.module_lists import ModuleListV
from shapelint.analysis.modules import SelfRecorder
from shapelint.notation.symbolic import Expr
from shapelint.ops import backward, tensor_values
from shapelint.ops.values import (
    UNKNOWN,
    Cost,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    StrV,
    TensorV,
    TupleV,
    Value,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, Frame


def call(an: Analyzer, node: ast.Call, frame: Frame, d: int) -> Value:
    made = an.functional_classes.get(id(node))
    if made is not None:
        return callable_values.ClassRefV(made)  # `Enum("Name", "A B")`: its class
    if not an.specialize:
        return resolve(an, node, frame, d)
    # A target's total must not leave out a call it could not follow.
    slot: list = [[], len(frame.records)]  # the call's values; records before it ran
    an.call_args.append(slot)
    changing = _global_changed(an, node, frame)
    try:
        value = resolve(an, node, frame, d)
    finally:
        an.call_args.pop()
    if changing is not None and changing[0].get(changing[1]) is changing[2]:
        # `REG.update(...)` on a module-level object that no handler changed
        module_state.unplaced(an, node.func.value.id, frame)  # type: ignore[attr-defined]
    if len(frame.records) == slot[1]:  # None: a body the analysis ran (a closure)
        unfollowed.unfollowed_call(an, node, frame, slot[0], value)
    exc = raising.take()
    if exc is not None:  # the callee (or the constructor) surely raised
        raising.surely(an, node, frame, exc)
    return value


def _global_changed(an: Analyzer, node: ast.Call, frame: Frame):
    """(module env, name, value) where the call is a mutating method called on a
    module-level object in a function run (`REG.update(...)`, `LST.append(x)`)."""
    func = node.func
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.attr in in_place.MUTATORS
    ):
        return None
    env = module_state.holder(an, func.value.id, frame)
    if env is None:
        return None
    name = module_state.defined_name(an, func.value.id)
    return env, name, env.get(name)


def _plain_read(an: Analyzer, obj, name, node, frame: Frame) -> Value | None:
    """`super().__getattribute__(name)` where no class of the project defines it:
    object's own lookup (attribute_hooks.py)."""
    if not an.specialize or not isinstance(name, StrV) or not name.value:
        return None
    return attribute_hooks.plain_read(an, obj, name.value, node, frame)


def _plain_store(an: Analyzer, obj, args, node, frame: Frame) -> Value | None:
    """`super().__setattr__(name, value)` where no class of the project defines it,
    on the instance being built: object's own store (attribute_hooks.py); on a
    built instance of a class whose every base is the project's, object, dict or
    OrderedDict: the same store, `self` rebound in the method's frame, which the
    caller takes back as any change a method makes to its `self` (in_place.py)."""
    name = args[0]
    if isinstance(obj, ObjectV) and obj.kind.startswith(CONFIG_PREFIX):
        # object's store into a built config, which keeps no such write: marked
        known = isinstance(name, StrV) and name.value
        absence.unapplied_write(obj, name.value if known else None)  # type: ignore[union-attr]
    if not an.specialize or not isinstance(name, StrV) or not name.value:
        return None
    if type(obj) is ObjectV and obj.kind.startswith("<class>"):
        cd = an.class_of(obj.kind[len("<class>") :])
        if cd is None or not attributes.setattr_is_objects(an, cd):
            return None
        if module_state.through_property(an, obj, name.value):
            frame.env["self"] = UNKNOWN  # its setter decides what it keeps: not run here
            return NoneV()
        attrs = dict(obj.attrs)
        attrs[name.value] = args[1]
        frame.env["self"] = ObjectV(obj.kind, tuple(attrs.items()))
        return NoneV()
    if not isinstance(obj, SelfRecorder):
        return None
    an.outer_writes += 1
    if an.trial:
        return NoneV()
    return attribute_hooks.plain_store(an, obj, name.value, args[1], node)


def resolve(an: Analyzer, node: ast.Call, frame: Frame, d: int) -> Value:
    """Resolve the callee, then hand the call to the resolver of its kind: a
    project symbol, a qualified name (imports, stubs), a plain name (locals,
    module functions and classes, builtins), a method, or any other callee."""
    func = node.func
    # reveal_shape(x): like mypy's reveal_type, whatever it is imported as.
    if isinstance(func, ast.Name) and func.id == "reveal_shape" and len(node.args) == 1:
        v = an.eval(node.args[0], frame, d)
        an.report(node, "SHP390", f"revealed shape: {_reveal(v)}")
        return v
    if namespace.is_globals_call(an, node, frame):
        # not the receiver of a read by key (those return before evaluating it):
        # what the namespace holds may change through it
        an.globals_written = True
    listed = _generator_listed(an, node, frame, d)
    if listed is not None:
        return listed
    qual = an.qualname_of(func, frame)
    args, kwargs, open_kwargs = arguments(an, node, frame, d)
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "get"
        and 1 <= len(args) <= 2
        and not kwargs
        and not open_kwargs
        and namespace.is_globals_call(an, func.value, frame)
    ):
        # `globals().get(name)`: the module's binding of name
        got = namespace.read(an, args[0], node, frame, d)
        return UNKNOWN if got is None else got
    if an.call_args:
        # what it was given, `**kw` not known one by one among it (what may be a tensor)
        given = [*args, *kwargs.values(), *([_STARRED_UNKNOWN] if open_kwargs else [])]
        an.call_args[-1][:] = [given, len(frame.records)]
    if qual in unfollowed.RETURNS_ARGUMENT and not open_kwargs:
        # `typing.cast(T, x)` is x: never run from typing's source as a call
        got = builtins.copied(qual, args, kwargs)
        if got is not None:
            return got
    if qual in versions.CALLS and not open_kwargs:
        # read before packaging's source, whose regular expression is not run here
        got = versions.call(qual, args, kwargs)
        if got is not None:
            return got
    if (
        an.specialize
        and isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "dict"
        and (func.attr in dict_values.MAPPING_MUTATORS or func.attr == "__init__")
        and args
        and not open_kwargs
        and dict_values.holds_entries(args[0])
        and an.is_builtin("dict", frame)
    ):
        # `dict.__setitem__(self, k, v)`: dict's own method on the instance, past
        # its class's override, as `self.__setitem__` of a class defining none is
        on = ast.copy_location(ast.Attribute(node.args[0], func.attr, ast.Load()), func)
        return mutate_entries(an, args[0], on, args[1:], kwargs, frame)
    known = an.specialize or deferred.known_tensor(args, kwargs)
    if an.project is not None and known:
        # A plain run follows calls into other files only with a tensor of known
        # shape (a contradiction to find, a cost to bind); a target run always.
        # (Following the constructions in __init__ too, as within a file, made
        # each pool worker hold every file its files build modules from: the
        # corpus run's peak went from 337 MB to 832 MB, past its 500 MB budget.)
        sym = an.project_symbol(func, qual, frame)
        if sym is None and (bound := _class_method(an, func, qual, frame)) is not None:
            return an.call_value(bound, node, args, kwargs, frame)
        if sym is None and an.specialize and not open_kwargs:
            applied = _function_apply(an, func, qual, node, args, kwargs, frame)
            if applied is not None:
                return applied
        library = getattr(sym, "library_qual", None)  # a library name re-exported
        if library is not None:
            qual = library
        elif sym is not None:
            if open_kwargs and isinstance(sym, (FuncDef, ClassDef)):
                return _not_one_by_one(an, node, args, kwargs, frame)
            return an.call_project(sym, node, args, kwargs, frame)
    elif (
        an.project is not None
        and not open_kwargs
        and not an.specialize
        and isinstance(frame.env.get("self"), SelfRecorder)
    ):
        # a module of another file built in a constructor, built for real where it is
        # called with a tensor of a size its caller fixed (deferred.py); its file read
        # for its kind only
        later = deferred.later(an, _project_class_key(an, func, qual, frame), args, kwargs)
        if later is not None:
            return later
    if qual is not None and isinstance(func, ast.Attribute) and versions.is_str_constant(qual):
        # `torch.__version__.split(".")`: a method of the str that name holds
        return call_attribute(an, func, node, args, kwargs, frame, d, open_kwargs)
    if qual is not None:
        return an.call_qualified(qual, node, args, kwargs, open_kwargs, frame)
    if isinstance(func, ast.Name):
        return call_name(an, func.id, node, args, kwargs, frame, open_kwargs)
    if isinstance(func, ast.Attribute):
        return call_attribute(an, func, node, args, kwargs, frame, d, open_kwargs)
    # `nn.Linear(d, e)(x)`, `fns[i](x)`, `make()(x)`: call what the callee is.
    callee = an.eval(func, frame, d)
    if open_kwargs and (_runs_a_body(an, callee) or _binds_its_arguments(callee)):
        return _not_one_by_one(an, node, args, kwargs, frame)
    if callee is not UNKNOWN:  # `maybe(self.norm)(q)`: a closure, a layer...
        return an.call_value(callee, node, args, kwargs, frame)
    return an.unknown_call(node, args, kwargs, frame, "not analysed (unknown callee)", open_kwargs)


def _generator_listed(an: Analyzer, node: ast.Call, frame: Frame, d: int) -> Value | None:
    """`list(self.sub_kernels())`: the builtin list or tuple of what a call of a
    generator function yields, where generators.py lists it (its body run to its
    end); None otherwise, and the call is evaluated as any other."""
    func = node.func
    if not (
        isinstance(func, ast.Name)
        and func.id in ("list", "tuple")
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Call)
        and an.is_builtin(func.id, frame)
    ):
        return None
    items = generators.yielded(an, node.args[0], frame, d, loops.iterate)
    # (an iterator it yields, kept in the list, may be walked by any of its readers)
    return None if items is None else one_shot.stripped(TupleV(items, func.id))


def _class_method(an: Analyzer, func, qual: str | None, frame: Frame) -> Value | None:
    """`Cls.build` where Cls is a class another file defines and build one of its
    `@classmethod`s (or a base's): the method with `cls` bound to the class it is
    read off, as Python binds it; None for anything else."""
    holder = _class_read_off(an, func, qual, frame)
    if holder is None:
        return None
    return callable_values.class_method(
        an, holder, func.attr, callable_values.ClassRefV(holder.key)
    )


def _class_read_off(an: Analyzer, func, qual: str | None, frame: Frame) -> ClassDef | None:
    """The project class `mod.Cls` names in the callee `mod.Cls.name`, where another
    file of the project defines it; None for anything else."""
    if not isinstance(func, ast.Attribute) or qual is None or "." not in qual:
        return None
    parent = qual.rpartition(".")[0]
    mod = parent.rpartition(".")[0]
    if not mod or an.project is None or an.project.module_file(an.project_root, mod) is None:
        # a name of an installed package: reading its package's `__init__` to see
        # whether the name is a class (`scipy.stats.chi.rvs`: 9 s of scipy.stats)
        # costs more than the classmethod is worth; the call stays as before
        return None
    holder = an.project_symbol(func.value, parent, frame)
    return holder if isinstance(holder, ClassDef) else None


def _function_apply(an: Analyzer, func, qual: str | None, node, args, kwargs, frame):
    """`low.Fn.apply(x)`: a custom autograd Function another file of the project
    defines, read off its module, applied as `Fn.apply(x)` is (autograd_function.py);
    None for anything else."""
    if not isinstance(func, ast.Attribute) or func.attr != "apply":
        return None
    holder = _class_read_off(an, func, qual, frame)
    if holder is None or not autograd_function.is_function(an, holder):
        return None
    klass = callable_values.ClassRefV(holder.key)
    return autograd_function.apply(an, holder, klass, node, args, kwargs, frame)


def _runs_a_body(an: Analyzer, v) -> bool:
    """A value whose call runs a body of the project with its parameters bound: a
    function, a closure, a module of a project class (its forward), a project
    class (its constructor)."""
    if isinstance(
        v,
        (
            decorators.FunctionV,
            lambdas.ClosureV,
            callable_values.FunctionRefV,
            callable_values.ClassRefV,
        ),
    ):
        return True
    return isinstance(v, ObjectV) and v.kind.startswith("<class>")


def _binds_its_arguments(v) -> bool:
    """A callee whose result depends on every argument it is given, whatever
    their names: a tensor's method (`fn = getattr(x, "mean")`), a namedtuple class."""
    return isinstance(v, (callable_values.TensorMethodV, namedtuples.NamedTupleClassV))


def _not_one_by_one(an: Analyzer, node: ast.Call, args, kwargs, frame: Frame) -> Value:
    """A call of project code with a `**kw` (or `*args`) the analysis does not know
    entry by entry: run with the parameters it leaves unbound at their defaults, it
    would be another call than Python's, whose cost may be anything."""
    return an.unknown_call(node, args, kwargs, frame, "arguments not known one by one", True)


def arguments(
    an: Analyzer, node: ast.Call, frame: Frame, d: int
) -> tuple[list[Value], dict[str, Value], bool]:
    """The call's positional and keyword values, and whether its keywords are
    open (a `**kw` or `*args` the analysis cannot spell out)."""
    args: list[Value] = []
    for a in node.args:
        if isinstance(a, ast.Starred):
            star = an.eval(a.value, frame, d)
            items = module_lists.as_items(star)
            if items is None:
                items = tensor_values.items(star)
            if items is not None:
                args.extend(items)
            elif isinstance(star, sequences.EndsV):  # its ends, for nn.Sequential (framed.py)
                args.append(ObjectV(_STARRED_UNKNOWN.kind, ((framed.STARRED_ENDS, star),)))
            else:
                args.append(_STARRED_UNKNOWN)
        else:
            args.append(_handed_class(an, a, frame, an.eval(a, frame, d)))
    kwargs: dict[str, Value] = {}
    open_kwargs = False
    for kw in node.keywords:
        v = _handed_class(an, kw.value, frame, an.eval(kw.value, frame, d))
        if kw.arg is None:
            known = dict_values.expand_kwargs(v)
            if known is None:
                open_kwargs = True
            else:
                kwargs.update(known)
        else:
            kwargs[kw.arg] = v
    if _has_starred_unknown(args):
        open_kwargs = True  # positional arity unknown: be as careful as with **kwargs
    return args, kwargs, open_kwargs


def _handed_class(an: Analyzer, node: ast.expr, frame: Frame, value: Value) -> Value:
    """A torch layer class named as a call's argument (`Tokenizer(..., activation=nn.ReLU)`,
    `partial(nn.LayerNorm, eps=1e-6)`) is that class outside a target too, where a name
    read elsewhere stays unknown: `Conv = nn.Conv2d if dims == 2 else nn.Conv3d` would be
    a choice of two layers, each judged on inputs the forward's own `if self.dims == 2:`
    gives the other (init_run builds the layer of a class handed to a constructor)."""
    if value is not UNKNOWN or an.specialize or not isinstance(node, (ast.Name, ast.Attribute)):
        return value
    q = an.qualname_of(node, frame)
    found = module_kinds.layer_class(q) if q is not None else None
    return found if isinstance(found, callable_values.LayerClassV) else value


def call_name(
    an: Analyzer, name: str, node: ast.Call, args, kwargs, frame: Frame, open_kwargs=False
) -> Value:
    """A call of a plain name: a local value, a function or class of the module,
    a module-level value, or a builtin the code does not shadow. open_kwargs: a
    `**kw` or `*args` not known one by one (a function's body is then not run)."""
    if open_kwargs and an.specialize:
        local = frame.env.get(name, UNKNOWN)
        if (
            _binds_its_arguments(local)
            or _runs_a_body(an, local)
            or (
                name not in frame.locals
                and local is UNKNOWN
                and (name in an.functions or name in an.classes)
            )
        ):
            return _not_one_by_one(an, node, args, kwargs, frame)
    if name in frame.env and frame.env[name] is not UNKNOWN:
        return an.call_value(frame.env[name], node, args, kwargs, frame)
    if name not in frame.locals:
        if name in an.functions:
            return an.call_local(name, node, args, kwargs, frame)
        if name in an.classes:
            return construction.built(an, an.classes[name], node, args, kwargs, frame)
        if an.module_env.get(name, UNKNOWN) is not UNKNOWN:
            # `LinearNoBias = partial(nn.Linear, bias=False)` at module level
            return an.call_value(an.module_env[name], node, args, kwargs, frame)
        built = builtins.call(an, name, node, args, kwargs, frame)
        if built is not None:
            return built
    return an.unknown_call(
        node, args, kwargs, frame, "not analysed (unresolved callee)", open_kwargs
    )


def call_attribute(
    an: Analyzer,
    func: ast.Attribute,
    node: ast.Call,
    args,
    kwargs,
    frame: Frame,
    d: int,
    open_kwargs=False,
) -> Value:
    """`recv.name(...)`: super(), the object model's methods, a list's
    mutators, a tensor method, a method of a class of the project. open_kwargs:
    as call_name's."""
    if super_calls.is_super_call(func.value):
        if open_kwargs and an.specialize:
            super_calls.super_call_not_run(an, func.attr, frame)
            return _not_one_by_one(an, node, args, kwargs, frame)
        res = super_calls.super_call(an, func.attr, node, args, kwargs, frame)
        if res is None and func.attr == "__getattribute__" and len(args) == 1 and not kwargs:
            res = _plain_read(an, frame.env.get("self"), args[0], node, frame)
        if res is None and func.attr == "__setattr__" and len(args) == 2 and not kwargs:
            res = _plain_store(an, frame.env.get("self"), args, node, frame)
        if (
            res is None
            and func.attr in in_place.MUTATORS
            and type(frame.env.get("self")) is ObjectV
        ):
            frame.env["self"] = UNKNOWN  # a base's change to self that no run applied
        return res if res is not None else UNKNOWN
    recv = an.eval(func.value, frame, d)
    if isinstance(recv, module_values.ModuleV):
        # `module.Block(d)`: the module's binding called, not a method bound to it
        callee = module_values.attribute(recv, func.attr)
        if callee is not None:
            return an.call_value(callee, node, args, kwargs, frame)
    if isinstance(recv, TensorV) and func.attr == "numpy" and not args and not kwargs:
        array = ndarrays.from_tensor(recv, backward.requires(recv), an.options.dtype)
        if array is not None:
            # no op of torch's: nothing its flop counter sees, nothing saved; the
            # tensor's memory is handed out (its known elements are no longer)
            tensor_values.before_op("torch.Tensor.numpy", [recv], {})
            zero = Expr.const(0)
            cost = Cost(zero, zero, zero, backward=zero, saved=zero)
            an.record(node, frame, "torch.Tensor.numpy", None, [recv], array, cost)
            return array
    if open_kwargs and an.specialize and _project_method(an, recv, func.attr):
        return _not_one_by_one(an, node, args, kwargs, frame)
    own = module_hooks.own_forward_read(an, recv, func.attr)
    if own is not None:  # `m.forward(x)` where the instance holds its own forward
        if own is UNKNOWN:
            return an.unknown_call(node, args, kwargs, frame, "the forward its instance holds")
        return an.call_value(own, node, args, kwargs, frame)
    if an.specialize and stdlib_logging.is_logger(recv):
        # a standard library object: not given as one of the call's values
        return stdlib_logging.method(func.attr, args, kwargs, open_kwargs)
    if an.call_args and not _held_unbound(an, recv, func.attr):
        an.call_args[-1][:] = [[*an.call_args[-1][0], recv], len(frame.records)]
    if (
        func.attr in in_place.MUTATORS
        and not isinstance(func.value, ast.Name)
        and not _project_method(an, recv, func.attr)
        and not _list_of_an_attribute(recv, func)
    ):
        # a builtin's change of an item or attribute: no follow places it in its
        # holder (in_place._placed_deep); a list attribute of a name's object is
        # mutate_list's to place or not
        frame.unplaced.add(id(node))
    if (
        an.specialize
        and func.attr in dict_values.MAPPING_MUTATORS
        and dict_values.holds_entries(recv)
        and not _project_method(an, recv, func.attr)
    ):
        return mutate_entries(an, recv, func, args, kwargs, frame)
    if (
        an.specialize
        and func.attr in _ENTRY_READS
        and not kwargs
        and type(recv) is ObjectV
        and dict_values.holds_entries(recv)
        and not _project_method(an, recv, func.attr)
    ):
        # `config.get("norm", default)` on an instance of a dict subclass that does
        # not define get: dict's own, on its entries (torch_ecg's CFG); its keys(),
        # values() and items() alike
        read = dict_values.dict_method(recv, func.attr, args, frame)
        if read is not None:
            return read
    if func.attr == "enter_context" and an.specialize and not _project_method(an, recv, func.attr):
        return exit_stacks.not_followed(an, node, args, kwargs, frame)
    res = modules.method_call(an, recv, func, node, args, kwargs, frame)
    if res is None and func.attr in module_walk.METHODS:
        res = module_walk.walk(an, recv, func.attr, args, kwargs)
    if res is None and func.attr in module_walk.TENSOR_METHODS:
        res = module_walk.tensors(an, recv, func.attr, args, kwargs)
    if res is not None:
        return res
    item = module_lists.registered_item(recv, func.attr)
    if item is not None:  # `self.path.conv(x)`: a list's item called by its name
        return an.call_value(item, node, args, kwargs, frame)
    if isinstance(recv, callable_values.ClassRefV) and an.specialize:
        cd = an.class_of(recv.name)
        if func.attr == "apply" and cd is not None and autograd_function.is_function(an, cd):
            res = autograd_function.apply(an, cd, recv, node, args, kwargs, frame)
        else:
            res = super_calls.unbound_method_call(an, recv, func.attr, node, args, kwargs, frame)
        if res is not None:
            return res
        # `Cls.make_head(3, c)`: a staticmethod or classmethod read through its class is
        # a function (bound to the class), called as reading it into a name would be
        callee = an.eval(func, frame, d)
        if not isinstance(callee, callable_values.ClassRefV) and (
            _runs_a_body(an, callee) or isinstance(callee, callable_values.BoundMethodV)
        ):
            return an.call_value(callee, node, args, kwargs, frame)
    if isinstance(recv, TupleV) and func.attr in ("index", "count"):
        known = builtins.tuple_method(recv, func.attr, args, kwargs)
        return known if known is not None else UNKNOWN
    if isinstance(recv, TupleV) and func.attr == "numel":
        known = builtins.size_numel(recv, args, kwargs)
        return known if known is not None else UNKNOWN
    if isinstance(recv, TupleV) and recv.kind == "list" and func.attr == "copy":
        # list.copy(): a new list holding the same items, as `list(xs)` and
        # `copy.copy(xs)` make it; a change through either name leaves the other alone
        return builtins.fresh_copy(recv, deep=False) if not (args or kwargs) else UNKNOWN
    if isinstance(recv, TupleV) and func.attr in _LIST_MUTATORS:
        return mutate_list(an, recv, func, args, kwargs, frame, node)
    if isinstance(recv, small_sets.SetV) and func.attr in small_sets.MUTATORS:
        return mutate_set(an, recv, func, frame)
    if isinstance(recv, StrV):
        known = builtins.str_method(recv, func.attr, args, kwargs)
        return known if known is not None else UNKNOWN
    if isinstance(recv, FloatV):
        known = builtins.float_method(recv, func.attr, args, kwargs)
        return known if known is not None else UNKNOWN
    if isinstance(recv, IntV):
        known = builtins.int_method(recv, func.attr, args, kwargs)
        if known is not None:
            return known
    an.naming.method_call(node, recv, func.attr, args, kwargs, frame)
    if func.attr == "apply" and an.specialize and _torch_apply(an, recv, args, kwargs):
        return _module_apply(an, recv, node, frame, args[0])
    if func.attr in dynamic.HOOKS and an.specialize and not isinstance(recv, TensorV):
        handle = module_hooks.register(an, recv, func.attr, args, kwargs)
        if handle is not None:
            an.record(node, frame, f"call {func.attr}", None, [], handle, _FREE)
            return handle
        dynamic.hooked_at_run_time(an, _module_class(recv), func.attr, node.lineno)
    if isinstance(recv, module_hooks.HandleV) and func.attr == "remove" and not args:
        an.record(node, frame, "call remove", None, [], NoneV(), _FREE)
        return module_hooks.remove(an, recv)
    if isinstance(recv, TensorV):
        if open_kwargs:
            # `x.mean(**kw)`, `x.view(*shape)`: the result's shape is in what the
            # analysis does not know; its cost is judged as an unfollowed call's
            # (0 FLOPs for a method that runs no product)
            return UNKNOWN
        return call_tensor_method(an, recv, func, node, args, kwargs, frame)
    if func.attr == "forward" and isinstance(recv, ModuleListV) and recv.sequential:
        # nn.Sequential.forward: its layers chained, as calling it runs them (its own
        # hooks aside, which the analysis does not run for either)
        return an.call_value(recv, node, args, kwargs, frame)
    if isinstance(recv, ObjectV):
        if recv.kind.startswith("<class>") and func.attr in an.class_methods(recv.kind[7:]):
            attrs = {k for k, _ in recv.attrs}
            got = specialized.property_get(an, recv.kind[7:], recv, attrs, func, frame)
            if got is not None:  # `self.fn(x)` where fn is a property: its value, called
                return an.call_value(got, node, args, kwargs, frame)
            return an.call_method(recv, func.attr, node, args, kwargs, frame)
        if enums.own_method(an, recv, func.attr):
            # `activation.build()`: a method the enum class defines, run on the member
            return an.call_method(recv, func.attr, node, args, kwargs, frame)
        config = recv.kind[len(CONFIG_PREFIX) :] if recv.kind.startswith(CONFIG_PREFIX) else None
        if config is not None and func.attr in an.class_methods(config):
            # a property lives on the type, whatever built the instance: litgpt's
            # `config.norm_class(n)` on a dataclass config calls what its getter returns
            attrs = {k for k, _ in recv.attrs}
            got = specialized.property_get(an, config, recv, attrs, func, frame)
            if got is not None:
                return an.call_value(got, node, args, kwargs, frame)
            if an.specialize:
                # a plain method of its class, run on it as Python runs it: what it
                # stores into the instance the run applies or marks (absence.py;
                # where the run does not run it after all, specialized_invoke says so)
                return an.call_method(recv, func.attr, node, args, kwargs, frame)
            # (outside a target run no config is judged by what the run built)
        done = autograd_function.ctx_method(recv, func.attr, args)
        if done is not None:
            return done
        attr = callable_values.bind_own(recv.attr(func.attr), recv)
        if attr is UNKNOWN and all(k != func.attr for k, _ in recv.attrs):
            attr = _unbound_class_attribute(an, pytypes.class_key(recv), func.attr)
            hooked = instance_getattr.fallback(an, recv, func.attr) if attr is UNKNOWN else None
            if hooked is not None:
                # what the class's `__getattr__` returned, called as it is: no
                # method of the class, so not given the instance
                given = an.call_args[-1][0] if an.call_args else None
                if given and given[-1] is recv and not isinstance(hooked, _BOUND):
                    an.call_args[-1][0] = given[:-1]
                return an.call_value(hooked, node, args, kwargs, frame)
        if attr is not UNKNOWN:
            return an.call_value(attr, node, args, kwargs, frame)
        got = _parameters_listed(an, recv, func.attr, args, kwargs)
        if got is not None:
            return got
        if func.attr in aliasing.KEEPS_STATE and not attribute_stores.passes_modules(
            an, args, kwargs
        ):
            # a torch layer's `parameters()`, `to(device)`: it keeps the objects it holds
            with aliasing.keeping():
                return an.op_value(f"{recv.kind}.{func.attr}", [recv, *args], kwargs, node, frame)
        return an.op_value(f"{recv.kind}.{func.attr}", [recv, *args], kwargs, node, frame)
    if isinstance(recv, SelfRecorder):
        attr = own_methods.read_back(recv, recv.attrs.get(func.attr, UNKNOWN))
        if func.attr not in recv.attrs and func.attr not in an.class_methods(recv.cls):
            attr = _unbound_class_attribute(an, recv.cls, func.attr)
        if attr is not UNKNOWN:
            return an.call_value(attr, node, args, kwargs, frame)
        if func.attr in an.class_methods(recv.cls):
            if an.specialize:
                # as in Python, on the instance being built: what the method
                # assigns stays (diffusers' `self.set_processor(processor)`)
                fd = an.class_methods(recv.cls)[func.attr]
                return specialized.run_on_self(an, fd, recv, node, args, kwargs, frame)
            # a method __init__ calls sees what __init__ has assigned so far
            # (timm's `self._init_img_size(img_size)` reads self.patch_size)
            so_far = ObjectV(f"<class>{recv.cls}", tuple(recv.attrs.items()))
            if an.specialize and attributes.builds_state(an, recv.cls, func.attr, set(recv.attrs)):
                # what it registers on the copy never reaches the module
                recv.attrs[module_kinds.UNFOLLOWED] = UNKNOWN
            return an.call_method(so_far, func.attr, node, args, kwargs, frame)
        if func.attr not in recv.attrs:
            snapshot = ObjectV(f"<class>{recv.cls}", tuple(recv.attrs.items()))
            got = _parameters_listed(an, snapshot, func.attr, args, kwargs)
            if got is not None:
                return got
        if an.specialize and func.attr not in aliasing.KEEPS_STATE:
            # a method the analysis cannot see (a base it cannot read, or one of
            # nn.Module's that changes what the module holds: `self.tie_weights()`)
            aliasing.lost()
    if recv is UNKNOWN and (
        _is_self_attribute(func.value) or uc.may_cost(f"torch.Tensor.{func.attr}")
    ):
        # A method of a sub-module we cannot see (`self.encoder.encode(x)`),
        # or a product on a tensor we lost track of.
        return an.unknown_call(node, args, kwargs, frame, "not analysed", open_kwargs)
    if recv is UNKNOWN and an.specialize and attribute_stores.passes_modules(an, args, kwargs):
        # `helpers.freeze(self.emb)` of an object not known: it may change the modules
        # it is handed (freeze, tie, replace what they hold)
        aliasing.lost()
    return UNKNOWN


def _parameters_listed(an: Analyzer, recv, attr: str, args, kwargs) -> TupleV | None:
    """`m.parameters()` of a module in a target run, nn.Module's own: the Parameter
    objects m holds, so that `for p in m.parameters(): p.requires_grad = False`
    freezes those very ones; None where they are not all known."""
    if (
        attr != "parameters"
        or args
        or kwargs
        or not an.specialize
        or not module_kinds.is_module(recv)
    ):
        return None
    got = parameters.listed(an, recv)
    return None if got is None else TupleV(got, kind="list")


def _keeps_layers(an: Analyzer, recv, node: ast.Call, frame, fn: Value) -> bool:
    """`module.apply(fn)` with a function that changes no layer (initialises weights
    in place), as dynamic.py reads it."""
    if len(node.args) != 1 or node.keywords:
        return False
    return not _applied(an, node, recv, frame, dynamic.replaces_layers, fn)


def _applied(an: Analyzer, node: ast.Call, recv, frame, test, fn: Value) -> bool:
    """test (dynamic.replaces_layers or dynamic.freezes) of the function
    `recv.apply(fn)` is given: the method fn's value is bound to where the run
    knows it (found along the instance's MRO, as Python finds it), else the one
    its expression names."""
    where = frame.func.owner if frame.func is not None and frame.func.owner else an
    cls = pytypes.class_key(recv)
    cd = an.class_of(cls) if cls is not None else None
    bound = isinstance(fn, (callable_values.BoundMethodV, own_methods.OwnMethodV))
    method = fn.fd.node if bound and fn.fd is not None else None
    if method is not None and fn.fd.owner is not None:
        # the method's own file reads the names in its body (its imports)
        return test(where.tree, node.args[0], cd.node if cd else None, fn.fd.owner, method)
    return test(where.tree, node.args[0], cd.node if cd else None, where, method)


def _unbound_class_attribute(an: Analyzer, cls: str | None, name: str) -> Value:
    """`self.name(...)` where name is a class attribute holding a class, a partial
    (`_default_processor_cls = Processor`) or a staticmethod object: none binds to
    the instance, so the call is theirs as written. UNKNOWN for anything else (a function there
    would be a method, called with self)."""
    cd = an.class_of(cls) if cls is not None and an.specialize else None
    static = attributes.static_attribute(an, cd, name) if cd is not None else None
    if static is not None and static is not UNKNOWN:
        return static  # `helper = staticmethod(f)`: f, given no instance
    found = attributes.class_attribute(an, cd, name) if cd is not None else None
    if isinstance(
        found, (callable_values.ClassRefV, callable_values.LayerClassV, callable_values.PartialV)
    ):
        return found
    return UNKNOWN


def _torch_apply(an: Analyzer, recv, args, kwargs) -> bool:
    """`m.apply(fn)` is nn.Module.apply: m a module whose class does not define its own."""
    if (
        len(args) != 1
        or kwargs
        or not (isinstance(recv, SelfRecorder) or module_kinds.is_module(recv))
    ):
        return False
    cls = pytypes.class_key(recv)
    return cls is None or "apply" not in an.class_methods(cls)


# A call that computes nothing on a device (a hook's registration, its removal).
_FREE = Cost(Expr.const(0), Expr.const(0), Expr.const(0))


def _module_class(recv) -> str | None:
    """The name of a project module's class, as dynamic.py keys it; None for any
    other module (a torch layer, a module not known)."""
    if isinstance(recv, SelfRecorder):
        return recv.cls.rpartition(":")[2].rpartition(".")[2]
    if isinstance(recv, ObjectV) and recv.kind.startswith("<class>"):
        return recv.kind[len("<class>") :].rpartition(":")[2].rpartition(".")[2]
    return None


def _module_apply(an: Analyzer, recv, node: ast.Call, frame, fn: Value) -> Value:
    """nn.Module.apply(fn) as it runs: fn on every submodule, then on the module,
    which it returns. A fn that changes only weights' values (an init) leaves
    every count as it was; one that may change layers leaves the modules being
    built unknown, and the calls of their methods from then on (dynamic.py)."""
    if _keeps_layers(an, recv, node, frame, fn):
        if not _applied(an, node, recv, frame, dynamic.freezes, fn):
            return recv
        if isinstance(recv, SelfRecorder):
            # which Parameters it freezes is not followed: which require grad
            # is not known, nor what backward computes (it kept every one trainable:
            # trainable and backward figures above torch's)
            module_flags.trainability_lost()
            return recv
    why = f"apply() with a function that changes layers (line {node.lineno})"
    aliasing.lost()
    for r in aliasing.recorders():
        r.attrs[dynamic.CHANGED] = StrV(why)
    # a module built already (`swap_all(self)` in a forward): its layers may be
    # others now, wherever it is held (a copy of it too)
    if not isinstance(recv, SelfRecorder):
        holders.held_nowhere(recv)
        in_place.forget_object(an, recv)
    return an.unknown_call(node, [], {}, frame, why)


# Callables bound to an object: a call of one reads that object's state.
_BOUND = (
    own_methods.OwnMethodV,
    callable_values.BoundMethodV,
    callable_values.TorchForwardV,
    callable_values.TensorMethodV,
)


def _held_unbound(an: Analyzer, recv, name: str) -> bool:
    """recv.name is a value held in the instance's own `__dict__` (a partial or a
    callable stored as `cfg.sample = partial(rng.choice, ...)`): Python binds only
    what it finds on the class, so the call is not given recv. Not where the class
    defines `__getattribute__`, a property or a descriptor of that name (they, not
    the instance's dict, decide the read), nor a method bound to an object."""
    if not (isinstance(recv, ObjectV) and recv.kind.startswith(("<class>", CONFIG_PREFIX))):
        return False
    held = [v for k, v in recv.attrs if k == name]
    if not held or isinstance(held[0], _BOUND):
        return False  # a method bound to some object: what it reads is that object's
    cd = an.class_of(recv.kind.partition(">")[2])
    return (
        cd is not None
        and not attribute_hooks.hooked(an, recv)
        and attributes.find_property(an, cd, name) is None
        and attributes.descriptor(an, cd, name) is None
    )


def _project_method(an: Analyzer, recv, name: str) -> bool:
    """recv.name is a method of a project class, or a module of one it holds."""
    if isinstance(recv, SelfRecorder):
        held = recv.attrs.get(name, UNKNOWN)
        return _runs_a_body(an, held) or name in an.class_methods(recv.cls)
    if isinstance(recv, ObjectV) and recv.kind.startswith("<class>"):
        if name in an.class_methods(recv.kind[7:]):
            return True
        return _runs_a_body(an, recv.attr(name))
    return False


def _list_of_an_attribute(recv: Value, func: ast.expr) -> bool:
    """A list method called on an attribute of a name (`self.feats.append(y)`)."""
    return (
        isinstance(recv, TupleV)
        and func.attr in _LIST_MUTATORS  # type: ignore[attr-defined]
        and isinstance(func.value, ast.Attribute)  # type: ignore[attr-defined]
        and isinstance(func.value.value, ast.Name)  # type: ignore[attr-defined]
    )


def mutate_list(
    an: Analyzer, recv: TupleV, func: ast.Attribute, args, kwargs, frame, node=None
) -> Value:
    """`xs = []` then `xs.append(t)`: the list gains t; after any other change
    its contents are no longer known. Names bound to the same list see the
    change too. On an attribute of a name (`self.feats.append(y)` in a method),
    the object the name holds takes the grown list: a change the method's run
    placed in its `self` (frame.placed), which its caller takes back
    (in_place._placed_deep), else one it did not (frame.unplaced)."""
    taken: Value = UNKNOWN
    if func.attr == "pop":  # `mems.pop(0)`: the item, and the list without it
        grown, taken = sequences.popped(recv, args, kwargs)
    else:
        grown = sequences.appended(recv, func.attr, args)
    if isinstance(func.value, ast.Name):
        for k, v in list(frame.env.items()):
            if v is recv:
                # another name of the list holds it, which a change through that
                # name changes as well (joined_objects.either_of)
                frame.env[k] = grown if k == func.value.id else joined_objects.either_of(grown)
        if func.value.id not in frame.env:
            # a module-level list: module_state keeps the grown list, and another
            # holder of the one object (`self.seen = SEEN`) is forgotten, as for a local
            if module_state.store(an, func.value.id, grown, frame):
                in_place.forget_held(an, recv, grown)
        else:
            # the same list held elsewhere (`xs = self.names`, `c.st = xs`) changed too
            in_place.forget_held(an, recv, grown)
        return taken
    # `self.sizes.append(4)`: the attribute holds the grown list; a list deeper
    # down is not placed, and is no longer known wherever it is held
    an.outer_writes += 1
    if an.trial:
        return UNKNOWN
    placed = node is not None
    if isinstance(func.value, ast.Attribute) and isinstance(func.value.value, ast.Name):
        held = attribute_stores.class_held(an, an.eval(func.value.value, frame), func.value.attr)
        if held is not None:
            # `self.made.append(d)` with `made = []` in the class body: the one
            # list of the class changes, which every instance reads (and another
            # holder of it, `self.layers = Cfg.layers`, is forgotten)
            if module_state.store_class_attr(an, held, func.value.attr, grown):
                in_place.forget_held(an, recv)
                if placed:
                    frame.unplaced.add(id(node))  # the class's, not the name's object
                return taken
        else:
            # the list object itself changed: a holder of it elsewhere (`b.keys =
            # a.keys`) keeps a link to it as it is now, through which a later change
            # forgets this one too (in_place.forget_held)
            in_place.forget_held(an, recv, grown)
            owner = frame.env.get(func.value.value.id)
            # a built module is one object: every holder of it (the caller's `self`)
            # holds the grown list, as `self.m.deep = True` is made on it
            if (an.specialize and holders.stored_into_built(an, owner, func.value.attr, grown)) or (
                attribute_stores.store_attribute(an, func.value, grown, frame)
            ):
                if placed:
                    frame.placed.add(id(node))
                return taken
    if placed:
        frame.unplaced.add(id(node))
    in_place.forget_value(an, recv)
    return UNKNOWN


# dict's methods that read an instance's entries (dict_values.dict_method's).
_ENTRY_READS = frozenset({"get", "__contains__", "__len__", "keys", "values", "items"})


def mutate_entries(an: Analyzer, recv, func: ast.Attribute, args, kwargs, frame) -> Value:
    """dict's own `__setitem__`, `update`, `pop`, ... on an instance of a dict
    subclass, called as its method (its class not defining it) or as
    `dict.update(obj, ...)`: `__setitem__` of a known key stores that entry, any
    other change leaves the entries not known; the instance's other holders are
    forgotten, as a list's are."""
    one = func.attr == "__setitem__" and len(args) == 2 and not kwargs
    if isinstance(recv, SelfRecorder):  # the instance being built: a store that outlives the frame
        an.outer_writes += 1
        if not an.trial:
            if one:
                dict_values.entries_assigned(recv, args[0], args[1])
            else:
                dict_values.entries_forgotten(recv)
        return NoneV() if one else UNKNOWN
    changed = (
        dict_values.entries_assigned(recv, *args) if one else dict_values.entries_forgotten(recv)
    )
    if isinstance(func.value, ast.Name) and func.value.id in frame.env:
        for k, v in list(frame.env.items()):
            if v is recv:
                frame.env[k] = (
                    changed
                    if k == func.value.id
                    else joined_objects.either_of(changed)
                    if changed is not None
                    else UNKNOWN
                )
        in_place.forget_held(an, recv, changed)
        return NoneV() if one else UNKNOWN
    an.outer_writes += 1
    if not an.trial:
        in_place.forget_value(an, recv)
    return NoneV() if one else UNKNOWN


def mutate_set(an: Analyzer, recv, func: ast.Attribute, frame) -> Value:
    """`s.add(x)`, `s.discard(x)`, ...: the set is no longer known, under every name
    and in every object that holds it (a set's changes are not followed)."""
    if isinstance(func.value, ast.Name):
        for k, v in list(frame.env.items()):
            if v is recv:
                frame.env[k] = UNKNOWN
        if func.value.id not in frame.env:
            module_state.store(an, func.value.id, UNKNOWN, frame)
        in_place.forget_held(an, recv)
        return UNKNOWN
    an.outer_writes += 1
    if an.trial:
        return UNKNOWN
    if isinstance(func.value, ast.Attribute) and attribute_stores.store_attribute(
        an, func.value, UNKNOWN, frame
    ):
        holder = frame.env.get(func.value.value.id)  # type: ignore[attr-defined]
        if isinstance(holder, SelfRecorder):
            # a set changed is a set: nothing torch registers (transformers' post_init
            # `self._no_split_modules.update(...)` left every model's parameters `?`)
            plain.mark(holder.attrs, func.value.attr, True)
        in_place.forget_held(an, recv)
        return UNKNOWN
    in_place.forget_value(an, recv)
    return UNKNOWN


def call_tensor_method(
    an: Analyzer, recv: TensorV, func: ast.Attribute, node: ast.Call, args, kwargs, frame
) -> Value:
    name = f"torch.Tensor.{func.attr}"
    operands = [recv, *args]
    tested = pytypes.torch_predicate(name, operands)
    if tested is not None:
        return tested
    if name in unify.MATMULS and node.args:
        learning.unify_matmul(an, name, operands, [func.value, node.args[0]], frame, node)
    res = an.op_value(name, operands, kwargs, node, frame)
    if res is UNKNOWN and func.attr == "unbind":
        return sequences.unbound(recv, args, kwargs)
    return res


_STARRED_UNKNOWN = ObjectV("<starred>")


def _has_starred_unknown(args: list[Value]) -> bool:
    """`_STARRED_UNKNOWN in args`, without the two __eq__ calls `in` makes on
    every argument of another class (values only equal their own class)."""
    for a in args:
        if a.__class__ is ObjectV and a.kind == _STARRED_UNKNOWN.kind:
            return True
    return False


_LIST_MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort", "__setitem__"}
)


def _project_class_key(an: Analyzer, func: ast.expr, qual: str | None, frame: Frame):
    """The key of the class of another project file the callee names, a name or
    `module.Name` a project import binds (project.peek_class); never torch's
    layers read as source (`nn.LSTM` through a project file's `from torch import
    nn`), which a plain run takes from the stubs. None: no such class."""
    if qual is not None and torch_source.source_name(qual) is not None:
        return None
    if isinstance(func, ast.Name):
        name, attr = func.id, None
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        name, attr = func.value.id, func.attr
    else:
        return None
    if name not in an.project_links or name in frame.locals or name in frame.env:
        return None
    return project.peek_class(an, name, attr)


def _is_self_attribute(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
        if isinstance(node, ast.Name) and node.id == "self":
            return True
    return False


def _reveal(v: Value) -> str:
    if isinstance(v, TensorV):
        s = v.shape_str()
        return f"{s} {v.dtype}" if v.dtype else s
    if isinstance(v, IntV):
        return "int" if v.value is None else f"int = {v.value.to_human()}"
    if isinstance(v, TupleV):
        return "(" + ", ".join(_reveal(i) for i in v.items) + ")"
    return "unknown"
