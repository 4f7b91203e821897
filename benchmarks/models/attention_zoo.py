"""Attention in the forms torch dispatches to fused kernels, for benchmarks/cuda_attention.py:
on CUDA, FlopCounterMode counts these kernels itself, so its count judges shapelint's
convention (SDPA and fused MHA counted by torch's CUDA formula) without any adjustment."""

import torch
import torch.nn.functional as F
from torch import nn


class CausalSDPA(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, n, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, n, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, n, self.heads, d // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, n, d))


class CrossSDPA(nn.Module):
    """Queries and keys of different lengths and a boolean mask over the keys."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)

    def forward(self, x, ctx):
        b, n, d = x.shape
        m = ctx.shape[1]
        h = self.heads
        q = self.q(x).view(b, n, h, d // h).transpose(1, 2)
        k, v = self.kv(ctx).chunk(2, dim=-1)
        k = k.reshape(b, m, h, d // h).transpose(1, 2)
        v = v.reshape(b, m, h, d // h).transpose(1, 2)
        mask = torch.ones(b, 1, n, m, dtype=torch.bool, device=x.device)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return y.transpose(1, 2).reshape(b, n, d)


class FusedMHA(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]


class FusedEncoder(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, batch_first=True)

    def forward(self, x):
        return self.layer(x)
