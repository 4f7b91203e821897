"""Messages a person acts on: one finding per typo with its fix, names from the
user's code (never a stub's letters), long text quoted by whole tokens."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from shapelint.notation.quoting import MARK, ends
from shapelint.notation.suggest import closest, regrouping
from tests.helpers import diagnose

E = "import torch\nfrom einops import rearrange\nx = torch.zeros(2, 3, 4, 5)\n"


def test_run_together_axes_are_one_finding_with_the_regrouping():
    (d,) = diagnose(E + 'y = rearrange(x, "b h s d -> b s (hd)")\n')
    assert d.code == "SHP201" and "did you mean '(h d)'?" in d.message


def test_a_misspelt_axis_is_one_finding():
    (d,) = diagnose(E + 'y = rearrange(x, "b h seq d -> b h sqe d")\n')
    assert d.code == "SHP201" and "did you mean 'seq'?" in d.message


def test_unrelated_one_sided_axes_still_each_get_theirs():
    got = diagnose(E + 'y = rearrange(x, "b h s d -> b h s e")\n')
    assert [d.code for d in got] == ["SHP201", "SHP201"]
    assert not any("did you mean" in d.message for d in got)


def test_a_spelt_out_keyword_suggests_the_pattern_axis():
    (d,) = diagnose(E + 'y = rearrange(x, "b h s d -> (b h) s d", batch=2)\n')
    assert d.code == "SHP206" and "did you mean b=?" in d.message


def test_matmul_mismatch_names_positions_not_stub_letters():
    src = "import torch\nimport torch.nn.functional as F\n"
    src += "y = F.linear(torch.zeros(3, 512), torch.zeros(7, 256))\n"
    (d,) = diagnose(src)
    assert d.code == "SHP307"
    assert "dim -1 of input [3, 512]" in d.message and "dim -1 of weight [7, 256]" in d.message
    assert not re.search(r"\b[ijk] is\b", d.message)


def test_suggest_helpers():
    assert regrouping("hd", ["d", "h", "s"]) == ["h", "d"]
    assert regrouping("hd", ["s"]) is None
    assert closest("batch", ["b", "s"]) == "b"
    assert closest("sqe", ["seq", "d"]) == "seq"
    assert closest("zzz", ["b", "s"]) is None


@settings(max_examples=80)
@given(
    st.lists(
        st.sampled_from(["a1", "seq_len", "(", ")", "->", "...", "b", "x.y", ","]), max_size=60
    )
)
def test_ends_never_cuts_a_token(tokens):
    text = " ".join(tokens)
    out = ends(text, 30)
    if out == text:
        return
    head, tail = out.split(MARK)
    # Both ends are made of whole tokens of the text.
    assert text.startswith(head) and text.endswith(tail)
    assert text[len(head) : len(head) + 1] in (" ", "")
    assert text[len(text) - len(tail) - 1] == " "
