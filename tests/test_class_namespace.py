"""A config class built as a dict subclass that walks its own namespace
(`for k in self.__class__.__dict__`), stores through its own `__setattr__` into
both its attributes and its entries (`super().__setattr__`, `super().__setitem__`)
and never calls dict's `__init__`: class_namespace.py (the keys of `C.__dict__`
in CPython's order), dict_entries.py (dict.__new__'s empty entries, walked by a
loop), loops.py (a loop naming attributes by its item, followed turn by turn),
builtins.STR_METHODS (`str.isidentifier`).

Each case is a module judged by FlopCounterMode (benchmarks.gen_modules' judge):
a Linear whose width is what the case computes is exact where the analysis
follows Python, and never wrong where it does not."""

from __future__ import annotations

import textwrap

import pytest

from benchmarks.gen_modules import Generated, judge

pytest.importorskip("torch")

HEAD = """\
from typing import Any

import torch
from torch import nn


class Cfg(dict):
    \"\"\"Entries mirrored as attributes.\"\"\"

    kind = "cfg"

    def __init__(self, **kwargs) -> None:
        for k, v in kwargs.items():
            if isinstance(k, str) and k.isidentifier():
                setattr(self, k, v)
        skip = ["update", "pop"]
        for k in self.__class__.__dict__:
            if not (k.startswith("__") and k.endswith("__")) and k not in skip:
                setattr(self, k, getattr(self, k))

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(name, str) and name.isidentifier():
            super().__setattr__(name, value)
        super().__setitem__(name, value)

    __setitem__ = __setattr__

    def update(self, other=None):
        pass

    def pop(self, key):
        pass

    def a(self):
        return 1

    def b(self):
        return 2

    def c(self):
        return 3


class Mirror(dict):
    def __init__(self):
        super().__init__()

    def __setattr__(self, k, v):
        self[k] = v


class ByInit(dict):
    def __init__(self, **kw):
        dict.__init__(self, **kw)


class ByStore(dict):
    def __init__(self, k, v):
        dict.__setitem__(self, k, v)


class ByUpdate(dict):
    def __init__(self, other):
        self.update(other)


def put(m):
    m.z = 1
    return m


def fill(c, names):
    for k in names:
        setattr(c, k, {k: 1})
    return c


class Sub(Cfg):
    def d(self):
        return 4


class WithIf:
    if True:
        x = 1
"""

MODULE = """
class M(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, %s)

    def forward(self, x):
        return self.lin(x)
"""

# Each width is what Python computes; the analysis must know it.
EXACT = {
    # the namespace's keys, CPython's dunders included: a dict subclass gets
    # __dict__ and __weakref__, a docstring's __doc__ comes right after __module__
    "namespace_keys": "len(Cfg.__dict__) + 3 * list(Cfg.__dict__).index('__weakref__')",
    "namespace_of_a_subclass": "len(Sub.__dict__) + list(Sub.__dict__).index('__doc__')",
    "namespace_through_the_instance": "len(type(Cfg(w=2)).__dict__)",
    # the entries the setattr loop filled (no dict.__init__ ran), read as dict reads them
    "entries": 'Cfg(w=3, h=4)["w"] + len(Cfg(w=3, h=4))',
    "attribute": "Cfg(w=3).w + len(Cfg().kind)",
    # the constructor's namespace walk stored the class's methods on the instance
    "namespace_walk": "len(Cfg(w=3)) + 2 * len(Sub(w=1))",
    "iterated": "len([k for k in Cfg(w=3, h=4)]) + sum(1 for k in Cfg(w=1) if k.isidentifier())",
    # `obj.k = v` and `setattr(obj, k, v)` on a built instance run its class's own
    # `__setattr__`, which here stores an entry (a figure of 1 before: wrong)
    "own_setattr": "len(fill(Mirror(), []))  + 1 + (lambda m: (setattr(m, 'x', 5), len(m))[1])(Mirror())",
    "own_setattr_statement": "len(put(Mirror())) + 1",
    # a method whose loop ran no turn changed nothing; one that ran stored entries,
    # each dict value made a Cfg by `__setattr__`
    "no_turn": "len(fill(Cfg(w=1), [])) + len(fill(Cfg(), ['p', 'q']))",
    "converted": "3 if isinstance(Cfg(v={'a': 1}).v, Cfg) and isinstance(Cfg(), dict) else 5",
    "plain_dict": "3 if not isinstance({'a': 1}, (list, tuple, Cfg)) else 5",
}

# The namespace of a body with an `if` is not modelled: a bound, never wrong.
HONEST = {"a_body_with_if": "len(WithIf.__dict__)"}

# dict's own methods called on an instance (by name through dict, or inherited):
# the entries they change are followed or forgotten, never left empty
NEVER_WRONG = {
    "dict_init": "len(ByInit(a=1, b=2)) + 1",
    "dict_setitem": 'len(ByStore("a", 1)) + 1',
    "inherited_update": 'len(ByUpdate({"a": 1})) + 1',
    "update_outside": '(lambda c: (c.update({"x": 1}), c.setdefault("y", 2), len(c) + 1)[2])(ByInit())',
    "setitem_outside": '(lambda c: (dict.__setitem__(c, "q", 1), len(c) + 1)[1])(ByInit())',
}


def _judge(tmp_path, name, width):
    src = HEAD + textwrap.dedent(MODULE % width)
    gen = Generated(0, name, [name], src, {"d": "4"}, {"x": "2,4"}, "M")
    return judge(gen, tmp_path)


@pytest.mark.parametrize("name", list(EXACT))
def test_a_config_dict_subclass_is_followed(tmp_path, name):
    v = _judge(tmp_path, name, EXACT[name])
    assert v.outcome == "exact", (v.outcome, v.truth, v.figure, v.detail)


@pytest.mark.parametrize("name", list(HONEST))
def test_a_namespace_not_modelled_stays_honest(tmp_path, name):
    v = _judge(tmp_path, name, HONEST[name])
    assert v.outcome in ("exact", "lower", "unknown"), (v.outcome, v.truth, v.figure, v.detail)
    assert v.outcome != "exact", "a namespace the module does not model was figured"


@pytest.mark.parametrize("name", list(NEVER_WRONG))
def test_entries_changed_by_dict_methods_are_never_stale(tmp_path, name):
    v = _judge(tmp_path, name, NEVER_WRONG[name])
    assert v.outcome in ("exact", "lower", "unknown"), (v.outcome, v.truth, v.figure, v.detail)
