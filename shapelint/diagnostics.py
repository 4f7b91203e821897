"""The Diagnostic record every face (CLI, flake8, reports, runtime) shares."""

from __future__ import annotations

from dataclasses import asdict, dataclass


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

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(d: dict) -> Diagnostic:
        return Diagnostic(**d)
