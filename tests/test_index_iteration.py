"""Iterating an instance by its `__getitem__` (index_iteration.py): the old sequence
protocol and collections.abc.Sequence's mixin `__iter__` ask `obj[0]`, `obj[1]`, ...
until IndexError, in a `for`, a comprehension, `list()`, `tuple()`, `zip` and
`enumerate`; `len(obj)` is what its `__len__` returns. Each module is judged by
FlopCounterMode on the same module and inputs; where a step is not known the figure
is no complete one."""

from __future__ import annotations

import textwrap

import pytest

from tests.test_modules import write
from tests.test_object_model import assert_exact
from tests.test_parameters import static

torch = pytest.importorskip("torch")

HEADER = textwrap.dedent(
    """
    from collections.abc import Sequence
    import typing

    import torch
    import torch.nn as nn
    """
)

# A per-layer view as transformers writes one: a Sequence over its config, its
# items one config each, IndexError past the end (its `__len__` read through len()).
VIEW = """
class Config:
    def __init__(self, layers, width):
        self.num_hidden_layers = layers
        self.width = width

    @property
    def per_layer(self):
        return View(self)


class View(Sequence):
    def __init__(self, config):
        self._config = config

    def __len__(self):
        return self._config.num_hidden_layers

    def __getitem__(self, i):
        if isinstance(i, str):
            raise KeyError(i)
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if i < 0 or i >= len(self):
            raise IndexError("list index out of range")
        return self._config
"""

CASES = {
    # a for over the view: one turn per layer, each building one Linear
    "for_over_a_sequence": (
        VIEW
        + """
class Net(nn.Module):
    def __init__(self, layers=3, width=4):
        super().__init__()
        self.config = Config(layers, width)
        self.lin = nn.Linear(width, width)

    def forward(self, x):
        widths = []
        for cfg in self.config.per_layer:
            widths.append(cfg.width)
        for w in widths:
            x = self.lin(x) * w
        return x
""",
        "Net",
        dict(layers=3, width=4),
        dict(x=(2, 4)),
    ),
    # more layers than a loop is unrolled over, through list() and a comprehension
    "list_and_comprehension_over_many": (
        VIEW
        + """
class Net(nn.Module):
    def __init__(self, layers=12, width=4):
        super().__init__()
        self.config = Config(layers, width)
        self.lin = nn.Linear(width, width)

    def forward(self, x):
        view = self.config.per_layer
        cfgs = list(view)
        kinds = ["full" if c.width > 0 else "none" for c in view]
        for c, kind in zip(cfgs, kinds):
            x = self.lin(x)
        return x.repeat(len(view), len(cfgs) - len(kinds) + 1)
""",
        "Net",
        dict(layers=12, width=4),
        dict(x=(2, 4)),
    ),
    # the old protocol: no Sequence base, no __iter__, a __getitem__ ending in IndexError;
    # enumerate and tuple() over it, and a slice through its own __getitem__
    "old_protocol_enumerate_and_tuple": (
        """
class Sizes:
    def __init__(self, sizes):
        self.sizes = sizes

    def __getitem__(self, i):
        if i >= len(self.sizes):
            raise IndexError(i)
        return self.sizes[i]


class Net(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.sizes = Sizes((1, 2, 3))
        self.lin = nn.Linear(width, width)

    def forward(self, x):
        for i, s in enumerate(self.sizes):
            x = self.lin(x) * (s + i)
        return x.repeat(len(tuple(self.sizes)), 1)
""",
        "Net",
        dict(width=4),
        dict(x=(2, 4)),
    ),
    # a module whose class gives __getitem__ alone: nn.Module defines no __iter__
    "module_walked_by_its_getitem": (
        """
class Stack(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.depth = depth
        self.lin = nn.Linear(width, width)

    def __getitem__(self, i):
        if i >= self.depth:
            raise IndexError(i)
        return self.lin

    def forward(self, x):
        for layer in self:
            x = layer(x)
        return x
""",
        "Stack",
        dict(width=4, depth=3),
        dict(x=(2, 4)),
    ),
}


def _target(tmp_path, name: str, code: str, *args: str) -> dict:
    path = write(tmp_path, f"{name}.py", HEADER + textwrap.dedent(code))
    return static(path, "Net", *args, "--input", "x=2,4")


UNDECIDED = """
class Lazy:
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return i


class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.items = Lazy(n)
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        for _ in self.items:
            x = self.lin(x)
        return x
"""


def test_an_end_not_known_is_no_count(tmp_path):
    # n not known: whether obj[i] raises is undecided at every i, and a count taken
    # past one of them would be a wrong figure
    t = _target(tmp_path, "undecided", UNDECIDED)
    assert not t["complete"]
    # known, the same class gives the count torch runs
    t = _target(tmp_path, "decided", UNDECIDED, "--init", "n=3")
    assert t["complete"] and t["flops_value"] == 3 * 2 * 2 * 4 * 4


def test_another_exception_ends_no_walk(tmp_path):
    # a KeyError is no end of the walk: Python raises it out of the loop
    code = UNDECIDED.replace("raise IndexError(i)", "raise KeyError(i)")
    t = _target(tmp_path, "key_error", code, "--init", "n=3")
    assert not t["complete"]


def test_a_sequence_without_len_is_not_built(tmp_path):
    # ABCMeta refuses a Sequence subclass that leaves __len__ abstract (TypeError)
    code = """
        class Half(Sequence):
            def __getitem__(self, i):
                if i >= 2:
                    raise IndexError(i)
                return i


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)

            def forward(self, x):
                for _ in Half():
                    x = self.lin(x)
                return x
        """
    t = _target(tmp_path, "half", code)
    assert not t["complete"]
    t = _target(
        tmp_path,
        "whole",
        code.replace(
            "    def __getitem__",
            "    def __len__(self):\n                return 2\n\n            def __getitem__",
        ),
    )
    assert t["complete"] and t["flops_value"] == 2 * 2 * 2 * 4 * 4


def test_a_class_with_its_own_iter_is_not_walked_by_index(tmp_path):
    # __iter__ decides, whatever __getitem__ says: here it yields one item, not three
    code = UNDECIDED.replace(
        "    def __getitem__(self, i):",
        "    def __iter__(self):\n        return iter([0])\n\n    def __getitem__(self, i):",
    )
    t = _target(tmp_path, "own_iter", code, "--init", "n=3")
    assert not (t["complete"] and t["flops_value"] == 3 * 2 * 2 * 4 * 4)


# unpacking and `in` walk the object too (Sequence's mixin `__contains__` stops at
# the first item equal to the one asked for)
CASES["unpacking_and_in"] = (
    VIEW
    + """
class Widths(Sequence):
    def __init__(self, widths):
        self.widths = widths

    def __len__(self):
        return len(self.widths)

    def __getitem__(self, i):
        if i >= len(self.widths):
            raise IndexError(i)
        return self.widths[i]


class Net(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.widths = Widths((width, 2 * width))
        self.lin = nn.Linear(width, width)

    def forward(self, x):
        a, b = self.widths
        if 8 in self.widths and 5 not in self.widths:
            x = self.lin(x)
        for _ in range(b // a):
            x = self.lin(x)
        return x
""",
    "Net",
    dict(width=4),
    dict(x=(2, 4)),
)


@pytest.mark.parametrize("key", sorted(CASES))
def test_exact_against_flop_counter(tmp_path, key):
    assert_exact(tmp_path, key, CASES[key], HEADER)
