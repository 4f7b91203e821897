"""What a module binds a name to, read from its syntax (analysis/bindings.py), and
a decorator handing back the function it is given through the calls it returns
(analysis/handing_back.py): decided only where nothing else can bind the name."""

from __future__ import annotations

import ast
import textwrap

import pytest

from shapelint.analysis.bindings import Bindings
from shapelint.analysis.handing_back import hands_back


def bound(code: str, name: str):
    stmt = Bindings(ast.parse(textwrap.dedent(code))).statement(name)
    return None if stmt is None else type(stmt).__name__


@pytest.mark.parametrize(
    "code, kind",
    [
        ("def f(): pass\n", "FunctionDef"),
        ("from .x import f\n", "ImportFrom"),
        ("from .x import *\ndef f(): pass\n", "FunctionDef"),  # the def comes after
        ("if TYPE_CHECKING:\n    from .y import f\ndef f(): pass\n", "FunctionDef"),
        ("def g():\n    f = 1\ndef f(): pass\n", "FunctionDef"),  # g's own f
        ("class C:\n    f = 1\ndef f(): pass\n", "FunctionDef"),  # C's attribute
    ],
)
def test_a_binding_the_syntax_decides(code, kind):
    assert bound(code, "f") == kind


@pytest.mark.parametrize(
    "code",
    [
        "if flag:\n    def f(): pass\n",  # one path only
        "try:\n    from .x import f\nexcept ImportError:\n    f = None\n",
        "def f(): pass\nf = wrap(f)\n",  # rebound later
        "def f(): pass\nfrom .x import *\n",  # a star import after it may bind it
        "def f(): pass\nfor f in fs: pass\n",
        "def f(): pass\ndef g():\n    global f\n    f = 1\n",
        "def f(): pass\nglobals()['f'] = 1\n",
        "import sys\ndef f(): pass\nsetattr(sys.modules[__name__], 'f', 1)\n",
        "def f(): pass\nexec(code)\n",
        "def f(): pass\n[f := 1 for _ in ()]\n",  # a walrus binds in the module
        "def f(): pass\ndel f\n",
        "x = 1\n",  # not bound at all
    ],
)
def test_a_binding_something_else_can_change_is_not_decided(code):
    assert bound(code, "f") is None


HELPERS = """
    def _mark(func, note=None):
        func.__doc__ = note
        return func

    def deco(obj=None, *, note=None):
        def apply(f):
            if f.__qualname__.count("."):
                return _mark(f, note)
            else:
                return _mark(f)
        if obj:
            return apply(obj)
        return apply
    """


def decorator(extra: str = "", name: str = "deco"):
    tree = ast.parse(textwrap.dedent(HELPERS) + extra)
    b = Bindings(tree)
    fn = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == name)
    return fn, b


def test_a_decorator_handing_back_through_the_helpers_it_returns():
    fn, b = decorator()
    assert hands_back(fn, b, function_given=True)
    # given something that may be falsy, `return apply` may be what it returns
    assert not hands_back(fn, b, function_given=False)


@pytest.mark.parametrize(
    "extra",
    [
        "_mark = other\n",  # the helper rebound at the top level
        "def _mark(func):\n    return wrap(func)\n",  # bound twice
        "from .m import *\n",  # a star import after the helper may rebind it
    ],
)
def test_a_helper_the_name_may_not_be_is_not_followed(extra):
    fn, b = decorator(extra)
    assert not hands_back(fn, b, function_given=True)


@pytest.mark.parametrize(
    "code",
    [
        "def d(fn):\n    def w(*a):\n        return fn(*a)\n    return w\n",
        "def d(fn):\n    fn = wrap(fn)\n    return fn\n",
        "def d(fn):\n    if fn.x:\n        return fn\n",  # falls through: None
        "def d(fn):\n    yield fn\n    return fn\n",
        "def d(fn):\n    return h(fn)\ndef h(f):\n    f.__code__ = g.__code__\n    return f\n",
        "def d(fn):\n    return h(fn)\ndef h(f):\n    setattr(f, name, g)\n    return f\n",
        "def d(fn):\n    return h(fn)\n@cache\ndef h(f):\n    return f\n",  # h is what cache made
        "def d(fn):\n    return h(f=fn)\ndef h(f):\n    return f\n",
        "def d(fn):\n    return h(fn)\ndef h(f, g):\n    return g\n",
    ],
)
def test_a_decorator_returning_anything_else_does_not_hand_back(code):
    tree = ast.parse(code)
    assert not hands_back(tree.body[0], Bindings(tree), function_given=True)
