from torch import nn


class Pair(nn.Module):
    def __init__(self, dim, depth, hidden=64):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, hidden) for _ in range(depth)])
        self.outs = nn.ModuleList([])
        for _ in range(depth):
            self.outs.append(nn.Linear(hidden, dim))
        self.norms = nn.ModuleList([nn.LayerNorm(dim), nn.Linear(dim, dim)])

    def forward(self, x):
        for _i, (inner, out) in enumerate(zip(self.layers, self.outs)):
            x = out(inner(x)) + x
        for _layer, norm in zip(self.layers, self.norms):
            x = x + norm(x)
        return x
