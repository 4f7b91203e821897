"""`shapelint check --fix`: apply the SHP4xx rewrites where they are provably the same.

A finding carries the einops call its message shows (shapelint/analysis/naming.py).
It is *fixable* when the analysis proved the receivers are tensors of known rank;
it is *safe* unless the original reads a tensor with `.view`, which fails on a
non-contiguous input where `rearrange` would copy: those need --unsafe-fixes.

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
            if not f.rewrite.safe and not unsafe:
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
        ast.parse(text)
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
    """Replace each finding's expression by its rewrite; add the imports."""
    refs: dict[str, tuple[str, str | None] | None] = {}
    offsets = _line_offsets(text)
    edits = []
    for f in findings:
        func = f.rewrite.func
        if func not in refs:
            refs[func] = _reference(tree, func)
        ref = refs[func]
        if ref is None:
            continue
        start = _offset(text, offsets, *_start(f.node))
        end = _offset(text, offsets, *_end(f.node))
        edits.append((start, end, f.rewrite.call(ref[0])))
    if not edits:
        return text, 0
    new_imports = _import_lines([r[1] for r in refs.values() if r is not None and r[1] is not None])
    if new_imports:
        edits.append(_import_edit(text, offsets, tree, new_imports))
    out = text
    # Right to left, so earlier offsets stay valid; at one offset the import
    # (empty span) goes in after the rewrite that starts there, i.e. before it.
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        out = out[:start] + new + out[end:]
    return out, len(edits) - (1 if new_imports else 0)


def _import_lines(needed: list[str]) -> list[str]:
    """One `from einops import a, b` line for all the names (and `import einops`)."""
    names = sorted({n.rsplit(" ", 1)[1] for n in needed if n.startswith("from ")})
    out = ["import einops"] if "import einops" in needed else []
    if names:
        out.append(f"from einops import {', '.join(names)}")
    return out


def _line_offsets(text: str) -> list[int]:
    offs = [0]
    for m in _LINE_BREAK.finditer(text):
        offs.append(m.end())
    return offs


def _offset(text: str, offsets: list[int], line: int, byte_col: int) -> int:
    """ast positions count UTF-8 bytes within the line; edits count characters."""
    start = offsets[line - 1]
    end = offsets[line] if line < len(offsets) else len(text)
    line_text = text[start:end]
    if line_text.isascii():
        return start + byte_col
    return start + len(line_text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))


def _reference(tree: ast.Module, func: str) -> tuple[str, str | None] | None:
    """How to call einops.<func> here, and the import line that needs adding."""
    bound = _bound_names(tree)
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "einops" and not stmt.level:
            for a in stmt.names:
                local = a.asname or a.name
                if a.name == func and bound.get(local, 0) == 1:
                    return local, None
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.name == "einops":
                    local = a.asname or "einops"
                    if bound.get(local, 0) == 1:
                        return f"{local}.{func}", None
    if func not in bound:
        return func, f"from einops import {func}"
    if "einops" not in bound:
        return f"einops.{func}", "import einops"
    return None


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


def _import_edit(text: str, offsets: list[int], tree: ast.Module, import_lines: list[str]):
    """An insertion after the first block of top-level imports (else after the
    module docstring, else at the top)."""
    body = tree.body
    after = 0
    first = next(
        (i for i, s in enumerate(body) if isinstance(s, (ast.Import, ast.ImportFrom))), None
    )
    if first is not None:
        k = first
        while k + 1 < len(body) and isinstance(body[k + 1], (ast.Import, ast.ImportFrom)):
            k += 1
        after = body[k].end_lineno or body[k].lineno
    elif body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        after = body[0].end_lineno or body[0].lineno
    m = _LINE_BREAK.search(text)
    nl = m.group(0) if m else "\n"
    block = "".join(line + nl for line in import_lines)
    if after < len(offsets):
        return offsets[after], offsets[after], block
    # The block ends the file, without a final line break.
    return len(text), len(text), nl + block.rstrip("\r\n")


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
