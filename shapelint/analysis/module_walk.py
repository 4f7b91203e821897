"""`m.named_modules()` / `m.modules()` in a target run: nn.Module's walk of its
tree, the module itself first (under the name ''), then each registered submodule's
own walk under its dotted name, every object once by identity across the whole
walk (torch's shared `memo`), None submodules left out.

Each level is `module_tree.children`'s: not known where a module may hold a submodule
the analysis cannot name, or where a class along the walk defines `named_modules`
itself (torch's walk calls each submodule's own)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shapelint.analysis import module_tree
from shapelint.analysis.attributes import find_method
from shapelint.analysis.module_lists import ModuleListV, as_items, item_names
from shapelint.ops.values import NoneV, ObjectV, StrV, TupleV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

METHODS = frozenset({"modules", "named_modules"})
# nn.Module's walks of the tensors its modules register: `_named_members` over
# named_modules(), each module's registry in the order it registered them
TENSOR_METHODS = {
    "parameters": "_parameters",
    "named_parameters": "_parameters",
    "buffers": "_buffers",
    "named_buffers": "_buffers",
}

# A walk that reaches more modules than this is not followed: a loop over it is
# followed turn by turn up to as many turns (loops.py's 64), and past them what
# the loop keeps of each module (`layers.append(layer)`) is a list not known, into
# which a module handed over may be changed (DAC's 226 modules lost their count).
_MAX_MODULES = 64


def walk(an: Analyzer, recv: Value, meth: str, args, kwargs) -> Value | None:
    """The list `meth` yields on recv, or None where it is not known."""
    if args or kwargs or not an.specialize:
        return None  # a memo or prefix handed in: not followed
    found: list[tuple[str, Value]] = []
    if not _walk(an, recv, "", found, set()):
        return None
    if meth == "modules":
        return TupleV(tuple(v for _, v in found), kind="list")
    return TupleV(tuple(TupleV((StrV(k), v)) for k, v in found), kind="list")


def tensors(an: Analyzer, recv: Value, meth: str, args, kwargs) -> Value | None:
    """The list `meth` (TENSOR_METHODS) yields on a built module recv (sinabs'
    `for name, b in self.named_buffers(): self.register_buffer(name, ...)` in a
    forward): each module of the walk, its registry's tensors under their dotted
    names, each tensor once by identity (torch's remove_duplicate); None where a
    module of the walk is no project module whose registry is known (a torch
    layer's, module_tree.registered_tensors), or a class along it defines the
    method or `named_modules` itself, or arguments are given."""
    if args or kwargs or not an.specialize or not isinstance(recv, ObjectV):
        return None
    found: list[tuple[str, Value]] = []
    if not _walk(an, recv, "", found, set()):
        return None
    registry = TENSOR_METHODS[meth]
    named = meth.startswith("named_")
    out: list[Value] = []
    seen: set[int] = set()
    for prefix, module in found:
        if not isinstance(module, ObjectV) or _defines(an, module, meth):
            return None
        held = module_tree.registered_tensors(module, registry, walked=True)
        if held is None:
            return None
        for k, t in held:
            if id(t) in seen:
                continue
            seen.add(id(t))
            out.append(TupleV((StrV(f"{prefix}.{k}" if prefix else k), t)) if named else t)
    return TupleV(tuple(out), kind="list")


def _defines(an: Analyzer, module: ObjectV, meth: str) -> bool:
    cd = an.class_of(module.kind.partition(">")[2])
    return cd is None or any(
        find_method(an, cd, m) is not None for m in (meth, f"named_{meth.removeprefix('named_')}")
    )


def _walk(an: Analyzer, module: Value, prefix: str, found: list, memo: set[int]) -> bool:
    if id(module) in memo:
        return True
    memo.add(id(module))
    if len(found) >= _MAX_MODULES:
        return False  # (a walk of more modules: not followed)
    level = _level(an, module)
    if level is None:
        return False
    found.append((prefix, module))
    for name, child in level:
        if isinstance(child, NoneV):
            continue  # torch's walk skips a None submodule
        if not _walk(an, child, f"{prefix}.{name}" if prefix else name, found, memo):
            return False
    return True


def _level(an: Analyzer, module: Value) -> list[tuple[str, Value]] | None:
    """The submodules one level down, by the names torch registers them under."""
    if isinstance(module, ModuleListV):  # nn.ModuleList / nn.Sequential
        items = as_items(module)
        return None if items is None else list(zip(item_names(module), items, strict=True))
    level = module_tree.children(an, module, "named_children", (), {}, overridden="named_modules")
    if not isinstance(level, TupleV):
        return None
    return [(pair.items[0].value, pair.items[1]) for pair in level.items]  # type: ignore[attr-defined]
