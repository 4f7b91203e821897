"""Whether what a specialized run ran is known not to raise (raising.py's `try`).

Python runs a `try`'s handlers only if some statement of its body raises. A
target run counts, one counter for the whole run, every step it cannot vouch
for: a `try` whose body (its callees' bodies included, which run inside it)
added none is known not to raise, and its handlers are dead. The rule is
positive, so that whatever the analysis does not model counts as may-raise:

- an expression is known to return where its value is known (not UNKNOWN) and
  is no tensor an op made (torch checks shapes, dtypes and devices the analysis
  may not know), its operator's failures are ruled out by its value (a division,
  a modulo or a power only with a number for a result: a symbolic divisor may be
  0), and it unpacks no `*args` / `**kwargs` (the value may not be iterable);
  a call returns a known value only where its callee was followed to a body that
  returned (whose own steps are counted, as they run inside) or a model answered
  it, and only where its arguments bind as Python binds them (`refuses`: the
  analysis runs a body given too many, too few or unknown keywords all the same);
  an attribute only where the object has it; a subscript only where the
  container holds the key; a test's truth (`if`, `while`, a conditional, a
  filter) only where it is decided: `bool()` of a tensor or of an object whose
  class defines `__bool__` may raise;
- a statement only where it is one of: an expression, `return`, `pass`,
  `global`/`nonlocal`, `break`/`continue`, `if` (its test and the branch run are
  counted), `try` (its parts as they run), an assignment to names (an unpacking
  only of a value of the targets' length: assignment._assign), a store
  `self.name = v` into the module being built that module_setattr.py shows
  returns (a module after `super().__init__()`, a plain value), `assert` decided
  true, an undecorated `def`, and `import m` of a module found as source (the
  project's or an installed package's), of the standard library, or of torch,
  which every forward imports. Anything else (a loop, `with`, `del`, a store
  into an attribute or an item, `from m import n`, a raise that may run, a
  class body) may raise.

A memoised call, construction or `__getattribute__` read hands back whether its
first run may have raised (specialized.specialized_invoke and construct,
attribute_hooks.read). Plain (non-specialized) runs count nothing: a
summary's handlers stay alternatives.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import sys

from shapelint.analysis import installed
from shapelint.ops.values import UNKNOWN, BoolV, FloatV, IntV, StrV, TensorV, TupleV, Value

_COUNT = [0]
# The targets (by id) of `obj.name = v` statements under way whose step the store
# itself counts, once it knows what it stores into (module_setattr.py).
_DEFERRED: set[int] = set()
OP = "<may raise>"  # beside a memoised run's key

_DIVIDING = (ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)

_QUIET_STMTS = (
    ast.Expr,
    ast.Return,
    ast.Pass,
    ast.Global,
    ast.Nonlocal,
    ast.Break,
    ast.Continue,
    ast.If,
    ast.Try,
    ast.Assert,  # decided where it runs: statement_exec.exec_assert
)


def mark() -> None:
    """Something ran that may raise."""
    _COUNT[0] += 1


def count() -> int:
    return _COUNT[0]


@contextlib.contextmanager
def apart():
    """A pass that is no step of the run (a function's summary, over unknown
    arguments): what it meets counts for nothing."""
    saved = _COUNT[0]
    try:
        yield
    finally:
        _COUNT[0] = saved


def keep(memo: dict, key, start: int) -> None:
    """Whether the run memoised under key, begun at count start, may have raised."""
    memo[(OP, key)] = _COUNT[0] != start


def replay(memo: dict, key) -> None:
    """A memoised run reused: its steps count again."""
    if memo.get((OP, key), True):
        mark()


def expression(node: ast.expr, value: Value) -> None:
    """Counts node's step unless its value shows it returned."""
    if value is UNKNOWN:
        mark()
        return
    kind = type(node)
    if kind is ast.Name or kind is ast.Constant:
        return
    if kind not in _RETURNS or not _known(value):
        mark()
        return
    if kind is ast.BinOp and isinstance(node.op, _DIVIDING) and not _number(value):
        mark()
    elif kind is ast.Call and _unpacks(node):
        mark()


def builtin_read(an, node: ast.expr, frame) -> bool:
    """Whether node reads a name of Python's builtins that nothing in scope shadows
    (`slice`, `str` in `isinstance(i, slice)`): it is always bound, so reading it
    never raises, whatever the analysis makes of its value."""
    return (
        type(node) is ast.Name
        and hasattr(builtins, node.id)
        and not node.id.startswith("_")
        and an.is_builtin(node.id, frame)
    )


def _known(v: Value) -> bool:
    """Whether v is a value a model or a run made knowing it: no tensor an op made,
    no number, string or flag of unknown value (`float("x")` and `math.sqrt(-1)`
    are a float of unknown value to the models: Python raises there)."""
    if v is UNKNOWN or isinstance(v, TensorV):
        return False
    if isinstance(v, (IntV, FloatV, StrV, BoolV)):
        return v.value is not None
    if isinstance(v, TupleV):
        return all(_known(i) for i in v.items)
    return True


def _number(v: Value) -> bool:
    if isinstance(v, FloatV):
        return v.value is not None
    return isinstance(v, IntV) and v.value is not None and v.value.is_constant()


def _unpacks(node: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in node.args) or any(
        k.arg is None for k in node.keywords
    )


_RETURNS = frozenset(
    {
        ast.Call,
        ast.Attribute,
        ast.Subscript,
        ast.BinOp,
        ast.UnaryOp,
        ast.BoolOp,
        ast.Compare,
        ast.IfExp,
        ast.Tuple,
        ast.List,
        ast.Dict,
        ast.Set,
        ast.JoinedStr,
        ast.Lambda,
        ast.Slice,
        ast.NamedExpr,
        ast.ListComp,
        ast.SetComp,
        ast.DictComp,
        ast.GeneratorExp,
    }
)


def statement(an, stmt: ast.stmt) -> None:
    """Counts stmt's own step (what it evaluates counts apart) unless it is one
    that cannot raise of itself."""
    if isinstance(stmt, _QUIET_STMTS):
        return
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if all(_names(t) for t in targets):
            return
        if isinstance(stmt, ast.Assign) and len(targets) == 1 and _attribute(targets[0]):
            _DEFERRED.add(id(targets[0]))  # the store decides: stored()
            return
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if not stmt.decorator_list:
            return
    elif isinstance(stmt, ast.Import):
        if all(importable(an, a.name) for a in stmt.names):
            return
    mark()


def deferred(target: ast.expr) -> bool:
    """Whether the step of the statement storing into target is the store's to count."""
    return id(target) in _DEFERRED


def stored(target: ast.expr, returned: bool) -> None:
    """The store into target ran: its statement counts unless it surely returned
    (module_setattr.returns)."""
    if id(target) in _DEFERRED:
        _DEFERRED.discard(id(target))
        if not returned:
            mark()


def settle(stmt: ast.stmt) -> None:
    """stmt ran: a store it deferred that never came (its value raised, the path
    left) counts as one that may raise."""
    if isinstance(stmt, ast.Assign) and id(stmt.targets[0]) in _DEFERRED:
        _DEFERRED.discard(id(stmt.targets[0]))
        mark()


def _attribute(target: ast.expr) -> bool:
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)


def refuses(spec: ast.arguments, n_args: int, names, skip: int = 0) -> bool:
    """Whether Python refuses to bind n_args positional arguments and the keywords
    `names` to parameters spec (TypeError: too many, one given twice, an unknown
    keyword, a required one missing); skip: the leading ones already bound (self)."""
    positional = [p.arg for p in (*spec.posonlyargs, *spec.args)][skip:]
    posonly = {p.arg for p in spec.posonlyargs}
    kwonly = {p.arg for p in spec.kwonlyargs}
    if n_args > len(positional) and spec.vararg is None:
        return True
    filled = set(positional[:n_args])
    for name in names:
        if name in filled:
            return True
        if name in posonly or (name not in positional and name not in kwonly):
            if spec.kwarg is None:
                return True
            continue
        filled.add(name)
    required = positional[: len(positional) - len(spec.defaults)]
    required += [p.arg for p, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is None]
    return any(r not in filled for r in required)


def _names(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(
        isinstance(e, ast.Name) for e in target.elts
    )


def importable(an, modname: str) -> bool:
    """Whether `import modname` surely finds the module (it may still raise while
    its top level runs: a module found as source is taken as importable, as the
    analysis reads it)."""
    top = modname.partition(".")[0]
    if modname == installed.RUNTIME:  # importable wherever a forward runs
        return True
    if top == installed.RUNTIME:
        return installed.runtime_module(modname)
    if top in sys.stdlib_module_names:
        return installed.stdlib_module(modname)
    proj = an.project
    if proj is None:
        return False
    return proj.find(an.project_root, modname)[1] or proj.installed_module(modname) is not None
