"""A method that grows a list its object holds (`self.keys.append(k)`) changes
the caller's object: the run places the grown list in the method's `self`, which
the caller takes back (call_resolution.mutate_list, in_place._placed_deep). Each
module held to torch: complete figures equal to FlopCounterMode's, and where a
holder of the list the analysis cannot follow is read, no complete figure."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from shapelint.cli.options import analysis_options, load_config
from shapelint.cost.target import run_target
from shapelint.notation.target import Target

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

PATH = Path(__file__).parent / "data" / "objects" / "list_methods.py"


def _torch(name: str) -> tuple[int, list[int]]:
    spec = importlib.util.spec_from_file_location("list_methods", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fc = FlopCounterMode(display=False)
    with fc:
        out = getattr(mod, name)()(torch.randn(2, 8))
    return fc.get_total_flops(), list(out.shape)


def _static(name: str) -> dict:
    options = analysis_options(load_config([PATH], None), dtype=None, dims={})
    return run_target(Target(str(PATH), name), [], ["x=2,8"], {}, options)


@pytest.mark.parametrize("name", ["Accumulated", "Extended", "Kept"])
def test_the_grown_list_is_the_callers(name):
    t = _static(name)
    flops, shape = _torch(name)
    assert t["complete"], t["unknown"]
    assert t["flops_value"] == flops
    assert t["output"] == [str(d) for d in shape]


@pytest.mark.parametrize("name", ["HeldBefore", "Shared", "KeptAlias"])
def test_another_holder_of_the_list_is_never_stale(name):
    """torch concatenates both keys through the other holder too: a figure that
    read the list as it was (one key, or none) would be complete and wrong."""
    t = _static(name)
    flops, _ = _torch(name)
    assert not t["diagnostics"], t["diagnostics"]  # torch runs it
    if t["complete"]:
        assert t["flops_value"] == flops
    else:
        assert t["flops"] is None or int(t["flops"]) <= flops
