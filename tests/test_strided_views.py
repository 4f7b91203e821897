"""`Tensor.stride()` and `Tensor.as_strided` (ops/shape_rules.py, ops/saved.py) in a
target run, each module judged by FlopCounterMode: forward, backward and the
activations torch saves, against `cost FILE::M` in process."""

from __future__ import annotations

import textwrap

import pytest

from benchmarks.gen_modules import Generated, judge

pytest.importorskip("torch")

HEAD = """\
import math

import torch
import torch.nn.functional as F
from torch import nn


def frames(x, size: int, step: int):
    # overlapping frames of the last axis, a view built from the tensor's strides
    shape = list(x.shape)
    length = shape.pop(-1)
    n = math.ceil((max(length, size) - size) / step) + 1
    padded = F.pad(x, (0, (n - 1) * step + size - length)).contiguous()
    strides = []
    for d in range(padded.dim()):
        strides.append(padded.stride(d))
    last = strides.pop(-1)
    assert last == 1
    return padded.as_strided(shape + [n, size], strides + [step, 1])


class M(nn.Module):
"""


def _judge(tmp_path, body: str, inputs=None):
    src = HEAD + textwrap.indent(textwrap.dedent(body), "    ")
    return judge(Generated(0, "strided", [], src, {}, inputs or {"x": "2,3,20"}, "M"), tmp_path)


# (layers, forward, input): each exact as torch counts forward, backward and saved
EXACT = {
    # overlapping frames viewed through the tensor's own strides
    "frames": (
        "nn.Linear(5, 7)",
        """
        y = self.lin(frames(x, 5, 3))
        return y.reshape(y.shape[0], -1) @ torch.ones(y.shape[1] * y.shape[2] * 7, 3)
        """,
        "2,3,20",
    ),
    # x.transpose(1, 2) of a (2, 3, 4) tensor has strides (12, 1, 4): a Linear
    # sized by its last stride runs (4 inputs); contiguous strides would say 1
    "transposed_strides": (
        "nn.Linear(4, 5)",
        """
        s = x.transpose(1, 2).stride()
        return self.lin(torch.ones(2, s[2])) + x.stride(0)
        """,
        "2,3,4",
    ),
    # x.as_subclass(torch.Tensor): the same data, on the autograd graph
    "as_subclass_of_tensor": (
        "nn.Sequential(nn.Linear(20, 6), nn.ReLU())",
        """
        h = self.lin(x).as_subclass(torch.Tensor)
        return h @ torch.ones(6, 3)
        """,
        "2,3,20",
    ),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_views_through_strides_are_costed_exactly(tmp_path, name):
    layers, forward, shape = EXACT[name]
    body = f"""
    def __init__(self):
        super().__init__()
        self.lin = {layers}

    def forward(self, x):
    """
    v = _judge(
        tmp_path,
        textwrap.dedent(body) + textwrap.indent(textwrap.dedent(forward), "    "),
        {"x": shape},
    )
    what = (v.outcome, v.truth, v.figure, v.detail, v.backward, v.saved)
    assert v.outcome == "exact" and v.backward == "exact", what
    assert v.saved == "exact", what


@pytest.mark.parametrize(
    "call,runs",
    [
        # reaches past the end of the tensor, which holds its storage alone: torch
        # refuses it
        ("x.as_strided((2, 3, 20), (60, 20, 2))", False),
        # a transposed tensor's storage read as if it were row-major: not followed
        ("x.transpose(1, 2).as_strided((2, 3, 10), (60, 20, 1))", True),
    ],
)
def test_an_as_strided_view_not_surely_within_the_tensor_is_not_followed(tmp_path, call, runs):
    v = _judge(
        tmp_path,
        f"""
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(20, 4)

        def forward(self, x):
            y = {call}
            return self.lin(x) + y.sum()
        """,
    )
    what = (v.outcome, v.truth, v.figure, v.detail)
    if runs:
        assert v.outcome in ("exact", "lower", "unknown"), what
    else:
        assert v.truth is None and not v.complete, what


def test_as_subclass_of_a_class_of_the_project_is_not_followed(tmp_path):
    # its __torch_function__ runs every later op on it: here each linear twice
    src = HEAD.replace(
        "class M(nn.Module):",
        textwrap.dedent(
            """
            class Twice(torch.Tensor):
                @classmethod
                def __torch_function__(cls, func, types, args=(), kwargs=None):
                    out = super().__torch_function__(func, types, args, kwargs or {})
                    if func is F.linear:
                        super().__torch_function__(func, types, args, kwargs or {})
                    return out


            class M(nn.Module):"""
        ),
    )
    src += textwrap.indent(
        textwrap.dedent(
            """
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(20, 6)

            def forward(self, x):
                return self.a(x.as_subclass(Twice))
            """
        ),
        "    ",
    )
    v = judge(Generated(0, "strided", [], src, {}, {"x": "2,3,20"}, "M"), tmp_path)
    what = (v.outcome, v.truth, v.figure, v.complete, v.detail)
    assert v.truth is not None and not v.complete, what
