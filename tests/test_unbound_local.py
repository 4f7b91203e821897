"""SHP319: a local read before anything assigns it, judged by running the function:
reported exactly where Python raises UnboundLocalError on that very read, in plain
check and in a target (which then has no total); silent where the read may not run
first."""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

from shapelint.analysis.driver import analyze_source
from shapelint.cli import main

# (source of f(), whether f() surely raises UnboundLocalError)
CASES = {
    "later_loop_target": (
        "def f(xs=(1, 2)):\n    y = n + 1\n    for n in xs:\n        pass\n",
        True,
    ),
    "shadows_a_global": ("def f():\n    y = G\n    G = 2\n    return y\n", True),
    "for_header": ("def f():\n    for i in items:\n        pass\n    items = []\n", True),
    "if_test": ("def f():\n    if flag:\n        pass\n    flag = 1\n", True),
    "first_operand_of_or": ("def f():\n    y = a or 1\n    a = 2\n", True),
    "import_later": ("def f():\n    y = math.pi\n    import math\n", True),
    "assigned_in_one_branch_first": (
        "def f(c=True):\n    if c:\n        z = 1\n    y = z\n    z = 2\n",
        False,
    ),
    "conditional_arm": ("def f(c=True):\n    y = 1 if c else w\n    w = 2\n", False),
    "later_operand_of_and": ("def f(c=False):\n    y = c and v\n    v = 2\n", False),
    "inside_a_lambda": ("def f():\n    g = lambda: u\n    u = 1\n    return g()\n", False),
    "declared_global": ("def f():\n    global G\n    y = G\n    G = 2\n", False),
    "nested_function_reads_later": (
        "def f():\n    def g():\n        return q\n    q = 1\n    return g()\n",
        False,
    ),
    "parameter": ("def f(p=1):\n    y = p\n    p = 2\n", False),
    "walrus_first": ("def f():\n    y = (k := 1) + k\n    k = 2\n", False),
}


def _raises(src: str) -> bool:
    env = {"G": 1, "a": 0, "items": (), "flag": 0, "math": None}
    exec(compile(src, "<case>", "exec"), env)
    try:
        env["f"]()
    except UnboundLocalError:
        return True
    return False


@pytest.mark.parametrize("key", sorted(CASES))
def test_reported_exactly_where_python_raises(key):
    src, raises = CASES[key]
    assert _raises(src) == raises  # the case says what Python does
    found = [d for d in analyze_source("case.py", src).result.diagnostics if d.code == "SHP319"]
    assert bool(found) == raises, found
    if raises:
        assert "UnboundLocalError" in found[0].message


def test_a_target_that_reads_a_later_local_is_an_error_with_no_total(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(
        textwrap.dedent(
            """
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self, dims):
                    super().__init__()
                    self.head = nn.Linear(dim_out, 10)
                    self.layers = nn.ModuleList([])
                    for dim_in, dim_out in zip(dims[:-1], dims[1:]):
                        self.layers.append(nn.Linear(dim_in, dim_out))

                def forward(self, x):
                    return self.head(x)
            """
        )
    )
    pytest.importorskip("torch")
    env: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), env)
    with pytest.raises(UnboundLocalError):
        env["Net"]((4, 8))
    result = CliRunner().invoke(
        main, ["cost", "--no-cache", f"{path}::Net", "--init", "dims=(4, 8)", "--input", "x=2,8"]
    )
    assert result.exit_code == 1, result.output
    assert "would raise: 1 error, no total" in result.output
    assert "SHP319 local variable 'dim_out'" in result.output
    assert "in Net.__init__:7" in result.output
