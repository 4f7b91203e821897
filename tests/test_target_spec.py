"""`PATH::QUALNAME`, parsed once (notation/target.py) for every face."""

from __future__ import annotations

from shapelint.notation.target import Target


def test_the_last_separator_splits_path_and_qualname():
    assert Target.parse("pkg/m.py::Block.forward") == Target("pkg/m.py", "Block.forward")
    assert Target.parse("C::/x.py::f") == Target("C::/x.py", "f")


def test_a_bare_path_has_no_qualname_and_an_empty_one_is_kept():
    assert Target.parse("m.py").qualname is None
    assert Target.parse("m.py::").qualname == ""


def test_str_gives_back_the_text():
    for text in ("m.py", "m.py::", "a/m.py::Net", "C::/x.py::f"):
        assert str(Target.parse(text)) == text
