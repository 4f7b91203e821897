"""The standard library's `re` functions over known strings, in a target run:
`re.findall`, `re.split`, `re.sub`, `re.escape` (a class name matched against
a table's keys, `re.findall(f"({'|'.join(TABLE)})", type(self).__name__)`,
deciding which layer a constructor builds).

They are pure functions of their arguments, so the value is what Python's own
`re` gives on the same strings and flags. Anything else is not known: an
argument not known, a replacement that is a function, a pattern `re` refuses
(Python raises re.error there: no value to give). A pattern is run only where
its matching is bounded: no quantified group (`(a+)+`, `(x|y)*`, where
backtracking may take exponential time) and few quantifiers, on a string of
bounded length, since the analysis' time budget cannot interrupt `re`'s C code.
"""

from __future__ import annotations

import re

from shapelint.notation.symbolic import Expr
from shapelint.ops.values import IntV, NoneV, StrV, TupleV, Value

_MAX_TEXT = 4096
_MAX_QUANTIFIERS = 4
_QUANTIFIED_GROUP = re.compile(r"\)[*+?{]")
_QUANTIFIER = re.compile(r"(?<!\\)[*+{]")
# the keywords each function takes after its strings, in order
_TAIL = {
    "findall": ("flags",),
    "split": ("maxsplit", "flags"),
    "sub": ("count", "flags"),
}


def flag(qual: str) -> Value | None:
    """`re.IGNORECASE`, `re.M`, ...: the flag's int, as `re` defines it (a
    RegexFlag, an int subclass); None for any other name."""
    module, _, name = qual.rpartition(".")
    if module != "re" or not name.isupper():
        return None
    value = getattr(re, name, None)
    return IntV(Expr.const(int(value))) if isinstance(value, re.RegexFlag) else None


def call(qual: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """The value of `re.<name>(...)` where every argument is known; None where
    it is not one of these calls or not known."""
    module, _, name = qual.rpartition(".")
    if module != "re":
        return None
    if name == "escape":
        if len(args) == 1 and not kwargs and (text := _text(args[0])) is not None:
            return StrV(re.escape(text))
        return None
    if name not in _TAIL:
        return None
    strings = 3 if name == "sub" else 2
    texts = [_text(a) for a in args[:strings]]
    if len(texts) != strings or any(t is None for t in texts):
        return None
    ints = _ints(args[strings:], kwargs, _TAIL[name])
    if ints is None or not _bounded(texts[0], texts[-1]):
        return None
    try:
        pattern = re.compile(texts[0], ints.get("flags", 0))
        if name == "findall":
            return _listed(pattern.findall(texts[1]))
        if name == "split":
            return _listed(pattern.split(texts[1], ints.get("maxsplit", 0)))
        return StrV(pattern.sub(texts[1], texts[2], ints.get("count", 0)))
    except (re.error, TypeError, ValueError, IndexError):  # Python raises: no value
        return None


def _text(v: Value) -> str | None:
    return v.value if isinstance(v, StrV) else None


def _ints(args: list[Value], kwargs: dict[str, Value], names: tuple[str, ...]):
    """The trailing int arguments by name, positional or keyword; None where one
    is not a known int or not one the function takes."""
    if len(args) > len(names) or not set(kwargs) <= set(names[len(args) :]):
        return None
    out: dict[str, int] = {}
    for key, v in [*zip(names, args), *kwargs.items()]:
        n = v.value.value if isinstance(v, IntV) and v.value is not None else None
        if n is None:
            return None
        out[key] = n
    return out


def _bounded(pattern: str, text: str) -> bool:
    """Whether matching is surely quick: no quantified group, few quantifiers,
    a text of bounded length."""
    return (
        len(text) <= _MAX_TEXT
        and _QUANTIFIED_GROUP.search(pattern) is None
        and len(_QUANTIFIER.findall(pattern)) <= _MAX_QUANTIFIERS
    )


def _listed(items: list) -> Value:
    """A list as `re` returns it: strings, None for a group that took no part in
    a split, a tuple of strings per match of a pattern with several groups."""
    return TupleV(tuple(_item(i) for i in items), kind="list")


def _item(i) -> Value:
    if i is None:
        return NoneV()
    if isinstance(i, tuple):
        return TupleV(tuple(_item(j) for j in i), kind="tuple")
    return StrV(i)
