"""allowance.CutReads: a read of a file an import-time allowance cut is cut at once
where it would run the same statements again with no more of them left."""

from __future__ import annotations

import pytest

from shapelint.analysis.allowance import ACTIVE, Allowance, CutReads, StatementTooLong


class _Loads:
    """A file's reading: counts its calls; past `cost` statements of the open
    allowance it is cut, as a top level running too long is."""

    def __init__(self, cost: int) -> None:
        self.cost = cost
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        allowance = ACTIVE.get()
        if allowance is not None and allowance.left < self.cost:
            allowance.fired = True
            raise StatementTooLong(allowance)
        return "analyzer"


def _under(steps: int, reads: CutReads, key, load) -> str | None:
    """reads.read(key, load) inside an allowance of `steps`: None where it was cut."""
    allowance = Allowance(steps)
    token = ACTIVE.set(allowance)
    try:
        return reads.read(key, load)
    except StatementTooLong as e:
        assert e.allowance is allowance and allowance.fired
        return None
    finally:
        ACTIVE.reset(token)


def test_a_read_cut_before_from_the_same_state_is_cut_at_once():
    reads, load = CutReads(), _Loads(cost=50)
    assert _under(10, reads, "m", load) is None and load.calls == 1
    assert _under(10, reads, "m", load) is None
    assert _under(5, reads, "m", load) is None  # fewer statements left: cut too
    assert load.calls == 1  # read once, not three times


def test_a_read_with_more_statements_left_is_read_again():
    reads, load = CutReads(), _Loads(cost=50)
    assert _under(10, reads, "m", load) is None
    assert _under(100, reads, "m", load) == "analyzer"
    assert load.calls == 2


def test_a_file_finished_since_makes_the_read_again():
    # the first read may have read a file whole that the next one finds loaded
    reads, load = CutReads(), _Loads(cost=50)
    assert _under(10, reads, "m", load) is None
    assert reads.read("other", lambda: "other's") == "other's"  # outside any allowance
    assert _under(10, reads, "m", load) is None
    assert load.calls == 2
    assert _under(10, reads, "m", load) is None
    assert load.calls == 2


def test_another_file_is_read():
    reads = CutReads()
    first, second = _Loads(cost=50), _Loads(cost=50)
    assert _under(10, reads, "m", first) is None
    assert _under(10, reads, "n", second) is None
    assert (first.calls, second.calls) == (1, 1)


def test_no_cut_outside_an_allowance_nor_in_one_already_cut():
    reads, load = CutReads(), _Loads(cost=50)
    assert _under(10, reads, "m", load) is None
    before = reads.finished
    assert reads.read("m", load) == "analyzer"  # an import statement's read: whole
    assert load.calls == 2 and reads.finished == before + 1
    allowance = Allowance(0)
    allowance.fired = True  # the stack unwinding from its cut: nothing is cut again
    token = ACTIVE.set(allowance)
    try:
        assert reads.read("n", lambda: "n's") == "n's"
    finally:
        ACTIVE.reset(token)


def test_the_cut_at_once_is_the_allowance_firing():
    reads, load = CutReads(), _Loads(cost=50)
    assert _under(10, reads, "m", load) is None
    allowance = Allowance(10)
    token = ACTIVE.set(allowance)
    try:
        with pytest.raises(StatementTooLong):
            reads.read("m", load)
    finally:
        ACTIVE.reset(token)
    assert allowance.fired and allowance.left < 0 and load.calls == 1


LEFT_OPEN = """
import torch
from torch import nn


class M(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        return self.a(x)
"""


def test_an_allowance_left_open_by_an_asynchronous_exception_cuts_no_later_analysis(tmp_path):
    # a budget or an alarm that lands in import_time.run before its `finally` resets
    # leaves its allowance active in the thread: the next target or file analysed in
    # that process starts outside any import-time statement all the same (a forked
    # worker of the differential harness raised StatementTooLong out of a target run)
    from shapelint.analysis.driver import analyze_source
    from shapelint.cli.options import analysis_options, load_config
    from shapelint.cost.target import run_target
    from shapelint.notation.target import Target

    path = tmp_path / "m.py"
    path.write_text(LEFT_OPEN)
    options = analysis_options(load_config([path], None), dtype=None, dims={})
    token = ACTIVE.set(Allowance(0))
    try:
        t = run_target(Target(str(path), "M"), [], ["x=2,8"], {}, options)
        assert t["complete"] and int(t["flops"]) == 256
        ACTIVE.set(Allowance(0))
        out = analyze_source(str(path), LEFT_OPEN)
        assert not [d for d in out.result.diagnostics if d.code == "SHP002"]
    finally:
        ACTIVE.reset(token)
