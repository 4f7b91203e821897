"""The rule record, below the families (tool, pattern, shapes, ...) that fill
it in and the catalog (__init__.py) that assembles them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str  # error | warning | info
    summary: str
    explanation: str
    invalid: tuple[str, ...] = ()
    valid: tuple[str, ...] = ()
    # Rules off by default are reported only when selected explicitly (--select).
    default: bool = True
    fix: str | None = field(default=None)
