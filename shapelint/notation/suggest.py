""" "Did you mean": the fix a typo in a pattern or a keyword most likely needs.

Two kinds: a regrouping (``(hd)`` for ``(h d)``: one name that is the others
run together) and a near spelling (edit distance, or an abbreviation such as
``batch=`` for the pattern's ``b``). Pure string functions.
"""

from __future__ import annotations

from itertools import permutations


def regrouping(word: str, names: list[str], limit: int = 4) -> list[str] | None:
    """The names (2 or more, in the order written) whose concatenation is `word`."""
    pool = [n for n in names if n and n in word]
    for k in range(2, min(limit, len(pool)) + 1):
        for combo in permutations(pool, k):
            if "".join(combo) == word:
                return list(combo)
    return None


def distance(a: str, b: str) -> int:
    """Levenshtein distance, with a swap of two neighbours counting one."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def closest(word: str, names: list[str]) -> str | None:
    """The one name `word` most likely misspells or spells out (`batch` for `b`)."""
    best, best_d = None, None
    for n in names:
        if n == word:
            continue
        d = distance(word, n)
        if d > max(1, min(len(word), len(n)) // 3):
            # An abbreviation: `b` for `batch`, `seq` for `seq_len`.
            if not (word.startswith(n) or n.startswith(word)):
                continue
            d = abs(len(word) - len(n)) + 0.5
        if best_d is None or d < best_d:
            best, best_d = n, d
    return best
