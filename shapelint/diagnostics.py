"""The Diagnostic record every face (CLI, flake8, reports, runtime) shares."""

from __future__ import annotations

from dataclasses import asdict, dataclass


def safe_text(s: str) -> str:
    """s with every character that is not printable (control characters such as
    newlines and ESC, lone surrogates, bidi overrides) written as its Python escape,
    so that a string from the analysed code or a file name is encodable and inert in
    any output and stays on one line. Printable text (`·`, `≥`, letters) is kept."""
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else _escape(c) for c in s)


def _escape(c: str) -> str:
    return c.encode("unicode_escape").decode("ascii")


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding. line/column are 1-based; column counts characters, not bytes."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    severity: str
    message: str

    def __post_init__(self) -> None:
        # Escaped once, where every diagnostic is built: messages quote patterns.
        if not self.message.isprintable():
            object.__setattr__(self, "message", safe_text(self.message))

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(d: dict) -> Diagnostic:
        return Diagnostic(**d)
