"""Integer literals as the source writes them: `3` and `-3` (ast reads the minus
as a unary operator on the constant). `True` is an int to Python but no literal
size: it is not one here."""

from __future__ import annotations

import ast


def int_literal(node: ast.expr) -> int | None:
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -1, node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None
