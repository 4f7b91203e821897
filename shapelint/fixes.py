"""`shapelint check --fix`: apply the SHP4xx rewrites where they are provably the same.

A finding carries the einops call its message shows (shapelint/analysis/naming.py).
It is *fixable* when the analysis proved the receivers are tensors of known rank;
it is *safe* when its rule's fix is (the catalog says which are not, and why) and
the original does not read a tensor with `.view`, which fails on a non-contiguous
input where `rearrange` would copy. Unsafe fixes need --unsafe-fixes.

Edits are made on the text, by the exact positions of the expressions they
replace, so everything around them (comments, spacing, quotes) stays as it was.
The function a rewrite calls is referred to the way the module already imports
it (`from einops import rearrange as r`, `import einops as E`); otherwise one
import line is added after the first block of imports. Each round re-analyzes
the new text, so rewrites nested inside one another are applied one level at a
time; a round whose result does not parse is undone.
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from shapelint import pyparse
from shapelint.analysis.driver import noqa_suppresses
from shapelint.analysis.source import DecodeFailure, decode_source

MAX_ROUNDS = 8
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class FixResult:
    path: str
    original: str
    fixed: str
    applied: int = 0
    need_unsafe: int = 0  # fixes left because they need --unsafe-fixes
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original

    def diff(self) -> str:
        a = self.original.splitlines(keepends=True)
        b = self.fixed.splitlines(keepends=True)
        return "".join(difflib.unified_diff(a, b, fromfile=self.path, tofile=self.path))


def fix_text(path: str, text: str, options=None, cfg=None, unsafe: bool = False) -> FixResult:
    """The text with every applicable fix applied (never raises for bad input)."""
    res = FixResult(path, text, text)
    failed: set[tuple[str, str]] = set()
    for _ in range(MAX_ROUNDS):
        analysis = _analyze(path, res.fixed, options)
        if analysis is None:
            break
        tree, findings = analysis
        lines = _LINE_BREAK.split(res.fixed)
        todo, need_unsafe = [], 0
        for f in findings:
            if not f.fixable or not _enabled(cfg, f.code, path) or _suppressed(lines, f):
                continue
            if (f.code, ast.unparse(f.node)) in failed:
                continue
            if not unsafe and not is_safe(f):
                need_unsafe += 1
                continue
            todo.append(f)
        res.need_unsafe = need_unsafe
        if not todo:
            break
        new_text, n = _apply(res.fixed, tree, _outermost(todo))
        if n and not _parses(new_text):
            # One bad rewrite must not block the others: find one that works alone.
            new_text, n = _first_alone(res.fixed, tree, todo, failed)
        if n == 0:
            break
        res.fixed = new_text
        res.applied += n
    return res


def fix_actions(path: str, text: str, options=None, cfg=None) -> list[tuple[object, str]]:
    """For an editor: (finding, the whole text with that one rewrite applied) for
    each safe fix, checked as --fix checks its rounds (the result must parse)."""
    analysis = _analyze(path, text, options)
    if analysis is None:
        return []
    tree, findings = analysis
    lines = _LINE_BREAK.split(text)
    out = []
    for f in findings:
        if not f.fixable or not is_safe(f):
            continue
        if not _enabled(cfg, f.code, path) or _suppressed(lines, f):
            continue
        new_text, n = _apply(text, tree, [f])
        if n and _parses(new_text):
            out.append((f, new_text))
    return out


def is_safe(finding) -> bool:
    """Whether the rewrite computes what the code did, bit for bit: its rule's fix is
    safe (shapelint/rules: a matmul or letter einsum rewritten may sum in another
    order) and this rewrite is not the case its rule names (a `.view` of a tensor
    that may be non-contiguous)."""
    from shapelint.rules import RULES

    rule = RULES.get(finding.code)
    return finding.rewrite.safe and not (rule and rule.fix and rule.fix.unsafe)


def _analyze(path: str, text: str, options):
    """(tree, naming findings) through the driver, or None: a file the analysis
    cannot parse or finish is a file we do not touch."""
    from shapelint.analysis.driver import analyze_source

    analysis = analyze_source(path, text, options)
    if analysis.module is None:
        return None
    return analysis.tree, analysis.findings


def _enabled(cfg, code: str, path: str) -> bool:
    return cfg is None or cfg.is_enabled(code, path)


def _suppressed(lines: list[str], f) -> bool:
    return any(
        1 <= ln <= len(lines) and noqa_suppresses(lines[ln - 1], f.code)
        for ln in {f.node.lineno, getattr(f.node, "end_lineno", f.node.lineno)}
    )


def _outermost(findings):
    """Findings whose spans do not overlap, outer ones first (the inner ones are
    found again, inside the rewrite, in the next round)."""
    spans = sorted(findings, key=lambda f: (_start(f.node), [-x for x in _end(f.node)]))
    chosen, last_end = [], (0, -1)
    for f in spans:
        if _start(f.node) >= last_end:
            chosen.append(f)
            last_end = _end(f.node)
    return chosen


def _start(node) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _end(node) -> tuple[int, int]:
    return node.end_lineno, node.end_col_offset


def _parses(text: str) -> bool:
    try:
        pyparse.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _first_alone(text: str, tree, todo, failed):
    for f in todo:
        new_text, n = _apply(text, tree, [f])
        if n and _parses(new_text):
            return new_text, n
        failed.add((f.code, ast.unparse(f.node)))
    return text, 0


def _apply(text: str, tree: ast.Module, findings) -> tuple[str, int]:
    """Replace each finding's expression by its rewrite (a libcst transform) and
    import what the rewrites call; (text, number of rewrites applied)."""
    from shapelint.fix_transform import OPERAND, parse_module, rewrite_module

    module = parse_module(text)
    if module is None:
        return text, 0
    plan = ImportPlan(tree)
    lines = _LINE_BREAK.split(text)
    targets: dict[tuple, str] = {}
    removals: dict[int, int] = {}  # line of a dead temporary -> line of the statement after
    for f in findings:
        dead = _removable(f, tree, lines)
        if dead is None:
            continue  # a temporary that cannot go cleanly: leave the finding unfixed
        ref = plan.reference(f.rewrite.func, f.node)
        if ref is None:
            continue  # no name for it here, or no import can precede this use
        key = (_char_pos(lines, *_start(f.node)), _char_pos(lines, *_end(f.node)))
        # Operands stay the nodes they are (their formatting and comments); one that
        # needs parentheses as an argument goes in as text.
        ops, keep = [], []
        for k, (op_text, node) in enumerate(zip(f.rewrite.operands, f.rewrite.nodes, strict=False)):
            if ast.get_source_segment(text, node) == op_text:
                ops.append(OPERAND.format(k))
                keep.append((_char_pos(lines, *_start(node)), _char_pos(lines, *_end(node))))
            else:
                ops.append(" ".join(op_text.split()))
                keep.append(None)
        if len(ops) != len(f.rewrite.operands):
            ops, keep = None, []
        targets[key] = (f.rewrite.call(ref, ops), keep)
        removals.update(dead)
    if not targets:
        return text, 0
    return rewrite_module(module, targets, plan, removals)


def _removable(f, tree: ast.Module, lines: list[str]) -> dict[int, int] | None:
    """{line of each dead temporary: line of the statement it fed}, or None when
    one does not stand alone on its lines (another statement after a `;`)."""
    from shapelint.analysis.statements import innermost_statement

    out: dict[int, int] = {}
    for stmt in f.dead:
        first = lines[stmt.lineno - 1].encode("utf-8")[: stmt.col_offset]
        last = (
            lines[stmt.end_lineno - 1]
            .encode("utf-8")[stmt.end_col_offset :]
            .decode("utf-8", "replace")
        )
        if first.strip() or (last.strip() and not last.strip().startswith("#")):
            return None
        fed = innermost_statement(tree.body, f.node)
        if fed is None:
            return None
        out[stmt.lineno] = fed.lineno
    return out


def _char_pos(lines: list[str], line: int, byte_col: int) -> tuple[int, int]:
    """ast counts UTF-8 bytes within the line; libcst counts characters."""
    line_text = lines[line - 1] if line - 1 < len(lines) else ""
    if line_text.isascii():
        return line, byte_col
    return line, len(line_text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))


class ImportPlan:
    """How each rewrite refers to einops here, and the one import to add or extend:
    merged into a top-level `from einops import`, else a new statement after the
    docstring and the first import block; either way before the first top-level
    statement that runs a rewrite at import time (an existing import that comes
    after such a use cannot serve it: that rewrite is refused)."""

    def __init__(self, tree: ast.Module):
        self.body = tree.body
        self.bound = _bound_names(tree)
        self.names: set[str] = set()
        self.module_import = False
        self.first_use = len(self.body)  # the earliest top-level statement needing the import
        self.merge_index = next(
            (
                i
                for i, s in enumerate(self.body)
                if isinstance(s, ast.ImportFrom)
                and s.module == "einops"
                and not s.level
                and all(a.name != "*" for a in s.names)
            ),
            None,
        )

    def _runs_at(self, node: ast.AST) -> int | None:
        """The top-level statement a use runs in at import time; None inside a
        function body, which runs later."""
        for i, s in enumerate(self.body):
            if s.lineno <= node.lineno <= (s.end_lineno or s.lineno):
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.body:
                    if node.lineno >= s.body[0].lineno:
                        return None
                return i
        return None

    def reference(self, func: str, node: ast.AST) -> str | None:
        use = self._runs_at(node)
        for i, stmt in enumerate(self.body):
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "einops" and not stmt.level:
                for a in stmt.names:
                    local = a.asname or a.name
                    if a.name == func and self.bound.get(local, 0) == 1:
                        return local if use is None or i < use else None
            if isinstance(stmt, ast.Import):
                for a in stmt.names:
                    local = a.asname or "einops"
                    if a.name == "einops" and self.bound.get(local, 0) == 1:
                        return f"{local}.{func}" if use is None or i < use else None
        if func not in self.bound:
            self.names.add(func)
            ref = func
        elif "einops" not in self.bound:
            self.module_import = True
            ref = f"einops.{func}"
        else:
            return None
        if use is not None:
            self.first_use = min(self.first_use, use)
        return ref

    def new_names(self) -> list[str]:
        return sorted(self.names)

    @property
    def merge_line(self) -> int | None:
        """The `from einops import` statement the new names join, if one serves."""
        i = self.merge_index
        return self.body[i].lineno if i is not None and i < self.first_use else None

    @property
    def insert_line(self) -> int | None:
        """The top-level statement new imports go before (None: the end)."""
        i = max(min(_insert_index(self.body), self.first_use), _header_end(self.body))
        return self.body[i].lineno if i < len(self.body) else None


def _header_end(body: list[ast.stmt]) -> int:
    """The statements nothing may precede: the docstring and `from __future__`."""
    i = (
        1
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
        else 0
    )
    while i < len(body) and isinstance(body[i], ast.ImportFrom) and body[i].module == "__future__":
        i += 1
    return i


def _insert_index(body: list[ast.stmt]) -> int:
    """Where a new import goes: after the first block of top-level imports, else
    after the module docstring, else at the top."""
    first = next(
        (i for i, s in enumerate(body) if isinstance(s, (ast.Import, ast.ImportFrom))), None
    )
    if first is not None:
        k = first
        while k + 1 < len(body) and isinstance(body[k + 1], (ast.Import, ast.ImportFrom)):
            k += 1
        return k + 1
    return _header_end(body)


def _bound_names(tree: ast.Module) -> dict[str, int]:
    """How many times each name is bound anywhere in the module."""
    counts: dict[str, int] = {}

    def bind(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bind(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name)
        elif isinstance(node, ast.arg):
            bind(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                bind(a.asname or a.name.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                bind(n)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name)
        elif isinstance(node, ast.alias):
            pass
    return counts


# ---------------------------------------------------------------------- files


def read_source(path: Path) -> tuple[str, str] | None:
    """(text, encoding) of a file, or None if it cannot be read as Python."""
    try:
        data = path.read_bytes()
        text = decode_source(data)
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except (OSError, DecodeFailure, SyntaxError):
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8-sig"
    return text, encoding


def fix_files(files: list[Path], cfg, options, unsafe: bool, write: bool) -> list[FixResult]:
    """Fix each file (writing it back when `write`); results for every file read."""
    out = []
    for p in files:
        src = read_source(p)
        if src is None:
            continue
        text, encoding = src
        res = fix_text(str(p), text, options, cfg, unsafe)
        if write and res.changed:
            try:
                p.write_bytes(res.fixed.encode(encoding))
            except (OSError, UnicodeEncodeError) as e:
                res.notes.append(f"could not write: {e}")
                res.fixed = res.original
                res.applied = 0
        out.append(res)
    return out
