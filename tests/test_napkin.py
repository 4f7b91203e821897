"""Napkin math: the lecture's numbers, the formulas behind them, and oracles.

The seed's two opening questions are pinned to their numbers; the formulas are
pinned by how they scale; the transformer formulas are checked against torch
itself (parameter counts, torch.utils.flop_counter for FLOPs, and the bytes
autograd actually saves for backward) on small models on CPU.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from shapelint.cli.napkin import napkin
from shapelint.napkin.formulas import (
    NapkinError,
    bytes_per_param,
    head_activation_bytes,
    ladder,
    layer_activation_bytes,
    max_params,
    roofline,
    roofline_for,
    train_time,
    transformer_forward_flops,
    transformer_memory,
    transformer_params,
)
from shapelint.napkin.hardware import (
    DEFAULT_HARDWARE,
    DTYPES,
    HardwareError,
    load_hardware_table,
    lookup,
    merge_hardware,
    parse_quantity,
)

FAST = settings(max_examples=60)

# --- the seed's numbers ------------------------------------------------------------------


def test_h100_figures_are_the_lectures():
    h100 = lookup("h100")
    assert h100.key == "h100-sxm"
    assert h100.peak("bf16") == 1979e12 / 2 == 989.5e12
    assert h100.peak_figure("bf16").sparse == 1979e12
    assert h100.bandwidth.value == 3.35e12
    assert h100.memory.value == 80e9
    assert h100.critical_intensity("bf16") == pytest.approx(295.37, abs=0.01)


def test_seed_training_time_70b_on_15t_tokens_1024_h100s():
    r = train_time(70e9, 15e12, 1024, "h100", mfu=0.5)
    # The lecture's chain, verbatim.
    total_flops = 6 * 70e9 * 15e12
    flops_per_day = 1979e12 / 2 * 0.5 * 1024 * 60 * 60 * 24
    assert r.total_flops == total_flops == pytest.approx(6.3e24)
    assert r.flops_per_day == pytest.approx(flops_per_day)
    assert r.days == pytest.approx(total_flops / flops_per_day)
    assert round(r.days, 1) == 143.9
    assert r.gpu_hours == pytest.approx(r.days * 24 * 1024)
    assert [s.name for s in r.steps] == [
        "flops_per_token",
        "total_flops",
        "flop_per_sec",
        "flops_per_day",
        "days",
        "gpu_hours",
    ]


def test_seed_largest_model_on_8_h100s_with_adamw():
    r = max_params(8, "h100", "adamw")
    assert r.bytes_per_param == 2 + 2 + (4 + 4) == 12
    assert r.params == pytest.approx(8 * 80e9 / 12)
    assert round(r.params / 1e9, 1) == 53.3


# --- training time: the formula, not just the example -------------------------------------


@FAST
@given(
    params=st.floats(1e6, 1e13),
    tokens=st.floats(1e6, 1e14),
    gpus=st.integers(1, 100_000),
    mfu=st.floats(0.01, 1.0),
    k=st.integers(2, 64),
)
def test_days_scale_inversely_with_gpus_and_mfu(params, tokens, gpus, mfu, k):
    base = train_time(params, tokens, gpus, "h100", mfu)
    assert train_time(params, tokens, gpus * k, "h100", mfu).days == pytest.approx(base.days / k)
    assert train_time(params, tokens, gpus, "h100", mfu / k).days == pytest.approx(base.days * k)
    assert train_time(params * k, tokens, gpus, "h100", mfu).days == pytest.approx(base.days * k)
    assert train_time(params, tokens * k, gpus, "h100", mfu).days == pytest.approx(base.days * k)
    # The work does not depend on how many chips share it.
    assert train_time(params, tokens, gpus * k, "h100", mfu).gpu_hours == pytest.approx(
        base.gpu_hours
    )
    assert base.days == pytest.approx(6 * params * tokens / (989.5e12 * mfu * gpus * 86400))


def test_flops_per_token_override_and_faster_chips():
    six_nd = train_time(1e9, 1e12, 8, "h100")
    given_ = train_time(1e9, 1e12, 8, "h100", flops_per_token=12e9)
    assert given_.days == pytest.approx(2 * six_nd.days)
    # Halving the peak (PCIe is not half, so use the ratio of the table's peaks).
    pcie = train_time(1e9, 1e12, 8, "h100-pcie")
    assert pcie.days / six_nd.days == pytest.approx(989.5e12 / 756.5e12)
    fp8 = train_time(1e9, 1e12, 8, "h100", dtype="fp8")
    assert fp8.days == pytest.approx(six_nd.days / 2)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"params": 0},
        {"tokens": -1},
        {"gpus": 0},
        {"gpus": 1.5},
        {"mfu": 1.5},
        {"mfu": 0},
        {"hardware": "h1000"},
        {"dtype": "int3"},
        {"hardware": "a100", "dtype": "fp8"},
        {"hardware": "tpu-v5e", "dtype": "fp32"},
    ],
)
def test_train_time_rejects_bad_input(kwargs):
    args = {"params": 1e9, "tokens": 1e12, "gpus": 8} | kwargs
    with pytest.raises(NapkinError):
        train_time(**args)


# --- bytes per parameter --------------------------------------------------------------------

BYTES_PER_PARAM = {
    # (optimizer, precision): (weights, gradients, master, optimizer state)
    ("adamw", "mixed"): (2, 2, 0, 8),
    ("adam", "mixed"): (2, 2, 0, 8),
    ("adagrad", "mixed"): (2, 2, 0, 4),
    ("sgd-momentum", "mixed"): (2, 2, 0, 4),
    ("sgd", "mixed"): (2, 2, 0, 0),
    ("adamw", "mixed-master"): (2, 2, 4, 8),
    ("adagrad", "mixed-master"): (2, 2, 4, 4),
    ("sgd", "mixed-master"): (2, 2, 4, 0),
    ("adamw", "fp32"): (4, 4, 0, 8),
    ("adagrad", "fp32"): (4, 4, 0, 4),
    ("sgd-momentum", "fp32"): (4, 4, 0, 4),
    ("sgd", "fp32"): (4, 4, 0, 0),
}


@pytest.mark.parametrize(("key", "parts"), BYTES_PER_PARAM.items())
def test_bytes_per_param_table(key, parts):
    bp = bytes_per_param(*key)
    assert (bp.weights, bp.gradients, bp.master, bp.optimizer) == parts
    assert bp.total == sum(parts)


def test_bytes_per_param_headline_numbers_and_aliases():
    assert bytes_per_param("adamw", "mixed").total == 12
    assert bytes_per_param("adamw", "mixed-master").total == 16
    assert bytes_per_param("adamw", "fp32").total == 16
    assert bytes_per_param("momentum", "mixed") == bytes_per_param("sgd-momentum", "mixed")
    assert bytes_per_param("AdamW", "bf16") == bytes_per_param("adamw", "mixed")
    with pytest.raises(NapkinError, match="unknown optimizer"):
        bytes_per_param("lion")
    with pytest.raises(NapkinError, match="unknown precision"):
        bytes_per_param("adamw", "int4")


@FAST
@given(
    gpus=st.integers(1, 4096),
    chip=st.sampled_from(sorted(DEFAULT_HARDWARE)),
    key=st.sampled_from(sorted(BYTES_PER_PARAM)),
)
def test_max_params_is_memory_over_bytes_per_param(gpus, chip, key):
    r = max_params(gpus, chip, *key)
    assert r.params * r.bytes_per_param == pytest.approx(gpus * DEFAULT_HARDWARE[chip].memory.value)
    assert max_params(gpus * 2, chip, *key).params == pytest.approx(2 * r.params)


# --- the hardware table ------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(DEFAULT_HARDWARE))
def test_every_figure_has_a_source(key):
    chip = DEFAULT_HARDWARE[key]
    figures = chip.figures()
    assert {"memory", "bandwidth"} <= set(figures)
    assert any(name.startswith("peak_") for name in figures)
    for name, fig in figures.items():
        assert isinstance(fig.source, str) and len(fig.source) > 20, (key, name)
        assert "http" in fig.source, (key, name, fig.source)
        assert fig.value > 0, (key, name)


@pytest.mark.parametrize("key", sorted(DEFAULT_HARDWARE))
def test_sparsity_figures_are_halved_never_peaks(key):
    for dt, fig in DEFAULT_HARDWARE[key].peaks.items():
        assert dt in DTYPES
        if fig.sparse is not None:
            # Datasheets round the two figures separately (MI300X: 1307.4 vs 2614.9).
            assert fig.value == pytest.approx(fig.sparse / 2, rel=1e-3), (key, dt)
            assert fig.value < fig.sparse


def test_table_covers_the_issue_and_looks_sane():
    wanted = [
        "h100",
        "h100-pcie",
        "h200",
        "b200",
        "a100-40gb",
        "a100-80gb",
        "l4",
        "a10g",
        "rtx4090",
        "mi300x",
        "tpu-v5e",
        "tpu-v5p",
        "tpu-v6e",
    ]
    for name in wanted:
        chip = lookup(name)
        assert "bf16" in chip.peaks, name
        # Critical intensities of real accelerators sit between 50 and 700 FLOPs/byte (v6e: 560).
        assert 50 < chip.critical_intensity("bf16") < 700, name
    for name in ["h100", "h100-pcie", "h200", "b200", "a100", "l4", "rtx4090", "mi300x"]:
        chip = lookup(name)
        assert {"bf16", "fp16", "tf32", "fp32"} <= set(chip.peaks), name
        assert chip.peak("tf32") < chip.peak("bf16"), name
    assert lookup("a100").key == "a100-80gb"
    assert lookup("Trillium").key == "tpu-v6e"
    assert lookup("H100 SXM").key == lookup("h100_sxm").key == "h100-sxm"


def test_names_and_aliases_are_unambiguous():
    seen: dict[str, str] = {}
    for chip in DEFAULT_HARDWARE.values():
        for n in (chip.key, *chip.aliases):
            norm = n.lower().replace("-", "").replace("_", "")
            assert seen.setdefault(norm, chip.key) == chip.key, n
            assert lookup(n).key == chip.key


def test_unknown_hardware_suggests_close_names():
    with pytest.raises(HardwareError, match=r"did you mean .*h100"):
        lookup("h1OO")


def test_parse_quantity():
    assert parse_quantity("80 GB") == 80e9
    assert parse_quantity("3.35 TB/s") == 3.35e12
    assert parse_quantity("989.5 TFLOP/s") == 989.5e12
    assert parse_quantity("70B") == 70e9
    assert parse_quantity("15T") == 15e12
    assert parse_quantity("95 GiB") == 95 * 2**30
    assert parse_quantity(1024) == 1024.0
    for bad in ("x", "1e400", "", True, None):
        with pytest.raises(HardwareError):
            parse_quantity(bad)


def test_merge_hardware_adds_and_overrides():
    table = merge_hardware(
        {
            "my-gpu": {
                "name": "My GPU",
                "bf16_sparse": "800 TFLOP/s",
                "fp32": 50e12,
                "memory": "48 GB",
                "bandwidth": "1.6 TB/s",
                "source": "our microbenchmark",
                "aliases": ["mine"],
            },
            "h100": {"bandwidth": 3.0e12, "bandwidth_source": "measured on our cluster"},
        }
    )
    mine = lookup("mine", table)
    assert mine.peak("bf16") == 400e12 and mine.peak_figure("bf16").sparse == 800e12
    assert mine.memory.value == 48e9 and mine.memory.source == "our microbenchmark"
    h100 = lookup("h100", table)
    assert h100.bandwidth.value == 3.0e12
    assert h100.bandwidth.source == "measured on our cluster"
    # Untouched figures keep the datasheet and its source.
    assert h100.peak("bf16") == 989.5e12
    assert "datasheet" in h100.memory.source
    # The default table is not modified.
    assert lookup("h100").bandwidth.value == 3.35e12
    # Without a source, the config location is the source.
    t2 = merge_hardware({"x1": {"bf16": 1e14, "memory": 1e10, "bandwidth": 1e12}})
    assert t2["x1"].memory.source == "user config [tool.shapelint.hardware.x1]"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"x": {"bf16": 1e14, "bandwidth": 1e12}}, "needs memory"),
        ({"x": {"memory": 1e9, "bandwidth": 1e12}}, "a peak"),
        ({"x": {"bf16": 1e14, "memory": 1e9, "bandwidth": 1e12, "colour": "red"}}, "unknown key"),
        ({"h100": {"bandwidth": "fast"}}, "cannot read"),
        ({"h100": {"memory": -1}}, "positive"),
        ({"h100": 3}, "must be a table"),
        ({"h100": {"aliases": 3}}, "aliases"),
        ({"x": {"bf16": 1e14, "memory": 1e9, "bandwidth": 1e12, "aliases": ["A100"]}}, "already"),
    ],
)
def test_merge_hardware_rejects_bad_config(config, message):
    with pytest.raises(HardwareError, match=message):
        merge_hardware(config)


def test_load_hardware_table_from_pyproject(tmp_path):
    p = tmp_path / "pyproject.toml"
    p.write_text(
        '[tool.shapelint.hardware.lab-gpu]\nbf16 = "100 TFLOP/s"\nmemory = "32 GB"\nbandwidth = 1e12\n'
    )
    table = load_hardware_table(p)
    assert lookup("lab-gpu", table).critical_intensity("bf16") == pytest.approx(100)
    assert "h100-sxm" in table
    p.write_text("[tool.shapelint.hardware\n")
    with pytest.raises(HardwareError, match="invalid TOML"):
        load_hardware_table(p)


# --- rooflines -----------------------------------------------------------------------------------


@FAST
@given(
    flops=st.one_of(st.just(0.0), st.floats(1, 1e18)),
    nbytes=st.one_of(st.just(0.0), st.floats(1, 1e15)),
    chip=st.sampled_from(sorted(DEFAULT_HARDWARE)),
    k=st.floats(1e-3, 1e3),
)
def test_roofline_is_the_max_of_compute_and_memory_time(flops, nbytes, chip, k):
    r = roofline(flops, nbytes, chip)
    c = DEFAULT_HARDWARE[chip]
    assert r.seconds == max(flops / c.peak("bf16"), nbytes / c.bandwidth.value)
    assert r.critical_intensity == pytest.approx(c.peak("bf16") / c.bandwidth.value)
    if flops > 0 and nbytes > 0:
        assert r.intensity == pytest.approx(flops / nbytes)
        assert r.bound == (
            "compute" if r.intensity >= r.critical_intensity else "memory"
        ) or math.isclose(r.intensity, r.critical_intensity)
        scaled = roofline(flops * k, nbytes * k, chip)
        assert scaled.intensity == pytest.approx(r.intensity)
        assert scaled.seconds == pytest.approx(r.seconds * k)
        assert 0 < r.max_utilization <= 1
        assert r.attainable_flop_per_sec == pytest.approx(flops / r.seconds)


def test_roofline_for_is_what_cost_needs():
    d = roofline_for(2 * 4096**3, 3 * 2 * 4096**2, "h100", "bf16")
    assert {"intensity", "critical_intensity", "bound", "seconds"} <= set(d)
    assert d["bound"] == "compute"
    assert d["seconds"] == pytest.approx(2 * 4096**3 / 989.5e12)
    assert roofline_for(1e6, 4e6, "h100", "bf16")["bound"] == "memory"
    assert roofline(0, 0, "h100").seconds == 0
    assert roofline(1e6, 0, "h100").bound == "compute"
    with pytest.raises(NapkinError):
        roofline(-1, 1, "h100")


def test_the_lectures_ladder():
    rungs = {r.name: r for r in ladder("h100", "bf16")}
    n, m = 1024 * 1024, 1024
    # The lecture's approximations: ReLU 1/4, GELU 5, dot 1/2, matvec 1, matmul n/3.
    assert rungs["relu"].roofline.intensity == 0.25
    assert rungs["gelu"].roofline.intensity == 5
    assert rungs["dot"].roofline.intensity == pytest.approx(0.5, rel=1e-5)
    assert rungs["matvec"].roofline.intensity == pytest.approx(1, rel=5e-3)
    assert rungs["matmul"].roofline.intensity == pytest.approx(m / 3)
    assert [r.roofline.bound for r in rungs.values()] == ["memory"] * 4 + ["compute"]
    # The lecture's exact counts (n - 1 additions per dot product) differ by 1 in 2n.
    lecture = {"dot": (2 * n - 1) / (4 * n + 2), "matmul": m * m * (2 * m - 1) / (6 * m * m)}
    for name, value in lecture.items():
        assert rungs[name].roofline.intensity == pytest.approx(value, rel=1e-3)
    # Memory-bound rungs all take bytes / bandwidth.
    assert rungs["relu"].roofline.seconds == pytest.approx(4 * n / 3.35e12)


def test_ladder_flops_agree_with_torch_flop_counter():
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    m = 1024
    rungs = {r.name: r for r in ladder("h100", "bf16", n=m * m)}
    meta = {"device": "meta", "dtype": torch.bfloat16}
    for name, fn in {
        "matmul": lambda: torch.ones(m, m, **meta) @ torch.ones(m, m, **meta),
        "matvec": lambda: torch.ones(m, **meta) @ torch.ones(m, m, **meta),
    }.items():
        with FlopCounterMode(display=False) as fc:
            fn()
        assert rungs[name].roofline.flops == fc.get_total_flops(), name


# --- transformer memory: against torch ---------------------------------------------------------


def _torch_gpt(layers, d, heads, d_ff, vocab, dropout, flash, checkpoint=False):
    torch = pytest.importorskip("torch")
    einops = pytest.importorskip("einops")
    nn, F = torch.nn, torch.nn.functional
    rearrange = einops.rearrange
    p = 0.1

    def drop(x):
        # Dropout as CUDA stores it: a 1-byte mask (CPU's native dropout keeps 2-byte bf16 masks).
        if not dropout:
            return x
        return x * (torch.rand_like(x) >= p) / (1 - p)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1 = nn.LayerNorm(d, bias=False)
            self.n2 = nn.LayerNorm(d, bias=False)
            self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
            self.up = nn.Linear(d, d_ff, bias=False)
            self.down = nn.Linear(d_ff, d, bias=False)

        def forward(self, x):
            h = self.n1(x)
            q, k, v = (
                rearrange(f(h), "b s (a e) -> b a s e", a=heads) for f in (self.q, self.k, self.v)
            )
            if flash:
                y = F.scaled_dot_product_attention(q, k, v)
            else:
                att = torch.einsum("base,bate->bast", q, k).softmax(-1)
                y = torch.einsum("bast,bate->base", drop(att), v)
            x = x + drop(self.o(rearrange(y, "b a s e -> b s (a e)")))
            return x + drop(self.down(F.gelu(self.up(self.n2(x)))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.norm = nn.LayerNorm(d, bias=False)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, ids):
            x = drop(self.emb(ids))
            for block in self.blocks:
                if checkpoint:
                    x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=True)
                else:
                    x = block(x)
            logits = self.head(self.norm(x)).float()
            return F.cross_entropy(logits.flatten(0, 1), ids.flatten())

    return GPT().to(torch.bfloat16)


def _saved_activation_bytes(model, ids):
    """Bytes autograd keeps for backward, beyond the parameters: each storage once.
    Left out: token ids (integers), norm statistics (one number per row) and
    scalars (the loss's total weight)."""
    import torch

    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[int, int] = {}

    def pack(t):
        st = t.untyped_storage()
        activation = t.is_floating_point() or t.dtype == torch.bool
        if activation and st.data_ptr() not in params and t.dim() > 0 and t.shape[-1] != 1:
            seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(ids)
    return sum(seen.values())


SHAPES = [
    # layers, d_model, heads, seq, batch, vocab, d_ff
    (2, 64, 4, 16, 2, 100, 256),
    (3, 32, 2, 24, 1, 50, 96),
    (1, 48, 6, 8, 3, 70, 160),
]


@pytest.mark.parametrize("shape", SHAPES)
def test_parameter_count_matches_torch(shape):
    layers, d, heads, _, _, vocab, d_ff = shape
    model = _torch_gpt(layers, d, heads, d_ff, vocab, dropout=False, flash=False)
    assert transformer_params(layers, d, vocab, d_ff) == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("shape", SHAPES)
def test_flops_match_torch_flop_counter(shape):
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    layers, d, heads, seq, batch, vocab, d_ff = shape
    model = _torch_gpt(layers, d, heads, d_ff, vocab, dropout=False, flash=False)
    ids = torch.randint(0, vocab, (batch, seq))
    with FlopCounterMode(display=False) as fc:
        loss = model(ids)
    forward = fc.get_total_flops()
    with FlopCounterMode(display=False) as fc:
        loss.backward()
    assert transformer_forward_flops(layers, d, seq, batch, vocab, d_ff) == forward
    mem = transformer_memory(layers, d, seq, batch, heads, vocab, ff_mult=d_ff / d)
    assert mem.step_flops == forward + fc.get_total_flops()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(
    ("dropout", "attention"), [(True, "naive"), (False, "naive"), (False, "flash")]
)
def test_activation_bytes_match_what_autograd_saves(shape, dropout, attention):
    torch = pytest.importorskip("torch")
    layers, d, heads, seq, batch, vocab, d_ff = shape
    ids = torch.randint(0, vocab, (batch, seq))
    model = _torch_gpt(layers, d, heads, d_ff, vocab, dropout, attention == "flash")
    measured = _saved_activation_bytes(model, ids)
    per_layer = layer_activation_bytes(seq, batch, d, heads, d_ff, 2, dropout, attention)
    head = head_activation_bytes(seq, batch, d, vocab, 2, dropout)
    assert measured == layers * per_layer + head


def test_korthikanti_34_sbh_plus_5_as2b():
    s, b, h, a = 2048, 4, 4096, 32
    assert layer_activation_bytes(s, b, h, a) == s * b * h * (34 + 5 * a * s / h)


@pytest.mark.parametrize("shape", SHAPES[:2])
def test_full_checkpointing_keeps_only_layer_inputs(shape):
    torch = pytest.importorskip("torch")
    layers, d, heads, seq, batch, vocab, d_ff = shape
    ids = torch.randint(0, vocab, (batch, seq))
    model = _torch_gpt(layers, d, heads, d_ff, vocab, dropout=True, flash=False, checkpoint=True)
    mem = transformer_memory(
        layers, d, seq, batch, heads, vocab, ff_mult=d_ff / d, checkpointing="full"
    )
    # During forward only the checkpoints (one layer input each) and the head are kept;
    # the "+ A" of the strategy is the one layer re-materialised during backward.
    assert (
        _saved_activation_bytes(model, ids)
        == layers * mem.layer_input_bytes + mem.head_activation_bytes
    )
    assert (
        mem.activations
        == layers * mem.layer_input_bytes + mem.layer_activation_bytes + mem.head_activation_bytes
    )


# --- transformer memory: the formulas ----------------------------------------------------------


@FAST
@given(
    layers=st.integers(1, 96),
    d_heads=st.sampled_from([(256, 4), (1024, 16), (4096, 32), (8192, 64)]),
    seq=st.sampled_from([128, 1024, 4096]),
    micro=st.integers(1, 8),
    acc=st.integers(1, 8),
    attention=st.sampled_from(["naive", "flash"]),
)
def test_checkpointing_and_accumulation_formulas(layers, d_heads, seq, micro, acc, attention):
    d, heads = d_heads
    batch = micro * acc
    runs = {
        ck: transformer_memory(
            layers,
            d,
            seq,
            batch,
            heads,
            32000,
            micro_batch=micro,
            checkpointing=ck,
            attention=attention,
        )
        for ck in ("none", "sqrt", "full")
    }
    none, sqrt_, full = runs["none"], runs["sqrt"], runs["full"]
    R, A, H = none.layer_input_bytes, none.layer_activation_bytes, none.head_activation_bytes
    k = math.ceil(math.sqrt(layers))
    assert none.activations == layers * A + H
    assert sqrt_.activations == math.ceil(layers / k) * R + k * A + H
    assert full.activations == layers * R + A + H
    assert R == 2 * seq * micro * d  # the lecture's 2·B·D per layer, with B·s tokens
    for r in (sqrt_, full):
        # With one or two layers, a checkpoint is pure overhead: the layer is re-run whole anyway.
        if layers > 2:
            assert r.activations < none.activations
        assert r.strategy.saved_bytes == none.activations - r.activations
        # One more forward pass of the layers: a third of a step, less the LM head's share.
        assert 0 < r.strategy.recompute_fraction <= 1 / 3
    assert none.strategy.recompute_flops == 0
    # Gradient accumulation: activations follow the micro-batch, FLOPs and states do not.
    whole = transformer_memory(layers, d, seq, batch, heads, 32000, attention=attention)
    assert none.full_batch_activation_bytes == whole.activations
    assert none.activations * acc == pytest.approx(whole.activations)
    assert none.step_flops == whole.step_flops
    assert none.total - none.activations == whole.total - whole.activations


def test_memory_parts_and_precisions():
    r = transformer_memory(32, 4096, 2048, 8, 32, 50257)
    n = r.params
    assert (r.weights, r.gradients, r.optimizer, r.master) == (2 * n, 2 * n, 8 * n, 0)
    assert r.total == 12 * n + r.activations
    m = transformer_memory(32, 4096, 2048, 8, 32, 50257, precision="mixed-master")
    assert m.master == 4 * n and m.total - m.activations == 16 * n
    f = transformer_memory(32, 4096, 2048, 8, 32, 50257, precision="fp32")
    assert f.layer_activation_bytes == layer_activation_bytes(2048, 8, 4096, 32, dtype_bytes=4)
    assert f.layer_input_bytes == 2 * r.layer_input_bytes  # 4-byte activations
    assert transformer_memory(
        2, 64, 8, 2, 4, 100, tied_embeddings=True
    ).params == transformer_params(2, 64, 100, tied_embeddings=True)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"micro_batch": 3},
        {"micro_batch": 16},
        {"heads": 5},
        {"checkpointing": "some"},
        {"attention": "ring"},
        {"layers": 0},
        {"optimizer": "lion"},
    ],
)
def test_transformer_memory_rejects_bad_input(kwargs):
    args = {"layers": 2, "d_model": 64, "seq": 8, "batch": 8, "heads": 4, "vocab": 100} | kwargs
    with pytest.raises(NapkinError):
        transformer_memory(**args)


# --- the CLI ------------------------------------------------------------------------------------


def run(*args: str):
    return CliRunner().invoke(napkin, list(args), catch_exceptions=False)


SEED_TRAIN = [
    "train-time",
    "--params",
    "70e9",
    "--tokens",
    "15e12",
    "--gpus",
    "1024",
    "--hardware",
    "h100",
    "--mfu",
    "0.5",
]


def test_cli_train_time_text_and_json():
    r = run(*SEED_TRAIN)
    assert r.exit_code == 0, r.output
    assert "143.9 days" in r.output
    for link in ("6 × params", "1.979e15 / 2", "flops_per_day", "total_flops / flops_per_day"):
        assert link in r.output
    j = json.loads(run(*SEED_TRAIN, "--format", "json").output)
    assert round(j["days"], 1) == 143.9
    assert j["total_flops"] == pytest.approx(6.3e24)
    assert j["gpu_hours"] == pytest.approx(j["days"] * 24 * 1024)
    assert j["peak_flop_per_sec"] == 989.5e12 and j["sparse_flop_per_sec"] == 1979e12
    # Scaled inputs read the same.
    assert json.loads(
        run(*SEED_TRAIN[:2], "70B", "--tokens", "15T", "--gpus", "1024", "--format", "json").output
    )["days"] == pytest.approx(j["days"])


def test_cli_max_params_text_and_json():
    r = run("max-params", "--gpus", "8", "--hardware", "h100", "--optimizer", "adamw")
    assert r.exit_code == 0, r.output
    assert "53.3B" in r.output and "2 + 2 + 8" in r.output
    j = json.loads(run("max-params", "--gpus", "8", "--format", "json").output)
    assert round(j["params"] / 1e9, 1) == 53.3
    assert j["bytes_per_param"] == 12
    assert j["breakdown"] == {
        "weights": 2,
        "gradients": 2,
        "master": 0,
        "optimizer": 8,
        "total": 12,
    }
    j16 = json.loads(
        run("max-params", "--gpus", "8", "--precision", "mixed-master", "--format", "json").output
    )
    assert j16["bytes_per_param"] == 16


def test_cli_memory():
    args = [
        "memory",
        "--layers",
        "32",
        "--d-model",
        "4096",
        "--seq",
        "2048",
        "--batch",
        "8",
        "--heads",
        "32",
        "--vocab",
        "50257",
        "--micro-batch",
        "2",
        "--checkpointing",
        "full",
        "--hardware",
        "h100",
    ]
    r = run(*args)
    assert r.exit_code == 0, r.output
    for text in ("Korthikanti", "sqrt", "full", "Gradient accumulation", "recompute", "2·B·D"):
        assert text in r.output
    j = json.loads(run(*args, "--format", "json").output)
    assert j["config"]["accumulation_steps"] == 4
    assert set(j["bytes"]) == {
        "parameters",
        "gradients",
        "master",
        "optimizer",
        "activations",
        "total",
    }
    assert [s["name"] for s in j["strategies"]] == ["none", "sqrt", "full"]
    assert j["hardware"]["gpus_needed"] == math.ceil(j["bytes"]["total"] / 80e9)


def test_cli_roofline_ladder_and_points(tmp_path):
    r = run("roofline", "--hardware", "h100")
    assert r.exit_code == 0, r.output
    assert "295.4" in r.output
    for name in ("relu", "gelu", "dot", "matvec", "matmul"):
        assert name in r.output
    assert "compute-bound: matmul" in r.output
    j = json.loads(run("roofline", "--format", "json").output)
    assert [x["bound"] for x in j["ladder"]] == ["memory"] * 4 + ["compute"]
    pts = tmp_path / "pts.json"
    pts.write_text(json.dumps([{"label": "proj", "flops": 2e12, "bytes": "1 GB"}]))
    j = json.loads(
        run(
            "roofline", "--points", str(pts), "--flops", "1e6", "--bytes", "4e6", "--format", "json"
        ).output
    )
    assert [(p["label"], p["bound"]) for p in j["points"]] == [
        ("work", "memory"),
        ("proj", "compute"),
    ]


def test_cli_roofline_plot(tmp_path):
    pytest.importorskip("matplotlib")
    pts = tmp_path / "pts.json"
    pts.write_text(
        json.dumps(
            [{"label": f"op{i}", "flops": 10 ** (6 + i), "bytes": 1e8} for i in range(20)]
            + [{"label": "copy", "flops": 0, "bytes": 1e6}]
        )
    )
    out = tmp_path / "roof.png"
    r = run("roofline", "--points", str(pts), "--plot", str(out))
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 20_000


def test_cli_roofline_plot_without_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    r = CliRunner().invoke(napkin, ["roofline", "--plot", str(tmp_path / "x.png")])
    assert r.exit_code == 2
    assert "matplotlib" in r.output and "pip install" in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_cli_hardware_lists_every_chip_with_sources():
    r = run("hardware")
    assert r.exit_code == 0
    for chip in DEFAULT_HARDWARE.values():
        assert chip.key in r.output and chip.name in r.output
        for fig in chip.figures().values():
            assert fig.source in r.output
    j = json.loads(run("hardware", "--format", "json").output)
    assert {c["key"] for c in j["chips"]} == set(DEFAULT_HARDWARE)
    one = run("hardware", "a10g")
    assert "AWS EC2 G5" in one.output and "h100" not in one.output


def test_cli_config_adds_chips(tmp_path):
    p = tmp_path / "pyproject.toml"
    p.write_text(
        '[tool.shapelint.hardware.lab]\nbf16 = 1e14\nmemory = "10 GB"\nbandwidth = "1 TB/s"\n'
    )
    j = json.loads(
        run(
            "--config", str(p), "max-params", "--gpus", "1", "--hardware", "lab", "--format", "json"
        ).output
    )
    assert j["params"] == pytest.approx(10e9 / 12)
    assert j["source"] == "user config [tool.shapelint.hardware.lab]"


@pytest.mark.parametrize(
    "args",
    [
        [
            "train-time",
            "--params",
            "70e9",
            "--tokens",
            "15e12",
            "--gpus",
            "1024",
            "--hardware",
            "h1000",
        ],
        ["train-time", "--params", "lots", "--tokens", "15e12", "--gpus", "8"],
        ["train-time", "--params", "7e9", "--tokens", "15e12", "--gpus", "8", "--mfu", "2"],
        ["train-time", "--params", "7e9", "--tokens", "15e12", "--gpus", "0.5"],
        ["max-params", "--gpus", "8", "--optimizer", "lion"],
        ["max-params", "--gpus", "8", "--hardware", "tpu-v9"],
        ["roofline", "--hardware", "a100", "--dtype", "fp8"],
        ["roofline", "--flops", "1e9"],
        [
            "memory",
            "--layers",
            "2",
            "--d-model",
            "64",
            "--seq",
            "8",
            "--batch",
            "4",
            "--heads",
            "4",
            "--vocab",
            "10",
            "--micro-batch",
            "3",
        ],
        ["hardware", "nope"],
    ],
)
def test_cli_errors_exit_2_without_traceback(args):
    r = CliRunner().invoke(napkin, args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    assert "Error" in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_module_runs_and_imports_nothing_heavy():
    out = subprocess.run(
        [sys.executable, "-m", "shapelint.cli.napkin", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for cmd in ("train-time", "max-params", "memory", "roofline", "hardware"):
        assert cmd in out
    probe = (
        "import sys, shapelint.cli.napkin, shapelint.napkin.formulas, shapelint.napkin.hardware, shapelint.napkin.plot;"
        "print(sorted(m for m in ('torch', 'numpy', 'einops', 'sympy', 'jaxtyping', 'matplotlib') if m in sys.modules))"
    )
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "[]"
