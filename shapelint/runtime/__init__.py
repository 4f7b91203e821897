"""Runtime mode: run annotated functions on synthesized inputs to confirm what
the static analysis claims.

The only module of shapelint that imports torch, and nothing static imports it.
It imports and executes the user's code (static mode never does).

For one function (or a method of a module-level class, instantiated first):

1. the static analysis of the file gives each parameter's abstract value
   (TensorV with symbolic dims, Var for ``*batch``, IntV for ``n: int``) and the
   function's symbolic FLOPs;
2. inputs are synthesized from those values and ``--dim`` sizes; the same
   binding evaluates the static formulas, so both sides talk about one size;
3. the call runs once under the shape checker (runtime/shapes.py: jaxtyping's
   verdict on every annotated argument, return and annotated assignment of every
   function of the module that runs);
4. once more under ``torch.utils.flop_counter.FlopCounterMode`` (with formulas for
   the kernels it does not count, see ``gap_formulas``), forward and backward
   counted apart;
5. then timed after warm-up (CUDA events on a GPU), with peak memory on a GPU and
   MFU against the hardware table when the chip is known.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib.util
import inspect
import itertools
import math
import re
import statistics
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from shapelint import pyparse
from shapelint.notation.target import Target
from shapelint.ops.dtypes import SHORT_NAMES
from shapelint.options import AnalysisOptions
from shapelint.runtime.shapes import (
    CHECK_NAME,
    ShapeChecker,
    array_members,
    instrument,
    parse_spec,
    resolve_hints,
)

DEFAULT_AXIS = 2  # size of each axis nobody named: '_', '...', a variadic dim without --dim
DTYPES = {short: getattr(torch, SHORT_NAMES[short]) for short in ("fp32", "bf16")}
TIME_TARGET_S = 0.2  # auto repeat: time calls until this much has run...
MAX_REPEAT = 50  # ...or this many calls

# Backward FLOPs per forward FLOP under torch's counter: a matmul's backward is two
# matmuls of the same size; SDPA's recomputes the scores and runs five (2.5x).
BACKWARD_FACTOR = 2.0
BACKWARD_FACTORS = {"scaled_dot_product_attention": 2.5}


class RuntimeUsageError(Exception):
    """A bad target, a file that does not import, a device that is not there: exit 2."""


class CannotSynthesize(Exception):
    """Inputs for a function cannot be built from its annotations and --dim."""


@dataclass
class RunOptions:
    dims: dict[str, int] = field(default_factory=dict)
    var_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # --dim batch=2x3
    device: str = "auto"
    dtype: str = "fp32"
    backward: bool = False
    warmup: int = 2
    repeat: int | None = None  # None: as many as fit in TIME_TARGET_S
    hardware: str | None = None  # chip name for MFU when the GPU is not recognised
    static: AnalysisOptions | None = None  # the static side's options (None: the defaults)


@dataclass
class StaticLine:
    line: int
    op: str
    flops: str | None  # human-readable formula
    value: int | None


@dataclass
class RunReport:
    function: str
    device: str
    dims: dict[str, int]
    shape_ok: bool = True
    shape_errors: list[str] = field(default_factory=list)
    output_shape: list = field(default_factory=list)
    flops_measured: int = 0  # torch's FlopCounterMode, as it counts
    flops_adjusted: int = 0  # with gap_formulas for the kernels it registers as 0
    adjusted_ops: dict[str, int] = field(default_factory=dict)
    flops_static: int | None = None
    flops_match: bool = False
    seconds: float = 0.0
    flops_per_second: float = 0.0
    mfu: float | None = None
    peak_memory_bytes: int | None = None
    # For the text report (the json keys above are the contract).
    dtype: str = "fp32"
    device_name: str = ""
    backward: bool = False
    measured_forward: dict[str, int] = field(default_factory=dict)
    measured_backward: dict[str, int] = field(default_factory=dict)
    static_formula: str | None = None
    static_lines: list[StaticLine] = field(default_factory=list)
    bytes_static: int | None = None
    repeats: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def confirmed(self) -> bool:
        return self.shape_ok and self.flops_match

    def to_json(self) -> dict:
        return {
            "function": self.function,
            "device": self.device,
            "dims": dict(self.dims),
            "shape_ok": self.shape_ok,
            "shape_errors": list(self.shape_errors),
            "output_shape": self.output_shape,
            "flops_measured": int(self.flops_measured),
            "flops_adjusted": int(self.flops_adjusted),
            "adjusted_ops": dict(self.adjusted_ops),
            "flops_static": self.flops_static,
            "flops_match": self.flops_match,
            "seconds": float(self.seconds),
            "flops_per_second": float(self.flops_per_second),
            "mfu": self.mfu,
            "peak_memory_bytes": self.peak_memory_bytes,
        }


# ---------------------------------------------------------------------- loading


def parse_target(target: Target) -> tuple[Path, str | None]:
    """PATH::FUNCTION (or PATH::Class, PATH::Class.method) or a bare PATH."""
    path, name = target.path, target.qualname
    if name is None:
        return Path(path), None
    if not path:
        raise RuntimeUsageError(f"{str(target)!r}: expected PATH::FUNCTION")
    if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)?", name):
        raise RuntimeUsageError(f"{str(target)!r}: {name!r} is not FUNCTION, Class or Class.method")
    return Path(path), name


@dataclass
class LoadedModule:
    path: Path
    module: ModuleType
    static: Any  # analysis.interpreter.ModuleResult
    summaries: dict[str, Any]
    checker: ShapeChecker
    class_names: set[str]


_counter = itertools.count()


def load(path: Path, static_options=None) -> LoadedModule:
    """Analyze the file statically (through the driver, with these AnalysisOptions),
    then import it (instrumented) and wrap every function and method it defines in
    the shape checker."""
    from shapelint.analysis.driver import analyze_source
    from shapelint.analysis.source import DecodeFailure, decode_source

    if not path.is_file():
        raise RuntimeUsageError(f"{path}: no such file")
    try:
        text = decode_source(path.read_bytes())
    except (OSError, DecodeFailure) as e:
        raise RuntimeUsageError(f"{path}: cannot read: {e}") from None
    try:
        tree, warned = pyparse.parse_caught(text, filename=str(path))
        run_tree = pyparse.parse(text, filename=str(path))
    except SyntaxError as e:
        raise RuntimeUsageError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    analysis = analyze_source(str(path), text, static_options)
    static = analysis.module
    if static is None:  # parsed above, so the analysis itself failed (SHP001/SHP002)
        why = "; ".join(d.message for d in analysis.result.diagnostics) or "unknown"
        raise RuntimeUsageError(f"{path}: static analysis failed: {why}")
    summaries = {f.name: f for f in static.functions}
    class_names = {s.name for s in tree.body if isinstance(s, ast.ClassDef)}

    checker = ShapeChecker()
    instrument(run_tree)
    name = f"_shapelint_run_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise RuntimeUsageError(f"{path}: cannot import")
    module = importlib.util.module_from_spec(spec)
    module.__dict__[CHECK_NAME] = checker.check_assignment
    # `reveal_shape(x)` is read by static mode and needs no import; at run time it
    # passes its argument through (after the module's own definition, if any).
    module.__dict__["reveal_shape"] = _reveal_shape
    sys.modules[name] = module
    try:
        code, more = pyparse.compile_caught(run_tree, str(path), "exec", dont_inherit=True)
        # Python shows the parser's and compiler's warnings on import: so do we, escaped.
        for w in warned + more:
            print(w.text, file=sys.stderr)
        with _user_output():
            exec(code, module.__dict__)  # noqa: S102 - runtime mode runs the user's module, as --help says
    except BaseException as e:  # noqa: BLE001 - SystemExit and friends from user code too
        sys.modules.pop(name, None)
        if isinstance(e, KeyboardInterrupt):
            raise
        raise RuntimeUsageError(f"importing {path} failed: {_describe(e, path)}") from None
    _wrap_module(module, checker)
    return LoadedModule(path, module, static, summaries, checker, class_names)


def _reveal_shape(x: Any) -> Any:
    return x


def _describe(e: BaseException, path: Path) -> str:
    """The exception and the deepest line of the user's file it passed through."""
    where = ""
    for fr in traceback.extract_tb(e.__traceback__):
        if Path(fr.filename).resolve() == path.resolve():
            where = f" (line {fr.lineno})"
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    if type(e).__name__ == "TypeCheckError":  # jaxtyping's: keep what and why, drop the dumps
        keep = ("Type-check error", "Actual value", "Expected type", "The current values")
        dims = [ln for ln in lines if re.fullmatch(r"\*?\w+=\S+", ln)]
        lines = [
            " ".join(ln for ln in lines if ln.startswith(keep))
            + (" " + " ".join(dims) if dims else "")
        ]
    msg = lines[0] if lines else ""
    return f"{type(e).__name__}{': ' + msg if msg else ''}{where}"


@contextlib.contextmanager
def _user_output() -> Iterator[None]:
    """What the user's code prints goes to stderr, so --format json stays parseable;
    the warnings Python shows meanwhile are escaped."""
    with contextlib.redirect_stdout(sys.stderr), pyparse.escaped_warnings():
        yield


def _wrap_module(module: ModuleType, checker: ShapeChecker) -> None:
    modname = module.__name__
    for name, obj in list(vars(module).items()):
        if inspect.isfunction(obj) and obj.__module__ == modname:
            setattr(module, name, checker.wrap(obj, name))
        elif inspect.isclass(obj) and obj.__module__ == modname:
            for attr, member in list(vars(obj).items()):
                if attr.startswith("__") and attr not in ("__init__", "__call__"):
                    continue
                qual = f"{obj.__name__}.{attr}"
                if inspect.isfunction(member):
                    setattr(obj, attr, checker.wrap(member, qual))
                elif isinstance(member, staticmethod) and inspect.isfunction(member.__func__):
                    setattr(obj, attr, staticmethod(checker.wrap(member.__func__, qual)))
                elif isinstance(member, classmethod) and inspect.isfunction(member.__func__):
                    setattr(obj, attr, classmethod(checker.wrap(member.__func__, qual)))


def runnable(loaded: LoadedModule) -> list[str]:
    """Functions and methods worth running on their own: module-level functions
    and methods of module-level classes that take at least one annotated tensor."""
    from shapelint.ops.values import TensorV

    out = []
    for summ in sorted(loaded.static.functions, key=lambda f: f.line):
        name = summ.name
        if "<locals>" in name or name.count(".") > 1:
            continue
        if "." in name:
            cls, meth = name.split(".")
            if cls not in loaded.class_names or (meth.startswith("__") and meth != "__call__"):
                continue
        if not any(isinstance(v, TensorV) for _, v in summ.params):
            continue
        out.append(name)
    return out


def resolve_name(loaded: LoadedModule, name: str) -> str:
    """FUNCTION, Class (its forward, or __call__) or Class.method -> static qualname."""
    if "." not in name and name in loaded.class_names:
        for meth in ("forward", "__call__"):
            if f"{name}.{meth}" in loaded.summaries:
                return f"{name}.{meth}"
        raise RuntimeUsageError(
            f"{loaded.path}: class {name} has no forward or __call__ of its own"
        )
    if name not in loaded.summaries:
        known = ", ".join(runnable(loaded)) or "none"
        raise RuntimeUsageError(f"{loaded.path}: no function {name!r} (runnable here: {known})")
    return name


# ---------------------------------------------------------------------- inputs


@dataclass
class Prepared:
    call: Callable[[], Any]
    leaves: list[torch.Tensor]  # what backward produces gradients for
    env: dict[str, int]  # binding of every static symbol the run fixed
    dims: dict[str, int]  # the ones worth reporting


class _Unbound(Exception):
    def __init__(self, names: list[str]):
        super().__init__(", ".join(names))
        self.names = names


class _Binder:
    """Builds arguments from static parameter values and records the binding."""

    def __init__(self, opts: RunOptions, device: torch.device, dtype: torch.dtype):
        self.opts = opts
        self.device = device
        self.dtype = dtype
        self.env: dict[str, int] = dict(opts.dims)
        self.dims: dict[str, int] = {}
        self.leaves: list[torch.Tensor] = []

    def _use(self, name: str, value: int) -> None:
        self.env[name] = value
        self.dims[name] = value

    def arguments(
        self, fn: Callable, params: list[tuple[str, Any]], what: str
    ) -> tuple[list, dict]:
        from shapelint.ops.values import IntV, TensorV

        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            raise CannotSynthesize(f"{what}: its signature cannot be read") from None
        static = dict(params)
        hints = resolve_hints(fn.__init__ if inspect.isclass(fn) else fn)
        values: dict[str, Any] = {}
        ordinary = [
            p for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        # Integers first: a tensor's dims may be named after them.
        for p in ordinary:
            sv = static.get(p.name)
            sym = sv.value.as_name() if isinstance(sv, IntV) and sv.value is not None else None
            if sym is None:
                continue
            if sym in self.opts.dims:
                values[p.name] = self.opts.dims[sym]
                self._use(sym, self.opts.dims[sym])
            elif isinstance(p.default, int) and not isinstance(p.default, bool):
                self._use(sym, p.default)
            else:
                raise CannotSynthesize(
                    f"{what}: int parameter '{p.name}' has no default; pass --dim {sym}=INT"
                )
        missing: list[str] = []
        for p in ordinary:
            if p.name in values or p.default is not p.empty:
                continue  # other parameters keep their defaults
            sv = static.get(p.name)
            if not isinstance(sv, TensorV):
                raise CannotSynthesize(
                    f"{what}: parameter '{p.name}' has no default and no jaxtyping annotation shapelint can read"
                )
            try:
                values[p.name] = self.tensor(
                    sv, _array_hint(hints.get(p.name)), f"{what}: parameter '{p.name}'"
                )
            except _Unbound as e:
                missing += [n for n in e.names if n not in missing]
        if missing:
            flags = " ".join(f"--dim {n}=INT" for n in missing)
            raise CannotSynthesize(f"{what}: no size for {', '.join(missing)}; pass {flags}")
        args: list = []
        kwargs: dict = {}
        for p in ordinary:
            if p.kind == p.POSITIONAL_ONLY:
                if p.name in values:
                    args.append(values[p.name])
                elif any(
                    q.name in values
                    for q in ordinary[ordinary.index(p) + 1 :]
                    if q.kind == q.POSITIONAL_ONLY
                ):
                    args.append(p.default)
            elif p.name in values:
                kwargs[p.name] = values[p.name]
        return args, kwargs

    def tensor(self, sv, hint, what: str) -> torch.Tensor:
        from shapelint.ops.values import Var

        if sv.shape is None:
            raise CannotSynthesize(f"{what}: its annotation has no shape shapelint can read")
        tokens = parse_spec(hint.dim_str) if hint is not None else None
        if tokens is not None and len(tokens) != len(sv.shape):
            tokens = None
        shape: list[int] = []
        missing: list[str] = []
        for i, d in enumerate(sv.shape):
            if isinstance(d, Var):
                anonymous = d.name.startswith("_")
                if not anonymous and d.name in self.opts.var_shapes:
                    sizes = self.opts.var_shapes[d.name]
                elif not anonymous and d.name in self.opts.dims:
                    sizes = (self.opts.dims[d.name],)
                else:
                    sizes = (DEFAULT_AXIS,)
                count = math.prod(sizes)
                if anonymous:
                    self.env[d.name] = count
                else:
                    self._use(d.name, count)
                shape.extend(sizes)
                continue
            if d is None:
                tok = tokens[i] if tokens else None
                if tok is not None and tok.kind == "anon":
                    shape.append(DEFAULT_AXIS)
                    continue
                if tok is None or tok.kind != "expr":
                    raise CannotSynthesize(
                        f"{what}: dimension {i} of its annotation cannot be read"
                    )
                from shapelint.notation.symbolic import parse_expr

                try:
                    d = parse_expr(tok.name)
                except (ValueError, SyntaxError):
                    raise CannotSynthesize(
                        f"{what}: dimension '{tok.text}' cannot be evaluated"
                    ) from None
            unbound = sorted(n for n in d.names() if n not in self.env)
            if unbound:
                missing += [n for n in unbound if n not in missing]
                continue
            size = d.evaluate(self.env)
            if size < 0:
                raise CannotSynthesize(f"{what}: dimension '{d.to_human()}' is {size}")
            for n in d.names():
                self._use(n, self.env[n])
            shape.append(size)
        if missing:
            raise _Unbound(missing)
        return self._make(tuple(shape), _pick_dtype(hint, sv.dtype, self.dtype))

    def _make(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        if dtype.is_floating_point or dtype.is_complex:
            t = torch.randn(shape, dtype=dtype, device=self.device)
            if self.opts.backward:
                t.requires_grad_(True)
                self.leaves.append(t)
            return t
        if dtype == torch.bool:
            return torch.rand(shape, device=self.device) > 0.5
        # Integer tensors are usually indices: 0 and 1 are valid for any axis of size >= 2.
        return torch.randint(0, 2, shape, dtype=dtype, device=self.device)


def _array_hint(hint: Any) -> Any:
    arrays = array_members(hint) if hint is not None else []
    return arrays[0] if len(arrays) == 1 else None


_FLOAT_ORDER = ("float32", "bfloat16", "float16", "float64")
_INT_ORDER = ("int64", "int32", "int16", "int8", "uint8")


def _pick_dtype(hint: Any, static_dtype: str | None, requested: torch.dtype) -> torch.dtype:
    """The requested float dtype where the annotation allows it, else one it allows."""
    want = str(requested).rsplit(".", 1)[-1]
    allowed = getattr(hint, "dtypes", None)
    if not isinstance(allowed, tuple):  # Shaped[...]: any dtype
        allowed = (static_dtype,) if static_dtype else (want,)
    if want in allowed:
        return requested
    for name in (*_FLOAT_ORDER, *_INT_ORDER, "bool", "complex64", "complex128"):
        if name in allowed and hasattr(torch, name):
            return getattr(torch, name)
    return requested


def _instantiate(
    cls: type, loaded: LoadedModule, binder: _Binder, opts: RunOptions, device: torch.device
) -> Any:
    """An instance built from __init__'s int parameters (--dim or defaults)."""
    init = loaded.summaries.get(f"{cls.__name__}.__init__")
    args, kwargs = binder.arguments(cls, init.params if init else [], f"{cls.__name__}()")
    binder.leaves.clear()  # constructor tensors are not inputs
    try:
        with torch.device(device):
            obj = cls(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - a constructor that fails is reported, not raised
        raise CannotSynthesize(
            f"{cls.__name__}(): the constructor raised {_describe(e, loaded.path)}"
        ) from None
    if isinstance(obj, torch.nn.Module):
        obj.to(device=device)
        if binder.dtype != torch.float32:
            obj.to(dtype=binder.dtype)
        if opts.backward:
            binder.leaves.extend(p for p in obj.parameters() if p.requires_grad)
    return obj


def prepare(
    loaded: LoadedModule, qualname: str, opts: RunOptions, device: torch.device
) -> Prepared:
    """The call to run, with synthesized arguments (and an instance for a method)."""
    binder = _Binder(opts, device, DTYPES[opts.dtype])
    summ = loaded.summaries[qualname]
    if "." not in qualname:
        fn = getattr(loaded.module, qualname, None)
        if not callable(fn):
            raise CannotSynthesize(f"{qualname}: not a function of the module once imported")
        args, kwargs = binder.arguments(fn, summ.params, qualname)
        target = fn
    else:
        cls_name, meth = qualname.split(".")
        cls = getattr(loaded.module, cls_name, None)
        if not inspect.isclass(cls):
            raise CannotSynthesize(f"{qualname}: {cls_name} is not a class once imported")
        if isinstance(inspect.getattr_static(cls, meth, None), (staticmethod, classmethod)):
            bound = getattr(cls, meth)
            args, kwargs = binder.arguments(bound, summ.params, qualname)
            target = bound
        else:
            obj = _instantiate(cls, loaded, binder, opts, device)
            bound = getattr(obj, meth)
            args, kwargs = binder.arguments(bound, summ.params, qualname)
            is_forward = meth == "forward" and isinstance(obj, torch.nn.Module)
            target = obj if is_forward else bound

    if device.type == "cuda":
        # Factory calls inside the user's code (torch.arange(n) for a mask) land
        # on the GPU too, as they would in code written for one device.
        def call() -> Any:
            with torch.device(device):
                return target(*args, **kwargs)
    else:

        def call() -> Any:
            return target(*args, **kwargs)

    return Prepared(call, binder.leaves, binder.env, binder.dims)


# ---------------------------------------------------------------------- flops


def _sdpa_cpu(query, key, value, *args, out_shape=None, **kwargs) -> int:
    from torch.utils.flop_counter import sdpa_flop_count

    return sdpa_flop_count(query, key, value)


def _sdpa_cpu_backward(grad_out, query, key, value, *args, out_shape=None, **kwargs) -> int:
    from torch.utils.flop_counter import sdpa_backward_flop_count

    return sdpa_backward_flop_count(grad_out, query, key, value)


def _batched(shape) -> tuple[int, int, int]:
    return (1, *shape) if len(shape) == 2 else tuple(shape)  # type: ignore[return-value]


def _native_mha(query, key, value, embed_dim, num_head, *args, out_shape=None, **kwargs) -> int:
    """nn.MultiheadAttention's fused eval path: the same matmuls the unfused path runs
    (q, k, v and output projections, scores and weighted sum)."""
    b, lq, e = _batched(query)
    _, lk, _ = _batched(key)
    projections = 2 * b * lq * e * e * 2 + 2 * b * lk * e * e * 2
    attention = 2 * 2 * b * lq * lk * e
    return projections + attention


def _encoder_layer(
    src,
    embed_dim,
    num_heads,
    qkv_weight,
    qkv_bias,
    proj_weight,
    proj_bias,
    *args,
    out_shape=None,
    **kwargs,
) -> int:
    """nn.TransformerEncoderLayer's fused eval path: attention as above plus the two
    feed-forward linears."""
    ffn_weight_1 = args[7]
    b, length, e = _batched(src)
    ff = ffn_weight_1[0]
    return _native_mha(src, src, src, embed_dim, num_heads) + 2 * 2 * b * length * e * ff


def gap_formulas() -> dict:
    """Kernels torch.utils.flop_counter counts as 0 in torch 2.13: the CPU flash
    attention behind F.scaled_dot_product_attention, and the fused inference paths
    of nn.MultiheadAttention / nn.TransformerEncoderLayer."""
    aten = torch.ops.aten
    table = {
        "_scaled_dot_product_flash_attention_for_cpu": _sdpa_cpu,
        "_scaled_dot_product_flash_attention_for_cpu_backward": _sdpa_cpu_backward,
        "_native_multi_head_attention": _native_mha,
        "_transformer_encoder_layer_fwd": _encoder_layer,
    }
    from torch.utils.flop_counter import flop_registry

    out = {}
    for name, formula in table.items():
        try:
            op = getattr(aten, name)
        except (AttributeError, RuntimeError):
            continue
        # Only gaps: where torch counts an op itself, its count stands, and torch's
        # total is the adjusted one less exactly these ops (split_counts).
        if op not in flop_registry:
            out[op] = formula
    return out


def split_counts(*counts: dict[str, int]) -> tuple[int, int, dict[str, int]]:
    """(torch's own total, the total adjusted by gap_formulas, the gap ops' FLOPs)
    of per-op counts taken with gap_formulas: torch registers nothing for a gap
    op, so its own count of it is 0."""
    gaps = {str(op) for op in gap_formulas()}
    adjusted_ops: dict[str, int] = {}
    total = 0
    for c in counts:
        for op, n in c.items():
            total += n
            if op in gaps:
                adjusted_ops[op] = adjusted_ops.get(op, 0) + n
    return total - sum(adjusted_ops.values()), total, adjusted_ops


def flops_comparison(
    measured: int, adjusted: int, adjusted_ops: dict[str, int], static: str
) -> str:
    """torch's count and the adjusted one side by side, never the adjusted one as
    what was measured."""
    if not adjusted_ops:
        return f"measured {measured:,}, static {static}"
    ops = ", ".join(op.removeprefix("aten.") for op in sorted(adjusted_ops))
    return (
        f"FlopCounterMode {measured:,}, adjusted {adjusted:,}, static {static}\n"
        f"    adjusted: +{adjusted - measured:,} for {ops}, counted by torch's CUDA formula "
        "(FlopCounterMode registers 0 for this CPU kernel)"
    )


def _counts(mode) -> dict[str, int]:
    glob = mode.get_flop_counts().get("Global", {})
    return {str(op): int(n) for op, n in glob.items() if n}


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _loss(out: Any) -> torch.Tensor | None:
    parts = [t.float().sum() for t in _tensors(out) if t.requires_grad]
    if not parts:
        return None
    return torch.stack(parts).sum() if len(parts) > 1 else parts[0]


def count_flops(
    prep: Prepared, backward: bool
) -> tuple[dict[str, int], dict[str, int], str | None]:
    """FLOPs per aten op, forward and backward apart (what torch's counter says,
    plus gap_formulas)."""
    from torch.utils.flop_counter import FlopCounterMode

    mapping = gap_formulas()
    with FlopCounterMode(display=False, custom_mapping=mapping) as fwd:
        out = prep.call()
    bwd_counts: dict[str, int] = {}
    note = None
    if backward:
        loss = _loss(out)
        if loss is None:
            note = "--backward: no output requires grad, nothing to differentiate"
        else:
            with FlopCounterMode(display=False, custom_mapping=mapping) as bwd:
                loss.backward()
            bwd_counts = _counts(bwd)
            _clear_grads(prep.leaves)
    return _counts(fwd), bwd_counts, note


def _clear_grads(leaves: list[torch.Tensor]) -> None:
    for t in leaves:
        t.grad = None


# ---------------------------------------------------------------------- static side


@dataclass
class StaticCost:
    flops: int | None  # at the run's sizes; None when unknown
    formula: str | None
    lines: list[StaticLine]
    bytes: int | None
    note: str | None = None


def static_cost(
    loaded: LoadedModule, qualname: str, env: dict[str, int], backward: bool
) -> StaticCost:
    """The static analysis' FLOPs for one call of qualname at the run's sizes."""
    summ = loaded.summaries[qualname]
    records = [r for r in loaded.static.records if r.function == qualname]
    lines = []
    bwd_total = 0.0
    bwd_known = True
    for r in records:
        f = r.cost.flops
        value = _evaluate(f, env)
        lines.append(StaticLine(r.line, r.op, f.to_human() if f is not None else None, value))
        if value is None:
            bwd_known = False
        else:
            factor = next((v for k, v in BACKWARD_FACTORS.items() if k in r.op), BACKWARD_FACTOR)
            bwd_total += value * factor
    byts = _evaluate(summ.bytes, env)
    if summ.flops is None or not summ.complete:
        unknown = [f"line {r.line} {r.op}" for r in records if r.cost.flops is None]
        what = ", ".join(unknown) if unknown else "a call of unknown cost"
        return StaticCost(None, None, lines, byts, f"static cost incomplete: {what}")
    formula = summ.flops.to_human()
    total = _evaluate(summ.flops, env)
    if total is None:
        unbound = ", ".join(sorted(summ.flops.names() - env.keys()))
        return StaticCost(
            None,
            formula,
            lines,
            byts,
            f"static formula {formula} uses {unbound}, which no input binds",
        )
    if not backward:
        return StaticCost(total, formula, lines, byts)
    if not bwd_known:
        return StaticCost(
            None, formula, lines, byts, "static backward unknown: a call's forward cost is unknown"
        )
    note = "static backward: 2x each forward matmul (2.5x for SDPA); operands that need no grad make it less"
    return StaticCost(total + round(bwd_total), formula, lines, byts, note)


def _evaluate(expr, env: dict[str, int]) -> int | None:
    if expr is None:
        return None
    try:
        return int(expr.evaluate(env))
    except (KeyError, ZeroDivisionError, ValueError):
        return None


# ---------------------------------------------------------------------- device, time, memory


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise RuntimeUsageError(
            "--device cuda: no CUDA device is available (torch.cuda.is_available() is False)"
        )
    return torch.device(name)


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return "cpu"


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _step(prep: Prepared, backward: bool) -> Callable[[], None]:
    def run() -> None:
        out = prep.call()
        if backward:
            loss = _loss(out)
            if loss is not None:
                loss.backward()
                _clear_grads(prep.leaves)

    return run


def time_call(
    prep: Prepared, device: torch.device, opts: RunOptions
) -> tuple[float, int, int | None]:
    """(median seconds per call, calls timed, peak memory bytes or None)."""
    step = _step(prep, opts.backward)
    for _ in range(opts.warmup):
        step()
    _sync(device)
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    times: list[float] = []
    while True:
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1000.0)
        else:
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
        if opts.repeat is not None:
            if len(times) >= opts.repeat:
                break
        elif sum(times) >= TIME_TARGET_S or len(times) >= MAX_REPEAT:
            break
    peak = int(torch.cuda.max_memory_allocated(device)) if cuda else None
    return statistics.median(times), len(times), peak


def hardware_dtype(dtype: str) -> str:
    """The hardware-table column a run's matmuls use."""
    if dtype == "bf16":
        return "bf16"
    return "tf32" if torch.backends.cuda.matmul.allow_tf32 else "fp32"


def peak_flops(
    device: torch.device, dtype: str, override: str | None = None
) -> tuple[float | None, str]:
    """(peak FLOP/s, chip name) from shapelint.napkin.hardware, when it knows the chip."""
    if device.type != "cuda" and override is None:
        return None, ""
    return chip_peak(
        device_name(device) if device.type == "cuda" else "", hardware_dtype(dtype), override
    )


def chip_peak(name: str, dtype_key: str, override: str | None = None) -> tuple[float | None, str]:
    """The chip of shapelint.napkin.hardware whose key, alias or name best
    matches a torch device name."""
    from shapelint.napkin import hardware

    try:
        table = hardware.DEFAULT_HARDWARE
        chip = hardware.lookup(override, table) if override else _match_chip(name, table)
        if chip is None:
            return None, ""
        return float(chip.peak(dtype_key)), chip.name
    except Exception:  # noqa: BLE001 - an unknown chip or dtype means no MFU, not a failed run
        return None, ""


def _tokens(text: str) -> set[str]:
    return {t for t in re.split(r"[^0-9a-z]+", text.lower()) if t}


def _match_chip(device: str, table) -> Any:
    have = _tokens(device)
    best, best_score = None, 0
    for chip in table.values():
        for cand in (chip.key, *getattr(chip, "aliases", ()), chip.name):
            want = _tokens(cand) - {"nvidia", "amd", "google"}
            if want and want <= have and len(want) > best_score:
                best, best_score = chip, len(want)
    return best


# ---------------------------------------------------------------------- one function


def _output_shape(out: Any) -> list:
    if isinstance(out, torch.Tensor):
        return list(out.shape)
    if isinstance(out, (tuple, list)):
        return [_output_shape(o) for o in out]
    return []


def run_function(
    loaded: LoadedModule, qualname: str, opts: RunOptions, device: torch.device
) -> RunReport:
    """Confirm one function's shapes and FLOPs and measure it. CannotSynthesize
    propagates; an exception inside the user's function is a finding."""
    torch.manual_seed(0)
    with _user_output():
        prep = prepare(loaded, qualname, opts, device)
    rep = RunReport(
        function=qualname,
        device=str(device),
        dims=dict(sorted(prep.dims.items())),
        dtype=opts.dtype,
        device_name=device_name(device),
        backward=opts.backward,
    )
    static = static_cost(loaded, qualname, prep.env, opts.backward)
    rep.flops_static, rep.static_formula = static.flops, static.formula
    rep.static_lines, rep.bytes_static = static.lines, static.bytes
    if static.note:
        rep.notes.append(static.note)

    checker = loaded.checker
    checker.reset()
    checker.active = True
    try:
        with _user_output():
            out = prep.call()
    except Exception as e:  # noqa: BLE001 - the user's function failing is what we report
        rep.shape_errors = [*checker.errors, f"{qualname} raised {_describe(e, loaded.path)}"]
        rep.shape_ok = False
        return rep
    finally:
        checker.active = False
    rep.shape_errors = list(checker.errors)
    rep.shape_ok = not rep.shape_errors
    rep.output_shape = _output_shape(out)
    if checker.checks == 0:
        rep.notes.append("no annotated value was checked (no jaxtyping annotations reached)")
    del out

    try:
        with _user_output():
            fwd, bwd, note = count_flops(prep, opts.backward)
            if note:
                rep.notes.append(note)
            rep.measured_forward, rep.measured_backward = fwd, bwd
            rep.flops_measured, rep.flops_adjusted, rep.adjusted_ops = split_counts(fwd, bwd)
            rep.flops_match = (
                rep.flops_static is not None and rep.flops_static == rep.flops_adjusted
            )
            seconds, reps, peak = time_call(prep, device, opts)
    except Exception as e:  # noqa: BLE001 - e.g. randomness that the checked run did not hit
        rep.shape_errors.append(f"{qualname} raised while measuring: {_describe(e, loaded.path)}")
        rep.shape_ok = False
        rep.flops_match = False
        return rep
    rep.seconds, rep.repeats, rep.peak_memory_bytes = seconds, reps, peak
    # Throughput and MFU on the work done: attention a fused kernel ran counts too.
    rep.flops_per_second = rep.flops_adjusted / seconds if seconds > 0 else 0.0
    peak_fs, chip = peak_flops(device, opts.dtype, opts.hardware)
    if peak_fs:
        rep.mfu = rep.flops_per_second / peak_fs
        rep.notes.append(
            f"MFU against {chip} {hardware_dtype(opts.dtype)} peak {peak_fs / 1e12:.1f} TFLOP/s"
        )
    elif device.type == "cuda":
        rep.notes.append(
            f"MFU unknown: {rep.device_name} is not in the hardware table (try --hardware)"
        )
    return rep


@contextlib.contextmanager
def importable_from(path: Path) -> Iterator[None]:
    """The user's file imports its neighbours as it would when run as a script."""
    folder = str(path.resolve().parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        yield
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)


def run_target(
    path: Path, name: str | None, opts: RunOptions
) -> tuple[list[RunReport], list[tuple[str, str]]]:
    """Reports for PATH::NAME, or for every runnable function of PATH; and the
    (function, reason) pairs skipped because inputs could not be synthesized.
    RuntimeUsageError for a usage problem (and for NAME that cannot be synthesized)."""
    if opts.dtype not in DTYPES:
        raise RuntimeUsageError(f"--dtype {opts.dtype}: use one of {', '.join(DTYPES)}")
    device = resolve_device(opts.device)
    static_options = dataclasses.replace(
        AnalysisOptions.coerce(opts.static), dtype=SHORT_NAMES[opts.dtype]
    )
    with importable_from(path):
        loaded = load(path, static_options)
        if name is not None:
            qual = resolve_name(loaded, name)
            try:
                return [run_function(loaded, qual, opts, device)], []
            except CannotSynthesize as e:
                raise RuntimeUsageError(f"cannot synthesize inputs for {e}") from None
        reports, skipped = [], []
        for qual in runnable(loaded):
            try:
                reports.append(run_function(loaded, qual, opts, device))
            except CannotSynthesize as e:
                skipped.append((qual, str(e)))
        return reports, skipped
