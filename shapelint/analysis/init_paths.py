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

A flag that an `IfExp` stored in an attribute decides (vit's `self.to_out =
nn.Sequential(...) if project_out else nn.Identity()`) is such a flag too: `check`
keeps the join of both layers there, so neither layer's output is met. Its test may
read a name the constructor binds once, at its top, from a settled expression
(`project_out = not (heads == 1 and dim_head == dim)`): that name is as fixed for the
run as the expression. The path's instance differs from the kept one where it holds
another tensor or another layer.

A path whose truth may rest on two values being equal (the Identity's, where `heads ==
1 and dim_head == dim`; `if dim == 4:`), of an `IfExp` or of an `if`, is not run: the
analysis does not hold that equality there, so a conflict it met could be one Python
never meets (the Identity's 8 where 4 is annotated, when the input's 8 made dim 8).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from typing import TYPE_CHECKING

from shapelint.analysis import path_split
from shapelint.analysis.callable_values import ChoiceV
from shapelint.analysis.module_lists import ModuleListV
from shapelint.ops.values import ObjectV, TensorV

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer, FuncDef

# A constructor with more flag paths than this is checked on its last path only.
MAX_PATHS = 6

# The assumption a method's run on a path's instance holds: no test of the method's
# is decided by it (no expression dumps to this), but every undecided one's branches
# keep their findings to themselves (statement_exec.exec_if).
ON_PATH = "<a path of the constructor's flag>"

# What a path's instance may hold that a method's run meets: tensors and layers.
_HELD = (TensorV, ObjectV, ModuleListV, ChoiceV)


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


def _once_bound(init: ast.FunctionDef) -> dict[str, ast.expr]:
    """Each local name that one top-level `name = value` of the constructor binds and
    nothing else in it does: `project_out = not (heads == 1 and dim_head == dim)`."""
    counts: dict[str, int] = {}
    for n in ast.walk(init):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            counts[n.id] = counts.get(n.id, 0) + 1
    for a in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs):
        counts[a.arg] = counts.get(a.arg, 0) + 1
    return {
        s.targets[0].id: s.value
        for s in init.body
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and counts.get(s.targets[0].id) == 1
    }


def _settled(an: Analyzer, test: ast.expr, init: ast.FunctionDef, once: dict) -> ast.expr | None:
    """The test as the constructor's parameters spell it, where it is settled
    (path_split.settled): a name bound once from a settled expression is that
    expression, fixed for the run as its parts are. None: not settled."""
    bare = test
    while isinstance(bare, ast.UnaryOp) and isinstance(bare.op, ast.Not):
        bare = bare.operand
    if isinstance(bare, ast.Name) and bare.id in once:
        spelt = once[bare.id]
        negations = 0
        node = test
        while node is not bare:
            node, negations = node.operand, negations + 1  # type: ignore[attr-defined]
        for _ in range(negations):
            spelt = ast.UnaryOp(ast.Not(), spelt)
        return spelt if path_split.settled(an, spelt, init) else None
    return test if path_split.settled(an, test, init) else None


def _equates(an: Analyzer, test: ast.expr, truth: bool, depth: int = 0) -> bool:
    """Whether the test's having this truth may rest on two values being equal
    (`heads == 1 and dim_head == dim` true): the analysis does not hold that
    equality on the path, so a conflict it meets there may be none. A comparison
    with a string, None or a bool constant equates no sizes; a call of a function
    that returns a test of its arguments is that test (`exists(time_emb_dim)`,
    `return x is not None`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _equates(an, test.operand, not truth, depth)
    if isinstance(test, ast.BoolOp):
        return any(_equates(an, v, truth, depth) for v in test.values)
    if isinstance(test, ast.Name):
        return False
    if isinstance(test, ast.Call) and depth < _MAX_INLINED:
        returned = returned_test(an, test)
        if returned is not None:
            return _equates(an, returned, truth, depth + 1)
    if isinstance(test, ast.Compare):
        sides = [test.left, *test.comparators]
        if any(
            isinstance(x, ast.Constant) and (x.value is None or isinstance(x.value, (str, bool)))
            for x in sides
        ):
            return False
        closed = (ast.Eq, ast.LtE, ast.GtE, ast.Is, ast.In)
        open_ = (ast.NotEq, ast.Lt, ast.Gt, ast.IsNot, ast.NotIn)
        return any(isinstance(op, closed if truth else open_) for op in test.ops)
    return True


# Calls inlined within one test at most (a function returning a call of itself).
_MAX_INLINED = 4


class _Arguments(ast.NodeTransformer):
    def __init__(self, given: dict[str, ast.expr]):
        self.given = given

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.given.get(node.id, node)


def returned_test(an: Analyzer, call: ast.Call) -> ast.expr | None:
    """What a call of a function of the module returns, where its body is one
    `return EXPR` (a docstring aside) over its plain positional parameters and the
    call gives each one by position: EXPR with the arguments in their place."""
    fd = an.functions.get(call.func.id) if isinstance(call.func, ast.Name) else None
    if fd is None or fd.node.decorator_list or call.keywords:
        return None
    body = fd.node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    params = fd.node.args
    if params.posonlyargs or params.vararg or params.kwonlyargs or params.kwarg:
        return None
    if len(params.args) != len(call.args) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    given = {p.arg: a for p, a in zip(params.args, call.args, strict=True)}
    return _Arguments(given).visit(copy.deepcopy(body[0].value))


def _choices(init: ast.FunctionDef, first: str) -> Iterator[tuple[list[ast.expr], set[str]]]:
    """Each `self.x = a if flag else b` at the top of the constructor (a chain of
    `else c if flag2 else d` as an `elif` chain): its tests, and the attributes stored."""
    for stmt in init.body:
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        if not isinstance(value, ast.IfExp):
            continue
        stored = _stores([stmt], first)
        tests = [value.test]
        while isinstance(value.orelse, ast.IfExp):
            value = value.orelse
            tests.append(value.test)
        if stored:
            yield tests, stored


def _choice_paths(an: Analyzer, fd: FuncDef, init: ast.FunctionDef, first: str) -> list:
    """The paths of each settled flag an `IfExp` stored in an attribute fd reads
    decides; a path whose truth may rest on an equality of sizes is left out."""
    reads = _self_reads(fd)
    once = _once_bound(init)
    out: list = []
    for tests, stored in _choices(init, first):
        if not stored & reads:
            continue
        spelt = [_settled(an, t, init, once) for t in tests]
        if any(s is None for s in spelt):
            continue
        before: list[tuple[ast.expr, bool]] = []
        for test in tests:
            assumed = [*before, (test, True)]
            if not _equating(an, [(s, t) for s, (_, t) in zip(spelt, assumed)]):
                out.append((_assume(assumed), _said(test, True)))
            before.append((test, False))
        if not _equating(an, [(s, False) for s in spelt]):
            out.append((_assume(before), _said(tests[-1], False)))
    return out


def paths(an: Analyzer, fd: FuncDef, init: FuncDef, path_attrs: frozenset[str]) -> list:
    """(assumed truths, where) of each path of a settled flag at the top of init
    whose branch stores an attribute fd reads that __init__ stores on a path, and
    of each settled flag that chooses the value such an attribute stores."""
    args = init.node.args.args
    if not args:
        return []
    first = args[0].arg
    out: list = _choice_paths(an, fd, init.node, first)
    wanted = _self_reads(fd) & path_attrs
    if not wanted:
        return out[:MAX_PATHS]
    for chain in _chains(init.node):
        if not all(path_split.settled(an, link.test, init.node) for link in chain):
            continue
        before: list[tuple[ast.expr, bool]] = []
        for link in chain:
            taken = [*before, (link.test, True)]
            if _stores(link.body, first) & wanted and not _equating(an, taken):
                out.append((_assume(taken), _said(link.test, True)))
            before.append((link.test, False))
        last = chain[-1]
        if last.orelse and _stores(last.orelse, first) & wanted and not _equating(an, before):
            out.append((_assume(before), _said(last.test, False)))
    return out[:MAX_PATHS]


def _equating(an: Analyzer, tests: list[tuple[ast.expr, bool]]) -> bool:
    return any(_equates(an, test, truth) for test, truth in tests)


def differs(path: dict, kept: dict, names: frozenset[str]) -> bool:
    """Whether the path's instance holds a tensor or a module the kept one does not:
    a method's run on it may meet what the kept one's did not."""
    return any(
        isinstance(path.get(k), _HELD) and path.get(k) != kept.get(k) for k in names if k in path
    )


def reads(fd: FuncDef) -> frozenset[str]:
    return _self_reads(fd)
