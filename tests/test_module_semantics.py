"""nn.Module's own semantics in target runs (issue 24): iterating a container
subclass's instance (`for mod in self`, as Sequential.__iter__ walks its layers),
`Module.apply(fn)` with an init that changes weights' values only (a partial of a
method, or a module-level function no run calls), and `isinstance` of a plain
value against a torch.nn class. Each exact case is judged by FlopCounterMode on
the same module and inputs; the bound cases by what torch runs."""

from __future__ import annotations

import textwrap

import pytest

from tests.test_modules import counted
from tests.test_object_model import assert_exact, static_target, write
from tests.test_parameters import static

torch = pytest.importorskip("torch")

HEADER = textwrap.dedent(
    """
    from functools import partial

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    """
)

CASES = {
    # diffsptk's _call_forward: the state is handed on by name from the module's
    # registries (`self._buffers`, `self._parameters`) and `tuple(a_dict)`'s keys
    "registries_read_as_dicts": (
        """
        class Net(nn.Module):
            def __init__(self, d, k):
                super().__init__()
                values = {"k": k, "cut": None}  # None: a plain attribute, no buffer
                self._value_names = tuple(values)
                for name, value in values.items():
                    setattr(self, name, value)
                for name, t in {"basis": torch.randn(d, d)}.items():
                    self.register_buffer(name, t, persistent=False)
                self.scale = nn.Parameter(torch.randn(d, k))

            def forward(self, x):
                named = {name: getattr(self, name) for name in self._value_names}
                named.update(self._buffers)
                named.update(self._parameters)
                return self._forward(x, **named)

            @staticmethod
            def _forward(x, *, k, cut, basis, scale):
                return (x @ basis)[:, :cut] @ scale[:, :k]
        """,
        "Net",
        dict(d=8, k=4),
        dict(x=(2, 8)),
    ),
    # diffsptk's Precomputed: a typing.NamedTuple class (annotated fields, defaults on
    # the last ones) built by keyword, its fields read by name and iterated
    "typing_namedtuple_class": (
        """
        from typing import Any, NamedTuple

        class Pre(NamedTuple):
            \"\"\"Sizes.\"\"\"

            width: int
            values: dict[str, Any] = {}
            depth: int = 2

        class Net(nn.Module):
            def __init__(self, d):
                super().__init__()
                pre = Pre(d * 2, values={"k": d})
                self.fc = nn.Linear(d, pre.width)
                for name, value in pre.values.items():
                    setattr(self, name, value)
                self.out = nn.Linear(pre.width, self.k * pre.depth)

            def forward(self, x):
                return self.out(self.fc(x))
        """,
        "Net",
        dict(d=8),
        dict(x=(2, 8)),
    ),
    # diffsptk's `self._precompute(**filter_values(locals()))`: locals() of a
    # constructor at its top is its parameters and the `__class__` cell super() needs
    "locals_of_a_constructor": (
        """
        def drop(dictionary):
            for key in ("self", "__class__"):
                if key in dictionary:
                    dictionary.pop(key)
            return dictionary

        class Net(nn.Module):
            def __init__(self, d, hidden=16):
                super().__init__()
                sizes = self._sizes(**drop(locals()))
                self.fc = nn.Linear(d, sizes["h"])

            @staticmethod
            def _sizes(d, hidden):
                return {"h": hidden * 2}

            def forward(self, x):
                return self.fc(x)
        """,
        "Net",
        dict(d=8),
        dict(x=(2, 8)),
    ),
    # torchvision's ASPPPooling: a Sequential subclass's forward walks itself
    "for_mod_in_self": (
        """
        class Pool(nn.Sequential):
            def __init__(self, cin, cout):
                super().__init__(nn.Linear(cin, cout), nn.ReLU(), nn.Linear(cout, cout))

            def forward(self, x):
                for mod in self:
                    x = mod(x)
                return x * 2
        """,
        "Pool",
        dict(cin=8, cout=16),
        dict(x=(2, 8)),
    ),
    # timm's SequentialAppendList: enumerate(self), each output kept
    "enumerate_self_appending": (
        """
        class AppendList(nn.Sequential):
            def __init__(self, *args):
                super().__init__(*args)

            def forward(self, x, outs):
                for i, module in enumerate(self):
                    if i == 0:
                        outs.append(module(x))
                    else:
                        outs.append(module(outs[-1]))
                return torch.cat(outs, dim=1)

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.mid = AppendList(nn.Linear(dim, dim), nn.Linear(dim, dim))
                self.out = nn.Linear(3 * dim, dim)

            def forward(self, x):
                return self.out(self.mid(x, [x]))
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # reversed(self) and len(self) on a ModuleList subclass
    "reversed_and_len_of_self": (
        """
        class Stack(nn.ModuleList):
            def __init__(self, dim):
                super().__init__([nn.Linear(dim, 2 * dim), nn.Linear(2 * dim, dim)])

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.stack = Stack(dim)

            def forward(self, x):
                for layer in reversed(self.stack):
                    x = layer(x)
                return x * len(self.stack)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 16)),
    ),
    # timm's EfficientViM: self.apply(partial(self._init_weights, ...)) in __init__
    "apply_partial_of_an_init_method": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, 2 * dim)
                self.norm = nn.LayerNorm(2 * dim)
                self.apply(partial(self._init_weights, needs_reset=False))

            def _init_weights(self, m, needs_reset=True):
                if isinstance(m, nn.Linear):
                    nn.init.trunc_normal_(m.weight, std=0.02)
                    if m.bias is not None:
                        nn.init.zeros_(m.bias)
                elif needs_reset and hasattr(m, "reset_parameters"):
                    m.reset_parameters()

            def forward(self, x):
                return self.norm(self.fc(x))
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # open_clip: a module-level helper applies a dtype conversion; no run calls it
    "apply_in_a_function_the_run_never_calls": (
        """
        def convert_weights(model, dtype=torch.float16):
            def _convert(l):
                if isinstance(l, nn.Linear):
                    l.weight.data = l.weight.data.to(dtype)
            model.apply(_convert)

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)

            def forward(self, x):
                return self.fc(x)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # timm's get_attn: `isinstance(name, torch.nn.Module)` of a string is False
    "isinstance_of_a_string_against_nn_module": (
        """
        def make(kind, dim):
            if isinstance(kind, torch.nn.Module):
                return kind
            if kind == "wide":
                return nn.Linear(dim, 2 * dim)
            return nn.Linear(dim, dim)

        class Net(nn.Module):
            def __init__(self, dim, kind="wide"):
                super().__init__()
                self.fc = make(kind, dim)

            def forward(self, x):
                return self.fc(x)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # diffusers' is_torch_version: a function under @cache returns its body's value
    "cache_decorated_flag": (
        """
        import functools

        @functools.cache
        def wide(n):
            return n > 4

        @functools.lru_cache(maxsize=None)
        def width(n):
            return 2 * n if wide(n) else n

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, width(dim))

            def forward(self, x):
                if wide(x.shape[-1]):
                    x = torch.cat([x, x], dim=-1)
                return self.fc(x[..., : self.fc.in_features])
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # torchvision's GoogLeNet: a run is eager, never TorchScript nor a trace
    "eager_mode_predicates": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.eager = nn.Linear(dim, dim)
                self.scripted = nn.Linear(dim, 4 * dim)

            def forward(self, x):
                if torch.jit.is_scripting() or torch.jit.is_tracing():
                    return self.scripted(x)
                if torch.compiler.is_compiling():
                    return self.scripted(x)
                if torch.compiler.is_exporting():
                    return self.scripted(x)
                return self.eager(x)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # asteroid's script_if_tracing: a wrapper that calls the function as it is unless
    # torch._C._is_tracing() (what torch.jit.is_tracing asks), False in an eager run
    "tracing_state_read_directly": (
        """
        import functools

        def script_if_tracing(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                if not torch._C._is_tracing():
                    return fn(*args, **kwargs)
                compiled_fn = torch.jit.script(wrapper.__original_fn)
                return compiled_fn(*args, **kwargs)

            wrapper.__original_fn = fn
            return wrapper

        @script_if_tracing
        def flat(x):
            return x.reshape(x.shape[0], -1)

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(4 * dim, dim)

            def forward(self, x):
                return self.fc(flat(x))
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 4, 8)),
    ),
    # iTransformer's forwards: run-time type checkers wrap the function and call it
    # once, the arguments checked against the annotations
    "type_checking_decorators": (
        """
        from beartype import beartype
        from jaxtyping import Float, jaxtyped

        @jaxtyped(typechecker=beartype)
        def scaled(x: Float[torch.Tensor, "b d"], k: float) -> Float[torch.Tensor, "b d"]:
            return x * k

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, 2 * dim)

            @beartype
            def forward(self, x: torch.Tensor):
                return self.fc(scaled(x, 2.0))
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # tabpfn's attention layers: `typing_extensions.override` marks the method and
    # returns it (the backport of `typing.override`)
    "override_marker": (
        """
        from typing_extensions import final, override

        class Base(nn.Module):
            def forward(self, x):
                raise NotImplementedError

        class Net(Base):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, 2 * dim)

            @override
            def forward(self, x):
                return self.head(self.fc(x))

            @final
            def head(self, x):
                return x @ x.transpose(0, 1)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # litgpt's blocks: a property of a dataclass config (the class of a norm layer,
    # by name off torch.nn) called with the layer's width
    "dataclass_config_property": (
        """
        from dataclasses import dataclass

        @dataclass
        class Config:
            n_embd: int = 8
            norm_class_name: str = "LayerNorm"

            @property
            def norm_class(self) -> type:
                return getattr(torch.nn, self.norm_class_name)

        class Net(nn.Module):
            def __init__(self, config: Config):
                super().__init__()
                self.norm_1 = config.norm_class(config.n_embd)
                self.fc = nn.Linear(config.n_embd, 2 * config.n_embd)

            def forward(self, x):
                return self.fc(self.norm_1(x))
        """,
        "Net",
        dict(config="Config()"),
        dict(x=(2, 8)),
    ),
    # vit-pytorch's vit_5: nn.ParameterList grown beside a ModuleList, zipped in forward
    "parameter_list_zipped_with_layers": (
        """
        class Net(nn.Module):
            def __init__(self, dim, depth=3):
                super().__init__()
                self.layers = nn.ModuleList([])
                self.ls = nn.ParameterList([])
                for _ in range(depth):
                    self.layers.append(nn.Linear(dim, dim))
                    self.ls.append(nn.Parameter(torch.ones(dim) * 1e-4))

            def forward(self, x):
                for layer, ls in zip(self.layers, self.ls):
                    x = layer(x) * ls + x
                return x
        """,
        "Net",
        dict(dim=8, depth=3),
        dict(x=(2, 8)),
    ),
    # vit-pytorch's CrossEmbedLayer: sorted(...) sizes, a comprehension over
    # range(1, n) (its index starts at 1), map over the convolutions
    "sorted_sizes_and_a_range_from_one": (
        """
        class Net(nn.Module):
            def __init__(self, dim_in, dim_out, kernel_sizes=(8, 2, 4)):
                super().__init__()
                kernel_sizes = sorted(kernel_sizes)
                n = len(kernel_sizes)
                scales = [int(dim_out / (2 ** i)) for i in range(1, n)]
                scales = [*scales, dim_out - sum(scales)]
                self.convs = nn.ModuleList([])
                for k, d in zip(kernel_sizes, scales):
                    self.convs.append(nn.Conv2d(dim_in, d, k, stride=2, padding=(k - 2) // 2))

            def forward(self, x):
                fmaps = tuple(map(lambda conv: conv(x), self.convs))
                return torch.cat(fmaps, dim=1)
        """,
        "Net",
        dict(dim_in=3, dim_out=16),
        dict(x=(2, 3, 16, 16)),
    ),
    # a list comprehension over range(a, b) takes a, a + 1, ... (the analysis took
    # 0, 1, ...: a complete figure that differed from torch's)
    "comprehension_over_a_range_from_two": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.heads = nn.ModuleList([nn.Linear(dim, dim * i) for i in range(2, 4)])

            def forward(self, x):
                return [head(x) for head in self.heads]
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # mmengine's Sequential(BaseModule, nn.Sequential) calls each base's __init__ by name
    "torch_base_init_called_by_name": (
        """
        class Base(nn.Module):
            def __init__(self, cfg=None):
                super().__init__()
                self.cfg = cfg

        class Seq(Base, nn.Sequential):
            def __init__(self, *args, cfg=None):
                Base.__init__(self, cfg)
                nn.Sequential.__init__(self, *args)

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.body = Seq(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 2 * dim))

            def forward(self, x):
                return self.body(x)
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # sinabs' StatefulLayer: `for name, b in self.named_buffers(): self.register_buffer(
    # name, ...)` in a forward; torch's walks skip a None entry and yield a tied tensor once
    "buffer_and_parameter_walks": (
        """
        class Cell(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.register_buffer("h", torch.zeros(0))
                self.scale = None
                self.register_buffer("c", torch.zeros(0))

            def forward(self, x):
                for name, b in self.named_buffers():
                    self.register_buffer(name, torch.zeros(x.shape[-1], x.shape[-1]))
                out = x
                for b in self.buffers():
                    out = out @ b
                return out

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.cell = Cell(dim)
                self.w = nn.Parameter(torch.ones(dim, dim))
                self.v = self.w

            def forward(self, x):
                y = self.cell(x)
                for name, p in self.named_parameters():
                    y = y @ p
                return y
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # diffusers' get_parameter_dtype: walks named_modules() and parameters(), no arithmetic
    "module_tree_walks_cost_nothing": (
        """
        def first_dtype(module):
            for name, sub in module.named_modules():
                if hasattr(sub, "_hook"):
                    return sub._hook
            for p in module.parameters():
                return p.dtype
            return torch.float32

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, 2 * dim)

            @property
            def dtype(self):
                return first_dtype(self)

            def forward(self, x):
                return self.fc(x.to(self.dtype))
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # diffusers' attention modules: `processor = self._default_processor_cls()`, a
    # class held by a class attribute (no binding: a class is no descriptor), stored
    # by a mixin's method and called in forward
    "class_attribute_holding_a_class": (
        """
        class Proc:
            def __call__(self, attn, x):
                return attn.o(x)

        class Mixin:
            def set_processor(self, processor):
                if hasattr(self, "processor") and isinstance(self.processor, nn.Module):
                    self._modules.pop("processor")
                self.processor = processor

        class Net(nn.Module, Mixin):
            _default_processor_cls = Proc
            _act = partial(F.gelu, approximate="tanh")

            def __init__(self, dim, processor=None):
                super().__init__()
                self.o = nn.Linear(dim, dim)
                if processor is None:
                    processor = self._default_processor_cls()
                self.set_processor(processor)

            def forward(self, x):
                return self._act(self.processor(self, x))
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # register_buffer in a forward stores the attribute on the module, as
    # `self.name = t` would: a table made on the first call from the input's size,
    # then read by a matmul whose cost depends on its shape
    "register_buffer_in_forward": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.proj = nn.Linear(dim, dim)

            def forward(self, x):
                if not hasattr(self, "table"):
                    self.register_buffer("table", torch.ones(x.shape[-1], 3 * x.shape[0]), persistent=False)
                return self.proj(x) @ self.table
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # by keyword, replacing the buffer the constructor registered
    "register_buffer_in_forward_replaces_a_buffer": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.register_buffer("table", torch.ones(dim, dim))

            def forward(self, x):
                self.register_buffer(name="table", tensor=torch.ones(x.shape[-1], 5))
                return x @ self.table
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
    # a buffer registered as None keeps its name in `_buffers`: registered again in
    # a forward (a cache a property fills on first read) it stores the tensor
    "register_buffer_in_forward_over_a_none_buffer": (
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.register_buffer("total", torch.ones(3 * dim, dim))
                self.register_buffer("_table", None, persistent=False)
                self.proj = nn.Linear(dim, dim)

            @property
            def table(self):
                if self._table is None:
                    table = self.total / 2
                    self.register_buffer("_table", table, persistent=False)
                    return table
                return self._table

            def forward(self, x):
                return self.proj(x) @ self.table.t() + self.proj(x) @ self.table.t()
        """,
        "Net",
        dict(dim=8),
        dict(x=(2, 8)),
    ),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_exact_against_flop_counter(tmp_path, key):
    assert_exact(tmp_path, key, CASES[key], HEADER)


def _target(tmp_path, code: str, cls: str = "Net"):
    path = write(tmp_path, "m.py", HEADER + textwrap.dedent(code))
    return static_target(path, cls, {"dim": "8"}, {"x": "2,8"})


def test_register_buffer_over_a_plain_none_attribute_is_not_a_figure(tmp_path):
    """`self._t = None` then `register_buffer("_t", t)` in a forward: torch raises
    KeyError (the attribute exists and is no buffer), so no figure is printed."""
    t = _target(
        tmp_path,
        """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self._t = None
                self.proj = nn.Linear(dim, dim)

            def forward(self, x):
                self.register_buffer("_t", torch.ones(x.shape[-1], 4))
                return self.proj(x) @ self._t
        """,
    )
    assert not t["complete"]
    with pytest.raises(KeyError):
        net = torch.nn.Module()
        net._t = None
        net.register_buffer("_t", torch.ones(2))


def test_register_buffer_in_a_forward_over_a_parameter_is_not_costed(tmp_path):
    # torch refuses it: KeyError "attribute 'w' already exists"; the call stays one
    # the analysis does not model, never a figure read off the new tensor
    code = """
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.w = nn.Parameter(torch.ones(dim, dim))

            def forward(self, x):
                self.register_buffer("w", torch.ones(x.shape[-1], 2))
                return x @ self.w
        """
    path = write(tmp_path, "m.py", HEADER + textwrap.dedent(code))
    with pytest.raises(KeyError):
        counted(path, "Net(8)", {"x": torch.randn(2, 8)})
    assert not _target(tmp_path, code)["complete"]


def test_a_buffer_registered_as_none_leaves_the_registry_not_known(tmp_path):
    # torch: `self._buffers` holds "bias": None, so `_f(x, **self._buffers)` passes
    # bias=None and takes no addition; None is all the analysis holds of the name,
    # as of a plain attribute, so the registry is not known
    path = write(
        tmp_path,
        "noneb.py",
        HEADER
        + textwrap.dedent(
            """
            class Net(nn.Module):
                def __init__(self, d):
                    super().__init__()
                    self.register_buffer("w", torch.randn(d, d))
                    self.register_buffer("bias", None)

                def forward(self, x):
                    return self._f(x, **self._buffers)

                @staticmethod
                def _f(x, w, bias=0.5):
                    return x @ w if bias is None else (x @ w) @ w
            """
        ),
    )
    t = static_target(path, "Net", {"d": "8"}, {"x": "2,8"})
    assert not t["complete"]
    assert (t["flops_value"] or 0) <= counted(path, "Net(8)", {"x": torch.randn(2, 8)})


def test_a_helper_that_replaces_layers_through_apply_leaves_a_bound(tmp_path):
    # torch: the helper swaps the Linear for an Identity, so the forward costs 0;
    # the analysis cannot place that change: it must not claim the Linear's 256.
    t = _target(
        tmp_path,
        """
        def strip(model):
            def _swap(m):
                if hasattr(m, "fc"):
                    m.fc = nn.Identity()
            model.apply(_swap)

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                strip(self)

            def forward(self, x):
                return self.fc(x)
        """,
    )
    assert not t["complete"]
    assert (t["flops_value"] or 0) == 0 and t["flops"] in ("0", None)
    assert any("apply()" in u["why"] for u in t["unknown"]), t["unknown"]


def test_apply_on_a_held_module_that_replaces_layers_leaves_a_bound(tmp_path):
    # the same change made on a sub-module after it was built, from __init__
    t = _target(
        tmp_path,
        """
        def _swap(m):
            if isinstance(m, nn.Sequential):
                m[0] = nn.Identity()

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(dim, dim))
                self.body.apply(_swap)

            def forward(self, x):
                return self.body(x)
        """,
    )
    assert not t["complete"]
    assert any("apply()" in u["why"] for u in t["unknown"]), t["unknown"]


@pytest.mark.parametrize("receiver", ["self", "self.body"])
def test_apply_that_swaps_layers_of_a_built_module_leaves_it_unknown(tmp_path, receiver):
    # `swap_all(self)` in a forward: nn.Module.apply runs _swap on every submodule,
    # which puts an Identity in the Sequential's first place; torch then counts one
    # Linear (256 FLOPs). main kept the module as built and printed a bound of 512,
    # above torch's count
    t = _target(
        tmp_path,
        f"""
        def _swap(m):
            if isinstance(m, nn.Sequential):
                m[0] = nn.Identity()

        def swap_all(module):
            module.apply(_swap)

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(dim, dim), nn.Linear(dim, dim))

            def forward(self, x):
                swap_all({receiver})
                return self.body(x)
        """,
    )
    assert not t["complete"]
    bound = str(t["flops"] or "")
    assert not bound.isdigit() or int(bound) <= 256, bound
    assert any("apply()" in u["why"] for u in t["unknown"]), t["unknown"]


# transformers' PreTrainedModel: `self.apply(partial(self._set_gradient_checkpointing,
# value=True))` in a method for an old format; {init} and {forward} say where it is called
LEGACY = """
class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, dim), nn.Linear(dim, dim))
        {init}

    def _swap(self, m, value=False):
        if isinstance(m, nn.Sequential):
            m[0] = nn.Identity()

    def legacy(self):
        self.apply(partial(self._swap, value=True))

    def forward(self, x):
        {forward}
        return self.body(x)
"""


def test_apply_in_a_method_the_run_never_calls_changes_nothing(tmp_path):
    # Python changes the layers only if the call runs: the forward is exact (main:
    # every method of the class not modelled, the figure unknown)
    path = write(tmp_path, "legacy.py", HEADER + LEGACY.format(init="pass", forward="pass"))
    t = static_target(path, "Net", {"dim": "8"}, {"x": "2,8"})
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == counted(path, "Net(8)", {"x": torch.randn(2, 8)})


@pytest.mark.parametrize("where", ["forward", "init"])
def test_apply_in_a_method_the_run_calls_changes_the_layers(tmp_path, where):
    # the same method called, in the constructor or the forward: torch counts one
    # Linear (256 FLOPs); the analysis never prints the two as built
    calls = {"init": "pass", "forward": "pass", where: "self.legacy()"}
    path = write(tmp_path, "legacy.py", HEADER + LEGACY.format(**calls))
    t = static_target(path, "Net", {"dim": "8"}, {"x": "2,8"})
    assert not t["complete"]
    bound = str(t["flops"] or "")
    assert not bound.isdigit() or int(bound) <= 256, bound


# tape's ProteinModel: `init_weights` of a base class calls
# `self.apply(self._init_weights)`, and the method is defined by a subclass, here
# beside another class's `_init_weights` that swaps layers
INIT_BY_SUBCLASS = """
class Base(nn.Module):
    def init_weights(self):
        self.apply(self._init_weights)


class Swapping(Base):
    def _init_weights(self, m):
        if isinstance(m, nn.Sequential):
            m[0] = nn.Identity()


class Initialising(Base):
    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            m.weight.data.normal_(mean=0.0, std=0.02)
            m.bias.data.zero_()


class Net({base}):
    def __init__(self, dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, dim), nn.Linear(dim, dim))
        self.init_weights()

    def forward(self, x):
        return self.body(x)
"""


def test_apply_of_a_method_bound_to_the_instance_runs_the_one_its_mro_finds(tmp_path):
    # Python binds `self._init_weights` along the instance's MRO (Initialising's),
    # whatever other classes of the file define one: an init in place, so the
    # forward is exact (main looked the name up in the file, found two, and took the
    # layers for changed)
    path = write(tmp_path, "tape.py", HEADER + INIT_BY_SUBCLASS.format(base="Initialising"))
    t = static_target(path, "Net", {"dim": "8"}, {"x": "2,8"})
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == counted(path, "Net(8)", {"x": torch.randn(2, 8)})
    # the one that swaps a layer still leaves the layers not known: torch counts one
    # Linear, and the analysis never prints the two as built
    path = write(tmp_path, "swap.py", HEADER + INIT_BY_SUBCLASS.format(base="Swapping"))
    t = static_target(path, "Net", {"dim": "8"}, {"x": "2,8"})
    assert not t["complete"]
    bound = str(t["flops"] or "")
    assert not bound.isdigit() or int(bound) <= 256, bound


def test_dir_of_a_torch_module_holds_what_the_stubs_describe(tmp_path):
    # timm's create_act.py: `'silu' in dir(torch.nn.functional)` is True where the
    # stubs describe F.silu, so the table holds nn.SiLU, not Swish and its beta.
    # Truth by hand: Linear(16, 16) on (2, 16) is 2·2·16·16 FLOPs, SiLU none.
    path = write(
        tmp_path,
        "m.py",
        """
        import torch
        from torch import nn

        class Swish(nn.Module):
            def __init__(self):
                super().__init__()
                self.beta = nn.Parameter(torch.ones(1))

            def forward(self, x):
                return x * torch.sigmoid(self.beta * x)

        _has_silu = 'silu' in dir(torch.nn.functional)
        LAYERS = dict(silu=nn.SiLU if _has_silu else Swish, relu=nn.ReLU)

        def get(name):
            return LAYERS[name.lower()]

        class Net(nn.Module):
            def __init__(self, dim, kind="silu"):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.act = get(kind)()

            def forward(self, x):
                return self.act(self.fc(x))
        """,
    )
    t = static(path, "Net", "--init", "dim=16", "--input", "x=2,16")
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == 2 * 2 * 16 * 16
    assert t["params"] == str(16 * 16 + 16)


def test_an_autograd_function_apply_is_no_module_apply(tmp_path):
    # timm's HardSigmoidMe: `Fn.apply(x)` on a torch.autograd.Function of the file
    # runs Fn.forward; it does not change any module's layers.
    t = _target(
        tmp_path,
        """
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)

            def forward(self, x):
                return self.fc(x)

            def doubled(self, x):
                return Double.apply(x)
        """,
    )
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == 2 * 2 * 8 * 8


def test_an_inplace_function_with_a_classmethod_forward(tmp_path):
    """stanza's FeatureDropoutFunction: a `torch.autograd.function.InplaceFunction`
    (a Function whose constructor takes an `inplace` flag) with its forward written
    as a classmethod, `cls` bound to the class: its apply runs that forward, as
    torch's Function.apply does (before: not known)."""
    code = """
        from torch.autograd.function import InplaceFunction

        class Scaled(InplaceFunction):
            width = 4

            @classmethod
            def forward(cls, ctx, x, w, inplace=False):
                ctx.inplace = inplace
                out = x if inplace else x.clone()
                return out @ w[:, : cls.width]

            @staticmethod
            def backward(ctx, g):
                return g, None, None

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.w = nn.Parameter(torch.randn(dim, dim))

            def forward(self, x):
                return Scaled.apply(x, self.w, False)
        """
    t = _target(tmp_path, code)
    path = tmp_path / "m.py"
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == counted(path, "Net(8)", {"x": torch.randn(2, 8)}) == 2 * 2 * 8 * 4


def test_a_cached_function_that_computes_is_a_bound(tmp_path):
    # @cache runs the body on a miss only: a later call (or a warm cache from an
    # earlier forward) costs nothing, so its product is no part of an exact sum.
    t = _target(
        tmp_path,
        """
        import functools

        @functools.cache
        def gram(n):
            return torch.ones(n, n) @ torch.ones(n, n)

        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)

            def forward(self, x):
                return self.fc(x) @ gram(x.shape[-1])
        """,
    )
    assert not t["complete"]
    assert int(t["flops"]) <= 2 * 2 * 8 * 8 + 2 * 2 * 8 * 8  # never above torch's count
    assert any("cache miss" in u["why"] for u in t["unknown"]), t["unknown"]


# optimum-quanto's QModuleMixin: `class QLayerNorm(QModuleMixin, nn.LayerNorm)` with
# `class QModuleMixin(ABC)`, whose `super().__init__(*args, **kwargs)` follows the
# instance's MRO (Q, Mixin, ABC, LayerNorm, Module) past ABC to LayerNorm's: main
# ran nothing there and gave 0 parameters as a complete figure (torch: 32)
MIXIN_BEFORE_A_LAYER = """
    from abc import ABC

    class Mixin(ABC):
        def __init__(self, *args, scaled=False, device=None, **kwargs):
            super().__init__(*args, device=device, **kwargs)
            self.scaled = scaled
            self.register_buffer("scale", torch.ones(()))

    class QNorm(Mixin, nn.LayerNorm):
        def forward(self, x):
            return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    class QLinear(Mixin, nn.Linear):
        def forward(self, x):
            return F.linear(x, self.weight, self.bias) * self.scale

    class Other:
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)

    class Later(Mixin, Other, nn.Linear):
        def forward(self, x):
            return F.linear(x, self.weight, self.bias)
"""


@pytest.mark.parametrize(
    "cls,init,shape",
    [
        ("QNorm", {"normalized_shape": 16}, (2, 8, 16)),
        ("QLinear", {"in_features": 16, "out_features": 8}, (2, 16)),
        # a project class with an `__init__` of its own between the mixin and the
        # layer: its `super().__init__` goes on to Linear's in turn
        ("Later", {"in_features": 16, "out_features": 8}, (2, 16)),
    ],
)
def test_a_mixins_super_init_reaches_the_layer_after_it(tmp_path, cls, init, shape):
    from tests.test_parameters import figures, load
    from tests.test_reparametrize import saved_bytes

    path = write(tmp_path, "m.py", HEADER + textwrap.dedent(MIXIN_BEFORE_A_LAYER))
    args = [a for k, v in init.items() for a in ("--init", f"{k}={v}")]
    t = static(path, cls, *args, "--input", "x=" + ",".join(map(str, shape)), "--train")
    m = getattr(load(path), cls)(**init)
    x = torch.randn(*shape)
    truth = counted(path, f"{cls}({', '.join(f'{k}={v}' for k, v in init.items())})", {"x": x})
    counts = (
        sum(p.numel() for p in m.parameters()),
        sum(p.numel() for p in m.parameters() if p.requires_grad),
        sum(b.numel() for b in m.buffers()),
    )
    assert figures(t) == counts, t
    assert t["complete"] and t["flops_value"] == truth, t["unknown"]
    assert t["activation_complete"] and t["activation_bytes_value"] == saved_bytes(m, x)


# deel-torchlip's SpectralConv2d: `class S(PadConv, Mixin)` with `class PadConv(nn.Conv2d)`
# calling `super(PadConv, self).__init__(...)`: Python's MRO of S puts Conv2d (and
# nn.Module, whose __init__ calls no super().__init__) before Mixin, so Conv2d's runs
# and Mixin's never does; 0cb7e93 took the project classes alone, ran Mixin's, and
# gave 0 parameters as a complete figure (torch: 2,320). `isinstance(self, nn.Conv1d)`
# of a class deriving from Conv1d through a project class was not known, and the
# branch torch never takes raised a false error (lconv_norm's `k1, k2 = kernel_size`).
TORCH_BEFORE_A_MIXIN = """
    class Mixin:
        def __init__(self, k=1.0):
            self.k = k

    class PadConv(nn.Conv2d):
        def __init__(self, cin, cout, size):
            super(PadConv, self).__init__(cin, cout, size)

        def forward(self, x):
            return super(PadConv, self).forward(x)

    class Scaled(PadConv, Mixin):
        def __init__(self, c):
            PadConv.__init__(self, c, c, 3)

    class Pad1(nn.Conv1d):
        pass

    def coefficient(module):
        if isinstance(module, nn.Conv1d):
            return module.kernel_size[0]
        k1, k2 = module.kernel_size
        return k1 * k2

    class Lipschitz(Pad1, Mixin):
        def __init__(self, c):
            Pad1.__init__(self, c, c, 3)
            self.c = coefficient(self)

        def forward(self, x):
            return super().forward(x) * self.c
"""


@pytest.mark.parametrize("cls,shape", [("Scaled", (2, 4, 8, 8)), ("Lipschitz", (2, 4, 8))])
def test_a_torch_layer_before_a_mixin_in_the_mro_is_what_super_init_runs(tmp_path, cls, shape):
    from tests.test_parameters import figures, load

    path = write(tmp_path, "m.py", HEADER + textwrap.dedent(TORCH_BEFORE_A_MIXIN))
    t = static(path, cls, "--init", "c=4", "--input", "x=" + ",".join(map(str, shape)))
    m = getattr(load(path), cls)(4)
    assert not hasattr(m, "k")  # Mixin.__init__ never ran
    counts = (
        sum(p.numel() for p in m.parameters()),
        sum(p.numel() for p in m.parameters() if p.requires_grad),
        sum(b.numel() for b in m.buffers()),
    )
    assert figures(t) == counts, t
    truth = counted(path, f"{cls}(4)", {"x": torch.randn(*shape)})
    assert t["complete"] and t["flops_value"] == truth, t["unknown"]


# deel-torchlip's SpectralLinear: `torch.nn.Linear.__init__(self, in_features=...,
# out_features=...)`, every size by keyword; 0cb7e93 read the size arguments by
# position off the call, where `self` stands first, and raised an IndexError.
UNBOUND_LAYER_INIT = """
    class ByKeyword(nn.Linear):
        def __init__(self, d):
            nn.Linear.__init__(self, in_features=d, out_features=4)

    class ByPosition(nn.Linear):
        def __init__(self, d):
            nn.Linear.__init__(self, d, 4, False)
"""


@pytest.mark.parametrize("cls", ["ByKeyword", "ByPosition"])
def test_a_layers_init_called_through_its_class_reads_its_sizes(tmp_path, cls):
    from tests.test_parameters import figures, load

    path = write(tmp_path, "m.py", HEADER + textwrap.dedent(UNBOUND_LAYER_INIT))
    t = static(path, cls, "--init", "d=8", "--input", "input=2,8")
    m = getattr(load(path), cls)(8)
    assert figures(t) == (sum(p.numel() for p in m.parameters()),) * 2 + (0,), t
    truth = counted(path, f"{cls}(8)", {"input": torch.randn(2, 8)})
    assert t["complete"] and t["flops_value"] == truth, t["unknown"]


# compressai's SpectralConvTranspose2d: `class S(nn.ConvTranspose2d, Mixin)` whose
# `super().__init__` is ConvTranspose2d's, then `Mixin.__init__(self)` makes a Parameter
# of its own and `del self._parameters["weight"]`, so `self.weight` reads the mixin's
# property. The registration deleted is gone: counting the weight on would put the
# parameters' bound above torch's (65,552 where torch counts 36,880).
DELETED_REGISTRATION = """
    class Mixin:
        def __init__(self):
            self.weight_t = nn.Parameter(self.weight.detach()[:, :, :2].clone())
            del self._parameters["weight"]

        @property
        def weight(self):
            return self.weight_t.repeat(1, 1, 2, 1)

    class Spectral(nn.ConvTranspose2d, Mixin):
        def __init__(self, c):
            super().__init__(c, c, 4)
            Mixin.__init__(self)
"""


def test_a_registration_deleted_while_built_is_no_longer_counted(tmp_path):
    from tests.test_parameters import load

    path = write(tmp_path, "m.py", HEADER + textwrap.dedent(DELETED_REGISTRATION))
    t = static(path, "Spectral", "--init", "c=4", "--input", "input=2,4,8,8", "--eval")
    m = load(path).Spectral(4)
    params = sum(p.numel() for p in m.parameters())
    assert "weight" not in dict(m.named_parameters())
    known = int(t["params_known"])
    assert known <= params and (t["params"] == "?" or int(t["params"]) == params), t
    truth = counted(path, "Spectral(4)", {"input": torch.randn(2, 4, 8, 8)})
    assert (t["flops_value"] or 0) <= truth and (not t["complete"] or t["flops_value"] == truth)


# torchvision's IntermediateLayerGetter (face-alignment's RetinaFace holds one):
# `class Getter(nn.ModuleDict)` whose `super().__init__(layers)` registers each entry,
# and `self[k] = layer` (ModuleDict's `__setitem__`, an add_module); 0cb7e93 stored
# neither and counted 0 parameters, complete (torch: 40 and 72).
MODULE_DICT_SUBCLASS = """
    class Given(nn.ModuleDict):
        def __init__(self, d):
            super().__init__({"a": nn.Linear(d, 4), "b": nn.Linear(4, d)})

    class Stored(nn.ModuleDict):
        def __init__(self, d):
            super().__init__()
            self["a"] = nn.Linear(d, 8)

    class Net(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.given = Given(d)
            self.stored = Stored(d)

        def forward(self, x):
            return self.given["b"](self.given["a"](x)), self.stored["a"](x)
"""


def test_a_module_dict_subclass_registers_its_entries(tmp_path):
    from tests.test_parameters import figures, load

    path = write(tmp_path, "m.py", HEADER + textwrap.dedent(MODULE_DICT_SUBCLASS))
    t = static(path, "Net", "--init", "d=8", "--input", "x=2,8")
    m = load(path).Net(8)
    counts = (
        sum(p.numel() for p in m.parameters()),
        sum(p.numel() for p in m.parameters() if p.requires_grad),
        sum(b.numel() for b in m.buffers()),
    )
    assert figures(t) == counts, t


LAZY_PARAMETERS = """
import torch
import torch.nn as nn


class Lazy(nn.Module):
    # qsparse's PruneLayer: placeholders replaced by new Parameters on the first forward
    def __init__(self, dim, trainable=False):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.trainable = trainable
        self.register_parameter("gain", nn.Parameter(torch.tensor(-1.0), requires_grad=False))

    def forward(self, x):
        with torch.no_grad():
            shape = [1 if i != x.dim() - 1 else s for i, s in enumerate(x.shape)]
        self.gain = nn.Parameter(torch.ones(*shape), requires_grad=self.trainable)
        return self.lin(self.lin(x) * self.gain)
"""


@pytest.mark.parametrize("trainable", [False, True])
def test_a_parameter_made_in_a_forward_is_a_new_leaf_that_costs_nothing(tmp_path, trainable):
    # nn.Parameter(t) makes a leaf over t's storage: no op on a device, and the
    # gradient stops at it (only its own is computed where it requires one)
    from tests.helpers import run_class, torch_figures, written_module

    path, mod = written_module(tmp_path, "lazy", LAZY_PARAMETERS)
    kw = {"dim": 8, "trainable": trainable}
    t = run_class(path, "Lazy", kw, {"x": (2, 4, 8)}, True)
    fwd, bwd, _params, out = torch_figures(mod, "Lazy", kw, {"x": (2, 4, 8)}, training=True)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert (t["flops_value"], t["flops_backward_value"]) == (fwd, bwd)
    assert tuple(int(d) for d in t["output"]) == out


MOVED = """
    import torch
    import torch.nn as nn


    class Moved(nn.Module):
        def __init__(self, c=8, n=2):
            super().__init__()
            self.convs = nn.ModuleList([nn.Conv1d(c, c, 3, padding=1) for _ in range(n)])
            self.lin = nn.Linear(16, 4)

        def forward(self, x):
            device = x.device
            for conv in self.convs:
                conv.to(x.device)
                x = x + conv(x)
            self.to(device=x.device, non_blocking=True)
            return self.lin(x).to(device)


    class Cast(nn.Module):
        def __init__(self, c=8, n=2):
            super().__init__()
            self.lin = nn.Linear(16, 4)

        def forward(self, x):
            self.lin.to(HOW)
            return self.lin(x)
"""


def test_a_module_moved_to_a_tensors_device_is_itself(tmp_path):
    # nn.Module.to(x.device) moves what it holds in place, onto the inputs' own
    # device, and returns the module: no op on a device, the module unchanged
    from tests.helpers import run_class, torch_figures, written_module

    path, mod = written_module(tmp_path, "moved", MOVED.replace("HOW", "x.device"))
    t = run_class(path, "Moved", {}, {"x": (2, 8, 16)}, True)
    fwd, bwd, params, out = torch_figures(mod, "Moved", {}, {"x": (2, 8, 16)}, training=True)
    assert t["complete"], t["unknown"]
    assert (t["flops_value"], t["flops_backward_value"]) == (fwd, bwd)
    assert tuple(int(d) for d in t["output"]) == out


@pytest.mark.parametrize("how", ["x.dtype", "x", "x.device, x.dtype"])
def test_a_module_cast_to_its_inputs_dtype_is_followed(tmp_path, how):
    # Module.to of the inputs' own dtype (a tensor's: its dtype and device) changes no
    # dtype here (analysis/module_casts.py): torch's figures, complete
    from tests.helpers import run_class, torch_figures, written_module

    path, mod = written_module(tmp_path, "cast", MOVED.replace("HOW", how))
    t = run_class(path, "Cast", {}, {"x": (2, 8, 16)}, True)
    fwd, bwd, _params, out = torch_figures(mod, "Cast", {}, {"x": (2, 8, 16)}, training=True)
    assert t["complete"], t["unknown"]
    assert (t["flops_value"], t["flops_backward_value"]) == (fwd, bwd)
    assert tuple(int(d) for d in t["output"]) == out


def test_a_module_cast_elsewhere_raises_or_moved_elsewhere_is_not_known(tmp_path):
    # a float64 Linear fed the float32 input raises under torch (SHP322, no figure); a
    # device named otherwise changes where it computes: never a figure
    from tests.helpers import run_class, written_module

    path, _ = written_module(tmp_path, "cast", MOVED.replace("HOW", "torch.float64"))
    t = run_class(path, "Cast", {}, {"x": (2, 8, 16)}, True)
    assert not t["complete"] and [d["code"] for d in t["diagnostics"]] == ["SHP322"]
    path, _ = written_module(tmp_path, "moved", MOVED.replace("HOW", "'cuda'"))
    t = run_class(path, "Cast", {}, {"x": (2, 8, 16)}, True)
    assert not t["complete"]


# x-transformers' SyntheticDataGenerator: `self.apply(self.init_)` whose init scales a
# Linear's weight with `*=`; Python runs `m.weight = m.weight.__imul__(s)`, the same
# Parameter changed in place and stored back as itself
SCALES = {
    "method_imul": """
        @torch.no_grad()
        def init_(self, m):
            if isinstance(m, nn.Linear):
                m.weight *= torch.tensor(0.5)
    """,
    # timm's and segformer's conv init: `//=` and `*=` on a number the function
    # computed rebind a name; no container changes
    "fan_out": """
        def init_(self, m):
            if isinstance(m, nn.Conv1d):
                fan_out = m.kernel_size[0] * m.out_channels
                fan_out //= m.groups
                fan_out *= 1
                m.weight.data.normal_(0, (2.0 / fan_out) ** 0.5)
    """,
    "tuple_and_data": """
        def init_(self, m):
            if isinstance(m, (nn.Linear, nn.Conv1d)) and m.bias is not None:
                m.weight.data *= torch.rand(()).item()
                m.bias.data += 1.0
    """,
}


SCALED = """
class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.conv = nn.Conv1d(2, 2, 1)
        self.apply(self.init_)

{init}

    def forward(self, x):
        return self.conv(self.fc(x))
"""


def _torch_params(path, build: str) -> int:
    ns: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)  # noqa: S102 - the test's own code
    return sum(p.numel() for p in eval(build, ns).parameters())  # noqa: S307


@pytest.mark.parametrize("body", SCALES.values(), ids=SCALES.keys())
def test_an_init_that_scales_a_layers_tensor_in_place_keeps_the_layers(tmp_path, body):
    # main read the `*=` on an attribute as a store that may replace a layer: every
    # count unknown. The figures are torch's (FlopCounterMode, the parameters' numel)
    code = SCALED.format(init=textwrap.indent(textwrap.dedent(body).strip(), "    "))
    path = write(tmp_path, "m.py", HEADER + code)
    t = static(path, "Net", "--init", "dim=8", "--input", "x=2,2,8")
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == counted(path, "Net(8)", {"x": torch.randn(2, 2, 8)})
    assert t["params"] == str(_torch_params(path, "Net(8)"))


# apply() functions that add layers without a setattr, a Call stored or an item
# stored: torch runs two Linears (512 FLOPs) where the module built one; main printed
# a complete 256 and the one Linear's 72 parameters for each (torch: 144, or 72 where
# Sequential's `*=` repeats the same Linear: the analysis says `?`)
GROWS = {
    "sequential_imul": """
        def _grow(m):
            if isinstance(m, Net):
                m.body *= 2
    """,
    "attribute_iadd": """
        def _grow(m):
            if hasattr(m, "body"):
                m.body += [nn.Linear(8, 8)]
    """,
    "name_iadd": """
        def _grow(m):
            if isinstance(m, nn.ModuleList):
                m += [nn.Linear(8, 8)]
    """,
    "append": """
        def _grow(m):
            if isinstance(m, nn.ModuleList):
                m.append(nn.Linear(8, 8))
    """,
}


@pytest.mark.parametrize("grow", GROWS.values(), ids=GROWS.keys())
def test_an_apply_that_grows_a_container_leaves_the_layers_unknown(tmp_path, grow):
    body = (
        "nn.Sequential(nn.Linear(dim, dim))"
        if "m.body *=" in grow
        else "nn.ModuleList([nn.Linear(dim, dim)])"
    )
    code = textwrap.dedent(grow) + textwrap.dedent(
        f"""
        class Net(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.body = {body}
                self.apply(_grow)

            def forward(self, x):
                for layer in self.body:
                    x = layer(x)
                return x
        """
    )
    path = write(tmp_path, "m.py", HEADER + code)
    truth = counted(path, "Net(8)", {"x": torch.randn(2, 8)})
    assert truth == 512
    t = static(path, "Net", "--init", "dim=8", "--input", "x=2,8")
    assert not t["complete"]
    bound = str(t["flops"] or "")
    assert not bound.isdigit() or int(bound) <= truth, bound
    assert t["params"] == "?", t["params"]
    assert any("apply()" in u["why"] for u in t["unknown"]), t["unknown"]


def test_a_class_name_the_init_imports_itself_narrows_nothing(tmp_path):
    # `nn` bound in the function is not the module's torch.nn: its `Linear` vouches
    # for no Parameter, so the `*=` stays a possible change (torch: the module's
    # construction raises AttributeError, types has no Linear)
    body = """
        def init_(self, m):
            import types as nn
            if isinstance(m, nn.Linear):
                m.weight *= torch.tensor(0.5)
    """
    code = SCALED.format(init=textwrap.indent(textwrap.dedent(body).strip(), "    "))
    path = write(tmp_path, "m.py", HEADER + code)
    with pytest.raises(AttributeError):
        _torch_params(path, "Net(8)")
    t = static(path, "Net", "--init", "dim=8", "--input", "x=2,2,8")
    assert not t["complete"]
    assert t["params"] == "?", t["params"]
