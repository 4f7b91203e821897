"""`shapelint run PATH::Class --input idx=B,T:int` with sizes left as names: torch's
own count for every size at once, against the static formula.

The module is built and run under torch's FakeTensorMode with a ShapeEnv: its
parameters are fake (no memory, so a model of any size builds), and each input
size the user names is one symbol of the ShapeEnv. FlopCounterMode then counts a
polynomial in those symbols; both it and the static formula are expanded and
compared term by term (sympy, which torch brings). With a CUDA device the fake
tensors are CUDA tensors, so torch dispatches attention to the kernels it runs there
and counts them itself (on CPU it registers 0 for them: gap_formulas). Torch decides each branch on
the size it hints with and records the condition as a guard: the count holds
where the guards hold, and the report lists them.

This imports and runs the user's code: only `shapelint run` gets here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import sympy
import torch

from shapelint.runtime import RuntimeUsageError, gap_formulas

# Sizes torch runs with while it counts, where --dim gives none: distinct (torch
# would tell equal ones apart only by a guard), above 1 (torch specialises 0 and 1)
# and multiples of 16, so that a patch or head split divides them.
DEFAULT_HINTS = (32, 48, 64, 80, 96, 112, 128, 144)


@dataclass
class SymbolicReport:
    target: str
    hints: dict[str, int]
    device: str = "cpu"  # the fake tensors' device
    device_name: str = "cpu"
    torch_flops: str = "?"  # FlopCounterMode's count, as it counts
    adjusted_flops: str = "?"  # with gap_formulas for the kernels it registers as 0
    adjusted_ops: dict[str, str] = field(default_factory=dict)
    static_flops: str = "?"
    static_complete: bool = False
    flops_verdict: str = "?"  # agree, differ, undecided, static incomplete
    difference: str | None = None  # adjusted - static, where they differ
    params_torch: list[str] = field(default_factory=list)  # params, trainable, buffers
    params_static: list[str] = field(default_factory=list)
    params_verdict: str = "?"
    output_torch: list[str] | None = None
    output_static: list[str] | None = None
    output_verdict: str = "?"
    guards: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # `--backward`: FlopCounterMode under the backward of the loss (modules.count_backward),
    # as it counts and adjusted, against the static flops_backward; verdict "-": not asked
    backward_torch: str = "?"
    backward_adjusted: str = "?"
    backward_adjusted_ops: dict[str, str] = field(default_factory=dict)
    backward_static: str = "?"
    backward_static_complete: bool = False
    backward_verdict: str = "-"
    backward_difference: str | None = None

    @property
    def confirmed(self) -> bool:
        # "-": no parameters (a function), no backward asked; shape "?": no static
        # shape to compare with
        return (
            self.flops_verdict == "agree"
            and self.params_verdict in ("agree", "-")
            and self.output_verdict in ("agree", "?")
            and self.backward_verdict in ("agree", "-")
        )

    def to_json(self) -> dict:
        return {
            "target": self.target,
            "mode": "symbolic",
            "device": self.device,
            "device_name": self.device_name,
            "hints": self.hints,
            "flops_torch": self.torch_flops,
            "flops_adjusted": self.adjusted_flops,
            "adjusted_ops": self.adjusted_ops,
            "flops_static": self.static_flops,
            "static_complete": self.static_complete,
            "flops_verdict": self.flops_verdict,
            "flops_difference": self.difference,
            "params_torch": self.params_torch,
            "params_static": self.params_static,
            "params_verdict": self.params_verdict,
            "output_shape": self.output_torch,
            "static_output_shape": self.output_static,
            "shape_verdict": self.output_verdict,
            "guards": self.guards,
            "confirmed": self.confirmed,
            "notes": self.notes,
        } | (
            {
                "backward_torch": self.backward_torch,
                "backward_adjusted": self.backward_adjusted,
                "backward_adjusted_ops": self.backward_adjusted_ops,
                "backward_static": self.backward_static,
                "backward_static_complete": self.backward_static_complete,
                "backward_verdict": self.backward_verdict,
                "backward_difference": self.backward_difference,
            }
            if self.backward_verdict != "-"
            else {}
        )


def symbolic_names(inputs: dict[str, str]) -> list[str]:
    """The size names of the --input shapes, in order of first use."""
    names: list[str] = []
    for text in inputs.values():
        for part in text.partition(":")[0].split(","):
            part = part.strip()
            if part and not part.isdigit() and part not in names:
                names.append(part)
    return names


def run_symbolic(
    path: Path,
    qualname: str,
    init: dict[str, str],
    inputs: dict[str, str],
    hints: dict[str, int],
    static_options=None,
    device: torch.device | None = None,
    backward: bool = False,
) -> SymbolicReport:
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    from shapelint.runtime import device_name
    from shapelint.runtime.modules import (
        build_inputs,
        build_module,
        count_backward,
        count_forward,
        import_file,
        static_target,
    )

    names = symbolic_names(inputs)
    free = [n for n in names if n not in hints]
    chosen = dict(zip(free, DEFAULT_HINTS, strict=False))
    if len(chosen) < len(free):
        raise RuntimeUsageError(f"too many sizes without a hint: give --dim for {free[-1]}")
    chosen.update({n: hints[n] for n in names if n in hints})
    for n, v in chosen.items():
        if v < 2:
            raise RuntimeUsageError(
                f"--dim {n}={v}: a size torch runs a symbolic count at must be at least 2 "
                "(it specialises 0 and 1)"
            )
    # No dims: the static figures stay formulas in the input's names.
    static = static_target(path, qualname, init, inputs, {}, static_options)
    device = device or torch.device("cpu")
    rep = SymbolicReport(f"{path}::{qualname}", chosen, str(device), device_name(device))
    rep.static_flops = static["flops"] or "?"
    rep.static_complete = static["complete"]
    module = import_file(path)
    env = ShapeEnv()
    user = {n: sympy.Symbol(n, integer=True, positive=True) for n in names}
    # The device as the default of every factory call (the parameters, the inputs, a
    # mask built in forward): fake CUDA tensors take up no GPU memory either.
    with FakeTensorMode(shape_env=env, allow_non_fake_inputs=True), torch.device(device):
        sizes = {n: _symint(env, n, chosen[n]) for n in names}
        symbols = {s.node.expr: user[n] for n, s in sizes.items()}
        inst, call = build_module(module, qualname, init, None)
        args = build_inputs(inputs, static["input_dtypes"], lambda t, w: _shape(t, sizes))
        try:
            fc, out = count_forward(call, args)
            counts = fc.get_flop_counts().get("Global", {})
            back = (
                count_backward(call, args).get_flop_counts().get("Global", {}) if backward else {}
            )
        except Exception as e:  # noqa: BLE001
            raise RuntimeUsageError(
                f"{qualname} raised {type(e).__name__}: {e} (under FakeTensorMode with sizes "
                + ", ".join(f"{n}={v}" for n, v in chosen.items())
                + "; other sizes can be given as --dim NAME=N)"
            ) from None
        params = _params(inst) if isinstance(inst, torch.nn.Module) else None

    def sym(x) -> sympy.Expr:
        e = x.node.expr if isinstance(x, torch.SymInt) else sympy.Integer(int(x))
        return env.simplify(e).xreplace(symbols)

    gaps = {str(op) for op in gap_formulas()}

    def split(counted: dict, adjusted_ops: dict) -> tuple[sympy.Expr, sympy.Expr]:
        """(torch's own total, the total with gap_formulas), the gap ops into adjusted_ops."""
        torch_total, adjusted = sympy.Integer(0), sympy.Integer(0)
        for op, n in counted.items():
            e = sym(n)
            adjusted += e
            if str(op) in gaps:
                adjusted_ops[str(op)] = show(e)
            else:
                torch_total += e
        return torch_total, adjusted

    torch_total, adjusted = split(counts, rep.adjusted_ops)
    rep.torch_flops, rep.adjusted_flops = show(torch_total), show(adjusted)
    if rep.adjusted_ops or static.get("conventions"):
        from shapelint.report.conventions import FUSED_ATTENTION

        rep.notes.append(FUSED_ATTENTION)
    # A size torch fixed to its hint (a check equal to it, `T == block_size`): what it
    # counted holds at that size only.
    fixed = {n: env.simplify(s.node.expr) for n, s in sizes.items()}
    fixed = {n: int(v) for n, v in fixed.items() if v.is_number}
    if fixed:
        rep.flops_verdict = "specialised"
        rep.notes.append(
            "torch fixed "
            + ", ".join(f"{n} to {v}" for n, v in fixed.items())
            + " (a branch or check on it at this size): its count holds there only; "
            "give other sizes with --dim NAME=N"
        )
    elif not rep.static_complete:
        rep.flops_verdict = "static incomplete"
        rep.notes.append(
            "static figure incomplete: "
            + "; ".join(f"line {u['line']} {u['op']}" for u in static["unknown"][:5])
        )
    else:
        rep.flops_verdict, diff = compare(adjusted, static["flops"], user)
        rep.difference = None if diff is None else show(diff)
    if backward:
        torch_back, adjusted_back = split(back, rep.backward_adjusted_ops)
        rep.backward_torch, rep.backward_adjusted = show(torch_back), show(adjusted_back)
        rep.backward_static = static.get("flops_backward") or "?"
        rep.backward_static_complete = bool(static.get("backward_complete"))
        if fixed:
            rep.backward_verdict = "specialised"
        elif not rep.backward_static_complete:
            rep.backward_verdict = "static incomplete"
        else:
            rep.backward_verdict, diff = compare(adjusted_back, rep.backward_static, user)
            rep.backward_difference = None if diff is None else show(diff)
    if params is not None:
        rep.params_torch = [show(sym(n)) for n in params]
        keys = ("params", "trainable_params", "buffers")
        given = [static.get(k) for k in keys]
        rep.params_static = [g if g is not None else "?" for g in given]
        verdicts = [
            compare(sym(n), g, user)[0] if g not in (None, "?") else "?"
            for n, g in zip(params, given, strict=True)
        ]
        rep.params_verdict = _all(verdicts)
    else:
        rep.params_verdict = "-"
    first = out[0] if isinstance(out, (tuple, list)) and out else out
    if isinstance(first, torch.Tensor):
        rep.output_torch = [show(sym(d)) for d in first.shape]
        rep.output_static = static.get("output")
        if rep.output_static is None or any(d is None for d in rep.output_static):
            rep.output_verdict = "?"
        elif len(rep.output_static) != len(first.shape):
            rep.output_verdict = "differ"
        else:
            rep.output_verdict = _all(
                [compare(sym(d), s, user)[0] for d, s in zip(first.shape, rep.output_static)]
            )
    guards = (env.simplify(g.expr).xreplace(symbols) for g in env.guards)
    rep.guards = list(dict.fromkeys(_guard(g) for g in guards if g is not sympy.true))
    if fixed:
        rep.output_verdict = "specialised" if rep.output_torch is not None else "?"
    return rep


def _symint(env, name: str, hint: int):
    from torch._dynamo.source import ConstantSource
    from torch.fx.experimental.symbolic_shapes import DimDynamic

    source = ConstantSource(name)
    s = env.create_symbol(hint, source=source, dynamic_dim=DimDynamic.DYNAMIC)
    return env.create_symintnode(s, hint=hint, source=source)


def _shape(text: str, sizes: dict) -> tuple:
    out = []
    for part in text.partition(":")[0].split(","):
        part = part.strip()
        out.append(int(part) if part.isdigit() else sizes[part])
    return tuple(out)


def _params(m) -> tuple:
    return (
        sum(p.numel() for p in m.parameters()),
        sum(p.numel() for p in m.parameters() if p.requires_grad),
        sum(b.numel() for b in m.buffers()),
    )


def compare(
    torch_expr: sympy.Expr, static: str | None, user: dict
) -> tuple[str, sympy.Expr | None]:
    """(verdict, torch - static where they differ): agree when the expanded
    difference is 0; differ when it is a nonzero polynomial, or nonzero at one of a
    few sizes; undecided when floors leave it unproven and every size tried agrees."""
    if static is None or static == "?":
        return "?", None
    try:
        st = sympy.sympify(static, locals=dict(user))
    except (sympy.SympifyError, SyntaxError, TypeError):
        return "?", None
    diff = sympy.expand(torch_expr - st)
    if diff == 0:
        return "agree", None
    free = sorted(diff.free_symbols, key=str)
    if diff.is_polynomial(*free):
        return "differ", diff
    for k in range(1, 6):
        point = {s: 16 * k + i for i, s in enumerate(free)}
        if diff.xreplace(point) != 0:
            return "differ", diff
    return "undecided", diff


def show(e: sympy.Expr) -> str:
    """e expanded, as a Python expression (`36864*B*T**2`), the form json carries
    and shapelint's formulas read back; render() prints it for people."""
    return str(sympy.expand(e))


_RELATIONS = {"<=": "≤", ">=": "≥", "!=": "≠", "==": "=", "<": "<", ">": ">"}


def _guard(e) -> str:
    """A guard as the report prints it: `T ≤ 1024`."""
    if isinstance(e, sympy.core.relational.Relational) and e.rel_op in _RELATIONS:
        lhs, rhs = (_human(show(x), grouped=False) for x in (e.lhs, e.rhs))
        return f"{lhs} {_RELATIONS[e.rel_op]} {rhs}"
    return str(e)


def _all(verdicts: list[str]) -> str:
    for v in ("differ", "?", "undecided"):
        if v in verdicts:
            return v
    return "agree"


def render(rep: SymbolicReport) -> str:
    hints = ", ".join(f"{n}={v}" for n, v in rep.hints.items())
    where = "" if rep.device == "cpu" else f" on {rep.device} ({rep.device_name})"
    mode = "forward" if rep.backward_verdict == "-" else "forward+backward"
    out = [f"{rep.target}  [symbolic, FakeTensorMode{where}, {mode}]  sizes {hints} as hints"]
    out.append(f"  flops    {rep.flops_verdict}")
    out += _counted_lines(
        rep.torch_flops,
        rep.adjusted_flops,
        rep.adjusted_ops,
        rep.static_flops,
        rep.static_complete,
        rep.difference,
    )
    if rep.backward_verdict != "-":
        out.append(f"  backward {rep.backward_verdict}")
        out += _counted_lines(
            rep.backward_torch,
            rep.backward_adjusted,
            rep.backward_adjusted_ops,
            rep.backward_static,
            rep.backward_static_complete,
            rep.backward_difference,
        )
    if rep.params_torch:
        out.append(f"  params   {rep.params_verdict}")
        for label, t, s in zip(
            ("params", "trainable", "buffers"), rep.params_torch, rep.params_static, strict=True
        ):
            out.append(f"    {label:<9} torch {_human(t)}, static {_human(s)}")
    if rep.output_torch is not None:
        static = "?" if rep.output_static is None else _shape_text(rep.output_static)
        out.append(
            f"  shapes   {rep.output_verdict}  output {_shape_text(rep.output_torch)}, "
            f"static {static}"
        )
    if rep.guards:
        out.append(f"  holds where {', '.join(rep.guards)} (torch's guards)")
    out += [f"  note: {n}" for n in rep.notes]
    return "\n".join(out) + "\n"


def _counted_lines(
    torch_count: str,
    adjusted: str,
    adjusted_ops: dict,
    static: str,
    complete: bool,
    difference: str | None,
) -> list[str]:
    """torch's count, the adjusted one where a gap op counted, the static one (a
    lower bound where incomplete), the difference."""
    out = [f"    FlopCounterMode  {_human(torch_count)}"]
    if adjusted_ops:
        ops = ", ".join(op.removeprefix("aten.") for op in sorted(adjusted_ops))
        out.append(f"    adjusted         {_human(adjusted)}  (+ {ops} by torch's CUDA formula)")
    prefix = "≥ " if not complete and static != "?" else ""
    out.append(f"    static           {prefix}{_human(static)}")
    if difference is not None:
        out.append(f"    difference       {_human(difference)} (torch - static)")
    return out


def _human(text: str | None, grouped: bool = True) -> str:
    """A formula's text for people; a number with its thousands grouped (a count of
    parameters), or not (a size)."""
    from shapelint.notation.symbolic import parse_expr

    if text is None or text == "?":
        return "?"
    if text.isdigit():
        return f"{int(text):,}" if grouped else text
    try:
        return parse_expr(text).to_human()
    except (ValueError, SyntaxError, KeyError, TypeError):
        return text


def _shape_text(dims: list) -> str:
    return "[" + ", ".join(_human(d, grouped=False) for d in dims) + "]"
