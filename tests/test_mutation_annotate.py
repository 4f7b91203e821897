"""The mutation harness's annotation mode (benchmarks/mutation_annotate.py, issue 25's
annotated suite): the annotations it writes from torch's shapes, and where they go."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]

SOURCE = '''"""A block."""
from __future__ import annotations

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, mask=None):
        if mask is None:
            return self.proj(x)
        return x
'''
# what torch saw: one call, x [2, 5, 8] float, returning [2, 5, 8]
CALLS = {"Block.forward": [{"x": ["float", [2, 5, 8]], "return": ["float", [2, 5, 8]]}]}


def _annotate():
    spec = importlib.util.spec_from_file_location(
        "mutation_annotate", ROOT / "benchmarks" / "mutation_annotate.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("mutation_annotate", module)
    spec.loader.exec_module(module)
    return module


def _def_line(text: str) -> str:
    return next(line for line in text.splitlines() if "def forward" in line)


def test_the_annotations_replace_the_parameters_and_the_import_moves_lines_by_one():
    a = _annotate()
    every_line = set(range(1, 30))
    forwards = a.plan(CALLS, SOURCE, every_line)
    names = a.namer(forwards, {"dim": "8"}, 2)
    concrete = a.annotate(SOURCE, forwards, "concrete", names)
    symbolic = a.annotate(SOURCE, forwards, "symbolic", names)
    assert _def_line(concrete) == (
        '    def forward(self, x: Float[Tensor, "2 5 8"], mask=None) -> Float[Tensor, "2 5 8"]:'
    )
    assert _def_line(symbolic) == (
        '    def forward(self, x: Float[Tensor, "b s0 dim"], mask=None) -> Float[Tensor, "b s0 dim"]:'
    )
    # the import goes after the docstring and the __future__ import; one line in all
    at = a.shift(SOURCE)
    assert concrete.splitlines()[at - 1] == a.IMPORT.strip()
    assert len(concrete.splitlines()) == len(SOURCE.splitlines()) + 1
    old, new = SOURCE.splitlines(), concrete.splitlines()
    assert [new[i + 1] for i in range(at - 1, len(old)) if "def forward" not in old[i]] == [
        old[i] for i in range(at - 1, len(old)) if "def forward" not in old[i]
    ]


def test_a_return_this_configuration_never_takes_leaves_the_return_unannotated():
    a = _annotate()
    ran = {n for n, line in enumerate(SOURCE.splitlines(), 1) if "return x" not in line}
    forwards = a.plan(CALLS, SOURCE, ran)
    assert "return" not in forwards["Block.forward"]
    text = a.annotate(SOURCE, forwards, "concrete", a.namer(forwards, {}, 2))
    assert _def_line(text).endswith("mask=None):")


def test_the_annotated_block_runs_under_jaxtypings_runtime_check():
    torch = pytest.importorskip("torch")
    pytest.importorskip("jaxtyping")
    beartype = pytest.importorskip("beartype")
    from jaxtyping import jaxtyped

    a = _annotate()
    forwards = a.plan(CALLS, SOURCE, set(range(1, 30)))
    names = a.namer(forwards, {"dim": "8"}, 2)
    for mode, ok, bad in (("concrete", (2, 5, 8), (2, 6, 8)), ("symbolic", (3, 6, 8), None)):
        namespace: dict = {"__name__": "annotated_block"}
        exec(compile(a.annotate(SOURCE, forwards, mode, names), "block.py", "exec"), namespace)
        cls = namespace["Block"]
        cls.forward = jaxtyped(typechecker=beartype.beartype)(cls.forward)
        block = cls(8)
        assert block(torch.randn(*ok)).shape == ok
        if bad is not None:  # the concrete annotation holds at its own sizes only
            with pytest.raises(Exception, match="Type-check error"):
                block(torch.randn(*bad))


USED_ELSEWHERE = (
    SOURCE
    + """

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block(16)

    def forward(self, x):
        return self.block(x)


if __name__ == "__main__":
    Net()(torch.randn(4, 16))
"""
)


def test_a_block_the_file_uses_at_sizes_the_trace_never_saw_is_written_with_names():
    # the trace ran Block alone (its lines 9-16): Net, constructed only in __main__,
    # builds it at 16, so concrete numbers from the trace would contradict that call
    a = _annotate()
    ran = set(range(9, 17))
    assert a.elsewhere(USED_ELSEWHERE, ran) == {
        "Block.__init__",
        "Block.forward",
        "Net.__init__",
        "Net.forward",
    }
    assert a.elsewhere(SOURCE, ran) == set()
    forwards = a.plan(CALLS, USED_ELSEWHERE, ran)
    names = {2: "b", 5: "s0", 8: "dim"}
    text = a.annotate(USED_ELSEWHERE, forwards, "concrete", names, {"Block.forward"})
    assert 'x: Float[Tensor, "b s0 dim"]' in _def_line(text)
    text = a.annotate(USED_ELSEWHERE, forwards, "concrete", names)
    assert 'x: Float[Tensor, "2 5 8"]' in _def_line(text)


# Block run at two widths (8 and 16): the width takes a name of its own in either mode
TWO_WIDTHS = {
    "Block.forward": [
        {"x": ["float", [2, 5, 8]], "return": ["float", [2, 5, 8]]},
        {"x": ["float", [2, 5, 16]], "return": ["float", [2, 5, 16]]},
    ]
}


def test_a_block_run_at_two_widths_names_the_width_and_runs_under_jaxtyping():
    torch = pytest.importorskip("torch")
    pytest.importorskip("jaxtyping")
    beartype = pytest.importorskip("beartype")
    from jaxtyping import jaxtyped

    a = _annotate()
    forwards = a.plan(TWO_WIDTHS, SOURCE, set(range(1, 30)))
    names = a.namer(forwards, {}, 2)
    for mode, spec in (("concrete", "2 5 v0"), ("symbolic", "b s0 v0")):
        text = a.annotate(SOURCE, forwards, mode, names)
        assert f'x: Float[Tensor, "{spec}"]' in _def_line(text)
        assert _def_line(text).endswith(f'-> Float[Tensor, "{spec}"]:')
        namespace: dict = {"__name__": "annotated_block"}
        exec(compile(text, "block.py", "exec"), namespace)  # noqa: S102 - the test's own
        cls = namespace["Block"]
        cls.forward = jaxtyped(typechecker=beartype.beartype)(cls.forward)
        for width in (8, 16):
            assert cls(width)(torch.randn(2, 5, width)).shape == (2, 5, width)
    # calls that differ in rank are left bare
    ranks = {"Block.forward": [{"x": ["float", [2, 8]]}, {"x": ["float", [2, 5, 8]]}]}
    assert a.plan(ranks, SOURCE, set(range(1, 30))) == {}


def test_a_size_a_default_argument_shares_with_a_passed_one_is_named_by_neither():
    # nest: 3 heads passed, 3 channels by default; its image is [2, 3, 32, 32]
    a = _annotate()
    source = (
        "class Net:\n    def __init__(self, *, heads, dim, channels=3, eps=1e-5):\n        pass\n"
    )
    assert a.constructor_defaults(source, "Net") == {"channels": "3"}
    calls = {"Block.forward": [{"x": ["float", [2, 3, 8]], "return": ["float", [2, 3, 8]]}]}
    forwards = a.plan(calls, SOURCE, set(range(1, 30)))
    init = {"heads": "3", "dim": "8"}
    assert a.namer(forwards, init, 2) == {1: "1", 2: "b", 3: "heads", 8: "dim"}
    named = a.namer(forwards, init, 2, a.constructor_defaults(source, "Net"))
    assert named == {1: "1", 2: "b", 3: "s0", 8: "dim"}
