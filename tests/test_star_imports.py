"""Star imports read from the modules' text (analysis/star_imports.py): the names
`from m import *` binds follow Python's rule (`__all__`, else the public names m's
top level binds, its own star imports included), and a target run loads only the
module that binds a name it reads, never the modules a chain passes through."""

from __future__ import annotations

import sys
import textwrap

import torch
from torch.utils.flop_counter import FlopCounterMode

from shapelint.analysis import project
from shapelint.analysis.driver import AnalysisOptions, analyze_target
from shapelint.analysis.star_imports import StarExports
from shapelint.analysis.target import target_json


def _write(root, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def _index(root) -> StarExports:
    def locate(mod: str) -> str | None:
        return project.find_module((str(root),), mod)[0]

    return StarExports(locate)


def test_the_names_follow_pythons_rule(tmp_path):
    _write(tmp_path, "pkg/__init__.py", "")
    _write(
        tmp_path,
        "pkg/helpers.py",
        """
        __all__ = ["ifnone", "_listed"]
        def ifnone(a, b): return b if a is None else a
        def other(): pass
        _listed = 1
        """,
    )
    _write(
        tmp_path,
        "pkg/imports.py",
        """
        import os
        import torch.nn as nn
        from .helpers import *
        from torch import Tensor
        _private = 2
        """,
    )
    _write(
        tmp_path,
        "pkg/utils.py",
        """
        from .imports import *
        x = 1
        if x:
            y = 2
        def Tensor(): pass
        """,
    )
    _write(tmp_path, "pkg/computed.py", "from .helpers import *\n__all__ = ['a'] + ['b']\n")
    _write(tmp_path, "pkg/restarred.py", "__all__ = ['x']\nx = 1\nfrom .utils import *\n")
    got = _index(tmp_path).exports("pkg.utils")
    assert got == {
        "os": ("os", None),
        "nn": ("torch.nn", None),
        "ifnone": ("pkg.helpers", "ifnone"),  # helpers' __all__: `other` is not in it
        "Tensor": ("pkg.utils", "Tensor"),  # the def after the star import rebinds it
        "x": ("pkg.utils", "x"),
        "y": ("pkg.utils", "y"),  # bound under an `if`: the module's own, read there
    }  # `_listed` came in by helpers' __all__, but imports has none: not public
    assert _index(tmp_path).exports("pkg.computed") is None  # an `__all__` not written out
    # a name a later star import may bind again is the module's own
    assert _index(tmp_path).exports("pkg.restarred") == {"x": ("pkg.restarred", "x")}


NET = """
from ..imports import *
from ..utils import *


def evaluated(m):  # `.eval`: a name of the namespace doors bindings.py counts
    return m.eval()


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, ifnone(None, 2 * d))

    def forward(self, x):
        return F.relu(self.lin(x))
"""


def test_a_chain_of_star_imports_loads_only_the_module_a_name_is_read_from(tmp_path, monkeypatch):
    """`ifnone` reaches the model through two star imports: its module is loaded,
    the modules the chain passes through are not (their top level would run), and
    the figures are torch's."""
    root = tmp_path / "proj"
    _write(root, "starchain/__init__.py", "")
    _write(root, "starchain/models/__init__.py", "")
    _write(root, "starchain/models/net.py", NET)
    _write(
        root,
        "starchain/imports.py",
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from .helpers import *
        """,
    )
    _write(
        root,
        "starchain/helpers.py",
        "__all__ = ['ifnone']\ndef ifnone(a, b):\n    return b if a is None else a\n",
    )
    _write(
        root,
        "starchain/utils.py",
        """
        from .imports import *
        __all__ = ["table"]
        table = {i: i * i for i in range(10)}
        """,
    )
    loaded: list[str] = []
    load = project.Project._load

    def _load(self, path, roots, modname):
        loaded.append(modname)
        return load(self, path, roots, modname)

    monkeypatch.setattr(project.Project, "_load", _load)
    path = root / "starchain/models/net.py"
    result = analyze_target(
        str(path), path.read_text(), "Net", {"d": "8"}, {"x": "2,8"}, AnalysisOptions()
    )
    tj = target_json(result, {})
    assert "starchain.helpers" in loaded
    assert "starchain.imports" not in loaded and "starchain.utils" not in loaded, loaded
    sys.path.insert(0, str(root))
    try:
        from starchain.models.net import Net

        with FlopCounterMode(display=False) as counter:
            Net(8)(torch.randn(2, 8))
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n.split(".")[0] == "starchain"]:
            del sys.modules[name]
    assert tj["complete"], tj["unknown"]
    assert tj["flops_value"] == counter.get_total_flops() == 2 * 2 * 8 * 16
