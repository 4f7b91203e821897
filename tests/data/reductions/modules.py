"""Modules around ops with no FLOPs of their own in torch's counter (cdist,
var_mean, cosine_similarity, copy_, index_put, sdpa_kernel), for
tests/test_reduction_stubs.py: each is judged against FlopCounterMode and the
saved-tensor hooks."""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel


class Dist(nn.Module):
    """30 rows: torch takes the matrix-product path, whose backward runs products."""

    def __init__(self, d=8, r=40):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.c = nn.Parameter(torch.randn(2, r, d))

    def forward(self, x):
        return torch.cdist(self.a(x), self.c)


class DistSmall(Dist):
    """3 rows against 4: the direct kernel, no products forward or backward."""

    def __init__(self):
        super().__init__(r=4)


class DistNoMm(Dist):
    def forward(self, x):
        return torch.cdist(self.a(x), self.c, compute_mode="donot_use_mm_for_euclid_dist")


class DistP1(Dist):
    def forward(self, x):
        return torch.cdist(self.a(x), self.c, p=1.0)


class VarMean(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        y = self.a(x)
        var, mean = torch.var_mean(y, dim=-1, keepdim=True)
        return (y - mean) * var


class Cosine(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        y = self.a(x)
        return F.cosine_similarity(y, y[:, :1], dim=-1)


class CopyInto(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        grid = torch.zeros(*x.shape, 2)
        grid[..., 0].copy_(self.a(x))
        return self.a(grid[..., 0])


class IndexPut(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        rows = torch.tensor([0, 1])
        return self.a(x).index_put((rows,), torch.zeros(2, x.shape[1], x.shape[2]))


class Kernel(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        q = self.a(x)
        with sdpa_kernel([SDPBackend.MATH]):
            return F.scaled_dot_product_attention(q, q, q)


class SetItem(nn.Module):
    """A write of what requires grad makes the tensor written require it."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        grid = torch.zeros(*x.shape, 2)
        grid[..., 0] = self.a(x)
        return self.a(grid[..., 0])


class AddInPlace(SetItem):
    def forward(self, x):
        acc = torch.zeros(*x.shape)
        alias = acc
        acc.add_(self.a(x))
        return self.a(alias)


class Unsqueezed(SetItem):
    """unsqueeze_ changes the tensor itself, under each of its names."""

    def forward(self, x):
        y = self.a(x)
        same = y
        y.unsqueeze_(1)
        return same * self.a(x)


def _orthogonal(rows, cols):
    """performer's random features: QR blocks, stacked, scaled by a diagonal."""
    full = int(rows / cols)
    blocks = [torch.linalg.qr(torch.randn(cols, cols), mode="reduced")[0].t() for _ in range(full)]
    rest = rows - full * cols
    if rest > 0:
        q, _ = torch.qr(torch.randn(cols, cols))
        blocks.append(q.t()[:rest])
    return torch.diag(torch.randn(rows, cols).norm(dim=1)) @ torch.cat(blocks)


class Projected(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.register_buffer("p", _orthogonal(int(d * math.log(d)), d))

    def forward(self, x):
        return self.a(x) @ self.p.t()


class Metadata(nn.Module):
    """type_as, to, view_as, *_like and new_* take a dtype or a shape from a tensor
    that requires grad: their results do not."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.register_buffer("p", torch.randn(d, d))

    def forward(self, x):
        y = self.a(x)
        p = self.p.type_as(y).to(y)
        z = torch.ones_like(y) + y.new_zeros(y.shape)
        q = self.p.view_as(p).expand_as(p)
        return torch.einsum("bnd,ed->bne", y, p) + z @ q


class NumpyNames(nn.Module):
    """numpy's names for dim and keepdim, which torch's argument parser binds."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        m = x.amax(axis=-1, keepdims=True)
        s = torch.sum(x, axis=1, keepdims=True)
        return self.a(m * s)


class Permuted(nn.Module):
    """A subset by a random permutation (a slice past its end keeps all of it),
    a distance and a trace: scalars the counter counts no FLOPs for."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        s = x[torch.randperm(len(x))[:1000]]
        y = self.a(s)
        return self.a(y * torch.dist(y, x, 1) + torch.trace(y[0]))


class Spectrogram(nn.Module):
    """A mel-style projection of a short-time Fourier transform's magnitudes."""

    def __init__(self, n_fft=16, mels=4):
        super().__init__()
        self.n_fft = n_fft
        self.fb = nn.Parameter(torch.randn(n_fft // 2 + 1, mels))

    def forward(self, x):
        window = torch.hann_window(self.n_fft)
        s = torch.stft(x.flatten(1), self.n_fft, window=window, return_complex=True)
        return torch.matmul(s.abs().transpose(-1, -2), self.fb)


class Pairwise(nn.Module):
    """F.pairwise_distance of a projection against a broadcast row: the norm keeps
    the broadcast difference and its result."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        y = self.a(x)
        return (
            F.pairwise_distance(y, y[0], p=1, keepdim=True)
            + torch.pairwise_distance(x, y)[..., None]
        )


class PairwiseRow(nn.Module):
    """The broadcast last axis from the second operand (the first's is 1)."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        return F.pairwise_distance(self.a(x)[..., :1], x)
