"""The paths of a function apart from an undecided test whose truth one run cannot
change: a constructor's flag (`if self.seq_pool:`, `if mode == 'learnable':`).

Where both branches of such an `if` at the top of a function bind names the rest of
the function reads, the join after it keeps what the two paths have in common: a
pooled `[b, d]` on one path and `[b, n, d]` on the other is a tensor of unknown rank,
and a conflict that holds on one path (the pooled tensor's rank against the return's
annotation) is lost. So, in `check` only, the `if` and the rest of the function run
once more per truth of the test, in a pass of their own whose records and facts are
dropped: a later test of the same expression takes the same truth there (Python's
run cannot change it: nothing in the function binds a name it reads), and a branch
of any other undecided test runs muted (its truth may go with this one's through the
constructor, `self.use_cls = not seq_pool`: no finding rests on a path Python may
never take). An error such a run meets that the joined run does not is reported,
stating the path; a path the analysis finds decided the other way says nothing.
"""

from __future__ import annotations

import ast
import copy
from typing import TYPE_CHECKING

from shapelint.analysis import argument_runs, in_place, instance_state
from shapelint.analysis.nodes import nodes_of, walk
from shapelint.notation.symbolic import fact_scope
from shapelint.ops.values import TensorV
from shapelint.rules import severity_of

if TYPE_CHECKING:
    from shapelint.analysis.defs import Analyzer

# Builtins whose result, on values one run cannot change, is fixed too.
_PURE_BUILTINS = frozenset({"isinstance", "hasattr", "callable", "len"})

# Kept on the function's node: (names it binds, attributes of its first parameter it
# stores); on a class's node, the attributes its methods but __init__ store. (Keyed by
# id() in a dict of the module, an entry outlived its tree and answered for whatever
# node later took that id, another file's function included.)
_BOUND = "_shapelint_path_bound"
_CHANGED = "_shapelint_path_changed"
# On the function's node: each name and `.attr` its body's top-level statements
# read or store, with the index of the last statement that holds it (worth).
_LAST = "_shapelint_path_last"


def key(test: ast.expr) -> tuple[str, bool]:
    """The test without its leading `not`s, and whether their number is odd."""
    negated = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    return ast.dump(test), negated


def assumed(frame, test: ast.expr) -> bool | None:
    """The truth a path split gave this test (or its negation) on this path."""
    taken = getattr(frame, "assumed", None)
    if not taken:
        return None
    k, negated = key(test)
    truth = taken.get(k)
    return None if truth is None else truth != negated


def bound(fnode: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
    got = fnode.__dict__.get(_BOUND)
    if got is not None:
        return got
    args = getattr(fnode, "args", None)
    first = args.args[0].arg if args is not None and args.args else None
    # Read off the function's node index (nodes.py), which its other checks share:
    # an `ast.walk` of every function with a top-level `if` was a tenth of a check.
    names = {n.id for n in nodes_of(fnode, ast.Name) if not isinstance(n.ctx, ast.Load)}
    for kind in (ast.Global, ast.Nonlocal):
        for node in nodes_of(fnode, kind):
            names.update(node.names)
    for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        names.update(node.name for node in nodes_of(fnode, kind) if node is not fnode)
    for kind in (ast.Import, ast.ImportFrom):
        for node in nodes_of(fnode, kind):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    attrs = {
        node.attr
        for node in nodes_of(fnode, ast.Attribute)
        if not isinstance(node.ctx, ast.Load)
        and isinstance(node.value, ast.Name)
        and node.value.id == first
    }
    got = (frozenset(names), frozenset(attrs))
    setattr(fnode, _BOUND, got)
    return got


def _changed_later(cls) -> frozenset[str]:
    """The attributes a method of the class other than __init__ stores on its
    instance (`self.cache = ...`): a test of one may change within a run."""
    got = cls.node.__dict__.get(_CHANGED)
    if got is not None:
        return got
    attrs: set[str] = set()
    for fd in cls.methods.values():
        if fd.node.name != "__init__":
            attrs |= bound(fd.node)[1]
    got = frozenset(attrs)
    setattr(cls.node, _CHANGED, got)
    return got


def settled(an: Analyzer, test: ast.expr, fnode: ast.AST, cls=None) -> bool:
    """Whether the test reads only what one run of the function cannot change: names
    and attributes of its first parameter that nothing in it binds, constants, and
    comparisons, `not`, `and`/`or` and calls of the module's functions or of pure
    builtins over them; and at least one name."""
    names, attrs = bound(fnode)
    if cls is not None:
        attrs = attrs | _changed_later(cls)
    args = getattr(fnode, "args", None)
    first = args.args[0].arg if args is not None and args.args else None
    seen: list[bool] = []
    return _settled_part(an, test, names, attrs, first, seen) and bool(seen)


def _settled_part(an: Analyzer, node: ast.expr, names, attrs, first, seen: list) -> bool:
    """settled's test of one part of the expression (a function of the module, not a
    closure calling itself: that cycle would outlive the file's analysis until a
    collection); `seen` gets an item for each name read."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        seen.append(True)
        return node.id not in names
    parts: list[ast.expr]
    if isinstance(node, ast.Attribute):
        root = node.value
        if isinstance(root, ast.Name) and root.id == first and node.attr in attrs:
            return False
        parts = [root]
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        parts = [node.operand]
    elif isinstance(node, ast.BoolOp):
        parts = list(node.values)
    elif isinstance(node, ast.Compare):
        parts = [node.left, *node.comparators]
    elif isinstance(node, (ast.Tuple, ast.Set, ast.List)):
        parts = list(node.elts)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        f = node.func.id
        if f in names or not (f in _PURE_BUILTINS or f in an.functions):
            return False
        parts = [*node.args, *(k.value for k in node.keywords)]
    else:
        return False
    return all(_settled_part(an, n, names, attrs, first, seen) for n in parts)


def worth(fnode: ast.AST, i: int) -> bool:
    """Whether the branches of the `if` fnode.body[i] bind a name, or store an
    attribute, that the statements after it read (or store)."""
    stmt = fnode.body[i]
    stored: set[str] = set()
    for node in (n for s in (*stmt.body, *stmt.orelse) for n in walk(s)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stored.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            stored.add("." + node.attr)
    if not stored:
        return False
    last = _last_use(fnode)
    return any(last.get(name, -1) > i for name in stored)


def _last_use(fnode: ast.AST) -> dict[str, int]:
    """Each name, and attribute as `.attr`, in fnode's top-level statements (any
    context), with the index of the last statement that holds it: one walk of the
    body per function, where a walk of the rest per `if` was quadratic."""
    got = fnode.__dict__.get(_LAST)
    if got is None:
        got = {}
        for i, stmt in enumerate(fnode.body):
            for node in walk(stmt):
                if isinstance(node, ast.Name):
                    got[node.id] = i
                elif isinstance(node, ast.Attribute):
                    got["." + node.attr] = i
        setattr(fnode, _LAST, got)
    return got


def splits(an: Analyzer, frame, body: list[ast.stmt], i: int) -> bool:
    """Whether body[i] is an `if` at the top of a function, in `check`, on a settled
    test, whose branches bind what the rest reads (not inside a path split): the
    caller takes a snapshot, runs it, and follows its paths where the join was
    lossy (exec_if sets frame.lost)."""
    if an.specialize or getattr(frame, "assumed", None) or i + 1 == len(body):
        return False
    func = frame.func
    if func is None or body is not getattr(func.node, "body", None):
        return False
    if func.node.name == "__init__":
        # a constructor builds layers, runs few ops; run once per construction, each
        # split there costs a rerun of most of it (x-transformers' AttentionLayers)
        return False
    return worth(func.node, i) and settled(an, body[i].test, func.node, func.cls)


def lossy(a: dict, b: dict, joined: dict) -> bool:
    """Whether the join of two paths' names lost a tensor's shape that each path
    knew apart: a dim, or the rank (`[b, d]` and `[b, n, d]`)."""
    for k, va in a.items():
        vb = b.get(k)
        if va is vb or not (isinstance(va, TensorV) and isinstance(vb, TensorV)):
            continue
        j = joined.get(k)
        if j == va or j == vb:
            continue
        if not isinstance(j, TensorV) or j.shape is None:
            return True
        if any(d is None for d in j.shape) and va.shape is not None and vb.shape is not None:
            return True
    return False


def snapshot(frame):
    """The frame as it stands, its containers copied: where a path split starts."""
    inner = copy.copy(frame)
    for name in (
        "env",
        "records",
        "param_values",
        "aliases",
        "learnt",
        "defaults",
    ):
        setattr(inner, name, dict(getattr(frame, name)))
    for name in ("returns", "exits"):
        setattr(inner, name, list(getattr(frame, name)))
    for name in ("ran", "locals", "learnt_params", "global_names", "nonlocal_names"):
        setattr(inner, name, set(getattr(frame, name)))
    in_place.LIVE.add(inner)
    return inner


def _shadow(frame, test: ast.expr, truth: bool):
    inner = snapshot(frame)
    k, negated = key(test)
    inner.assumed = {k: truth != negated}
    inner.infeasible = False
    inner.lost = None
    return inner


def follow(an: Analyzer, frame, body: list[ast.stmt], i: int) -> list:
    """The errors a run of body[i:] from frame (a snapshot taken before body[i] ran)
    meets on each path of body[i]'s test, each stating its path; the caller reports
    those the joined run did not meet."""
    stmt = body[i]
    bare = stmt.test
    while isinstance(bare, ast.UnaryOp) and isinstance(bare.op, ast.Not):
        bare = bare.operand  # the path said of the test itself: `x` is false, not `not x` true
    negated = key(stmt.test)[1]
    try:
        test = ast.unparse(bare)
    except (ValueError, RecursionError):  # pragma: no cover - unparse of a parsed tree
        return []
    test = test if len(test) <= 60 else test[:59] + "…"
    out = []
    for truth in (True, False):
        inner = _shadow(frame, stmt.test, truth)
        state = instance_state.fork(an)
        said = argument_runs.said_before(an)
        try:
            with fact_scope(inherit=True), an.diverted() as found, an.naming.paused():
                an.exec_block(body[i:], inner)
        finally:
            instance_state.restore(state)
            argument_runs.say_again(an, said)
        if inner.infeasible:
            continue
        holds = "true" if truth != negated else "false"
        where = f"on the path where `{test}` is {holds} (line {stmt.lineno})"
        for d in found:
            if d.code.startswith(("SHP2", "SHP3")) and severity_of(d.code) == "error":
                out.append((d, where))
    return out
