"""What the faces print of a record: the per-module table names the turns of a loop
that ends early (break, continue, return) as torch's module tracker does (each item its
own FLOPs, those a turn never reached 0; oracle: FlopCounterMode's per-module counts), and a
size named after a branch is spelt as written."""

from __future__ import annotations

import json
import textwrap

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from shapelint.cli import main  # noqa: E402
from shapelint.cost.table import attribute  # noqa: E402
from shapelint.notation.symbolic import Expr  # noqa: E402

HEAD = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, dim=32, depth=4):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
        self.stop = 2

    def forward(self, x):
"""

BODIES = {
    "break": """
        for i, layer in enumerate(self.layers):
            if i == self.stop:
                break
            x = layer(x)
        return x
""",
    "continue": """
        for i, layer in enumerate(self.layers):
            if i == 1:
                continue
            x = layer(x)
        return x
""",
    "return": """
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i == self.stop:
                return x * 2
        return x
""",
}


def _torch_counts(src: str) -> dict[str, int]:
    from torch.utils.flop_counter import FlopCounterMode

    ns: dict = {}
    exec(compile(src, "<net>", "exec"), ns)  # noqa: S102 (the test's own module)
    with FlopCounterMode(display=False) as fc:
        ns["Net"]()(torch.randn(4, 32))
    return {
        k.removeprefix("Net.").removeprefix("Net"): sum(v.values())
        for k, v in fc.get_flop_counts().items()
        if k != "Global"
    }


@pytest.mark.parametrize("kind", sorted(BODIES))
def test_each_turn_of_a_loop_that_ends_early_is_its_item(tmp_path, kind):
    src = HEAD + textwrap.indent(textwrap.dedent(BODIES[kind]), " " * 8)
    p = tmp_path / "net.py"
    p.write_text(src)
    r = CliRunner().invoke(main, ["cost", f"{p}::Net", "--input", "x=4,32", "--format", "json"])
    assert r.exit_code == 0, r.output
    flops, unsure = attribute(json.loads(r.output)["target"])
    truth = _torch_counts(src)
    for i in range(4):
        name = f"layers.{i}"
        got = flops.get(name, Expr.const(0))  # a module no call reached: the table's 0
        assert got is not None and got.value == truth.get(name, 0), (name, got, truth)
    assert not unsure


def test_a_primed_size_is_spelt_as_written():
    # branches.sizes_after names a size after an undecided `if` `hidden'`: not a
    # Python expression (main: SHP002 internal error on `cost FILE --dim` of
    # denoising_diffusion_pytorch.py)
    from shapelint.analysis.unnamed import spell_dim

    assert spell_dim("fourier_dim'") == "fourier_dim'"
