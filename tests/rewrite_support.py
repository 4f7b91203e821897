"""Running what a SHP4xx finding suggests: its rewrite, and the original it replaces."""

from __future__ import annotations

import ast
import textwrap
import types

import einops
import torch

from shapelint.analysis.interpreter import ModuleAnalyzer
from shapelint.analysis.source import SourceFile


def findings(code: str, **options):
    text = textwrap.dedent(code)
    an = ModuleAnalyzer(SourceFile("snippet.py", text), ast.parse(text), options or None)
    an.run()
    return an.naming.findings


def only(code: str, **options):
    got = findings(code, **options)
    assert len(got) == 1, [f.message for f in got]
    return got[0]


def original_text(code: str, finding) -> str:
    return ast.get_source_segment(textwrap.dedent(code), finding.node)


def run_rewrite(finding, env: dict):
    ns = {"rearrange": einops.rearrange, "einsum": einops.einsum, "torch": torch, **env}
    return eval(finding.rewrite.call(), ns)  # noqa: S307 - test code evaluating our own output


def run_original(code: str, finding, env: dict):
    import numpy as np

    ns = {"torch": torch, "np": np, **env}
    return eval(original_text(code, finding), ns)  # noqa: S307


def load_module(text: str, name: str = "m") -> types.ModuleType:
    mod = types.ModuleType(name)
    exec(compile(text, f"<{name}>", "exec"), mod.__dict__)  # noqa: S102
    return mod


def distinct_sizes(n: int, start: int = 2) -> list[int]:
    """Sizes that are all different, so a wrong axis order cannot pass by luck."""
    return [start + i for i in range(n)]
