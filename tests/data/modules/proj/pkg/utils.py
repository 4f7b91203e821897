import torch
from torch import nn
from jaxtyping import Float
from torch import Tensor


def exists(v):
    return v is not None


def default(v, d):
    return v if exists(v) else d


class FeedForward(nn.Module):
    def __init__(self, dim, mult=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim * mult), nn.GELU(), nn.Linear(dim * mult, dim))

    def forward(self, x: Float[Tensor, "b n dim"]):
        return self.net(x)


def squeeze64(x: Float[Tensor, "b 64"]) -> Float[Tensor, "b 8"]:
    return x[:, :8]
