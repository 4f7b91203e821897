"""The letter notation of ``torch.einsum`` and ``numpy.einsum`` ("ij,jk->ik").

A port of the equation parsing in ATen's ``einsum`` (torch 2.x): labels are the
ASCII letters, plain spaces are ignored (a tab is not), each operand may hold one
``...``, the output follows the first ``->`` or, without an arrow, is the
ellipsis followed by the labels seen exactly once, in ASCII order. Pure: no
torch, no numpy. Issues use the same Issue type (and codes) as einops patterns.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from shapelint.notation.einops_pattern import ARROW, DOTS, DUPLICATE, Issue

ELLIPSIS = "..."
BAD_LETTER = "SHP109"
UNKNOWN_OUTPUT = "SHP211"


@dataclass(frozen=True)
class Label:
    """One subscript: a letter, or ELLIPSIS; offsets into the equation."""

    char: str
    start: int
    end: int

    @property
    def is_ellipsis(self) -> bool:
        return self.char == ELLIPSIS


@dataclass(frozen=True)
class Term:
    labels: tuple[Label, ...]
    start: int
    end: int

    @property
    def has_ellipsis(self) -> bool:
        return any(lab.is_ellipsis for lab in self.labels)

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(lab.char for lab in self.labels if not lab.is_ellipsis)


@dataclass(frozen=True)
class Equation:
    """``output`` is None when the equation has no arrow (implicit output)."""

    text: str
    inputs: tuple[Term, ...]
    output: Term | None
    issues: tuple[Issue, ...]

    @property
    def ok(self) -> bool:
        return not self.issues

    def implicit_output(self) -> tuple[str, ...]:
        counts: dict[str, int] = {}
        for term in self.inputs:
            for c in term.letters:
                counts[c] = counts.get(c, 0) + 1
        return tuple(sorted(c for c, n in counts.items() if n == 1))


def _is_label(ch: str) -> bool:
    return ch.isascii() and ch.isalpha()


def _looks_like_names(text: str) -> bool:
    return any(len(word) > 1 and word.isidentifier() for word in text.replace(",", " ").split())


@lru_cache(maxsize=2048)
def parse_letters(text: str) -> Equation:
    """Parse a torch.einsum / numpy.einsum equation (operand counts are the caller's)."""
    issues: list[Issue] = []
    hint = (
        " (torch.einsum takes single letters; for named axes use einops.einsum)"
        if _looks_like_names(text)
        else ""
    )
    arrow = text.find("->")
    lhs_end = len(text) if arrow < 0 else arrow
    if arrow >= 0 and text.find("->", arrow + 2) >= 0:
        second = text.find("->", arrow + 2)
        issues.append(
            Issue(ARROW, f"einsum equation '{text}' has more than one '->'", second, second + 2)
        )

    inputs: list[Term] = []
    labels: list[Label] = []
    term_start = 0
    ell_seen = False
    i = 0

    def bad(ch: str, pos: int) -> None:
        issues.append(
            Issue(
                BAD_LETTER,
                f"invalid subscript {ch!r} in einsum equation '{text}': subscripts are "
                f"letters a-z, A-Z{hint}",
                pos,
                pos + 1,
            )
        )

    def dots(pos: int, where: str, ellipsis_seen: bool) -> int:
        """Check a '.' at pos; return the index after what it consumed."""
        if ellipsis_seen:
            issues.append(Issue(DOTS, f"{where} has a second ellipsis '...'", pos, pos + 1))
            return pos + 1
        if not text.startswith("...", pos) or pos + 3 > (
            lhs_end if where != "output" else len(text)
        ):
            issues.append(
                Issue(DOTS, f"'.' in {where} is not part of an ellipsis '...'", pos, pos + 1)
            )
            return pos + 1
        return pos + 3

    while i < lhs_end:
        ch = text[i]
        if ch == " ":
            i += 1
        elif ch == ".":
            nxt = dots(i, f"operand {len(inputs)}", ell_seen)
            if nxt == i + 3:
                labels.append(Label(ELLIPSIS, i, i + 3))
                ell_seen = True
            i = nxt
        elif ch == ",":
            inputs.append(Term(tuple(labels), term_start, i))
            labels, term_start, ell_seen = [], i + 1, False
            i += 1
        else:
            if _is_label(ch):
                labels.append(Label(ch, i, i + 1))
            else:
                bad(ch, i)
            i += 1
    inputs.append(Term(tuple(labels), term_start, lhs_end))

    output: Term | None = None
    if arrow >= 0:
        counts = {c for term in inputs for c in term.letters}
        out: list[Label] = []
        seen: set[str] = set()
        ell_out = False
        i = arrow + 2
        stop = len(text) if text.find("->", arrow + 2) < 0 else text.find("->", arrow + 2)
        while i < stop:
            ch = text[i]
            if ch == " ":
                i += 1
            elif ch == ".":
                nxt = dots(i, "output", ell_out)
                if nxt == i + 3:
                    out.append(Label(ELLIPSIS, i, i + 3))
                    ell_out = True
                i = nxt
            elif not _is_label(ch):
                bad(ch, i)
                i += 1
            else:
                if ch in seen:
                    issues.append(
                        Issue(
                            DUPLICATE, f"output subscript '{ch}' appears more than once", i, i + 1
                        )
                    )
                elif ch not in counts:
                    issues.append(
                        Issue(
                            UNKNOWN_OUTPUT,
                            f"output subscript '{ch}' of einsum equation '{text}' appears in "
                            "no input operand",
                            i,
                            i + 1,
                        )
                    )
                seen.add(ch)
                out.append(Label(ch, i, i + 1))
                i += 1
        output = Term(tuple(out), arrow + 2, len(text))
    return Equation(text, tuple(inputs), output, tuple(sorted(issues, key=lambda x: x.start)))
