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


# A module of the project with a layer of a library nobody can see (no stub, no
# source): `Layer(dim)` runs a known Linear, then an unknown call on its result
# whose output it drops, so what follows keeps a known shape. Module text, from
# line 1 (the targets' tests read line numbers off it).
HOOKED_LAYER = """
import torch
from torch import nn
from somewhere_else import Mystery

class Layer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.mystery = Mystery(dim)

    def forward(self, x):
        h = self.proj(x)
        self.mystery(h)  # a hook of its own: h goes on, known
        return h
"""
