"""An incomplete total always names why (analysis/target.incomplete_reasons): the
calls not costed, each statement that may raise on an alternative the run cannot
decide (with its file), or, where a rule left neither, the target's own call with
its notes. `unknown` is the list every face prints: json, text's "not costed",
markdown and github."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from shapelint.analysis.target import TargetResult, target_json
from shapelint.cli import main
from shapelint.ops.values import Cost

# The top level of a module the target's file imports may raise (an unpacking of
# three values into two where an environment variable is set): the forward the
# target runs calls a function of that module.
LIB = textwrap.dedent(
    """\
    import os

    if os.environ.get("SHAPELINT_TEST_FLAG"):
        parts = (1, 2, 3)
        a, b = parts


    def helper(x):
        return x @ x.T
    """
)

MODEL = textwrap.dedent(
    """\
    import os

    import torch
    from torch import nn

    from lib import helper


    class Imported(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)

        def forward(self, x):
            return helper(self.lin(x))


    class Forward(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)

        def forward(self, x):
            if os.environ.get("SHAPELINT_TEST_FLAG"):
                a, b = (1, 2, 3)
            return self.lin(x)


    class Built(nn.Module):
        def __init__(self):
            super().__init__()
            if os.environ.get("SHAPELINT_TEST_FLAG"):
                a, b = (1, 2, 3)
            self.lin = nn.Linear(8, 8)

        def forward(self, x):
            return self.lin(x)
    """
)


def _cost(tmp_path, cls: str, fmt: str = "json"):
    (tmp_path / "lib.py").write_text(LIB)
    p = tmp_path / "model.py"
    p.write_text(MODEL)
    args = ["cost", f"{p}::{cls}", "--input", "x=4,8", "--no-cache", "--format", fmt]
    return CliRunner().invoke(main, args)


def _line(source: str, text: str, after: str = "") -> int:
    """The line of source holding text (the first after the one holding `after`)."""
    lines = source.splitlines()
    start = next(i for i, s in enumerate(lines, 1) if after in s) if after else 0
    return next(i for i, s in enumerate(lines, 1) if i > start and text in s)


@pytest.mark.parametrize(
    ("cls", "source", "file"),
    [("Imported", LIB, "lib.py"), ("Forward", MODEL, "model.py"), ("Built", MODEL, "model.py")],
    ids=["imported", "forward", "constructor"],
)
def test_a_statement_that_may_raise_is_named_in_unknown(tmp_path, cls, source, file):
    r = _cost(tmp_path, cls)
    assert r.exit_code == 0, r.output
    t = json.loads(r.output)["target"]
    assert not t["complete"] and t["flops_value"] is None
    (d,) = t["conditional"]
    (u,) = t["unknown"]
    line = _line(source, "a, b = ", "" if source is LIB else f"class {cls}")
    assert (u["op"], u["line"], u["path"]) == ("SHP316", line, str(tmp_path / file))
    assert u["why"].startswith("may raise: ") and d["message"] in u["why"]


def test_every_face_names_the_statement_in_another_file(tmp_path):
    line = _line(LIB, "a, b = ")
    text = _cost(tmp_path, "Imported", "text").output
    assert text.splitlines()[0].endswith(f"1 call unknown: lib.py:{line} SHP316")
    # its file as the target's path names it (here, absolute), as the warnings do
    where = f"{tmp_path / 'lib.py'}:{line}  SHP316: may raise: "
    missing = text.split("  not costed:\n", 1)[1].splitlines()
    assert missing[0].startswith("    " + where)
    markdown = _cost(tmp_path, "Imported", "markdown").output
    assert "- " + where in markdown.split("Not costed:", 1)[1]
    github = _cost(tmp_path, "Imported", "github").output
    assert "(lower bound)" in github and where in github


def test_a_total_no_call_explains_names_the_target_call():
    # no record below it, nothing conditional: the notes of its cost are the reason
    why = "analysis stopped after 10 s (the time budget): not costed"
    res = TargetResult("M", Cost(None, None, None, [why], complete=False))
    t = target_json(res, {})
    assert not t["complete"]
    assert t["unknown"] == [{"line": 1, "op": "call M", "why": why}]


def test_a_total_with_no_notes_still_says_it_is_incomplete():
    res = TargetResult("f", Cost(None, None, None, [], complete=False))
    (u,) = target_json(res, {})["unknown"]
    assert u["op"] == "call f" and "incomplete" in u["why"]
