"""Quoting long text in a message by its ends, never cutting a token in two."""

from __future__ import annotations

import re

# A token: an arrow or two-character operator, an ellipsis, a name or number, or any
# other single non-space character.
_TOKEN = re.compile(r"->|\*\*|//|[=!<>]=|\.\.\.|[\w.]+|\S")
MARK = " … "


def one_line(text: str) -> str:
    return " ".join(text.split())


def ends(text: str, limit: int = 60) -> str:
    """`text` on one line; past `limit` characters, its first and last whole tokens
    around " … " (the mark is never inside a name, a number or an operator)."""
    text = one_line(text)
    if len(text) <= limit:
        return text
    budget = max(limit - len(MARK), 2) // 2
    tokens = list(_TOKEN.finditer(text))
    head_end = 0
    for m in tokens:
        if m.end() > budget and head_end:
            break
        head_end = m.end()
    tail_start = len(text)
    for m in reversed(tokens):
        if len(text) - m.start() > budget and tail_start < len(text):
            break
        if m.start() < head_end:
            break
        tail_start = m.start()
    if tail_start <= head_end:
        return text
    return text[:head_end].rstrip() + MARK + text[tail_start:].lstrip()
