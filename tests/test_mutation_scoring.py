"""How the mutation harness (benchmarks/mutations.py) decides a bug is caught: a new
error near the edit, or at a line of the file torch's traceback of the mutant passes
through (the op that raises, in whatever class; a call that led there)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"

SOURCE = """class FeedForward:
    def __init__(self, dim, hidden_dim):
        self.net = (dim, hidden_dim)


class Transformer:
    def forward(self, x):
        x = self.ff(x) + x
        return x


def helper(x):
    return x
"""


@pytest.fixture(scope="module")
def mutations():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import mutations

        yield mutations
    finally:
        sys.path.remove(str(BENCHMARKS))


def _mutant(mutations):
    return mutations.Mutant("linear_out", True, 3, 3, 20, 37, "(dim, hidden_dim)", "(dim, dim)")


def _found(*lines):
    return {
        "check": {
            "diagnostics": [
                {"line": n, "code": "SHP308", "severity": "error", "message": f"at {n}"}
                for n in lines
            ]
        }
    }


def test_an_error_where_torch_raises_is_a_catch_outside_the_edits_class(mutations):
    got = mutations.score(_mutant(mutations), SOURCE, _found(), _found(8), raised_at=[8])
    assert got["check"] == {**got["check"], "near": False, "caught": True, "any": True}


def test_an_error_torch_does_not_pass_through_is_no_catch(mutations):
    got = mutations.score(_mutant(mutations), SOURCE, _found(), _found(13), raised_at=[8])
    assert (got["check"]["near"], got["check"]["caught"], got["check"]["any"]) == (
        False,
        False,
        True,
    )


def test_an_error_near_the_edit_is_a_catch_without_a_traceback(mutations):
    got = mutations.score(_mutant(mutations), SOURCE, _found(), _found(2))
    assert (got["check"]["near"], got["check"]["caught"]) == (True, True)


def test_an_error_the_original_has_too_is_no_catch(mutations):
    got = mutations.score(_mutant(mutations), SOURCE, _found(8), _found(8), raised_at=[8])
    assert (got["check"]["caught"], got["check"]["any"]) == (False, False)


def test_the_annotated_file_is_scored_in_its_own_lines(mutations, monkeypatch):
    # the import line the annotations add sits before every scored line: torch's
    # traceback (in the unannotated mutant's lines) moves down by one with it
    monkeypatch.setattr(mutations.mutation_annotate, "shift", lambda source: 1)
    got = mutations.score_annotated(_mutant(mutations), SOURCE, _found(), _found(9), [8])
    assert (got["near"], got["caught"]) == (False, True)
    got = mutations.score_annotated(_mutant(mutations), SOURCE, _found(), _found(8), [8])
    assert (got["near"], got["caught"]) == (False, False)


RAISES = """import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * dim)

    def forward(self, x):
        return self.proj(x) + x


class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.block = Block(dim)

    def forward(self, x):
        return self.block(x)
"""


def test_torchs_verdict_keeps_the_lines_of_its_traceback(tmp_path):
    pytest.importorskip("torch")
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import mutation_torch
    finally:
        sys.path.remove(str(BENCHMARKS))
    path = tmp_path / "net.py"
    path.write_text(RAISES)
    job = {"module": "net", "file": str(path), "cls": "Net", "init": {"dim": "4"}}
    job["inputs"] = {"x": [[2, 4], None]}
    verdict = mutation_torch.judge(job, RAISES, trace=False)
    # Net.forward's call, then Block's add, where torch refuses [2, 8] + [2, 4]
    assert verdict["verdict"] == "raises"
    assert verdict["raised_at"] == [20, 11]


def test_a_relative_tree_is_the_one_judged(mutations, tmp_path, monkeypatch):
    # the check runs with the subject's copy as its working directory: a relative
    # tree on PYTHONPATH would name nothing there, and the installed shapelint be judged
    seen = {}

    def run(cmd, **kw):
        seen.update(kw)
        return mutations.subprocess.CompletedProcess(cmd, 0, stdout="{}", stderr="")

    monkeypatch.setattr(mutations.subprocess, "run", run)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "copy").mkdir()
    subject = mutations.Subject("s", "pkg", "m.py", "C", {}, {})
    mutations.shapelint_verdict(subject, tmp_path / "copy", "x = 1\n", Path("snap"))
    assert seen["cwd"] == str(tmp_path / "copy")
    assert seen["env"]["PYTHONPATH"] == str(tmp_path / "snap")
