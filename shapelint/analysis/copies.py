"""Fresh objects: what a construction renews of what it was handed, the objects
one call's arguments hold mapped to a later call's, `copy.deepcopy` of a
module.

Split out of modules.py by benchmarks/split_modules.py."""

from __future__ import annotations

from dataclasses import replace

from shapelint.analysis.callable_values import ChoiceV
from shapelint.analysis.module_kinds import DICT_KINDS, is_module
from shapelint.analysis.module_lists import ModuleListV
from shapelint.ops.values import UNKNOWN, BufferV, ObjectV, ParameterV, TensorV, TupleV, Value


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
    return not holds_state(v)


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


def holds_state(v: Value, depth: int = 0) -> bool:
    """Whether a call's value holds a module or a parameter. Python builds a new one
    at each call of a factory (`create_conv2d(...)` twice: two convolutions), and
    parameters() counts objects by identity: such a run is not handed out again."""
    if depth > 4:
        return True
    if isinstance(v, (ParameterV, BufferV)) or (isinstance(v, ObjectV) and is_module(v)):
        return True
    if isinstance(v, ObjectV):
        return any(holds_state(a, depth + 1) for _, a in v.attrs)
    items = getattr(v, "items", None)  # a tuple, a module list, a choice of modules
    return isinstance(items, tuple) and any(holds_state(i, depth + 1) for i in items)
