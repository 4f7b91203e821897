"""The modules differential's torch side (benchmarks/modules_differential.py): what
FlopCounterMode is asked to count for a module's forward."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from benchmarks.modules_differential import run_forward  # noqa: E402


def _composite_count(m, x) -> int:
    """torch's own count of the unfused path: the oracle for the fused eval kernels."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    fast = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad(), sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as fc:
            m(x)
    finally:
        torch.backends.mha.set_fastpath_enabled(fast)
    return fc.get_total_flops()


def test_fused_encoder_layer_is_counted_by_its_composite_path():
    # batch_first, eval, no_grad: torch runs aten._transformer_encoder_layer_fwd,
    # which FlopCounterMode registers as 0 (the truth once recorded 0 for
    # pytorch-frame's FTTransformerConvs, and shapelint's right figure read as wrong).
    layer = torch.nn.TransformerEncoderLayer(16, 8, dim_feedforward=16, batch_first=True)
    m = torch.nn.TransformerEncoder(layer, num_layers=3, enable_nested_tensor=False).eval()
    x = torch.randn(2, 9, 16)
    expected = _composite_count(m, x)
    assert expected == 196992  # mm 82,944 + addmm 82,944 + bmm 31,104
    flops, out = run_forward(m, (2, 9, 16), False, ["src"], "cpu", None)
    assert flops == expected
    assert tuple(out.shape) == (2, 9, 16)
    assert torch.backends.mha.get_fastpath_enabled()  # restored for what runs next


def test_lstm_on_the_meta_device_counts_its_cells_and_is_judged_apart():
    # A module of over 20M parameters runs on the meta device, which has no oneDNN:
    # nn.LSTM runs its composite cells there, whose products the counter counts, where
    # on CPU in float32 the fused kernel counts 0 (shapelint's fused_rnn convention).
    from benchmarks.modules_differential import judge

    cpu, _ = run_forward(torch.nn.LSTM(8, 16).eval(), (5, 2, 8), False, ["input"], "cpu", None)
    with torch.device("meta"):
        lstm = torch.nn.LSTM(8, 16).eval()
    meta, _ = run_forward(lstm, (5, 2, 8), False, ["input"], "meta", None)
    assert cpu == 0 and meta > 0
    stated = [{"name": "fused_rnn"}]
    target = {"complete": True, "flops_value": 0, "flops": "0", "conventions": stated}
    assert judge({"flops": meta, "device": "meta"}, target)["verdict"] == "fused"
    assert judge({"flops": meta, "device": "cpu"}, target)["verdict"] == "wrong"
    assert (
        judge({"flops": meta, "device": "meta"}, target | {"conventions": []})["verdict"] == "wrong"
    )

def _module_of(cls):
    """A module object holding cls, as truth_of finds a class in the file it imported."""
    import types

    mod = types.ModuleType("difftest_trainable")
    cls.__module__ = mod.__name__
    setattr(mod, cls.__name__, cls)
    return mod


class _PartlyFrozen(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 3)
        self.b = torch.nn.Linear(3, 2)
        self.b.requires_grad_(False)
        self.scale = torch.nn.Parameter(torch.ones(3), requires_grad=False)

    def forward(self, x):
        return self.b(self.a(x) * self.scale)


def test_truth_counts_trainable_parameters_as_torch_does():
    from benchmarks.modules_differential import truth_of

    rec = truth_of({"qualname": "_PartlyFrozen"}, _module_of(_PartlyFrozen), measure=())
    assert rec["status"] == "ran"
    m = _PartlyFrozen()
    assert rec["params"] == sum(p.numel() for p in m.parameters()) == 26
    assert rec["trainable_params"] == 15  # a: 4·3 + 3; b and scale frozen
    assert "backward_status" not in rec and "saved_status" not in rec  # not asked


def test_trainable_verdicts():
    from benchmarks.modules_differential import judge_trainable

    c = {"trainable_params": 15}

    def verdict(**t):
        return judge_trainable(c, t).get("trainable_verdict")

    assert verdict(trainable_params="15", trainable_params_value=15) == "equal"
    assert verdict(trainable_params="26", trainable_params_value=26) == "wrong"
    assert verdict(trainable_params="?", trainable_params_known="12") == "lower"
    assert verdict(trainable_params="?", trainable_params_known="26") == "wrong"
    assert verdict(trainable_params="?", trainable_params_known=None) == "unknown"
    assert judge_trainable({}, {"trainable_params": "15"}) == {}  # no truth: no verdict
