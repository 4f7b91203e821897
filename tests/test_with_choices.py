"""`with (a() if test else b()):` (analysis/with_choices.py), read as the `if` it amounts
to: a decided test enters one manager, an undecided one runs both as alternatives, each
branch's records kept apart though the body is one. Judged by FlopCounterMode, forward
and backward, against `cost FILE::M` in process."""

from __future__ import annotations

import pytest

from benchmarks.gen_modules import Generated, judge

pytest.importorskip("torch")

SOURCE = """\
from contextlib import contextmanager, nullcontext

import torch
import torch.nn.functional as F
from torch import nn


@contextmanager
def frozen():
    with torch.no_grad():
        yield


class M(nn.Module):
    def __init__(self, c, how):
        super().__init__()
        self.w = nn.Parameter(torch.randn(c, c, 3, 3))
        self.v = nn.Parameter(torch.randn(6, 4))
        self.how = how

    def forward(self, x):
        if self.how == "device":
            # x.is_cuda is not known: both managers, around the same work
            with frozen() if x.is_cuda else nullcontext():
                y = F.conv2d(x, self.w, padding=1)
            return y @ self.v
        if self.how == "flag":
            # a decided test: only the chosen manager is entered
            with nullcontext(), (frozen() if self.how == "none" else nullcontext()) as c:
                y = F.conv2d(x, self.w, padding=1)
            return y @ self.v
        with frozen() if self.how == "frozen" else nullcontext():
            y = F.conv2d(x, self.w, padding=1)
        return y @ self.v
"""


def _judged(tmp_path, how: str):
    gen = Generated(
        0, "with_choice", [], SOURCE, {"c": "4", "how": repr(how)}, {"x": "2,4,6,6"}, "M"
    )
    return judge(gen, tmp_path)


@pytest.mark.parametrize("how", ["flag", "frozen"])
def test_a_decided_choice_enters_one_manager(tmp_path, how):
    v = _judged(tmp_path, how)
    what = (v.outcome, v.truth, v.figure, v.complete, v.detail, v.backward)
    assert v.outcome == "exact", what
    assert v.backward == "exact", what


def test_an_undecided_choice_counts_the_body_once(tmp_path):
    v = _judged(tmp_path, "device")
    what = (v.outcome, v.truth, v.figure, v.complete, v.detail, v.backward)
    # the forward is the same either way; the backward is not (no_grad on one path)
    assert v.outcome == "exact", what
    assert v.backward in ("lower", "unknown"), what
