"""torch's recurrent layers (stubs/source/shapelint_torch_rnn.py, stubs/layers.stub):
nn.RNN / nn.GRU / nn.LSTM / nn.LSTMCell and a user subclass of one, against torch:
FlopCounterMode forward and backward, `sum(p.numel())` and the Parameters' names (read
back through the layer), and the output's shape. nn.LSTM is counted as torch counts
it on CPU: 0 for oneDNN's fused kernel (float32, no proj_size), an addmm per linear map
and step for torch's default implementation (proj_size, float64), not known where the
CPU decides (bfloat16, float16)."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import torch
import torch.nn as nn


class Gru(nn.Module):
    def __init__(self, d=16, h=32, n=2, bi=True, bf=True, bias=True, p=0.0):
        super().__init__()
        self.rnn = nn.GRU(d, h, n, bias=bias, batch_first=bf, bidirectional=bi, dropout=p)
        # the names torch gives the Parameters, read back: a wrong name has no value
        self.head = nn.Linear(self.rnn.weight_hh_l0.shape[1] * (2 if bi else 1), 3)

    def forward(self, x):
        y, h_n = self.rnn(x)
        return self.head(y)


class GruState(nn.Module):
    def __init__(self, d=16, h=24):
        super().__init__()
        self.rnn = nn.GRU(d, h, 3)

    def forward(self, x, h0):
        y, h_n = self.rnn(x, h0)
        return h_n


class Rnn(nn.Module):
    def __init__(self, d=16, h=32, n=2, nl="tanh", bi=False, bias=True):
        super().__init__()
        self.rnn = nn.RNN(d, h, n, nl, bias, bidirectional=bi)
        self.out = nn.Linear(self.rnn.weight_ih_l1.shape[1] // (2 if bi else 1), 4)

    def forward(self, x):
        y, h_n = self.rnn(x)
        return self.out(h_n)


class Lstm(nn.Module):
    def __init__(self, d=16, h=32, n=2, bi=True, proj=0, bf=False, what="y"):
        super().__init__()
        self.lstm = nn.LSTM(d, h, n, batch_first=bf, bidirectional=bi, proj_size=proj)
        self.what = what

    def forward(self, x):
        y, (h_n, c_n) = self.lstm(x)
        return {"y": y, "h": h_n, "c": c_n}[self.what]


class LstmCast(nn.Module):
    # the dtype the weights and the input share picks the kernel
    def __init__(self, d=16, h=32, dtype="float64", proj=0):
        super().__init__()
        dt = getattr(torch, dtype)
        self.lstm = nn.LSTM(d, h, 2, bidirectional=True, proj_size=proj, dtype=dt)
        self.dt = dt

    def forward(self, x):
        y, (h_n, c_n) = self.lstm(x.to(self.dt))
        return y.float()


class LstmState(nn.Module):
    def __init__(self, d=16, h=32):
        super().__init__()
        self.lstm = nn.LSTM(d, h, 2, batch_first=True, proj_size=8)

    def forward(self, x, h0, c0):
        y, (h_n, c_n) = self.lstm(x, (h0, c0))
        return c_n


class Projected(nn.Module):
    def __init__(self, d=16, h=32):
        super().__init__()
        self.lstm = nn.LSTM(d, h, 2, bidirectional=True, proj_size=8)
        self.head = nn.Linear(self.lstm.weight_hr_l1_reverse.shape[0], 5)

    def forward(self, x):
        return x


class Cell(nn.Module):
    def __init__(self, d=16, h=32, bias=True):
        super().__init__()
        self.cell = nn.LSTMCell(d, h, bias=bias)

    def forward(self, x):
        h, c = self.cell(x)
        return h * c


class Flat(nn.Module):
    # easyocr's BidirectionalLSTM: the weights compacted for cuDNN before each call
    def __init__(self, d=16, h=32):
        super().__init__()
        self.rnn = nn.GRU(d, h, batch_first=True, bidirectional=True)

    def forward(self, x):
        self.rnn.flatten_parameters()
        y, _ = self.rnn(x)
        return y
class Cells(nn.Module):
    # a cell given no state, a state that needs no grad, or one that does (a
    # Parameter), with its input weight frozen or not
    def __init__(self, kind="gru", state="none", freeze=False):
        super().__init__()
        self.kind, self.state = kind, state
        cls = {"gru": nn.GRUCell, "rnn": nn.RNNCell, "lstm": nn.LSTMCell}[kind]
        self.cell = cls(16, 24)
        self.h0 = nn.Parameter(torch.zeros(1, 24))
        if freeze:
            self.cell.weight_ih.requires_grad_(False)

    def forward(self, x):
        if self.state == "param":
            h = self.h0.expand(x.shape[0], -1)
        else:
            h = x.new_zeros(x.shape[0], 24)
        if self.kind == "lstm":
            hx = None if self.state == "none" else (torch.zeros_like(h), h)
            return self.cell(x, hx)[0]
        return self.cell(x) if self.state == "none" else self.cell(x, h)


class Bi(nn.GRU):
    # a user subclass: torch's Parameters and forward, inherited
    def __init__(self, d, h):
        super().__init__(d, h, num_layers=1, bidirectional=True, batch_first=True)
        self.proj = nn.Linear(2 * h, d)

    def forward(self, x):
        y, _ = super().forward(x)
        return self.proj(y)


class Chosen(nn.Module):
    # the layer's class as a value: torch.nn's attribute chosen by a test, or looked up
    # by its name (asteroid's `getattr(nn, rnn_type.upper())`)
    def __init__(self, d=16, h=20, kind="gru", by_name=False):
        super().__init__()
        cls = getattr(nn, kind.upper()) if by_name else nn.GRU if kind == "gru" else nn.RNN
        self.rnn = cls(d, h, batch_first=True)

    def forward(self, x):
        y, _ = self.rnn(x)
        return y


class Sub(nn.Module):
    def __init__(self, d=12, h=20):
        super().__init__()
        self.bi = Bi(d, h)

    def forward(self, x):
        return self.bi(x)
"""

# (class, constructor keywords, input shapes)
CASES = [
    ("Gru", {}, {"x": (4, 10, 16)}),
    ("Gru", {}, {"x": (10, 16)}),
    ("Gru", {"n": 1, "bi": False, "bf": False, "bias": False}, {"x": (4, 10, 16)}),
    ("Gru", {"n": 3, "p": 0.25}, {"x": (3, 5, 16)}),
    ("GruState", {}, {"x": (6, 3, 16), "h0": (3, 3, 24)}),
    ("GruState", {}, {"x": (6, 16), "h0": (3, 24)}),
    ("Rnn", {}, {"x": (10, 4, 16)}),
    ("Rnn", {"nl": "relu", "bi": True, "bias": False}, {"x": (7, 16)}),
    ("Cell", {}, {"x": (10, 16)}),
    ("Cell", {"bias": False}, {"x": (16,)}),
    ("Sub", {}, {"x": (2, 9, 12)}),
    ("Chosen", {}, {"x": (2, 5, 16)}),
    ("Chosen", {"kind": "rnn"}, {"x": (2, 5, 16)}),
    ("Chosen", {"kind": "gru", "by_name": True}, {"x": (2, 5, 16)}),
    ("Chosen", {"kind": "lstm", "by_name": True}, {"x": (2, 5, 16)}),
    ("Flat", {}, {"x": (2, 5, 16)}),
    ("Lstm", {}, {"x": (10, 4, 16)}),
    ("Lstm", {"what": "h", "bf": True}, {"x": (4, 10, 16)}),
    ("Lstm", {"what": "c", "proj": 8, "n": 3}, {"x": (10, 4, 16)}),
    ("Lstm", {"what": "h", "proj": 8, "bi": False}, {"x": (10, 16)}),
    ("Lstm", {"bf": True, "proj": 8}, {"x": (10, 16)}),
    ("LstmCast", {}, {"x": (5, 3, 16)}),
    ("LstmCast", {"dtype": "float32"}, {"x": (5, 3, 16)}),
    ("LstmCast", {"proj": 8}, {"x": (5, 3, 16)}),
]


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("rnn"), "rnn_modules", SOURCE)


def _static(path, name, kw, inputs, training=True):
    return run_class(path, name, kw, inputs, training)


def _torch(mod, name, kw, inputs):
    return torch_figures(mod, name, kw, inputs, training=True)


@pytest.mark.parametrize(("name", "kw", "inputs"), CASES)
def test_figures_equal_torch(source, name, kw, inputs):
    path, mod = source
    t = _static(path, name, kw, inputs)
    fwd, bwd, params, shape = _torch(mod, name, kw, inputs)
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fwd
    assert t["params_value"] == params
    assert tuple(int(d) for d in t["output"]) == shape
    assert t["backward_complete"], t["backward_unknown"]
    assert t["flops_backward_value"] == bwd


@pytest.mark.parametrize("kind", ["gru", "rnn", "lstm"])
@pytest.mark.parametrize("state", ["none", "zeros", "param"])
@pytest.mark.parametrize("freeze", [False, True])
def test_cells_backward_equals_torch(source, kind, state, freeze):
    """A cell's backward: each linear map's products for the operand and the weight
    that require grad (the hidden state's for h alone, LSTMCell's hx[0])."""
    path, mod = source
    kw, inputs = {"kind": kind, "state": state, "freeze": freeze}, {"x": (5, 16)}
    t = _static(path, "Cells", kw, inputs)
    fwd, bwd, params, shape = _torch(mod, "Cells", kw, inputs)
    assert (t["flops_value"], t["params_value"]) == (fwd, params)
    assert t["backward_complete"], t["backward_unknown"]
    assert t["flops_backward_value"] == bwd


def test_lstm_fused_kernel_says_so(source):
    """oneDNN's kernel counts 0 in torch: the figure is torch's, and every face says
    that the kernel's work is not in it."""
    from shapelint.report.conventions import FUSED_RNN

    path, _mod = source
    t = _static(path, "Lstm", {}, {"x": (10, 4, 16)})
    assert t["flops_value"] == 0 and t["complete"]
    assert [c["statement"] for c in t["conventions"] if c["name"] == "fused_rnn"] == [FUSED_RNN]
    proj = _static(path, "Lstm", {"proj": 8}, {"x": (10, 4, 16)})
    assert not any(c["name"] == "fused_rnn" for c in proj["conventions"])


def test_lstm_kernel_the_cpu_decides_is_not_known(source):
    # bfloat16 runs oneDNN's kernel where the CPU has bf16 support, torch's own otherwise
    path, _mod = source
    t = _static(path, "LstmCast", {"dtype": "bfloat16"}, {"x": (5, 3, 16)})
    assert not t["complete"] and t["flops_value"] is None


def test_lstm_given_its_state(source):
    path, mod = source
    inputs = {"x": (3, 5, 16), "h0": (2, 3, 8), "c0": (2, 3, 32)}
    t = _static(path, "LstmState", {}, inputs)
    _fwd, _bwd, params, out = _torch(mod, "LstmState", {}, inputs)
    assert (t["params_value"], tuple(int(d) for d in t["output"])) == (params, out)
    assert t["complete"] and t["flops_value"] == _fwd


def test_lstm_projection_weight_named_as_torch(source):
    path, mod = source
    t = _static(path, "Projected", {}, {"x": (3, 16)})
    assert t["params_value"] == sum(p.numel() for p in mod.Projected().parameters())


@pytest.mark.parametrize(
    ("name", "inputs"),
    [
        ("Lstm", {"x": (10, 4, 8)}),  # input_size 16
        ("GruState", {"x": (6, 3, 16), "h0": (2, 3, 24)}),  # 3 layers
        ("GruState", {"x": (6, 16), "h0": (3, 1, 24)}),  # unbatched, a 3-D hx
    ],
)
def test_a_forward_torch_refuses_returns_nothing(source, name, inputs):
    path, mod = source
    with pytest.raises(RuntimeError):
        _torch(mod, name, {}, inputs)
    t = _static(path, name, {}, inputs)
    assert t["output"] is None and not t["complete"]
    assert any(u["op"] == "raise" for u in t["unknown"])
