"""x-transformers' idioms: `maybe(fn)(x)` (a `@wraps` closure, `fn = identity`
when absent), `default(...)` with `callable`, `self.attn_fn = partial(F.softmax,
dim=-1)`, an einsum equation built by an f-string from a decided branch."""

from functools import partial, wraps

import torch.nn.functional as F
from einops import rearrange
from torch import einsum, nn


def exists(val):
    return val is not None


def default(*args):
    for arg in args:
        if exists(arg):
            return arg() if callable(arg) else arg
    return None


def identity(t, *args, **kwargs):
    return t


def maybe(fn=None):
    if not exists(fn):
        fn = identity

    @wraps(fn)
    def inner(x, *args, **kwargs):
        if not exists(x):
            return x
        return fn(x, *args, **kwargs)

    return inner


class Attention(nn.Module):
    def __init__(self, dim, heads=2, dim_head=None, qk_norm=False, causal=None):
        super().__init__()
        dim_head = default(dim_head, dim // heads)
        inner = dim_head * heads
        self.heads = heads
        self.causal = default(causal, False)
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_kv = nn.Linear(dim, 2 * inner, bias=False)
        self.q_norm = nn.LayerNorm(dim_head) if qk_norm else None
        self.attn_fn = partial(F.softmax, dim=-1)
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x):
        q = rearrange(self.to_q(x), "b n (h d) -> b h n d", h=self.heads)
        k, v = self.to_kv(x).chunk(2, dim=-1)
        k, v = (rearrange(t, "b n (h d) -> b h n d", h=self.heads) for t in (k, v))
        q = maybe(self.q_norm)(q)
        eq = "b h j d" if k.ndim == 4 else "b j d"
        sim = einsum(f"b h i d, {eq} -> b h i j", q, k)
        if self.causal:
            sim = sim.triu(1)
        attn = self.attn_fn(sim)
        out = einsum(f"b h i j, {eq} -> b h i d", attn, v)
        return self.to_out(rearrange(out, "b h n d -> b n (h d)"))
