"""Symbolic dimensions: every simplification must agree with integer arithmetic."""

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shapelint.notation.symbolic import Expr, parse_expr

NAMES = ["B", "d", "h", "k"]


def exprs():
    leaf = st.one_of(
        st.sampled_from(NAMES).map(lambda n: (Expr.name(n), n)),
        st.integers(1, 9).map(lambda i: (Expr.const(i), str(i))),
    )

    def extend(children):
        def combine(pair, op):
            (a, sa), (b, sb) = pair
            if op == "+":
                return a + b, f"({sa} + {sb})"
            if op == "*":
                return a * b, f"({sa} * {sb})"
            return a // b, f"({sa} // {sb})"

        return st.tuples(st.tuples(children, children), st.sampled_from("+*/")).map(
            lambda t: combine(*t)
        )

    return st.recursive(leaf, extend, max_leaves=6)


@settings(max_examples=400, deadline=None)
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
