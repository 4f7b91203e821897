"""torch.tensor / torch.as_tensor of nested Python lists against torch: one dim per
level and the dtype torch infers (int64, float32, bool); ragged lists, which torch
refuses, leave the shape unknown and report nothing."""

from __future__ import annotations

import torch
from _stubcheck import check_verdict, run_both
from hypothesis import given, settings
from hypothesis import strategies as st

numbers = st.one_of(st.integers(-3, 3), st.floats(-2, 2, allow_nan=False), st.booleans())


@st.composite
def nested(draw):
    """Nested lists of numbers: of one shape, or ragged (each list's length drawn)."""
    shape = draw(st.lists(st.integers(0, 3), max_size=3))
    ragged = draw(st.booleans())

    def build(level: int):
        if level == len(shape):
            return draw(numbers)
        n = draw(st.integers(0, 3)) if ragged else shape[level]
        return [build(level + 1) for _ in range(n)]

    return build(0)


def _rectangular(data) -> bool:
    if not isinstance(data, list):
        return True
    shapes = {_dims(i) for i in data}
    return len(shapes) <= 1 and all(_rectangular(i) for i in data)


def _dims(data) -> tuple:
    return (len(data), *(_dims(data[0]) if data else ())) if isinstance(data, list) else ()


@settings(max_examples=60)
@given(nested(), st.sampled_from(["torch.tensor", "torch.as_tensor"]))
def test_nested_lists_against_torch(data, name):
    # torch reads the lengths off the first item at each level, so it accepts some
    # ragged lists (`[[], [0]]` is [2, 0]); those may stay unknown, never wrong.
    check_verdict(run_both(name, [data]), decisive=False, strict=_rectangular(data))


def test_a_known_literal_table():
    for data in ([1, 2], [[1.0, 2], [3, 4]], [[True], [False]], [], [[], []], 3, 2.5):
        check_verdict(run_both("torch.tensor", [data]), decisive=False)
    o = run_both("torch.tensor", [[1, 2]], {"dtype": torch.float16})
    check_verdict(o, decisive=False)
