"""Every SHP4xx suggestion shapelint makes on real released code is one einops
accepts at the tensor's rank (where the rank is known), and none is cut short.

A deterministic sample of the corpus (benchmarks/corpus.py fetches it into
$SHAPELINT_CORPUS, default benchmarks/corpus/): each suggested call runs on random tensors
built from its own pattern; where the original chain has only literal positions
(permute, transpose, flatten, movedim, .T/.mT) it runs too, on the same tensor,
and the two must agree."""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import einops
import torch

from shapelint.analysis.interpreter import ModuleAnalyzer
from shapelint.analysis.source import SourceFile
from tests.helpers import corpus_package

PACKAGES = ["timm", "x-transformers", "vit-pytorch", "transformers", "diffusers", "mamba-ssm"]
FILES_PER_PACKAGE = 25


def _sample() -> list[Path]:
    out = []
    for name in PACKAGES:
        files = sorted(
            p
            for p in corpus_package(name).rglob("*.py")
            if re.search(r"\.(transpose|permute)\(|@", p.read_text(errors="ignore"))
        )
        step = max(1, len(files) // FILES_PER_PACKAGE)
        out += files[::step][:FILES_PER_PACKAGE]
    return out


def _findings(path: Path):
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text, []
    an = ModuleAnalyzer(SourceFile(str(path), text), tree, None)
    an.run()
    return text, an.naming.findings


_SIZES = [2, 3, 5, 7, 11, 13, 4, 6, 9, 10, 8, 12]


def _side_shape(side: str, size: dict) -> list[int]:
    shape = []
    for group in re.findall(r"\([^)]*\)|\S+", side):
        names = group.strip("()").split()
        n = 1
        for a in names:
            n *= 1 if a == "1" else size.setdefault(a, _SIZES[len(size) % len(_SIZES)])
        shape.append(n)
    return shape


def _run_suggestion(rw):
    """The suggested call on tensors shaped by its own pattern: (result, inputs)."""
    left, _ = rw.pattern.split("->")
    size: dict[str, int] = {}
    sides = [s.strip() for s in left.split(",")]
    inputs = [torch.randn(_side_shape(s, size)) for s in sides]
    lengths = {k: size[k] for k, _ in rw.lengths}
    if rw.func == "rearrange":
        return einops.rearrange(inputs[0], rw.pattern, **lengths), inputs
    return einops.einsum(*inputs, rw.pattern), inputs


def _original_tail(text: str, finding) -> str | None:
    """`.permute(0, 2, 1)` of `x.permute(0, 2, 1)`: the chain, when every position
    in it is a literal."""
    seg = ast.get_source_segment(text, finding.node) or ""
    op = finding.rewrite.operands[0]
    if finding.rewrite.func != "rearrange" or not seg.startswith(op):
        return None
    tail = seg[len(op) :]
    if not re.fullmatch(
        r"(\s*\.\s*(permute|transpose|flatten|movedim|contiguous)\([-\d,\s()]*\)|\s*\.\s*m?T)+",
        tail,
    ):
        return None
    return tail


def test_corpus_suggestions_run_in_einops_at_their_rank():
    checked = compared = unknown_rank = 0
    for path in _sample():
        text, found = _findings(path)
        for f in found:
            rw = f.rewrite
            assert "…" not in rw.call(), (path, f.message)
            if rw.pattern is None:
                unknown_rank += 1
                assert "is unknown here" in f.message
                continue
            if "..." in rw.pattern or not all(r is not None for r in rw.ranks):
                continue
            where = f"{path}:{f.node.lineno}: {f.message}"
            out, inputs = _run_suggestion(rw)  # raises if einops rejects it
            assert [x.dim() for x in inputs] == list(rw.ranks), where
            checked += 1
            tail = _original_tail(text, f)
            if tail is not None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    expected = eval("(x" + tail + ")", {"x": inputs[0]})  # noqa: S307 - literal positions only
                assert torch.equal(out, expected), where
                compared += 1
    # The sample must exercise the claim, not pass by finding nothing.
    print(f"checked {checked}, compared {compared}, rank unknown {unknown_rank}")
    assert checked >= 50 and compared >= 20, (checked, compared, unknown_rank)
