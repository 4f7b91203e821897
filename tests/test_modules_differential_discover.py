"""The modules differential's static discovery (benchmarks/modules_differential.py):
classes whose bases reach nn.Module by name, nested classes included."""

from __future__ import annotations

import threading

from benchmarks.modules_differential import discover


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
