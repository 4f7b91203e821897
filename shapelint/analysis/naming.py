"""SHP4xx: positional reshuffles that should be named, and their einops rewrites.

The interpreter calls these hooks with the abstract values it inferred, so the
rules can tell tensors from lists, PIL images and DataFrames. Hooks fire inner
expression first; a chain of steps (``k.view(...).transpose(1, 2)``) is judged
once, at its outermost step, and a transpose that is an operand of a matmul is
judged together with the matmul. Every finding keeps the rewrite it suggests, so
``shapelint check --fix`` (shapelint/fixes.py) applies exactly what the message
shows.

Around it: reshuffle_chain (reading chains out of the tree), notation/reshuffle
(the axis model that turns a chain into one pattern), axis_names (what the axes
are called), shape_guess (inputs of unknown shape), letter_einsum, rewrite (the
finding and its message), statements (parent lookup).
"""

from __future__ import annotations

import ast
import re
from contextlib import contextmanager
from dataclasses import dataclass

from shapelint.analysis.letter_einsum import align_letters, parse_letters
from shapelint.analysis.literals import int_literal
from shapelint.analysis.nodes import walk
from shapelint.analysis.reshuffle_chain import (
    CHAIN_FUNCS,
    CHAIN_METHODS,
    SOURCE_SYMBOL,
    TRANSPOSE_LIKE,
    Chain,
    ChainReader,
    RawStep,
    is_pure,
)
from shapelint.analysis.rewrite import Finding, Rewrite, accepted, message, quote, steps_text
from shapelint.analysis.shape_guess import (
    declared_hint,
    merge_split_pairs,
    size_text,
    templates,
    unpacked_names,
    unpacked_shape,
)
from shapelint.analysis.statements import innermost_statement, own_parents
from shapelint.notation import reshuffle as rs
from shapelint.notation.axis_names import NamePolicy
from shapelint.notation.quoting import ends
from shapelint.notation.reshuffle import Elem, Layout, Step, Unmodelled
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import UNKNOWN, TensorV, TupleV, Value, Var

EINSUM_FUNCS = {"torch.einsum", "numpy.einsum"}
MATMUL_FUNCS = {"torch.matmul": "matmul", "torch.bmm": "bmm"}
MATMUL_METHODS = {"matmul", "bmm"}
# Builtins whose results are never tensors (``list(zip(*rows))`` is Python's transpose).
_NON_TENSOR_CALLS = {
    "zip",
    "list",
    "tuple",
    "sorted",
    "range",
    "map",
    "dict",
    "set",
    "str",
    "enumerate",
    "reversed",
}
_NUMPY_ROOTS = ("numpy", "jax", "cupy")


@dataclass
class _Operand:
    node: ast.expr  # the operand expression
    base: ast.expr  # what it transposes (itself when it is not a chain)
    value: Value
    layout: Layout
    exact: bool
    top: ast.expr | None  # the chain's outermost step, if it has steps


class NamingChecker:
    def __init__(self, analyzer):
        self.analyzer = analyzer
        self.policy = NamePolicy(analyzer.options.naming)
        self.values: dict[ast.AST, Value] = {}
        self.reader = ChainReader(analyzer, self.values)
        self.findings: list[Finding] = []
        self._parents: dict[ast.AST, ast.AST] = {}
        self._handled: set[ast.AST] = set()
        self._reported: set[tuple] = set()
        self._splits: dict[int, tuple[object, dict]] = {}  # frame id -> (frame, {Expr: parts})
        self._pending: dict[tuple[int, str], _Temporary] = {}
        self._torch: bool | None = None
        self._numpy: bool | None = None
        # Per function, built on first use: name -> its Name nodes (see _temporary).
        self._names: dict[ast.AST, dict[str, list[ast.Name]]] = {}
        self._paused = 0

    @property
    def is_paused(self) -> bool:
        return self._paused > 0

    @contextmanager
    def paused(self):
        """A body run on one call's arguments (argument_runs.value_at): what its code
        names is judged on the function's own pass, not on one call's shapes."""
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1

    @contextmanager
    def resumed(self):
        """A function's own pass (its summary, a class's attributes) first reached
        inside a paused run: what its code names is judged there, or never."""
        saved, self._paused = self._paused, 0
        try:
            yield
        finally:
            self._paused = saved

    # ------------------------------------------------------------------ hooks
    def method_call(self, node, recv, method, args, kwargs, frame) -> None:
        """`recv.method(*args, **kwargs)`; recv is the receiver's abstract value."""
        if self._paused:
            return
        self.values[node.func.value] = recv
        if method in CHAIN_METHODS:
            self._remember_args(node.args, args)
            self._maybe_chain_top(node, frame)

    def attribute(self, node, recv, frame) -> None:
        """`recv.attr` read (e.g. `.T`, `.mT`)."""
        if self._paused:
            return
        self.values[node.value] = recv
        if node.attr in ("T", "mT"):
            self._maybe_chain_top(node, frame)

    def matmul(self, lnode, rnode, left, right) -> None:
        """`left @ right` (or `left @= right`, whose nodes are the target and the
        value). A transposed operand is judged with its matmul when the operand's
        own chain ends (that hook fires first, and fires even where neither
        operand is known to be a tensor), so here we only remember."""
        if self._paused:
            return
        self.values[lnode] = left
        self.values[rnode] = right

    def qualified_call(self, node, qual, args, kwargs, frame) -> None:
        """A call resolved through imports, e.g. torch.einsum / torch.matmul."""
        if self._paused:
            return
        if qual in EINSUM_FUNCS:
            self._letter_einsum(node, qual, args, frame)
        elif qual in CHAIN_FUNCS or qual in MATMUL_FUNCS:
            self._remember_args(node.args, args)
            if qual in CHAIN_FUNCS:
                self._maybe_chain_top(node, frame)

    # ------------------------------------------------------------------ plumbing
    def _remember_args(self, nodes: list[ast.expr], values: list[Value]) -> None:
        if len(nodes) == len(values) and not any(isinstance(a, ast.Starred) for a in nodes):
            for n, v in zip(nodes, values, strict=True):
                self.values[n] = v

    def _parent(self, node: ast.AST, frame) -> ast.AST | None:
        """node's parent, found within the innermost statement around it (a map of
        the whole module costs more than the rest of the analysis of a big file).
        The search starts in the frame's function, which holds node unless node is
        in its signature or at module level."""
        if node not in self._parents:
            body = getattr(getattr(frame.func, "node", None), "body", None)
            stmt = innermost_statement(body, node) if isinstance(body, list) else None
            if stmt is None:
                stmt = innermost_statement(self.analyzer.tree.body, node)
            if stmt is None:
                return None
            self._parents.update(own_parents(stmt))
        return self._parents.get(node)

    def _is_top(self, node: ast.expr, frame) -> bool:
        """No enclosing step continues the chain this node ends."""
        p = self._parent(node, frame)
        if p is None:
            return True
        if isinstance(p, ast.Attribute) and p.value is node:
            gp = self._parent(p, frame)
            if isinstance(gp, ast.Call) and gp.func is p:
                raw = self.reader.raw_step(gp, frame)
                return raw is None or not self.reader.parse(raw, frame)
            raw = self.reader.raw_step(p, frame)
            return raw is None
        if isinstance(p, ast.Call) and p.args and p.args[0] is node:
            raw = self.reader.raw_step(p, frame)
            return raw is None or raw.recv is not node or not self.reader.parse(raw, frame)
        return True

    def _may_matter(self, node: ast.expr, frame) -> bool:
        """Whether the chain ending at node can hold a reordering step or continue a
        pending temporary, from its structure alone: most view/reshape/contiguous
        chains have neither, and reading one (its parent, its arguments) costs far
        more. read() stops at the first step it cannot model, so its steps and base
        are among those seen here."""
        fid = id(frame)
        while (raw := self.reader.raw_step(node, frame)) is not None:
            if raw.reorders:
                return True
            node = raw.recv
            if isinstance(node, ast.Name) and (fid, node.id) in self._pending:
                return True
        return False

    def _torch_file(self, frame) -> bool:
        if self._torch is None:
            quals = list(self.analyzer.imports.names.values())
            self._torch = any(q == "torch" or q.startswith("torch.") for q in quals) or any(
                m.split(".")[0] == "torch" for m in self.analyzer.imports.star_modules
            )
            self._numpy = any(q.split(".")[0] in _NUMPY_ROOTS for q in quals)
        local = frame.local_imports.values()
        return self._torch or any(q.split(".")[0] == "torch" for q in local)

    def _numpy_file(self, frame) -> bool:
        self._torch_file(frame)
        return bool(self._numpy) or any(
            q.split(".")[0] in _NUMPY_ROOTS for q in frame.local_imports.values()
        )

    # ------------------------------------------------------------------ evidence
    def _is_tensor(self, chain: Chain, base_value: Value, frame) -> bool:
        """Is the chain's base a tensor? Known: yes. Known to be something else: no.
        Unknown: only when a step is one torch alone spells that way, in a file
        that imports torch (numpy arrays and DataFrames have `.T`; PIL images a
        one-argument `.transpose`)."""
        if isinstance(base_value, TensorV):
            return True
        if base_value is not UNKNOWN or not self._torch_file(frame):
            return False
        if _obviously_not_tensor(chain.base, self.reader, frame):
            return False
        return any(self._step_is_evidence(s, frame) for s in chain.steps)

    def _step_is_evidence(self, s: RawStep, frame) -> bool:
        literal = all(int_literal(a) is not None for a in s.args) and not s.keywords
        if s.kind in ("transpose", "swapaxes", "swapdims"):
            return literal and len(s.args) == 2
        if s.kind == "permute":
            items = (
                s.args[0].elts
                if len(s.args) == 1 and isinstance(s.args[0], (ast.Tuple, ast.List))
                else s.args
            )
            return len(items) >= 2 and all(int_literal(a) is not None for a in items)
        if s.kind in ("movedim", "moveaxis", "contiguous", "unflatten"):
            return True
        if s.kind == "flatten":
            return bool(s.args) and literal
        if s.kind == "view":
            return len(s.args) >= 2
        if s.kind == "mT":
            return not self._numpy_file(frame)
        return False

    # ------------------------------------------------------------------ chains
    def _maybe_chain_top(self, node: ast.expr, frame) -> None:
        if node in self._handled or not self._may_matter(node, frame):
            return
        if not self._is_top(node, frame):
            return
        chain = self.reader.read(node, frame)
        if chain is None:
            return
        key = (id(frame), chain.base.id) if isinstance(chain.base, ast.Name) else None
        prev = self._pending.pop(key, None) if key is not None else None
        if prev is not None:
            if self._merge_temporary(prev, chain, frame):
                return
            self._emit_all(prev.results)
        if not any(s.reorders for s in chain.steps):
            return
        base_value = self.reader.value(chain.base, frame)
        if not self._is_tensor(chain, base_value, frame):
            return
        site = self._matmul_site(node, frame)
        if site is not None and self._matmul(site, frame):
            return
        results = self._chain_rewrites(chain, base_value, frame)
        tmp = self._temporary(node, chain, frame) if results else None
        if tmp is not None:
            # `y = x.transpose(1, 2)` feeding `y.reshape(...)` on the next line: one
            # rewrite for both, if the next line's chain has one (else each its own).
            self._pending[(id(frame), tmp[0])] = _Temporary(
                chain, base_value, tmp[1], results, frame
            )
            return
        self._emit_all(results)

    def finish(self) -> None:
        """After the module's pass: temporaries nothing merged report their own."""
        for prev in self._pending.values():
            self._emit_all(prev.results)
        self._pending.clear()

    def _emit_all(self, results) -> None:
        for code, fnode, rw, what in results:
            self._emit(code, fnode, rw, what)

    def _temporary(self, top: ast.expr, chain: Chain, frame) -> tuple[str, ast.Assign] | None:
        """(name, assignment) when top is the whole value of `name = top`, name is
        read exactly once in the function, by the next statement, and nothing
        else binds it."""
        stmt = self._parent(top, frame)
        func = getattr(frame.func, "node", None)
        if (
            func is None
            or not isinstance(stmt, ast.Assign)
            or stmt.value is not top
            or len(stmt.targets) != 1
            or not isinstance(stmt.targets[0], ast.Name)
        ):
            return None
        name = stmt.targets[0].id
        nxt = _next_statement(func, stmt)
        if nxt is None:
            return None
        loaded = ast.Load
        if not any(
            type(n) is ast.Name and n.id == name and type(n.ctx) is loaded for n in walk(nxt)
        ):
            return None  # the usual case, told without indexing the whole function
        if func not in self._names:
            self._names[func] = _name_nodes(func)
        uses = self._names[func].get(name, [])
        loads = [n for n in uses if isinstance(n.ctx, ast.Load)]
        if len(uses) != 2 or len(loads) != 1 or not any(n is loads[0] for n in ast.walk(nxt)):
            return None
        if not is_pure(chain.base) and getattr(nxt, "value", None) is None:
            return None  # the base would be evaluated later, after other work of nxt
        return name, stmt

    def _merge_temporary(self, prev: _Temporary, chain: Chain, frame) -> bool:
        nxt_top = chain.steps[-1].node
        stmt = _statement_of(self.analyzer.tree, nxt_top)
        if not is_pure(prev.chain.base) and (
            stmt is None or getattr(stmt, "value", None) is not nxt_top
        ):
            return False
        combined = Chain(prev.chain.base, prev.chain.steps + chain.steps)
        results = self._chain_rewrites(combined, prev.base_value, frame, whole_only=True)
        if results is None:
            return False
        src = self.analyzer.src
        name = prev.assign.targets[0].id  # type: ignore[attr-defined]
        first = (
            f"{name} = {ends(src.segment(prev.chain.base), 30)}{steps_text(prev.chain.steps, src)}"
        )
        what = f"{first}` then `{name}{steps_text(chain.steps, src)}"
        for code, fnode, rw, _ in results:
            self._emit(code, fnode, rw, what, dead=[prev.assign])
        return True

    def _chain_rewrites(self, chain: Chain, base_value: Value, frame, whole_only: bool = False):
        steps = chain.steps
        end = len(steps)
        while end and steps[end - 1].kind == "contiguous":
            end -= 1  # a trailing .contiguous() stays, around the rewrite
        start = 0
        while start < end and steps[start].kind == "contiguous":
            start += 1  # a leading one belongs to the input
        core = steps[start:end]
        if not any(s.reorders for s in core):
            return []
        base = core[0].recv
        whole = self._rewrite_steps(core, base, base_value, start > 0, frame, allow_guess=True)
        if whole is not None:
            return [whole] if whole is not _IDENTITY else []
        if whole_only:
            return None
        return self._segments(core, base, base_value, frame)

    def _segments(self, core: list[RawStep], base: ast.expr, base_value: Value, frame):
        """Each run of reorders on its own, when the whole chain has no one rewrite."""
        out = []
        i = 0
        while i < len(core):
            if not core[i].reorders:
                i += 1
                continue
            j = i
            while j + 1 < len(core) and (core[j + 1].reorders or core[j + 1].kind == "contiguous"):
                j += 1
            while core[j].kind == "contiguous":
                j -= 1
            run = core[i : j + 1]
            prev = next((s for s in reversed(core[:i]) if s.kind != "contiguous"), None)
            if prev is None:
                res = self._rewrite_steps(run, base, base_value, False, frame, allow_guess=False)
            elif prev.kind in ("view", "reshape") and not any(a.infer for a in prev.sizes):
                layout = Layout([[Elem(a.size, a.hint, a.src)] for a in prev.sizes])
                proven = isinstance(base_value, TensorV)
                res = self._finish(run, prev.node, layout, frame, exact=proven, safe=True)
            else:
                res = None  # after a flatten of unknown rank: where its axes went is unknown
            if res is not None and res is not _IDENTITY:
                out.append(res)
            i = j + 1
        return out

    def _rewrite_steps(self, core, base, base_value, contiguous_input, frame, allow_guess):
        model = [s.step for s in core if s.step is not None]
        shape = base_value.shape if isinstance(base_value, TensorV) else None
        safe = _views_safe(core, contiguous_input)
        if shape is not None and not any(isinstance(d, Var) for d in shape):
            layout = Layout.of_dims(
                [(rs.frac(d) if isinstance(d, Expr) else None, declared_hint(d)) for d in shape]
            )
            res = self._finish(core, base, layout, frame, exact=True, safe=safe)
            if res is not None or not allow_guess:
                return res
        elif shape is None and (
            unpacked := unpacked_shape(frame, base, getattr(core[0].node, "lineno", 0))
        ):
            # `b, c, h, w = x.shape` proves x's rank and names its axes.
            layout = Layout.of_dims(
                [(rs.frac(Expr.name(SOURCE_SYMBOL + n)) if n else None, n) for n in unpacked]
            )
            proven = isinstance(base_value, TensorV)
            res = self._finish(core, base, layout, frame, exact=proven, safe=safe)
            if res is not None or not allow_guess:
                return res
        elif (shape is None or any(isinstance(d, Var) for d in shape)) and model[0].op == "permute":
            # A permute names every axis: its arity is the rank (a shape known in
            # part, around a variadic part, too).
            layout = Layout.of_dims([(None, None)] * len(model[0].args[0]))
            proven = isinstance(base_value, TensorV)
            res = self._finish(core, base, layout, frame, exact=proven, safe=safe)
            if res is not None or not allow_guess:
                return res
        if not any(m.op in ("reshape", "unflatten") for m in model):
            # A declared variadic shape ("*batch n d") proves the named ends; positions
            # they cannot place (`.transpose(1, 2)` of a `[..., h, n, d]`) mean what the
            # rank makes them, as when nothing of the shape is known.
            for known in [shape, None] if shape is not None else [None]:
                for layout in templates(known, model):
                    initial = [list(g) for g in layout.base]
                    res = self._finish(
                        core, base, layout, frame, exact=known is not None, safe=safe,
                        verify=initial,
                    )  # fmt: skip
                    if res is not None:
                        return res
            return None
        if not allow_guess:
            return None
        guess = self._guess_input(core, model, frame)
        if guess is None:
            return None
        if (
            shape is not None
            and len(shape) != len(guess)
            and not any(isinstance(d, Var) for d in shape)
        ):
            return None
        layout = Layout.of_dims(guess)
        assumption = "[" + ", ".join(size_text(s) for s, _ in guess) + "]"
        return self._finish(
            core, base, layout, frame, exact=False, safe=safe, assumption=assumption
        )

    def _finish(self, core, base, layout: Layout, frame, exact, safe, verify=None, assumption=None):
        model = [s.step for s in core if s.step is not None]
        try:
            rs.run(layout, model)
        except Unmodelled:
            return None
        if verify is not None and not rs.verify_template(verify, model, layout):
            return None
        if rs.moves_nothing(layout):
            return _IDENTITY
        if verify is not None and not rs.rank_independent(verify, model):
            # What these positions mean depends on a rank nobody knows: say so.
            rw = Rewrite("rearrange", [self._operand_text(base)], None)
            return self._code(core, model), core[-1].node, rw, steps_text(core, self.analyzer.src)
        elems = [e for e in layout.elems() if not e.ellipsis and not e.unit]
        avoid = _names_in(base)
        names = dict(
            zip(elems, self.policy.assign([e.hint for e in elems], avoid=avoid), strict=True)
        )
        needed = rs.lengths_needed(layout)
        if needed is None:
            return None
        lengths = [(names[e], e.src) for e in needed if e.src is not None]
        pure = all(is_pure(a) for s in core for a in s.args)
        rw = Rewrite(
            "rearrange",
            [self._operand_text(base)],
            rs.pattern(layout, names),
            lengths,
            exact=exact and pure,
            safe=safe,
            nodes=[base],
            assumption=f"{ends(self._operand_text(base), 40)} is {assumption}"
            if assumption
            else None,
            ranks=(None if layout.has_ellipsis() else len(layout.base),),
            placeholders=tuple(names[e] for e in elems if self.policy.clean(e.hint) is None),
        )
        if not accepted(rw):
            return None
        if any(m.regroups for m in model) and assumption is not None:
            self._remember_splits(layout, frame)
        return self._code(core, model), core[-1].node, rw, steps_text(core, self.analyzer.src)

    @staticmethod
    def _code(core: list[RawStep], model: list[Step]) -> str:
        if any(m.regroups for m in model):
            return "SHP403"
        if all(s.kind in TRANSPOSE_LIKE for s in core if s.step is not None):
            return "SHP401"
        return "SHP402"

    # ------------------------------------------------------------------ guessing
    def _guess_input(self, core: list[RawStep], model: list[Step], frame):
        """An input shape for a chain on a tensor of unknown shape, read off its
        reshapes: ``view(B, T, nh, C // nh)`` splits a [B, T, C]; a final
        ``view(B, T, C)`` merges what an earlier split in the function made of C,
        or the factors of a product such as ``H * W``."""
        first = next(s for s in core if s.step is not None)
        if first.kind in ("view", "reshape"):
            return merge_split_pairs(first.sizes, self.policy)
        last = next(s for s in reversed(core) if s.step is not None)
        if last.kind not in ("view", "reshape") or any(a.infer for a in last.sizes):
            return None
        middle = [m for m in model[:-1]]
        if not all(m.reorders for m in middle):
            return None
        memo = self._splits.get(id(frame), (None, {}))[1]
        # A product's factors are axes only if they were read off this tensor
        # (`b, h, t, d = y.shape`): `dim * heads` says nothing about axis order.
        own = unpacked_names(frame, core[0].recv)
        parts: list[tuple] = []
        expanded = False
        for a in last.sizes:
            if a.expr is not None and a.expr.value == 1:
                continue  # a new length-1 axis, not one of the input's
            got = memo.get(a.expr) if a.expr is not None else None
            if got is None and a.factors and all(h in own for _, h in a.factors):
                got = a.factors
            if got:
                parts.extend(got)
                expanded = True
            else:
                parts.append((a.size, a.hint))
        if not expanded:
            return None
        probe = Layout.of_dims([(None, str(k)) for k in range(len(parts))])
        try:
            rs.run(probe, middle)
        except Unmodelled:
            return None
        # out[k] holds input axis int(hint): so input axis int(hint) has size parts[k].
        guess: list = [None] * len(parts)
        for k, g in enumerate(probe.out):
            guess[int(g[0].hint)] = parts[k]  # type: ignore[arg-type]
        return guess

    def _remember_splits(self, layout: Layout, frame) -> None:
        memo = self._splits.setdefault(id(frame), (frame, {}))[1]
        for g in layout.base:
            members = [e for e in g if not e.unit]
            if len(members) > 1:
                whole = rs.frac_expr(rs.frac_prod([e.size for e in members]))
                if whole is not None:
                    memo[whole] = [(e.size, e.hint) for e in members]

    # ------------------------------------------------------------------ matmul
    def _matmul_site(self, top: ast.expr, frame):
        p = self._parent(top, frame)
        if isinstance(p, ast.BinOp) and isinstance(p.op, ast.MatMult):
            return p, p.left, p.right, "matmul"
        if isinstance(p, ast.Call) and not p.keywords and len(p.args) == 2 and top in p.args:
            q = self.reader.qual(p.func, frame)
            if q in MATMUL_FUNCS:
                return p, p.args[0], p.args[1], MATMUL_FUNCS[q]
        if (
            isinstance(p, ast.Call)
            and p.args == [top]
            and not p.keywords
            and isinstance(p.func, ast.Attribute)
        ):
            if p.func.attr in MATMUL_METHODS and self.reader.qual(p.func, frame) is None:
                return p, p.func.value, top, p.func.attr
        if isinstance(p, ast.Attribute) and p.value is top and p.attr in MATMUL_METHODS:
            gp = self._parent(p, frame)
            if isinstance(gp, ast.Call) and gp.func is p and len(gp.args) == 1 and not gp.keywords:
                return gp, top, gp.args[0], p.attr
        return None

    def _operand(self, node: ast.expr, frame) -> _Operand | None:
        chain = self.reader.read(node, frame)
        steps = chain.steps if chain else []
        if any(s.step is None or s.step.regroups for s in steps):
            return None
        base = chain.base if chain else node
        value = self.reader.value(base, frame)
        model = [s.step for s in steps if s.step is not None]
        shape = value.shape if isinstance(value, TensorV) else None
        if shape is not None and not any(isinstance(d, Var) for d in shape):
            layout = Layout.of_dims(
                [(rs.frac(d) if isinstance(d, Expr) else None, declared_hint(d)) for d in shape]
            )
            try:
                rs.run(layout, model)
            except Unmodelled:
                return None
            return _Operand(node, base, value, layout, True, chain.top if chain else None)
        if (shape is None or any(isinstance(d, Var) for d in shape)) and (
            model and model[0].op == "permute"
        ):
            layout = Layout.of_dims([(None, None)] * len(model[0].args[0]))
            try:
                rs.run(layout, model)
            except Unmodelled:
                return None
            return _Operand(node, base, value, layout, False, chain.top if chain else None)
        # a shape with a variadic part whose named ends do not place the steps is
        # read as one of unknown rank (`_rewrite_steps`)
        tries = [shape, None] if shape is not None else [None]
        for known in tries:
            for layout in templates(known, model, min_suffix=2):
                initial = [list(g) for g in layout.base]
                try:
                    rs.run(layout, model)
                except Unmodelled:
                    continue
                if not model or (
                    rs.verify_template(initial, model, layout)
                    and rs.rank_independent(initial, model)
                ):
                    return _Operand(node, base, value, layout, False, chain.top if chain else None)
        return None

    def _matmul(self, site, frame) -> bool:
        node, left, right, kind = site
        lo, ro = self._operand(left, frame), self._operand(right, frame)
        if lo is None or ro is None:
            return False
        built = self._matmul_pattern(lo, ro, kind)
        if built is None:
            return False
        exact = (
            lo.exact
            and ro.exact
            and isinstance(lo.value, TensorV)
            and isinstance(ro.value, TensorV)
        )
        pattern, placeholders = built
        # A plain operand of unknown rank: "... i k" needs 2 dims or more, where a
        # 1-d operand of @ is a vector (the suggestion says what it assumes).
        loose = [
            ends(self._operand_text(o.base), 40)
            for o in (lo, ro)
            if o.top is None and o.layout.has_ellipsis()
        ]
        rw = Rewrite(
            "einsum",
            [self._operand_text(lo.base), self._operand_text(ro.base)],
            pattern,
            exact=exact,
            nodes=[lo.base, ro.base],
            assumption=(
                f"{' and '.join(loose)} {'has' if len(loose) == 1 else 'have'} 2 or more dims"
                if loose
                else None
            ),
            ranks=tuple(None if o.layout.has_ellipsis() else len(o.layout.base) for o in (lo, ro)),
            placeholders=placeholders,
        )
        if not accepted(rw):
            return False
        transposed = [o.node for o in (lo, ro) if o.top is not None]
        what = " and ".join(ends(self.analyzer.src.segment(t), 40) for t in transposed)
        self._emit("SHP404", node, rw, what)
        for o in (lo, ro):
            if o.top is not None:
                self._handled.add(o.top)
        return True

    def _matmul_pattern(self, lo: _Operand, ro: _Operand, kind: str):
        L, R = lo.layout, ro.layout
        if any(len(g) != 1 for g in L.out + R.out):
            return None
        lout = [g[0] for g in L.out]
        rout = [g[0] for g in R.out]
        if len(lout) < 2 or len(rout) < 2 or any(e.ellipsis for e in lout[-2:] + rout[-2:]):
            return None
        if kind == "bmm" and not (lo.exact and ro.exact and len(lout) == len(rout) == 3):
            return None
        m, kl, kr, n = lout[-2], lout[-1], rout[-2], rout[-1]
        lb, rb = lout[:-2], rout[:-2]
        templated = not (lo.exact and ro.exact)
        if templated:
            # Batch axes become one "..." on each side: only when they stay in place.
            for o, b in ((L, lb), (R, rb)):
                if [g[0] for g in o.base[: len(b)]] != b:
                    return None
        canon: dict[Elem, Elem] = {kr: kl}
        if not templated:
            for a, b in zip(reversed(lb), reversed(rb), strict=False):
                canon[b] = a
        rep = lambda e: canon.get(e, e)  # noqa: E731
        members: dict[Elem, list[Elem]] = {}
        for e in [*L.elems(), *R.elems()]:
            if not e.ellipsis:
                members.setdefault(rep(e), []).append(e)
        order = [m, n, kl] + [e for e in members if e not in (m, n, kl)]
        hints = [next((x.hint for x in members[e] if x.hint), None) for e in order]
        lname, rname = _var_name(lo.base), _var_name(ro.base)
        suffixes = None
        if lname and rname and lname != rname:
            suffixes = [lname, rname] + [None] * (len(order) - 2)
        avoid = _names_in(lo.base) | _names_in(ro.base)
        names = dict(zip(order, self.policy.assign(hints, suffixes, avoid=avoid), strict=True))
        word = lambda e: "..." if e.ellipsis else names[rep(e)]  # noqa: E731

        def side(layout: Layout, batch_len: int) -> str:
            es = [g[0] for g in layout.base]
            if templated:
                return " ".join(["..."] + [word(e) for e in es[batch_len:]])
            return " ".join(word(e) for e in es)

        if templated:
            out = ["..."]
        else:
            longer = lb if len(lb) >= len(rb) else rb
            out = [word(e) for e in longer]
        out += [word(m), word(n)]
        placeholders = tuple(
            names[e] for e, h in zip(order, hints, strict=True) if self.policy.clean(h) is None
        )
        return f"{side(L, len(lb))}, {side(R, len(rb))} -> {' '.join(out)}", placeholders

    # ------------------------------------------------------------------ einsum
    def _letter_einsum(self, node: ast.Call, qual: str, args: list[Value], frame) -> None:
        if (
            not node.args
            or not isinstance(node.args[0], ast.Constant)
            or not isinstance(node.args[0].value, str)
        ):
            return
        spec = node.args[0].value
        ops = node.args[1:]
        op_values = args[1:] if len(args) == len(node.args) else [UNKNOWN] * len(ops)
        if len(ops) == 1 and isinstance(ops[0], (ast.List, ast.Tuple)):
            ops = list(ops[0].elts)
            v = op_values[0] if op_values else UNKNOWN
            op_values = (
                list(v.items)
                if isinstance(v, TupleV) and len(v.items) == len(ops)
                else [UNKNOWN] * len(ops)
            )
        if not ops or any(isinstance(o, ast.Starred) for o in ops):
            return
        parsed = parse_letters(spec)
        if parsed is None or len(parsed[0]) != len(ops):
            return
        inputs, output = parsed
        letters = sorted(
            {c for t in inputs for c in t if c != "."} | {c for c in output if c != "."}
        )
        hints: dict[str, set[str]] = {c: set() for c in letters}
        for term, v in zip(inputs, op_values, strict=False):
            for letter, dim in align_letters(term, v):
                name = dim.as_name() if isinstance(dim, Expr) else None
                hints[letter].add(name if name else "")
        chosen = []
        for c in letters:
            hs = hints[c] - {""}
            chosen.append("=" + next(iter(hs)) if len(hs) == 1 and "" not in hints[c] else None)
        names = dict(
            zip(
                letters,
                self.policy.assign(chosen, suffixes=letters, fallbacks=letters),
                strict=True,
            )
        )

        def words(term: list[str]) -> str:
            return " ".join("..." if c == "." else names[c] for c in term)

        packed = re.search(r"[A-Za-z]{2}", spec) is not None
        if not packed and all(names[c] == c for c in letters):
            return  # "b h i d, b h j d -> b h i j": spelled out already, and no names to add
        pattern = ", ".join(words(t) for t in inputs) + " -> " + words(output)
        # numpy.einsum takes lists too, einops only arrays: there, only known tensors.
        operands_ok = qual == "torch.einsum" or all(isinstance(v, TensorV) for v in op_values)
        exact = not node.keywords and len(node.args) >= 2 and operands_ok
        # torch.einsum itself demands these ranks: one axis per letter.
        ranks = tuple(None if "." in t else len(t) for t in inputs)
        rw = Rewrite(
            "einsum",
            [self._operand_text(o) for o in ops],
            pattern,
            exact=exact,
            ranks=ranks,
            nodes=list(ops),
        )
        if accepted(rw):
            self._emit("SHP405", node, rw, quote(spec))

    # ------------------------------------------------------------------ output
    def _operand_text(self, node: ast.expr) -> str:
        text = self.analyzer.src.segment(node)
        if isinstance(node, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Lambda, ast.IfExp)) or (
            isinstance(node, (ast.Tuple, ast.GeneratorExp)) and not text.startswith("(")
        ):
            return f"({text})"
        return text

    def _emit(self, code: str, node: ast.AST, rw: Rewrite, what: str, dead=None) -> None:
        start = self.analyzer.src.node_start(node)
        key = (start, self.analyzer.src.node_end(node), code)
        if key in self._reported:
            return
        self._reported.add(key)
        msg = message(code, what, rw)
        self.findings.append(Finding(code, node, msg, rw, dead or []))
        self.analyzer.report(node, code, msg)


_IDENTITY = object()  # a chain that moves no element: nothing to report


@dataclass
class _Temporary:
    """A chain assigned to a name the next statement's chain reads."""

    chain: Chain
    base_value: Value
    assign: ast.Assign
    results: list  # its own findings, reported unless a merge replaces them
    frame: object  # held, so that no later frame reuses its id while this waits


def _next_statement(func: ast.AST, stmt: ast.stmt) -> ast.stmt | None:
    """The statement after stmt in its block (None: the last, or not in func).
    Descends by position, as innermost_statement does, instead of walking func."""
    pos = (stmt.lineno, stmt.col_offset)
    blocks = _blocks(func)
    while blocks:
        inner = None
        for block in blocks:
            for i, s in enumerate(block):
                if s is stmt:
                    return block[i + 1] if i + 1 < len(block) else None
                if inner is None and _holds(s, pos):
                    inner = s
        if inner is None:
            return None
        blocks = _blocks(inner)
    return None


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    out = [
        b for f in ("body", "orelse", "finalbody") if isinstance(b := getattr(node, f, None), list)
    ]
    for h in getattr(node, "handlers", None) or []:
        out.append(h.body)
    for c in getattr(node, "cases", None) or []:
        out.append(c.body)
    return out


def _holds(s: ast.stmt, pos: tuple[int, int]) -> bool:
    end = (s.end_lineno or s.lineno, s.end_col_offset or 0)
    return (s.lineno, s.col_offset) <= pos < end


def _name_nodes(func: ast.AST) -> dict[str, list[ast.Name]]:
    """Every Name node in func, by identifier (a plain stack: ast.walk's generators
    cost twice as much, and the order does not matter here)."""
    out: dict[str, list[ast.Name]] = {}
    stack = [func]
    name_type, node_type = ast.Name, ast.AST
    while stack:
        n = stack.pop()
        if type(n) is name_type:
            out.setdefault(n.id, []).append(n)
            continue
        for f in n._fields:
            v = getattr(n, f, None)
            if isinstance(v, list):
                stack.extend(c for c in v if isinstance(c, node_type))
            elif isinstance(v, node_type):
                stack.append(v)
    return out


def _statement_of(tree: ast.Module, node: ast.AST) -> ast.stmt | None:
    return innermost_statement(tree.body, node)


def _names_in(node: ast.expr) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


def _var_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _obviously_not_tensor(node: ast.expr, reader: ChainReader, frame) -> bool:
    if isinstance(
        node, (ast.List, ast.Tuple, ast.ListComp, ast.Dict, ast.Set, ast.Constant, ast.JoinedStr)
    ):
        return True
    if isinstance(node, ast.Call):
        if (
            isinstance(node.func, ast.Name)
            and node.func.id in _NON_TENSOR_CALLS
            and node.func.id not in frame.env
        ):
            return True
        q = reader.qual(node.func, frame)
        if q is not None and q.split(".")[0] in _NUMPY_ROOTS:
            return True
    return False


def _views_safe(core: list[RawStep], contiguous_input: bool) -> bool:
    """A `.view` may fail on a non-contiguous input where rearrange would copy:
    only one right after `.contiguous()` is sure to behave the same."""
    prev_contiguous = contiguous_input
    for s in core:
        if s.kind == "view" and not prev_contiguous:
            return False
        prev_contiguous = s.kind == "contiguous"
    return True


__all__ = ["NamingChecker", "Finding", "Rewrite"]
