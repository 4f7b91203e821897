"""Module-level objects a target run changes from inside a function.

`REG[key] = v`, `REG.update(...)`, `CFG.flag = v` or `LST.append(x)` in a function,
where the name is no local of it, change the object the module holds: every
function that reads the name afterwards, in that file or in one that imported it
(`from .registry import REG`), sees the change. The analysis holds values, not a
heap, so in a target run (where calls run in the order Python runs them, each with
its values) the change is a new value bound to the name in the module that
defines it. Where the change cannot be placed the name is no longer known there.

Such writes are logged, so that control flow the analysis cannot decide forks and
joins them as it does the locals (instance_state.py): a write made on one path of
an undecided `if` holds after it only as one of the choices.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from shapelint.analysis import absence, class_state, joined_objects
from shapelint.analysis.attributes import find_property, module_class
from shapelint.analysis.small_sets import SetV
from shapelint.ops.values import DICT_KIND, UNKNOWN, ObjectV, TupleV, Value

_MISSING = object()
# Where an instance of a dict subclass keeps its entries (modules.ITEMS, which
# imports this module)
_ITEMS = "<items>"

# (module env, name, the value it held before the write, or _MISSING)
_LOG: ContextVar[list | None] = ContextVar("module_writes", default=None)
# > 0 while a file's top level runs (see importing)
_IMPORTING: ContextVar[int] = ContextVar("module_importing", default=0)
# (log position, (id(env), name)) of changes a function run could not place
_UNPLACED: ContextVar[list | None] = ContextVar("module_unplaced", default=None)
# A new token at every write: a memoised call or construction read the state before
# it. Tokens are never reused, so a state an own pass made and undid (Undone) is
# never current again, while the one before the pass is current again after it.
_GENERATION: ContextVar[int] = ContextVar("module_generation", default=0)
_TOKENS = itertools.count(1)
# Inside a pass of its own (Undone): (env, name, the value before) of every change
# it made to a module's names, in order, which its end undoes in reverse; kept apart
# from the log, so that the paths forked inside it do not join what it forgot
_APART: ContextVar[list | None] = ContextVar("module_apart", default=None)


@contextmanager
def run() -> Iterator[None]:
    """One target run: its writes are logged from an empty log."""
    token, taints = _LOG.set([]), _UNPLACED.set([])
    try:
        with class_state.run():
            yield
    finally:
        _LOG.reset(token)
        _UNPLACED.reset(taints)


def active() -> bool:
    """Whether a target run is logging (its functions' global writes are made)."""
    return _LOG.get() is not None


@contextmanager
def importing() -> Iterator[None]:
    """A file's top level runs (its imports, decorators, module-level calls): what
    its functions change is not bound, as before this log. Python runs the top
    level of every file an import names, the analysis only of those it reads, so
    a registry filled at import time (timm's `@register_model`) would hold only
    the entries of the files read: its lookups would fail where Python's succeed."""
    token = _IMPORTING.set(_IMPORTING.get() + 1)
    try:
        yield
    finally:
        _IMPORTING.reset(token)


@contextmanager
def store_statement() -> Iterator[None]:
    """A store statement runs the class's own hook (`obj.k = v` is
    `type(obj).__setattr__(obj, "k", v)`, `obj[k] = v` its `__setitem__`): what the
    hook changes is bound even while a top level runs, as the plain store it stands
    for is (a registry filled `Activations.relu = nn.ReLU` line by line is the
    file's own, not one other files fill through a function)."""
    token = _IMPORTING.set(0)
    try:
        yield
    finally:
        _IMPORTING.reset(token)


def importing_now() -> bool:
    """Whether a file's top level is running (see importing)."""
    return _IMPORTING.get() > 0


def generation() -> int:
    """Changes whenever a module-level object changed (memo keys include it)."""
    return _GENERATION.get()


def back_to(token: int) -> None:
    """The state is again the one `token` was current for (a path's writes undone
    where another path parts from it): the memos made on that state hold again,
    those made since never do (tokens are never reused)."""
    _GENERATION.set(token)


def holder(an, name: str, frame) -> dict | None:
    """The module env whose `name` a function run reads as a global (the one of
    the file that defines it, through project imports), or None: not a target
    run's function, a local or closure name, or no module-level value."""
    log = _LOG.get()
    if log is None or not an.specialize or not getattr(frame, "runs", False):
        return None
    if _IMPORTING.get():
        return None
    if name in frame.env or name in frame.locals:
        return None
    if frame.cell is not None and name in frame.cell.env:
        return None
    env = defining_env(an, name)
    if env is not None:
        an.outer_writes += 1  # a loop whose turn does this is not the same each turn
    return env


def keys_since(at: int) -> frozenset:
    """(id(env), name) of the module-level names written after `at` and changed
    in no way the run could not place."""
    log = _LOG.get() or []
    tainted = {key for pos, key in _UNPLACED.get() or [] if pos >= at}
    return frozenset((id(env), name) for env, name, _ in log[at:]) - tainted


def unplaced(an, name: str, frame) -> None:
    """`name`'s module-level object changed in a way the run cannot place (an
    item under a key it cannot hold, a method it does not model): the caller of
    the function forgets it (in_place.forget), as it would without the log."""
    env = holder(an, name, frame)
    taints = _UNPLACED.get()
    if env is not None and taints is not None:
        taints.append((mark(), (id(env), defined_name(an, name))))


def defining_env(an, name: str) -> dict | None:
    """The module env that holds the module-level value `name` reads in `an`'s file."""
    if name in an.module_env and name not in an.project_links:
        return an.module_env
    if name in an.project_links:
        from shapelint.analysis.project import defining

        found = defining(an, name)
        if found is not None and name_in(found):
            return found[0].module_env
    return None


def held(an, name: str) -> Value | None:
    """The module-level value `name` reads in `an`'s file, or None where it reads none."""
    env = defining_env(an, name)
    return None if env is None else env.get(defined_name(an, name))


def name_in(found) -> bool:
    target, attr = found
    return attr in target.module_env


def defined_name(an, name: str) -> str:
    """The name the defining module binds (`from .r import REG as R`: REG)."""
    if name in an.project_links:
        from shapelint.analysis.project import defining

        found = defining(an, name)
        if found is not None:
            return found[1]
    return name


def write(env: dict, name: str, value: Value, an=None) -> None:
    """`name` of a module env holds `value` now, logged for the paths to undo. A
    new value, a name a function rebinds (`global n; n = ...`) too, makes a new
    memo token: a memoised call read the state before it."""
    if an is not None and an.trial:
        return  # a trial turn of a loop changes nothing outside its frame
    old = env.get(name, _MISSING)
    if old is value or (old is not _MISSING and _same(old, value)):
        return
    log = _LOG.get()
    if log is not None:
        log.append((env, name, old))
        apart = _APART.get()
        if apart is not None:
            apart.append((env, name, old))
    if value is not UNKNOWN:
        # a memo read the state before: `global DEEP; DEEP = True` between two
        # calls of a function that reads DEEP makes the second call run anew
        # (a name forgotten leaves the memos as in_place.forget always left them)
        _GENERATION.set(next(_TOKENS))
    env[name] = value


def _same(a: Value, b: Value) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - a value whose equality cannot be decided
        return False


def store(an, name: str, value: Value, frame) -> bool:
    """`name`'s object changed to `value` in a function run: bound in its module;
    False where `name` is no such global."""
    env = holder(an, name, frame)
    if env is None:
        return False
    write(env, defined_name(an, name), value, an)
    return True


def forget(an, name: str, frame) -> bool:
    """`name`'s object changed in a way the analysis cannot place: not known in its
    module any more. False where `name` is no such global."""
    env = holder(an, name, frame)
    if env is None:
        return False
    defined = defined_name(an, name)
    if changeable(an, env.get(defined)):
        write(env, defined, UNKNOWN, an)
    return True


def store_attr(an, name: str, attr: str, value: Value, frame) -> bool:
    """`CFG.flag = v` on a module-level plain object in a function run: the module's
    object holds it; False where `name` is no such global."""
    env = holder(an, name, frame)
    if env is None:
        return False
    defined = defined_name(an, name)
    obj = env.get(defined)
    if type(obj) is ObjectV and obj.kind != DICT_KIND and changeable(an, obj):
        if through_property(an, obj, attr):
            write(env, defined, UNKNOWN, an)  # its setter decides, not run here (in_place)
            return True
        attrs = (*((k, v) for k, v in obj.attrs if k != attr), (attr, value))
        write(env, defined, ObjectV(obj.kind, attrs), an)
        return True
    return False


def store_class_attr(an, key: str, attr: str, value: Value) -> bool:
    """`C.attr = v` through a project class in a target run: the class holds it
    from now on (class_state), at a file's top level too (the class is of a file
    the analysis reads); False outside a run."""
    held = class_state.table(key)
    if held is None:
        return False
    write(held, attr, value, an)
    absence.class_write(attr)  # an instance, a config's too, reads it from now on
    return True


def through_property(an, obj: ObjectV, attr: str) -> bool:
    """`obj.attr = v` on a plain object of a project class whose class defines a
    property attr: its setter, not the store, decides what the object keeps."""
    if not obj.kind.startswith("<class>"):
        return False
    cd = an.class_of(obj.kind[len("<class>") :])
    return cd is not None and find_property(an, cd, attr) is not None


def root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def changeable(an, v: Value | None) -> bool:
    """A value Python may change in place and the analysis holds as a value: a
    list or dict (or a tuple not known to be one), or an object of a project
    class that is no nn.Module, or a set."""
    if isinstance(v, SetV):
        return True
    if isinstance(v, TupleV):
        return v.kind != "tuple"
    if not isinstance(v, ObjectV):
        return False
    if v.kind == DICT_KIND:
        return True
    if not v.kind.startswith("<class>"):
        return False
    if type(v) is not ObjectV:  # an instance being built (a recorder), a function, a class
        return False
    if any(k == _ITEMS for k, _ in v.attrs):  # an instance of a dict subclass
        return True
    cd = an.class_of(v.kind[len("<class>") :])
    return cd is not None and module_class(an, cd) is False


# ------------------------------------------------------------------ paths
def mark() -> int:
    log = _LOG.get()
    return len(log) if log is not None else 0


def since(at: int) -> dict:
    """(id(env), name) -> (env, name, value now) for what was written after `at`."""
    log = _LOG.get() or []
    out: dict = {}
    for env, name, _ in log[at:]:
        out[(id(env), name)] = (env, name, env.get(name, _MISSING))
    return out


def undo(at: int) -> None:
    """Back to the state at `at`, the log with it."""
    log = _LOG.get()
    if log is None:
        return
    while len(log) > at:
        env, name, old = log.pop()
        if old is _MISSING:
            env.pop(name, None)
        else:
            env[name] = old


class Undone:
    """`with Undone():` a pass of its own (own_pass.OwnPass: a function's summary,
    a constructor run for its flags) writes module-level and class state as a run
    would, and reads its own writes, but it is no call Python makes: when it ends,
    what it wrote is undone, and so is what it forgot in a module's names
    (`forgotten`). A summary of `__init__` reached while a target run builds a
    model stored `REG[self] = ...` with `self` not known, which left the registry
    unknown for the run. The state is then the one before the pass, and
    so is its generation: the memos made before it hold again, those made during it
    never do."""

    __slots__ = ("_at", "_taints", "_generation", "_token")

    def __enter__(self) -> None:
        self._at = mark()
        self._generation = _GENERATION.get()
        taints = _UNPLACED.get()
        self._taints = len(taints) if taints is not None else 0
        self._token = _APART.set([])

    def __exit__(self, *exc: object) -> None:
        changes = _APART.get() or []
        _APART.reset(self._token)
        log = _LOG.get()
        if log is None or not changes:
            return
        undo(self._at)
        for env, name, old in reversed(changes):
            if old is _MISSING:
                env.pop(name, None)
            else:
                env[name] = old
        taints = _UNPLACED.get()
        if taints is not None:
            del taints[self._taints :]
        _GENERATION.set(self._generation)


def forgotten(env: dict, name: str, old: Value) -> None:
    """`name` of the module env `env`, which held old, forgotten in place
    (in_place: an equal copy of an object a function changed): inside a pass of
    its own, recorded, so that Undone puts old back when the pass ends."""
    apart = _APART.get()
    if apart is not None and _LOG.get() is not None:
        apart.append((env, name, old))


def reapply(values: dict) -> None:
    for env, name, v in values.values():
        if v is _MISSING:
            if name in env:
                write(env, name, UNKNOWN)
        else:
            write(env, name, v)


def join(an, at: int, theirs: dict) -> None:
    """Each name either path wrote holds what both left alike, a choice where they
    differ, unknown where one path left it unbound."""
    log = _LOG.get() or []
    before: dict = {}
    for env, name, old in log[at:]:
        before.setdefault((id(env), name), old)
    mine = since(at)
    for key in {**theirs, **mine}:
        env, name, _ = theirs.get(key) or mine[key]
        now = env.get(name, _MISSING)
        at_fork = before.get(key, now)
        other = theirs[key][2] if key in theirs else at_fork
        if other is _MISSING and now is _MISSING:
            continue
        if other is _MISSING or now is _MISSING:
            joined = UNKNOWN
        else:
            joined = now if other is now else an.join(other, now)
            if type(joined) is joined_objects.EitherV:
                joined = UNKNOWN  # a global is read without either_uses (in_place.settled)
        if joined is not now:
            write(env, name, joined)
