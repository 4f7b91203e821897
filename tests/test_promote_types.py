"""analysis/promote_types: `torch.promote_types(a, b)` and
`functools.reduce(torch.promote_types, dtypes)` of torch dtypes are the dtype torch
promotes to, so a cast to it has the bytes of the tensor torch makes; with the input's
dtype (the run's default float) the promotion may be of any float width: bytes open,
FLOPs and backward known. A float of a width not known compares unequal to an integer
dtype, undecided against a float one."""

from __future__ import annotations

import pytest

from tests.helpers import run_class, torch_figures, written_module

SOURCE = """
import functools

import torch
import torch.nn as nn

PAIRS = {
    "halves": (torch.float16, torch.bfloat16),
    "wide": (torch.float16, torch.float64),
    "ints": (torch.int8, torch.uint8),
    "mixed": (torch.int32, torch.float16),
}


class Promoted(nn.Module):
    def __init__(self, pair="halves"):
        super().__init__()
        self.a, self.b = PAIRS[pair]

    def forward(self, x):
        return x.to(torch.promote_types(self.a, self.b)) * 2


class Reduced(nn.Module):
    def __init__(self, pair="halves"):
        super().__init__()
        self.dts = [*PAIRS[pair], torch.float16]

    def forward(self, x):
        return x.to(functools.reduce(torch.promote_types, self.dts)) * 2


class WithInput(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        dt = torch.promote_types(x.dtype, torch.float32)
        return self.lin(x).to(dt).exp()


class IntOrFloat(WithInput):
    def forward(self, x):
        dt = torch.promote_types(x.dtype, torch.float16)
        if dt == torch.int64:
            return x
        return self.lin(x)
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    pytest.importorskip("torch")
    return written_module(tmp_path_factory.mktemp("promote"), "promote_types_mod", SOURCE)


@pytest.mark.parametrize("cls", ["Promoted", "Reduced"])
@pytest.mark.parametrize("pair", ["halves", "wide", "ints", "mixed"])
def test_a_promotion_of_torch_dtypes_is_the_dtype_torch_gives(source, cls, pair):
    import torch

    path, mod = source
    x = torch.randn(4, 8)
    y = getattr(mod, cls)(pair)(x)
    cast = x.to(y.dtype)
    moved = 0 if cast is x else x.nbytes + cast.nbytes  # `.to` of x's own dtype: x
    want = moved + (cast.nbytes + y.nbytes)
    t = run_class(path, cls, {"pair": pair}, {"x": (4, 8)}, False)
    assert t["bytes_complete"]  # main: the call not read, the cast's dtype not known
    assert t["bytes_value"] == want


def test_a_promotion_with_the_default_float_is_a_float_of_a_width_not_known(source):
    path, mod = source
    t = run_class(path, "WithInput", {}, {"x": (4, 8)}, True)
    fwd, bwd, _params, _shape = torch_figures(mod, "WithInput", {}, {"x": (4, 8)}, True)
    # float32, or float64 under a float64 default: bytes open, grad kept
    assert not t["bytes_complete"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"]) == (fwd, bwd)


def test_a_float_of_a_width_not_known_is_no_integer_dtype(source):
    path, mod = source
    t = run_class(path, "IntOrFloat", {}, {"x": (4, 8)}, True)
    fwd, bwd, _params, _shape = torch_figures(mod, "IntOrFloat", {}, {"x": (4, 8)}, True)
    assert t["complete"] and t["backward_complete"]
    assert (t["flops_value"], t["flops_backward_value"]) == (fwd, bwd)
