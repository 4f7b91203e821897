"""Hooks on every module a target run registers (`register_module_forward_hook`,
`register_module_forward_pre_hook`; analysis/module_hooks.py): run round each module
call from then on, before the module's own, as `Module._call_impl` runs them (the
target's own call, its children, a Sequential and its layers, a compiled module and
the module it runs); removed by their handle. Figures against FlopCounterMode.
A hook on every module the analysis cannot place leaves every call not modelled."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import torch
from einops.layers.torch import Rearrange
from torch import nn
from torch.nn.modules.module import register_module_forward_pre_hook


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.l = nn.Linear(d, d)

    def forward(self, x):
        return self.l(x).relu()


class Post(nn.Module):
    # every Linear's output times w: the one held, the Sequential's two, the block's
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.w = nn.Parameter(torch.randn(d, d))
        nn.modules.module.register_module_forward_hook(
            lambda m, args, out: out @ self.w if isinstance(m, nn.Linear) else out
        )
        self.s = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
        self.b = Block(d)

    def forward(self, x):
        return self.b(self.s(self.l0(x)))


class Pre(nn.Module):
    # every call's input doubled, the target's own too: counted where it runs
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.b = Block(d)
        register_module_forward_pre_hook(lambda m, args: (args[0] * 2,))

    def forward(self, x):
        return self.b(self.l0(x))


class Removed(nn.Module):
    # the hook runs for the first call only
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.w = nn.Parameter(torch.randn(d, d))

    def forward(self, x):
        h = nn.modules.module.register_module_forward_hook(lambda m, a, o: o @ self.w)
        x = self.l0(x)
        h.remove()
        return self.l0(x)


class Einops(nn.Module):
    # einops' layers are modules too: the hook runs before Rearrange's call as before
    # the target's and the Linear's
    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))
        self.r = Rearrange("b (h d) -> b h d", h=1)
        self.l0 = nn.Linear(d, d)
        register_module_forward_pre_hook(lambda m, args: (args[0] @ self.w,))

    def forward(self, x):
        return self.r(self.l0(x))


class Compiled(nn.Module):
    # torch runs a global hook for the compiled module and again for the one it runs
    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))
        self.c = torch.compile(nn.Linear(d, d))
        nn.modules.module.register_module_forward_hook(lambda m, a, o: o @ self.w)

    def forward(self, x):
        return self.c(x)
"""

NOT_PLACED = """
import os

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.w = nn.Parameter(torch.randn(d, d))
        nn.modules.module.register_module_forward_hook(
            lambda m, *a: a[-1] @ self.w, with_kwargs=os.environ.get("KW") == "1"
        )

    def forward(self, x):
        return self.l0(x)
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("global_hooks"), "global_hooks_mod", SOURCE)


@pytest.fixture(autouse=True)
def _no_hooks_left():
    from torch.nn.modules import module as torch_module

    yield
    torch_module._global_forward_hooks.clear()
    torch_module._global_forward_pre_hooks.clear()


@pytest.mark.parametrize("name", ["Post", "Pre", "Removed", "Einops", "Compiled"])
def test_hooks_on_every_module_run_as_torch_runs_them(source, name):
    path, mod = source
    fwd, bwd, params, shape = torch_figures(mod, name, {}, {"x": (2, 8)}, True)
    t = run_class(path, name, {}, {"x": (2, 8)}, True)
    assert t["complete"], t["unknown"]
    assert (t["flops_value"], t["params_value"]) == (fwd, params)
    if name != "Compiled":  # the compiled one's saved bytes are not known
        assert t["backward_complete"] and t["flops_backward_value"] == bwd
    assert tuple(int(d) for d in t["output"]) == shape


def test_a_hook_on_every_module_the_run_cannot_place_leaves_calls_not_known(tmp_path):
    # with_kwargs as the environment says: which arguments the hook is given, not known
    path, _ = written_module(tmp_path, "not_placed", NOT_PLACED)
    t = run_class(path, "Net", {}, {"x": (2, 8)}, False)
    assert not t["complete"]
    assert any("every module" in u["why"] for u in t["unknown"]), t["unknown"]
