"""`torch.utils._pytree.tree_flatten` / `tree_unflatten` of a structure the
analysis holds whole (analysis/pytree.py): the leaves in torch's order (None a
leaf, tuples, lists and namedtuples nodes), the structure rebuilt around new
leaves, and no cost of their own; the target's total is FlopCounterMode's."""

from __future__ import annotations

import importlib.util
import textwrap

import torch
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import FlopCounterMode

from shapelint.analysis.driver import AnalysisOptions, analyze_target
from shapelint.analysis.target import target_json

SRC = textwrap.dedent(
    """
    from collections import namedtuple

    from torch import nn
    from torch.utils._pytree import tree_flatten, tree_unflatten

    Pair = namedtuple("Pair", ["a", "b"])


    class Branch(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.lin = nn.Linear(dim, 2 * dim)

        def forward(self, x):
            return self.lin(x), (None, [x])


    class Routed(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.branch = Branch(dim)
            self.out = nn.Linear(2 * dim, dim)

        def forward(self, x):
            (first, *rest), spec = tree_flatten(self.branch(x))
            first = self.out(first)
            out, (none, (kept,)) = tree_unflatten((first, *rest), spec)
            leaves, _ = tree_flatten(Pair(out, kept))
            return leaves[0] + leaves[1] if none is None else leaves[0]
    """
)


def test_tree_flatten_and_unflatten_route_the_leaves_as_torch_does(tmp_path):
    path = tmp_path / "routed.py"
    path.write_text(SRC)
    tj = target_json(
        analyze_target(str(path), SRC, "Routed", {"dim": "8"}, {"x": "2,8"}, AnalysisOptions()),
        {},
    )
    spec = importlib.util.spec_from_file_location("routed_pytree_t", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model, x = mod.Routed(8), torch.randn(2, 8)
    with FlopCounterMode(display=False) as counter:
        y = model(x)
    assert y.shape == (2, 8)
    assert len(tree_flatten(model.branch(x))[0]) == 3  # None is a leaf in this torch
    assert tj["complete"], tj["unknown"]
    assert tj["flops_value"] == counter.get_total_flops() == 2 * 2 * 8 * 16 * 2
