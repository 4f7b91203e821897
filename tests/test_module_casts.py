"""A module's dtype casts (analysis/module_casts.py): `m.half()`, `.double()`,
`.bfloat16()`, `.to(dtype)`, `.type(dtype)` change every floating Parameter and
buffer below m in place, and what reads them follows: a float32 input into a cast
Linear is an error (SHP322, as torch raises), the bytes are the cast dtype's. Torch
runs each module: the ones reported raise, the others run."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from shapelint.cli import main
from shapelint.ops import dtypes
from shapelint.ops.values import BoolV, BufferV, DtypeV, NoneV, ParameterV, StrV, TensorV

SOURCE = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Half(nn.Module):  # the layer cast, the input not
        def __init__(self, d=8):
            super().__init__()
            self.a = nn.Linear(d, d)
            self.a.half()

        def forward(self, x):
            return self.a(x)


    class Double(nn.Module):  # the whole module cast: its submodules' too
        def __init__(self, d=8):
            super().__init__()
            self.a = nn.Linear(d, d)
            self.double()

        def forward(self, x):
            return self.a(x)


    class HalfBoth(nn.Module):  # both cast: it runs, at two bytes an element
        def __init__(self, d=8):
            super().__init__()
            self.a = nn.Linear(d, d)
            self.register_buffer("steps", torch.zeros(3, dtype=torch.long))
            self.half()

        def forward(self, x):
            return self.a(x.half())


    class ToBf16(nn.Module):  # `to(dtype)` on a layer just built; a norm takes bf16 in
        def __init__(self, d=8):
            super().__init__()
            self.n = nn.LayerNorm(d)
            self.a = nn.Linear(d, d).to(torch.bfloat16)

        def forward(self, x):
            return self.a(self.n(x.bfloat16()))


    class ToDevice(nn.Module):  # a device alone: no dtype changes
        def __init__(self, d=8):
            super().__init__()
            self.a = nn.Linear(d, d)
            self.a.to("cpu")

        def forward(self, x):
            return self.a(x)


    class InForward(nn.Module):  # cast in the forward, every holder sees it
        def __init__(self, d=8):
            super().__init__()
            self.a = nn.Linear(d, d)

        def forward(self, x):
            self.double()
            return self.a(x.double())


    class HalfNorm(nn.Module):  # a float32 input into a half norm: torch refuses
        def __init__(self, d=8):
            super().__init__()
            self.n = nn.LayerNorm(d).half()

        def forward(self, x):
            return self.n(x)


    class EmbOnly(nn.Module):  # the embedding's half rows into a float32 Linear
        def __init__(self, v=10, d=8):
            super().__init__()
            self.emb = nn.Embedding(v, d)
            self.head = nn.Linear(d, v)
            self.emb.half()

        def forward(self, x):
            return self.head(self.emb(x))


    class Layers(nn.Module):  # each layer of a list cast in a loop
        def __init__(self, d=8):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(d, d) for _ in range(2)])
            for layer in self.layers:
                layer.double()

        def forward(self, x):
            x = x.double()
            for layer in self.layers:
                x = layer(x)
            return x


    class Autocast(nn.Module):  # autocast casts the operands: no error
        def __init__(self, d=8):
            super().__init__()
            self.a = nn.Linear(d, d)
            self.a.half()

        def forward(self, x):
            with torch.autocast("cpu", dtype=torch.float16):
                return self.a(x)
    """
)

INTS = {"EmbOnly"}  # fed token ids


def _torch_raises(name: str) -> bool:
    torch = pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(SOURCE, "casts.py", "exec"), ns)  # noqa: S102 - the test's own module
    x = torch.randint(0, 10, (2, 8)) if name in INTS else torch.randn(2, 8)
    try:
        ns[name]()(x)
    except RuntimeError:
        return True
    return False


def _target(tmp_path, name: str) -> tuple[int, dict]:
    p = tmp_path / "casts.py"
    p.write_text(SOURCE)
    shape = "x=2,8:int" if name in INTS else "x=2,8"
    args = ["cost", f"{p}::{name}", "--input", shape, "--no-cache", "--format", "json"]
    r = CliRunner().invoke(main, args)
    return r.exit_code, json.loads(r.output)["target"]


@pytest.mark.parametrize("name", ["Half", "Double", "HalfNorm", "EmbOnly"])
def test_a_float32_input_into_a_cast_layer_is_an_error_as_torch_raises(tmp_path, name):
    assert _torch_raises(name)
    code, t = _target(tmp_path, name)
    assert code == 1 and t["flops_value"] is None and not t["complete"]
    (d,) = t["diagnostics"]
    assert (d["code"], d["severity"]) == ("SHP322", "error")
    assert "float32" in d["message"] and f"{name}.forward" in d["call_path"]


@pytest.mark.parametrize(
    "name", ["HalfBoth", "ToBf16", "ToDevice", "InForward", "Autocast", "Layers"]
)
def test_a_cast_torch_runs_is_no_error(tmp_path, name):
    assert not _torch_raises(name)
    code, t = _target(tmp_path, name)
    assert code == 0 and not t["diagnostics"]
    assert t["flops"] == ("512" if name == "Layers" else "256") and t["complete"]


def test_bytes_follow_the_cast(tmp_path):
    # x.half(): 2·8 float32 read, 2·8 float16 written (64 + 32); the half Linear reads
    # x (32), weight (128) and bias (16) and writes [2, 8] (32): 304 bytes, where the
    # float32 weights read before were 256 + 32
    _, t = _target(tmp_path, "HalfBoth")
    assert t["bytes"] == "304"
    # self.double() in the forward moves the 72 parameters, read as float32 and
    # written as float64 (288 + 576), as torch's _apply copies them; then float64
    # throughout: x.double() 64 + 128, the Linear 128 + 512 + 64 + 128
    _, t = _target(tmp_path, "InForward")
    assert t["bytes"] == str(288 + 576 + 1024) and t["bytes_complete"]


def test_only_floating_tensors_take_half_and_to_every_one_type():
    from shapelint.analysis.module_casts import cast_of

    long_buf = BufferV((3,), "int64")
    weight = ParameterV((8, 8), None)
    half = cast_of("half", [], {})
    assert half.of(weight).dtype == "float16" and half.of(long_buf) is long_buf
    assert isinstance(half.of(weight), ParameterV) and half.of(weight).requires_grad
    every = cast_of("type", [DtypeV("float64")], {})
    assert every.of(long_buf).dtype == "float64"
    to = cast_of("to", [StrV("cpu"), DtypeV("bfloat16")], {})
    assert to.of(weight).dtype == "bfloat16" and to.of(long_buf) is long_buf


def test_a_device_is_no_cast_and_a_dtype_not_read_is_not_known():
    from shapelint.analysis.module_casts import cast_of

    assert cast_of("to", [StrV("cuda")], {}) is None
    assert cast_of("to", [], {"device": StrV("cuda")}) is None
    assert cast_of("to", [TensorV((2,), "float16")], {}).dtype == "float16"
    from shapelint.ops.values import UNKNOWN

    unread = cast_of("to", [UNKNOWN], {})
    assert unread.of(ParameterV((8,), None)).dtype == dtypes.NOT_KNOWN
    # to(device, dtype): the device not known, the dtype named
    assert cast_of("to", [UNKNOWN, DtypeV("float16")], {}).dtype == "float16"
    assert cast_of("to", [NoneV()], {}) is None  # no device, no dtype
    # Module.to refuses an integer dtype (TypeError): not followed as a cast
    assert cast_of("to", [DtypeV("int64")], {}) is None
    assert cast_of("to", [DtypeV("float16"), BoolV(True)], {}).dtype == "float16"
