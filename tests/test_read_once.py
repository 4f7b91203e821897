"""What `check` reads of a class once, it reads once: the constructions a
constructor surely makes (SHP317) per class, not per class whose constructions
reach it, and a constructor's int defaults per constructor, not per method. Counted
here (the findings are the corpus's and the rule tests' to hold)."""

from __future__ import annotations

import textwrap

from shapelint.analysis import interpreter, recursion
from shapelint.analysis.driver import analyze_text
from shapelint.options import AnalysisOptions

CHAIN = textwrap.dedent(
    """
    import torch.nn as nn

    class D(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.fc = nn.Linear(dim, dim)

    class C(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.d = D(dim)

    class B(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.c = C(dim)

    class A(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.b = B(dim)
            self.again = A(dim)
    """
)


def test_each_constructor_is_read_once_for_endless_constructions(monkeypatch):
    seen: list[str] = []
    read = recursion._sure_constructions

    def counted(an, cd):
        seen.append(cd.name)
        return read(an, cd)

    monkeypatch.setattr(recursion, "_sure_constructions", counted)
    res = analyze_text("chain.py", CHAIN, AnalysisOptions(costs=False))
    assert sorted(seen) == ["A", "B", "C", "D"]  # D reached from A, B and C: read once
    assert [d.code for d in res.diagnostics if d.code == recursion.CODE] == ["SHP317"]


METHODS = textwrap.dedent(
    """
    import torch
    import torch.nn as nn

    HIDDEN = 256

    class Block(nn.Module):
        def __init__(self, dim, hidden=HIDDEN, heads: int = 8, act=nn.GELU, eps=-1e-5):
            super().__init__()
            self.fc = nn.Linear(dim, hidden)
            self.heads = heads

        def forward(self, x):
            return self.fc(x)

        def split(self, x):
            return x.view(x.shape[0], self.heads, -1)

        def merge(self, x):
            return x.flatten(1)
    """
)


def _init_bindings(monkeypatch, source: str) -> tuple[list[str], object]:
    bound: list[str] = []
    bind = interpreter.ModuleAnalyzer._bind_params

    def counted(self, fd, frame, self_value, *rest):
        bound.append(fd.qualname)
        return bind(self, fd, frame, self_value, *rest)

    monkeypatch.setattr(interpreter.ModuleAnalyzer, "_bind_params", counted)
    an = _analyzer(source)
    return [q for q in bound if q.endswith("__init__")], an


def _analyzer(source: str):
    import ast

    from shapelint.analysis.source import SourceFile

    an = interpreter.ModuleAnalyzer(
        SourceFile("m.py", source), ast.parse(source), AnalysisOptions(costs=False)
    )
    an.run()
    return an


def test_constructor_defaults_are_read_once_per_constructor(monkeypatch):
    inits, an = _init_bindings(monkeypatch, METHODS)
    # Once for the class's attributes, once for its defaults: not once per method.
    assert inits == ["Block.__init__", "Block.__init__"]
    for name in ("forward", "split", "merge"):
        assert an.summaries[f"Block.{name}"].defaults == {"hidden": 256, "heads": 8}


def test_a_default_that_calls_is_read_at_every_method(monkeypatch):
    # A call may run code whose answer changes while the file is analysed: read
    # again, as before.
    source = METHODS.replace("hidden=HIDDEN", "hidden=int(HIDDEN)")
    inits, an = _init_bindings(monkeypatch, source)
    assert len(inits) == 4
    assert an.summaries["Block.merge"].defaults == {"hidden": 256, "heads": 8}


HELPER = textwrap.dedent(
    """
    import torch.nn as nn

    def pair(t):
        return t if isinstance(t, tuple) else (t, t)

    def total(n):
        out = 0
        for i in range(n):
            out = out + i
        return out

    class Stem(nn.Module):
        def __init__(self, a, b):
            super().__init__()
            for i in range(3):
                self.ph, self.pw = pair(a + i)
            self.qh, self.qw = pair((a, b))
            self.rh, self.rw = pair(7)
            self.widths = (total(2), total(3), total(a))
    """
)


def test_a_helper_run_on_its_arguments_is_walked_once(monkeypatch):
    # `pair(...)` runs on each call's arguments (argument_runs.value_at): whether it is
    # a generator is read off its kept walk, not an ast.walk per call.
    import ast

    walked: list[str] = []
    walk = ast.walk

    def counted(node):
        if isinstance(node, ast.FunctionDef):
            walked.append(node.name)
        return walk(node)

    monkeypatch.setattr(ast, "walk", counted)
    an = _analyzer(HELPER)
    assert "pair" not in walked
    assert an.specialized  # the runs happened (memoised per arguments)


def test_a_loop_is_searched_for_break_once(monkeypatch):
    # Whether a loop may break or return is read once per loop, not at every pass
    # over the function that holds it (total's loop: its summary and three runs).
    from shapelint.analysis import module_loops

    searched: list[int] = []
    nested = module_loops.nested_statements

    def counted(body):
        if body and isinstance(body[0], __import__("ast").Assign):
            searched.append(body[0].lineno)
        return nested(body)

    monkeypatch.setattr(module_loops, "nested_statements", counted)
    _analyzer(HELPER)
    assert searched and len(searched) == len(set(searched))


HANDS_BACK = textwrap.dedent(
    """
    import torch.nn as nn

    def same(t):
        if isinstance(t, tuple):
            print("a tuple")
        return t

    class Stem(nn.Module):
        def __init__(self, a, b):
            super().__init__()
            for i in range(3):
                self.p = same(a + i)
            self.q = same((a, b))
    """
)


def test_a_function_returning_its_parameter_is_searched_once(monkeypatch):
    # Whether a function hands back its parameter (`return t`, never rebound) is
    # asked at every run of its body (here one per call); it is searched once.
    from shapelint.analysis import dynamic

    searched: list[str] = []
    search = dynamic._hands_back

    def counted(fn, factory):
        searched.append(fn.name)
        return search(fn, factory)

    monkeypatch.setattr(dynamic, "_hands_back", counted)
    runs: list[str] = []
    asked = dynamic.returned_parameter

    def ran(fn):
        runs.append(fn.name)
        return asked(fn)

    monkeypatch.setattr(dynamic, "returned_parameter", ran)
    _analyzer(HANDS_BACK)
    assert runs.count("same") > 1
    assert searched.count("same") == 1
