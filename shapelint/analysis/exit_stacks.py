"""`contextlib.ExitStack`, as Python runs it.

`with ExitStack() as stack:` whose body enters context managers by statements
`stack.enter_context(cm)` (or `v = stack.enter_context(cm)`) at its top level:
ExitStack enters cm at the call and, when the `with` block ends, exits what it
entered last first, which is the nested `with cm as v:` around the rest of the
body. The statement is read so (`rewritten`, once, kept on the node), and cm's
grad mode, autocast or own `__enter__` / `__exit__` hold where Python's do.

Any other use is not followed (`enter_context` in a branch or a loop, a stack
made outside a `with`, `callback` / `push` / `pop_all` beside it): such an
`enter_context` call is of unknown cost, and the grad mode after it is not
known (the context manager may have turned it off: `torch.no_grad()`), so the
backward of what runs after it is unknown, never the figure of another mode.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shapelint.analysis import unknown_cost as uc
from shapelint.ops.backward import GRAD_MODE
from shapelint.ops.values import UNKNOWN

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

_EXIT_STACK = "contextlib.ExitStack"
_ENTER = "enter_context"
_KEY = "_shapelint_exit_stack"  # the rewritten statement, or False, kept on the node


def rewritten(an: Analyzer, stmt: ast.With | ast.AsyncWith) -> ast.With | ast.AsyncWith:
    """stmt with each top-level `enter_context` of its ExitStack item made the
    nested `with` Python's unwinding amounts to; stmt itself where it has none,
    or where the stack is used otherwise too."""
    known = stmt.__dict__.get(_KEY)
    if known is None:
        known = _rewrite(an, stmt) or False
        setattr(stmt, _KEY, known)
    return known or stmt


def _rewrite(an: Analyzer, stmt: ast.With | ast.AsyncWith) -> ast.With | ast.AsyncWith | None:
    names = [
        item.optional_vars.id
        for item in stmt.items
        if isinstance(item.optional_vars, ast.Name) and _makes_stack(an, item.context_expr)
    ]
    if len(names) != 1:
        return None
    name = names[0]
    entered = [s for s in stmt.body if _entered(s, name) is not None]
    uses = [n for s in stmt.body for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == name]
    if not entered or len(uses) != len(entered):
        return None  # the stack read elsewhere too: what it holds is not followed
    body = _nested(stmt.body, name)
    new = type(stmt)(items=stmt.items, body=body, type_comment=None)
    return ast.copy_location(new, stmt)


def _makes_stack(an: Analyzer, expr: ast.expr) -> bool:
    return (
        isinstance(expr, ast.Call)
        and not expr.args
        and not expr.keywords
        and isinstance(expr.func, (ast.Name, ast.Attribute))
        and an.imports.resolve(expr.func) == _EXIT_STACK
    )


def _entered(stmt: ast.stmt, name: str) -> tuple[ast.expr, ast.expr | None] | None:
    """(cm, the target bound to what its __enter__ returns) of a statement
    `name.enter_context(cm)` or `v = name.enter_context(cm)`; None otherwise."""
    if isinstance(stmt, ast.Expr):
        call, target = stmt.value, None
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        call, target = stmt.value, stmt.targets[0]
    else:
        return None
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == _ENTER
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == name
        and len(call.args) == 1
        and not isinstance(call.args[0], ast.Starred)
        and not call.keywords
    ):
        return None
    return call.args[0], target


def _nested(body: list[ast.stmt], name: str) -> list[ast.stmt]:
    for i, stmt in enumerate(body):
        got = _entered(stmt, name)
        if got is None:
            continue
        rest = _nested(body[i + 1 :], name) or [ast.copy_location(ast.Pass(), stmt)]
        inner = ast.With(items=[ast.withitem(*got)], body=rest, type_comment=None)
        return [*body[:i], ast.copy_location(inner, stmt)]
    return body


def not_followed(an: Analyzer, node: ast.Call, args, kwargs, frame):
    """An `enter_context` call `rewritten` did not place: of unknown cost, and
    the grad mode from here on not known (in a target run)."""
    if an.specialize and getattr(frame, "runs", False) and not an.trial:
        GRAD_MODE.set(None)
    # on the record whatever it is given (a context manager is no tensor): what it
    # enters may change what every later op costs
    uc.record_not_known(an, node, frame, "ExitStack.enter_context", _NOT_FOLLOWED)
    return UNKNOWN


_NOT_FOLLOWED = "ExitStack.enter_context: the context it enters is not followed"
