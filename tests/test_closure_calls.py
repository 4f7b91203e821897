"""closure_calls.only_called_in_place: a nested def whose every run is a direct call
the enclosing function's own code makes (Python's scoping, read from the source);
its answers keep no tree alive."""

from __future__ import annotations

import ast
import textwrap
import weakref

import pytest

from shapelint.analysis.closure_calls import only_called_in_place


def verdict(src: str) -> bool:
    outer = ast.parse(textwrap.dedent(src)).body[0]
    inner = next(s for s in ast.walk(outer) if isinstance(s, ast.FunctionDef) and s.name == "f")
    return only_called_in_place(inner, outer)


IN_PLACE = [
    "def g(self):\n    def f(n):\n        setattr(self, n, 1)\n    f('a')\n    if self:\n        f('b')\n",
    "def g(self):\n    for n in 'ab':\n        def f():\n            setattr(self, n, 1)\n        f()\n",
]

HANDED_ON = [
    "def g(self):\n    def f(n):\n        pass\n    self.apply(f)\n",  # a value
    "def g(self):\n    def f(n):\n        pass\n    h = f\n    h(1)\n",
    "def g(self):\n    def f(n):\n        f(n - 1)\n    f(3)\n",  # recursion
    "def g(self):\n    def f(n):\n        yield n\n    f(3)\n",  # a generator
    "def g(self):\n    def f(n):\n        pass\n    [f(i) for i in range(3)]\n",
    "def g(self):\n    def f(n):\n        pass\n    return lambda: f(1)\n",  # runs later
    "def g(self):\n    def f(n):\n        pass\n    f(1)\n    return locals()\n",
    "def g(self):\n    @dec\n    def f(n):\n        pass\n    f(1)\n",
    "def g(self):\n    def f(n):\n        pass\n    f(1)\n    f = None\n",
]


@pytest.mark.parametrize("src", IN_PLACE)
def test_a_def_called_only_by_its_function_runs_in_place(src):
    assert verdict(src)


@pytest.mark.parametrize("src", HANDED_ON)
def test_a_def_that_may_run_elsewhere_is_not_in_place(src):
    assert not verdict(src)


def test_an_answer_kept_holds_no_tree_alive():
    # A long-lived worker (the LSP) asks about the defs of every file it reads:
    # main's table by id held each def, and its function, for the process's life.
    tree = ast.parse(textwrap.dedent(IN_PLACE[0]))
    outer = tree.body[0]
    inner = outer.body[0]
    assert only_called_in_place(inner, outer)
    assert only_called_in_place(inner, outer)  # the kept answer
    gone = weakref.ref(inner), weakref.ref(outer)
    del tree, outer, inner
    assert [r() for r in gone] == [None, None]


def test_an_answer_is_the_def_s_in_its_own_function():
    # the same def asked about under another function is decided there, not read
    # off the first answer
    outer = ast.parse(textwrap.dedent(IN_PLACE[0])).body[0]
    inner = outer.body[0]
    other = ast.parse(textwrap.dedent(HANDED_ON[0])).body[0]
    other.body[0] = inner
    assert only_called_in_place(inner, outer)
    assert not only_called_in_place(inner, other)
    assert only_called_in_place(inner, outer)
