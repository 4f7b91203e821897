"""Callees taken from containers in the forms Python and torch give them (issue 24):
a Sequential's or ModuleList's `children()` walked by a loop, lists built by
repetition and `.copy()` before their sizes build the layers. Each module is judged
by torch: FlopCounterMode's count, `sum(p.numel())` and the output's shape."""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest

from tests.test_modules import write
from tests.test_parameters import static

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

HEADER = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    """
)

CASES = {
    # pina's ResidualFeedForward: a Sequential's children walked one by one, the widths
    # from `[inner] * n` copied and grown at the front
    "sequential_children_walked": (
        """
        class Block(nn.Module):
            def __init__(self, layer, activation):
                super().__init__()
                self.model = nn.Sequential(layer, activation)

            def forward(self, x):
                return self.model(x)


        class Net(nn.Module):
            def __init__(self, d_in, d_out, inner=20, n_layers=2):
                super().__init__()
                widths = [inner] * n_layers
                widths = widths.copy()
                widths.insert(0, d_in)
                blocks = []
                for i in range(len(widths) - 1):
                    blocks.append(Block(nn.Linear(widths[i], widths[i + 1]), nn.Tanh()))
                self.inner = nn.Sequential(*blocks)
                self.last = nn.Linear(widths[len(widths) - 1], d_out)

            def forward(self, x):
                for layer in self.inner.children():
                    x = layer(x) + x.mean()
                return self.last(x)
        """,
        "Net",
        dict(d_in=16, d_out=12),
        dict(x=(2, 8, 16)),
    ),
    # named_children() of a ModuleList: its items under "0", "1", ...; one layer held
    # twice is walked once (nn.Module's memo), so it runs once
    "module_list_named_children_once_each": (
        """
        class Net(nn.Module):
            def __init__(self, d):
                super().__init__()
                shared = nn.Linear(d, d)
                self.layers = nn.ModuleList([shared, nn.Linear(d, 2 * d), shared])

            def forward(self, x):
                for name, layer in self.layers.named_children():
                    x = layer(x[..., : layer.in_features])
                return x
        """,
        "Net",
        dict(d=8),
        dict(x=(2, 8)),
    ),
    # `xs.copy()` is a new list: growing the copy leaves the original as it was
    "list_copy_is_another_list": (
        """
        class Net(nn.Module):
            def __init__(self, d):
                super().__init__()
                xs = [d, 2 * d]
                ys = xs.copy()
                ys.append(3 * d)
                self.a = nn.Linear(xs[-1], ys[-1])

            def forward(self, x):
                return self.a(x)
        """,
        "Net",
        dict(d=8),
        dict(x=(2, 16)),
    ),
}


def _torch_figures(path, build: str, inputs: dict) -> tuple[int, int, tuple]:
    name = f"_container_forms_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    model = eval(build, vars(mod))  # noqa: S307 - the test's own expression
    tensors = [torch.randn(*s) for s in inputs.values()]
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        out = model(*tensors)
    return fc.get_total_flops(), sum(p.numel() for p in model.parameters()), tuple(out.shape)


@pytest.mark.parametrize("key", sorted(CASES))
def test_exact_against_torch(tmp_path, key):
    code, cls, init, inputs = CASES[key]
    path = write(tmp_path, f"{key}.py", HEADER + textwrap.dedent(code))
    args = [a for k, v in init.items() for a in ("--init", f"{k}={v}")]
    args += [a for k, s in inputs.items() for a in ("--input", f"{k}={','.join(map(str, s))}")]
    t = static(path, cls, *args)
    build = f"{cls}({', '.join(f'{k}={v}' for k, v in init.items())})"
    flops, params, shape = _torch_figures(path, build, inputs)
    assert flops > 0
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == flops
    assert int(t["params"]) == params
    assert tuple(int(d) for d in t["output"]) == shape


def test_a_list_repeated_is_a_list():
    """`[x] * n` is a list, whose methods (`insert`, `copy`) run on it; a tuple's
    repetition, a namedtuple's too, is a tuple."""
    from shapelint.analysis.sequences import repeated
    from shapelint.notation.symbolic import Expr
    from shapelint.ops.values import IntV, TupleV

    one, three = IntV(Expr.const(1)), IntV(Expr.const(3))
    assert repeated(TupleV((one,), "list"), three) == TupleV((one,) * 3, "list")
    assert repeated(three, TupleV((one,), "list")).kind == "list"
    assert repeated(TupleV((one,)), three) == TupleV((one,) * 3)
    assert repeated(TupleV((one,), "Point"), three).kind is None


def test_children_of_a_list_not_known_item_by_item_are_not_known(tmp_path):
    """A ModuleList filled in a loop of a length not known: its children() are not
    listed, and the loop over them is no figure."""
    code = """
        class Net(nn.Module):
            def __init__(self, d, depth):
                super().__init__()
                self.layers = nn.ModuleList()
                for _ in range(depth):
                    self.layers.append(nn.Linear(d, d))

            def forward(self, x):
                for layer in self.layers.children():
                    x = layer(x)
                return x
        """
    path = write(tmp_path, "unknown_children.py", HEADER + textwrap.dedent(code))
    t = static(path, "Net", "--init", "d=8", "--input", "x=2,8")
    assert not t["complete"]
