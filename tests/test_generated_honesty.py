"""Generated modules, every construct family, judged by FlopCounterMode (issue 28).

benchmarks/gen_modules.py writes the modules and judges them; here a fixed set of
seeds per family (derandomized: the same modules on every run) must have no
complete figure that is wrong, no lower bound above the count, and no complete
figure for a module whose forward raises; where the forward is exact, the same of
its backward. The benchmark runs thousands.
"""

from __future__ import annotations

import pytest

from benchmarks.gen_modules import (
    BACKWARD_FAILURES,
    FAILURES,
    FAMILIES,
    MIXED,
    MIXED_MORE,
    MORE,
    generate,
    judge,
)

pytest.importorskip("torch")
pytest.importorskip("einops")

PER_FAMILY = 16


def _params():
    for k, family in enumerate(sorted(FAMILIES) + [MIXED]):
        yield pytest.param(family, range(1000 * k, 1000 * k + PER_FAMILY), id=family)
    # session 19's table (more of Python and torch), seeds of their own
    for k, family in enumerate(sorted(MORE) + [MIXED_MORE]):
        yield pytest.param(
            family, range(50_000 + 1000 * k, 50_000 + 1000 * k + PER_FAMILY), id=family
        )


@pytest.mark.parametrize("family,seeds", list(_params()))
def test_generated_modules_are_never_wrong(tmp_path, family, seeds):
    bad = []
    for seed in seeds:
        v = judge(generate(seed, family), tmp_path)
        if v.outcome in FAILURES:
            bad.append((seed, v.gen.variants, v.outcome, v.truth, v.figure, v.detail))
        if v.backward in BACKWARD_FAILURES:
            bad.append((seed, v.gen.variants, f"backward {v.backward}", v.backward_truth,
                        v.backward_figure, ""))  # fmt: skip
    assert not bad, bad
