"""Annotations that lie on purpose, for tests/test_runtime.py (kept out of
fixtures/ so the static fixture test does not need to know about them)."""

import torch
from einops import einsum
from jaxtyping import Float
from torch import Tensor


def project(
    x: Float[Tensor, "batch seq d_in"], w: Float[Tensor, "d_in d_out"]
) -> Float[Tensor, "batch seq d_in"]:
    return einsum(x, w, "batch seq d_in, d_in d_out -> batch seq d_out")


def scores(
    q: Float[Tensor, "batch seq d"], k: Float[Tensor, "batch seq d"]
) -> Float[Tensor, "batch seq seq"]:
    product: Float[Tensor, "batch seq d"] = torch.bmm(q, k.mT)
    return product


def helper(x: Float[Tensor, "n d"]) -> Float[Tensor, "d n"]:
    return x * 2


def calls_helper(x: Float[Tensor, "batch d"]) -> Float[Tensor, "batch d"]:
    return helper(x)
