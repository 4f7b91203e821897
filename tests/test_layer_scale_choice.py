"""open_clip's ResidualAttentionBlock shape (issue 25's class mutants): a
`LayerScale(d_model, ls_init_value) if ls_init_value is not None else nn.Identity()`
on each residual, and an attention helper called with an optional key. Plain check
keeps the residual's shape through both, so a layer that widens it is an error at
the add; every verdict is torch's, at both constructions."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose, torch_raises

BLOCK = """
from typing import Optional

import torch
from jaxtyping import Float
from torch import Tensor, nn


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones({gamma}))

    def forward(self, x):
        return x * self.gamma


class Block(nn.Module):
    def __init__(self, d_model: int, n_head: int, ls_init_value: float = {init}):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_head, batch_first=True)
        self.ls_1 = {scale}
        self.fc = nn.Linear(d_model, {out})

    def attention(self, q_x, k_x: Optional[Tensor] = None):
        k_x = k_x if k_x is not None else q_x
        return self.attn(q_x, k_x, k_x, need_weights=False)[0]

    def forward(self, q_x: Float[Tensor, "b s d_model"], k_x: Optional[Tensor] = None):
        {reveal}
        x = q_x + self.ls_1(self.attention(q_x, k_x))
        return x + self.ls_1(self.fc(x))
"""
CHOICE = "LayerScale(d_model, ls_init_value) if ls_init_value is not None else nn.Identity()"


def _source(**given) -> str:
    parts = dict(gamma="dim", init="None", scale=CHOICE, out="d_model", reveal="pass")
    parts.update(given)
    return BLOCK.format(**parts)


def _errors(source: str) -> list[str]:
    return [f"{d.line} {d.code}" for d in diagnose(source) if d.severity == "error"]


def _revealed(source: str) -> list[str]:
    return [d.message for d in diagnose(source) if d.code == "SHP390"]


def test_a_helper_given_an_optional_key_keeps_the_querys_shape():
    # the summary of `attention`, made for any q_x, has no shape; run on this q_x
    # beside a key of no known kind it has q_x's (MHA's output is the query's)
    source = _source(reveal="reveal_shape(self.attention(q_x, k_x))")
    assert _revealed(source) == ["revealed shape: [b, s, d_model]"]


def test_a_float_times_ones_is_sized_by_the_construction():
    # `init_values * torch.ones(dim)` at a float init_values is [dim]; the summary,
    # made for an init_values that may be a tensor, leaves it open
    source = _source(
        init="1e-5",
        scale="LayerScale(d_model, ls_init_value)",
        reveal="reveal_shape(self.ls_1.gamma)",
    )
    assert _revealed(source) == ["revealed shape: [d_model] float32"]


@pytest.mark.parametrize(
    ("init", "where"),
    # either layer: the add, after the alternative that raises (LayerScale's mul)
    # is set aside, and LayerScale's mul on the path where ls_init_value is given
    # (init_paths: that path's instance holds the LayerScale of a float's gamma);
    # LayerScale alone (a float default): its mul, via the forward
    [("None", ["15 SHP308", "32 SHP308"]), ("0.1", ["15 SHP308"])],
)
def test_a_widened_residual_is_an_error_under_either_layer(init, where):
    source = _source(init=init, out="d_model * 2")
    assert torch_raises(source, "Block(8, 2)", (2, 5, 8))
    assert torch_raises(source, "Block(8, 2, 0.1)", (2, 5, 8))
    assert _errors(source) == where


ON_PATH = "(on the path where `ls_init_value is not None` is true (line 22))"


def test_a_float_parameter_defaulting_to_none_may_be_none():
    # `ls_init_value: float = None` is None unless given (PEP 484's implicit
    # Optional): the LayerScale whose gamma cannot broadcast is built only then,
    # an error on that path of the constructor's flag, said with the path
    source = _source(gamma="dim * 2")
    assert not torch_raises(source, "Block(8, 2)", (2, 5, 8))
    assert torch_raises(source, "Block(8, 2, 0.1)", (2, 5, 8))
    found = [d for d in diagnose(source) if d.severity == "error"]
    assert [(d.line, d.code) for d in found] == [(15, "SHP308")]
    assert found[0].message.endswith(ON_PATH)


def test_the_correct_block_is_clean():
    source = _source()
    assert not torch_raises(source, "Block(8, 2)", (2, 5, 8))
    assert not torch_raises(source, "Block(8, 2, 0.1)", (2, 5, 8))
    assert _errors(source) == []
