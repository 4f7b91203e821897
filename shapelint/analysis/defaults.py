"""Default argument values as Python makes them: once, where the `def` or `lambda`
runs, in the scope it runs in. `def step(x, n=TIMES)` keeps the TIMES of that moment
though the module rebinds TIMES further down, and `[lambda t, j=j: ... for j in
range(k)]` gives each lambda the j of its own turn; read at the call, both would
be the last value.

A def the module's pass ran (its top level, a class body) keeps what its defaults
were (`remember`); a closure keeps them on its value (lambdas.closure_of). A def
the pass never ran (a file read for one definition only) reads them at the call,
in the module's final names, as before.
"""

from __future__ import annotations

import ast

from shapelint.analysis import module_state
from shapelint.analysis.nodes import module_bindings
from shapelint.ops.values import UNKNOWN, Value


class _Changed(Value):
    """A kept default a call changed in place (`def note(d, acc=[])` appending to
    acc): Python's one default object is changed for every later call, which the
    analysis does not follow; unknown from then on, never read anew at the call."""

    __slots__ = ()


_CHANGED = _Changed()


def now(an, spec: ast.arguments, frame, d: int = 0) -> dict[int, Value]:
    """The defaults of spec evaluated in frame, by their expression's id."""
    exprs = [e for e in (*spec.defaults, *spec.kw_defaults) if e is not None]
    return {id(e): an.eval(e, frame, d) for e in exprs}


def remember(an, stmt: ast.FunctionDef | ast.AsyncFunctionDef, frame) -> None:
    """A def run at a module's top level or in a class body: its defaults as of now,
    evaluated in a frame of their own over frame's names (what constructing one
    records is not the module's: the call sites' evaluation kept none either)."""
    if not stmt.args.defaults and not any(e is not None for e in stmt.args.kw_defaults):
        return
    scratch = an.new_frame(None, "<defaults>")
    scratch.env = frame.env
    an.def_defaults[id(stmt)] = now(an, stmt.args, scratch)


def kept(an, node: ast.AST) -> dict[int, Value]:
    """What remember kept of node's defaults (empty where its def never ran)."""
    return an.def_defaults.get(id(node), {})


def at_call(an, node: ast.AST, default: ast.expr) -> Value | None:
    """The default `remember` kept for node's parameter, or None where it is to be
    read at the call: the def never ran in the pass, or the pass could not tell its
    value (a call the module's pass does not follow: `get_act_layer('silu')`) and
    no name it reads is bound twice at the module's top level, so that the call
    reads the value the def saw."""
    got = kept(an, node).get(id(default))
    if got is _CHANGED:
        return UNKNOWN
    if got is not UNKNOWN:
        return got
    bound = module_bindings(an.tree)
    read = {n.id for n in ast.walk(default) if isinstance(n, ast.Name)}
    return got if any(bound.get(n, 0) > 1 for n in read) else None


def changed(analyzers, old: Value, an) -> bool:
    """old, an object changed in place, is the kept default of a def of one of
    analyzers (a parameter left at its default, `acc=[]`): that default is no
    longer known for any later call. Written as module_state writes, so that
    undecided paths fork and join it and the memos keyed on its state are not
    reused. Whether one was."""
    found = False
    for owner in analyzers:
        for values in list(owner.def_defaults.values()):
            for k, v in list(values.items()):
                if v is old:
                    module_state.write(values, k, _CHANGED, an)
                    found = True
    return found
