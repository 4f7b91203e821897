"""Small modules whose backward FLOPs tests/test_backward.py holds to torch's flop
counter under out.sum().backward()."""

import functools
import pickle

import einops
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


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


class NoGrad(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.enc = nn.Linear(d, d)
        self.head = nn.Linear(d, d)

    def forward(self, x):
        with torch.no_grad():
            h = self.enc(x)
        return self.head(h)


class Detach(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.enc = nn.Linear(d, d)
        self.head = nn.Linear(d, d)

    def forward(self, x):
        h = self.enc(x)
        return self.head(h.detach()) + self.head(h)


class Conv(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.a = nn.Conv2d(c, 8, 3, padding=1)
        self.b = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        return self.b(self.a(x))


class Grouped(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.a = nn.Conv2d(c, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)

    def forward(self, x):
        return self.dw(self.a(x))


class CkptNR(Ckpt):
    def forward(self, x):
        h = self.inp(x)
        return checkpoint(self.block, h, use_reentrant=False)


class Chain(nn.Module):
    """A frozen first layer fed the raw input: neither its weight's gradient nor
    the next layer's input gradient is computed."""

    def __init__(self, d=8, h=16):
        super().__init__()
        self.a = nn.Linear(d, h)
        self.b = nn.Linear(h, h)
        self.c = nn.Linear(h, d)
        self.a.requires_grad_(False)

    def forward(self, x):
        return self.c(F.relu(self.b(F.relu(self.a(x)))))


class FrozenInInit(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.emb = nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        for p in self.emb.parameters():
            p.requires_grad = False

    def forward(self, x):
        return self.out(self.emb(x))


class FrozenByName(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.emb = nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        for _, p in self.emb.named_parameters():  # not listed by the analysis
            p.requires_grad = False

    def forward(self, x):
        return self.out(self.emb(x))


def _tracked(d):
    t = torch.zeros(d, d)
    t.requires_grad = True  # a plain tensor autograd tracks: not a Parameter
    return t


class TrackedInHelper(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.t = _tracked(d)

    def forward(self, x):
        return self.lin(x) @ self.t


class Attn(nn.Module):
    """Products of two activations: both operands' gradients."""

    def __init__(self, d=8):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        s = q @ k.transpose(-2, -1)
        return s.softmax(-1) @ v


class Einsum(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))

    def forward(self, x):
        h = torch.einsum("bnd,de->bne", x, self.w)
        return torch.einsum("bnd,bmd->bnm", h, h)


class Buffered(nn.Module):
    """A buffer needs no grad: the product with it differentiates one side."""

    def __init__(self, d=8):
        super().__init__()
        self.register_buffer("proj", torch.randn(d, d))
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return self.fc(x) @ self.proj


class Repeat(nn.Module):
    """One layer applied n times to the raw input: the first turn computes no input
    gradient, the others do (turns counted, not unrolled)."""

    def __init__(self, d=8, n=3):
        super().__init__()
        self.n = n
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        for _ in range(self.n):
            for _ in range(self.n):
                x = self.lin(x)
        return x


class Sdpa3d(nn.Module):
    """scaled_dot_product_attention on 3-D inputs: no fused kernel takes them, on any
    device; torch differentiates its math path (the value needs no grad here)."""

    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.register_buffer("v", torch.randn(4, d))

    def forward(self, x):
        return F.scaled_dot_product_attention(self.q(x), self.k(x), self.v.expand(2, 4, 8))


class SdpaHeads(nn.Module):
    """scaled_dot_product_attention over (batch, heads, length, head) views of
    linear projections, with the mask and value width the subclasses give: which
    kernel CPU runs it with decides its backward (ops/attention_path.py)."""

    mask_shape: tuple | None = None
    value_width = 4

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, heads * self.value_width)

    def forward(self, x):
        B, T, C = x.shape
        q = self.q(x).view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = self.k(x).view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = self.v(x).view(B, T, self.heads, self.value_width).transpose(1, 2)
        mask = None if self.mask_shape is None else torch.zeros(self.mask_shape)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


class SdpaMask2d(SdpaHeads):
    """A 2-D mask: CPU's fused kernel, counted by its formula."""

    mask_shape = (4, 4)


class SdpaMask3d(SdpaHeads):
    """A 3-D mask: the math path, two products per operand that requires grad."""

    mask_shape = (2, 4, 4)


class SdpaWideValue(SdpaHeads):
    """A value wider than the query's head: the math path."""

    value_width = 8


class SdpaSplitHeads(nn.Module):
    """nanoGPT's attention: one projection split in three along its last axis, each
    part viewed as heads and transposed. Parts of longer rows, yet each last axis
    steps 1 at any size: CPU's fused kernel."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class SdpaRearranged(nn.Module):
    """Heads split by einops.rearrange (a reshape and a permute that keep the last
    axis last): the fused kernel."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)

    def forward(self, x):
        from einops import rearrange

        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (rearrange(t, "b n (h d) -> b h n d", h=self.heads) for t in (q, k, v))
        return F.scaled_dot_product_attention(q, k, v)


class SdpaKeyStepsLength(SdpaHeads):
    """A key whose last axis steps the length T (laid out transposed, then
    transposed back): the math path where T > 1, yet at T = 1 that axis steps 1
    and CPU takes the fused kernel. No formula holds for every T: not known."""

    def forward(self, x):
        B, T, C = x.shape
        q = self.q(x).view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = self.k(x).view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.transpose(-2, -1).contiguous().transpose(-2, -1)
        v = self.v(x).view(B, T, self.heads, self.value_width).transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v)


class SdpaRepeatedQueries(nn.Module):
    """Learned queries repeated over the batch by einops.repeat (unsqueezed and
    expanded: the batch steps 0, the last axis still 1), keys and values split by
    a Rearrange layer and the heads merged back: the fused kernel, which saves
    the query, a view of the parameter."""

    def __init__(self, d=8, heads=2, queries=3):
        super().__init__()
        from einops.layers.torch import Rearrange

        self.queries = nn.Parameter(torch.randn(heads, queries, d // heads))
        self.kv = nn.Linear(d, 2 * d)
        self.split = Rearrange("b n (h d) -> b h n d", h=heads)
        self.merge = Rearrange("b h q d -> b q (h d)")
        self.out = nn.Linear(d, d)

    def forward(self, x):
        from einops import repeat

        q = repeat(self.queries, "h q d -> b h q d", b=x.shape[0])
        k, v = self.kv(x).chunk(2, dim=-1)
        k, v = map(self.split, (k, v))
        return self.out(self.merge(F.scaled_dot_product_attention(q, k, v)))


class SdpaGrouped(nn.Module):
    """Grouped-query attention: four query heads over two key and value heads,
    enable_gqa set. CPU's fused kernel takes it (torch 2.5 on), counted by the CUDA
    formulas over the query's heads."""

    def __init__(self, d=8, heads=4, kv_heads=2):
        super().__init__()
        self.heads, self.kv_heads, self.head = heads, kv_heads, d // heads
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * kv_heads * self.head)

    def forward(self, x):
        B, T, C = x.shape
        q = self.q(x).view(B, T, self.heads, self.head).transpose(1, 2)
        k, v = self.kv(x).view(B, T, 2 * self.kv_heads, self.head).transpose(1, 2).chunk(2, dim=1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


class SdpaGroupedValueHeads(SdpaGrouped):
    """Grouped heads with a value of other head count than the key's: the math
    path, which broadcasts the value's single head."""

    def __init__(self):
        super().__init__(kv_heads=1)

    def forward(self, x):
        B, T, C = x.shape
        q = self.q(x).view(B, T, self.heads, self.head).transpose(1, 2)
        k, v = self.kv(x).view(B, T, 2, self.head).transpose(1, 2).chunk(2, dim=1)
        return F.scaled_dot_product_attention(q, k.expand(B, 2, T, self.head), v, enable_gqa=True)


class SdpaStridedKey(SdpaHeads):
    """A key whose last axis steps the head count (its projection viewed with the
    heads innermost): the math path, whatever the sizes."""

    def forward(self, x):
        B, T, C = x.shape
        q = self.q(x).view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = self.k(x).view(B, T, C // self.heads, self.heads).permute(0, 3, 1, 2)
        v = self.v(x).view(B, T, self.heads, self.value_width).transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v)


class Warp(nn.Module):
    """grid_sample: neither direction counted, its operands' gradients flow on."""

    def __init__(self, c=4):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.theta = nn.Parameter(torch.randn(1, 3, 2))

    def forward(self, x):
        n, _, h, w = x.shape
        base = torch.ones(n, h * w, 3)
        grid = base.bmm(self.theta.expand(n, 3, 2)).view(n, h, w, 2)
        return F.grid_sample(self.conv(x), grid, align_corners=False)


class Solve(nn.Module):
    """linalg.solve against a trainable matrix, the system's right side the input:
    A's gradient is one product; the indices of a triangle place its entries."""

    def __init__(self, d=8):
        super().__init__()
        self.d = d
        self.upper = nn.Parameter(torch.randn(d * (d - 1) // 2) * 0.1)
        rows, cols = torch.triu_indices(d, d, 1)
        self.register_buffer("rows", rows, persistent=False)
        self.register_buffer("cols", cols, persistent=False)

    def forward(self, x):
        q = torch.zeros(self.d, self.d).index_put((self.rows, self.cols), self.upper)
        eye = torch.eye(self.d)
        r = torch.linalg.solve(eye - q + q.t(), eye + q, left=False)
        return torch.linalg.solve(r + 4 * eye, x.transpose(-1, -2)).transpose(-1, -2)


class Special(nn.Module):
    """torch.special's own element-wise functions between two layers: the gradient
    reaches the first layer through them (no FLOPs of their own)."""

    def __init__(self, d=8):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)

    def forward(self, x):
        h = torch.special.erf(self.a(x)) + torch.special.log1p(torch.special.expm1(x))
        return self.b(torch.special.ndtr(h) * torch.special.i0e(h))


class SetOff(nn.Module):
    """`torch.set_grad_enabled(False)` called, not entered: the mode is off from
    the call to the next one (main 59bfaf8 counted fc1's backward: 1,536 for 512)."""

    def __init__(self, d=8):
        super().__init__()
        self.fc1 = nn.Linear(d, d)
        self.fc2 = nn.Linear(d, d)

    def forward(self, x):
        torch.set_grad_enabled(False)
        y = self.fc1(x)
        torch.set_grad_enabled(True)
        return self.fc2(y)


def _grad_off():
    torch.set_grad_enabled(False)


class SetOffInHelper(nn.Module):
    """... by a function the forward calls twice (its second call, no memo of the
    first, sets the mode again), inside a block that restores the mode it found."""

    def __init__(self, d=8):
        super().__init__()
        self.fc1 = nn.Linear(d, d)
        self.fc2 = nn.Linear(d, d)

    def forward(self, x):
        y = self.fc1(x)
        with torch.enable_grad():
            _grad_off()
            y = self.fc2(y)
            torch.set_grad_enabled(True)
            _grad_off()
        return self.fc2(y) + self.fc1(x)


class FrozenInForward(nn.Module):
    """The forward freezes a layer's weight before it runs it (torch: 512; main
    59bfaf8 printed a complete 768, fc1's weight gradient counted)."""

    def __init__(self, d=8):
        super().__init__()
        self.fc1 = nn.Linear(d, d)
        self.fc2 = nn.Linear(d, d)

    def forward(self, x):
        self.fc1.weight.requires_grad_(False)
        return self.fc2(self.fc1(x))


class FrozenByAssignInForward(FrozenInForward):
    def forward(self, x):
        self.fc1.weight.requires_grad = False
        return self.fc2(self.fc1(x))


def _freeze_wide(m):
    if isinstance(m, nn.Linear) and m.in_features == 8:
        m.weight.requires_grad_(False)


class FrozenByApply(nn.Module):
    """`self.apply(fn)` with a fn that freezes what it visits (main 59bfaf8:
    trainable 280 for torch's 152, backward 1,536 for 1,024)."""

    def __init__(self, d=8):
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)
        self.apply(_freeze_wide)

    def forward(self, x):
        return self.fc2(self.fc1(x))


class GridNoGrad(nn.Module):
    """`grid.requires_grad = False` on a tensor that needs no grad (arange's):
    nothing changes, and the backward stays known (deformable-attention's grid)."""

    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        grid = torch.arange(x.shape[-1]).float()
        grid.requires_grad = False
        return self.fc(x) + grid


def _freeze(p):
    p.requires_grad = False


class PosEncoder(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.pos = nn.Parameter(torch.zeros(1, 4, d))
        self.lin = nn.Linear(d, d)
        self._init_weights()

    def _init_weights(self):
        _freeze(self.pos)

    def forward(self, x, keep=None):
        return self.lin(x + self.pos)


class FrozenInSubmoduleInit(nn.Module):
    """A submodule's constructor freezes its own Parameter through a helper: the
    class's attributes, read for its forward's summary, come from a constructor
    run on an instance of its own, whose freeze retrains nothing built."""

    def __init__(self, d=8):
        super().__init__()
        self.enc = PosEncoder(d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        return self.enc(self.proj(x), None)


class _Product(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        ctx.rows = x.shape[0]
        return x @ w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        gx = g @ w.t() if ctx.needs_input_grad[0] else None
        gw = x.reshape(-1, x.shape[-1]).t() @ g.reshape(-1, g.shape[-1])
        return gx, gw


class CustomBackward(nn.Module):
    """A custom Function's backward is its own: the products it runs, on the tensors
    its forward saved, are what the flop counter counts (its input from a Linear
    requires grad, the weight too)."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.w = nn.Parameter(torch.randn(d, 2 * d))

    def forward(self, x):
        return _Product.apply(self.lin(x), self.w)


class CustomBackwardFirst(CustomBackward):
    """... and on the target's input, which requires no grad: needs_input_grad[0]
    is False, and the backward skips that product."""

    def forward(self, x):
        return self.lin(_Product.apply(x, self.w)[..., :8])


class TensorsInParameterList(nn.Module):
    """nn.ParameterList makes each plain tensor it is given a Parameter, which
    requires grad (main: backward 0 complete, the tensors taken as given)."""

    def __init__(self, d=8):
        super().__init__()
        self.ws = nn.ParameterList([torch.zeros(d, d) for _ in range(2)])
        self.more = nn.ParameterList()
        self.more.append(torch.zeros(d, d))

    def forward(self, x):
        for w in self.ws:
            x = x @ w
        return x @ self.more[0]


class TensorsInParameterDict(nn.Module):
    """nn.ParameterDict too (main: no parameter counted, backward 0 complete)."""

    def __init__(self, d=8):
        super().__init__()
        self.ws = nn.ParameterDict({"a": torch.zeros(d, d), "b": torch.zeros(d, 2 * d)})

    def forward(self, x):
        return x @ self.ws["a"] @ self.ws["b"]


class VecAtBatched(nn.Module):
    """A vector Parameter (a leaf that requires grad, under no_grad too) @ batched
    matrices: torch's matmul folds the batch into one matrix-vector product
    (aten.mv, counted 0) whatever the layout (main: the bmm it runs for a vector
    that needs no grad, counted)."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.v = nn.Parameter(torch.randn(d))
        self.w = nn.Parameter(torch.randn(3, d, 5))

    def forward(self, x):
        return self.lin(x).sum() * (self.v @ self.w).sum()


class VecAtSwapped(nn.Module):
    """A vector that needs no grad @ the transpose of contiguous batched matrices:
    b.mT is a matrix view, so torch folds to aten.mv (main: bmm counted)."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        return x[0, 0] @ self.lin(x).transpose(1, 2)


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


class Norms(nn.Module):
    """torch.linalg.norm as a vector norm (one axis, and every axis with no ord) and
    as a matrix norm by sums (a pair of axes, "fro" and inf): their backward is the
    flop counter's 0, the products around them counted."""

    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        y = self.fc(x)
        unit = y / torch.linalg.norm(y, dim=-1, keepdim=True)
        pair = torch.linalg.norm(y, dim=(0, -1)) + torch.linalg.norm(y, float("inf"), (0, 2))
        return self.fc(unit) * torch.linalg.norm(y) + pair.sum()


class DropPathFloor(nn.Module):
    """Stochastic depth as timm wrote it: a keep mask made by an in-place floor_
    (the module stays in training mode)."""

    def __init__(self, d=8, p=0.25):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.p = p

    def forward(self, x):
        keep = 1 - self.p
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        mask = keep + torch.rand(shape, dtype=x.dtype, device=x.device)
        mask.floor_()
        return self.fc(x.div(keep) * mask)


class SingularValues(nn.Module):
    """svdvals of a wide and a batched tall trainable matrix: no FLOPs forward, and
    backward one product `U @ (gS * Vh)` per matrix, 2·b·m·k·n with k = min(m, n)
    (main: unknown)."""

    def __init__(self, d=8):
        super().__init__()
        self.wide = nn.Parameter(torch.randn(d, 2 * d))
        self.tall = nn.Parameter(torch.randn(3, 2 * d, 5))

    def forward(self, x):
        s = torch.linalg.svdvals(self.wide)
        t = torch.linalg.svdvals(self.tall)
        return x @ (self.wide / s[0]) * t.sum()


class MatrixNorms(nn.Module):
    """linalg.matrix_norm at ord 2 (an SVD's largest value), -2 over two axes that
    are not the last, "nuc" and the Frobenius norm (elementwise: no product)."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))
        self.b = nn.Parameter(torch.randn(6, 2, 4))

    def forward(self, x):
        two = torch.linalg.matrix_norm(self.w, ord=2)
        low = torch.linalg.matrix_norm(self.b, ord=-2, dim=(0, 2))
        nuc = torch.linalg.matrix_norm(self.w, ord="nuc")
        fro = torch.linalg.matrix_norm(self.w)
        return x @ (self.w / (two + nuc + fro)) * low.sum()


class LinalgSvdNorms(nn.Module):
    """torch.linalg.norm at the orders it computes through svdvals (2 on a matrix,
    dim None; -2 over two axes that are not the last; "nuc" over a pair of a batch):
    matrix_norm's backward, one product per matrix (main: unknown)."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d // 2))
        self.b = nn.Parameter(torch.randn(6, 2, 4))

    def forward(self, x):
        two = torch.linalg.norm(self.w, ord=2)
        low = torch.linalg.norm(self.b, ord=-2, dim=(0, 2))
        nuc = torch.linalg.norm(self.b, "nuc", (1, 2))
        return x @ (self.w / two) * (low.sum() + nuc.sum())


class Inverses(nn.Module):
    """linalg.inv, torch.inverse and Tensor.inverse of trainable matrices (one
    batched): backward `-A⁻ᴴ @ (G @ A⁻ᴴ)`, two products per matrix."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.eye(d) + 0.1 * torch.randn(d, d))
        self.b = nn.Parameter(torch.eye(4) + 0.1 * torch.randn(3, 4, 4))

    def forward(self, x):
        a = torch.linalg.inv(self.w)
        c = torch.inverse(self.w.t())
        return x @ a @ c * self.b.inverse().sum()


class SvdValuesAlone(nn.Module):
    """torch.svd and linalg.svd (full matrices) of which the loss reaches S alone:
    the singular values' backward, whatever U and V are."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, 5))

    def forward(self, x):
        _, s, _ = torch.svd(self.w)
        t = torch.linalg.svd(self.w.t())[1]
        return x * (s.sum() + t.sum())


class SvdVectorsReached(nn.Module):
    """The loss reaches U too: svd_backward's general case, nobody derived here."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, 5))

    def forward(self, x):
        u, s, _ = torch.linalg.svd(self.w, full_matrices=False)
        return x @ u * s.sum()


class NormTriedThenOther(nn.Module):
    """A norm free forward but not backward, with another in the handler of its
    `try`: the handler runs only if the first raises, so the loss reaches one of
    the two (main with the norms' backward derived: both counted, above torch)."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))

    def forward(self, x):
        try:
            s = torch.linalg.matrix_norm(self.w, ord=2)
        except RuntimeError:
            s = torch.linalg.matrix_norm(self.w, ord="nuc")
        return x @ (self.w / s)


class NormEitherWay(nn.Module):
    """Two norms, one free backward, on the paths of an `if` the analysis cannot
    decide (a random draw's, False on every draw)."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))
        self.flag = bool(torch.rand(()) > 2)

    def forward(self, x):
        if self.flag:
            s = torch.linalg.matrix_norm(self.w, ord=2)
        else:
            s = torch.linalg.matrix_norm(self.w)
        return x @ (self.w / s)


class MappedFirst(nn.Module):
    """`a, b = map(lambda l: l(x), self.ls)` and only a returned: the loss reaches
    the first layer's run alone (main: one record for both runs, with the last
    run's result: 0 complete, where torch counts the first layer's gradient)."""

    def __init__(self, d=8):
        super().__init__()
        self.ls = nn.ModuleList([nn.Linear(d, d), nn.Linear(d, 2 * d)])

    def forward(self, x):
        a, b = map(lambda layer: layer(x), self.ls)
        return a


class _Permuted(nn.Module):
    def __init__(self, d, perm):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.perm = perm

    def forward(self, x):
        return self.lin(x.permute(*self.perm)).permute(*self.perm)


class MappedSum(nn.Module):
    """`sum(map(lambda f: f(x), blocks))` over blocks that run calls of their own
    (axial_attention's AxialAttention; main: unknown)."""

    def __init__(self, d=8):
        super().__init__()
        self.blocks = nn.ModuleList([_Permuted(d, (0, 2, 1)), _Permuted(d, (0, 1, 2))])

    def forward(self, x):
        return sum(map(lambda f: f(x), self.blocks))


class StackLost(nn.Module):
    """torch.stack of tensors the analysis lost (a complex tensor's `.real` and
    `.imag`), reshaped to a known shape: the stacked tensor derives from them, so
    which layers the loss reaches is not known (main: the stack read as requiring
    no grad, 2048 complete where torch counts 6144)."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, 2 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        y = self.lin(x)
        c = torch.complex(y[..., :8], y[..., 8:])
        s = torch.stack([c.real, c.imag], dim=0).reshape(2, x.shape[0], x.shape[1], 8)
        return self.out(s)


class GateOfUnknownData(nn.Module):
    """nn.Parameter of a tensor the analysis does not know (fastai's
    `nn.Parameter(tensor([0.]))`): still a trainable leaf, of sizes not known; the
    gate's gradient is elementwise (main: the Parameter not known, the product's
    origin lost, backward unknown)."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        # a copy made by pickle: a tensor the analysis does not know
        self.gamma = nn.Parameter(pickle.loads(pickle.dumps(torch.zeros(1))))

    def forward(self, x):
        return (self.gamma * self.lin(x) + x).contiguous().view(x.shape)


class FusedOrSplitProjection(nn.Module):
    """q, k and v from one product with the whole weight or from three with its
    thirds, on the paths of an `if` the analysis cannot decide: the same forward
    and the same backward either way, counted once (main: the backward of the
    `else` branch read after its calls were counted as costing nothing, so the two
    differed and the backward was not known)."""

    def __init__(self, d=8):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.w = nn.Parameter(torch.randn(3 * d, d))

    def forward(self, x):
        h = self.inp(x)
        if x.sum() > 0:
            q, k, v = F.linear(h, self.w).chunk(3, dim=-1)
        else:
            wq, wk, wv = self.w.chunk(3, dim=0)
            q, k, v = F.linear(h, wq), F.linear(h, wk), F.linear(h, wv)
        return self.combined(q, k, v)

    def combined(self, q, k, v):
        return q * k + v


def _first_parameter_dtype(module):
    for name, p in module.named_parameters():
        if p.is_floating_point():
            return p.dtype
    return None


class CastToParameterDtype(nn.Module):
    """The input cast to a dtype the analysis cannot read (the first floating
    parameter's, found by a loop): whatever it is, a tensor made from none that
    requires grad requires none, so the layer computes its weight's gradient only
    (main: the cast read as maybe requiring grad, backward not known)."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, 2 * d)

    def forward(self, x):
        return self.lin(F.silu(x).to(_first_parameter_dtype(self.lin)))


class FusedOrSplitQueryOnly(FusedOrSplitProjection):
    """As FusedOrSplitProjection, q alone used after: the loss reaches the whole
    product on the `if` path, one of the three on the other, which is not known."""

    def combined(self, q, k, v):
        return q * 2


class _Mix(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)

    def forward(self, x, y):
        return self.q(x) @ self.k(y).transpose(-2, -1)


class ReboundUnread(nn.Module):
    """Two layers of one class, whose runs the analysis shares: the second one's
    result rebound before anything reads it, so torch runs no backward of it,
    while the loss reaches the first's (cidnet's `i_dec2 = self.I_LCA5(...)`; main:
    the shared run's calls reached through the first, which call they belong to
    not known, the backward not known)."""

    def __init__(self, d=8):
        super().__init__()
        self.a = _Mix(d)
        self.b = _Mix(d)
        self.out = nn.Linear(4, d)

    def forward(self, x):
        h = self.a(x, x)
        y = self.b(x, x)
        y = self.out(h)
        return y


def _tiny(dtype):
    return torch.finfo(dtype).tiny


class EpsOfDtype(nn.Module):
    """A log kept off zero by the dtype's smallest number (pytorch-adapt's
    `preds + pml_cf.small_val(preds.dtype)`): torch.finfo's field is a float, no
    tensor (main: a value not known, the sum's making lost, backward not known)."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        h = self.lin(x)
        return torch.log(h.abs() + _tiny(h.dtype)) * torch.iinfo(torch.int8).max


class FoldThenScaled(nn.Module):
    """F.fold's result scaled in place (asteroid's `x = F.fold(...); x /= c`): fold
    makes a buffer of its own and saves nothing, so the write meets no save (main:
    fold's buffer a storage not named, any save a tensor it may write into: the
    backward may raise, no figure)."""

    def __init__(self, d=12):
        super().__init__()
        self.lin = nn.Linear(8, d)

    def forward(self, x):
        h = torch.relu(self.lin(x))  # relu saves its result
        y = F.fold(h.transpose(1, 2), (4, 1), kernel_size=(3, 1), padding=(1, 0))
        y /= 2.0
        return y


class JoinedComputeDtype(nn.Module):
    """A cast to float32 or to the input's dtype (peft's OrthLayer): either is a float
    dtype, so the cast of a parameter keeps its grad (main: the join of two dtypes
    not known, the cast maybe an integer one, the product's backward not known)."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))

    def forward(self, x):
        if x.dtype in (torch.float16, torch.bfloat16):
            compute = torch.float32
        else:
            compute = x.dtype
        return (x.to(compute) @ self.w.to(compute).t()).to(x.dtype)


class HalfOrFloatMean(_Mix):
    """A mean taken in float32 and cast back to half on one path (spandrel's
    UpCunet4x, `if "Half" in x.type()`): a float of a width not known on the join."""

    def forward(self, x):
        h = self.q(x)
        if "Half" in x.type():
            m = h.float().mean(-1, keepdim=True).half()
        else:
            m = h.mean(-1, keepdim=True)
        return self.k(h - m)


class PromotedDtype(nn.Module):
    """azula's `@promote_dtype`: `functools.reduce(torch.promote_types, dtypes)` and
    `torch.promote_types(w.dtype, torch.float32)` (main: neither read, the casts'
    dtypes not known, the product's backward not known)."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        dtype = functools.reduce(torch.promote_types, [x.dtype, self.lin.weight.dtype])
        w = self.lin.weight.to(torch.promote_types(self.lin.weight.dtype, torch.float32))
        return (x.to(dtype) @ w.t()).to(dtype)


class ComplexScalars(nn.Module):
    """Python complex numbers make a real tensor complex (vocos' ISTFTHead,
    `mag * (x + 1j * y)`; `1 + 2j`, `2 * 1j`, `-1j` folded as Python does; main: a
    complex literal a value not known, the sum's making lost, backward not known)."""

    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        h = self.lin(x)
        z = h * (torch.cos(h) + 1j * torch.sin(h)) * (2 * 1j) + h * (-1j) + (1 + 2j) * h
        return torch.view_as_real(z * 0.5j)


class BuiltFromParams(nn.Module):
    """A tensor made from a Parameter by the constructor's own op: it carries that
    op's graph, and the first `out.sum().backward()` runs its backward too (the
    product's two gradients), which no call of the forward makes."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))
        self.w2 = self.w @ self.w

    def forward(self, x):
        return x @ self.w2


class BuiltDetached(nn.Module):
    """The same tensor detached while built: the loss reaches only the forward's op."""

    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))
        self.w2 = (self.w @ self.w).detach().requires_grad_()

    def forward(self, x):
        return x @ self.w2 @ self.w
