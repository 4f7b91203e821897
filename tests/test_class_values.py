"""`type(x)` of a tensor, and torch's tensor classes as values (pytypes.type_of,
module_kinds.torch_value): what Python says of `type(t) is torch.Tensor`, `str(type(t))`,
`issubclass`, `__name__` / `__module__` / `__qualname__` of them. transformers'
`is_tensor(x)` orders its tests by `str(type(x)).startswith("<class 'torch.")`
(`infer_framework_from_repr`), which a ModelOutput's `__post_init__` runs on its
first field.

Each case is a module judged by FlopCounterMode (benchmarks.gen_modules' judge):
exact where the class is known; never wrong where it is not (a tensor the
analysis did not see made may be a Parameter or a subclass)."""

from __future__ import annotations

import textwrap

import pytest

from benchmarks.gen_modules import Generated, judge

pytest.importorskip("torch")

HEAD = """\
import torch
from torch import nn
"""

MODULE = """
def is_plain(t):
    return type(t) is torch.Tensor


def framework(x):
    text = str(type(x))
    if text.startswith("<class 'torch."):
        return "pt"
    if text.startswith("<class 'numpy."):
        return "np"
    return None


class Sub(torch.Tensor):
    pass


class M(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.p = nn.Parameter(torch.ones(d))

    def forward(self, x):
        y = self.lin(x)
        if %s:
            y = self.lin(y)
        return self.lin(y)
"""

EXACT = {
    # transformers' infer_framework_from_repr, on an op's result and a Parameter
    "framework_from_repr": 'framework(y) == "pt" and framework(self.p) == "pt"',
    "identity": "type(y) is torch.Tensor and type(y) == torch.Tensor"
    " and type(self.p) is not torch.Tensor and type(self.p) is nn.Parameter"
    " and type(self.p) is torch.nn.parameter.Parameter",
    "identity_false": "type(self.p) is torch.Tensor or type(y) is nn.Parameter",
    "member": "type(y) in (torch.Tensor, nn.Parameter) and type(self.p) not in (torch.Tensor,)",
    "texts": "str(type(y)) == \"<class 'torch.Tensor'>\""
    " and repr(type(self.p)) == \"<class 'torch.nn.parameter.Parameter'>\""
    " and str(nn.Parameter) == \"<class 'torch.nn.parameter.Parameter'>\"",
    "names": 'type(y).__name__ == "Tensor" and type(y).__module__ == "torch"'
    ' and type(self.p).__name__ == "Parameter" and nn.Parameter.__module__ == "torch.nn.parameter"'
    ' and type(self.p).__qualname__ == "Parameter"',
    "subclasses": "issubclass(type(self.p), torch.Tensor) and issubclass(type(y), torch.Tensor)"
    " and not issubclass(torch.Tensor, nn.Parameter) and not issubclass(type(y), nn.Linear)"
    " and not issubclass(torch.Tensor, (nn.Linear, Sub))",
    "own_class": 'type(self) is M and type(self).__name__ == "M"',
    # through a function's run, whose tensor arguments enter at its boundary
    "through_a_function": "is_plain(y) and not is_plain(self.p)",
}

# Where the class is not known, the figure is a bound, never a wrong one: an
# instance of a subclass of torch.Tensor, a Parameter listed.
HONEST = {
    "a_subclass": "type(y.as_subclass(Sub)) is torch.Tensor",
    "a_subclass_text": 'framework(y.as_subclass(Sub)) == "pt"',
    "a_parameter_listed": "type(list(self.parameters())[0]) is torch.Tensor",
}


def _judge(tmp_path, name, test):
    src = HEAD + textwrap.dedent(MODULE % test)
    gen = Generated(0, name, [name], src, {"d": "4"}, {"x": "2,3,4"}, "M")
    return judge(gen, tmp_path)


@pytest.mark.parametrize("name", list(EXACT))
def test_known_class(tmp_path, name):
    v = _judge(tmp_path, name, EXACT[name])
    assert v.outcome == "exact", (v.outcome, v.truth, v.figure, v.detail)


@pytest.mark.parametrize("name", list(HONEST))
def test_unknown_class_stays_honest(tmp_path, name):
    v = _judge(tmp_path, name, HONEST[name])
    assert v.outcome in ("exact", "lower", "unknown"), (v.outcome, v.truth, v.figure, v.detail)


# A tensor whose making the analysis did not see (BROKEN) stays of unknown class
# inside a function it is handed to, whose boundary stands for the argument; one
# an op made is a plain tensor there too.
def test_a_boundary_of_a_tensor_not_seen_made_is_no_class(tmp_path):
    from shapelint.analysis import pytypes
    from shapelint.ops.backward import BROKEN, Origin
    from shapelint.ops.values import TensorV

    edge = Origin(frozenset((BROKEN,)), token=object(), path=("a", 0))
    made = Origin(frozenset())
    assert pytypes.type_of(None, TensorV((2,), origin=frozenset((edge,)))) is None
    inner = Origin(frozenset((made,)), token=object(), path=("a", 0))
    assert (
        pytypes.tensor_class(pytypes.type_of(None, TensorV((2,), origin=frozenset((inner,)))))
        == "torch.Tensor"
    )
