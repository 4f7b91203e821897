"""Run a call through torch and through the stubs, and compare the two.

torch is the oracle for shapes, dtypes and errors; FlopCounterMode for flops.
Sizes wrapped in ``Size`` (and every tensor axis, when ``names`` is given)
become symbolic names for shapelint, evaluated back against torch's numbers.
"""

from __future__ import annotations

import importlib
import operator
from dataclasses import dataclass

import torch
from torch.utils.flop_counter import FlopCounterMode

from shapelint.notation.symbolic import Expr, is_internal
from shapelint.ops.stub_ops import is_property, stub_call
from shapelint.ops.values import (
    UNKNOWN,
    BoolV,
    DtypeV,
    FloatV,
    IntV,
    NoneV,
    ObjectV,
    OpResult,
    TensorV,
    TupleV,
    Value,
    Var,
    constant_value,
)


@dataclass(frozen=True)
class Size:
    """An int argument that is a size (view(b, -1), zeros(n)): symbolic when names are on."""

    n: int


def torch_callable(name: str):
    if name.startswith("torch.Tensor."):
        attr = name[len("torch.Tensor.") :]
        if is_property(name):
            return lambda x: getattr(x, attr)
        return lambda x, *a, **k: getattr(x, attr)(*a, **k)
    if name.startswith("operator."):
        return getattr(operator, name.split(".", 1)[1])
    mod, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(mod), attr)


def dtype_name(d: torch.dtype) -> str:
    return str(d).rsplit(".", 1)[-1]


def size_dim(n: int, names: dict[int, str] | None) -> Expr:
    if names is not None and n in names:
        return Expr.name(names[n])
    return Expr.const(n)


def to_value(obj, names: dict[int, str] | None = None) -> Value:
    if isinstance(obj, torch.Tensor):
        # requires_grad as torch has it: which kernel matmul runs depends on it
        shape = tuple(size_dim(s, names) for s in obj.shape)
        return TensorV(shape, dtype_name(obj.dtype), grad=obj.requires_grad)
    if isinstance(obj, Size):
        return IntV(size_dim(obj.n, names))
    if isinstance(obj, torch.Size):
        return TupleV(tuple(IntV(size_dim(s, names)) for s in obj))
    if isinstance(obj, (bool, int, float, str)) or obj is None:
        return constant_value(obj)
    if isinstance(obj, torch.dtype):
        return DtypeV(str(obj))
    if isinstance(obj, (list, tuple)):
        return TupleV(tuple(to_value(o, names) for o in obj))
    if isinstance(obj, Value):
        return obj
    if obj is torch.Tensor:  # the class as a value (`x.as_subclass(torch.Tensor)`)
        from shapelint.analysis.callable_values import LayerClassV

        return LayerClassV("torch.Tensor")
    raise TypeError(obj)


def to_torch(obj):
    if isinstance(obj, Size):
        return obj.n
    if isinstance(obj, list):
        return [to_torch(o) for o in obj]
    if isinstance(obj, tuple):
        return tuple(to_torch(o) for o in obj)
    return obj


def symbol_names(args, kwargs, minimum: int = 2) -> dict[int, str]:
    """A name for every size >= minimum appearing in the tensors and Size arguments."""
    sizes: set[int] = set()

    def walk(o):
        if isinstance(o, torch.Tensor):
            sizes.update(o.shape)
        elif isinstance(o, Size):
            sizes.add(o.n)
        elif isinstance(o, (list, tuple)):
            for i in o:
                walk(i)

    walk(list(args) + list(kwargs.values()))
    return {s: f"n{s}" for s in sizes if s >= minimum}


@dataclass
class Outcome:
    out: object
    error: Exception | None
    flops: int
    result: OpResult | None
    env: dict[str, int]


def run_both(name, args, kwargs=None, names=None, fn=None, values=None) -> Outcome:
    """values: abstract arguments to use instead of converting args (module objects)."""
    kwargs = kwargs or {}
    fn = fn or torch_callable(name)
    flops = 0
    # the arguments as they are before the call: an in-place op changes them
    if values is None:
        values = [to_value(a, names) for a in args]
    kw_values = {k: to_value(v, names) for k, v in kwargs.items()}
    try:
        with FlopCounterMode(display=False) as counter:
            out = fn(*[to_torch(a) for a in args], **{k: to_torch(v) for k, v in kwargs.items()})
        flops = counter.get_total_flops()
        error = None
    except (RuntimeError, ValueError, IndexError, TypeError, AssertionError) as e:
        out, error = None, e
    res = stub_call(name, values, kw_values)
    env = {v: k for k, v in (names or {}).items()}
    return Outcome(out, error, flops, res, env)


def evaluate(e: Expr, env: dict[str, int]) -> int:
    return e.evaluate(env)


def check_value(
    v: Value, out, env: dict[str, int], strict: bool, where: str = "out", unknown_axes=()
) -> None:
    """v describes out; strict: every size and dtype must be known, but for the
    tensor axes in unknown_axes (which may be unknown, never wrong)."""
    if isinstance(out, torch.Tensor):
        if not strict and (v is UNKNOWN):
            return
        assert isinstance(v, TensorV), f"{where}: expected a tensor, got {v!r}"
        if v.shape is None:
            assert not strict, f"{where}: shape unknown, torch says {tuple(out.shape)}"
        else:
            if not any(isinstance(d, Var) for d in v.shape):
                assert len(v.shape) == out.dim(), f"{where}: {v.shape_str()} vs {tuple(out.shape)}"
                for i, (d, s) in enumerate(zip(v.shape, out.shape, strict=True)):
                    if d is None or (
                        # a size no code names (a bincount's length): not known
                        not strict and isinstance(d, Expr) and any(map(is_internal, d.names()))
                    ):
                        assert not strict or i in unknown_axes, (
                            f"{where}: axis {i} unknown, torch says {s}"
                        )
                        continue
                    assert evaluate(d, env) == s, f"{where}: {v.shape_str()} vs {tuple(out.shape)}"
        if v.dtype is None:
            assert not strict, f"{where}: dtype unknown, torch says {out.dtype}"
        else:
            assert v.dtype == dtype_name(out.dtype), f"{where}: dtype {v.dtype} vs {out.dtype}"
    elif isinstance(out, torch.Size) or (
        isinstance(out, (tuple, list)) and all(isinstance(o, int) for o in out)
    ):
        if v is UNKNOWN and not strict:
            return
        assert isinstance(v, TupleV) and len(v.items) == len(out), f"{where}: {v!r} vs {out}"
        for i, (item, o) in enumerate(zip(v.items, out, strict=True)):
            assert isinstance(item, IntV)
            if item.value is not None:
                assert evaluate(item.value, env) == o, f"{where}[{i}]"
    elif isinstance(out, (tuple, list)):
        if v is UNKNOWN and not strict:
            return
        assert isinstance(v, TupleV), f"{where}: expected a tuple, got {v!r}"
        assert len(v.items) == len(out), f"{where}: {len(v.items)} items vs {len(out)}"
        for i, (item, o) in enumerate(zip(v.items, out, strict=True)):
            check_value(item, o, env, strict, f"{where}[{i}]", unknown_axes)
    elif out is None:
        assert isinstance(v, NoneV) or (v is UNKNOWN and not strict), f"{where}: {v!r} vs None"
    elif isinstance(out, bool):
        assert isinstance(v, BoolV) or (v is UNKNOWN and not strict)
    elif isinstance(out, int):
        assert isinstance(v, IntV), f"{where}: {v!r} vs {out}"
        if v.value is not None:
            assert evaluate(v.value, env) == out
        else:
            assert not strict
    elif isinstance(out, float):
        assert isinstance(v, FloatV) or (v is UNKNOWN and not strict)
    elif isinstance(out, torch.nn.Module):
        assert isinstance(v, ObjectV)
        for k, a in v.attrs:
            if isinstance(a, TensorV):
                t = getattr(out, k)
                assert isinstance(t, torch.Tensor), k
                check_value(a, t.detach(), env, False, f"{where}.{k}")
            elif isinstance(a, NoneV) and isinstance(getattr(out, k, None), torch.Tensor):
                # (other attributes are constructor arguments torch may normalize:
                # MaxPool2d's stride=None becomes the kernel size)
                raise AssertionError(f"{where}.{k}: None, torch holds a tensor")
    else:
        raise AssertionError(f"cannot compare {type(out)}")


def check_agrees(
    o: Outcome, strict: bool = True, flops: bool = True, unknown_axes=(), unknown_flops=False
) -> None:
    """torch ran: shapelint reports no issue, and its value and flops agree. Under
    strict, everything must be known but the output axes in unknown_axes (and the
    FLOPs, which then follow them, or where unknown_flops says so)."""
    assert o.error is None, f"torch raised {o.error!r}"
    assert o.result is not None, "no stub describes this call"
    assert not o.result.issues, o.result.issues
    check_value(o.result.value, o.out, o.env, strict, unknown_axes=unknown_axes)
    if flops:
        f = o.result.cost.flops
        if f is None:
            assert not strict or unknown_axes or unknown_flops, "flops unknown"
        else:
            assert evaluate(f, o.env) == o.flops, f"flops {f} vs torch {o.flops}"


def check_verdict(o: Outcome, decisive: bool = True, strict: bool = True, unknown_axes=()) -> None:
    """Either both accept (and agree), or torch raises and shapelint, if decisive
    here, reports an issue. shapelint never reports an issue torch does not raise."""
    assert o.result is not None, "no stub describes this call"
    if o.error is None:
        check_agrees(o, strict=strict, unknown_axes=unknown_axes)
    elif decisive and is_shape_error(o.error):
        assert o.result.issues, f"torch raised {o.error!r} but shapelint saw nothing"


def is_shape_error(e: Exception) -> bool:
    """Errors about shapes, as opposed to argument types or dtypes (not shapelint's job)."""
    text = str(e)
    if isinstance(e, TypeError):
        return False
    words = (
        "dtype",
        "Dtype",
        "not implemented for",
        "Boolean",
        "floating point",
        "Got Int",
        "bool input",
    )
    return not any(w in text for w in words)
