"""One object, many holders: a change Python makes to one object (a config, a
Parameter's data, a module list grown in place) seen wherever the modules
being built and the live frames hold it, found by identity.

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from shapelint.analysis import aliasing, in_place
from shapelint.analysis.attributes import module_class
from shapelint.analysis.callable_values import PartialV
from shapelint.analysis.module_kinds import DICT_KINDS, UNFOLLOWED, is_module, module_class_of
from shapelint.analysis.module_lists import ModuleListV
from shapelint.analysis.recorder import SelfRecorder
from shapelint.ops import saved as storages
from shapelint.ops.values import UNKNOWN, ObjectV, TensorV, TupleV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer


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


def data_replaced(owner: SelfRecorder, target: ast.Attribute, value: Value) -> bool:
    """`self.alpha.data = u` while the module is built, u not known to be of t's
    shape: Python changes t in place, so every holder of t holds a tensor of u's
    shape and dtype from then on, the same Parameter or buffer (`_data_of`). A
    library layer holding t (`self.conv.weight.data = u`) reads its sizes from its
    constructor's arguments, not from its weight: that layer is unknown instead,
    and so is t where u's shape is not known, never t at its old shape (torch
    would run, or refuse, the new one). Of t's shape, the old figure stands: the
    same sizes, other values. Whether every holder now holds t as torch does
    (True: the parameter counts stand)."""
    olds = _path_values(owner, target)
    old = olds[-1] if olds else None
    if not isinstance(old, TensorV):
        return False
    if isinstance(value, TensorV) and old.shape is not None and value.shape == old.shape:
        return value.dtype == old.dtype  # the same tensor, other values (a cast: not followed)
    new = _data_of(old, value)
    if new is None:
        held_nowhere(old, owner)
        return False

    lost = []

    def at(w: Value) -> Value | None:
        if w is old:
            return new
        lib = _holder(w) and not w.kind.startswith("<class>")  # type: ignore[union-attr]
        if lib and any(a is old for _, a in w.attrs):  # type: ignore[union-attr]
            lost.append(w)
            return UNKNOWN
        return None

    _everywhere(_Rebuild(old, at), owner)
    return not lost


def _data_of(old: TensorV, value: Value) -> TensorV | None:
    """old after `old.data = value`: the same Parameter or buffer (its requires_grad
    and where it is registered), of value's shape and dtype; None where value is no
    tensor of known shape."""
    if not isinstance(value, TensorV) or value.shape is None:
        return None
    return replace(old, shape=value.shape, dtype=value.dtype, known=None, layout=None, storage=None)


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


def each_changed(an: Analyzer, then, v: Value, held: list[dict] | None = None) -> Value:
    """then(old, rebuilt) applied to every value the dicts in held (else the
    modules being built and the live frames) hold, each object once by identity,
    its holders rebuilt round it: objects Python changed in place at once
    (`m.eval()`: m and every module below it, wherever each is held). v as the
    same walk leaves it: the very object its holders now hold."""
    change = _Rebuild(_NOTHING, lambda w: None, then=then)
    if held is not None:
        for h in held:
            change.into(h)
    else:
        an.outer_writes += 1
        if not an.trial:
            _everywhere(change)
    return change.of(v)


def rebuilt(v: Value, then) -> Value:
    """v with then(old, rebuilt) applied to each value in it, each object once."""
    return _Rebuild(_NOTHING, lambda w: None, then=then).of(v)


# No value is this one: a walk with nothing to find by identity.
_NOTHING = ObjectV("<nothing>")


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


def grown_everywhere(an: Analyzer, old: ModuleListV, new: ModuleListV) -> None:
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

    __slots__ = ("old", "at", "plain", "kept", "flat", "then", "made")

    def __init__(self, old: Value, at, through_plain: bool = False, then=None):
        self.old = old
        self.at = at
        self.plain: dict | None = {} if through_plain else None
        self.kept: dict[int, Value] = {}
        # then(old, rebuilt): a change made to each value itself once its contents
        # are rebuilt; made remembers each result by id (the old value kept alive
        # beside it), so one object reached through two holders stays one
        self.then = then
        self.made: dict[int, tuple[Value, Value]] = {}
        # module lists, partials and tuples are walked without plain objects (None:
        # by this walk itself; a reference to itself would be a cycle, which the
        # batch analysis, its collector off, would keep alive with all it holds)
        self.flat = _Rebuild(old, at) if through_plain else None

    def into(self, held: dict) -> None:
        """held's values (a recorder's attributes, a frame's env) rebuilt in place."""
        old = self.old
        every = self.then is not None  # a change to values themselves: each is asked
        for k, v in list(held.items()):
            if every or v is old or isinstance(v, _CAN_HOLD):
                held[k] = self.of(v)

    def of(self, v: Value) -> Value:
        kept = self.kept.get(id(v))
        if kept is not None:
            return kept
        if self.then is not None:
            made = self.made.get(id(v))
            if made is not None:
                return made[1]
            new = self.then(v, self._of(v))
            self.made[id(v)] = (v, new)
            return new
        return self._of(v)

    def _of(self, v: Value) -> Value:
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
        if new is v and plain_memo is None and self.then is None:
            # (through plain objects, a value walked inside one being rebuilt
            # sees it as it was: not remembered there)
            self.kept[id(v)] = v
        return new

    def _each(self, items: tuple, keyed: bool) -> tuple | None:
        """items (or the values of (key, value) pairs) rebuilt; None where none
        changed."""
        old = self.old
        every = self.then is not None
        out = []
        changed = False
        for item in items:
            a = item[1] if keyed else item
            b = self.of(a) if every or a is old or isinstance(a, _CAN_HOLD) else a
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
