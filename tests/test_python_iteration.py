"""Python as it is written, in target runs (issue 24): iteration over module lists
(`zip`, `zip_longest`, `enumerate`, `reversed`, a ModuleList of ModuleLists unpacked in
the for target), a str's characters, starred unpacking and `*args` / `**kwargs` forwarding, and
`self.training` as the mode the target runs in. Each module is judged by
FlopCounterMode on the same module and inputs."""

from __future__ import annotations

import textwrap

import pytest

from tests.test_modules import write
from tests.test_object_model import assert_exact
from tests.test_parameters import static

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

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
    # a one-shot iterator handed to a project function that lists it once (d3rlpy's
    # `last_flag(zip(in_units, hidden_units))`): its items
    "one_shot_listed_by_a_project_function": (
        """
        def last_flag(iterator):
            items = list(iterator)
            for i, item in enumerate(items):
                yield i == len(items) - 1, item


        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                layers = []
                for last, (a, b) in last_flag(zip([dim, 2 * dim], [2 * dim, dim])):
                    layers.append(nn.Linear(a, b))
                    if not last:
                        layers.append(nn.ReLU())
                self.body = nn.Sequential(*layers)

            def forward(self, x):
                return self.body(x)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a generator expression returned, decided where the caller gets it: unpacked
    # (einops_exts' `q, k, v = rearrange_many(...)`, through a closure), walked once by
    # a `for`, listed by a function it is handed to, returned again
    "generator_expression_returned_and_walked_once": (
        """
        from einops import rearrange


        def _many(fn):
            def inner(tensors, pattern, **kwargs):
                return (fn(t, pattern, **kwargs) for t in tensors)

            return inner


        rearrange_many = _many(rearrange)


        def listed(g):
            return list(g)


        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.qkv = nn.Linear(dim, 3 * dim)
                self.ls = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])

            def layers(self):
                return (l for l in self.ls)

            def again(self):
                return self.layers()

            def forward(self, x):
                q, k, v = rearrange_many(self.qkv(x).chunk(3, dim=-1), "b (h d) -> b h d", h=2)
                x = x + rearrange(q * k + v, "b h d -> b (h d)")
                for l in self.layers():
                    x = l(x)
                for l in listed(self.again()):
                    x = l(x)
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a generator expression a generator yields (opacus's `iterate_layers`), walked
    # once by the loop its `for` target binds it in
    "generator_expression_yielded_and_walked_once": (
        """
        class Net(nn.Module):
            def __init__(self, dim, num_layers=2, num_directions=2):
                super().__init__()
                self.num_layers = num_layers
                self.num_directions = num_directions
                self.cells = nn.ModuleList(
                    [nn.Linear(dim, dim) for _ in range(num_layers * num_directions)]
                )

            def iterate_layers(self, *args):
                for layer in range(self.num_layers):
                    yield layer, (
                        (d, tuple(a[self.num_directions * layer + d] for a in args))
                        for d in range(self.num_directions)
                    )

            def forward(self, x):
                for layer, directions in self.iterate_layers(self.cells):
                    for direction, (cell,) in directions:
                        x = cell(x) * (layer + 1)
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a generator function's call walked once through the name it is bound to, or
    # handed to a function or a method that walks it once; a generator expression
    # handed to a method that walks it once
    "generator_walked_once_where_it_is_handed": (
        """
        def blocks(ls):
            for l in ls:
                yield l


        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.ls = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])

            def run(self, g, x):
                for l in g:
                    x = l(x)
                return x

            def forward(self, x):
                g = blocks(self.ls)
                for l in g:
                    x = l(x)
                x = self.run(blocks(self.ls), x)
                return self.run((l for l in self.ls), x)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a one-shot iterator bound to a name walked once: its items, as a list
    "generator_expression_walked_once": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.ls = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])

            def forward(self, x):
                g = (l for l in self.ls)
                m = map(lambda l: l, self.ls)
                for l in g:
                    x = l(x)
                return sum(l(x) for l in m)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a one-shot iterator bound to a name the next statement rebinds from it
    # (axial_attention's `arr = zip(arr, indices); arr = sorted(arr)`): read once
    "iterator_rebound_from_itself": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.perm = (0, 2, 3, 1)
                self.l = nn.Linear(dim, dim)

            def forward(self, x):
                pairs = zip(self.perm, range(4))
                pairs = sorted(pairs)
                inv = [p[1] for p in pairs]
                return self.l(x.permute(*inv))
        """,
        "Net",
        dict(dim=6),
        dict(x=(2, 4, 6, 8)),
    ),
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
    # filter(f, xs) keeps the items f finds true, each test run as Python runs it;
    # a Sequential of what is kept (the None layers dropped)
    "filter_drops_none_layers": (
        """
        def exists(v):
            return v is not None

        def Seq(*modules):
            return nn.Sequential(*filter(exists, modules))

        class Net(nn.Module):
            def __init__(self, dim, post=False):
                super().__init__()
                self.ff = Seq(
                    nn.Linear(dim, 2 * dim),
                    nn.LayerNorm(2 * dim) if post else None,
                    nn.GELU(),
                    nn.Linear(2 * dim, dim),
                )

            def forward(self, x):
                return self.ff(x)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # next(it, default) of an iterator whose every item is the default gives it,
    # wherever the iterator stands; next(iter(xs)) is xs's first item
    "next_of_iterators_of_defaults": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.a = nn.Linear(dim, dim)
                self.b = nn.Linear(dim, dim)

            def forward(self, x, extra=None):
                residuals = iter((None,))
                kvs = iter(extra if extra is not None else ())
                for layer in (self.a, self.b):
                    r = next(residuals, None)
                    if r is not None:
                        x = x @ r
                    kv = next(kvs, None)
                    if kv is not None:
                        x = x @ kv
                    x = layer(x)
                first = next(iter((self.b, self.a)))
                return first(x)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # an iterator only `next` reads, through the one local that holds it: each
    # next gives the following item (the layers get 4, 8, 16 outputs, in order)
    "next_advances_a_local_iterator": (
        """
        def kwargs_iter(sizes):
            return iter([dict(out_features=s) for s in sizes])

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                sizes = kwargs_iter((4, 8, 16))
                self.layers = nn.ModuleList([])
                d = dim
                for _ in range(3):
                    kw = next(sizes)
                    self.layers.append(nn.Linear(d, **kw))
                    d = kw["out_features"]

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a constructor's loop over more listed values than a forward's loop unrolls:
    # each turn as Python runs it (attention and feed-forward layers alternate)
    "init_loop_over_many_listed_values": (
        """
        class Net(nn.Module):
            def __init__(self, dim, depth=6):
                super().__init__()
                kinds = ("a", "f") * depth
                self.layers = nn.ModuleList([])
                for kind in kinds:
                    if kind == "a":
                        self.layers.append(nn.Linear(dim, dim))
                    else:
                        self.layers.append(nn.Sequential(nn.Linear(dim, 2 * dim), nn.Linear(2 * dim, dim)))

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # `groups[i][key] = v` changes the dict inside the list; keys trimmed by
    # slicing the string at len(prefix): the layer is built with dim_head 4
    "keyword_groups_by_prefix": (
        """
        def group_by_prefix(prefix, d):
            groups = [dict(), dict()]
            for key in d.keys():
                groups[int(not key.startswith(prefix))][key] = d[key]
            return {k[len(prefix):]: v for k, v in groups[0].items()}, groups[1]

        class Net(nn.Module):
            def __init__(self, dim, **kwargs):
                super().__init__()
                attn, rest = group_by_prefix("attn_", kwargs)
                self.proj = nn.Linear(dim, attn.get("dim_head", 64))

            def forward(self, x):
                return self.proj(x)
        """,
        "Net",
        dict(dim=8, attn_dim_head=4),
        dict(x=(2, 8)),
    ),
    # keyword routes per layer, as a forward builds them: a dict display with a
    # computed key, stored into a list of pairs in a loop over more layers than a
    # loop is otherwise unrolled over, then given to each layer with **
    "routed_keyword_arguments": (
        """
        def route(router, args, depth):
            routed = [(dict(), dict()) for _ in range(depth)]
            for key in [k for k in args.keys() if k in router]:
                val = args[key]
                for i, ((f_args, g_args), routes) in enumerate(zip(routed, router[key])):
                    new_f, new_g = map(lambda r: ({key: val} if r else {}), routes)
                    routed[i] = ({**f_args, **new_f}, {**g_args, **new_g})
            return routed

        class Mix(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.proj = nn.Linear(dim, dim)

            def forward(self, x, bias=None):
                x = self.proj(x)
                return x @ bias if bias is not None else x

        class Net(nn.Module):
            def __init__(self, dim, depth=10):
                super().__init__()
                self.layers = nn.ModuleList([nn.ModuleList([Mix(dim), Mix(dim)]) for _ in range(depth)])
                self.router = {"bias": ((True, False),) * depth}

            def forward(self, x):
                bias = torch.ones(x.shape[-1], x.shape[-1])
                args = route(self.router, dict(bias=bias), len(self.layers))
                for (f, g), (f_args, g_args) in list(zip(self.layers, args)):
                    x = x + f(x, **f_args)
                    x = x + g(x, **g_args)
                return x
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
    # a comprehension is a loop: a filter over enumerate(ModuleList), a second `for`,
    # each turn as Python runs it (widths differ, so a layer skipped or run twice shows)
    "comprehension_filtered_and_nested": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fs = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])
                self.gs = nn.ModuleList([nn.Linear(dim, 2 * dim), nn.Linear(dim, 3 * dim)])

            def forward(self, x):
                a = sum([f(x) for i, f in enumerate(self.fs) if i != 1])
                b = [g(x) for g in self.gs for _ in range(2) if g.out_features > 8]
                c = [f(a) for i, f in enumerate(self.fs) for _ in range(i)]
                return torch.cat([a, *b, *c], dim=-1)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a generator function's items: what its body yields, run to its end where every
    # test is decided and every loop listed (a `return` ends it, `yield from` walks)
    "generator_functions": (
        """
        def even(layers):
            for j, blk in enumerate(layers):
                if j % 2 == 0:
                    yield blk


        def first(layers, n):
            for j, blk in enumerate(layers):
                if j >= n:
                    return
                yield blk


        def chain(layers, last):
            yield from layers
            yield last


        class Net(nn.Module):
            def __init__(self, dim, depth=5):
                super().__init__()
                self.ml = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
                self.out = nn.Linear(dim, 2 * dim)

            def forward(self, x):
                for blk in even(self.ml):
                    x = blk(x)
                x = sum(blk(x) for blk in first(self.ml, 2))
                for blk in chain(self.ml, self.out):
                    x = blk(x)
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # tuple() and list() are empty: a zip with one stops before the module list's first
    # layer, and the list a comprehension builds over one is empty too
    "zip_of_an_empty_tuple_call_with_a_module_list": (
        """
        class Net(nn.Module):
            def __init__(self, dim, dims=tuple()):
                super().__init__()
                self.convs = nn.ModuleList([nn.Linear(a, dim) for a in dims])
                self.extra = nn.ModuleList([nn.Linear(dim, dim)])
                self.out = nn.Linear(dim, dim)

            def forward(self, x, fmaps=None):
                fmaps = fmaps if fmaps is not None else tuple()
                outs = [f * 2 for f in list()] + [conv(f) for f, conv in zip(fmaps, self.extra)]
                return torch.cat((self.out(x), *outs), dim=-1)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a separable filter written as windows of the padded input (narrow, a view) summed
    # into the output in place (addcmul_), after layout queries that compute nothing
    "narrow_windows_summed_in_place": (
        """
        class Net(nn.Module):
            def __init__(self, dim, ksize=3):
                super().__init__()
                self.ksize = ksize
                self.register_buffer("kernel", torch.ones(ksize) / ksize)
                self.lin = nn.Linear(dim, dim)

            def forward(self, x):
                if not x.is_contiguous():
                    x = x.contiguous()
                pinned = x.is_pinned()
                n = x.shape[-1]
                padded = F.pad(x, (self.ksize // 2, self.ksize // 2))
                out = torch.zeros_like(x)
                for i in range(self.ksize):
                    out.addcmul_(padded.narrow(-1, i, n), self.kernel[i])
                return self.lin(out) * (1.0 if not pinned else 2.0)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a generator method taking `*args` (none given: an empty tuple) and a keyword-only
    # parameter, its items pairs of a layer index and a generator of directions
    # (opacus's DPRNNBase.iterate_layers, naming the cells it registers by setattr);
    # main listed no items of a generator with such parameters
    "generator_with_star_args": (
        """
        class Net(nn.Module):
            def __init__(self, dim, num_layers=2, num_directions=2):
                super().__init__()
                self.num_layers = num_layers
                self.num_directions = num_directions
                self.cells = []
                for layer, directions in self.iterate_layers():
                    for direction, _ in directions:
                        cell = nn.Linear(dim, dim)
                        self.cells.append(cell)
                        suffix = "_reverse" if direction == 1 else ""
                        setattr(self, f"l{layer}{suffix}", cell)

            def iterate_layers(self, *args, step=1):
                for layer in range(0, self.num_layers, step):
                    # a tuple: opacus yields the generator expression itself, which
                    # one_shot.py keeps only where it is walked where it is made
                    yield layer, tuple(
                        (direction, tuple(a[layer + direction] for a in args))
                        for direction in range(self.num_directions)
                    )

            def forward(self, x):
                for layer, directions in self.iterate_layers(step=1):
                    for direction, _ in directions:
                        suffix = "_reverse" if direction == 1 else ""
                        x = getattr(self, f"l{layer}{suffix}")(x)
                return x
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a str iterated yields its characters (spandrel's FBCNN: `for t in mode`
    # building conv, act, conv from "CRC"), in a loop, list() and a comprehension
    "str_characters": (
        """
        def block(c, mode):
            layers = []
            for t in mode:
                if t == "C":
                    layers.append(nn.Conv2d(c, c, 3, 1, 1))
                elif t == "R":
                    layers.append(nn.ReLU())
            return nn.Sequential(*layers)

        class Net(nn.Module):
            def __init__(self, c=4, mode="CRC", tail="LL"):
                super().__init__()
                self.res = block(c, mode)
                self.tail = nn.Sequential(*[nn.Linear(4, 4) for t in list(tail) if t == "L"])
                self.lens = [len(t) for t in tail + "xyz"]

            def forward(self, x):
                return self.tail(x + self.res(x)) * len(self.lens)
        """,
        "Net",
        dict(),
        dict(x=(2, 4, 6, 4)),
    ),
}


def test_a_project_class_built_with_kwargs_not_known_one_by_one_is_not_known(tmp_path):
    # Python binds dim_head from the dict a function of another package gives;
    # built with its default (64) instead, the layer would be another one than torch's
    path = write(
        tmp_path,
        "open_kwargs.py",
        HEADER
        + textwrap.dedent(
            """
            from somewhere_unseen import layer_kwargs

            class Inner(nn.Module):
                def __init__(self, dim, dim_head=64):
                    super().__init__()
                    self.proj = nn.Linear(dim, dim_head)

                def forward(self, x):
                    return self.proj(x)

            class Net(nn.Module):
                def __init__(self, dim, **kwargs):
                    super().__init__()
                    self.a = Inner(dim, **layer_kwargs(kwargs))

                def forward(self, x):
                    return self.a(x)
            """
        ),
    )
    t = static(path, "Net", "--init", "dim=8", "--init", "dim_head=4", "--input", "x=2,8")
    assert not t["complete"]
    assert t["params"] == "?" and "a" in t["params_unknown"]


@pytest.mark.parametrize("key", sorted(CASES))
def test_exact_against_flop_counter(tmp_path, key):
    assert_exact(tmp_path, key, CASES[key], HEADER)


def test_a_generator_whose_items_depend_on_data_is_not_complete(tmp_path):
    # which layers it yields depends on x: no figure may claim to know
    path = write(
        tmp_path,
        "data_gen.py",
        HEADER
        + textwrap.dedent(
            """
            def picked(layers, x):
                for blk in layers:
                    if x.sum() > 0:
                        yield blk


            class Net(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.ml = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])

                def forward(self, x):
                    for blk in picked(self.ml, x):
                        x = blk(x)
                    return x
            """
        ),
    )
    t = static(path, "Net", "--init", "dim=8", "--input", "x=2,8")
    assert not t["complete"]


@pytest.mark.parametrize(
    "call", ["x.mean(**kw)", "torch.mean(x, **kw)", 'getattr(x, "mean")(**kw)']
)
def test_a_reduction_given_kwargs_not_known_one_by_one_is_not_known(tmp_path, call):
    # what mean reduces is in kw: run without it, it reduces everything, and the
    # Linear after it would be a false error
    path = write(
        tmp_path,
        "open_reduce.py",
        HEADER
        + textwrap.dedent(
            f"""
            from somewhere_unseen import reduce_kwargs

            class Net(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.proj = nn.Linear(dim, dim)

                def forward(self, x):
                    kw = reduce_kwargs()
                    return self.proj({call})
            """
        ),
    )
    t = static(path, "Net", "--init", "dim=8", "--input", "x=2,4,8")
    assert not t["complete"]


def test_zip_over_a_tensor_whose_first_dim_is_not_known(tmp_path):
    """zip(x, ys) with x's dim 0 not known walks nothing it cannot name (an
    internal error on six corpus files once)."""
    from click.testing import CliRunner

    from shapelint.cli import main

    code = (
        "import torch\n\n\ndef f(x: torch.Tensor, ys):\n"
        "    t = torch.zeros(x.shape[0] * 2, 3)\n"
        "    return [a + b for a, b in zip(t, ys)]\n\n\n"
        "def g(n: int):\n    return f(torch.zeros(n, 3), [1, 2])\n"
    )
    p = tmp_path / "z.py"
    p.write_text(code)
    r = CliRunner().invoke(main, ["check", "--no-cache", str(p)])
    assert "SHP002" not in r.output, r.output


_TWICE = {
    "second_loop": "g = {it}\nfor l in g:\n    x = l(x)\nfor l in g:\n    x = l(x)",
    "after_next": "g = {it}\nnext(g)\nfor l in g:\n    x = l(x)",
    "after_list": "g = {it}\nn = len(list(g))\nfor l in g:\n    x = l(x) * n",
    "in_a_loop": "g = {it}\nfor _ in range(2):\n    for l in g:\n        x = l(x)",
    "on_self": "self.g = {it}\nfor l in self.g:\n    x = l(x)\nfor l in self.g:\n    x = l(x)",
    "handed_on": "g = {it}\nx = run(g, x)\nx = run(g, x)",
    "handed_on_to_a_method": "g = {it}\nx = self.run(g, x)\nx = self.run(g, x)",
    # rebound from itself at once: the list is walked twice, the iterator once
    "rebound_from_itself": "g = {it}\ng = list(g)\nfor l in g:\n    x = l(x)\nfor l in g:\n    x = l(x)",
    # ... inside a `try` whose handler lets the half-walked iterator on
    "rebound_inside_try": (
        "try:\n    g = {it}\n    g = list(g)\nexcept Exception:\n    pass\n"
        "for l in g:\n    x = l(x)\nfor l in g:\n    x = l(x)"
    ),
}
_ITERATORS = ["(l for l in self.ls)", "map(lambda l: l, self.ls)", "reversed(self.ls)",
              "enumerate(self.ls)", "filter(None, self.ls)",
              # returned by a method, a function, and through both (a OneShotV)
              "self.layers()", "layers_of(self.ls)", "self.again()",
              # a generator function's call
              "self.blocks()"]  # fmt: skip


@pytest.mark.parametrize("it", _ITERATORS)
@pytest.mark.parametrize("use", sorted(_TWICE))
def test_a_one_shot_iterator_walked_again_is_not_walked_again(tmp_path, use, it):
    """A generator expression, map, filter, enumerate or reversed is used up by its
    first walk: a second one yields what is left (main: every walk ran the three
    layers, 1536 FLOPs complete where torch ran 768, or 0 after `list(g)`); so is
    one a function returns, decided where its caller puts it."""
    body = _TWICE[use].format(it=it)
    if it.startswith("enumerate"):
        body = body.replace("for l in", "for _, l in")
    code = (
        textwrap.dedent(
            """
        def run(g, x):
            for l in g:
                x = (l[1] if isinstance(l, tuple) else l)(x)
            return x


        def layers_of(ls):
            return (l for l in ls)


        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.ls = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])

            def layers(self):
                return (l for l in self.ls)

            def again(self):
                return layers_of(self.ls)

            def blocks(self):
                for l in self.ls:
                    yield l

            def run(self, g, x):
                return run(g, x)

            def forward(self, x):
        """
        )
        + textwrap.indent(body, " " * 8)
        + "\n        return x\n"
    )
    path = write(tmp_path, "twice.py", HEADER + code)
    t = static(path, "Net", "--init", "dim=8", "--input", "x=2,8")
    ns: dict = {}
    exec(compile(HEADER + code, str(path), "exec"), ns)
    with FlopCounterMode(display=False) as fc:
        ns["Net"](dim=8)(torch.randn(2, 8))
    assert not t["complete"] or t["flops_value"] == fc.get_total_flops()


_PART_WAY = {
    "next": "y = next(l(x) for l in self.ls)",
    "next_named": "g = (l(x) for l in self.ls)\ny = next(g)",
    "break": "for y in (l(x) for l in self.ls):\n    break",
    "zip_shorter": "y = sum(a * b for a, b in zip((l(x) for l in self.ls), [1.0]))",
    "returned_next": "y = next(self.outs(x))",
    "generator_in_generator": "y = next(l for l in (l(x) for l in self.ls))",
    "whole": "y = sum(l(x) for l in self.ls)",
}


@pytest.mark.parametrize("use", sorted(_PART_WAY))
def test_an_iterator_whose_items_cost_counts_only_the_items_asked_for(tmp_path, use):
    """Python makes a generator's items as they are asked for: `next` makes one,
    a `for` that breaks at once one, zip with a shorter list two (main: all three
    counted, 768 FLOPs complete where torch ran 256). Walked to its end, exact."""
    code = (
        textwrap.dedent(
            """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.ls = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])

            def outs(self, x):
                return (l(x) for l in self.ls)

            def forward(self, x):
        """
        )
        + textwrap.indent(_PART_WAY[use], " " * 8)
        + "\n        return y\n"
    )
    path = write(tmp_path, "part_way.py", HEADER + code)
    t = static(path, "Net", "--init", "dim=8", "--input", "x=2,8")
    ns: dict = {}
    exec(compile(HEADER + code, str(path), "exec"), ns)
    with FlopCounterMode(display=False) as fc:
        ns["Net"](dim=8)(torch.randn(2, 8))
    assert not t["complete"] or t["flops_value"] == fc.get_total_flops()
    if use == "whole":
        assert t["complete"] and t["flops_value"] == fc.get_total_flops()
