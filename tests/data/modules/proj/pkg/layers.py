from torch import nn
from .attend import Attend
from . import utils


class Block(nn.Module):
    def __init__(self, dim, heads=4, ff_mult=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attend(dim, heads=heads)
        self.norm2 = nn.LayerNorm(dim)
        self.ff = utils.FeedForward(dim, mult=ff_mult)

    def forward(self, x):
        x = self.attn(self.norm1(x)) + x
        return self.ff(self.norm2(x)) + x
