"""Constructs of real modules (perceiver-pytorch): layers made by lambdas
through a caching decorator mapped over them, flags repeated per layer, a
kwargs dict updated before it is passed on, an index spelled with a starred
run of Nones and `Ellipsis`."""

from functools import wraps
from math import pi

import torch
from einops import rearrange
from torch import nn


def cache_fn(f):
    cache = dict()

    @wraps(f)
    def cached_fn(*args, _cache=True, key=None, **kwargs):
        if not _cache:
            return f(*args, **kwargs)
        if key in cache:
            return cache[key]
        result = f(*args, **kwargs)
        cache[key] = result
        return result

    return cached_fn


def fourier_encode(x, max_freq, num_bands=4):
    x = rearrange(x, "... -> ... 1")
    orig_x = x
    scales = torch.linspace(1.0, max_freq / 2, num_bands, device=x.device, dtype=x.dtype)
    scales = scales[(*((None,) * (len(x.shape) - 1)), Ellipsis)]
    x = x * scales * pi
    x = torch.cat([x.sin(), x.cos()], dim=-1)
    return torch.cat((x, orig_x), dim=-1)


class PreNorm(nn.Module):
    def __init__(self, dim, fn, context_dim=None):
        super().__init__()
        self.fn = fn
        self.norm = nn.LayerNorm(dim)
        self.norm_context = nn.LayerNorm(context_dim) if context_dim is not None else None

    def forward(self, x, **kwargs):
        x = self.norm(x)
        if self.norm_context is not None:
            kwargs.update(context=self.norm_context(kwargs["context"]))
        return self.fn(x, **kwargs)


class Cross(nn.Module):
    def __init__(self, dim, context_dim):
        super().__init__()
        self.to_kv = nn.Linear(context_dim, dim)

    def forward(self, x, context=None):
        return x + self.to_kv(context).mean(dim=1, keepdim=True)


class Net(nn.Module):
    def __init__(self, dim, depth, bands=2, tie=False, flags=False):
        super().__init__()
        if isinstance(flags, bool):
            flags = (flags,) * depth
        self.flags = flags
        context_dim = 2 * (2 * bands + 1)
        self.bands = bands
        get_block = lambda: PreNorm(dim, Cross(dim, context_dim), context_dim=context_dim)  # noqa: E731
        get_extra = lambda: nn.Linear(dim, dim)  # noqa: E731
        get_block, get_extra = map(cache_fn, (get_block, get_extra))
        self.layers = nn.ModuleList([])
        for i in range(depth):
            args = {"_cache": i > 0 and tie}
            self.layers.append(get_block(**args))
        self.extra = get_extra()

    def forward(self, x, pos):
        context = fourier_encode(pos, 10.0, self.bands)
        context = rearrange(context, "b n c d -> b n (c d)")
        for i, layer in enumerate(self.layers):
            x = layer(x, context=context)
            if self.flags[i]:
                x = self.extra(x)
        return self.extra(x)
