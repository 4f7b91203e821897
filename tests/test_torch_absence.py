"""Absent, not unknown, on torch's objects (analysis/torch_absence.py): `hasattr` of
a tensor a target run made or was given, and `getattr(module, name, default)` /
`hasattr` of a project module, and `getattr(torch, name, default)` of a name the stubs
describe, decided as Python decides them (transformers'
`is_jax_jitting`, `getattr(module, "all_tied_weights_keys", None)` over a model's
children). Judged by FlopCounterMode on the same modules; the guards hold the
analysis to an honest bound where the attribute may exist."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest

from shapelint.analysis import torch_attributes
from tests.test_modules import counted, static_target, write

torch = pytest.importorskip("torch")

HEADER = textwrap.dedent(
    """
    import torch
    import torch.nn as nn


    def probe(x):
        if not hasattr(x, "jax"):
            return False
        return x.jax() is not None


    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)

        def forward(self, x):
            return self.lin(x)
    """
)

NET = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = INNER()
        self.out = nn.Linear(8, 8)
        self.keys = INIT

    def forward(self, x):
        y = self.inner(x)
        FORWARD
        return y
"""

# (code before Net, the inner module's class, a value Net's constructor keeps, the
# forward's step between the inner module and the return)
EXACT = {
    # a tensor an op made and the target's input have torch.Tensor's attributes
    # only; a project module lacks a name no class of it binds and it does not hold
    "absent": (
        "",
        "Inner",
        'getattr(self.inner, "tied_keys", None)',
        """if probe(y) or probe(x):
            y = self.out(y)
        if self.keys is None and not hasattr(self.inner, "extra"):
            y = self.out(y)""",
    ),
    # a name no attribute syntax spells (mambular's `getattr(self, f"q_{0.25}_transform",
    # "none")`): only setattr or __dict__ could store it, and nothing did
    "not_an_identifier": (
        "",
        "Inner",
        'getattr(self.inner, f"q_{0.25}_transform", None)',
        """if self.keys is None and not hasattr(self.inner, "q.x"):
            y = self.out(y)""",
    ),
    # getattr with a default off an imported module (deel-torchlip's reduction): a
    # function the stubs describe exists there, so the default is not taken
    "off_an_imported_module": (
        """
        def reduce(v, reduction):
            red = getattr(torch, reduction, None)
            if red is None:
                return v
            return red(v)
        """,
        "Inner",
        "None",
        """y = self.out(reduce(self.out(y), "sum") * y)""",
    ),
}

# Where the attribute may exist: never a complete figure that leaves out its branch.
MAYBE = {
    # a name no attribute syntax spells, stored by setattr or through __dict__
    "not_an_identifier_by_setattr": (
        """
        class Marked(Inner):
            def __init__(self):
                super().__init__()
                setattr(self, f"q_{0.25}_transform", True)
        """,
        "Marked",
        'getattr(self.inner, f"q_{0.25}_transform", None)',
        """if self.keys is not None:
            y = self.out(y)""",
    ),
    "not_an_identifier_by_dict": (
        """
        class Marked(Inner):
            def __init__(self, q=0.25):
                super().__init__()
                self.__dict__["q_" + str(q) + "_transform"] = True
        """,
        "Marked",
        'getattr(self.inner, f"q_{0.25}_transform", None)',
        """if self.keys is not None:
            y = self.out(y)""",
    ),
    "not_an_identifier_by_a_computed_setattr": (
        """
        import os

        class Marked(Inner):
            def __init__(self):
                super().__init__()
                setattr(self, os.environ.get("SHAPELINT_NEVER", "q_0.25_transform"), 1)
        """,
        "Marked",
        'getattr(self.inner, f"q_{0.25}_transform", None)',
        """if self.keys is not None:
            y = self.out(y)""",
    ),
    # a program may store an attribute on a tensor (tensors have a __dict__)
    "stored_on_a_tensor": (
        "",
        "Inner",
        "None",
        """y.jax = lambda: 1
        if probe(y):
            y = self.out(y)""",
    ),
    # a store into a submodule the module's value does not keep
    "stored_on_a_module": (
        """
        def mark(m):
            m.tied_keys = {"a": "b"}
        """,
        "Inner",
        "None",
        """mark(self.inner)
        if getattr(self.inner, "tied_keys", None) is not None:
            y = self.out(y)""",
    ),
    # a name no stub describes may be absent from torch: the default or the call
    "off_an_imported_module_unknown_name": (
        "",
        "Inner",
        "None",
        """f = getattr(torch, "no_such_op_anywhere", None)
        y = self.out(y) if f is None else f(y)""",
    ),
    # a class's own __getattr__ answers any name
    "module_getattr": (
        """
        class Answering(Inner):
            def __getattr__(self, name):
                if name == "extra":
                    return True
                return super().__getattr__(name)
        """,
        "Answering",
        "None",
        """if getattr(self.inner, "extra", False):
            y = self.out(y)""",
    ),
    # a name the class's source binds (a class attribute of a value not known)
    "class_attribute": (
        """
        import os

        class Tied(Inner):
            tied_keys = sorted(os.environ)
        """,
        "Tied",
        "None",
        """if getattr(self.inner, "tied_keys", None) is not None:
            y = self.out(y)""",
    ),
}


def _run(tmp_path, key: str, case: tuple):
    prelude, inner, init, forward = case
    net = NET.replace("INNER", inner).replace("INIT", init).replace("FORWARD", forward)
    path = write(tmp_path, f"{key}.py", HEADER + textwrap.dedent(prelude) + net)
    t = static_target(path, "Net", {}, {"x": "2,8"})
    truth = counted(path, "Net()", {"x": torch.randn(2, 8)})
    return t, truth


@pytest.mark.parametrize("key", sorted(EXACT))
def test_exact_against_flop_counter(tmp_path, key):
    t, truth = _run(tmp_path, key, EXACT[key])
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth


@pytest.mark.parametrize("key", sorted(MAYBE))
def test_where_the_attribute_may_exist_never_a_wrong_figure(tmp_path, key):
    t, truth = _run(tmp_path, key, MAYBE[key])
    if t["complete"]:
        assert t["flops_value"] == truth
    else:
        assert t["flops_value"] is None or t["flops_value"] <= truth


def test_the_attribute_lists_are_the_installed_torch_s():
    """Data kept in sync with torch: `dir()` of an nn.Module and of a tensor, in a
    fresh interpreter (torch.compile, run by other tests in this process, adds
    attributes of its own to nn.Module)."""
    script = (
        "import torch; print(repr((sorted(dir(torch.nn.Module())), sorted(dir(torch.empty(0))))))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True)
    module, tensor = ast.literal_eval(out.stdout)
    assert torch_attributes.MODULE == frozenset(module)
    assert torch_attributes.TENSOR == frozenset(tensor)


def test_the_layer_attribute_list_is_the_installed_torch_s():
    """torch_attributes.LAYERS: what `dir()` of the stub-described torch layers (their
    classes, and an instance of each) adds to nn.Module's, in a fresh interpreter."""
    from tests.helpers import LAYER_ARGS, stub_layer_names

    script = f"""
import torch.nn as nn
names = set()
for n in {stub_layer_names()!r}:
    c = getattr(nn, n, None)
    if not isinstance(c, type):
        continue
    names |= set(dir(c))
    for args in {LAYER_ARGS!r}:
        try:
            m = c(*args)
        except Exception:
            continue
        names |= set(dir(m))
        break
print(repr(sorted(names - set(dir(nn.Module())))))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True)  # fmt: skip
    assert torch_attributes.LAYERS == frozenset(ast.literal_eval(out.stdout))


LISTS = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Inner(), Inner()])
        self.seq = nn.Sequential(Inner())
        self.out = nn.Linear(8, 8)

    def forward(self, x):
        BEFORE
        if getattr(self.blocks, "tied_keys", None) is None:
            x = self.out(x)
        if not hasattr(self.seq, "extra"):
            x = self.out(x)
        return x
"""


@pytest.mark.parametrize(
    ("key", "before", "exact"),
    [
        # torch's own lists lack what nn.Module, their classes and items do not bind
        ("absent", "", True),
        # a store the run does not keep on the list (a helper's): never a wrong figure
        ("stored", "mark(self.blocks)", False),
    ],
)
def test_a_torch_list_lacks_what_its_class_and_items_do_not_bind(tmp_path, key, before, exact):
    """transformers' post_init asks `getattr(module, "all_tied_weights_keys", None)` of
    each child, GPT2Model's `h` (an nn.ModuleList) among them."""
    helper = 'def mark(m):\n    m.tied_keys = {"a": "b"}\n'
    path = write(tmp_path, f"{key}.py", HEADER + helper + LISTS.replace("BEFORE", before or "pass"))
    t = static_target(path, "Net", {}, {"x": "2,8"})
    truth = counted(path, "Net()", {"x": torch.randn(2, 8)})
    if exact:
        assert t["complete"], t["unknown"]
    if t["complete"]:
        assert t["flops_value"] == truth
    else:
        assert t["flops_value"] is None or t["flops_value"] <= truth


SHORTCUT = """
import os
from collections import OrderedDict

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.extra = nn.Identity()
        if cin != cout:
            self.proj = nn.Conv2d(cin, cout, 1)
        if os.environ.get("SHORTCUT_GATE"):
            self.gate = nn.Conv2d(cout, cout, 1)

    def forward(self, x):
        s = self.proj(x) if hasattr(self, "proj") else x
        y = self.conv(x) + s
        return self.gate(y) if hasattr(self, "gate") else y


class Net(nn.Module):
    def __init__(self, structure, drop=False):
        super().__init__()
        cin, chans = 4, [8, 16]
        for i, num in enumerate(structure):
            blocks = []
            for b in range(num):
                blocks.append(("block%d" % (b + 1), Block(cin, chans[i])))
                cin = chans[i]
            self.add_module("mod%d" % i, nn.Sequential(OrderedDict(blocks)))
        self.head = nn.Conv2d(cin, cin, 1)
        if drop:
            del self.mod1.block1.extra

    def forward(self, x):
        x = self.mod1(self.mod0(x))
        return self.head(x) if hasattr(self.mod1.block1, "extra") else x
"""


def test_hasattr_of_a_module_the_run_built(tmp_path):
    """`hasattr(self, "proj")` where the constructor stored `proj` on one branch of a
    test it decided (pytorch-toolbelt's IdentityResidualBlock): True where it ran,
    False where it did not, as Python answers; before, neither was known and the
    projection's FLOPs were left out (a lower bound)."""
    path = write(tmp_path, "shortcut.py", SHORTCUT.replace('os.environ.get("SHORTCUT_GATE")', "0"))
    for structure in ("[1, 1]", "[1, 3]"):
        t = static_target(path, "Net", {"structure": structure}, {"x": "2,4,8,8"})
        truth = counted(path, f"Net({structure})", {"x": torch.randn(2, 4, 8, 8)})
        assert t["complete"], t["unknown"]
        assert t["flops_value"] == truth


@pytest.mark.parametrize("case", ["undecided_store", "deleted", "deleted_by_delattr"])
def test_hasattr_where_the_attribute_may_or_may_not_be_held(tmp_path, case):
    """Stored on one path of a test the analysis cannot decide, or deleted through
    an object whose value still holds it: never a complete figure that differs."""
    drop = case != "undecided_store"
    code = SHORTCUT.replace('os.environ.get("SHORTCUT_GATE")', "0") if drop else SHORTCUT
    if case == "deleted_by_delattr":
        code = code.replace("del self.mod1.block1.extra", 'delattr(self.mod1.block1, "extra")')
    path = write(tmp_path, f"{case}.py", code)
    t = static_target(path, "Net", {"structure": "[1, 1]", "drop": str(drop)}, {"x": "2,4,8,8"})
    truth = counted(path, f"Net([1, 1], drop={drop})", {"x": torch.randn(2, 4, 8, 8)})
    if t["complete"]:
        assert t["flops_value"] == truth
    else:
        assert t["flops_value"] is None or t["flops_value"] <= truth
    assert not t["complete"]


def test_the_list_attribute_list_is_the_installed_torch_s():
    """torch_attributes.CONTAINERS: what `dir()` of an empty nn.ModuleList, nn.Sequential
    and nn.ParameterList adds to nn.Module's, in a fresh interpreter."""
    script = (
        "import torch.nn as nn; base = set(dir(nn.Module())); print(repr(sorted(set().union("
        "*(set(dir(c())) - base for c in (nn.ModuleList, nn.Sequential, nn.ParameterList))))))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True)  # fmt: skip
    assert torch_attributes.CONTAINERS == frozenset(ast.literal_eval(out.stdout))
