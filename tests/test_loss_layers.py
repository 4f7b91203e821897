"""Loss layers (nn.L1Loss, nn.MSELoss, nn.CrossEntropyLoss...) against torch: the
output at the reduction the layer holds, the deprecated size_average / reduce
deciding it where given, as torch's _Loss.__init__ does."""

from __future__ import annotations

import pytest
import torch
from _stubcheck import check_agrees, check_verdict, run_both, to_value

from shapelint.ops.stub_ops import stub_call
from shapelint.ops.values import ObjectV

REDUCTIONS = [
    {},
    {"reduction": "none"},
    {"reduction": "sum"},
    {"reduce": False},
    {"size_average": False},
    {"size_average": True, "reduce": True},
    {"size_average": False, "reduce": False},
]
POINTWISE = ["L1Loss", "MSELoss", "SmoothL1Loss", "BCELoss", "BCEWithLogitsLoss", "SoftMarginLoss"]
CLASSES = ["CrossEntropyLoss", "NLLLoss"]


def _module(name: str, kwargs: dict) -> ObjectV:
    res = stub_call(f"torch.nn.{name}", [], {k: to_value(v) for k, v in kwargs.items()})
    assert res is not None and not res.issues
    assert isinstance(res.value, ObjectV)
    return res.value


def _check(name: str, kwargs: dict, x: torch.Tensor, target: torch.Tensor) -> None:
    module = getattr(torch.nn, name)(**kwargs)
    o = run_both(
        f"torch.nn.{name}.__call__",
        [module, x, target],
        fn=lambda m, a, b: m(a, b),
        values=[_module(name, kwargs), to_value(x), to_value(target)],
    )
    check_agrees(o)


@pytest.mark.filterwarnings("ignore:size_average and reduce args will be deprecated")
@pytest.mark.parametrize("kwargs", REDUCTIONS)
@pytest.mark.parametrize("name", POINTWISE)
def test_pointwise_losses(name, kwargs):
    x = torch.rand(2, 3, 4)
    _check(name, kwargs, x, torch.rand(2, 3, 4))


@pytest.mark.filterwarnings("ignore:size_average and reduce args will be deprecated")
@pytest.mark.parametrize("kwargs", REDUCTIONS)
@pytest.mark.parametrize("name", CLASSES)
def test_class_index_losses(name, kwargs):
    x = torch.randn(2, 5, 3).log_softmax(1)
    _check(name, kwargs, x, torch.randint(0, 5, (2, 3)))


@pytest.mark.parametrize("kwargs", [{}, {"reduction": "none"}, {"delta": 0.5}])
def test_huber(kwargs):
    _check("HuberLoss", kwargs, torch.rand(3, 4), torch.rand(3, 4))


@pytest.mark.filterwarnings("ignore:size_average and reduce args will be deprecated")
@pytest.mark.parametrize("kwargs", [*REDUCTIONS, {"margin": 0.5}])
@pytest.mark.parametrize(
    "shapes",
    [
        ((2, 3), (2, 3), (2, 3)),
        ((2, 3), (1, 3), (2, 1)),
        ((2, 3), (2, 3), (3,)),
        ((4,), (4,), (4,)),
    ],
)
def test_margin_ranking(kwargs, shapes):
    # torch's functional form refuses operands of different ranks: no output then
    a, b, t = (torch.rand(*s) for s in shapes)
    module = torch.nn.MarginRankingLoss(**kwargs)
    o = run_both(
        "torch.nn.MarginRankingLoss.__call__",
        [module, a, b, t],
        fn=lambda m, *xs: m(*xs),
        values=[_module("MarginRankingLoss", kwargs), *(to_value(x) for x in (a, b, t))],
    )
    check_verdict(o)
