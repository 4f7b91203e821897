import torch
from torch import nn
from jaxtyping import Float
from torch import Tensor
from pkg.layers import Block
from .utils import squeeze64


class Model(nn.Module):
    def __init__(self, dim=32, depth=2, heads=4):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim, heads=heads) for _ in range(depth)])
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def bad(x: Float[Tensor, "b 32"]):
    return squeeze64(x)
