"""Plain `check` on undecided paths (issue 25, plain_paths.py): a conflict on one of
alternatives the analysis cannot decide (an `if`, a loop that may run no turn, the
operands of `and`/`or` after one of unknown truth, the rest of a function after an
early return) is a warning naming its condition; it is an error only where every
alternative raises, as a target's run judges it. Torch judges each module: where a
warning is said, some way through the forward runs and another raises; where an
error is said, every way raises."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from shapelint.cli import main


def _module(name: str, forward: str, params: str = "dim", layers: str = "") -> str:
    """A module with a `proj` of twice its input width and the forward given."""
    own = "".join(f"        {line}\n" for line in layers.splitlines() if line)
    body = "".join(f"        {line}\n" for line in textwrap.dedent(forward).strip().splitlines())
    return (
        f"\n\nclass {name}(nn.Module):\n"
        f"    def __init__(self, {params}):\n"
        "        super().__init__()\n"
        "        self.proj = nn.Linear(dim, 2 * dim)\n"
        f"{own}\n"
        "    def forward(self, x, flag=False):\n"
        f"{body}"
    )


SOURCE = "import torch\nfrom torch import nn\n" + "".join(
    [
        _module(
            "Branch",
            """
            if flag:
                x = x + self.proj(x)
            return x
            """,
        ),
        _module(
            "EveryBranch",
            """
            if flag:
                x = x + self.proj(x)
            else:
                x = self.proj(x) + x
            return x
            """,
        ),
        _module(
            "OtherRaises",
            """
            if flag:
                raise ValueError("flag")
            return x + self.proj(x)
            """,
        ),
        _module(
            "EarlyReturn",
            """
            if not flag:
                return x
            return x + self.proj(x)
            """,
        ),
        *(
            _module(
                name,
                """
                for layer in self.layers:
                    x = layer(x) + self.proj(x)
                return x
                """,
                params="dim, depth=1",
                layers=f"self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range({n})])",
            )
            # a loop over depth - 1 layers may run no turn; over depth, one at least
            for name, n in (("MayRunNone", "depth - 1"), ("RunsOnce", "depth"))
        ),
        _module(
            "WhileTurn",
            """
            while flag:
                x = x + self.proj(x)
                flag = x.sum() > 0
            return x
            """,
        ),
        _module(
            "Shortcut",
            """
            return flag and torch.cat([torch.zeros(2, 4), torch.zeros(3, 5)], dim=0)
            """,
        ),
        _module(
            "FirstOperand",
            """
            return torch.cat([torch.zeros(2, 4), torch.zeros(3, 5)], dim=0).sum() > 0 or flag
            """,
        ),
    ]
)

DIM = 8


def _torch_outcomes(cls: str) -> set[bool]:
    """Whether the forward runs, for each value of the flag (and a depth of 1 and 2)."""
    torch = pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(SOURCE, "paths.py", "exec"), ns)  # noqa: S102 - the test's own module
    out = set()
    builds = [{}, {"depth": 2}] if cls in ("MayRunNone", "RunsOnce") else [{}]
    for kw in builds:
        m = ns[cls](DIM, **kw)
        for flag in (False, True):
            try:
                m(torch.ones(2, DIM), flag=flag)
                out.add(True)
            except (RuntimeError, ValueError):
                out.add(False)
    return out


def _check(tmp_path) -> dict[int, dict]:
    (tmp_path / "paths.py").write_text(SOURCE)
    r = CliRunner().invoke(
        main, ["check", str(tmp_path / "paths.py"), "--no-cache", "--format", "json"]
    )
    found = json.loads(r.output)
    return {d["line"]: d for d in found}


def _line(cls: str, text: str) -> int:
    lines = SOURCE.splitlines()
    start = next(i for i, s in enumerate(lines) if f"class {cls}(" in s)
    return next(i for i, s in enumerate(lines, 1) if i > start and text in s)


@pytest.mark.parametrize(
    ("cls", "text", "condition", "construct"),
    [
        ("Branch", "x = x + self.proj(x)", "`flag` (line {})", "if flag:"),
        ("EarlyReturn", "return x + self.proj(x)", "`flag` (line {})", "if not flag:"),
        ("MayRunNone", "x = layer(x)", "the loop at line {} runs a turn", "for layer in"),
        ("WhileTurn", "x = x + self.proj(x)", "the loop at line {} runs a turn", "while flag:"),
        ("Shortcut", "return flag and", "`flag` (line {}) is true", "return flag and"),
    ],
)
def test_an_error_on_one_alternative_is_a_warning_with_its_condition(
    tmp_path, cls, text, condition, construct
):
    assert _torch_outcomes(cls) == {True, False}  # one way runs, another raises
    line, at = _line(cls, text), _line(cls, construct)
    d = _check(tmp_path)[line]
    assert (d["code"], d["severity"]) == ({"Shortcut": "SHP313"}.get(cls, "SHP308"), "warning")
    assert d["message"].endswith(
        f"; it raises only if {condition.format(at)}, which is not known here"
    )


@pytest.mark.parametrize(
    ("cls", "text"),
    [
        ("EveryBranch", "x = x + self.proj(x)"),
        ("EveryBranch", "x = self.proj(x) + x"),
        ("OtherRaises", "return x + self.proj(x)"),
        ("RunsOnce", "x = layer(x) + self.proj(x)"),
        ("FirstOperand", "return torch.cat("),
    ],
)
def test_an_error_every_alternative_meets_stays_an_error(tmp_path, cls, text):
    assert _torch_outcomes(cls) == {False}  # every way through the forward raises
    d = _check(tmp_path)[_line(cls, text)]
    assert (d["code"], d["severity"]) == ({"FirstOperand": "SHP313"}.get(cls, "SHP308"), "error")
    assert "it raises only if" not in d["message"]


def test_a_summary_first_reached_in_a_branch_keeps_its_own_errors(tmp_path):
    """A function's summary is every path of it at once, wherever it was first
    reached: the caller's branch is no condition of an error in the callee's body.
    One the call's own arguments cause there raises only where that call runs."""
    source = textwrap.dedent(
        """
        import torch


        def own(x):
            return torch.cat([torch.zeros(3, 4), torch.zeros(3, 5)], dim=0)


        def given(x):
            return torch.cat([x, torch.zeros(3, 5)], dim=0)


        def caller(x, flag):
            if flag:
                return own(x) + given(torch.zeros(3, 4))
            return x
        """
    )
    (tmp_path / "m.py").write_text(source)
    r = CliRunner().invoke(
        main, ["check", str(tmp_path / "m.py"), "--no-cache", "--format", "json"]
    )
    found = {d["line"]: d for d in json.loads(r.output)}
    assert found[6]["severity"] == "error"
    assert found[10]["severity"] == "warning"
    assert found[10]["message"].endswith(
        "it raises only if `flag` (line 14), which is not known here"
    )


def test_a_pattern_error_on_one_alternative_stays_an_error(tmp_path):
    """A pattern einops refuses whatever the sizes (Rule.any_path) raises wherever its
    line runs: an error on a branch `check` cannot decide too, where a size conflict is
    a warning with its condition."""
    source = textwrap.dedent(
        """
        import torch
        from einops import rearrange


        def f(x, flag):
            if flag:
                x = rearrange(x, "b n d")
            return x
        """
    )
    (tmp_path / "p.py").write_text(source)
    r = CliRunner().invoke(
        main, ["check", str(tmp_path / "p.py"), "--no-cache", "--format", "json"]
    )
    found = {d["code"]: d for d in json.loads(r.output)}
    assert found["SHP101"]["severity"] == "error"
    assert "it raises only if" not in found["SHP101"]["message"]
    einops = pytest.importorskip("einops")
    torch = pytest.importorskip("torch")
    with pytest.raises((ValueError, einops.EinopsError)):
        einops.rearrange(torch.zeros(2, 3, 4), "b n d")
