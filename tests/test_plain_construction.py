"""An instance of a plain project class built in a forward: its __init__ runs, and
the call costs what it and its bases' __init__ (through super()) compute, nothing
where they store what they are given. An abstract class (ABCMeta refuses it) is no
figure. Figures against FlopCounterMode, forward and backward."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import torch
import torch.nn as nn


class Box:
    def __init__(self, q, scale=1.0):
        assert isinstance(q, torch.Tensor)
        self.q = q
        self.n = q.shape[1]
        self.scale = scale


class Gram:
    def __init__(self, q):
        self.q = q @ q.transpose(0, 1)


class Child(Gram):
    def __init__(self, q):
        super().__init__(q)
        self.kept = q


class Plain(nn.Module):
    def __init__(self, d=8, what="box"):
        super().__init__()
        self.l = nn.Linear(d, d)
        self.what = what

    def forward(self, x):
        y = self.l(x)
        if self.what == "box":
            return Box(y, scale=2.0).q
        if self.what == "gram":
            return Gram(y).q
        return Child(y).kept
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("plain_build"), "plain_build", SOURCE)


@pytest.mark.parametrize("what", ["box", "gram", "child"])
def test_a_construction_costs_what_its_init_chain_computes(source, what):
    path, mod = source
    kw = {"what": what}
    t = run_class(path, "Plain", kw, {"x": (4, 8)}, True)
    fwd, bwd, params, shape = torch_figures(mod, "Plain", kw, {"x": (4, 8)}, training=True)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert tuple(int(d) for d in t["output"]) == shape


ABSTRACT = """
import abc

import torch.nn as nn


class Base(abc.ABC):
    @abc.abstractmethod
    def value(self): ...


class Done(Base):
    def __init__(self, q):
        self.q = q

    def value(self):
        return self.q


class Half(Base):
    def __init__(self, q):
        self.q = q


class Head(nn.Module):
    def __init__(self, d=8, done=True):
        super().__init__()
        self.l = nn.Linear(d, d)
        self.done = done

    def forward(self, x):
        y = self.l(x)
        return (Done(y) if self.done else Half(y)).q
"""


def test_an_abstract_class_is_not_built_for_free(tmp_path):
    path, mod = written_module(tmp_path, "abstract_build", ABSTRACT)
    fwd, _bwd, _params, _shape = torch_figures(mod, "Head", {}, {"x": (4, 8)}, training=True)
    t = run_class(path, "Head", {}, {"x": (4, 8)}, True)
    assert t["complete"] and t["flops_value"] == fwd
    with pytest.raises(TypeError):  # ABCMeta refuses an unimplemented abstract method
        torch_figures(mod, "Head", {"done": False}, {"x": (4, 8)}, training=True)
    t = run_class(path, "Head", {"done": False}, {"x": (4, 8)}, True)
    assert not t["complete"]
