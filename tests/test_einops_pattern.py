"""The einops pattern parser and the einsum letter notation.

Hand-written cases pin the structure and the spans; hypothesis compares the
parser with einops' own ParsedExpression (and pack's analyze_pattern) on random
strings over an alphabet rich in einops' corner cases.
"""

from __future__ import annotations

import warnings

import pytest
from einops.packing import analyze_pattern
from einops.parsing import AnonymousAxis, ParsedExpression
from hypothesis import given, settings
from hypothesis import strategies as st

from shapelint.notation.einops_pattern import (
    ELLIPSIS,
    check_axis_name,
    parse,
    parse_expression,
)
from shapelint.notation.einsum_letters import parse_letters


def codes(issues) -> list[str]:
    return [i.code for i in issues]


def spans(text: str, issues) -> list[str]:
    return [text[i.start : i.end] for i in issues]


# -- structure and spans --------------------------------------------------------------------


def test_groups_axes_and_spans():
    text = "b (h w) ... 1 () 3 -> b"
    pat = parse("reduce", text)
    assert pat.ok
    left = pat.left
    assert [text[g.start : g.end] for g in left.groups] == ["b", "(h w)", "...", "1", "()", "3"]
    assert [[a.name for a in g.axes] for g in left.groups] == [
        ["b"],
        ["h", "w"],
        [ELLIPSIS],
        [],
        [],
        ["3"],
    ]
    assert [g.parenthesized for g in left.groups] == [False, True, False, False, True, False]
    assert (
        left.groups[2].is_ellipsis
        and left.has_ellipsis
        and left.has_ellipsis_parenthesized is False
    )
    assert left.groups[5].axes[0].value == 3
    h = left.groups[1].axes[0]
    assert text[h.start : h.end] == "h"
    assert text[pat.output.start : pat.output.end] == " b"


def test_one_inside_parentheses_vanishes_and_unicode_digits_are_numbers():
    expr = parse_expression("(a 1 b) ٣ 01")
    assert [[a.name for a in g.axes] for g in expr.groups] == [["a", "b"], ["٣"], []]
    assert expr.groups[1].axes[0].value == 3


def test_numbers_are_never_duplicates_but_names_are():
    assert parse_expression("2 2").issues == ()
    expr = parse_expression("a b a")
    assert codes(expr.issues) == ["SHP106"] and spans("a b a", expr.issues) == ["a"]
    assert expr.issues[0].start == 4


def test_literal_ellipsis_char_is_an_ellipsis_token_without_has_ellipsis():
    expr = parse_expression("… b")
    assert expr.groups[0].is_ellipsis and not expr.has_ellipsis


@pytest.mark.parametrize(
    ("text", "code", "span"),
    [
        ("b\tc -> b c", "SHP102", "\t"),
        ("b c -> b, c", "SHP102", ","),
        ("b c -> b -> c", "SHP101", "->"),
        ("b _c -> _c b", "SHP103", "_c"),
        ("b 2c -> b", "SHP103", "2c"),
        ("b ...c -> b", "SHP103", "...c"),
        ("(b (c)) -> b c", "SHP104", "("),
        ("b c) -> b c", "SHP104", ")"),
        ("(b c -> b c", "SHP104", "("),
        ("b .. c -> b c", "SHP105", "."),
        ("... c ... -> c", "SHP105", "."),
        ("b b -> b", "SHP106", "b"),
        ("b (c 0) -> b c", "SHP107", "0"),
        ("b 00 -> b", "SHP107", "00"),
    ],
)
def test_syntax_issues_point_into_the_string(text, code, span):
    pat = parse("reduce", text)
    assert codes(pat.issues)[0] == code, pat.issues
    assert spans(text, pat.issues)[0] == span


def test_missing_arrow_covers_the_pattern():
    pat = parse("rearrange", "b c h w")
    assert codes(pat.issues) == ["SHP101"] and (pat.issues[0].start, pat.issues[0].end) == (0, 7)
    assert pat.output is None


def test_several_problems_are_all_reported():
    pat = parse("rearrange", "b\tc -> _d e e")
    assert codes(pat.issues) == ["SHP102", "SHP103", "SHP106"]


def test_einsum_pattern():
    text = "b _ i, b _ i -> _"
    pat = parse("einsum", text)
    assert pat.ok and len(pat.inputs) == 2
    assert [text[e.start : e.end] for e in pat.inputs] == ["b _ i", " b _ i "]
    assert codes(parse("einsum", "i j, j k").issues) == ["SHP101"]
    assert codes(parse("einsum", "i i -> i").issues) == []  # repeats allowed on the left
    assert codes(parse("einsum", "i -> i i").issues) == ["SHP106"]


def test_pack_pattern():
    text = "b\t* (c) _ b"
    pat = parse("pack", text)
    assert codes(pat.issues) == ["SHP103", "SHP103", "SHP106"]
    assert spans(text, pat.issues) == ["(c)", "_", "b"]
    assert codes(parse("unpack", "b c").issues) == ["SHP108"]
    assert codes(parse("pack", "* b *").issues) == ["SHP108"]
    assert parse("pack", " b  *\n c ").ok


def test_axis_names():
    assert check_axis_name("d_model") is None
    assert check_axis_name("for") is None  # einops only warns about keywords
    assert check_axis_name("_") is not None and check_axis_name("_", allow_underscore=True) is None
    assert check_axis_name("x_") is not None and check_axis_name("é") is None


# -- hypothesis: the parser agrees with einops' ParsedExpression ----------------------------------

ALPHABET = [
    "a",
    "b",
    "c",
    " ",
    " ",
    "(",
    ")",
    ".",
    "...",
    "_",
    "1",
    "0",
    "2",
    "01",
    "…",
    "\t",
    "٣",
    "é",
    "x_",
    "ab",
    "-",
    ">",
]


def _composition(expr) -> list:
    out = []
    for g in expr.groups:
        if g.is_ellipsis:
            out.append(ELLIPSIS)
        else:
            out.append([("anon", a.value) if a.is_anonymous else a.name for a in g.axes])
    return out


def _einops_composition(pe: ParsedExpression) -> list:
    out = []
    for c in pe.composition:
        if isinstance(c, str):
            out.append(c)
        else:
            out.append([("anon", a.value) if isinstance(a, AnonymousAxis) else a for a in c])
    return out


@settings(max_examples=1500)
@given(
    st.lists(st.sampled_from(ALPHABET), max_size=10).map("".join),
    st.sampled_from([(False, False), (True, True), (True, False)]),
)
def test_expression_matches_einops_parser(text, flags):
    allow_underscore, allow_duplicates = flags
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ref = ParsedExpression(
                text, allow_underscore=allow_underscore, allow_duplicates=allow_duplicates
            )
        except Exception:  # noqa: BLE001 - einops rejecting the expression
            ref = None
    expr = parse_expression(
        text, allow_underscore=allow_underscore, allow_duplicates=allow_duplicates
    )
    assert (ref is not None) == (not expr.issues), (text, expr.issues)
    if ref is not None:
        assert _composition(expr) == _einops_composition(ref), text
        assert expr.has_ellipsis == ref.has_ellipsis
        assert expr.has_ellipsis_parenthesized == ref.has_ellipsis_parenthesized
    for issue in expr.issues:
        assert 0 <= issue.start < issue.end <= len(text), (text, issue)


@settings(max_examples=600)
@given(
    st.lists(
        st.sampled_from(["a", "b", "*", " ", "\t", "\n", "_", "2", "(a)", "...", "é", "a_"]),
        max_size=8,
    ).map("".join)
)
def test_pack_pattern_matches_einops(text):
    try:
        analyze_pattern.__wrapped__(text, "pack")
        ok = True
    except Exception:  # noqa: BLE001
        ok = False
    assert ok == parse("pack", text).ok, (text, parse("pack", text).issues)


# -- letters ----------------------------------------------------------------------------------


def test_letters_structure():
    eq = parse_letters("bij, bjk -> bik")
    assert eq.ok and [t.letters for t in eq.inputs] == [("b", "i", "j"), ("b", "j", "k")]
    assert [lab.char for lab in eq.output.labels] == ["b", "i", "k"]
    implicit = parse_letters("ba,Ac")
    assert implicit.output is None and implicit.implicit_output() == ("A", "a", "b", "c")
    assert parse_letters("...ij->...ji").inputs[0].has_ellipsis


@pytest.mark.parametrize(
    ("eq", "code", "span"),
    [
        ("i_j,jk->ik", "SHP109", "_"),
        ("ij,j\tk->ik", "SHP109", "\t"),
        ("ié->i", "SHP109", "é"),
        ("ij->ii", "SHP106", "i"),
        ("ij->iz", "SHP211", "z"),
        ("i.j->i", "SHP105", "."),
        ("......i->i", "SHP105", "."),
        ("ij->i->j", "SHP101", "->"),
        ("i. . .->i", "SHP105", "."),
    ],
)
def test_letter_issues(eq, code, span):
    issues = parse_letters(eq).issues
    assert code in codes(issues), issues
    first = next(i for i in issues if i.code == code)
    assert eq[first.start : first.end] == span


def test_letters_hint_named_axes():
    issues = parse_letters("batch_seq, seq_d -> batch_d").issues
    assert issues and "einops.einsum" in issues[0].message
