"""`shapelint run`: execute annotated functions to confirm their shapes and FLOPs.

This module imports neither torch nor shapelint.runtime until the command
actually runs (`--help` must not pay for torch).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from shapelint.cli.options import analysis_options, load_config, parse_dim_values
from shapelint.notation.target import Target
from shapelint.report.numbers import si

DTYPE_CHOICES = ("fp32", "bf16")


def _seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} us"


def render_text(rep) -> str:
    dims = " ".join(f"{k}={v}" for k, v in rep.dims.items()) or "-"
    where = rep.device if rep.device == "cpu" else f"{rep.device} ({rep.device_name})"
    mode = "forward+backward" if rep.backward else "forward"
    out = [f"{rep.function}  [{where}, {rep.dtype}, {mode}]  dims: {dims}"]
    if rep.shape_ok:
        out.append(f"  shapes   ok      output {rep.output_shape}")
    else:
        out.append("  shapes   FAILED")
        out += [f"    {e}" for e in rep.shape_errors]
    static = f"{rep.flops_static:,}" if rep.flops_static is not None else "unknown"
    formula = (
        f" = {rep.static_formula}"
        if rep.static_formula and rep.static_formula != str(rep.flops_static)
        else ""
    )
    verdict = "ok     " if rep.flops_match else "MISMATCH"
    from shapelint.runtime import flops_comparison

    compared = flops_comparison(
        rep.flops_measured, rep.flops_adjusted, rep.adjusted_ops, static + formula
    )
    out.append(f"  flops    {verdict} {compared}")
    if not rep.flops_match and (rep.measured_forward or rep.measured_backward or rep.static_lines):
        for label, counts in (
            ("forward", rep.measured_forward),
            ("backward", rep.measured_backward),
        ):
            if counts:
                ops = ", ".join(f"{op} {n:,}" for op, n in sorted(counts.items()))
                out.append(f"    measured {label}: {ops}")
        if rep.static_lines:
            for s in rep.static_lines:
                val = f"{s.value:,}" if s.value is not None else "?"
                out.append(f"    static line {s.line}: {s.op}  {s.flops or '?'} = {val}")
        elif rep.flops_static is not None:
            out.append(
                "    static: no call in this function has a cost; the ops counted above "
                "are not described to the static analysis (a missing stub?)"
            )
    if rep.repeats:
        mfu = f"{rep.mfu:.1%}" if rep.mfu is not None else "n/a"
        out.append(
            f"  time     {_seconds(rep.seconds)} per call (median of {rep.repeats}), "
            f"{si(rep.flops_per_second, 'FLOP/s')}, MFU {mfu}"
        )
        mem = si(rep.peak_memory_bytes, "B") if rep.peak_memory_bytes is not None else "n/a"
        out.append(f"  memory   peak {mem}; static bytes moved {si(rep.bytes_static, 'B')}")
    out += [f"  note: {n}" for n in rep.notes]
    return "\n".join(out) + "\n"


@click.command(name="run")
@click.argument("target")
@click.option(
    "--dim",
    "dims",
    multiple=True,
    help="Bind a dimension: NAME=INT (repeatable or comma-separated); a variadic *NAME may take NAME=2x3.",
)
@click.option(
    "--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True
)
@click.option(
    "--dtype",
    type=click.Choice(DTYPE_CHOICES),
    default="fp32",
    show_default=True,
    help="dtype of synthesized float inputs (and of nn.Module parameters).",
)
@click.option(
    "--backward",
    is_flag=True,
    help="Also run and count the backward pass (of the sum of the outputs); with "
    "PATH::Class and --input, compared with the static flops_backward.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--warmup",
    type=click.IntRange(min=0),
    default=2,
    show_default=True,
    help="Untimed calls before timing.",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=None,
    help="Timed calls (default: as many as fit in 0.2 s, at most 50).",
)
@click.option(
    "--hardware",
    default=None,
    help="Chip of the hardware table to compute MFU against, when the GPU is not recognised.",
)
@click.option(
    "--init",
    "init",
    multiple=True,
    metavar="NAME=VALUE",
    help="With PATH::Class: build the module with this constructor argument (as `cost` reads it).",
)
@click.option(
    "--input",
    "inputs",
    multiple=True,
    metavar="PARAM=D1,D2,...[:int]",
    help=(
        "With PATH::QUALNAME: the shape of a forward argument (`:int` for token ids; "
        "a parameter annotated Int[...] or Bool[...] takes that dtype without it)."
    ),
)
@click.option(
    "--symbolic",
    is_flag=True,
    help=(
        "With PATH::Class and --input: confirm for all sizes (FakeTensorMode with a "
        "ShapeEnv; --dim sizes become the hints torch runs with). Implied when an "
        "--input size has no --dim."
    ),
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False),
    help="pyproject.toml to read [tool.shapelint] from (dims, stubs).",
)
def run(
    target,
    dims,
    device,
    dtype,
    backward,
    fmt,
    warmup,
    repeat,
    hardware,
    init,
    inputs,
    symbolic,
    config_path,
):
    """Run annotated functions and confirm their shapes and FLOPs.

    TARGET is PATH::FUNCTION (also PATH::Class for an nn.Module's forward, or
    PATH::Class.method), or PATH for every function whose inputs can be built.

    WARNING: unlike every other shapelint command, this one IMPORTS AND EXECUTES
    the code in PATH (module level included). Run it only on code you trust.

    Inputs are synthesized from the jaxtyping annotations and --dim sizes (floats
    for Float, integers for Int; a variadic dim gets --dim or one axis of 2; other
    parameters keep their defaults). Shapes are judged by jaxtyping's checker on
    every annotated argument, return value and annotated assignment; FLOPs by
    torch.utils.flop_counter, compared with the static formula at the same sizes.

    With PATH::Class and an --input size left as a name (`--input idx=B,T:int`),
    the module is built under torch's FakeTensorMode with a ShapeEnv (fake
    parameters: no memory) and FlopCounterMode's count, a formula in those names,
    is compared with the static formula term by term, as are the parameters (fake
    CPU tensors; `--device cuda`: fake CUDA tensors, torch's CUDA kernels, which
    can fix a size to its hint).

    Exit 0 when everything is confirmed, 1 when a shape or a FLOP count
    disagrees, 2 for a usage error (bad target, import error, no such device).
    """
    try:
        bound, shapes = parse_dim_values(dims)
    except click.BadParameter as e:
        _usage(e.format_message())
    parsed = Target.parse(target)
    path = Path(parsed.path)
    cfg = load_config([path], config_path)
    all_dims = {k: v for k, v in cfg.dims.items() if isinstance(v, int)}
    all_dims.update(bound)
    try:
        from shapelint import runtime
    except ImportError as e:
        _usage(
            f"runtime mode needs torch, jaxtyping and einops (pip install 'shapelint[runtime]'): {e}"
        )
    if init or inputs:
        _run_module(
            parsed,
            init,
            inputs,
            all_dims,
            device,
            fmt,
            analysis_options(cfg, dims=all_dims),
            symbolic,
            backward,
        )
    opts = runtime.RunOptions(
        dims=all_dims,
        var_shapes=shapes,
        device=device,
        dtype=dtype,
        backward=backward,
        warmup=warmup,
        repeat=repeat,
        hardware=hardware,
        static=analysis_options(cfg, dims=all_dims),
    )
    try:
        file_path, name = runtime.parse_target(parsed)
        reports, skipped = runtime.run_target(file_path, name, opts)
    except runtime.RuntimeUsageError as e:
        _usage(str(e))
    for _qual, why in skipped:
        click.echo(f"shapelint: skipped {why}", err=True)
    if not reports:
        _usage(
            f"{path}: no function whose inputs can be synthesized"
            + (" (see above)" if skipped else "")
        )
    if fmt == "json":
        data = [r.to_json() for r in reports]
        click.echo(json.dumps(data[0] if name is not None else data, indent=2))
    else:
        click.echo("\n".join(render_text(r) for r in reports), nl=False)
    sys.exit(0 if all(r.confirmed for r in reports) else 1)


def _run_module(
    target, init, inputs, dims, device, fmt, static_options, symbolic, backward
) -> None:
    """`run PATH::QUALNAME --init ... --input ...`: one forward of the module built
    with those arguments, against `cost` with the same arguments; symbolic: with the
    input's sizes left as names, under FakeTensorMode (dims are the hints); exits."""
    from shapelint import runtime
    from shapelint.analysis.target import TargetError, parse_assignments
    from shapelint.runtime import modules
    from shapelint.runtime import symbolic as sym

    if not target.qualname:
        _usage(f"{str(target)!r}: --init and --input need PATH::QUALNAME")
    init, inputs = parse_assignments(init, "--init"), parse_assignments(inputs, "--input")
    path = Path(target.path)
    try:
        if symbolic or any(n not in dims for n in sym.symbolic_names(inputs)):
            # Fake tensors need no GPU, and on fake CUDA tensors torch 2.11 fixes the
            # batch to its hint (a guard from a CUDA fake kernel, seen on an H200): a
            # count for one batch size. CPU unless --device cuda asks for the kernels.
            device = runtime.resolve_device("cpu" if device == "auto" else device)
            rep = sym.run_symbolic(
                path, target.qualname, init, inputs, dims, static_options, device, backward
            )
            render = sym.render
        else:
            device = runtime.resolve_device(device)
            rep = modules.run_module(
                path, target.qualname, init, inputs, dims, device, static_options, backward
            )
            render = modules.render
    except modules.ForwardRaised as e:
        click.echo(f"shapelint: error: {e}", err=True)
        sys.exit(1)
    except (runtime.RuntimeUsageError, TargetError) as e:
        _usage(str(e))
    if fmt == "json":
        click.echo(json.dumps(rep.to_json(), indent=2))
    else:
        click.echo(render(rep), nl=False)
    sys.exit(0 if rep.confirmed else 1)


def _usage(message: str):
    click.echo(f"shapelint: error: {message}", err=True)
    sys.exit(2)
