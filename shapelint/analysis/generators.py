"""What a call of a generator function yields, where the analysis can list it.

`for blk in even(self.layers)` with `def even(layers): for i, b in enumerate(layers):
if i % 2 == 0: yield b`: Python runs the body as the loop asks for items. Where the
body is loops over listed items, decided `if`s, assignments, `yield`, `yield from` and a
bare `return`, and runs no call that costs anything, running it to its end first gives
the same items, in the same order, as running it item by item would: the items are the
ones it yields. Anything else (an undecided test, a loop of unknown length, a `break`,
a `try`, a call with a record of its own) and the items are not known: the caller goes
on as before, with a loop of unknown length.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from shapelint.analysis.attributes import find_method
from shapelint.analysis.defs import FuncDef
from shapelint.analysis.nodes import children, nodes_of
from shapelint.analysis.recorder import SelfRecorder
from shapelint.analysis.repetition import ONE, collected, merge
from shapelint.ops import saved as storages
from shapelint.ops.values import NoneV, ObjectV, TupleV, Value

# Most items a generator is run for, and most turns of each loop in it.
MAX_ITEMS = 64
MAX_TURNS = 8


class _Stop(Exception):
    """The body does what this module does not follow: its items are not known."""


def is_generator(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A `yield` in the function's own body (not in a function or class inside it)."""
    if not nodes_of(node, (ast.Yield, ast.YieldFrom)):  # (indexed once per tree)
        return False
    todo: list[ast.AST] = list(node.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        todo.extend(children(n))
    return False


# Calls that ask an iterable for every item it has (a generator runs to its end).
_WHOLE = frozenset({"list", "tuple", "sum", "sorted", "set", "dict", "max", "min", "len"})
_CONSUMED = "_shapelint_consumed_whole"


def consumed_whole(fn, call: ast.Call) -> bool:
    """Whether the generator `call` makes, in fn's body, surely runs to its end: the
    iterable of a `for` whose body has no `break`, `return` or `raise`, of a
    comprehension's first `for`, of `yield from`, or the one argument of `list`,
    `tuple`, `sum` and the like. Anywhere else (`next(g)`, `zip(g, ...)`, `any`, a
    loop that may stop) the body runs only as far as items are asked for, which
    the analysis does not follow: running it to its end at the call counted every
    turn (zip with a range of 2: 10 turns where torch ran 3)."""
    if fn is None:
        return False
    known = fn.__dict__.get(_CONSUMED)
    if known is None:
        ids: set[int] = set()
        for n in ast.walk(fn):
            if isinstance(n, (ast.For, ast.AsyncFor)):
                if not any(
                    isinstance(s, (ast.Break, ast.Return, ast.Raise))
                    for b in n.body
                    for s in ast.walk(b)
                ):
                    ids.add(id(n.iter))
            elif isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp)):
                ids.add(id(n.generators[0].iter))
            elif isinstance(n, ast.YieldFrom):
                ids.add(id(n.value))
            elif (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name)
                and n.func.id in _WHOLE
                and len(n.args) == 1
                and not n.keywords
            ):
                ids.add(id(n.args[0]))
        known = frozenset(ids)
        setattr(fn, _CONSUMED, known)
    return id(call) in known


def generator_call(an, node: ast.expr, frame, d: int) -> bool:
    """Whether node calls a generator function of the project that yielded follows,
    asked without evaluating anything (method_of's quiet)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        found = method_of(an, node.func, frame, d, quiet=True)
        return found is not None and is_generator(found[0].node)
    return _generator(an, node, frame, d) is not None


def yielded(an, node: ast.expr, frame, d: int, iterate: Callable) -> tuple[Value, ...] | None:
    """The items a call of a generator function of the project yields, in order, or
    None where that is not known here. iterate: the turns of an iterable
    (loops.iterate), which the generator's own loops and `yield from` walk."""
    found = _generator(an, node, frame, d)
    if found is None:
        return None
    fd, bound = found
    assert isinstance(node, ast.Call)
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
        k.arg is None for k in node.keywords
    ):
        return None
    # The arguments' own calls count once: kept where the items are known, else left
    # to the caller, which evaluates the call as before.
    with collected(frame) as given:
        args = [an.eval(a, frame, d) for a in node.args]
        kwargs = {k.arg: an.eval(k.value, frame, d) for k in node.keywords}
    owner = fd.owner or an
    inner = owner.new_frame(fd, fd.qualname)
    if not _bind(owner, fd.node, [*bound, *args], kwargs, inner, d):
        return None
    out: list[Value] = []
    # A trial: where it gives no items the caller runs the call itself, and what
    # the trial's ops saved for backward must not be in the ledger then (the
    # call's own ops would find their operands saved: 0 B for torch's 256).
    book = storages.mark()
    try:
        with collected(inner) as made:
            _run(owner, fd.node.body, inner, out, d, iterate)
    except _Stop:
        storages.undo(book)
        return None
    if made:  # a call with a cost of its own: when it runs depends on the loop's pace
        storages.undo(book)
        return None
    merge(frame.records, given, ONE, "")
    return tuple(out)


def _generator(an, node: ast.expr, frame, d: int) -> tuple[FuncDef, list[Value]] | None:
    """The generator function a call runs, with the values it binds before the
    call's arguments (a method's instance)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _generator_method(an, node.func, frame, d)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return None
    name = node.func.id
    if name in frame.locals or name in frame.env:
        return None
    fd = an.functions.get(name)
    if fd is None:
        sym = an.project_symbol(node.func, None, frame)
        fd = sym if isinstance(sym, FuncDef) else None
    if fd is None or fd.cls is not None or fd.node.decorator_list:
        return None
    if isinstance(fd.node, ast.AsyncFunctionDef) or not is_generator(fd.node):
        return None
    return fd, []


def _generator_method(an, func: ast.Attribute, frame, d: int):
    """`self.sub_kernels()` of a generator method (method_of)."""
    found = method_of(an, func, frame, d)
    return found if found is not None and is_generator(found[0].node) else None


def method_of(
    an, func: ast.Attribute, frame, d: int, quiet: bool = False
) -> tuple[FuncDef, list[Value]] | None:
    """`self.sub_kernels`: a plain method (no decorator) of a project class, read
    through an instance the run built or is building, whose class has no hook of its
    own on attribute reads and which holds no attribute of that name: Python binds
    the instance to the method's first parameter. The method and [the instance].
    quiet: the receiver read off the frame, not evaluated (a question asked of a
    call the run may not make: an evaluation is a step of the run)."""
    if not (isinstance(func.value, ast.Name) and an.specialize):
        return None
    if quiet:  # the name's value, read with no step of the run's (no eval)
        recv = frame.env.get(func.value.id)
    else:
        recv = an.eval(func.value, frame, d)  # a name: reading it runs nothing
    if isinstance(recv, SelfRecorder):
        key, held = recv.cls, recv.attrs.keys()
    elif isinstance(recv, ObjectV) and recv.kind.startswith("<class>"):
        key, held = recv.kind[len("<class>") :], [k for k, _ in recv.attrs]
    else:
        return None
    cd = an.class_of(key)
    if cd is None or func.attr in held:
        return None
    if any(find_method(an, cd, h) is not None for h in ("__getattribute__", "__getattr__")):
        return None
    fd = find_method(an, cd, func.attr)
    if fd is None or fd.node.decorator_list or isinstance(fd.node, ast.AsyncFunctionDef):
        return None
    return fd, [recv]


def _bind(an, node: ast.FunctionDef, args: list[Value], kwargs: dict, frame, d: int) -> bool:
    """Parameters bound as Python binds them: `*args` the tuple of the positional
    arguments past the named ones (opacus's `iterate_layers(self, *args)`, called
    with none), a keyword-only one its keyword or constant default; False where
    that needs what is not followed here (a default other than a constant,
    `**kwargs`, positional-only parameters)."""
    a = node.args
    if a.kwarg or a.posonlyargs:
        return False
    params = [p.arg for p in a.args]
    defaults = dict(zip(params[len(params) - len(a.defaults) :], a.defaults, strict=True))
    kwonly = [p.arg for p in a.kwonlyargs]
    defaults |= {p: v for p, v in zip(kwonly, a.kw_defaults, strict=True) if v is not None}
    if (len(args) > len(params) and a.vararg is None) or set(kwargs) - {*params, *kwonly}:
        return False
    if set(kwargs) & set(params[: len(args)]):
        return False  # Python: multiple values for one argument
    for i, p in enumerate([*params, *kwonly]):
        if i < len(args) and p in params:
            value = args[i]
        elif p in kwargs:
            value = kwargs[p]
        elif p in defaults and isinstance(defaults[p], ast.Constant):
            value = an.eval(defaults[p], frame, d)
        else:
            return False
        frame.env[p] = value
        frame.locals.add(p)
    if a.vararg is not None:
        frame.env[a.vararg.arg] = TupleV(tuple(args[len(params) :]))
        frame.locals.add(a.vararg.arg)
    return True


def _run(an, body: list[ast.stmt], frame, out: list[Value], d: int, iterate: Callable) -> bool:
    """Run body; True where it returned (the generator ends)."""
    for stmt in body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield):
            v = stmt.value.value
            out.append(NoneV() if v is None else an.eval(v, frame, d))
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.YieldFrom):
            it = iterate(an, stmt.value.value, frame, d)
            if it.items is None:
                raise _Stop
            out.extend(it.items)
        elif isinstance(stmt, ast.For) and not stmt.orelse:
            if any(isinstance(n, (ast.Break, ast.Continue)) for n in ast.walk(stmt)):
                raise _Stop  # (a `return` ends the generator: followed)
            it = iterate(an, stmt.iter, frame, d)
            if it.items is None or len(it.items) > MAX_TURNS:
                raise _Stop
            for item in it.items:
                an.assign(stmt.target, item, frame, None)
                if _run(an, stmt.body, frame, out, d, iterate):
                    return True
        elif isinstance(stmt, ast.If):
            truth = an.decide(stmt.test, frame)
            if truth is None:
                raise _Stop
            if _run(an, stmt.body if truth else stmt.orelse, frame, out, d, iterate):
                return True
        elif isinstance(stmt, ast.Return) and stmt.value is None:
            return True
        elif isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            value = an.eval(stmt.value, frame, d)
            for t in stmt.targets:
                an.assign(t, value, frame, stmt.value)
        elif isinstance(stmt, ast.Pass) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        ):
            continue  # a docstring, `...`: nothing runs
        else:
            raise _Stop
        if len(out) > MAX_ITEMS:
            raise _Stop
    return False
