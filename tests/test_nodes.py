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


def test_descendants_are_ast_walk_s_less_the_root_and_kept():
    # frame_locals and one_shot read a function whole at each call: off the kept
    # index, the same nodes as a walk, one list however often asked
    leaves = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
    init = tree().body[2].body[0]
    want = [n for n in ast.walk(init) if not isinstance(n, leaves)][1:]
    got = nodes.descendants(init)
    assert got == want and init not in got
    assert nodes.descendants(init) is got
    assert nodes.nodes_of(init, ast.Call) == [n for n in got if isinstance(n, ast.Call)]


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


EVERY_KIND = '''
from . import a as b
import c.d
async def f(x, /, y=1, *args, k, m=2, **kw) -> int:
    """doc"""
    global G
    def g():
        nonlocal x
    async with x as (p, q), y:
        async for i in aiter(x):
            await i
    d = {1: 2, **kw, **{3: 4}}
    s = {*args}
    t = x[1:2, ::3, ...]
    u = f"{x!r:>{y}} {k=}"
    v = [-i async for i in x if not i]
    w = (a if b else c for a, *c in x)
    x.y @= lambda z=None, *, r=None: z or r
    z: list[int] = (yield) or (yield from x)
    try:
        raise ValueError from None
    except* (TypeError, ValueError) as e:
        del e
    finally:
        assert x, "message"
    while x < y <= k:
        break
    else:
        continue
    match x:
        case Point(1, y=[2, *rest], z={"k": 3, **others}) | None as p if p:
            pass
        case -1 | 1.5 | "s" | b"b" | True | C.D:
            pass
    return {k: v for k, v in kw.items()} is not None
@dec
class K(B, metaclass=M):
    a: int
'''


def test_the_walk_gives_every_node_ast_walk_gives():
    # The kept walk reads the fields CPython declares as nodes (lists and single
    # nodes alike), and tests each value where a class does not declare them.
    leaves = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
    t = ast.parse(EVERY_KIND)
    want = [n for n in ast.walk(t) if not isinstance(n, leaves)]
    assert nodes.walk(t) == want
    kinds = {type(n) for n in want}
    assert {ast.MatchClass, ast.MatchMapping, ast.Global, ast.Nonlocal, ast.TryStar} <= kinds
    assert {ast.Dict, ast.arguments, ast.ImportFrom, ast.FormattedValue, ast.Slice} <= kinds

    class Odd(ast.expr):
        """Not a signature: each field is tested, as a list or as one node."""

        _fields = ("parts", "head", "label")

    odd = Odd(parts=[ast.Name("a", ast.Load()), "x", None], head=ast.Constant(1), label="n")
    call = ast.Call(odd, [], [])  # keywords left out, as a node built by hand may
    del call.keywords
    assert nodes.walk(call) == [call, odd, odd.parts[0], odd.head]


def test_parents_are_ast_walk_s_parents_but_of_the_leaves():
    leaves = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
    for source in (SOURCE, EVERY_KIND):
        t = ast.parse(source)
        for root in (t, *[n for n in ast.walk(t) if isinstance(n, ast.FunctionDef)]):
            want = {
                id(c): n
                for n in ast.walk(root)
                for c in ast.iter_child_nodes(n)
                if not isinstance(c, leaves)
            }
            unkept = nodes.parent_map(root)
            assert unkept.keys() == want.keys()
            assert all(unkept[k] is want[k] for k in want)
            assert nodes.parent_map(root) is not unkept  # built afresh, not kept
            got = nodes.parents(root)
            assert got == unkept
            assert nodes.parents(root) is got  # kept on the node
    t = ast.parse(EVERY_KIND)
    assert len(nodes.parents(t)) == len(nodes.walk(t)) - 1
