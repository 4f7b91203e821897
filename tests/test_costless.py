"""`check` and the flake8 plugin analyse without costs (AnalysisOptions.costs=False):
no FLOP or byte formula is built, and the diagnostics must be exactly those of the
full analysis. Held here on every example of the rule catalog, the realistic shape
bugs and the fixtures; measured on the whole corpus (benchmarks/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shapelint.analysis.driver import analyze_files, analyze_text
from shapelint.cache import Cache
from shapelint.config import Config
from shapelint.options import AnalysisOptions
from shapelint.rules import RULES
from tests.shape_bug_cases import CASES

ROOT = Path(__file__).resolve().parent.parent

SNIPPETS = [
    *(
        (f"{r.code}-invalid{i}", ex.source)
        for r in RULES.values()
        for i, ex in enumerate(r.invalid)
    ),
    *((f"{r.code}-valid{i}", ex) for r in RULES.values() for i, ex in enumerate(r.valid)),
    *((f"bug-{c.name}-fixed", c.fixed()) for c in CASES),
    *((f"bug-{c.name}-broken", c.broken()) for c in CASES),
    *((str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "fixtures").rglob("*.py"))),
]


def _rows(text: str, costs: bool) -> list:
    res = analyze_text("snippet.py", text, AnalysisOptions(costs=costs))
    return [
        (d.line, d.column, d.end_line, d.end_column, d.code, d.message) for d in res.diagnostics
    ]


@pytest.mark.parametrize(("name", "text"), SNIPPETS, ids=[n for n, _ in SNIPPETS])
def test_costless_diagnostics_are_the_full_analysis(name, text):
    assert _rows(text, costs=False) == _rows(text, costs=True)


def test_costless_result_has_no_cost_records():
    text = (ROOT / "fixtures" / "models" / "transformer_lm.py").read_text()
    full = analyze_text("m.py", text, AnalysisOptions())
    bare = analyze_text("m.py", text, AnalysisOptions(costs=False))
    assert full.calls and full.functions
    assert bare.calls == [] and bare.functions == []


def _cached(src: Path, options: AnalysisOptions):
    cache = Cache.for_config(Config(root=src.parent), options)
    (res,) = analyze_files([src], options, jobs=1, cache=cache)
    cache.flush()
    return res


def test_cost_after_check_is_not_served_check_results(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import torch\n\ndef f(a, b):\n    return torch.einsum('ij,jk->ik', a, b)\n")
    assert _cached(src, AnalysisOptions(costs=False)).calls == []
    full = _cached(src, AnalysisOptions())
    assert [c["op"] for c in full.calls] == ["torch.einsum"]
    assert full.calls[0]["flops"] == "2*i*j*k"
    assert _cached(src, AnalysisOptions(costs=False)).calls == []
