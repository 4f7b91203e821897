"""A construction Python can never finish (issue 28): a class whose constructor
surely builds the class again, directly, around a cycle or through a base, is an
error (SHP317) in `check` and in a target, which then has no total; a recursion
that ends on its arguments is followed, and a depth limit reached on it is a lower
bound that names the limit, never this error."""

from __future__ import annotations

import textwrap

import pytest

from shapelint.analysis.driver import analyze_target, analyze_text
from shapelint.analysis.target import target_json
from tests.test_modules import counted, write

HEADER = "import torch\nimport torch.nn as nn\n"

ENDLESS = {
    "itself": (
        """
        class M(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.child = M(max(1, dim - 1))

            def forward(self, x):
                return self.child(self.fc(x))

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.m = M(dim)

            def forward(self, x):
                return self.m(x)
        """,
        "building M builds M again",
    ),
    "a_cycle": (
        """
        class A(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.b = B(dim)

            def forward(self, x):
                return self.b(x)

        class B(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.a = A(dim)

            def forward(self, x):
                return self.a(self.fc(x))

        class Net(A):
            pass
        """,
        "Python raises RecursionError",
    ),
    "through_a_base": (
        """
        class Base(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.extra = Net(dim)

        class Net(Base):
            def __init__(self, dim):
                super().__init__(dim)
                self.fc = nn.Linear(dim, dim)

            def forward(self, x):
                return self.fc(x)
        """,
        "builds Net again",
    ),
}


@pytest.mark.parametrize("key", sorted(ENDLESS))
def test_an_endless_construction_is_an_error_with_no_total(tmp_path, key):
    code, message = ENDLESS[key]
    path = write(tmp_path, f"{key}.py", HEADER + textwrap.dedent(code))
    res = analyze_target(str(path), path.read_text(), "Net", {"dim": "8"}, {"x": "2,8"})
    t = target_json(res, {})
    assert [d["code"] for d in t["diagnostics"]] == ["SHP317"], t["diagnostics"]
    assert message in t["diagnostics"][0]["message"]
    assert not t["complete"] and t["flops_value"] is None
    check = analyze_text(str(path), path.read_text(), None)
    assert "SHP317" in [d.code for d in check.diagnostics]
    torch = pytest.importorskip("torch")
    with pytest.raises(RecursionError):
        counted(path, "Net(8)", {"x": torch.randn(2, 8)})


ENDS = """
class Net(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        if depth > 0:
            self.child = Net(dim, depth - 1)
        else:
            self.child = nn.Identity()

    def forward(self, x):
        return self.child(self.fc(x))
"""


@pytest.mark.parametrize("depth", [3, 60])
def test_a_recursion_that_ends_is_followed_or_a_bound_naming_the_limit(tmp_path, depth):
    path = write(tmp_path, "ends.py", HEADER + ENDS)
    res = analyze_target(
        str(path), path.read_text(), "Net", {"dim": "8", "depth": str(depth)}, {"x": "2,8"}
    )
    t = target_json(res, {})
    assert not t["diagnostics"]
    check = analyze_text(str(path), path.read_text(), None)
    assert "SHP317" not in [d.code for d in check.diagnostics]
    torch = pytest.importorskip("torch")
    truth = counted(path, f"Net(8, {depth})", {"x": torch.randn(2, 8)})
    if t["complete"]:
        assert t["flops_value"] == truth
    else:
        assert int(t["flops"]) <= truth
        assert any("deeper than" in u["why"] or "too deeply" in u["why"] for u in t["unknown"])
    assert t["complete"] == (depth == 3)


@pytest.mark.parametrize("depth", [3, 90])
def test_a_construction_nested_past_pythons_stack_counts_no_parameters(tmp_path, depth):
    """Ninety modules deep, the analysis's own stack runs out inside a constructor's
    statement (`self.child = Net(dim, depth - 1)`): what it would have stored is not
    known, so the counts are no figure (main: 3,066 parameters complete for torch's
    3,822, the chain cut where the stack ran out)."""
    path = write(tmp_path, "ends.py", HEADER + ENDS)
    res = analyze_target(
        str(path), path.read_text(), "Net", {"dim": "6", "depth": str(depth)}, {"x": "2,6"}
    )
    from shapelint.analysis.parameters import params_json

    t = params_json(res.params, {})
    pytest.importorskip("torch")
    ns: dict = {}
    exec(HEADER + ENDS, ns)  # noqa: S102 - the test's own source
    truth = sum(p.numel() for p in ns["Net"](6, depth).parameters())
    if t["params"] != "?":
        assert t["params_value"] == truth
    assert (t["params"] != "?") == (depth == 3)
