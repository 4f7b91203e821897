"""A target module's parameters and buffers, as torch counts them, from the module
the analysis built (its `__init__` interpreted with the target's arguments).

torch's `parameters()` walks `named_modules()` and each module's own parameters,
every module and every tensor once by identity: a parameter two modules share
(`wte.weight = lm_head.weight`) counts once, under the name it is first reached by.
Registered is what counts: an nn.Parameter, a stub layer's weights=, a buffer
(register_buffer, a layer's buffers=) held by a module, a ModuleList or a
ModuleDict; a plain tensor attribute, or modules in a plain list or dict, do not. An
attribute whose value the analysis does not know may be a module: the counts are
then lower bounds, never presented as complete, unless what was assigned says it
is none (plain.py). An attribute that is one of several
modules (choices.py: `DropPath(p) if p > 0. else nn.Identity()`) counts when every
alternative holds as many parameters, trainable parameters and buffers: whichever
is built, torch counts that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shapelint.analysis import plain
from shapelint.analysis.aliasing import ALIASED
from shapelint.analysis.attributes import derives_from_module
from shapelint.analysis.callable_values import ChoiceV
from shapelint.analysis.module_hooks import HOOKS
from shapelint.analysis.module_kinds import (
    LAYERS,
    OPTIMIZED_KIND,
    REGISTERED_DICT_KIND,
    REQUIRES_GRAD_UNKNOWN,
    UNFOLLOWED,
)
from shapelint.analysis.modules import ModuleListV, item_names
from shapelint.notation.symbolic import Expr
from shapelint.ops import stub_ops
from shapelint.ops.saved import UNSURE, storage_of
from shapelint.ops.values import (
    UNKNOWN,
    BufferV,
    ObjectV,
    OptionalV,
    ParameterV,
    TensorV,
    TupleV,
    Value,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

_ZERO = Expr.const(0)


@dataclass
class ModuleCount:
    """One module of the tree `named_modules()` walks, with what it holds, its
    submodules' included. `repeat` > 1 (or a symbol): a module list built in a
    loop of that count, each item like this one."""

    name: str  # as named_modules() names it; "" for the root
    kind: str  # its class, as people write it
    params: Expr = _ZERO
    trainable: Expr = _ZERO
    buffers: Expr = _ZERO
    complete: bool = True  # every parameter below is known
    buffers_complete: bool = True  # and every buffer
    bound: bool = True  # what is known is at most torch's count (nothing aliased unseen)
    trainable_known: bool = True  # every parameter's requires_grad is known
    # what is counted trainable is at most torch's: no freeze went unfollowed (one
    # may have frozen any of those counted, so their sum bounds nothing)
    trainable_bound: bool = True
    unknown: list[str] = field(default_factory=list)  # attributes of unknown value
    items: tuple[str, ...] | None = None  # a module list's items' names, in order
    children: list[ModuleCount] = field(default_factory=list)
    repeat: Expr = Expr.const(1)


def count_parameters(an: Analyzer, instance: Value) -> ModuleCount | None:
    """The tree of instance's modules with their counts; None when instance is
    not a module."""
    if not _module_like(an, instance):
        return None
    return _walk(an, instance, "", _Seen())


def listed(an: Analyzer, instance: Value) -> tuple[ParameterV, ...] | None:
    """`instance.parameters()` as torch yields them: each module's own Parameters,
    then its children's, depth first as `named_modules()` walks them, every module
    and tensor once; None where the count of instance is not complete (an attribute
    that may hold one, a choice of modules, a change not followed) or a Parameter
    there is no object the run holds (a list of Parameters made in a loop)."""
    count = count_parameters(an, instance)
    if count is None or not (count.complete and count.bound):
        return None
    out: list[ParameterV] = []
    return tuple(out) if _listed(an, instance, out, _Seen()) else None


def _listed(an, v: Value, out: list, seen: _Seen) -> bool:
    seen.modules.add(id(v))
    members = _members(v)
    plain_attrs = plain.names(members) | _layer_arguments(v)
    order = _registered_order(v)
    children = []
    for attr, item in sorted(members, key=lambda m: order.get(m[0], len(order))):
        if attr in plain_attrs and item is UNKNOWN or attr == REQUIRES_GRAD_UNKNOWN:
            continue  # no module or Parameter; a flag not known keeps the objects
        if isinstance(item, ParameterV):
            if id(item) not in seen.tensors:
                seen.tensors.add(id(item))
                out.append(item)
        elif isinstance(v, ModuleListV) and type(item) is TensorV:
            return False  # a ParameterList wraps it in a Parameter of its own
        elif isinstance(item, ModuleListV) and not (item.known and item.count is None):
            return False
        elif isinstance(item, ChoiceV) and _registers_nothing(an, item):
            continue
        elif isinstance(item, ChoiceV) or item is UNKNOWN or isinstance(item, OptionalV):
            return False
        elif _module_like(an, item):
            children.append(item)
    for child in children:
        if id(child) not in seen.modules and not _listed(an, child, out, seen):
            return False
    return True


@dataclass
class _Seen:
    """What the walk has reached, by identity: torch counts each tensor and walks
    each module once. `either`: what only some alternatives of a choice hold; met
    again, whether torch counts it there depends on which one was built."""

    tensors: set[int] = field(default_factory=set)
    modules: set[int] = field(default_factory=set)
    either: set[int] = field(default_factory=set)
    # The tensors registered as buffers (BufferV.of) and the storages of those
    # that are views, by id: two names of one tensor count once
    # (`register_buffer("b", t)` twice).
    given: set[int] = field(default_factory=set)
    roots: set[int] = field(default_factory=set)

    def copy(self) -> _Seen:
        return _Seen(
            set(self.tensors), set(self.modules), set(self.either), set(self.given),
            set(self.roots),
        )  # fmt: skip


def _walk(an, v: Value, name: str, seen: _Seen) -> ModuleCount:
    node = ModuleCount(name, _kind(v))
    layers = v.attr(LAYERS) if isinstance(v, ObjectV) else v
    if isinstance(layers, ModuleListV) and layers.known and layers.count is None:
        node.items = item_names(layers)  # a Sequential subclass's layers are its own
    seen.modules.add(id(v))
    members = _members(v)
    plain_attrs = plain.names(members) | _layer_arguments(v)
    for attr, item in members:
        path = f"{name}.{attr}" if name else attr
        if attr in plain_attrs and item is UNKNOWN or attr == HOOKS:
            continue  # not known, but surely no module, Parameter or buffer; hooks
        if attr == REQUIRES_GRAD_UNKNOWN:
            node.trainable_known = node.trainable_bound = False
            continue
        if attr == ALIASED:
            node.complete = node.bound = False
            node.unknown.append(f"{name or '<root>'}: a change while it was built, not followed")
            continue
        if attr == UNFOLLOWED:
            node.complete = False
            node.unknown.append(f"{name or '<root>'}: state set where the analysis cannot follow")
            continue
        # a tensor in a list: nn.ParameterList made it a Parameter (nn.ModuleList and
        # nn.Sequential refuse tensors)
        listed = isinstance(v, ModuleListV) and type(item) is TensorV
        if isinstance(item, (ParameterV, BufferV)) or listed:
            if id(item) in seen.tensors:
                if id(item) in seen.either:
                    node.complete = False
                    node.unknown.append(path)
                continue
            seen.tensors.add(id(item))
            again = _registered_again(item, seen)
            if again is not None:
                if not again:
                    # another tensor on the storage of one counted: the same tensor
                    # refined or written in place, or a view of it, which torch
                    # yields apart; counted once, a bound
                    node.buffers_complete = False
                    node.unknown.append(path)
                continue
            n = item.numel()
            if n is None and isinstance(item, BufferV):
                node.buffers_complete = False  # a buffer is never a parameter
                node.unknown.append(path)
            elif n is None:
                node.complete = False
                node.unknown.append(path)
            elif isinstance(item, BufferV):
                node.buffers += n
            else:
                node.params += n
                grad = True if listed else item.requires_grad  # type: ignore[union-attr]
                if grad is None:
                    node.trainable_known = False
                elif grad:
                    node.trainable += n
        elif isinstance(item, ChoiceV):
            _choice(an, node, item, path, seen)
        elif (
            item is UNKNOWN
            or isinstance(item, OptionalV)  # a module or None: not known which
            and _module_like(an, item.value)
            or isinstance(item, ObjectV)
            and _unknown_class(an, item)
        ):
            node.complete = False
            node.unknown.append(path)
        elif isinstance(item, ModuleListV) and item.count is not None and item.items:
            if isinstance(item.items[0], TensorV):  # n Parameters alike
                _repeated_parameter(node, item.items[0], item.count, path)
                continue
            if id(item.items[0]) in seen.modules:
                _met_again(node, item.items[0], path, seen)
                continue
            child = _walk(an, item.items[0], f"{path}.0", seen)
            child.repeat = item.count
            _add(node, child, item.count)
        elif isinstance(item, ModuleListV) and not item.known:
            node.complete = False
            node.unknown.append(path)
        elif _module_like(an, item) and id(item) not in seen.modules:
            _add(node, _walk(an, item, path, seen), Expr.const(1))
        elif _module_like(an, item):
            _met_again(node, item, path, seen)
    return node


def _registered_again(item: Value, seen: _Seen) -> bool | None:
    """For a buffer registered from a tensor (BufferV.of): True where that very
    tensor is a buffer counted already; False where it may be one counted or not
    (a tensor on the storage of a counted one that the analysis made anew: the
    same tensor written in place, cast to its own dtype or its shape learnt, which
    torch yields once, or a view of it, which torch yields apart); else None, the
    tensor noted as counted. Two views of one storage neither of which is
    registered (`rows, cols = torch.triu_indices(...)`) are two tensors."""
    given = item.of if isinstance(item, BufferV) else None
    if given is None:
        return None
    if id(given) in seen.given:
        return True
    root = storage_of(given) if isinstance(given, TensorV) else given
    if root is given and id(given) in seen.roots:
        return False  # a counted tensor on its storage may be this one made anew
    if root is not given and id(root) in seen.given:
        return False  # and this one may be that counted tensor made anew
    seen.given.add(id(given))
    if root is not given and root is not UNSURE:
        seen.roots.add(id(root))
    return None


def _repeated_parameter(node: ModuleCount, item: TensorV, count: Expr, path: str) -> None:
    """A ParameterList filled in a loop of `count` turns, each a tensor like item:
    each turn's is its own Parameter."""
    n = item.numel()
    if n is None or isinstance(item, BufferV):
        node.complete = False
        node.unknown.append(path)
        return
    node.params += n * count
    grad = item.requires_grad if isinstance(item, ParameterV) else True
    if grad is None:
        node.trainable_known = False
    elif grad:
        node.trainable += n * count


def _met_again(node: ModuleCount, item: Value, path: str, seen: _Seen) -> None:
    """A module reached before: torch walks it once, unless only an alternative
    of a choice held it and another was built."""
    if id(item) in seen.either:
        node.complete = False
        node.unknown.append(path)


def _registers_nothing(an, choice: ChoiceV) -> bool:
    """Every alternative is plain data or an instance of a plain class (a settings
    object built one way or another, `try: from_config(c) except ...: Settings()`):
    whichever was stored, torch registers nothing it is or holds."""
    return plain.plain_alternatives(an, choice.items)


def _choice(an, node: ModuleCount, choice: ChoiceV, path: str, seen: _Seen) -> None:
    """One of several modules: each alternative walked from what is seen so far.
    When all count alike, that is the count; what only some of them hold is
    remembered, since meeting it again counts or not by which one was built."""
    if _registers_nothing(an, choice):
        return
    walks: list[tuple[ModuleCount, _Seen]] = []
    for alt in choice.items:
        if not _module_like(an, alt):
            break
        trial = seen.copy()
        walks.append((_walk(an, alt, path, trial), trial))
    first = walks[0][0] if len(walks) == len(choice.items) else None
    if first is None or not all(
        c.complete
        and c.buffers_complete
        and c.bound
        and c.trainable_known
        and _same_counts(c, first)
        for c, _ in walks
    ):
        node.complete = False
        node.unknown.append(path)
        return
    tensors = [t.tensors for _, t in walks]
    modules = [t.modules for _, t in walks]
    for new, kept in ((tensors, seen.tensors), (modules, seen.modules)):
        held = set().union(*new)
        seen.either |= held - set.intersection(*new)
        kept |= held
    first.kind = " | ".join(dict.fromkeys(c.kind for c, _ in walks))
    _add(node, first, Expr.const(1))


def _same_counts(a: ModuleCount, b: ModuleCount) -> bool:
    return (a.params, a.trainable, a.buffers) == (b.params, b.trainable, b.buffers)


def _add(node: ModuleCount, child: ModuleCount, times: Expr) -> None:
    node.children.append(child)
    node.params += child.params * times
    node.trainable += child.trainable * times
    node.buffers += child.buffers * times
    node.complete = node.complete and child.complete
    node.buffers_complete = node.buffers_complete and child.buffers_complete
    node.bound = node.bound and child.bound
    node.trainable_known = node.trainable_known and child.trainable_known
    node.trainable_bound = node.trainable_bound and child.trainable_bound
    node.unknown += child.unknown


def _layer_arguments(v: Value) -> frozenset[str]:
    """The constructor arguments a stub-described torch layer keeps as attributes
    (`device`, `dtype` of `nn.Linear(..., **dd)`): the layer registers its weights=
    and buffers= alone, whatever it was given."""
    if not isinstance(v, ObjectV) or not v.kind.startswith("torch."):
        return frozenset()
    entries = [e for e in stub_ops.registry().entries.get(v.kind, ()) if e.module]
    held = {item.param for e in entries for item in (*e.weights, *e.buffers)}
    held |= {name for e in entries for name in e.kept}
    return frozenset(p.name for e in entries for p in e.params) - held


def _registered_order(v: Value) -> dict[str, int]:
    """A stub-described torch layer's Parameters in the order its constructor
    registers them (`weight`, then `bias`): the attributes hold its arguments first,
    `bias=True` among them. Empty for any other value, whose attributes are in the
    order they were first set (sorted() keeps it)."""
    if not isinstance(v, ObjectV) or not v.kind.startswith("torch."):
        return {}
    entries = [e for e in stub_ops.registry().entries.get(v.kind, ()) if e.module]
    names = [item.param for e in entries for item in e.weights]
    return {n: i for i, n in enumerate(dict.fromkeys(names))}


def _members(v: Value) -> list[tuple[str, Value]]:
    if isinstance(v, ModuleListV):
        return list(zip(item_names(v), v.items))
    if isinstance(v, ObjectV):
        out: list[tuple[str, Value]] = []
        for k, a in v.attrs:
            if k == LAYERS and isinstance(a, ModuleListV) and a.known and a.count is None:
                # a Sequential subclass's layers are its own modules ("0", "1", ...)
                out += zip(item_names(a), a.items)
            else:
                out.append((k, a))
        return out
    return []


def _module_like(an, v: Value) -> bool:
    """A module (a stub layer, a project nn.Module), a ModuleList or a ModuleDict."""
    if isinstance(v, ModuleListV):
        return True
    if not isinstance(v, ObjectV):
        return False
    if v.kind == REGISTERED_DICT_KIND:
        return True
    if v.kind.startswith("torch.nn.") or v.kind == OPTIMIZED_KIND:
        return True
    if v.kind.startswith("<class>"):
        return derives_from_module(an, v.kind[len("<class>") :]) is True
    return False


def _unknown_class(an, v: ObjectV) -> bool:
    """A project instance whose class may or may not be an nn.Module (its bases
    are not all known): what it holds may count."""
    return v.kind.startswith("<class>") and derives_from_module(an, v.kind[7:]) is None


def _kind(v: Value) -> str:
    if isinstance(v, ModuleListV):
        if v.items and all(isinstance(i, TensorV) for i in v.items):
            return "ParameterList"
        return "Sequential" if v.sequential else "ModuleList"
    if isinstance(v, ObjectV):
        if v.kind == REGISTERED_DICT_KIND:
            return "ModuleDict"
        if v.kind.startswith("<class>"):
            return v.kind[len("<class>") :].rsplit(".", 1)[-1].rsplit(":", 1)[-1]
        return v.kind.rsplit(".", 1)[-1]
    return "?"


def params_json(count: ModuleCount, dims: dict[str, int]) -> dict:
    """`target.params`, `target.trainable_params`, `target.buffers`: element
    counts in program form (a formula where sizes are symbolic), `?` where not
    all known; each with its value at the bound dims where it has one; and the
    module tree (`target.modules`) the per-module table is made from."""
    trainable_whole = count.complete and count.trainable_known
    out: dict = {}
    for key, expr, whole, bound in (
        ("params", count.params, count.complete, count.bound),
        ("trainable_params", count.trainable, trainable_whole,
         count.bound and count.trainable_bound),
        ("buffers", count.buffers, count.complete and count.buffers_complete, count.bound),
    ):  # fmt: skip
        out[key] = expr.to_python() if whole else "?"
        out[f"{key}_value"] = _value(expr, dims) if whole else None
        # What is known of a partial count: a lower bound, never the figure;
        # none where a change not followed may have aliased what it counts.
        out[f"{key}_known"] = expr.to_python() if bound else None
    out["params_unknown"] = list(dict.fromkeys(count.unknown))
    out["modules"] = _tree(count, dims)
    return out


def _tree(n: ModuleCount, dims: dict[str, int]) -> dict:
    return {
        "name": n.name,
        "kind": n.kind,
        "params": n.params.to_python() if n.complete else "?",
        "params_value": _value(n.params, dims) if n.complete else None,
        "repeat": n.repeat.to_python(),
        "modules": [_tree(ch, dims) for ch in n.children],
        **({"items": list(n.items)} if n.items is not None else {}),
    }


def _value(e: Expr, dims: dict[str, int]) -> int | None:
    try:
        return e.evaluate(dims)
    except (KeyError, ValueError, ZeroDivisionError):
        return None


def registered(an: Analyzer, instance: Value) -> tuple[dict, dict, bool] | None:
    """The Parameters and buffers of instance by identity (id -> value): those its
    `parameters()` and `buffers()` surely yield, those it holds otherwise (a layer
    in a plain list, a plain object's attribute), which torch's saved-tensor hooks
    see as any tensor, and whether its count is complete. Where it is not, what the
    walk reached is still registered (but a tensor only some alternatives hold), and
    whether another tensor it holds is, is not known. None for no module."""
    if not _module_like(an, instance):
        return None
    seen = _Seen()
    count = _walk(an, instance, "", seen)
    complete = bool(count.complete and count.buffers_complete and count.bound)
    sure = seen.tensors if complete else seen.tensors - seen.either
    held: dict[int, Value] = {}
    _held(instance, held, set())
    own = {k: v for k, v in held.items() if k in sure}
    for v in list(own.values()):
        # the tensor a buffer was registered from is that buffer's storage, under
        # whatever other name it is held (`self.c = t` beside register_buffer)
        given = v.of if isinstance(v, BufferV) else None
        root = storage_of(given) if isinstance(given, TensorV) else None
        if root is not None and root is not UNSURE:
            own[id(root)] = root
    return own, {k: v for k, v in held.items() if k not in sure}, complete


def _held(v: Value, out: dict, met: set) -> None:
    """Every Parameter and buffer v holds, through any attribute or item."""
    if id(v) in met:
        return
    met.add(id(v))
    if isinstance(v, (ParameterV, BufferV)):
        out[id(v)] = v
    elif isinstance(v, ObjectV):
        for _, a in v.attrs:
            _held(a, out, met)
    elif isinstance(v, (ModuleListV, ChoiceV, TupleV)):
        for a in v.items:
            _held(a, out, met)
    elif isinstance(v, OptionalV):
        _held(v.value, out, met)
