"""Reading a chain of positional steps out of the syntax tree.

``k.view(B, T, nh, C // nh).transpose(1, 2)`` is a chain: a base expression
(``k``) and the steps applied to it, innermost first. Each step is parsed into a
:class:`~shapelint.notation.reshuffle.Step` when its arguments are literal enough
to model (ints, tuples of ints, sizes the analysis or the source can name);
the first step that is not ends the chain, and becomes part of the base.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from shapelint.notation.axis_names import quotient_hint
from shapelint.notation.reshuffle import SizeArg, Step, frac
from shapelint.notation.symbolic import Expr, FloorDiv
from shapelint.ops.values import UNKNOWN, IntV, ObjectV, Value

REORDER_METHODS = {"transpose", "swapaxes", "swapdims", "permute", "movedim", "moveaxis", "t"}
REGROUP_METHODS = {"view", "reshape", "flatten", "unflatten"}
CHAIN_METHODS = REORDER_METHODS | REGROUP_METHODS | {"contiguous"}
CHAIN_ATTRS = {"T", "mT"}
# torch functions that take the tensor first and act like the method of that name.
CHAIN_FUNCS = {
    f"torch.{m}"
    for m in (
        "transpose",
        "swapaxes",
        "swapdims",
        "permute",
        "movedim",
        "moveaxis",
        "t",
        "reshape",
        "flatten",
        "unflatten",
    )
}
TRANSPOSE_LIKE = {"transpose", "swapaxes", "swapdims", "t", "T", "mT"}

# The prefix marks a size the source names but the analysis does not know.
SOURCE_SYMBOL = "$"


@dataclass
class RawStep:
    node: ast.expr  # the whole call or attribute
    kind: str  # method name, or "T" / "mT"
    recv: ast.expr
    args: list[ast.expr] = field(default_factory=list)
    keywords: list[ast.keyword] = field(default_factory=list)
    step: Step | None = None  # None for contiguous()
    sizes: list[SizeArg] = field(default_factory=list)  # reshape/unflatten arguments

    @property
    def reorders(self) -> bool:
        return self.kind in REORDER_METHODS or self.kind in CHAIN_ATTRS


@dataclass
class Chain:
    base: ast.expr
    steps: list[RawStep]  # innermost first

    @property
    def top(self) -> ast.expr:
        return self.steps[-1].node


class ChainReader:
    """Reads chains with the values the interpreter saw (``values``: node ->
    abstract value, filled in by the hooks) and its name resolution."""

    def __init__(self, analyzer, values: dict):
        self.analyzer = analyzer
        self.values = values

    def qual(self, node: ast.expr, frame) -> str | None:
        return self.analyzer.imports.resolve(node, frame.locals, frame.local_imports)

    # ------------------------------------------------------------------ structure
    def raw_step(self, node: ast.AST, frame) -> RawStep | None:
        """The step `node` is, ignoring whether its arguments can be modelled."""
        if isinstance(node, ast.Call):
            if any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords
            ):
                return None
            func = node.func
            q = self.qual(func, frame)
            if q is not None:
                if q in CHAIN_FUNCS and node.args:
                    return RawStep(
                        node, q.rsplit(".", 1)[1], node.args[0], node.args[1:], node.keywords
                    )
                return None
            if isinstance(func, ast.Attribute) and func.attr in CHAIN_METHODS:
                return RawStep(node, func.attr, func.value, list(node.args), list(node.keywords))
            return None
        if isinstance(node, ast.Attribute) and node.attr in CHAIN_ATTRS:
            if self.qual(node, frame) is not None:
                return None
            return RawStep(node, node.attr, node.value)
        return None

    def read(self, top: ast.expr, frame) -> Chain | None:
        """The chain ending at top (None if top is not a modellable step)."""
        steps: list[RawStep] = []
        node: ast.expr = top
        while True:
            raw = self.raw_step(node, frame)
            if raw is None or not self.parse(raw, frame):
                break
            steps.append(raw)
            node = raw.recv
        if not steps:
            return None
        steps.reverse()
        return Chain(node, steps)

    # ------------------------------------------------------------------ arguments
    def parse(self, raw: RawStep, frame) -> bool:
        k = raw.kind
        kw = {x.arg: x.value for x in raw.keywords}
        args = raw.args
        if k == "contiguous":
            return not args and not kw
        if k in ("T", "mT"):
            raw.step = Step("reverse") if k == "T" else Step("transpose", (-2, -1))
            return True
        if k == "t":
            if args or kw:
                return False
            raw.step = Step("t")
            return True
        if k in ("transpose", "swapaxes", "swapdims"):
            dims = _bind(args, kw, ("dim0", "dim1"), ("axis0", "axis1"))
            ints = [self.int_of(a, frame) for a in dims] if dims else None
            if ints is None or len(ints) != 2 or None in ints:
                return False
            raw.step = Step("transpose", tuple(ints))
            return True
        if k == "permute":
            if kw and set(kw) != {"dims"}:
                return False
            items = [kw["dims"]] if kw else args
            perm = self.ints_of(items, frame)
            if not perm:
                return False
            raw.step = Step("permute", (tuple(perm),))
            return True
        if k in ("movedim", "moveaxis"):
            dims = _bind(args, kw, ("source", "destination"))
            if dims is None or len(dims) != 2:
                return False
            src, dst = self.ints_of([dims[0]], frame), self.ints_of([dims[1]], frame)
            if not src or not dst:
                return False
            raw.step = Step("movedim", (tuple(src), tuple(dst)))
            return True
        if k == "flatten":
            dims = _bind(args, kw, ("start_dim", "end_dim"))
            if dims is None or len(dims) > 2:
                return False
            ints = [self.int_of(a, frame) for a in dims]
            if None in ints:
                return False
            start, end = (ints + [0, -1][len(ints) :])[:2] if ints else (0, -1)
            raw.step = Step("flatten", (start, end))
            return True
        if k in ("view", "reshape"):
            if kw and set(kw) not in ({"shape"}, {"size"}):
                return False
            items = [next(iter(kw.values()))] if kw else args
            sizes = self.sizes_of(items, frame)
            if sizes is None:
                return False
            raw.sizes = sizes
            raw.step = Step("reshape", (sizes,))
            return True
        if k == "unflatten":
            dims = _bind(args, kw, ("dim", "sizes"))
            if dims is None or len(dims) != 2:
                return False
            dim = self.int_of(dims[0], frame)
            sizes = self.sizes_of([dims[1]], frame)
            if dim is None or sizes is None:
                return False
            raw.sizes = sizes
            raw.step = Step("unflatten", (dim, sizes))
            return True
        return False

    def int_of(self, node: ast.expr, frame) -> int | None:
        """A literal (or analysed-constant) int, such as a dim index."""
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.int_of(node.operand, frame)
            return -inner if inner is not None else None
        v = self.values.get(node)
        if v is None and isinstance(node, ast.Name):
            v = frame.env.get(node.id)
        if isinstance(v, IntV) and v.value is not None and v.value.value is not None:
            return v.value.value
        return None

    def ints_of(self, items: list[ast.expr], frame) -> list[int] | None:
        """Ints given one by one or as one tuple/list literal."""
        if len(items) == 1 and isinstance(items[0], (ast.Tuple, ast.List)):
            items = list(items[0].elts)
        out = [self.int_of(a, frame) for a in items]
        if not out or None in out:
            return None
        return out  # type: ignore[return-value]

    def sizes_of(self, items: list[ast.expr], frame) -> list[SizeArg] | None:
        if len(items) == 1 and isinstance(items[0], (ast.Tuple, ast.List)):
            items = list(items[0].elts)
        elif len(items) == 1 and not self._is_size(items[0], frame):
            return None  # x.view(shape) or x.view(torch.float16): not sizes we can read
        if not items or any(isinstance(a, ast.Starred) for a in items):
            return None
        out = []
        for a in items:
            if self.int_of(a, frame) == -1:
                out.append(SizeArg(None, infer=True, hint=None, src=None))
                continue
            e = self.size_expr(a, frame)
            pure = is_pure(a)
            out.append(
                SizeArg(
                    frac(e),
                    hint=self.size_hint(a, e),
                    src=self.analyzer.src.segment(a) if pure else None,
                    src_simple=isinstance(a, (ast.Name, ast.Attribute, ast.Constant)),
                    expr=e,
                    factors=self._factors(a, frame),
                )
            )
        return out

    def _is_size(self, node: ast.expr, frame) -> bool:
        """One argument that is an int (x.reshape(n)), not a shape or a dtype."""
        if self.int_of(node, frame) is not None or isinstance(node, ast.BinOp):
            return True
        v = self.values.get(node)
        if v is None and isinstance(node, ast.Name):
            v = frame.env.get(node.id)
        return isinstance(v, IntV)

    def _factors(self, node: ast.expr, frame) -> list | None:
        """H * W * C -> [(H, "H"), (W, "W"), (C, "C")], in the order written."""
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            return None
        flat: list[ast.expr] = []
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
                stack += [n.right, n.left]
            else:
                flat.append(n)
        out = []
        for f in flat:
            e = self.size_expr(f, frame)
            if e is None or e.value is not None:
                return None  # 2 * C: a number is no axis of its own
            out.append((frac(e), self.size_hint(f, e)))
        return out

    def size_expr(self, node: ast.expr, frame) -> Expr | None:
        """A size as an expression: the analysis' value where it knows one, else a
        symbol standing for the source text (the same text means the same value
        within one expression)."""
        v = self.values.get(node)
        if v is None and isinstance(node, ast.Name):
            v = frame.env.get(node.id)
            if v is None and node.id not in frame.locals:
                v = self.analyzer.module_env.get(node.id)
        if isinstance(v, IntV) and v.value is not None:
            return v.value
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return Expr.const(node.value)
        if isinstance(node, ast.BinOp) and isinstance(
            node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)
        ):
            a, b = self.size_expr(node.left, frame), self.size_expr(node.right, frame)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            return a // b
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            base = frame.env.get(node.value.id)
            if isinstance(base, ObjectV):
                av = base.attr(node.attr)
                if isinstance(av, IntV) and av.value is not None:
                    return av.value
        if is_pure(node) and not isinstance(node, ast.Constant):
            return Expr.name(SOURCE_SYMBOL + ast.unparse(node))
        return None

    def size_hint(self, node: ast.expr, e: Expr | None) -> str | None:
        """The name a size suggests: its variable, or X's for X // n."""
        if e is not None:
            n = e.as_name()
            if n is not None:
                return n[1:] if n.startswith(SOURCE_SYMBOL) else n
            if e.is_atom():
                ((mono, _),) = e.terms.items()
                atom = mono[0][0]
                if isinstance(atom, FloorDiv):
                    return quotient_hint(hint_of(atom.num), hint_of(atom.den))
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            return node.attr
        return None

    def value(self, node: ast.expr, frame) -> Value:
        """The abstract value the interpreter gave node, as far as it told us."""
        v = self.values.get(node)
        if v is not None:
            return v
        if isinstance(node, ast.Name):
            if node.id in frame.env:
                return frame.env[node.id]
            if node.id not in frame.locals:
                return self.analyzer.module_env.get(node.id, UNKNOWN)
            return UNKNOWN
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            base = self.value(node.value, frame)
            if isinstance(base, ObjectV):
                return base.attr(node.attr)
        return UNKNOWN


def hint_of(e: Expr) -> str | None:
    n = e.as_name()
    if n is None:
        return None
    return n[1:] if n.startswith(SOURCE_SYMBOL) else n


def _bind(
    args: list[ast.expr], kw: dict[str, ast.expr], *spellings: tuple[str, ...]
) -> list[ast.expr] | None:
    """Positional args followed by keywords, for one of the spellings of the
    parameter names; None for keywords none of them knows."""
    if not kw:
        return list(args)
    for names in spellings:
        if set(kw) <= set(names[len(args) :]):
            out = list(args)
            for n in names[len(args) :]:
                if n in kw:
                    out.append(kw[n])
                else:
                    break
            if len(out) - len(args) == len(kw):
                return out
    return None


_PURE_CALLS = {"size", "dim", "len", "int", "numel"}


def is_pure(node: ast.expr) -> bool:
    """Safe to evaluate again, or not at all: names, numbers, attributes, arithmetic,
    subscripts and size queries of those."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return is_pure(node.value)
    if isinstance(node, ast.BinOp):
        return is_pure(node.left) and is_pure(node.right)
    if isinstance(node, ast.UnaryOp):
        return is_pure(node.operand)
    if isinstance(node, ast.Subscript):
        return is_pure(node.value) and is_pure(node.slice)
    if isinstance(node, ast.Slice):
        return all(x is None or is_pure(x) for x in (node.lower, node.upper, node.step))
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(is_pure(e) for e in node.elts)
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name in _PURE_CALLS and not node.keywords:
            recv_ok = is_pure(f.value) if isinstance(f, ast.Attribute) else True
            return recv_ok and all(is_pure(a) for a in node.args)
    return False
