"""Modules whose backward depends on what the analysis cannot know (here the
environment the code runs in): tests/test_backward_reach.py measures each with
the variable set and unset, and the static figure must hold for both or say it
does not know."""

import os

import torch
from torch import nn

SCALE = "SHAPELINT_TEST_SCALE" in os.environ


class ScaledOrNot(nn.Module):
    """`x * (self.gamma if SCALE else 1.0)`: a value the analysis holds as not known
    at all may be a parameter, and what it multiplies then requires grad."""

    def __init__(self):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(8))
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = (x * (self.gamma if SCALE else 1.0)).view_as(x)
        return self.lin(y)


FUSED = "SHAPELINT_TEST_UNFUSED" not in os.environ


class Attend(nn.Module):
    """Fused attention or the products written out, as a flag read from the
    environment decides (timm's `use_fused_attn()`): the same forward, a backward
    that differs (the fused kernel recomputes the scores)."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.fused = FUSED

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        if self.fused:
            y = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        else:
            a = (q @ k.transpose(-2, -1)) * (c // self.heads) ** -0.5
            y = a.softmax(dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, n, c))


class AttendThenProject(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.attn = Attend(d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        return self.out(self.attn(x))
