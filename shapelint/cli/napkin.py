"""``shapelint napkin``: the lecture's back-of-the-envelope questions from the command line.

    napkin train-time --params 70e9 --tokens 15e12 --gpus 1024 --hardware h100 --mfu 0.5
    napkin max-params --gpus 8 --hardware h100 --optimizer adamw
    napkin memory --layers 32 --d-model 4096 --seq 2048 --batch 8 --heads 32 --vocab 50257
    napkin roofline --hardware h100 [--plot roofline.png]
    napkin hardware [NAME]

Bad input (unknown chip, a number that is not one) exits 2 with a message, never
a traceback. Chips from ``[tool.shapelint.hardware]`` in pyproject.toml are added
to the table; a caller that has already loaded config can put its table in
``ctx.meta[TABLE_KEY]``.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from shapelint.cli.options import COUNT, NUMBER, recipe_options
from shapelint.napkin.formulas import (
    CHECKPOINTING,
    MaxParams,
    NapkinError,
    Roofline,
    Step,
    TrainTime,
    fmt,
    fmt_bytes,
    fmt_count,
    fmt_seconds,
    ladder,
    max_params,
    roofline,
    train_time,
    transformer_memory,
)
from shapelint.napkin.hardware import (
    Chip,
    HardwareError,
    canonical_dtype,
    load_hardware_table,
    lookup,
    parse_quantity,
)

TABLE_KEY = "shapelint.hardware_table"


FORMAT = click.option(
    "--format",
    "fmt_",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)
HARDWARE = click.option(
    "--hardware",
    default="h100",
    show_default=True,
    help="Chip name or alias (see `napkin hardware`).",
)
DTYPE = click.option(
    "--dtype", default="bf16", show_default=True, help="bf16, fp16, fp8, tf32 or fp32."
)


def _table(ctx: click.Context) -> Mapping[str, Chip]:
    table = ctx.meta.get(TABLE_KEY)
    if table is None:
        table = load_hardware_table(_group_config(ctx))
        ctx.meta[TABLE_KEY] = table
    return table


def _group_config(ctx: click.Context) -> str | None:
    c: click.Context | None = ctx
    while c is not None:
        if c.command.name == "napkin" and c.params.get("config"):
            return c.params["config"]
        c = c.parent
    return None


def _errors(fn: Callable) -> Callable:
    """Bad input becomes a usage error (exit 2) with the reason, not a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (NapkinError, HardwareError) as e:
            raise click.UsageError(str(e)) from None

    return wrapper


def _emit(data: dict) -> None:
    click.echo(json.dumps(data, indent=2, default=_json_default))


def _json_default(o: Any) -> Any:
    if isinstance(o, float) and not math.isfinite(o):
        return str(o)
    raise TypeError(type(o).__name__)


def _render_steps(steps: Sequence[Step]) -> list[str]:
    w_name = max(len(s.name) for s in steps)
    w_form = max(len(s.formula) for s in steps)
    w_num = max(len(s.numbers) for s in steps)
    lines = []
    for s in steps:
        nums = f"= {s.numbers:<{w_num}}  " if w_num else ""
        lines.append(
            f"  {s.name:<{w_name}} = {s.formula:<{w_form}}  {nums}= {fmt(s.value)} {s.unit}".rstrip()
        )
    return lines


def _report(r: TrainTime | MaxParams, fmt_: str, header: str, *footer: str) -> None:
    """A result as JSON, or as a header line, its chain of steps and the footer lines."""
    if fmt_ == "json":
        _emit(r.to_json())
        return
    click.echo(header)
    for line in _render_steps(r.steps):
        click.echo(line)
    for line in footer:
        click.echo(line)


@click.group(name="napkin")
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="pyproject.toml whose [tool.shapelint.hardware] adds or overrides chips "
    "(default: the nearest pyproject.toml).",
)
def napkin(config: str | None) -> None:
    """Napkin math: training time, memory, and rooflines, showing the chain of numbers."""


@napkin.command("train-time")
@click.option("--params", type=NUMBER, required=True, help="Model parameters (70e9, 70B).")
@click.option("--tokens", type=NUMBER, required=True, help="Training tokens (15e12, 15T).")
@click.option("--gpus", type=COUNT, required=True, help="Number of chips.")
@HARDWARE
@click.option(
    "--mfu", type=float, default=0.5, show_default=True, help="Model FLOPs utilization, 0..1."
)
@DTYPE
@click.option(
    "--flops-per-token", type=NUMBER, default=None, help="Training FLOPs per token [6 × params]."
)
@FORMAT
@click.pass_context
@_errors
def train_time_cmd(ctx, params, tokens, gpus, hardware, mfu, dtype, flops_per_token, fmt_) -> None:
    """Days to train: flops_per_token · tokens / (peak · mfu · gpus)."""
    r = train_time(params, tokens, gpus, hardware, mfu, dtype, flops_per_token, table=_table(ctx))
    _report(
        r,
        fmt_,
        f"Training time: {fmt_count(r.params)} params on {fmt_count(r.tokens)} tokens, "
        f"{r.gpus} × {r.hardware_name} ({r.dtype}) at MFU {r.mfu:g}\n",
        f"\n≈ {r.days:.1f} days ({fmt_count(r.gpu_hours)} GPU-hours)",
        f"peak from: {r.source}",
    )


@napkin.command("max-params")
@click.option("--gpus", type=COUNT, required=True, help="Number of chips.")
@HARDWARE
@recipe_options
@FORMAT
@click.pass_context
@_errors
def max_params_cmd(ctx, gpus, hardware, optimizer, precision, fmt_) -> None:
    """Largest model whose weights, gradients and optimizer state fit: memory / bytes per param."""
    r = max_params(gpus, hardware, optimizer, precision, table=_table(ctx))
    _report(
        r,
        fmt_,
        f"Largest model: {r.gpus} × {r.hardware_name} ({fmt_bytes(r.memory_per_gpu)} each), "
        f"{r.breakdown.optimizer_name}, {r.breakdown.precision} precision\n",
        f"\n≈ {fmt_count(r.params)} parameters",
        f"caveat: {r.caveat}",
    )


@napkin.command("memory")
@click.option("--layers", type=COUNT, required=True, help="Transformer layers L.")
@click.option("--d-model", type=COUNT, required=True, help="Hidden size D.")
@click.option("--seq", type=COUNT, required=True, help="Sequence length s.")
@click.option("--batch", type=COUNT, required=True, help="Sequences per optimizer step B.")
@click.option("--heads", type=COUNT, required=True, help="Attention heads a.")
@click.option("--vocab", type=COUNT, required=True, help="Vocabulary size V.")
@click.option("--ff-mult", type=float, default=4.0, show_default=True, help="MLP width d_ff / D.")
@click.option(
    "--micro-batch",
    type=COUNT,
    default=None,
    help="Gradient accumulation: sequences per micro-batch.",
)
@click.option(
    "--checkpointing", type=click.Choice(CHECKPOINTING), default="none", show_default=True
)
@recipe_options
@click.option(
    "--attention",
    type=click.Choice(["naive", "flash"]),
    default="naive",
    show_default=True,
    help="flash keeps no s×s attention matrices.",
)
@click.option(
    "--dropout/--no-dropout", default=True, show_default=True, help="Dropout masks are kept."
)
@click.option("--tied-embeddings", is_flag=True, help="LM head shares the embedding matrix.")
@click.option("--hardware", default=None, help="Also say how many of these chips the total needs.")
@FORMAT
@click.pass_context
@_errors
def memory_cmd(ctx, hardware, fmt_, **model) -> None:
    """Training memory of a decoder-only transformer, with accumulation and checkpointing."""
    # Every other option is named after the transformer_memory() argument it sets.
    r = transformer_memory(**model)
    chip = lookup(hardware, _table(ctx)) if hardware else None
    if fmt_ == "json":
        data = r.to_json()
        if chip:
            data["hardware"] = {
                "key": chip.key,
                "memory_per_gpu": chip.memory.value,
                "gpus_needed": math.ceil(r.total / chip.memory.value),
            }
        _emit(data)
        return
    bp = r.param_bytes
    e = r.activation_dtype_bytes
    click.echo(
        f"Transformer: L={r.layers} D={r.d_model} d_ff={r.d_ff} heads={r.heads} V={r.vocab}, "
        f"seq {r.seq}, batch {r.batch}"
        + (
            f" as {r.accumulation_steps} micro-batches of {r.micro_batch}"
            if r.accumulation_steps > 1
            else ""
        )
        + f"; {bp.optimizer_name}, {bp.precision} precision, {r.attention} attention"
        + (", dropout" if r.dropout else "")
        + "\n"
    )
    for line in _render_steps(r.steps[:1]):
        click.echo(line)
    rows = [
        ("parameters", f"params × {bp.weights} B", r.weights),
        ("gradients", f"params × {bp.gradients} B", r.gradients),
    ]
    if bp.master:
        rows.append(("fp32 master", f"params × {bp.master} B", r.master))
    rows.append((f"{bp.optimizer_name} state", f"params × {bp.optimizer} B", r.optimizer))
    rows.append(
        (
            f"activations ({r.checkpointing})",
            f"micro-batch {r.micro_batch}, {e}-byte values",
            r.activations,
        )
    )
    rows.append(("total", "", r.total))
    click.echo("")
    for name, how, val in rows:
        click.echo(f"  {name:<22} {how:<28} {fmt_bytes(val):>10}")
    click.echo(
        f"\nActivations per micro-batch of {r.micro_batch} (e = {e} bytes, s = seq, b = micro-batch, h = D, a = heads):"
    )
    acts = [
        ("one layer's input (R)", r.layer_input_bytes, "e·s·b·h: the lecture's 2·B·D per layer"),
        ("one layer, all (A)", r.layer_activation_bytes, r.steps[2].formula),
        (
            "outside layers (H)",
            r.head_activation_bytes,
            "final-norm and LM-head inputs, fp32 logits",
        ),
    ]
    for name, val, how in acts:
        click.echo(f"  {name:<22} {fmt_bytes(val):>10}  {how}")
    k = math.isqrt(r.layers - 1) + 1 if r.layers > 1 else 1
    click.echo(
        f"\nActivation checkpointing (L = {r.layers} layers, k = ⌈√L⌉ = {k}; recompute per optimizer step):"
    )
    click.echo(f"  {'strategy':<9} {'memory':<18} {'activations':>11} {'saved':>10}  recompute")
    mem_formula = {"none": "L·A + H", "sqrt": "⌈L/k⌉·R + k·A + H", "full": "L·R + A + H"}
    for s in r.strategies:
        mark = "*" if s.name == r.checkpointing else " "
        rc = (
            f"+{fmt(s.recompute_flops)} FLOPs (+{s.recompute_fraction:.0%})"
            if s.recompute_flops
            else "0"
        )
        saved = fmt_bytes(s.saved_bytes) if s.saved_bytes else "-"
        click.echo(
            f" {mark}{s.name:<9} {mem_formula[s.name]:<18} {fmt_bytes(s.activation_bytes):>11} {saved:>10}  {rc}"
        )
    sqrt_s, full_s = r.strategies[1], r.strategies[2]
    if full_s.activation_bytes < sqrt_s.activation_bytes:
        click.echo(
            "  (every-√L segments pay off when a layer keeps about as much as its input, as in the "
            f"lecture's deep linear network; here a layer keeps A/R = {r.layer_activation_bytes / r.layer_input_bytes:.0f}× "
            "its input, so checkpointing every layer stores less for the same recompute)"
        )
    click.echo(f"  step FLOPs (3 × forward) = {fmt(r.step_flops)}")
    if r.accumulation_steps > 1:
        saved = r.full_batch_activation_bytes - r.activations
        click.echo(
            f"\nGradient accumulation: batch {r.batch} as {r.accumulation_steps} × {r.micro_batch}: activations "
            f"{fmt_bytes(r.full_batch_activation_bytes)} -> {fmt_bytes(r.activations)} (saves {fmt_bytes(saved)}); "
            f"same FLOPs per step, in {r.accumulation_steps} sequential passes"
        )
    if chip:
        need = math.ceil(r.total / chip.memory.value)
        click.echo(
            f"\n{chip.name}: {fmt_bytes(chip.memory.value)} each -> the total needs {need} chip(s)' memory "
            "(if everything is sharded, as with FSDP / ZeRO-3)"
        )


@napkin.command("roofline")
@HARDWARE
@DTYPE
@click.option(
    "--flops", type=NUMBER, default=None, help="FLOPs of one piece of work (with --bytes)."
)
@click.option("--bytes", "bytes_", type=NUMBER, default=None, help="Bytes it moves (with --flops).")
@click.option("--label", default="work", show_default=True, help="Name for --flops/--bytes.")
@click.option(
    "--points",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help='JSON list of {"label", "flops", "bytes"} objects to place on the roofline.',
)
@click.option(
    "--n", "n", type=COUNT, default=1024 * 1024, show_default=True, help="Ladder size (elements)."
)
@click.option(
    "--plot", type=click.Path(dir_okay=False, writable=True), default=None, help="Draw to FILE.png."
)
@click.option("--no-ladder", is_flag=True, help="Leave the lecture's ladder out of the plot.")
@FORMAT
@click.pass_context
@_errors
def roofline_cmd(
    ctx, hardware, dtype, flops, bytes_, label, points, n, plot, no_ladder, fmt_
) -> None:
    """Memory- or compute-bound? The lecture's ladder (ReLU, GELU, dot, matvec, matmul),
    or your own --flops/--bytes or --points, against the chip's roofline."""
    table = _table(ctx)
    canonical_dtype(dtype)
    if (flops is None) != (bytes_ is None):
        raise click.UsageError("give --flops and --bytes together")
    pts: list[tuple[str, float, float]] = []
    if flops is not None:
        pts.append((label, flops, bytes_))
    if points:
        pts.extend(_read_points(points))
    placed = [(lb, roofline(f, b, hardware, dtype, table)) for lb, f, b in pts]
    rungs = ladder(hardware, dtype, n, table) if not pts else []
    if plot:
        from shapelint.napkin.plot import plot_roofline  # matplotlib is optional

        plot_roofline(plot, hardware, dtype, pts, table, show_ladder=not no_ladder)
    if fmt_ == "json":
        ridge = placed[0][1] if placed else rungs[0].roofline
        data: dict[str, Any] = {
            "hardware": ridge.hardware,
            "dtype": ridge.dtype,
            "peak_flop_per_sec": ridge.peak_flop_per_sec,
            "bandwidth": ridge.bandwidth,
            "critical_intensity": ridge.critical_intensity,
        }
        if placed:
            data["points"] = [{"label": lb, **r.to_json()} for lb, r in placed]
        else:
            data["ladder"] = [r.to_json() for r in rungs]
        if plot:
            data["plot"] = str(plot)
        _emit(data)
        return
    head = placed[0][1] if placed else rungs[0].roofline
    click.echo(
        f"Roofline: {head.hardware_name}, {head.dtype}: peak {fmt(head.peak_flop_per_sec)} FLOP/s, "
        f"bandwidth {fmt(head.bandwidth)} B/s"
    )
    click.echo(
        f"critical intensity = peak / bandwidth = {fmt(head.peak_flop_per_sec)} / {fmt(head.bandwidth)} "
        f"= {head.critical_intensity:.4g} FLOPs/byte\n"
    )
    if placed:
        _roof_table([(lb, "", r) for lb, r in placed])
    else:
        click.echo(
            f"The lecture's ladder on n = {n:,} {head.dtype} elements (time ≥ max(FLOPs/peak, bytes/bandwidth)):"
        )
        _roof_table([(r.name, r.lecture, r.roofline) for r in rungs], lecture=True)
        click.echo("")
        for bound in ("memory", "compute"):
            names = [r.name for r in rungs if r.roofline.bound == bound]
            if names:
                click.echo(f"{bound}-bound: {', '.join(names)}")
    if plot:
        click.echo(f"\nplot written to {plot}")


def _roof_table(rows: list[tuple[str, str, Roofline]], lecture: bool = False) -> None:
    w = max(8, *(len(lb) for lb, _, _ in rows))
    lec = f" {'lecture':>11}" if lecture else ""
    click.echo(
        f"  {'op':<{w}} {'FLOPs':>10} {'bytes':>10} {'intensity':>10}{lec} {'bound':>8} {'time ≥':>10} {'max MFU':>8}"
    )
    for lb, quoted, r in rows:
        q = f" {quoted:>11}" if lecture else ""
        click.echo(
            f"  {lb:<{w}} {fmt(r.flops):>10} {fmt(r.bytes):>10} {r.intensity:>10.4g}{q} {r.bound:>8} "
            f"{fmt_seconds(r.seconds):>10} {r.max_utilization:>8.1%}"
        )


def _read_points(path: str) -> list[tuple[str, float, float]]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise NapkinError(f"--points {path}: cannot read JSON ({e})") from None
    if isinstance(data, dict):
        data = data.get("points")
    if not isinstance(data, list):
        raise NapkinError(
            f'--points {path}: expected a list of {{"label", "flops", "bytes"}} objects'
        )
    out = []
    for i, p in enumerate(data):
        if not isinstance(p, dict) or "flops" not in p or "bytes" not in p:
            raise NapkinError(f"--points {path}: entry {i} needs 'flops' and 'bytes'")
        try:
            f = parse_quantity(p["flops"], f"entry {i} flops")
            b = parse_quantity(p["bytes"], f"entry {i} bytes")
        except HardwareError as e:
            raise NapkinError(f"--points {path}: {e}") from None
        out.append((str(p.get("label", f"#{i + 1}")), f, b))
    return out


@napkin.command("hardware")
@click.argument("name", required=False)
@FORMAT
@click.pass_context
@_errors
def hardware_cmd(ctx, name, fmt_) -> None:
    """List the hardware table with the source of every figure (or one chip's row)."""
    table = _table(ctx)
    chips = [lookup(name, table)] if name else list(table.values())
    if fmt_ == "json":
        _emit({"chips": [_chip_json(c) for c in chips]})
        return
    for i, c in enumerate(chips):
        if i:
            click.echo("")
        aliases = f"  (aliases: {', '.join(c.aliases)})" if c.aliases else ""
        click.echo(f"{c.key}: {c.name}{aliases}")
        peaks = []
        for dt, f in c.peaks.items():
            sp = f" [{fmt(f.sparse / 1e12)} sparse]" if f.sparse else ""
            peaks.append(f"{dt} {fmt(f.value / 1e12)}{sp}")
        click.echo(f"  dense peak TFLOP/s: {', '.join(peaks)}")
        ridge = f"{c.critical_intensity(next(iter(c.peaks))):.3g}"
        click.echo(
            f"  memory {fmt_bytes(c.memory.value)}, bandwidth {fmt_bytes(c.bandwidth.value)}/s, "
            f"critical intensity ({next(iter(c.peaks))}) {ridge} FLOPs/byte"
        )
        by_source: dict[str, list[str]] = {}
        for fname, fig in c.figures().items():
            label = fname + (f" ({fig.note})" if fig.note and name else "")
            by_source.setdefault(fig.source, []).append(label)
        for src, fields in by_source.items():
            which = "" if len(by_source) == 1 and not name else f" [{', '.join(fields)}]"
            click.echo(f"  source{which}: {src}")
        if c.note:
            click.echo(f"  note: {c.note}")


def _chip_json(c: Chip) -> dict:
    def fig(f) -> dict:
        return {"value": f.value, "sparse": f.sparse, "source": f.source, "note": f.note}

    return {
        "key": c.key,
        "name": c.name,
        "aliases": list(c.aliases),
        "note": c.note,
        "peaks": {dt: fig(f) for dt, f in c.peaks.items()},
        "memory": fig(c.memory),
        "bandwidth": fig(c.bandwidth),
    }


if __name__ == "__main__":
    napkin()
