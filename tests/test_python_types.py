"""Python's type tests and class identity in target runs (issue 24): `isinstance`
against `type`, `functools.partial`, `types.FunctionType` and `torch.Tensor`,
classes compared with `is`, `==` and `in` a set of classes, a class's `__name__`,
`int()` of a bool, and the names `from m import *` binds. Each module is judged by
FlopCounterMode on the same module and inputs; each case took another layer (or
none) on the code before these semantics."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import textwrap

import pytest

from shapelint.analysis.driver import analyze_target
from shapelint.analysis.parameters import params_json
from shapelint.analysis.target import target_json
from tests.test_modules import counted, static_target, write
from tests.test_object_model import assert_exact

torch = pytest.importorskip("torch")

# A factory that picks a layer class by testing the class it is given, as layer
# factories do (a norm class mapped to its norm+activation counterpart).
FACTORY = """
    import functools
    import types

    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class NormAct(nn.BatchNorm2d):
        def __init__(self, num_features, apply_act=True, act_layer=nn.ReLU):
            super().__init__(num_features)
            self.act = act_layer() if apply_act else nn.Identity()
            self.proj = nn.Conv2d(num_features, num_features, 1)

        def forward(self, x):
            return self.proj(self.act(super().forward(x)))


    class GroupNormAct(nn.GroupNorm):
        def __init__(self, num_features, apply_act=True, act_layer=nn.ReLU):
            super().__init__(1, num_features)


    _BY_NAME = dict(batchnorm=NormAct, groupnorm=GroupNormAct)
    _NORM_ACT_TYPES = {m for _, m in _BY_NAME.items()}
    _FROM_NORM = dict(batchnorm2d=NormAct, groupnorm=GroupNormAct)
    _TAKES_ACT = {NormAct, GroupNormAct}


    def get_norm_act_layer(norm_layer, act_layer=None):
        assert isinstance(norm_layer, (type, str, types.FunctionType, functools.partial))
        kwargs = {}
        if isinstance(norm_layer, functools.partial):
            kwargs.update(norm_layer.keywords)
            norm_layer = norm_layer.func
        if isinstance(norm_layer, str):
            layer = _BY_NAME[norm_layer]
        elif norm_layer in _NORM_ACT_TYPES:
            layer = norm_layer
        elif isinstance(norm_layer, types.FunctionType):
            layer = norm_layer
        else:
            layer = _FROM_NORM.get(norm_layer.__name__.lower(), None)
            assert layer is not None
        if layer in _TAKES_ACT:
            kwargs.setdefault("act_layer", act_layer)
        if kwargs:
            layer = functools.partial(layer, **kwargs)
        return layer
"""

CASES = {
    # a torch class by its __name__, then a set of project classes: NormAct, with a conv
    "class_mapped_by_name": (
        """
        class Net(nn.Module):
            def __init__(self, c, norm_layer=nn.BatchNorm2d):
                super().__init__()
                self.bn = get_norm_act_layer(norm_layer, nn.GELU)(c)

            def forward(self, x):
                return self.bn(x)
        """,
        "Net",
        dict(c=4),
        dict(x=(2, 4, 8, 8)),
    ),
    # a class handed as the layer to build is no module instance: a class object is an
    # instance of its metaclass, and no class of torch.nn derives from type (main left
    # `isinstance(norm, nn.Module)` undecided: the layer `norm(c)` builds not known)
    "class_object_is_no_module_instance": (
        """
        class Local(nn.Module):
            def forward(self, x):
                return x * 2

        def create(norm, c, **kw):
            if isinstance(norm, nn.Module):
                return norm
            if isinstance(norm, (nn.Linear, nn.modules.module.Module)):
                return nn.Identity()
            return norm(c, **kw) if c else None

        class Net(nn.Module):
            def __init__(self, c, norm=nn.LayerNorm, norm_kwargs=None):
                super().__init__()
                self.norm = create(norm, c, **(norm_kwargs or {}))
                self.lin = create(nn.Linear, c, out_features=c)
                self.mine = Local() if not isinstance(Local, nn.Module) else nn.Linear(c, c)

            def forward(self, x):
                return self.mine(self.lin(self.norm(x)))
        """,
        "Net",
        dict(c=4),
        dict(x=(2, 3, 4)),
    ),
    # a torch dtype is an instance of no builtin class (torch.dtype is a C type of its
    # own): a config store converting dicts and lists decides it (main: undecided)
    "dtype_is_no_builtin_instance": (
        """
        def widen(value, c):
            if isinstance(value, (list, tuple, dict, int, str)):
                return nn.Linear(c, 2 * c)
            return nn.Linear(c, c)

        class Net(nn.Module):
            def __init__(self, c, dtype=torch.float32):
                super().__init__()
                self.lin = widen(dtype, c)

            def forward(self, x):
                return self.lin(x)
        """,
        "Net",
        dict(c=4),
        dict(x=(2, 4)),
    ),
    # a class already in the set is kept (`in` by identity), wrapped in a partial
    "class_in_a_set_of_classes": (
        """
        class Net(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.bn = get_norm_act_layer(NormAct, nn.ReLU)(c)
                self.same = NormAct is _BY_NAME["batchnorm"] and NormAct != GroupNormAct
                self.lin = nn.Linear(8, 8)

            def forward(self, x):
                if self.same:
                    x = self.lin(x)
                return self.bn(x)
        """,
        "Net",
        dict(c=4),
        dict(x=(2, 4, 8, 8)),
    ),
    # a name, and a partial whose keywords are taken apart and bound again
    "partial_and_string": (
        """
        class Net(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.a = get_norm_act_layer("batchnorm", nn.ReLU)(c)
                self.b = get_norm_act_layer(functools.partial(NormAct, apply_act=False))(c)

            def forward(self, x):
                return self.b(self.a(x))
        """,
        "Net",
        dict(c=4),
        dict(x=(2, 4, 8, 8)),
    ),
    # a tensor is a torch.Tensor: the tensor path runs, not the other one
    "isinstance_of_a_tensor": (
        """
        class Net(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.lin = nn.Linear(c, c)
                self.big = nn.Linear(c, 4 * c)

            def forward(self, x):
                if isinstance(x, torch.Tensor) and not isinstance(x, (int, str)):
                    return self.lin(x)
                return self.big(x)
        """,
        "Net",
        dict(c=8),
        dict(x=(2, 8)),
    ),
    # a function is no class and a class no function: each test decides its branch
    "functions_and_classes": (
        """
        def make(c):
            return nn.Linear(c, c)

        class Net(nn.Module):
            def __init__(self, c, layer=make, norm=nn.LayerNorm):
                super().__init__()
                fn = isinstance(layer, types.FunctionType) and not isinstance(layer, type)
                cls = isinstance(norm, type) and not isinstance(norm, functools.partial)
                self.lin = layer(c) if fn else nn.Linear(c, 4 * c)
                self.extra = nn.Linear(c, c) if cls and norm.__name__ == "LayerNorm" else None

            def forward(self, x):
                x = self.lin(x)
                if self.extra is not None:
                    x = self.extra(x)
                return x
        """,
        "Net",
        dict(c=8),
        dict(x=(2, 8)),
    ),
    # a plain object whose __call__ runs the layers (an attention processor), called
    # with keyword arguments filtered by a dict comprehension over no kwargs
    "callable_object_and_filtered_kwargs": (
        """
        import inspect

        class Processor:
            def __call__(self, attn, x, mask=None):
                return attn.to_out(attn.to_q(x))

        class Attn(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.to_q = nn.Linear(dim, dim)
                self.to_out = nn.Linear(dim, dim)
                self.processor = Processor()

            def forward(self, x, mask=None, **kw):
                accepted = set(inspect.signature(self.processor.__call__).parameters)
                kw = {k: w for k, w in kw.items() if k in accepted}
                return self.processor(self, x, mask=mask, **kw)
        """,
        "Attn",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # int() of a bool is 0 or 1 (a weight with a column more when a flag is set)
    "int_of_a_bool": (
        """
        class Conv(nn.Module):
            def __init__(self, cin, cout, k, ones=False):
                super().__init__()
                self.weight = nn.Parameter(torch.randn(cout, cin + int(ones), k))

            def forward(self, x):
                return F.conv1d(x, self.weight, padding="same")
        """,
        "Conv",
        dict(cin=4, cout=8, k=3),
        dict(x=(2, 4, 16)),
    ),
    # a bool in arithmetic is the int it equals (bool is an int subclass): a column
    # more per flag set, `cin + ones + (k == 3)`, and True * 2.0 a float
    "arithmetic_on_a_bool": (
        """
        class Conv(nn.Module):
            def __init__(self, cin, cout, k, ones=True):
                super().__init__()
                extra = ones + (k == 3) + (ones - True) * 2
                width = int(True * 2.0) + cin
                self.weight = nn.Parameter(torch.randn(cout, width + extra - 2, k))

            def forward(self, x):
                return F.conv1d(x, self.weight, padding="same")
        """,
        "Conv",
        dict(cin=4, cout=8, k=3),
        dict(x=(2, 6, 16)),
    ),
    # torch.movedim / Tensor.movedim: the moved dims at their places, the rest in order
    "movedim": (
        """
        class Net(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.lin = nn.Linear(3, d)
                self.lin2 = nn.Linear(2, d)

            def forward(self, x):
                y = x.movedim(1, -1)
                z = torch.movedim(x, (0, 1), (2, 0))
                return self.lin(y).sum() + self.lin2(z).sum()
        """,
        "Net",
        dict(d=4),
        dict(x=(2, 3, 5)),
    ),
    # membership in a set display of constants
    "in_a_set_of_strings": (
        """
        class Net(nn.Module):
            def __init__(self, c, mode="wide"):
                super().__init__()
                wide = mode in {"wide", "huge"} and mode not in {"thin"}
                self.lin = nn.Linear(c, 4 * c if wide else c)

            def forward(self, x):
                return self.lin(x)
        """,
        "Net",
        dict(c=8),
        dict(x=(2, 8)),
    ),
    # a lambda, a function and a bound method are instances of no module class
    # (x-transformers' `d() if not isinstance(d, Module) and callable(d) else d`)
    "a_function_is_no_module": (
        """
        from torch.nn import Module

        def default(val, d):
            if val is not None:
                return val
            return d() if not isinstance(d, Module) and callable(d) else d

        def make():
            return nn.Linear(4, 4)

        class Net(nn.Module):
            def __init__(self, c, same=True):
                super().__init__()
                self.proj = default(None, lambda: nn.Identity() if same else nn.Linear(4, 4))
                self.lin = default(None, make)
                self.flag = isinstance(make, (Module, NormAct)) or isinstance(make, nn.Linear)

            def forward(self, x):
                x = self.lin(self.proj(x))
                return x if self.flag else self.lin(x)
        """,
        "Net",
        dict(c=4),
        dict(x=(2, 4)),
    ),
}

_CONFIG = """
    from dataclasses import dataclass
    from typing import Optional, Tuple, Union


    @dataclass
    class Cfg:
        layers: Union[Tuple[int, int], int] = 2
        width: int = 16
        timm_model_name: Optional[str] = None


    class Net(nn.Module):
        def __init__(self, cfg: Cfg):
            super().__init__()
            if isinstance(cfg, dict):
                cfg = Cfg(**cfg)
            if cfg.timm_model_name:
                self.body = nn.Linear(cfg.width, 3)
            elif isinstance(cfg.layers, (tuple, list)):
                self.body = nn.Linear(cfg.width, 5)
            else:
                self.body = nn.Linear(cfg.width, cfg.width)

        def forward(self, x):
            return self.body(x)
    """
# open_clip's tower builders: a dataclass config given to the constructor is no dict
# (main left `isinstance(cfg, dict)` undecided: every model built from one was `?`)
CASES.update(
    {
        f"isinstance_of_a_dataclass_config_{i}": (_CONFIG, "Net", dict(cfg=given), dict(x=(2, 16)))
        for i, given in enumerate(("Cfg()", "Cfg(layers=(1, 2))", "Cfg(timm_model_name='x')"))
    }
)


@pytest.mark.parametrize("key", sorted(CASES))
def test_exact_against_flop_counter(tmp_path, key):
    assert_exact(tmp_path, key, CASES[key], header=textwrap.dedent(FACTORY))


def test_a_class_under_an_undecided_module_level_if(tmp_path):
    # `if version_check(): LayerNorm = nn.LayerNorm` / `else: class LayerNorm(...)`:
    # the name is one of the two classes, never nothing; both cost the same here.
    path = write(
        tmp_path,
        "guarded.py",
        """
        import sys

        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        def newer():
            return sys.version_info >= (3, 1)

        if newer():
            LayerNorm = nn.LayerNorm
        else:
            class LayerNorm(nn.Module):
                def __init__(self, dim, eps=1e-5):
                    super().__init__()
                    self.dim = (dim,)
                    self.weight = nn.Parameter(torch.ones(dim))
                    self.bias = nn.Parameter(torch.zeros(dim))
                    self.eps = eps

                def forward(self, x):
                    return F.layer_norm(x, self.dim, self.weight, self.bias, self.eps)

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.norm = LayerNorm(dim)
                self.lin = nn.Linear(dim, dim)

            def forward(self, x):
                return self.lin(self.norm(x))
        """,
    )
    t = static_target(path, "Net", {"dim": "8"}, {"x": "2,8"})
    truth = counted(path, "Net(8)", {"x": torch.randn(2, 8)})
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth


def test_names_bound_by_a_star_import(tmp_path, monkeypatch):
    # `from .norms import *` binds what norms defines (its `__all__`, else its public
    # names): the classes a table of the importing file holds are known.
    pkg = tmp_path / "starpkg"
    write(pkg, "__init__.py", "")
    write(
        pkg,
        "norms.py",
        """
        import torch.nn as nn

        __all__ = ["Wide", "Narrow"]

        class Wide(nn.Linear):
            def __init__(self, c):
                super().__init__(c, 4 * c)

        class Narrow(nn.Linear):
            def __init__(self, c):
                super().__init__(c, c)

        class Hidden(nn.Linear):
            pass
        """,
    )
    path = write(
        pkg,
        "model.py",
        """
        import torch.nn as nn
        from .norms import *

        TABLE = dict(wide=Wide, narrow=Narrow)
        KNOWN = {m for m in TABLE.values()}

        class Net(nn.Module):
            def __init__(self, c, kind=Narrow):
                super().__init__()
                layer = kind if kind in KNOWN else Wide
                self.lin = layer(c)

            def forward(self, x):
                return self.lin(x)
        """,
    )
    t = static_target(path, "Net", {"c": "8"}, {"x": "2,8"})
    monkeypatch.syspath_prepend(str(tmp_path))
    from torch.utils.flop_counter import FlopCounterMode

    net = importlib.import_module("starpkg.model").Net(8)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        net(torch.randn(2, 8))
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fc.get_total_flops()


def test_library_names_another_project_file_imports(tmp_path, monkeypatch):
    # `from .acts import *` binds the `nn` acts imported from torch (no `__all__`:
    # every public name of acts' namespace), and `from .acts import F` the F it
    # imported: factory.py uses both without importing torch itself.
    pkg = tmp_path / "libpkg"
    write(pkg, "__init__.py", "")
    write(
        pkg,
        "acts.py",
        """
        import torch
        from torch import nn as nn
        from torch.nn import functional as F
        """,
    )
    write(
        pkg,
        "factory.py",
        """
        from .acts import *
        from .acts import F as G

        _LAYERS = dict(relu=nn.ReLU, wide=nn.Linear)

        def get_layer(name):
            return _LAYERS[name.lower()]

        def gate(x):
            return G.linear(x, torch.ones(8, 8))
        """,
    )
    path = write(
        pkg,
        "model.py",
        """
        import torch.nn as nn
        from .factory import get_layer, gate

        class Net(nn.Module):
            def __init__(self, c, act="RELU"):
                super().__init__()
                self.lin = get_layer("wide")(c, 2 * c)
                self.act = get_layer(act)()

            def forward(self, x):
                return gate(self.act(self.lin(x))[..., :8])
        """,
    )
    res = analyze_target(str(path), path.read_text(), "Net", {"c": "8"}, {"x": "2,8"})
    t = target_json(res, {})
    monkeypatch.syspath_prepend(str(tmp_path))
    from torch.utils.flop_counter import FlopCounterMode

    net = importlib.import_module("libpkg.model").Net(8)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        net(torch.randn(2, 8))
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fc.get_total_flops()
    count = params_json(res.params, {})["params_value"]
    assert count == sum(p.numel() for p in net.parameters())


def test_a_tensor_against_the_abstract_collections(tmp_path):
    # A tensor is Iterable and a Collection (len, iter, in) but no Sequence or
    # Mapping: a cast that recurses into containers takes the tensor branch.
    path = write(
        tmp_path,
        "casting.py",
        """
        from collections.abc import Collection, Iterable, Mapping
        from typing import Sequence

        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.lin = nn.Linear(d, d)
                self.wide = nn.Linear(d, 4 * d)

            def cast(self, data):
                if isinstance(data, Mapping):
                    return {k: self.cast(data[k]) for k in data}
                if isinstance(data, Sequence):
                    return type(data)(self.cast(s) for s in data)
                return self.lin(data)

            def forward(self, x):
                y = self.cast(x)
                if isinstance(y, Iterable) and isinstance(y, Collection):
                    return y
                return self.wide(y)
        """,
    )
    t = static_target(path, "Net", {"d": "8"}, {"x": "2,8"})
    truth = counted(path, "Net(8)", {"x": torch.randn(2, 8)})
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth


def test_abs_of_a_tensor_is_its_dunder_torch_abs(tmp_path):
    # tsai's PPAuc: `abs(x).sum(dim)`; Python's abs calls `type(x).__abs__`, which
    # for a tensor is torch.abs: the tensor's shape, a number's abs beside it
    path = write(
        tmp_path,
        "absolute.py",
        """
        import torch.nn as nn
        import torch.nn.functional as F

        class Net(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.fc = nn.Linear(d, abs(-2) * d)

            def forward(self, x):
                ratio = F.relu(x).sum(-1) / (abs(x).sum(-1) + 1e-8)
                y = abs(self.fc(x))
                return self.fc(abs(x)) @ y.transpose(-1, -2) * ratio[:, None]
        """,
    )
    t = static_target(path, "Net", {"d": "8"}, {"x": "2,8"})
    truth = counted(path, "Net(8)", {"x": torch.randn(2, 8)})
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth == 2 * (2 * 2 * 8 * 16) + 2 * 2 * 16 * 2
    assert t["output"] == ["2", "2"]


def test_version_checks_by_an_operator_table(tmp_path):
    # A version check as libraries write it: an instance of a class deriving from
    # object alone is no str (so no metadata lookup of it), and `operator.lt` taken
    # from a table compares as `<` does, running nothing on a device. A class with a
    # builtin base may be a str: that test stays undecided, and the call it guards
    # counts as not known.
    path = write(
        tmp_path,
        "versions.py",
        """
        import importlib.metadata as metadata
        import operator as op

        import torch.nn as nn
        import torch.nn.functional as F

        OPS = {"<": op.lt, ">=": op.ge}

        class _Base:
            def __lt__(self, other):
                return self.key < other.key

        class Version(_Base):
            def __init__(self, text):
                self.key = tuple(int(p) for p in text.split("."))

        class Tag(str):
            pass

        def compare(lib, how, req):
            if isinstance(lib, str):
                lib = Version(metadata.version(lib))
            return OPS[how](lib, Version(req))

        class Net(nn.Module):
            def __init__(self, d, tagged=False):
                super().__init__()
                self.lin = nn.Linear(d, d)
                self.tagged = tagged

            def forward(self, x):
                x = self.lin(x)
                v = Tag("1.0") if self.tagged else Version("2.1")
                if x.device.type == "mps" and compare(v, "<", "2.0"):
                    return F.gelu(x.float()).to(x.dtype)
                return F.gelu(x)
        """,
    )
    t = static_target(path, "Net", {"d": "8"}, {"x": "2,8"})
    truth = counted(path, "Net(8)", {"x": torch.randn(2, 8)})
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth
    tagged = static_target(path, "Net", {"d": "8", "tagged": "True"}, {"x": "2,8"})
    assert not tagged["complete"]
    assert [u["op"] for u in tagged["unknown"]] == ["call metadata.version"]


def test_a_factory_called_twice_builds_two_modules(tmp_path):
    # Python runs a factory's body at each call: two calls, two convolutions, each
    # counted by parameters() (a run handed out again would be one object twice).
    path = write(
        tmp_path,
        "factory.py",
        """
        import torch.nn as nn

        def make_conv(cin, cout):
            return nn.Conv2d(cin, cout, 3, padding=1)

        class Net(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.a = make_conv(c, c)
                self.b = make_conv(c, c)

            def forward(self, x):
                return self.b(self.a(x))
        """,
    )
    res = analyze_target(str(path), path.read_text(), "Net", {"c": "4"}, {"x": "2,4,8,8"})
    count = params_json(res.params, {})
    spec = importlib.util.spec_from_file_location("factory_twice", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    truth = sum(p.numel() for p in mod.Net(4).parameters())
    assert count["params_value"] == truth == 2 * (4 * 4 * 9 + 4)


def test_dtype_predicates_of_an_int_input(tmp_path):
    # token ids: not floating point, not complex, a tensor; the branch for ids runs
    path = write(
        tmp_path,
        "ids.py",
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self, vocab, d):
                super().__init__()
                self.emb = nn.Embedding(vocab, d)
                self.lin = nn.Linear(d, d)
                self.big = nn.Linear(d, 4 * d)

            def forward(self, ids):
                x = self.emb(ids)
                if torch.is_floating_point(ids) or ids.is_floating_point():
                    return self.big(x)
                if torch.is_tensor(ids) and not torch.is_complex(ids):
                    return self.lin(x)
                return self.big(x)
        """,
    )
    t = static_target(path, "Net", {"vocab": "10", "d": "8"}, {"ids": "2,5:int"})
    truth = counted(path, "Net(10, 8)", {"ids": torch.randint(0, 10, (2, 5))})
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth


def test_a_star_import_under_type_checking_binds_nothing():
    # `if TYPE_CHECKING: from .models import *` never runs; reading its module's
    # names would load every module that one names (transformers' __init__).
    import ast

    from shapelint.analysis.project import project_imports

    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "from .layers import *\n"
        "if TYPE_CHECKING:\n"
        "    from .models import *\n"
    )
    asked: list[str] = []

    def exports(mod: str) -> list[str]:
        asked.append(mod)
        return [f"{mod.rsplit('.', 1)[-1]}_name"]

    links = project_imports(tree, "pkg.sub", False, lambda m: m.startswith("pkg"), exports)
    assert asked == ["pkg.layers"]
    assert links == {"layers_name": ("pkg.layers", "layers_name")}


def test_torch_public_layer_bases_as_torch_has_them():
    """builtins.TORCH_PUBLIC_BASES: every public nn layer that another public one
    (other than a lazy or quantizable variant) derives from, as torch says."""
    torch = pytest.importorskip("torch")
    import inspect

    from shapelint.analysis.builtins import TORCH_PUBLIC_BASES

    nn = torch.nn
    public = [
        n
        for n in dir(nn)
        if inspect.isclass(getattr(nn, n)) and issubclass(getattr(nn, n), nn.Module)
    ]
    bases = {
        b
        for a in public
        for b in public
        if a != b
        and b != "Module"
        and issubclass(getattr(nn, a), getattr(nn, b))
        and not a.startswith(("Lazy", "NonDynamically"))
    }
    assert bases == set(TORCH_PUBLIC_BASES)


def test_isinstance_of_a_torch_layer(tmp_path):
    """isinstance(nn.Identity(), nn.Identity) is True, of nn.BatchNorm2d False, of a
    base torch exports as public (nn.ZeroPad2d is a ConstantPad2d) not known here; a
    bias flag not known gives a bias not known, never none (was: 64 for torch's 68)."""
    case = (
        """
        class Pick(nn.Module):
            def __init__(self, c):
                super().__init__()
                norm = nn.Identity()
                bn = nn.BatchNorm2d(c)
                self.a = nn.Conv2d(c, c, 1, bias=isinstance(norm, nn.Identity))
                self.b = nn.Conv2d(c, c, 1, bias=isinstance(bn, (nn.Identity, nn.LayerNorm)))
                self.c = nn.Conv2d(c, c, 1, bias=isinstance(bn, nn.Module))

            def forward(self, x):
                return self.a(x) + self.b(x) + self.c(x)
        """,
        "Pick",
        dict(c=4),
        dict(x=(2, 4, 5, 5)),
    )
    assert_exact(tmp_path, "torch_layer_instance", case)
    analysed, torch_params = _pick_params(tmp_path, "torch_layer_instance", case)
    assert analysed == torch_params  # 4·4·3 + 4 + 4
    code, cls = case[:2]
    path = write(
        tmp_path,
        "unsure.py",
        "import torch\nimport torch.nn as nn\n"
        + textwrap.dedent(code).replace(
            "isinstance(norm, nn.Identity)", "isinstance(nn.ZeroPad2d(1), nn.ConstantPad2d)"
        ),
    )
    res = analyze_target(str(path), path.read_text(), cls, {"c": "4"}, {"x": "2,4,5,5"})
    assert params_json(res.params, {})["params"] == "?"


def test_issubclass_of_a_torch_layer_class_and_isinstance_of_an_array(tmp_path):
    """`issubclass(conv_op, nn.Conv2d)` of torch's layer classes (nnU-Net's helpers
    pick a kernel list by it) and `isinstance(3, (tuple, list, np.ndarray))` (a
    Python int is no ndarray): both decided as Python does, the layers built exact
    (main: `self.conv: not modelled`, 0 FLOPs known)."""
    case = (
        """
        import numpy as np

        def as_list(conv_op, scalar):
            if not isinstance(scalar, (tuple, list, np.ndarray)):
                if issubclass(conv_op, nn.Conv2d):
                    return [scalar] * 2
                elif issubclass(conv_op, nn.Conv3d):
                    return [scalar] * 3
                elif issubclass(conv_op, (nn.Conv1d, nn.Linear)):
                    return [scalar]
                raise RuntimeError("not a convolution")
            return scalar

        class Pick(nn.Module):
            def __init__(self, c, conv_op=nn.Conv1d):
                super().__init__()
                k = as_list(conv_op, 3)
                self.conv = conv_op(c, c, k, padding=[(i - 1) // 2 for i in k])
                self.conv2 = nn.Conv2d(c, c, as_list(nn.Conv2d, 3), padding=1)

            def forward(self, x):
                return self.conv2(self.conv(x).unsqueeze(-1).expand(-1, -1, -1, 5))
        """,
        "Pick",
        dict(c=4),
        dict(x=(2, 4, 5)),
    )
    assert_exact(tmp_path, "torch_subclass", case)


def test_none_is_no_bool_int_or_str(tmp_path):
    """`flag is True` where flag is None (torch's `_detect_is_causal_mask`): None is
    none of those objects, so the test is False and decides the branch."""
    case = (
        """
        def causal(is_causal=None):
            return is_causal is True, is_causal is not 0, is_causal is "x"

        class Pick(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.a = nn.Linear(c, c)
                self.b = nn.Linear(c, 5 * c)

            def forward(self, x):
                t, n, s = causal()
                if t or s or not n:
                    return self.b(x)
                return self.a(self.a(x))
        """,
        "Pick",
        dict(c=4),
        dict(x=(2, 4)),
    )
    assert_exact(tmp_path, "none_is", case)


def test_grad_mode_and_requires_grad_read_in_a_target_run(tmp_path):
    """`torch.is_grad_enabled()` is the grad mode the run is in, and
    `t.requires_grad` what autograd tracks (torch's encoder tests both before its
    nested-tensor path): each branch decided as torch takes it."""
    case = (
        """
        class Mode(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.a = nn.Linear(c, c)
                self.b = nn.Linear(c, 5 * c)
                self.b.requires_grad_(False)

            def forward(self, x):
                h = self.a(x)
                if torch.is_grad_enabled() and h.requires_grad and not x.requires_grad:
                    y = self.b(x)
                else:
                    y = self.b(h)
                with torch.no_grad():
                    if torch.is_grad_enabled() or self.b.weight.requires_grad:
                        y = y + self.b(h)
                    else:
                        y = y + self.b(x) + self.b(self.a(x))
                return y
        """,
        "Mode",
        dict(c=4),
        dict(x=(2, 4)),
    )
    assert_exact(tmp_path, "grad_reads", case)


# min/max of known numbers, one a float: the one Python picks (the first of
# equals), of its own type (`int(1280 * max(1.0, width_mult))`); printf-style
# formatting: `self.add_module('layer%d' % (i + 1), layer)` in a loop registers the
# layers one by one under the names Python's str.__mod__ makes.
NUMBERS_AND_STRINGS = {
    "min_max_floats": (
        """
        class Width(nn.Module):
            def __init__(self, width_mult=1.0, c=8):
                super().__init__()
                last = int(16 * max(1.0, width_mult))
                first = min(c, 2.5 * c)
                self.a = nn.Linear(c, last)
                self.b = nn.Linear(last, int(first) + min(2, 2.0))

            def forward(self, x):
                return self.b(self.a(x).relu())
        """,
        "Width",
        dict(width_mult=0.5),
        dict(x=(3, 4, 8)),
    ),
    "percent_format": (
        """
        class Block(nn.Sequential):
            def __init__(self, n, c):
                super().__init__()
                for i in range(n):
                    self.add_module('layer%d' % (i + 1), nn.Conv2d(c, c, 1))


        class Net(nn.Module):
            def __init__(self, cfg=(2, 3), c=4):
                super().__init__()
                self.features = nn.Sequential(OrderedDict([('conv0', nn.Conv2d(3, c, 3))]))
                for i, n in enumerate(cfg):
                    self.features.add_module('%s_%02d' % ('block', i), Block(n, c))

            def forward(self, x):
                return self.features(x)
        """,
        "Net",
        dict(),
        dict(x=(2, 3, 9, 9)),
    ),
    # sets of small ints (axial attention's permutations): `set(range(n)) - {a, b}`
    # unpacked in CPython's order (ascending: each int in its own slot), its len, a
    # loop over `a | b`; the wrong order would permute the axes the layer reads
    "small_int_sets": (
        """
        def permutations(n, emb):
            total = n + 2
            out = []
            for ax in [i for i in range(1, total) if i != emb]:
                rest = set(range(0, total)) - set([ax, emb])
                out.append([*rest, ax, emb])
            return out


        class Axial(nn.Module):
            def __init__(self, dim=8):
                super().__init__()
                self.perms = permutations(2, 3)
                self.lin = nn.Linear(dim, dim)
                self.n = len({0, 1} | {1, 2}) + len(frozenset((4, 4)))

            def forward(self, x):
                for p in self.perms:
                    x = self.lin(x.permute(*p))
                for i in {2} ^ {0, 2, 1}:
                    x = x.transpose(i, 3) * self.n
                return x
        """,
        "Axial",
        dict(),
        dict(x=(2, 3, 5, 8)),
    ),
    # axial attention's inverse permutation: sorted() of (int, int) pairs, as Python
    # orders tuples, then `map(itemgetter(1), pairs)`; itemgetter of several keys
    # (one negative) picks a tuple
    "inverse_permutation_by_itemgetter": (
        """
        from operator import itemgetter


        def inverse(perm):
            pairs = sorted(zip(perm, range(len(perm))))
            return list(map(itemgetter(0), pairs)), list(map(itemgetter(1), pairs))


        class Inv(nn.Module):
            def __init__(self, perm=(0, 3, 1, 2), dim=8):
                super().__init__()
                _, self.inv = inverse(list(perm))
                self.perm = list(perm)
                first, last = itemgetter(0, -1)(self.inv)
                self.lin = nn.Linear(dim, dim * (1 + first + last))

            def forward(self, x):
                y = self.lin(x.permute(*self.perm).permute(*self.inv))
                return y
        """,
        "Inv",
        dict(),
        dict(x=(2, 3, 5, 8)),
    ),
    # a generator's depth from its image size (torchgan's DCGAN): `out_size.bit_length()`
    # of a known int, and `bit_count()`, as Python counts bits (of -n too)
    "int_bit_length": (
        """
        class Up(nn.Module):
            def __init__(self, out_size=32, d=8):
                super().__init__()
                layers = [nn.Linear(d, d) for _ in range(out_size.bit_length() - 4)]
                layers += [nn.Linear(d, d)] * (-out_size + 1).bit_count()
                self.model = nn.Sequential(*layers)

            def forward(self, x):
                return self.model(x)
        """,
        "Up",
        dict(out_size=64),
        dict(x=(2, 8)),
    ),
}


def test_the_order_of_a_set_is_known_only_where_cpython_fixes_it():
    from shapelint.analysis import small_sets
    from shapelint.ops.values import constant_value, python_constant

    def of(*xs):
        return small_sets.built([constant_value(x) for x in xs])

    def walked(s):
        it = small_sets.iterated(s)
        return None if it is None else python_constant(it)[1]

    assert walked(of(3, 0, 2, 0)) == (0, 2, 3)
    assert walked(small_sets.binop(ast.Sub(), of(*range(6)), of(1, 4))) == (0, 2, 3, 5)
    assert walked(of("b")) == ("b",)
    # ints that may share a slot, and salted string hashes: no order
    for s in (of(8, 1), of(-1, 0), of("a", "b"), of(1, 2.0)):
        assert walked(s) is None
    assert small_sets.size(of(1, 1, 2)) == 2
    assert of(1, True) is None  # which of the equals survives decides the kind
    assert of(float("nan")) is None


# A set changed in place is no longer known wherever it is held: under another
# name, in an attribute, after `|=` through an alias. Each width is the set's size
# after the change; reading the set as built would give a complete wrong figure.
CHANGED_SETS = {
    "alias_add": """
        s = set(range(3))
        t = s
        s.add(5)
        WIDTH = len(t)
    """,
    "attribute_add": """
        class Holder:
            def __init__(self):
                self.seen = set()
                self.seen.add(1)
                self.seen.update({2, 3})

        WIDTH = len(Holder().seen)
    """,
    "augmented_alias": """
        u = {0, 1}
        v = u
        u |= {2, 3}
        WIDTH = len(v)
    """,
    "handed_to_a_callee": """
        def grow(s, n):
            for i in range(n):
                s.add(i + 10)

        s = set([1])
        grow(s, 3)
        WIDTH = len(s)
    """,
}


@pytest.mark.parametrize("key", sorted(CHANGED_SETS))
def test_a_set_changed_in_place_is_no_longer_known(tmp_path, key):
    code = textwrap.dedent(CHANGED_SETS[key]) + textwrap.dedent(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, WIDTH)

            def forward(self, x):
                return self.lin(x)
        """
    )
    path = write(tmp_path, f"{key}.py", "import torch\nimport torch.nn as nn\n" + code)
    t = static_target(path, "Net", {}, {"x": "2,4"})
    truth = counted(path, "Net()", {"x": torch.randn(2, 4)})
    assert (
        t["flops_value"] == truth
        if t["complete"]
        else t["flops_value"] is None or t["flops_value"] <= truth
    )


@pytest.mark.parametrize("key", sorted(NUMBERS_AND_STRINGS))
def test_numbers_and_strings_as_python_makes_them(tmp_path, key):
    assert_exact(tmp_path, key, NUMBERS_AND_STRINGS[key])


@pytest.mark.parametrize(
    "template, args",
    [
        ("%d", 3),
        ("%s_%02d", ("a", 7)),
        ("%.2f|%r", (1.5, "x")),
        ("%d", "x"),
        ("%s %s", (1,)),
        ("%s", [1, 2]),
        ("%(a)s", 1),
    ],  # fmt: skip
)
def test_printf_style_formatting_is_pythons(template, args):
    from shapelint.analysis import folding
    from shapelint.ops.values import StrV, TupleV, constant_value

    value = (
        TupleV(
            tuple(constant_value(a) for a in args),
            kind="tuple" if isinstance(args, tuple) else "list",
        )
        if isinstance(args, (tuple, list))
        else constant_value(args)
    )
    got = folding.percent_format(StrV(template), value)
    try:
        truth = template % args
    except (TypeError, ValueError, KeyError):
        truth = None  # Python raises: no string is known
    assert got.value == (None if isinstance(args, list) else truth)


FUNCTION_NAMES = """
import torch
import torch.nn as nn


def softmax_mask(x):
    return x


def _tag(fn):
    def run(*a):
        return fn(*a)

    return run


@_tag
def tagged(x):
    return x


def renamed(x):
    return x


softmax_mask = softmax_mask  # a re-export: the same function
renamed = _tag(renamed)  # another object under the def's name


class Gate(nn.Module):
    def __init__(self, c, mask=softmax_mask):
        super().__init__()
        self.mask = mask
        self.lin = nn.Linear(c, c)
        if self.mask.__name__ == "softmax_mask":
            self.t = nn.Parameter(torch.zeros(c))
            self.extra = nn.Linear(c, 3 * c)

    def forward(self, x):
        x = self.lin(x)
        if self.mask.__name__ == "softmax_mask":
            x = self.extra(x) * 2
        return x


class Tagged(Gate):
    def __init__(self, c):
        super().__init__(c, mask=tagged)


class Renamed(Gate):
    def __init__(self, c):
        super().__init__(c, mask=renamed)
"""


def test_a_module_level_functions_name_is_its_defs(tmp_path):
    """`f.__name__` of a module-level def is the def's name (pytorch-tabular picks
    a Parameter by `self.feature_mask_function.__name__`): the branch is decided,
    FLOPs and parameters torch's. A decorated or rebound def may be another
    object: never the def's name there."""
    path = write(tmp_path, "names.py", FUNCTION_NAMES)
    spec = importlib.util.spec_from_file_location("function_names", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = analyze_target(str(path), path.read_text(), "Gate", {"c": "4"}, {"x": "2,4"})
    t = target_json(res, {})
    assert t["complete"] and t["flops_value"] == counted(path, "Gate(4)", {"x": torch.randn(2, 4)})
    truth = sum(p.numel() for p in mod.Gate(4).parameters())
    assert params_json(res.params, {})["params_value"] == truth == 4 * 4 + 4 + 4 + 4 * 12 + 12
    for name in ("Tagged", "Renamed"):  # torch's 20, never the 84 of the def's name
        res = analyze_target(str(path), path.read_text(), name, {"c": "4"}, {"x": "2,4"})
        assert params_json(res.params, {})["params_value"] in (None, 20), name
        assert sum(p.numel() for p in getattr(mod, name)(4).parameters()) == 20


def test_an_itemgetter_picks_only_what_is_known():
    from shapelint.analysis import itemgetters
    from shapelint.ops.values import UNKNOWN, IntV, TupleV, constant_value

    def get(*keys):
        return itemgetters.made("operator.itemgetter", [constant_value(k) for k in keys], {})

    row = TupleV(tuple(constant_value(v) for v in (5, 6, 7)))
    assert itemgetters.call(get(1), [row], {}) == constant_value(6)
    assert itemgetters.call(get(-1, 0), [row], {}) == TupleV((constant_value(7), constant_value(5)))
    assert itemgetters.call(get(3), [row], {}) is UNKNOWN  # Python raises IndexError
    assert itemgetters.call(get("a"), [row], {}) is UNKNOWN
    assert itemgetters.call(get(0), [TupleV((IntV(None),))], {}) == IntV(None)
    assert itemgetters.made("operator.itemgetter", [], {}) is UNKNOWN


_PIX2PIX = """
import functools

import torch.nn as nn


class Disc(nn.Module):
    # pix2pix's and taming's discriminators: a conv has a bias unless the norm after
    # it is a BatchNorm2d (a partial's func, or the class itself)
    def __init__(self, instance=False):
        super().__init__()
        if instance:
            norm_layer = functools.partial(nn.InstanceNorm2d, affine=False)
        else:
            norm_layer = nn.BatchNorm2d
        if type(norm_layer) == functools.partial:
            use_bias = norm_layer.func != nn.BatchNorm2d
        else:
            use_bias = norm_layer != nn.BatchNorm2d
        self.conv = nn.Conv2d(3, 8, 3, bias=use_bias)
        self.norm = norm_layer(8)

    def forward(self, x):
        return self.norm(self.conv(x))
"""


@pytest.mark.parametrize("instance", [False, True])
def test_the_class_of_a_class_is_type_never_a_partial(tmp_path, instance):
    """`type(C)` of a torch layer class (or a project class with no metaclass along
    its bases) is `type`, never `functools.partial`; a partial's class is partial:
    the bias each branch gives is torch's."""
    from tests.test_parameters import figures, static, torch_counts

    path = write(tmp_path, "disc.py", _PIX2PIX)
    t = static(path, "Disc", "--init", f"instance={instance}", "--input", "x=2,3,8,8")
    assert figures(t) == torch_counts(path, f"Disc(instance={instance})")
    assert t["complete"] and t["flops_value"] == counted(
        path, f"Disc(instance={instance})", {"x": torch.randn(2, 3, 8, 8)}
    )


_EXPORTING = """
import torch
import torch.nn as nn

_HAS = hasattr(torch, "compiler") and hasattr(torch.compiler, "is_exporting")


def is_exporting():
    if torch.jit.is_scripting():
        return False
    return _HAS and BODY


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)

    def forward(self, x):
        if not is_exporting():
            return self.a(x)
        return self.a(self.a(x))
"""


@pytest.mark.parametrize(
    ("body", "known"),
    [
        ("torch.compiler.is_exporting()", True),  # timm's is_exporting(): False in eager
        ("False", True),
        ("True", False),  # `_HAS and True` is `_HAS`: a bool not known here
    ],
)
def test_and_of_a_bool_not_known_with_a_false_operand_is_false(tmp_path, body, known):
    """hasattr returns a bool; `b and False` is False whatever the bool b is (Python
    returns b only where it is falsy), `b or True` True: the branch it decides is
    torch's."""
    path = write(tmp_path, "exporting.py", _EXPORTING.replace("BODY", body))
    t = static_target(path, "Net", {}, {"x": "2,8"})
    assert t["complete"] is known, t["unknown"]
    if known:
        assert t["flops_value"] == counted(path, "Net()", {"x": torch.randn(2, 8)})


def test_isinstance_of_a_project_module_and_a_torch_container(tmp_path):
    """A project module whose only base of torch's is nn.Module is an instance of
    nn.Module and of no other torch class; torch's own Sequential is a Module and no
    layer (main: both not known, the layers under them not built)."""
    case = (
        """
        class Inner(nn.Module):
            def forward(self, x):
                return x

        class Pick(nn.Module):
            def __init__(self, c):
                super().__init__()
                seq = nn.Sequential(nn.ReLU())
                inner = Inner()
                self.a = nn.Conv2d(c, c, 1, bias=isinstance(inner, nn.Module))
                self.b = nn.Conv2d(c, c, 1, bias=isinstance(inner, (nn.Linear, nn.Identity)))
                self.c = nn.Conv2d(c, c, 1, bias=isinstance(seq, nn.Module))
                self.d = nn.Conv2d(c, c, 3 if isinstance(seq, nn.Linear) else 1)

            def forward(self, x):
                return self.a(x) + self.b(x) + self.c(x) + self.d(x)
        """,
        "Pick",
        dict(c=4),
        dict(x=(2, 4, 5, 5)),
    )
    assert_exact(tmp_path, "module_instances", case)
    analysed, torch_params = _pick_params(tmp_path, "module_instances", case)
    assert analysed == torch_params == 4 * 16 + 3 * 4  # a, c and d biased


def _pick_params(tmp_path, key: str, case: tuple) -> tuple:
    """(the analysis's parameter count, torch's) of `Pick(4)` written by assert_exact."""
    cls = case[1]
    path = tmp_path / f"{key}.py"
    res = analyze_target(str(path), path.read_text(), cls, {"c": "4"}, {"x": "2,4,5,5"})
    spec = importlib.util.spec_from_file_location(key, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch_params = sum(p.numel() for p in getattr(mod, cls)(4).parameters())
    return params_json(res.params, {})["params_value"], torch_params
