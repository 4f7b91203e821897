"""The modules differential's static discovery (benchmarks/modules_differential.py):
classes whose bases reach nn.Module by name, nested classes included."""

from __future__ import annotations

import threading

from benchmarks.modules_differential import corpus_roots, discover


def test_discover_finds_nested_module_classes_and_terminates(tmp_path):
    pkg = tmp_path / "demo-1.0" / "demo"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "nets.py").write_text(
        "import torch.nn as nn\n"
        "class Outer:\n"
        "    class Inner(nn.Module):\n"
        "        pass\n"
        "class User(Inner):\n"
        "    pass\n"
        "class Plain:\n"
        "    pass\n"
    )
    found: list = []
    # The fixpoint once tested a nested class by its qualname while adding its own
    # name, so it never settled: run it where a hang fails the test instead.
    t = threading.Thread(target=lambda: found.extend(discover(tmp_path)), daemon=True)
    t.start()
    t.join(timeout=30)
    assert not t.is_alive(), "discover did not terminate"
    assert sorted(c["qualname"] for c in found) == ["Outer.Inner", "User"]
    assert {c["key"] for c in found} == {
        "demo-1.0:demo.nets::Outer.Inner",
        "demo-1.0:demo.nets::User",
    }


def test_corpus_roots_finds_an_sdists_src_layout_and_a_flat_wheel(tmp_path):
    # An sdist unpacks to NAME-VER/NAME-VER/src/pkg (diffwave, wavegrad): the import
    # root is src/, not the folder above it, where no package sits.
    src = tmp_path / "voc-0.1" / "voc-0.1" / "src" / "voc"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "m.py").write_text("import torch.nn as nn\nclass Net(nn.Module):\n    pass\n")
    (tmp_path / "voc-0.1" / "voc-0.1" / "setup.py").write_text("")
    flat = tmp_path / "net-1.0" / "net"
    flat.mkdir(parents=True)
    (flat / "__init__.py").write_text("")
    # A package folder that is itself named src keeps its parent for the root.
    own = tmp_path / "own-2.0" / "own-2.0" / "src"
    own.mkdir(parents=True)
    (own / "__init__.py").write_text("")
    roots = corpus_roots(tmp_path)
    assert roots["voc-0.1"] == tmp_path / "voc-0.1" / "voc-0.1" / "src"
    assert roots["net-1.0"] == tmp_path / "net-1.0"
    assert roots["own-2.0"] == tmp_path / "own-2.0" / "own-2.0"
    assert [c["key"] for c in discover(tmp_path)] == ["voc-0.1:voc.m::Net"]
