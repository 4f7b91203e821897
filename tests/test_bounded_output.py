"""Output and work linear in the input: repeated or one-sided axes are reported once
per kind with the list, and column mapping is linear in the line length."""

from __future__ import annotations

from shapelint.analysis.source import SourceFile
from tests.helpers import diagnose


def call(pattern: str, op: str = "rearrange", extra: str = "") -> str:
    return f'from einops import {op}\n\ndef f(x):\n    return {op}(x, "{pattern}"{extra})\n'


def test_repeated_axes_are_one_diagnostic_with_a_count():
    side = " ".join(["a"] * 8000)
    diags = diagnose(call(f"{side} -> a"))
    dup = [d for d in diags if d.code == "SHP106"]
    assert len(dup) == 1
    assert "7999" in dup[0].message.replace(",", "") or "8000" in dup[0].message.replace(",", "")
    assert len(dup[0].message) < 300


def test_many_repeated_names_are_listed_then_counted():
    side = " ".join(f"x{i} x{i}" for i in range(50))
    [d] = [d for d in diagnose(call(f"{side} -> x0")) if d.code == "SHP106"]
    assert "'x0', 'x1', 'x2'" in d.message and "more" in d.message
    assert len(d.message) < 300


def test_one_sided_axes_are_one_diagnostic_per_kind():
    left = " ".join(f"a{i}" for i in range(2000))
    diags = diagnose(call(f"{left} b -> b"))
    one_side = [d for d in diags if d.code == "SHP201"]
    assert len(one_side) == 1 and "1,996 more" in one_side[0].message
    assert len(one_side[0].message) < 400  # bounded, whatever the pattern's length
    both = diagnose(call("a b c -> d e"))
    assert sorted(
        d.message.split(": ", 1)[1].split(";")[0] for d in both if d.code == "SHP201"
    ) == [
        "axes 'a', 'b', 'c' appear only on the left",
        "axes 'd', 'e' appear only on the right",
    ]


def test_new_axes_without_length_are_one_diagnostic():
    diags = diagnose(call("h -> h c d", op="repeat", extra=""))
    [d] = [d for d in diags if d.code == "SHP202"]
    assert "'c', 'd'" in d.message


def test_a_single_axis_keeps_its_message():
    [d] = [d for d in diagnose(call("b b c -> b c")) if d.code == "SHP106"]
    assert d.message.endswith(": axis 'b' appears twice in 'b b c'")


def test_column_mapping_reads_each_line_once(monkeypatch):
    from shapelint.analysis import source

    built = []
    real = source.line_offsets
    monkeypatch.setattr(source, "line_offsets", lambda line: built.append(line) or real(line))
    line = "x = 'é' + '🙂' + " + "a" * 16000 + "\n"
    src = SourceFile("x.py", line)
    data = line.encode()
    for b in range(0, len(data) - 1, 3):
        if (data[b] & 0xC0) != 0x80:  # ast's columns are at character starts
            assert src.char_col(1, b) == len(data[:b].decode())
    assert len(built) == 1  # one table for the line, not one encoding per column
