"""The driver's speed machinery must never change what is found: the pre-filter,
the process pool, the cache and the lazily unpacked cost records."""

from __future__ import annotations

import ast
import gc
import os
import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapelint.analysis import driver
from shapelint.analysis.driver import FileResult, analyze_files, collect_files
from shapelint.cache import Cache, salt_for
from shapelint.config import Config

# The pre-filter as it was first written: one regex. The literal search must agree.
OLD_NEEDLES = re.compile(
    rb"einops|einsum|jaxtyping|reveal_shape|transpose|permute|swapaxes|swapdims|movedim"
    rb"|\.mT\b|\.T\b|torch"
)

FRAGMENTS = [
    b"torch",
    b"torc",
    b"einops",
    b"einsum",
    b"einsu",
    b"jaxtyping",
    b"reveal_shape",
    b"transpose",
    b"permute",
    b"swapaxes",
    b"swapdims",
    b"movedim",
    b".T",
    b".mT",
    b"T",
    b".Tx",
    b".T_",
    b".T(",
    b".mTx",
    b"x",
    b".",
    b" ",
    b"\n",
    b"\xc3\xa9",
    b"_",
    b"9",
]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(FRAGMENTS) | st.binary(max_size=4), max_size=12))
def test_prefilter_agrees_with_the_regex(parts):
    data = b"".join(parts)
    assert driver.may_need_analysis(data) == bool(OLD_NEEDLES.search(data))


@pytest.mark.parametrize(
    "text,expected",
    [
        (b"import numpy as np\nx = np.zeros(3)\n", False),
        (b"y = x.T\n", True),
        (b"y = x.mT + 1\n", True),
        (b"y = x.Tail\n", False),
        (b"import torch\n", True),
        (b"from einops import rearrange\n", True),
    ],
)
def test_prefilter_examples(text, expected):
    assert driver.may_need_analysis(text) is expected


# ---------------------------------------------------------------------- a small tree

REVEAL = (
    "from jaxtyping import Float\nfrom torch import Tensor\n\n"
    'def f{i}(x: Float[Tensor, "b {i}"]):\n    reveal_shape(x)\n    return x\n\n'
    "def g{i}(x):\n    return f{i}(x)\n"
)


def make_tree(root: Path, n: int = 12) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    files = []
    for i in range(n):
        p = root / f"m{i:02d}.py"
        if i % 5 == 3:
            p.write_text("import torch\ndef broken(:\n")  # SHP001
        elif i % 5 == 4:
            p.write_text("x = 1\n")  # filtered out: nothing to check
        else:
            p.write_text(REVEAL.format(i=i + 1))
        files.append(p)
    return files


def as_json(results):
    return [r.to_json() for r in results]


@pytest.fixture
def small_pool(monkeypatch):
    """Let a dozen small files go through the process pool."""
    monkeypatch.setattr(driver, "POOL_MIN_FILES", 2)
    monkeypatch.setattr(driver, "POOL_MIN_BYTES", 0)


def test_pool_and_inline_agree_in_order(tmp_path, small_pool):
    files = make_tree(tmp_path)
    inline = analyze_files(files, {}, jobs=1)
    pooled = analyze_files(files, {}, jobs=2)
    assert [r.path for r in pooled] == [str(f) for f in files]
    assert as_json(pooled) == as_json(inline)
    assert inline == pooled
    codes = {d.code for r in inline for d in r.diagnostics}
    assert {"SHP001", "SHP390"} <= codes
    assert any(r.functions for r in inline)


def test_results_equal_analyze_text(tmp_path):
    files = make_tree(tmp_path, 3)
    for f, r in zip(files, analyze_files(files, {}, jobs=1)):
        assert r == driver.analyze_text(str(f), f.read_text(), {})


def test_progress_counts_every_file(tmp_path, small_pool):
    files = make_tree(tmp_path)
    seen = []
    analyze_files(files, {}, jobs=2, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (len(files), len(files))
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_a_dead_worker_leaves_no_file_unanalyzed(tmp_path, small_pool, monkeypatch):
    files = make_tree(tmp_path)
    parent = os.getpid()
    real = driver._work

    def dies_in_a_worker(task):
        if os.getpid() != parent and task[1].endswith("m05.py"):
            os._exit(1)
        return real(task)

    monkeypatch.setattr(driver, "_work", dies_in_a_worker)
    results = analyze_files(files, {}, jobs=2)
    monkeypatch.setattr(driver, "_work", real)
    assert as_json(results) == as_json(analyze_files(files, {}, jobs=1))


def test_inline_run_restores_the_gc(tmp_path):
    assert gc.isenabled()
    analyze_files(make_tree(tmp_path, 3), {}, jobs=1)
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    gc.disable()
    try:
        analyze_files(make_tree(tmp_path, 3), {}, jobs=1)
        assert not gc.isenabled()
    finally:
        gc.enable()


CYCLE_PRONE = """
import torch
from torch import nn


def helper(x):
    if x.dim() == 2:
        return x
    return x.mean(0)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.act = lambda t: t.relu()

    def forward(self, x: torch.Tensor):
        if x.dim() > 3:
            x = x.flatten(0, 1)

        def inner(t):
            return self.proj(t)

        y = inner(helper(x))
        return [self.act(v) for v in (y, x)]
"""


# `grow(sizes)` changes a list in place and `append` grows a module list: the
# walks that change a held value everywhere (in_place._forget_everywhere, a
# recursive closure over the analyzer; holders._Rebuild) made cycles (21 objects
# on session 26's main).
IN_PLACE = """
import torch
from torch import nn


def grow(xs):
    xs.append(1)


class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.layers = nn.ModuleList()
        for _ in range(2):
            self.layers.append(nn.Linear(dim, dim))
        sizes = [dim]
        grow(sizes)
        self.sizes = sizes

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
"""


@pytest.mark.parametrize("source", [CYCLE_PRONE, IN_PLACE], ids=["cycle_prone", "in_place"])
def test_a_batch_analysis_leaves_no_reference_cycles(tmp_path, source):
    """What one file's analysis built is freed by reference counting as soon as its
    result is read: cycles (records that point back at their analyzer, closures and
    the frames that hold them, a node that caches itself) would hold the file's whole
    tree until a collection, and those collections were a third of a cold run."""
    p = tmp_path / "m.py"
    p.write_text(source)
    driver.analyze_text(str(p), source)  # stubs and lazy imports loaded first
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        driver.analyze_text(str(p), source)
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()


CLASS_USER = """
import enum

import torch


class UniqueModeName(enum.IntEnum):
    SMALL = 1
    BIG = 2


class UniqueNetName(torch.nn.Module):
    def __init__(self, mode=UniqueModeName.BIG):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4 * int(mode))

    def forward(self, x):
        return self.lin(x)


net = UniqueNetName()
"""


def test_a_file_analysis_keeps_none_of_its_classes(tmp_path):
    """What is read once of a class (enums: whether a constructed class is an enum,
    an enum's members) lives as long as the class: a table over every file's classes
    kept each class's tree, and the analyzer it belongs to, for the whole run (over a
    gigabyte on the corpus)."""
    p = tmp_path / "m.py"
    p.write_text(CLASS_USER)
    driver.analyze_text(str(p), CLASS_USER)
    gc.collect()
    left = [o.name for o in gc.get_objects() if isinstance(o, ast.ClassDef)]
    assert "UniqueNetName" not in left
    assert "UniqueModeName" not in left


def test_cycles_are_still_collected_in_a_batch(tmp_path, monkeypatch):
    monkeypatch.setattr(driver, "GC_SURVIVORS", 10)
    calls = []
    real = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or real(*a))
    analyze_files(make_tree(tmp_path, 6), {}, jobs=1)
    assert calls


# ---------------------------------------------------------------------- the cache


def cache_for(root: Path, options: dict | None = None) -> Cache:
    return Cache.for_config(Config(root=root), options or {})


def old_mtime(files: list[Path]) -> None:
    """Files written seconds ago: a fresher mtime is not trusted by the stat index."""
    for f in files:
        os.utime(f, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    time.sleep(0.12)  # nor is a ctime of the last few ticks (see cache.RACY_CTIME_NS)


def run_cached(files, root, jobs=1, options=None):
    cache = cache_for(root, options)
    results = analyze_files(files, options, jobs=jobs, cache=cache)
    cache.flush()
    return results


@pytest.mark.parametrize("jobs", [1, 2])
def test_warm_run_reads_no_file_and_finds_the_same(tmp_path, small_pool, monkeypatch, jobs):
    files = make_tree(tmp_path / "src")
    old_mtime(files)
    cold = analyze_files(files, {}, jobs=1)
    first = run_cached(files, tmp_path, jobs)
    assert as_json(first) == as_json(cold)

    def no_reading(task):
        raise AssertionError(f"{task[1]} was read on a warm run")

    monkeypatch.setattr(driver, "_work", no_reading)
    warm = run_cached(files, tmp_path, jobs)
    assert as_json(warm) == as_json(cold)
    assert warm == cold


def test_touched_file_is_a_content_hit(tmp_path, monkeypatch):
    files = make_tree(tmp_path / "src", 4)
    old_mtime(files)
    cold = run_cached(files, tmp_path)
    os.utime(files[0], ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))

    def no_analysis(*a, **k):
        raise AssertionError("re-analyzed an unchanged content")

    monkeypatch.setattr(driver, "analyze_bytes", no_analysis)
    assert as_json(run_cached(files, tmp_path)) == as_json(cold)


def test_edited_file_is_analyzed_again(tmp_path):
    files = make_tree(tmp_path / "src", 4)
    old_mtime(files)
    run_cached(files, tmp_path)
    files[0].write_text(REVEAL.format(i=77))
    old_mtime(files[:1])
    files[0].write_text(REVEAL.format(i=777))  # same mtime (set below), other size
    os.utime(files[0], ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    warm = run_cached(files, tmp_path)
    assert "777" in warm[0].diagnostics[0].message
    assert as_json(warm) == as_json(analyze_files(files, {}, jobs=1))


def test_same_content_at_two_paths_gets_its_own_path(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text(REVEAL.format(i=3))
    b.write_text(REVEAL.format(i=3))
    old_mtime([a, b])
    warm = run_cached([a, b], tmp_path)
    warm = run_cached([a, b], tmp_path)
    for f, r in zip((a, b), warm):
        assert r.path == str(f)
        assert {d.path for d in r.diagnostics} == {str(f)}
        assert r.functions and {x["path"] for x in r.functions + r.calls} == {str(f)}


def test_recently_modified_file_is_not_trusted_by_stat(tmp_path):
    f = tmp_path / "fresh.py"
    f.write_text(REVEAL.format(i=1))
    cache = cache_for(tmp_path)
    analyze_files([f], jobs=1, cache=cache)
    assert str(f) not in cache.by_stat
    assert cache.entries  # the content is still remembered


def test_corrupt_cache_file_is_ignored(tmp_path):
    files = make_tree(tmp_path / "src", 3)
    old_mtime(files)
    run_cached(files, tmp_path)
    cache_file = cache_for(tmp_path).file
    cache_file.write_bytes(b"\x00garbage" * 10)
    assert as_json(run_cached(files, tmp_path)) == as_json(analyze_files(files, {}, jobs=1))
    assert cache_for(tmp_path).by_stat  # rewritten whole


def test_cache_key_follows_options_and_stubs(tmp_path):
    stub = tmp_path / "mine.stub"
    stub.write_text("a\n")
    base = salt_for({"stubs": [str(stub)], "naming": {}})
    assert salt_for({"stubs": [str(stub)], "naming": {}, "dims": {"b": 2}}) == base
    assert salt_for({"stubs": [str(stub)], "naming": {"b": "batch"}}) != base
    stub.write_text("b\n")
    assert salt_for({"stubs": [str(stub)], "naming": {}}) != base


def test_stale_entries_and_old_cache_files_are_pruned(tmp_path):
    files = make_tree(tmp_path / "src", 3)
    old_mtime(files)
    run_cached(files, tmp_path)
    n = len(cache_for(tmp_path).entries)
    files[0].write_text(REVEAL.format(i=99))
    old_mtime(files[:1])
    run_cached(files, tmp_path)
    assert len(cache_for(tmp_path).entries) == n
    for k in range(8):
        run_cached(files, tmp_path, options={"naming": {"k": str(k)}})
    assert len(list((tmp_path / ".shapelint_cache").glob("results-*"))) <= 5


# ---------------------------------------------------------------------- records and files


COSTS = {"flops": "2*B", "other_flops": None, "bytes": None}
CALL = {"line": 1, "column": 1, "op": "einsum", "notes": [], **COSTS}
FUNCTION = {"name": "f", "line": 1, "complete": True, "calls": 1, **COSTS}


def test_packed_records_unpack_on_access():
    calls = [{"path": "a.py", **CALL}]
    functions = [{"path": "a.py", **FUNCTION}]
    packed = driver.pack_records(calls, functions)
    r = FileResult._from_packed("b.py", [], packed)
    assert r.calls == [{"path": "b.py", **CALL}]
    assert r.functions == [{"path": "b.py", **FUNCTION}]
    assert driver.pack_records([], []) is None
    assert FileResult._from_packed("c.py", [], None).calls == []
    # A value marshal writes as it is still round-trips.
    odd = [{"path": "a.py", **CALL, "x": frozenset({1})}]
    assert driver.unpack_records(driver.pack_records(odd, [])) == (odd, [])


def test_file_result_is_still_a_plain_record():
    r = FileResult("a.py")
    assert r.diagnostics == [] and r.calls == [] and r.functions == []
    r.calls = [{"path": "a.py"}]
    assert FileResult.from_json(r.to_json()) == r
    assert r != FileResult("b.py")
    assert "a.py" in repr(r)


def test_collect_files_lists_a_file_once(tmp_path):
    files = make_tree(tmp_path / "src", 3)
    (tmp_path / "src" / "link.py").symlink_to(files[0])
    found, missing = collect_files(
        [tmp_path / "src", files[1], tmp_path / "nope"], Config(root=tmp_path)
    )
    assert missing == [str(tmp_path / "nope")]
    assert len(found) == 3
    assert {f.resolve() for f in found} == {f.resolve() for f in files}


def test_cli_check_and_cost_agree_cold_and_warm(tmp_path):
    from click.testing import CliRunner

    from shapelint.cli import main

    files = make_tree(tmp_path / "src", 6)
    old_mtime(files)
    (tmp_path / "pyproject.toml").write_text("[tool.shapelint]\n")
    cfg = ["--config", str(tmp_path / "pyproject.toml")]
    runner = CliRunner()

    def out(*args):
        r = runner.invoke(main, [*args, *cfg, str(tmp_path / "src")])
        assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
        return r.exit_code, r.output

    for cmd in (["check", "--format", "json"], ["cost", "--format", "json"]):
        fresh = out(*cmd, "--no-cache")
        assert out(*cmd) == fresh  # fills the cache
        assert out(*cmd) == fresh  # served by it
    assert list((tmp_path / ".shapelint_cache").glob("results-*"))


NOQA_SRC = (
    "from jaxtyping import Float\nfrom torch import Tensor\n\x0c\n"
    'def f(x: Float[Tensor, "b 4"]):\n'
    "    reveal_shape(x)  # NOQA: SHP390\n"
    "    reveal_shape(x)  # noqa: SHP999\n"
    "    reveal_shape(x)\n"
    "    reveal_shape(  # noqa\n        x)\n"
    "    return x\n"
)


@pytest.mark.parametrize("cached", [False, True])
def test_noqa_filtering_reads_no_file(tmp_path, monkeypatch, cached):
    f = tmp_path / "n.py"
    f.write_text(NOQA_SRC)
    old_mtime([f])
    cfg = Config(root=tmp_path)
    by_reading = driver.filter_diagnostics(driver.analyze_text(str(f), NOQA_SRC, {}), cfg)
    assert [d.line for d in by_reading] == [6, 7]  # the form feed is no line break for ast
    if cached:
        run_cached([f], tmp_path)
    [result] = analyze_files([f], jobs=1, cache=cache_for(tmp_path) if cached else None)
    assert result.noqa_lines is not None

    def no_reading(path):
        raise AssertionError("filtering read the file")

    monkeypatch.setattr(driver, "_read_lines", no_reading)
    assert driver.filter_diagnostics(result, cfg) == by_reading


@pytest.mark.parametrize(
    "text",
    ["a\nb\r\nc\rd", "a\x0cb\nc\n", "x = 1\n\x0c\ny\u2028 = 2\r\n\x85\n", "", "\n\n", "a\x0b"],
)
def test_split_lines_numbers_lines_as_ast_does(text):
    from shapelint.analysis.source import split_lines

    for keepends in (False, True):
        lines = split_lines(text, keepends)
        assert "".join(lines) == text if keepends else True
        # ast's line count: tokenize's, which breaks at \n, \r\n and \r only.
        expected = text.replace("\r\n", "\n").replace("\r", "\n")
        want = expected.split("\n")
        if want and want[-1] == "":
            want.pop()
        assert [ln.rstrip("\r\n") for ln in lines] == want
