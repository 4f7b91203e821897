"""Symbolic dimensions: every simplification must agree with integer arithmetic."""

import time

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shapelint.notation.symbolic import (
    MAX_DEGREE,
    Expr,
    bounded,
    fact_scope,
    note_equal,
    parse_expr,
    record_divides,
)

NAMES = ["B", "d", "h", "k"]


def rich_exprs(ops: str = "+-*^/f"):
    """Sums, differences, products, floor and exact quotients, small powers."""
    leaf = st.one_of(
        st.sampled_from(NAMES).map(lambda n: (Expr.name(n), n)),
        st.integers(1, 9).map(lambda i: (Expr.const(i), str(i))),
    )

    def extend(children):
        def combine(pair, op):
            (a, sa), (b, sb) = pair
            if op == "+":
                return a + b, f"({sa} + {sb})"
            if op == "-":
                return a - b, f"({sa} - {sb})"
            if op == "*":
                return a * b, f"({sa} * {sb})"
            if op == "^":
                return a**2, f"({sa})**2"
            if op == "/":  # an exact quotient: (a*b)/b, as einops hands it over
                return (a * b).divide_exact(b), f"((({sa}) * ({sb})) // ({sb}))"
            return a // b, f"({sa} // {sb})"

        return st.tuples(st.tuples(children, children), st.sampled_from(ops)).map(
            lambda t: combine(*t)
        )

    return st.recursive(leaf, extend, max_leaves=6)


def exprs():
    """Sums, products and floor quotients (rich_exprs draws more operators)."""
    return rich_exprs("+*f")


@settings(max_examples=400)
@given(exprs(), st.fixed_dictionaries({n: st.integers(1, 12) for n in NAMES}))
def test_simplified_expression_evaluates_like_python(pair, env):
    e, source = pair
    try:
        expected = eval(source, {}, dict(env))  # noqa: S307 - the test's own arithmetic
    except ZeroDivisionError:
        assume(False)
    assert e.evaluate(env) == expected
    # What to_python prints is a Python expression with the same value, and reads back.
    assert eval(e.to_python(), {}, dict(env)) == expected  # noqa: S307
    assert parse_expr(e.to_python()).evaluate(env) == expected


def test_canonical_forms():
    B, D, K, h = (Expr.name(n) for n in ("B", "D", "K", "h"))
    assert (2 * B * D * K).to_human() == "2·B·D·K"
    assert (2 * B * D * K).to_python() == "2*B*D*K"
    assert (h * D) // h == D
    assert (3 * D) // (3 * h) == D // h
    assert ((D // 8) * 3 + 1).to_python() == "3*(D//8) + 1"
    assert B * D == D * B
    assert (B + 1) * (B - 1) == B * B - 1


# -- printing: the human form, the program form and the number agree ---------------

_SUPER = {c: str(i) for i, c in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")}


def human_as_python(text: str) -> str:
    """The human form as Python: · is *, a run of superscripts is a power."""
    out: list[str] = []
    for ch in text:
        if ch in _SUPER:
            if not (out and out[-1].startswith("**")):
                out.append("**")
            out[-1] += _SUPER[ch]
        else:
            out.append("*" if ch == "·" else ch)
    return "".join(out)


def _agree(e: Expr, source: str, env: dict) -> None:
    try:
        expected = eval(source, {}, dict(env))  # noqa: S307 - the test's own arithmetic
    except ZeroDivisionError:
        assume(False)
    if e.is_too_big():
        return  # past the budget: unknown, never a wrong number
    assert e.evaluate(env) == expected
    assert eval(e.to_python(), {}, dict(env)) == expected  # noqa: S307
    assert eval(human_as_python(e.to_human()), {}, dict(env)) == expected  # noqa: S307
    assert parse_expr(e.to_python()) == e  # the program form reads back canonically


@settings(max_examples=200)
@given(rich_exprs(), st.fixed_dictionaries({n: st.integers(1, 12) for n in NAMES}))
def test_human_and_program_forms_evaluate_like_python(pair, env):
    e, source = pair
    _agree(e, source, env)


@settings(max_examples=100)
@given(st.data(), st.integers(1, 6), st.integers(1, 6), st.integers(1, 12), st.integers(1, 12))
def test_quotients_an_op_checked_cancel_and_stay_exact(data, k, m, b, d):
    """With `k | h` recorded (h = k·m at every size tried), expressions over h//k
    simplify and still evaluate like Python."""
    env = {"B": b, "d": d, "h": k * m, "k": k}
    with fact_scope():
        record_divides(Expr.name("h"), Expr.name("k"))
        e, source = data.draw(rich_exprs())
        q = Expr.name("h") // Expr.name("k")
        e, source = e * q * Expr.name("k"), f"({source}) * (h // k) * k"
        _agree(e, source, env)
        _agree(e.simplify(), source, env)
        assert "h//k" not in (e * Expr.name("k")).simplify().to_python() or e.quotients()


def test_simplification_a_reader_expects():
    a, b, h, kv, B, T, C, n = (Expr.name(x) for x in ("a", "b", "h", "kv", "B", "T", "C", "n_head"))
    assert (a * b) // a == b
    assert 3 * a + 2 * a == 5 * a
    assert (a + b) ** 2 == a * a + 2 * a * b + b * b
    with fact_scope():
        g = h // kv  # Python arithmetic: a floor quotient, nothing known yet
        assert (kv * g).to_human() == "kv·(h//kv)"
        # An einsum equates the repeated axis with h: that proves kv | h.
        assert note_equal(kv * g, h)
        assert (kv * g).simplify() == h
        assert kv * (h // kv) == h  # built after the fact: exact from the start
        # view(B, T, n_head, C // n_head) on [B, T, C]: torch compared the counts.
        q = C // n
        assert note_equal(B * T * C, B * T * n * q)
        assert (4 * B * T**2 * n * q).simplify().to_human() == "4·B·C·T²"
    # Outside the scope nothing is assumed.
    assert kv * (h // kv) != h
    assert not note_equal(kv * (h // kv), h)


def test_quotients_print_with_the_parentheses_precedence_needs():
    p, d, x = Expr.name("patch"), Expr.name("d"), Expr.name("x")
    assert ((8 // p) ** 2).to_human() == "(8//patch)²"
    assert ((8 // p) ** 2).to_python() == "(8//patch)**2"
    assert (3 * (d // 8)).to_human() == "3·(d//8)"
    assert (x - d // 8).to_human() == "x - d//8"
    assert (-(d // 8)).to_human() == "-(d//8)"
    assert ((d + 1) // x).to_human() == "(d + 1)//x"
    assert (d // (x // 2)).to_human() == "d//(x//2)"


def test_an_equality_that_proves_nothing_records_nothing():
    h, kv, x = (Expr.name(n) for n in ("h", "kv", "x"))
    with fact_scope():
        assert not note_equal(kv * (h // kv) + 1, h)  # off by one: not the split
        assert not note_equal(x, h)
        assert kv * (h // kv) != h


# -- the size budget -----------------------------------------------------------------


def test_budget_turns_runaway_growth_into_unknown_fast():
    """Squaring a sum of sizes at every step (issue 15) grows the polynomial
    exponentially; past the budget it is TOO_BIG, which absorbs every operation."""
    start = time.process_time()
    v = Expr.name("a") + Expr.name("b") + Expr.name("c")
    for _ in range(12):
        v = v * v + Expr.name("a")
    assert v.is_too_big()
    assert (v + 1).is_too_big() and (v * v).is_too_big() and (v // 2).is_too_big()
    assert v != v and not v.definitely_differs(Expr.const(3))
    assert bounded(v) is None
    assert bounded(Expr.name("a")) == Expr.name("a")
    assert Expr.const(3) ** 100 == Expr.const(3**100)
    assert (Expr.const(3) ** 4000).is_too_big()
    assert (Expr.name("a") ** (MAX_DEGREE + 1)).is_too_big()
    assert time.process_time() - start < 5  # generous: the point is "not hours"
