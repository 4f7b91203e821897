"""Slice lengths against Python's own slicing (numbers) and against every binding
of the names to sizes (symbols): what is told is exact, the rest is unknown."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from shapelint.notation.symbolic import Expr
from shapelint.ops.indexing import provably_nonnegative, slice_length

N, K = Expr.name("n"), Expr.name("k")
BOUNDS = [
    None,
    Expr.const(0),
    Expr.const(1),
    Expr.const(-1),
    Expr.const(3),
    N,
    K,
    N - 1,
    N + K - 1,
    K - 1,
]


@settings(max_examples=200)
@given(
    st.sampled_from([N, N + K - 1, Expr.const(5), 2 * N]),
    st.sampled_from(BOUNDS),
    st.sampled_from(BOUNDS),
)
def test_slice_length_is_exact_when_told(n, lo, hi):
    got = slice_length(n, lo, hi, None)
    if got is None:
        return
    for nv, kv in itertools.product(range(1, 6), range(1, 6)):
        env = {"n": nv, "k": kv}
        size = n.evaluate(env)
        want = len(range(size)[_ev(lo, env) : _ev(hi, env)])
        assert got.evaluate(env) == want, (n, lo, hi, env)


def _ev(e, env):
    return None if e is None else e.evaluate(env)


def test_causal_conv_slice_keeps_the_length():
    assert slice_length(N + K - 1, None, N, None) == N
    assert slice_length(N, Expr.const(1), None, None) == N - 1
    assert slice_length(N, None, Expr.const(-1), None) == N - 1
    assert slice_length(N, None, K, None) is None  # k may exceed n


def test_nonnegative():
    assert provably_nonnegative(K - 1) and provably_nonnegative(N * K - 1)
    assert not provably_nonnegative(N - K) and not provably_nonnegative(K - 2)


def test_an_exact_quotient_of_sizes_is_at_least_1():
    # n//k where k divides n (einops or an assert checked it): a positive multiple
    exact = N.divide_exact(K)
    assert provably_nonnegative(exact - 1) and provably_nonnegative(exact * exact - 1)
    assert not provably_nonnegative(exact - 2)
    # a floor quotient nobody checked may be 0 (n < k)
    floor = N // K
    assert provably_nonnegative(floor) and not provably_nonnegative(floor - 1)
    # the multiple of its exact quotient: n = (n//k)·k, each binding with k | n
    for n, k in itertools.product(range(1, 13), repeat=2):
        if n % k == 0:
            assert (exact * exact - 1).evaluate({"n": n, "k": k}) >= 0


def test_a_slice_one_shorter_than_an_exact_square_is_that_long():
    # cait's `pos[:, :n - 1]` of a table of (image//patch)² rows, n the patches
    q = Expr.name("image").divide_exact(Expr.name("patch"))
    assert slice_length(q * q, None, q * q - 1, None) == q * q - 1
