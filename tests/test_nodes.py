"""analysis/nodes.py: the walks it keeps on a node give what ast.walk gives, in its
order, and never make a reference cycle (the driver frees trees by reference
counting)."""

from __future__ import annotations

import ast
import gc

import pytest

from shapelint.analysis import nodes

SOURCE = """
import os, numpy as np
from torch import nn as tnn

class Block(tnn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.proj = tnn.Linear(dim, dim)
        if depth > 0:
            self.child = Block(dim, depth - 1)
        x = [y for y in range(3) if y != dim]
        del x
        try:
            pass
        except ValueError as err:
            raise
        match dim:
            case [a, *rest]:
                pass
            case {"k": v, **others}:
                pass
            case _:
                pass
        def inner(q=(w := 1)):
            global G
            return q
        lam = lambda z: z
        return None
"""


def tree() -> ast.Module:
    return ast.parse(SOURCE)


def test_nodes_of_is_ast_walk_in_order():
    t = tree()
    init = t.body[2].body[0]
    for kind in (ast.Call, ast.Name, ast.Compare, ast.expr, (ast.Import, ast.ImportFrom)):
        want = [n for n in ast.walk(init) if isinstance(n, kind)]
        assert nodes.nodes_of(init, kind) == want
        assert nodes.nodes_of(init, kind) == want  # asked again: the kept lists
    # Every node but the leaves that say how a node is used (Load, Add, Eq).
    leaves = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
    want = [n for n in ast.walk(init) if not isinstance(n, leaves)]
    assert nodes.nodes_of(init, ast.AST) == want
    assert len(want) < len(list(ast.walk(init)))
    with pytest.raises(ValueError):
        nodes.nodes_of(init, ast.Load)
    fn = (ast.FunctionDef, ast.AsyncFunctionDef)
    assert nodes.nodes_of(init, fn)[0] is init  # the root, first, when of kind
    assert nodes.walk(t) == [n for n in ast.walk(t) if not isinstance(n, leaves)]
    for n in ast.walk(t):
        assert nodes.children(n) == list(ast.iter_child_nodes(n))


def test_stored_names_and_class_nodes():
    t = tree()
    cls = t.body[2]
    init = cls.body[0]
    want = {
        n.id for n in ast.walk(init) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    assert nodes.stored_names(init) == want
    assert {"x", "y", "w", "lam"} <= want
    compares = [n for n in ast.walk(cls) if isinstance(n, ast.Compare)]
    assert sorted(map(id, nodes.nodes_in_class(cls, ast.Compare))) == sorted(map(id, compares))


def test_kept_walks_make_no_reference_cycle():
    gc.collect()
    gc.disable()
    try:
        t = tree()
        for n in list(ast.walk(t)):
            nodes.nodes_of(n, ast.Name)
            nodes.stored_names(n)
        del t, n
        assert gc.collect() == 0
    finally:
        gc.enable()
