"""A slice of an nn.ModuleList or nn.Sequential is the list of the items Python's
slice keeps (`self.layers[: config.num_hidden_layers]` in HF decoders): iterated
or called, it costs what FlopCounterMode counts."""

from __future__ import annotations

import textwrap
import types

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from shapelint.analysis.driver import analyze_target
from shapelint.analysis.target import target_json

SRC = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Stack(nn.Module):
        def __init__(self, n, k, widths=(8, 16, 24, 32, 40)):
            super().__init__()
            self.k = k
            self.layers = nn.ModuleList([nn.Linear(8, w) for w in widths[:n]])
            self.seq = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 4))

        def forward(self, x):
            y = x
            for layer in self.layers[: self.k]:
                y = layer(x)
            for layer in self.layers[1:]:
                y = layer(x)
            for layer in self.layers[::-2]:
                y = layer(x)
            for layer in self.layers[-1:]:
                y = layer(x)
            return self.seq[:2](x), self.seq[1:](x), y
    """
)


def _flops(n: int, k: int) -> tuple[dict, int]:
    mod = types.ModuleType("stack")
    exec(compile(SRC, "stack.py", "exec"), mod.__dict__)  # noqa: S102 - the test's own code
    with FlopCounterMode(display=False) as counter:
        mod.Stack(n, k)(torch.randn(2, 8))
    tj = target_json(
        analyze_target("stack.py", SRC, "Stack", {"n": str(n), "k": str(k)}, {"x": "2,8"}), {}
    )
    return tj, counter.get_total_flops()


@pytest.mark.parametrize(("n", "k"), [(4, 2), (5, 5), (3, 7), (2, 0), (1, -1)])
def test_slices_of_module_lists_cost_what_torch_counts(n, k):
    tj, truth = _flops(n, k)
    assert tj["complete"], tj["unknown"]
    assert tj["flops_value"] == truth
