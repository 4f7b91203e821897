"""`--fix` on copies of five released packages: every rewritten file parses, a
second run changes nothing, and the rewrites compute what the code they replace
computed (both run with torch on random tensors shaped by the rewrite's own
pattern: literal reshuffle chains, letter einsums, and matmuls of named tensors)."""

from __future__ import annotations

import ast
import re
import shutil
import warnings

import einops
import torch

from shapelint.fixes import fix_files
from tests.helpers import corpus_package
from tests.test_corpus_suggestions import _findings, _original_tail, _run_suggestion

PACKAGES = ["vit-pytorch", "performer-pytorch", "enformer-pytorch", "x-transformers", "timm"]
FILES_PER_PACKAGE = 30
# No time budget: it is wall-clock time, and at load 22 on 2 cores x_transformers.py took
# 9.6 s of it (0.7 s of CPU), next to the default 10 s: cut short in one run and not the
# other, the file reads as changed by the second run (seen once under such load).
NO_BUDGET = {"time_budget": 0}
_CANDIDATE = re.compile(r"\.(permute|transpose|mT|T)\b|einsum\(|@")


def _copies(tmp_path):
    out = []
    for name in PACKAGES:
        src = corpus_package(name)
        files = sorted(
            p for p in src.rglob("*.py") if _CANDIDATE.search(p.read_text(errors="ignore"))
        )
        for p in files[:FILES_PER_PACKAGE]:
            dst = tmp_path / name / p.relative_to(src)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, dst)
            out.append(dst)
    return out


def test_fix_on_five_packages_parses_and_is_idempotent(tmp_path):
    files = _copies(tmp_path)
    before = {p: p.read_text() for p in files}
    results = fix_files(files, None, NO_BUDGET, unsafe=True, write=True)
    applied = sum(r.applied for r in results)
    changed = [p for p in files if p.read_text() != before[p]]
    for p in changed:
        ast.parse(p.read_text(), filename=str(p))  # every rewritten file parses
    again = fix_files(files, None, NO_BUDGET, unsafe=True, write=False)
    assert not [r.path for r in again if r.changed]  # a second run changes nothing
    print(f"applied {applied} rewrites in {len(changed)} of {len(files)} files")
    assert applied >= 20 and len(changed) >= 5, (applied, len(changed))


def _same(a, b) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, rtol=1e-4, atol=1e-5)


def test_fixed_expressions_compute_what_the_originals_did(tmp_path):
    compared = 0
    for p in _copies(tmp_path):
        text, found = _findings(p)
        for f in found:
            if not f.fixable:
                continue
            rw = f.rewrite
            out, inputs = _run_suggestion(rw)
            where = f"{p}:{f.node.lineno}: {f.message}"
            seg = ast.get_source_segment(text, f.node) or ""
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if rw.func == "rearrange":
                    tail = _original_tail(text, f)
                    if tail is None:
                        continue
                    expected = eval("(x" + tail + ")", {"x": inputs[0]})  # noqa: S307
                elif f.code == "SHP405":
                    spec = f.node.args[0].value
                    expected = torch.einsum(spec, *inputs)
                elif all(o.isidentifier() for o in rw.operands) and len(set(rw.operands)) == 2:
                    ns = dict(zip(rw.operands, inputs, strict=True))
                    expected = eval(seg, {"torch": torch, **ns})  # noqa: S307 - two named tensors
                else:
                    continue
            assert _same(out, expected), where
            compared += 1
    print(f"compared {compared} rewrites with their originals")
    assert compared >= 20, compared
    assert einops.__version__
