"""The SHP307-SHP314 catalog examples, run through the stubs.

The lead's catalog test runs every snippet through the full analysis. Until that
is merged, a tiny straight-line evaluator stands in for it here (imports, calls,
methods, properties, operators, modules): enough to show that each ``invalid``
example reaches its code through the stubs and each ``valid`` one reaches none.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import pytest
import torch

from shapelint.notation.symbolic import Expr
from shapelint.ops.stub_ops import is_property, stub_call
from shapelint.ops.values import (
    UNKNOWN,
    BoolV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    StrV,
    TupleV,
    Value,
)
from shapelint.rules import RULES
from shapelint.rules.torch_ops import RULES as TORCH_RULES

_BINOPS = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "truediv",
    ast.FloorDiv: "floordiv",
    ast.MatMult: "matmul",
    ast.Pow: "pow",
}


@dataclass
class _Method:
    name: str
    receiver: Value


class _Eval:
    def __init__(self) -> None:
        self.modules: dict[str, str] = {}
        self.env: dict[str, Value] = {}
        self.codes: list[str] = []

    def module(self, tree: ast.Module) -> None:
        for node in tree.body:
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.modules[a.asname or a.name.split(".")[0]] = (
                        a.name if a.asname else a.name.split(".")[0]
                    )
            elif isinstance(node, ast.ImportFrom):
                for a in node.names:
                    self.modules[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.FunctionDef):
                self.env = {}
                for stmt in node.body:
                    if isinstance(stmt, ast.Assign):
                        (target,) = stmt.targets
                        self.env[target.id] = self.value(stmt.value)  # type: ignore[attr-defined]
                    elif isinstance(stmt, (ast.Return, ast.Expr)) and stmt.value is not None:
                        self.value(stmt.value)

    def call(self, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        res = stub_call(name, args, kwargs)
        if res is None:
            return UNKNOWN
        self.codes.extend(i.code for i in res.issues)
        return res.value

    def value(self, node: ast.expr):
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                return BoolV(v)
            if isinstance(v, int):
                return IntV(Expr.const(v))
            if isinstance(v, float):
                return FloatV(v)
            if isinstance(v, str):
                return StrV(v)
            return NoneV()
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.value(node.operand)
            if isinstance(inner, IntV) and inner.value is not None:
                return IntV(-inner.value)
            return self.call("operator.neg", [inner], {})
        if isinstance(node, ast.Name):
            return self.env.get(node.id, self.modules.get(node.id, UNKNOWN))
        if isinstance(node, (ast.List, ast.Tuple)):
            return TupleV(tuple(self.value(e) for e in node.elts))
        if isinstance(node, ast.Attribute):
            base = self.value(node.value)
            if isinstance(base, str):
                return f"{base}.{node.attr}"
            if isinstance(base, ObjectV):
                return base.attr(node.attr)
            name = f"torch.Tensor.{node.attr}"
            if is_property(name):
                return self.call(name, [base], {})
            return _Method(name, base)
        if isinstance(node, ast.BinOp):
            op = _BINOPS[type(node.op)]
            return self.call(f"operator.{op}", [self.value(node.left), self.value(node.right)], {})
        if isinstance(node, ast.Call):
            fn = self.value(node.func)
            args = [self.value(a) for a in node.args]
            kwargs = {k.arg: self.value(k.value) for k in node.keywords if k.arg}
            if isinstance(fn, str):
                return self.call(fn, args, kwargs)
            if isinstance(fn, _Method):
                return self.call(fn.name, [fn.receiver, *args], kwargs)
            if isinstance(fn, ObjectV):
                return self.call(f"{fn.kind}.__call__", [fn, *args], kwargs)
        return UNKNOWN


def codes_of(snippet: str) -> list[str]:
    ev = _Eval()
    ev.module(ast.parse(snippet))
    return ev.codes


CASES = [
    (rule.code, kind, i, snippet)
    for rule in TORCH_RULES
    for kind, snippets in (("invalid", rule.invalid), ("valid", rule.valid))
    for i, snippet in enumerate(snippets)
]


@pytest.mark.parametrize(
    "code, kind, i, snippet", CASES, ids=[f"{c}-{k}{i}" for c, k, i, _ in CASES]
)
def test_catalog_examples(code, kind, i, snippet):
    found = codes_of(snippet)
    if kind == "invalid":
        assert code in found, found
    else:
        assert not found, found


@pytest.mark.parametrize(
    "code, kind, i, snippet", CASES, ids=[f"{c}-{k}{i}" for c, k, i, _ in CASES]
)
def test_catalog_examples_are_what_torch_does(code, kind, i, snippet):
    """Each invalid example raises in torch; each valid one runs."""
    namespace: dict = {}
    exec(compile(snippet, f"<{code}>", "exec"), namespace)
    (fn,) = [
        v
        for k, v in namespace.items()
        if callable(v) and not k.startswith("_") and k not in ("torch", "F")
    ]
    if kind == "invalid":
        with pytest.raises((RuntimeError, ValueError, IndexError)):
            fn()
    else:
        fn()


def test_rules_are_in_the_catalog():
    for rule in TORCH_RULES:
        assert RULES[rule.code] is rule
        assert rule.invalid and rule.valid, rule.code
        assert rule.severity == "error"
    assert [r.code for r in TORCH_RULES] == [f"SHP3{n:02d}" for n in range(7, 15)]
    assert torch  # the examples import it
