"""Diagnostic output formats: text (ruff-like), json, sarif, github. The number
and formula formatting every face uses is in numbers.py."""

from __future__ import annotations

from collections.abc import Callable

from shapelint.diagnostics import Diagnostic
from shapelint.report.text import format_json, format_text


def format_sarif(diags: list[Diagnostic], n_files: int) -> str:
    from shapelint.report.sarif import format_sarif as sarif

    return sarif(diags, n_files)


def format_github(diags: list[Diagnostic], n_files: int) -> str:
    from shapelint.report.github import format_github as github

    return github(diags, n_files)


FORMATTERS: dict[str, Callable[[list[Diagnostic], int], str]] = {
    "text": format_text,
    "json": format_json,
    "sarif": format_sarif,
    "github": format_github,
}
