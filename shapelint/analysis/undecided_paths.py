"""Findings on one of several paths a target's run cannot decide between (issue 25).

A target's run takes both branches of an `if` whose test it cannot decide (and of
`a if c else b`), each case of a `match`, a `try`'s body and its handlers, and each of
the modules or functions an attribute may hold (choices.py). Each of those constructs
is a Group, each way through it an Alternative, nested as the run nests them (an
alternative inside another's callee is inside it). An error found on one alternative
raises only where that alternative runs, and torch may take another: as mypy and
pyright treat a union, an error is definite where every alternative that can run
raises, and otherwise a warning that names the condition under which it raises. An
alternative raises where an error lies on it outside any undecided construct of its
own, where a construct on it raises on every alternative, or where its path surely
raised (a `raise` statement: raising.py).
"""

from __future__ import annotations

from collections.abc import Callable


class Alternative:
    """One way through a Group; `why` says when it runs (`` `x.sum() > 0` (line 28)``),
    given as the text or as a function that makes it, called at the first read: only
    an alternative that a finding lies on is ever named, and the text of every `if`
    test run was 1% of a check."""

    __slots__ = ("group", "_why", "groups", "raised")

    def __init__(self, group: Group, why: str | Callable[[], str]) -> None:
        self.group = group
        self._why = why
        self.groups: list[Group] = []  # the undecided constructs met on this way
        self.raised = False  # the path surely raised (a `raise`)

    @property
    def why(self) -> str:
        why = self._why
        if not isinstance(why, str):
            why = self._why = why()
        return why


class Group:
    """One undecided construct, inside the alternative (or none) the run was on."""

    __slots__ = ("parent", "alternatives")

    def __init__(self, parent: Alternative | None) -> None:
        self.parent = parent
        self.alternatives: list[Alternative] = []
        if parent is not None:
            parent.groups.append(self)

    def add(self, why: str | Callable[[], str]) -> Alternative:
        alt = Alternative(self, why)
        self.alternatives.append(alt)
        return alt

    def copy(self, parent: Alternative | None, copies: dict) -> Group:
        """The group and what lies inside it again, under parent (a memoised run
        reused there), each alternative's copy in copies by the original's id."""
        group = Group(parent)
        for alt in self.alternatives:
            twin = group.add(alt._why)  # (the text, or what makes it)
            twin.raised = alt.raised
            copies[id(alt)] = twin
            for inner in alt.groups:
                inner.copy(twin, copies)
        return group


class Verdicts:
    """Which alternatives raise, given where the errors of one run were found."""

    def __init__(self, found_on: set) -> None:
        self.found_on = found_on  # the innermost alternatives errors lie on
        self.memo: dict[int, bool] = {}

    def raises(self, alt: Alternative) -> bool:
        known = self.memo.get(id(alt))
        if known is None:
            self.memo[id(alt)] = False  # a cycle cannot happen; a guard all the same
            known = alt.raised or alt in self.found_on or any(map(self.every, alt.groups))
            self.memo[id(alt)] = known
        return known

    def every(self, group: Group) -> bool:
        """Every alternative of the group raises: so does the construct."""
        return bool(group.alternatives) and all(map(self.raises, group.alternatives))

    def conditions(self, alt: Alternative | None) -> list[str]:
        """The conditions, outermost first, under which an error found on alt raises:
        one per construct on its way whose other alternatives may not raise; none
        where it is definite."""
        out: list[str] = []
        while alt is not None:
            if not self.every(alt.group):
                out.append(alt.why)
            alt = alt.group.parent
        return out[::-1]


def condition_of(places, verdicts: Verdicts) -> str | None:
    """The condition an error found at places (the innermost alternatives it was
    found on, None for none) raises under; None where it is definite on one of them."""
    best: list[str] | None = None
    for alt in places:
        conds = verdicts.conditions(alt)
        if not conds:
            return None
        if best is None or len(conds) < len(best):
            best = conds
    return " and ".join(best) if best else None


def conditional_text(message: str, condition: str) -> str:
    """A finding's message with the condition under which it raises."""
    return f"{message}; it raises only if {condition}, which is not known here"
