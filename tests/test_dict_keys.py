"""Dict keys other than strings, with Python's equality of keys: a dict display, a
comprehension, dict() / OrderedDict(), `d[k]`, get, `in`, pop, setdefault, update,
iteration and items over int, bool, float, None, tuple and enum keys. Figures held
to FlopCounterMode on the module torch builds; a key Python refuses or lacks, and a
str never taken for an int, leave the figure not known."""

from __future__ import annotations

import math

import pytest

from shapelint.analysis import dict_keys
from shapelint.ops.values import ObjectV, TupleV, constant_value
from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

SOURCE = """
import enum
from collections import OrderedDict

import torch.nn as nn

NDS = {1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}
CONVS = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}


class Mode(enum.Enum):
    A = 1
    B = 2


class Size(enum.IntEnum):
    S = 1
    M = 2


class Name(str, enum.Enum):
    A = "a"
    B = "b"


def width(case, dim):
    if case in ("index", "get"):
        return 8
    if case == "equal_keys":
        d = {1: 3, 1.0: 5, True: 7}
        return len(d) * 4 + d[1]
    if case == "first_key_kept":
        d = {1.0: 3, 1: 5}
        return 9 if isinstance(list(d)[0], float) else 2
    if case == "tuple":
        return {(1, 2): 6, (2, 1): 9}[(2, 1)]
    if case == "none":
        return {None: 5, 0: 6}[None]
    if case == "enum":
        return {Mode.A: 6, Mode.B: 9}[Mode.B] + {Mode.A: 1}.get(1, 0)
    if case == "int_enum":
        return {1: 6, 2: 9}[Size.M] + {Size.S: 1}[1]
    if case == "str_enum":
        return {"a": 3, "b": 5}[Name.B] + {Name.A: 4}["a"]
    if case == "member_in":
        return 6 if Mode.A in {Mode.A: 1} and 1 not in {Mode.A: 1} else 2
    if case == "member_not_its_value":
        return {1: 3}[Mode.A]
    if case == "contains":
        return 8 if dim in NDS and str(dim) not in NDS and 5 not in NDS else 3
    if case == "iterate":
        return sum(list(NDS)) + len(NDS) + sum(k for k in CONVS.keys()) + len(list(NDS.values()))
    if case == "items":
        return sum(k * 2 for k, _ in NDS.items())
    if case == "setitem":
        d = {}
        d[3] = 7
        d[3.0] = 8
        return d[3] + len(d)
    if case == "update":
        d = {1: 2}
        d.update({2: 5, 1.0: 3})
        return d[1] + d[2] + len(d)
    if case == "pop":
        d = {1: 4, 2: 6}
        x = d.pop(1)
        return x + len(d) + d.pop(7, 3)
    if case == "setdefault":
        d = {1: 4}
        d.setdefault(2, 5)
        return d.setdefault(1, 9) + d[2]
    if case == "dict_call":
        d = dict([(1, 4), (2, 5)])
        e = dict({1: 3}, a=2)
        return d[1] + d[2] + e[1] + e["a"] - 6
    if case == "spread":
        e = {**{1: 2}, **{1.0: 6, "1": 3}}
        return e[1] + e["1"] + len(e)
    if case == "comprehension":
        return {k: k * 3 for k in range(1, 4)}[3]
    if case == "ordered":
        return OrderedDict([(2, 5), (1, 4)])[2] + 4
    if case == "str_not_int":
        return {"1": 5}[1]
    if case == "int_not_str":
        return {1: 5}["1"]
    if case == "list_key":
        return {(1,): 5}.get([1], 5)
    return 0


class Block(nn.Module):
    def __init__(self, case="index", dim=2):
        super().__init__()
        w = width(case, dim)
        self.conv = CONVS[dim](4, w, 3)
        self.norm = NDS[dim](w) if case != "get" else NDS.get(dim, nn.Identity)(w)

    def forward(self, x):
        return self.norm(self.conv(x))
"""

KNOWN = [
    "index",
    "get",
    "equal_keys",
    "first_key_kept",
    "tuple",
    "none",
    "enum",
    "int_enum",
    "str_enum",
    "member_in",
    "contains",
    "iterate",
    "items",
    "setitem",
    "update",
    "pop",
    "setdefault",
    "dict_call",
    "spread",
    "comprehension",
    "ordered",
]


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("dict_keys"), "dict_keys_build", SOURCE)


@pytest.mark.parametrize("case", KNOWN)
def test_a_dict_keyed_by_constants_gives_torchs_figures(source, case):
    path, mod = source
    kw = {"case": case}
    t = run_class(path, "Block", kw, {"x": (2, 4, 8, 8)}, True)
    fwd, bwd, params, shape = torch_figures(mod, "Block", kw, {"x": (2, 4, 8, 8)}, training=True)
    assert t["complete"], t["unknown"]
    assert (t["flops_value"], t["params_value"]) == (fwd, params)
    assert tuple(int(d) for d in t["output"]) == shape


@pytest.mark.parametrize("case", ["str_not_int", "int_not_str", "list_key", "member_not_its_value"])
def test_a_key_python_lacks_or_refuses_is_no_figure(source, case):
    path, mod = source
    with pytest.raises((KeyError, TypeError)):
        mod.Block(case)
    t = run_class(path, "Block", {"case": case}, {"x": (2, 4, 8, 8)}, True)
    assert not t["complete"]


CONSTANTS = [0, 1, 1.0, True, False, 0.0, -0.0, 2, 2.5, None, "1", "", (1, 2), (1.0, 2), ("a",)]


@pytest.mark.parametrize("a", CONSTANTS, ids=repr)
def test_keys_are_equal_and_hash_as_pythons(a):
    ka = dict_keys.key_of(constant_value(a) if not isinstance(a, tuple) else _tuple(a))
    assert dict_keys.known(ka)
    for b in CONSTANTS:
        kb = dict_keys.key_of(constant_value(b) if not isinstance(b, tuple) else _tuple(b))
        assert (ka == kb) == (a == b)
        if a == b:
            assert hash(ka) == hash(kb)


def _tuple(t: tuple) -> TupleV:
    return TupleV(tuple(constant_value(i) for i in t), "tuple")


def test_a_dict_keeps_the_first_key_and_the_last_value():
    entries = {}
    for k, v in [(1, "a"), (1.0, "b"), (True, "c"), ("1", "d")]:
        entries[dict_keys.key_of(constant_value(k))] = constant_value(v)
    d = ObjectV("<dict>", tuple(entries.items()))
    assert dict_keys.keys(d) == (constant_value(1), constant_value("1"))
    assert dict_keys.entry(d, dict_keys.key_of(constant_value(True))) == constant_value("c")
    assert dict_keys.entry(d, dict_keys.key_of(constant_value(2))) is None


@pytest.mark.parametrize(
    "v",
    [constant_value(math.nan), TupleV((constant_value(1),), "list"), TupleV((constant_value(1),))],
    ids=["nan", "list", "tuple-or-list"],
)
def test_no_key_is_known_for_a_nan_or_a_list(v):
    assert not dict_keys.known(dict_keys.key_of(v))


MODULE_DICT = """
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, case="set"):
        super().__init__()
        self.d = nn.ModuleDict()
        if case == "set":
            self.d[1] = nn.Conv2d(4, 8, 3)
        elif case == "update":
            self.d.update({1: nn.Conv2d(4, 8, 3)})
        elif case == "init":
            self.d = nn.ModuleDict({1: nn.Conv2d(4, 8, 3)})
        else:
            self.d["1"] = nn.Conv2d(4, 8, 3)

    def forward(self, x):
        return self.d["1"](x)
"""


@pytest.mark.parametrize("case", ["set", "update", "init"])
def test_a_module_dict_takes_no_name_but_a_str(tmp_path, case):
    path, mod = written_module(tmp_path, "module_dict_keys", MODULE_DICT)
    with pytest.raises(TypeError):  # add_module: "module name should be a string"
        mod.Block(case)
    t = run_class(path, "Block", {"case": case}, {"x": (2, 4, 8, 8)}, True)
    assert t["params_value"] is None
    fwd, _bwd, params, _shape = torch_figures(
        mod, "Block", {"case": "str"}, {"x": (2, 4, 8, 8)}, True
    )
    t = run_class(path, "Block", {"case": "str"}, {"x": (2, 4, 8, 8)}, True)
    assert (t["flops_value"], t["params_value"]) == (fwd, params)
