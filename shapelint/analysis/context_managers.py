"""`with f(...) as v:` where f is a generator function of the project decorated with
`@contextlib.contextmanager`, run as Python runs it (a target run).

contextlib's `__enter__` runs f's body up to its `yield` and binds `v` to what it
yields; the `with` body runs there, in the caller, in whatever state f's body left
at that point (a `torch.no_grad()` block f entered around its `yield` holds for
it); `__exit__` runs the rest of f's body. So the run here executes f's body, and
the `yield` statement runs the `with` body (`at_yield`) in the caller's frame: a
`try: yield / finally:` around it, a `with` around it, every statement before and
after it take their place as in Python.

Followed only where that is exactly what Python does, read off f's source: one
`yield`, a statement of its own, reached through nothing but `with` blocks and
`try` blocks with a `finally` and no handler (so it runs once, or the body before
it surely raised: no `if`, loop or `return` can skip it or run it twice, and no
handler in f can catch what the `with` body raises, which contextlib would then
swallow); and f changes nothing of its caller's in place (the caller's objects are
values here, handed back at a call's return: a change before the `yield` would
reach the `with` body too late). Anything else is the call of unknown cost it was.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from shapelint.analysis import aliasing, call_path, in_place, module_state, raising
from shapelint.analysis.attribute_stores import passes_modules
from shapelint.analysis.defs import FuncDef
from shapelint.analysis.generators import is_generator
from shapelint.analysis.module_kinds import is_module
from shapelint.analysis.repetition import add_costs
from shapelint.analysis.specialized import bind_arguments
from shapelint.analysis.statements import declared_names
from shapelint.ops.values import UNKNOWN, NoneV

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

_DECORATOR = "contextlib.contextmanager"
_SHAPE = "_shapelint_cm_yield"  # the yield statement, or False, kept on the def node
_SKIP = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)

# (the yield statement, what runs there): the runs in progress, innermost last
_AT: list[tuple[ast.Expr, Callable[[object], None]]] = []


def generator_of(an: Analyzer, node: ast.expr, frame) -> FuncDef | None:
    """The generator function a `with` item calls, where it is one this module
    runs: a project function (by name, or through a module name) whose only
    decorator is `contextlib.contextmanager`, with a `yield` as `_single_yield`
    wants it, called with no `*args` or `**kwargs`."""
    if not an.specialize or not isinstance(node, ast.Call):
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
        k.arg is None for k in node.keywords
    ):
        return None
    func = node.func
    fd = None
    if isinstance(func, ast.Name):
        if func.id in frame.locals or func.id in frame.env:
            return None
        fd = an.functions.get(func.id)
    if fd is None and isinstance(func, (ast.Name, ast.Attribute)):
        sym = an.project_symbol(func, None, frame)
        fd = sym if isinstance(sym, FuncDef) else None
    if fd is None or fd.cls is not None or isinstance(fd.node, ast.AsyncFunctionDef):
        return None
    owner = fd.owner or an
    decos = fd.node.decorator_list
    if len(decos) != 1 or owner.imports.resolve(decos[0]) != _DECORATOR:
        return None
    if _single_yield(fd.node) is None or _changes_outside(fd):
        return None
    return fd


def _single_yield(node: ast.FunctionDef) -> ast.Expr | None:
    """The one `yield` statement of the def, where every block around it is a
    `with` or a `try` with a `finally` and no handler, and no `return` is in it."""
    known = node.__dict__.get(_SHAPE)
    if known is None:
        known = _find_yield(node) or False
        setattr(node, _SHAPE, known)
    return known or None


def _find_yield(node: ast.FunctionDef) -> ast.Expr | None:
    if not is_generator(node):
        return None
    yields: list[ast.AST] = []
    todo: list[ast.AST] = list(node.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Return, ast.Await)):
            yields.append(n)
        if not isinstance(n, _SKIP):
            todo.extend(ast.iter_child_nodes(n))
    if len(yields) != 1 or not isinstance(yields[0], ast.Yield):
        return None
    return _reached(node.body, yields[0])


def _reached(body: list[ast.stmt], target: ast.Yield) -> ast.Expr | None:
    """The statement `yield ...` in body, through `with` and `try`/`finally` blocks."""
    for stmt in body:
        if isinstance(stmt, ast.Expr) and stmt.value is target:
            return stmt
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            found = _reached(stmt.body, target)
        elif isinstance(stmt, ast.Try) and not stmt.handlers and not stmt.orelse:
            found = _reached(stmt.body, target)
        else:
            continue
        if found is not None:
            return found
    return None


def _changes_outside(fd: FuncDef) -> bool:
    """Whether f's source rebinds a name of an enclosing scope (`global`,
    `nonlocal`) or changes, through a local name, what may be a caller's object
    (`t = p; t.k = v`): changes _held_changed cannot tell from what f is given."""
    if declared_names(fd.node, ast.Global) or declared_names(fd.node, ast.Nonlocal):
        return True
    return in_place.risks(fd)[1]


def run(an: Analyzer, fd: FuncDef, item: ast.withitem, frame, body: Callable[[], None]) -> bool:
    """Run f for the `with` item: its arguments evaluated in the caller, its body
    to the `yield`, there `v` bound and `body()` (the rest of the `with`), then the
    rest of f's body. One record at the call, holding f's own calls. False where
    the call's arguments show f may change what its caller holds (nothing run but
    them: the caller goes on as with a context manager not known, and the call is
    on the record as unknown)."""
    node = item.context_expr
    assert isinstance(node, ast.Call)
    args = [an.eval(a, frame) for a in node.args]
    kwargs = {k.arg: an.eval(k.value, frame) for k in node.keywords if k.arg is not None}
    owner = fd.owner or an
    why = _held_changed(an, fd, args, kwargs)
    flight = ("<with>", fd.qualname, id(node))
    if why is None and flight in owner.in_flight:
        why = "entered again inside its own `with` body"
    if why is not None:
        before = in_place.globals_before(an, fd)
        an.unknown_call(node, args, kwargs, frame, f"{fd.qualname}: {why}")
        if aliasing.recorders() and passes_modules(an, args, kwargs):
            aliasing.lost()  # what it does to the modules it is given, not seen
        # what it changes of what it was handed: not known from here on
        in_place.follow(an, fd, node, None, args, kwargs, frame, before, None, UNKNOWN)
        return False
    stmt = _single_yield(fd.node)
    assert stmt is not None
    inner = owner.new_frame(fd, fd.qualname)
    inner.runs = True
    level = call_path.depth()
    ran: list[bool] = []

    def at_yield(gen_frame) -> None:
        yielded = stmt.value.value
        got = NoneV() if yielded is None else owner.eval(yielded, gen_frame)
        ran.append(True)
        was = frame.raised
        with call_path.back_at(level):
            if item.optional_vars is not None:
                an.assign(item.optional_vars, got, frame, None)
            body()
        if frame.raised and not was:
            # the exception is thrown into f at its yield: only its `finally`
            # blocks run on (no handler catches it: _single_yield)
            gen_frame.done = gen_frame.raised = True

    owner.in_flight.add(flight)
    _AT.append((stmt, at_yield))
    try:
        with call_path.calling(fd.qualname, getattr(node, "lineno", None)):
            bind_arguments(owner, fd, inner, None, args, kwargs)
            owner.exec_block(fd.node.body, inner)
    finally:
        _AT.pop()
        owner.in_flight.discard(flight)
    children = list(inner.records.values())
    rec = an.record(node, frame, f"call {fd.qualname}", None, args, NoneV(),
                    add_costs(r.cost for r in children), summed=True)  # fmt: skip
    rec.children = children
    exc = raising.of_records(children)
    if not ran:
        # f raised before its yield: the `with` statement raises there, its body
        # never runs (contextlib: "generator didn't yield" where nothing raised)
        raising.surely(an, node, frame, exc or "RuntimeError")
    return True


def _held_changed(an: Analyzer, fd: FuncDef, args, kwargs) -> str | None:
    """Why f's run may change an object of its caller's, read off what it is
    given and the globals it may change (in_place's rules); None where it cannot."""
    if fd.rebinds_globals:
        return "rebinds a global"
    changed = in_place.changed_names(an, fd)
    if not changed:
        return None
    if in_place.globals_before(an, fd):
        return "changes a global object in place"
    params = [a.arg for a in (*fd.node.args.posonlyargs, *fd.node.args.args)]
    given = dict(zip(params, args)) | kwargs
    for name in changed:
        v = given.get(name)
        if v is not None and (module_state.changeable(an, v) or is_module(v)):
            return f"changes its argument {name} in place"
    return None


def at_yield(stmt: ast.Expr, frame) -> bool:
    """Whether stmt is the `yield` of the context manager's run in progress: the
    `with` body has run there (frame: the generator's)."""
    if not _AT or _AT[-1][0] is not stmt:
        return False
    _AT[-1][1](frame)
    return True
