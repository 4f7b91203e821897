"""Small modules whose activation bytes tests/test_saved.py holds to the tensors
torch saves for backward (torch.autograd.graph.saved_tensors_hooks)."""

import os

import einops
import einops.layers.torch
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Lin(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, 2 * d)
        self.b = nn.Linear(2 * d, d)

    def forward(self, x):
        return self.b(self.a(x))


class MLP(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ReluMLP(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class Norm(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        return self.ln(self.proj(x))


class Attention(nn.Module):
    """Softmax attention written out: q @ k^T over transposed views of one
    projection, softmax, and the product with v."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * 0.5
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.out(y)


class Sdpa(Attention):
    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.out(y)


class SdpaGrouped(nn.Module):
    """Grouped-query attention (four query heads, two key and value heads, enable_gqa):
    CPU's fused kernel, which keeps the two-head key and value as they are."""

    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        B, T, C = x.shape
        q = self.q(x).view(B, T, 4, 2).transpose(1, 2)
        k, v = self.kv(x).view(B, T, 4, 2).transpose(1, 2).chunk(2, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


class ConvBnRelu(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.conv = nn.Conv2d(c, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        return self.conv2(F.relu(self.bn(self.conv(x))))


class LPPooled(nn.Module):
    """A power-average pool saves its input, the input's power and four tensors of
    its output's size (torch.nn.functional.lp_pool2d's Python)."""

    def __init__(self, c=4):
        super().__init__()
        self.conv = nn.Conv2d(c, 8, 3, padding=1)
        self.pool = nn.LPPool2d(2, 2)

    def forward(self, x):
        y = self.pool(self.conv(x))
        return F.lp_pool1d(y.flatten(2), 3.0, 2, ceil_mode=True)


class TableInForward(nn.Module):
    """A table a forward registers as a buffer (over one registered as None) and
    cdist saves: made by that forward, so an activation of it."""

    def __init__(self, d=8):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.register_buffer("total", torch.ones(5, d))
        self.register_buffer("_table", None, persistent=False)

    @property
    def table(self):
        if self._table is None:
            table = self.total / 2
            self.register_buffer("_table", table, persistent=False)
            return table
        return self._table

    def forward(self, x):
        return torch.cdist(self.proj(x), self.table[None].expand(x.shape[0], -1, -1))


class FunctionalBn(nn.Module):
    """batch_norm called as a function, as BatchNorm subclasses that copy its forward
    do: it saves its input and, in training, the batch statistics."""

    def __init__(self, c=4):
        super().__init__()
        self.conv = nn.Conv2d(c, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.weight = nn.Parameter(torch.ones(8))
        self.bias = nn.Parameter(torch.zeros(8))
        self.register_buffer("running_mean", torch.zeros(8))
        self.register_buffer("running_var", torch.ones(8))

    def forward(self, x):
        y = self.conv(x)
        y = F.batch_norm(
            y, self.running_mean, self.running_var, self.weight, self.bias, self.training, 0.1, 1e-5
        )
        return self.conv2(F.relu(y))


class Dropped(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.drop = nn.Dropout(0.1)
        self.b = nn.Linear(d, d)

    def forward(self, x):
        return self.b(self.drop(self.a(x)))


class Frozen(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.enc = nn.Linear(d, 4 * d)
        self.enc.requires_grad_(False)
        self.head = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.head(F.gelu(self.enc(x)))


class Block(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Ckpt(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.block = Block(d)

    def forward(self, x):
        h = self.inp(x)
        return checkpoint(self.block, h, use_reentrant=True)


class Gated(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        h = self.a(x)
        return h * torch.sigmoid(h)


class Stack(nn.Module):
    def __init__(self, d=8, n=3):
        super().__init__()
        self.blocks = nn.ModuleList([MLP(d) for _ in range(n)])

    def forward(self, x):
        for b in self.blocks:
            x = x + b(x)
        return x


class Picked(nn.Module):
    """Indexing by a computed tensor saves the index (int64) for backward."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)

    def forward(self, x):
        h = self.a(x)
        idx = h[0, :, 0].argsort()
        return h[:, idx] * 2


class InPlace(nn.Sequential):
    """ReLU(inplace=True) after a convolution and a Linear: the result is the
    input's storage, saved once by the ReLU and by the next layer."""

    def __init__(self, c=4, act=nn.ReLU):
        params = {"inplace": True}
        super().__init__(
            nn.Conv2d(c, c, 3, padding=1),
            act(**params),
            nn.Conv2d(c, c, 3, padding=1),
            act(**params),
            nn.Flatten(),
            nn.Linear(c * 25, 8),
            nn.ReLU(inplace=True),
            nn.Linear(8, 8),
        )


class Queried(nn.Module):
    """Learnt queries repeated over the batch (an expanded parameter) attend to the input."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.queries = nn.Parameter(torch.randn(heads, 4, d // heads))
        self.kv = nn.Linear(d, 2 * d)
        self.heads = heads

    def forward(self, x):
        from einops import rearrange, repeat

        q = repeat(self.queries, "h q d -> b h q d", b=x.shape[0])
        k, v = self.kv(x).chunk(2, dim=-1)
        k = rearrange(k, "b n (h d) -> b h n d", h=self.heads)
        v = rearrange(v, "b n (h d) -> b h n d", h=self.heads)
        return F.scaled_dot_product_attention(q, k, v)


class Twice(nn.Module):
    """Two equal blocks called one after the other: the second call's analysis is
    reused, but its input is another tensor, which its first Linear saves."""

    def __init__(self, d=8):
        super().__init__()
        self.b1 = MLP(d)
        self.b2 = MLP(d)

    def forward(self, x):
        return self.b2(self.b1(x))


class Again(nn.Module):
    """One block called three times: the third call's analysis is reused (arguments
    equal to the second's), but its input is another tensor, which its Linear saves."""

    def __init__(self, d=8):
        super().__init__()
        self.b = MLP(d)

    def forward(self, x):
        return self.b(self.b(self.b(x)))


class Reused(nn.Module):
    """The block's second call is served from its first one's analysis, but its
    input was not saved before, as the first one's was (by the ReLU)."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = MLP(d)

    def forward(self, x):
        h = F.relu(self.a(x))
        return self.b(self.b(h) * 2)


class ViewReused(nn.Module):
    """The block's first call is given half of a wider tensor (a view: the Linear
    saves that whole storage), its second an equal-shaped tensor of its own: the
    second may not reuse the first one's figure."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, 2 * d)
        self.b = MLP(d)

    def forward(self, x):
        h = self.a(x).chunk(2, -1)[1]
        return self.b(self.b(h) * 2)


class SplitChannelsReshaped(nn.Module):
    """A part of a split along the channels (a part of longer rows) reshaped: a
    view of the projection's storage, since the axes it merges lie within the
    part, which the grouped conv saves whole."""

    def __init__(self, dim=4):
        super().__init__()
        self.kd = dim // 2
        h = dim + self.kd * 2
        self.qkv = nn.Sequential(nn.Conv2d(dim, h, 1, bias=False), nn.BatchNorm2d(h))
        self.pe = nn.Conv2d(dim, dim, 3, 1, 1, groups=dim, bias=False)

    def forward(self, x):
        B, C, H, W = x.shape
        N = H * W
        qkv = self.qkv(x)
        q, k, v = qkv.view(B, 1, self.kd * 2 + C, N).split([self.kd, self.kd, C], dim=2)
        return self.pe(v.reshape(B, C, H, W))


class Heads(nn.Module):
    """Attention written with einops: heads split off by rearrange (a permuted
    view, which matmul copies) and merged back (a copy)."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        from einops import rearrange

        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = rearrange(q, "b n (h d) -> b h n d", h=self.heads)
        k = rearrange(k, "b n (h d) -> b h n d", h=self.heads)
        v = rearrange(v, "b n (h d) -> b h n d", h=self.heads)
        att = (q @ k.transpose(-1, -2)).softmax(dim=-1)
        y = rearrange(att @ v, "b h n d -> b n (h d)")
        return self.out(y)


class HeadsLayer(Heads):
    """Heads with einops' Rearrange layers."""

    def __init__(self, d=8, heads=2):
        super().__init__(d, heads)
        from einops.layers.torch import Rearrange

        self.split = Rearrange("b n (h d) -> b h n d", h=heads)
        self.merge = Rearrange("b h n d -> b n (h d)")

    def forward(self, x):
        q, k, v = map(self.split, self.qkv(x).chunk(3, dim=-1))
        att = (q @ k.transpose(-1, -2)).softmax(dim=-1)
        return self.out(self.merge(att @ v))


class Cross(nn.Module):
    """Decoder layers over one memory: each layer's projection saves the same memory
    storage, which torch keeps once."""

    def __init__(self, d=8, n=3):
        super().__init__()
        self.mem = nn.Linear(d, d)
        self.layers = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])

    def forward(self, x):
        memory = self.mem(x)
        for layer in self.layers:
            x = x + layer(memory) * x
        return x


class CrossLoop(Cross):
    """One layer applied n times over the same memory (a loop counted as one turn
    times n)."""

    def forward(self, x):
        memory = self.mem(x)
        for _ in range(len(self.layers)):
            x = x + self.layers[0](memory) * x
        return x


class CastNorm(nn.LayerNorm):
    """A cast to the dtype a tensor already has returns the tensor itself (no copy):
    the norm saves the input's storage, which is no activation."""

    def __init__(self, d=8):
        super().__init__(d)

    def forward(self, x):
        return super().forward(x.float()).type(x.dtype)


class Swapped3(nn.Module):
    """Heads folded into the batch (a copy), then `q @ k.transpose(-2, -1)` in three
    axes: matmul's reshape of the swapped k is a view, and torch saves k's storage."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)

    def forward(self, x):
        b, n, _ = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.reshape(3, b * self.heads, n, -1).unbind(0)
        att = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return att @ v


class Swapped4(nn.Module):
    """The same in four axes, heads apart: leading axes still merge as a view."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)

    def forward(self, x):
        b, n, _ = x.shape
        q = self.q(x).view(b, n, self.heads, -1).permute(0, 2, 1, 3).contiguous()
        k = self.k(x).view(b, n, self.heads, -1).permute(0, 2, 1, 3).contiguous()
        return (q @ k.transpose(-2, -1)).softmax(dim=-1)


class Warp(nn.Module):
    """grid_sample over a volume keeps its input and its grid: the grid a product of
    a parameter."""

    def __init__(self, c=4):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.theta = nn.Parameter(torch.randn(1, 4, 3))

    def forward(self, x):
        n, _, h, w = x.shape
        grid = torch.ones(n, h * w, 4).bmm(self.theta.expand(n, 4, 3)).view(n, 1, h, w, 3)
        return F.grid_sample(self.conv(x).unsqueeze(2), grid, align_corners=True)


class Solve(nn.Module):
    """linalg.solve keeps A, its LU factors, the int32 pivots and the solution."""

    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Parameter(torch.randn(d, d) * 0.1)
        self.register_buffer("eye", torch.eye(d))

    def forward(self, x):
        r = torch.linalg.solve(self.eye - self.q, self.eye + self.q, left=False)
        return torch.linalg.solve(r + 4 * self.eye, x.transpose(-1, -2)).transpose(-1, -2)


class Unpacked(nn.Module):
    """`h, c = x` takes rows of the input: views of its storage, as untracked as it
    (a Linear without bias keeps its input: the input's storage, not counted)."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d, bias=False)

    def forward(self, x):
        h, c = x
        return self.lin(h) * c


class RowLoop(nn.Module):
    """`for r in x` walks views of the input's rows: a Linear of each keeps its row,
    the input's storage, which is not counted."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        rows = []
        for r in x:
            rows.append(self.lin(r))
        return torch.stack(rows)


class Pairs(nn.Module):
    """broadcast_tensors expands each operand to the joint shape: views of each
    operand's own storage (here, the input's)."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(2 * d, d)

    def forward(self, x):
        a, b = torch.broadcast_tensors(x.unsqueeze(2), x.unsqueeze(1))
        return self.lin(torch.cat((a, b), dim=-1))


class Grid(nn.Module):
    """meshgrid's outputs are expanded views of its inputs: a product with a
    parameter keeps the 3 (and 4) floats of the aranges, not the 12 of a grid."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 4))

    def forward(self, x):
        a, b = torch.meshgrid(torch.arange(3.0), torch.arange(4.0), indexing="ij")
        return x.sum() * (a * self.w + b)


class DeadSigmoid(nn.Module):
    """A result the loss never reaches: torch saves for its op during the forward
    and frees that when the result dies, before the forward returns."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        h = self.l(x)
        unused = h.sigmoid()  # noqa: F841
        return self.k(h)


class DetachedSigmoid(nn.Module):
    """A result cut by detach(): its op's node dies, its storage lives on as the
    input the next layer saves."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        s = self.l(x).sigmoid().detach()
        return self.k(s)


class Moved(nn.Module):
    """movedim is a view; moving an axis of size 1 leaves the tensor contiguous
    (torch's strides test skips size-1 axes), so matmul's batched reshape copies
    nothing and torch saves the softmax output and the projection themselves."""

    def __init__(self, d=8, heads=1):
        super().__init__()
        self.heads = heads
        self.lin = nn.Linear(d, heads * d, bias=False)

    def forward(self, x):
        b, n, d = x.shape
        h = self.lin(x).view(b, n, self.heads, d)
        alpha = (h.sum(-1).unsqueeze(1) + h.sum(-1).unsqueeze(2)).softmax(dim=2)
        return torch.matmul(alpha.movedim(3, 1), h.movedim(2, 1)).movedim(1, 2)


class MovedHeads(Moved):
    """The same with two heads: moving an axis of size 2 permutes, and matmul's
    reshape of the batched operands copies them."""

    def __init__(self):
        super().__init__(heads=2)


class EinsumScale(nn.Module):
    """An einsum that contracts nothing is torch's elementwise mul: 0 FLOPs, but
    it saves the other operand for the parameter's gradient."""

    def __init__(self, d=8):
        super().__init__()
        self.g = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return torch.einsum("b n d, d -> b n d", F.normalize(x, dim=-1) * 2.0, self.g)


class Leaky(nn.Module):
    """leaky_relu saves its input (its gradient tests the input's sign)."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)
        self.act = nn.LeakyReLU(0.1)

    def forward(self, x):
        return self.act(self.b(F.leaky_relu(self.a(x), 0.2)))


class AbsLinear(nn.Linear):
    """A linear map of |W|: torch saves |W| beside the input."""

    def forward(self, x):
        return F.linear(x, self.weight.abs(), self.bias)


class Retyped(nn.Sequential):
    """Layers given another class after they were built (`layer.__class__ = C`):
    their forward is C's."""

    def __init__(self, d=8):
        super().__init__(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))
        for layer in self:
            if isinstance(layer, nn.Linear):
                layer.__class__ = AbsLinear


class Shift(nn.Conv2d):
    """A fixed 1x1 convolution whose Parameters are frozen in a loop the analysis
    does not follow: torch saves nothing for it (nothing it reads requires grad)."""

    def __init__(self, c=4):
        super().__init__(c, c, kernel_size=1)
        self.weight.data = torch.eye(c).view(c, c, 1, 1)
        for p in self.parameters():
            p.requires_grad = False


class Shifted(nn.Module):
    """What the frozen Shift would save if it were trainable (its input) is no part
    of a bound: torch saves the head's input only."""

    def __init__(self, c=4):
        super().__init__()
        self.shift = Shift(c)
        self.head = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return self.head(self.shift(255 * x))


class StackedGRU(nn.Module):
    """Two GRU layers over a batch-first sequence, the last layer's final state
    returned. torch's CPU cell computes its gates in place (several saved tensors
    share one storage): a decomposition out of place saved more storages than torch."""

    def __init__(self, d=8, hidden=64):
        super().__init__()
        self.gru = nn.GRU(d, hidden, num_layers=2, batch_first=True)

    def forward(self, x):
        _, h = self.gru(x)
        return h[-1]


class CarriedMask(nn.Module):
    """A recurrence over the steps whose turns differ (the state carried, a buffer
    first), each scaled by a tensor the module holds: torch saves that tensor for
    the first turn's product and counts it once. The loop is tried as one turn for
    all first, which it is not: that trial saves nothing."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))
        self.register_buffer("h0", torch.zeros(1, d))
        self.mask = torch.tensor([1.0]).float()

    def forward(self, x):
        h, out = self.h0, []
        for k in range(x.shape[1]):
            h = torch.tanh(x[:, k] + h @ self.w) * self.mask
            out.append(h)
        return torch.stack(out, dim=1)


class Spectrum(nn.Module):
    """A linear layer on the real and imaginary parts of an FFT of the input
    (iTransformerFFT): it saves a view of the complex transform, whose storage holds
    eight bytes an element where the input holds four."""

    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(2 * d, d)

    def forward(self, x):
        f = torch.view_as_real(torch.fft.fft(x))
        return self.fc(f.flatten(-2))


class RealSpectra(nn.Module):
    """FFTs of a tensor that requires grad: rfft and rfft2 (torch's r2c kernel) save
    their real input, h once for both of its transforms; fftn of a real tensor makes
    it complex first and saves nothing, nor does irfftn."""

    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        h = self.fc(x)
        a = torch.fft.rfft(h)
        b = torch.fft.rfft2(h * 2)
        c = torch.fft.fftn(h, dim=(-2, -1))
        d = torch.fft.irfftn(torch.fft.rfftn(h, dim=(1, 2)), s=(3, 8), dim=(1, 2))
        parts = (torch.view_as_real(a), torch.view_as_real(b), torch.view_as_real(c), d)
        return sum(p.sum() for p in parts)


class Entropic(nn.Module):
    """torch.special.entr (-x·ln x elementwise) saves its input: the derivative needs x."""

    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return torch.special.entr(self.fc(x) * 0.5).sum(-1)


class Folded(nn.Module):
    """F.fold's result lives in a storage larger than itself (col2im's buffer), which
    the convolution after it saves whole."""

    def __init__(self, d=8):
        super().__init__()
        self.conv = nn.Conv1d(2, 2, 1)

    def forward(self, x):
        cols = x.reshape(2, 8, 3)  # [2, 2·4, 3 blocks]
        y = F.fold(cols, (8, 1), kernel_size=(4, 1), stride=(2, 1))
        return self.conv(y.reshape(2, 2, 8))


class ConjOfReal(nn.Module):
    """`v.conj()` of a real tensor is v itself (and of a complex one a view with the
    conjugate bit set): a product saving both sides saves v's storage once."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d))

    def forward(self, x):
        v = x * self.w
        return v.conj().transpose(-2, -1) @ v


class DataRead(nn.Module):
    """`p.data` is a detached view of the Parameter's storage: a linear layer over it
    saves its input only where the weight requires grad (here not: nothing), and the
    view it saves is the Parameter's storage (no activation)."""

    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.g = nn.Linear(d, d)

    def forward(self, x):
        h = self.fc(x)
        return F.linear(h, self.g.weight.data) * 2


class MaskedWeight(nn.Module):
    """`p.data = t` in a forward: p stays the same Parameter (requires_grad kept) on
    t's storage, which this run made, so the convolution that saves p saves an
    activation."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.register_buffer("mask", torch.ones_like(self.conv.weight.data))

    def forward(self, x):
        self.conv.weight.data = self.conv.weight.data * self.mask
        return self.conv(x)


class ReshapedWeight(nn.Module):
    """`p.data = t` of another shape: what reads p afterwards sees t's shape."""

    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        self.fc.weight.data = torch.ones(2 * x.shape[-1], x.shape[-1])
        return self.fc.weight @ x.transpose(-1, -2)


class UnknownWeight(nn.Module):
    """`p.data = t` where t's shape is not known: p is not known afterwards."""

    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        self.fc.weight.data = x[0][x[0, :, 0] > 0]  # rows the data picks
        return self.fc.weight @ x.transpose(-1, -2)


class _Masked(nn.Conv2d):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register_buffer("mask", torch.ones_like(self.weight.data))

    def forward(self, x):
        self.weight.data = self.weight.data * self.mask
        return super().forward(x)


class MaskedTwice(nn.Module):
    """A submodule that moves its own weight in its forward, called twice, its
    weight read by the caller after: each call's store replaces the storage."""

    def __init__(self):
        super().__init__()
        self.a = _Masked(4, 4, 3, padding=1)
        self.b = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        return self.b(self.a(self.a(x))) + self.a.weight.sum()


class BoundBeforeStore(nn.Module):
    """A name bound to p before `p.data = t` sees t's storage: the same object."""

    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        w = self.fc.weight
        self.fc.weight.data = torch.ones(8, 8)
        return self.fc(x) * w.sum()


class Phased(nn.Module):
    """The input's pairs as complex numbers, scaled (a complex tensor of its own),
    seen again as real parts for a linear layer that saves that view."""

    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        c = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2)) * 2
        return self.fc(torch.view_as_real(c).flatten(-2))


class SplitInner(nn.Module):
    """A part split along an inner axis of 1, into a linear layer: its leading axes
    still merge, so the layer saves a view of the hidden storage, whole."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)

    def forward(self, x):
        return self.b(self.a(x).split(1, dim=1)[0])


class SplitMiddle(nn.Module):
    """A part of 2 of an inner axis of 3, into a linear layer: its leading axes do not
    merge, so the layer saves a copy."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)

    def forward(self, x):
        return self.b(self.a(x).split(2, dim=1)[0])


class ChunkLast(nn.Module):
    """A chunk along the last axis, into a linear layer: its leading axes merge as a
    view of the hidden storage."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, 2 * d)
        self.b = nn.Linear(d, d)

    def forward(self, x):
        return self.b(self.a(x).chunk(2, dim=-1)[1])


class SplitReshaped(nn.Module):
    """A part along an inner axis of 1, reshaped to two axes (a view: the axes it
    merges skip the gap), into a linear layer."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)

    def forward(self, x):
        part = self.a(x).split(1, dim=1)[0]
        return self.b(part.reshape(x.shape[0], -1))


class ChunkedScores(nn.Module):
    """q @ k.T of parts chunked along the last axis, three axes each: batched
    matmul reshapes nothing there, so both are views of the projection."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, 3 * d)

    def forward(self, x):
        q, k, v = self.a(x).chunk(3, -1)
        return (q @ k.transpose(-2, -1)) @ v


class ChunkedScores4d(nn.Module):
    """The same with a batch of two axes: the swap of a part's last two axes
    leaves its batch axes mergeable, a view."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, 2 * d)

    def forward(self, x):
        q, k = self.a(x).unsqueeze(1).chunk(2, -1)
        return q.transpose(-2, -1) @ k


class SwappedIntoLinear(nn.Module):
    """A Linear over a tensor whose last two axes are swapped folds it with a copy;
    the same projection, saved whole by a matmul beside a matrix, counts apart."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.lin = nn.Linear(3, 4)
        self.w = nn.Parameter(torch.randn(16, 4))

    def forward(self, x):
        h = self.a(x)
        return self.lin(h.transpose(1, 2)).sum() + (h @ self.w).sum()


class Normalized(nn.Module):
    """F.normalize keeps its input, the norm (its result) and the clamped norm that
    the division reads (two tensors of the input's size less the normalized axis)."""

    def __init__(self, d=8):
        super().__init__()
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        h = self.proj(x)
        return F.normalize(h, dim=-1) + F.normalize(h, p=1.0, dim=1)


class Grouped(nn.Module):
    """GroupNorm keeps its input and a float32 mean and rstd per sample and group;
    F.group_norm of a transposed tensor makes it contiguous first (a copy, saved)."""

    def __init__(self, c=8):
        super().__init__()
        self.proj = nn.Linear(c, c)
        self.norm = nn.GroupNorm(2, c)

    def forward(self, x):
        h = self.proj(x).transpose(1, 2)  # (b, c, n), not contiguous
        return self.norm(h.contiguous()) + F.group_norm(h, 4)


class EinsumPairs(nn.Module):
    """Two-operand einsums as ATen runs them: a weight contracted (bmm keeps a view
    of each operand), a product that contracts nothing (a mul), an axis in one
    operand alone summed out first (bmm keeps that sum), an output order that makes
    torch's reshape copy an operand (bmm keeps the copy), and an axis of size 1."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, 5))
        self.g = nn.Parameter(torch.randn(d))
        self.u = nn.Parameter(torch.randn(3, d))
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        h = self.lin(x)
        a = torch.einsum("bnd,de->bne", h, self.w)
        b = torch.einsum("bnd,d->bnd", h, self.g)
        c = torch.einsum("bnd,bmd->bn", h, h * 2)
        e = torch.einsum("bne,bnd->bed", a, b)
        f = torch.einsum("Bnd,nd->dB", h, self.u)
        return a.sum() + b.sum() + c.sum() + e.sum() + f.sum()


class EinsumHeads(nn.Module):
    """Attention written with einsum and einops.einsum over contiguous heads: bmm
    keeps views of q, k, the scores and v."""

    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)

    def forward(self, x):
        b, n, d = x.shape
        q = self.q(x).view(b, n, 2, d // 2).transpose(1, 2).contiguous()
        k = self.k(x).view(b, n, 2, d // 2).transpose(1, 2).contiguous()
        v = self.v(x).view(b, n, 2, d // 2).transpose(1, 2).contiguous()
        s = torch.einsum("bhid,bhjd->bhij", q, k).softmax(dim=-1)
        return einops.einsum(s, v, "b h i j, b h j d -> b h i d")


class EinsumStrided(nn.Module):
    """An operand whose strides the analysis does not keep (a permuted view): whether
    torch's reshape copies it is not known."""

    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Linear(d, d)

    def forward(self, x):
        q = self.q(x)
        return torch.einsum("bdn,bmd->bnm", q.transpose(1, 2), q)


class MathSaves(nn.Module):
    """Elementwise math and reductions, each keeping what its derivative reads: the
    input (sin, log1p, abs, clamp, var), the result (reciprocal, tan), both (std, an
    overall max), both operands (maximum), the int64 indices (max along a dim)."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        h = self.lin(x)
        parts = [
            h.reciprocal(),
            torch.sin(h),
            h.abs().log1p(),
            h.clamp(min=0.1),
            torch.var(h, dim=-1),
            h.std(-1),
            torch.max(h, dim=-1)[0],
            torch.max(h),
            torch.maximum(h, h * 2),
            torch.tan(h),
        ]
        return sum(p.sum() for p in parts)


class ActivationSaves(nn.Module):
    """softplus, hardtanh (ReLU6) and PReLU keep their input; LeakyReLU in place
    keeps its result, which is its input's storage, ReLU6 in place a copy of its
    input."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.lin2 = nn.Linear(d, d)
        self.six = nn.ReLU6(inplace=True)
        self.leaky = nn.LeakyReLU(0.1, inplace=True)
        self.soft = nn.Softplus()
        self.prelu = nn.PReLU()

    def forward(self, x):
        h = self.lin(x)
        a = self.soft(h) + F.softplus(h, beta=2.0) + F.relu6(h) + self.prelu(h)
        b = self.six(self.lin2(x))
        c = self.leaky(self.lin2(x) * 2)
        return a.sum() + b.sum() + c.sum()


class PoolSaves(nn.Module):
    """A max pool keeps its input and int64 indices; an average pool its input; an
    adaptive average pool to 1x1 runs as a mean and keeps nothing, to 2x2 its input."""

    def __init__(self, c=4):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.max = nn.MaxPool2d(2)
        self.avg = nn.AvgPool2d(2)
        self.one = nn.AdaptiveAvgPool2d(1)
        self.two = nn.AdaptiveAvgPool2d(2)
        self.amax = nn.AdaptiveMaxPool2d(1)

    def forward(self, x):
        h = self.conv(x)
        g = self.conv2(x)
        parts = [
            self.max(h),
            self.avg(h),
            self.one(g),
            self.two(h),
            self.amax(h),
            F.max_pool2d(h, 3),
            F.adaptive_avg_pool2d(g, 1),
            F.avg_pool1d(h.flatten(2), 2),
        ]
        return sum(p.sum() for p in parts)


class RmsNormed(nn.Module):
    """nn.RMSNorm on the target's input (which needs no grad: only the product the
    weight's gradient reads is kept) and on a computed tensor (its input and rstd too)."""

    def __init__(self, d=8):
        super().__init__()
        self.first = nn.RMSNorm(d)
        self.lin = nn.Linear(d, d)
        self.norm = nn.RMSNorm(d)

    def forward(self, x):
        return self.norm(self.lin(self.first(x)))


class IndexWritten(nn.Module):
    """`w[i, i] = p` with a tensor index runs index_put_, which keeps its index
    tensors (main: a complete figure without them, 448 B for torch's 512)."""

    def __init__(self, d=8):
        super().__init__()
        self.e = nn.Parameter(torch.zeros(d))
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        w = self.e.new_zeros(8, 8)
        i = torch.arange(8)
        w[i, i] = self.e
        return F.linear(self.lin(x), w)


class SliceWritten(IndexWritten):
    """Writes through ints and slices are a view's copy_, which keeps nothing."""

    def forward(self, x):
        w = self.e.new_zeros(8, 8)
        w[0] = self.e
        w[:, 1] = self.e * 2
        w[..., 2] = self.e
        return F.linear(self.lin(x), w)


class NumberWritten(IndexWritten):
    """A number written through a tensor index into a tensor that needs no grad
    (the input) records nothing for backward."""

    def forward(self, x):
        i = torch.arange(2)
        x[:, i, i] = 1.0
        return self.lin(x)


class CircularConv(nn.Module):
    """A Conv1d of padding_mode "circular" pads a copy with F.pad and convolves it
    unpadded: the convolution saves the copy, not the input (neuralforecast's
    TokenEmbedding; main: 0 B, complete, for torch's 240)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 4, 3, padding=1, padding_mode="circular", bias=False)

    def forward(self, x):
        return self.conv(x)


class ReflectConv(nn.Module):
    """Reflect and replicate pads save their input for backward where it requires
    grad (a Linear's output here), beside the padded copy the convolution saves
    (main: 512 B, complete, for torch's 1,184)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.conv = nn.Conv1d(3, 4, 3, padding=2, padding_mode="reflect")
        self.conv2 = nn.Conv1d(4, 4, 3, padding=1, padding_mode="replicate")

    def forward(self, x):
        return self.conv2(self.conv(self.a(x)))


class SameEvenConv(nn.Module):
    """padding='same' with an even kernel pads d·(k−1), odd, in all: ATen convolves
    a zero-padded copy one element longer on that axis and saves it, not the input
    (main a01242e: 704 B, complete, for torch's 792)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.conv = nn.Conv1d(3, 4, 4, padding="same", bias=False)
        self.conv2 = nn.Conv1d(4, 4, 3, padding="same", dilation=2)
        self.w = nn.Parameter(torch.randn(2, 1, 2, 3))

    def forward(self, x):
        y = self.conv2(self.conv(self.a(x)))
        return F.conv2d(y.unsqueeze(1), self.w, padding="same")


def _default(val, d):
    return val if val is not None else d


class ReturnsItsArgument(nn.Module):
    """A helper returning its argument, called again with an equal tensor: the
    reused run hands back this call's tensor, which the Linears save once (main
    a01242e: a new tensor, 576 B, complete, for torch's 384)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)
        self.c = nn.Linear(8, 8)
        self.d = nn.Linear(8, 8)
        self.e = nn.Linear(8, 8)

    def forward(self, x):
        y = self.a(x)
        c = _default(None, y)
        y = self.b(y) + self.c(c)
        c = _default(None, y)
        return self.d(y) + self.e(c)


class ReluMethodInPlace(nn.Module):
    """`y.relu_()`, a tensor method writing into y, saves its result, y's storage,
    as the Linear after it does: once (main 59bfaf8 counted two storages)."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)

    def forward(self, x):
        y = self.a(x)
        y.relu_()
        y.transpose(1, 2).relu_()
        return self.b(y)


class EinsumGathered(nn.Module):
    """An operand gathered by an index tensor: a tensor of its own whose strides
    the analysis does not follow, so whether einsum's reshape copies it is not known."""

    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Linear(d, d)

    def forward(self, x):
        q = self.q(x)
        picked = q[:, torch.tensor([2, 0, 1])]
        return torch.einsum("bnd,bmd->bnm", picked.transpose(1, 2).transpose(1, 2), q)


class ChunkHeads(nn.Module):
    """Heads rearranged out of a chunk of a projection (a part of longer rows,
    reshaped and permuted): einsum's reshapes view or copy by the strides."""

    def __init__(self, d=8, h=2):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.h = h

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (einops.rearrange(t, "b n (h d) -> b h n d", h=self.h) for t in (q, k, v))
        q = q * 0.5
        attn = torch.einsum("b h i d, b h j d -> b h i j", q, k).softmax(dim=-1)
        out = torch.einsum("b h i j, b h j d -> b h i d", attn, v)
        return einops.rearrange(out, "b h n d -> b n (h d)")


class TensorSplitParts(nn.Module):
    """tensor_split's parts, by a count along the last axis (parts of longer rows,
    one reshaped: a copy) and by indices along the first (contiguous parts, one of
    them empty at a batch of 1): views, as split's and chunk's are."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, 2 * d)

    def forward(self, x):
        y = self.a(x)
        p, q = y.tensor_split(2, dim=-1)
        r, s = torch.tensor_split(y, [1], dim=0)
        return (
            (p.reshape(-1) * q.reshape(-1)).sum()
            + (p @ q.transpose(1, 2)).sum()
            + (r * 2).sum()
            + (s * s).sum()
        )


class TensorSplitQkv(nn.Module):
    """Three parts of one projection unequal in size (tensor_split(3) of a width not
    divisible by 3): each part keeps its storage's rows."""

    def __init__(self, d=8):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d + 1)

    def forward(self, x):
        q, k, v = self.qkv(x).tensor_split(3, dim=-1)
        return (q[..., 1:] @ k.transpose(1, 2)).softmax(-1) @ v


class Vecdots(nn.Module):
    """linalg.vecdot of two projections (each kept for the other's gradient), and of
    one with the input (which needs none: the projection's partner alone)."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)

    def forward(self, x):
        p, q = self.a(x), self.b(x)
        return torch.linalg.vecdot(p, q) + torch.linalg.vecdot(x, q.tanh(), dim=1).sum()


class ConvChunkHeads(nn.Module):
    """A conv's channels chunked and rearranged to heads over its positions."""

    def __init__(self, c=4, h=2):
        super().__init__()
        self.qkv = nn.Conv2d(c, 3 * c, 1)
        self.h = h

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=1)
        q, k, v = (einops.rearrange(t, "b (h d) x y -> b h (x y) d", h=self.h) for t in (q, k, v))
        attn = torch.einsum("b h i d, b h j d -> b h i j", q, k).softmax(dim=-1)
        return torch.einsum("b h i j, b h j d -> b h i d", attn, v)


class ElemLinearTwice(nn.Module):
    """An elementwise result of a transpose keeps its order (TensorIterator): the
    layer's fold copies it, and the product saves it too."""

    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.o = nn.Linear(3, 3)

    def forward(self, x):
        y = self.q(x).transpose(1, 2) * 2
        return self.o(y) * y


class SlicedMul(nn.Module):
    """Two slices of one projection multiplied: views of its storage, saved once."""

    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Linear(d, 2 * d)

    def forward(self, x):
        y = self.q(x)
        return y[:, :, :8] * y[..., 8:]


class ListIndexedMul(nn.Module):
    """Indexed by lists: tensors of their own, and the int64 index tensors torch
    makes of the lists, which the gradient of the index keeps."""

    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Linear(d, d)

    def forward(self, x):
        y = self.q(x)
        return y[:, [0, 1, 1]] * y[:, [2, 0, 2]]


class MatrixByBatch(nn.Module):
    """A matrix times a batch: torch folds the batch's `.mT`, a copy of a
    contiguous batch."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(5, 3))
        self.k = nn.Linear(d, d)

    def forward(self, x):
        k = self.k(x)
        return torch.matmul(self.w, k) + torch.matmul(self.w, k).sum()


class MatrixByBatchT(nn.Module):
    """A matrix times a transposed batch: its `.mT` is contiguous, folded as a view."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(5, 8))
        self.k = nn.Linear(d, d)

    def forward(self, x):
        k = self.k(x)
        return torch.matmul(self.w, k.transpose(1, 2)) * k.transpose(1, 2).sum()


def _unit(t):
    return F.normalize(t, dim=-1)


class NormedChunks(nn.Module):
    """One function called on two chunks of one projection: the second call finds
    the storage its input views saved already (by the first), so it saves less;
    torch saves again on each call."""

    def __init__(self, d=8):
        super().__init__()
        self.qk = nn.Linear(d, 2 * d)

    def forward(self, x):
        q, k = self.qk(x).chunk(2, dim=-1)
        return _unit(q) * _unit(k)


class QkvUnpacked(nn.Module):
    """q, k, v unpacked from one rearranged projection (`a, b, c = t`: t[0], t[1],
    t[2], views with t's strides less the first axis), gated before the output."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.gates = nn.Linear(d, heads)
        self.out = nn.Linear(d, d, bias=False)
        self.heads = heads

    def forward(self, x):
        q, k, v = einops.rearrange(self.qkv(x), "b n (qkv h d) -> qkv b h n d", qkv=3, h=self.heads)
        attn = (torch.einsum("b h i d, b h j d -> b h i j", q, k) * 0.5).softmax(-1)
        out = torch.einsum("b h i j, b h j d -> b h i d", attn, v)
        out = out * einops.rearrange(self.gates(x), "b n h -> b h n 1").sigmoid()
        return self.out(einops.rearrange(out, "b h n d -> b n (h d)"))


class BnRelu6Conv(nn.Module):
    """ReLU6 in place on a tensor that requires grad keeps a copy of its input made
    before the write (HardtanhBackward0), another storage than its result, which the
    conv saves (main: 4,128 B complete for torch's 6,176)."""

    def __init__(self, c=4):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)
        self.six = nn.ReLU6(inplace=True)
        self.conv = nn.Conv2d(c, c, 1, bias=False)

    def forward(self, x):
        return self.conv(self.six(self.bn(x * 2)))


class BnRelu6Strided(BnRelu6Conv):
    """The same, the conv given every other row and column (`y[:, :, ::2, ::2]`, a
    view of the result's storage, which the conv saves whole)."""

    def forward(self, x):
        return self.conv(self.six(self.bn(x * 2))[:, :, ::2, ::2])


class SdpaGated(QkvUnpacked):
    """The fused kernel's result of heads rearranged from one projection, gated by
    a rearranged view, rearranged back into the output layer."""

    def forward(self, x):
        q, k, v = einops.rearrange(self.qkv(x), "b n (qkv h d) -> qkv b h n d", qkv=3, h=self.heads)
        out = F.scaled_dot_product_attention(q, k, v)
        out = out * einops.rearrange(self.gates(x), "b n h -> b h n 1").sigmoid()
        return self.out(einops.rearrange(out, "b h n d -> b n (h d)"))


class SdpaBoolMask(Attention):
    """A boolean causal mask made in the forward: CPU's fused kernel keeps it
    converted to the query's dtype (a new float tensor of its shape)."""

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        mask = torch.ones(T, T, dtype=torch.bool).tril()
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


class SdpaPaddingMask(Attention):
    """A float padding mask of (batch, 1, 1, key) made in the forward: the fused
    kernel keeps that tensor, and a mask buffer's slice (the module's storage) is
    no activation."""

    def __init__(self, d=8, heads=2):
        super().__init__(d, heads)
        self.register_buffer("bias", torch.zeros(1, 1, 16, 16))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        pad = torch.zeros(B, 1, 1, T)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=pad)
        y = F.scaled_dot_product_attention(y, k, v, attn_mask=self.bias[:, :, :T, :T])
        return self.out(y.transpose(1, 2).reshape(B, T, C))


class SdpaMask3d(Attention):
    """A 3-D mask: torch takes the math path, whose saves are not modelled."""

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.zeros(self.heads, T, T))
        return self.out(y.transpose(1, 2).reshape(B, T, C))


class SdpaPartsHeads(nn.Module):
    """Heads of chunks of one projection (not dense): the fused kernel's result is
    dense in the query's order of strides, its fold a view where that order allows."""

    def __init__(self, dim=8, heads=2):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        self.heads = heads

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(b, n, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
        return self.out(y) * y


class LayerHeads(nn.Module):
    """A Rearrange layer splitting heads (its axis lengths held by the layer), into
    einops.einsum: the layer's reshape and permute followed as strides."""

    def __init__(self, d=8, h=2):
        super().__init__()
        self.k = nn.Linear(d, d)
        self.q = nn.Linear(d, d)
        self.split = einops.layers.torch.Rearrange("b n (h d) -> b h n d", h=h)

    def forward(self, x):
        k, q = self.split(self.k(x)), self.split(self.q(x))
        dots = einops.einsum(q, k, "... i d, ... j d -> ... i j") * 0.5
        return einops.einsum(k, dots.softmax(dim=-2), "... j d, ... i j -> ... i d")


class EinsumOutOrder(nn.Module):
    """An einsum whose output names the right operand's own axis first: torch swaps
    the pair, its result contiguous; the layer's fold of it a view."""

    def __init__(self, d=8):
        super().__init__()
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, 6)
        self.o = nn.Linear(8, 8)

    def forward(self, x):
        ctx = torch.einsum("bnd,bne->bed", self.k(x), self.v(x))
        return self.o(ctx) * ctx


class EinsumMulOrder(nn.Module):
    """An einsum with nothing to contract is a mul of its permuted operands, its
    result laid out as TensorIterator lays it (not contiguous here): the layer's
    fold of it copies (main: 768 B complete for torch's 960)."""

    def __init__(self, d=8):
        super().__init__()
        self.k = nn.Linear(d, d)
        self.o = nn.Linear(3, 3)

    def forward(self, x):
        k = self.k(x)
        y = torch.einsum("bnd,bnd->bdn", k, k * 2)
        return self.o(y) * y


class _Attending(nn.Module):
    """nn.MultiheadAttention (8 wide, 2 heads) on a Linear's output `y` and the
    input `x`: `inputs` picks query, key and value; need_weights picks the math
    path (bmm, softmax) or scaled_dot_product_attention's CPU flash kernel."""

    batch_first = False
    need_weights = True
    mask = False
    padding = False  # a boolean key_padding_mask (batch, key)
    causal = False

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.attn = nn.MultiheadAttention(8, 2, batch_first=self.batch_first)

    def inputs(self, x, y):
        return y, y, y

    def forward(self, x):
        y = self.lin(x)
        q, k, v = self.inputs(x, y)
        m = pad = None
        if self.mask:
            m = torch.ones(q.shape[0], k.shape[0], dtype=torch.bool).triu(1)
        if self.padding:
            pad = torch.zeros(k.shape[1], k.shape[0], dtype=torch.bool)
        out = self.attn(
            q,
            k,
            v,
            need_weights=self.need_weights,
            attn_mask=m,
            key_padding_mask=pad,
            is_causal=self.causal,
        )
        return out[0]


class MhaSelf(_Attending):
    pass


class MhaSelfFirst(_Attending):
    batch_first = True


class MhaSelfFused(_Attending):
    need_weights = False


class MhaSelfFirstFused(_Attending):
    batch_first = True
    need_weights = False


class MhaMasked(_Attending):
    mask = True


class MhaMaskedFused(_Attending):
    """A boolean mask on the fused path: SDPA keeps it converted to float."""

    mask = True
    need_weights = False


class MhaPaddedFused(_Attending):
    """A padding mask over two heads: expanded, and copied by reshape, kept."""

    padding = True
    need_weights = False


class MhaMaskedPaddedFused(MhaMaskedFused):
    """Both masks: their sum over (batch·heads, query, key) kept."""

    padding = True


class MhaCausalFused(MhaMaskedFused):
    """The causal hint without a padding mask drops the mask (SDPA's is_causal)."""

    causal = True


class MhaCross(_Attending):
    def inputs(self, x, y):
        return x, y, y


class MhaCrossFirst(MhaCross):
    batch_first = True


class MhaCrossFused(MhaCross):
    need_weights = False


class MhaApart(_Attending):
    def inputs(self, x, y):
        return y, x, y * 2


class MhaApartFirstFused(MhaApart):
    batch_first = True
    need_weights = False


class MhaSharedQueryKey(_Attending):
    """query is key, value another: two projections of one tensor, each fold a view
    of its storage."""

    def inputs(self, x, y):
        return y, y, x


class MhaSharedQueryKeyFirst(MhaSharedQueryKey):
    """batch_first: query and key transposed apart, each fold a copy."""

    batch_first = True


class MhaSharedQueryKeyPermuted(MhaSharedQueryKey):
    """An elementwise result of a transposed tensor (laid out as that tensor) as
    query and key: each fold a copy of its own."""

    def inputs(self, x, y):
        y = y.transpose(0, 1) + 1.0
        return y, y, x.transpose(0, 1)


class Padded(nn.Module):
    """F.pad and the pad layers: reflect and replicate keep their input, constant and
    circular nothing (main: lower bounds naming F.pad)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.reflect = nn.ReflectionPad1d(1)
        self.zero = nn.ZeroPad1d(2)

    def forward(self, x):
        y = self.lin(x)
        a = F.pad(y, (1, 2), mode="reflect") + F.pad(y * 2, (1, 2), mode="replicate")
        b = F.pad(y * 3, (2, 1)) + F.pad(y * 4, (2, 1), mode="circular")
        return a.sum() + b.sum() + self.reflect(y * 5).sum() + self.zero(y * 6).sum()


class Resampled(nn.Module):
    """Upsampling keeps nothing but sizes for backward (main: lower bounds naming
    F.interpolate and nn.Upsample)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear")
        self.near = nn.UpsamplingNearest2d(scale_factor=2)

    def forward(self, x):
        y = torch.sigmoid(self.conv(x))
        z = F.interpolate(y, size=(3, 4), mode="bicubic", align_corners=True)
        w = F.interpolate(y, scale_factor=2)
        return self.up(y).sum() + self.near(y).sum() + z.sum() + w.sum()


class MhaDropped(_Attending):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, dropout=0.1)


class Powers(nn.Module):
    """`**` of tensors and numbers: pow keeps base, exponent and result where the
    exponent is a tensor, the base alone where a number (main: lower bounds naming
    operator.pow)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.register_buffer("e", torch.full((8,), 2.0))

    def forward(self, x):
        y = self.lin(x)
        return (
            (y**2).sum()
            + (2**y).sum()
            + (y.abs() ** (y * 0.1)).sum()
            + (y.abs() ** self.e).sum()
            + torch.pow(y, 3).sum()
        )


class Chosen(nn.Module):
    """where keeps its condition; topk and sort their int64 indices; cumsum nothing;
    logcumsumexp, amax and norms input and result (main: lower bounds)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        z = torch.where(y > 0, y, y * 0.5) + torch.where(x > 0, y, 0.0)
        v, i = y.topk(3, dim=-1)
        s, j = torch.sort(y * 2, dim=1)
        return (
            z.sum()
            + v.sum()
            + s.sum()
            + y.cumsum(-1).sum()
            + y.logcumsumexp(1).sum()
            + y.amax(-1).sum()
            + y.norm(dim=-1).sum()
            + torch.norm(y * 3)
        )


class AugmentedInPlace(nn.Module):
    """`*=` and `/=`: mul_ and div_ keep the other operand and, where its gradient
    needs it, a copy of the tensor written made first (main: lower bounds naming
    __imul__)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.lin2 = nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        z = self.lin2(x)
        w = y * 1.5
        w *= z
        u = z + 1
        u /= y
        t = y - 1
        t *= 2.0
        t /= 3.0
        c = x * 2
        c *= y
        return w.sum() + u.sum() + t.sum() + c.sum()


class Acts(nn.Module):
    """elu/selu/celu keep their input (in place their result), mish and hardswish
    their input (hardswish and silu in place a copy), logsigmoid its input and a
    buffer, round and sign nothing (main: lower bounds naming nn.ELU)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.elu = nn.ELU()
        self.celu = nn.CELU(inplace=True)
        self.selu = nn.SELU()
        self.mish = nn.Mish()
        self.hs = nn.Hardswish()
        self.silu = nn.SiLU(inplace=True)

    def forward(self, x):
        y = self.lin(x)
        a = (
            self.elu(y)
            + self.selu(y * 2)
            + self.mish(y * 3)
            + self.hs(y * 4)
            + F.logsigmoid(y * 5)
            + F.hardsigmoid(y * 6, inplace=True)
        )
        b = (
            self.celu(y * 7)
            + self.silu(y * 8)
            + F.elu(y * 9, inplace=True)
            + torch.square(y)
            + torch.round(y)
            + y.sign()
        )
        return a.sum() + b.sum()


class PowBuffer(nn.Module):
    """pow of a tensor exponent that needs no grad keeps the result too (main: a
    complete 192 B for torch's 384: a wrong figure)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.register_buffer("e", torch.full((8,), 2.0))

    def forward(self, x):
        return torch.pow(self.lin(x), self.e)


class SixThenLayer(nn.Module):
    """hardtanh_ (ReLU6 in place) keeps a copy of its input, not its result: the next
    layer saving the result saves another storage (controlnet-aux's MLSD; main: a
    complete 384 B for torch's 768, a wrong figure)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.six = nn.ReLU6(inplace=True)
        self.lin2 = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin2(self.six(self.lin(x))) + self.lin2(F.hardtanh(self.lin(x), inplace=True))


class Inst(nn.Module):
    """InstanceNorm3d runs batch_norm on the input viewed as (1, N*C, ...): the input,
    float32 mean and invstd per sample and channel, the running statistics and the
    weight repeated (main: a lower bound naming InstanceNorm3d)."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv3d(4, 4, 1)
        self.a = nn.InstanceNorm3d(4)
        self.b = nn.InstanceNorm3d(4, affine=True)
        self.t = nn.InstanceNorm3d(4, affine=True, track_running_stats=True)

    def forward(self, x):
        y = self.c(x)
        return self.a(y).sum() + self.b(y * 2).sum() + self.t(y * 3).sum()


class Inst1(nn.Module):
    """InstanceNorm1d tracking running statistics, in training and eval."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv1d(4, 4, 1)
        self.a = nn.InstanceNorm1d(4, track_running_stats=True)

    def forward(self, x):
        return self.a(self.c(x))


class Channels(nn.Module):
    """Dropout2d and F.dropout2d return their input in eval mode (main: a lower
    bound naming Dropout2d)."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(4, 4, 1)
        self.d = nn.Dropout2d(0.3)
        self.c2 = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        return self.c2(F.dropout2d(self.d(torch.relu(self.c(x))), 0.2, training=False))


class PermutedSum(nn.Module):
    """A sum of a permuted tensor is laid out as that tensor (TensorIterator follows
    its strides): two Linears folding it copy it each (ultralytics' TransformerBlock;
    a complete figure one copy short once MultiheadAttention had a rule)."""

    def __init__(self):
        super().__init__()
        self.pos = nn.Linear(8, 8)
        self.q = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        p = x.permute(1, 0, 2)
        y = p + self.pos(p)
        return self.q(y) + self.k(y)


class MhaFirstThenLayer(_Attending):
    """batch_first MultiheadAttention returns (L, N, E) transposed: a Linear after it
    folds a copy."""

    batch_first = True

    def __init__(self):
        super().__init__()
        self.out = nn.Linear(8, 8)

    def forward(self, x):
        return self.out(super().forward(x))


class _Squares(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sort(x, dim=-1)[0] ** 2
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return 2 * g * y.sqrt()


class CustomForward(nn.Module):
    """A custom Function's forward runs with grad disabled: its sort and pow save
    nothing; what it keeps is what it hands `save_for_backward` (y)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return _Squares.apply(self.lin(x))


def _relative_logits(q, table):
    return torch.einsum("b x y d, r d -> b x y r", q, table)


class HelperOfTwoLayouts(nn.Module):
    """One function given a contiguous tensor, then its transpose of the same shape:
    its einsum views the first and copies the second (halonet's relative_logits_1d;
    the run memoised for the first call served the second, one copy short, where
    the product before had saved q already, so that both calls found it saved)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.table = nn.Parameter(torch.randn(5, 8))

    def forward(self, x):
        q = self.lin(x)
        first = (q * q).sum() + _relative_logits(q, self.table)
        return first + _relative_logits(q.transpose(1, 2), self.table)


class HelperOfTwoLayoutsSwapped(HelperOfTwoLayouts):
    """The transposed tensor first: the contiguous call saves no copy."""

    def forward(self, x):
        q = self.lin(x)
        first = (q * q).sum() + _relative_logits(q.transpose(1, 2), self.table)
        return first + _relative_logits(q, self.table)


class _Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(8))

    def forward(self, x):
        return x * self.w


class _Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = _Scaled()

    def forward(self, x):
        return x + self.scale(torch.sigmoid(x))


class DeadTwin(nn.Module):
    """Two equal blocks given one tensor, the second's result dropped: what the
    second saved torch frees with it, though its layer's run is the first one's,
    memoised, which the loss reaches (spandrel's CIDNet: `i_dec2 = self.I_LCA5(...)`
    overwritten unused, a lower bound above torch's)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.a = _Residual()
        self.b = _Residual()

    def forward(self, x):
        h = self.lin(x)
        y = self.a(h)
        dropped = self.b(y)  # noqa: F841
        dropped = self.b(h)  # noqa: F841
        return y.sum()


class _KeepsOutput(torch.autograd.Function):
    """Saves its input and the output it returns; a number kept on ctx is no
    saved tensor (the hooks never see it)."""

    @staticmethod
    def forward(ctx, x, scale):
        o = torch.zeros_like(x)
        o.add_(x * scale)
        ctx.scale = scale
        ctx.save_for_backward(x, o)
        return o

    @staticmethod
    def backward(ctx, g):
        x, o = ctx.saved_tensors
        return g * ctx.scale, None


class CustomKeepsOutput(nn.Module):
    """The Function's output, saved by it, is the storage the next Linear saves
    (folded as a view): counted once."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        return self.b(_KeepsOutput.apply(self.a(x), 2.0))


class _SavesWhenAsked(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, keep):
        if keep:
            ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2, None


class CustomSavesUnderATest(nn.Module):
    """save_for_backward under a test of an argument: not surely called."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)

    def forward(self, x):
        return _SavesWhenAsked.apply(self.a(x), x.shape[0] > 1)


class NoExperts(nn.Module):
    """A router of no experts (litgpt's LLaMAMoE with n_expert 0): topk of 0 over
    an empty axis keeps an empty index tensor, 0 bytes."""

    def __init__(self, d=8, experts=0):
        super().__init__()
        self.gate = nn.Linear(d, experts, bias=False)
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        probs, indices = torch.topk(self.gate(x), 0)
        return self.lin(x) + probs.sum()


class TensorDots(nn.Module):
    """tensordot folds each operand for one mm, `permute(...).reshape(...)`: a view
    of its storage where the strides allow (a contraction over the first two axes
    of y, the permuted axes merge), a copy where not (the middle axis contracted)."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.w = nn.Parameter(torch.randn(d, 4))
        self.m = nn.Parameter(torch.randn(3, 5))

    def forward(self, x):
        y = self.lin(x)
        a = torch.tensordot(y, self.w, dims=([-1], [0]))
        b = torch.tensordot(y, y, dims=([0, 1], [0, 1]))
        c = torch.tensordot(y, self.m, dims=([1], [0]))
        return a.sum() + b.sum() + c.sum()


class NormedHeads(nn.Module):
    """F.normalize divides x by its norm: TensorIterator lays the result out in the
    order of x's strides (heads rearranged out of a projection), so rearranging it
    back is a view the output Linear folds, no copy."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.g = nn.Parameter(torch.ones(d // heads))
        self.out = nn.Linear(d, d)

    def forward(self, x):
        q = einops.rearrange(self.q(x), "b n (h d) -> b h n d", h=self.heads)
        q = F.normalize(q, dim=-1)
        gated = q * self.g  # saves q
        return self.out(einops.rearrange(q, "b h n d -> b n (h d)")) + gated.sum()


def _scaled(t, w):
    return t * w


class ReusedAfterSaved(nn.Module):
    """One helper called twice with tensors of one shape: the first call's tensor
    was saved already (its mul adds 0 bytes), the second's is new and is saved."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.g = nn.Parameter(torch.ones(d))
        self.w = nn.Parameter(torch.ones(d))

    def forward(self, x):
        y = self.lin(x)
        z = y * self.g
        a = _scaled(y, self.w)
        b = _scaled(y + 1, self.w)
        return z + a + b


class ListedAlias(nn.Module):
    """A Linear held in a plain list only: no submodule, so its weight is no
    registered Parameter, and torch's hooks see it saved as an activation."""

    def __init__(self, d=8):
        super().__init__()
        layers = [nn.Linear(d, d)]
        self.ml = nn.ModuleList(layers)
        layers.append(nn.Linear(d, d))
        self.plain = layers

    def forward(self, x):
        for layer in self.ml:
            x = layer(x)
        for layer in self.plain:
            x = layer(x)
        return x


class _Holder:
    def __init__(self, d):
        self.lin = nn.Linear(d, d)


class HeldByPlain(nn.Module):
    """A Linear held by a plain object and one by a plain dict: neither registered."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.h = _Holder(d)
        self.extra = {"a": nn.Linear(d, d)}

    def forward(self, x):
        return self.extra["a"](self.h.lin(self.lin(x)))


class HeldByPlainUncounted(HeldByPlain):
    """HeldByPlain beside a buffer of a size the analysis does not know: its count
    is not complete, so whether the plain-held Linears are registered is not
    proven (main took them for registered: a complete figure under torch's)."""

    def __init__(self, d=8):
        super().__init__(d)
        self.register_buffer("table", torch.zeros(int(os.environ.get("TABLE_SIZE", "4"))))


class RnnCellTwice(nn.Module):
    """nn.RNNCell run twice, first without a hidden state (the zeros torch makes for
    it), then on its own result (its relu's result, kept once), fed a projection."""

    def __init__(self, d=8, h=16):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.cell = nn.RNNCell(d, h, nonlinearity="relu")

    def forward(self, x):
        u = self.proj(x)
        h = self.cell(u[:, 0])
        return self.cell(u[:, 1], h)


class TiedInList(nn.Module):
    """The registered Linear held by a plain list too: still registered."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.again = [self.lin]

    def forward(self, x):
        return self.again[0](self.lin(x))


class NormInList(nn.Module):
    """Norms in a plain list: their weights, biases and running statistics, which
    their saved= names, are activations to torch's hooks here."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.norms = [nn.LayerNorm(d), nn.GroupNorm(1, 3), nn.BatchNorm1d(3)]

    def forward(self, x):
        x = self.norms[0](self.lin(x))
        return self.norms[2](self.norms[1](x))


class RecurrentInList(nn.Module):
    """A GRU in a plain list: its saved= names none of its weights, which torch
    saves as activations here."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.rnns = [nn.GRU(d, d, batch_first=True)]

    def forward(self, x):
        return self.rnns[0](self.lin(x))[0]


class ParameterInForward(nn.Module):
    """A Parameter made in the forward: registered nowhere when the forward began."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.d = d

    def forward(self, x):
        w = nn.Parameter(torch.ones(self.d, self.d))
        return F.linear(self.lin(x), w)


def _two(layer, x):
    return layer(layer(x))


def _one(layer, x):
    return layer(x)


class Alternatives(nn.Module):
    """Two calls of which one runs, by a test the analysis cannot decide: what
    the calls inside either save is no part of a lower bound."""

    def __init__(self, d=8):
        super().__init__()
        self.pre = nn.Linear(d, d)
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        y = self.pre(x)
        if os.environ.get("SHAPELINT_TEST_UNSET_FLAG"):
            return _two(self.lin, y)
        return _one(self.lin, y)


class AutocastRegion(nn.Module):
    """Ops under autocast save their operands cast to bfloat16 (copies of their own)."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)

    def forward(self, x):
        y = self.a(x)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            z = self.b(y)
        return z.float() * y


class AutocastMethod(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)

    @torch.autocast("cpu", dtype=torch.bfloat16)
    def inner(self, x):
        return self.b(x)

    def forward(self, x):
        return self.inner(self.a(x)).float()


class EinsumDiagonal(nn.Module):
    """torch.einsum of one operand that sums no letter (`bii->bi`) is a view of it:
    of the input here, no storage of the run's (main: its 24 B counted)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 4)

    def forward(self, x):
        return torch.tanh(self.lin(torch.einsum("bii->bi", x[..., :3])))


class MaskCast(nn.Module):
    """An int mask cast with `dtype=` the input's dtype, which the analysis is not told
    (the default float): a float copy of its own, 4-byte elements, not the int mask."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        mask = torch.ones(x.shape[0], x.shape[1], dtype=torch.long).to(dtype=x.dtype)
        h = self.lin(x)
        return mask.unsqueeze(-1) * h + (1 - mask).unsqueeze(-1) * h


class BufferAlias(nn.Module):
    """One tensor registered as a buffer and kept as a plain attribute: what the
    product saves of it is the buffer, which the activations leave out."""

    def __init__(self, d=8):
        super().__init__()
        self.p = nn.Parameter(torch.ones(d, d))
        t = torch.ones(d)
        self.register_buffer("a", t)
        self.c = t

    def forward(self, x):
        return (x @ self.p) * self.c


class MaskToDtype(nn.Module):
    """`mask.to(x.dtype)`: x's dtype is not named (an input given none), but it is a
    dtype, not a device: the mask is cast, a float copy of its own."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def cast(self, mask, x):
        return mask.to(x.dtype)

    def forward(self, x):
        mask = self.cast(torch.ones(x.shape[0], x.shape[1], dtype=torch.long), x)
        return mask.unsqueeze(-1) * self.lin(x)


class MaskTypeAs(MaskToDtype):
    def cast(self, mask, x):
        return mask.type_as(x)


class MaskToTensor(MaskToDtype):
    def cast(self, mask, x):
        dt = x.dtype
        return mask.to(x).to(dt)


class MaskLike(MaskToDtype):
    def cast(self, mask, x):
        return torch.zeros_like(mask, dtype=x.dtype) + mask


class GatherSaved(nn.Module):
    """torch.gather of a layer's output by argsort's indices: autograd keeps the
    int64 index and the gathered tensor itself (gather_backward takes self)."""

    def __init__(self, d=6):
        super().__init__()
        self.l0, self.l1, self.l3 = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        h = self.l1(self.l0(x).masked_fill(x < 0, 0.0))
        return torch.gather(self.l3(h), -1, h.argsort(dim=-1))


def _steps(layer, x, n):
    for _ in range(n):
        x = layer(x)
        yield x


class GeneratorSteps(nn.Module):
    """A generator function whose body runs a layer on the caller's tensor, walked
    by `for`: each turn's layer saves its input."""

    def __init__(self, d=8):
        super().__init__()
        self.lin, self.first = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        x = self.first(x)
        for y in _steps(self.lin, x, 3):
            x = y
        return x


class GeneratorListed(GeneratorSteps):
    def forward(self, x):
        x = self.first(x)
        return list(_steps(self.lin, x, 3))[-1]


def _many(tensors, pattern, **kwargs):
    # a generator expression returned: decided where the caller unpacks it
    return (einops.rearrange(t, pattern, **kwargs) for t in tensors)


class ManyReturned(nn.Module):
    """einops_exts' rearrange_many, called twice on tensors of one shape: each call's
    items are its own run's views, not a memoised first run's."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, 2 * d)
        self.b = nn.Linear(d, 2 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        q, k = _many(self.a(x).chunk(2, dim=-1), "... (h d) -> ... h d", h=2)
        u, v = _many(self.b(x).chunk(2, dim=-1), "... (h d) -> ... h d", h=2)
        y = (q * k).softmax(-1) * (u * v).sigmoid()
        return self.out(einops.rearrange(y, "... h d -> ... (h d)"))


class RotaryThenAttention(nn.Module):
    """Rotary embedding of transposed heads: `q * cos` is laid out in q's order (a
    product whose dtype its stub chooses keeps the layout its rule gave), so the
    attention's result is too, and `.transpose(1, 2).contiguous()` copies nothing:
    the projection saves a view of the attention's result. (`x.float()` makes the
    dtypes known, which has the product's stub choose its result's dtype.)"""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.o = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q = self.q(x.float()).view(b, t, self.heads, d // self.heads).transpose(1, 2)
        angles = torch.arange(t).float()[:, None] * torch.ones(d // self.heads)
        cos, sin = angles.cos().to(q.dtype), angles.sin().to(q.dtype)
        q1, q2 = q.chunk(2, dim=-1)
        q = q * cos + torch.cat((-q2, q1), dim=-1) * sin
        y = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        return self.o(y.transpose(1, 2).contiguous().view(b, t, d))


class LoopAfterSaved(nn.Module):
    """A loop counted as one turn whose first turn finds, under the name it rebinds,
    a tensor an earlier op saved: that turn saves nothing of it, every later turn
    the turn before's result, a storage of its own (main: 960 B for torch's 1,152)."""

    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.w1 = nn.Linear(d, 2 * d)
        self.n1 = nn.Linear(2 * d, d)

    def forward(self, x):
        x = self.l0(x).clone()
        y = self.l0(x)
        for _ in range(2):
            x = self.n1(self.w1(x))
        return x + y


class LoopWrittenAfterSaved(LoopAfterSaved):
    """The same with the earlier result written in part in place (gen_modules
    --more, seed 136): the write keeps the storage the first layer saved
    (main: 960 B for torch's 1,152)."""

    def forward(self, x):
        x = self.l0(x).clone()
        x[:, :2] += self.l0(x)[:, :2]
        for _ in range(2):
            x = self.n1(self.w1(x))
        return x


class LoopSavesItsResult(nn.Module):
    """Each turn's exp saves its result, which the next turn's layer saves again:
    only the first turn's layer saves a storage of its own (main: 1,152 B for
    768)."""

    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.l1 = nn.Linear(d, d)

    def forward(self, x):
        x = self.l0(x) * 1.0
        for _ in range(3):
            x = torch.exp(self.l1(x))
        return x


class LoopOfTensorLength(nn.Module):
    """A loop as long as an axis of the input, a size with a name: one turn stands
    for all; what it saves of the tensor it rebinds and of one it finds is not
    known (main: 128*T**2 complete, 512 B for torch's 384 at T = 2)."""

    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)

    def forward(self, x):
        m = self.l0(x)
        y = m + 1
        for _ in range(x.shape[1]):
            y = y * m
        return y


class MaskToFirstParameter(MaskToDtype):
    """`next(self.parameters())`: nn.Module.parameters() makes a new generator at
    each call, whose first item is the first Parameter registered (main: not
    known, the mask kept int64: 48 B complete for torch's 24)."""

    def cast(self, mask, x):
        return mask.to(next(self.parameters()).dtype)


class MaskLikeFirstParameter(MaskToDtype):
    def cast(self, mask, x):
        return torch.ones_like(mask, dtype=next(self.parameters()).dtype) * mask


class NestedLoopsOfLayers(nn.Module):
    """Nested loops of `x = layer(x)` fed an intermediate: every turn saves the
    turn before's result at its bytes, as the first saves what it found (each
    level is counted as one turn times n, not run apart)."""

    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.l1 = nn.Linear(d, d)

    def forward(self, x):
        x = self.l0(x) * 1.0
        for _ in range(3):
            for _ in range(2):
                x = self.l1(x)
        return x


class NestedLoopsSaveTheirResult(nn.Module):
    """The inner turn's exp saves its result, which the next turn's layer finds:
    the first turn of each level saves what it found at its bytes, the later ones
    nothing there."""

    def __init__(self, d=8):
        super().__init__()
        self.l0 = nn.Linear(d, d)
        self.l1 = nn.Linear(d, d)

    def forward(self, x):
        x = self.l0(x) * 1.0
        for _ in range(2):
            for _ in range(3):
                x = torch.exp(self.l1(x))
        return x
