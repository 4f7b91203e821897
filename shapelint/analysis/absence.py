"""Absent, not unknown: whether an instance surely lacks an attribute, so that
`getattr(obj, name, default)` takes its default and `hasattr(obj, name)` is False,
as Python would. An attribute the analysis does not know is not one that does not
exist: a class attribute, a property, a `__getattr__`, a class decorator or an
`__init_subclass__` may supply it, or a write the run could not apply to the
object. So the answer is yes only where every such source has been read and none
can name it; anything not read leaves the value unknown.

The writes a run could not apply (`self.config.flag = v` in a forward, a `setattr`
with a name not known) are kept per target run: `reset` starts one. A pass over a
function with its parameters not known (dynamic.generic) writes through them
nothing: the run does, when it calls the function.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from shapelint.analysis import dynamic, registering
from shapelint.analysis.attributes import base_classes, derives_from_module
from shapelint.analysis.config_classes import is_dataclass
from shapelint.analysis.defs import named_params
from shapelint.analysis.nodes import sole_assignments, stored_names
from shapelint.analysis.plain import PLAIN
from shapelint.analysis.recorder import SelfRecorder
from shapelint.ops.values import UNKNOWN, ObjectV, Value

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, ClassDef

# The instance of a project dataclass (`CONFIG_PREFIX` + the class's key, as
# construction builds it: its fields and what `__post_init__` set).
CONFIG_PREFIX = "<config>"
_ANY = "<any name>"  # a write whose attribute name was not known
# Dicts used as ordered sets, so that a pass of its own (Undone) drops what it added.
_UNAPPLIED: dict[str, None] = {}
# The text that could bind a name on an instance of a class, per class, hooks and
# plain bases; None where some of it is not read (classes_lack).
_TEXTS: dict[tuple, tuple[str, ...] | None] = {}
# The names of the writes the run made into objects it does not keep them on (a
# module or a tensor held as a value, a class): torch_absence.py's.
_ELSEWHERE: dict[str, None] = {}
# The classes of configs one of whose methods the run met and did not run (a call
# it did not follow): what that method stores it may have stored, so their
# instances are judged by the text of their classes from then on (surely_lacks).
_UNRUN: dict[str, None] = {}
# Moves on with each name added to _UNAPPLIED or _UNRUN and with each undo: a memo
# keyed on it (attribute_hooks) holds while the unapplied writes are the very same.
_VERSION = [0]

# Decorators whose semantics are Python's own: they add dunder attributes and keep
# the fields' defaults as the class attributes the class body names.
_PLAIN_DECORATORS = (
    "dataclasses.dataclass",
    "typing.dataclass_transform",
    "typing_extensions.dataclass_transform",
    "functools.total_ordering",
)
# Bases that supply no attribute a program would read by name.
_PLAIN_BASES = ("object", "builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol")
PLAIN_BASES = _PLAIN_BASES
_HOOKS = ("__getattr__", "__getattribute__")


def reset() -> None:
    _UNAPPLIED.clear()
    _ELSEWHERE.clear()
    _UNRUN.clear()
    _TEXTS.clear()


def unapplied_count() -> int:
    """A token of the writes the run could not apply so far: equal only while they
    are the same (they add, and a pass of its own drops what it added)."""
    return _VERSION[0]


class Undone:
    """`with Undone():` a pass of its own (own_pass.OwnPass: a function's summary,
    a constructor run for its flags) is no call Python makes, as module_state.Undone
    says: the writes it could not apply and its stores into objects the run does not
    keep are not the run's. When it ends they are dropped; the run makes them when it
    calls the function, with its values. A summary of tie_weights, `setattr(parent,
    name, p)` over a dict not known there, made every attribute of every module
    possible for the rest of the run."""

    __slots__ = ("_unapplied", "_elsewhere", "_unrun")

    def __enter__(self) -> None:
        self._unapplied = len(_UNAPPLIED)
        self._elsewhere = len(_ELSEWHERE)
        self._unrun = len(_UNRUN)

    def __exit__(self, *exc: object) -> None:
        for table, start in ((_UNAPPLIED, self._unapplied), (_UNRUN, self._unrun)):
            if len(table) > start:
                for name in list(table)[start:]:
                    del table[name]
                _VERSION[0] += 1
        if len(_ELSEWHERE) > self._elsewhere:
            for name in list(_ELSEWHERE)[self._elsewhere :]:
                del _ELSEWHERE[name]


def _unapplied(name: str) -> None:
    if name not in _UNAPPLIED:
        _UNAPPLIED[name] = None
        _VERSION[0] += 1


def method_not_run(holder: Value, fn: ast.AST | None = None) -> None:
    """A method of a config's class (fn, its def where known) called on it and not
    run (the run did not follow the call): the stores it makes into the instance
    are not seen. Where fn stores by name only as its text says (no computed name,
    no `__dict__` or namespace handed out, no other code given the instance: only
    itself called again), the names its text holds may be written; otherwise that
    instance's class is judged by its text from then on (surely_lacks)."""
    if isinstance(holder, SelfRecorder):  # the config being built: its class's
        key = holder.cls
    elif isinstance(holder, ObjectV) and holder.kind.startswith(CONFIG_PREFIX):
        key = holder.kind[len(CONFIG_PREFIX) :]
    else:
        return
    if fn is not None and _closed(fn):
        for word in sorted({w for n in ast.walk(fn) for w in _words(n)}):
            _unapplied(word)
        return
    if key not in _UNRUN:
        _UNRUN[key] = None
        _VERSION[0] += 1


def judged_by_text(key: str) -> bool:
    """Whether the configs of class key are judged by its text alone (method_not_run)."""
    return key in _UNRUN


def _words(n: ast.AST) -> list[str]:
    if isinstance(n, ast.Attribute):
        return [n.attr]
    if isinstance(n, ast.Constant) and isinstance(n.value, str):
        return re.findall(r"[A-Za-z_]\w*", n.value)
    return []


_NAMESPACES = frozenset({"setattr", "delattr", "vars", "locals", "globals", "getattr", "exec"})


def _closed(fn: ast.AST) -> bool:
    """Whether fn (a method) can store into its instance only by a name its text
    holds: it names no namespace (`setattr`, `vars()`, `__dict__`, `__setattr__`),
    defines nothing nested, and hands its instance to no code but itself."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    own = _instance_parameter(fn)
    if own is None:
        return False
    for n in ast.walk(fn):
        if n is not fn and isinstance(n, (*_NESTED, ast.ClassDef)):
            return False
        if isinstance(n, ast.Name) and n.id in _NAMESPACES:
            return False
        if isinstance(n, ast.Attribute) and n.attr in ("__dict__", "__setattr__"):
            return False
        if isinstance(n, ast.Call):
            f = n.func
            given = [*n.args, *(k.value for k in n.keywords)]
            if any(isinstance(a, (ast.Name, ast.Starred)) and _is_name(a, own) for a in given):
                return False  # the instance handed on
            on_own = isinstance(f, ast.Attribute) and _is_name(f.value, own)
            if on_own and f.attr != fn.name:
                return False  # another method run on it
        if isinstance(n, ast.Name) and n.id == own and not _used_as_receiver(fn, n):
            return False  # the instance bound to another name, returned, stored
    return True


def _is_name(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.Starred):
        node = node.value
    return isinstance(node, ast.Name) and node.id == name


def _used_as_receiver(fn: ast.FunctionDef | ast.AsyncFunctionDef, name_node: ast.Name) -> bool:
    """`self.attr = v` (a store by that name) or `self.<fn>(...)` (fn itself again);
    a read may run a property's getter, another method."""
    for p in ast.walk(fn):
        if isinstance(p, ast.Attribute) and p.value is name_node:
            if isinstance(p.ctx, ast.Store):
                return True
            calls = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and c.func is p]
            return bool(calls) and p.attr == fn.name
    return False


def class_write(name: str | None) -> None:
    """A store into a class the run made (`setattr(cls, name, v)`, `Cfg.flag = v`):
    every instance of it may read that attribute from now on, a config's too."""
    _unapplied(name if name else _ANY)


def unapplied_write(holder: Value, name: str | None, through_parameter: bool = False) -> None:
    """A write to an attribute the analysis did not apply to the object it names
    (holder, as far as it is known): from now on that attribute may exist on a
    dataclass instance, unless the holder is surely something else (a function, a
    tensor, a module the analysis tracks). A write whose name is not known makes
    every attribute possible when its holder is a dataclass instance; on a holder
    not known at all (`setattr(parent, name, param)` over a module's parameters) it
    is taken not to reach one: a documented limit (docs/costs.md).
    through_parameter: the write goes through a parameter of the function it is in
    (`self.config.flag = v` with self a parameter). In a pass over a function with
    its parameters not known (a summary, a nested def analysed where it is defined)
    that is no write of the run: the run makes it when it calls the function, with
    the object it passes, and keeps it then. A write to what the function reaches
    otherwise (a global, a closure's cell) may happen wherever it runs: kept."""
    if through_parameter and dynamic.in_generic_pass():
        return
    if isinstance(holder, ObjectV) and holder.kind.startswith(CONFIG_PREFIX):
        _unapplied(name if name else _ANY)
        return
    if holder is UNKNOWN and name:
        _unapplied(name)
    stored_elsewhere(name)


def stored_while_built(name: str | None) -> None:
    """A store into the config being built that the run did not apply to it (a
    setattr of a name not known): that attribute, any where the name is not known,
    may be there from now on."""
    _unapplied(name if name else _ANY)


def through_parameter(specialize: bool, target: ast.expr, frame) -> bool:
    """`p.a.b = v` (or `setattr(p, name, v)`, target p) with p a parameter of the
    function the frame runs, in a target run, where every call runs its callee again
    with its values (a plain run's summary is what a call of it does: its writes stand)."""
    if not specialize:
        return False
    root = target
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    fd = frame.func
    if not isinstance(root, ast.Name) or fd is None or isinstance(fd.node, ast.Lambda):
        return False
    a = fd.node.args
    names = [p.arg for p in named_params(fd.node)]
    names += [v.arg for v in (a.vararg, a.kwarg) if v is not None]
    if root.id in frame.nonlocal_names:
        return False
    return root.id in names or _made_from_parameters(fd.node, root.id, set(names))


def _made_from_parameters(fn: ast.AST, name: str, params: set[str]) -> bool:
    """Whether every binding of the local `name` in fn is `name = p(...)` or
    `name = p.make(...)` with p a parameter fn never rebinds (`generation_config =
    cls.from_dict(d)` in a classmethod): what it holds is made from what the call
    passes, so that the pass not knowing them makes no write of the run either:
    the run makes it, with the object made, when it calls fn."""
    assigns = sole_assignments(fn, name)
    if not assigns:
        return False
    rebound = stored_names(fn)
    for a in assigns:
        func = a.value.func if isinstance(a.value, ast.Call) else None
        if isinstance(func, ast.Attribute):
            func = func.value
        if not isinstance(func, ast.Name) or func.id not in params or func.id in rebound:
            return False
    return True


def stored_elsewhere(name: str | None) -> None:
    """A store of attribute `name` (None: a name not known) into an object whose
    value does not keep it: a module instance, a tensor or a class held as a value,
    one not known; or a deletion its value does not see (`del encoder.fc`). From now
    on such an object may have that attribute, or lack it."""
    _ELSEWHERE[name if name else _ANY] = None


def may_be_written(name: str) -> bool:
    """Whether a write the run could not apply may have set `name`."""
    return name in _UNAPPLIED or _ANY in _UNAPPLIED


def may_be_stored(name: str) -> bool:
    """Whether a store the run made may have given a module instance, a tensor or
    a class it holds as a value the attribute `name` (or any write it could not apply)."""
    return may_be_written(name) or name in _ELSEWHERE or _ANY in _ELSEWHERE


def instance_dict(obj: Value) -> Value:
    """`obj.__dict__` of a dataclass instance built by the analysis: what it holds,
    as a dict, with the names of the writes left unapplied as keys of values not
    known; not known at all after such a write of a name not known."""
    if not (isinstance(obj, ObjectV) and obj.kind.startswith(CONFIG_PREFIX)) or _ANY in _UNAPPLIED:
        return UNKNOWN
    held = dict(obj.attrs)
    return ObjectV(
        "<dict>", tuple({**held, **{k: UNKNOWN for k in _UNAPPLIED if k not in held}}.items())
    )


def surely_lacks(an: Analyzer, obj: Value, name: str, hooked: bool = False) -> bool:
    """Whether obj, an instance of a project dataclass built by the analysis, surely
    has no attribute `name`: not among what construction set, no write of it left
    unapplied, and no class along its bases able to supply it: every base and class
    decorator read (their source found), none defining `__getattr__` or
    `__getattribute__` or naming a metaclass, and `name` written nowhere in the files
    that could bind it: their bodies, and the module-level statements of their
    files other than definitions (`Config.flag = True`, a table of names a loop
    sets); any mention there, in code or in a string, may bind it. Code of other
    functions runs only where the analysis follows it, and its writes are kept."""
    building = config_being_built(an, obj)
    if building is not None:
        key, attrs = building
    elif isinstance(obj, ObjectV) and obj.kind.startswith(CONFIG_PREFIX):
        key, attrs = obj.kind[len(CONFIG_PREFIX) :], [k for k, _ in obj.attrs]
    else:
        return False
    if name.startswith("__") or name in attrs:
        return False
    if may_be_written(name):
        return False
    cd = an.class_of(key)
    hooks = ("__getattr__",) if hooked else _HOOKS
    if cd is None:
        return False
    if classes_lack(an, cd, name, hooks):
        return True
    # an instance a target run built, or is building: its every store applied or
    # marked (markers, not identifiers, among its attributes say one was not), its
    # methods run
    built = an.specialize and key not in _UNRUN and all(_own(k) for k in attrs)
    return built and built_config_lacks(an, cd, name, hooks)


def config_being_built(an: Analyzer, obj: Value) -> tuple[str, list[str]] | None:
    """(class key, the names stored so far) of a config whose construction is
    running in a target run (its `__post_init__` and what that calls, on the
    SelfRecorder construction hands them). What it holds now is what its fields
    and the stores run so far gave it (each applied to the recorder, or marked);
    what the rest of its construction will store has not happened yet, so a read
    now finds only these and what its classes bind: the rule a built config is
    judged by. None for anything else (an nn.Module being built keeps its layers
    and its torch base's attributes apart)."""
    if not (isinstance(obj, SelfRecorder) and an.specialize):
        return None
    cd = an.class_of(obj.cls)
    if cd is None or not is_dataclass(cd) or derives_from_module(an, obj.cls) is not False:
        return None
    return obj.cls, list(obj.attrs)


def classes_lack(
    an: Analyzer,
    cd: ClassDef,
    name: str,
    hooks=_HOOKS,
    plain_bases=_PLAIN_BASES,
) -> bool:
    """Whether no class along cd's bases can supply `name`: every base read as
    source (or one of plain_bases, whose attributes the caller has judged), none
    defining one of hooks or naming a metaclass, every class decorator read, and
    `name` written nowhere in the text that could bind it (absence's rule); a
    decorator another file defines is read too (loading the files its import
    passes through, once per class: kept in _TEXTS)."""
    key = (cd.key, hooks, plain_bases)
    if key not in _TEXTS:  # the classes' source does not change within a run
        texts: dict[int, str] = {}
        found = _sources(an, cd, set(), texts, hooks, plain_bases)
        _TEXTS[key] = tuple(texts.values()) if found else None
    read = _TEXTS[key]
    if read is None:
        return False
    word = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    return not any(word.search(text) for text in read)


def built_instance_lacks(an: Analyzer, cd: ClassDef, name: str, plain_bases=_PLAIN_BASES) -> bool:
    """classes_lack for the instance a run is building, whose every store the run
    applied or marked: what a method stores on its own instance (`self.name = v`,
    `self.register_buffer("name", t)`, `setattr(self, "name", v)`) exists only once
    the run ran it, and is then held; so a method may mention `name` in those forms
    (and in its docstring) without making it possible. Any other mention, the class
    bodies' own statements and their files' module-level code are read as
    classes_lack reads them."""
    key = (cd.key, _HOOKS, plain_bases, "built")
    if key not in _TEXTS:
        texts: dict[int, str] = {}
        found = _sources(an, cd, set(), texts, _HOOKS, plain_bases, nodes=True)
        _TEXTS[key] = tuple(texts.values()) if found else None
    read = _TEXTS[key]
    if read is None:
        return False
    word = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    return not any(
        _mentions(item, name) if isinstance(item, ast.ClassDef) else word.search(item)
        for item in read
    )


def _own(key: str) -> bool:
    """An attribute of the instance, or a mark that says no store went unseen (a
    None that stays plain: plain.PLAIN)."""
    return key.isidentifier() or key == PLAIN


def built_config_lacks(an: Analyzer, cd: ClassDef, name: str, hooks=_HOOKS) -> bool:
    """classes_lack for a config instance a target run built and has followed since:
    its construction ran (its fields, `__post_init__` and what that calls stored or
    marked), every method the run called on it ran there (call_resolution; one it did
    not run keeps its class on classes_lack's rule: method_not_run), and every store
    into it the run made was applied or marked as a write not applied. So a method
    given the instance stores on it only as the run saw: its strings, parameters and
    keywords bind nothing on it (`hasattr(self, name)` over a tuple of names to look
    for, `kwargs.pop("rope_theta", ...)`), nor does a read of a `__dict__`. What the
    run does not see stays a mention: a store into a `__dict__`, `vars()`,
    `object.__setattr__`, and all the class-level code (class bodies, methods given
    the class, decorators, module-level statements), which binds on the class."""
    memo = (cd.key, hooks, "config", name)
    if memo not in _TEXTS:
        key = (cd.key, hooks, _PLAIN_BASES, "built")
        if key not in _TEXTS:
            texts: dict[int, str] = {}
            found = _sources(an, cd, set(), texts, hooks, _PLAIN_BASES, nodes=True)
            _TEXTS[key] = tuple(texts.values()) if found else None
        read = _TEXTS[key] or ()
        word = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
        methods: dict[str, list] = {}
        for item in read:
            for stmt in item.body if isinstance(item, ast.ClassDef) else ():
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    methods.setdefault(stmt.name, []).append(stmt)
        only = (cd.key, hooks, "run only")
        if only not in _TEXTS:
            _TEXTS[only] = tuple(_run_only(read))
        lacks = _TEXTS[key] is not None and not any(
            _mentions(item, name, run=methods, run_only=frozenset(_TEXTS[only] or ()))
            if isinstance(item, ast.ClassDef)
            else word.search(item)
            for item in read
        )
        _TEXTS[memo] = () if lacks else None
    return _TEXTS[memo] is not None


# Methods given the class, not an instance, without a decorator saying so.
_OF_CLASS = frozenset({"__init_subclass__", "__new__", "__class_getitem__"})


# What a static or class method the run alone calls is given for its instance
# parameter: none (no name of the code can be it).
_NO_INSTANCE = "<no instance>"


def _run_only(read) -> set[str]:
    """The static and class methods of the classes read that no code given the class
    names (class bodies, decorators, `__init_subclass__` and its like, the other
    static and class methods, a def or lambda nested in a method, the files'
    module-level statements and decorators' text): such a method runs only where a
    method of an instance calls it, which the run follows, as it follows the
    instance's methods, so its strings and parameters bind no attribute on its own.
    A name stored through an attribute in it (`cls.flag = v`) still does."""
    candidates: dict[str, list] = {}
    level: list[str] = []
    for item in read:
        if not isinstance(item, ast.ClassDef):
            level.append(item)
            continue
        level.extend(ast.unparse(d) for d in item.decorator_list)
        for stmt in item.body:
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                level.append(ast.unparse(stmt))
                continue
            level.extend(ast.unparse(d) for d in stmt.decorator_list)
            if _instance_parameter(stmt) is not None:
                level.extend(
                    ast.unparse(n)
                    for n in ast.walk(stmt)
                    if n is not stmt and isinstance(n, _NESTED)
                )
            elif stmt.name in _OF_CLASS:
                level.append(ast.unparse(stmt))
            else:
                candidates.setdefault(stmt.name, []).append(ast.unparse(stmt))
    out = set()
    for m in candidates:
        word = re.compile(rf"(?<!\w){re.escape(m)}(?!\w)")
        others = [t for k, texts in candidates.items() if k != m for t in texts]
        if not any(word.search(t) for t in level + others):
            out.add(m)
    return out


def _mentions(
    cls: ast.ClassDef, name: str, run: dict | None = None, run_only: frozenset = frozenset()
) -> bool:
    """Whether cls's body defines `name` (a method, a class) or names it otherwise
    than as its methods' instance attribute (`self.name`, `self.register_buffer("name", ...)`, `setattr(self,
    "name", ...)`) or in a docstring. run: the instance's methods ran where they
    were called, and stored as the run saw (built_config_lacks): an instance
    method's strings, parameters and keywords bind nothing on it, and a bare
    constant statement (the class's docstring) nothing anywhere; run holds the
    methods of the classes read, by name."""
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name == name:
                return True  # the class's own method (decorated or not) or class
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if run is not None and _bare_constant(stmt):
                continue  # evaluated and dropped: it binds nothing
            if _named_in(stmt, name, None, run):
                return True
            continue
        own = _instance_parameter(stmt)
        if own is None and run is not None and stmt.name in run_only:
            own = _NO_INSTANCE
        for d in stmt.decorator_list:
            if _named_in(d, name, None, run):
                return True
        body = stmt.body[1:] if _docstring(stmt) else stmt.body
        local = _method_locals(stmt) if run is not None and own is not None else frozenset()
        if any(_named_in(s, name, own, run, local) for s in [stmt.args, *body]):
            return True
    return False


def _bare_constant(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _instance_parameter(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The parameter a method is given its instance by (None: a static or class method)."""
    names = {d.id for d in fn.decorator_list if isinstance(d, ast.Name)}
    params = [*fn.args.posonlyargs, *fn.args.args]
    if names & {"staticmethod", "classmethod"} or not params or fn.name in _OF_CLASS:
        return None
    return params[0].arg


def _docstring(fn) -> bool:
    first = fn.body[0] if fn.body else None
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)


def _method_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The names a method binds itself (its parameters and the names it stores),
    less those it declares global or nonlocal: an object one of them holds is one
    the method was given or made, never a class or a global it stores through."""
    a = fn.args
    names = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    names |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
    declared = {
        g for n in ast.walk(fn) if isinstance(n, (ast.Global, ast.Nonlocal)) for g in n.names
    }
    return frozenset((names | stored_names(fn)) - declared)


def _named_in(
    node: ast.AST, name: str, own: str | None, run: dict | None = None, local=frozenset()
) -> bool:
    """Whether node names `name` anywhere but as an attribute of the instance
    parameter own, the name string a store into own takes, or (in a method) a
    variable of the method's, where no `locals()`, `vars()` or `__dict__` may hand
    its variables out as attributes. run: as _mentions says; a `__dict__` read
    then names nothing, and in an instance method (own) a store by name that the
    run does not see (`object.__setattr__`) names what it may store."""
    if run is not None:
        return _named_in_run(node, name, own, run, local)
    allowed: set[int] = set()
    word = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    for n in ast.walk(node):
        if own is not None and isinstance(n, ast.Call) and n.args:
            f, first = n.func, n.args[0]
            into_own = (
                isinstance(f, ast.Attribute)
                and f.attr in registering.METHODS  # stores the attribute by name
                and isinstance(f.value, ast.Name)
                and f.value.id == own
            )
            if isinstance(f, ast.Name) and f.id in ("setattr", "getattr", "hasattr"):
                into_own = isinstance(first, ast.Name) and first.id == own and len(n.args) > 1
                first = n.args[1] if len(n.args) > 1 else first
            if into_own and isinstance(first, ast.Constant) and first.value == name:
                allowed.add(id(first))
        if _defines(n, name, own):
            return True
        elif isinstance(n, ast.Name) and n.id == name and own is None:
            return True  # a method's own variable binds no attribute, unless...
        elif isinstance(n, ast.Name) and n.id in ("locals", "vars", "globals"):
            return True  # ... its names are handed out as a namespace
        elif isinstance(n, ast.Attribute) and n.attr == "__dict__":
            return True
        elif isinstance(n, ast.arg) and n.arg == name:
            return True
        elif isinstance(n, ast.keyword) and n.arg == name:
            return True
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in allowed:
            if word.search(n.value):
                return True
    return False


# A `__dict__` used by these only reads it (or takes entries out, which binds nothing).
_DICT_READS = frozenset(
    {"get", "items", "keys", "values", "copy", "pop", "popitem", "clear"}
    | {"__contains__", "__len__", "__iter__", "__getitem__"}
)
# Calls that read the mapping they are given and keep no hold of it.
_DICT_COPIES = frozenset({"dict", "len", "list", "tuple", "set", "sorted", "iter", "deepcopy"})


def _named_in_run(
    node: ast.AST, name: str, own: str | None, methods: dict, local=frozenset()
) -> bool:
    """_named_in for an instance the run followed (_mentions' run: methods). A def
    or lambda nested in a method may run where the run does not follow it (a
    callback handed on), so it is read as code given the class is: any mention."""
    if own is not None and isinstance(node, _NESTED):  # a def among a method's statements
        return getattr(node, "name", None) == name or _named_in_run(node, name, None, methods)
    parents = {id(c): p for p in ast.walk(node) for c in ast.iter_child_nodes(p)}
    for n in _outside_nested(node):
        if n is not node and isinstance(n, _NESTED):
            if getattr(n, "name", None) == name or _named_in_run(n, name, None, methods):
                return True
            continue
        if isinstance(n, ast.Attribute) and n.attr == "__dict__":
            if _dict_binds(n, parents, name, own, methods):
                return True
            continue
        if isinstance(n, ast.Constant) and n.value == "__dict__":
            # `super().__getattribute__("__dict__")`: the dict that call returns
            up = parents.get(id(n))
            if not isinstance(up, ast.Call) or _dict_binds(up, parents, name, own, methods):
                return True
            continue
        if isinstance(n, ast.Name) and n.id in ("locals", "vars", "globals"):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr == "__setattr__" and not _is_super(n.func.value):
                # `object.__setattr__(self, k, v)`: a store the run does not see
                if not any(isinstance(a, ast.Constant) and a.value != name for a in n.args[:2]):
                    return True
        if (
            own is not None
            and isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name)
            and n.value.id in local
        ):
            # `other.name = v` in an instance method, other a local of it: a store
            # the run makes where the method runs, on the object `other` holds then
            # (applied, or kept as a write not applied), as a module-level
            # function's is; a read binds nothing (transformers' `text_config.
            # layer_types = ...` in `get_mtp_config`, a method the run never
            # called). Through a class or a global (`type(self).name`, `Cfg.name`)
            # it stays a mention: a method run at a file's import may make it.
            continue
        if _defines(n, name, own):
            return True
        elif own is None and _names_otherwise(n, name):
            return True  # code given the class, not the instance: any mention
    return False


def _defines(n: ast.AST, name: str, own: str | None) -> bool:
    """n names `name` as an attribute of anything but the instance parameter own, as
    a def or class, or as what an import binds."""
    if isinstance(n, ast.Attribute):
        held = own is not None and isinstance(n.value, ast.Name) and n.value.id == own
        return n.attr == name and not held
    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return n.name == name
    return isinstance(n, ast.alias) and name in (n.name, n.asname)


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _outside_nested(node: ast.AST):
    """ast.walk, yielding a nested def or lambda but not what is inside it."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if n is node or not isinstance(n, _NESTED):
            todo.extend(ast.iter_child_nodes(n))


def _names_otherwise(n: ast.AST, name: str) -> bool:
    """A variable, parameter, keyword or string naming `name` (class-level code)."""
    if isinstance(n, ast.Name):
        return n.id == name
    if isinstance(n, ast.arg):
        return n.arg == name
    if isinstance(n, ast.keyword):
        return n.arg == name
    if isinstance(n, ast.Constant) and isinstance(n.value, str):
        return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", n.value) is not None
    return False


def _is_super(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def _dict_binds(n: ast.expr, parents: dict, name: str, own=None, methods=None) -> bool:
    """Whether the use of a `__dict__` (n) may store `name` into it: a read, an
    entry taken out, or a store of another constant key binds nothing; nor does
    handing it to a method of the instance (`self._keys(self.__dict__)`) whose
    every definition among the classes read only reads that parameter."""
    up = parents.get(id(n))
    if isinstance(up, ast.Attribute) and up.value is n:
        if up.attr in _DICT_READS:
            return False
        call = parents.get(id(up))
        if up.attr == "setdefault" and isinstance(call, ast.Call) and call.args:
            key = call.args[0]
            return not (isinstance(key, ast.Constant) and key.value != name)
        return True
    if isinstance(up, ast.Subscript) and up.value is n:
        if not isinstance(up.ctx, ast.Store):
            return False
        key = up.slice
        return not (isinstance(key, ast.Constant) and key.value != name)
    if isinstance(up, ast.Compare):
        return False
    if isinstance(up, (ast.For, ast.comprehension)) and up.iter is n:
        return False
    if isinstance(up, ast.YieldFrom):
        return False
    if isinstance(up, ast.Call) and n in up.args:
        f = up.func
        called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if called in _DICT_COPIES:
            return False
        own_call = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
        starred = any(isinstance(a, ast.Starred) for a in up.args)
        if own_call and own is not None and f.value.id == own and methods and not starred:
            at = up.args.index(n) + 1  # the method's parameters after its instance
            defs = methods.get(called, [])
            return not defs or not all(_reads_parameter(d, at, name) for d in defs)
    return True


def _reads_parameter(fn: ast.FunctionDef | ast.AsyncFunctionDef, at: int, name: str) -> bool:
    """Whether fn's positional parameter at `at` is only read (_dict_binds' reads)."""
    params = [*fn.args.posonlyargs, *fn.args.args]
    if at >= len(params):
        return False
    param = params[at].arg
    parents = {id(c): p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id == param:
            if isinstance(n.ctx, ast.Store) or _dict_binds(n, parents, name):
                return False
    return True


def _sources(
    an: Analyzer,
    cd: ClassDef,
    seen: set[str],
    texts: dict[int, str],
    hooks=_HOOKS,
    plain_bases=_PLAIN_BASES,
    nodes: bool = False,
) -> bool:
    """Collect the source of cd's file, of its decorators' files and of its bases'
    (recursively) into texts; False where one of them is not read. nodes: each
    class as its node (built_instance_lacks reads it), not its text."""
    if cd.key in seen:
        return True
    seen.add(cd.key)
    owner = cd.owner or an
    if any(h in cd.methods for h in hooks) or any(k.arg == "metaclass" for k in cd.node.keywords):
        return False
    texts[id(cd.node)] = cd.node if nodes else owner.src.segment(cd.node)  # type: ignore[assignment]
    texts[id(owner)] = _module_statements(owner)
    for d in cd.node.decorator_list:
        found = _decorator_source(owner, d.func if isinstance(d, ast.Call) else d)
        if found is None:
            return False
        if found[1]:
            texts[found[0]] = found[1]
    bases = base_classes(an, cd)
    plain = sum(_plain_base(owner, b, plain_bases) for b in cd.node.bases)
    if len(bases) + plain < len(cd.node.bases):
        return False  # a base the analysis cannot read
    return all(_sources(an, b, seen, texts, hooks, plain_bases, nodes) for b in bases)


def _plain_base(owner: Analyzer, node: ast.expr, plain_bases=_PLAIN_BASES) -> bool:
    if isinstance(node, ast.Subscript):  # Generic[T]
        node = node.value
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return False
    qual = owner.imports.resolve(node) or (node.id if isinstance(node, ast.Name) else None)
    return qual in plain_bases


def _decorator_source(owner: Analyzer, node: ast.expr) -> tuple[int, str] | None:
    """(a key, the text of the file that defines it) of a class decorator; text ''
    for one whose semantics are Python's own; None where its source is not found."""
    from shapelint.analysis import project

    if not isinstance(node, (ast.Name, ast.Attribute)):
        return None
    found = None
    local = isinstance(node, ast.Name) and node.id in owner.functions
    linked = isinstance(node, ast.Name) and node.id in owner.project_links
    if local:
        found = owner.functions[node.id]
    elif linked:
        # which definition it is, read off the files' imports where their syntax
        # decides it: analysing each file along the re-exports costs far more
        read = project.defined_in(owner, node.id)
        if read is not None:
            where, stmt = read
            return id(stmt), where.src.segment(stmt) + _top_level_text(where.src, where.tree)
        found = project.resolve(owner, node.id)
    if getattr(found, "owner", None) is None or not hasattr(found, "node"):
        # a library's name (resolving one may load the files a project import
        # passes it through: only where the project's own names did not find it)
        qual = owner.imports.resolve(node)
        if qual in _PLAIN_DECORATORS:
            return 0, ""
        if not (local or linked) and qual is not None:
            found = project.resolve_qualified(owner, qual)
    where = getattr(found, "owner", None)
    if where is None or not hasattr(found, "node"):
        return None
    return id(found.node), where.src.segment(found.node) + _module_statements(where)


def _module_statements(owner: Analyzer) -> str:
    return _top_level_text(owner.src, owner.tree)


def _top_level_text(src, tree: ast.Module) -> str:
    """The text of a file's module-level statements that define no function or
    class (imports included: `from x import flag` binds a name too)."""
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return "\n".join(src.segment(s) for s in tree.body if not isinstance(s, defs))
