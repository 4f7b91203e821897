"""ops/dtypes: a float or complex dtype of a width not known (the join of two float
dtypes) against torch.promote_types over every width it may be."""

from __future__ import annotations

import pytest

from shapelint.ops import dtypes

torch = pytest.importorskip("torch")

# What each dtype of a width not known may be (never an fp8 float: see dtypes.py).
MEMBERS = {
    dtypes.FLOAT_NOT_KNOWN: ("float16", "bfloat16", "float32", "float64"),
    dtypes.COMPLEX_NOT_KNOWN: ("complex32", "complex64", "complex128"),
}
NAMED = ("bool", "uint8", "uint16", "int8", "int32", "int64", "float8_e4m3fn", "float16")
NAMED += ("bfloat16", "float32", "float64", "complex32", "complex64", "complex128")


def _torch_promoted(a: str, b: str) -> str | None:
    try:
        return str(torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[1]
    except (RuntimeError, TypeError):
        return None


def _may_be(d: str) -> tuple[str, ...]:
    return MEMBERS.get(d, (d,))


@pytest.mark.parametrize("wide", list(MEMBERS))
@pytest.mark.parametrize("other", [*NAMED, *MEMBERS])
def test_a_width_not_known_promotes_as_torch_does_every_width(wide, other):
    outs = {_torch_promoted(a, b) for a in _may_be(wide) for b in _may_be(other)}
    got = dtypes.promote_pair(wide, other)
    if None in outs:
        assert got is None  # torch refuses some pair: no dtype
    elif len(outs) == 1:
        assert got == outs.pop()
    else:  # several widths of one kind: that kind, its width not known
        assert {dtypes.kind(d) for d in outs} == {dtypes.kind(got)}
        assert got in MEMBERS and set(MEMBERS[got]) >= outs


@pytest.mark.parametrize(
    ("a", "b", "joined"),
    [
        ("float16", "float32", dtypes.FLOAT_NOT_KNOWN),
        (None, "float32", dtypes.FLOAT_NOT_KNOWN),  # None: the run's default float
        ("complex64", "complex128", dtypes.COMPLEX_NOT_KNOWN),
        ("float32", "int64", dtypes.NOT_KNOWN),
        ("float32", "complex64", dtypes.NOT_KNOWN),
        ("float8_e4m3fn", "float32", dtypes.NOT_KNOWN),  # fp8 promotes with no float
        ("float32", "float32", "float32"),
    ],
)
def test_the_join_of_two_floats_is_a_float_of_a_width_not_known(a, b, joined):
    assert dtypes.join(a, b) == joined == dtypes.join(b, a)


@pytest.mark.parametrize("d", list(MEMBERS))
def test_a_width_not_known_has_its_kind_and_no_bytes(d):
    assert dtypes.unnamed(d) and dtypes.dtype_bytes(d) is None
    assert dtypes.kind(d) == dtypes.kind(MEMBERS[d][0])
    assert dtypes.tensor_category(d) == dtypes.category(MEMBERS[d][0])


@pytest.mark.parametrize("a", [None, "float16", "float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("b", [None, "bfloat16", "float32", "int32"])
def test_promote_types_with_the_default_float_is_what_every_default_gives(a, b):
    each = {
        d: _torch_promoted(a or d, b or d) for d in ("float32", "bfloat16", "float16", "float64")
    }
    outs = set(each.values())
    got = dtypes.promote_types(a, b)
    if all(out == d for d, out in each.items()):
        assert got is None  # the default float, whichever it is
    elif len(outs) == 1:
        assert got == outs.pop()
    else:
        assert got == dtypes.FLOAT_NOT_KNOWN and all(dtypes.kind(d) == "float" for d in outs)
