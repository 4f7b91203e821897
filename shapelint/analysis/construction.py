"""Building an instance: `__init__` run on the instance being built (its bases'
through `super()`), a dataclass config, a TypedDict, `__new__` as
`type.__call__` runs it, a property's setter.

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import (
    aliasing,
    built_objects,
    call_path,
    dynamic,
    in_place,
    local_classes,
    may_raise,
    modes,
    module_state,
    namedtuples,
    raising,
    recursion,
    typeddicts,
)
from shapelint.analysis.absence import CONFIG_PREFIX
from shapelint.analysis.attributes import (
    builds_as_type,
    derives_from,
    derives_from_object_alone,
    descriptor,
    find_method,
    find_property,
    metaclass_call,
    module_class,
    settled,
    super_method,
)
from shapelint.analysis.callable_values import ClassRefV
from shapelint.analysis.config_classes import (
    dataclass_fields,
    default_value,
    is_dataclass,
    rejected_call,
)
from shapelint.analysis.copies import handed, renewed
from shapelint.analysis.dict_entries import ITEMS
from shapelint.analysis.dict_values import dict_value, mapping
from shapelint.analysis.module_kinds import MAPPING, UNFOLLOWED, torch_base, undescribed_torch_base
from shapelint.analysis.nodes import working_statements
from shapelint.analysis.recorder import SelfRecorder
from shapelint.analysis.repetition import holding
from shapelint.analysis.specialized import bind_arguments, specialized_invoke
from shapelint.analysis.statements import declared_names
from shapelint.analysis.torch_containers import torch_init
from shapelint.ops.values import (
    UNKNOWN,
    BoolV,
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
    from shapelint.analysis.defs import Analyzer, ClassDef, FuncDef


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
            values[name] = default_value(where, default, top)
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


def _closed_over(cd: ClassDef) -> tuple:
    """A local class's free variables as they are now (local_classes.closed_over)."""
    frames = {id(m.closure): m.closure for m in cd.methods.values() if m.closure is not None}
    return tuple(local_classes.closed_over(cd.node, f) for f in frames.values())


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
        *_closed_over(cd),
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
            kept = an.specialized.get(("<kept>", key), frozenset())
            in_place.forget_handed(an, init, args, kwargs, ran=False, kept=kept)
        given = handed(an.specialized[("<given>", key)], (*args, *(v for _, v in key[3])))
        return _own_object(an, cd, renewed(an.specialized[key], given), again=True)
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
    kept: frozenset[str] = frozenset()
    if init is not None:
        _MADE.append(made)
        runs: list = []
        try:
            exc = run_init(an, init, recorder, args, kwargs, runs)
        finally:
            _MADE.pop()
        if an.specialize:
            kept = in_place.left_unchanged(init, runs[0])
        in_place.forget_handed(an, init, args, kwargs, kept=kept)
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
        an.specialized[("<kept>", key)] = kept
        may_raise.keep(an.specialized, key, start)
    if exc is not None:  # building it raises: so does the call that builds it
        raising.pending(exc)
        if key is not None:
            an.specialized[("<raises>", key)] = exc
    return _own_object(an, cd, value, again=False)


def _own_object(an: Analyzer, cd: ClassDef, v: Value, again: bool) -> Value:
    """A plain instance a target run built: an object of its own (built_objects),
    a memoised construction's a value object of its own too, as Python's second
    evaluation makes a second object."""
    if not an.specialize or an.trial or type(v) is not ObjectV:
        return v
    if module_class(an, cd) is not False:
        return v
    return built_objects.again(v) if again else built_objects.made(v)


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
        holding(an, node, frame, f"call {ast.unparse(node.func)}", tensors, value, made)
    return value


def new_defined(an: Analyzer, cd: ClassDef) -> bool:
    """C or a base of the project's defines a `__new__` that may return something
    other than the fresh instance `__init__` then builds."""
    new = find_method(an, cd, "__new__")
    return new is not None and not _object_new_only(new.node)


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
    if not new_defined(an, cd):
        return None
    new = find_method(an, cd, "__new__")
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


def object_new(an: Analyzer, frame, args, kwargs) -> Value | None:
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
    body = working_statements(fn)
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


def run_init(
    an: Analyzer, init: FuncDef, recorder: SelfRecorder, args, kwargs, runs: list | None = None
) -> str | None:
    """Run __init__ on recorder; the exception it surely raises, if any (runs: where
    given, the run's frame is appended to it)."""
    an = init.owner or an
    frame = an.new_frame(init, init.qualname)
    frame.global_names = declared_names(init.node, ast.Global)
    frame.runs = True
    mark = module_state.mark()
    reached = in_place.globals_before(an, init) if an.specialize else {}
    with call_path.calling(init.qualname, None), aliasing.building(recorder):
        bind_arguments(an, init, frame, recorder, args, kwargs)
        an.exec_block(init.node.body, frame)
        raising.settle(frame)
    if an.specialize:  # no call site names a constructor: in_place.follow's part
        in_place.forget_globals(an, init, reached, module_state.keys_since(mark), frame)
    if _MADE:
        _MADE[-1].extend(frame.records.values())
    if runs is not None:
        runs.append(frame)
    return raising.of_records(frame.records.values()) if frame.raised else None
