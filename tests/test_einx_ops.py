"""einx's element-by-element functions and get_at (ops/einx_ops.py): the output
shapes einx gives (its documentation's examples, checked against einx 0.4.3 where
it is installed), 0 FLOPs as torch's flop counter counts the element-wise ops and
the indexing einx runs, and what is not sure left unknown."""

from __future__ import annotations

import textwrap

import pytest

from shapelint.notation.symbolic import Expr
from shapelint.ops.einx_ops import einx_call
from shapelint.ops.values import FloatV, IntV, StrV, TensorV
from tests.test_modules import counted, static_target, write


def t(*dims, dtype="float32"):
    return TensorV(
        tuple(Expr.const(d) if isinstance(d, int) else Expr.name(d) for d in dims), dtype
    )


def shape(res):
    return tuple(str(d) for d in res.value.shape)


@pytest.mark.parametrize(
    "qual, pattern, operands, kwargs, expected",
    [
        ("einx.subtract", "i, j -> i j", [t(3), t(5)], {}, ("3", "5")),
        (
            "einx.subtract",
            "b h i, b h j -> b h i j",
            [t(2, 4, 3), t(2, 4, 5)],
            {},
            ("2", "4", "3", "5"),
        ),
        ("einx.add", "b n d, s d -> (b s) n d", [t(2, 3, 8), t(4, 8)], {}, ("8", "3", "8")),
        ("einx.subtract", "j, i -> 1 i j", [t(5), t(3)], {}, ("1", "3", "5")),
        (
            "einx.multiply",
            "b n h, b h n d -> b h n d",
            [t(2, 3, 4), t(2, 4, 3, 8)],
            {},
            ("2", "4", "3", "8"),
        ),
        (
            "einx.where",
            "b n, b n d, -> b n d",
            [t(2, 3, dtype="bool"), t(2, 3, 8), FloatV(0.0)],
            {},
            ("2", "3", "8"),
        ),
        ("einx.less", "i, j -> i j", [t("n"), t("m")], {}, ("n", "m")),
        (
            "einx.get_at",
            "h [c] d, h b n -> h b n d",
            [t(2, 16, 8), t(2, 3, 5, dtype="int64")],
            {},
            ("2", "3", "5", "8"),
        ),
        (
            "einx.get_at",
            "[c] d, b ... -> b ... d",
            [t(16, 8), t(2, 3, 5, dtype="int64")],
            {},
            ("2", "3", "5", "8"),
        ),
        (
            "einx.add",
            "b n, d -> b n d",
            [t(2, 3), t(4)],
            {"d": IntV(Expr.const(4))},
            ("2", "3", "4"),
        ),
    ],
)
def test_output_shape_and_no_flops(qual, pattern, operands, kwargs, expected):
    res = einx_call(qual, [StrV(pattern), *operands], kwargs)
    assert res is not None
    assert shape(res) == expected
    assert res.cost.flops == Expr.const(0) and res.cost.backward == Expr.const(0)


def test_dtypes():
    less = einx_call("einx.less", [StrV("i, j -> i j"), t(3), t(5)], {})
    assert less.value.dtype == "bool"
    picked = einx_call(
        "einx.get_at", [StrV("[c] d, n -> n d"), t(16, 8, dtype="float16"), t(5, dtype="int64")], {}
    )
    assert picked.value.dtype == "float16"
    scaled = einx_call("einx.multiply", [StrV("i, -> i"), t(3, dtype="int64"), FloatV(0.5)], {})
    assert scaled.value.dtype == "float32"


@pytest.mark.parametrize(
    "pattern, operands",
    [
        ("i, j -> i j", [t(3)]),  # an operand missing
        ("i, i -> i", [t(3), t(5)]),  # one axis, two lengths: einx refuses
        ("i -> i j", [t(3)]),  # an output axis nothing gives
        ("(a b) -> a b", [t(6)]),  # a composition whose parts are not given
        ("i, j -> i j", [TensorV(None), t(3)]),  # a rank not known
        ("a..., b -> a... b", [t(2, 3), t(4)]),  # einx notation the einops parser does not read
    ],
)
def test_not_sure_is_not_modelled(pattern, operands):
    assert einx_call("einx.subtract", [StrV(pattern), *operands], {}) is None


def test_a_keyword_that_is_no_length_is_not_modelled():
    assert (
        einx_call("einx.add", [StrV("i, j -> i j"), t(3), t(4)], {"backend": StrV("torch")}) is None
    )


EINX_NET = """
    import einx
    import torch
    import torch.nn as nn
    from einx import get_at


    class Net(nn.Module):
        def __init__(self, dim, codes=16):
            super().__init__()
            self.codebook = nn.Parameter(torch.randn(codes, dim))
            self.proj = nn.Linear(dim, dim)

        def forward(self, x, ids):
            picked = get_at("[c] d, b n -> b n d", self.codebook, ids)
            rel = einx.subtract("b n d, b m d -> b n m d", picked, x)
            return self.proj(rel)
"""

TORCH_NET = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, dim, codes=16):
            super().__init__()
            self.codebook = nn.Parameter(torch.randn(codes, dim))
            self.proj = nn.Linear(dim, dim)

        def forward(self, x, ids):
            picked = self.codebook[ids]
            rel = picked[:, :, None, :] - x[:, None, :, :]
            return self.proj(rel)
"""


def test_a_target_with_einx_calls_is_exact(tmp_path):
    # einx is no dependency of the tests: torch's count of the same computation
    # written with torch's indexing and broadcasting is the judge
    pytest.importorskip("torch")
    import torch

    path = write(tmp_path, "net.py", textwrap.dedent(EINX_NET))
    got = static_target(path, "Net", {"dim": "8"}, {"x": "2,5,8", "ids": "2,3:int"})
    reference = write(tmp_path, "reference.py", textwrap.dedent(TORCH_NET))
    truth = counted(
        reference, "Net(dim=8)", {"x": torch.randn(2, 5, 8), "ids": torch.randint(0, 16, (2, 3))}
    )
    assert got["complete"], got["unknown"]
    assert got["flops_value"] == truth == 2 * 2 * 3 * 5 * 8 * 8


def test_an_einx_function_not_modelled_stays_unknown(tmp_path):
    code = textwrap.dedent(
        """
        import einx
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, x, w):
                return einx.dot("b d, d e -> b e", x, w)
        """
    )
    path = write(tmp_path, "dot.py", code)
    got = static_target(path, "Net", {}, {"x": "2,8", "w": "8,4"})
    assert not got["complete"]
