"""torch.distributions' Normal, Categorical, Independent and Transform (stubs/source/
shapelint_torch_distributions.py): building one runs the tensor ops torch's
constructor runs, and what a forward reads off one (log_prob, entropy, mean,
logits) is shaped and counted as torch does. Against FlopCounterMode, forward and
backward, and the output's shape; a forward that returns the distribution itself
costs torch's 0."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import torch
import torch.nn as nn
from torch.distributions import Categorical, Independent, Normal, Transform


class Gauss(nn.Module):
    def __init__(self, d=8, what="log_prob"):
        super().__init__()
        self.mu = nn.Linear(d, d)
        self.sigma = nn.Linear(d, d)
        self.what = what

    def forward(self, x):
        dist = Normal(self.mu(x), self.sigma(x).exp())
        if self.what == "log_prob":
            return dist.log_prob(x)
        if self.what == "entropy":
            return dist.entropy()
        if self.what == "independent":
            return Independent(dist, 1).mean * dist.stddev
        return Normal(self.mu(x), 1.0).log_prob(x[0])


class Cat(nn.Module):
    def __init__(self, d=8, n=5):
        super().__init__()
        self.head = nn.Linear(d, n)

    def forward(self, x):
        return Categorical(logits=self.head(x)).logits


class Policy(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.head = nn.Linear(d, d)

    def forward(self, x):
        return Independent(Normal(self.head(x), torch.ones(d := x.shape[-1])), 1)


class Affine(Transform):
    def __init__(self, weight, **kwargs):
        super().__init__(**kwargs)
        self.weight = weight

    def _call(self, x):
        return x @ self.weight


class Flow(nn.Module):
    def __init__(self, d=8, cache_size=1, calls=1):
        super().__init__()
        self.head = nn.Linear(d, d * d)
        self.cache_size = cache_size
        self.calls = calls

    def forward(self, x):
        t = Affine(self.head(x[0]).view(x.shape[-1], -1), cache_size=self.cache_size)
        if self.calls == 0:
            return t
        y = t(x)
        if self.calls == 1:
            return y
        return t(x) + t(y)  # the first again: the cache's, where it keeps one
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("dists"), "dist_modules", SOURCE)


@pytest.mark.parametrize(
    ("name", "kw"),
    [
        ("Gauss", {}),
        ("Gauss", {"what": "entropy"}),
        ("Gauss", {"what": "independent"}),
        ("Gauss", {"what": "number"}),
        ("Cat", {}),
    ],
)
def test_what_a_forward_reads_off_a_distribution(source, name, kw):
    path, mod = source
    t = run_class(path, name, kw, {"x": (4, 8)}, True)
    fwd, bwd, params, shape = torch_figures(mod, name, kw, {"x": (4, 8)}, training=True)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert tuple(int(d) for d in t["output"]) == shape


def test_a_returned_distribution_costs_what_building_it_costs(source):
    path, mod = source
    t = run_class(path, "Policy", {}, {"x": (4, 8)}, False)
    m = mod.Policy().eval()
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as fc:
        out = m(torch.randn(4, 8))
    assert isinstance(out, torch.distributions.Independent) and out.batch_shape == (4,)
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fc.get_total_flops()


@pytest.mark.parametrize("kw", [{}, {"cache_size": 0}, {"calls": 0}, {"calls": 2}])
def test_a_transform_subclass_built_and_called(source, kw):
    # Transform.__call__ runs the subclass's _call, through its one-entry cache
    # where cache_size is 1 (the same x again costs nothing); built, not called: 0.
    # Called again, the instance is not known after its first call (a store into
    # it on a path that call did not take): a bound, never more than torch's
    from torch.utils.flop_counter import FlopCounterMode

    path, mod = source
    t = run_class(path, "Flow", kw, {"x": (4, 8)}, True)
    m = mod.Flow(**kw)
    with FlopCounterMode(display=False) as fc:
        m(torch.randn(4, 8))
    fwd = fc.get_total_flops()
    assert t["params_value"] == sum(p.numel() for p in m.parameters())
    if kw.get("calls") == 2:
        assert t["flops_value"] == fwd if t["complete"] else (t["flops_value"] or 0) <= fwd
        return
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fwd
