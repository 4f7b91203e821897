"""numpy arrays as values (analysis/ndarrays.py): filters built with numpy and
handed to torch (`torch.Tensor(a[:, None] * a[None, :])`, `torch.from_numpy`,
`torch.tensor`) have their shapes, so the convolutions they weight are costed,
judged by FlopCounterMode; the shapes and dtypes of the arrays by numpy itself."""

from __future__ import annotations

import ast

import pytest

from shapelint.analysis import ndarrays
from shapelint.notation.symbolic import Expr
from shapelint.ops.values import ArrayV, BoolV, FloatV, IntV, TupleV
from tests.test_modules import counted, static_target, write

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")

BLUR = """
    import numpy as np
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Blur2d(nn.Module):
        def __init__(self, channels, size=4):
            super().__init__()
            if size == 3:
                a = np.array([1., 2., 1.])
            else:
                a = np.array([1., 3., 3., 1.])
            filt = torch.Tensor(a[:, None] * a[None, :])
            filt = filt / torch.sum(filt)
            self.register_buffer("filt", filt[None, None, :, :].repeat((channels, 1, 1, 1)))
            self.proj = nn.Conv2d(channels, channels, 1)

        def forward(self, x):
            y = F.conv2d(x, self.filt, stride=2, groups=x.shape[1])
            return self.proj(y)


    class Blur1d(nn.Module):
        def __init__(self, channels):
            super().__init__()
            a = np.asarray([1, 2, 1], dtype=np.float32)
            self.register_buffer("filt", torch.from_numpy(a / 4.0)[None, None, :].repeat((channels, 1, 1)))

        def forward(self, x):
            return F.conv1d(x, self.filt.float(), stride=2, groups=x.shape[1])


    class Outer(nn.Module):
        def __init__(self, channels):
            super().__init__()
            k = np.outer(np.array([1., 2., 1.]), np.array([[1., 0.], [0., 1.]]))
            self.register_buffer("k", torch.tensor(k, dtype=torch.float32).expand(channels, 1, 3, 4))

        def forward(self, x):
            return F.conv2d(x, self.k, groups=x.shape[1])


    def as_kernel(k):
        if isinstance(k, np.ndarray):
            return torch.from_numpy(k).float()
        return torch.ones(1, 1, 5)


    class Checked(nn.Module):
        # isinstance(k, np.ndarray) of an array numpy made is True
        def __init__(self, channels):
            super().__init__()
            k = np.array([1., 2., 1.])
            self.register_buffer("k", as_kernel(k[None, None, :]).repeat(channels, 1, 1))

        def forward(self, x):
            return F.conv1d(x, self.k, groups=x.shape[1])


    class Bases(nn.Module):
        # pytorch-forecasting's N-BEATS blocks: bases from linspace, arange, cos and
        # powers, multiplied by the thetas a layer gives
        def __init__(self, channels, back=10, fore=5, thetas=4):
            super().__init__()
            lin = np.linspace(0 / 15, 14 / 15, back + fore, dtype=np.float32)
            freq = np.arange(thetas // 2)[:, None] / 3
            s = np.cos(2 * np.pi * freq * lin[:back])
            t = lin[back:] ** np.arange(0.0, 4.0, 2.0)[:, None]
            self.register_buffer("S", torch.tensor(s, dtype=torch.float32))
            self.register_buffer("T", torch.tensor(t, dtype=torch.float32))
            self.theta = nn.Linear(channels, thetas // 2)

        def forward(self, x):
            th = self.theta(x)
            return th.mm(self.S), th.mm(self.T)


    class Dft(nn.Module):
        # kokoro's CustomSTFT: a window tensor handed to numpy, negated and
        # transposed DFT matrices made convolution weights
        def __init__(self, n_fft=8):
            super().__init__()
            window = torch.hann_window(n_fft, periodic=True, dtype=torch.float32)
            angle = 2 * np.pi * np.outer(np.arange(n_fft // 2 + 1), np.arange(n_fft)) / n_fft
            imag = -np.sin(angle) * window.numpy()
            inverse = np.cos(angle.T).T * window.numpy()
            self.register_buffer("imag", torch.from_numpy(imag).float().unsqueeze(1))
            self.register_buffer("inverse", torch.from_numpy(inverse).float().unsqueeze(1))

        def forward(self, x):
            x = x.unsqueeze(1)
            return F.conv1d(x, self.imag, stride=2) + F.conv1d(x, self.inverse, stride=2)


    class Sinusoids(nn.Module):
        # whisper's positional table: np.newaxis is None, indexing a tensor as
        # `[:, None]` does, in a tuple and alone; a name bound to None likewise
        def __init__(self, channels, length=6):
            super().__init__()
            inc = np.log(10000) / (channels // 2 - 1)
            inv = torch.exp(-inc * torch.arange(channels // 2))
            scaled = torch.arange(length)[:, np.newaxis] * inv[np.newaxis, :]
            pos = torch.cat([torch.sin(scaled), torch.cos(scaled)], dim=1)
            new = None
            self.register_buffer("pos", pos[np.newaxis][:, :, new])
            self.proj = nn.Linear(channels, channels)

        def forward(self, x):
            return self.proj(x + self.pos[:, :, 0])


    class GradNumpy(nn.Module):
        # numpy() of a tensor that requires grad raises in torch: no figure
        def __init__(self, channels):
            super().__init__()
            self.w = nn.Parameter(torch.ones(3))
            self.register_buffer("k", torch.from_numpy(self.w.numpy()).repeat(channels, 1, 1))

        def forward(self, x):
            return F.conv1d(x, self.k, groups=x.shape[1])


    class Unread(nn.Module):
        # np.repeat flattens where torch's repeat tiles: not read, so not costed
        def __init__(self, channels):
            super().__init__()
            a = np.repeat(np.array([[1., 2.], [3., 4.]]), 2)
            self.register_buffer("k", torch.Tensor(a).reshape(channels, 1, -1))

        def forward(self, x):
            return F.conv1d(x, self.k, groups=x.shape[1])
"""


@pytest.mark.parametrize(
    "cls, init, shape",
    [
        ("Blur2d", {"channels": 4}, (2, 4, 16, 16)),
        ("Blur2d", {"channels": 3, "size": 3}, (2, 3, 9, 9)),
        ("Blur1d", {"channels": 5}, (2, 5, 16)),
        ("Outer", {"channels": 2}, (1, 2, 8, 9)),
        ("Checked", {"channels": 3}, (2, 3, 10)),
        ("Bases", {"channels": 6}, (3, 6)),
        ("Dft", {}, (2, 16)),
        ("Sinusoids", {"channels": 8}, (2, 6, 8)),
    ],
)
def test_filters_built_with_numpy_cost_as_torch_counts(tmp_path, cls, init, shape):
    path = write(tmp_path, "blur.py", BLUR)
    t = static_target(
        path, cls, {k: str(v) for k, v in init.items()}, {"x": ",".join(map(str, shape))}
    )
    build = f"{cls}({', '.join(f'{k}={v}' for k, v in init.items())})"
    truth = counted(path, build, {"x": torch.randn(*shape)})
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth > 0


def test_numpy_of_a_tensor_that_requires_grad_is_no_array(tmp_path):
    path = write(tmp_path, "blur.py", BLUR)
    with pytest.raises(RuntimeError):
        counted(path, "GradNumpy(2)", {"x": torch.randn(2, 2, 9)})
    t = static_target(path, "GradNumpy", {"channels": "2"}, {"x": "2,2,9"})
    assert not t["complete"]


def test_a_numpy_function_not_read_leaves_the_cost_unknown(tmp_path):
    path = write(tmp_path, "blur.py", BLUR)
    t = static_target(path, "Unread", {"channels": "2"}, {"x": "2,2,9"})
    assert counted(path, "Unread(channels=2)", {"x": torch.randn(2, 2, 9)}) > 0
    assert not t["complete"]


def _array(values) -> ArrayV:
    out = ndarrays.call("numpy.array", [_literal(values)], {})
    assert isinstance(out, ArrayV)
    return out


def _literal(x):
    if isinstance(x, list):
        return TupleV(tuple(_literal(i) for i in x))
    if isinstance(x, bool):
        return BoolV(x)
    return FloatV(x) if isinstance(x, float) else IntV(Expr.const(x))


def _shape(a: ArrayV) -> tuple:
    return tuple(d.value for d in a.shape)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "left, right, op",
    [
        ([1.0, 2.0], [[1.0], [3.0]], ast.Mult()),
        ([1, 2, 3], [[1], [2]], ast.Add()),
        ([1, 2, 3], [1, 2, 3], ast.Div()),
        ([[1, 2, 3]], 2.5, ast.Sub()),
        ([[1.0, 2.0, 3.0]], 2, ast.Pow()),
        (3, [[1, 2], [3, 4]], ast.Mult()),
    ],
)
def test_arithmetic_shapes_and_dtypes_are_numpys(left, right, op):
    sym = {ast.Mult: "*", ast.Add: "+", ast.Div: "/", ast.Sub: "-", ast.Pow: "**"}[type(op)]
    truth = eval(f"l {sym} r", {"l": np.array(left), "r": np.array(right)}  # noqa: S307
                 if isinstance(right, list) else {"l": np.array(left), "r": right})  # fmt: skip
    if not isinstance(left, list):
        truth = eval(f"l {sym} r", {"l": left, "r": np.array(right)})  # noqa: S307
    lv = _array(left) if isinstance(left, list) else _literal(left)
    rv = _array(right) if isinstance(right, list) else _literal(right)
    got = ndarrays.binop(op, lv, rv)
    assert isinstance(got, ArrayV)
    assert _shape(got) == truth.shape
    assert got.dtype == str(truth.dtype)


def test_indexing_and_outer_shapes_are_numpys():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    av = _array(a.tolist())
    for text in ("[:, None]", "[None, :, None]", "[1]", "[..., None]", "[:, 1:]", "[0, ::2]"):
        sl = ast.parse(f"a{text}", mode="eval").body.slice  # type: ignore[attr-defined]
        idx = _index_value(sl)
        got = ndarrays.index(av, sl, idx)
        assert isinstance(got, ArrayV) and _shape(got) == eval(f"a{text}").shape, text  # noqa: S307
    outer = ndarrays.call("numpy.outer", [av, _array([1.0, 2.0])], {})
    assert isinstance(outer, ArrayV) and _shape(outer) == np.outer(a, [1.0, 2.0]).shape


def _index_value(sl: ast.expr):
    from shapelint.ops.values import NoneV, SliceV

    def one(e):
        if isinstance(e, ast.Slice):
            parts = [None if p is None else one(p) for p in (e.lower, e.upper, e.step)]
            return SliceV(*parts)
        if isinstance(e, ast.Constant) and e.value is None:
            return NoneV()
        if isinstance(e, ast.Constant) and isinstance(e.value, int):
            return IntV(Expr.const(e.value))
        return None

    if isinstance(sl, ast.Tuple):
        return TupleV(tuple(one(e) for e in sl.elts))
    return one(sl)


@pytest.mark.parametrize(
    "call, args, kwargs",
    [
        ("arange", (5,), {}),
        ("arange", (-3, 4), {}),
        ("arange", (1, 10, 4), {}),
        ("arange", (0.0, 1.0, 0.3), {}),
        ("arange", (5, 1), {}),
        ("linspace", (0.0, 1.0), {}),
        ("linspace", (0, 2, 7), {}),
        ("linspace", (0.0, 1.0), {"num": 3, "endpoint": False}),
    ],
)
def test_ranges_shapes_and_dtypes_are_numpys(call, args, kwargs):
    truth = getattr(np, call)(*args, **kwargs)
    got = ndarrays.call(
        f"numpy.{call}", [_literal(a) for a in args], {k: _literal(v) for k, v in kwargs.items()}
    )
    assert isinstance(got, ArrayV)
    assert _shape(got) == truth.shape
    assert got.dtype == str(truth.dtype)
