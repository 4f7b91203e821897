"""ops/values.promoted_dtype against torch.result_type (Python numbers, a complex one
included), and its answer for a tensor whose rank is not known (only where its being
0-dim or not gives one dtype)."""

from __future__ import annotations

import itertools

import pytest

from shapelint.notation.symbolic import Expr
from shapelint.ops.values import (
    ComplexV,
    FloatV,
    IntV,
    NoneV,
    TensorV,
    promoted_dtype,
    python_constant,
)

torch = pytest.importorskip("torch")

DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "bool")


def _tensor(dtype: str, rank: int | None) -> TensorV:
    shape = None if rank is None else tuple(Expr.const(2) for _ in range(rank))
    return TensorV(shape, dtype)


@pytest.mark.parametrize("a,b", list(itertools.combinations_with_replacement(DTYPES, 2)))
@pytest.mark.parametrize("ranks", [(1, 1), (1, 0), (0, 0)])
def test_tensors_as_torch(a, b, ranks):
    ta = torch.zeros((2,) * ranks[0], dtype=getattr(torch, a))
    tb = torch.zeros((2,) * ranks[1], dtype=getattr(torch, b))
    want = str(torch.result_type(ta, tb)).removeprefix("torch.")
    assert promoted_dtype([_tensor(a, ranks[0]), _tensor(b, ranks[1])]) == want


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scalar", [IntV(Expr.const(3)), FloatV(0.5), ComplexV(1j)])
def test_a_python_scalar_as_torch(dtype, scalar):
    t = torch.zeros(2, dtype=getattr(torch, dtype))
    number = python_constant(scalar)[1]
    want = str(torch.result_type(t, number)).removeprefix("torch.")
    assert promoted_dtype([_tensor(dtype, 1), scalar, NoneV()]) == want


def test_a_tensor_of_unknown_rank_answers_only_where_its_rank_does_not_matter():
    # float16 beside float32: float32 whether it is 0-dim or not
    assert promoted_dtype([_tensor("float32", 1), _tensor("float16", None)]) == "float32"
    # float64 beside float32: float64 if it has dims, float32 if it is 0-dim
    assert promoted_dtype([_tensor("float32", 1), _tensor("float64", None)]) is None
