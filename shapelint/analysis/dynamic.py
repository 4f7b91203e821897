"""What a target run does not model, found in the code and said.

Calling a module runs its `forward` as the analysis reads it, unless the code
changes what runs: a forward hook or pre-hook the run cannot place
(module_hooks.py runs those it can: on a module it knows, with arguments it knows;
on every module through `register_module_forward_hook`), `forward` (or
another method) assigned on an instance or on the class (`self.forward = ...`,
`Model.forward = ...`, `setattr(obj, "forward", ...)`, anywhere in the file),
`apply` with a function that replaces layers (in a function, or a method in a
target run, judged where the call runs), or a decorator whose wrapper the
analysis does not follow. Such a call is on the record with an unknown cost that
names the reason: the total is a lower bound, never a figure for code that does
not run. Each file is scanned once, on first use.

A `setattr` whose name is computed (`for key, value in kwargs.items():
setattr(self, key, value)`) inside a function replaces a method only when it
runs with that name, as Python does it: a target run follows the functions that
run, so such a call is judged where it runs (`set_at_run_time`, kept per target
run), by the name it is given; the scan keeps only those at a module's top level,
which run at import.

A class's own `__call__` is what calling its instance runs, as Python looks it up
on the type (modules.call_value; its `super().__call__` reaches nn.Module's, which
runs forward): no doubt on forward, whichever class defines it.
"""

from __future__ import annotations

import ast
from contextvars import ContextVar
from dataclasses import dataclass, field

from shapelint.analysis import handing_back, narrowed_layers, project
from shapelint.analysis.attributes import module_class
from shapelint.analysis.defs import FuncDef
from shapelint.analysis.function_copies import copies_itself
from shapelint.analysis.nodes import children, nodes_of, walk
from shapelint.scoped import Bound

# Decorators that hand back a function running the same body once per call.
TRANSPARENT = frozenset(
    {
        "functools.wraps",
        "torch.no_grad",
        "torch.inference_mode",
        "torch.enable_grad",
        # torch's grad-mode classes under their other paths; set_grad_enabled sets the
        # mode when built and `__call__` restores the one it found: as a decorator, the
        # body runs in its mode and nothing else changes (grad_mode.decorated)
        "torch.autograd.no_grad",
        "torch.autograd.enable_grad",
        "torch.autograd.inference_mode",
        "torch.autograd.grad_mode.no_grad",
        "torch.autograd.grad_mode.enable_grad",
        "torch.autograd.grad_mode.inference_mode",
        "torch.set_grad_enabled",
        "torch.autograd.set_grad_enabled",
        "torch.autograd.grad_mode.set_grad_enabled",
        "torch.autocast",
        "torch.amp.autocast",
        "torch.cuda.amp.autocast",
        "staticmethod",
        "classmethod",
        "abc.abstractmethod",
        "typing.final",
        "typing.override",
        "typing_extensions.override",  # the backport: marks the function, returns it
        "typing_extensions.final",
        "typing.no_type_check",  # sets __no_type_check__ on the function it returns
        # they leave eager calls as they are: registered for tracing, or kept
        # out of a compiler that a target run does not model anyway
        "torch.fx.wrap",
        "torch.jit.ignore",
        "torch.jit.unused",
        "torch.jit.export",
        "torch.jit.script_if_tracing",
        # a ScriptFunction runs the same ops on the same tensors as the body it
        # compiles (the dispatcher, and so the flop counter, sees each of them)
        "torch.jit.script",
        "torch.compiler.disable",
        # run-time type checkers: the wrapper checks the arguments against the
        # annotations and calls the function once (a jaxtyping shape they break is
        # SHP306 here, where the wrapper would raise)
        "beartype.beartype",
        "jaxtyping.jaxtyped",
    }
)
HOOKS = {"register_forward_hook", "register_forward_pre_hook"}
_GLOBAL_HOOKS = {"register_module_forward_hook", "register_module_forward_pre_hook"}
_REPLACING = {"setattr", "add_module", "register_module", "delattr"}
ANY = "*"  # a receiver the scan cannot name: any class
# Set on a module, while it is built, by a run of code that changed what its
# methods run (`apply(fn)` with a fn that replaces layers): why, as a StrV.
CHANGED = "<changed>"


@dataclass
class Scan:
    # class name (or ANY) -> method name (or ANY: calling it) -> why
    changed: dict[str, dict[str, str]] = field(default_factory=dict)
    everything: str | None = None  # a global hook: every module call
    # (class, method) written on instances only (`setattr(self, key, v)`): a special
    # method Python looks up on the type (`__getattribute__`) is not replaced by them
    on_instances: set[tuple[str, str]] = field(default_factory=set)
    on_classes: set[tuple[str, str]] = field(default_factory=set)

    def add(self, cls: str, meth: str, why: str) -> None:
        self.changed.setdefault(cls, {}).setdefault(meth, why)


def scan(an) -> Scan:
    s = getattr(an, "dynamic_scan", None)
    if s is None:
        s = _scan(an.tree, at_run_time=bool(getattr(an, "specialize", False)), an=an)
        an.dynamic_scan = s
    return s


def _scan(tree: ast.Module, at_run_time: bool = False, an=None) -> Scan:
    """at_run_time: a target run, which judges a hook registered in a function or
    method where it runs (hooked_at_run_time), as Python registers it: only when the
    call runs. an: the file's analyzer, whose project imports name the functions
    given to apply() that other files define."""
    out = Scan()
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    methods = _method_names(classes)
    owners: dict[int, str] = {}
    for c in classes.values():
        for n in walk(c):
            owners[id(n)] = c.name
    in_functions = {
        id(n)
        for f in walk(tree)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for n in walk(f)
    }
    for node in walk(tree):
        owner = owners.get(id(node))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for el in t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]:
                    if not isinstance(el, ast.Attribute):
                        continue
                    if (
                        el is t
                        and isinstance(node, ast.Assign)
                        and el.attr in methods
                        and copies_itself(an, _enclosing(tree, node), el, node.value)
                    ):
                        continue  # the method's own copy: the same body runs
                    if (
                        at_run_time
                        and el.attr == "forward"
                        and id(node) in in_functions
                        and _instance_store(an, tree, node, el, owner)
                    ):
                        # `self.forward = f`, `self.block.forward = f` in a module's
                        # method: judged where it runs (forward_stored), as Python
                        # stores it only when it runs
                        continue
                    _assigned(out, el.value, el.attr, owner, classes, methods)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in HOOKS and at_run_time and id(node) in in_functions:
                pass  # judged where it runs
            elif name in HOOKS:
                cls = owner if owner is not None and _is_self(node.func.value) else ANY
                if owner is not None and not _is_self(node.func.value):
                    cls = owner  # a hook on a layer the class holds: calling the class
                # a hook runs where a module is called, round its forward: no
                # other method changes (a helper object's `get` stays as it is)
                out.add(cls, "forward", f"a forward hook ({name}, line {node.lineno})")
            elif name in _GLOBAL_HOOKS and at_run_time and id(node) in in_functions:
                pass  # judged where it runs (module_hooks.register_global)
            elif name in _GLOBAL_HOOKS:
                out.everything = f"a hook on every module ({name}, line {node.lineno})"
            elif (
                name == "apply"
                # in a function or method it changes layers only if a run calls it:
                # in a target run, judged where it runs (call_resolution._module_apply)
                and (id(node) not in in_functions or (owner is not None and not at_run_time))
                # `Fn.apply(x)` on a class of the file (an autograd Function) is
                # no module's apply
                and not (isinstance(node.func.value, ast.Name) and node.func.value.id in classes)
                and len(node.args) == 1
                and replaces_layers(
                    tree, node.args[0], classes.get(owner) if owner is not None else None, an
                )
            ):
                cls = owner if owner is not None else ANY
                out.add(
                    cls, ANY, f"apply() with a function that changes layers (line {node.lineno})"
                )
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in _GLOBAL_HOOKS and at_run_time and id(node) in in_functions:
                pass  # judged where it runs (module_hooks.register_global)
            elif node.func.id in _GLOBAL_HOOKS:
                out.everything = f"a hook on every module ({node.func.id}, line {node.lineno})"
            elif node.func.id == "setattr" and len(node.args) >= 2:
                attr = node.args[1]
                name = (
                    attr.value
                    if isinstance(attr, ast.Constant) and isinstance(attr.value, str)
                    else ANY
                )
                as_store = ast.Attribute(node.args[0], name, ast.Store())
                if (
                    name == "forward"
                    and at_run_time
                    and id(node) in in_functions
                    and _instance_store(an, tree, node, as_store, owner)
                ):
                    continue  # `obj.forward = f` as Python runs it: judged where it runs
                if name != ANY or id(node) not in in_functions:  # else: where it runs
                    _assigned(out, node.args[0], name, owner, classes, methods)
    return out


def _instance_store(an, tree: ast.Module, node: ast.AST, el: ast.Attribute, owner) -> bool:
    """`x.forward = f` (x a name or an attribute path from one) in an instance method
    of an nn.Module class of the file, which a target run judges where the method
    runs, by what x then is (forward_stored).
    Not a store the run may never see made: in a class's creation hooks
    (`__init_subclass__`, a metaclass's methods, a classmethod), which no run here
    follows."""
    recv = el.value
    while isinstance(recv, ast.Attribute):
        recv = recv.value
    if not isinstance(recv, ast.Name) or owner is None or an is None:
        return False  # `getattr(self, n).forward = f`: no object the run can name
    fn = _enclosing(tree, node)
    if not isinstance(fn, _FUNCTIONS) or fn.name in ("__init_subclass__", "__new__"):
        return False
    first = [*fn.args.posonlyargs, *fn.args.args][:1]
    if not first or first[0].arg != "self" or fn.decorator_list:
        return False
    cd = an.classes.get(owner)
    return cd is not None and module_class(an, cd) is True


def _enclosing(tree: ast.Module, node: ast.AST) -> ast.AST | None:
    """The innermost function whose body holds node (rarely asked: a method's
    name assigned)."""
    found = None
    for f in nodes_of(tree, _FUNCTIONS):
        if any(n is node for n in walk(f)) and (found is None or any(n is f for n in walk(found))):
            found = f
    return found


def _assigned(
    out: Scan, recv: ast.expr, attr: str, owner: str | None, classes, methods: set[str]
) -> None:
    """`recv.attr = ...` (or setattr): a method of recv's class replaced, where
    attr may name one (ANY: a name computed at run time)."""
    if attr != ANY and attr not in methods:
        return
    why = f"{attr} is assigned at run time" if attr != ANY else "setattr of a computed name"
    if _is_self(recv) and owner is not None:
        out.add(owner, attr, why)
        out.on_instances.add((owner, attr))
    elif isinstance(recv, ast.Name) and recv.id in classes:
        out.add(recv.id, attr, why)
        out.on_classes.add((recv.id, attr))
    else:  # an object the scan cannot name: that method of any class
        out.add(ANY, attr, why)
        out.on_classes.add((ANY, attr))


# What the setattr calls of the current target run stored under a computed name:
# on objects it knows, and, by the file the call ran in, on objects it does not.
_RUN = Scan()
_RUN_IN: dict[str, Scan] = {}


_GENERIC: ContextVar[bool] = ContextVar("generic", default=False)


def generic() -> Bound:
    """A pass over a function or a constructor with its parameters not known (a
    summary, a class's attributes in terms of its parameters): what it stores is
    no store of the run."""
    return Bound(_GENERIC, True)


def in_generic_pass() -> bool:
    return _GENERIC.get()


def reset() -> None:
    """A new target run: no setattr of its has run yet."""
    global _RUN
    _RUN = Scan()
    _RUN_IN.clear()


def set_at_run_time(an, cls: str | None, name: str | None, on_class: bool, methods) -> None:
    """`setattr(obj, name, v)` with a computed name, run in an's file: cls the
    name of obj's class (None: obj not known), name the attribute (None: not
    known), on_class whether obj is (or may be) a class; methods the method names
    of cls (None: not known). A name that is no method of the class replaces none.
    An object not known is any object, as the scan reads such a call: the methods
    of any class in that file, or called from it."""
    if _GENERIC.get():
        return
    if name is not None and methods is not None and name not in methods:
        if name not in ("forward", "__call__"):
            return
    key = name if name is not None else ANY
    why = f"{key} is assigned at run time" if name is not None else "setattr of a computed name"
    into = _RUN if cls is not None else _RUN_IN.setdefault(an.src.path, Scan())
    owner = cls if cls is not None else ANY
    into.add(owner, key, why)
    (into.on_classes if on_class else into.on_instances).add((owner, key))


def forward_stored(an, recv, placed: bool) -> None:
    """`m.forward = f` run in a target run in a function or method (the scan leaves
    it to the run): on the instance being built, through `self`, an attribute of the
    instance, which a call of the module runs in place of the class's forward
    (module_hooks.instance_forward); anywhere else (a forward's `self`, a child, a
    class's own `__setattr__`) calls of the forward of recv's class (of any class,
    recv not known) are not modelled from then on, as the scan would have said; an
    instance that holds the stored forward runs it all the same."""
    if placed or _GENERIC.get():
        return
    cls = getattr(recv, "cls", None) or getattr(recv, "kind", "").removeprefix("<class>") or None
    name = cls.rpartition(":")[2].rpartition(".")[2] if cls else None
    set_at_run_time(an, name, "forward", False, None)


def everywhere_at_run_time(name: str, line: int) -> None:
    """A hook on every module registered in a target run that module_hooks cannot
    place: no module's call is modelled from now on."""
    if not _GENERIC.get():
        _RUN.everything = _RUN.everything or f"a hook on every module ({name}, line {line})"


def hooked_at_run_time(an, cls: str | None, name: str, line: int) -> None:
    """`module.register_forward_hook(fn)` run in a target run in an's file (the scan
    leaves those made in functions and methods to the run): from now on a call of
    that module's class (cls, its name) runs the hook; a module not known is any
    module, as the scan reads such a call: the methods of any class in that file, or
    called from it."""
    if _GENERIC.get():
        return
    why = f"a forward hook ({name}, line {line})"
    into = _RUN if cls is not None else _RUN_IN.setdefault(an.src.path, Scan())
    into.add(cls if cls is not None else ANY, "forward", why)  # what a module's call runs


def _method_names(classes) -> set[str]:
    """The names of the file's methods that an assignment may replace (assigning a
    property's name runs its setter); `forward` and `__call__` in any case."""
    names = {"forward", "__call__"}
    for c in classes.values():
        for n in c.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_property(n):
                names.add(n.name)
    return names


def _is_property(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A property's getter or setter: assigning that name runs the setter (or, for
    a cached_property, stores the instance's own value); no method is replaced."""
    for d in fn.decorator_list:
        if isinstance(d, ast.Name) and d.id in ("property", "cached_property"):
            return True
        if isinstance(d, ast.Attribute) and (
            d.attr == "cached_property" or d.attr in ("setter", "getter", "deleter")
        ):
            return True
    return False


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def replaces_layers(
    tree: ast.Module, fn: ast.expr, owner: ast.ClassDef | None, an=None, resolved=None
) -> bool:
    """Whether a function given to apply() may change the layers it visits (owner:
    the class whose method makes the call; fn looked up in tree, else, a plain name,
    through an's project imports in the file that defines it; resolved: the function
    fn's value is, where a run knows it, which wins over any lookup by name)."""
    found = _applied_function(tree, fn, owner, an, resolved)
    if found is None:
        return True  # not found, or not one: nobody knows what it does
    fn_node, where = found
    # `m.weight *= s` under `isinstance(m, nn.Linear)`: values change, not layers
    in_place = narrowed_layers.tensor_updates(fn_node, where)
    fresh = _fresh_containers(fn_node)
    for stmt in _statements(fn_node):
        for n in ast.walk(stmt):
            if id(n) in in_place:
                continue
            if isinstance(n, ast.Call):
                f = n.func
                called = (
                    f.attr
                    if isinstance(f, ast.Attribute)
                    else f.id
                    if isinstance(f, ast.Name)
                    else ""
                )
                if called in _REPLACING:
                    return True
                if (
                    called in _GROWING
                    and isinstance(f, ast.Attribute)
                    and _root(f.value) not in fresh
                ):
                    return True  # `m.append(layer)` on a ModuleList, `m.update(...)`
            if isinstance(n, ast.Delete):
                return True
            if isinstance(n, ast.AugAssign):
                # `m.body *= 2` (Sequential.__imul__), `m += [layer]` (ModuleList's
                # `__iadd__`): the object changes in place, whatever the operand.
                # torch's containers (and a dict of modules) change in place by
                # `+=`, `*=` and `|=` alone: `fan_out //= m.groups` rebinds a name
                if not (isinstance(n.target, ast.Name) and not isinstance(n.op, _IN_PLACE_OPS)):
                    if _root(n.target) not in fresh:
                        return True
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                if any(isinstance(t, ast.Subscript) for t in targets):
                    return True
                if any(isinstance(t, ast.Attribute) for t in targets) and not _registers_nothing(
                    n.value
                ):
                    return True
    return False


# nn.Module containers' methods that add or remove what they hold (ModuleList,
# Sequential, ModuleDict, ParameterList, ParameterDict) and Module's registrations.
_GROWING = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "popitem",
        "update",
        "clear",
        "setdefault",
        "register_parameter",
        "register_buffer",
    }
)


def _registers_nothing(value: ast.expr) -> bool:
    """A value nn.Module.__setattr__ never registers (a module, a Parameter, a
    tensor under a buffer's name, None dropping any of them): a constant, a
    formatted string, a display, a comparison (else it refuses the value)."""
    if isinstance(value, ast.Constant):
        return value.value is not None
    return isinstance(value, (ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Compare))


def _root(e: ast.expr) -> str | None:
    """The name an attribute, item or call path starts from (`m` of `m.layers[0]`)."""
    while isinstance(e, (ast.Attribute, ast.Subscript, ast.Call)):
        e = e.func if isinstance(e, ast.Call) else e.value
    return e.id if isinstance(e, ast.Name) else None


def _fresh_containers(fn: ast.AST) -> set[str]:
    """Local names fn binds only to a new list, dict or set of its own (a display
    or a comprehension), to a constant or to an operator's result, never to anything that may be a module it
    is handed (`+=` on them changes a list of its own, or rebinds a number)."""
    made: dict[str, bool] = {}
    for stmt in _statements(fn):
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                made.setdefault(n.id, True)
            if isinstance(n, ast.Assign) and len(n.targets) == 1:
                t = n.targets[0]
                if isinstance(t, ast.Name) and not isinstance(n.value, _OWN):
                    made[t.id] = False
            for name in _bound_names(n):  # a loop, `with ... as`, an unpacking
                made[name] = False
    params = fn.args if isinstance(fn, (*_FUNCTIONS, ast.Lambda)) else None
    given = set() if params is None else {a.arg for a in narrowed_layers.arguments(params)}
    return {k for k, v in made.items() if v and k not in given}


# a display, a comprehension, a constant, or an operator's result (a new object for
# every container torch has: ModuleList.__add__ and Sequential.__mul__ copy)
_OWN = (
    ast.List,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.DictComp,
    ast.SetComp,
    ast.Constant,
    ast.BinOp,
)
_IN_PLACE_OPS = (ast.Add, ast.Mult, ast.BitOr)


def _bound_names(n: ast.AST) -> list[str]:
    """Names n binds other than by a plain `name = value`."""
    targets: list[ast.expr] = []
    if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
        targets = [n.target]
    elif isinstance(n, ast.withitem) and n.optional_vars is not None:
        targets = [n.optional_vars]
    elif isinstance(n, (ast.AnnAssign, ast.NamedExpr)):
        targets = [n.target]
    elif isinstance(n, ast.Assign) and (
        len(n.targets) > 1 or not isinstance(n.targets[0], ast.Name)
    ):
        targets = list(n.targets)
    elif isinstance(n, (ast.Global, ast.Nonlocal)):
        return list(n.names)
    return [x.id for t in targets for x in ast.walk(t) if isinstance(x, ast.Name)]


def freezes(
    tree: ast.Module, fn: ast.expr, owner: ast.ClassDef | None, an=None, resolved=None
) -> bool:
    """Whether a function given to apply() may change which Parameters require
    grad (`m.weight.requires_grad_(False)`, `p.requires_grad = False`): it keeps
    the layers, not what torch trains (replaces_layers' arguments)."""
    found = _applied_function(tree, fn, owner, an, resolved)
    if found is None:
        return True
    for stmt in _statements(found[0]):
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                if n.func.attr == "requires_grad_":
                    return True
            if isinstance(n, ast.Attribute) and n.attr == "requires_grad":
                if isinstance(n.ctx, ast.Store):
                    return True
    return False


def _applied_function(
    tree: ast.Module, fn: ast.expr, owner: ast.ClassDef | None, an, resolved=None
):
    """The function given to apply() (replaces_layers' arguments), a def or a
    lambda, with the analyzer of the file defining it (where that is known, else
    an); None where it is not found, or not one."""
    if resolved is not None:
        # `self.apply(self._init_weights)` in a base class's method: the method the
        # instance's class finds along its MRO, in whichever file defines it (an)
        return resolved, an
    while _is_partial(tree, fn):  # `partial(self._init_weights, needs_reset=False)`: its function
        fn = fn.args[0]  # type: ignore[attr-defined]
    if isinstance(fn, ast.Lambda):
        return fn, an
    name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else None
    # `self.init_weight` inside a class that defines it is that class's method,
    # whatever other classes of the file name theirs.
    own = isinstance(fn, ast.Attribute) and _is_self(fn.value) and owner is not None
    # (the tree's functions are listed once: apply() is called all over a file)
    places = [owner.body, nodes_of(tree, _FUNCTIONS)] if own else [nodes_of(tree, _FUNCTIONS)]
    defs: list[ast.AST] = []
    where = an
    for nodes in places:
        defs = [n for n in nodes if isinstance(n, _FUNCTIONS) and n.name == name]
        if defs:
            break
    if not defs and isinstance(fn, ast.Name) and an is not None:
        # `from .initializers import init_weights`: the function another file defines
        found = project.resolve(an, fn.id)
        if isinstance(found, FuncDef) and found.cls is None:
            defs, where = [found.node], found.owner
    if len(defs) != 1:
        return None
    return defs[0], where


def _statements(fn: ast.AST) -> list[ast.AST]:
    """What runs when fn is called: a lambda's expression, a def's body."""
    return [fn.body] if isinstance(fn, ast.Lambda) else list(fn.body)  # type: ignore[attr-defined]


def _is_partial(tree: ast.Module, fn: ast.expr) -> bool:
    """`partial(f, ...)` or `functools.partial(f, ...)`, as tree imports them."""
    if not (isinstance(fn, ast.Call) and fn.args and not isinstance(fn.args[0], ast.Starred)):
        return False
    f = fn.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        module, name = f.value.id, f.attr
        return name == "partial" and any(
            isinstance(n, ast.Import)
            and any(a.name == "functools" and (a.asname or a.name) == module for a in n.names)
            for n in tree.body
        )
    return isinstance(f, ast.Name) and any(
        isinstance(n, ast.ImportFrom)
        and n.module == "functools"
        and any(a.name == "partial" and (a.asname or a.name) == f.id for a in n.names)
        for n in tree.body
    )


# Decorators whose wrapper returns what the body returns, running the body only
# on a miss of its cache: the value is the body's, its cost unknown unless free.
CACHING = frozenset({"functools.cache", "functools.lru_cache"})


def caching(an, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The caching decorator of fn (`@cache`, `@lru_cache(maxsize=None)`), if any."""
    for d in node.decorator_list:
        func = d.func if isinstance(d, ast.Call) else d
        if an.imports.resolve(func, set(), {}) in CACHING:
            return ast.unparse(d)
    return None


def cached_getter(an, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """`@functools.cached_property` on fn, if so: its getter runs on the first read
    only, which stores what it returns on the instance."""
    for d in node.decorator_list:
        if isinstance(d, (ast.Name, ast.Attribute)):
            if an.imports.resolve(d, set(), {}) == "functools.cached_property":
                return ast.unparse(d)
    return None


def opaque_decorator(an, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The first decorator of a module-level function or method whose result a
    call does not run as the body reads (None: all hand the function back, or
    wrap it in one that runs it once, as they are read, or cache what it returns:
    CACHING)."""
    decorators = node.decorator_list
    for i, d in enumerate(decorators):
        func = d.func if isinstance(d, ast.Call) else d
        if transparent(an, d) or an.imports.resolve(func, set(), {}) in CACHING:
            continue
        # applied innermost first: given the function itself where every decorator
        # inside it hands it back
        if transparent(an, d, True) and all(transparent(an, e) for e in decorators[i + 1 :]):
            continue
        try:
            return ast.unparse(d)
        except (ValueError, RecursionError):  # pragma: no cover - unparse of a parsed tree
            return "a decorator"
    return None


def transparent(an, d: ast.expr, function_given: bool = False) -> bool:
    """A decorator that hands back a function running the same body once per
    call, read off its name or its source. function_given: it is given a
    function object (handing_back.py)."""
    func = d.func if isinstance(d, ast.Call) else d
    factory = isinstance(d, ast.Call)
    linked = isinstance(func, ast.Name) and func.id in an.project_links
    # the def a project import binds, read off the files' syntax where it decides
    # which def the name is (then no library name): in a target run, which would
    # otherwise read (and run) the top level of every file along its re-exports
    read = _syntax_function(an, func) if linked else None
    if read is None:
        qual = an.imports.resolve(func, set(), {})
        if qual in TRANSPARENT:
            return True
        if qual is None and isinstance(func, ast.Name):
            if func.id in ("staticmethod", "classmethod"):
                return True
            if func.id in an.functions:
                read = _syntax_function(an, func)  # a def of this file
    if read is not None:
        bindings, node = read
        return _hands_back(node, factory) or (
            not factory and handing_back.hands_back(node, bindings, function_given)
        )
    fd = _project_function(an, func, qual)
    return fd is not None and _hands_back(fd.node, factory=factory)


def _syntax_function(an, func: ast.expr):
    """(its module's bindings, the def) of a decorator named by a name of this
    file or a project import, read off the files' syntax; None where the syntax
    does not decide it."""
    if not (isinstance(func, ast.Name) and an.specialize and an.project is not None):
        return None
    if func.id in an.project_links:
        read = project.defined_in(an, func.id)
    else:
        here = an.project.syntax_of(an)
        stmt = here.bindings.statement(func.id)
        read = (here, stmt) if stmt is not None else None
    if read is None or not isinstance(read[1], ast.FunctionDef):
        return None
    return read[0].bindings, read[1]


def _project_function(an, func: ast.expr, qual: str | None):
    """The project function a decorator names, in this file or another."""
    if qual is None and isinstance(func, ast.Name) and func.id in an.functions:
        return an.functions[func.id]
    if an.project is None:
        return None
    if qual is not None:
        sym = project.resolve_qualified(an, qual)
    elif isinstance(func, ast.Name) and func.id in an.project_links:
        sym = project.resolve(an, func.id)
    else:
        sym = project.resolve_attribute(an, func)
    return sym if isinstance(sym, FuncDef) else None


def _hands_back(fn: ast.FunctionDef | ast.AsyncFunctionDef, factory: bool) -> bool:
    """`def register(fn): ...; return fn`: every way out returns the function it
    was given. A factory (`@times(2)`) returns such a decorator, defined in it."""
    if not fn.body or not isinstance(fn.body[-1], ast.Return):
        return False
    returned = {r.value.id if isinstance(r.value, ast.Name) else None for r in own_returns(fn)}
    if len(returned) != 1 or None in returned:
        return False
    name = returned.pop()
    if factory:
        inner = [
            n
            for n in fn.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name
        ]
        return len(inner) == 1 and _hands_back(inner[0], factory=False)
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    return bool(params) and name == params[0]


def returned_parameter(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The parameter every `return` of fn returns, never rebound in its body
    (`def deco(func): ...; func.__doc__ = doc; return func`): a call returns the
    very argument, whatever the analysis makes of the rest. None otherwise. Kept
    on the node: it is asked at every run of fn's body."""
    known = fn.__dict__.get(_RETURNED, _RETURNED)
    if known is _RETURNED:
        known = _returned_parameter(fn)
        setattr(fn, _RETURNED, known)
    return known


_RETURNED = "_shapelint_returned_parameter"


def _returned_parameter(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    if not _hands_back(fn, factory=False):
        return None
    name = fn.args.posonlyargs[0].arg if fn.args.posonlyargs else fn.args.args[0].arg
    todo: list[ast.AST] = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            return None
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return None
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue  # their own scopes (a `nonlocal` in one rebinds it: not followed)
        todo.extend(children(n))
    if any(name in n.names for n in nodes_of(fn, ast.Nonlocal)):
        return None
    return name


def own_returns(fn) -> list[ast.Return]:
    """The returns of fn's own scope; kept on the node (a decorator is asked about
    at every call of what it decorates)."""
    known = fn.__dict__.get(_RETURNS)
    if known is None:
        known = _find_returns(fn)
        setattr(fn, _RETURNS, known)
    return known


_RETURNS = "_shapelint_own_returns"


def _find_returns(fn) -> list[ast.Return]:
    # A return is a statement, and only a statement, a handler or a match case holds
    # statements: the walk opens nothing else (an expression holds no return, a
    # lambda's included), where opening every node made it the whole body's walk.
    out, todo = [], list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Return):
            out.append(n)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        todo.extend(c for c in children(n) if isinstance(c, _HOLDS_STATEMENTS))
    return out


_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)


def not_modelled(
    an,
    fd,
    class_names: list[str],
    decorators: bool = True,
    special: bool = False,
    by_name: bool = False,
) -> str | None:
    """Why a specialized call of fd (a method of one of class_names, or a
    function) is not what the analysis reads; None when it is. decorators=False:
    a caller that follows them (analysis/decorators.py) asks about the rest.
    special: a property or a special method, which Python looks up on the type:
    a write on an instance (`setattr(self, key, v)`) does not replace it.
    by_name: only a write that names fd's method (`cls.__init__ = f`), not a hook
    or a setattr of a computed name."""
    deco = opaque_decorator(fd.owner or an, fd.node) if decorators else None
    if deco is not None:
        return f"decorated with @{deco}, whose wrapper is not followed"
    meth = fd.node.name
    if fd.cls is None:
        return None
    files = {id(x): x for x in (fd.owner or an, an)}.values()
    scans = [scan(a) for a in files] + [_RUN_IN[a.src.path] for a in files if a.src.path in _RUN_IN]
    for s in [*scans, _RUN]:
        if s.everything:
            return s.everything
        for cls in [*class_names, ANY]:
            changed = s.changed.get(cls, {})
            for key in (meth,) if by_name else (meth, ANY):
                why = changed.get(key)
                pair = (cls, key)
                if why and not (special and pair in s.on_instances and pair not in s.on_classes):
                    return why
    return None
