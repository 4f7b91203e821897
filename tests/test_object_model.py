"""Python as it is written, in target runs (issue 24): torch layers and containers
as bases of project classes, their constructors and forwards inherited as in
Python, class attributes read through self, containers changed after they are
built, builtins and math on sizes, str and dict methods that decide a layer.
Each module is judged by FlopCounterMode on the same module and inputs."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

from tests.helpers import run_class
from tests.test_modules import counted, static_target, write
from tests.test_parameters import figures, load, static, torch_counts

torch = pytest.importorskip("torch")

HEADER = textwrap.dedent(
    """
    from collections import OrderedDict
    from itertools import repeat

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    """
)

CASES = {
    # super().__init__(*layers) of a Sequential subclass: no forward of its own
    "sequential_subclass": (
        """
        class MLP(nn.Sequential):
            def __init__(self, dim, hidden, depth=2):
                layers = []
                for _ in range(depth):
                    layers.append(nn.Linear(dim, hidden))
                    layers.append(nn.GELU())
                    dim = hidden
                super().__init__(*layers)
        """,
        "MLP",
        dict(dim=8, hidden=16),
        dict(input=(2, 5, 8)),
    ),
    # torch registers a module assigned or added after the constructor's layers
    "sequential_subclass_add_module": (
        """
        class ConvNorm(nn.Sequential):
            def __init__(self, cin, cout):
                super().__init__()
                self.add_module("c", nn.Conv2d(cin, cout, 3, padding=1, bias=False))
                self.bn = nn.BatchNorm2d(cout)
                self.out_channels = cout
        """,
        "ConvNorm",
        dict(cin=3, cout=4),
        dict(input=(2, 3, 8, 8)),
    ),
    # nn.Module.__getattr__ finds a container's item by the name it was added
    # under, also after .eval() / .requires_grad_() went through the container
    "module_list_item_by_name": (
        """
        class Paths(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.p = nn.ModuleList()
                self.p.add_module("pad", nn.ZeroPad2d((0, 1, 0, 1)))
                self.p.add_module("conv", nn.Conv2d(cin, cout, 1, bias=False))
                self.p.eval()
                self.p.requires_grad_(False)
                self.s = nn.Sequential(
                    OrderedDict(a=nn.ReLU(), b=nn.Conv2d(cout, cout, 3), c=nn.ReLU())
                )[1:]

            def forward(self, x):
                y = self.p.pad(x)[:, :, 1:, 1:]
                return self.s.b(self.p.conv(y))
        """,
        "Paths",
        dict(cin=3, cout=4),
        dict(x=(2, 3, 8, 8)),
    ),
    # str() of a loop index names the layers of an OrderedDict
    "str_of_an_index_as_a_key": (
        """
        class Stages(nn.Module):
            def __init__(self, dim, depth=3):
                super().__init__()
                blocks = OrderedDict()
                blocks["stem"] = nn.Conv2d(3, dim, 1)
                for i in range(2, depth + 1):
                    blocks["conv_" + str(i)] = nn.Conv2d(dim, dim, 3, padding=1)
                blocks[str(None) + str(True) + str()] = nn.ReLU()
                self.features = nn.Sequential(blocks)

            def forward(self, x):
                return self.features(x)
        """,
        "Stages",
        dict(dim=4),
        dict(x=(2, 3, 8, 8)),
    ),
    # `kind is 'proj'`: identifier-like literals are one object (CPython interns
    # them); strings of different texts never are
    "is_on_string_literals": (
        """
        class Block(nn.Module):
            def __init__(self, dim, kind="normal"):
                super().__init__()
                if kind is "proj":
                    self.proj = nn.Linear(dim, 2 * dim)
                elif kind is not "normal":
                    self.proj = nn.Linear(dim, 3 * dim)
                else:
                    self.proj = nn.Linear(dim, dim)

            def forward(self, x):
                return self.proj(x)

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.a = Block(dim, "proj")
                self.b = Block(2 * dim)

            def forward(self, x):
                return self.b(self.a(x))
        """,
        "Net",
        dict(dim=4),
        dict(x=(2, 4)),
    ),
    # typing.cast(T, x) is x, whichever way it is imported
    "typing_cast": (
        """
        import typing
        from typing import cast

        class Scaled(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.a = nn.Linear(dim, dim)
                self.b = nn.Linear(dim, 2 * dim)

            def forward(self, x):
                y = cast(torch.Tensor, self.a(x) * 2)
                return typing.cast(torch.Tensor, self.b(y))
        """,
        "Scaled",
        dict(dim=4),
        dict(x=(2, 4)),
    ),
    # int(np.prod(shape)) of known sizes; starred unpacking into attributes
    "numpy_prod_of_sizes": (
        """
        import numpy as np

        class Head(nn.Module):
            def __init__(self, start_shape=(4, 3, 3), latent=(2, 8)):
                super().__init__()
                self.in_channels, *self.start_shape = tuple(start_shape)
                dims = len(self.start_shape)
                out = int(np.prod(start_shape)) + dims + self.in_channels
                self.linear = nn.Linear(int(np.prod(latent)), out)

            def forward(self, x):
                return self.linear(x)
        """,
        "Head",
        dict(),
        dict(x=(2, 16)),
    ),
    # numpy's ceil/floor of a Python number: a float, `int(np.ceil(c / 2) * 2)` a size
    "numpy_ceil_of_a_size": (
        """
        import numpy as np

        class Rounded(nn.Module):
            def __init__(self, channels):
                super().__init__()
                channels = int(np.ceil(channels / 4) * 2)
                half = int(np.floor(channels / 4.0))
                self.proj = nn.Linear(channels, half)

            def forward(self, x):
                return self.proj(x)
        """,
        "Rounded",
        dict(channels=14),
        dict(x=(2, 8)),
    ),
    # functools.partial of a bound method (and of a tensor's method): building it runs
    # nothing, calling it runs the method with the bound arguments first
    "partial_of_a_bound_method": (
        """
        from functools import partial

        class Bound(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.proj = nn.Linear(2 * dim, dim)

            def f(self, signal, x):
                return self.proj(torch.cat((signal, x), dim=-1))

            def forward(self, signal, x):
                g = partial(self.f, signal)
                total = partial(x.sum, dim=-1)
                return g(x) * total(keepdim=True)
        """,
        "Bound",
        dict(dim=4),
        dict(signal=(2, 4), x=(2, 4)),
    ),
    # a nested function whose body runs no op (`T(w)` hands back w as it is): the
    # call is followed, and costs nothing (loralib's LoRA layers)
    "closure_that_runs_no_op": (
        """
        class LoRA(nn.Module):
            def __init__(self, i, o, flip=False):
                super().__init__()
                self.weight = nn.Parameter(torch.randn(o, i))
                self.flip = flip

            def forward(self, x):
                def T(w):
                    return w.transpose(0, 1) if self.flip else w

                return F.linear(x, T(self.weight))
        """,
        "LoRA",
        dict(i=4, o=8),
        dict(x=(2, 3, 4)),
    ),
    # typing.no_type_check hands back the function it is given (main: `decorated with
    # @no_type_check, whose wrapper is not followed`; tianshou's MLP)
    "no_type_check_forward": (
        """
        from typing import no_type_check

        class MLP(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.a = nn.Linear(d, 2 * d)

            @no_type_check
            def forward(self, x):
                return torch.relu(self.a(x))
        """,
        "MLP",
        dict(d=4),
        dict(x=(2, 4)),
    ),
    # a decorator that sets the function's docstring and hands it back: the function
    # it returns is still the function (main: `decorated with @documented, whose
    # wrapper is not followed`; transformers' auto_docstring on LlamaModel.forward)
    "decorator_sets_the_docstring": (
        """
        def _method_doc(func, intro=None):
            doc = func.__doc__ if intro is None else intro
            func.__doc__ = "Args:\\n" + (doc or "")
            return func

        def documented(obj):
            if len(obj.__qualname__.split(".")) > 1:
                return _method_doc(obj)
            return obj

        class MLP(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.a = nn.Linear(d, 2 * d)

            @documented
            def forward(self, x):
                return torch.relu(self.a(x))
        """,
        "MLP",
        dict(d=4),
        dict(x=(2, 4)),
    ),
    # `Net.make_head(3, c)` in Net's own constructor: a staticmethod read through its
    # class is the plain function (main: `self.head: not modelled`; torchsr's NinaSR)
    "staticmethod_called_through_its_class": (
        """
        class Scale(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.bias = nn.Parameter(torch.zeros(1, c, 1, 1))

            def forward(self, x):
                return x + self.bias

        class Net(nn.Module):
            def __init__(self, c, feats):
                super(Net, self).__init__()
                self.head = Net.make_head(c, feats)
                self.tail = nn.Conv2d(feats, Net.twice(c), 1)

            @staticmethod
            def make_head(c, feats):
                return nn.Sequential(*[Scale(c), nn.Conv2d(c, feats, 3, padding=1, bias=False)])

            @staticmethod
            def twice(n):
                return 2 * n

            def forward(self, x):
                return self.tail(self.head(x))
        """,
        "Net",
        dict(c=3, feats=8),
        dict(x=(2, 3, 6, 6)),
    ),
    # filter(None, layers): a module is true (nn.Module defines no __len__ / __bool__),
    # None is not, so the layers kept are the modules
    "filter_none_of_modules": (
        """
        class Block(nn.Module):
            def __init__(self, dim, norm=True, act=False):
                super().__init__()
                layers = [
                    nn.Linear(dim, 2 * dim),
                    nn.LayerNorm(2 * dim) if norm else None,
                    nn.GELU() if act else None,
                    nn.Linear(2 * dim, dim),
                ]
                self.net = nn.Sequential(*filter(None, layers))

            def forward(self, x):
                return self.net(x)
        """,
        "Block",
        dict(dim=4),
        dict(x=(2, 3, 4)),
    ),
    # a @torch.jit.script function runs the ops of its body (the flop counter sees them)
    "jit_script_function": (
        """
        @torch.jit.script
        def mixed(x, w):
            return torch.matmul(x, w).mul(torch.sigmoid(x.sum(-1, keepdim=True)))

        class Mix(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.w = nn.Parameter(torch.randn(dim, 2 * dim))

            def forward(self, x):
                return mixed(x, self.w)
        """,
        "Mix",
        dict(dim=4),
        dict(x=(2, 3, 4)),
    ),
    # inspect.isfunction tells a layer factory (a lambda) from a layer instance
    "inspect_isfunction_factory": (
        """
        from inspect import isfunction

        def lambda_batchnorm(eps=1e-5):
            return lambda num_features: nn.BatchNorm2d(num_features=num_features, eps=eps)

        def create(layer, **kwargs):
            if isfunction(layer):
                return layer(**kwargs)
            return layer

        class ConvBlock(nn.Module):
            def __init__(self, c, norm=lambda_batchnorm(), act=nn.ReLU()):
                super().__init__()
                self.conv = nn.Conv2d(3, c, 1)
                self.bn = create(norm, num_features=c)
                self.act = create(act)

            def forward(self, x):
                return self.act(self.bn(self.conv(x)))
        """,
        "ConvBlock",
        dict(c=4),
        dict(x=(2, 3, 8, 8)),
    ),
    # `use_norm is True` of a string: objects of two types are never one object
    "is_between_types": (
        """
        class Norm(nn.Module):
            def __init__(self, c, use_norm="linear", flag=False):
                super().__init__()
                if use_norm is True or flag is True:
                    self.n = nn.Identity()
                elif use_norm is False or flag is not False:
                    self.n = nn.ReLU()
                else:
                    self.n = nn.Linear(c, c)

            def forward(self, x):
                return self.n(x)
        """,
        "Norm",
        dict(c=4),
        dict(x=(2, 4)),
    ),
    # a ModuleDict subclass walks its own modules (`self.values()`), not its plain attributes
    "module_dict_subclass_values": (
        """
        class Mixed(nn.ModuleDict):
            def __init__(self, c, ks=(3, 5)):
                super().__init__()
                for idx, k in enumerate(ks):
                    self.add_module(str(idx), nn.Conv2d(c // 2, c // 2, k, padding=k // 2))
                self.splits = [c // 2, c // 2]

            def forward(self, x):
                parts = torch.split(x, self.splits, 1)
                outs = [conv(parts[i]) for i, conv in enumerate(self.values())]
                names = [k for k, _ in self.items()] + list(self.keys())
                assert len(names) == 4
                return torch.cat(outs, 1)
        """,
        "Mixed",
        dict(c=8),
        dict(x=(2, 8, 6, 6)),
    ),
    # `self._modules.values()`: nn.Module's registry, in registration order; keys
    # made with str.format
    "modules_registry_and_format": (
        """
        class Concurrent(nn.Sequential):
            def forward(self, x):
                out = []
                for module in self._modules.values():
                    out.append(module(x))
                return torch.cat(tuple(out), dim=1)

        class Branches(nn.Module):
            def __init__(self, c, widths=(4, 6)):
                super().__init__()
                self.branches = Concurrent()
                for i, w in enumerate(widths):
                    self.branches.add_module("branch{}".format(i + 1), nn.Conv2d(c, w, 1))
                self.skip = nn.Conv2d(c, c, 1)
                self.scale = 0.5

            def forward(self, x):
                names = list(self._modules.keys())
                assert names == ["branches", "skip"]
                return self.branches(self.skip(x)) * self.scale
        """,
        "Branches",
        dict(c=3),
        dict(x=(2, 3, 5, 5)),
    ),
    # the legacy constructors: torch.Tensor(out, in, *kernel) as sizes
    "legacy_tensor_constructor": (
        """
        class Masked(nn.Module):
            def __init__(self, k=(3, 3)):
                super().__init__()
                self.mask = nn.Parameter(data=torch.Tensor(8, 4, *k), requires_grad=False)
                self.w = nn.Parameter(torch.Tensor(8, 4, 3, 3))
                self.v = nn.Parameter(torch.FloatTensor(8, 4))

            def forward(self, x):
                return F.conv2d(x, self.w.mul(self.mask)) + self.v.sum()
        """,
        "Masked",
        dict(),
        dict(x=(2, 4, 8, 8)),
    ),
    # the legacy constructors given data: one list or tuple display is the values
    "legacy_tensor_data": (
        """
        class Scaled(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("proj", torch.Tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
                self.register_buffer("pick", torch.LongTensor((0, 2)))
                self.l = nn.Linear(2, 4)

            def forward(self, x):
                return self.l(torch.index_select(x @ self.proj, 1, self.pick))
        """,
        "Scaled",
        dict(),
        dict(x=(2, 5, 3)),
    ),
    # a context manager whose stub says nothing of its arguments: a `**kw` the
    # analysis cannot spell out changes nothing
    "backend_context_with_open_kwargs": (
        """
        from collections import namedtuple

        Config = namedtuple("Config", ["enable_flash", "enable_math", "enable_mem_efficient"])

        class Attend(nn.Module):
            def __init__(self):
                super().__init__()
                self.cpu_config = Config(True, True, True)
                self.cuda_config = None
                self.l = nn.Linear(8, 8)

            def forward(self, x):
                config = self.cuda_config if x.is_cuda else self.cpu_config
                with torch.backends.cuda.sdp_kernel(**config._asdict()):
                    return self.l(x) @ x.transpose(-1, -2)
        """,
        "Attend",
        dict(),
        dict(x=(2, 5, 8)),
    ),
    # torch.autograd.Variable(t): t's data, as a tensor
    "autograd_variable": (
        """
        from torch.autograd import Variable

        class Picked(nn.Module):
            def __init__(self):
                super().__init__()
                self.l = nn.Linear(4, 4)
                self.register_buffer("index", torch.LongTensor(4))
                self.index.fill_(0)

            def forward(self, x):
                x = torch.index_select(x, dim=1, index=Variable(self.index))
                return self.l(Variable(self.l(x)))
        """,
        "Picked",
        dict(),
        dict(x=(2, 5)),
    ),
    # zip over a tensor walks its slices along dim 0 (one per expert)
    "zip_over_a_tensor": (
        """
        class Experts(nn.Module):
            def __init__(self, dim, n=3):
                super().__init__()
                self.n = n
                self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n)])

            def forward(self, x):
                slots = x.unsqueeze(0).expand(self.n, -1, -1)
                out = [expert(s) for s, expert in zip(slots, self.experts)]
                return torch.stack(out).sum(0)
        """,
        "Experts",
        dict(dim=4),
        dict(x=(2, 4)),
    ),
    # a Sequential built in forward from the layers held: building it runs nothing
    "sequential_built_in_forward": (
        """
        class Chain(nn.Module):
            def __init__(self, dim, depth=3):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

            def forward(self, x):
                layers = self.layers if not self.training else self.layers[:2]
                return nn.Sequential(*layers)(x)
        """,
        "Chain",
        dict(dim=4),
        dict(x=(2, 4)),
    ),
    "sequential_of_ordered_dict": (
        """
        class Head(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.net = nn.Sequential(
                    OrderedDict([("fc1", nn.Linear(dim, 2 * dim)), ("act", nn.ReLU()),
                                 ("fc2", nn.Linear(2 * dim, dim))])
                )

            def forward(self, x):
                return self.net(x)
        """,
        "Head",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    "sequential_changed_after_it_is_built": (
        """
        class Changed(nn.Module):
            def __init__(self, dim):
                super().__init__()
                seq = nn.Sequential()
                seq.add_module("fc", nn.Linear(dim, dim))
                self.a = seq
                self.b = nn.Sequential(nn.ReLU())
                self.b.add_module("fc", nn.Linear(dim, 2 * dim))
                self.c = nn.Sequential(nn.ReLU(), nn.ReLU())
                self.c[1] = nn.Linear(2 * dim, dim)

            def forward(self, x):
                return self.c(self.b(self.a(x)))
        """,
        "Changed",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a Linear subclass: the inherited constructor's weight, the base's forward
    "linear_subclass_super_forward": (
        """
        class Scaled(nn.Linear):
            def forward(self, x):
                return super().forward(x) * 2

        class Cast(nn.Linear):
            def forward(self, x):
                return F.linear(x, self.weight.to(x.dtype), self.bias)

        class Both(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.a = Scaled(dim, 2 * dim)
                self.b = Cast(2 * dim, dim, bias=False)

            def forward(self, x):
                return self.b(self.a(x))
        """,
        "Both",
        dict(dim=8),
        dict(x=(3, 8)),
    ),
    # `planes * self.expansion`: a class attribute, a base's, read through self
    "class_attribute_through_self": (
        """
        class Base(nn.Module):
            expansion = 4

        class Bottleneck(Base):
            def __init__(self, planes):
                super().__init__()
                self.fc = nn.Linear(planes, planes * self.expansion)

            def forward(self, x):
                return self.fc(x)
        """,
        "Bottleneck",
        dict(planes=8),
        dict(x=(2, 8)),
    ),
    # builtins and math on sizes, in the one table
    "builtins_on_sizes": (
        """
        import math

        class Sizes(nn.Module):
            def __init__(self, dim, ratio=2.5, depths=(1, 2)):
                super().__init__()
                hidden = int(round(dim * ratio))
                total = sum(depths) + abs(-1)
                q, r = divmod(dim, 3)
                up = math.ceil(dim / 3)
                self.a = nn.Linear(dim, hidden)
                self.b = nn.Linear(hidden, total * q + r)
                self.c = nn.Linear(total * q + r, up * max(q, 1) + pow(2, 3))

            def forward(self, x):
                return self.c(self.b(self.a(x)))
        """,
        "Sizes",
        dict(dim=10),
        dict(x=(2, 10)),
    ),
    # abs() and pow() of a tensor are its __abs__ / __pow__ (or __rpow__): the
    # operators' own ops (mambular's `abs(feature_values - thresholds)`)
    "builtins_on_tensors": (
        """
        def l1(a, b):
            return abs(a - b)

        class Dist(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.head = nn.Linear(dim, 2 * dim)

            def forward(self, x, y):
                return self.head(pow(l1(x, y), 2) + pow(2.0, x))
        """,
        "Dist",
        dict(dim=8),
        dict(x=(2, 8), y=(2, 8)),
    ),
    # `any`/`all` over a list, str methods and dict.pop/setdefault deciding a layer
    "decisions_from_builtins": (
        """
        def is_static(kernel, stride=1):
            if any([isinstance(v, (tuple, list)) for v in [kernel, stride]]):
                return all([s == 1 for s in stride])
            return stride == 1 and (kernel - 1) % 2 == 0

        def make(dim, kernel, **kwargs):
            padding = kwargs.pop("padding", "")
            kwargs.setdefault("bias", False)
            if padding.lower() == "same" and not is_static(kernel):
                return nn.Linear(dim, 2 * dim, **kwargs)
            if "extra" in kwargs:
                return nn.Linear(dim, 3 * dim, **kwargs)
            return nn.Linear(dim, dim, **kwargs)

        class Picked(nn.Module):
            def __init__(self, dim, padding="SAME"):
                super().__init__()
                self.a = make(dim, 4, padding=padding)
                self.b = make(2 * dim, 3, padding="valid")

            def forward(self, x):
                return self.b(self.a(x))
        """,
        "Picked",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a method __init__ calls assigns to the instance; mapping classes of the
    # project (`__getitem__` over a class attribute, a dict subclass)
    "methods_and_mappings": (
        """
        def relu_fn(x):
            return F.relu(x)

        class Interface:
            _global_mapping = {}

            def __init__(self):
                self._local_mapping = {}

            def __getitem__(self, key):
                if key in self._local_mapping:
                    return self._local_mapping[key]
                return self._global_mapping[key]

        class FnInterface(Interface):
            _global_mapping = {"relu": relu_fn}

        FUNCS = FnInterface()

        class Instantier(OrderedDict):
            def __getitem__(self, key):
                content = super().__getitem__(key)
                cls, kwargs = content if isinstance(content, tuple) else (content, {})
                return cls(**kwargs)

        ACTS = Instantier({"gelu": nn.GELU, "tanh": (nn.Linear, {"in_features": 16,
                                                                 "out_features": 4})})

        class Block(nn.Module):
            def __init__(self, dim, act="tanh"):
                super().__init__()
                self.set_proj(dim)
                self.act = ACTS[act]

            def set_proj(self, dim):
                self.proj = nn.Linear(dim, 2 * dim)

            def forward(self, x):
                return FUNCS["relu"](self.act(self.proj(x)))
        """,
        "Block",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # builtins on tensors: sum() adds them as `+` does, start 0 broadcast
    "sum_of_branch_outputs": (
        """
        class Parallel(nn.Module):
            def __init__(self, dim, branches=3):
                super().__init__()
                self.fns = nn.ModuleList([nn.Linear(dim, dim) for _ in range(branches)])
                self.head = nn.Linear(dim, 2)

            def forward(self, x):
                return self.head(sum([fn(x) for fn in self.fns]))
        """,
        "Parallel",
        dict(dim=8),
        dict(x=(2, 5, 8)),
    ),
    # a Sequential spread with * into another
    "sequential_spread": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                stem = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
                self.body = nn.Sequential(*stem, nn.Linear(dim, 4))

            def forward(self, x):
                return self.body(x)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # getattr of a known name (with a default), str.split / partition deciding layers
    "getattr_and_split": (
        """
        class Cfg:
            def __init__(self, spec="lin.2", width=16):
                self.spec = spec
                self.width = width

        class Block(nn.Module):
            def __init__(self, dim, cfg=None):
                super().__init__()
                cfg = cfg or Cfg()
                kind, _, count = cfg.spec.partition(".")
                width = getattr(cfg, "width", dim)
                parts = "a,b,c".split(",")
                self.layers = nn.ModuleList(
                    [nn.Linear(dim, dim) for _ in range(int(count) if kind == "lin" else 0)]
                )
                self.out = nn.Linear(dim, width * len(parts))

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return self.out(x)
        """,
        "Block",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # getattr of an imported module by a known name is the attribute read there
    # (encodec's `act = getattr(nn, activation)`; main: `self.act: not modelled`)
    "getattr_of_a_module": (
        """
        class Block(nn.Module):
            def __init__(self, dim, activation="GELU", layer="Linear"):
                super().__init__()
                act = getattr(nn, activation)
                self.proj = getattr(torch.nn, layer)(dim, 2 * dim)
                self.act = act()

            def forward(self, x):
                return self.act(self.proj(x))
        """,
        "Block",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a dict display merging dicts with ** (timm's `{**dd, **(conv_kwargs or {})}`),
    # passed on with ** to a function that builds the layer
    "dict_display_with_spread": (
        """
        def make(cin, cout, bias=True, scale=1):
            return nn.Linear(cin, cout * scale, bias=bias)

        class Block(nn.Module):
            def __init__(self, dim, conv_kwargs=None):
                super().__init__()
                base = {"bias": False}
                kw = {**base, **(conv_kwargs or {}), "scale": 2}
                self.proj = make(dim, dim, **kw)

            def forward(self, x):
                return self.proj(x)
        """,
        "Block",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # properties read through self: a getter computed from other attributes, a
    # setter that the constructor's assignment runs, a dataclass config's property
    "properties": (
        """
        from dataclasses import dataclass
        from functools import cached_property

        @dataclass
        class Cfg:
            dim: int = 8
            heads: int = 2

            @property
            def head_dim(self):
                return self.dim // self.heads

        class Attn(nn.Module):
            def __init__(self, cfg):
                super().__init__()
                self.cfg = cfg
                self.width = cfg.dim  # runs the setter: stored doubled
                self.q = nn.Linear(cfg.dim, cfg.heads * cfg.head_dim)
                self.o = nn.Linear(self.width, self.inner)

            @property
            def width(self):
                return self._width

            @width.setter
            def width(self, value):
                self._width = 2 * value

            @cached_property
            def inner(self):
                return self.width + self.cfg.head_dim

            def forward(self, x):
                return self.o(torch.cat([self.q(x), self.q(x)], -1))
        """,
        "Attn",
        dict(cfg="Cfg(dim=8, heads=2)"),
        dict(x=(2, 8)),
    ),
    # a property is looked up on the type: `setattr(self, key, v)` over computed
    # names, which may replace any method of the instance, does not replace it
    "property_beside_computed_setattr": (
        """
        class Cfg:
            def __init__(self, dim=8, **extra):
                self.dim = dim
                for key, value in extra.items():
                    setattr(self, key, value)

            @property
            def hidden(self):
                return 3 * self.dim

        class Block(nn.Module):
            def __init__(self, cfg):
                super().__init__()
                self.proj = nn.Linear(cfg.dim, cfg.hidden)

            def forward(self, x):
                return self.proj(x)
        """,
        "Block",
        dict(cfg="Cfg(dim=8, scale=2)"),
        dict(x=(2, 8)),
    ),
    # `setattr(self, key, value)` over the keywords given replaces only what it is
    # given: the method `hidden` is the class's own, as Python runs it
    "method_beside_computed_setattr": (
        """
        class Cfg:
            def __init__(self, dim=8, **extra):
                self.dim = dim
                for key, value in extra.items():
                    setattr(self, key, value)

            def hidden(self):
                return 3 * self.dim

        class Block(nn.Module):
            def __init__(self, cfg):
                super().__init__()
                self.cfg = cfg
                self.proj = nn.Linear(cfg.dim, 3 * cfg.dim)

            def forward(self, x):
                y = self.proj(x)[..., : self.cfg.hidden() - 1]
                return y @ torch.ones(self.cfg.hidden() - 1, 5)
        """,
        "Block",
        dict(cfg="Cfg(dim=8, scale=2)"),
        dict(x=(2, 8)),
    ),
    # a constructor's helper that calls itself one level down, each level adding
    # layers by a computed name, read back through `self._modules[...]`: a call with
    # other numbers is no recursion of the same one
    "builder_calling_itself_one_level_down": (
        """
        class Glass(nn.Module):
            def __init__(self, depth=3, dim=8):
                super().__init__()
                self.depth = depth
                self.make(depth, dim)

            def make(self, level, dim):
                self.add_module("b" + str(level), nn.Linear(dim + level, dim + level - 1))
                if level > 1:
                    self.make(level - 1, dim)

            def forward(self, x):
                for level in range(self.depth, 0, -1):
                    x = self._modules["b" + str(level)](x)
                return x
        """,
        "Glass",
        dict(depth=3, dim=8),
        dict(x=(2, 11)),
    ),
    # an instance of a dataclass whose class defines `__call__`, given as a
    # parameter's default and called in forward: its `__call__` runs
    "dataclass_instance_called": (
        """
        from dataclasses import dataclass

        @dataclass
        class Scaled:
            scale: float = 2.0

            def __call__(self, x, w):
                return (x @ w) * self.scale

        class Net(nn.Module):
            def __init__(self, dim=8, rule=Scaled()):
                super().__init__()
                self.w = nn.Parameter(torch.randn(dim, 2 * dim))
                self.rule = rule

            def forward(self, x):
                return self.rule(x, self.w)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a state buffer registered again, at the input's size, by a helper forward
    # calls: the caller's self holds the new buffer (the empty one would not broadcast)
    "buffer_registered_in_a_helper": (
        """
        class Stateful(nn.Module):
            def __init__(self, dim=8):
                super().__init__()
                self.register_buffer("state", torch.zeros(0))
                self.w = nn.Parameter(torch.randn(dim, dim))

            def init_state(self, shape):
                for name, buf in self.named_buffers():
                    self.register_buffer(name, torch.zeros(shape, device=buf.device))

            def forward(self, x):
                if self.state.shape == torch.Size([0]):
                    self.init_state((x.shape[-1], 2 * x.shape[-1]))
                return x @ self.w @ self.state
        """,
        "Stateful",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a dataclass over OrderedDict whose own methods read dict's views of its
    # entries (`self.keys()`, `self.items()`), as transformers' ModelOutput does in
    # to_tuple and __getitem__: the entries its __post_init__ stored, in order
    "dict_subclass_views_of_its_entries": (
        """
        from dataclasses import dataclass, fields
        from typing import Optional

        class Output(OrderedDict):
            def __post_init__(self):
                for f in fields(self):
                    v = getattr(self, f.name)
                    if v is not None:
                        self[f.name] = v

            def __getitem__(self, k):
                if isinstance(k, str):
                    return dict(self.items())[k]
                return self.to_tuple()[k]

            def to_tuple(self):
                return tuple(self[k] for k in self.keys())

            def total(self):
                return sum(v.sum() for v in self.values())

        @dataclass
        class Pair(Output):
            a: Optional[torch.Tensor] = None
            b: Optional[torch.Tensor] = None

        class Net(nn.Module):
            def __init__(self, dim=8):
                super().__init__()
                self.proj = nn.Linear(dim, dim)

            def forward(self, x):
                out = Pair(a=self.proj(x), b=x)
                return out[0] @ out["b"].T + out.total()
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a dict comprehension over more names than a loop is unrolled for, each read
    # by getattr, then stored back under a computed name: each turn followed, as
    # Python runs it (one turn for all would name no attribute)
    "comprehension_over_attribute_names": (
        """
        class Solver(nn.Module):
            def __init__(self, dim=4):
                super().__init__()
                for i in range(10):
                    setattr(self, f"w{i}", nn.Parameter(torch.randn(dim + i, dim + i + 1)))
                self.refresh()

            def refresh(self):
                names = ("w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9")
                mats = {name: getattr(self, name) * 2 for name in names}
                for name, m in mats.items():
                    setattr(self, name + "_eff", m)

            def forward(self, x):
                for i in range(10):
                    x = x @ getattr(self, f"w{i}_eff")
                return x
        """,
        "Solver",
        dict(dim=4),
        dict(x=(2, 4)),
    ),
    # a method read without a call is bound to its instance: calling the value
    # runs it on that instance, as `self.ff(x)` does
    "bound_method_as_value": (
        """
        def chunked(fn, size, *xs):
            if size > 0:
                raise ValueError("not chunked here")
            return fn(*xs)

        class Block(nn.Module):
            def __init__(self, dim=8):
                super().__init__()
                self.up = nn.Linear(dim, 2 * dim)

            def ff(self, x):
                return self.up(x)

            def forward(self, x):
                step = self.ff
                return chunked(step, 0, x) + chunked(self.ff, 0, x)
        """,
        "Block",
        {},
        dict(x=(2, 8)),
    ),
    # Python finds forward on nn.Sequential before the project base after it in
    # the bases (whose forward only names the interface): the layers run
    "sequential_before_a_project_base_with_forward": (
        """
        class FFN(nn.Module):
            def forward(self, x):
                pass

        class MLP(nn.Sequential, FFN):
            pass

        class Head(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.ffn = MLP(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 1))

            def forward(self, x):
                return self.ffn(x)
        """,
        "Head",
        {"d": 8},
        dict(x=(2, 8)),
    ),
    # a dict subclass whose `__setitem__` also stores the entry as an attribute,
    # through `super().__setattr__`: object's store, on an instance built in forward
    "dict_entries_also_attributes": (
        """
        class Output(OrderedDict):
            def __setitem__(self, key, value):
                super().__setitem__(key, value)
                super().__setattr__(key, value)

        class Enc(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.a = nn.Linear(d, d)
                self.b = nn.Linear(d, 4)

            def forward(self, x):
                out = Output()
                out["embedding"] = self.a(x)
                return self.b(out.embedding) + out["embedding"][:, :4]
        """,
        "Enc",
        {"d": 8},
        dict(x=(2, 8)),
    ),
    # a class's own `__getattribute__` decides every read and its `__setattr__`
    # every store: names aliased by a table (the write through the alias in
    # `__post_init__` changes n_embd), and a name the instance surely lacks takes
    # getattr's default
    "getattribute_aliases": (
        """
        from dataclasses import dataclass

        @dataclass
        class Cfg:
            n_embd: int = 8
            n_head: int = 2
            attribute_map = {"hidden_size": "n_embd", "num_heads": "n_head"}

            def __post_init__(self):
                self.hidden_size = self.hidden_size + 4

            def __setattr__(self, key, value):
                if key in super().__getattribute__("attribute_map"):
                    key = super().__getattribute__("attribute_map")[key]
                super().__setattr__(key, value)

            def __getattribute__(self, key):
                if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
                    key = super().__getattribute__("attribute_map")[key]
                return super().__getattribute__(key)

        class Block(nn.Module):
            def __init__(self, cfg):
                super().__init__()
                width = getattr(cfg, "inner_width", 3 * cfg.hidden_size)
                self.up = nn.Linear(cfg.hidden_size, width)
                self.down = nn.Linear(width, 4 * cfg.num_heads)

            def forward(self, x):
                return self.down(self.up(x))
        """,
        "Block",
        dict(cfg="Cfg(n_embd=8, n_head=3)"),
        dict(x=(2, 12)),
    ),
    # a `__getattribute__` whose run keeps a note on an object the run does not know
    # (a write it cannot apply, of another name): the read it made still surely
    # raised AttributeError, so getattr takes its default after the note too
    "getattribute_that_keeps_a_note": (
        """
        import argparse
        from dataclasses import dataclass

        NOTES = argparse.Namespace()

        def note(key):
            NOTES.last_read = key

        @dataclass
        class Cfg:
            width: int = 8

            def __getattribute__(self, key):
                note(key)
                return super().__getattribute__(key)

        class Block(nn.Module):
            def __init__(self, cfg):
                super().__init__()
                self.cfg = cfg
                self.a = nn.Linear(8, 8)
                self.b = nn.Linear(8, 8)

            def forward(self, x):
                x = self.a(x)
                if getattr(self.cfg, "extra_layer", False):
                    x = self.b(x)
                return x
        """,
        "Block",
        dict(cfg="Cfg()"),
        dict(x=(2, 8)),
    ),
    # a store through the module's attribute changes the object the caller handed:
    # the constructor's own name for it and its caller's (after super().__init__)
    # see it, as transformers' config._attn_implementation_internal (main: a
    # complete 512 for torch's 1024)
    "store_through_a_held_config": (
        """
        from dataclasses import dataclass

        @dataclass
        class Cfg:
            width: int = 8
            mode: str = "narrow"

        class Base(nn.Module):
            def __init__(self, config: Cfg):
                super().__init__()
                self.config = config
                self.config.mode = "wide"

        class Net(Base):
            def __init__(self, config: Cfg):
                super().__init__(config)
                self.config.width = 16
                self.fc = nn.Linear(8, config.width if config.mode == "wide" else 8)
                self.out = nn.Linear(config.width, 8)

            def forward(self, x):
                return self.out(self.fc(x))
        """,
        "Net",
        {"config": "Cfg()"},
        dict(x=(2, 8)),
    ),
    # the same with a plain class's instance as the config
    "store_through_a_held_plain_object": (
        """
        class Cfg:
            def __init__(self):
                self.mode = "narrow"

        class Base(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.config = config
                self.config.mode = "wide"

        class Net(Base):
            def __init__(self, config):
                super().__init__(config)
                self.fc = nn.Linear(8, 16 if config.mode == "wide" else 8)

            def forward(self, x):
                return self.fc(x)
        """,
        "Net",
        {"config": "Cfg()"},
        dict(x=(2, 8)),
    ),
    # the standard library's re over known strings, and str.join of a dict's keys: a
    # class name matched against a table's keys decides the width (transformers'
    # loss_type); split's None for a group that took no part, findall's tuples
    "re_over_known_strings": (
        """
        import re

        WIDTHS = {"Mlp": 2, "Attention": 3, "Wide": 4}

        class WideMlpNet(nn.Module):
            def __init__(self):
                super().__init__()
                kind = self.__class__.__name__
                if kind not in WIDTHS:
                    found = re.findall(f"({'|'.join(WIDTHS)})", kind)
                    kind = found[0] if len(found) > 0 else None
                self.fc = nn.Linear(8, 8 * WIDTHS[kind])
                parts = re.split(r"(-)|_", "a-b_c")
                pairs = re.findall(r"([a-z])(\\d+)", "a1b22", flags=re.IGNORECASE)
                width = len(parts) + len(pairs[1][1]) + len(re.sub(r"\\d", "", "x1y22"))
                width = width + len(re.escape("a.b")) + len("-".join(["ab", "", "c"]))
                self.proj = nn.Linear(8 * WIDTHS[kind], width if parts[3] is None else 1)

            def forward(self, x):
                return self.proj(self.fc(x))
        """,
        "WideMlpNet",
        {},
        dict(x=(2, 8)),
    ),
    # nn.Module's walk of its children while it is built (transformers' post_init):
    # registration order, a shared module once, None left out, two equal layers two
    "named_children_while_built": (
        """
        class Base(nn.Module):
            def post_init(self):
                self.nested = [name for name, module in self.named_children() if name != "act"]
                self.fanout = len(list(self.children()))

        class Inner(Base):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(8, 8)
                self.post_init()

        class Net(Base):
            def __init__(self, pool=True):
                super().__init__()
                self.first = nn.Linear(8, 8)
                self.inner = Inner()
                self.act = nn.ReLU()
                self.skip = None
                self.pool = nn.Linear(8, 8) if pool else None
                self.again = self.first  # one object: the walk yields it once
                self.post_init()

            def forward(self, x):
                x = self.inner.lin(self.first(x))
                for _ in range(self.fanout):
                    x = self.first(x)
                if self.nested == ["first", "inner", "pool"]:
                    x = self.pool(x)
                return x
        """,
        "Net",
        {},
        dict(x=(2, 8)),
    ),
    # a classmethod called through the instance binds its class: `cls.made += 1`
    # counts on the class, which the second block sees (main: a complete 512 for
    # torch's 768, the count kept on each instance)
    "class_method_stores_on_its_class": (
        """
        class Block(nn.Module):
            made = 0

            @classmethod
            def number(cls) -> int:
                cls.made += 1
                return cls.made

            def __init__(self):
                super().__init__()
                self.idx = self.number()
                self.fc = nn.Linear(8, 8)

            def forward(self, x):
                for _ in range(self.idx):
                    x = self.fc(x)
                return x

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = Block()
                self.b = Block()

            def forward(self, x):
                return self.b(self.a(x))
        """,
        "Net",
        {},
        dict(x=(2, 8)),
    ),
    # what a classmethod caches on its class, of a value the analysis does not know
    # (transformers' `_can_set_experts_implementation`), is no attribute of the
    # instance: the module's children stay known
    "class_method_cache_leaves_the_children_known": (
        """
        import inspect

        class Base(nn.Module):
            @classmethod
            def can_set(cls) -> bool:
                cached = getattr(cls, "_can_set_cached_value", None)
                if isinstance(cached, bool):
                    return cached
                can = "@decorated" in inspect.getsource(cls)
                cls._can_set_cached_value = can
                return can

            def post_init(self):
                self.can_set()
                self.fanout = len(list(self.children()))

        class Net(Base):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.act = nn.ReLU()
                self.post_init()

            def forward(self, x):
                for _ in range(self.fanout):
                    x = self.fc(x)
                return x
        """,
        "Net",
        {},
        dict(x=(2, 8)),
    ),
    # a function walking the module tree calls itself on each child (timm's
    # named_apply): no recursion, each call is given another module (a torch layer's
    # own children are not known here: the walk stops above them)
    "recursive_walk_of_the_children": (
        """
        def count(module):
            n = 0
            for _, child in module.named_children():
                if isinstance(child, Inner):
                    n = n + count(child)
                elif isinstance(child, nn.Linear):
                    n = n + 1
            return n

        class Inner(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(8, 8)
                self.act = nn.ReLU()

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()
                self.fc = nn.Linear(8, 8)
                self.n = count(self)

            def forward(self, x):
                for _ in range(self.n):
                    x = self.fc(x)
                return x
        """,
        "Net",
        {},
        dict(x=(2, 8)),
    ),
    # nn.Module's walk of its whole tree, the module first under '', each submodule
    # under its dotted name, a shared one once (main: not known, so the count of
    # kernels and the turns of the forward's loop were not known)
    "named_modules_of_the_tree": (
        """
        class Inner(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(8, 8)
                self.act = nn.ReLU()

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()
                self.fc = nn.Linear(8, 8)
                self.again = self.inner.lin  # one object: the walk yields it once
                self.names = [n for n, _ in self.named_modules()]
                self.n = len(list(self.modules()))  # itself, inner, inner.lin, inner.act, fc
                self.k = len([m for m in self.modules() if isinstance(m, Inner)])

            def forward(self, x):
                for _ in range(self.n + self.k):
                    x = self.fc(x)
                if self.names == ["", "inner", "inner.lin", "inner.act", "fc"]:
                    x = self.inner.lin(x)
                return x
        """,
        "Net",
        {},
        dict(x=(2, 8)),
    ),
    # gpytorch's Kernel: a property lists the kernels below it through two
    # generator methods (docstrings and all) over named_modules(), while the
    # module is built; the module itself is no sub-kernel (`module is not self`)
    "generator_methods_over_named_modules_while_built": (
        """
        class Kernel(nn.Module):
            def __init__(self, batch_shape=None, parts=()):
                super().__init__()
                self._batch_shape = torch.Size([]) if batch_shape is None else batch_shape
                self.parts = nn.ModuleList(parts)
                self.scale = nn.Parameter(torch.zeros(*self.batch_shape, 1, 8))

            def named_sub_kernels(self):
                \"\"\"The kernels below this one.\"\"\"
                for name, module in self.named_modules():
                    if module is not self and isinstance(module, Kernel):
                        yield name, module

            def sub_kernels(self):
                for _, kernel in self.named_sub_kernels():
                    yield kernel

            @property
            def batch_shape(self):
                kernels = list(self.sub_kernels())
                if len(kernels):
                    return torch.broadcast_shapes(self._batch_shape, *[k.batch_shape for k in kernels])
                return self._batch_shape

            def forward(self, x):
                return (x * self.scale) @ x.transpose(-1, -2)
        """,
        "Kernel",
        {},
        dict(x=(2, 8)),
    ),
    # pytorch-metric-learning's records: a helper given the module being built calls
    # itself with other arguments (no recursion of one call: main took it for one and
    # lost the module), and the forward's helper loops over a list the module never got
    # (`getattr(obj, "_stats", [])`), whose `setattr(obj, r, 0)` on its parameter is no
    # write of the run in the pass over it with its parameters not known
    "a_helper_calling_itself_with_other_arguments": (
        """
        def add(obj, name=None, names=None, is_stat=False):
            lname = "_stats" if is_stat else "_rec"
            if not hasattr(obj, lname):
                setattr(obj, lname, [])
            lst = getattr(obj, lname)
            if name is not None:
                if name not in lst:
                    lst.append(name)
                if not hasattr(obj, name):
                    setattr(obj, name, 1)
            if names is not None:
                for n in names:
                    add(obj, name=n, is_stat=is_stat)

        def reset(obj):
            for r in getattr(obj, "_stats", []):
                setattr(obj, r, 0)

        class Net(nn.Module):
            def __init__(self, collect=False):
                super().__init__()
                self.collect = collect
                self.fc = nn.Linear(8, 8)
                self.p = 2
                add(self, names=["p", "q"])
                if self.collect:
                    add(self, names=["avg"], is_stat=True)

            def forward(self, x):
                reset(self)
                for _ in range(self.p):
                    x = self.fc(x)
                return x
        """,
        "Net",
        {},
        dict(x=(2, 8)),
    ),
    # a class of the class body read through the instance (snntorch's neurons:
    # `self.spike_grad = self.ATan.apply`, ATan an autograd Function defined inside
    # the module's class under `@staticmethod`, whose `__get__` gives the class; a
    # subclass reads its base's; main: not modelled)
    "a_class_of_the_class_body_read_through_self": (
        """
        class Neuron(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.spike_grad = self.ATan.apply

            def forward(self, x):
                return self.fc(self.spike_grad(self.fc(x)))

            @staticmethod
            class ATan(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    return (x > 0).float()

                @staticmethod
                def backward(ctx, g):
                    (x,) = ctx.saved_tensors
                    return g / (1 + x * x)

        class Leaky(Neuron):
            class Box:
                width = 3

            def forward(self, x):
                for _ in range(self.Box.width):
                    x = self.ATan.apply(self.fc(x))
                return x
        """,
        "Leaky",
        {},
        dict(x=(2, 8)),
    ),
    # dicts the module holds, changed in place on one path (transformers'
    # init_parallel_plans: `self._tp_plan.update(...)` under an undecided `if`), stay
    # dicts: no module among the children
    "dict_attributes_changed_in_place_stay_plain": (
        """
        import inspect

        class Net(nn.Module):
            _tp_plan = None

            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.act = nn.ReLU()
                self._tp_plan = dict(getattr(type(self), "_tp_plan", None) or {})
                self._ep_plan = {}
                if "@decorated" in inspect.getsource(type(self)):
                    self._tp_plan.update({"fc": "colwise"})
                    self._ep_plan.update(self._tp_plan)
                self.fanout = len(list(self.named_children()))

            def forward(self, x):
                for _ in range(self.fanout):
                    x = self.fc(x)
                return x
        """,
        "Net",
        {},
        dict(x=(2, 8)),
    ),
    # an instance of a project class that is no nn.Module is an attribute torch
    # leaves alone: no child (main: a complete 512 for torch's 256, the walk
    # counted it a module)
    "plain_class_instance_is_no_child": (
        """
        class Settings:
            def __init__(self, depth=1):
                self.depth = depth

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.settings = Settings()
                self.fanout = len(list(self.named_children()))

            def forward(self, x):
                for _ in range(self.fanout):
                    x = self.fc(x)
                return x
        """,
        "Net",
        {},
        dict(x=(2, 8)),
    ),
    # what a class attribute holding a plain class makes, called or through a
    # classmethod annotated to return that class, is no module although its value
    # is not known (transformers' generation_config in post_init): the walk of the
    # children knows them (main: the children, the fan-out and the FLOPs unknown)
    "plain_class_made_through_a_class_attribute": (
        """
        import copy

        class Settings:
            def __init__(self, **kwargs):
                self.depth = kwargs.pop("depth", 1)

            @classmethod
            def from_config(cls, config) -> "Settings":
                return cls(**copy.deepcopy(config.extra))

        class Base(nn.Module):
            settings_class = Settings

            def post_init(self, config):
                if config.generate:
                    try:
                        self.settings = self.settings_class.from_config(config)
                    except NotImplementedError:
                        self.settings = self.settings_class()
                self.fanout = len(list(self.named_children()))

        class Config:
            def __init__(self, generate):
                self.generate = generate
                self.extra = {"depth": 2}

        class Net(Base):
            def __init__(self, generate=True):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.act = nn.ReLU()
                self.post_init(Config(generate))

            def forward(self, x):
                for _ in range(self.fanout):
                    x = self.act(self.fc(x))
                return x
        """,
        "Net",
        {},
        dict(x=(2, 8)),
    ),
    # `t.sum` and `getattr(t, "mean")` read without a call are methods bound to the
    # tensor: they run when called, with the arguments of that call
    "tensor_method_as_a_value": (
        """
        class Net(nn.Module):
            def __init__(self, dim, mode="mean"):
                super().__init__()
                self.proj = nn.Linear(dim, dim)
                self.mode = mode

            def forward(self, x):
                reduce = getattr(x, self.mode)
                total = x.sum
                return self.proj(reduce(dim=-2, keepdim=True)) + total(dim=-2, keepdim=True)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 4, 8)),
    ),
    # issubclass along a project class's bases decides which keywords it is given
    # (`depth` only to the attention that takes it)
    "issubclass_of_project_classes": (
        """
        class Attn(nn.Module):
            def __init__(self, dim, heads=2, **kwargs):
                super().__init__()
                self.proj = nn.Linear(dim, dim * heads)

            def forward(self, x):
                return self.proj(x)

        class DiffAttn(Attn):
            def __init__(self, dim, heads=2, depth=0, **kwargs):
                super().__init__(dim, heads + depth)

        def create(layer, dim, heads, depth=0, **kwargs):
            if issubclass(layer, (DiffAttn,)):
                kwargs["depth"] = depth
            return layer(dim, heads=heads, **kwargs)

        class Net(nn.Module):
            def __init__(self, dim, attn_layer=DiffAttn):
                super().__init__()
                dd = {"device": None, "dtype": None}
                self.attn = create(attn_layer, dim, 2, depth=3, **dd)
                self.plain = create(Attn, dim, 2, depth=3, **dd)

            def forward(self, x):
                return self.attn(x).sum() + self.plain(x).sum()
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a closure called at two places runs twice: each call's calls are its own
    # (einops' pack_one / inverse idiom, the second call with another pattern)
    "closure_called_at_two_places": (
        """
        from einops import pack, unpack

        def pack_one(t, pattern):
            packed, packed_shape = pack([t], pattern)

            def inverse(out, inv_pattern=None):
                inv_pattern = pattern if inv_pattern is None else inv_pattern
                (out,) = unpack(out, packed_shape, inv_pattern)
                return out

            return packed, inverse

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.proj = nn.Linear(dim, dim)

            def forward(self, x):
                x, inverse = pack_one(x, "b * d")
                y = self.proj(x)
                ids = y.argmax(dim=-1)
                return inverse(y), inverse(ids, "b *")
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 3, 8)),
    ),
    # namedtuple classes: a call binds the fields positionally, by name and from
    # defaults; an instance unpacks as a tuple and reads a field by its name
    "namedtuple_results": (
        """
        from collections import namedtuple

        Return = namedtuple("Return", ["out", "idx", "loss"])
        Pair = namedtuple("Pair", "a b", defaults=(None,))

        class Layer(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.proj = nn.Linear(dim, dim)

            def forward(self, x):
                y = self.proj(x)
                return Return(y, y.argmax(-1), loss=y.sum())

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.a = Layer(dim)
                self.b = Layer(dim)

            def forward(self, x):
                out, idx, loss = self.a(x)
                p = Pair(self.b(out).out)
                return p.a @ p.a.t() if p.b is None else p.a
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # callable() of a lambda is True: `default(size, lambda: 2 ** dim)` calls it
    "callable_lambda_default": (
        """
        from math import log2

        def default(*args):
            for arg in args:
                if arg is not None:
                    return arg() if callable(arg) else arg
            return None

        class Net(nn.Module):
            def __init__(self, dim, codebook_size=None):
                super().__init__()
                codebook_size = default(codebook_size, lambda: 2 ** dim)
                self.proj = nn.Linear(dim, int(log2(codebook_size)) * 3)

            def forward(self, x):
                return self.proj(x)
        """,
        "Net",
        dict(dim=4),
        dict(x=(2, 4)),
    ),
    # a complex tensor seen as (real, imaginary) pairs and back: views, 0 FLOPs (main:
    # `torch.view_as_complex: cost not known`; openunmix's ComplexNorm)
    "complex_views": (
        """
        class Mag(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.d = d
                self.a = nn.Linear(d, 2 * d)
                self.b = nn.Linear(d, d)

            def forward(self, x):
                z = torch.view_as_complex(self.a(x).unflatten(-1, (self.d, 2)))
                return self.b(torch.abs(z)) + torch.view_as_real(z).sum(-1)
        """,
        "Mag",
        dict(d=4),
        dict(x=(2, 4)),
    ),
    # torch.equal is a Python bool of unknown value, 0 FLOPs: branches under it that
    # cost alike are one figure (main: `torch.equal: cost not known`; speechbrain's
    # attention, `query is key or torch.equal(query, key)`)
    "compared_by_torch_equal": (
        """
        class Att(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.qkv = nn.Linear(d, 3 * d)

            def forward(self, q, k):
                if q is k or torch.equal(q, k):
                    return self.qkv(q)
                return self.qkv(k)
        """,
        "Att",
        dict(d=4),
        dict(q=(2, 4), k=(2, 4)),
    ),
    # `range(t)` of a one-element integer tensor (t.__index__()): a loop of a count not
    # known, whose turns here cost nothing in torch's count (main: `call range: cost not
    # known`; speechbrain's ChannelSwap, `for i in range(N_swaps)`)
    "range_of_a_tensor": (
        """
        class Count(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.lin = nn.Linear(d, d)

            def forward(self, x):
                n = torch.randint(low=1, high=3, size=(1,))
                for i in range(n):
                    x = x * 2
                return self.lin(x)
        """,
        "Count",
        dict(d=8),
        dict(x=(2, 8)),
    ),
    # `out=None` is torch's default of a reduction's out= (main: `torch.mean: cost not
    # known`; deepctr's SENETLayer, `torch.mean(inputs, dim=-1, out=None)`)
    "reduction_with_out_none": (
        """
        class Squeeze(nn.Module):
            def __init__(self, f):
                super().__init__()
                self.lin = nn.Linear(f, f, bias=False)

            def forward(self, x):
                z = torch.mean(x, dim=-1, out=None) + torch.sum(x, -1, out=None)
                return x * self.lin(z).unsqueeze(2)
        """,
        "Squeeze",
        dict(f=4),
        dict(x=(2, 4, 3)),
    ),
    # a permutation held in a small integer tensor's known elements, unpacked into
    # permute (torch takes a 0-d integer tensor as an int); a write into another
    # tensor between the two uses keeps them (main: Linear's cost unknown; compressai's
    # EntropyBottleneck)
    "permutation_held_in_a_tensor": (
        """
        class Perm(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.lin = nn.Linear(d, d + 3)

            def forward(self, x):
                perm = torch.cat(
                    (
                        torch.tensor([1, 0], dtype=torch.long, device=x.device),
                        torch.arange(2, x.ndim, dtype=torch.long, device=x.device),
                    )
                )
                inv_perm = perm
                y = x.permute(*perm).contiguous()
                y += 1
                z = self.lin(y)
                return self.lin(z[..., : x.shape[-1]].permute(*inv_perm))
        """,
        "Perm",
        dict(d=5),
        dict(x=(2, 3, 4, 5)),
    ),
    # a flag held in a buffer of `torch.as_tensor(1)`, compared with a number, picks
    # the method the constructor binds (main: `self.step: not modelled`; snntorch's
    # reset_mechanism_val)
    "flag_held_in_a_buffer": (
        """
        class Flag(nn.Module):
            codes = {"subtract": 0, "zero": 1}

            def __init__(self, d, how="zero"):
                super().__init__()
                self.register_buffer("how", torch.as_tensor(Flag.codes[how]))
                self.lin = nn.Linear(d, d)
                if self.how == 0:
                    self.step = self._sub
                elif self.how == 1:
                    self.step = self._twice

            def _sub(self, x):
                return self.lin(x) - x

            def _twice(self, x):
                return self.lin(self.lin(x))

            def forward(self, x):
                return self.step(x)
        """,
        "Flag",
        dict(d=8),
        dict(x=(2, 8)),
    ),
    # `sum(rows, [])` joins the lists as `+` does: a view's shape built of them (main:
    # Linear's cost unknown; hiera's Unroll)
    "lists_joined_by_sum": (
        """
        import math

        class Unroll(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.size = [4, 4]
                self.schedule = [(2, 2)]
                self.lin = nn.Linear(d, d)

            def forward(self, x):
                B, _, C = x.shape
                cur_size = self.size
                x = x.view(*([B] + cur_size + [C]))
                for strides in self.schedule:
                    cur_size = [i // s for i, s in zip(cur_size, strides)]
                    new_shape = [B] + sum([[i, s] for i, s in zip(cur_size, strides)], []) + [C]
                    x = x.view(new_shape).permute(0, 2, 4, 1, 3, 5)
                    x = x.flatten(0, len(strides))
                    B *= math.prod(strides)
                return self.lin(x.reshape(-1, math.prod(self.size), C))
        """,
        "Unroll",
        dict(d=8),
        dict(x=(2, 16, 8)),
    ),
    # `functools.reduce(operator.__add__, tuples)` joins them as `+` does (main: `calls a
    # function it is handed`; speechbrain's GaussianLowpassPooling padding)
    "tuples_joined_by_reduce": (
        """
        from functools import reduce
        from operator import __add__

        class Padded(nn.Module):
            def __init__(self, k):
                super().__init__()
                self.conv = nn.Conv2d(4, 4, k)
                sizes = (k, k + 2)
                self.pad = reduce(__add__, [(s // 2, s // 2 - 1 + s % 2) for s in sizes[::-1]])

            def forward(self, x):
                return self.conv(F.pad(x, self.pad))
        """,
        "Padded",
        dict(k=4),
        dict(x=(2, 4, 9, 11)),
    ),
    # a target run is one process: torch.distributed.is_initialized() is False
    "no_process_group_in_a_target_run": (
        """
        import torch.distributed as dist

        def is_distributed():
            return dist.is_initialized() and dist.get_world_size() > 1

        class Net(nn.Module):
            def __init__(self, dim, sync=None):
                super().__init__()
                sync = is_distributed() if sync is None else sync
                self.proj = nn.Linear(dim, dim * 2 if sync else dim)

            def forward(self, x):
                return self.proj(x)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a feature flag read through classmethods called on the class (gpytorch's
    # `settings.lazily_evaluate_kernels.on()`): `cls` is the class it is read off,
    # whose own class attribute wins over its base's
    "classmethod_through_the_class": (
        """
        class Flag:
            _default = False
            _state = None

            @classmethod
            def is_default(cls):
                return cls._state is None

            @classmethod
            def on(cls):
                if cls.is_default():
                    return cls._default
                return cls._state

        class Lazy(Flag):
            _default = True

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.small = nn.Linear(dim, 2)
                self.big = nn.Linear(dim, dim * 4)

            def forward(self, x):
                return self.big(x) if Lazy.on() and not Flag.on() else self.small(x)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
}


def package_model(pkg, code: str):
    """pkg/model.py: the header's imports, then code."""
    return write(pkg, "model.py", HEADER + textwrap.dedent(code))


def assert_exact(tmp_path, key: str, case: tuple, header: str = HEADER) -> None:
    """The target of one case, complete and equal to FlopCounterMode's count."""
    code, cls, init, inputs = case
    path = write(tmp_path, f"{key}.py", header + textwrap.dedent(code))
    t = static_target(
        path,
        cls,
        {k: str(v) for k, v in init.items()},
        {k: ",".join(map(str, s)) for k, s in inputs.items()},
    )
    build = f"{cls}({', '.join(f'{k}={v}' for k, v in init.items())})"
    tensors = {k: torch.randn(*s) for k, s in inputs.items()}
    truth = counted(path, build, tensors)
    assert truth > 0
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth


@pytest.mark.parametrize("key", sorted(CASES))
@pytest.mark.filterwarnings("ignore:.*with a literal:SyntaxWarning")  # `kind is "proj"`, on purpose
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_exact_against_flop_counter(tmp_path, key):
    assert_exact(tmp_path, key, CASES[key])


def test_super_setattr_through_a_base_the_analysis_does_not_read(tmp_path):
    """The same store where a base outside the project may define `__setattr__`
    (here nn.Module's, which registers): not taken for object's, no figure."""
    code = """
        from elsewhere import Record

        class Output(Record):
            def __setitem__(self, key, value):
                super().__setattr__(key, value)

        class Enc(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.a = nn.Linear(d, d)

            def forward(self, x):
                out = Output()
                out["embedding"] = self.a(x)
                return self.a(out.embedding)
    """
    path = write(tmp_path, "m.py", HEADER + textwrap.dedent(code))
    t = static_target(path, "Enc", {"d": "8"}, {"x": "2,8"})
    assert not t["complete"]


def test_a_container_subclass_with_an_attribute_that_may_be_a_module_is_a_bound(tmp_path):
    # torch would register whatever `make()` returns if it is a module, and run it.
    path = write(
        tmp_path,
        "maybe.py",
        HEADER
        + textwrap.dedent(
            """
            from somewhere_unseen import make

            class Block(nn.Sequential):
                def __init__(self, dim):
                    super().__init__(nn.Linear(dim, dim))
                    self.extra = make(dim)
            """
        ),
    )
    t = static_target(path, "Block", {"dim": "8"}, {"input": "2,8"})
    assert not t["complete"]
    assert t["flops_value"] is None


def test_a_function_of_another_file_called_by_reference(tmp_path, monkeypatch):
    # timm's `to_2tuple = _ntuple(2)`: the value crosses files, its function does not.
    pkg = tmp_path / "pkg"
    write(pkg, "__init__.py", "")
    write(
        pkg,
        "helpers.py",
        """
        from itertools import repeat

        def _ntuple(n):
            def parse(x):
                return tuple(repeat(x, n))
            return parse

        to_2tuple = _ntuple(2)

        def identity(x):
            return x

        pick = identity
        """,
    )
    path = package_model(
        pkg,
        """
            from .helpers import pick, to_2tuple

            class Net(nn.Module):
                def __init__(self, cin, cout, k=3):
                    super().__init__()
                    self.conv = nn.Conv2d(cin, cout, to_2tuple(k), padding=pick(1))

                def forward(self, x):
                    return self.conv(x)
            """,
    )
    t = static_target(path, "Net", {"cin": "3", "cout": "4"}, {"x": "2,3,8,8"})
    monkeypatch.syspath_prepend(str(tmp_path))
    from torch.utils.flop_counter import FlopCounterMode

    net = importlib.import_module("pkg.model").Net(3, 4)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        net(torch.randn(2, 3, 8, 8))
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fc.get_total_flops()


def test_a_classmethod_of_a_class_of_another_file(tmp_path, monkeypatch):
    # chemprop's `MLP.build(...)` returning `cls(*blocks)`: called through the class
    # imported by its absolute name from another file, and through a subclass that
    # inherits it
    pkg = tmp_path / "pkg5"
    write(pkg, "__init__.py", "")
    write(
        pkg,
        "ffn.py",
        """
        from torch import nn

        class MLP(nn.Sequential):
            @classmethod
            def build(cls, d, out, hidden=16):
                return cls(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, out))

        class Wide(MLP):
            pass
        """,
    )
    path = package_model(
        pkg,
        """
            from pkg5.ffn import MLP, Wide

            class Net(nn.Module):
                def __init__(self, d):
                    super().__init__()
                    self.a = MLP.build(d, 4)
                    self.b = Wide.build(4, 2, hidden=32)

                def forward(self, x):
                    return self.b(self.a(x))
            """,
    )
    t = static_target(path, "Net", {"d": "8"}, {"x": "2,8"})
    monkeypatch.syspath_prepend(str(tmp_path))
    from torch.utils.flop_counter import FlopCounterMode

    net = importlib.import_module("pkg5.model").Net(8)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        net(torch.randn(2, 8))
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fc.get_total_flops()


def test_an_autograd_function_read_off_its_module(tmp_path, monkeypatch):
    # pytorch-wavelets' `import pkg.lowlevel as lowlevel; lowlevel.AFB1D.apply(x, ...)`:
    # a Function of another file, read off its module, applied as `Fn.apply` is
    # (main: not modelled, no total)
    pkg = tmp_path / "pkg7"
    write(pkg, "__init__.py", "")
    write(
        pkg,
        "low.py",
        """
        from torch.autograd import Function

        class Mix(Function):
            @staticmethod
            def forward(ctx, x, w):
                return x @ w

            @staticmethod
            def backward(ctx, g):
                return g, None
        """,
    )
    path = package_model(
        pkg,
        """
            import pkg7.low as low
            from pkg7 import low as again

            class Net(nn.Module):
                def __init__(self, d):
                    super().__init__()
                    self.w = nn.Parameter(torch.randn(d, 2 * d))
                    self.v = nn.Parameter(torch.randn(2 * d, d))

                def forward(self, x):
                    return again.Mix.apply(low.Mix.apply(x, self.w), self.v)
            """,
    )
    t = static_target(path, "Net", {"d": "8"}, {"x": "2,8"})
    monkeypatch.syspath_prepend(str(tmp_path))
    from torch.utils.flop_counter import FlopCounterMode

    net = importlib.import_module("pkg7.model").Net(8)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        net(torch.randn(2, 8))
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fc.get_total_flops()


def test_a_function_of_another_file_as_a_value(tmp_path, monkeypatch):
    # geffnet's `gate_fn=sigmoid`, reached through two star imports: a function of
    # another file passed, stored and called later
    pkg = tmp_path / "pkg2"
    write(pkg, "__init__.py", "")
    write(
        pkg / "acts",
        "impl.py",
        """
        def sigmoid(x, inplace: bool = False):
            return x.sigmoid_() if inplace else x.sigmoid()

        def gated(x, w):
            return x @ w
        """,
    )
    write(pkg / "acts", "__init__.py", "from pkg2.acts.impl import *\n")
    path = package_model(
        pkg,
        """
            from pkg2.acts import *

            class SE(nn.Module):
                def __init__(self, c, gate_fn=sigmoid):
                    super().__init__()
                    self.conv = nn.Conv2d(c, c, 1)
                    self.gate_fn = gate_fn
                    self.mix = gated
                    self.w = nn.Parameter(torch.randn(4, 4))

                def forward(self, x):
                    return self.mix(x * self.gate_fn(self.conv(x)), self.w)
            """,
    )
    t = static_target(path, "SE", {"c": "3"}, {"x": "2,3,4,4"})
    monkeypatch.syspath_prepend(str(tmp_path))
    from torch.utils.flop_counter import FlopCounterMode

    net = importlib.import_module("pkg2.model").SE(3)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        net(torch.randn(2, 3, 4, 4))
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fc.get_total_flops()


CONFIG = """
    from dataclasses import dataclass, field

    import torch.nn as nn

    @dataclass
    class Base:
        n_embd: int = 8

    @dataclass
    class GPTConfig(Base):
        n_layer: int = 2
        mult: int = 4
        hidden: int = field(init=False, default=0)

        def __post_init__(self):
            self.hidden = self.n_embd * self.mult

    class GPT(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.layers = nn.ModuleList(
                [nn.Linear(config.n_embd, config.hidden) for _ in range(config.n_layer)]
            )

        def forward(self, x):
            return [layer(x) for layer in self.layers][-1]
"""


def test_dataclass_config_with_inherited_fields_and_post_init(tmp_path):
    path = write(tmp_path, "gpt.py", CONFIG)
    t = static_target(path, "GPT", {"config": "GPTConfig(n_layer=3, n_embd=16)"}, {"x": "2,16"})
    truth = counted(path, "GPT(GPTConfig(n_layer=3, n_embd=16))", {"x": torch.randn(2, 16)})
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth


@pytest.mark.parametrize(
    "value, message",
    [
        (
            "GPTConfig(n_layers=3)",
            "GPTConfig() got an unexpected keyword argument 'n_layers' "
            "(did you mean 'n_layer'?) (fields: n_embd, n_layer, mult)",
        ),
        ("GPTConfig(hidden=3)", "unexpected keyword argument 'hidden'"),  # init=False
        ("GPTConfig(1, 2, 3, 4)", "GPTConfig() takes 3 positional arguments but 4 were given"),
    ],
)
def test_a_config_call_python_would_refuse_is_a_usage_error(tmp_path, value, message):
    from click.testing import CliRunner

    from shapelint.cli import main

    path = write(tmp_path, "gpt.py", CONFIG)
    res = CliRunner().invoke(
        main, ["cost", f"{path}::GPT", "--init", f"config={value}", "--input", "x=2,8"]
    )
    assert res.exit_code == 2
    assert message in res.output
    assert "Traceback" not in res.output


ABSENT = """
    from dataclasses import dataclass

    import torch.nn as nn

    @dataclass
    class Config:
        dim: int = 8

    @dataclass
    class Hooked(Config):
        def __getattr__(self, name):
            return 2

    class Net(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            # absent from the config and its class: Python takes the defaults
            self.mult = getattr(config, "mult", 4)
            self.proj = nn.Linear(config.dim, config.dim * self.mult)
            self.extra = nn.Linear(config.dim * self.mult, config.dim) if hasattr(config, "bias") else None

        def forward(self, x):
            EXTRA
            y = self.proj(x)
            if getattr(self.config, "twice", False):
                y = self.proj(x) + y
            return y
"""


@pytest.mark.parametrize("cls", ["Config", "Hooked"])
def test_getattr_of_an_attribute_a_dataclass_surely_lacks_takes_the_default(tmp_path, cls):
    """`getattr(config, "mult", 4)`, `hasattr(config, "bias")` on a dataclass instance
    whose class cannot supply them are the default and False, as in Python: the
    target is exact. A `__getattr__` on the class may supply anything: unknown."""
    path = write(tmp_path, "net.py", ABSENT.replace("EXTRA", "pass"))
    t = static_target(path, "Net", {"config": f"{cls}(dim=8)"}, {"x": "2,8"})
    truth = counted(path, f"Net({cls}(dim=8))", {"x": torch.randn(2, 8)})
    if cls == "Config":
        assert t["complete"], t["unknown"]
        assert t["flops_value"] == truth
    else:
        assert not t["complete"]


def test_a_write_the_analysis_does_not_apply_keeps_the_attribute_unknown(tmp_path):
    """`self.config.twice = True` in a forward is a write the config value does not
    keep: `getattr(self.config, "twice", False)` after it is not the default (which
    would be a complete figure missing one product), it is unknown."""
    path = write(tmp_path, "net.py", ABSENT.replace("EXTRA", "self.config.twice = True"))
    t = static_target(path, "Net", {"config": "Config(dim=8)"}, {"x": "2,8"})
    truth = counted(path, "Net(Config(dim=8))", {"x": torch.randn(2, 8)})
    assert not t["complete"]
    assert t["flops_value"] is None or t["flops_value"] <= truth


WRAPPED_WRITE = """
    import functools
    from dataclasses import dataclass

    import torch.nn as nn

    @dataclass
    class Config:
        dim: int = 8

    def config_defaults(func):
        @functools.wraps(func)
        def wrapper(self, x):
            twice = getattr(self.config, "twice", None)
            if twice is not None:
                self.config.twice = twice  # a write only where the config has one
                x = func(self, x)
            return func(self, x)

        return wrapper

    class Net(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.proj = nn.Linear(config.dim, config.dim)

        @config_defaults
        def forward(self, x):
            return self.proj(x)
"""


def test_a_write_in_code_that_has_not_run_leaves_absence_provable(tmp_path):
    """A decorator's wrapper, analysed where its `def` runs (its parameters not
    known), writes `self.config.twice` only where the config has it: that pass is
    not the run, and the run never makes the write. Python's getattr takes its
    default (one product); the write once made it unknown (a lower bound)."""
    path = write(tmp_path, "net.py", WRAPPED_WRITE)
    t = static_target(path, "Net", {"config": "Config(dim=8)"}, {"x": "2,8"})
    truth = counted(path, "Net(Config(dim=8))", {"x": torch.randn(2, 8)})
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth


CAPTURED_WRITE = """
    from dataclasses import dataclass

    import torch
    import torch.nn as nn

    @dataclass
    class Config:
        dim: int = 8

    class Net(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.proj = nn.Linear(config.dim, config.dim)

        def forward(self, x):
            cfg = self.config

            @torch.no_grad()
            def mark():
                cfg.skip = True

            mark()
            y = self.proj(x)
            if not getattr(self.config, "skip", False):
                y = self.proj(y)
            return y
"""


def test_a_write_in_a_nested_def_to_what_it_captures_may_happen(tmp_path):
    """A nested def whose call the analysis does not follow (a decorator it does not
    run) writes to the config it captures, not through a parameter: that write may
    happen wherever it runs, so `getattr(config, "skip", False)` after the call is not
    the default (which would be a bound of two products for torch's one)."""
    path = write(tmp_path, "net.py", CAPTURED_WRITE)
    t = static_target(path, "Net", {"config": "Config(dim=8)"}, {"x": "2,8"})
    truth = counted(path, "Net(Config(dim=8))", {"x": torch.randn(2, 8)})
    assert not t["complete"]
    assert t["flops_value"] is None or t["flops_value"] <= truth


def test_a_computed_setattr_that_replaces_a_method_where_it_runs(tmp_path):
    """`setattr(self, name, self.double)` with a name computed at run time replaces
    the method `scale` on the instance: forward runs `double` (two products), so the
    class's own `scale` (one) is no figure for it; the call is unknown, named."""
    code = HEADER + textwrap.dedent(
        """
        class Block(nn.Module):
            def __init__(self, dim=8):
                super().__init__()
                self.proj = nn.Linear(dim, dim)
                for name in ["scale"]:
                    setattr(self, name, self.double)

            def scale(self, x):
                return x

            def double(self, x):
                return self.proj(x)

            def forward(self, x):
                return self.scale(self.proj(x))
        """
    )
    path = write(tmp_path, "net.py", code)
    t = static_target(path, "Block", {}, {"x": "2,8"})
    truth = counted(path, "Block()", {"x": torch.randn(2, 8)})
    assert not t["complete"]
    assert any("scale" in u["why"] for u in t["unknown"]), t["unknown"]
    assert t["flops_value"] is None or t["flops_value"] <= truth


def test_a_torch_layer_s_forward_inherited_with_its_own_parameters(tmp_path):
    # `class L1Loss(nn.L1Loss, base.Loss): pass`: forward(self, input, target) is torch's
    path = write(
        tmp_path,
        "losses.py",
        HEADER
        + textwrap.dedent(
            """
            class Named:
                name = "loss"

            class L1Loss(nn.L1Loss, Named):
                pass

            class Cosine(nn.CosineEmbeddingLoss, Named):
                pass
            """
        ),
    )
    t = static_target(path, "L1Loss", {}, {"input": "2,4", "target": "2,4"})
    assert t["complete"], t["unknown"]
    assert t["output"] == []  # reduction="mean": a 0-dim tensor, as torch's
    # a torch base the stubs do not describe: Python finds its forward, so no
    # usage error, and the figure is unknown, named
    t = static_target(path, "Cosine", {}, {"input": "2,4"})
    assert not t["complete"]
    assert "torch.nn.CosineEmbeddingLoss" in t["unknown"][0]["why"]


def test_a_target_s_output_prints_an_unnamed_run_of_dims_as_dots(tmp_path):
    # json carries what the text face shows: `...`, not the run's internal name
    path = write(
        tmp_path,
        "run.py",
        HEADER
        + textwrap.dedent(
            """
            class Flat(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.l = nn.Linear(4, 8)

                def forward(self, x):
                    return self.l(x.reshape(*x.shape[:-2], -1))
            """
        ),
    )
    t = static_target(path, "Flat", {}, {})
    assert t["output"] == ["...", "8"], t["output"]


# Guards of tensor_values' writes (main knows no elements at all, so these hold there
# too): a write into a tensor whose elements were known makes them unknown, so the
# layer after is a call of unknown cost, never the figure of the elements before it.
WRITTEN = {
    # the permutation is (3, 1, 2, 0) after the writes
    "written_in_place": """
        class Written(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.lin = nn.Linear(d, d)

            def forward(self, x):
                perm = torch.arange(x.ndim)
                y = self.lin(x.permute(*perm))
                perm[0] = 3
                perm[3] = 0
                return self.lin(y.permute(*perm))
    """,
    # two equal permutations, one written into through another name on its path:
    # not known after the `if`
    "written_on_one_path": """
        class Written(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.lin = nn.Linear(d, d)

            def forward(self, x):
                if x.sum() > 0:
                    perm = torch.arange(4)
                else:
                    perm = torch.arange(4)
                    same = perm
                    same[0] = 3
                    same[3] = 0
                return self.lin(x.permute(*perm))
    """,
    # written through a view, by an in-place method: (3, 3, 2, 3), which torch refuses
    "written_through_a_view": """
        class Written(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.lin = nn.Linear(d, d)

            def forward(self, x):
                perm = torch.arange(4)
                perm.view(2, 2)[0].fill_(3)
                return self.lin(x.permute(*perm))
    """,
}


@pytest.mark.parametrize("key", sorted(WRITTEN))
def test_a_tensor_written_into_no_longer_holds_its_elements(tmp_path, key):
    path = write(tmp_path, f"{key}.py", HEADER + textwrap.dedent(WRITTEN[key]))
    t = static_target(path, "Written", {"d": "5"}, {"x": "5,3,4,5"})
    assert not t["complete"]
    assert t["flops_value"] is None


def test_a_tensor_given_data_holds_the_new_elements(tmp_path):
    """`t.data = u` moves t onto u's storage: t holds u's elements, (3, 1, 2, 0),
    never arange's (torch: [5, 3, 4, 5] and 3,000 FLOPs)."""
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    code = """
        class Written(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.lin = nn.Linear(d, d)

            def forward(self, x):
                perm = torch.arange(4)
                perm.data = torch.tensor([3, 1, 2, 0])
                return self.lin(x.permute(*perm))
        """
    path = write(tmp_path, "written.py", HEADER + textwrap.dedent(code))
    t = static_target(path, "Written", {"d": "5"}, {"x": "5,3,4,5"})
    lin, x = torch.nn.Linear(5, 5), torch.randn(5, 3, 4, 5)
    perm = torch.arange(4)
    perm.data = torch.tensor([3, 1, 2, 0])
    with FlopCounterMode(display=False) as counter:
        out = lin(x.permute(*perm))
    assert t["complete"] and t["flops_value"] == counter.get_total_flops()
    assert t["output"] == [str(n) for n in out.shape]


@pytest.mark.parametrize(
    "call",
    [
        're.findall(r"(ab)+c", "ababc")',  # a quantified group: backtracking not bounded
        're.findall("(", "x")',  # re refuses the pattern: Python raises re.error
        're.findall("a", "a", 2, 3)',  # findall takes no fourth argument: a TypeError
    ],
)
def test_a_regex_the_analysis_does_not_run_leaves_its_result_unknown(tmp_path, call):
    code = f"""
        import re

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, len({call}) + 1)

            def forward(self, x):
                return self.fc(x)
        """
    path = write(tmp_path, "net.py", HEADER + textwrap.dedent(code))
    t = static_target(path, "Net", {}, {"x": "2,8"})
    assert not t["complete"]
    assert t["flops_value"] is None


@pytest.mark.parametrize("how", [0, 1, 2])
def test_a_store_through_a_held_object_leaves_other_objects_of_its_value_alone(tmp_path, how):
    """Two objects of one value (two results of one memoised call, two equal
    constructions): a store through the module's attribute into one is no store
    into the other. Exact or not known, never the changed value."""
    code = """
        from dataclasses import dataclass

        @dataclass
        class Cfg:
            mode: str = "narrow"

        def make():
            return Cfg()

        class Net(nn.Module):
            def __init__(self, how: int):
                super().__init__()
                if how == 0:
                    a, b = make(), make()
                elif how == 1:
                    a, b = Cfg(), Cfg()
                else:
                    a = make()
                    b = a
                self.config = a
                self.config.mode = "wide"
                self.fc = nn.Linear(8, 16 if b.mode == "wide" else 8)

            def forward(self, x):
                return self.fc(x)
        """
    path = write(tmp_path, "net.py", HEADER + textwrap.dedent(code))
    t = static_target(path, "Net", {"how": str(how)}, {"x": "2,8"})
    truth = counted(path, f"Net({how})", {"x": torch.randn(2, 8)})
    assert truth == (512 if how == 2 else 256)
    if t["complete"]:
        assert t["flops_value"] == truth
    else:
        assert t["flops_value"] is None


_MAKERS = {
    # `__new__` decides what calling the class gives: a layer here
    "__new__": """
        class Maker:
            def __new__(cls, **kwargs):
                return nn.Linear(8, 8)
        """,
    # so does a metaclass's `__call__`
    "metaclass": """
        class Made(type):
            def __call__(cls, **kwargs):
                return nn.Linear(8, 8)

        class Maker(metaclass=Made):
            pass
        """,
}


@pytest.mark.parametrize("how", sorted(_MAKERS))
def test_a_class_whose_call_may_give_a_module_is_not_plain(tmp_path, how):
    """A plain class whose `__new__` or metaclass returns a module: what a class
    attribute holding it makes is registered by torch, a child the walk counts, so
    the figure is torch's or no complete one."""
    code = HEADER + textwrap.dedent(
        _MAKERS[how]
        + """
        import copy

        class Net(nn.Module):
            maker_class = Maker

            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.extra = self.maker_class(**copy.deepcopy({"depth": 2}))
                self.fanout = len(list(self.named_children()))

            def forward(self, x):
                for _ in range(self.fanout):
                    x = self.fc(x)
                return x
        """
    )
    path = write(tmp_path, "net.py", code)
    t = static_target(path, "Net", {}, {"x": "2,8"})
    truth = counted(path, "Net()", {"x": torch.randn(2, 8)})
    assert truth == 512  # two children: fc and the layer the call gave
    if t["complete"]:
        assert t["flops_value"] == truth
    else:
        assert t["flops_value"] is None or t["flops_value"] <= truth


def test_a_class_read_off_its_module(tmp_path, monkeypatch):
    """`from . import settings` then `settings.Lazy.on()`, `settings.Lazy._default`:
    a class of the project named through its module, its classmethods and class
    attributes read as `Lazy.on()` reads them (before: not known, both branches
    left open)."""
    pkg = tmp_path / "flagpkg"
    write(pkg, "__init__.py", "")
    write(
        pkg,
        "settings.py",
        """
        class Flag:
            _state = None

            @classmethod
            def on(cls):
                return cls._default if cls._state is None else cls._state

        class Lazy(Flag):
            _default = True
        """,
    )
    path = package_model(
        pkg,
        """
            from . import settings

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.small = nn.Linear(8, 2)
                    self.big = nn.Linear(8, 32)

                def forward(self, x):
                    if settings.Lazy.on() and settings.Lazy._default:
                        return self.big(x)
                    return self.small(x)
            """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    t = static_target(path, "Net", {}, {"x": "2,8"})
    from torch.utils.flop_counter import FlopCounterMode

    net = importlib.import_module("flagpkg.model").Net()
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        net(torch.randn(2, 8))
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fc.get_total_flops() == 2 * 2 * 8 * 32


@pytest.mark.parametrize("imported", ["from .. import base", "from ..layers import blocks as base"])
def test_a_base_class_read_off_a_module_a_relative_import_binds(tmp_path, monkeypatch, imported):
    """`from .. import base` then `class Node(base.Memory)`: the base is the class
    of that project module, as Python reads the attribute off the module object,
    so Node's forward is Memory's (before: "class Node has no method forward",
    the relative import naming no qualified name the base could be resolved by)."""
    pkg = tmp_path / "relbasepkg"  # a name of its own: sys.modules keeps what it imports
    write(pkg, "__init__.py", "")
    write(pkg / "layers", "__init__.py", "")
    write(
        pkg,
        "base.py" if imported == "from .. import base" else "layers/blocks.py",
        """
        import torch.nn as nn

        class Step:
            pass

        class Memory(nn.Module, Step):
            def __init__(self, d):
                super().__init__()
                self.proj = nn.Linear(d, 2 * d)

            def forward(self, x):
                return self.proj(x).relu()
        """,
    )
    write(pkg / "neuron", "__init__.py", "")
    write(pkg / "neuron", "node.py", f"{imported}\n\nclass Node(base.Memory):\n    pass\n")
    path = write(
        pkg / "neuron",
        "lif.py",
        """
        from . import node

        class LIF(node.Node):
            def __init__(self, d):
                super().__init__(d)
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    t = run_class(path, "LIF", {"d": 8}, {"x": (2, 8)}, False)
    from torch.utils.flop_counter import FlopCounterMode

    try:
        net = importlib.import_module("relbasepkg.neuron.lif").LIF(8)
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] == "relbasepkg"]:
            del sys.modules[name]
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        net(torch.randn(2, 8))
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fc.get_total_flops() == 2 * 2 * 8 * 16
    assert t["params_value"] == sum(p.numel() for p in net.parameters())


_NEW = {
    # `__new__` returns a layer: the call's value, its `__init__` never run
    # (params 72 where torch counts 144: the analysis held an instance of Maker)
    "returns_a_layer": (
        """
        class Maker:
            def __new__(cls, n):
                return nn.Linear(n, n)

            def __init__(self, n):
                self.n = n

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.extra = Maker(8)
                self.other = Maker(8)

            def forward(self, x):
                return self.other(self.extra(self.fc(x)))
        """,
        "exact",
    ),
    # a layer on one path, object's instance on the other, which `__init__` builds
    # (x-transformers' LoRALinear)
    "returns_a_layer_or_its_own_instance": (
        """
        class LoRA(nn.Module):
            def __new__(cls, dim_in, rank=None):
                if rank is None:
                    return nn.Linear(dim_in, dim_in, bias=False)
                return super().__new__(cls)

            def __init__(self, dim_in, rank=None):
                super().__init__()
                self.a = nn.Linear(dim_in, rank, bias=False)
                self.b = nn.Linear(rank, dim_in, bias=False)

            def forward(self, x):
                return self.b(self.a(x))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.p = LoRA(8)
                self.q = LoRA(8, rank=2)

            def forward(self, x):
                return self.q(self.p(x))
        """,
        "exact",
    ),
    # an instance changed before `__new__` returns it: not followed, not known
    "returns_its_instance_changed": (
        """
        class Maker:
            def __new__(cls, n):
                made = super().__new__(cls)
                made.layer = nn.Linear(n, n)
                return made

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.extra = Maker(8).layer

            def forward(self, x):
                return self.extra(self.fc(x))
        """,
        "honest",
    ),
    # a metaclass's `__call__` that returns what `type.__call__` built (kornia's
    # random generators, after `obj.__post_init__()`): an instance of the class
    "metaclass_call_returns_the_instance": (
        """
        class PostInit(type):
            def __call__(cls, *args, **kwargs):
                obj = type.__call__(cls, *args, **kwargs)
                obj.__post_init__()
                return obj

        class Gen(nn.Module, metaclass=PostInit):
            def __init__(self, d):
                super().__init__()
                self.lin = nn.Linear(d, d)

            def __post_init__(self):
                self.ready = True

            def forward(self, x):
                return self.lin(x)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.g = Gen(8)

            def forward(self, x):
                return self.g(x)
        """,
        "exact",
    ),
    # fastcore's PrePostInitMeta under fastai's Module: `cls.__new__(cls)`, the
    # hooks the class defines (`__pre_init__`: nn.Module's own start) and
    # `__init__` with the call's arguments: an instance built as `type.__call__`
    # builds it, with no `super().__init__()` in the subclass
    "metaclass_call_runs_pre_init_then_init": (
        """
        class PrePostInitMeta(type):
            def __call__(cls, *args, **kwargs):
                res = cls.__new__(cls)
                if type(res) == cls:
                    if hasattr(res, "__pre_init__"):
                        res.__pre_init__(*args, **kwargs)
                    res.__init__(*args, **kwargs)
                    if hasattr(res, "__post_init__"):
                        res.__post_init__(*args, **kwargs)
                return res

        class Module(nn.Module, metaclass=PrePostInitMeta):
            def __pre_init__(self, *args, **kwargs):
                super().__init__()

            def __init__(self):
                pass

        class Block(Module):
            def __init__(self, d):
                self.lin = nn.Linear(d, 2 * d)

            def forward(self, x):
                return self.lin(x)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.b = Block(8)

            def forward(self, x):
                return self.b(x)
        """,
        "exact",
    ),
    # the same metaclass with a `__post_init__` that registers a layer: a hook
    # with an effect, not run here, not known
    "metaclass_call_runs_a_post_init_hook": (
        """
        class PrePostInitMeta(type):
            def __call__(cls, *args, **kwargs):
                res = cls.__new__(cls)
                if type(res) == cls:
                    if hasattr(res, "__pre_init__"):
                        res.__pre_init__(*args, **kwargs)
                    res.__init__(*args, **kwargs)
                    if hasattr(res, "__post_init__"):
                        res.__post_init__(*args, **kwargs)
                return res

        class Module(nn.Module, metaclass=PrePostInitMeta):
            def __pre_init__(self, *args, **kwargs):
                super().__init__()

            def __post_init__(self, *args, **kwargs):
                self.extra = nn.Linear(16, 16)

        class Block(Module):
            def __init__(self, d):
                self.lin = nn.Linear(d, 2 * d)

            def forward(self, x):
                return self.extra(self.lin(x))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.b = Block(8)

            def forward(self, x):
                return self.b(x)
        """,
        "honest",
    ),
    # a metaclass's `__call__` returns a layer: not run, not known
    "metaclass_call_returns_a_layer": (
        """
        class Made(type):
            def __call__(cls, *args):
                return nn.Linear(8, 8)

        class Maker(metaclass=Made):
            def __init__(self):
                self.n = 1

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.extra = Maker()

            def forward(self, x):
                return self.extra(self.fc(x))
        """,
        "honest",
    ),
}


@pytest.mark.parametrize("how", sorted(_NEW))
def test_what_new_returns_is_the_calls_value(tmp_path, how):
    """Python's `type.__call__` calls `C.__new__(C, ...)` and runs `__init__` only on
    an instance of C: the call's value is what `__new__` returned. The parameters
    and FLOPs are torch's, or not known."""
    from tests.test_parameters import static, torch_counts

    code, expect = _NEW[how]
    path = write(tmp_path, "net.py", HEADER + textwrap.dedent(code))
    t = static(path, "Net", "--input", "x=2,8")
    truth = counted(path, "Net()", {"x": torch.randn(2, 8)})
    params = torch_counts(path, "Net()")[0]
    if expect == "exact":
        assert (t["flops_value"], t["params"]) == (truth, str(params)), t["unknown"]
    else:
        assert t["flops_value"] in (truth, None)
        assert t["params"] in (str(params), "?")
        assert not t["complete"] or t["params"] == "?"


_TARGET_NEW = """
    class LoRA(nn.Module):
        def __new__(cls, dim_in, rank=None):
            if rank is None:
                return nn.Linear(dim_in, dim_in, bias=False)
            return super().__new__(cls)

        def __init__(self, dim_in, rank=None):
            super().__init__()
            self.a = nn.Linear(dim_in, rank, bias=False)
            self.b = nn.Linear(rank, dim_in, bias=False)

        def forward(self, x):
            return self.b(self.a(x))

    class Inner(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, 2 * n)

        def forward(self, h):
            return self.fc(h).relu()

    class Delegate(nn.Module):
        def __new__(cls, n):
            return Inner(n)

    class Undecided(nn.Module):
        def __new__(cls, n):
            if torch.rand(()) > 0.5:
                return nn.Linear(n, n)
            return super().__new__(cls)

        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, n)

        def forward(self, x):
            return self.fc(x)
    """


@pytest.mark.parametrize(
    ("build", "init", "given"),
    [
        ("LoRA(8)", ["dim_in=8"], "input=2,8"),  # an nn.Linear: its forward's `input`
        ("LoRA(8, rank=2)", ["dim_in=8", "rank=2"], "x=2,8"),  # its own instance
        ("Delegate(8)", ["n=8"], "h=2,8"),  # another project class's instance
    ],
)
def test_a_target_is_what_its_classs_new_returns(tmp_path, build, init, given):
    """`cost FILE::C` where C's `__new__` returns something else (x-transformers'
    LoRALinear gives an nn.Linear when no rank is given): the target is what
    `C(...)` gives, called as that object is called; forward and backward are
    FlopCounterMode's, parameters torch's."""
    path = write(tmp_path, "net.py", HEADER + textwrap.dedent(_TARGET_NEW))
    args = [a for i in init for a in ("--init", i)]
    t = static(path, build.split("(")[0], *args, "--input", given)
    m = eval(build, vars(load(path)))  # noqa: S307 - the test's own expression
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.randn(2, 8)
    with FlopCounterMode(display=False) as fc:
        out = m(x)
    forward = fc.get_total_flops()
    with FlopCounterMode(display=False) as fc:
        out.sum().backward()
    assert t["complete"] and t["flops_value"] == forward, t["unknown"]
    assert t["backward_complete"] and t["flops_backward_value"] == fc.get_total_flops()
    assert t["params"] == str(sum(p.numel() for p in m.parameters()))
    assert t["output"] == [str(d) for d in out.shape]


def test_a_target_whose_new_may_return_its_instance_is_not_costed(tmp_path):
    path = write(tmp_path, "net.py", HEADER + textwrap.dedent(_TARGET_NEW))
    t = static(path, "Undecided", "--init", "n=8", "--input", "x=2,8")
    assert not t["complete"] and t["flops_value"] in (None, 0)
    assert [u["why"] for u in t["unknown"]] == [
        "Undecided.__new__: which object it returns is not known"
    ]


def test_an_input_the_returned_layers_forward_does_not_take_is_a_usage_error(tmp_path):
    from click.testing import CliRunner

    from shapelint.cli import main

    path = write(tmp_path, "net.py", HEADER + textwrap.dedent(_TARGET_NEW))
    r = CliRunner().invoke(
        main, ["cost", f"{path}::LoRA", "--init", "dim_in=8", "--input", "x=2,8"]
    )
    assert r.exit_code == 2
    assert (
        "is a torch.nn.Linear, whose forward takes no parameter 'x' (parameters: input)" in r.output
    )


_STATIC_ATTRIBUTES = {
    # `helper = staticmethod(f)`: through the instance and the class, f unbound
    "read_through_the_instance": (
        """
        def double(x):
            return torch.relu(x) * 2

        class Net(nn.Module):
            helper = staticmethod(double)

            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)

            def forward(self, x):
                return self.helper(self.fc(x))
        """,
        "exact",
    ),
    "read_off_the_class_of_a_base": (
        """
        def mix(x, w):
            return x @ w

        class Base(nn.Module):
            helper = staticmethod(mix)

        class Net(Base):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.randn(8, 4))

            def forward(self, x):
                h = Base.helper
                return h(x, self.w) + self.helper(x, self.w)
        """,
        "exact",
    ),
    # a plain function as a class attribute is a method: given the instance first
    # (torch raises here: mix(self, x) has no `w`), never called as if static
    "a_plain_function_is_a_method": (
        """
        def mix(x, w):
            return x @ w

        class Net(nn.Module):
            helper = mix

            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.randn(8, 4))

            def forward(self, x):
                return self.helper(x)
        """,
        "honest",
    ),
}


@pytest.mark.parametrize("how", sorted(_STATIC_ATTRIBUTES))
def test_a_staticmethod_object_in_a_class_body_is_its_function(tmp_path, how):
    """A staticmethod object's `__get__` gives its function, bound to nothing, read
    through an instance or a class: FLOPs and output torch's, or not known."""
    code, expect = _STATIC_ATTRIBUTES[how]
    path = write(tmp_path, "net.py", HEADER + textwrap.dedent(code))
    t = static(path, "Net", "--input", "x=2,8")
    if expect == "exact":
        truth = counted(path, "Net()", {"x": torch.randn(2, 8)})
        assert t["complete"] and t["flops_value"] == truth, t["unknown"]
    else:
        assert not t["complete"] and t["flops_value"] is None, t


_SHARED_CLASS_STATE = {
    # the class body's list, taken by an instance, then grown through the class:
    # one list (a complete 0 where torch counts 512)
    "class_list_taken_then_grown": """
        class Cfg:
            layers = []

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = Cfg.layers
                Cfg.layers.append(8)
                Cfg.layers.append(8)
                self.fc = nn.Linear(8, 8)

            def forward(self, x):
                for _ in self.layers:
                    x = self.fc(x)
                return x
        """,
    # a data descriptor on the class: its `__set__` and `__get__` decide what the
    # store keeps and the read gives (512 where torch counts 1,024)
    "data_descriptor": """
        class Twice:
            def __set_name__(self, owner, name):
                self.name = "_" + name

            def __get__(self, obj, objtype=None):
                return getattr(obj, self.name) * 2

            def __set__(self, obj, value):
                setattr(obj, self.name, value)

        class Net(nn.Module):
            reps = Twice()

            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.reps = 2

            def forward(self, x):
                for _ in range(self.reps):
                    x = self.fc(x)
                return x
        """,
    # a descriptor with `__get__` alone: read off the class attribute through the
    # instance, it decides what the read gives
    "non_data_descriptor": """
        class Three:
            def __get__(self, obj, objtype=None):
                return 3

        class Net(nn.Module):
            reps = Three()

            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)

            def forward(self, x):
                for _ in range(self.reps):
                    x = self.fc(x)
                return x
        """,
}


@pytest.mark.parametrize("how", sorted(_SHARED_CLASS_STATE))
def test_class_state_shared_or_run_by_python_is_never_a_wrong_figure(tmp_path, how):
    path = write(tmp_path, "net.py", HEADER + textwrap.dedent(_SHARED_CLASS_STATE[how]))
    t = static_target(path, "Net", {}, {"x": "2,8"})
    truth = counted(path, "Net()", {"x": torch.randn(2, 8)})
    if t["complete"]:
        assert t["flops_value"] == truth
    else:
        assert int(t["flops"]) <= truth


def test_a_helper_calling_itself_with_other_arguments_keeps_the_count(tmp_path):
    """The helper's call of itself with `name=n` is another run, not a recursion that
    loses the module being built: its parameters are counted (main: not known)."""
    code, cls, _, _ = CASES["a_helper_calling_itself_with_other_arguments"]
    path = write(tmp_path, "records.py", HEADER + textwrap.dedent(code))
    t = run_class(path, cls, {}, {"x": (2, 8)}, True)
    spec = importlib.util.spec_from_file_location("_records_model", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    net = mod.Net()
    assert (net.p, net.q) == (2, 1)
    assert t["params_value"] == sum(p.numel() for p in net.parameters())


def test_a_computed_setattr_into_a_plain_instance_a_classmethod_made(tmp_path, monkeypatch):
    # transformers' GenerationConfig.from_model_config, run while PreTrainedModel is
    # built: `generation_config = cls.from_dict(d)`, then `setattr(generation_config,
    # attr, v)` over names not known. The local holds an instance of a plain class
    # (no module, no dataclass, no __setattr__): the store reaches it alone, neither
    # the module being built (main: params `?`, "a change while it was built") nor
    # the attributes of the torch layers it holds (main: `getattr(child, "tied",
    # None)` not known, in the classmethod's summary too, whose cls is not known)
    pkg = tmp_path / "pkg9"
    write(pkg, "__init__.py", "")
    write(
        pkg,
        "gen.py",
        """
        import json

        class Gen:
            def __init__(self, **kwargs):
                self.top_k = kwargs.pop("top_k", 50)
                self.extra = kwargs

            @classmethod
            def from_dict(cls, config_dict, **kwargs) -> "Gen":
                config = cls(**config_dict)
                for key, value in kwargs.items():
                    setattr(config, key, value)
                return config

            @classmethod
            def from_names(cls, names) -> "Gen":
                gen = cls.from_dict(json.loads("{}"), beams=2)
                for name in names.split(","):
                    setattr(gen, name, json.loads("[1]"))
                return gen
        """,
    )
    path = package_model(
        pkg,
        """
            from pkg9.gen import Gen

            class Net(nn.Module):
                def __init__(self, d, names):
                    super().__init__()
                    self.a = nn.Linear(d, 2 * d)
                    self.b = nn.Linear(2 * d, d)
                    self.gen = Gen.from_names(names)
                    for child in self.children():
                        if getattr(child, "tied", None):
                            self.c = nn.Linear(d, d)

                def forward(self, x):
                    return self.b(torch.relu(self.a(x)))
            """,
    )
    assert_package_exact(tmp_path, monkeypatch, path, {"d": 4, "names": "top_k,beams"})


def assert_package_exact(tmp_path, monkeypatch, path, init: dict) -> None:
    """The package model's Net on x of (2, 4): FLOPs and parameters complete and
    equal to torch's, the package imported from tmp_path."""
    t = run_class(path, "Net", init, {"x": (2, 4)}, False)
    monkeypatch.syspath_prepend(str(tmp_path))
    from torch.utils.flop_counter import FlopCounterMode

    net = importlib.import_module(f"{path.parent.name}.model").Net(**init)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        net(torch.randn(2, 4))
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == fc.get_total_flops()
    assert t["params_value"] == sum(p.numel() for p in net.parameters()), t["params_unknown"]


def test_a_setattr_into_the_file_s_own_module_reaches_no_object(tmp_path, monkeypatch):
    # PIL.Image's top level, read through transformers' image utilities:
    # `module = sys.modules[__name__]`, then `setattr(module, item.name, item.value)`
    # over its enums' members. That object is the file's own module: the store binds
    # a global of the file, no attribute of any module or tensor (main: every
    # attribute possible from then on, so that `hasattr(self, "scale")` was not
    # known and the forward not either: the file is first read inside the run, as
    # PIL.Image is). A constant name binds that global, which an import then gives.
    pkg = tmp_path / "pkg10"
    write(pkg, "__init__.py", "")
    write(
        pkg,
        "consts.py",
        """
        import enum
        import sys

        class Mode(enum.IntEnum):
            NEAREST = 0
            BILINEAR = 2

        module = sys.modules[__name__]
        for item in Mode:
            setattr(module, item.name, item.value)
        setattr(sys.modules[__name__], "WIDTH", 6)
        """,
    )
    path = package_model(
        pkg,
        """
            class Net(nn.Module):
                def __init__(self, d):
                    super().__init__()
                    from pkg10.consts import WIDTH

                    self.a = nn.Linear(d, WIDTH)
                    self.b = nn.Linear(d, d)

                def forward(self, x):
                    if hasattr(self, "scale"):
                        x = self.b(x)
                    return self.a(x)
            """,
    )
    assert_package_exact(tmp_path, monkeypatch, path, {"d": 4})


TIED = """
class Base(nn.Module):
    def post_init(self):
        self.tie()

    def tie(self):
        for target, source in self.tied.items():
            if "." in target:
                parent_name, name = target.rsplit(".", 1)
                parent = self.get_submodule(parent_name)
            else:
                name = target
                parent = self
            setattr(parent, name, self.get_parameter(source))


class Net(Base):
    def __init__(self, d, tied):
        super().__init__()
        self.tied = dict(tied)
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)
        self.post_init()

    def scaled(self, x):
        if hasattr(self, "scale"):
            x = self.b(x)
        return x

    def forward(self, x):
        return self.a(self.scaled(x))
"""


@pytest.mark.parametrize("tied", ["{}", "{'a.scale': 'b.weight'}", "{'scale': 'a.weight'}"])
def test_a_summary_s_computed_setattr_is_no_write_of_the_run(tmp_path, tied):
    # transformers' PreTrainedModel: a method the forward calls is summarised, and its
    # summary runs the constructor with nothing known (the class's attributes), where
    # tie_weights' `setattr(parent, name, p)` runs over a dict not known. That pass is
    # no call Python makes (absence.Undone): main kept the write for the whole run, so
    # that `hasattr(self, "scale")` was not known whatever the run's own tie stored.
    # Where the run's own tie stores (`scale` on self or on a child), never a wrong figure.
    path = write(tmp_path, "tied.py", HEADER + TIED)
    t = static_target(path, "Net", {"d": "4", "tied": tied}, {"x": "2,4"})
    truth = counted(path, f"Net(d=4, tied={tied})", {"x": torch.randn(2, 4)})
    if tied == "{}":
        assert t["complete"], t["unknown"]
    if t["complete"]:
        assert t["flops_value"] == truth
    else:
        assert int(t["flops"]) <= truth


def test_a_built_module_whose_class_decorator_is_another_file_s(tmp_path, monkeypatch):
    # transformers' `@use_kernel_forward_from_hub("RMSNorm") class LlamaRMSNorm`, the
    # decorator another file's (through a package's re-export), and post_init's
    # `getattr(module, "all_tied_weights_keys", None)` over the children: the instance
    # was built by the run, so what it lacks is judged as for a decorator of its own
    # file, by reading the decorator's (main: not read, the getattr not known, both
    # paths taken: the count a lower bound and the params not known)
    pkg = tmp_path / "pkg11"
    write(pkg, "__init__.py", "from pkg11.hub import use_hub\n")
    write(
        pkg,
        "hub.py",
        """
        import importlib.util

        if importlib.util.find_spec("no_such_kernels_pkg") is not None:
            def use_hub(name):
                raise RuntimeError(name)
        else:
            def use_hub(*args, **kwargs):
                def decorator(cls):
                    return cls

                return decorator
        """,
    )
    path = package_model(
        pkg,
        """
            from pkg11 import use_hub

            @use_hub("Norm")
            class Norm(nn.Module):
                def __init__(self, d):
                    super().__init__()
                    self.weight = nn.Parameter(torch.ones(d))

                def forward(self, x):
                    return x * self.weight

            class Net(nn.Module):
                def __init__(self, d):
                    super().__init__()
                    self.norm = Norm(d)
                    self.a = nn.Linear(d, d)
                    self.tied = {}
                    for name, module in self.named_children():
                        if tied := getattr(module, "tied", None):
                            self.tied.update(tied)
                            self.b = nn.Linear(d, 4 * d)

                def forward(self, x):
                    x = self.a(self.norm(x))
                    if self.tied:
                        x = self.b(x)
                    return x
            """,
    )
    assert_package_exact(tmp_path, monkeypatch, path, {"d": 4})


NAMED_CONFIG = """
    import os
    from dataclasses import dataclass

    import torch.nn as nn

    @dataclass
    class Config:
        '''A config; a `decoder` config may be nested in it.'''

        dim: int = 8

        def text_config(self, decoder=None):
            names = ("decoder", "generator")
            found = []
            for name in names:
                if hasattr(self, name):
                    found.append(name)
            return getattr(self, found[0]) if found else self

        def __eq__(self, other):
            return self.__dict__ == other.__dict__

        def mark(self, name):
            SETTER

    class Net(nn.Module):
        def __init__(self, config):
            super().__init__()
            MARK
            cfg = config.text_config(decoder=True)
            self.proj = nn.Linear(cfg.dim, cfg.dim)
            self.extra = nn.Linear(cfg.dim, cfg.dim) if hasattr(config, "decoder") else None

        def forward(self, x):
            y = self.proj(x)
            if self.extra is not None:
                y = self.extra(y)
            return y
"""


def _config_net(tmp_path, code: str):
    """Net(Config(dim=8)) of code on x of (2, 8): the target's figures and torch's count."""
    path = write(tmp_path, "net.py", code)
    t = static_target(path, "Net", {"config": "Config(dim=8)"}, {"x": "2,8"})
    return t, counted(path, "Net(Config(dim=8))", {"x": torch.randn(2, 8)})


def test_a_config_the_run_built_lacks_what_only_its_methods_strings_name(tmp_path):
    """A config the run built, whose methods it runs where they are called: a
    string in a method given the instance (the names `text_config` looks for), its
    parameter `decoder`, its docstring and a read of its `__dict__` store nothing on
    it, so `hasattr(self, "decoder")` is False as in Python, and the method returns
    the config itself: exact. (Judged by its text alone, the names are mentioned.)"""
    t, truth = _config_net(tmp_path, NAMED_CONFIG.replace("SETTER", "pass").replace("MARK", ""))
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth


def test_a_store_through_another_object_in_a_method_never_run_names_nothing(tmp_path):
    """`other.decoder = v` in a method of the config's class that the run never
    called (transformers' `text_config.layer_types = ...` in `get_mtp_config`):
    it stores nothing on the config the run built (where it runs, the run makes
    the store on what the local `other` holds then, as a module-level function's),
    so `hasattr(config, "decoder")` is False as in Python: exact. (A store through a
    class or a global stays a mention: a method run at import may make it.)"""
    setter = "other = Config(dim=2); other.decoder = other"
    t, truth = _config_net(tmp_path, NAMED_CONFIG.replace("SETTER", setter).replace("MARK", ""))
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth


@pytest.mark.parametrize(
    "setter, mark",
    [
        ("setattr(self, name, self)", 'config.mark("decoder")'),
        ("setattr(self, name, self)", 'config.mark(os.environ.get("NAME", "decoder"))'),
        ("c = self; setattr(c, name, self)", 'config.mark(os.environ.get("NAME", "decoder"))'),
        ("object.__setattr__(self, name, self)", 'config.mark("decoder")'),
        ("self.__dict__[name] = self", 'config.mark("decoder")'),
        # through another name for the instance, in a method the run runs
        ("c = self; c.decoder = self", 'config.mark("decoder")'),
        ("c = [self]; c[0].decoder = self", 'config.mark("decoder")'),
    ],
)
def test_a_config_method_that_stores_a_name_keeps_it_possible(tmp_path, setter, mark):
    """The same config, a method of which stores `decoder` on it: by a known name
    (the run applies or marks it), a name not known (any name may be set), or a way
    the run does not follow (`object.__setattr__`, its `__dict__`), which its
    class's text then keeps a mention of. Python builds the extra layer; the
    figure is never the one without it."""
    t, truth = _config_net(tmp_path, NAMED_CONFIG.replace("SETTER", setter).replace("MARK", mark))
    if t["complete"]:
        assert t["flops_value"] == truth
    else:
        assert t["flops_value"] is None or t["flops_value"] <= truth


@pytest.mark.parametrize(
    "method, closed",
    [
        # stores only what its text names, runs only itself again: its words
        ("def walk(self, d):\n    d.pop('a', None)\n    self.seen = 1\n    self.walk(d)\n", True),
        # a computed name, another method, the instance handed on, a read (a getter)
        ("def put(self, k):\n    setattr(self, k, 1)\n", False),
        ("def put(self, d):\n    self.update(d)\n", False),
        ("def put(self, d):\n    helper(self, d)\n", False),
        ("def put(self):\n    return self.flag\n", False),
    ],
)
def test_a_config_method_the_run_did_not_run(method, closed):
    """A config's method called on it and not run (a recursion the run does not
    follow): where it can store only names its text holds, those names may have
    been written from then on; otherwise its class is judged by its text again."""
    import ast

    from shapelint.analysis import absence
    from shapelint.ops.values import ObjectV

    absence.reset()
    fn = ast.parse(method).body[0]
    absence.method_not_run(ObjectV(absence.CONFIG_PREFIX + "m:Cfg", ()), fn)
    if closed:
        assert absence.may_be_written("seen") and not absence.may_be_written("other")
        assert not absence.judged_by_text("m:Cfg")
    else:
        assert absence.judged_by_text("m:Cfg")
    absence.reset()


BEING_BUILT = """
    import os
    from dataclasses import dataclass

    import torch.nn as nn

    class Lookup:
        def __getattribute__(self, key):
            return super().__getattribute__(key)

    class Rotary:
        default_theta = 10.0

        def convert(self):
            theta = getattr(self, "theta", self.default_theta)
            factor = getattr(self, "factor", None)
            self.width = self.dim if factor is None else int(self.dim * factor)
            self.theta = theta
            self.factor = factor

        @staticmethod
        def check(keys):
            if "factor" not in keys:
                keys.add("factor")
            return keys

    class Base(Rotary, Lookup):
        def __getattribute__(self, key):
            return super().__getattribute__(key)

        SUBCLASS

    @dataclass
    class Config(Base):
        dim: int = 8

        def __post_init__(self):
            BEFORE
            self.convert()

    class Net(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.proj = nn.Linear(config.dim, config.width)

        def forward(self, x):
            return self.proj(x)
"""


def test_a_config_being_built_lacks_what_no_store_so_far_gave_it(tmp_path):
    """`getattr(self, "theta", default)` in a method `__post_init__` calls, on the
    config being built, before any store of `theta`: what the instance holds is what
    its fields and the stores run so far gave it, and its classes bind neither
    `theta` nor `factor` (a string of a static method only an instance's method may
    call binds nothing; a store the rest of the construction makes has not happened
    yet). Its class's `__getattribute__` hands the lookup through a base's, whose
    plain lookup raises AttributeError: so the defaults are taken, as in Python,
    and the layer's width is the config's dim: exact (main: not known)."""
    t, truth = _config_net(
        tmp_path, BEING_BUILT.replace("SUBCLASS", "pass").replace("BEFORE", "pass")
    )
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == truth


@pytest.mark.parametrize(
    "subclass, before",
    [
        # a store the construction made before the read: it holds it
        ("pass", "self.factor = 0.5"),
        # by a name not known, or through its `__dict__`: any name may be there
        ("pass", 'setattr(self, os.environ.get("NAME", "factor"), 0.5)'),
        ("pass", 'self.__dict__[os.environ.get("NAME", "factor")] = 0.5'),
        ("pass", 'object.__setattr__(self, "factor", 0.5)'),
        ("pass", 'self.__dict__.update({os.environ.get("NAME", "factor"): 0.5})'),
        ("pass", 'vars(self)[os.environ.get("NAME", "factor")] = 0.5'),
        # the static method run where the class is made, storing the name on it
        (
            "def __init_subclass__(cls, **kw):\n"
            "            super().__init_subclass__(**kw)\n"
            "            for name in cls.check(set()):\n"
            "                setattr(cls, name, 0.5)",
            "pass",
        ),
    ],
)
def test_a_config_being_built_keeps_what_may_be_there(tmp_path, subclass, before):
    """The same config where `factor` is there when it is read: stored earlier in
    its construction (found), or set on the class by code run where the class is
    made, through the static method's string (named by class-level code: its
    strings may bind). Python's width is half the dim; the figure is never the
    full one."""
    t, truth = _config_net(
        tmp_path, BEING_BUILT.replace("SUBCLASS", subclass).replace("BEFORE", before)
    )
    if t["complete"]:
        assert t["flops_value"] == truth
    else:
        assert t["flops_value"] is None or t["flops_value"] <= truth


def test_a_file_first_read_inside_a_run_reaches_none_of_its_frames(tmp_path, monkeypatch):
    # GPT2Config's `__post_init__(self, **kwargs)`: `hasattr(self, "rope_parameters")`
    # on the config being built reads its class decorator's file, through a package's
    # re-export, for the first time there; that file's top level fills an empty dict
    # in place (`fill(REG)`). Python ran that top level at import, before the
    # construction's frames existed: it reaches none of them, so the caller's empty
    # `kwargs` is no object it changed (main after the being-built rule: every `{}` of
    # every live frame forgotten, kwargs not known, the width not known)
    pkg = tmp_path / "pkg12"
    write(pkg, "__init__.py", "from pkg12.hub import keep\n")
    write(
        pkg,
        "hub.py",
        """
        def fill(d):
            d["seen"] = 1

        REG = {}
        fill(REG)

        def keep(cls):
            return cls
        """,
    )
    path = package_model(
        pkg,
        """
            from dataclasses import dataclass

            from pkg12 import keep

            @keep
            @dataclass
            class Config:
                dim: int = 4

                def __post_init__(self, **kwargs):
                    if hasattr(self, "rotary"):
                        kwargs = dict(kwargs, width=2)
                    self.width = kwargs.get("width", self.dim)

            class Net(nn.Module):
                def __init__(self, d):
                    super().__init__()
                    config = Config(dim=d)
                    self.a = nn.Linear(d, config.width)

                def forward(self, x):
                    return self.a(x)
            """,
    )
    assert_package_exact(tmp_path, monkeypatch, path, {"d": 4})


COPIES = """
    import copy

    class Net(nn.Module):
        def __init__(self, dim):
            super().__init__()
            d = {"a": 1}
            shallow = copy.copy(d)
            shallow["b"] = 2
            shallow.setdefault("c", 3)
            deep = copy.deepcopy(d)
            deep["b"] = 2
            xs = [1]
            ys = copy.copy(xs)
            ys.append(2)
            spec = {"xs": [1, 2]}
            other = copy.deepcopy(spec)
            oxs = other["xs"]
            oxs.append(3)
            self.a = nn.Linear(len(d) * dim, dim)
            self.b = nn.Linear(len(shallow) * dim, dim)
            self.c = nn.Linear(len(deep) * dim, dim)
            self.d = nn.Linear(len(xs) * dim, dim)
            self.e = nn.Linear(len(spec["xs"]) * dim, dim)

        def forward(self, x):
            y = self.a(x)
            y = self.b(torch.cat([y] * 3, -1))
            y = self.c(torch.cat([y] * 2, -1))
            y = self.d(y)
            return self.e(torch.cat([y] * 2, -1))
"""


def test_a_copy_is_another_object(tmp_path):
    """`copy.copy(d)` / `copy.deepcopy(d)` of a dict or a list is a new object: a
    change through the copy leaves the original as it was, known (it was forgotten,
    as if the two were one object); deepcopy's memo keeps one copy of a list two
    entries hold (`other["ys"]` is `other["xs"]`, changed through either)."""
    assert_exact(tmp_path, "copies", (COPIES, "Net", dict(dim=4), dict(x=(2, 4))))
    path = tmp_path / "copies.py"
    t = static(path, "Net", "--init", "dim=4", "--input", "x=2,4")
    # each Linear's in_features is a dict's or a list's length: the parameters say it
    assert figures(t) == torch_counts(path, "Net(dim=4)")


def test_a_shallow_copy_shares_what_it_holds(tmp_path):
    """The list a shallow copy holds is the original's, and the one list two entries
    hold is one list in a deep copy too (deepcopy's memo): a change to it through
    one holder reaches the other, whose figure is never the one from before."""
    code = """
        import copy

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                spec = {"xs": [1]}
                c = copy.copy(spec)
                cxs = c["xs"]
                cxs.append(2)
                shared = [1]
                deep = copy.deepcopy({"xs": shared, "ys": shared})
                dxs = deep["xs"]
                dxs.append(2)
                self.a = nn.Linear(len(spec["xs"]) * dim, dim)
                self.b = nn.Linear(len(deep["ys"]) * dim, dim)

            def forward(self, x):
                return self.b(torch.cat([self.a(torch.cat([x, x], -1))] * 2, -1))
    """
    path = write(tmp_path, "shallow.py", HEADER + textwrap.dedent(code))
    t = static(path, "Net", "--init", "dim=4", "--input", "x=2,4")
    truth = counted(path, "Net(dim=4)", {"x": torch.randn(2, 4)})
    assert not t["complete"] or t["flops_value"] == truth
    rows = {r["name"]: r["params"] for r in t["modules"]["modules"]}
    # both take two lists' items of 4: Linear(8, 4)
    assert rows["a"] in ("?", str(8 * 4 + 4)) and rows["b"] in ("?", str(8 * 4 + 4)), rows


SAME_DICT = """
    import dataclasses


    class RopeMixin:
        default_theta = 10_000.0

        def nested_keys(self, params):
            labels = getattr(self, "layer_types", None) or ()
            return [key for key in params if key in labels]

        def convert(self, **kwargs):
            self.rope = kwargs.pop("rope_scaling", None) or self.rope
            self.rope = self.rope if self.rope is not None else {}
            theta = kwargs.pop("rope_theta", self.default_theta)
            nested = [self.rope[key] for key in self.nested_keys(self.rope)] or [self.rope]
            for params in nested:
                if params is None:
                    continue
                params.setdefault("rope_theta", theta)
            self.standardize()

        def standardize(self):
            params = getattr(self, "rope", None) or {}
            if not self.nested_keys(params):
                params.setdefault("rope_type", params.get("type", "default"))
                params["factor"] = 2
            self.rope = params


    @dataclasses.dataclass
    class Cfg(RopeMixin):
        rope: dict | None = None
        dim: int = 4

        def __post_init__(self):
            self.convert()


    class Net(nn.Module):
        def __init__(self, dim):
            super().__init__()
            cfg = Cfg(dim=dim)
            extra = cfg.rope
            extra["more"] = 1
            extra.pop("factor")
            extra.update(last=3)
            self.a = nn.Linear(len(cfg.rope) * dim, dim)
            self.b = nn.Linear(len(cfg.rope["rope_type"]) * dim, dim)

        def forward(self, x):
            y = self.a(torch.cat([x] * 4, -1))
            return self.b(torch.cat([y] * 7, -1))
"""


def test_a_dict_changed_through_another_name_is_changed_for_every_holder(tmp_path):
    """A dict changed in place through a local name or a loop variable over a list
    that holds it is the one object every holder in the frame and every module
    being built sees changed (transformers' `convert_rope_params_to_dict`:
    `setdefault` on the loop variable over `[self.rope_parameters]`, then on a
    local of a `getattr(...) or {}`): the sizes read off it after are known and
    Python's, through the config's methods and back to the caller."""
    key = "same_dict"
    assert_exact(tmp_path, key, (SAME_DICT, "Net", dict(dim=4), dict(x=(2, 4))))
    path = tmp_path / f"{key}.py"
    t = static(path, "Net", "--init", "dim=4", "--input", "x=2,4")
    assert figures(t) == torch_counts(path, "Net(dim=4)")


def test_each_evaluation_makes_another_dict(tmp_path):
    """A dict changed through one name changes no other dict that is merely equal
    to it: one per turn of a comprehension or a loop, one per call of a function
    or a class that makes it, and the counted turns of a loop over a dict it
    changes each turn (`r["n"] = r["n"] + 1`, never applied twice)."""
    code = """
        def make(n):
            return {"n": n}

        class Holder:
            def __init__(self):
                self.d = {}

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                ds = [{} for _ in range(3)]
                first = ds[0]
                first["k"] = 1
                made = [make(1), make(1)]
                one = made[1]
                one.setdefault("z", 2)
                h1, h2 = Holder(), Holder()
                held = h1.d
                held["y"] = 1
                grown = []
                for _ in range(3):
                    grown.append({})
                last = grown[2]
                last["q"] = 1
                self.a = nn.Linear((len(ds[1]) + len(made[0]) + len(h2.d)) * dim + dim, dim)
                self.b = nn.Linear((len(ds[0]) + len(made[1]) + len(h1.d)) * dim, dim)
                self.c = nn.Linear((len(grown[1]) + len(grown[2])) * dim, dim)

            def forward(self, x):
                count = {"n": 1}
                for _ in range(x.shape[0]):
                    r = count
                    r["n"] = r["n"] + 1
                y = self.a(torch.cat([x] * 2, -1))
                y = self.b(torch.cat([y] * 4, -1))
                return self.c(y), x.new_zeros(count["n"], 2)
    """
    path = write(tmp_path, "apart.py", HEADER + textwrap.dedent(code))
    t = static(path, "Net", "--init", "dim=4", "--input", "x=2,4")
    assert figures(t) == torch_counts(path, "Net(dim=4)")
    truth = counted(path, "Net(dim=4)", {"x": torch.randn(2, 4)})
    assert t["complete"] and t["flops_value"] == truth


def test_a_dict_changed_through_a_join_of_two_is_known_in_neither(tmp_path):
    """`c = a if data else b` of two equal dicts: the join keeps one value for both
    paths, and the change through c is made to a on one path, to b on the other:
    neither length is known after it, never the one path's."""
    code = """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.l = nn.Linear(dim, dim)

            def forward(self, x):
                a = {}
                b = {}
                if x.sum() > 0:
                    c = a
                else:
                    c = b
                c["k"] = 1
                return x.new_zeros(len(a) + 1, len(b) + 2) + self.l(x).sum()
    """
    path = write(tmp_path, "joined.py", HEADER + textwrap.dedent(code))
    t = static(path, "Net", "--init", "dim=4", "--input", "x=2,4")
    assert t["complete"]  # the Linear's FLOPs
    assert t["output"] == [None, None] and not t["bytes_complete"], (t["output"], t["bytes"])


def test_a_computed_setattr_on_one_of_several_modules_loses_their_methods_alone(tmp_path):
    """`setattr(self.body, name, v)` with a name not known, body one of two project
    modules an undecided test chose: each one's methods may be replaced, so calling
    body is unknown, named; the head, another class of the file, runs as read."""
    code = HEADER + textwrap.dedent(
        """
        import os

        class A(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.lin = nn.Linear(d, d)

            def forward(self, x):
                return self.lin(x)

        class B(A):
            pass

        class Head(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.proj = nn.Linear(d, 2)

            def forward(self, x):
                return self.proj(x)

        class Net(nn.Module):
            def __init__(self, d=8):
                super().__init__()
                self.body = A(d) if os.environ.get("PICK") else B(d)
                self.head = Head(d)

            def tag(self):
                setattr(self.body, os.environ.get("TAG", "note"), 1)

            def forward(self, x):
                self.tag()
                return self.head(self.body(x))
        """
    )
    path = write(tmp_path, "net.py", code)
    t = static_target(path, "Net", {}, {"x": "2,8"})
    assert not t["complete"]
    whys = [u["why"] for u in t["unknown"]]
    assert any(w.startswith("A.forward: setattr of a computed name") for w in whys), whys
    assert not any(w.startswith("Head.forward") for w in whys), whys
