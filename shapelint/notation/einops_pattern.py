"""The einops pattern language, parsed exactly as einops 0.8.2 parses it, with spans.

A port of ``einops.parsing.ParsedExpression`` and of the way ``rearrange``,
``reduce``, ``repeat``, ``einsum``, ``pack``/``unpack`` and the layers split their
patterns, keeping for every axis its offsets in the pattern string so that a
diagnostic can point inside the string. Pure: no einops, no torch, no libcst.

Faithful on purpose, including einops' own corners: only ``(``, ``)`` and the
space separate tokens (a tab is an unknown character); numbers are
``str.isdecimal`` (so ``"٣"`` is the anonymous axis 3 and ``"01"`` is the unit
axis); ``1`` and ``()`` are empty groups and a ``1`` inside parentheses vanishes;
``...`` is rewritten to the one-character ``…`` before tokenizing, so ``...a`` is
the invalid name ``…a`` and a literal ``…`` written in the pattern is an ellipsis
token too (but only ``...`` sets ``has_ellipsis``).

Where einops stops at the first error, this parser reports every error it can
in one expression, recovering at the next separator; any issue at all means
einops rejects the pattern.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from shapelint.notation.quoting import ends

ELLIPSIS = "…"  # einops' internal one-character ellipsis

# Issue codes of this module (the catalog is shapelint/rules/pattern.py).
ARROW = "SHP101"
UNKNOWN_CHAR = "SHP102"
BAD_NAME = "SHP103"
PARENS = "SHP104"
DOTS = "SHP105"
DUPLICATE = "SHP106"
ZERO_AXIS = "SHP107"
PACK_STAR = "SHP108"

TRANSFORM_OPS = ("rearrange", "reduce", "repeat", "einmix")


@dataclass(frozen=True)
class Issue:
    """A problem found in a pattern: offsets [start, end) into the pattern string,
    or, for a problem with a keyword argument, its name in ``kwarg``."""

    code: str
    message: str
    start: int = 0
    end: int = 0
    kwarg: str | None = None


@dataclass(frozen=True)
class Axis:
    """One elementary axis. ``name`` is the identifier, the digits of an anonymous
    axis, ``ELLIPSIS`` for an ellipsis, or ``"*"`` in a pack pattern."""

    name: str
    start: int
    end: int
    value: int | None = None  # length of an anonymous axis (always >= 2)

    @property
    def is_ellipsis(self) -> bool:
        return self.name == ELLIPSIS

    @property
    def is_anonymous(self) -> bool:
        return self.value is not None

    @property
    def key(self) -> object:
        """What einops puts in ``identifiers``: the name, or, for an anonymous axis,
        something equal to nothing else (einops' AnonymousAxis never compares equal)."""
        return self if self.is_anonymous else self.name


@dataclass(frozen=True)
class Group:
    """One entry of einops' ``composition``: a bare token or a parenthesized group.

    A bare ``1`` is an empty unparenthesized group; ``()`` an empty parenthesized
    one; a bare ellipsis is a group holding just the ellipsis axis.
    """

    axes: tuple[Axis, ...]
    start: int
    end: int
    parenthesized: bool = False

    @property
    def is_ellipsis(self) -> bool:
        """The bare ellipsis entry (einops stores it as the string ``…``)."""
        return not self.parenthesized and len(self.axes) == 1 and self.axes[0].is_ellipsis

    def axis_names(self) -> tuple[object, ...]:
        return tuple(a.key for a in self.axes)


@dataclass(frozen=True)
class Expression:
    """One side of a pattern (or one operand of an einsum)."""

    text: str
    start: int
    end: int
    groups: tuple[Group, ...] = ()
    has_ellipsis: bool = False
    has_ellipsis_parenthesized: bool | None = None
    issues: tuple[Issue, ...] = ()

    def axes(self) -> list[Axis]:
        return [a for g in self.groups for a in g.axes]

    @property
    def identifiers(self) -> set[object]:
        return {a.key for a in self.axes()}

    def spans_of(self, key: object) -> list[tuple[int, int]]:
        return [(a.start, a.end) for a in self.axes() if a.key == key]

    def display(self) -> str:
        return self.text.strip()


@dataclass(frozen=True)
class Pattern:
    """A parsed pattern: ``inputs`` (one expression, or one per einsum operand),
    ``output`` (None for pack/unpack, or when the arrow is wrong), ``issues``."""

    op: str
    text: str
    inputs: tuple[Expression, ...] = ()
    output: Expression | None = None
    issues: tuple[Issue, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.issues

    @property
    def left(self) -> Expression:
        return self.inputs[0]


def check_axis_name(name: str, allow_underscore: bool = False) -> str | None:
    """None when einops accepts ``name`` as an axis name, else the reason.

    Python keywords and ``axis`` are accepted (einops only warns about them).
    """
    if not name.isidentifier():
        return "not a valid python identifier"
    if name[0] == "_" or name[-1] == "_":
        if name == "_" and allow_underscore:
            return None
        return "axis names must not start or end with an underscore"
    return None


def quote_names(names: list[str], shown: int = 4) -> str:
    """ "'a', 'b', 'c'", or the first few and "and N more"."""
    quoted = ", ".join(f"'{ends(n, 30)}'" for n in names[:shown])
    rest = len(names) - shown
    return quoted + (f" and {rest:,} more" if rest > 0 else "")


def axes_phrase(names: list[str], one: str, many: str) -> str:
    """ "axis 'a' {one}" or "axes 'a', 'b' {many}"."""
    noun = "axis" if len(names) == 1 else "axes"
    return f"{noun} {quote_names(names)} {one if len(names) == 1 else many}"


@lru_cache(maxsize=4096)
def parse_expression(
    text: str,
    offset: int = 0,
    *,
    allow_underscore: bool = False,
    allow_duplicates: bool = False,
) -> Expression:
    """Parse one side of a pattern; ``offset`` is where ``text`` starts in the pattern."""
    issues: list[Issue] = []
    end = offset + len(text)

    def issue(code: str, message: str, s: int, e: int) -> None:
        issues.append(Issue(code, message, s, e))

    # The dots rule runs on the whole expression before anything else (as in einops).
    has_ellipsis = False
    chars: list[tuple[str, int, int]] = []
    if "." in text:
        n_ell = text.count("...")
        if n_ell == 0 or n_ell != 1 or text.count(".") != 3:
            if n_ell == 0:
                i = text.index(".")
                issue(
                    DOTS,
                    "dots are only allowed as an ellipsis '...'",
                    offset + i,
                    offset + i + 1,
                )
            else:
                first = text.index("...")
                rest = [i for i, c in enumerate(text) if c == "." and not first <= i < first + 3]
                i = rest[0] if rest else first
                issue(
                    DOTS,
                    "only one ellipsis '...' is allowed per expression, and no other dots",
                    offset + i,
                    offset + i + 1,
                )
            return Expression(text, offset, end, issues=tuple(issues))
        has_ellipsis = True
    i = 0
    while i < len(text):
        if text.startswith("...", i):
            chars.append((ELLIPSIS, offset + i, offset + i + 3))
            i += 3
        else:
            chars.append((text[i], offset + i, offset + i + 1))
            i += 1

    groups: list[Group] = []
    seen: set[str] = set()
    bracket: list[Axis] | None = None
    bracket_start = 0
    ell_parenthesized: bool | None = None

    # name as written ('...' rather than '…') -> [times seen again, first repeat's span]
    repeats: dict[str, list] = {}

    def add_axis(token: str, s: int, e: int) -> None:
        nonlocal ell_parenthesized
        shown = text[s - offset : e - offset]  # as written: '...' rather than '…'
        if token in seen and not (allow_underscore and token == "_") and not allow_duplicates:
            if shown in repeats:
                repeats[shown][0] += 1
            else:
                repeats[shown] = [1, s, e]
            return
        if token == ELLIPSIS:
            seen.add(token)
            if bracket is None:
                groups.append(Group((Axis(ELLIPSIS, s, e),), s, e))
                ell_parenthesized = False
            else:
                bracket.append(Axis(ELLIPSIS, s, e))
                ell_parenthesized = True
            return
        is_number = token.isdecimal()
        if is_number and int(token) == 1:
            if bracket is None:
                groups.append(Group((), s, e))
            return
        if is_number:
            value = int(token)
            if value <= 0:
                issue(
                    ZERO_AXIS,
                    f"anonymous axis '{token}' has length {value}; lengths must be positive",
                    s,
                    e,
                )
                return
            axis = Axis(token, s, e, value=value)
        else:
            reason = check_axis_name(token, allow_underscore)
            if reason is not None:
                issue(BAD_NAME, f"invalid axis name '{shown}': {reason}", s, e)
                return
            axis = Axis(token, s, e)
            seen.add(token)  # numbers are never duplicates: each is its own axis
        if bracket is None:
            groups.append(Group((axis,), s, e))
        else:
            bracket.append(axis)

    token: str | None = None
    tok_start = tok_end = 0
    for ch, s, e in chars:
        if ch in "() ":
            if token is not None:
                add_axis(token, tok_start, tok_end)
            token = None
            if ch == "(":
                if bracket is not None:
                    issue(PARENS, "parentheses cannot be nested (composition is one level)", s, e)
                else:
                    bracket = []
                    bracket_start = s
            elif ch == ")":
                if bracket is None:
                    issue(PARENS, "unbalanced ')' with no '(' before it", s, e)
                else:
                    groups.append(Group(tuple(bracket), bracket_start, e, parenthesized=True))
                    bracket = None
        elif ch.isalnum() or ch in ("_", ELLIPSIS):
            if token is None:
                token, tok_start = ch, s
            else:
                token += ch
            tok_end = e
        else:
            if token is not None:
                add_axis(token, tok_start, tok_end)
                token = None
            issue(UNKNOWN_CHAR, f"unknown character {ch!r} in an einops pattern", s, e)
    if token is not None:
        add_axis(token, tok_start, tok_end)
    if bracket is not None:
        issue(PARENS, "'(' is never closed", bracket_start, bracket_start + 1)
        groups.append(Group(tuple(bracket), bracket_start, end, parenthesized=True))
    if repeats:
        _report_repeats(issue, repeats, text)

    return Expression(
        text,
        offset,
        end,
        tuple(groups),
        has_ellipsis,
        ell_parenthesized,
        tuple(sorted(issues, key=lambda x: (x.start, x.end))),
    )


def _report_repeats(issue, repeats: dict[str, list], text: str) -> None:
    """One issue for every repeated name of a side, at the first repeat."""
    names = list(repeats)
    side = ends(text.strip())
    if len(names) == 1:
        again = repeats[names[0]][0]
        times = "twice" if again == 1 else f"{again + 1:,} times"
        message = f"axis '{names[0]}' appears {times} in '{side}'"
    else:
        message = f"axes {quote_names(names)} appear more than once in '{side}'"
    _, s, e = repeats[names[0]]
    issue(DUPLICATE, message, s, e)


def _split_arrow(text: str, op: str) -> tuple[tuple[int, int] | None, list[Issue]]:
    """(start, end) of the right side's text after the arrow, or the arrow issue."""
    parts = text.split("->")
    if len(parts) == 2:
        k = text.index("->")
        return (k, k + 2), []
    if len(parts) == 1:
        return None, [
            Issue(
                ARROW,
                f"{op} pattern '{text}' has no '->' between input and output",
                0,
                len(text),
            )
        ]
    first = text.index("->")
    second = text.index("->", first + 2)
    return None, [Issue(ARROW, f"{op} pattern '{text}' has more than one '->'", second, second + 2)]


def _collect(*exprs: Expression | None) -> tuple[Issue, ...]:
    return tuple(i for e in exprs if e is not None for i in e.issues)


@lru_cache(maxsize=4096)
def parse(op: str, text: str) -> Pattern:
    """Parse ``text`` as einops does for ``op``: rearrange, reduce, repeat, einmix
    (EinMix's pattern; its weight and bias shapes go through parse_expression),
    einsum, pack or unpack. The layers Rearrange and Reduce use rearrange/reduce."""
    if op in ("pack", "unpack"):
        return _parse_pack(op, text)
    if op == "einsum":
        return _parse_einsum(text)
    if op not in TRANSFORM_OPS:
        raise ValueError(f"unknown einops operation {op!r}")
    arrow, issues = _split_arrow(text, op)
    if arrow is None:
        return Pattern(op, text, issues=tuple(issues))
    left = parse_expression(text[: arrow[0]], 0)
    right = parse_expression(text[arrow[1] :], arrow[1])
    return Pattern(op, text, (left,), right, _collect(left, right))


def _parse_einsum(text: str) -> Pattern:
    if "->" not in text:
        issue = Issue(
            ARROW,
            f"einsum pattern '{text}' needs '->' and an output (einops.einsum has no implicit output)",
            0,
            len(text),
        )
        return Pattern("einsum", text, issues=(issue,))
    arrow, issues = _split_arrow(text, "einsum")
    if arrow is None:
        return Pattern("einsum", text, issues=tuple(issues))
    inputs: list[Expression] = []
    pos = 0
    for part in text[: arrow[0]].split(","):
        inputs.append(parse_expression(part, pos, allow_underscore=True, allow_duplicates=True))
        pos += len(part) + 1
    right = parse_expression(text[arrow[1] :], arrow[1], allow_underscore=True)
    return Pattern("einsum", text, tuple(inputs), right, _collect(*inputs, right))


def _parse_pack(op: str, text: str) -> Pattern:
    """pack/unpack split on any whitespace (``str.split()``), unlike the other ops."""
    tokens: list[tuple[str, int, int]] = []
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        j = i
        while j < len(text) and not text[j].isspace():
            j += 1
        tokens.append((text[i:j], i, j))
        i = j
    issues: list[Issue] = []
    seen: set[str] = set()
    for tok, s, e in tokens:
        if tok in seen:
            if tok == "*":
                issues.append(
                    Issue(PACK_STAR, f"{op} pattern '{text}' has more than one '*'", s, e)
                )
            else:
                issues.append(Issue(DUPLICATE, f"axis '{tok}' appears twice in '{text}'", s, e))
        seen.add(tok)
    if "*" not in seen:
        issues.append(
            Issue(
                PACK_STAR,
                f"{op} pattern '{text}' has no '*' (the axis that {op} "
                f"{'packs into' if op == 'pack' else 'splits'})",
                0,
                len(text),
            )
        )
    axes: list[Axis] = []
    for tok, s, e in tokens:
        if tok == "*":
            axes.append(Axis("*", s, e))
            continue
        reason = check_axis_name(tok)
        if reason is not None:
            issues.append(
                Issue(
                    BAD_NAME,
                    f"invalid axis name '{tok}' in {op} pattern: {reason} "
                    "(pack/unpack take plain names and one '*', no parentheses, "
                    "numbers or ellipsis)",
                    s,
                    e,
                )
            )
        axes.append(Axis(tok, s, e))
    expr = Expression(
        text,
        0,
        len(text),
        tuple(Group((a,), a.start, a.end) for a in axes),
        issues=tuple(issues),
    )
    return Pattern(op, text, (expr,), None, tuple(sorted(issues, key=lambda x: x.start)))
