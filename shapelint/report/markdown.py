"""Text from the analysed files (paths, names, figures that quote them) made inert
in markdown: no `|` that splits a table row, no HTML, no link, no emphasis.

A file name is whatever the file system allows: `a|b.py`, `<img src=x>.py`,
`[click](https://example.com).py` and `www.example.com/m.py` (which GitHub turns into
a link on its own) all happen. A code span shows its text literally (no HTML, link or
autolink inside it), so names and paths go in one; in a table, GitHub splits rows
on `|` before it reads spans, so a `|` is escaped there too (and shown as `|`).
"""

from __future__ import annotations

import re

from shapelint.diagnostics import safe_text

_BACKTICKS = re.compile(r"`+")
_PIPE = re.compile(r"(\\*)\|")
# Every ASCII punctuation character markdown gives a meaning in running text: emphasis,
# links and images, HTML and entities, code, strikethrough, math, escapes, tables.
_SPECIAL = re.compile(r"([\\`*_\[\]<>&|~$!#@])")
# GitHub links `www.x`, `scheme://x` and `a@b.c` in plain text too: an escaped '.', ':'
# or '@' there is no longer that pattern in the source it matches on.
_AUTOLINK = re.compile(r"(?i)(?<=www)\.|:(?=//)")


def code(s: str, table: bool = True) -> str:
    """s as an inert code span (`table`: a cell of a table)."""
    s = safe_text(s)
    if table:
        # GitHub splits a row at each '|' that no backslash escapes, pairing backslashes
        # first: so those before a '|' are doubled (then shown doubled, in this one case).
        s = _PIPE.sub(lambda m: m.group(1) * 2 + "\\|", s)
    runs = [len(m) for m in _BACKTICKS.findall(s)]
    fence = "`" * next(n for n in range(1, len(runs) + 2) if n not in runs)
    # A span that starts or ends with a backtick (or a space) needs a space of padding,
    # which the renderer strips again.
    pad = " " if s[:1] in ("`", " ") or s[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def prose(s: str) -> str:
    """s in running text, its backtick-quoted parts as code spans (a note written
    with `self.training` in it), every other markdown character escaped."""
    parts = _QUOTED.split(s)
    return "".join(code(p[1:-1], table=False) if i % 2 else text(p) for i, p in enumerate(parts))


_QUOTED = re.compile(r"(`[^`]+`)")


def text(s: str) -> str:
    """s in running text or a table cell, every markdown character escaped."""
    s = _SPECIAL.sub(r"\\\1", safe_text(s))
    return _AUTOLINK.sub(lambda m: "\\" + m.group(0), s)
