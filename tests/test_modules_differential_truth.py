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


class _Attend(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.qkv = torch.nn.Linear(d, 3 * d)

    def forward(self, x):
        q, k, v = self.qkv(x).unflatten(-1, (3, 2, -1)).permute(2, 0, 3, 1, 4)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def test_attention_backward_on_the_meta_device_is_judged_apart(monkeypatch):
    # On the meta device SDPA's backward runs its math path (four products); on CPU
    # the fused kernel, which the differential counts by torch's formula (the scores
    # recomputed, a fifth): shapelint's fused_attention convention is the CPU run.
    import benchmarks.modules_differential as md
    from benchmarks.modules_differential import judge_backward, run_backward

    monkeypatch.setattr(md, "CPU_FLASH", {})
    md.count_cpu_flash()  # as the truth's runs count

    cpu = run_backward(_Attend().eval(), (2, 5, 8), False, ["x"], "cpu", None)
    with torch.device("meta"):
        meta_m = _Attend().eval()
    meta = run_backward(meta_m, (2, 5, 8), False, ["x"], "meta", None)
    assert cpu["flops_backward"] > meta["flops_backward"] > 0
    stated = [{"name": "fused_attention"}]
    target = {"backward_complete": True, "flops_backward_value": cpu["flops_backward"]}
    exact = {"verdict": "exact"}
    truth = {"outputs": [[2, 2, 5, 4]], "backward_status": "ran"}

    def verdict(device, conventions):
        c = truth | {"flops_backward": meta["flops_backward"], "device": device}
        return judge_backward(c, target | {"conventions": conventions}, exact)["backward"]

    assert verdict("meta", stated) == "fused"
    assert verdict("cpu", stated) == "wrong"
    assert verdict("meta", []) == "wrong"


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


CACHING = '''
import torch
from torch import nn


class Cached(nn.Module):
    """Keeps a product of its weights across calls; refuses an input of rank 3 only
    after computing it (the harness's first probe for a Linear first layer)."""

    def __init__(self, d: int):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.w = nn.Parameter(torch.randn(d, d))

    def forward(self, x):
        if "_ww" not in self.__dict__:
            self.__dict__["_ww"] = self.w @ self.w
        if x.dim() != 2:
            raise ValueError("a batch of vectors")
        return self.lin(x) @ self.__dict__["_ww"]
'''


def test_a_probe_that_failed_leaves_no_state_in_the_module_measured():
    # neural-ssm's EvalCacheMixin: a first probe computed and cached its matrices,
    # then failed; the probe that fitted, on the same module, hit the cache and the
    # truth lacked that work (a fresh module's first call does it: shapelint's right
    # figure read as wrong). Each probe after a failed one gets a fresh module.
    import types

    from torch.utils.flop_counter import FlopCounterMode

    from benchmarks.modules_differential import truth_of

    mod = types.ModuleType("caching_probe")
    exec(compile(CACHING, "caching_probe.py", "exec"), mod.__dict__)  # noqa: S102
    got = truth_of({"qualname": "Cached"}, mod, measure=())
    assert got["status"] == "ran" and got["probes"] > 1, got
    kwargs = {k: int(v) for k, v in (a.split("=") for a in got["init"])}
    fresh = mod.Cached(**kwargs).eval()
    x = torch.randn(*got["input"]["x"])
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        fresh(x)
    assert got["flops"] == fc.get_total_flops() > 2 * x.shape[0] * x.shape[1] ** 2 * 2
