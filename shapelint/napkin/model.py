"""The napkin of one model, from figures counted in its code: training days from
the counted FLOPs per token beside 6·N·D, bytes per parameter and their total,
and a verdict for the chips.

Pure functions over numbers. Every figure is a `Span`: exact (low == high), a
lower bound (high None) or unknown (nothing known but that it is not negative),
and carries where its inputs came from. A figure that is not known stays `?`;
one known in part is `≥`; nothing here guesses a backward pass or activations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from shapelint.napkin.formulas import (
    SECONDS_PER_DAY,
    NapkinError,
    bytes_per_param,
    fmt,
    fmt_bytes,
    fmt_count,
)
from shapelint.napkin.hardware import Chip, HardwareError, lookup


@dataclass(frozen=True)
class Span:
    """A non-negative figure between low and high (None: no upper bound known)."""

    low: float = 0.0
    high: float | None = None

    @staticmethod
    def exact(x: float) -> Span:
        return Span(x, x)

    @property
    def value(self) -> float | None:
        return self.low if self.high == self.low else None

    @property
    def known(self) -> bool:
        """Something is known: a value, or a lower bound above 0."""
        return self.high is not None or self.low > 0

    def __add__(self, other: Span) -> Span:
        high = None if self.high is None or other.high is None else self.high + other.high
        return Span(self.low + other.low, high)

    def scale(self, k: float) -> Span:
        """self × k for k ≥ 0 (× 0 is 0, even of what is not known)."""
        if k == 0:
            return Span.exact(0)
        return Span(self.low * k, None if self.high is None else self.high * k)

    def show(self, each=fmt) -> str:
        if self.value is not None:
            return each(self.value)
        if self.high is not None:
            return f"{each(self.low)} – {each(self.high)}"
        return f"≥ {each(self.low)}" if self.low > 0 else "?"

    def to_json(self) -> dict:
        return {"value": self.value, "low": self.low, "high": self.high}


UNKNOWN = Span()


@dataclass(frozen=True)
class Counted:
    """A figure counted from the code, with where its inputs came from and, when it
    is not exact, why."""

    span: Span
    source: str
    why: str = ""

    def to_json(self) -> dict:
        return {**self.span.to_json(), "source": self.source, "why": self.why}


@dataclass(frozen=True)
class PerToken:
    """A forward's FLOPs per token, split into the part no size changes and the
    part that grows with a size (the sequence length of attention's q·kᵀ and p·v)."""

    total: Counted
    constant: float | None = None  # FLOPs per token whatever the sizes
    growing: Span = UNKNOWN  # the rest, at the bound sizes
    growing_formula: str = ""  # that part as a formula, for people
    growing_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelFigures:
    """What the code gives: parameter counts, and a forward's (and, where the
    analysis counts it, a backward's) FLOPs per token."""

    params: Counted
    trainable: Counted
    forward: PerToken | None  # None: no token-id input to count tokens by
    backward: Counted | None  # None: this build counts no backward
    forward_why: str = ""  # why there is no forward per token
    # The bytes one forward at the given sizes saves for backward (the batch each
    # GPU runs); None: not counted.
    activations: Counted | None = None


@dataclass(frozen=True)
class Plan:
    tokens: float | None  # None: no --tokens (no training-time section)
    gpus: int
    hardware: str
    mfu: float = 0.5
    optimizer: str = "adamw"
    precision: str = "mixed"
    table: Mapping[str, Chip] | None = field(default=None, compare=False)


# The chip peak each precision recipe runs its matrix products at.
_COMPUTE_DTYPE = {"mixed": "bf16", "mixed-master": "bf16", "fp32": "fp32"}


def model_napkin(figs: ModelFigures, plan: Plan) -> dict:
    """The napkin as json: `plan`, `params`, `training` (with --tokens), `memory`."""
    if plan.gpus < 1:
        raise NapkinError(f"gpus must be a positive whole number, got {plan.gpus!r}")
    if not 0 < plan.mfu <= 1:
        raise NapkinError(f"mfu is a fraction of peak, between 0 and 1; got {plan.mfu!r}")
    if plan.tokens is not None and not (math.isfinite(plan.tokens) and plan.tokens > 0):
        raise NapkinError(f"tokens must be a positive number, got {plan.tokens!r}")
    try:
        chip = lookup(plan.hardware, plan.table)
    except HardwareError as e:
        raise NapkinError(str(e)) from None
    bp = bytes_per_param(plan.optimizer, plan.precision)
    dtype = _COMPUTE_DTYPE[bp.precision]
    try:
        peak = chip.peak_figure(dtype)
    except HardwareError as e:
        raise NapkinError(str(e)) from None
    out: dict = {
        "plan": {
            "tokens": plan.tokens,
            "gpus": plan.gpus,
            "hardware": chip.key,
            "hardware_name": chip.name,
            "mfu": plan.mfu,
            "dtype": dtype,
            "optimizer": bp.optimizer_name,
            "precision": bp.precision,
            "peak_flop_per_sec": peak.value,
            "peak_source": peak.source,
            "memory_per_gpu": chip.memory.value,
            "memory_source": chip.memory.source,
        },
        "params": figs.params.to_json(),
        "trainable_params": figs.trainable.to_json(),
    }
    if plan.tokens is not None:
        per_day = peak.value * plan.mfu * plan.gpus * SECONDS_PER_DAY
        out["training"] = _training(figs, plan.tokens, per_day)
    out["memory"] = _memory(figs, bp, plan.gpus, chip.memory.value)
    return out


def _training(figs: ModelFigures, tokens: float, per_day: float) -> dict:
    n = figs.params.span
    six = n.scale(6)
    out: dict = {
        "flops_per_day": per_day,
        "six_nd": {
            "flops_per_token": six.to_json(),
            "total_flops": six.scale(tokens).to_json(),
            "days": six.scale(tokens / per_day).to_json(),
            "source": f"6 × params ({figs.params.source})",
        },
    }
    fwd = figs.forward.total if figs.forward else Counted(UNKNOWN, "", figs.forward_why)
    if figs.backward is None:
        bwd = Counted(UNKNOWN, "", "backward not counted: this build counts the forward only")
    else:
        bwd = figs.backward
    train = fwd.span + bwd.span
    # forward and backward often stop on the same free size: say it once
    whys = list(dict.fromkeys(w for w in (fwd.why, bwd.why) if w))
    out["counted"] = {
        "forward_per_token": fwd.to_json(),
        "backward_per_token": bwd.to_json(),
        "train_per_token": train.to_json(),
        "total_flops": train.scale(tokens).to_json(),
        "days": train.scale(tokens / per_day).to_json(),
        "why": "; ".join(whys),
    }
    out["difference"] = _difference(figs, bwd.span)
    return out


def _difference(figs: ModelFigures, backward: Span) -> list[str]:
    """Why the counted forward is not 6N's 2N per token, term by term."""
    f, n = figs.forward, figs.params.span.value
    if f is None or f.constant is None or n is None:
        return []
    lines = [
        f"6·N assumes a forward of 2·N = {fmt(2 * n)} FLOPs per token "
        f"(N = {fmt_count(n)} parameters counted from the code)"
    ]
    used = f.constant / 2
    if used < n:
        lines.append(
            f"{fmt(f.constant)} per token whatever the sizes: 2 × {fmt_count(used)} multiply-adds; "
            f"{fmt_count(n - used)} parameters do no multiply-add per token (lookups such as "
            f"embeddings, scales such as norms), yet 6·N counts them"
        )
    elif used > n:
        # At concrete sizes the work that grows with the sequence is part of the
        # constant, so the excess cannot be put on shared weights alone.
        why = (
            "parameters used more than once per token, as shared weights"
            if f.growing_formula
            else "products between activations (attention's q·kᵀ and p·v; name the sequence "
            "length, T, to split them out) or parameters used more than once per token"
        )
        where = "whatever the sizes" if f.growing_formula else "at these sizes"
        lines.append(
            f"{fmt(f.constant)} per token {where}: 2 × {fmt_count(used)} multiply-adds, more "
            f"than N ({why})"
        )
    else:
        lines.append(f"{fmt(f.constant)} per token whatever the sizes: exactly 2·N")
    if f.growing_formula:
        names = ", ".join(f.growing_names)
        at = f" = {fmt(f.growing.value)}" if f.growing.value is not None else f" (bind {names})"
        lines.append(
            f"{f.growing_formula}{at} per token grows with {names}: products between "
            "activations (attention's q·kᵀ and p·v), which 6·N leaves out"
        )
    fwd, bwd = f.total.span.value, backward.value
    if bwd is not None and fwd:
        lines.append(
            f"backward {fmt(bwd)} per token, {bwd / fwd:.3g}× the counted forward; "
            "6·N takes 4·N, twice its forward"
        )
        lines.insert(
            0,
            f"counted {fmt(fwd + bwd)} FLOPs per token against 6·N = {fmt(6 * n)}: "
            f"{(fwd + bwd) / (6 * n) - 1:+.1%}",
        )
    elif not backward.known:
        lines.append("backward not counted: 6·N takes it as twice the forward's 2·N")
    return lines


def _memory(figs: ModelFigures, bp, gpus: int, per_gpu: float) -> dict:
    """Weights for every parameter; gradients, an fp32 master copy and optimizer
    state for the trainable ones; the activations of one forward at the given
    sizes on each GPU (each runs its own batch)."""
    n, t = figs.params.span, figs.trainable.span
    if t.high is None and n.high is not None:
        t = Span(t.low, n.high)  # trainable ≤ all parameters
    parts = {
        "weights": n.scale(bp.weights),
        "gradients": t.scale(bp.gradients),
        "master": t.scale(bp.master),
        "optimizer": t.scale(bp.optimizer),
    }
    state = Span.exact(0)
    for s in parts.values():
        state = state + s
    capacity = gpus * per_gpu
    act = figs.activations or Counted(UNKNOWN, "", "activations not counted")
    sharded = state.scale(1 / gpus)
    on_each = sharded + act.span
    out: dict = {
        "bytes_per_param": bp.to_json(),
        "bytes_per_param_formula": f"{bp.formula()} = {bp.numbers()} = {bp.total} B",
        **{k: v.to_json() for k, v in parts.items()},
        "state": state.to_json(),
        "state_per_gpu_sharded": sharded.to_json(),
        "activations": act.span.to_json(),
        "activations_source": act.source,
        "activations_why": act.why,
        "per_gpu": on_each.to_json(),
        "capacity": capacity,
        "gpus": gpus,
        "max_params": capacity / bp.total,
        "min_gpus": None if state.high is None else max(1, math.ceil(state.high / per_gpu)),
    }
    out["min_gpus_at_least"] = max(1, math.ceil(state.low / per_gpu)) if state.low else 1
    if state.low > capacity:
        verdict, why = (
            "does not fit",
            (
                f"weights, gradients and optimizer state alone take {state.show(fmt_bytes)} "
                f"> {gpus} × {fmt_bytes(per_gpu)} = {fmt_bytes(capacity)}, before activations"
            ),
        )
    elif on_each.low > per_gpu:
        verdict, why = (
            "does not fit",
            (
                f"the state sharded over {gpus} ({sharded.show(fmt_bytes)}) and the "
                f"activations of one forward ({act.span.show(fmt_bytes)}) take "
                f"{on_each.show(fmt_bytes)} per GPU > {fmt_bytes(per_gpu)}"
            ),
        )
    elif on_each.high is not None:
        verdict, why = (
            "fits",
            (
                f"the state sharded over {gpus} ({sharded.show(fmt_bytes)}) and the "
                f"activations of one forward ({act.span.show(fmt_bytes)}) take "
                f"{on_each.show(fmt_bytes)} per GPU ≤ {fmt_bytes(per_gpu)}"
            ),
        )
    elif state.high is not None:
        room = capacity - state.high
        verdict, why = (
            "fits before activations",
            (
                f"weights, gradients and optimizer state take {state.show(fmt_bytes)} of "
                f"{fmt_bytes(capacity)}; it fits if activations ({act.span.show(fmt_bytes)}) "
                f"take at most {fmt_bytes(room)} ({fmt_bytes(room / gpus)} per GPU)"
            ),
        )
    else:
        verdict, why = "unknown", "the parameter count is not known"
    out["verdict"], out["verdict_why"] = verdict, why
    return out
