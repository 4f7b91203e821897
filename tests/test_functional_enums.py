"""Enum classes made by enum's functional API (`Enum("Mode", "A B")`): the same
members as the class statement, so a constructor that compares against them builds
what Python builds. Each module is judged by FlopCounterMode: "exact", or
"honest" (never wrong)."""

from __future__ import annotations

import pytest

from tests.test_module_state import judge

torch = pytest.importorskip("torch")

HEADER = """
import enum
from enum import Enum, IntEnum

import torch
import torch.nn as nn
"""

# M runs its layer `n` times, n decided by comparing `mode` with the members
BODY = """
%s

class M(nn.Module):
    def __init__(self, d, mode=%s):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.n = %s

    def forward(self, x):
        for _ in range(self.n):
            x = self.lin(x)
        return x
"""

CASES = {
    # names in one string, split at whitespace and commas; by identity and `in`
    "string_of_names": (
        'Norm = Enum("Norm", "Batch, Weight Spectral")',
        "Norm.Weight",
        "3 if mode in (Norm.Weight, Norm.Spectral) else 1",
        "exact",
    ),
    # values from 1: `.value` and lookup by value
    "values_numbered_from_one": (
        'Norm = enum.Enum("Norm", ["A", "B", "C"])',
        "Norm.C",
        "mode.value + (Norm(2) is Norm.B)",
        "exact",
    ),
    # start= moves the numbering
    "start": (
        'Norm = Enum("Norm", "A B", start=2)',
        "Norm.B",
        "mode.value",
        "exact",
    ),
    # (name, value) pairs and a dict give each member its value
    "pairs": (
        'Norm = Enum("Norm", [("A", 4), ("B", 2)])',
        "Norm.A",
        "mode.value",
        "exact",
    ),
    "dict": (
        'Norm = Enum("Norm", {"A": 1, "B": 3})',
        'Norm["B"]',
        "mode.value",
        "exact",
    ),
    # an IntEnum's member equals its int, and is that int in arithmetic (int subclass)
    "int_enum": (
        'Norm = IntEnum("Norm", "A B C")',
        "Norm.B",
        "mode.value + (mode == 2)",
        "exact",
    ),
    "int_enum_arithmetic": (
        'Norm = IntEnum("Norm", "A B C")',
        "Norm.C",
        "mode * 2 - (mode - Norm.A)",
        "exact",
    ),
    # a plain Enum's member equals no int
    "plain_member_is_no_int": (
        'Norm = Enum("Norm", "A B")',
        "Norm.B",
        "2 + (mode == 2)",
        "exact",
    ),
    # a mixin type= is not read: the class stays not known, never a wrong count
    "type_keyword_not_read": (
        'Norm = Enum("Norm", "A B", type=int)',
        "Norm.B",
        "3 if mode == Norm.B else 1",
        "honest",
    ),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_against_flop_counter(tmp_path, key):
    made, default, count, how = CASES[key]
    judge(tmp_path, key, BODY % (made, default, count), how, HEADER)


def test_a_sequential_subclass_built_from_a_functional_enum(tmp_path):
    """fastai's ConvLayer: the layers a constructor picks by `norm_type in (...)`,
    handed to `super().__init__(*layers)`."""
    code = """
    NormType = Enum("NormType", "Batch BatchZero Weight Spectral Instance InstanceZero")

    class LinLayer(nn.Sequential):
        def __init__(self, d, norm_type=NormType.Batch):
            bn = norm_type in (NormType.Batch, NormType.BatchZero)
            layers = [nn.Linear(d, d, bias=not bn)]
            if bn:
                layers.append(nn.BatchNorm1d(d))
            super().__init__(*layers)

    class M(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.a = LinLayer(d)
            self.b = LinLayer(d, NormType.Weight)

        def forward(self, x):
            return self.b(self.a(x))
    """
    judge(tmp_path, "conv_layer", code, "exact", HEADER)
