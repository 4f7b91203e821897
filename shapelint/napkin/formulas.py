"""Napkin math: training time, bytes per parameter, transformer memory, rooflines.

Pure functions over numbers and the hardware table; nothing here imports torch.
Each result keeps the chain of numbers that produced it (``steps``), so the CLI
can show its work the way the lecture does. Formulas and their sources are in
docs/napkin.md; the short version:

- training FLOPs = 6 · params · tokens (forward 2ND + backward 4ND);
- days = FLOPs / (peak · MFU · GPUs · 86,400), peak = dense (sparse / 2);
- bytes per parameter = weights + gradients (+ fp32 master) + optimizer state;
- activations per transformer layer: Korthikanti et al. 2022, eq. (1),
  ``s·b·h·(34 + 5·a·s/h)`` bytes in 16-bit with dropout, generalised here to any
  element size, MLP width, dropout on/off and flash attention;
- roofline: time >= max(FLOPs / peak, bytes / bandwidth).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from shapelint.napkin.hardware import (
    DTYPE_BYTES,
    Chip,
    HardwareError,
    canonical_dtype,
    lookup,
)

SECONDS_PER_DAY = 24 * 60 * 60


class NapkinError(ValueError):
    """Bad input to a napkin computation (the message says which and why)."""


@dataclass(frozen=True)
class Step:
    """One link of a chain: ``name = formula = numbers = value unit``."""

    name: str
    formula: str
    numbers: str
    value: float
    unit: str = ""

    def to_json(self) -> dict:
        return asdict(self)


# --- formatting (shared with the CLI) -------------------------------------------------


def fmt(x: float, digits: int = 4) -> str:
    """A number the way the lecture writes it: 6.3e24, 989.5e12 -> 9.895e14, 143.9."""
    if x == 0 or not math.isfinite(x):
        return str(x)
    if 1e-3 <= abs(x) < 1e6 and "e" not in f"{x:.{digits}g}":
        return f"{x:.{digits}g}"
    mant, exp = f"{x:.{digits - 1}e}".split("e")
    mant = mant.rstrip("0").rstrip(".")
    return f"{mant}e{int(exp)}"


def fmt_count(x: float) -> str:
    """Parameter counts: 53.3B, 6.9M."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{suffix}"
    return f"{x:.3g}"


def fmt_bytes(x: float) -> str:
    """Decimal units, as vendors quote memory: 80 GB = 80e9 bytes."""
    for scale, suffix in ((1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB")):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {suffix}"
    return f"{x:.3g} B"


def fmt_seconds(s: float) -> str:
    if s >= SECONDS_PER_DAY:
        return f"{s / SECONDS_PER_DAY:.4g} days"
    if s >= 3600:
        return f"{s / 3600:.3g} h"
    if s >= 1:
        return f"{s:.3g} s"
    for scale, suffix in ((1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if s >= scale:
            return f"{s / scale:.3g} {suffix}"
    return f"{s:.3g} s"


# --- checks ---------------------------------------------------------------------------


def _positive(x: float, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
        raise NapkinError(f"{what} must be a positive number, got {x!r}")
    return float(x)


def _count(x: float, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or x < 1 or x != int(x):
        raise NapkinError(f"{what} must be a positive whole number, got {x!r}")
    return int(x)


def _chip(hardware: str | Chip, table: Mapping[str, Chip] | None) -> Chip:
    if isinstance(hardware, Chip):
        return hardware
    try:
        return lookup(hardware, table)
    except HardwareError as e:
        raise NapkinError(str(e)) from None


def _peak(chip: Chip, dtype: str) -> tuple[str, float, float | None, str]:
    """(canonical dtype, dense peak, sparse figure or None, source)."""
    try:
        dt = canonical_dtype(dtype)
        fig = chip.peak_figure(dt)
    except HardwareError as e:
        raise NapkinError(str(e)) from None
    return dt, fig.value, fig.sparse, fig.source


def _peak_numbers(dense: float, sparse: float | None) -> tuple[str, str]:
    if sparse is not None and math.isclose(dense, sparse / 2):
        return "sparse / 2", f"{fmt(sparse)} / 2"
    return "dense datasheet figure", fmt(dense)


# --- 1. training time ------------------------------------------------------------------


@dataclass(frozen=True)
class TrainTime:
    params: float
    tokens: float
    gpus: int
    mfu: float
    dtype: str
    hardware: str
    hardware_name: str
    flops_per_token: float
    total_flops: float
    peak_flop_per_sec: float
    sparse_flop_per_sec: float | None
    flops_per_day: float
    seconds: float
    days: float
    gpu_hours: float
    source: str
    steps: tuple[Step, ...] = field(default=())

    def to_json(self) -> dict:
        out = asdict(self)
        out["steps"] = [s.to_json() for s in self.steps]
        return out


def train_time(
    params: float,
    tokens: float,
    gpus: int,
    hardware: str | Chip = "h100",
    mfu: float = 0.5,
    dtype: str = "bf16",
    flops_per_token: float | None = None,
    table: Mapping[str, Chip] | None = None,
) -> TrainTime:
    """Days to train on ``gpus`` chips: (flops_per_token · tokens) / (peak · mfu · gpus).

    ``flops_per_token`` defaults to 6 · params (forward 2N, backward 4N per token).
    """
    params = _positive(params, "params")
    tokens = _positive(tokens, "tokens")
    gpus = _count(gpus, "gpus")
    mfu = _positive(mfu, "mfu")
    if mfu > 1:
        raise NapkinError(f"mfu is a fraction of peak, between 0 and 1; got {mfu!r}")
    chip = _chip(hardware, table)
    dt, peak, sparse, source = _peak(chip, dtype)
    steps = []
    if flops_per_token is None:
        fpt = 6 * params
        steps.append(Step("flops_per_token", "6 × params", f"6 × {fmt(params)}", fpt, "FLOPs"))
    else:
        fpt = _positive(flops_per_token, "flops_per_token")
        steps.append(Step("flops_per_token", "given", fmt(fpt), fpt, "FLOPs"))
    total = fpt * tokens
    steps.append(
        Step(
            "total_flops", "flops_per_token × tokens", f"{fmt(fpt)} × {fmt(tokens)}", total, "FLOPs"
        )
    )
    how, nums = _peak_numbers(peak, sparse)
    steps.append(
        Step("flop_per_sec", f"{chip.name} {dt} peak, {how}", nums, peak, "FLOP/s per GPU")
    )
    per_day = peak * mfu * gpus * SECONDS_PER_DAY
    steps.append(
        Step(
            "flops_per_day",
            "flop_per_sec × mfu × gpus × 60·60·24",
            f"{fmt(peak)} × {mfu:g} × {gpus} × {SECONDS_PER_DAY}",
            per_day,
            "FLOPs/day",
        )
    )
    days = total / per_day
    steps.append(
        Step("days", "total_flops / flops_per_day", f"{fmt(total)} / {fmt(per_day)}", days, "days")
    )
    gpu_hours = days * 24 * gpus
    steps.append(
        Step("gpu_hours", "days × 24 × gpus", f"{days:.4g} × 24 × {gpus}", gpu_hours, "GPU-hours")
    )
    return TrainTime(
        params=params,
        tokens=tokens,
        gpus=gpus,
        mfu=mfu,
        dtype=dt,
        hardware=chip.key,
        hardware_name=chip.name,
        flops_per_token=fpt,
        total_flops=total,
        peak_flop_per_sec=peak,
        sparse_flop_per_sec=sparse,
        flops_per_day=per_day,
        seconds=days * SECONDS_PER_DAY,
        days=days,
        gpu_hours=gpu_hours,
        source=source,
        steps=tuple(steps),
    )


# --- 2. bytes per parameter and the largest model that fits ----------------------------

# Optimizer state per parameter, kept in fp32 in every precision recipe here.
OPTIMIZER_BYTES = {
    "adamw": (8, "fp32 first and second moments (4 + 4)"),
    "adam": (8, "fp32 first and second moments (4 + 4)"),
    "adagrad": (4, "one fp32 accumulator of squared gradients"),
    "sgd-momentum": (4, "one fp32 momentum buffer"),
    "sgd": (0, "no state"),
}
_OPTIMIZER_ALIASES = {
    "momentum": "sgd-momentum",
    "sgdm": "sgd-momentum",
    "sgd_momentum": "sgd-momentum",
}

# (weights, gradients, fp32 master copy, description) in bytes per parameter.
PRECISION_BYTES = {
    "mixed": (2, 2, 0, "bf16 weights and gradients (the lecture's recipe)"),
    "mixed-master": (2, 2, 4, "bf16 weights and gradients plus an fp32 master copy"),
    "fp32": (4, 4, 0, "fp32 weights and gradients"),
}
_PRECISION_ALIASES = {
    "bf16": "mixed",
    "mixed-fp32-master": "mixed-master",
    "mixed-with-master": "mixed-master",
    "master": "mixed-master",
    "float32": "fp32",
}


def canonical_optimizer(name: str) -> str:
    key = name.strip().lower().replace("_", "-")
    key = _OPTIMIZER_ALIASES.get(key, key)
    if key not in OPTIMIZER_BYTES:
        raise NapkinError(f"unknown optimizer {name!r}; use one of: {', '.join(OPTIMIZER_BYTES)}")
    return key


def canonical_precision(name: str) -> str:
    key = name.strip().lower().replace("_", "-")
    key = _PRECISION_ALIASES.get(key, key)
    if key not in PRECISION_BYTES:
        raise NapkinError(f"unknown precision {name!r}; use one of: {', '.join(PRECISION_BYTES)}")
    return key


@dataclass(frozen=True)
class ParamBytes:
    """Bytes each parameter costs during training, by what holds them."""

    weights: int
    gradients: int
    master: int
    optimizer: int
    optimizer_name: str
    precision: str

    @property
    def total(self) -> int:
        return self.weights + self.gradients + self.master + self.optimizer

    def formula(self) -> str:
        parts = ["weights", "gradients"] + (["fp32 master"] if self.master else [])
        return " + ".join([*parts, f"{self.optimizer_name} state"])

    def numbers(self) -> str:
        parts = [self.weights, self.gradients] + ([self.master] if self.master else [])
        return " + ".join(str(p) for p in [*parts, self.optimizer])

    def to_json(self) -> dict:
        return {
            "weights": self.weights,
            "gradients": self.gradients,
            "master": self.master,
            "optimizer": self.optimizer,
            "total": self.total,
        }


def bytes_per_param(optimizer: str = "adamw", precision: str = "mixed") -> ParamBytes:
    opt = canonical_optimizer(optimizer)
    prec = canonical_precision(precision)
    w, g, m, _ = PRECISION_BYTES[prec]
    return ParamBytes(w, g, m, OPTIMIZER_BYTES[opt][0], opt, prec)


@dataclass(frozen=True)
class MaxParams:
    params: float
    bytes_per_param: int
    breakdown: ParamBytes
    gpus: int
    hardware: str
    hardware_name: str
    memory_per_gpu: float
    total_memory: float
    source: str
    steps: tuple[Step, ...]
    caveat: str = (
        "upper bound: activations (which grow with batch size and sequence length) "
        "and framework overhead are not counted"
    )

    def to_json(self) -> dict:
        return {
            "params": self.params,
            "bytes_per_param": self.bytes_per_param,
            "breakdown": self.breakdown.to_json(),
            "optimizer": self.breakdown.optimizer_name,
            "precision": self.breakdown.precision,
            "gpus": self.gpus,
            "hardware": self.hardware,
            "hardware_name": self.hardware_name,
            "memory_per_gpu": self.memory_per_gpu,
            "total_memory": self.total_memory,
            "source": self.source,
            "caveat": self.caveat,
            "steps": [s.to_json() for s in self.steps],
        }


def max_params(
    gpus: int,
    hardware: str | Chip = "h100",
    optimizer: str = "adamw",
    precision: str = "mixed",
    table: Mapping[str, Chip] | None = None,
) -> MaxParams:
    """The most parameters whose weights, gradients and optimizer state fit in
    ``gpus`` chips' memory: gpus · memory / bytes_per_param."""
    gpus = _count(gpus, "gpus")
    chip = _chip(hardware, table)
    bp = bytes_per_param(optimizer, precision)
    mem = chip.memory.value
    total = gpus * mem
    n = total / bp.total
    steps = (
        Step("bytes_per_param", bp.formula(), bp.numbers(), bp.total, "bytes"),
        Step("memory", f"gpus × {chip.name} memory", f"{gpus} × {fmt(mem)}", total, "bytes"),
        Step("params", "memory / bytes_per_param", f"{fmt(total)} / {bp.total}", n, "parameters"),
    )
    return MaxParams(
        params=n,
        bytes_per_param=bp.total,
        breakdown=bp,
        gpus=gpus,
        hardware=chip.key,
        hardware_name=chip.name,
        memory_per_gpu=mem,
        total_memory=total,
        source=chip.memory.source,
        steps=steps,
    )


# --- 3. transformer memory ------------------------------------------------------------

CHECKPOINTING = ("none", "sqrt", "full")
ATTENTION = ("naive", "flash")


@dataclass(frozen=True)
class Strategy:
    """Activation memory of one checkpointing strategy, and what it costs."""

    name: str
    description: str
    activation_bytes: float
    saved_bytes: float  # versus keeping everything
    recompute_flops: float  # extra FLOPs per optimizer step
    recompute_fraction: float  # of the step's FLOPs

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class TransformerMemory:
    layers: int
    d_model: int
    seq: int
    batch: int
    micro_batch: int
    heads: int
    vocab: int
    d_ff: int
    attention: str
    dropout: bool
    checkpointing: str
    params: int
    param_bytes: ParamBytes
    activation_dtype_bytes: int
    layer_input_bytes: float  # one layer's input (what a checkpoint keeps), per micro-batch
    layer_activation_bytes: float  # everything one layer keeps for backward, per micro-batch
    head_activation_bytes: float  # outside the layers: final norm, LM head input, fp32 logits
    forward_flops: float  # per optimizer step (whole batch)
    step_flops: float  # forward + backward per optimizer step
    strategies: tuple[Strategy, ...]
    full_batch_activation_bytes: float  # chosen strategy without gradient accumulation
    steps: tuple[Step, ...]

    @property
    def accumulation_steps(self) -> int:
        return self.batch // self.micro_batch

    @property
    def weights(self) -> float:
        return self.params * self.param_bytes.weights

    @property
    def gradients(self) -> float:
        return self.params * self.param_bytes.gradients

    @property
    def master(self) -> float:
        return self.params * self.param_bytes.master

    @property
    def optimizer(self) -> float:
        return self.params * self.param_bytes.optimizer

    @property
    def strategy(self) -> Strategy:
        return next(s for s in self.strategies if s.name == self.checkpointing)

    @property
    def activations(self) -> float:
        return self.strategy.activation_bytes

    @property
    def total(self) -> float:
        return self.params * self.param_bytes.total + self.activations

    def to_json(self) -> dict:
        return {
            "config": {
                "layers": self.layers,
                "d_model": self.d_model,
                "seq": self.seq,
                "batch": self.batch,
                "micro_batch": self.micro_batch,
                "accumulation_steps": self.accumulation_steps,
                "heads": self.heads,
                "vocab": self.vocab,
                "d_ff": self.d_ff,
                "attention": self.attention,
                "dropout": self.dropout,
                "checkpointing": self.checkpointing,
                "optimizer": self.param_bytes.optimizer_name,
                "precision": self.param_bytes.precision,
            },
            "params": self.params,
            "bytes_per_param": self.param_bytes.to_json(),
            "bytes": {
                "parameters": self.weights,
                "gradients": self.gradients,
                "master": self.master,
                "optimizer": self.optimizer,
                "activations": self.activations,
                "total": self.total,
            },
            "activations": {
                "per_layer": self.layer_activation_bytes,
                "layer_input": self.layer_input_bytes,
                "head": self.head_activation_bytes,
                "without_accumulation": self.full_batch_activation_bytes,
            },
            "flops": {"forward": self.forward_flops, "step": self.step_flops},
            "strategies": [s.to_json() for s in self.strategies],
            "steps": [s.to_json() for s in self.steps],
        }


def transformer_params(
    layers: int, d_model: int, vocab: int, d_ff: int | None = None, tied_embeddings: bool = False
) -> int:
    """Parameters of a pre-norm decoder: per layer Q, K, V, O (4·D²), a two-matrix
    MLP (2·D·d_ff) and two norm weights (2·D); a final norm (D); token embedding
    and LM head (V·D each, one if tied). No biases, no learned positions (RoPE)."""
    d_ff = 4 * d_model if d_ff is None else d_ff
    per_layer = 4 * d_model * d_model + 2 * d_model * d_ff + 2 * d_model
    return layers * per_layer + d_model + vocab * d_model * (1 if tied_embeddings else 2)


def layer_activation_bytes(
    seq: int,
    batch: int,
    d_model: int,
    heads: int,
    d_ff: int | None = None,
    dtype_bytes: int = 2,
    dropout: bool = True,
    attention: str = "naive",
) -> float:
    """Bytes one transformer layer keeps for its backward pass.

    Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
    Transformer Models", arXiv:2205.05198, eq. 1) count ``s·b·h·(34 + 5·a·s/h)``
    for 16-bit activations, d_ff = 4h and dropout (1-byte masks). Term by term,
    with e bytes per element and m = 1 if dropout else 0:

    - attention: QKV input e, Q and K 2e, V e, output-projection input e, dropout
      mask m (each × s·b·h); softmax output e, its dropout mask m and dropout
      output e (each × a·s²·b; without dropout the softmax output is reused);
    - MLP: input e·s·b·h, activation input and output 2e·s·b·d_ff, dropout mask m·s·b·h;
    - two norms: their inputs, 2e·s·b·h.

    At e = 2, m = 1, d_ff = 4h this is exactly 34·s·b·h + 5·a·s²·b. Flash
    attention keeps no s² matrices, only the fp32 log-sum-exp (4·a·s·b bytes).
    """
    if attention not in ATTENTION:
        raise NapkinError(f"attention must be one of {', '.join(ATTENTION)}; got {attention!r}")
    d_ff = 4 * d_model if d_ff is None else d_ff
    e, m = dtype_bytes, (1 if dropout else 0)
    sbh = seq * batch * d_model
    attn = sbh * (5 * e + m)
    if attention == "naive":
        attn += heads * seq * seq * batch * ((2 * e + m) if dropout else e)
    else:
        attn += 4 * heads * seq * batch
    mlp = seq * batch * (e * d_model + 2 * e * d_ff + m * d_model)
    norms = 2 * e * sbh
    return float(attn + mlp + norms)


def head_activation_bytes(
    seq: int, batch: int, d_model: int, vocab: int, dtype_bytes: int = 2, dropout: bool = True
) -> float:
    """Outside the layers: the embedding-dropout mask, the final norm's input,
    the LM head's input, and the logits as fp32 for the loss (4·s·b·V), which is
    what a model that upcasts logits before cross-entropy keeps."""
    m = 1 if dropout else 0
    return float(seq * batch * (m * d_model + 2 * dtype_bytes * d_model + 4 * vocab))


def transformer_forward_flops(
    layers: int, d_model: int, seq: int, batch: int, vocab: int, d_ff: int | None = None
) -> float:
    """Forward FLOPs by torch.utils.flop_counter's rule (2 per multiply-add of each
    matmul): projections and MLP 2·tokens·(4·D² + 2·D·d_ff) per layer, attention
    scores and values 4·b·s²·D per layer, LM head 2·tokens·D·V. Backward is twice this."""
    d_ff = 4 * d_model if d_ff is None else d_ff
    tokens = seq * batch
    per_layer = (
        2 * tokens * (4 * d_model * d_model + 2 * d_model * d_ff) + 4 * batch * seq * seq * d_model
    )
    return float(layers * per_layer + 2 * tokens * d_model * vocab)


def transformer_memory(
    layers: int,
    d_model: int,
    seq: int,
    batch: int,
    heads: int,
    vocab: int,
    ff_mult: float = 4.0,
    micro_batch: int | None = None,
    checkpointing: str = "none",
    optimizer: str = "adamw",
    precision: str = "mixed",
    attention: str = "naive",
    dropout: bool = True,
    tied_embeddings: bool = False,
) -> TransformerMemory:
    """Training memory of a decoder-only transformer: parameters, gradients,
    optimizer state, and activations under gradient accumulation
    (``micro_batch``) and activation checkpointing:

    - ``none``: every layer keeps everything, L·A;
    - ``sqrt``: a checkpoint (the layer's input, R) every k = ⌈√L⌉ layers, and
      during backward one segment of k layers re-materialised: ⌈L/k⌉·R + k·A;
    - ``full``: a checkpoint at every layer, one layer re-materialised: L·R + A.

    Both checkpointing strategies recompute every layer's forward once more.
    """
    layers = _count(layers, "layers")
    d_model = _count(d_model, "d_model")
    seq = _count(seq, "seq")
    batch = _count(batch, "batch")
    heads = _count(heads, "heads")
    vocab = _count(vocab, "vocab")
    ff_mult = _positive(ff_mult, "ff_mult")
    if d_model % heads:
        raise NapkinError(f"d_model ({d_model}) must be divisible by heads ({heads})")
    micro = batch if micro_batch is None else _count(micro_batch, "micro_batch")
    if micro > batch or batch % micro:
        raise NapkinError(f"micro_batch ({micro}) must divide batch ({batch})")
    if checkpointing not in CHECKPOINTING:
        raise NapkinError(
            f"checkpointing must be one of {', '.join(CHECKPOINTING)}; got {checkpointing!r}"
        )
    if attention not in ATTENTION:
        raise NapkinError(f"attention must be one of {', '.join(ATTENTION)}; got {attention!r}")
    bp = bytes_per_param(optimizer, precision)
    e = 4 if bp.precision == "fp32" else 2
    d_ff = round(ff_mult * d_model)
    n = transformer_params(layers, d_model, vocab, d_ff, tied_embeddings)

    def acts(b: int) -> tuple[float, float, float]:
        return (
            float(e * seq * b * d_model),
            layer_activation_bytes(seq, b, d_model, heads, d_ff, e, dropout, attention),
            head_activation_bytes(seq, b, d_model, vocab, e, dropout),
        )

    R, A, H = acts(micro)
    fwd = transformer_forward_flops(layers, d_model, seq, batch, vocab, d_ff)
    step = 3 * fwd
    # Recompute re-runs the layers' forward, not the LM head's.
    recompute = fwd - 2 * seq * batch * d_model * vocab
    k = math.isqrt(layers - 1) + 1 if layers > 1 else 1  # ⌈√L⌉
    segments = -(-layers // k)

    def table(r: float, a: float, h: float) -> tuple[Strategy, ...]:
        none = layers * a + h
        rows = [
            ("none", "keep every layer's activations", none, 0.0),
            (
                "sqrt",
                f"checkpoint every {k} layers (⌈√L⌉), re-run one {k}-layer segment at a time",
                segments * r + k * a + h,
                recompute,
            ),
            (
                "full",
                "checkpoint every layer's input, re-run one layer at a time",
                layers * r + a + h,
                recompute,
            ),
        ]
        return tuple(Strategy(nm, d, mem, none - mem, rc, rc / step) for nm, d, mem, rc in rows)

    strategies = table(R, A, H)
    full_batch = {s.name: s for s in table(*acts(batch))}[checkpointing].activation_bytes
    steps = (
        Step(
            "params",
            "L·(4·D² + 2·D·d_ff + 2·D) + D + V·D·" + ("1" if tied_embeddings else "2"),
            f"{layers}·(4·{d_model}² + 2·{d_model}·{d_ff} + 2·{d_model}) + {d_model} + {vocab}·{d_model}·"
            + ("1" if tied_embeddings else "2"),
            n,
            "parameters",
        ),
        Step(
            "layer_input",
            "e·s·b·D (the lecture's 2·B·D per layer)",
            f"{e}·{seq}·{micro}·{d_model}",
            R,
            "bytes",
        ),
        Step("per_layer", _per_layer_formula(e, dropout, attention, d_ff, d_model), "", A, "bytes"),
        Step("head", "s·b·(m·D + 2e·D + 4·V)", f"{seq}·{micro}·(...)", H, "bytes"),
        Step(
            "step_flops", "3 × forward (backward = 2 × forward)", f"3 × {fmt(fwd)}", step, "FLOPs"
        ),
    )
    return TransformerMemory(
        layers=layers,
        d_model=d_model,
        seq=seq,
        batch=batch,
        micro_batch=micro,
        heads=heads,
        vocab=vocab,
        d_ff=d_ff,
        attention=attention,
        dropout=dropout,
        checkpointing=checkpointing,
        params=n,
        param_bytes=bp,
        activation_dtype_bytes=e,
        layer_input_bytes=R,
        layer_activation_bytes=A,
        head_activation_bytes=H,
        forward_flops=fwd,
        step_flops=step,
        strategies=strategies,
        full_batch_activation_bytes=full_batch,
        steps=steps,
    )


def _per_layer_formula(e: int, dropout: bool, attention: str, d_ff: int, d_model: int) -> str:
    m = 1 if dropout else 0
    sbh = 8 * e + 2 * m + (2 * e * d_ff) / d_model
    sbh_s = f"{sbh:g}"
    if attention == "flash":
        return f"s·b·h·{sbh_s} + 4·a·s·b (flash: fp32 log-sum-exp, no s² terms)"
    s2 = (2 * e + m) if dropout else e
    src = " [Korthikanti et al. 2022, eq. 1]" if (e, m, sbh) == (2, 1, 34) else ""
    return f"s·b·h·{sbh_s} + {s2}·a·s²·b{src}"


# --- 4. rooflines ------------------------------------------------------------------------


@dataclass(frozen=True)
class Roofline:
    flops: float
    bytes: float
    hardware: str
    hardware_name: str
    dtype: str
    peak_flop_per_sec: float
    bandwidth: float
    intensity: float  # FLOPs per byte of this work
    critical_intensity: float  # the chip's peak / bandwidth
    bound: str  # "memory" | "compute"
    compute_seconds: float
    memory_seconds: float
    seconds: float  # lower bound, assuming perfect overlap
    attainable_flop_per_sec: float  # min(peak, bandwidth · intensity)

    @property
    def max_utilization(self) -> float:
        """The best MFU this work can reach: min(1, intensity / critical intensity)."""
        return min(1.0, self.intensity / self.critical_intensity)

    def to_json(self) -> dict:
        out = asdict(self)
        out["max_utilization"] = self.max_utilization
        return out


def roofline(
    flops: float,
    bytes: float,  # shadows the builtin: it is the word the lecture and the issue use
    hardware: str | Chip = "h100",
    dtype: str = "bf16",
    table: Mapping[str, Chip] | None = None,
) -> Roofline:
    """Where ``flops`` of work moving ``bytes`` sits on the chip's roofline.

    time >= max(flops / peak, bytes / bandwidth); the larger term names the
    bound. Equivalently, intensity = flops / bytes against the critical
    intensity peak / bandwidth. A tie counts as compute-bound.
    """
    for v, what in ((flops, "flops"), (bytes, "bytes")):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise NapkinError(f"{what} must be a number >= 0, got {v!r}")
    chip = _chip(hardware, table)
    dt, peak, _, _ = _peak(chip, dtype)
    bw = chip.bandwidth.value
    if bytes > 0:
        intensity = flops / bytes
    else:
        intensity = math.inf if flops > 0 else 0.0
    t_compute = flops / peak
    t_memory = bytes / bw
    bound = "compute" if t_compute >= t_memory and flops > 0 else "memory"
    return Roofline(
        flops=float(flops),
        bytes=float(bytes),
        hardware=chip.key,
        hardware_name=chip.name,
        dtype=dt,
        peak_flop_per_sec=peak,
        bandwidth=bw,
        intensity=intensity,
        critical_intensity=peak / bw,
        bound=bound,
        compute_seconds=t_compute,
        memory_seconds=t_memory,
        seconds=max(t_compute, t_memory),
        attainable_flop_per_sec=min(peak, bw * intensity) if math.isfinite(intensity) else peak,
    )


def roofline_for(
    flops: float,
    bytes: float,
    hardware: str,
    dtype: str,
    table: Mapping[str, Chip] | None = None,
) -> dict:
    """For ``shapelint cost --hardware``: the roofline of one call or function as a
    plain dict with ``intensity``, ``critical_intensity``, ``bound``
    ("memory" | "compute") and ``seconds`` (the lower bound), plus the parts."""
    r = roofline(flops, bytes, hardware, dtype, table)
    return {
        "intensity": r.intensity,
        "critical_intensity": r.critical_intensity,
        "bound": r.bound,
        "seconds": r.seconds,
        "compute_seconds": r.compute_seconds,
        "memory_seconds": r.memory_seconds,
        "peak_flop_per_sec": r.peak_flop_per_sec,
        "bandwidth": r.bandwidth,
        "max_utilization": r.max_utilization,
        "hardware": r.hardware,
        "dtype": r.dtype,
    }


@dataclass(frozen=True)
class Rung:
    """One operation of the lecture's ladder."""

    name: str
    what: str
    flops_formula: str
    bytes_formula: str
    lecture: str  # the intensity the lecture quotes
    roofline: Roofline

    def to_json(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if k != "roofline"}
        out.update(self.roofline.to_json())
        return out


def ladder(
    hardware: str | Chip = "h100",
    dtype: str = "bf16",
    n: int = 1024 * 1024,
    table: Mapping[str, Chip] | None = None,
) -> list[Rung]:
    """The lecture's arithmetic-intensity ladder on ``n`` elements (matrices are
    m × m with m = ⌊√n⌋), each op reading its inputs once and writing its output once.

    FLOPs follow torch.utils.flop_counter (2 per multiply-add); the lecture counts
    n − 1 additions per dot product (2n − 1), a difference of 1 in 2n. GELU's 20
    FLOPs per element is the lecture's estimate for its tanh approximation.
    """
    n = _count(n, "n")
    try:
        e = DTYPE_BYTES[canonical_dtype(dtype)]
    except HardwareError as err:
        raise NapkinError(str(err)) from None
    m = math.isqrt(n)
    rungs = [
        (
            "relu",
            "y = relu(x), x of n elements",
            "n (one comparison each)",
            "2·e·n (read x, write y)",
            "~1/4",
            n,
            2 * e * n,
        ),
        (
            "gelu",
            "y = gelu(x), x of n elements",
            "20·n (tanh approximation)",
            "2·e·n",
            "~5",
            20 * n,
            2 * e * n,
        ),
        ("dot", "x · w, two vectors of n", "2·n", "2·e·n + e", "~1/2", 2 * n, 2 * e * n + e),
        (
            "matvec",
            f"x @ W, W of {m}×{m}",
            "2·m²",
            "e·(m + m² + m)",
            "~1",
            2 * m * m,
            e * (m * m + 2 * m),
        ),
        (
            "matmul",
            f"X @ W, both {m}×{m}",
            "2·m³",
            "3·e·m²",
            f"~m/3={m / 3:.0f}",
            2 * m**3,
            3 * e * m * m,
        ),
    ]
    return [
        Rung(name, what, ff, bf, lec, roofline(fl, by, hardware, dtype, table))
        for name, what, ff, bf, lec, fl, by in rungs
    ]


__all__ = [
    "CHECKPOINTING",
    "OPTIMIZER_BYTES",
    "PRECISION_BYTES",
    "MaxParams",
    "NapkinError",
    "ParamBytes",
    "Roofline",
    "Rung",
    "Step",
    "Strategy",
    "TrainTime",
    "TransformerMemory",
    "bytes_per_param",
    "head_activation_bytes",
    "ladder",
    "layer_activation_bytes",
    "max_params",
    "roofline",
    "roofline_for",
    "train_time",
    "transformer_forward_flops",
    "transformer_memory",
    "transformer_params",
]
