"""An error on one of alternatives a target's run cannot decide (issue 25): as mypy
and pyright treat a union, it is definite where every alternative that can run raises,
and otherwise a warning that names its condition, with no complete figure. Torch judges
each module: where a warning is said, some way through the forward runs."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from shapelint.analysis.undecided_paths import Group, Verdicts, condition_of
from shapelint.cli import main

SOURCE = textwrap.dedent(
    """
    import os

    import torch
    from torch import nn


    def sign():
        return os.environ.get("SIGN") == "1"


    class Pair(nn.Module):
        def __init__(self, dim, first=1):
            super().__init__()
            self.a = nn.Linear(first * dim, dim)
            self.b = nn.Linear(2 * dim, dim)


    class Data(Pair):
        def forward(self, x):
            if x.sum() > 0:
                x = self.b(x)
            else:
                x = self.a(x)
            return x


    class Flag(Pair):
        def __init__(self, dim):
            super().__init__(dim)
            self.flag = sign()

        def forward(self, x):
            return self.b(x) if self.flag else self.a(x)


    class Chosen(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.layer = nn.Linear(2 * dim, dim) if sign() else nn.Linear(dim, dim)

        def forward(self, x):
            return self.layer(x)


    class Caught(Pair):
        def forward(self, x):
            try:
                y = self.b(x)
            except RuntimeError:
                y = self.a(x)
            return y


    class Both(Data):
        def __init__(self, dim):
            super().__init__(dim, first=3)


    class Refused(Pair):
        def forward(self, x):
            if x.sum() > 0:
                raise ValueError("positive")
            return self.b(x)


    class NotCaught(Pair):
        def forward(self, x):
            try:
                return self.b(x)
            except KeyError:
                return self.a(x)


    class Matched(Pair):
        def __init__(self, dim):
            super().__init__(dim)
            self.mode = os.environ.get("MODE", "a")

        def forward(self, x):
            match self.mode:
                case "b":
                    return self.b(x)
                case _:
                    return self.a(x)


    def helper(layer, x):
        return layer(x)


    def either(layer, other, x):
        if x.sum() > 0:
            return layer(x)
        return other(x)


    class ReusedEither(Pair):
        def forward(self, x):
            if x.mean() > 0:
                x = x + 1
                y = either(self.b, self.a, x)
            return either(self.b, self.a, x)


    class Reused(Pair):
        def forward(self, x):
            if x.sum() > 0:
                x = x + 1
                y = helper(self.b, x)
            return helper(self.b, x)
    """
)
INPUT = ["--init", "dim=8", "--input", "x=2,8"]


def _cost(tmp_path, cls: str, fmt: str = "json"):
    p = tmp_path / "paths.py"
    p.write_text(SOURCE)
    args = ["cost", f"{p}::{cls}", *INPUT, "--no-cache", "--format", fmt]
    return CliRunner().invoke(main, args)


def _torch_outcomes(cls: str) -> set[bool]:
    """Whether the forward runs, for each input sign and each value of the flag."""
    torch = pytest.importorskip("torch")
    import os

    out = set()
    for flag in ("0", "1"):
        os.environ["SIGN"] = flag
        try:
            ns: dict = {}
            exec(compile(SOURCE, "paths.py", "exec"), ns)  # noqa: S102 - the test's own module
            m = ns[cls](8)
            for x in (torch.ones(2, 8), -torch.ones(2, 8)):
                try:
                    m(x)
                    out.add(True)
                except (RuntimeError, ValueError):
                    out.add(False)
        finally:
            del os.environ["SIGN"]
    return out


def _line(text: str, after: str = "") -> int:
    """The line of SOURCE that holds text (the first after the one holding `after`)."""
    lines = SOURCE.splitlines()
    start = next(i for i, s in enumerate(lines) if after in s) if after else 0
    return next(i for i, s in enumerate(lines, 1) if i > start and text in s)


@pytest.mark.parametrize(
    ("cls", "condition", "where"),
    [
        ("Data", "`x.sum() > 0` (line {})", ("if x.sum() > 0:", "class Data")),
        ("Flag", "`self.flag` (line {})", ("if self.flag else", "")),
        ("Chosen", "`self.layer` is torch.nn.Linear", None),
        ("Caught", "no handler of the `try` at line {} catches it", ("try:", "class Caught")),
        ("Matched", "case `'b'` of the `match` at line {} matches", ("match self.mode", "")),
    ],
)
def test_an_error_on_one_alternative_is_a_warning_with_its_condition(
    tmp_path, cls, condition, where
):
    if where is not None:
        condition = condition.format(_line(*where))
    assert True in _torch_outcomes(cls)  # some way through the forward runs
    r = _cost(tmp_path, cls)
    assert r.exit_code == 0, r.output
    t = json.loads(r.output)["target"]
    assert t["diagnostics"] == []
    (d,) = t["conditional"]
    assert (d["code"], d["severity"], d["condition"]) == ("SHP307", "warning", condition)
    assert d["message"].endswith(f"it raises only if {condition}, which is not known here")
    # the figure is the alternatives', never complete: the raising call may have run
    assert not t["complete"] and t["flops_value"] is None


def test_the_text_prints_the_figure_and_the_warning(tmp_path):
    r = _cost(tmp_path, "Data", "text")
    assert r.exit_code == 0
    head, *rest = r.output.splitlines()
    assert "would raise" not in head and "FLOPs" in head
    warning = next(line for line in rest if line.startswith("  warning: "))
    test = _line("if x.sum() > 0:", "class Data")
    assert "SHP307" in warning and f"it raises only if `x.sum() > 0` (line {test})" in warning


@pytest.mark.parametrize("cls", ["Both", "Refused", "NotCaught"])
def test_an_error_where_every_alternative_raises_is_definite(tmp_path, cls):
    assert _torch_outcomes(cls) == {False}
    r = _cost(tmp_path, cls)
    assert r.exit_code == 1
    t = json.loads(r.output)["target"]
    assert t["diagnostics"] and t["conditional"] == []
    assert {d["severity"] for d in t["diagnostics"]} == {"error"}


def test_a_memoised_call_reused_where_it_surely_runs_is_definite(tmp_path):
    # helper(self.b, x) first runs on one branch, memoised; its reuse after the `if`
    # runs whatever the test: the same error, found there again
    assert _torch_outcomes("Reused") == {False}
    r = _cost(tmp_path, "Reused")
    assert r.exit_code == 1
    (d,) = json.loads(r.output)["target"]["diagnostics"]
    assert d["severity"] == "error" and "condition" not in d


def test_a_memoised_call_reused_keeps_the_conditions_inside_it(tmp_path):
    # either() raises only on its own `if`'s one branch: reused where it surely runs,
    # its error still depends on that branch (and no longer on the `if` around the
    # first call)
    assert _torch_outcomes("ReusedEither") == {True, False}
    r = _cost(tmp_path, "ReusedEither")
    assert r.exit_code == 0, r.output
    t = json.loads(r.output)["target"]
    (d,) = t["conditional"]
    assert t["diagnostics"] == []
    assert d["condition"] == f"`x.sum() > 0` (line {_line('if x.sum() > 0:', 'def either')})"


def test_check_reports_a_configured_targets_conditional_error_as_a_warning(tmp_path):
    (tmp_path / "paths.py").write_text(SOURCE)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.shapelint.targets]\n"
        '"paths.py::Data" = { init = { dim = 8 }, input = { x = "2,8" } }\n'
    )
    r = CliRunner().invoke(
        main, ["check", str(tmp_path / "paths.py"), "--no-cache", "--format", "json"]
    )
    assert r.exit_code == 0, r.output  # a warning fails no run unless --fail-on warning
    found = [d for d in json.loads(r.output) if d["code"] == "SHP307"]
    (d,) = found
    test = _line("if x.sum() > 0:", "class Data")
    assert d["severity"] == "warning" and d["line"] == test + 1
    assert f"it raises only if `x.sum() > 0` (line {test})" in d["message"]


def test_nested_alternatives_each_settle_on_their_own():
    outer = Group(None)
    left, right = outer.add("`a`"), outer.add("not `a`")
    inner = Group(left)
    deep, other = inner.add("`b`"), inner.add("not `b`")
    # an error on one inner way only: both conditions stand
    v = Verdicts({deep})
    assert condition_of({deep}, v) == "`a` and `b`"
    # every inner way raises: the outer branch raises, the other does not
    v = Verdicts({deep, other})
    assert condition_of({deep}, v) == "`a`"
    assert not v.raises(right)
    # and where the other outer branch raises too, each error is definite
    right.raised = True
    v = Verdicts({deep, other})
    assert condition_of({deep}, v) is None
    # found once on no alternative at all: definite
    assert condition_of({deep, None}, Verdicts({deep})) is None


def test_a_condition_given_as_a_function_is_made_at_its_first_read_alone():
    made: list[str] = []

    def text(t: str):
        return lambda: made.append(t) or f"`{t}`"

    outer = Group(None)
    left, right = outer.add(text("a")), outer.add(text("not a"))
    inner = Group(left)
    deep = inner.add(text("b"))
    inner.add("not `b`")
    twins: dict = {}
    outer.copy(None, twins)  # a memoised run reused: its copy makes no text either
    assert made == []
    v = Verdicts({deep})
    assert condition_of({deep}, v) == "`a` and `b`"
    assert sorted(made) == ["a", "b"]  # the branch no finding lies on is never named
    assert left.why == "`a`" and made.count("a") == 1  # kept once made
    assert condition_of({twins[id(deep)]}, Verdicts({twins[id(deep)]})) == "`a` and `b`"
    assert right.why == "`not a`"


def test_each_undecided_if_is_unparsed_once_and_only_where_a_finding_names_it():
    import ast

    from shapelint.analysis import branches

    stmt = ast.parse("if x.sum() > 0:\n    pass").body[0]
    first, second = branches.conditions_later(stmt)
    assert "_shapelint_conditions" not in stmt.__dict__
    assert second() == "not `x.sum() > 0` (line 1)"
    assert first() == "`x.sum() > 0` (line 1)"
    assert branches.conditions(stmt) is branches.conditions(stmt)


def test_run_names_the_alternative_when_torch_takes_the_raising_one(tmp_path):
    # Flag's constructor reads SIGN: with SIGN=1 torch takes the branch the static
    # run found an error on, and `run` says it was foreseen there
    pytest.importorskip("torch")
    import os

    p = tmp_path / "paths.py"
    p.write_text(SOURCE)
    args = ["run", f"{p}::Flag", *INPUT, "--device", "cpu"]
    os.environ["SIGN"] = "1"
    try:
        r = CliRunner().invoke(main, args)
    finally:
        del os.environ["SIGN"]
    assert r.exit_code == 1, r.output
    assert "Flag raised RuntimeError" in r.output
    assert "the static analysis found (on an alternative it could not decide)" in r.output
    assert "it raises only if `self.flag`" in r.output
