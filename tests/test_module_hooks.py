"""Forward hooks and pre-hooks a target run registers (analysis/module_hooks.py): run
round forward where torch's Module._call_impl runs them, on the module itself, by
position, removed by their handle; figures (forward, backward, parameters, output
shape) against FlopCounterMode. What the analysis cannot place stays not costed."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import torch
from torch import nn


class Post(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.w0 = nn.Parameter(torch.randn(d, d))
        self.l0.register_forward_hook(lambda m, args, out: out @ self.w0)

    def forward(self, x):
        return self.l0(x)


class Pre(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.w0 = nn.Parameter(torch.randn(d, d))
        self.l0.register_forward_pre_hook(lambda m, args: args[0] @ self.w0)

    def forward(self, x):
        return self.l0(x)


def narrow(m, args, out):
    return out[..., :2]


class Ordered(nn.Module):
    # the same two hooks, the product first or second: prepend decides the cost
    def __init__(self, d=8, prepend=False):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.w0 = nn.Parameter(torch.randn(d, d))
        self.l0.register_forward_hook(narrow)
        self.l0.register_forward_hook(lambda m, args, out: out @ self.w0[: out.shape[-1]], prepend=prepend)

    def forward(self, x):
        return self.l0(x)


class Own(nn.Module):
    # on the target itself: calling it runs the hook, m is the module
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.w0 = nn.Parameter(torch.randn(d, d))
        self.register_forward_hook(lambda m, args, out: out @ m.w0)

    def forward(self, x):
        return self.l0(x)


class Keywords(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.w0 = nn.Parameter(torch.randn(d, d))
        self.l0.register_forward_pre_hook(
            lambda m, args, kwargs: ((args[0] @ self.w0,), kwargs), with_kwargs=True
        )

    def forward(self, x):
        return self.l0(x)


class Removed(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.inner = Own(d)
        handle = self.inner.l0.register_forward_hook(lambda m, args, out: out @ self.inner.w0)
        self.kept = self.inner.l0.register_forward_pre_hook(lambda m, args: None)
        handle.remove()

    def forward(self, x):
        return self.inner(x) + self.inner.l0(x)


class Later(nn.Module):
    # registered in forward, after a first call: the second call runs it
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.w0 = nn.Parameter(torch.randn(d, d))

    def forward(self, x):
        y = self.l0(x)
        self.l0.register_forward_hook(lambda m, args, out: out @ self.w0)
        return self.l0(y)
"""

CASES = [
    ("Post", {}),
    ("Pre", {}),
    ("Ordered", {"prepend": False}),
    ("Ordered", {"prepend": True}),
    ("Own", {}),
    ("Keywords", {}),
    ("Removed", {}),
]


@pytest.mark.parametrize(("name", "kw"), CASES)
def test_hooks_run_as_torch_runs_them(tmp_path, name, kw):
    path, mod = written_module(tmp_path, "hooked", SOURCE)
    inputs = {"x": (2, 8)}
    fwd, bwd, params, shape = torch_figures(mod, name, kw, inputs, True)
    t = run_class(path, name, kw, inputs, True)
    assert t["complete"] and t["backward_complete"], (t["unknown"], t["backward_unknown"])
    assert (int(t["flops"]), int(t["flops_backward"])) == (fwd, bwd)
    assert int(t["params"]) == params
    assert tuple(int(n) for n in t["output"]) == shape


def test_a_hook_registered_in_forward_runs_from_then_on(tmp_path):
    path, mod = written_module(tmp_path, "hooked", SOURCE)
    fwd, _, _, shape = torch_figures(mod, "Later", {}, {"x": (2, 8)}, True)
    t = run_class(path, "Later", {}, {"x": (2, 8)}, True)
    assert t["complete"] and int(t["flops"]) == fwd == 3 * 256
    assert tuple(int(n) for n in t["output"]) == shape


OWN_CALL = """
import torch
from torch import nn


class Called(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)

    def __call__(self, x):
        return self.forward(x)  # nn.Module.__call__ never runs: nor do its hooks

    def forward(self, x):
        return self.l0(x)


class Bound(nn.Module):
    # a method of the module being built, called once it is built: not followed
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.w0 = nn.Parameter(torch.randn(d, d))
        self.l0.register_forward_pre_hook(self.scaled)

    def scaled(self, m, args):
        return args[0] @ self.w0

    def forward(self, x):
        return self.l0(x)


class Holder(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.c = Called(d)
        self.w0 = nn.Parameter(torch.randn(d, d))
        self.c.register_forward_hook(lambda m, args, out: out @ self.w0)

    def forward(self, x):
        return self.c(x)
"""


def test_a_class_with_its_own_call_leaves_its_hooks_not_known(tmp_path):
    path, _ = written_module(tmp_path, "own_call", OWN_CALL)
    t = run_class(path, "Holder", {}, {"x": (2, 8)}, False)
    assert not t["complete"]
    assert any("__call__" in u["why"] for u in t["unknown"]), t["unknown"]


def test_a_hook_the_analysis_cannot_run_leaves_the_call_not_known(tmp_path):
    path, mod = written_module(tmp_path, "own_call", OWN_CALL)
    fwd, *_ = torch_figures(mod, "Bound", {}, {"x": (2, 8)}, False)
    t = run_class(path, "Bound", {}, {"x": (2, 8)}, False)
    assert not t["complete"] and int(t["flops"]) < fwd


MAYBE = """
import os

import torch
from torch import nn


class Maybe(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.w0 = nn.Parameter(torch.randn(d, d))
        if os.environ.get("SHAPELINT_TEST_HOOKED"):
            self.l0.register_forward_hook(lambda m, a, o: o @ self.w0)

    def forward(self, x):
        return self.l0(x)


class MaybeSelf(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.w0 = nn.Parameter(torch.randn(d, d))
        if os.environ.get("SHAPELINT_TEST_HOOKED"):
            self.register_forward_hook(lambda m, a, o: o @ m.w0)

    def forward(self, x):
        return self.l0(x)
"""


@pytest.mark.parametrize("name", ["Maybe", "MaybeSelf"])
def test_hooks_registered_on_one_path_leave_the_call_not_known(tmp_path, name):
    # 256 or 512 FLOPs as the environment decides: no complete figure; the
    # parameters stay torch's, hooks being no state
    path, mod = written_module(tmp_path, "maybe", MAYBE)
    _, _, params, _ = torch_figures(mod, name, {}, {"x": (2, 8)}, False)
    t = run_class(path, name, {}, {"x": (2, 8)}, False)
    assert not t["complete"] and t["unknown"]
    assert int(t["params"]) == params


# `self.forward = f` while the module is built: an attribute of the instance, which
# nn.Module.__call__ (and any `m.forward` read) finds before the class's method
OWN_FORWARD = """
import torch
from torch import nn


class Fast(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l = nn.Linear(d, d)
        self.forward = self.twice

    def forward(self, x):
        return self.l(x)

    def twice(self, x):
        return self.l(self.l(x))

    def run(self, x):
        return self.forward(x)


class Lam(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l = nn.Linear(d, d)
        self.forward = lambda x: self.l(self.l(self.l(x)))

    def forward(self, x):
        return self.l(x)


class Uses(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.f = Fast(d)
        self.g = Lam(d)

    def forward(self, x):
        a = self.f(x) + self.f.forward(x) + self.f.run(x)
        read = self.g.forward
        return a + read(x) + getattr(self.f, "forward")(x)


class ByName(nn.Module):
    # setattr with the name written out is the store `obj.forward = f`
    def __init__(self, d=8):
        super().__init__()
        self.f = Fast(d)
        self.b = Fast(d)
        setattr(self.b, "forward", self.b.twice)
        self.l = nn.Linear(d, d)
        setattr(self.l, "forward", lambda x: x * 2)
        setattr(self, "forward", self.both)

    def forward(self, x):
        return self.l(x)

    def both(self, x):
        return self.l(self.f(x)) + self.b(x)


class Later(nn.Module):
    # stored in a forward, on the built module: the one object keeps it, and a
    # call of the class's forward after it would not be modelled
    def __init__(self, d=8):
        super().__init__()
        self.l = nn.Linear(d, d)

    def forward(self, x):
        self.forward = self.twice
        return self.l(x)

    def twice(self, x):
        return self.l(self.l(x))


class UsesLater(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.m = Later(d)

    def forward(self, x):
        return self.m(self.m(x))
"""


@pytest.mark.parametrize("name", ["Fast", "Lam", "Uses", "ByName"])
def test_the_instances_own_forward_runs(tmp_path, name):
    path, mod = written_module(tmp_path, "own_forward", OWN_FORWARD)
    fwd, bwd, params, shape = torch_figures(mod, name, {}, {"x": (2, 8)}, True)
    t = run_class(path, name, {}, {"x": (2, 8)}, True)
    assert t["complete"] and t["backward_complete"], (t["unknown"], t["backward_unknown"])
    assert (int(t["flops"]), int(t["flops_backward"])) == (fwd, bwd)
    assert int(t["params"]) == params


def test_a_forward_stored_on_the_built_module_leaves_it_not_known(tmp_path):
    # the first call runs the class's forward (256), the second the stored one (512):
    # a store in a forward may not reach every holder of the module (ALIASED_LAYER),
    # so the module is not known from the store on, and the figure a bound
    path, mod = written_module(tmp_path, "own_forward", OWN_FORWARD)
    fwd, *_ = torch_figures(mod, "UsesLater", {}, {"x": (2, 8)}, False)
    t = run_class(path, "UsesLater", {}, {"x": (2, 8)}, False)
    assert fwd == 3 * 256
    assert not t["complete"] and int(t["flops"]) == 256 < fwd


ALIASED_LAYER = """
import torch
from torch import nn


class Q(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)

    def forward(self, x):
        m = self.l0
        m.forward = lambda x: x
        return self.l0(x) * 2
"""


def test_a_torch_layers_forward_replaced_in_a_forward_is_not_known(tmp_path):
    # torch: 0 FLOPs (the Linear runs the lambda); a figure of 256 would be wrong
    from torch.utils.flop_counter import FlopCounterMode

    path, mod = written_module(tmp_path, "aliased", ALIASED_LAYER)
    with FlopCounterMode(display=False) as fc:
        mod.Q()(torch.randn(2, 8))
    fwd = fc.get_total_flops()
    t = run_class(path, "Q", {}, {"x": (2, 8)}, False)
    assert fwd == 0
    assert not t["complete"] and int(t["flops"]) == 0


UNPLACED = """
import os

import torch
from torch import nn


class Unplaced(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        name = os.environ.get("SHAPELINT_TEST_LAYER", "l0")
        getattr(self, name).register_forward_hook(lambda m, a, o: o @ o.new_ones(8, 8))

    def forward(self, x):
        return self.l0(x)


class Helper:
    def __init__(self, d):
        self.w = torch.randn(d, d)

    def get(self, x):
        return x @ self.w


def run(x):
    Unplaced(8)
    return Helper(8).get(x)


def called(x):
    return Unplaced(8)(x)
"""


def test_a_hook_the_run_cannot_place_changes_module_calls_alone(tmp_path):
    # on a module not known: any module's forward may run it (not known); a plain
    # object's method is no module call, and stays as it is
    from shapelint.cli.options import analysis_options, load_config
    from shapelint.cost.target import run_target
    from shapelint.notation.target import Target

    path, mod = written_module(tmp_path, "unplaced", UNPLACED)
    options = analysis_options(load_config([path], None), dtype=None, dims={})
    t = run_target(Target(str(path), "run"), [], ["x=2,8"], {}, options)
    with torch.no_grad():
        from torch.utils.flop_counter import FlopCounterMode

        with FlopCounterMode(display=False) as fc:
            mod.run(torch.randn(2, 8))
    assert t["complete"] and int(t["flops"]) == fc.get_total_flops() == 256
    t = run_target(Target(str(path), "called"), [], ["x=2,8"], {}, options)
    assert not t["complete"]
    assert any("forward hook" in u["why"] for u in t["unknown"]), t["unknown"]


CHILD_FORWARD = """
import os

import torch
from torch import nn


class Blk(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.l = nn.Linear(d, d)

    def forward(self, x):
        return self.l(x)

    def twice(self, x):
        return self.l(self.l(x))


class Inst(nn.Module):
    # a child's forward replaced while the parent is built
    def __init__(self, d=8):
        super().__init__()
        self.b0 = Blk(d)
        self.b0.forward = self.b0.twice
        self.b1 = Blk(d)

    def forward(self, x):
        return self.b1(self.b0(x))


class Fusable(nn.Module):
    # a method that would replace forwards, never called: nothing changes
    def __init__(self, d=8, fuse=False):
        super().__init__()
        self.b = Blk(d)
        if fuse:
            self.fuse()

    def fuse(self):
        for m in self.modules():
            if isinstance(m, Blk):
                m.forward = m.twice

    def forward(self, x):
        return self.b(x)


"""

# stored on a module no run can name (a call's result): any forward of the file may be
# it, as the scan reads it (a file of its own, which that makes not modelled throughout)
CHOSEN = (
    CHILD_FORWARD.split("class Inst(")[0]
    + """
class Chosen(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.b = Blk(d)
        self.c = Blk(d)
        getattr(self, os.environ.get("SHAPELINT_TEST_WHICH", "b")).forward = self.b.twice

    def forward(self, x):
        return self.c(self.b(x))
"""
)


@pytest.mark.parametrize(
    ("name", "kw"), [("Inst", {}), ("Fusable", {}), ("Fusable", {"fuse": True})]
)
def test_a_forward_stored_where_the_run_places_it(tmp_path, name, kw):
    path, mod = written_module(tmp_path, "child_forward", CHILD_FORWARD)
    fwd, bwd, params, _ = torch_figures(mod, name, kw, {"x": (2, 8)}, True)
    t = run_class(path, name, kw, {"x": (2, 8)}, True)
    assert t["complete"] and t["backward_complete"], (t["unknown"], t["backward_unknown"])
    assert (int(t["flops"]), int(t["flops_backward"])) == (fwd, bwd)
    assert int(t["params"]) == params


def test_a_forward_stored_on_a_module_not_known_is_not_modelled(tmp_path):
    path, _ = written_module(tmp_path, "chosen_forward", CHOSEN)
    t = run_class(path, "Chosen", {}, {"x": (2, 8)}, False)
    assert not t["complete"]
    assert any("forward is assigned at run time" in u["why"] for u in t["unknown"]), t["unknown"]
