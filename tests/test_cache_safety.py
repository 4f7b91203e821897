"""The cache cannot lie (stale entries), cannot run code (no pickle) and cannot be
steered by the analysed tree (symlinks) or crash a run (malformed entries)."""

from __future__ import annotations

import marshal
import os
import random
import re
import time
from pathlib import Path

import pytest

from shapelint.analysis import driver
from shapelint.analysis.driver import analyze_files, pack_records, unpack_records
from shapelint.cache import CACHE_DIR_NAME, Cache, salt_for
from shapelint.config import Config

BAD = 'from einops import rearrange\ndef f(x):\n    return rearrange(x, "b c -> b d")\n'
# The same size, no error: an edit a (mtime, size) index cannot see.
GOOD = 'from einops import rearrange\ndef f(x):\n    return rearrange(x, "b c -> c b")\n'
T0 = 1_600_000_000_000_000_000


def codes(results) -> list[str]:
    return [d.code for r in results for d in r.diagnostics]


def run(files, root, options=None):
    cache = Cache.for_config(Config(root=root), options or {})
    results = analyze_files(files, options or {}, jobs=1, cache=cache)
    cache.flush()
    return results


def settle(*files: Path) -> None:
    """An old mtime, and a ctime old enough to be trusted by the stat index."""
    for f in files:
        os.utime(f, ns=(T0, T0))
    time.sleep(0.12)


def test_same_size_edit_with_mtime_restored_is_seen(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(BAD)
    settle(f)
    assert codes(run([f], tmp_path))  # fills the cache
    assert codes(run([f], tmp_path))  # served by the stat index
    f.write_text(GOOD)  # as tar, cp -p or rsync -a leave it: same size, same mtime
    settle(f)
    assert len(GOOD) == len(BAD)
    assert codes(run([f], tmp_path)) == []


def test_same_relative_path_from_another_directory_is_not_confused(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "m.py").write_text(BAD)
    (b / "m.py").write_text(GOOD)
    settle(a / "m.py", b / "m.py")
    monkeypatch.chdir(a)
    assert codes(run([Path("m.py")], tmp_path))
    monkeypatch.chdir(b)
    assert codes(run([Path("m.py")], tmp_path)) == []


def test_stub_directory_contents_are_in_the_key(tmp_path):
    d = tmp_path / "stubs"
    d.mkdir()
    (d / "a.stub").write_text("def mylib.f(x: T[a]) -> T[a]: ...\n")
    s1 = salt_for({"stubs": [str(d)]})
    (d / "a.stub").write_text("def mylib.f(x: T[a]) -> T[b]: ...\n")
    s2 = salt_for({"stubs": [str(d)]})
    (d / "b.stub").write_text("")
    s3 = salt_for({"stubs": [str(d)]})
    assert len({s1, s2, s3}) == 3


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_stub_path_does_not_hang_the_key(tmp_path):
    fifo = tmp_path / "s.stub"
    os.mkfifo(fifo)
    assert salt_for({"stubs": [str(fifo)]})  # returns: no open() of the FIFO


def test_no_pickle_anywhere():
    root = Path(driver.__file__).resolve().parents[1]
    uses = re.compile(r"\bimport pickle|\bfrom pickle|pickle\.loads|\bcPickle|\bshelve\b")
    offenders = [p for p in root.rglob("*.py") if uses.search(p.read_text())]
    assert offenders == []


def test_a_pickled_record_is_never_loaded():
    import pickle

    class Boom:
        def __reduce__(self):
            return (os.system, ("echo pwned > /dev/null",))

    evil = b"P" + pickle.dumps(([Boom()], []))
    with pytest.raises(ValueError):
        unpack_records(evil)


def test_values_marshal_cannot_write_are_converted():
    class Odd:
        def __str__(self):
            return "odd"

    rec = {"path": "p", "line": 1, "column": 1, "op": "o", "notes": []}
    rec.update(flops=None, other_flops=None, bytes=None, x=Odd(), y=(1, {2}))
    packed = pack_records([rec], [])
    assert packed[:1] == b"M"
    [rec], _ = unpack_records(packed)
    assert rec["x"] == "odd" and rec["y"] == [1, [2]]


def _tree(tmp_path: Path, n: int = 6) -> list[Path]:
    files = []
    for i in range(n):
        f = tmp_path / f"m{i}.py"
        f.write_text(BAD if i % 2 else GOOD.replace("c b", "b (c)") + f"# {i}\n")
        files.append(f)
    settle(*files)
    return files


def _fingerprint(results):
    return [(r.path, [d.to_json() for d in r.diagnostics], r.calls, r.functions) for r in results]


def test_mutated_cache_files_never_crash_and_never_lie(tmp_path):
    files = _tree(tmp_path)
    fresh = _fingerprint(analyze_files(files, {}, jobs=1))
    run(files, tmp_path)
    cache_file = next((tmp_path / CACHE_DIR_NAME).glob("results-*"))
    pristine = cache_file.read_bytes()
    rng = random.Random(15)
    for k in range(40):
        data = bytearray(pristine)
        for _ in range(1 + k % 4):
            i = rng.randrange(len(data))
            data[i] = rng.randrange(256) if k % 3 else data[i] ^ 1
        if k % 7 == 0:
            data = data[: rng.randrange(len(data))]
        cache_file.write_bytes(bytes(data))
        assert _fingerprint(run(files, tmp_path)) == fresh, k
        cache_file.write_bytes(pristine)


def _rewrite_entries(cache_file: Path, mutate) -> None:
    """A well-formed marshal file with structurally wrong entries (a crafted cache)."""
    from shapelint import cache as cache_mod

    data = cache_mod.read_payload(cache_file)
    mutate(data)
    cache_mod.write_payload(cache_file, data)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d["entries"].update({k: (None, 5, []) for k in d["entries"]}),
        lambda d: d["entries"].update({k: ([("x",)], None, {}) for k in d["entries"]}),
        lambda d: d["entries"].update(
            {k: ([(1, 1, 1, 1, "SHP101", "error", 7)], b"Mxx", {1: 2}) for k in d["entries"]}
        ),
        lambda d: d["entries"].update(
            {
                k: (v[0], b"M" + marshal.dumps(([{"line": "x"}], 5)), v[2], v[3])
                for k, v in d["entries"].items()
            }
        ),
        lambda d: d.update({"by_stat": {k: "garbage" for k in d["by_stat"]}}),
        lambda d: d.update({"by_stat": [1, 2], "entries": None}),
    ],
)
def test_structurally_wrong_entries_are_discarded(tmp_path, mutate):
    files = _tree(tmp_path)
    fresh = _fingerprint(analyze_files(files, {}, jobs=1))
    run(files, tmp_path)
    cache_file = next((tmp_path / CACHE_DIR_NAME).glob("results-*"))
    _rewrite_entries(cache_file, mutate)
    assert _fingerprint(run(files, tmp_path)) == fresh


def test_symlinked_cache_directory_is_refused(tmp_path, capsys):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "results-unrelated.marshal").write_text("keep me")
    for i in range(6):
        (outside / f"results-{i:016x}.marshal").write_text("keep me too")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / CACHE_DIR_NAME).symlink_to(outside)
    files = _tree(proj)
    cache = Cache.for_config(Config(root=proj), {})
    analyze_files(files, {}, jobs=1, cache=cache)
    cache.flush()
    assert sorted(p.name for p in outside.iterdir()) == sorted(
        ["results-unrelated.marshal", *(f"results-{i:016x}.marshal" for i in range(6))]
    )
    assert any("symlink" in w for w in cache.warnings)


def test_symlinked_gitignore_is_not_written_through(tmp_path):
    proj = tmp_path / "proj"
    (proj / CACHE_DIR_NAME).mkdir(parents=True)
    target = tmp_path / "victim"
    target.write_text("original\n")
    (proj / CACHE_DIR_NAME / ".gitignore").symlink_to(target)
    files = _tree(proj)
    cache = Cache.for_config(Config(root=proj), {})
    analyze_files(files, {}, jobs=1, cache=cache)
    cache.flush()
    assert target.read_text() == "original\n"
    assert cache.warnings


def test_dangling_gitignore_symlink_creates_nothing_outside(tmp_path):
    proj = tmp_path / "proj"
    (proj / CACHE_DIR_NAME).mkdir(parents=True)
    (proj / CACHE_DIR_NAME / ".gitignore").symlink_to(tmp_path / "created")
    files = _tree(proj)
    cache = Cache.for_config(Config(root=proj), {})
    analyze_files(files, {}, jobs=1, cache=cache)
    cache.flush()
    assert not (tmp_path / "created").exists()


def test_pruning_touches_only_cache_files(tmp_path):
    proj = tmp_path
    files = _tree(proj)
    d = proj / CACHE_DIR_NAME
    d.mkdir()
    (d / "results-notes.txt").write_text("mine")
    for k in range(8):
        run(files, proj, options={"naming": {"k": str(k)}})
    assert (d / "results-notes.txt").read_text() == "mine"
