"""named_children() / children() of torch's own containers, and `del d[k]` of a
dict: torchvision's IntermediateLayerGetter (a ModuleDict subclass built from
`model.named_children()`, a copy of its return layers shrunk by `del` until empty)
runs the layers it took, as FlopCounterMode counts them."""

from __future__ import annotations

import pytest

from tests.test_modules import counted, static_target, write

torch = pytest.importorskip("torch")

SOURCE = """
    from collections import OrderedDict

    from torch import nn


    class Getter(nn.ModuleDict):
        # torchvision.models._utils.IntermediateLayerGetter, as released
        def __init__(self, model, return_layers):
            if not set(return_layers).issubset([name for name, _ in model.named_children()]):
                raise ValueError("return_layers are not present in model")
            orig_return_layers = return_layers
            return_layers = {str(k): str(v) for k, v in return_layers.items()}
            layers = OrderedDict()
            for name, module in model.named_children():
                layers[name] = module
                if name in return_layers:
                    del return_layers[name]
                if not return_layers:
                    break
            super().__init__(layers)
            self.return_layers = orig_return_layers

        def forward(self, x):
            out = OrderedDict()
            for name, module in self.items():
                x = module(x)
                if name in self.return_layers:
                    out[self.return_layers[name]] = x
            return out


    class Net(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.a = nn.Linear(n, n)
            self.b = nn.Linear(n, 2 * n)
            self.c = nn.Linear(2 * n, n)

        def forward(self, x):
            return self.c(self.b(self.a(x)))


    class FromProject(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.body = Getter(Net(n), {"a": "0", "b": "1"})

        def forward(self, x):
            out = self.body(x)
            return out["0"].sum() + out["1"].sum()


    class FromSequential(nn.Module):
        # a Sequential's children under "0", "1", ...; a shared layer once
        def __init__(self, n):
            super().__init__()
            lin = nn.Linear(n, n)
            seq = nn.Sequential(lin, nn.ReLU(), lin, nn.Linear(n, 3))
            self.body = Getter(seq, {"3": "last"})
            self.kids = nn.ModuleList(seq.children())

        def forward(self, x):
            return self.body(x)["last"] + len(self.kids)


    class Named(nn.Module):
        # a Sequential of an OrderedDict: its children under the dict's names
        def __init__(self, n):
            super().__init__()
            seq = nn.Sequential(OrderedDict(first=nn.Linear(n, n), second=nn.Linear(n, 4)))
            self.body = Getter(seq, {"second": "out"})

        def forward(self, x):
            return self.body(x)["out"]
"""


@pytest.mark.parametrize("cls", ["FromProject", "FromSequential", "Named"])
def test_layers_taken_from_named_children_cost_as_torch_counts(tmp_path, cls):
    path = write(tmp_path, "m.py", SOURCE)
    truth = counted(path, f"{cls}(8)", {"x": torch.randn(2, 5, 8)})
    t = static_target(path, cls, {"n": "8"}, {"x": "2,5,8"})
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth > 0
