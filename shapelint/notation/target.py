"""`PATH::QUALNAME`, the one spelling of a target (`cost`, `run`), parsed once.

A bare PATH is a Target without a qualname; `PATH::` keeps an empty one, so that
each face can say what it expects there."""

from __future__ import annotations

from dataclasses import dataclass

SEPARATOR = "::"


@dataclass(frozen=True)
class Target:
    path: str
    qualname: str | None = None  # None: no `::` (the whole file)

    @classmethod
    def parse(cls, text: str) -> Target:
        # The last `::` separates: a path may hold one, a qualified name never does.
        path, sep, qual = text.rpartition(SEPARATOR)
        return cls(path, qual) if sep else cls(text)

    def __str__(self) -> str:
        return self.path if self.qualname is None else f"{self.path}{SEPARATOR}{self.qualname}"
