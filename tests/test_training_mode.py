"""`self.training` in target runs (analysis/modes.py): a module as torch builds it
is in training mode, `--eval` costs it as after `.eval()`; `.train()` / `.eval()`
in a constructor and in a forward are followed, each module one object wherever it
is held; a mode the analysis cannot know leaves `training` undecided; a plain run never decides it. Each figure is
judged by FlopCounterMode on the same module in the same mode."""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest

from shapelint.analysis.driver import analyze_target
from shapelint.analysis.target import target_json
from tests.test_modules import write

torch = pytest.importorskip("torch")

HEADER = "import torch\nimport torch.nn as nn\n"

SUB = """
        class Sub(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.g = nn.Linear(dim, dim)

            def forward(self, x):
                return self.g(x) if self.training else x
        """

CASES = {
    "branch": """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.g = nn.Linear(dim, 2 * dim)
                self.h = nn.Linear(2 * dim, dim)

            def forward(self, x):
                if self.training and self.g.training:
                    x = self.h(self.g(x))
                if not self.training:
                    x = x @ torch.ones(x.shape[-1], x.shape[-1])
                return self.fc(x)
        """,
    # .eval() / .train(False) in the constructor, on a child and on self's list
    "constructor_sets_modes": SUB
    + """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.subs = nn.ModuleList([Sub(dim), Sub(dim)])
                self.frozen = Sub(dim)
                self.frozen.eval()
                self.other = Sub(dim).train(False)
                self.again = Sub(dim)
                self.again.eval()
                self.again.train()

            def forward(self, x):
                for s in self.subs:
                    x = s(x)
                return self.again(self.other(self.frozen(x)))
        """,
    # `.eval()` walks registered children: a plain dict's module stays in training
    "plain_dict_is_no_child": SUB
    + """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.registered = nn.ModuleDict({"a": Sub(dim)})
                self.plain = {"a": Sub(dim)}

            def forward(self, x):
                return self.plain["a"](self.registered["a"](x))
        """,
    # a module built in the forward is in training mode, whatever its caller's
    "built_in_forward": SUB
    + """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.s = Sub(dim)
                self.dim = dim

            def forward(self, x):
                return Sub(self.dim)(self.s(x))
        """,
}


def _truth(path, training: bool) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    name = f"_modes_test_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    net = mod.Net(8)  # in training mode as built, whatever its constructor set
    if not training:
        net.eval()
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        net(torch.randn(2, 8))
    return fc.get_total_flops()


def _target(path, training: bool) -> dict:
    res = analyze_target(
        str(path), path.read_text(), "Net", {"dim": "8"}, {"x": "2,8"}, None, training
    )
    return target_json(res, {})


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("key", sorted(CASES))
def test_exact_in_either_mode(tmp_path, key, training):
    path = write(tmp_path, f"{key}.py", HEADER + textwrap.dedent(CASES[key]))
    t = _target(path, training)
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == _truth(path, training)
    assert t["mode"] == ("train" if training else "eval")


def test_the_two_modes_differ_and_the_report_says_which(tmp_path):
    path = write(tmp_path, "branch.py", HEADER + textwrap.dedent(CASES["branch"]))
    train, ev = _target(path, True), _target(path, False)
    assert train["flops_value"] != ev["flops_value"]
    from shapelint.cost.target import run_target
    from shapelint.notation.target import Target

    t = run_target(Target(str(path), "Net"), ["dim=8"], ["x=2,8"], {}, None, training=False)
    assert [c["name"] for c in t["conventions"]] == ["eval_mode"]


FORWARD_CHANGES = {
    # `.eval()` on a child in the forward: it and every module below it
    "child_eval": """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.s = Sub(dim)

            def forward(self, x):
                self.s.eval()
                return self.s(x)
        """,
    # the child's module also held in a plain list: one object, seen changed there
    "held_in_a_plain_list": """
        class Wrap(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.sub = Sub(dim)

            def forward(self, x):
                return self.sub(x)

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.w = Wrap(dim)
                self.direct = [self.w.sub]

            def forward(self, x):
                y = self.direct[0](x)
                self.w.eval()
                return self.direct[0](y)
        """,
    # no change in the forward: `--eval` reaches the child the plain list holds
    # (main gave 512, a complete figure, where torch's eval runs 256)
    "eval_seen_through_a_plain_list": """
        class Wrap(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.sub = Sub(dim)

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.w = Wrap(dim)
                self.direct = [self.w.sub]

            def forward(self, x):
                return self.direct[0](x)
        """,
    # changed through a helper object holding the module, then the whole model back
    "through_a_helper_then_back": """
        class Helper:
            def __init__(self, m):
                self.m = m

            def off(self):
                self.m.train(False)

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.s = Sub(dim)

            def forward(self, x):
                Helper(self.s).off()
                x = self.s(x)
                self.train()
                return self.s(x)
        """,
    # eval() in the constructor with the child held in a plain list too
    "constructor_list": """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.s = Sub(dim)
                self.direct = [self.s]
                self.s.eval()

            def forward(self, x):
                return self.direct[0](x)
        """,
}


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("key", sorted(FORWARD_CHANGES))
def test_a_mode_changed_in_place_is_seen_wherever_the_module_is_held(tmp_path, key, training):
    """`m.eval()` / `m.train(flag)` change m and every module below it in place: one
    object each, wherever it is held (a plain list, a helper object, the caller's
    self), in the constructor and in the forward."""
    code = SUB + FORWARD_CHANGES[key]
    path = write(tmp_path, f"{key}.py", HEADER + textwrap.dedent(code))
    t = _target(path, training)
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == _truth(path, training)


def test_a_mode_flag_not_known_leaves_training_undecided(tmp_path):
    code = (
        SUB
        + """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.s = Sub(dim)

            def forward(self, x):
                self.s.train(bool(x.sum() > 0))
                return self.s(x)
        """
    )
    path = write(tmp_path, "forward_flag.py", HEADER + textwrap.dedent(code))
    for training in (True, False):
        t = _target(path, training)
        assert not t["complete"]
        assert t["flops"] is not None
        assert any("training" in u["why"] for u in t["unknown"]), t["unknown"]


def test_a_plain_run_never_decides_training(tmp_path):
    from shapelint.analysis.driver import analyze_text

    path = write(tmp_path, "branch.py", HEADER + textwrap.dedent(CASES["branch"]))
    res = analyze_text(str(path), path.read_text(), None)
    forward = next(f for f in res.functions if f["name"] == "Net.forward")
    assert not forward["complete"]
    assert any("self.training" in u["why"] for u in forward["unknown"]), forward


def test_a_class_of_its_own_eval_is_not_torchs(tmp_path):
    # `eval` here is the project's method (it runs a layer), not nn.Module.eval
    code = """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.g = nn.Linear(dim, dim)

            def eval(self, x):
                return self.fc(x)

            def forward(self, x):
                y = self.eval(x)
                return self.g(y) if self.training else y
        """
    path = write(tmp_path, "own_eval.py", HEADER + textwrap.dedent(code))
    t = _target(path, True)
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == 2 * 2 * 8 * 8 * 2
