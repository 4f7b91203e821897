"""A module's forward stored through its class in a target run
(analysis/class_forward.py): `Block.forward = Block.twice` or
`setattr(Block, "forward", f)` where the run makes the store, found along the MRO after
the instance's own attribute and bound to the instance; figures (forward, backward,
parameters, output shape) against FlopCounterMode. A store the run does not make
leaves the class's forward a bound."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import os

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l = nn.Linear(d, d)

    def forward(self, x):
        return self.l(x)

    def twice(self, x):
        return self.l(self.l(x))


class Plain(Block):
    pass


class Own(Block):
    def forward(self, x):
        return self.l(x) * 2


class Lambda(Block):
    pass


class Later(Block):
    pass


class Base(Block):
    # its own forward comes before Block's stored one along the MRO
    def forward(self, x):
        return self.l(x) + 1


class Maybe(Base):
    pass


class Never(Base):
    pass


Block.forward = Block.twice
setattr(Lambda, "forward", lambda self, x: self.l(self.l(self.l(x))))
if os.environ.get("SHAPELINT_TEST_SWAP"):
    Maybe.forward = Maybe.twice


def swap_later():
    Later.forward = lambda self, x: self.l(x) @ self.l.weight


def swap_never():
    Never.forward = Never.twice


class Net(nn.Module):
    # the class's store reaches an instance built before it, and subclasses without
    # their own forward; a subclass's own forward comes first along the MRO
    def __init__(self, d=8):
        super().__init__()
        self.b = Block(d)
        self.p = Plain(d)
        self.o = Own(d)
        self.f = Lambda(d)

    def forward(self, x):
        return self.f(self.o(self.p(self.b(x))))


class Made(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = Later(d)
        swap_later()

    def forward(self, x):
        return self.a(x) + Block.twice(self.a, x)


class Undecided(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.m = Maybe(d)

    def forward(self, x):
        return self.m(x)


class NotRun(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.n = Never(d)

    def forward(self, x):
        return self.n(x)
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("class_forward"), "class_fwd", SOURCE)


@pytest.mark.parametrize("name", ["Net", "Made"])
def test_a_forward_stored_through_the_class_runs(source, name):
    path, mod = source
    fwd, bwd, params, shape = torch_figures(mod, name, {}, {"x": (2, 8)}, True)
    t = run_class(path, name, {}, {"x": (2, 8)}, True)
    assert t["complete"] and t["backward_complete"], (t["unknown"], t["backward_unknown"])
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert tuple(int(d) for d in t["output"]) == shape


@pytest.mark.parametrize("name", ["Undecided", "NotRun"])
def test_a_store_the_run_cannot_place_leaves_a_bound(source, name):
    # Maybe's store depends on the environment, Never's runs in a function nobody
    # calls: its class's forward is not modelled (dynamic.py's scan), a bound
    path, mod = source
    fwd, *_ = torch_figures(mod, name, {}, {"x": (2, 8)}, False)
    t = run_class(path, name, {}, {"x": (2, 8)}, False)
    assert not t["complete"] and t["unknown"]
    assert int(t["flops"]) <= fwd
