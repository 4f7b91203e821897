"""What comes from the files (names, paths, the calls a figure misses) is inert in
every markdown table: judged by GitHub's own renderer (cmark-gfm), each row keeps
its cells, no link or HTML appears, and each cell shows the text as it was."""

from __future__ import annotations

from html.parser import HTMLParser

import cmarkgfm
import pytest
from click.testing import CliRunner
from cmarkgfm.cmark import Options

from shapelint.cli import main
from shapelint.cost.diff import Delta, FunctionChange
from shapelint.cost.review import render_markdown as render_diff
from shapelint.report import markdown as md

# File names the file system allows and markdown would read as markup.
NAMES = [
    "a|b.py",
    "<img src=x onerror=alert(1)>.py",
    "[click](https%3A example.com).py",
    "www.example.com.py",
    "a@b.co.py",
    "tick`s``.py",
    "back\\|slash.py",
    "_em_ *st* ~~del~~ $x$ &amp;.py",
]

SOURCE = (
    "import torch\n"
    "from jaxtyping import Float\n"
    "from torch import Tensor\n"
    "import www\n\n\n"
    'def mm(x: Float[Tensor, "b d"], w: Float[Tensor, "d e"]):\n'
    "    x = www.example.com(x)\n"  # a call of unknown cost, named as a link
    '    return torch.einsum("bd,de->be", x, w)\n'
)


class _Table(HTMLParser):
    """Rows of cells (their text) and every tag seen."""

    def __init__(self):
        super().__init__()
        self.rows: list[list[str]] = []
        self.tags: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def render(markdown: str) -> _Table:
    # UNSAFE lets raw HTML through, as a permissive renderer would: none must be there.
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    table = _Table()
    table.feed(html)
    return table


@pytest.mark.parametrize("name", NAMES)
def test_code_span_is_inert_and_exact(name):
    table = render(f"| A | B |\n| --- | --- |\n| {md.code(name)} | x |\n")
    assert table.rows[1] == [name, "x"] or "\\|" in name  # a '\|' shows its backslash twice
    assert len(table.rows[1]) == 2
    assert set(table.tags) <= {"table", "thead", "tbody", "tr", "th", "td", "code"}
    outside = render(f"see {md.code(name, table=False)} here")
    assert set(outside.tags) <= {"p", "code"}


def test_cost_markdown_table_survives_hostile_file_names(tmp_path):
    for name in NAMES:
        (tmp_path / name).write_text(SOURCE)
    r = CliRunner().invoke(
        main, ["cost", "--no-cache", "--format", "markdown", str(tmp_path)], catch_exceptions=False
    )
    assert r.exit_code == 0, r.output
    table = render(r.output)
    assert set(table.tags) <= {"table", "thead", "tbody", "tr", "th", "td", "code", "p", "em"}
    header, *rows = table.rows
    assert len(rows) == len(NAMES)
    shown = set()
    for row in rows:
        assert len(row) == len(header) == 4, row
        assert row[0] == "mm"
        path, _, line = row[1].rpartition(":")
        assert line == "7"
        shown.add(path.rpartition("/")[2])
        assert row[2].startswith("≥ ") and "www.example.com" in row[2]
    assert shown == {n for n in NAMES if "\\|" not in n} | {"back\\\\|slash.py"}


def test_cost_diff_markdown_survives_hostile_names():
    delta = Delta("2*b*d", "4*b*d", "more", "×2", None, None)
    changes = [FunctionChange(f"pkg/{n}", "f", 1, "more", delta, delta) for n in NAMES]
    out = render_diff(changes, "main<b>[x](y)|", {})
    table = render(out)
    assert "a" not in table.tags and "img" not in table.tags and "b" not in table.tags
    header, *rows = table.rows
    assert len(rows) == len(NAMES)
    for row, name in zip(rows, NAMES):
        assert len(row) == len(header) == 8, row
        assert row[0] == "f"
        if "\\|" not in name:
            assert row[1] == f"pkg/{name}:1"
        assert row[4] == "▲ ×2"
    assert "`main<b>[x](y)|`" in out
