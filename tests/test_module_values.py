"""Module objects as values in a target run (analysis/module_values.py):
`importlib.import_module(name, package)` resolves a relative name as Python's
`_resolve_name` does and gives the module, whose attributes are the file's top-level
bindings. Each exact case is judged by FlopCounterMode on the same files imported by
Python; a module whose package writes to `sys.modules` stays not known."""

from __future__ import annotations

import pytest

from shapelint.analysis.module_values import resolve_name
from tests.test_project_roots import layer, python_flops, static_flops, write

torch = pytest.importorskip("torch")


def _net(body: str) -> str:
    return f"""
        import importlib

        from torch import nn


        class Net(nn.Module):
            def __init__(self, d=16):
                super().__init__()
                {body}

            def forward(self, x):
                return self.block(x)
        """


_EXACT = {
    "relative_to_its_package": (
        "self.block = importlib.import_module('.layers', __package__).Block(d)"
    ),
    "two_levels_up": (
        "self.block = importlib.import_module('..sub.layers', 'mv_pkg.sub').Block(d)"
    ),
    "absolute_through_getattr": (
        "self.block = getattr(importlib.import_module('mv_pkg.sub.layers'), 'Block')(d)"
    ),
    "held_in_a_name": (
        "module = importlib.import_module('.layers', package=__package__)\n"
        "                self.block = module.make(d)"
    ),
}


@pytest.mark.parametrize("case", sorted(_EXACT))
def test_an_imported_module_gives_its_bindings(tmp_path, case):
    """main: the call unknown (no module object as a value)."""
    root = write(
        tmp_path,
        {
            "mv_pkg/__init__.py": "",
            "mv_pkg/sub/__init__.py": "",
            "mv_pkg/sub/layers.py": layer(3)
            + "\n\n        def make(d):\n            return Block(d)\n",
            "mv_pkg/sub/model.py": _net(_EXACT[case]),
        },
    )
    expected = python_flops([root], "mv_pkg.sub.model")
    assert expected == 2 * 16 * 48 * 2
    t = static_flops(root / "mv_pkg" / "sub" / "model.py")
    assert t["complete"] and t["flops_value"] == expected, t


_NOT_KNOWN = {
    # the package replaces its module object: what the import finds is that object's
    "package_writes_sys_modules": (
        "import sys\n_real = sys.modules[__name__]\nsys.modules[__name__] = _real\n",
        "self.block = importlib.import_module('mv_gone.sub.layers').Block(d)",
    ),
    # a name the analysis does not know
    "computed_name": (
        "",
        "name = 'mv_gone.sub.' + __import__('os').environ.get('MV_MODULE', 'layers')\n"
        "                self.block = importlib.import_module(name).Block(d)",
    ),
}


@pytest.mark.parametrize("case", sorted(_NOT_KNOWN))
def test_an_import_not_decided_is_not_known(tmp_path, case):
    init, body = _NOT_KNOWN[case]
    root = write(
        tmp_path,
        {
            "mv_gone/__init__.py": init,
            "mv_gone/sub/__init__.py": "",
            "mv_gone/sub/layers.py": layer(3),
            "mv_gone/sub/model.py": _net(body),
        },
    )
    assert python_flops([root], "mv_gone.sub.model") == 2 * 16 * 48 * 2
    t = static_flops(root / "mv_gone" / "sub" / "model.py")
    assert not t["complete"], t


@pytest.mark.parametrize(
    ("name", "package", "expected"),
    [
        ("a.b", None, "a.b"),
        (".b", "a", "a.b"),
        ("..c", "a.b", "a.c"),
        ("..", "a.b", "a"),
        ("...c", "a.b", None),  # beyond the top-level package: ImportError
        (".b", None, None),  # a relative name needs a package: TypeError
    ],
)
def test_relative_names_resolve_as_importlib_does(name, package, expected):
    import importlib._bootstrap as bootstrap

    if expected is not None and name.startswith("."):
        level = len(name) - len(name.lstrip("."))
        assert bootstrap._resolve_name(name[level:], package, level) == expected
    assert resolve_name(name, package) == expected


def test_a_module_of_another_top_level_package_is_not_followed(tmp_path):
    """Importing another top-level package runs its whole top level (module_values'
    docstring): left not known, as main leaves every such import."""
    root = write(
        tmp_path,
        {
            "mv_other/__init__.py": "",
            "mv_other/layers.py": layer(3),
            "mv_home/__init__.py": "",
            "mv_home/model.py": _net(
                "self.block = importlib.import_module('mv_other.layers').Block(d)"
            ),
        },
    )
    assert python_flops([root], "mv_home.model") == 2 * 16 * 48 * 2
    t = static_flops(root / "mv_home" / "model.py")
    assert not t["complete"], t
