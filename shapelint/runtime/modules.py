"""`shapelint run PATH::QUALNAME --init ... --input ...`: build the module, run
one forward under FlopCounterMode (on the GPU when there is one), and confirm the
static target figure (`cost PATH::QUALNAME` with the same arguments) and the
output shape. A file inside a package is imported as part of its package, so
its relative imports work.

This imports and runs the user's code: only `shapelint run` gets here.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from shapelint import pyparse
from shapelint.runtime import (
    RuntimeUsageError,
    device_name,
    flops_comparison,
    gap_formulas,
    split_counts,
)


class ForwardRaised(RuntimeUsageError):
    """The forward raised where the static target said it would: exit 1, as `cost`."""


def _describe(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


@dataclass
class ModuleRunReport:
    target: str
    device: str
    device_name: str
    flops_measured: int = 0  # torch's FlopCounterMode, as it counts
    flops_adjusted: int = 0  # with gap_formulas for the kernels it registers as 0
    adjusted_ops: dict[str, int] = field(default_factory=dict)
    flops_static: int | None = None
    static_formula: str | None = None
    static_complete: bool = False
    unknown: list[dict] = field(default_factory=list)
    output_shape: list | None = None
    static_output: list | None = None
    measured: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # (params, trainable, buffers): torch's, and the static figures at the dims
    # (None: not known statically, then not compared)
    params_measured: tuple[int, int, int] = (0, 0, 0)
    params_static: tuple[int | None, int | None, int | None] = (None, None, None)
    # What the static target found on its path (the objects `check --format json`
    # prints, with their call path): errors, a forward that would raise.
    diagnostics: list[dict] = field(default_factory=list)
    # Errors it found on one of alternatives it could not decide (warnings, each with
    # its condition): the forward raises where that alternative runs.
    conditional: list[dict] = field(default_factory=list)
    # `--backward`: FlopCounterMode under the backward of the sum of the returned
    # tensors that require grad (the static side's loss), torch's and adjusted,
    # against the static flops_backward (None: not known, or not asked)
    backward: bool = False
    backward_measured: int = 0
    backward_adjusted: int = 0
    backward_adjusted_ops: dict[str, int] = field(default_factory=dict)
    backward_static: int | None = None
    backward_formula: str | None = None
    # the static figure counts a grouped conv's real backward, which torch's
    # counter counts as if groups were 1 (docs/costs.md)
    backward_grouped: bool = False

    @property
    def flops_match(self) -> bool:
        return self.flops_static is not None and self.flops_static == self.flops_adjusted

    @property
    def shape_match(self) -> bool:
        if self.static_output is None:
            return True  # nothing static to compare with (said in the notes)
        return self.static_output == self.output_shape

    @property
    def params_match(self) -> bool:
        """torch's counts equal the static ones, where the static ones are known."""
        return all(
            st is None or st == measured
            for st, measured in zip(self.params_static, self.params_measured, strict=True)
        )

    @property
    def backward_verdict(self) -> str:
        """agree; grouped (less than torch's count, which the static side says
        counts a grouped conv's backward as if groups were 1); differ; ? (the
        static backward not known); - (not asked)."""
        if not self.backward:
            return "-"
        if self.backward_static is None:
            return "?"
        if self.backward_static == self.backward_adjusted:
            return "agree"
        grouped = self.backward_grouped and self.backward_static < self.backward_adjusted
        return "grouped" if grouped else "differ"

    @property
    def confirmed(self) -> bool:
        backward_ok = self.backward_verdict in ("-", "agree", "grouped")
        return self.flops_match and self.shape_match and self.params_match and backward_ok

    def to_json(self) -> dict:
        return {
            "target": self.target,
            "device": self.device,
            "device_name": self.device_name,
            "flops_measured": self.flops_measured,
            "flops_adjusted": self.flops_adjusted,
            "adjusted_ops": self.adjusted_ops,
            "flops_static": self.flops_static,
            "static_formula": self.static_formula,
            "static_complete": self.static_complete,
            "unknown": self.unknown,
            "flops_match": self.flops_match,
            "output_shape": self.output_shape,
            "static_output_shape": self.static_output,
            "shape_match": self.shape_match,
            "measured": self.measured,
            "params_measured": list(self.params_measured),
            "params_static": list(self.params_static),
            "params_match": self.params_match,
            "confirmed": self.confirmed,
            "notes": self.notes,
            "diagnostics": self.diagnostics,
            "conditional": self.conditional,
        } | (
            {
                "backward_measured": self.backward_measured,
                "backward_adjusted": self.backward_adjusted,
                "backward_adjusted_ops": self.backward_adjusted_ops,
                "backward_static": self.backward_static,
                "backward_formula": self.backward_formula,
                "backward_verdict": self.backward_verdict,
            }
            if self.backward
            else {}
        )


def import_file(path: Path):
    """The module object of path: imported by its package name when it sits in a
    package (relative imports work), else loaded on its own."""
    with pyparse.escaped_warnings():
        return _import_file(path)


def _import_file(path: Path):
    from shapelint.analysis.project import module_name

    root, modname = module_name(str(path))
    try:
        if root is not None and modname is not None:
            if root not in sys.path:
                sys.path.insert(0, root)
            try:
                return importlib.import_module(modname)
            except ImportError:
                # The package's __init__ needs what is not installed (vit_pytorch's
                # wants torchvision): its packages as bare namespaces, so the
                # file's own relative imports still resolve.
                _bare_parents(root, modname)
                return importlib.import_module(modname)
        folder = str(path.resolve().parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        name = f"_shapelint_module_{abs(hash(str(path.resolve())))}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise RuntimeUsageError(f"{path}: cannot import")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look modules up
        spec.loader.exec_module(module)
        return module
    except RuntimeUsageError:
        raise
    except BaseException as e:  # noqa: BLE001 - the user's import failing is a usage error
        if isinstance(e, KeyboardInterrupt):
            raise
        raise RuntimeUsageError(f"importing {path} failed: {_describe(e)}") from None


def _bare_parents(root: str, modname: str) -> None:
    import types

    parts = modname.split(".")
    for name in list(sys.modules):
        if name == parts[0] or name.startswith(parts[0] + "."):
            del sys.modules[name]  # half-imported by the failed attempt
    for i in range(1, len(parts)):
        name = ".".join(parts[:i])
        pkg = types.ModuleType(name)
        pkg.__path__ = [str(Path(root, *parts[:i]))]
        sys.modules[name] = pkg


def _value(text: str, namespace: dict) -> Any:
    """An --init VALUE at run time: the same restricted expression the static side
    reads (analysis/target.parse_value), built with the module's own classes."""
    from shapelint.analysis.target import TargetError, parse_value

    try:
        expr = parse_value(text, "--init")
    except TargetError as e:
        raise RuntimeUsageError(str(e)) from None
    code, _ = pyparse.compile_caught(ast.Expression(expr), "<--init>", "eval")
    try:
        return eval(code, {"__builtins__": {}}, namespace)  # noqa: S307 - run mode runs user code
    except Exception as e:  # noqa: BLE001
        raise RuntimeUsageError(f"--init {text!r}: {type(e).__name__}: {e}") from None


def _sizes(text: str, dims: dict[str, int], what: str) -> tuple[int, ...]:
    out = []
    for part in text.partition(":")[0].split(","):
        part = part.strip()
        if part.isdigit():
            out.append(int(part))
        elif part in dims:
            out.append(dims[part])
        else:
            raise RuntimeUsageError(f"{what}: dimension {part!r} needs a size (--dim {part}=N)")
    return tuple(out)


def build_inputs(inputs: dict[str, str], dtypes: dict, shape) -> dict:
    """The forward's arguments: shape(text, what) gives each one's sizes. The static
    side says each input's dtype (`:int`, or what its annotation admits): token ids
    are zeros, a valid index of any embedding; a Bool[...] mask is all True; the rest
    random floats."""
    args = {}
    for k, v in inputs.items():
        size, dtype = shape(v, f"--input {k}"), dtypes.get(k)
        if dtype == "bool":
            args[k] = torch.ones(size, dtype=torch.bool)
        elif dtype is not None:
            args[k] = torch.zeros(size, dtype=getattr(torch, dtype))
        else:
            args[k] = torch.randn(size)
    return args


def build_module(module, qualname: str, init: dict[str, str], device):
    """(the instance or None, what to call) for PATH::QUALNAME: the class built with
    the --init values (as the static side reads them), in eval mode on device."""
    cls_name, _, meth = qualname.partition(".")
    obj = getattr(module, cls_name, None)
    if obj is None:
        raise RuntimeUsageError(f"{module.__file__}: {cls_name} is not defined once imported")
    try:
        kwargs = {k: _value(v, vars(module)) for k, v in init.items()}
        if not isinstance(obj, type):
            return None, obj
        inst = obj(**kwargs)
        if isinstance(inst, torch.nn.Module):
            # device None: built under FakeTensorMode, where there is nothing to move
            inst = (inst if device is None else inst.to(device)).eval()
        return inst, getattr(inst, meth) if meth else inst
    except RuntimeUsageError:
        raise
    except Exception as e:  # noqa: BLE001
        raise RuntimeUsageError(f"building {cls_name} raised {_describe(e)}") from None


def static_target(path: Path, qualname: str, init, inputs, dims: dict[str, int], options) -> dict:
    """`cost PATH::QUALNAME --eval` with the same arguments, as json (build_module runs
    the module in eval mode); a refusal is a usage error."""
    from shapelint.analysis.target import TargetError
    from shapelint.cost.target import target_report

    try:
        text = path.read_text(encoding="utf-8")
        return target_report(str(path), text, qualname, init, inputs, dims, options, training=False)
    except TargetError as e:
        raise RuntimeUsageError(str(e)) from None
    except OSError as e:
        raise RuntimeUsageError(f"{path}: cannot read: {e.strerror}") from None


def run_module(
    path: Path,
    qualname: str,
    init: dict[str, str],
    inputs: dict[str, str],
    dims: dict[str, int],
    device: torch.device,
    static_options=None,
    backward: bool = False,
) -> ModuleRunReport:
    static = static_target(path, qualname, init, inputs, dims, static_options)
    rep = ModuleRunReport(f"{path}::{qualname}", str(device), device_name(device))
    rep.backward = backward
    rep.flops_static = static["flops_value"]
    rep.static_formula = static["flops"]
    rep.static_complete = static["complete"]
    rep.unknown = static["unknown"]
    rep.static_output = _static_output(static, dims)
    rep.diagnostics = static["diagnostics"]
    rep.conditional = static.get("conditional", [])
    module = import_file(path)
    torch.manual_seed(0)
    with torch.device(device):
        args = build_inputs(inputs, static["input_dtypes"], lambda t, w: _sizes(t, dims, w))
        inst, call = build_module(module, qualname, init, device)
        if isinstance(inst, torch.nn.Module):
            rep.params_measured = _torch_params(inst)
            rep.params_static = tuple(  # type: ignore[assignment]
                static.get(f"{k}_value") if static.get(k, "?") != "?" else None
                for k in ("params", "trainable_params", "buffers")
            )
        try:
            fc, out = count_forward(call, args)
        except Exception as e:  # noqa: BLE001
            message = f"{qualname} raised {_describe(e)}"
            if rep.diagnostics:  # foreseen: a finding of the run, not a usage error
                raise ForwardRaised(message + _static_errors(rep.diagnostics)) from None
            if rep.conditional:  # foreseen where torch took that alternative
                found = _static_errors(rep.conditional, "on an alternative it could not decide")
                raise ForwardRaised(message + found) from None
            raise RuntimeUsageError(message) from None
        if backward:
            torch.manual_seed(0)
            back = counts(count_backward(call, args))
            rep.backward_measured, rep.backward_adjusted, rep.backward_adjusted_ops = split_counts(
                back
            )
            if static.get("backward_complete"):
                rep.backward_static = static.get("flops_backward_value")
            rep.backward_formula = static.get("flops_backward")
            rep.backward_grouped = any(
                c["name"] == "grouped_conv_backward" for c in static.get("conventions") or ()
            )
    glob = fc.get_flop_counts().get("Global", {})
    rep.measured = {str(op): int(n) for op, n in glob.items() if n}
    rep.flops_measured, rep.flops_adjusted, rep.adjusted_ops = split_counts(rep.measured)
    first = out[0] if isinstance(out, (tuple, list)) and out else out
    if isinstance(first, torch.Tensor):
        rep.output_shape = list(first.shape)
    if rep.adjusted_ops or any(
        c["name"] == "fused_attention" for c in static.get("conventions") or ()
    ):
        from shapelint.report.conventions import FUSED_ATTENTION

        rep.notes.append(FUSED_ATTENTION)
    if not rep.static_complete:
        rep.notes.append(
            "static figure incomplete: "
            + "; ".join(f"line {u['line']} {u['op']}" for u in rep.unknown[:5])
        )
    if rep.static_output is None:
        rep.notes.append("no static output shape to compare with")
    return rep


def _torch_params(m) -> tuple[int, int, int]:
    return (
        sum(p.numel() for p in m.parameters()),
        sum(p.numel() for p in m.parameters() if p.requires_grad),
        sum(b.numel() for b in m.buffers()),
    )


def _static_output(static: dict, dims: dict[str, int]) -> list | None:
    shape = static.get("output")
    if not shape or any(d is None for d in shape):
        return None
    from shapelint.notation.symbolic import parse_expr

    try:
        return [parse_expr(d).evaluate(dims) for d in shape]
    except (KeyError, ValueError, ZeroDivisionError):
        return None


def render(rep: ModuleRunReport) -> str:
    where = rep.device if rep.device == "cpu" else f"{rep.device} ({rep.device_name})"
    out = [f"{rep.target}  [{where}, {'forward+backward' if rep.backward else 'forward'}]"]
    verdict = "ok     " if rep.flops_match else "MISMATCH"
    static = f"{rep.flops_static:,}" if rep.flops_static is not None else "unknown"
    compared = flops_comparison(rep.flops_measured, rep.flops_adjusted, rep.adjusted_ops, static)
    out.append(f"  flops    {verdict} {compared}")
    if not rep.flops_match:
        ops = ", ".join(f"{op} {n:,}" for op, n in sorted(rep.measured.items()))
        out.append(f"    measured: {ops or 'nothing'}")
    shape = "ok     " if rep.shape_match else "MISMATCH"
    out.append(f"  shapes   {shape} output {rep.output_shape}, static {rep.static_output}")
    if any(rep.params_measured):
        verdict = "ok     " if rep.params_match else "MISMATCH"
        shown = ", ".join(
            f"{label} {m:,}" + ("" if st == m else f" (static {'?' if st is None else f'{st:,}'})")
            for label, m, st in zip(
                ("params", "trainable", "buffers"), rep.params_measured, rep.params_static
            )
        )
        out.append(f"  params   {verdict} {shown}")
    if rep.backward:
        out.append(_backward_line(rep))
    out += [f"  note: {n}" for n in rep.notes]
    out += _static_errors(rep.diagnostics).splitlines()[1:]
    return "\n".join(out) + "\n"


def _backward_line(rep: ModuleRunReport) -> str:
    """torch's count of the backward beside the adjusted one and the static one."""
    verdict = {"agree": "ok     ", "grouped": "ok     ", "?": "unknown "}.get(
        rep.backward_verdict, "MISMATCH"
    )
    if rep.backward_static is not None:
        static = f"{rep.backward_static:,}"
    else:
        static = f"not known (≥ {rep.backward_formula})" if rep.backward_formula else "not known"
    compared = flops_comparison(
        rep.backward_measured, rep.backward_adjusted, rep.backward_adjusted_ops, static
    )
    line = f"  backward {verdict} {compared}"
    if rep.backward_verdict == "grouped":
        line += (
            "\n    torch's counter counts a grouped or depthwise conv's backward as if groups "
            "were 1; the static figure counts the real work"
        )
    return line


def _static_errors(diagnostics: list[dict], why: str = "the forward would raise") -> str:
    """The static target's errors, each with its call path, after a line break."""
    if not diagnostics:
        return ""
    lines = ["", f"  the static analysis found ({why}):"]
    for d in diagnostics:
        lines.append(f"    {d['path']}:{d['line']}:{d['column']}: {d['code']} {d['message']}")
        lines.append(f"      in {d['call_path']}")
    return "\n".join(lines)


def count_forward(call, args: dict):
    """(the FlopCounterMode, the output) of one call, gap_formulas counted."""
    try:
        return _counted(call, args, grad=False)
    except AssertionError as e:
        if "gradient function" not in str(e):
            raise
        # torch's module tracker (inside FlopCounterMode) hooks the gradients of a
        # submodule's inputs and fails on some under no_grad; the forward's FLOPs
        # are the same with gradients on.
        return _counted(call, args, grad=True)


def counts(fc) -> dict[str, int]:
    """A FlopCounterMode's nonzero counts per op."""
    glob = fc.get_flop_counts().get("Global", {})
    return {str(op): n if isinstance(n, torch.SymInt) else int(n) for op, n in glob.items() if n}


def count_backward(call, args: dict):
    """The FlopCounterMode of the backward of one call's loss, as the static side
    takes it (analysis/reached.py) and the harness measures it: the sum of every
    floating tensor it returns that requires grad (in tuples, lists, dicts), the
    inputs needing none, the forward not counted; gap_formulas counted."""
    from torch.utils.flop_counter import FlopCounterMode

    with torch.enable_grad():
        out = call(**args)
        parts = [t.sum() for t in _grad_tensors(out)]
        fc = FlopCounterMode(display=False, custom_mapping=gap_formulas())
        if parts:
            with fc:
                sum(parts[1:], parts[0]).backward()
    return fc


def _grad_tensors(out, depth: int = 0) -> list:
    if isinstance(out, torch.Tensor):
        return [out] if out.requires_grad and out.is_floating_point() else []
    if depth > 4:
        return []
    if hasattr(out, "to_tuple"):  # a model output (transformers' ModelOutput)
        out = out.to_tuple()
    items = out.values() if isinstance(out, dict) else out if isinstance(out, (list, tuple)) else ()
    return [t for v in items for t in _grad_tensors(v, depth + 1)]


def _counted(call, args: dict, grad: bool):
    from torch.utils.flop_counter import FlopCounterMode

    with torch.set_grad_enabled(grad):
        with FlopCounterMode(display=False, custom_mapping=gap_formulas()) as fc:
            out = call(**args)
    return fc, out
