"""The stubs of ops torch's flop counter gives no forward FLOPs (cdist, var_mean,
cosine_similarity, pairwise_distance, copy_ into a view, index_put, the sdpa_kernel context manager):
the figures, backward and saved tensors of modules around them against
FlopCounterMode and saved_tensors_hooks, as the modules differential judges them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from benchmarks.modules_differential import saved_bytes
from shapelint.cli.options import analysis_options, load_config
from shapelint.cost.target import run_target
from shapelint.notation.target import Target

torch = pytest.importorskip("torch")
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

PATH = Path(__file__).parent / "data" / "reductions" / "modules.py"
X = (2, 30, 8)


def _module():
    spec = importlib.util.spec_from_file_location("reduction_modules", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _truth(name: str) -> tuple[int, int, list[int], int]:
    torch.manual_seed(0)
    m = getattr(_module(), name)()
    x = torch.randn(*X)
    with sdpa_kernel([SDPBackend.MATH]), FlopCounterMode(display=False) as fc:
        out = m(x)
    with FlopCounterMode(display=False) as bc:
        out.sum().backward()
    return fc.get_total_flops(), bc.get_total_flops(), list(out.shape), saved_bytes(m, x)


def _static(name: str) -> dict:
    options = analysis_options(load_config([PATH], None), dtype=None, dims={})
    given = f"x={','.join(map(str, X))}"
    return run_target(Target(str(PATH), name), [], [given], {}, options, training=True)


@pytest.mark.parametrize(
    "name",
    [
        "Dist",
        "DistSmall",
        "DistNoMm",
        "DistP1",
        "VarMean",
        "AddInPlace",
        "Unsqueezed",
        "Projected",
        "NumpyNames",
        "Spectrogram",
        "Metadata",  # an einsum of two operands: what ATen's einsum saves (ops/einsum_saved.py)
        # a linear layer's reshape of a strided view, a copy by its strides (ops/strides.py)
        "CopyInto",
        "SetItem",
        "Pairwise",  # F.pairwise_distance: norm(x1 - x2 + eps, p, -1, keepdim)
        "PairwiseRow",
    ],
)
def test_forward_backward_and_saved_equal_torch(name):
    forward, backward, shape, saved = _truth(name)
    t = _static(name)
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == forward
    assert t["backward_complete"], t["backward_unknown"]
    assert t["flops_backward_value"] == backward
    assert t["activation_complete"], t["activation_unknown"]
    assert t["activation_bytes_value"] == saved
    assert [int(d) for d in t["output"]] == shape


# Kernel: what attention saves; Permuted: the layout of a tensor indexed by a
# tensor: not modelled, so the saved bytes are a lower bound.
@pytest.mark.parametrize("name", ["Cosine", "IndexPut", "Kernel", "Permuted"])
def test_saved_not_modelled_is_a_lower_bound(name):
    forward, backward, shape, saved = _truth(name)
    t = _static(name)
    assert t["complete"] and t["flops_value"] == forward, t["unknown"]
    assert t["backward_complete"] and t["flops_backward_value"] == backward
    assert not t["activation_complete"]
    assert t["activation_bytes_value"] is None or t["activation_bytes_value"] <= saved
    assert [int(d) for d in t["output"]] == shape


def test_cdist_columns_that_differ_are_an_error_as_in_torch():
    from tests._stubcheck import run_both

    o = run_both("torch.cdist", (torch.randn(2, 6, 4), torch.randn(2, 5, 3)), {})
    assert o.error is not None
    assert [i.code for i in o.result.issues] == ["SHP309"]


def test_numpy_names_bind_only_where_torch_parses_the_call():
    """Stub-described ops of torch and Tensor that torch writes in Python take
    only their own parameter names (`torch.norm(x, axis=1)` is a TypeError):
    PYTHON_DEFINED is exactly those, as torch says."""
    import inspect

    from shapelint.ops.stub_ops import PYTHON_DEFINED, registry

    written = set()
    for name in registry().names():
        op = name.removeprefix("torch.Tensor.").removeprefix("torch.")
        if op == name or "." in op:
            continue
        owner = torch.Tensor if name.startswith("torch.Tensor.") else torch
        if inspect.isfunction(getattr(owner, op, None)):
            written.add(name)
    assert written == PYTHON_DEFINED
    with pytest.raises(TypeError):
        torch.norm(torch.ones(2, 3), axis=1)
