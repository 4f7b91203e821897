"""`torch.compile(f)` of a project function: under FlopCounterMode dynamo runs the frame
eagerly, so the compiled call's FLOPs, forward and backward, are f's; what it saves for
backward is AOT autograd's partitioner's, not known. Reached as torch.compile's value,
as `@torch.compile`, and through a class used as a decorator whose `__call__` calls a
property that compiles the function where it can and falls back to it where it cannot
(k-diffusion's `compile_wrap`). Figures against FlopCounterMode, forward and backward."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import os
from functools import update_wrapper

import torch
import torch.nn as nn


class compile_wrap:
    def __init__(self, function, *args, **kwargs):
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self._compiled_function = None
        update_wrapper(self, function)

    @property
    def compiled_function(self):
        if self._compiled_function is not None:
            return self._compiled_function
        if os.environ.get("SHAPELINT_TEST_COMPILE", "1") == "1":
            try:
                self._compiled_function = torch.compile(self.function, *self.args, **self.kwargs)
            except RuntimeError:
                self._compiled_function = self.function
        else:
            self._compiled_function = self.function
        return self._compiled_function

    def __call__(self, *args, **kwargs):
        return self.compiled_function(*args, **kwargs)


@compile_wrap
def wrapped(x, w):
    return (x @ w).relu()


@torch.compile
def decorated(x, w):
    return x @ w


def plain(x, w):
    return (x @ w).relu() * 2


compiled_plain = torch.compile(plain, dynamic=False)


class Net(nn.Module):
    def __init__(self, d=8, how="wrapped"):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, 2 * d))
        self.how = how

    def forward(self, x):
        if self.how == "wrapped":
            return wrapped(x, self.w)
        if self.how == "decorated":
            return decorated(x, self.w)
        return compiled_plain(x, self.w)
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("compiled"), "compiled_mod", SOURCE)


@pytest.mark.parametrize("how", ["wrapped", "decorated", "value"])
def test_a_compiled_function_costs_what_it_computes(source, how):
    path, mod = source
    kw = {"how": how}
    t = run_class(path, "Net", kw, {"x": (4, 8)}, True)
    fwd, bwd, params, shape = torch_figures(mod, "Net", kw, {"x": (4, 8)}, training=True)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert tuple(int(d) for d in t["output"]) == shape
    # the compiled graph keeps what AOT autograd's partitioner picks
    assert not t["activation_complete"]
    assert any("torch.compile" in u["why"] for u in t["activation_unknown"])


MODULES = """
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.l = nn.Linear(d, d)
        self.w = nn.Parameter(torch.randn(d, d))

    def forward(self, x):
        return self.l(x) @ self.w


class Layer(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l0 = torch.compile(nn.Linear(d, 2 * d))

    def forward(self, x):
        return self.l0(x)


class Project(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.b = torch.compile(Block(d), dynamic=False)

    def forward(self, x):
        return self.b(self.b(x))


class Shared(nn.Module):
    # the module and its compiled self: one set of parameters, counted once
    def __init__(self, d=8):
        super().__init__()
        self.b = Block(d)
        self.fast = torch.compile(self.b)

    def forward(self, x):
        return self.fast(x) + self.b(x)


class Stack(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.s = torch.compile(nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 3)))

    def forward(self, x):
        return self.s(x)


class HookedInside(nn.Module):
    # a hook on the module compiled runs where its call runs, inside the compiled one's
    def __init__(self, d=8):
        super().__init__()
        self.l = nn.Linear(d, d)
        self.w = nn.Parameter(torch.randn(d, d))
        self.l.register_forward_hook(lambda m, args, out: out @ self.w)
        self.c = torch.compile(self.l)

    def forward(self, x):
        return self.c(x)


class HookedOutside(nn.Module):
    # a hook on the compiled module itself runs round its call
    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))
        self.c = torch.compile(nn.Linear(d, d))
        self.c.register_forward_hook(lambda m, args, out: out @ self.w)

    def forward(self, x):
        return self.c(x)


class Disabled(nn.Module):
    # `disable=True` hands the module back: a hook on what it returns is on the module
    def __init__(self, d=8):
        super().__init__()
        self.l = nn.Linear(d, d)
        self.w = nn.Parameter(torch.randn(d, d))
        torch.compile(self.l, disable=True).register_forward_hook(lambda m, a, o: o @ self.w)

    def forward(self, x):
        return self.l(x)


class Frozen(nn.Module):
    # eval() and requires_grad_ reach the module through `_orig_mod`
    def __init__(self, d=8):
        super().__init__()
        self.c = torch.compile(nn.Sequential(nn.Linear(d, d), nn.Dropout(0.5)))
        self.c.requires_grad_(False)
        self.head = nn.Linear(d, 2)

    def forward(self, x):
        return self.head(self.c(x))
"""


@pytest.fixture(scope="module")
def compiled_modules(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("compiled_modules"), "compiled_mods", MODULES)


@pytest.mark.parametrize(
    "name",
    ["Layer", "Project", "Shared", "Stack", "HookedInside", "HookedOutside", "Disabled", "Frozen"],
)
def test_a_compiled_module_runs_the_module_it_was_given(compiled_modules, name):
    """torch.compile(m) is an OptimizedModule registering m as `_orig_mod`: calling it
    runs m (under FlopCounterMode, eagerly), its parameters are m's."""
    path, mod = compiled_modules
    t = run_class(path, name, {}, {"x": (4, 8)}, True)
    fwd, bwd, params, shape = torch_figures(mod, name, {}, {"x": (4, 8)}, training=True)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert tuple(int(d) for d in t["output"]) == shape
    assert t["activation_complete"] == (name == "Disabled")  # compiled: what AOT saves
    if name == "Frozen":
        m = getattr(mod, name)()
        trainable = sum(p.numel() for p in m.parameters() if p.requires_grad)
        assert t["trainable_params_value"] == trainable == 18
