"""Installed packages are read as source, never imported (analysis/installed.py):
a layer of a fake package on the path is followed by a target run, exactly as
FlopCounterMode counts it; a package with no source stays unknown, named."""

from __future__ import annotations

import importlib.machinery
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from shapelint.analysis.driver import AnalysisOptions, analyze_target
from shapelint.analysis.installed import find_module, search_path
from shapelint.analysis.parameters import params_json
from shapelint.analysis.target import target_json

LAYERS = """
import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))
"""

MODEL = """
from torch import nn
import fakepkg_hf
from fakepkg_hf.layers import Mlp
from nsfake_hf.sub.proj import Proj


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.mlp = Mlp(dim, 4 * dim)
        self.mlp2 = fakepkg_hf.Mlp(dim, 2 * dim)
        self.proj = Proj(dim)

    def forward(self, x):
        return self.proj(self.mlp2(self.mlp(x)))
"""

PROJ = """
from torch import nn


class Proj(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, 3 * dim)

    def forward(self, x):
        return self.lin(x)
"""

MISSING = """
from torch import nn
from nowhere_hf_pkg import Thing


class Other(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        return Thing(self.lin(x))
"""


def _write(root, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A site directory with a regular package (whose __init__ would leave a mark if
    it ran) and a namespace package, put on the path."""
    root = tmp_path / "site"
    marker = tmp_path / "imported"
    _write(
        root,
        "fakepkg_hf/__init__.py",
        f"open({str(marker)!r}, 'w').close()\nfrom .layers import Mlp\n",
    )
    _write(root, "fakepkg_hf/layers.py", LAYERS)
    _write(root, "nsfake_hf/sub/proj.py", PROJ)  # no __init__.py anywhere: a namespace
    monkeypatch.syspath_prepend(str(root))
    return root, marker


def _target(tmp_path, src: str, qual: str, installed: bool = True):
    p = tmp_path / "proj" / "model.py"  # a lone script: no package of its own
    p.parent.mkdir(exist_ok=True)
    p.write_text(src)
    opts = AnalysisOptions(installed=installed)
    return target_json(analyze_target(str(p), src, qual, {"dim": "8"}, {"x": "2,8"}, opts), {})


def _run_block(tmp_path) -> int:
    """The oracle: torch runs the project's Block(8) (the analysis did not import it)."""
    sys.path.insert(0, str(tmp_path / "proj"))
    try:
        import model

        return _measure(model.Block(8), torch.randn(2, 8))
    finally:
        sys.path.remove(str(tmp_path / "proj"))
        for name in list(sys.modules):
            if name.split(".")[0] in ("model", "fakepkg_hf", "nsfake_hf"):
                del sys.modules[name]


def _measure(module, x) -> int:
    with FlopCounterMode(display=False) as counter:
        module(x)
    return counter.get_total_flops()


def test_a_layer_of_an_installed_package_is_followed_exactly(tmp_path, site):
    root, marker = site
    tj = _target(tmp_path, MODEL, "Block")
    assert not marker.exists(), "the installed package was imported"
    assert "fakepkg_hf" not in sys.modules
    truth = _run_block(tmp_path)
    assert tj["complete"], tj["unknown"]
    assert tj["flops_value"] == truth == 2 * 2 * 8 * 32 * 2 + 2 * 2 * 8 * 16 * 2 + 2 * 2 * 8 * 24


def test_installed_packages_off_leaves_their_layers_unknown(tmp_path, site):
    tj = _target(tmp_path, MODEL, "Block", installed=False)
    assert not tj["complete"] and tj["flops_value"] is None
    assert {u["op"] for u in tj["unknown"]} >= {"self.mlp", "self.mlp2"}


def test_a_callee_with_no_source_stays_unknown_and_named(tmp_path, site):
    tj = _target(tmp_path, MISSING, "Other")
    assert not tj["complete"]
    assert any("Thing" in u["op"] for u in tj["unknown"]), tj["unknown"]


def test_the_search_agrees_with_pathfinder_without_importing(site, tmp_path):
    """Where CPython's PathFinder finds a source file, so does find_module, and
    neither runs the package (find_spec of a top-level name executes nothing)."""
    root, marker = site
    (root / "compiled_hf").mkdir()
    (root / ("compiled_hf" + importlib.machinery.EXTENSION_SUFFIXES[0])).write_bytes(b"")
    (root / "compiled_hf.py").write_text("")  # an extension module shadows the source
    path = search_path()
    assert str(root.resolve()) in path
    for name in ("fakepkg_hf", "nsfake_hf", "compiled_hf"):
        spec = importlib.machinery.PathFinder.find_spec(name, list(path))
        mine = find_module(name, path)
        origin = spec.origin if spec is not None and (spec.origin or "").endswith(".py") else None
        assert (mine[1] if mine else None) == origin, name
    assert find_module("fakepkg_hf.layers", path)[1] == str(root.resolve() / "fakepkg_hf/layers.py")
    assert find_module("nsfake_hf.sub.proj", path)[1] == str(
        root.resolve() / "nsfake_hf/sub/proj.py"
    )
    assert find_module("fakepkg_hf.layers.deeper", path) is None  # a module has no submodules
    assert find_module("torch.nn", path) is None  # modelled by the stubs, never read
    assert not marker.exists() and "fakepkg_hf" not in sys.modules


def test_the_cli_reads_a_package_on_pythonpath(tmp_path, site):
    root, marker = site
    model = tmp_path / "model.py"
    model.write_text(textwrap.dedent(MODEL))
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([repo, str(root)]))
    cmd = [sys.executable, "-m", "shapelint", "cost", "--no-cache", f"{model}::Block"]
    cmd += ["--init", "dim=8", "--input", "x=2,8"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].endswith("3.84 kFLOPs (3,840)"), out.stdout
    assert "mlp.fc1" in out.stdout  # the installed layer's own layers, costed
    assert not marker.exists()


def test_the_config_key_turns_it_off_and_rejects_a_non_bool(tmp_path):
    from shapelint.config import ConfigError, load

    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.shapelint]\ninstalled = false\n")
    assert AnalysisOptions.from_config(load(explicit=pyproject)).installed is False
    pyproject.write_text('[tool.shapelint]\ninstalled = "no"\n')
    with pytest.raises(ConfigError, match="installed must be true or false"):
        load(explicit=pyproject)


GUARD = """
import importlib.util

import torch
from torch import nn

HAS = importlib.util.find_spec("{name}") is not None


class M(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.a = nn.Linear(dim, dim)

    def forward(self, x):
        if HAS:
            return self.a(self.a(x))
        return self.a(x)
"""


def test_a_find_spec_guard_of_an_absent_module_is_decided(tmp_path):
    # diffusers' `_is_package_available("torch_npu")`: find_spec is None where no
    # entry of sys.path holds the module, as at run time on this interpreter
    t = _target(tmp_path, GUARD.format(name="shapelint_surely_absent_module"), "M")
    assert t["complete"] and t["flops_value"] == 2 * 2 * 8 * 8, t["unknown"]


def test_a_find_spec_guard_of_a_present_module_stays_undecided(tmp_path):
    # json is there: find_spec returns a spec, which the analysis does not make
    t = _target(tmp_path, GUARD.format(name="json"), "M")
    assert not t["complete"]


WRAPPER = """
from torch import nn


class Wrap(nn.Module):
    def __init__(self, branch):
        super().__init__()
        self.branch = branch

    def forward(self, x):
        return self.branch(x) + x
"""

WRAPPED = """
from torch import nn
from fakewrap_hf import Wrap


class Inner(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        return self.lin(x)


class Outer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.wrap = Wrap(Inner(dim))

    def forward(self, x):
        return self.wrap(x)
"""


def _oracle(tmp_path, cls: str, roots: tuple[str, ...]) -> int:
    """FlopCounterMode on the model file as Python imports it."""
    sys.path.insert(0, str(tmp_path / "proj"))
    try:
        import model

        return _measure(getattr(model, cls)(8), torch.randn(2, 8))
    finally:
        sys.path.remove(str(tmp_path / "proj"))
        for name in [m for m in sys.modules if m.split(".")[0] in ("model", *roots)]:
            del sys.modules[name]


def test_an_installed_wrapper_runs_the_projects_layer_it_was_handed(tmp_path, monkeypatch):
    """An installed package's module holding a layer of the user's file (a residual
    wrapper built around it): its forward calls the project's class, whose file is
    on no installed path."""
    root = tmp_path / "site"
    _write(root, "fakewrap_hf/__init__.py", WRAPPER)
    monkeypatch.syspath_prepend(str(root))
    tj = _target(tmp_path, WRAPPED, "Outer")
    truth = _oracle(tmp_path, "Outer", ("fakewrap_hf",))
    assert tj["complete"], tj["unknown"]
    assert tj["flops_value"] == truth == 2 * 2 * 8 * 8


FAKE_EINOPS = """
def rearrange(tensor, pattern, **axes):
    return tensor @ tensor.transpose(-1, -2) @ tensor
"""

USES_EINOPS = """
from torch import nn
from einops import rearrange


class Flip(nn.Module):
    def forward(self, x):
        return rearrange(x, "b d -> b d")
"""

FLIPPED = """
from torch import nn
from fakeein_hf import Flip


class Outer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.flip = Flip()

    def forward(self, x):
        return self.flip(self.lin(x))
"""


def test_a_modelled_library_beside_an_installed_package_is_never_its_source(tmp_path, monkeypatch):
    """A path entry after site-packages (a --target install) holding a package and a
    copy of einops: the package's `from einops import` is the einops Python imports
    first, site-packages', which the analysis models by name; never the copy's source."""
    root = tmp_path / "deps"
    _write(root, "fakeein_hf/__init__.py", USES_EINOPS)
    _write(root, "einops/__init__.py", FAKE_EINOPS)
    monkeypatch.setattr(sys, "path", [*sys.path, str(root)])
    tj = _target(tmp_path, FLIPPED, "Outer")
    truth = _oracle(tmp_path, "Outer", ("fakeein_hf",))
    import einops

    assert not einops.__file__.startswith(str(root))
    assert tj["complete"], tj["unknown"]
    assert tj["flops_value"] == truth == 2 * 2 * 8 * 8


def test_a_standard_library_module_is_found_as_find_spec_finds_it_without_importing():
    # the oracle: importlib's own find_spec, in a fresh interpreter, after the
    # analysis's answer (find_spec of a dotted name imports its parents, so it runs last)
    names = [
        "xml.etree.ElementTree",
        "xml.etree.nothere",
        "json.decoder",
        "os.path",
        "math",
        "concurrent.futures.thread",
        "sqlite3.dbapi2",
        "nothere_stdlib",
        "math.sub",
        "json.decoder.deeper",
    ]
    script = textwrap.dedent(
        f"""
        import importlib.util, sys
        from shapelint.analysis.installed import stdlib_module
        names = {names!r}
        ours = [stdlib_module(n) for n in names]
        imported = any(m in sys.modules for m in ("xml", "concurrent.futures", "sqlite3"))
        def spec(n):
            try:
                return importlib.util.find_spec(n) is not None
            except ImportError:
                return False
        print(ours == [spec(n) for n in names], imported)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]


PICK = """
from torch import nn

_LAYERS = {"linear": nn.Linear}


def get_layer(name):
    return _LAYERS[name]
"""

DEFAULT_FROM_INSTALLED = """
from torch import nn

try:
    from fakepkg_hf.pick import get_layer
except ImportError:
    from fakepkg_hf.pick_old import get_layer

_LAYER = get_layer("linear")


class Block(nn.Module):
    def __init__(self, dim, layer=_LAYER):
        super().__init__()
        self.proj = None if layer is None else layer(dim, 2 * dim)

    def forward(self, x):
        return x if self.proj is None else self.proj(x)
"""


def test_a_default_the_module_pass_cannot_tell_is_read_at_the_call(tmp_path, site):
    # `layer=_LAYER`, a call the module's pass cannot tell (an import under try):
    # the def's default is that value (the module binds _LAYER once), not unknown
    root, _ = site
    _write(root, "fakepkg_hf/pick.py", PICK)
    _write(root, "fakepkg_hf/pick_old.py", PICK)
    tj = _target(tmp_path, DEFAULT_FROM_INSTALLED, "Block")
    truth = _run_block(tmp_path)
    assert tj["complete"], tj["unknown"]
    assert tj["flops_value"] == truth == 2 * 2 * 8 * 16


def _slow(n: int) -> str:
    """A function of n statements: its run at import time costs n steps."""
    return (
        "def slow(reg):\n    n = 0\n" + "    n = n + 1\n" * n + "    reg['k'] = 3\n    return n\n"
    )


HEAVY = (
    """
from torch import nn

REG = {"k": 1}
SCALE = 2
"""
    + _slow(150)
    + """
slow(REG)
WIDTH = slow(REG)


def warm():
    from fakepkg_hf.other import LONG
    return LONG


warm()


class Lin(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim * SCALE)

    def forward(self, x):
        return self.fc(x)
"""
)

OTHER = _slow(150) + "\nLONG = slow({})\nFACTOR = 4\n"

USES_HEAVY = """
from torch import nn
from fakepkg_hf.heavy import REG, WIDTH, Lin
from fakepkg_hf.other import FACTOR


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = Lin(dim)
        self.out = nn.Linear(2 * dim, FACTOR * dim)

    def forward(self, x):
        return self.out(self.lin(x))


class ByRegistry(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, REG["k"] * dim)

    def forward(self, x):
        return self.fc(x)


class ByWidth(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim + WIDTH - 150)

    def forward(self, x):
        return self.fc(x)
"""


def _torch_flops(tmp_path, src: str, classes: tuple[str, ...]):
    """(the project's model.py holding src, {class: the FLOPs torch counts for
    class(8) on a (2, 8) input}): the oracle, which imports the installed package."""
    p = tmp_path / "proj" / "model.py"
    p.parent.mkdir(exist_ok=True)
    p.write_text(src)
    sys.path.insert(0, str(p.parent))
    try:
        import model

        return p, {c: _measure(getattr(model, c)(8), torch.randn(2, 8)) for c in classes}
    finally:
        sys.path.remove(str(p.parent))
        for name in list(sys.modules):
            if name.split(".")[0] in ("model", "fakepkg_hf"):
                del sys.modules[name]


def test_an_import_time_call_past_its_allowance_is_not_followed(tmp_path, site, monkeypatch):
    # `slow(REG)` at an installed module's top level runs past the allowance of
    # statements (import_time.py): read as a call not followed, the names it binds
    # (WIDTH) and the objects it may change (REG) are not known; what it never
    # touches (Lin, SCALE) is, and so is a file whose top level it was reading when
    # cut (other.py: read whole again where the target imports it)
    from shapelint.analysis import import_time, project

    root, _ = site
    _write(root, "fakepkg_hf/heavy.py", HEAVY)
    _write(root, "fakepkg_hf/other.py", OTHER)
    monkeypatch.setattr(import_time, "STEPS", 100)
    project.forget()
    p, truth = _torch_flops(tmp_path, USES_HEAVY, ("Block", "ByRegistry", "ByWidth"))
    assert truth["Block"] == 2 * 2 * 8 * 16 + 2 * 2 * 16 * 32
    assert truth["ByRegistry"] == 2 * 2 * 8 * 24  # slow() set REG["k"] to 3
    opts = AnalysisOptions(installed=True)

    def run(qual: str) -> dict:
        out = analyze_target(str(p), USES_HEAVY, qual, {"dim": "8"}, {"x": "2,8"}, opts)
        return target_json(out, {})

    block = run("Block")
    assert block["complete"], block["unknown"]
    assert block["flops_value"] == truth["Block"]
    for qual in ("ByRegistry", "ByWidth"):
        tj = run(qual)
        assert not tj["complete"] and tj["flops_value"] is None, (qual, tj["flops_value"])
    # followed whole (the default allowance), the figures are torch's where known
    monkeypatch.setattr(import_time, "STEPS", 50_000)
    project.forget()
    for qual in ("Block", "ByRegistry", "ByWidth"):
        tj = run(qual)
        assert not tj["complete"] or tj["flops_value"] == truth[qual], qual


# trio's `__init__` calls `fixup_module_metadata(...)` once per submodule, each call
# the first use of trio/_util.py, whose top level runs too long: each statement is
# cut inside the file's reading, which is forgotten and read again by the next.
SLOW_TOP = (
    _slow(150)
    + """
LONG = slow({})


def fix(d):
    return d
"""
)

FIXES = """
from fakepkg_hf.slow_top import fix

A = fix({"a": 1})
B = fix({"b": 2})
C = fix({"c": 3})
K = 4
"""

USES_FIXES = """
from torch import nn

from fakepkg_hf.fixes import C, K


class Wide(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, K * dim)

    def forward(self, x):
        return self.fc(x)


class ByCut(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, C["c"] * dim)

    def forward(self, x):
        return self.fc(x)
"""


def test_a_read_an_allowance_cut_is_not_read_again_to_the_same_cut(tmp_path, site, monkeypatch):
    # each `fix(...)` statement would read slow_top.py again and be cut at the same
    # place (allowance.py): it is read once, and the figures are as before: what no
    # cut statement binds (K) known, what one binds (C) not known
    from shapelint.analysis import import_time, project

    root, _ = site
    _write(root, "fakepkg_hf/slow_top.py", SLOW_TOP)
    _write(root, "fakepkg_hf/fixes.py", FIXES)
    monkeypatch.setattr(import_time, "STEPS", 100)
    reads: list[str] = []
    load = project.Project._load

    def counted(self, path, root, modname):
        reads.append(modname)
        return load(self, path, root, modname)

    monkeypatch.setattr(project.Project, "_load", counted)
    project.forget()
    p, truth = _torch_flops(tmp_path, USES_FIXES, ("Wide", "ByCut"))
    assert truth == {"Wide": 2 * 2 * 8 * 32, "ByCut": 2 * 2 * 8 * 24}
    opts = AnalysisOptions(installed=True)
    wide = target_json(
        analyze_target(str(p), USES_FIXES, "Wide", {"dim": "8"}, {"x": "2,8"}, opts), {}
    )
    assert reads.count("fakepkg_hf.slow_top") == 1, reads
    assert wide["complete"], wide["unknown"]
    assert wide["flops_value"] == truth["Wide"]
    by_cut = target_json(
        analyze_target(str(p), USES_FIXES, "ByCut", {"dim": "8"}, {"x": "2,8"}, opts), {}
    )
    assert not by_cut["complete"] and by_cut["flops_value"] is None


# An import of a package nobody installed, in a `try` whose handler defines the
# fallback (tape's `from apex... import FusedLayerNorm as LayerNorm`): the handler's
# class is the one Python binds. `Norm` of fakepkg_hf (installed by the `site`
# fixture) costs a projection the fallback does not, so the two are told apart.
FUSED = """
from torch import nn


class Norm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x)
"""

GUARDED = """
import torch
from torch import nn

try:
    from {pkg}.fused import Norm
except (ImportError, AttributeError):

    class Norm(nn.Module):
        def __init__(self, dim, eps=1e-5):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(dim))
            self.eps = eps

        def forward(self, x):
            s = x.pow(2).mean(-1, keepdim=True)
            return self.weight * x / torch.sqrt(s + self.eps)


try:
    import {pkg}.fused

    FUSED = True
except ModuleNotFoundError:
    FUSED = False
"""

GUARDED_MODEL = """
from torch import nn

from .norms import FUSED, Norm


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 2 * dim)
        self.norm = Norm(2 * dim)

    def forward(self, x):
        return self.norm(self.fc(x))


class ByFlag(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim) if FUSED else nn.Linear(dim, 3 * dim)

    def forward(self, x):
        return self.fc(x)


class InForward(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        try:
            from {pkg}.fused import Norm as Fused
        except ImportError:
            return self.fc(x)
        return self.fc(self.fc(x))
"""


def _guarded(tmp_path, pkg: str, params: bool = True) -> tuple[dict, dict]:
    """(the analysis's target json, torch's count) for each class of GUARDED_MODEL
    over a fallback guarding an import of pkg."""
    root = tmp_path / "gproj"
    _write(root, "gpkg/__init__.py", "")
    _write(root, "gpkg/norms.py", GUARDED.format(pkg=pkg))
    model = GUARDED_MODEL.format(pkg=pkg)
    _write(root, "gpkg/model.py", model)
    classes = ("Block", "ByFlag", "InForward")
    opts = AnalysisOptions(installed=True)
    path = str(root / "gpkg" / "model.py")
    static = {}
    for c in classes:
        res = analyze_target(path, model, c, {"dim": "8"}, {"x": "2,8"}, opts)
        static[c] = {**target_json(res, {}), **params_json(res.params, {})}
    sys.path.insert(0, str(root))
    try:
        import gpkg.model

        built = {c: getattr(gpkg.model, c)(8) for c in classes}
        truth = {c: _measure(m, torch.randn(2, 8)) for c, m in built.items()}
        counts = {c: sum(p.numel() for p in m.parameters()) for c, m in built.items()}
    finally:
        sys.path.remove(str(root))
        for name in list(sys.modules):
            if name.split(".")[0] in ("gpkg", "fakepkg_hf", pkg):
                del sys.modules[name]
    for c, tj in static.items():
        assert not params or tj["params_value"] == counts[c], c
    return static, truth


def test_an_import_no_path_entry_holds_runs_the_handler_that_catches_it(tmp_path):
    static, truth = _guarded(tmp_path, "nowhere_installed_hf")
    assert truth == {"Block": 2 * 2 * 8 * 16, "ByFlag": 2 * 2 * 8 * 24, "InForward": 2 * 2 * 8 * 8}
    for c, tj in static.items():
        assert tj["complete"], (c, tj["unknown"])
        assert tj["flops_value"] == truth[c], c


def test_an_import_a_path_entry_holds_keeps_the_try_body(tmp_path, site):
    root, _ = site
    _write(root, "fakepkg_hf/fused.py", FUSED)
    static, truth = _guarded(tmp_path, "fakepkg_hf")
    assert truth["Block"] == 2 * 2 * 8 * 16 + 2 * 2 * 16 * 16  # the installed Norm
    assert truth["ByFlag"] == 2 * 2 * 8 * 8
    for c in ("Block", "ByFlag"):
        assert static[c]["complete"], (c, static[c]["unknown"])
        assert static[c]["flops_value"] == truth[c], c
    # `from m import n` inside a forward may still raise (m may lack n): no figure
    # but torch's, if one
    tj = static["InForward"]
    assert truth["InForward"] == 2 * 2 * 2 * 8 * 8
    assert not tj["complete"] or tj["flops_value"] == truth["InForward"]


class _EditableFinder:
    """An editable install's finder (PEP 660): it maps a package to a folder that no
    sys.path entry holds."""

    def __init__(self, name: str, init: str):
        self.name, self.init = name, init

    def find_spec(self, fullname, path=None, target=None):
        import importlib.util

        if fullname != self.name:
            return None
        return importlib.util.spec_from_file_location(
            fullname, self.init, submodule_search_locations=[os.path.dirname(self.init)]
        )


def test_a_package_an_editable_finder_maps_keeps_the_try_body(tmp_path, monkeypatch):
    # no path entry holds it, but `import` finds it: the handler does not run, and
    # the analysis, which cannot read the package, gives no figure but torch's
    pkg = tmp_path / "elsewhere" / "editable_hf"
    _write(pkg.parent, "editable_hf/__init__.py", "")
    _write(pkg.parent, "editable_hf/fused.py", FUSED)
    monkeypatch.setattr(
        sys, "meta_path", [*sys.meta_path, _EditableFinder("editable_hf", str(pkg / "__init__.py"))]
    )
    static, truth = _guarded(tmp_path, "editable_hf", params=False)
    assert truth["Block"] == 2 * 2 * 8 * 16 + 2 * 2 * 16 * 16  # the package's Norm
    assert truth["ByFlag"] == 2 * 2 * 8 * 8
    for c, tj in static.items():
        assert not tj["complete"] or tj["flops_value"] == truth[c], c
    assert not static["Block"]["complete"]
