"""Modules whose forward makes tensors the loss does not reach: their backward
does not run (tests/test_backward_reach.py checks each against torch)."""

from collections import OrderedDict

import torch
from torch import nn
from torch.autograd import Variable


class Detached(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        y = self.l(x).detach()
        return self.k(y)


class Data(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        y = Variable(self.l(x))
        return self.k(y)


class NoGradBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        with torch.no_grad():
            y = self.l(x)
        return self.k(y)


class Argmax(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.e = nn.Embedding(8, 8)

    def forward(self, x):
        i = self.l(x).argmax(-1)
        return self.e(i)


class TopkIndices(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.e = nn.Embedding(8, 8)

    def forward(self, x):
        _, i = self.l(x).topk(2, dim=-1)
        return self.e(i)


class Compared(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        mask = self.l(x) > 0
        return self.k(x) * mask


class Dead(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        unused = self.l(x)  # noqa: F841
        return self.k(x)


class Stored(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        self.cache = self.l(x)
        return self.k(x)


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 16)

    def forward(self, x):
        a = self.l(x)
        return a, self.k(a)


class Named(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 16)

    def forward(self, x):
        return {"a": self.l(x), "b": self.k(x), "n": x.shape[0]}


class Helper(nn.Module):
    """A helper function run twice with equal arguments (its analysis is reused):
    the loss reaches one call's result only."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)

    def twice(self, x):
        return self.l(x) * 2

    def forward(self, x):
        h = torch.relu(self.l(x))
        unused = self.twice(x)  # noqa: F841
        return self.twice(h)


class Blocks(nn.Module):
    """Equal blocks (their analysis reused), each fed the one before."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(8, 8), nn.ReLU()) for _ in range(3)])
        self.inp = nn.Linear(8, 8)

    def forward(self, x):
        x = self.inp(x)
        for b in self.blocks:
            x = b(x)
        return x


class Written(nn.Module):
    """A write into part of a tensor that needs no grad makes it need one: the
    loss reaches what was written."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        y = torch.zeros_like(x)
        y[:, 0] = self.l(x)[:, 0]
        return self.k(y)


class Appended(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        outs = []
        outs.append(self.l(x))
        outs.append(self.k(x).detach())
        return torch.stack(outs).sum(0)


class Overwritten(nn.Module):
    """Each turn overwrites y: only the last turn's reaches the loss."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        for _ in range(3):
            y = self.l(x)
        return self.k(y)


class Carried(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        x = self.k(x)
        for _ in range(3):
            x = self.l(x)
        return x


class Summed(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)

    def forward(self, x):
        s = 0
        for _ in range(3):
            s = s + self.l(x)
        return s


class OverwrittenName(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        y = self.k(x)
        for _ in range(3):
            y = self.l(x)
        return self.k(y)


class DeadChain(nn.Module):
    """x carried from turn to turn, fed the raw input; h carried and dead."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        h = self.k(x)
        for _ in range(3):
            x = self.l(x)
            h = self.k(h)
        return x


class Unpacked(nn.Module):
    """Rows of a parameter (iterating a tensor walks its first dimension): they
    require grad and derive from it."""

    def __init__(self):
        super().__init__()
        self.mem = nn.Parameter(torch.randn(2, 8, 8))
        self.l = nn.Linear(8, 8)

    def forward(self, x):
        a, b = self.mem
        c = [t for t in self.mem][0]
        return self.l(x) @ a + x @ b + x @ c


class Filled(nn.Module):
    """A fill value the analysis does not read: the result's shape is known
    without it, so it is no tensor the walk misses."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        y = self.l(x)
        y = y.masked_fill(y > 0, -torch.finfo(y.dtype).max)
        return self.k(y)


class AugmentedAlias(nn.Module):
    """`out += y` writes into out (`__iadd__`): a name bound to out before sees the
    write, and the loss through it reaches k."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        out = self.l(x)
        res = out
        out += self.k(x)
        out *= 2
        return res


class Listed(nn.Module):
    """Rates read off a tensor with tolist() (timm's stochastic-depth rates): Python
    numbers in lists, so their count is known and `x * keep` is no product with a
    tensor that may require grad."""

    def __init__(self, rate=0.1):
        super().__init__()
        rates = [r.tolist() for r in torch.linspace(0, rate, 6).split([2, 4])]
        self.keep = 1 - rates[1][-1]
        self.l = nn.Linear(8, 8 * len(rates[1]))

    def forward(self, x):
        return self.l((x * self.keep).view_as(x))


class Entries(OrderedDict):
    """A dict subclass: the loss sums its entries' tensors (`out.values()`)."""


class EntriesOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 16)

    def forward(self, x):
        out = Entries()
        out["a"] = self.l(x)
        out["b"] = self.k(x)
        return out


class _Gram(torch.autograd.Function):
    @staticmethod
    @torch.no_grad()
    def forward(ctx, q, k):
        ctx.save_for_backward(q, k)
        return q @ k.t() @ k

    @staticmethod
    @torch.no_grad()
    def backward(ctx, g):
        q, k = ctx.saved_tensors
        return g @ k.t() @ k, k @ q.t() @ g


class CustomFunction(nn.Module):
    """A custom autograd.Function whose forward runs under no_grad: autograd runs
    its own backward, which the loss reaches through its result."""

    def __init__(self):
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)
        self.o = nn.Linear(8, 8)

    def forward(self, x):
        return self.o(_Gram.apply(self.q(x), self.k(x)))


class BroadcastOne(nn.Module):
    """broadcast_tensors and meshgrid expand each operand on its own: the loss
    reaches an operand only through its own result."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 1)
        self.c = nn.Linear(8, 8)

    def forward(self, x):
        p, q = torch.broadcast_tensors(self.a(x), self.b(x))
        u, v = torch.meshgrid(self.c(x).sum(0), self.a(x).sum(0), indexing="ij")
        return q.exp() + v.sum()


class BroadcastIndexed(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        ts = torch.broadcast_tensors(self.a(x), self.b(x))
        return ts[0] * 2


class StepCarried(nn.Module):
    """A helper called each turn returns two carried values, the loss reaches only
    one at the last turn: the last turn's `p` runs no backward, though its analysis
    is shared with the turn before, where the loss reaches it."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.p = nn.Linear(8, 8)

    def step(self, x, h, c):
        c = c + self.a(x) + h
        h = self.p(c)
        return h, c

    def forward(self, x):
        h = torch.zeros_like(x)
        c = torch.zeros_like(x)
        for _ in range(4):
            h, c = self.step(x, h, c)
        return c


class SharedRun(nn.Module):
    """Two calls of one helper with equal arguments share its analysis; the loss
    reaches the second result of one and the first of the other."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.p = nn.Linear(8, 8)
        self.q = nn.Linear(8, 8)

    def two(self, u):
        return self.p(u), self.q(u)

    def forward(self, x):
        u = self.lin(x)
        a1, b1 = self.two(u)
        a2, b2 = self.two(u * 2)
        return b1 + a2


class CarriedLast(nn.Module):
    """A value carried to the next turn and never returned: the last turn's `p`
    runs no backward, every turn before does."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.p = nn.Linear(8, 8)

    def forward(self, x):
        h = self.a(x)
        c = self.a(x)
        for _ in range(4):
            c = c + self.a(x) + h
            h = self.p(c)
        return c


class CarriedRows(nn.Module):
    """CarriedLast over the rows of its input: a count the analysis may hold as a
    symbol."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.p = nn.Linear(8, 8)

    def forward(self, x):
        h = torch.zeros_like(x[0])
        c = torch.zeros_like(x[0])
        for t in range(x.shape[0]):
            c = c + self.a(x[t]) + h
            h = self.p(c)
        return c


class ReadLate(nn.Module):
    """Values that reach the output one turn late (`w = q(v); v = p(u)`): from two
    turns on, the loss reaches the u the loop started from, not the v."""

    turns = 4

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.p = nn.Linear(8, 8)
        self.q = nn.Linear(8, 8)

    def start(self, x):
        return self.a(x), self.a(x), self.a(x)

    def forward(self, x):
        u, v, w = self.start(x)
        for _ in range(self.turns):
            w = self.q(v)
            v = self.p(u)
            u = u + self.a(x)
        return u + w


class ReadLateFirst(ReadLate):
    """ReadLate from the input itself: the first turn makes the names require grad
    (a turn apart), and the loss reaches the first turn's p through the third's q."""

    turns = 3

    def start(self, x):
        return x, x, x


class OverwrittenRows(nn.Module):
    """A name the loop overwrites from a value it carries, over the rows of its
    input: after one turn or more the loss reaches the loop's w, never the w
    before it."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)
        self.q = nn.Linear(8, 8)

    def forward(self, x):
        w = self.b(x[0])
        u = self.a(x[0])
        for t in range(x.shape[0]):
            w = self.q(u)
            u = u + self.q(x[t])
        return w


class OverwrittenButOne(nn.Module):
    """OverwrittenRows over all rows but one: at one row the loop runs no turn and
    the loss reaches the w before it, from two rows on the loop's: no one formula."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.q = nn.Linear(8, 8)

    def forward(self, x):
        u = self.a(x[0])
        w = self.q(x[0])
        for t in range(x.shape[0] - 1):
            w = self.q(u)
            u = u + self.a(x[t])
        return w


class Box:
    def __init__(self, t):
        self.t = t


class BoxedScale(nn.Module):
    """Returns a tensor inside an object the loss walk does not see into; no call
    runs anything backward (a scale and a sum), so neither do those it reaches."""

    def __init__(self, d=8):
        super().__init__()
        self.g = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return Box((x * self.g).sum(-1))


class BoxedLinear(BoxedScale):
    """The same object around a Linear's result: what the loss reaches is not known."""

    def __init__(self, d=8):
        super().__init__(d)
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        return Box(self.lin(x) * self.g)


class IndexedTurns(nn.Module):
    """Nested loops whose body names an index it computes (`k = i * 2 + j`): each
    turn's product reaches the loss through the sum it carries, as in torch."""

    def __init__(self, d=8):
        super().__init__()
        self.gate = nn.Linear(d, 4)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        g = self.gate(x)
        out = x.new_zeros(x.shape)
        for i in range(2):
            for j in range(2):
                k = i * 2 + j
                out = out + self.proj(x * g[:, k : k + 1])
        return out


class IndexedTurn(IndexedTurns):
    """One loop, its index computed from the item: every turn counts."""

    def forward(self, x):
        g = self.gate(x)
        out = self.proj(x)
        for i in range(3):
            k = i + 1
            out = out + self.proj(x * g[:, k : k + 1])
        return out


class LastPart(IndexedTurns):
    """A tensor whose size the item decides, left by the last turn and returned
    beside the sum the turns carry: never above torch's count."""

    def __init__(self, d=8):
        super().__init__(d)
        self.tail = nn.Linear(3, d)

    def forward(self, x):
        h = self.proj(x)
        out = h
        for i in range(3):
            part = h[:, : i + 1]
            out = out + self.proj(x * h[:, i : i + 1])
        return out + self.tail(part)


class _Cache:
    def __init__(self):
        self.key = None

    def update(self, k):
        self.key = k
        return k


class WithCache(nn.Module):
    """An output beside its cache, a plain object holding tensors (a model's KV
    cache): the loss sums the tensors of the returned containers only."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.k = nn.Linear(8, 16)

    def forward(self, x):
        cache = _Cache()
        cache.update(self.k(x))
        return self.l(x), cache


class CacheOnly(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = nn.Linear(8, 16)

    def forward(self, x):
        cache = _Cache()
        cache.update(self.k(x))
        return cache
