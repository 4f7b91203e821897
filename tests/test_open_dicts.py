"""A module-level dict a function of its module stores into is a registry other
modules fill (analysis/open_dicts.py): a read by key that misses is not known,
never the default. torch judges: the registering module, imported by the model's
file, fills the registry as Python imports it, which the analysis does not run."""

from __future__ import annotations

import ast
import importlib
import json
import sys
import textwrap

import pytest
from click.testing import CliRunner

from shapelint.analysis.open_dicts import open_read
from shapelint.cli import main

REGISTRY = textwrap.dedent(
    """\
    _entries = {}
    _fixed = {"wide": 3}
    _fixed["wider"] = 4


    def register(name):
        def deco(fn):
            _entries[name] = fn
            return fn

        return deco


    def lookup(name):
        return _entries.get(name, None)


    def known(name):
        return name in _entries


    def factor(name):
        return _fixed.get(name, 2)


    @register("own")
    def own(d):
        from torch import nn

        return nn.Linear(d, 5 * d)
    """
)

SMALL = textwrap.dedent(
    """\
    from torch import nn

    from registry import register


    @register("tiny")
    def tiny(d):
        return nn.Linear(d, d)
    """
)

MODEL = textwrap.dedent(
    """\
    from torch import nn

    import small
    from registry import factor, known, lookup


    class Looked(nn.Module):
        def __init__(self, name="tiny", d=8):
            super().__init__()
            fn = lookup(name)
            self.body = nn.Linear(d, 2 * d) if fn is None else fn(d)

        def forward(self, x):
            return self.body(x)


    class Member(nn.Module):
        def __init__(self, name="tiny", d=8):
            super().__init__()
            self.body = nn.Linear(d, d) if known(name) else nn.Linear(d, 3 * d)

        def forward(self, x):
            return self.body(x)


    class Closed(nn.Module):
        def __init__(self, name="narrow", d=8):
            super().__init__()
            self.body = nn.Linear(d, factor(name) * d)

        def forward(self, x):
            return self.body(x)
    """
)


# A registry and the store into it in one file: the constructor's call of `add` is
# a store the run makes, which the lookup after it finds.
LOCAL = textwrap.dedent(
    """\
    from torch import nn

    _made = {}


    def add(name, fn):
        _made[name] = fn


    def wide(d):
        return nn.Linear(d, 4 * d)


    class Registers(nn.Module):
        def __init__(self, d=8):
            super().__init__()
            add("mine", wide)
            self.body = _made.get("mine", nn.Identity)(d)

        def forward(self, x):
            return self.body(x)
    """
)


def _write(tmp_path):
    files = (("registry.py", REGISTRY), ("small.py", SMALL), ("model.py", MODEL))
    for name, text in (*files, ("local.py", LOCAL)):
        (tmp_path / name).write_text(text)


def _target(tmp_path, cls: str, *init: str, module: str = "model") -> dict:
    _write(tmp_path)
    inits = [a for i in init for a in ("--init", i)]
    args = ["cost", f"{tmp_path / module}.py::{cls}", *inits, "--input", "x=4,8"]
    r = CliRunner().invoke(main, [*args, "--no-cache", "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)["target"]


def _torch_flops(tmp_path, cls: str, module: str = "model", **kw) -> int:
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    _write(tmp_path)
    sys.path.insert(0, str(tmp_path))
    try:
        for name in ("model", "small", "registry", "local"):
            sys.modules.pop(name, None)
        m = getattr(importlib.import_module(module), cls)(**kw)
        with FlopCounterMode(display=False) as counter:
            m(torch.randn(4, 8))
        return counter.get_total_flops()
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("model", "small", "registry", "local"):
            sys.modules.pop(name, None)


@pytest.mark.parametrize("cls", ["Looked", "Member"])
def test_a_miss_in_a_registry_another_module_fills_is_not_known(tmp_path, cls):
    # Python registers `tiny` as model.py imports small.py: the default is not taken
    t = _target(tmp_path, cls)
    assert _torch_flops(tmp_path, cls) == 512
    assert not t["complete"] and t["flops_value"] is None
    assert t["unknown"]


def test_a_key_the_run_registered_is_its_entry(tmp_path):
    # the constructor registers `mine`, a store the run makes: the lookup finds it
    t = _target(tmp_path, "Registers", module="local")
    assert t["complete"]
    assert t["flops_value"] == _torch_flops(tmp_path, "Registers", module="local") == 2048


def test_a_registration_at_import_time_is_not_taken_for_a_miss(tmp_path):
    # `own` is registered by the registry's own top level, whose stores through a
    # function the analysis does not bind (module_state): not known, never the default
    t = _target(tmp_path, "Looked", "name='own'")
    assert _torch_flops(tmp_path, "Looked", name="own") == 2560
    assert not t["complete"] and t["flops_value"] is None


@pytest.mark.parametrize(("name", "flops"), [("narrow", 1024), ("wider", 2048)])
def test_a_dict_only_its_top_level_fills_is_closed(tmp_path, name, flops):
    t = _target(tmp_path, "Closed", f"name={name!r}")
    assert t["complete"]
    assert t["flops_value"] == _torch_flops(tmp_path, "Closed", name=name) == flops


def _reads(source: str, key: object = "x") -> list[bool]:
    """open_read of each read of the name R, in order, for a missing key."""
    tree = ast.parse(textwrap.dedent(source))
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "R"]
    loads = [n for n in names if isinstance(n.ctx, ast.Load)]
    ordered = sorted(loads, key=lambda n: (n.lineno, n.col_offset))
    return [open_read(tree, n, key) for n in ordered]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # stored only by the top level: closed
        ("R = {}\nR['a'] = 1\ndef f(k):\n    return R.get(k)\n", [False, False]),
        # an item stored from a function: open, every read of the global
        ("R = {}\ndef add(k, v):\n    R[k] = v\ndef f(k):\n    return R.get(k)\n", [False, True]),
        ("R = {}\ndef add(d):\n    R.update(d)\ndef f(k):\n    return k in R\n", [False, True]),
        (
            "R = {}\nclass C:\n    def add(self, k):\n        R.setdefault(k, 1)\nx = R.get('a')\n",
            [False, True],
        ),
        # a memo: the function that stores reads its own misses as a first call's;
        # a read elsewhere is open
        (
            "R = {}\ndef make(k):\n    if k not in R:\n        R[k] = k * 2\n    return R[k]\n"
            "def peek(k):\n    return R.get(k)\n",
            [False, False, False, True],
        ),
        # rebound under `global`
        (
            "R = {}\ndef reset():\n    global R\n    R = {'a': 1}\ndef f(k):\n    return R.get(k)\n",
            [True],
        ),
        # a local or a parameter of the same name is another dict
        (
            "R = {}\ndef f(k):\n    R = {}\n    R[k] = 1\n    return R.get(k)\n"
            "def g(k):\n    return R.get(k)\n",
            [False, False, False],
        ),
        ("R = {}\ndef f(R, k):\n    R[k] = 1\n    return R.get(k)\n", [False, False]),
        # a del adds no key
        (
            "R = {'a': 1}\ndef drop(k):\n    del R[k]\ndef f(k):\n    return R.get(k)\n",
            [False, False],
        ),
    ],
)
def test_which_module_level_dicts_are_open(source, expected):
    assert _reads(source) == expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [("a", [False, False, True]), ("b", [False, False, False]), (1, [False, False, False])],
)
def test_a_store_of_a_constant_key_opens_that_key_alone(key, expected):
    source = "R = {}\ndef f():\n    R['a'] = 1\n    R.update({'c': 2}, d=3)\ndef g(k):\n    return R.get(k)\n"
    assert _reads(source, key) == expected
    assert _reads(source, "d")[-1] and _reads(source, "c")[-1]
