"""matmul_flops against torch.utils.flop_counter; tensor_bytes and call_bytes by hand."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

from shapelint.notation.symbolic import Expr
from shapelint.ops.cost import bmm_flops, call_bytes, tensor_bytes
from shapelint.ops.values import UNKNOWN, IntV, TensorV, TupleV, Var
from tests.matmul_count import matmul_flops

B, M, K, N = (Expr.name(n) for n in "BMKN")


def consts(shape):
    return tuple(Expr.const(n) for n in shape)


@st.composite
def matmul_shapes(draw):
    """Operand shapes torch.matmul accepts: any ranks 1-4, batch dims broadcasting."""
    m, k, n = (draw(st.integers(1, 5)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 4), max_size=2))

    def side(core):
        rank = draw(st.integers(0, len(batch)))
        own = [1 if draw(st.booleans()) else b for b in batch[len(batch) - rank :]]
        return tuple(own) + core

    a = (k,) if draw(st.integers(0, 3)) == 0 else side((m, k))
    b = (k,) if draw(st.integers(0, 3)) == 0 else side((k, n))
    return a, b


@settings(max_examples=200)
@given(matmul_shapes())
def test_matmul_flops_match_the_counter(shapes):
    a, b = shapes
    with FlopCounterMode(display=False) as mode:
        torch.matmul(torch.ones(*a), torch.ones(*b))
    assert matmul_flops(consts(a), consts(b)) == mode.get_total_flops()


def test_matmul_symbolic():
    assert matmul_flops((B, M, K), (K, N)) == 2 * B * M * K * N
    assert matmul_flops((M, K), (B, K, N)) == 2 * B * M * K * N
    assert matmul_flops((K,), (K, N)) == 2 * K * N
    assert matmul_flops((Expr.const(4), M, K), (B, K, N)) == 8 * M * K * N  # B is 1 or 4
    assert bmm_flops(B, M, K, N) == matmul_flops((B, M, K), (B, K, N))


def test_matmul_with_a_vector_on_the_right_is_mv_and_counts_zero():
    assert matmul_flops((M, K), (K,)) == 0
    assert matmul_flops((K,), (K,)) == 0
    # A vector times a batch whose contracted size is 1 folds into mv as well.
    one = Expr.const(1)
    assert matmul_flops((one,), (B, one, N)) == 0
    assert matmul_flops((K,), (B, K, N)) == 2 * B * K * N


def test_matmul_variadic_batch():
    flops = matmul_flops((Var("b"), M, K), (Var("b"), K, N))
    assert flops == 2 * Expr.name("b") * M * K * N
    assert matmul_flops((Var("b"), M, K), (K, N)) == 2 * Expr.name("b") * M * K * N
    assert matmul_flops((Var("b"), M, K), (Var("c"), K, N)) is None


def test_matmul_unknowable():
    assert matmul_flops((B, M, K), (Expr.name("C"), K, N)) is None  # either may be 1
    assert matmul_flops((None, K), (K, N)) is None
    assert matmul_flops((), (K, N)) is None


def test_tensor_bytes():
    assert tensor_bytes((B, Expr.const(8)), "float16") == 16 * B
    assert tensor_bytes((B,), None) == 4 * B  # float32 by default
    assert tensor_bytes((Var("b"), K), "int64") == 8 * Expr.name("b") * K
    assert tensor_bytes((), "bfloat16") == 2
    assert tensor_bytes((B, None), "float32") is None
    assert tensor_bytes(None, "float32") is None


def test_call_bytes_reads_plus_writes():
    x = TensorV((B, K), "bfloat16")
    w = TensorV((K, N), "bfloat16")
    y = TensorV((B, N), "float32")
    assert call_bytes([x, w, IntV(Expr.const(3))], y) == 2 * B * K + 2 * K * N + 4 * B * N
    # pack reads a list of tensors and writes one; unpack writes a tuple.
    assert call_bytes([TupleV((x, x))], x) == 6 * B * K
    assert call_bytes([x], TupleV((x, x))) == 6 * B * K
    assert call_bytes([x, TensorV(None)], y) is None
    assert call_bytes([x, UNKNOWN], [y]) == 2 * B * K + 4 * B * N
