"""benchmarks/split_class.py on a tree of its own: what it moves into mixins,
renames and rewrites, and what it refuses (the real split is its own commit)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from benchmarks import split_class

SOURCE = '''\
"""The analyzer."""

from __future__ import annotations

import functools

from shapelint.analysis.other import helper, Kind

LIMIT = 3


class _State:
    def __init__(self):
        self.n = 0


def _twice(x):
    return helper(x) * 2


class ModuleAnalyzer:
    def __init__(self):
        self.state = _State()

    def run(self, x):
        """Calls self._step."""
        return self._step(x) + LIMIT

    # one step, as the run takes it
    def _step(self, x: Kind) -> int:
        return self._inner(x)

    @functools.cache
    def _inner(self, x):
        return _twice(x)

    def check(self, s: _State) -> bool:
        return s.n > 0

    step = _step


__all__ = ["ModuleAnalyzer"]
'''

USER = """\
from shapelint.analysis import interpreter


def test_patch(monkeypatch):
    bound = interpreter.ModuleAnalyzer._step  # ModuleAnalyzer._step, as docs name it
    monkeypatch.setattr(interpreter.ModuleAnalyzer, "_step", bound)
"""

GROUPS = [
    ("stepping", "SteppingMixin", "Stepping.", ["_twice"], ["_step", "_inner"]),
    ("checking", "CheckingMixin", "Checking.", ["_State"], ["check"]),
]


def tree(tmp_path: Path, source: str = SOURCE) -> Path:
    pkg = tmp_path / "shapelint" / "analysis"
    pkg.mkdir(parents=True)
    (tmp_path / "shapelint" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "other.py").write_text("Kind = int\n\n\ndef helper(x):\n    return x\n")
    (pkg / "interpreter.py").write_text(source)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_patch.py").write_text(USER)
    return tmp_path


def split(root: Path) -> split_class.ClassSplit:
    s = split_class.ClassSplit(root)
    s.plan()
    s.split_source()
    s.rewrite_users()
    s.write()
    return s


def members(path: Path, cls: str) -> set[str]:
    for s in ast.parse(path.read_text()).body:
        if isinstance(s, ast.ClassDef) and s.name == cls:
            out = set()
            for m in s.body:
                out.update(split_class.sm.top_names(m))
            return out
    raise AssertionError(f"no class {cls}")


def test_moves_methods_into_mixins_and_renames_what_crosses(tmp_path, monkeypatch):
    monkeypatch.setattr(split_class, "GROUPS", GROUPS)
    root = tree(tmp_path)
    s = split(root)
    pkg = root / "shapelint" / "analysis"
    rest = (pkg / "interpreter.py").read_text()
    stepping = (pkg / "stepping.py").read_text()
    checking = (pkg / "checking.py").read_text()
    # the class inherits the mixins, in GROUPS' order, and keeps what no group names
    assert "class ModuleAnalyzer(SteppingMixin, CheckingMixin):" in rest
    assert members(pkg / "interpreter.py", "ModuleAnalyzer") == {"__init__", "run"}
    # _step, which run (staying) calls, crosses: it takes its alias's name, whose
    # line goes; _inner is used only in its own part and stays private
    assert s.mem_renames == {"_step": "step"}
    assert members(pkg / "stepping.py", "SteppingMixin") == {"step", "_inner"}
    assert "return self.step(x) + LIMIT" in rest and "_step" not in rest
    assert '"""Calls self.step."""' in rest
    # the comment above a method and its decorator travel with it
    assert "    # one step, as the run takes it\n    def step(self, x: Kind) -> int:" in stepping
    assert "    @functools.cache\n    def _inner(self, x):" in stepping
    # a top-level helper moves with its group, private where only that group uses it
    assert "def _twice(x):" in stepping and "from shapelint.analysis.other import" in stepping
    # _State crosses (the class builds one, check annotates with it): public, and
    # only an annotation in checking.py, so imported there for type checking only
    assert s.top_renames == {"_State": "State"}
    assert "class State:" in checking and "def check(self, s: State) -> bool:" in checking
    assert "if TYPE_CHECKING:" not in checking  # State is defined there
    assert "from shapelint.analysis.checking import CheckingMixin, State" in rest
    assert "from shapelint.analysis.other import Kind" in stepping
    # a test's patch through the class follows the rename, prose too
    user = (root / "tests" / "test_patch.py").read_text()
    assert 'monkeypatch.setattr(interpreter.ModuleAnalyzer, "step", bound)' in user
    assert "bound = interpreter.ModuleAnalyzer.step  # ModuleAnalyzer.step, as" in user


def test_an_annotation_only_name_is_imported_for_type_checking(tmp_path, monkeypatch):
    monkeypatch.setattr(split_class, "GROUPS", GROUPS)
    root = tree(tmp_path)
    split(root)
    text = (root / "shapelint" / "analysis" / "stepping.py").read_text()
    typed = text.split("if TYPE_CHECKING:", 1)
    # Kind only annotates step's parameter; helper is called
    assert len(typed) == 2 and "from shapelint.analysis.other import Kind" in typed[1]
    assert "from shapelint.analysis.other import helper\n" in typed[0]


def test_an_edit_inside_a_moved_method_is_carried(tmp_path, monkeypatch):
    monkeypatch.setattr(split_class, "GROUPS", GROUPS)
    root = tree(tmp_path)
    path = root / "shapelint" / "analysis" / "interpreter.py"
    path.write_text(path.read_text().replace("return _twice(x)", "return _twice(x) + 1"))
    split(root)
    text = (root / "shapelint" / "analysis" / "stepping.py").read_text()
    assert "return _twice(x) + 1" in text


def test_refuses_a_name_it_cannot_find(tmp_path, monkeypatch, capsys):
    groups = [("stepping", "SteppingMixin", "Stepping.", ["_twice"], ["_step", "_gone"])]
    monkeypatch.setattr(split_class, "GROUPS", groups)
    root = tree(tmp_path)
    before = (root / "shapelint" / "analysis" / "interpreter.py").read_text()
    assert split_class.main([str(root)]) == 1
    assert "_gone (a member of ModuleAnalyzer, for stepping)" in capsys.readouterr().err
    assert (root / "shapelint" / "analysis" / "interpreter.py").read_text() == before
    assert not (root / "shapelint" / "analysis" / "stepping.py").exists()


def test_refuses_a_name_listed_twice(tmp_path, monkeypatch):
    groups = [*GROUPS, ("more", "MoreMixin", "More.", [], ["_inner"])]
    monkeypatch.setattr(split_class, "GROUPS", groups)
    with pytest.raises(split_class.Refused, match="_inner is listed twice"):
        split_class.ClassSplit(tree(tmp_path)).plan()


def test_refuses_a_method_that_reads_its_class(tmp_path, monkeypatch):
    monkeypatch.setattr(split_class, "GROUPS", GROUPS)
    source = SOURCE.replace("return _twice(x)", "return super().__hash__() + _twice(x)")
    with pytest.raises(split_class.Refused, match="_inner uses super"):
        split_class.ClassSplit(tree(tmp_path, source)).plan()


def test_refuses_a_moved_method_using_a_name_that_stays(tmp_path, monkeypatch):
    monkeypatch.setattr(split_class, "GROUPS", GROUPS)
    source = SOURCE.replace("return _twice(x)", "return _twice(x) + LIMIT")
    # LIMIT stays in interpreter.py, which inherits the mixin: a cycle, named
    with pytest.raises(split_class.Refused, match=r"stepping -> interpreter \(.*_inner uses LIMIT"):
        split_class.ClassSplit(tree(tmp_path, source)).plan()


def test_refuses_a_public_name_already_taken(tmp_path, monkeypatch):
    monkeypatch.setattr(split_class, "GROUPS", GROUPS)
    # without the alias, _step would become `step`, which an attribute holds already
    source = SOURCE.replace("    step = _step\n", "").replace(
        "self.state = _State()", "self.state = _State()\n        self.step = 1"
    )
    with pytest.raises(split_class.Refused, match="ModuleAnalyzer._step -> step"):
        split_class.ClassSplit(tree(tmp_path, source)).plan()


def test_refuses_a_patch_of_a_name_moved_code_reads(tmp_path, monkeypatch):
    monkeypatch.setattr(split_class, "GROUPS", GROUPS)
    root = tree(tmp_path)
    # _twice calls helper from stepping.py now: a patch of interpreter.helper misses it
    patch = 'def test_p(monkeypatch):\n    monkeypatch.setattr(interpreter, "helper", abs)\n'
    (root / "tests" / "test_patch.py").write_text(
        "from shapelint.analysis import interpreter\n\n\n" + patch
    )
    s = split_class.ClassSplit(root)
    s.plan()
    s.split_source()
    with pytest.raises(split_class.Refused, match="interpreter.helper, which a part binds"):
        s.rewrite_users()


def test_a_divider_left_with_nothing_under_it_goes():
    text = (
        "class A:\n"
        "    # ------------------------------------------------------------ moved away\n"
        "\n"
        "    # ------------------------------------------------------------ kept\n"
        "    def f(self):\n"
        "        pass\n"
        "\n"
        "    # ------------------------------------------------------------ last\n"
        "\n"
        "\n"
        "X = 1\n"
    )
    out = split_class.drop_empty_sections(text)
    assert "moved away" not in out and "last" not in out and "kept" in out


def test_an_import_ruff_left_parenthesized_goes_on_one_line_where_it_fits():
    text = "from a.b import (\n    c,\n)\n\nif True:\n    from d import (\n        e,\n        f,\n    )\n"
    out = split_class.one_line_imports(text)
    assert out == "from a.b import c\n\nif True:\n    from d import e, f\n"
    long = "from m import (\n" + "".join(f"    name_{i},\n" for i in range(12)) + ")\n"
    assert split_class.one_line_imports(long) == long


def test_a_helper_no_group_names_goes_with_the_only_group_using_it(tmp_path, monkeypatch):
    monkeypatch.setattr(split_class, "GROUPS", GROUPS)
    source = SOURCE.replace("return _twice(x)", "return _twice(_added(x))").replace(
        "class ModuleAnalyzer:", "def _added(x):\n    return x\n\n\nclass ModuleAnalyzer:"
    )
    root = tree(tmp_path, source)
    s = split(root)
    assert s.followed == {"_added": "stepping"}
    assert "def _added(x):" in (root / "shapelint" / "analysis" / "stepping.py").read_text()
    assert "_added" not in (root / "shapelint" / "analysis" / "interpreter.py").read_text()
