"""What code asks of the run it is in, decided as that run would: the order of
version numbers (PEP 440, as `packaging.version` parses and compares them), torch
being importable where a forward runs (`importlib.util.find_spec("torch")`), the
installed version of a distribution (`importlib.metadata.version`), and type
tests a tensor always fails (`numpy.ndarray`; fx's `Proxy`, which only tracing
hands a forward). transformers' `is_torch_available()` and `is_tensor(x)` are made
of these. Each module is judged by FlopCounterMode: "exact", or "honest" (never
wrong)."""

from __future__ import annotations

import pytest

from tests.test_module_state import judge

torch = pytest.importorskip("torch")
pytest.importorskip("packaging")

HEADER = """
import importlib.metadata
import importlib.util

import numpy as np
import torch
import torch.fx
import torch.nn as nn
from packaging import version
"""

MODULE = """
class M(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        if %s:
            x = self.lin(x)
        return self.lin(x)
"""

CASES = {
    # a local version sorts after its public one, a release after its pre-releases,
    # a dev release alone before them, a post release after it; trailing zeros do
    # not count; release parts compare as numbers
    "version_order": (
        'version.parse("2.13.0+cpu") >= version.parse("2.6.0")'
        ' and version.parse("1.0.dev1") < version.parse("1.0a1") < version.parse("1.0rc2")'
        ' < version.parse("1.0") < version.parse("1.0+local") < version.parse("1.0.post1")'
        ' and version.parse("1.10") > version.parse("1.9")'
        ' and version.Version("1.0") == version.parse("v1.0.0")'
        ' and version.parse("1.0-1") == version.parse("1.0.post1")',
        "exact",
    ),
    "version_order_false": ('version.parse("2.6.0") > version.parse("2.13.0+cpu")', "exact"),
    # the parts a Version gives (`parse(parse(v).base_version)`)
    "version_parts": (
        '(v := version.parse("2.13.0rc1+cpu")).base_version == "2.13.0"'
        ' and v.local == "cpu" and v.public == "2.13.0rc1" and v.major == 2'
        " and v.minor == 13 and v.micro == 0 and v.release == (2, 13, 0)"
        " and v.is_prerelease and not v.is_devrelease",
        "exact",
    ),
    # torch is importable wherever a forward runs, at the version installed here
    "torch_is_found": ('importlib.util.find_spec("torch") is not None', "exact"),
    "installed_torch_version": (
        'version.parse(importlib.metadata.version("torch")) >= version.parse("2.0")',
        "exact",
    ),
    # `torch.__version__` is torch's TorchVersion, a str whose <, <=, ==, >=, >
    # compare as versions (2.13 is after "2.4", which as strs it is not) against a
    # str or a tuple of parts, from either side (neuralforecast's TokenEmbedding
    # picks a Conv1d's padding by `torch.__version__ >= "1.5.0"`)
    "torch_version_as_a_version": (
        'torch.__version__ >= "2.4" and "2.2" <= torch.__version__'
        ' and torch.__version__ > (2, 3) and not torch.__version__ < "1.5.0"'
        ' and torch.__version__ == importlib.metadata.version("torch")',
        "exact",
    ),
    "torch_version_as_a_version_false": ('torch.__version__ < "2.4"', "exact"),
    # its != is str's own (as versions "2.013.0" is "2.13.0"; as strs it is not), and
    # its methods are a str's
    "torch_version_as_a_str": (
        '(v := torch.__version__.replace(".", ".0", 1)) == torch.__version__'
        " and torch.__version__ != v"
        ' and int(torch.__version__.split(".")[0]) >= 2',
        "exact",
    ),
    # a tensor is no numpy array and, in an eager run, no fx Proxy
    "tensor_is_no_array": (
        "not isinstance(x, np.ndarray) and not isinstance(x, (torch.fx.Proxy, np.ndarray))",
        "exact",
    ),
    # a Version is no string: Python's `==` of the two is False, `<` raises
    "version_and_a_string": ('version.parse("1.0") != "1.0"', "honest"),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_against_flop_counter(tmp_path, key):
    test, how = CASES[key]
    judge(tmp_path, key, MODULE % test, how, HEADER)
