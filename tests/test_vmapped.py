"""`torch.vmap(f, in_dims, out_dims)` and `torch.func.vmap` (analysis/vmapped.py): f run on
one slice, the batch dim put back at out_dims, its FLOPs the slice's times the batch size
as FlopCounterMode counts the batched products; a slice's matrix-vector or dot product,
which batched runs as a counted matrix product, and arguments whose batch sizes may
differ, leave the call of unknown cost. Each module judged by FlopCounterMode, forward
and backward, against `cost FILE::M` in process."""

from __future__ import annotations

import textwrap

import pytest

from benchmarks.gen_modules import Generated, judge

pytest.importorskip("torch")

HEAD = """\
import torch
import torch.nn.functional as F
from torch import nn


class M(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, 2 * d))
        self.k = nn.Parameter(torch.randn(3, d, 3))
        self.lin = nn.Linear(d, d)
"""


def judge_forward(tmp_path, forward: str, inputs: dict | None = None):
    src = HEAD + textwrap.indent(textwrap.dedent(forward), "    ")
    return judge(Generated(0, "vmap", [], src, {"d": "4"}, inputs or {"x": "5,3,4"}, "M"), tmp_path)


EXACT = {
    # a lambda over the first dim, an unbatched weight captured
    "lambda": """
        def forward(self, x):
            return torch.vmap(lambda t: t @ self.w)(x)
    """,
    # a module mapped, torch.func's name, a keyword that changes no count
    "module": """
        def forward(self, x):
            return torch.func.vmap(self.lin, chunk_size=2)(x)
    """,
    # a nested def over dim 1, the result's batch dim put at the end
    "dims": """
        def forward(self, x):
            def f(t):
                return F.conv1d(t, self.k, padding=1)
            return torch.vmap(f, in_dims=1, out_dims=-1)(x.transpose(1, 2).unsqueeze(0))
    """,
    # per-argument in_dims, one argument not mapped, a tuple result
    "tuple": """
        def forward(self, x):
            def f(t, w):
                y = t @ w
                return y, y.relu()
            a, b = torch.vmap(f, in_dims=(0, None), out_dims=(0, 1))(x, self.w)
            return a + b.transpose(0, 1)
    """,
    # torch.mv mapped directly: batched over its vector too, a matrix product
    # (2·B·n·m, one product per operand requiring grad backward)
    "mv_over_both": """
        def forward(self, x):
            return torch.vmap(torch.mv)(self.k.transpose(1, 2), x[:3, 0])
    """,
    "mv_over_the_vector": """
        def forward(self, x):
            return torch.vmap(torch.mv, in_dims=(None, 0))(self.w.T, x[:, 0])
    """,
    # torch.dot batched over both operands: a matrix product
    "dot_over_both": """
        def forward(self, x):
            return torch.vmap(torch.dot)(x[:, 0], self.lin(x[:, 1]))
    """,
    # vmap of vmap: both batch dims back in place
    "nested": """
        def forward(self, x):
            return torch.vmap(torch.vmap(lambda t: t @ self.w))(x.unsqueeze(1).expand(-1, 2, -1, -1))
    """,
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_a_vmapped_function_costs_the_batch_times_a_slice(tmp_path, name):
    v = judge_forward(tmp_path, EXACT[name])
    what = (v.outcome, v.truth, v.figure, v.complete, v.detail, v.backward)
    assert v.outcome == "exact", what
    assert v.backward == "exact", what


NOT_KNOWN = {
    # on a slice `w @ t` is mv (not counted); batched over t it is an mm torch counts
    "matrix_vector": """
        def forward(self, x):
            return torch.vmap(lambda t: self.w.T @ t)(x[:, 0])
    """,
    # torch.mv batched over its matrix alone: an mv torch does not count where the
    # matrix is contiguous, a counted matrix product for this transposed one
    "mv_over_the_matrix": """
        def forward(self, x):
            return torch.vmap(torch.mv, in_dims=(0, None))(self.k.transpose(1, 2), x[0, 0])
    """,
    # sizes 5 and 3 along the mapped dims: torch raises
    "sizes_differ": """
        def forward(self, x):
            return torch.vmap(lambda a, b: a @ self.w + b.sum())(x, x.transpose(0, 1))
    """,
}


@pytest.mark.parametrize("name", sorted(NOT_KNOWN))
def test_what_batching_may_change_or_refuse_is_no_figure(tmp_path, name):
    v = judge_forward(tmp_path, NOT_KNOWN[name])
    what = (v.outcome, v.truth, v.figure, v.complete, v.detail)
    assert not v.complete, what
    if name == "sizes_differ":
        assert v.outcome == "raise_ok", what  # torch raises; no figure either
    else:
        assert v.outcome in ("lower", "unknown"), what
        assert "torch.vmap" in v.detail, what


def test_a_random_op_under_the_default_randomness_is_no_figure(tmp_path):
    """torch refuses a random op in a vmapped function unless randomness is "same" or
    "different": no figure for the refused call; with randomness given, the count."""
    refused = judge_forward(
        tmp_path,
        """
        def forward(self, x):
            return torch.vmap(lambda t: F.dropout(t @ self.w, 0.5, training=True))(x)
        """,
    )
    assert refused.outcome == "raise_ok" and not refused.complete, refused.detail
    allowed = judge_forward(
        tmp_path,
        """
        def forward(self, x):
            f = lambda t: F.dropout(t @ self.w, 0.5, training=True)  # noqa: E731
            return torch.vmap(f, randomness="different")(x)
        """,
    )
    assert allowed.outcome == "exact", (
        allowed.outcome,
        allowed.truth,
        allowed.figure,
        allowed.detail,
    )
