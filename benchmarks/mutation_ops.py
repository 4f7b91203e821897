"""Mutation operators over a module's source (issue 25): one edit each, at a line the
module runs with its subject's constructor arguments and inputs.

Two families. A *bug* operator makes the edit people make when a model breaks (a
Linear's in/out width, a pattern's axes swapped or dropped, a cat/chunk/split dim, a
view size, a norm size, conv channels, a transpose removed, a parameter's shape, an
off-by-one slice); torch decides afterwards whether it is a bug (the mutant raises) or
not (it runs, and is dropped). A *benign* operator rewrites the code without changing
what it computes (`a + b` -> `b + a`, `.view` -> `.reshape`, `a @ b` ->
`torch.matmul(a, b)`, keyword arguments, an axis renamed across a pattern); torch
confirms each runs to the same output shape, and any error on it is a false error.

Pure functions over text and `ast`: no torch, so the CI test can list its mutants
without running anything.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

from shapelint.analysis.literals import int_literal


@dataclass(frozen=True)
class Mutant:
    kind: str  # the operator
    bug: bool  # a bug operator (kept when torch raises) or a benign rewrite
    line: int  # 1-based, first line of the edited node
    end_line: int
    col: int  # character offsets on line / end_line
    end_col: int
    old: str
    new: str

    def apply(self, source: str) -> str:
        lines = source.splitlines(keepends=True)
        head = "".join(lines[: self.line - 1]) + lines[self.line - 1][: self.col]
        tail = lines[self.end_line - 1][self.end_col :] + "".join(lines[self.end_line :])
        return head + self.new + tail

    @property
    def key(self) -> str:
        return f"{self.kind}@{self.line}:{self.col}:{self.new}"


# Layer constructors: (positional index, keyword) of the sizes a bug operator edits.
LAYER_SIZES = {
    "Linear": {"linear_in": (0, "in_features"), "linear_out": (1, "out_features")},
    "LazyLinear": {"linear_out": (0, "out_features")},
    "Bilinear": {"linear_in": (0, "in1_features"), "linear_out": (2, "out_features")},
    "Conv1d": {"conv_in": (0, "in_channels"), "conv_out": (1, "out_channels")},
    "Conv2d": {"conv_in": (0, "in_channels"), "conv_out": (1, "out_channels")},
    "Conv3d": {"conv_in": (0, "in_channels"), "conv_out": (1, "out_channels")},
    "ConvTranspose1d": {"conv_in": (0, "in_channels"), "conv_out": (1, "out_channels")},
    "ConvTranspose2d": {"conv_in": (0, "in_channels"), "conv_out": (1, "out_channels")},
    "LayerNorm": {"norm_size": (0, "normalized_shape")},
    "RMSNorm": {"norm_size": (0, "normalized_shape")},
    "BatchNorm1d": {"norm_size": (0, "num_features")},
    "BatchNorm2d": {"norm_size": (0, "num_features")},
    "BatchNorm3d": {"norm_size": (0, "num_features")},
    "InstanceNorm2d": {"norm_size": (0, "num_features")},
    "GroupNorm": {"norm_size": (1, "num_channels")},
    "Embedding": {"embed_dim": (1, "embedding_dim")},
}
EINOPS_FUNCS = {"rearrange", "reduce", "repeat", "Rearrange", "Reduce", "Repeat"}
DIM_METHODS = {
    "cat": "cat_dim",
    "stack": "cat_dim",
    "chunk": "chunk_dim",
    "split": "split_dim",
    "unbind": "split_dim",
    "softmax": "reduce_dim",
    "mean": "reduce_dim",
    "sum": "reduce_dim",
    "amax": "reduce_dim",
    "unsqueeze": "reduce_dim",
}
TRANSPOSES = {"transpose", "permute", "t", "swapaxes", "movedim"}
TENSOR_MAKERS = {"randn", "zeros", "ones", "rand", "empty"}


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


class _Source:
    """Character positions of ast nodes (ast gives UTF-8 byte columns)."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines(keepends=True)

    def _char(self, line: int, byte_col: int) -> int:
        return len(self.lines[line - 1].encode()[:byte_col].decode(errors="replace"))

    def span(self, node: ast.AST) -> tuple[int, int, int, int]:
        return (
            node.lineno,
            node.end_lineno,
            self._char(node.lineno, node.col_offset),
            self._char(node.end_lineno, node.end_col_offset),
        )

    def text_of(self, node: ast.AST) -> str:
        line, end_line, col, end_col = self.span(node)
        if line == end_line:
            return self.lines[line - 1][col:end_col]
        parts = [self.lines[line - 1][col:]]
        parts += self.lines[line : end_line - 1]
        parts.append(self.lines[end_line - 1][:end_col])
        return "".join(parts)

    def mutant(self, kind: str, bug: bool, node: ast.AST, new: str) -> Mutant:
        line, end_line, col, end_col = self.span(node)
        return Mutant(kind, bug, line, end_line, col, end_col, self.text_of(node), new)


def _arg(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if index < len(call.args) and not any(
        isinstance(a, ast.Starred) for a in call.args[: index + 1]
    ):
        return call.args[index]
    return None


def _size_names(func: ast.AST) -> list[str]:
    """Names a function uses as layer sizes: the realistic wrong width to pass."""
    names: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and _name(node.func) in LAYER_SIZES:
            for index, keyword in LAYER_SIZES[_name(node.func)].values():
                value = _arg(node, index, keyword)
                if isinstance(value, ast.Name):
                    names.add(value.id)
    return sorted(names)


def _wrong_sizes(src: _Source, value: ast.expr, names: list[str]) -> list[str]:
    text = src.text_of(value)
    out = [n for n in names if n != text][:1]
    out.append(
        f"{text} * 2"
        if isinstance(value, (ast.Name, ast.Attribute, ast.Constant))
        else f"({text}) * 2"
    )
    return out


def _split_pattern(side: str) -> list[str]:
    """Top-level axes of one side of an einops pattern (a group stays one token)."""
    tokens, depth, cur = [], 0, ""
    for ch in side:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == " " and depth == 0:
            if cur:
                tokens.append(cur)
            cur = ""
            continue
        cur += ch
    if cur:
        tokens.append(cur)
    return tokens


def _pattern_mutants(src: _Source, call: ast.Call) -> Iterator[Mutant]:
    node = next(
        (
            a
            for a in call.args
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and "->" in a.value
        ),
        None,
    )
    if node is None:
        return
    pattern, text = node.value, src.text_of(node)
    quote = text[0]
    if quote not in "'\"" or "\n" in text or "\\" in text:
        return
    left, right = (s.strip() for s in pattern.split("->"))
    # the operands of an einsum are sides of their own
    sides = [s.strip() for s in left.split(",")] + [right]
    joined = len(sides) - 1

    def spell(parts: list[str]) -> str:
        return quote + ", ".join(parts[:joined]) + " -> " + parts[joined] + quote

    for index, side in enumerate(sides):
        axes = _split_pattern(side)
        for i in range(len(axes) - 1):
            if "..." in (axes[i], axes[i + 1]) or axes[i] == axes[i + 1]:
                continue
            parts = list(sides)
            parts[index] = " ".join(axes[:i] + [axes[i + 1], axes[i]] + axes[i + 2 :])
            yield src.mutant("pattern_swap", True, node, spell(parts))
            break
    out_axes = [a for a in _split_pattern(right) if a != "..."]
    if len(out_axes) > 1:
        parts = list(sides)
        parts[joined] = " ".join(a for a in _split_pattern(right) if a != out_axes[-1])
        yield src.mutant("pattern_drop", True, node, spell(parts))
    # benign: one axis renamed on every side, unless a keyword names it
    named = {kw.arg for kw in call.keywords}
    axes = sorted(set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", pattern)) - named)
    if axes:
        axis = axes[0]
        # einops refuses a name that starts or ends with "_"
        renamed = re.sub(rf"\b{axis}\b", axis + "_r", pattern)
        yield src.mutant("rename_axis", False, node, quote + renamed + quote)


def _dim_arg(call: ast.Call, method: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == "dim":
            return kw.value
    # x.cat? no; torch.cat(tensors, d) / x.chunk(n, d) / x.split(s, d) / x.softmax(d) / x.mean(d)
    position = {"cat": 1, "stack": 1, "chunk": 1, "split": 1}.get(method, 0)
    if (
        isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id
        in (
            "torch",
            "F",
        )
    ):
        position += (
            1
            if method in ("chunk", "split", "softmax", "mean", "sum", "amax", "unsqueeze", "unbind")
            else 0
        )
    if position < len(call.args):
        return call.args[position]
    return None


def _call_mutants(src: _Source, call: ast.Call, size_names: list[str]) -> Iterator[Mutant]:
    name = _name(call.func)
    if name in LAYER_SIZES:
        for kind, (index, keyword) in LAYER_SIZES[name].items():
            value = _arg(call, index, keyword)
            if value is not None and int_literal(value) != 1:
                for new in _wrong_sizes(src, value, size_names):
                    yield src.mutant(kind, True, value, new)
        if (
            name == "Linear"
            and len(call.args) >= 2
            and not any(isinstance(a, ast.Starred) for a in call.args)
        ):
            a, b = (src.text_of(x) for x in call.args[:2])
            rest = [src.text_of(x) for x in call.args[2:]] + [src.text_of(k) for k in call.keywords]
            kws = ", ".join([f"in_features={a}", f"out_features={b}", *rest])
            yield src.mutant("keyword_args", False, call, f"{src.text_of(call.func)}({kws})")
    if name in EINOPS_FUNCS or name == "einsum":
        yield from _pattern_mutants(src, call)
    if name in DIM_METHODS:
        dim = _dim_arg(call, name)
        value = None if dim is None else int_literal(dim)
        if value is not None:
            yield src.mutant(
                DIM_METHODS[name], True, dim, str(value - 1 if value < 0 else value + 1)
            )
    if name == "chunk" and call.args:
        torch_fn = isinstance(call.func, ast.Attribute) and _is_torch(call.func)
        count_node = call.args[1] if torch_fn and len(call.args) > 1 else call.args[0]
        count = int_literal(count_node)
        if count is not None and count > 1:
            yield src.mutant("chunk_count", True, count_node, str(count - 1))
    if name in ("view", "reshape") and isinstance(call.func, ast.Attribute) and len(call.args) >= 2:
        sizes = [
            a for a in call.args if not isinstance(a, ast.Starred) and int_literal(a) not in (-1, 1)
        ]
        if sizes:
            target = sizes[-1]
            text = src.text_of(target)
            new = (
                f"{text} * 2"
                if isinstance(target, (ast.Name, ast.Attribute, ast.Constant))
                else f"({text}) * 2"
            )
            yield src.mutant("view_size", True, target, new)
        if name == "view":
            yield src.mutant(
                "view_reshape", False, call, src.text_of(call).replace(".view(", ".reshape(", 1)
            )
    if name in TRANSPOSES and isinstance(call.func, ast.Attribute) and not _is_torch(call.func):
        yield src.mutant("transpose_removed", True, call, src.text_of(call.func.value))
        if name in ("transpose", "swapaxes") and len(call.args) == 2:
            a, b = (src.text_of(x) for x in call.args)
            yield src.mutant("transpose_order", False, call, f"{src.text_of(call.func)}({b}, {a})")
    if isinstance(call.func, ast.Attribute) and name in TENSOR_MAKERS and _is_torch(call.func):
        sizes = [a for a in call.args if not isinstance(a, ast.Starred) and int_literal(a) != 1]
        if sizes:
            text = src.text_of(sizes[-1])
            yield src.mutant("param_shape", True, sizes[-1], f"({text}) * 2")


def _is_torch(func: ast.Attribute) -> bool:
    return isinstance(func.value, ast.Name) and func.value.id in ("torch", "F")


def _binop_mutants(src: _Source, node: ast.BinOp, has_torch: bool) -> Iterator[Mutant]:
    left, right = src.text_of(node.left), src.text_of(node.right)
    if isinstance(node.op, ast.Add) and "\n" not in left + right:

        def wrap(e: ast.expr, t: str) -> str:
            return (
                t
                if isinstance(e, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant))
                else f"({t})"
            )

        yield src.mutant(
            "add_swap", False, node, f"{wrap(node.right, right)} + {wrap(node.left, left)}"
        )
    if isinstance(node.op, ast.MatMult) and has_torch and "\n" not in left + right:
        yield src.mutant("matmul_fn", False, node, f"torch.matmul({left}, {right})")


def _slice_mutants(src: _Source, node: ast.Slice) -> Iterator[Mutant]:
    if node.upper is not None and int_literal(node.upper) is None and node.step is None:
        yield src.mutant("slice_off", True, node.upper, f"({src.text_of(node.upper)}) - 1")


def mutants(source: str, lines: set[int], *, runtime_lines: set[int] | None = None) -> list[Mutant]:
    """Every mutant of `source` at the executed `lines` (forward-only edits, a
    binop swapped, are limited to `runtime_lines` when given)."""
    tree = ast.parse(source)
    src = _Source(source)
    has_torch = any(
        isinstance(n, ast.Import) and any(a.name == "torch" and a.asname is None for a in n.names)
        for n in tree.body
    )
    out: list[Mutant] = []
    seen: set[str] = set()
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    owner: dict[int, list[str]] = {}
    for func in funcs:
        names = _size_names(func)
        for node in ast.walk(func):
            owner.setdefault(id(node), names)
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) not in lines:
            continue
        found: Iterator[Mutant] = iter(())
        if isinstance(node, ast.Call):
            found = _call_mutants(src, node, owner.get(id(node), []))
        elif isinstance(node, ast.BinOp) and (
            runtime_lines is None or node.lineno in runtime_lines
        ):
            found = _binop_mutants(src, node, has_torch)
        elif isinstance(node, ast.Slice):
            found = _slice_mutants(src, node)
        for m in found:
            if m.new != m.old and m.key not in seen:
                try:
                    ast.parse(m.apply(source))
                except SyntaxError:
                    continue
                seen.add(m.key)
                out.append(m)
    out.sort(key=lambda m: (m.line, m.col, m.kind, m.new))
    return out


def sample(found: list[Mutant], seed: str, per_kind: int) -> list[Mutant]:
    """A derandomized sample: at most `per_kind` of each operator, chosen by a RNG
    seeded with the subject's name (the same mutants on every run)."""
    rng = random.Random(seed)
    by_kind: dict[str, list[Mutant]] = {}
    for m in found:
        by_kind.setdefault(m.kind, []).append(m)
    out = []
    for kind in sorted(by_kind):
        group = by_kind[kind]
        out += group if len(group) <= per_kind else rng.sample(group, per_kind)
    return sorted(out, key=lambda m: (m.line, m.col, m.kind))
