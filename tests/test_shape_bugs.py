"""Realistic shape bugs in annotated models (tests/shape_bug_cases.py): torch
judges that each is a bug, shapelint must pass every fix and catch the bugs
listed in CAUGHT (a regression test: the list only grows)."""

from __future__ import annotations

import pytest
import torch

from tests.helpers import diagnose
from tests.shape_bug_cases import CASES, SIZES

# The bugs shapelint reports today (16 of 17). Before the dim-name rule (SHP315),
# the name-aware SHP306 and the reshape-count check: 1 (einsum-wrong-axis, SHP304).
# Missed: split-heads-wrong-size (d_model//n_heads against n: only sizes settle
# it, and `check --dim` does).
CAUGHT = {
    "transposed-matmul",
    "operand-order",
    "linear-wrong-input",
    "linear-wrong-width",
    "residual-wrong-width",
    "cat-wrong-axis",
    "view-wrong-head-width",
    "bias-before-projection",
    "einsum-wrong-axis",
    "return-untransposed",
    "pool-wrong-dim",
    "attention-values-transposed",
    "sdpa-heads-not-moved",
    "layernorm-wrong-width",
    "heads-merged-wrong",
    "weight-not-transposed",
}


def _run(source: str, call: str):
    torch.manual_seed(0)
    ns: dict = {}
    exec(compile(source, "<case>", "exec"), ns)  # noqa: S102 - the test's own snippets
    ns["S"] = SIZES
    ns["T"] = lambda *names: torch.randn(*(SIZES[n] for n in names))
    return eval(call, ns)  # noqa: S307


def _errors(source: str, **options) -> list[str]:
    """Shape findings that fail a check (errors and warnings, not infos)."""
    return [
        f"{d.code} {d.message}"
        for d in diagnose(source, **options)
        if d.code.startswith("SHP3") and d.severity in ("error", "warning")
    ]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_case_is_a_real_bug_and_its_fix_runs(case):
    good = _run(case.fixed(), case.call)
    try:
        bad = _run(case.broken(), case.call)
    except (RuntimeError, ValueError, IndexError):
        return
    assert bad.shape != good.shape, f"{case.name}: the broken code runs and agrees"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_shapelint_passes_the_fix_and_catches_the_bug(case):
    assert _errors(case.fixed()) == []
    caught = bool(_errors(case.broken()))
    assert caught == (case.name in CAUGHT), (case.name, _errors(case.broken()))


def test_at_the_sizes_the_bugs_happen_more_are_caught():
    """`check --dim` with the sizes the cases run at: what only numbers settle
    (d_model//n_heads against n) is an error too, and the fixes stay clean."""
    sized = {c.name for c in CASES if _errors(c.broken(), check_dims=SIZES)}
    assert sized == CAUGHT | {"split-heads-wrong-size"} == {c.name for c in CASES}
    assert not [c.name for c in CASES if _errors(c.fixed(), check_dims=SIZES)]
