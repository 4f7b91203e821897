"""`with (a() if test else b()) as v: body`, read as Python runs it: the test is
evaluated once, then one context manager is entered around the body. That is
`if test: with a() as v: body` / `else: with b() as v: body`, which the statement
pass runs as any `if` (decided, one branch; undecided, both as alternatives), each
branch's manager entered as a `with` item of its own (a `@contextmanager`
generator's body run around the block, `nullcontext()` doing nothing).

Items before the conditional one are entered first, as Python enters them in
order: `with a, (b if t else c): body` is `with a:` around that `if`.
"""

from __future__ import annotations

import ast

_KEY = "_shapelint_with_choice"  # the rewrite, or False, kept on the `with` node
_OTHER = "_shapelint_with_other"  # set on the `else` branch's `with` of a rewrite


def other_branch(stmt: ast.With | ast.AsyncWith) -> bool:
    """Whether stmt is the `else` branch of a rewrite: its body's nodes are the `if`
    branch's too, so its records are kept under keys of their own (`keyed_apart`),
    or an undecided test would find one branch's records in the other's place."""
    return bool(stmt.__dict__.get(_OTHER))


def keyed_apart(records: dict) -> dict:
    """The `else` branch's records, each under its key tagged as that branch's."""
    return {(*key, "<else>"): rec for key, rec in records.items()}


def rewritten(stmt: ast.With | ast.AsyncWith) -> ast.stmt:
    """stmt as the `if` its first conditional item amounts to; stmt itself where
    no item is a conditional expression (or stmt is an `async with`)."""
    known = stmt.__dict__.get(_KEY)
    if known is None:
        known = _rewrite(stmt) or False
        setattr(stmt, _KEY, known)
    return known or stmt


def _rewrite(stmt: ast.With | ast.AsyncWith) -> ast.stmt | None:
    if not isinstance(stmt, ast.With):
        return None
    at = next(
        (i for i, it in enumerate(stmt.items) if isinstance(it.context_expr, ast.IfExp)), None
    )
    if at is None:
        return None
    item = stmt.items[at]
    choice: ast.IfExp = item.context_expr  # type: ignore[assignment]
    rest = stmt.items[at + 1 :]

    def branch(expr: ast.expr, other: bool) -> ast.With:
        chosen = ast.copy_location(ast.withitem(expr, item.optional_vars), expr)
        inner = ast.With(items=[chosen, *rest], body=stmt.body, type_comment=None)
        setattr(inner, _OTHER, other)
        return ast.copy_location(inner, stmt)

    test = ast.If(
        test=choice.test,
        body=[branch(choice.body, False)],
        orelse=[branch(choice.orelse, True)],
    )
    test = ast.copy_location(test, stmt)
    if at == 0:
        return test
    outer = ast.With(items=stmt.items[:at], body=[test], type_comment=None)
    return ast.copy_location(outer, stmt)
