"""Objects whose methods change a list they hold (`self.keys.append(k)`): the
caller's object holds the grown list after the call, as in Python
(tests/test_method_list_changes.py holds each to torch)."""

import torch
from torch import nn


class Acc:
    def __init__(self):
        self.keys = []

    def add(self, k):
        self.keys.append(k)

    def add_two(self, k):
        self.keys.extend([k, k])


class Accumulated(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = nn.Linear(8, 16)

    def forward(self, x):
        acc = Acc()
        acc.add(self.k(x))
        acc.add(self.k(x))
        return torch.cat(acc.keys, -1)


class Extended(Accumulated):
    def forward(self, x):
        acc = Acc()
        acc.add_two(self.k(x))
        return torch.cat(acc.keys, -1) @ torch.ones(32, 4)


class HeldBefore(Accumulated):
    """`ks` holds the list before the method grows it: the same list in Python."""

    def forward(self, x):
        acc = Acc()
        ks = acc.keys
        acc.add(self.k(x))
        acc.add(self.k(x))
        return torch.cat(ks, -1) @ torch.ones(32, 4)


class Shared(Accumulated):
    """Two objects holding one list: a change through either is the other's."""

    def forward(self, x):
        a = Acc()
        b = Acc()
        b.keys = a.keys
        a.add(self.k(x))
        b.add(self.k(x))
        return torch.cat(a.keys, -1) @ torch.ones(32, 4)


class Kept(nn.Module):
    """A module's own method keeps features on it (`self.feats.append(y)`): the
    module, one object, holds them for its forward."""

    def __init__(self):
        super().__init__()
        self.k = nn.Linear(8, 16)
        self.feats = []

    def keep(self, y):
        self.feats.append(y)

    def forward(self, x):
        self.keep(self.k(x))
        self.keep(self.k(x))
        return torch.cat(self.feats, -1) @ torch.ones(32, 4)


class KeptAlias(Kept):
    def forward(self, x):
        xs = self.feats
        self.keep(self.k(x))
        self.keep(self.k(x))
        return torch.cat(xs, -1) @ torch.ones(32, 4)
