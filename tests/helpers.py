"""Run the full analysis on a snippet, as every face does."""

from __future__ import annotations

import textwrap

from shapelint.analysis.driver import analyze_text


def diagnose(code: str, path: str = "snippet.py", **options):
    return analyze_text(path, textwrap.dedent(code), options or None).diagnostics


def codes(code: str, **options) -> list[str]:
    return [d.code for d in diagnose(code, **options)]


def analyze(code: str, path: str = "snippet.py", **options):
    return analyze_text(path, textwrap.dedent(code), options or None)
