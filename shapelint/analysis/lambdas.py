"""Lambdas and nested functions as values, run where they are called
(`map(lambda t: rearrange(t, ...), qkv)`, `f(x)` for a local `def f`) with the
arguments of that call and the enclosing variables as they stand then (Python's
closures read them late, too). A lambda nobody calls is still checked, once,
with arguments of unknown shape.

The calls a body makes count in the function that calls it, once per call.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from shapelint.analysis import aliasing, closure_calls, defaults, in_place, may_raise
from shapelint.analysis.loops import UNROLL, of_value
from shapelint.analysis.nodes import dotted_name, nodes_of
from shapelint.analysis.repetition import ONE, collected, merge
from shapelint.analysis.sequences import SeqV
from shapelint.analysis.statements import declared_names
from shapelint.ops import saved as storages
from shapelint.ops.values import DICT_KIND, UNKNOWN, NoneV, ObjectV, TensorV, TupleV, Value

_MAX_NESTING = 8  # closures running inside closures: deeper ones are unknown
_MAX_RECURSION = 8  # calls of one closure running inside each other (2**8 runs at worst)


@dataclass(eq=False)
class ClosureV(Value):
    """A lambda or a nested def, with the frame it was defined in."""

    node: ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef
    frame: object
    called: bool = False
    # The analyzer of the file that defines it: a closure made in another file
    # (timm's `to_2tuple = _ntuple(2)` in helpers.py) runs with that file's names.
    owner: object = None
    # What `@functools.wraps(f)` was given: its name, qualname and docstring are
    # the closure's (analysis/decorators.py reads them).
    wrapped: Value | None = None
    # Its defaults, evaluated where it was made, by expression (defaults.now).
    defaults: dict = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class UnfollowedDefV(Value):
    """A nested def under a decorator the analysis does not run: what calling it
    runs is not seen. computes: its body calls something, so a call of it may
    compute on the tensors it captures, given none as arguments."""

    name: str
    computes: bool


def unfollowed_def(stmt: ast.FunctionDef | ast.AsyncFunctionDef) -> UnfollowedDefV:
    computes = any(isinstance(n, ast.Call) for s in stmt.body for n in ast.walk(s))
    return UnfollowedDefV(stmt.name, computes)


def transparent_decorators(an, stmt: ast.FunctionDef | ast.AsyncFunctionDef, frame) -> bool:
    """No decorator, or only `functools.wraps(...)`, which hands back the same
    function with its name and docstring copied: calling it runs its body."""
    for d in stmt.decorator_list:
        func = d.func if isinstance(d, ast.Call) else d
        if an.imports.resolve(func, frame.locals, frame.local_imports) != "functools.wraps":
            return False
    return True


def closure_of(an, node: ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef, frame) -> ClosureV:
    """A closure over `frame`, which holds it in turn: the analyzer keeps them all
    so that its release() can break that cycle."""
    closure = ClosureV(node, frame, owner=an)
    an.closures.append(closure)
    closure.defaults = defaults.now(an, node.args, frame)
    return closure


def define_lambda(an, node: ast.Lambda, frame, d: int) -> Value:
    closure = closure_of(an, node, frame)
    an.uncalled.append(closure)
    return closure


def check_uncalled(an) -> None:
    """A lambda nobody called is checked once with arguments of unknown shape,
    so a broken pattern in it is reported all the same. What that run would
    cost is not counted: only a call counts it."""
    checked = {id(c.node) for c in an.uncalled if c.called}
    for closure in an.uncalled:
        node = closure.node
        if id(node) in checked:
            continue
        checked.add(id(node))
        inner = an.scope(closure.frame)
        _bind(an, node.args, [], {}, closure, inner, 0, unknown=True)
        with collected(inner), an.repeated():
            an.eval(node.body, inner)
    an.uncalled.clear()


def invoke(
    an,
    closure: ClosureV,
    args: list[Value],
    kwargs: dict[str, Value],
    caller,
    d: int = 0,
    site=None,
):
    """Run the closure's body on the arguments; its records join the caller's,
    apart for each call site (site: the call's node), as two calls of one
    closure are two evaluations of its body."""
    an = closure.owner or an
    node = closure.node
    active = an.active_closures
    if _recursion_stops(active, closure, (args, kwargs)) or isinstance(node, ast.AsyncFunctionDef):
        outer = getattr(getattr(closure.frame, "func", None), "node", None)
        if closure_calls.only_called_in_place(node, outer):
            aliasing.lost()  # its pass where it was defined left its stores to this call
        return UNKNOWN  # recursion, or a coroutine: not followed
    if nodes_of(node, (ast.Yield, ast.YieldFrom)):  # (kept: a closure runs per item)
        return UNKNOWN  # a generator runs when it is consumed, not here
    closure.called = True
    inner = an.scope(closure.frame)
    inner.records = caller.records
    inner.cell = closure.frame
    inner.nonlocal_names = declared_names(node, ast.Nonlocal)
    inner.watch = in_place.closure_watch(an, node, closure.frame)
    _bind(an, node.args, args, kwargs, closure, inner, d, unknown=False)
    active.append((closure, (tuple(args), dict(kwargs))))
    try:
        with collected(inner) as runs, an.repeated():
            if isinstance(node, ast.Lambda):
                value = an.eval(node.body, inner, d)
            else:
                an.exec_block(node.body, inner)
                value = _returned(an, inner.returns, node, inner.done)
    finally:
        active.pop()
    in_place.follow_free(an, node, closure.frame, inner, args, kwargs, caller, site)
    if site is not None:
        at = ("at", site.lineno, site.col_offset, site.end_lineno, site.end_col_offset)
        runs = {(*key, *at): rec for key, rec in runs.items()}
    merge(caller.records, runs, ONE, "")
    return value


def _arguments_key(args, kwargs) -> object:
    """The arguments of a closure's call as a key; None where one cannot be hashed."""
    key = (tuple(args), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _recursion_stops(active: list, closure: ClosureV, given: tuple) -> bool:
    """Whether a call of closure is not run: closures nested too deep, or a closure
    that calls itself again with arguments equal to a call still running (or not
    comparable), or deeper than _MAX_RECURSION. A recursion whose arguments shrink
    (`_scan(reduced)` on half the items, down to a test on their count) runs as
    Python runs it."""
    mine = [a for c, a in active if c is closure]
    if len(active) - len(mine) >= _MAX_NESTING or len(mine) >= _MAX_RECURSION:
        return True
    if not mine:
        return False
    # keys made only for a call that calls itself: hashing a module's whole tree for
    # every closure call would cost what the comparison never needs
    key = _arguments_key(*given)
    return key is None or key in [_arguments_key(*a) for a in mine]


def _returned(an, returns: list[Value], node, done: bool) -> Value:
    """done: every path the run took ended in a return (or a raise)."""
    falls_off = not done and (
        not node.body or not isinstance(node.body[-1], (ast.Return, ast.Raise))
    )
    values = list(returns) + ([NoneV()] if falls_off else [])
    if not values:
        return UNKNOWN  # every path raised: no value comes back
    out = values[0]
    for v in values[1:]:
        out = an.join(out, v)
    return out


def _bind(an, spec: ast.arguments, args, kwargs, closure, inner, d: int, unknown: bool) -> None:
    kept = closure.defaults
    positional = list(spec.posonlyargs) + list(spec.args)
    defaults = [None] * (len(positional) - len(spec.defaults)) + list(spec.defaults)
    if an.specialize and not unknown and may_raise.refuses(spec, len(args), list(kwargs)):
        may_raise.mark()  # Python raises TypeError; the body runs here all the same
    kwargs = dict(kwargs)
    for i, (a, default) in enumerate(zip(positional, defaults)):
        if unknown:
            value = UNKNOWN
        elif i < len(args):
            value = args[i]
        elif a.arg in kwargs:
            value = kwargs.pop(a.arg)
        elif default is not None:
            value = kept[id(default)] if id(default) in kept else UNKNOWN
        else:
            value = UNKNOWN
        _set(an, inner, a, value)
    for a, default in zip(spec.kwonlyargs, spec.kw_defaults):
        if unknown or (a.arg not in kwargs and default is None):
            value = UNKNOWN
        elif a.arg in kwargs:
            value = kwargs.pop(a.arg)
        else:
            value = kept[id(default)] if id(default) in kept else UNKNOWN
        _set(an, inner, a, value)
    if spec.vararg is not None:
        rest = TupleV(tuple(args[len(positional) :])) if not unknown else UNKNOWN
        _set(an, inner, spec.vararg, rest)
    if spec.kwarg is not None:  # the keywords no parameter took, as a dict
        _set(
            an, inner, spec.kwarg, UNKNOWN if unknown else ObjectV(DICT_KIND, tuple(kwargs.items()))
        )


def _set(an, inner, a: ast.arg, value: Value) -> None:
    if a.annotation is not None and not isinstance(value, TensorV):
        declared = an.annotations.tensor(a.annotation)
        if declared is not None:
            value = declared
    inner.env[a.arg] = value
    inner.locals.add(a.arg)


def map_call(an, node: ast.Call, args: list[Value], frame, unroll: int = UNROLL) -> Value:
    """map(f, xs, ...): f called on each listed item (up to `unroll` of them), or
    once for all of them."""
    f, seqs = args[0], args[1:]
    its = [of_value(an, s) for s in seqs]
    if all(it.items is not None for it in its) and min(len(it.items) for it in its) <= unroll:  # type: ignore[arg-type]
        n = min(len(it.items) for it in its)  # type: ignore[arg-type]
        results = []
        for i in range(n):
            with collected(frame) as runs, an.repeated():
                results.append(an.call_value(f, node, [it.items[i] for it in its], {}, frame))  # type: ignore[index]
            # each item's calls on records of their own, as a comprehension's are
            # (modules.py): one record for all would hold the cost of every run but
            # the calls and results of the last, and the loss reaching one item's
            # result would be read as reaching all of them, or none
            merge(frame.records, {(*k, "item", i): r for k, r in runs.items()}, ONE, "")
        return TupleV(tuple(results))
    count = its[0].count if len(its) == 1 else None
    with collected(frame) as runs, storages.repeated_turn(list(frame.env.values())):
        value = _call_once(an, f, node, [it.item for it in its], frame)
    merge(frame.records, runs, count, "map" if count is not None else "map over unknown length")
    return SeqV(value, count)


_ITEM = ".map item {}"  # not a Python name: nothing in the code can see it


def _call_once(an, f: Value, node: ast.Call, items: list[Value], frame) -> Value:
    """f called on one item of each sequence. A function known by its name, not as
    a value (`map(np.percentile, rows, qs)`: a library function), is called as
    `np.percentile(row, q)` written out is, which the analysis reads by name."""
    named = node.args[0] if node.args else None
    if f is not UNKNOWN or not dotted_name(named):
        return an.call_value(f, node, items, {}, frame)
    names = [_ITEM.format(i) for i in range(len(items))]
    call = ast.copy_location(
        ast.Call(named, [ast.copy_location(ast.Name(n, ast.Load()), node) for n in names], []),
        node,
    )
    frame.env.update(zip(names, items))
    fresh = set(names) - frame.locals
    frame.locals |= fresh
    try:
        return an.eval(call, frame)
    finally:
        for n in names:
            frame.env.pop(n, None)
        frame.locals -= fresh
