"""The object model's lookups: a class's project bases, its method resolution order
(Python's C3 linearization over the project classes), a method along it, all of a
class's methods, `super().name` (the class after the method's own in the MRO of the
instance's class), and which of an instance's flag attributes another method sets
(so that a branch on one is not decided by the value __init__ gave it).
Calls of what they find are modules.py's and the interpreter's.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from shapelint.analysis import class_state
from shapelint.analysis.nodes import working_statements
from shapelint.ops.values import (
    DICT_KIND,
    UNKNOWN,
    BoolV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    StrV,
    TupleV,
    Value,
)

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef, FuncDef


def base_classes(an: Analyzer, cd: ClassDef) -> list[ClassDef]:
    """The project classes cd derives from (in its own file or imported)."""
    owner = cd.owner or an
    out = []
    for b in cd.node.bases:
        base = _project_base(owner, cd, b)
        if base is not None:
            out.append(base)
    return out


# Classes outside the project whose `__setattr__` is object's own.
_OBJECT_SETATTR = frozenset(
    {"object", "dict", "builtins.object", "builtins.dict", "collections.OrderedDict",
     "typing.OrderedDict"}
)  # fmt: skip


def setattr_is_objects(an: Analyzer, cd: ClassDef) -> bool:
    """Every class cd derives from is the project's (read as source), object,
    dict or OrderedDict: none but the project's has a `__setattr__` of its own,
    so a `super().__setattr__` no project class answers is object's store."""
    owner = cd.owner or an
    project = base_classes(an, cd)
    plain = 0
    for b in cd.node.bases:
        name = b.id if isinstance(b, ast.Name) and b.id not in owner.classes else None
        qual = owner.imports.resolve(b) if isinstance(b, (ast.Name, ast.Attribute)) else None
        plain += (name or qual) in _OBJECT_SETATTR or qual in _OBJECT_SETATTR
    if cd.node.keywords or plain + len(project) != len(cd.node.bases):
        return False  # a metaclass, or a base that is neither
    return all(setattr_is_objects(an, base) for base in project)


def base_of(an: Analyzer, cd: ClassDef, b: ast.expr) -> ClassDef | None:
    """The project class the base expression b of cd names, None where it names none."""
    return _project_base(cd.owner or an, cd, b)


def setattr_call(holder: ast.expr, name: ast.expr, value: ast.expr | None, at: ast.AST) -> ast.Call:
    """`holder.__setattr__(name, value)`, placed at `at`: the call Python makes for
    `holder.k = v` or `setattr(holder, k, v)` where holder's class defines its own
    `__setattr__` (the caller's name for holder takes what the method left)."""
    func = ast.Attribute(holder, "__setattr__", ast.Load())
    return ast.copy_location(ast.Call(func, [name, value or ast.Constant(None)], []), at)


def made_with_hook(an: Analyzer, cd: ClassDef, func: ast.expr, hook: str) -> bool:
    """Whether func, called in cd's body, names a project class whose MRO defines
    the method hook (`__set_name__`)."""
    made = _project_base(cd.owner or an, cd, func)
    return made is not None and find_method(an, made, hook) is not None


def _project_base(owner: Analyzer, cd: ClassDef, b: ast.expr) -> ClassDef | None:
    from shapelint.analysis import project

    base = None
    if isinstance(b, ast.Name) and b.id in owner.classes:
        base = owner.classes[b.id]
    elif not owner.specialize:
        return None  # bases in other files: followed by target runs only
    elif isinstance(b, ast.Name) and b.id in owner.project_links:
        base = project.resolve(owner, b.id)
    elif (
        isinstance(b, ast.Attribute)
        and isinstance(b.value, ast.Name)
        and b.value.id in owner.project_links
    ):  # `from .. import base` then `class Node(base.MemoryModule)`: no import map names it
        base = project.resolve_attribute(owner, b)
    elif isinstance(b, (ast.Name, ast.Attribute)) and owner.project is not None:
        qual = owner.imports.resolve(b)
        base = project.resolve_qualified(owner, qual) if qual else None
        if base is None and qual:  # `class Registry(MutableMapping)`: its mixins' source
            base = project.source_base(owner, qual)
    if base is not None and base is not cd and hasattr(base, "methods"):
        return base
    return None


# Classes outside the project that define no `__call__` a lookup would find first.
_CALL_FREE = frozenset(
    {"object", "builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol"}
)


def own_call(an: Analyzer, cd: ClassDef) -> FuncDef | None:
    """The `__call__` calling an instance of cd runs, as Python looks it up on the
    type, where a project class defines it: along the C3 linearization of all of
    cd's bases, the project's and the others (`class Q(nn.Module, Base)` finds
    nn.Module's before Base's). None where none does, where another class (nn.Module,
    a library's) comes first, or where the order is not known."""
    if "__call__" in cd.methods:
        return cd.methods["__call__"]  # a class is first in its own MRO
    lin = _c3_all(an, cd, frozenset())
    for c in lin or ():
        if isinstance(c, str):
            if c not in _CALL_FREE:
                return None  # nn.Module.__call__, or a class not read
            continue
        if "__call__" in c.methods:
            return c.methods["__call__"]
    return None


def call_unsure(an: Analyzer, cd: ClassDef) -> bool:
    """Whether a project base of cd defines `__call__` where the order of cd's bases
    is not known (a base neither the project's nor named by an import): which
    `__call__` calling an instance runs is then not known."""
    if own_call(an, cd) is not None or _c3_all(an, cd, frozenset()) is not None:
        return False
    return find_method(an, cd, "__call__") is not None


def call_after(an: Analyzer, cd: ClassDef, after: ClassDef) -> str | None:
    """The class outside the project whose `__call__` `super().__call__` in a method
    of `after` reaches, for an instance of cd: the first after `after` in cd's
    linearization that may define one (None where a project class or no such class
    comes first, or the order is not known)."""
    lin = _c3_all(an, cd, frozenset()) or []
    keys = [c if isinstance(c, str) else c.key for c in lin]
    if after.key not in keys:
        return None
    for c in lin[keys.index(after.key) + 1 :]:
        if isinstance(c, str) and c in _CALL_FREE:
            continue
        if isinstance(c, str):
            return c
        if "__call__" in c.methods:
            return None
    return None


def init_after(an: Analyzer, cd: ClassDef, after: ClassDef) -> str | None:
    """The class outside the project whose `__init__` `super().__init__` in a method
    of `after` reaches, for an instance of cd: the first after `after` in cd's
    linearization over all its bases that may define one. A mixin's `super()`
    follows the instance's order, not the mixin's bases: `class Q(Mixin, nn.LayerNorm)`
    with `class Mixin(ABC)` reaches LayerNorm's. "object" where none but object's
    follows; "" where a project class defining `__init__` comes first (super_method's
    answer); None where the order is not known or `after` is not in it."""
    lin = _c3_all(an, cd, frozenset())
    keys = [c if isinstance(c, str) else c.key for c in lin or ()]
    if after.key not in keys:
        return None
    for c in lin[keys.index(after.key) + 1 :]:
        if isinstance(c, str) and c in _CALL_FREE:
            continue  # object's __init__ (ABC, Generic, Protocol define none)
        if isinstance(c, str):
            return c
        if "__init__" in c.methods:
            return ""
    return "object"


def outside_bases(an: Analyzer, cd: ClassDef) -> list[str] | None:
    """The qualified names of the classes outside the project along cd's
    linearization, in its order; None where the order is not known (a base the
    analysis cannot name)."""
    lin = _c3_all(an, cd, frozenset())
    return None if lin is None else [c for c in lin if isinstance(c, str)]


def _c3_all(an: Analyzer, cd: ClassDef, outer: frozenset) -> list | None:
    """cd's C3 linearization with its bases outside the project as their qualified
    names (each its own linearization: what they derive from is not read)."""
    owner = cd.owner or an
    bases: list = []
    for b in cd.node.bases:
        node = b.value if isinstance(b, ast.Subscript) else b  # Generic[T]
        base = _project_base(owner, cd, node)
        if base is None:
            named = isinstance(node, (ast.Name, ast.Attribute))
            qual = owner.imports.resolve(node) if named else None
            if qual is None and isinstance(node, ast.Name) and node.id == "object":
                qual = "object"
            if qual is None:
                return None  # a base not known: no order
            bases.append(qual)
        elif base.key not in outer:
            bases.append(base)
    seqs = []
    for b in bases:
        lin = [b] if isinstance(b, str) else _c3_all(an, b, outer | {cd.key})
        if lin is None:
            return None
        seqs.append(lin)
    seqs.append(list(bases))
    return _c3_merge(cd, seqs)


def find_method(an: Analyzer, cd: ClassDef, name: str) -> FuncDef | None:
    """A method by name along cd's MRO (None for a forward a layer of torch's
    defines first: torch_forward_first)."""
    if name == "forward" and torch_forward_first(an, cd):
        return None
    return _first_along_bases(an, cd, lambda c: c.methods.get(name))


# nn.Module's own forward raises; a class of torch's after it in the bases is not
# looked at here: only one before the project classes decides.
_MODULE = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


def torch_forward_first(an: Analyzer, cd: ClassDef) -> bool:
    """Whether a layer or container of torch's (whose class defines forward)
    comes before every project class that defines forward in cd's linearization
    over all its bases: `class MLP(nn.Sequential, FFN)` runs Sequential's forward,
    not FFN's, as Python's lookup does. False where cd defines its own, or where
    the order of its bases is not known."""
    if "forward" in cd.methods:
        return False
    # asked at every method call (all_methods): the linearization once per class
    memo = an.__dict__.setdefault(_FIRST_MEMO, {})
    got = memo.get(cd.key)
    if got is None:
        got = memo[cd.key] = _torch_forward_first(an, cd)
    return got


_FIRST_MEMO = "_shapelint_torch_forward_first"


def _torch_forward_first(an: Analyzer, cd: ClassDef) -> bool:
    for c in _c3_all(an, cd, frozenset()) or ():
        if isinstance(c, str):
            if c.startswith("torch.nn.") and c not in _MODULE:
                return True
        elif "forward" in c.methods:
            return False
    return False


def metaclass_call(an: Analyzer, cd: ClassDef) -> bool:
    """Whether a metaclass named along cd's bases is a project class with a
    `__call__` of its own (along its project bases) that may return something
    other than the instance `type.__call__` builds: that method, not
    `type.__call__`, says what `cd(...)` returns. One that returns what
    `type.__call__(cls, ...)` or `super().__call__(...)` gave (kornia's
    `obj.__post_init__()` before it) returns an instance of cd, and so does one
    that builds it as `type.__call__` does around hooks cd leaves without effect
    (`init_with_hooks`: fastcore's PrePostInitMeta under fastai's Module)."""
    for c in mro(an, cd):
        owner = c.owner or an
        for k in c.node.keywords:
            meta = _project_base(owner, c, k.value) if k.arg == "metaclass" else None
            call = find_method(an, meta, "__call__") if meta is not None else None
            if (
                call is not None
                and not _returns_type_call(call.node)
                and not init_with_hooks(an, cd, call.node)
            ):
                return True
    return False


def init_with_hooks(an: Analyzer, cd: ClassDef, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a metaclass `__call__` builds cd's instance as `type.__call__` does:
    `res = cls.__new__(cls)` (cd defining no `__new__`: object's, which takes no
    arguments), `res.__init__(*args, **kwargs)` once, other methods called on res
    around it (under `if type(res) == cls:` and `if hasattr(res, name):`), and
    `return res`; each other method one cd does not define (its `hasattr` guard
    false) or whose body is `super().__init__()` alone, nn.Module's own start
    that the construction already is. fastcore's PrePostInitMeta, with fastai's
    Module's `__pre_init__`, is such a call."""
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    if not params or fn.args.vararg is None or fn.args.kwarg is None:
        return False
    if isinstance(fn, ast.AsyncFunctionDef) or find_method(an, cd, "__new__") is not None:
        return False
    cls, star, stars = params[0], fn.args.vararg.arg, fn.args.kwarg.arg
    body = working_statements(fn)
    if len(body) < 3 or not isinstance(body[0], ast.Assign) or len(body[0].targets) != 1:
        return False
    res = body[0].targets[0]
    if not (isinstance(res, ast.Name) and _new_of(body[0].value, cls)):
        return False
    last = body[-1]
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Name)):
        return False
    if last.value.id != res.id:
        return False
    inits = _hook_calls(an, cd, body[1:-1], res.id, cls, (star, stars), top=True)
    return inits == 1


def _new_of(e: ast.expr | None, cls: str) -> bool:
    """`cls.__new__(cls)`."""
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr == "__new__"
        and isinstance(e.func.value, ast.Name)
        and e.func.value.id == cls
        and len(e.args) == 1
        and isinstance(e.args[0], ast.Name)
        and e.args[0].id == cls
        and not e.keywords
    )


def _hook_calls(an, cd, body, res: str, cls: str, spread: tuple[str, str], top: bool) -> int | None:
    """How many `res.__init__(*args, **kwargs)` calls body makes, every other
    statement a hook without effect (init_with_hooks); None for anything else.
    top: the `__init__` call may sit here (not under a `hasattr` guard)."""
    inits: int | None = 0
    for stmt in body:
        if isinstance(stmt, ast.If) and not stmt.orelse:
            test = stmt.test
            if _is_type_test(test, res, cls) and top:
                got = _hook_calls(an, cd, stmt.body, res, cls, spread, top=True)
            elif (name := _hasattr_of(test, res)) is not None:
                if find_method(an, cd, name) is None:
                    continue  # the guard is false: its body never runs
                got = _hook_calls(an, cd, stmt.body, res, cls, spread, top=False)
            else:
                return None
        elif isinstance(stmt, ast.Expr) and _spread_call(stmt.value, res, spread):
            name = stmt.value.func.attr  # type: ignore[attr-defined]
            if name == "__init__":
                got = 1 if top else None
            else:
                got = 0 if _module_start_hook(an, cd, name) else None
        else:
            return None
        if got is None or inits is None:
            return None
        inits += got
    return inits


def _is_type_test(test: ast.expr, res: str, cls: str) -> bool:
    """`type(res) == cls` (or `is`)."""
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Eq, ast.Is))
        and isinstance(test.left, ast.Call)
        and isinstance(test.left.func, ast.Name)
        and test.left.func.id == "type"
        and [ast.dump(a) for a in test.left.args] == [ast.dump(ast.Name(res, ast.Load()))]
        and isinstance(test.comparators[0], ast.Name)
        and test.comparators[0].id == cls
    )


def _hasattr_of(test: ast.expr, res: str) -> str | None:
    """name of `hasattr(res, 'name')`."""
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name)):
        return None
    if test.func.id != "hasattr" or len(test.args) != 2 or test.keywords:
        return None
    on, name = test.args
    if isinstance(on, ast.Name) and on.id == res and isinstance(name, ast.Constant):
        return name.value if isinstance(name.value, str) else None
    return None


def _spread_call(e: ast.expr, res: str, spread: tuple[str, str]) -> bool:
    """`res.method(*args, **kwargs)` with the metaclass call's own arguments."""
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and isinstance(e.func.value, ast.Name)
        and e.func.value.id == res
        and len(e.args) == 1
        and isinstance(e.args[0], ast.Starred)
        and isinstance(e.args[0].value, ast.Name)
        and e.args[0].value.id == spread[0]
        and len(e.keywords) == 1
        and e.keywords[0].arg is None
        and isinstance(e.keywords[0].value, ast.Name)
        and e.keywords[0].value.id == spread[1]
    )


def _module_start_hook(an: Analyzer, cd: ClassDef, name: str) -> bool:
    """cd, an nn.Module, finds method `name` in a class after which no class of
    its MRO defines `__init__`, and its body is `super().__init__()`: nn.Module's
    own start, which the construction already is."""
    order = mro(an, cd)
    at = next((i for i, c in enumerate(order) if name in c.methods), None)
    if at is None or not module_class(an, cd):
        return False
    if any("__init__" in c.methods for c in order[at + 1 :]):
        return False
    return _module_start_only(order[at].methods[name].node)


def _module_start_only(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """fn's body is `super().__init__()` alone (a docstring aside)."""
    body = working_statements(fn)
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        return False
    call = body[0].value
    return (
        isinstance(call, ast.Call)
        and not call.args
        and not call.keywords
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "__init__"
        and isinstance(call.func.value, ast.Call)
        and isinstance(call.func.value.func, ast.Name)
        and call.func.value.func.id == "super"
        and not call.func.value.args
    )


def _returns_type_call(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Every return of fn returns what `type.__call__(cls, ...)` /
    `super().__call__(...)` gave, directly or through a name bound once to it."""
    made = {
        t.id
        for n in ast.walk(fn)
        if isinstance(n, ast.Assign) and _type_call(n.value)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    bound = [
        t.id
        for n in ast.walk(fn)
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With))
        for t in ast.walk(n)
        if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
    ]
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    return bool(returns) and all(
        r.value is not None
        and (
            _type_call(r.value)
            or (
                isinstance(r.value, ast.Name)
                and r.value.id in made
                and bound.count(r.value.id) == 1
            )
        )
        for r in returns
    )


def _type_call(e: ast.expr | None) -> bool:
    if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute)):
        return False
    on = e.func.value
    if e.func.attr != "__call__":
        return False
    if isinstance(on, ast.Name) and on.id == "type":
        return True
    return isinstance(on, ast.Call) and isinstance(on.func, ast.Name) and on.func.id == "super"


def mro(an: Analyzer, cd: ClassDef) -> list[ClassDef]:
    """cd and its project bases in the order Python looks names up in: the C3
    linearization (`class D(B, A)` with both deriving from Base: D, B, A, Base,
    where depth first would put Base before A). Depth first where C3 has no answer
    (Python refuses to create such a class)."""
    return _c3(an, cd, frozenset()) or _depth_first(an, cd, set())


def _c3(an: Analyzer, cd: ClassDef, outer: frozenset) -> list[ClassDef] | None:
    bases = [b for b in base_classes(an, cd) if b.key not in outer]
    if not bases:
        return [cd]
    inner = outer | {cd.key}
    seqs = []
    for b in bases:
        lin = _c3(an, b, inner)
        if lin is None:
            return None
        seqs.append(lin)
    seqs.append(list(bases))
    return _c3_merge(cd, seqs)


def _c3_merge(cd: ClassDef, seqs: list[list]) -> list | None:
    """C3's merge of the bases' linearizations and the bases' list, after cd: each
    step takes the first head no sequence holds in its tail; None where none is
    (Python refuses such a class). A base outside the project is its qualified
    name (a str), a project class its ClassDef, compared by key."""
    key = lambda c: c if isinstance(c, str) else c.key  # noqa: E731
    out = [cd]
    while seqs := [s for s in seqs if s]:
        tails = {key(c) for s in seqs for c in s[1:]}
        head = next((s[0] for s in seqs if key(s[0]) not in tails), None)
        if head is None:
            return None
        out.append(head)
        seqs = [s[1:] if key(s[0]) == key(head) else s for s in seqs]
    return out


def _depth_first(an: Analyzer, cd: ClassDef, seen: set) -> list[ClassDef]:
    seen.add(cd.key)
    out = [cd]
    for base in base_classes(an, cd):
        if base.key not in seen:
            out += _depth_first(an, base, seen)
    return out


def _first_along_bases(an: Analyzer, cd: ClassDef, probe):
    """probe's first answer that is not None, along cd's MRO."""
    found = probe(cd)
    if found is not None:
        return found
    for c in mro(an, cd)[1:]:
        found = probe(c)
        if found is not None:
            return found
    return None


def all_methods(an: Analyzer, cd: ClassDef) -> dict[str, FuncDef]:
    """Own methods over inherited ones, along cd's MRO."""
    out: dict[str, FuncDef] = {}
    for c in reversed(mro(an, cd)):
        out.update(c.methods)
    if "forward" in out and torch_forward_first(an, cd):
        del out["forward"]
    return out


def super_method(
    an: Analyzer, frame, name: str, instance: ClassDef | None = None
) -> FuncDef | None:
    """`super().name` in a method of class C: the first class after C that has it
    in the MRO of the instance's class (`instance`, where known and derived from C:
    along a diamond, B's `super()` reaches its sibling A, not their base), else in C's."""
    fd = frame.func
    if fd is None or fd.cls is None:
        return None
    order = mro(an, instance) if instance is not None else []
    at = next((k for k, c in enumerate(order) if c.key == fd.cls.key), None)
    if at is None:
        order, at = mro(an, fd.cls), 0
    if name in _TORCH_DEFINES and torch_first_after(an, order[0], fd.cls, name):
        return None  # the torch class's method (super_calls runs it), not a later mixin's
    return next((c.methods[name] for c in order[at + 1 :] if name in c.methods), None)


# Methods every class of torch.nn defines (nn.Module's own `forward` raises): one of
# them reached along the MRO before a project class's is torch's. nn.Module's
# `__init__` calls no `super().__init__` (`call_super_init` is False unless a class
# sets it), so a mixin after it in the MRO is never initialised by that chain.
_TORCH_DEFINES = frozenset({"__init__", "forward"})


def torch_first_after(an: Analyzer, cd: ClassDef, after: ClassDef, name: str) -> bool:
    """Whether, in the linearization of cd over all its bases, a class of torch.nn
    comes after `after` and before every project class defining `name`:
    `class S(PadConv, Mixin)` with `class PadConv(nn.Conv2d)` has the MRO S, PadConv,
    Conv2d, ..., Module, Mixin, object, so `super().__init__` in PadConv runs
    Conv2d's, not Mixin's (the project classes alone would put Mixin next)."""
    lin = _c3_all(an, cd, frozenset()) or []
    keys = [c if isinstance(c, str) else c.key for c in lin]
    if after.key not in keys:
        return False
    for c in lin[keys.index(after.key) + 1 :]:
        if isinstance(c, str):
            if c.startswith("torch.nn."):
                return True
        elif name in c.methods:
            return False
    return False


def find_property(an: Analyzer, cd: ClassDef, name: str) -> tuple | None:
    """(getter, setter, data) of a property `name` along cd's bases (the first class
    whose body defines one), None where none does. data: a `property`, which wins
    over an instance attribute of the same name (a data descriptor); False for a
    `functools.cached_property`, which the instance's own attribute shadows."""
    return _first_along_bases(an, cd, lambda c: _own_property(an, c, name))


def _own_property(an: Analyzer, cd: ClassDef, name: str) -> tuple | None:
    from shapelint.analysis.defs import FuncDef

    cache = cd.__dict__.setdefault("_properties", {})
    if name in cache:
        return cache[name]
    owner = cd.owner or an
    getter = setter = None
    data = True
    for stmt in cd.node.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or stmt.name != name:
            continue
        for d in stmt.decorator_list:
            qual = owner.imports.resolve(d) if isinstance(d, (ast.Name, ast.Attribute)) else None
            if qual in ("property", "builtins.property", "functools.cached_property") or (
                qual is None and isinstance(d, ast.Name) and d.id == "property"
            ):
                getter = FuncDef(stmt, f"{cd.name}.{name}", cd, owner=owner)
                data = qual != "functools.cached_property"
            elif (
                isinstance(d, ast.Attribute)
                and d.attr == "setter"
                and isinstance(d.value, ast.Name)
                and d.value.id == name
            ):
                setter = FuncDef(stmt, f"{cd.name}.{name}", cd, owner=owner)
    cache[name] = (getter, setter, data) if getter is not None else None
    return cache[name]


def class_attribute(an: Analyzer, cd: ClassDef, name: str) -> Value | None:
    """What `self.name` reads when the instance has no such attribute: what the run
    stored through the class (class_state), else the class body's last assignment
    to it (`expansion = 4`), this class's or a base's along the MRO, evaluated in
    its module; None when no class assigns it."""
    return _first_along_bases(an, cd, lambda c: _own_class_attribute(an, c, name))


def _own_class_attribute(an: Analyzer, cd: ClassDef, name: str) -> Value | None:
    stored = class_state.stored(cd.key, name)  # `Cfg.k = 3` in this run
    if stored is not None:
        return stored
    value = _body_value(cd, name)
    if value is None:
        return None
    owner = cd.owner or an
    top = owner.new_frame(None, cd.name)
    top.env = owner.module_env
    made = owner.eval(value, top)
    if _one_object(made):
        # Python evaluates the class body once: every read in the run is the one
        # list or dict (`self.layers = Cfg.layers` holds what `Cfg.layers.append`
        # changes), not a new one per read
        class_state.first_read(cd.key, name, made)
    return made


def _one_object(v: Value) -> bool:
    """A list or dict, which a change in place through one name changes for all."""
    return (isinstance(v, TupleV) and v.kind != "tuple") or (
        type(v) is ObjectV and v.kind == DICT_KIND
    )


def descriptor(an: Analyzer, cd: ClassDef, name: str) -> str | None:
    """ "data" where the class attribute `name` (the body's assignment along cd's
    MRO) is an instance of a project class defining `__set__` or `__delete__`,
    "get" where it defines `__get__` alone, else None. Python's attribute lookup
    calls them on an instance's reads (a data descriptor before the instance's
    own attribute) and stores, which the analysis does not run."""
    found = defining_class(an, cd, name)
    value = _body_value(found, name) if found is not None else None
    if not isinstance(value, ast.Call) or not isinstance(value.func, (ast.Name, ast.Attribute)):
        return None
    made = _project_base(found.owner or an, found, value.func)  # type: ignore[union-attr]
    if made is None:
        return None
    if any(find_method(an, made, m) is not None for m in ("__set__", "__delete__")):
        return "data"
    return "get" if find_method(an, made, "__get__") is not None else None


def _body_value(cd: ClassDef, name: str) -> ast.expr | None:
    """The expression of the class body's last assignment to name."""
    for stmt in reversed(cd.node.body):
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in stmt.targets
        ):
            return stmt.value
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if stmt.target.id == name and stmt.value is not None:
                return stmt.value
    return None


def nested_class(an: Analyzer, cd: ClassDef, name: str) -> str | None:
    """The key of the class a class body along cd's MRO defines under `name` (`class
    ATan(torch.autograd.Function):` inside the module's class, read as `self.ATan`),
    where that body's last binding of the name is the class statement, undecorated or
    under `@staticmethod` alone (whose `__get__` gives the class itself); None where
    the first body along the MRO that binds the name binds something else, or where
    the run stored the name through a class (class_state)."""

    def binding(c: ClassDef) -> str | None:
        if class_state.stored(c.key, name) is not None:
            return "<other>"
        for stmt in reversed(c.node.body):
            if isinstance(stmt, ast.ClassDef) and stmt.name == name:
                plain = all(
                    isinstance(d, ast.Name) and d.id == "staticmethod" for d in stmt.decorator_list
                )
                key = (c.owner or an).nested_keys.get(id(stmt)) if plain else None
                return key or "<other>"
            if name in _bound_names(stmt):
                return "<other>"
        return None

    found = _first_along_bases(an, cd, binding)
    return None if found in (None, "<other>") else found


def _bound_names(stmt: ast.stmt) -> set[str]:
    """The names a class body's statement binds (assignments, definitions, imports)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    return {
        n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def static_attribute(an: Analyzer, cd: ClassDef, name: str) -> Value | None:
    """`helper = staticmethod(f)` in a class body along cd's MRO, the first class
    there to bind the name: what f is, which `self.helper` and `Cls.helper` read
    (a staticmethod object's `__get__` gives its function, bound to nothing). None
    where the first binding is another (a def, another value, a store of the run),
    or `staticmethod` is not the builtin there."""
    for c in mro(an, cd):
        if name in c.methods or class_state.stored(c.key, name) is not None:
            return None
        value = _body_value(c, name)
        if value is None:
            continue
        if not (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "staticmethod"
            and len(value.args) == 1
            and not isinstance(value.args[0], ast.Starred)
            and not value.keywords
        ):
            return None
        owner = c.owner or an
        shadowed = (
            "staticmethod" in owner.module_env
            or "staticmethod" in owner.functions
            or "staticmethod" in owner.classes
            or owner.imports.resolve(value.func) is not None
            or _class_body_binds(c, "staticmethod")
        )
        if shadowed:
            return None
        top = owner.new_frame(None, c.name)
        top.env = owner.module_env
        return owner.eval(value.args[0], top)
    return None


def _class_body_binds(cd: ClassDef, name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
        for stmt in cd.node.body
        for n in ast.walk(stmt)
    )


def defining_class(an: Analyzer, cd: ClassDef, name: str) -> ClassDef | None:
    """The class along cd's MRO whose attribute `name` an instance without one of
    its own reads (what a run stored through it, or its body's assignment)."""

    def holds(c: ClassDef) -> ClassDef | None:
        found = class_state.stored(c.key, name) is not None or _body_value(c, name) is not None
        return c if found else None

    return _first_along_bases(an, cd, holds)


def settled(an: Analyzer, cd: ClassDef, attrs: dict[str, Value]) -> dict[str, Value]:
    """attrs without the flags another method sets: after `self.swapped = True` in
    another method (one __init__ calls, too), `if self.swapped:` is not decided by the
    False that __init__ gave it (a branch taken for a constant that is not one).
    A target is one forward of the module as built: no other method ran before
    it, so what __init__ gave holds (timm's grad_checkpointing)."""
    if an.specialize:
        return attrs
    flags = [k for k, v in attrs.items() if _flag(v)]
    changed = set_elsewhere(an, cd, flags) if flags else ()
    if not changed:
        return attrs
    return {k: UNKNOWN if k in changed else v for k, v in attrs.items()}


def _flag(v: Value) -> bool:
    return isinstance(v, (BoolV, NoneV, StrV, FloatV)) or (
        isinstance(v, IntV) and v.value is not None and v.value.is_constant()
    )


# Without a leading \b, which would keep the regex engine from scanning for the
# literal "self." (ten times slower on a long class); _assigned_attrs checks it.
_SELF_ASSIGNED = re.compile(r"self\.(\w+)\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)")


def _assigned_attrs(text: str) -> set[str]:
    """The attributes text assigns to self: the names of _SELF_ASSIGNED's matches
    that start a word (as a leading \b would: no match can hold the start of another)."""
    out = set()
    for m in _SELF_ASSIGNED.finditer(text):
        i = m.start()
        if i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"):
            out.add(m.group(1))
    return out


def set_elsewhere(an: Analyzer, cd: ClassDef, names: list[str]) -> set[str]:
    """Which of names a method of cd's own other than __init__ assigns to self. The
    methods __init__ calls count too: they run on a copy of what __init__ has
    built so far, so what they assign never reaches the attributes (peft's
    `update_layer` sets `self._did_swap_in_out_features = True` under a condition).
    A search of their text, read once per class: a walk of every method's tree
    cost more than the rest of a class's analysis."""
    assigned = getattr(cd, "_assigned_elsewhere", None)
    if assigned is None:
        lines = (cd.owner or an).src.lines
        text = "".join(
            "".join(lines[fd.node.lineno - 1 : fd.node.end_lineno])
            for name, fd in cd.methods.items()
            if name != "__init__"
        )
        # Every attribute they assign, once: the same as a search for the names
        # asked (an assignment names one whole attribute).
        assigned = _assigned_attrs(text)
        cd._assigned_elsewhere = assigned  # type: ignore[attr-defined]
    return assigned.intersection(names)


_REGISTERS = re.compile(r"\b(register_buffer|register_parameter|add_module|requires_grad_?)\b")


def builds_state(an: Analyzer, cls_key: str, method: str, assigned: set[str]) -> bool:
    """Whether a method __init__ calls (run on a copy of the module: see
    settled) may register state torch counts: it assigns an attribute __init__
    has not (assigned), or registers or freezes one."""
    cd = an.class_of(cls_key)
    fd = find_method(an, cd, method) if cd is not None else None
    if fd is None:
        return False
    lines = (fd.owner or an).src.lines
    text = "".join(lines[fd.node.lineno - 1 : fd.node.end_lineno])
    return bool(_REGISTERS.search(text)) or bool(_assigned_attrs(text) - assigned)


# Bases that are no nn.Module and add no attributes torch registers.
_PLAIN_BASES = ("object", "builtins.object", "abc.ABC", "typing.", "enum.")
# Python's builtin types, named as a base without an import: seen, and none of
# them an nn.Module or a project class (`class CFG(dict)` is no module).
_BUILTIN_TYPES = frozenset(
    {"dict", "list", "tuple", "set", "frozenset", "str", "int", "float", "bytes", "Exception"}
)


def derives_from_module(an, key: str) -> bool | None:
    """True: an nn.Module; False: surely not (its bases are known and none is one);
    None: a base the analysis cannot see."""
    cd = an.class_of(key)
    return None if cd is None else module_class(an, cd)


def module_class(an, cd: ClassDef) -> bool | None:
    """derives_from_module of a class at hand."""
    return _along_bases(
        an, cd, lambda c: any(n.startswith("torch.nn.") for n in _base_names(an, c)), _PLAIN_BASES
    )


def derives_from(an, cd: ClassDef, target: ClassDef) -> bool | None:
    """`issubclass(cd, target)` of two project classes: True where target is cd or
    one of its bases; False where every base along the way is seen (a project class,
    torch's, or a plain one) and none is target; None where a base is not seen."""
    return _along_bases(an, cd, lambda c: c is target, (*_PLAIN_BASES, "torch."))


def _along_bases(an, cd, hit, seen: tuple[str, ...], depth: int = 0) -> bool | None:
    """True where hit(c) holds of cd or of a class along its bases; False where every
    base is seen (a project class, or a name starting with one of `seen`) and it holds
    of none; None where a base is not seen."""
    if depth > 20:
        return None
    if hit(cd):
        return True
    project = base_classes(an, cd)
    others = sum(
        not (name.startswith(seen) or name in _BUILTIN_TYPES) for name in _base_names(an, cd)
    )
    verdicts = [_along_bases(an, p, hit, seen, depth + 1) for p in project]
    if any(verdicts):
        return True
    if None in verdicts or others > len(project):
        return None
    return False


def _base_names(an, cd) -> list[str]:
    """cd's bases as written, by qualified name where an import says it."""
    owner = cd.owner or an
    out = []
    for b in cd.node.bases:
        qual = owner.imports.resolve(b) if isinstance(b, (ast.Name, ast.Attribute)) else None
        out.append(qual or (b.id if isinstance(b, ast.Name) else ""))
    return out


# Bases that make a class no subclass of a builtin type (int, str, tuple, dict...):
# NamedTuple, the enums of int and str, and a library class may all be one. An
# instance over these alone is no tensor, tuple, list or dict either.
_NO_BUILTIN_BASES = frozenset(
    {"object", "builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol"}
)


def derives_from_object_alone(an, cd: ClassDef) -> bool:
    """Whether every class along cd's bases is written in the project, or is object
    (ABC, Generic, Protocol), so that no builtin type is among them: an instance is
    then no int, float, str, bytes, tuple, list or dict (`isinstance(v, str)` is
    False). A class that defines `__class__` may claim another: not this."""
    return _every_along_bases(
        an, cd, lambda c: "__class__" not in c.methods, _NO_BUILTIN_BASES.__contains__
    )


# Library bases whose metaclass is `type` or one that keeps type's `__repr__`
# (ABCMeta, Generic's and Protocol's): a class over them prints as type prints it.
# torch.nn's classes are plain classes of `type`.
_TYPE_REPR_BASES = frozenset(
    {
        "object",
        "builtins.object",
        "abc.ABC",
        "typing.Generic",
        "typing.Protocol",
        "dict",
        "builtins.dict",
        "list",
        "builtins.list",
        "collections.OrderedDict",
    }
)


def plain_object(an: Analyzer, cd: ClassDef) -> bool:
    """Every class cd derives from is the project's, object, ABC, Generic or
    Protocol, with no metaclass given: an instance of cd is no tensor, tuple,
    list or dict, whatever its attributes hold."""
    return _every_along_bases(an, cd, lambda c: not c.node.keywords, _NO_BUILTIN_BASES.__contains__)


def _every_along_bases(an, cd: ClassDef, own, allowed, depth: int = 0) -> bool:
    """own(c) holds of cd and of every project class along its bases, and every
    base outside the project is one allowed (a test of its qualified name)."""
    if depth > 20 or not own(cd):
        return False
    project = base_classes(an, cd)
    if _bases_outside(an, cd, allowed) != len(project):
        return False  # a base outside the project not among those allowed
    return all(_every_along_bases(an, p, own, allowed, depth + 1) for p in project)


def _type_repr_base(name: str | None) -> bool:
    return name is not None and (name in _TYPE_REPR_BASES or name.startswith("torch.nn."))


def _bases_outside(an, cd: ClassDef, allowed) -> int:
    """How many of cd's bases, by their qualified name (a name where none
    resolves), are not allowed: the project's among them."""
    owner = cd.owner or an
    others = 0
    for b in cd.node.bases:
        node = b.value if isinstance(b, ast.Subscript) else b  # Generic[T]
        qual = owner.imports.resolve(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        others += not allowed(qual or (node.id if isinstance(node, ast.Name) else None))
    return others


def _binds_class_attr(cd: ClassDef) -> bool:
    """Whether cd's body binds `__class__` (a property, a method or a name), which
    then answers `obj.__class__` in type's place."""
    if "__class__" in cd.methods:
        return True
    for stmt in cd.node.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "__class__" for t in targets):
            return True
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "__class__":
            return True
    return False


_ABSTRACT = frozenset(
    {"abstractmethod", "abstractproperty", "abc.abstractmethod", "abc.abstractproperty"}
)


def builds_as_type(an, cd: ClassDef) -> bool:
    """Whether `cd(...)` builds its instance as `type.__call__` does (object's
    `__new__`, then `__init__`): no class along its bases defines `__new__` or names
    a metaclass other than abc.ABCMeta, every base outside the project is a plain
    class, and no abstract method is left unimplemented (ABCMeta refuses those)."""
    seen: dict[str, bool] = {}  # name -> abstract, where first found along the bases
    needs: set[str] = set()  # the abstract methods of collections.abc bases
    if not _builds_as_type(an, cd, seen, 0, needs) or any(seen.values()):
        return False
    return all(seen.get(m) is False for m in needs)


# collections.abc's sequence classes (ABCMeta, which keeps type's `__call__`) and
# the abstract methods a class over one must define for ABCMeta to build it.
_SEQUENCE_ABSTRACT = {
    f"{m}.{c}": names
    for m in ("collections.abc", "typing")
    for c, names in (
        ("Sequence", ("__getitem__", "__len__")),
        ("MutableSequence", ("__getitem__", "__len__", "__setitem__", "__delitem__", "insert")),
    )
}


def _builds_as_type(an, cd: ClassDef, seen: dict[str, bool], depth: int, needs: set) -> bool:
    if depth > 20 or "__new__" in cd.methods:
        return False
    owner = cd.owner or an
    for k in cd.node.keywords:
        if k.arg == "metaclass" and owner.imports.resolve(k.value) != "abc.ABCMeta":
            return False
    for stmt in cd.node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name not in seen:
            seen[stmt.name] = any(
                owner.imports.resolve(d) in _ABSTRACT
                for d in stmt.decorator_list
                if isinstance(d, (ast.Name, ast.Attribute))
            )
    project = base_classes(an, cd)
    for b in cd.node.bases:
        node = b.value if isinstance(b, ast.Subscript) else b  # Sequence[T]
        qual = owner.imports.resolve(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        needs.update(_SEQUENCE_ABSTRACT.get(qual or "", ()))
    allowed = lambda name: _type_repr_base(name) or name in _SEQUENCE_ABSTRACT  # noqa: E731
    if _bases_outside(an, cd, allowed) != len(project):
        return False
    return all(_builds_as_type(an, p, seen, depth + 1, needs) for p in project)


def plain_type(an, cd: ClassDef) -> bool:
    """Whether `obj.__class__` of an instance of cd is cd itself and `str(cd)` /
    `repr(cd)` is type's `<class 'module.Name'>`: no class along its bases names a
    metaclass (an Enum's prints `<enum ...>`) or binds `__class__`, and every base
    outside the project is one known to be a plain class of `type`."""
    own = lambda c: not _binds_class_attr(c) and not _names_metaclass(c)  # noqa: E731
    return _every_along_bases(an, cd, own, _type_repr_base)


def metaclass_is_type(an, cd: ClassDef) -> bool:
    """Whether `type(cd)` is `type` itself: no class along its bases names a
    metaclass, and every base outside the project is a plain class of `type`
    (object, dict, list, OrderedDict, Generic, torch.nn's classes; not ABC or
    Protocol, whose metaclasses are ABCMeta's)."""
    return _every_along_bases(an, cd, lambda c: not _names_metaclass(c), _type_base)


def _names_metaclass(cd: ClassDef) -> bool:
    return any(k.arg == "metaclass" for k in cd.node.keywords)


def _type_base(name: str | None) -> bool:
    return _type_repr_base(name) and name not in ("abc.ABC", "typing.Protocol")


def is_static(node) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)


def is_class_method(node) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "classmethod" for d in node.decorator_list)


def binds_no_instance(node) -> bool:
    """A `@staticmethod` or `@classmethod` def: reading it off an instance binds no
    `self` (its first parameter is nothing or the class)."""
    return any(
        isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
        for d in node.decorator_list
    )
