"""Callees taken from containers in the forms Python and torch give them (issue 24):
a Sequential's or ModuleList's `children()` walked by a loop, lists built by
repetition and `.copy()` before their sizes build the layers. Each module is judged
by torch: FlopCounterMode's count, `sum(p.numel())` and the output's shape."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import torch_figures, written_module
from tests.test_modules import write
from tests.test_parameters import static

pytest.importorskip("torch")

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
    # `d.copy()` is a new dict of the same entries: a store into the copy leaves the
    # original as it was
    "dict_copy_is_another_dict": (
        """
        class Net(nn.Module):
            def __init__(self, d, **kwargs):
                super().__init__()
                cfg = {"h": 2 * d, **kwargs}
                c2 = cfg.copy()
                c2["h"] = 3 * d
                self.a = nn.Linear(d, cfg["h"])
                self.b = nn.Linear(cfg["h"], c2["h"])

            def forward(self, x):
                return self.b(self.a(x))
        """,
        "Net",
        dict(d=8),
        dict(x=(2, 8)),
    ),
    # dict's get on an instance of a dict subclass that does not define it: the
    # instance's entries (torch_ecg's CFG, `config.get("norm", config.get("bn"))`)
    "dict_subclass_get": (
        """
        class Cfg(dict):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)

            def scaled(self, k):
                return 2 * self[k]


        class Net(nn.Module):
            def __init__(self, d):
                super().__init__()
                cfg = Cfg(width=3, deep=True)
                wide = cfg.get("wide", cfg.get("width")) * d
                self.a = nn.Linear(d, wide)
                self.b = nn.Linear(wide, cfg.scaled("width")) if cfg.get("deep") else None

            def forward(self, x):
                return self.b(self.a(x))
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
    # zuko's MLP: the layers filtered by a one-shot iterator bound to the name it
    # filters (`layers = filter(f, layers)` reads the list, then `*layers` the
    # iterator, once); MonotonicMLP retypes each Linear it walks in its own
    # constructor (`for layer in self`, `layer.__class__ = Abs`), whose forward then
    # runs
    "retyped_layers_of_a_filtered_sequential": (
        """
        import torch.nn.functional as F


        class Lin(nn.Module):
            def __init__(self, d_in, d_out):
                super().__init__()
                self.weight = nn.Parameter(torch.randn(d_out, d_in))
                self.bias = nn.Parameter(torch.zeros(d_out))

            def forward(self, x):
                return F.linear(x, self.weight, self.bias)


        class Twice(Lin):
            def forward(self, x):
                return F.linear(x, self.weight.abs(), self.bias) + F.linear(x, self.weight)


        class MLP(nn.Sequential):
            def __init__(self, d_in, d_out, hidden=(32, 24), norm=False):
                normalization = nn.LayerNorm if norm else lambda: None
                layers = []
                for a, b in zip((d_in, *hidden), (*hidden, d_out)):
                    layers.extend([Lin(a, b), nn.ELU(), normalization()])
                layers = layers[:-2]
                layers = filter(lambda layer: layer is not None, layers)
                super().__init__(*layers)


        class Net(MLP):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                for layer in self:
                    if isinstance(layer, Lin):
                        layer.__class__ = Twice
        """,
        "Net",
        dict(d_in=16, d_out=8),
        dict(input=(2, 5, 16)),
    ),
    # torch_ecg's Conv_Bn_Activation: a layer registered under its class's name
    # (`type(act).__name__` of a torch layer is the layer's class name)
    "layer_registered_under_its_class_name": (
        """
        class Act(nn.Module):
            def forward(self, x):
                return x * 2


        class CBA(nn.Sequential):
            def __init__(self, cin, cout, k, act=True):
                super().__init__()
                self.add_module("conv1d", nn.Conv1d(cin, cout, k, padding=k // 2))
                a = nn.ReLU() if act else Act()
                self.add_module(f"activation_{type(a).__name__}", a)
                b = nn.Conv1d(cout, cout, 1)
                self.add_module(f"{b.__class__.__name__.lower()}_out", b)
        """,
        "CBA",
        dict(cin=8, cout=16, k=3),
        dict(input=(2, 8, 12)),
    ),
    # spikingjelly's SeqToANNContainer: `super().forward` handed on as a value (a
    # Sequential's forward bound to the instance), called by a helper; a project
    # base's method read the same way is that method bound to the instance
    "super_forward_as_a_value": (
        """
        def apply_all(x, mods):
            for m in mods:
                x = m(x)
            return x


        class SeqOverTime(nn.Sequential):
            def forward(self, x_seq):
                t, b = x_seq.shape[:2]
                y = apply_all(x_seq.flatten(0, 1), (super().forward,))
                return y.unflatten(0, (t, b))


        class Base(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.lin = nn.Linear(d, d)

            def forward(self, x):
                return self.lin(x)


        class Twice(Base):
            def forward(self, x):
                step = super().forward
                return step(step(x))


        class Net(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.p = SeqOverTime(nn.Conv2d(d, d, 3, padding=1))
                self.t = Twice(8)

            def forward(self, x):
                return self.t(self.p(x))
        """,
        "Net",
        dict(d=4),
        dict(x=(2, 3, 4, 8, 8)),
    ),
    # denoiser's Demucs: the decoder built back to front by `insert(0, block)`, then
    # walked in order; a Sequential's insert at an index from its end
    "module_list_insert": (
        """
        class Net(nn.Module):
            def __init__(self, chin=1, hidden=4, depth=3):
                super().__init__()
                self.encoder = nn.ModuleList()
                self.decoder = nn.ModuleList()
                chout = chin
                for index in range(depth):
                    self.encoder.append(nn.Conv1d(chin, hidden, 3, padding=1))
                    self.decoder.insert(0, nn.ConvTranspose1d(hidden, chout, 3, padding=1))
                    chout = chin = hidden
                    hidden *= 2
                self.head = nn.Sequential(nn.Conv1d(chout, 8, 1), nn.Conv1d(5, 6, 1))
                self.head.insert(-1, nn.Conv1d(8, 5, 1))

            def forward(self, x):
                skips = []
                for encode in self.encoder:
                    x = encode(x)
                    skips.append(x)
                y = self.head(x)
                for decode in self.decoder:
                    x = decode(x + skips.pop(-1))
                return x + y[:, :1]
        """,
        "Net",
        dict(),
        dict(x=(2, 1, 16)),
    ),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_exact_against_torch(tmp_path, key):
    code, cls, init, inputs = CASES[key]
    path, mod = written_module(tmp_path, key, HEADER + textwrap.dedent(code))
    args = [a for k, v in init.items() for a in ("--init", f"{k}={v}")]
    args += [a for k, s in inputs.items() for a in ("--input", f"{k}={','.join(map(str, s))}")]
    t = static(path, cls, *args, "--eval")
    flops, _backward, params, shape = torch_figures(mod, cls, init, inputs, training=False)
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


RETYPED = """
import torch
import torch.nn as nn


class Lin(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        return self.lin(x)


class Slotted(nn.Module):
    __slots__ = ("extra",)

    def forward(self, x):
        return self.lin(self.lin(x))


class Other(nn.Identity):
    def forward(self, x):
        return self.lin(self.lin(x))


class Net(nn.Module):
    def __init__(self, d, to="slotted"):
        super().__init__()
        self.block = Lin(d)
        block = self.block
        block.__class__ = Slotted if to == "slotted" else Other

    def forward(self, x):
        return self.block(x)
"""


@pytest.mark.parametrize("to", ["slotted", "other"])
def test_a_class_of_another_layout_is_not_taken(tmp_path, to):
    """`obj.__class__ = C` where C may lay its instances out otherwise (a class with
    `__slots__`, or other classes outside the project along its bases): what the
    object is then is not followed, and the module's figures are not known."""
    path = write(tmp_path, "retyped.py", RETYPED)
    t = static(path, "Net", "--init", "d=8", "--init", f"to={to!r}", "--input", "x=2,8")
    assert not t["complete"]
