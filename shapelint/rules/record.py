"""The rule record, below the families (tool, pattern, shapes, ...) that fill
it in and the catalog (__init__.py) that assembles them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Example:
    """Code that triggers its rule, and what shapelint makes of it, pinned exactly
    (tests/test_rule_catalog.py holds the analysis to it, docs/rules.md shows it):
    every diagnostic of the snippet as `LINE:COL CODE message` (1-based, columns in
    characters), the text `check --fix` writes (None: it leaves the snippet as it
    is) and, where it differs, the text `check --fix --unsafe-fixes` writes."""

    source: str
    expect: tuple[str, ...]
    fixed: str | None = None
    unsafe_fixed: str | None = None


@dataclass(frozen=True)
class Fix:
    """What `check --fix` does for a rule, and whether it may change what the code
    computes. `unsafe` says why it can (then it is applied only with
    --unsafe-fixes); `unsafe_when` names the case in which an otherwise safe fix can,
    and why: that rewrite alone needs --unsafe-fixes."""

    description: str
    unsafe: str = ""
    unsafe_when: str = ""

    @property
    def safety(self) -> str:
        return "unsafe" if self.unsafe else "safe"

    def __post_init__(self) -> None:
        if self.unsafe and self.unsafe_when:
            raise ValueError("a fix is unsafe always or in one case, not both")

    @property
    def short(self) -> str:
        """For a list of rules: `safe`, `unsafe`, or `safe, one case unsafe`."""
        return "safe, one case unsafe" if self.unsafe_when else self.safety

    def label(self) -> str:
        """`safe`, `unsafe: why` or `safe, unsafe when ...` for people."""
        if self.unsafe:
            return f"unsafe: {self.unsafe}"
        return f"safe; unsafe when {self.unsafe_when}" if self.unsafe_when else "safe"


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str  # error | warning | info
    summary: str
    explanation: str
    invalid: tuple[Example, ...] = ()
    valid: tuple[str, ...] = ()
    # Rules off by default are reported only when selected explicitly (--select).
    default: bool = True
    fix: Fix | None = field(default=None)
    # The call's own text decides it (a pattern einops refuses whatever the sizes): an
    # error wherever the line may run, on a path `check` cannot decide too
    # (analysis/plain_paths.py); else an error on such a path is a warning with its condition.
    any_path: bool = False
