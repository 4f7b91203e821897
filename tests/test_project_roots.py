"""Imports resolved as Python resolves them: a package before a module of the same
name, and absolute imports of project modules along the project's roots (a script's
directory, [tool.shapelint] roots, the pyproject's directory and its src/, the
directories given on the command line). Targets that cross files are judged by
FlopCounterMode on the same modules imported by Python with the same sys.path."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from shapelint.analysis.project import find_module
from shapelint.cli import main

torch = pytest.importorskip("torch")


def write(root: Path, files: dict[str, str]) -> Path:
    for name, code in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(code))
    return root


def layer(width: int) -> str:
    """A module whose Block maps d to width*d: each file's own FLOPs tell them apart."""
    return f"""
        from torch import nn


        class Block(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.fc = nn.Linear(d, {width} * d)

            def forward(self, x):
                return self.fc(x)
        """


def net(import_line: str) -> str:
    return f"""
        from torch import nn
        {import_line}


        class Net(nn.Module):
            def __init__(self, d=16):
                super().__init__()
                self.block = Block(d)

            def forward(self, x):
                return self.block(x)
        """


def static_flops(target: Path, *paths: Path, cwd: Path | None = None) -> dict:
    """`shapelint cost TARGET::Net --input x=2,16 [PATHS]`'s target."""
    args = ["cost", "--no-cache", "--format", "json", f"{target}::Net", "--input", "x=2,16"]
    r = CliRunner().invoke(main, [*args, *map(str, paths)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)["target"]


def python_flops(sys_path: list[Path], module: str) -> int:
    """FlopCounterMode's count for module.Net()(x), imported by Python along sys_path."""
    from torch.utils.flop_counter import FlopCounterMode

    saved, before = list(sys.path), set(sys.modules)
    sys.path[:0] = [str(p) for p in sys_path]
    try:
        mod = importlib.import_module(module)
        with torch.no_grad(), FlopCounterMode(display=False) as fc:
            mod.Net()(torch.randn(2, 16))
        return fc.get_total_flops()
    finally:
        sys.path[:] = saved
        # Only the project's modules go: torch's own, imported lazily meanwhile,
        # stay (some register themselves with torch once per process).
        # (submodules first: a namespace package reads its parent's path to list its own)
        for name in sorted(set(sys.modules) - before, key=lambda n: -n.count(".")):
            if module_of_project(sys.modules[name], sys_path):
                del sys.modules[name]


def module_of_project(mod, sys_path: list[Path]) -> bool:
    files = [getattr(mod, "__file__", None), *(getattr(mod, "__path__", None) or [])]
    return any(f and any(Path(f).is_relative_to(p) for p in sys_path) for f in files)


def test_a_package_comes_before_a_module_of_the_same_name(tmp_path):
    root = write(
        tmp_path,
        {
            "rt_pkg/__init__.py": "",
            "rt_pkg/a/__init__.py": layer(2),  # what Python imports
            "rt_pkg/a.py": layer(8),  # shadowed by the package: never read
            "rt_pkg/model.py": net("from rt_pkg.a import Block"),
            "rt_pkg/rel.py": net("from .a import Block"),
        },
    )
    expected = python_flops([root], "rt_pkg.model")
    assert expected == 2 * 16 * 32 * 2  # batch 2, 16 -> 32
    for name in ("model", "rel"):
        t = static_flops(root / "rt_pkg" / f"{name}.py")
        assert t["complete"] and t["flops_value"] == expected, (name, t)
    assert find_module((str(root),), "rt_pkg.a") == (
        str(root / "rt_pkg" / "a" / "__init__.py"),
        True,
    )


@pytest.mark.parametrize(
    "init", ["from . import blocks\n", "from .core import *\n", "from . import blocks as b\n"]
)
def test_a_package_that_imports_its_own_submodule_gives_that_module(tmp_path, init):
    """`from .. import blocks` in a subpackage reads the package's attribute blocks,
    which its `__init__.py` bound to the submodule itself (directly, or through a
    star import of a module that imports it): the submodule, never a circle of
    links (main: the call unknown)."""
    root = write(
        tmp_path,
        {
            "rt_self/__init__.py": init,
            "rt_self/core.py": "from . import blocks\n",
            "rt_self/blocks.py": layer(2),
            "rt_self/sub/__init__.py": "",
            "rt_self/sub/model.py": """
                from torch import nn
                from .. import blocks


                class Net(nn.Module):
                    def __init__(self, d=16):
                        super().__init__()
                        self.block = blocks.Block(d)

                    def forward(self, x):
                        return self.block(x)
                """,
        },
    )
    expected = python_flops([root], "rt_self.sub.model")
    t = static_flops(root / "rt_self" / "sub" / "model.py")
    assert t["complete"] and t["flops_value"] == expected, t


def test_a_script_imports_the_module_beside_it(tmp_path):
    """`python model.py` puts the script's directory first on sys.path."""
    root = write(
        tmp_path, {"rt_blocks.py": layer(4), "rt_model.py": net("from rt_blocks import Block")}
    )
    t = static_flops(root / "rt_model.py")
    assert t["complete"] and t["flops_value"] == python_flops([root], "rt_model")


@pytest.mark.parametrize(
    "config",
    [
        "[project]\nname = 'x'\n",  # any pyproject: its directory is a root
        "[tool.shapelint]\nroots = ['.']\n",
        "[tool.shapelint]\nselect = ['SHP']\n",  # no roots given: the pyproject's directory
    ],
    ids=["pyproject", "roots", "shapelint-table"],
)
def test_absolute_imports_along_the_project_root(tmp_path, config):
    root = write(
        tmp_path,
        {
            "pyproject.toml": config,
            "rt_lib/__init__.py": "",
            "rt_lib/a.py": layer(3),
            "apps/rt_train.py": net("from rt_lib.a import Block"),
        },
    )
    t = static_flops(root / "apps" / "rt_train.py")
    assert t["complete"] and t["flops_value"] == python_flops([root / "apps", root], "rt_train")


def test_without_a_root_the_import_is_not_followed(tmp_path):
    """No pyproject, no directory given: `rt_lib` is not on the path, as for Python."""
    root = write(
        tmp_path / "p",
        {
            "rt_lib/__init__.py": "",
            "rt_lib/a.py": layer(3),
            "apps/rt_train.py": net("from rt_lib.a import Block"),
        },
    )
    t = static_flops(root / "apps" / "rt_train.py")
    assert not t["complete"] and t["flops_value"] is None
    # The directory given on the command line is a root.
    t = static_flops(root / "apps" / "rt_train.py", root)
    assert t["complete"] and t["flops_value"] == python_flops([root / "apps", root], "rt_train")


def test_src_layout_and_namespace_packages(tmp_path):
    root = write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "src/rt_nslib/layers.py": layer(5),  # rt_nslib has no __init__.py: a namespace package
            "scripts/rt_run.py": net("from rt_nslib.layers import Block"),
        },
    )
    t = static_flops(root / "scripts" / "rt_run.py")
    expected = python_flops([root / "scripts", root / "src"], "rt_run")
    assert t["complete"] and t["flops_value"] == expected


def test_an_earlier_root_wins(tmp_path):
    root = write(
        tmp_path,
        {
            "pyproject.toml": "[tool.shapelint]\nroots = ['first', 'second']\n",
            "first/rt_blocks.py": layer(2),
            "second/rt_blocks.py": layer(6),
            "app/rt_main.py": net("from rt_blocks import Block"),
        },
    )
    t = static_flops(root / "app" / "rt_main.py")
    expected = python_flops([root / "app", root / "first", root / "second"], "rt_main")
    assert t["complete"] and t["flops_value"] == expected == 2 * 16 * 32 * 2


def test_check_follows_a_root_import_across_files(tmp_path):
    """A shape contradiction across files is found through an absolute import."""
    root = write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "rt_lib/__init__.py": "",
            "rt_lib/ops.py": """
                from jaxtyping import Float
                from torch import Tensor


                def norm(x: Float[Tensor, "b d"]) -> Float[Tensor, "b d"]:
                    return x
                """,
            "apps/rt_use.py": """
                import torch
                from rt_lib.ops import norm


                def main():
                    return norm(torch.zeros(2, 3, 4))
                """,
        },
    )
    r = CliRunner().invoke(main, ["check", "--no-cache", "--format", "json", str(root / "apps")])
    found = [(Path(d["path"]).name, d["code"]) for d in json.loads(r.output)]
    assert ("rt_use.py", "SHP305") in found, r.output


def test_find_module_follows_the_path_finder(tmp_path):
    root = write(
        tmp_path,
        {"one/m.py": "", "one/ns/x.py": "", "two/m/__init__.py": "", "two/ns/y.py": ""},
    )
    one, two = str(root / "one"), str(root / "two")
    # A module on an earlier root before a package on a later one.
    assert find_module((one, two), "m") == (str(root / "one" / "m.py"), True)
    assert find_module((two, one), "m") == (str(root / "two" / "m" / "__init__.py"), True)
    # A namespace package spans roots, and has no file of its own.
    assert find_module((one, two), "ns") == (None, True)
    assert find_module((one, two), "ns.y") == (str(root / "two" / "ns" / "y.py"), True)
    assert find_module((one, two), "m.x") == (None, False)  # a module has no submodules
    assert find_module((one, two), "missing") == (None, False)


def test_a_namespace_directory_does_not_shadow_a_library(tmp_path):
    """A module a namespace package holds is the project's (`from rt_ns import
    rt_layers`); a directory named like a library without __init__.py (notes, data)
    is no project module (Python passes over it for the installed package), and
    torch stays torch."""
    root = write(
        tmp_path,
        {
            "torch/notes.txt": "",
            "rt_ns/rt_layers.py": layer(3),
            "rt_model.py": net("from rt_ns import rt_layers").replace(
                "Block(d)", "rt_layers.Block(d)"
            ),
        },
    )
    (root / "torch" / "notes.txt").write_text("not code")
    t = static_flops(root / "rt_model.py")
    assert t["complete"] and t["flops_value"] == 2 * 16 * 48 * 2


def test_a_folder_without_init_inside_a_package_is_its_namespace_subpackage(tmp_path):
    """super-image's `super_image/models/msrn/modeling_msrn.py` (msrn has no
    __init__.py) imports `from ...modeling_utils import default_conv`: a relative
    import runs only in a package, so the file is `rt_sipkg.models.msrn.modeling`,
    msrn a namespace package inside the regular rt_sipkg.models (PEP 420), and the
    three dots reach rt_sipkg."""
    root = write(
        tmp_path,
        {
            "rt_sipkg/__init__.py": "",
            "rt_sipkg/utils.py": """
                from torch import nn


                def default_conv(d, width):
                    return nn.Linear(d, width * d)
                """,
            "rt_sipkg/models/__init__.py": "",
            "rt_sipkg/models/msrn/config.py": "WIDTH = 7\n",
            "rt_sipkg/models/msrn/modeling.py": """
                from torch import nn

                from ...utils import default_conv
                from .config import WIDTH


                class Net(nn.Module):
                    def __init__(self, d=16, conv=default_conv):
                        super().__init__()
                        self.block = conv(d, WIDTH)

                    def forward(self, x):
                        return self.block(x)
                """,
            # no relative import: it may run as a script, from its own folder
            "rt_sipkg/tools/rt_tool.py": net("from rt_tool_layers import Block"),
            "rt_sipkg/tools/rt_tool_layers.py": layer(3),
        },
    )
    t = static_flops(root / "rt_sipkg" / "models" / "msrn" / "modeling.py")
    expected = python_flops([root], "rt_sipkg.models.msrn.modeling")
    assert t["complete"] and t["flops_value"] == expected == 2 * 16 * 112 * 2
    t = static_flops(root / "rt_sipkg" / "tools" / "rt_tool.py")
    expected = python_flops([root / "rt_sipkg" / "tools"], "rt_tool")
    assert t["complete"] and t["flops_value"] == expected == 2 * 16 * 48 * 2


@pytest.mark.parametrize("inner", ["", "@twice"])
def test_a_re_exported_decorator_that_hands_back_is_read_not_run(tmp_path, monkeypatch, inner):
    """`@deco` re-exported by a package, handing the function back through the
    helpers it returns (transformers' auto_docstring): read off the files' syntax
    (bindings.py, handing_back.py), its file's top level is never analysed, and
    the figure is torch's; over a decorator that wraps (`twice`, run as before)
    too."""
    from shapelint.analysis import project

    root = write(
        tmp_path,
        {
            "rt_dpkg/__init__.py": "from .docs import deco\nfrom .wrap import twice\n",
            "rt_dpkg/docs.py": """
                TABLE = {k: k * k for k in range(50)}


                def _mark(func, note=None):
                    func.__doc__ = note
                    return func


                def deco(obj=None, *, note=None):
                    def apply(f):
                        return _mark(f, note)

                    if obj:
                        return apply(obj)
                    return apply
                """,
            "rt_dpkg/wrap.py": """
                def twice(fn):
                    def run(self, x):
                        return fn(self, fn(self, x))

                    return run
                """,
            "rt_dmodel.py": f"""
                from torch import nn

                from rt_dpkg import deco, twice


                class Net(nn.Module):
                    def __init__(self, d=16):
                        super().__init__()
                        self.fc = nn.Linear(d, d)

                    @deco
                    {inner}
                    def forward(self, x):
                        return self.fc(x)
                """,
        },
    )
    loaded = []
    real = project.Project._load

    def load(self, path, root_, modname):
        loaded.append(modname)
        return real(self, path, root_, modname)

    monkeypatch.setattr(project.Project, "_load", load)
    t = static_flops(root / "rt_dmodel.py", cwd=root)
    expected = python_flops([root], "rt_dmodel")
    assert t["complete"] and t["flops_value"] == expected == 2 * 16 * 16 * 2 * (2 if inner else 1)
    assert "rt_dpkg.docs" not in loaded


def test_a_relative_import_inside_a_function_names_the_project_module(tmp_path, monkeypatch):
    """`from ..ff import FeedForward` in a constructor (pina's LowRankBlock), `from .
    import sib` in a helper: the module the import names relative to the file's
    package, as a top-level relative import's (main: the name unbound, the block it
    builds not known). Judged by FlopCounterMode on the package imported."""
    from tests.test_modules import static_target

    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    pkg = tmp_path / "relpkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "ff.py").write_text(
        textwrap.dedent(
            """
            from torch import nn

            class FeedForward(nn.Module):
                def __init__(self, a, b):
                    super().__init__()
                    self.lin = nn.Linear(a, b)

                def forward(self, x):
                    return self.lin(x)
            """
        )
    )
    (pkg / "sub" / "sib.py").write_text("from torch import nn\n\nWIDTH = 3\nAct = nn.Tanh\n")
    block = pkg / "sub" / "block.py"
    block.write_text(
        textwrap.dedent(
            """
            from torch import nn

            def act():
                from . import sib

                return sib.Act()

            class Block(nn.Module):
                def __init__(self, c):
                    super().__init__()
                    from ..ff import FeedForward
                    from .sib import WIDTH as W

                    self.basis = FeedForward(c, c * W)
                    self.act = act()

                def forward(self, x):
                    return self.act(self.basis(x))
            """
        )
    )
    t = static_target(block, "Block", {"c": "4"}, {"x": "2,4"})
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("relpkg.sub.block")
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        mod.Block(4)(torch.randn(2, 4))
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fc.get_total_flops()
