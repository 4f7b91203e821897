"""SHP323: a target whose call surely ends in a `raise` or a failing `assert` that
nothing catches (analysis/raising.py) prints that error, where the raise is, and no
total: torch refuses the forward, so there is no figure. A raise a handler catches,
or one on an alternative the analysis cannot decide, is no error; a shape error on
the way is said instead of it."""

from __future__ import annotations

import pytest

from shapelint.cost.target import render_target
from tests.helpers import run_class, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import torch
from torch import nn


class Checked(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l = nn.Linear(d, d)
        self.d = d

    def forward(self, x):
        x = self.l(x)
        assert x.shape[-1] == self.d + 1, "width"
        return x


class Refused(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l = nn.Linear(d, d)

    def forward(self, x):
        return helper(self.l(x))


def helper(y):
    if y.dim() == 2:
        raise ValueError("refused")
    return y


class Shallow(nn.Module):
    def __init__(self, d=8, depth=1):
        super().__init__()
        self.l = nn.Linear(d, d)
        assert depth > 2, "too shallow"

    def forward(self, x):
        return self.l(x)


class Caught(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l = nn.Linear(d, d)

    def forward(self, x):
        try:
            raise ValueError("no")
        except ValueError:
            x = self.l(x)
        return x


class Maybe(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l = nn.Linear(d, d)

    def forward(self, x):
        x = self.l(x)
        if x.sum() > 0:
            raise ValueError("positive")
        return x
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("sure_raise"), "sure_raise_mod", SOURCE)


def _line(path, text: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)


@pytest.mark.parametrize(
    "name, where, exc",
    [
        ("Checked", '"width"', "AssertionError"),
        ("Refused", '"refused"', "ValueError"),
        ("Shallow", '"too shallow"', "AssertionError"),
    ],
)
def test_a_sure_raise_is_an_error_and_no_total(source, name, where, exc):
    path, mod = source
    line = _line(path, where)
    with pytest.raises(Exception, match="width|refused|too shallow"):
        getattr(mod, name)()(torch.randn(2, 8))
    t = run_class(path, name, {}, {"x": (2, 8)}, False)
    assert not t["complete"]
    assert [(d["code"], d["line"]) for d in t["diagnostics"]] == [("SHP323", line)]
    assert exc in t["diagnostics"][0]["message"]
    text = render_target(t)
    assert "would raise: 1 error, no total" in text and "FLOPs" not in text


@pytest.mark.parametrize("name", ["Caught", "Maybe"])
def test_a_raise_caught_or_undecided_is_no_error(source, name):
    path, _ = source
    t = run_class(path, name, {}, {"x": (2, 8)}, False)
    # the handler runs in the body's place; a raising branch the run cannot decide
    # is no way the call returns by: the figure is the other branch's
    assert not t["diagnostics"] and t["complete"]
