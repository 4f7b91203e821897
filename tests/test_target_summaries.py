"""Targets summarise loops and memoise calls instead of unrolling them (issue 27).

Each module is small enough for torch to run at small sizes, where FlopCounterMode
gives the figure; at the sizes that used to hang (100³ loop turns, 2²⁰ nested
turns, 2³⁰ calls of a doubly recursive method) the figure must be the one the
oracle's per-call count makes, times the trip count. Every static run is under
the analysis's own time budget (AnalysisOptions.time_budget) and a second,
outer one (budget.time_budget), so that code which unrolls fails instead of
hanging: a guard, not a timing assertion.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

from shapelint.analysis.budget import time_budget
from shapelint.cost.target import View, render_target, run_target
from shapelint.notation.target import Target
from shapelint.options import AnalysisOptions

GUARD_SECONDS = 120  # far above what a summarised target takes; only a hang reaches it


def target(path: Path, qual: str, init: dict, inputs: dict, budget: float = 60) -> dict:
    options = AnalysisOptions(time_budget=budget)
    with time_budget(GUARD_SECONDS):
        t = run_target(
            Target(str(path), qual),
            [f"{k}={v}" for k, v in init.items()],
            [f"{k}={v}" for k, v in inputs.items()],
            {},
            options,
        )
        # The report too, as a table and as a tree: shared calls, not unfolded.
        t["table"] = render_target(t)
        t["text"] = render_target(t, View(tree=True))
    return t


def counted(path: Path, build: str, inputs: dict) -> int:
    """FlopCounterMode's FLOPs for one forward of the module `build` makes."""
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    name = f"_summaries_test_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    model = eval(build, vars(mod))  # noqa: S307 - the test's own expression
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        model(**inputs)
    return fc.get_total_flops()


def write(tmp_path: Path, code: str) -> Path:
    p = tmp_path / "m.py"
    p.write_text(textwrap.dedent(code))
    return p


def x(*shape):
    torch = pytest.importorskip("torch")
    return torch.randn(*shape)


# Each module: M(d, n), one Linear(d, d), and n Linears of widths d .. d+n-1.
HEAD = """
    import torch
    from torch import nn

    class M(nn.Module):
        def __init__(self, d: int, n: int):
            super().__init__()
            self.n = n
            self.lins = nn.ModuleList([nn.Linear(d, d + k) for k in range(n)])
            self.lin = nn.Linear(d, d)
"""


def triple_loop(*body: str) -> str:
    """M with a forward of three nested `range(self.n)` loops around body."""
    inner = "".join(f"\n                        {line}" for line in body)
    return (
        HEAD
        + f"""
        def forward(self, x):
            for i in range(self.n):
                for j in range(self.n):
                    for k in range(self.n):{inner}
            return x
"""
    )


NESTED_3 = triple_loop("x = self.lin(x)")


def exact_small_and_large(p: Path, small: int, large: int, unit: int, runs: int) -> dict:
    """M(8, small) as torch counts it; M(8, large) as torch counts M(8, unit)'s
    work, `runs` times (what torch cannot run in a test's time)."""
    t = target(p, "M", {"d": "8", "n": str(small)}, {"x": "2,8"})
    assert t["complete"] and t["flops_value"] == counted(p, f"M(8, {small})", {"x": x(2, 8)})
    each = counted(p, f"M(8, {unit})", {"x": x(2, 8)})
    t = target(p, "M", {"d": "8", "n": str(large)}, {"x": "2,8"})
    assert t["complete"] and t["flops_value"] == each * runs
    return t


def test_three_nested_loops_multiply_their_counts(tmp_path):
    exact_small_and_large(write(tmp_path, NESTED_3), 3, 100, 1, 100**3)


def test_twenty_nested_loops_of_two(tmp_path):
    lines = ["from torch import nn", "", "class M(nn.Module):"]
    lines += ["    def __init__(self, d: int, n: int):", "        super().__init__()"]
    lines += ["        self.n = n", "        self.lin = nn.Linear(d, d)", ""]
    lines += ["    def forward(self, x):"]
    for depth in range(20):
        lines.append("    " * (depth + 2) + f"for i{depth} in range(self.n):")
    lines += ["    " * 22 + "x = self.lin(x)", "        return x"]
    p = tmp_path / "m.py"
    p.write_text("\n".join(lines) + "\n")
    one = counted(p, "M(8, 1)", {"x": x(2, 8)})
    t = target(p, "M", {"d": "8", "n": "2"}, {"x": "2,8"})
    assert t["complete"] and t["flops_value"] == one * 2**20


RECURSIVE = (
    HEAD
    + """
        def f(self, x, n):
            if n == 0:
                return self.lin(x)
            return self.f(self.f(x, n - 1), n - 1)

        def forward(self, x):
            return self.f(x, self.n)
"""
)


def test_binary_recursion_is_memoised(tmp_path):
    big = exact_small_and_large(write(tmp_path, RECURSIVE), 4, 30, 0, 2**30)
    # The report lists each memoised call's calls once, the later ones marked.
    assert len(big["text"].splitlines()) < 500
    assert "its calls as listed above" in big["text"]


def test_binary_recursion_past_the_depth_limit_is_never_a_wrong_figure(tmp_path):
    p = write(tmp_path, RECURSIVE)
    leaf = counted(p, "M(8, 0)", {"x": x(2, 8)})
    t = target(p, "M", {"d": "8", "n": "40"}, {"x": "2,8"})
    assert not t["complete"] or t["flops_value"] == leaf * 2**40
    # One line per distinct call, counted, not one per run (2⁴⁰ of them).
    assert len(t["unknown"]) < 100


PER_TURN = (
    HEAD
    + """
        def forward(self, x):
            total = 0
            for i in range(self.n):
                for j in range(self.n):
                    y = self.lins[j](x)
                for j in range(i):
                    x = self.lin(x)
                for j in range(self.n):
                    x = torch.cat([self.lin(x), x], dim=0)
            return x
"""
)


def test_turns_that_differ_are_run_one_by_one(tmp_path):
    # A layer picked by the loop variable, a count that depends on the outer
    # one, a shape that shrinks each turn: none of these loops is one turn × n.
    p = write(tmp_path, PER_TURN)
    t = target(p, "M", {"d": "16", "n": "3"}, {"x": "2,16"})
    assert t["complete"] and t["flops_value"] == counted(p, "M(16, 3)", {"x": x(2, 16)})


RANGE_FROM = (
    HEAD
    + """
        def forward(self, x):
            for i in range(1, self.n):
                if i == 1:
                    x = torch.cat([x, x], dim=-1)
                x = self.lins[i](x[..., : self.lins[i].in_features])
            return x
"""
)


def test_a_range_from_a_runs_a_to_b(tmp_path):
    # `range(1, n)` gives the body 1 .. n-1, not 0 .. n-2 (was complete and wrong).
    p = write(tmp_path, RANGE_FROM)
    t = target(p, "M", {"d": "8", "n": "4"}, {"x": "2,8"})
    assert t["complete"] and t["flops_value"] == counted(p, "M(8, 4)", {"x": x(2, 8)})


PER_TURN_PRODUCT = triple_loop(
    "y = self.lin(x)[:, : (i + j + k) % 8 + 1]", "x = x + (y @ y.transpose(0, 1)).sum()"
)


def test_a_budget_hit_is_incomplete_and_says_so(tmp_path):
    # Each turn's product has its own size, so no loop is summarised: 10⁶ turns run
    # one by one, and the budget stops them.
    p = write(tmp_path, PER_TURN_PRODUCT)
    small = target(p, "M", {"d": "8", "n": "2"}, {"x": "2,8"})
    assert small["complete"] and small["flops_value"] == counted(p, "M(8, 2)", {"x": x(2, 8)})
    t = target(p, "M", {"d": "8", "n": "100"}, {"x": "2,8"}, budget=1)
    assert not t["complete"] and t["flops_value"] is None
    (why,) = {u["why"] for u in t["unknown"]}
    assert "time budget" in why and "itself" not in why
    assert "time budget" in t["text"]
