"""Modules that initialise themselves from their first batch (NODE's ODST,
rtdl's ModuleWithInit): a flag held in a small integer Parameter, read back with
`.item()`, decides whether `initialize` runs before `super().__call__`, and the
statistics it takes go through numpy (`x.detach().cpu().numpy()`). Each figure is
held to FlopCounterMode on the module as torch runs it."""

from __future__ import annotations

import pytest

from shapelint.analysis.driver import analyze_target
from shapelint.analysis.target import target_json
from tests.test_modules import counted, static_target, write

torch = pytest.importorskip("torch")
pytest.importorskip("numpy")

SOURCE = """
    import numpy as np
    import torch
    from torch import nn


    def check_numpy(x):
        if isinstance(x, torch.Tensor):
            x = x.detach().cpu().numpy()
        x = np.asarray(x)
        if not isinstance(x, np.ndarray):
            raise TypeError("Expected input to be a numpy array")
        return x


    class WithInit(nn.Module):
        def __init__(self):
            super().__init__()
            self._flag = nn.Parameter(torch.tensor(0, dtype=torch.uint8), requires_grad=False)
            self._done = None

        def initialize(self, *args, **kwargs):
            raise NotImplementedError

        def __call__(self, *args, **kwargs):
            if self._done is None:
                self._done = bool(self._flag.item())
            if not self._done:
                self.initialize(*args, **kwargs)
                self._flag.data[...] = 1
                self._done = True
            return super().__call__(*args, **kwargs)


    class Scaled(WithInit):
        def __init__(self, n):
            super().__init__()
            self.lin = nn.Linear(n, n)
            self.scale = nn.Parameter(torch.ones(n))

        def initialize(self, x):
            with torch.no_grad():
                y = self.lin(x)
                a = check_numpy(y)
                assert a.shape == (x.shape[0], x.shape[1], x.shape[2])
                self.scale.data[...] = torch.as_tensor(a, dtype=y.dtype).std(dim=(0, 1))

        def forward(self, x):
            return self.lin(x) * self.scale


    class Thresholds(WithInit):
        # NODE's ODST: a percentile of each row, by numpy, mapped over the rows
        def __init__(self, n):
            super().__init__()
            self.lin = nn.Linear(n, n)
            self.thresholds = nn.Parameter(torch.zeros(n))

        def initialize(self, x):
            with torch.no_grad():
                rows = self.lin(x).reshape(-1, x.shape[-1]).t()
                q = 100 * np.random.beta(1.0, 1.0, size=[x.shape[-1]])
                found = list(map(np.percentile, check_numpy(rows), q.flatten()))
                self.thresholds.data[...] = torch.as_tensor(found, dtype=rows.dtype).view(-1)

        def forward(self, x):
            return self.lin(x) - self.thresholds


    class Outer(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.inner = Scaled(n)
            self.out = nn.Linear(n, 2)

        def forward(self, x):
            return self.out(self.inner(x))


    class Flags(nn.Module):
        # the elements of small integer tensors of each width torch.tensor holds
        def __init__(self):
            super().__init__()
            self.a = nn.Parameter(torch.tensor(3, dtype=torch.uint8), requires_grad=False)
            self.b = torch.tensor([-2, 5], dtype=torch.int8)
            self.c = torch.tensor(300, dtype=torch.int16)

        def forward(self, x):
            for _ in range(self.a.item()):
                x = x @ x
            low, high = self.b.tolist()
            if low < 0 < high and self.c.item() == 300:
                x = x @ x
            return x
"""


@pytest.mark.parametrize(
    "cls, shape",
    [("Scaled", (2, 8, 16)), ("Thresholds", (2, 8, 16)), ("Outer", (2, 8, 16)), ("Flags", (4, 4))],
)
def test_a_first_batch_initialisation_costs_as_torch_counts(tmp_path, cls, shape):
    path = write(tmp_path, "m.py", SOURCE)
    init = {} if cls == "Flags" else {"n": "16"}
    build = f"{cls}()" if cls == "Flags" else f"{cls}(16)"
    truth = counted(path, build, {"x": torch.randn(*shape)})
    t = static_target(path, cls, init, {"x": ",".join(map(str, shape))})
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth > 0


def test_numpy_of_a_default_float_tensor_follows_the_runs_dtype(tmp_path):
    """`.numpy()` of a tensor of the run's default float: an array where that is a
    dtype numpy has; where it is bfloat16 (`--dtype bf16`) torch raises, no figure."""
    path = write(tmp_path, "m.py", SOURCE)
    ns: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)  # noqa: S102 - the test's module
    model = ns["Scaled"](16).to(torch.bfloat16)
    with pytest.raises(TypeError):
        model(torch.randn(2, 8, 16, dtype=torch.bfloat16))
    options = {"dtype": "bf16"}
    res = analyze_target(
        str(path), path.read_text(), "Scaled", {"n": "16"}, {"x": "2,8,16"}, options
    )
    assert not target_json(res, {})["complete"]
