"""Python as it is written, in target runs (issue 24): iteration over module lists
(`zip`, `zip_longest`, `enumerate`, `reversed`, a ModuleList of ModuleLists unpacked in
the for target), starred unpacking and `*args` / `**kwargs` forwarding, and
`self.training` as the mode the target runs in. Each module is judged by
FlopCounterMode on the same module and inputs."""

from __future__ import annotations

import textwrap

import pytest

from tests.test_object_model import assert_exact

torch = pytest.importorskip("torch")

HEADER = textwrap.dedent(
    """
    import itertools
    from itertools import zip_longest

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    """
)

CASES = {
    # zip_longest pads the shorter list with None, decided item by item
    "zip_longest_fill_none": (
        """
        class Net(nn.Module):
            def __init__(self, dim, depth=3):
                super().__init__()
                self.fs = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
                self.gs = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth - 1)])

            def forward(self, x):
                for f, g in zip_longest(self.fs, self.gs):
                    x = f(x)
                    if g is not None:
                        x = g(x)
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    "itertools_zip_longest_fillvalue": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fs = nn.ModuleList([nn.Linear(dim, dim)])
                self.gs = nn.ModuleList([nn.Linear(dim, dim), nn.Linear(dim, dim)])

            def forward(self, x):
                for f, g in itertools.zip_longest(self.fs, self.gs, fillvalue=None):
                    if f is not None:
                        x = f(x)
                    x = g(x)
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    "zip_enumerate_reversed": (
        """
        class Net(nn.Module):
            def __init__(self, dim, depth=3):
                super().__init__()
                self.down = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
                self.up = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
                self.skip = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

            def forward(self, x):
                hs = []
                for i, (d, s) in enumerate(zip(self.down, self.skip)):
                    x = d(x)
                    hs.append(s(x) * i)
                for u, h in zip(reversed(self.up), reversed(hs)):
                    x = u(x) + h
                for i, u in enumerate(reversed(self.up), start=1):
                    if i == 2:
                        x = u(x)
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a ModuleList of ModuleLists, unpacked in the for target
    "module_list_of_module_lists": (
        """
        class Net(nn.Module):
            def __init__(self, dim, depth=2):
                super().__init__()
                self.layers = nn.ModuleList([])
                for _ in range(depth):
                    self.layers.append(nn.ModuleList([nn.Linear(dim, dim), nn.Linear(dim, 2 * dim)]))
                self.proj = nn.ModuleList([nn.Linear(2 * dim, dim) for _ in range(depth)])

            def forward(self, x):
                for (attn, ff), p in zip(self.layers, self.proj):
                    x = attn(x) + x
                    x = p(ff(x))
                for i, (attn, ff) in enumerate(reversed(self.layers)):
                    x = attn(x) * i
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    "module_list_of_tuples_nested": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.blocks = nn.ModuleList(
                    [nn.ModuleList([nn.Linear(dim, dim), nn.ModuleList([nn.ReLU(), nn.Linear(dim, dim)])])
                     for _ in range(2)]
                )
                self.pairs = [(nn.Linear(dim, dim), nn.Linear(dim, dim))]
                self.pair_mods = nn.ModuleList([m for pair in self.pairs for m in pair])

            def forward(self, x):
                for f, (act, g) in self.blocks:
                    x = g(act(f(x)))
                for f, g in self.pairs:
                    x = g(f(x))
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # per-layer arguments routed as performer-pytorch routes them: a filtered
    # comprehension over known keys, a grown list beside the layers, list(zip(...))
    "routed_arguments_per_layer": (
        """
        def route_args(router, args, depth):
            routed = [(dict(), dict()) for _ in range(depth)]
            matched = [key for key in args.keys() if key in router]
            for key in matched:
                for i, ((f_args, g_args), routes) in enumerate(zip(routed, router[key])):
                    routed[i] = ({**f_args, key: args[key]} if routes[0] else f_args, g_args)
            return routed

        class Net(nn.Module):
            def __init__(self, dim, depth=10):
                super().__init__()
                self.layers = nn.ModuleList(
                    [nn.ModuleList([nn.Linear(dim, dim), nn.Linear(dim, dim)]) for _ in range(depth)]
                )
                self.route = {"scale": ((True, False),) * depth}

            def forward(self, x, **kwargs):
                args = route_args(self.route, {"other": 1, **kwargs}, len(self.layers))
                for (f, g), (f_args, g_args) in list(zip(self.layers, args)):
                    x = g(f(x, **f_args), **g_args)
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # iterating a ModuleList gives each item itself: a Sequential stays callable
    # (only a tuple target unpacks it)
    "sequential_items_of_a_module_list": (
        """
        class Net(nn.Module):
            def __init__(self, dim, depth=(1, 1)):
                super().__init__()
                self.layers = nn.ModuleList([])
                for ind, n in enumerate(depth):
                    for _ in range(n):
                        self.layers.append(nn.Sequential(nn.Linear(dim, dim * 2), nn.Linear(dim * 2, dim)))

            def forward(self, x):
                for stage in self.layers:
                    x = stage(x)
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a comprehension over a tensor walks its first dimension, one item per row
    "comprehension_over_a_tensor": (
        """
        class Net(nn.Module):
            def __init__(self, dim, depth=3):
                super().__init__()
                rates = [r.item() for r in torch.linspace(0, 0.1, depth)]
                self.blocks = nn.ModuleList([nn.Linear(dim, dim) for r in rates])

            def forward(self, x):
                for blk in self.blocks:
                    x = blk(x)
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # torch.tensor of a literal table: its shape, one dim per level
    "literal_table_tensor": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.proj = nn.Linear(dim, 2)
                self.register_buffer("mix", torch.tensor([[1.0, 0.5, 0.0], [0.0, 0.5, 1.0]]))

            def forward(self, x):
                return self.proj(x) @ self.mix
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # starred unpacking of shapes and *args
    "starred_shape_unpacking": (
        """
        class Net(nn.Module):
            def __init__(self, dim, heads=2):
                super().__init__()
                self.heads = heads
                self.qkv = nn.Linear(dim, dim)
                self.out = nn.Linear(dim, dim)

            def forward(self, x):
                b, *_ = x.shape
                *lead, d = x.shape
                h = self.qkv(x).view(*x.shape[:-1], self.heads, -1)
                noise = torch.randn(*lead, d)
                y = h.reshape(*lead, d) + noise
                w = torch.ones(b, *x.shape[1:-1], d, d)
                return self.out(y) @ w[0, 0]
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 3, 8)),
    ),
    "list_by_repetition_item_assigned_as_args": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)

            def forward(self, x):
                shape = [1] * x.ndim
                shape[0] = x.shape[0]
                shape[-1] = x.shape[-1]
                scale = torch.ones(*shape)
                perm = [0] * 3
                perm[0], perm[1], perm[2] = 0, 2, 1
                y = self.fc(x * scale).permute(*perm)
                return y @ torch.ones(*y.shape[::-1][:1], 4)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 3, 8)),
    ),
    "args_kwargs_forwarding": (
        """
        class Inner(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)

            def forward(self, x, scale=1.0, extra=None):
                y = self.fc(x) * scale
                if extra is not None:
                    y = y @ extra
                return y

        class Wrap(nn.Module):
            def __init__(self, fn):
                super().__init__()
                self.fn = fn

            def forward(self, x, *args, **kwargs):
                return self.fn(x, *args, **kwargs)

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.inner = Wrap(Inner(dim))
                self.dim = dim

            def forward(self, x):
                args = (2.0,)
                kwargs = dict(extra=torch.ones(self.dim, self.dim))
                return self.inner(x, *args, **kwargs)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # list.insert at known indices (negative, past the end: clamped) and reverse():
    # the widths only chain in the order Python leaves the list in
    "list_insert_and_reverse": (
        """
        class Net(nn.Module):
            def __init__(self, widths=(4, 8, 16, 24)):
                super().__init__()
                blocks = []
                for i, (a, b) in reversed(list(enumerate(zip(widths, widths[1:])))):
                    blocks.insert(0, nn.Sequential(nn.Linear(a, b), nn.ReLU()))
                head = [nn.Linear(widths[-1], 3)]
                head.insert(-5, nn.Linear(widths[-1], widths[-1]))
                head.insert(10, nn.Linear(3, 2))
                tail = [nn.Linear(7, 2), nn.Linear(5, 7), nn.Linear(2, 5)]
                tail.reverse()
                tail.insert(-2, tail.pop(0))
                self.blocks = nn.ModuleList(blocks + head + tail)

            def forward(self, x):
                for b in self.blocks:
                    x = b(x)
                return x
        """,
        "Net",
        dict(),
        dict(x=(2, 4)),
    ),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_exact_against_flop_counter(tmp_path, key):
    assert_exact(tmp_path, key, CASES[key], HEADER)
