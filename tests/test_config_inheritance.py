"""Config classes as Python builds them: a dataclass's fields include its
dataclass bases' (base first, a redefinition keeps its place and takes the new
default), ClassVar annotations are not fields, and a subclass of a
`@dataclass_transform()` base is a dataclass (PEP 681: HF's PreTrainedConfig
makes every subclass one in `__init_subclass__`)."""

from __future__ import annotations

import sys
import textwrap
import types

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from shapelint.analysis.driver import analyze_target
from shapelint.analysis.target import target_json

SRC = textwrap.dedent(
    """
    from dataclasses import dataclass
    from typing import ClassVar

    import torch
    from torch import nn
    from typing_extensions import dataclass_transform


    @dataclass_transform(kw_only_default=True)
    @dataclass
    class BaseConfig:
        registry: ClassVar[dict] = {}
        hidden: int = 4
        depth: int = 1

        def __init_subclass__(cls, **kwargs):
            super().__init_subclass__(**kwargs)
            dataclass(cls, kw_only=True)


    class TinyConfig(BaseConfig):
        depth: int = 2
        inner: int = 32


    @dataclass
    class Parent:
        width: int = 8


    @dataclass
    class Child(Parent):
        out: int = 3


    class Net(nn.Module):
        def __init__(self, config, head):
            super().__init__()
            self.layers = nn.ModuleList(
                [nn.Linear(config.hidden, config.inner) for _ in range(config.depth)]
            )
            self.head = nn.Linear(head.width, head.out)

        def forward(self, x, y):
            for layer in self.layers:
                z = layer(x)
            return z, self.head(y)
    """
)


def _load():
    mod = types.ModuleType("configs_under_test")
    sys.modules[mod.__name__] = mod  # dataclasses reads the class's module
    try:
        exec(compile(SRC, "configs.py", "exec"), mod.__dict__)  # noqa: S102 - the test's own code
    finally:
        del sys.modules[mod.__name__]
    return mod


@pytest.mark.parametrize(
    ("config", "head", "x", "y"),
    [
        ("TinyConfig(hidden=16)", "Child()", "2,16", "2,8"),
        ("TinyConfig(hidden=8, depth=3, inner=4)", "Child(width=5, out=7)", "3,8", "1,5"),
        ("TinyConfig()", "Child(6)", "2,4", "2,6"),
    ],
)
def test_inherited_fields_and_dataclass_transform(config, head, x, y):
    mod = _load()
    net = mod.Net(eval(config, vars(mod)), eval(head, vars(mod)))  # noqa: S307 - the test's own code
    xs, ys = ([int(d) for d in s.split(",")] for s in (x, y))
    with FlopCounterMode(display=False) as counter:
        net(torch.randn(*xs), torch.randn(*ys))
    init = {"config": config, "head": head}
    tj = target_json(analyze_target("configs.py", SRC, "Net", init, {"x": x, "y": y}), {})
    assert tj["complete"], tj["unknown"]
    assert tj["flops_value"] == counter.get_total_flops()
