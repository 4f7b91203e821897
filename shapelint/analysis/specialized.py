"""The specialized run of a callee: its body run with the call's values
(memoised per arguments where the run cannot change what it was handed), the
arguments bound to its parameters, a method `__init__` runs on the instance it
builds, a property's getter.

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from shapelint.analysis import (
    absence,
    aliasing,
    autograd_function,
    built_objects,
    call_path,
    decorators,
    dynamic,
    generators,
    grad_mode,
    in_place,
    local_classes,
    may_raise,
    module_getattr,
    module_state,
    one_shot,
    raising,
)
from shapelint.analysis.attribute_stores import passes_modules
from shapelint.analysis.attributes import descriptor, find_property, is_class_method, is_static
from shapelint.analysis.callable_values import class_of_instance
from shapelint.analysis.copies import holds_state
from shapelint.analysis.defaults import at_call as default_at_call
from shapelint.analysis.dict_values import dict_value
from shapelint.analysis.holders import fresh_objects, held_as
from shapelint.analysis.module_kinds import is_module
from shapelint.analysis.nodes import nodes_of
from shapelint.analysis.recorder import SelfRecorder
from shapelint.analysis.repetition import add_costs, collected, holding
from shapelint.analysis.statements import declared_names
from shapelint.analysis.unknown_cost import cost_not_known
from shapelint.notation.symbolic import Expr
from shapelint.ops import saved as storages
from shapelint.ops import versions
from shapelint.ops.backward import GRAD_MODE, called, entered, left, origins
from shapelint.ops.values import (
    UNKNOWN,
    BoolV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    OptionalV,
    StrV,
    TensorV,
    TupleV,
    Value,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, FuncDef


# Deepest chain of specialized calls (a recursion the in-progress set misses).
MAX_DEPTH = 40


def init_param(fd: FuncDef, name: str) -> Value:
    """A constructor parameter with neither annotation nor default: a size symbol
    (`dim`, `depth`), so that the layers it sizes carry it into the formulas; a
    caller's value replaces it when the module is built."""
    if fd.cls is not None and fd.node.name == "__init__":
        return IntV(Expr.name(name))
    return UNKNOWN


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
    before, pending = set(frame.records), raising.snapshot()
    # A property lives on the type: a write on an instance runs its setter, never
    # replaces it (dynamic.py's `special`).
    got = specialized_invoke(
        an, found[0], recv, call, [], {}, frame, undecorated=True, special=True
    )
    raised = raising.snapshot()[len(pending) :]
    if not raised or raised[-1] != module_getattr.EXC:
        return got
    held = module_getattr.fallback(an, cd, recv, node.attr)
    if held is None:
        return got
    raising.restore(pending)  # Python's lookup caught it: `__getattr__` answers
    for k in [k for k in frame.records if k not in before]:
        del frame.records[k]  # the getter's run raised: nothing of it is part of the cost
    return held


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
        cost = cost_not_known(f"{fd.qualname}: {why}")
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
        else call_key(fd, recv, args, kwargs, GRAD_MODE.get())
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
        logged = versions.mark()
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
            cost = cost_not_known(f"{fd.qualname}(): {why}, not followed")
            an.record(node, frame, f"call {fd.qualname}", None, args, UNKNOWN, cost)
            if touches:
                aliasing.lost()
            absence.method_not_run(recv, fd.node)
            _followed(an, fd, node, recv, args, kwargs, frame, reached, None, UNKNOWN)
            return UNKNOWN
        owner.in_flight.add(flight)
        start = may_raise.count()
        noted = call_path.since()
        try:
            with call_path.calling(fd.qualname, getattr(node, "lineno", None)):
                *cached, finals = run_followed(owner, fd, recv, args, kwargs)
        finally:
            owner.in_flight.discard(flight)
        cached = tuple(cached)
        if key is not None and not holds_state(cached[0]):
            owner.specialized[key] = cached
            may_raise.keep(owner.specialized, key, start)
            # what its run found, found again where a reuse runs (call_path.again)
            owner.specialized[("<found>", key)] = call_path.noted_after(noted)
            # a global's value at its return came from the global's value before,
            # which the key does not hold: a reuse hands back its parameters only
            owner.specialized[("<finals>", key)] = in_place.parameters_only(fd, finals)
            # Which of its tensors were saved before and after it ran, and whether
            # its result was: what a reuse of this analysis must find and leave.
            after = (storages.status(given), storages.status([cached[0]]))
            owner.specialized[("<saved>", key)] = (before, *after)
            owner.specialized[("<held>", key)] = storages.held_arguments(cached[0], given)
            # what it saved of them, by its own ops: a reuse saves as much (ops/versions.py)
            roots = storages.storages_among([*given, cached[0]])
            owner.specialized[("<versions>", key)] = versions.since(logged, roots)
            versions.belongs(logged, origins(cached[0]))
    else:
        finals = owner.specialized.get(("<finals>", key))
        # the first run's objects, which follow hands back in this call's place
        # (fresh_objects renews those of its value)
        built_objects.reused(in_place.handed_back(fd, node, recv, args, kwargs, finals))
        finals = in_place.handed_anew(fd, node, recv, args, kwargs, finals)
        may_raise.replay(owner.specialized, key)
        call_path.again(owner.specialized.get(("<found>", key)))
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
        cost = cost_not_known(f"{fd.qualname}: @{cache} runs its body only on a cache miss")
    if (
        generators.is_generator(fd.node)
        and not (cost.complete and cost.flops == Expr.const(0))
        and not generators.consumed_whole(getattr(frame.func, "node", None), node)
    ):
        cost = cost_not_known(
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
        if versions.active():
            site = (an.src.path, getattr(node, "lineno", None), f"call {fd.qualname}")
            roots = storages.storages_among([*given, value])
            logged = owner.specialized.get(("<versions>", key))
            versions.replay(logged, roots, site, origins(value))
        first = owner.specialized.get(("<saved>", key))
        if first is not None and first[0] == (storages.status(given), storages.extents(given)):
            storages.enter(given, first[1])  # it saves what the first call saved
            storages.enter([value], first[2])
        elif cost.saved != Expr.const(0):
            # What it saves depends on which of its tensors were saved before this call.
            cost = replace(cost, saved=None, notes=[*cost.notes, storages.REUSED])
    holding(an, node, frame, f"call {fd.qualname}", args, value, children, cost)
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
    with collected(frame) as children:
        value = an.call_value(wrapped, node, list(args), dict(kwargs), frame)
    holding(an, node, frame, f"call {fd.qualname}", args, value, children)
    return value


def run_on_self(an: Analyzer, fd: FuncDef, me: SelfRecorder, node, args, kwargs, frame):
    """A method __init__ calls on the instance it builds, run on that instance (never
    memoised: what it assigns is the point of the call). One record at the call."""
    owner = fd.owner or an
    # the names and numbers it is given in the key: a hook run again on the instance
    # for another name while one runs (`__getattribute__` through a property's
    # getter), or a builder calling itself one level down (`self._make(level - 1)`),
    # is no recursion of the same call; depth still bounds what calls itself
    key = ("<on self>", fd.qualname, id(me), _constants(args))
    if key in owner.in_flight or len(owner.in_flight) > MAX_DEPTH:
        an.record(node, frame, f"call {fd.qualname}", None, args, UNKNOWN,
                  cost_not_known(f"{fd.qualname}() calls itself"))  # fmt: skip
        aliasing.lost()  # what it would have changed on the instance, not seen
        return UNKNOWN
    owner.in_flight.add(key)
    try:
        value, children = run_body(owner, fd, me, args, kwargs)
    finally:
        owner.in_flight.discard(key)
    holding(an, node, frame, f"call {fd.qualname}", args, value, children)
    exc = raising.of_records(children) if an.specialize else None
    if exc is not None:  # it surely raised: so does the call, as specialized_invoke's
        raising.pending(exc)  # (a target run's: `check`'s constructions stay as they were)
    return value


def _constants(args) -> tuple:
    """The strings and known integers among a call's positional arguments, by place."""
    out = []
    for i, a in enumerate(args):
        if isinstance(a, StrV):
            out.append((i, a.value))
        elif isinstance(a, IntV) and a.value is not None and a.value.value is not None:
            out.append((i, a.value.value))
    return tuple(out)


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
    call takes one of them. Or gives such a parameter a tuple, or a tuple or None
    (`scale_shift = t.chunk(2, dim=1)` under an `if`, handed on as `block(x,
    scale_shift=scale_shift)`): the summary read it as a value of no known kind, so
    `scale, shift = scale_shift` unpacked nothing it could count, where this call's
    run unpacks its items."""
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
        if given is None or isinstance(given, NoneV) or _tuple_or_none(given):
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


def _tuple_or_none(v: Value) -> bool:
    """A tuple, or a tuple on one path and None on the other (`scale_shift = None`,
    then `scale_shift = t.chunk(2)` under an `if`): unpacked, its items."""
    return isinstance(v.value if isinstance(v, OptionalV) else v, TupleV)


def lost_shape(v: Value) -> bool:
    """A tensor whose rank or some size is not known."""
    return isinstance(v, TensorV) and (v.rank is None or any(d is None for d in v.shape))


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


def call_key(fd, recv, args, kwargs, mode):
    # A run under torch.no_grad() records no backward: one per grad mode. Tensors
    # equal in shape may differ in strides, which equality leaves out (ops/saved.py).
    items = tuple(sorted(kwargs.items(), key=lambda kv: kv[0]))
    laid = storages.layouts([*args, *kwargs.values()])
    key = (fd.qualname, recv, tuple(args), items, mode, module_state.generation(), laid)
    if fd.closure is not None:
        key += local_classes.closed_over(fd.node, fd.closure)
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
    for d in fd.node.decorator_list:
        grad_mode.inference_tensors(an, d, frame)
    with grad_mode.entered(grad_mode.decorated(an, fd, frame)):
        an.exec_block(fd.node.body, frame)
    raising.settle(frame)
    value = in_place.settled(an, an.join_all(frame.returns)) if frame.returns else NoneV()
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
