"""The paths of a constructor's flag, for the check of a method against its jaxtyping
annotations: cct's `if positional_embedding == 'none': ... elif positional_embedding
== 'learnable': self.positional_emb = nn.Parameter(torch.zeros(1, n, dim)) else: ...`.

`check` keeps one value per attribute of the module being built, the last path's
(`recorder.SelfRecorder.on_a_path` says which attributes a path stored), so a method
reading one is checked on the instance the last branch builds only: a conflict of the
learnable embedding with the annotated input is never met. A flag's truth is fixed
for the instance's life where the test reads only the constructor's parameters that
its body never rebinds (`path_split.settled`): each branch of such an `if` at the top
of `__init__` (an `elif` chain's branches one by one) is an instance someone may
build. So the method runs once more on the attributes `__init__` stores on each path
whose tensors differ from the last path's, in a pass of its own whose findings are
dropped but its errors (the run of `__init__` on the path, and each undecided test of
the method, whose truth may go with the flag's, keep their findings to themselves, as
a path split's do); an error the run on the instance `check` keeps did not meet is
reported, stating the path.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from shapelint.analysis import path_split
from shapelint.ops.values import TensorV

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, FuncDef

# A constructor with more flag paths than this is checked on its last path only.
MAX_PATHS = 6

# The assumption a method's run on a path's instance holds: no test of the method's
# is decided by it (no expression dumps to this), but every undecided one's branches
# keep their findings to themselves (statement_exec.exec_if).
ON_PATH = "<a path of the constructor's flag>"


def _self_reads(fd: FuncDef) -> frozenset[str]:
    """The attributes of its first parameter a method reads."""
    args = fd.node.args.args
    if not args:
        return frozenset()
    first = args[0].arg
    return frozenset(
        n.attr
        for n in ast.walk(fd.node)
        if isinstance(n, ast.Attribute)
        and isinstance(n.ctx, ast.Load)
        and isinstance(n.value, ast.Name)
        and n.value.id == first
    )


def _stores(block: list[ast.stmt], first: str) -> set[str]:
    return {
        n.attr
        for s in block
        for n in ast.walk(s)
        if isinstance(n, ast.Attribute)
        and isinstance(n.ctx, ast.Store)
        and isinstance(n.value, ast.Name)
        and n.value.id == first
    }


def _chains(init: ast.FunctionDef) -> Iterator[list[ast.If]]:
    """Each `if` at the top of the constructor with its `elif`s."""
    for stmt in init.body:
        if isinstance(stmt, ast.If):
            chain = [stmt]
            while len(chain[-1].orelse) == 1 and isinstance(chain[-1].orelse[0], ast.If):
                chain.append(chain[-1].orelse[0])
            yield chain


def _said(test: ast.expr, truth: bool) -> str:
    bare = test
    while isinstance(bare, ast.UnaryOp) and isinstance(bare.op, ast.Not):
        bare, truth = bare.operand, not truth
    text = ast.unparse(bare)
    text = text if len(text) <= 60 else text[:59] + "…"
    return f"on the path where `{text}` is {'true' if truth else 'false'} (line {test.lineno})"


def _assume(tests: list[tuple[ast.expr, bool]]) -> dict[str, bool]:
    out = {}
    for test, truth in tests:
        k, negated = path_split.key(test)
        out[k] = truth != negated
    return out


def paths(an: Analyzer, fd: FuncDef, init: FuncDef, path_attrs: frozenset[str]) -> list:
    """(assumed truths, where) of each path of a settled flag at the top of init
    whose branch stores an attribute fd reads that __init__ stores on a path."""
    wanted = _self_reads(fd) & path_attrs
    args = init.node.args.args
    if not wanted or not args:
        return []
    first = args[0].arg
    out: list = []
    for chain in _chains(init.node):
        if not all(path_split.settled(an, link.test, init.node) for link in chain):
            continue
        before: list[tuple[ast.expr, bool]] = []
        for link in chain:
            if _stores(link.body, first) & wanted:
                out.append((_assume([*before, (link.test, True)]), _said(link.test, True)))
            before.append((link.test, False))
        last = chain[-1]
        if last.orelse and _stores(last.orelse, first) & wanted:
            out.append((_assume(before), _said(last.test, False)))
    return out[:MAX_PATHS]


def differs(path: dict, kept: dict, names: frozenset[str]) -> bool:
    """Whether the path's instance holds a tensor the kept one does not: a method's
    run on it may meet what the kept one's did not."""
    return any(
        isinstance(path.get(k), TensorV) and path.get(k) != kept.get(k) for k in names if k in path
    )


def reads(fd: FuncDef) -> frozenset[str]:
    return _self_reads(fd)
