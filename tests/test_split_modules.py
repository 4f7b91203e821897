"""benchmarks/split_modules.py on a tree of its own: what it moves, renames and
rewrites, and what it refuses (the real split is its own commit)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from benchmarks import split_modules

SOURCE = '''\
"""Module values."""

from __future__ import annotations

import functools

from shapelint.analysis.other import helper

# ---------------------------------------------------------------------- parts

LIMIT = 3


# the shared step
def _step(x):
    return helper(x) + LIMIT


@functools.cache
def moved(x):
    """Calls _step."""
    return _step(x)


# ---------------------------------------------------------------------- kept


def stays(x):
    return _step(x) * 2
'''

USER = """\
from shapelint.analysis import modules
from shapelint.analysis.modules import moved, stays


def f(x):
    return modules.moved(x) + moved(x) + stays(x)  # modules.moved, as docs name it
"""

PATCHER = """\
def test_patch(monkeypatch):
    from shapelint.analysis import modules

    monkeypatch.setattr(modules, "helper", abs)
"""


def tree(tmp_path: Path) -> Path:
    pkg = tmp_path / "shapelint" / "analysis"
    pkg.mkdir(parents=True)
    (tmp_path / "shapelint" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "other.py").write_text("def helper(x):\n    return x\n")
    (pkg / "modules.py").write_text(SOURCE)
    (pkg / "user.py").write_text(USER)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_patch.py").write_text(PATCHER)
    return tmp_path


def split(root: Path) -> split_modules.Split:
    s = split_modules.Split(root)
    s.plan()
    s.split_source()
    s.rewrite_users()
    s.write()
    return s


def top(path: Path) -> set[str]:
    return {n for s in ast.parse(path.read_text()).body for n in split_modules.top_names(s)}


def test_moves_renames_and_rewrites(tmp_path, monkeypatch):
    monkeypatch.setattr(split_modules, "GROUPS", [("part", "A part.", ["LIMIT", "_step", "moved"])])
    root = tree(tmp_path)
    s = split(root)
    pkg = root / "shapelint" / "analysis"
    part = (pkg / "part.py").read_text()
    rest = (pkg / "modules.py").read_text()
    # the definitions moved with their decorators and the comment above them;
    # `_step`, which `stays` still calls, crosses the boundary: public everywhere
    assert top(pkg / "part.py") == {"LIMIT", "step", "moved"}
    assert "# the shared step\ndef step(x):" in part and "@functools.cache\ndef moved" in part
    assert '"""Calls step."""' in part and "return step(x)" in part
    assert top(pkg / "modules.py") == {"stays"}
    assert "from shapelint.analysis.part import step" in rest and "_step" not in rest
    assert "- parts" not in rest and "- kept" in rest  # a divider with nothing under it goes
    assert s.renames == {"_step": "step"}
    # each user's import and `modules.x` point at the new module
    user = (pkg / "user.py").read_text()
    assert "from shapelint.analysis.part import moved" in user
    assert "from shapelint.analysis.modules import stays" in user
    assert "part.moved(x) + moved(x)" in user and "# part.moved, as docs" in user
    assert "from shapelint.analysis import modules, part" in user
    # a patch of a name modules.py re-exported reaches the one part that reads it
    patcher = (root / "tests" / "test_patch.py").read_text()
    assert 'monkeypatch.setattr(part, "helper", abs)' in patcher


def test_an_edit_inside_a_moved_function_is_carried(tmp_path, monkeypatch):
    monkeypatch.setattr(split_modules, "GROUPS", [("part", "A part.", ["LIMIT", "_step", "moved"])])
    root = tree(tmp_path)
    path = root / "shapelint" / "analysis" / "modules.py"
    path.write_text(path.read_text().replace("return _step(x)", "return _step(x) + 1"))
    split(root)
    assert "return step(x) + 1" in (root / "shapelint" / "analysis" / "part.py").read_text()


def test_refuses_a_name_it_cannot_find(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(split_modules, "GROUPS", [("part", "A part.", ["moved", "gone"])])
    root = tree(tmp_path)
    before = (root / "shapelint" / "analysis" / "modules.py").read_text()
    assert split_modules.main([str(root)]) == 1
    assert "gone (for part)" in capsys.readouterr().err
    assert (root / "shapelint" / "analysis" / "modules.py").read_text() == before
    assert not (root / "shapelint" / "analysis" / "part.py").exists()


def test_refuses_a_public_name_already_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(split_modules, "GROUPS", [("part", "A part.", ["LIMIT", "_step"])])
    root = tree(tmp_path)
    path = root / "shapelint" / "analysis" / "modules.py"
    path.write_text(
        path.read_text()
        + textwrap.dedent("""

        def other(step):
            return step
        """)
    )
    with pytest.raises(split_modules.Refused, match="_step -> step"):
        split_modules.Split(root).plan()


def test_refuses_parts_that_import_each_other(tmp_path, monkeypatch):
    groups = [("a", "A.", ["_step"]), ("b", "B.", ["LIMIT", "moved"])]
    monkeypatch.setattr(split_modules, "GROUPS", groups)
    root = tree(tmp_path)
    path = root / "shapelint" / "analysis" / "modules.py"
    # LIMIT (b) used by _step (a), _step used by moved (b): a <-> b
    with pytest.raises(split_modules.Refused, match=r"a -> b \(_step uses LIMIT\)"):
        split_modules.Split(root).plan()
    assert "LIMIT" in path.read_text()
