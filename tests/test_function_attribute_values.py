"""A function or class of another file read as a module's attribute and handed on as
a value (`apply_all(x, F.hflip)`, torchsr's transforms over torchvision's functional
module; `getattr(litgpt.model, config.mlp_class_name)`): calling it runs its body where
it is defined, as `from m import f` then `f` does. A module-level constant read off its
module (`c_f.COLLECT_STATS`) is the value `from m import NAME` gives, where no file stores
into the module object; where one does, not known. Figures against FlopCounterMode,
forward and backward."""

from __future__ import annotations

import sys
import textwrap

import pytest

from tests.helpers import run_class, torch_figures, written_module

torch = pytest.importorskip("torch")

OPS = """
import torch
import torch.nn as nn


class Wide(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, 3 * d)

    def forward(self, x):
        return self.lin(x)


def project(x, w):
    return x @ w


def flipped(x):
    return torch.rot90(x, 1, (-2, -1))


WIDTH = 3
DEEP = False
"""

SOURCE = """
import torch
import torch.nn as nn

import attr_value_ops as F


def apply_all(x, func, *more):
    if isinstance(x, (list, tuple)):
        return [func(t, *more) for t in x]
    return func(x, *more)


class Transform(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, 2 * d))

    def forward(self, x):
        y = apply_all(x, F.project, self.w)
        return apply_all(y.unsqueeze(0), F.flipped)


class Constants(nn.Module):
    # module-level constants read off their module (pytorch-metric-learning's
    # `c_f.COLLECT_STATS if collect_stats is None else collect_stats`)
    def __init__(self, d=8, deep=None):
        super().__init__()
        self.deep = F.DEEP if deep is None else deep
        self.a = nn.Linear(d, F.WIDTH * d)
        if self.deep:
            self.b = nn.Linear(F.WIDTH * d, F.WIDTH * d)

    def forward(self, x):
        x = self.a(x)
        return self.b(x) if self.deep else x


class Named(nn.Module):
    def __init__(self, d=8, kind="Wide"):
        super().__init__()
        self.a = getattr(F, kind)(d)
        self.b = F.Wide(3 * d)

    def forward(self, x):
        return self.b(self.a(x))
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    d = tmp_path_factory.mktemp("attr_values")
    (d / "attr_value_ops.py").write_text(textwrap.dedent(OPS))
    sys.path.insert(0, str(d))
    try:
        yield written_module(d, "attr_value_model", SOURCE)
    finally:
        sys.path.remove(str(d))
        sys.modules.pop("attr_value_ops", None)


def _agrees_with_torch(source, cls: str) -> None:
    path, mod = source
    t = run_class(path, cls, {}, {"x": (4, 8)}, True)
    fwd, bwd, params, shape = torch_figures(mod, cls, {}, {"x": (4, 8)}, training=True)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"], t["params_value"]) == (fwd, bwd, params)
    assert tuple(int(d) for d in t["output"]) == shape


def test_a_function_read_off_a_module_runs_where_it_is_called(source):
    _agrees_with_torch(source, "Transform")


def test_a_class_read_off_a_module_builds_where_it_is_called(source):
    """`F.Wide(d)`, `getattr(F, kind)(d)`: the class, as `from m import Wide` gives it
    (main: each a module not modelled, the figure unknown)."""
    _agrees_with_torch(source, "Named")


def test_a_constant_read_off_a_module_is_its_value(source):
    _agrees_with_torch(source, "Constants")


PATCH = """
import attr_value_ops as F

F.WIDTH = 5
"""


def test_a_constant_another_file_stores_into_the_module_is_not_known(tmp_path):
    """`F.WIDTH = 5` in a file the model imports: torch's Linear has 5·d outputs, and
    the value the defining file gives (3) is not the one read off the module."""
    (tmp_path / "attr_value_ops.py").write_text(textwrap.dedent(OPS))
    (tmp_path / "attr_value_patch.py").write_text(textwrap.dedent(PATCH))
    sys.path.insert(0, str(tmp_path))
    try:
        path, mod = written_module(
            tmp_path, "attr_value_patched", "import attr_value_patch\n" + SOURCE
        )
        t = run_class(path, "Constants", {}, {"x": (4, 8)}, True)
        fwd, _, params, _ = torch_figures(mod, "Constants", {}, {"x": (4, 8)}, training=True)
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("attr_value_ops", "attr_value_patch"):
            sys.modules.pop(name, None)
    assert params == 8 * 40 + 40
    assert t["params_value"] is None or t["params_value"] == params
    assert not t["complete"] or t["flops_value"] == fwd


UNPATCHED = """
import attr_value_ops as F

SEEN = F.WIDTH
"""


def test_a_store_written_between_two_runs_of_one_process_is_read(tmp_path):
    """A language server's or a warm check's process: the scan of the package for a
    store into the module is kept under the stats of the files it read, so that
    `F.WIDTH = 5` written into a file of the package after a first run is seen by the
    second (main: the first run's scan kept for the process, 216 parameters complete
    for torch's 360)."""
    import os

    (tmp_path / "attr_value_ops.py").write_text(textwrap.dedent(OPS))
    patch = tmp_path / "attr_value_patch.py"
    patch.write_text(textwrap.dedent(UNPATCHED))
    sys.path.insert(0, str(tmp_path))
    try:
        path, _ = written_module(
            tmp_path, "attr_value_edited", "import attr_value_patch\n" + SOURCE
        )
        before = run_class(path, "Constants", {}, {"x": (4, 8)}, True)
        patch.write_text(textwrap.dedent(PATCH))
        st = os.stat(patch)
        os.utime(patch, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a coarse clock
        after = run_class(path, "Constants", {}, {"x": (4, 8)}, True)
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("attr_value_ops", "attr_value_patch", "attr_value_edited"):
            sys.modules.pop(name, None)
    assert before["params_value"] == 8 * 24 + 24
    assert after["params_value"] is None or after["params_value"] == 8 * 40 + 40


def test_the_files_a_constant_scan_read_are_dependencies(tmp_path):
    """What a constant read off its module depended on: every file the scan read, the
    defining file's own text too, with its digest (project.dependencies reads them)."""
    from types import SimpleNamespace

    from shapelint.analysis import module_constants
    from shapelint.notation.symbolic import Expr
    from shapelint.ops.values import IntV

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for name in ("__init__.py", "ops.py", "other.py"):
        (pkg / name).write_text("WIDTH = 3\n")
    an = SimpleNamespace(project=SimpleNamespace(listings={}, digests={}), peeked_paths=set())
    ops = str(pkg / "ops.py")
    assert module_constants.kept(an, IntV(Expr.const(3)), "WIDTH", ops, [str(pkg)])
    assert an.peeked_paths == {str(pkg / n) for n in ("__init__.py", "ops.py", "other.py")}
    assert set(an.project.digests) == an.peeked_paths
