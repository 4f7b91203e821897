"""`functools.reduce(op, items[, initial])` where op is one of the operator module's
binary functions (`operator.add`, `__add__`, `mul`, ...): the items known one by one,
folded from the left, each step the expression `a op b` (speechbrain's padding,
`reduce(__add__, [(k // 2, k // 2 - 1) for k in sizes])`, is the tuples joined), or
`torch.promote_types` over torch dtypes (promote_types.py).
Any other function reduce is handed is called where the analysis is not
(`callable_values.computing_function`), and so are tensor items: each step would be costed at
the one call's position, where records merge (`reduce(operator.matmul, [x, w, w])`
would count one product of two)."""

from __future__ import annotations

import ast

from shapelint.analysis import expressions, module_lists, promote_types
from shapelint.analysis.defs import Analyzer, Frame
from shapelint.ops.values import UNKNOWN, TensorV, Value

QUALNAME = "functools.reduce"

_BINARY = {
    "add": ast.Add,
    "sub": ast.Sub,
    "mul": ast.Mult,
    "matmul": ast.MatMult,
    "truediv": ast.Div,
    "floordiv": ast.FloorDiv,
    "mod": ast.Mod,
    "pow": ast.Pow,
    "and": ast.BitAnd,
    "or": ast.BitOr,
    "xor": ast.BitXor,
}


def fold(
    an: Analyzer, node: ast.Call, args: list[Value], kwargs: dict, frame: Frame
) -> Value | None:
    """The value of the reduce call node, or None where it is not one read here."""
    if kwargs or len(args) not in (2, 3) or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    qual = an.qualname_of(node.args[0], frame)
    module, _, name = (qual or "").rpartition(".")
    op = _BINARY.get(name.strip("_")) if module == "operator" else None
    items = module_lists.as_items(args[1])
    if qual == promote_types.QUALNAME and items is not None:
        return promote_types.fold((args[2], *items) if len(args) == 3 else items)
    if op is None or items is None:
        return None
    items = (args[2], *items) if len(args) == 3 else items
    if not items:
        return None  # Python's TypeError: an empty sequence and no initial value
    if any(isinstance(i, TensorV) or i is UNKNOWN for i in items):
        return None
    total = items[0]
    for item in items[1:]:
        total = expressions.binop(an, op(), total, item, node, frame, node.args[1], node.args[1])
    return total
