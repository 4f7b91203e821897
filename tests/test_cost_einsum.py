"""einsum_flops against torch.utils.flop_counter running torch.einsum on CPU.

The counter is the oracle: every case here runs the same equation on real
tensors and compares the number, by hand-picked cases and by hypothesis.
"""

from __future__ import annotations

import subprocess
import sys

import opt_einsum
import pytest
import torch
import torch.backends.opt_einsum
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

from shapelint.notation.symbolic import Expr
from shapelint.ops.cost import ORDER_NOTE, _optimal_ssa_path, einsum_flops

POOL = "abcdefg"


def counted(equation: str, shapes) -> int:
    tensors = [torch.ones(s) for s in shapes]
    with FlopCounterMode(display=False) as mode:
        torch.einsum(equation, *tensors)
    return mode.get_total_flops()


def split(equation: str) -> tuple[list[list[str]], list[str]]:
    lhs, rhs = equation.split("->")
    return [list(op) for op in lhs.split(",")], list(rhs)


def flops_at(equation: str, shapes) -> tuple[int | None, list[str]]:
    """einsum_flops for one-letter axes, sizes (and broadcast axes) read off the shapes."""
    inputs, output = split(equation)
    sizes: dict[str, int] = {}
    for op, shape in zip(inputs, shapes, strict=True):
        for axis, n in zip(op, shape, strict=True):
            if sizes.get(axis, 1) == 1:  # the broadcast size, as torch and opt_einsum take it
                sizes[axis] = n
    units = [
        {a for a, n in zip(op, shape, strict=True) if n == 1 and sizes[a] != 1}
        for op, shape in zip(inputs, shapes, strict=True)
    ]
    flops, notes = einsum_flops(
        inputs, output, {a: Expr.const(n) for a, n in sizes.items()}, unit_axes=units
    )
    return (None if flops is None else flops.value), notes


def test_torch_consults_opt_einsum_with_auto():
    # The 3+ operand cases below are only meaningful under torch's default setup.
    assert torch.backends.opt_einsum.is_available()
    assert torch.backends.opt_einsum.enabled
    assert torch.backends.opt_einsum.strategy == "auto"


# -- hand-written cases ----------------------------------------------------------------

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),  # matmul
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),  # batched matmul
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),  # attention scores
    ("i,j->ij", [(3,), (4,)]),  # outer product: mul, 0
    ("bi,bj->bij", [(2, 3), (2, 4)]),  # batched outer product: mul, 0
    ("ij,ij->ij", [(3, 4), (3, 4)]),  # Hadamard: mul, 0
    ("ij,ij->", [(3, 4), (3, 4)]),  # full inner product
    ("ii->", [(3, 3)]),  # trace
    ("ii->i", [(3, 3)]),  # diagonal
    ("ij->", [(3, 4)]),  # single operand: a sum
    ("iij,jk->ik", [(3, 3, 4), (4, 5)]),  # diagonal then matmul
    ("ijx,jk->ik", [(3, 4, 7), (4, 5)]),  # x summed away first, free
    ("ij,jky->iy", [(3, 4), (4, 5, 6)]),  # k summed away first, free
    ("ij,jk->ik", [(3, 1), (1, 5)]),  # contracted axis of size 1: mul, 0
    ("ij,jk->ik", [(3, 1), (4, 5)]),  # j broadcast in the first operand
    ("ij,jk->ik", [(0, 4), (4, 5)]),  # empty
    (",ij->ij", [(), (3, 4)]),  # scalar operand: mul
    ("bij,bjk->bik", [(1, 3, 4), (6, 4, 5)]),  # broadcast batch
    ("ij,jk,kl->il", [(2, 30), (30, 40), (40, 5)]),  # path: (jk,kl) first
    ("ij,jk,kl->il", [(20, 3), (3, 40), (40, 50)]),  # path: left to right
    ("ab,bc,cd,de->ae", [(9, 2), (2, 8), (8, 3), (3, 7)]),
    ("ab,bc,cd,de->ae", [(2, 9), (9, 2), (2, 9), (9, 2)]),
    ("bn,anm,bm->ba", [(2, 5), (3, 5, 4), (2, 4)]),  # bilinear
    ("ij,jk,jl->ikl", [(3, 4), (4, 5), (4, 6)]),  # j shared by three operands
    ("ea,fb,abcd,gc,hd->efgh", [(3, 4), (3, 5), (4, 5, 6, 7), (3, 6), (3, 7)]),  # 5: opt_einsum
]


@pytest.mark.parametrize(("equation", "shapes"), CASES)
def test_hand_written_cases_match_the_counter(equation, shapes):
    flops, _ = flops_at(equation, shapes)
    assert flops == counted(equation, shapes)


def test_matmul_is_symbolic_2_b_d_k():
    sizes = {a: Expr.name(a.upper()) for a in "bdk"}
    flops, notes = einsum_flops([["b", "d"], ["d", "k"]], ["b", "k"], sizes)
    assert flops == 2 * Expr.name("B") * Expr.name("D") * Expr.name("K")
    # torch's einsum drops a contracted axis of size 1 (then 0 FLOPs): the note says so.
    assert notes == [
        "where d is 1, torch multiplies elementwise (mul) and counts 0 there: this formula does not"
    ]


def test_attention_scores_with_named_axes():
    sizes = {a: Expr.name(a) for a in ("batch", "heads", "q", "k", "d")}
    flops, _ = einsum_flops(
        [["batch", "heads", "q", "d"], ["batch", "heads", "k", "d"]],
        ["batch", "heads", "q", "k"],
        sizes,
    )
    assert flops is not None
    assert flops.to_python() == "2*batch*d*heads*k*q"
    env = {"batch": 2, "heads": 3, "q": 4, "k": 6, "d": 5}
    assert flops.evaluate(env) == counted("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)])


def test_outer_product_counts_zero_and_says_why():
    flops, notes = einsum_flops(
        [["i"], ["j"]], ["i", "j"], {"i": Expr.name("I"), "j": Expr.name("J")}
    )
    assert flops == 0
    assert any("mul" in n for n in notes)


def test_path_matters_in_the_chain_cases():
    # Guard against a test that would pass with left-to-right order too.
    eq, shapes = "ij,jk,kl->il", [(20, 3), (3, 40), (40, 50)]
    left_to_right = 2 * 20 * 3 * 40 + 2 * 20 * 40 * 50
    assert flops_at(eq, shapes)[0] == counted(eq, shapes) != left_to_right


def test_symbolic_chain_assumes_left_to_right_and_says_so():
    sizes = {a: Expr.name(a.upper()) for a in "ijkl"}
    flops, notes = einsum_flops([["i", "j"], ["j", "k"], ["k", "l"]], ["i", "l"], sizes)
    assert ORDER_NOTE in notes
    i, j, k, ll = (Expr.name(a) for a in "IJKL")
    assert flops == 2 * i * j * k + 2 * i * k * ll


def test_unknown_size_makes_flops_unknown():
    sizes = {"i": Expr.const(3), "j": None, "k": Expr.const(5)}
    flops, notes = einsum_flops([["i", "j"], ["j", "k"]], ["i", "k"], sizes)
    assert flops is None
    assert any("'j'" in n for n in notes)


def test_unknown_size_of_an_axis_summed_for_free_does_not_matter():
    sizes = {"i": Expr.const(3), "j": Expr.const(4), "k": Expr.const(5), "x": None}
    flops, _ = einsum_flops([["i", "j", "x"], ["j", "k"]], ["i", "k"], sizes)
    assert flops == 2 * 3 * 4 * 5


@pytest.mark.parametrize(
    ("inputs", "output"),
    [([], []), ([["i"]], ["j"]), ([["i", "j"]], ["i", "i"])],
)
def test_bad_equations_return_a_note_not_a_traceback(inputs, output):
    flops, notes = einsum_flops(inputs, output, {"i": Expr.const(2), "j": Expr.const(3)})
    assert flops is None and len(notes) == 1


def test_static_import_pulls_in_neither_torch_nor_opt_einsum():
    code = (
        "import sys, shapelint.ops.cost as c\n"
        "from shapelint.notation.symbolic import Expr\n"
        "c.einsum_flops([['i','j'],['j','k'],['k','l']], ['i','l'],"
        " {a: Expr.name(a) for a in 'ijkl'})\n"
        "bad = {'torch', 'opt_einsum', 'numpy', 'einops'} & set(sys.modules)\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- generated cases -------------------------------------------------------------------


@st.composite
def equations(draw, min_ops=2, max_ops=4, broadcast=True, min_size=1):
    """An einsum equation over one-letter axes and the operand shapes to run it on.

    Scalars, repeated letters (diagonals), axes in one operand only, size-1
    axes and size-1 broadcasting in single operands all occur."""
    n = draw(st.integers(min_ops, max_ops))
    ops = [draw(st.lists(st.sampled_from(POOL), max_size=4)) for _ in range(n)]
    used = sorted({a for op in ops for a in op})
    out = draw(st.permutations(used))[: draw(st.integers(0, len(used)))]
    size = {a: draw(st.integers(min_size, 5)) for a in used}
    shapes = []
    for op in ops:
        unit = {a for a in set(op) if broadcast and draw(st.integers(0, 5)) == 0}
        shapes.append(tuple(1 if a in unit else size[a] for a in op))
    equation = ",".join("".join(op) for op in ops) + "->" + "".join(out)
    return equation, shapes


@settings(max_examples=300)
@given(equations())
def test_generated_equations_match_the_counter(case):
    equation, shapes = case
    assert flops_at(equation, shapes)[0] == counted(equation, shapes)


@settings(max_examples=40)
@given(equations(min_ops=5, max_ops=6))
def test_generated_long_equations_match_the_counter(case):
    # Five or more operands: the path comes from opt_einsum's heuristics.
    equation, shapes = case
    assert flops_at(equation, shapes)[0] == counted(equation, shapes)


@settings(max_examples=150)
@given(equations(max_ops=2, broadcast=False, min_size=2))
def test_symbolic_result_evaluates_to_the_counter(case):
    # Symbolic sizes are assumed to differ from 1, as torch assumes; sizes >= 2.
    equation, shapes = case
    inputs, output = split(equation)
    env = {
        f"N_{a}": n
        for op, s in zip(inputs, shapes, strict=True)
        for a, n in zip(op, s, strict=True)
    }
    flops, _ = einsum_flops(inputs, output, {a: Expr.name(f"N_{a}") for a in POOL})
    assert flops is not None
    assert flops.evaluate(env) == counted(equation, shapes)


@st.composite
def index_sets(draw):
    n = draw(st.integers(3, 4))
    ops = [
        frozenset(draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=4))) for _ in range(n)
    ]
    used = sorted(set().union(*ops))
    out = frozenset(draw(st.lists(st.sampled_from(used), max_size=3)))
    size = {a: draw(st.integers(1, 6)) for a in used}
    return ops, out, size


@settings(max_examples=300)
@given(index_sets())
def test_pure_optimal_search_finds_opt_einsums_path(case):
    # Tie for tie: equally cheap paths may still cost torch differently.
    ops, out, size = case
    expected = opt_einsum.paths.optimal(list(ops), out, size)
    ssa = _optimal_ssa_path(list(ops), out, size)
    assert opt_einsum.paths.ssa_to_linear(ssa) == expected
