"""Backward FLOPs only for the ops the loss reaches (analysis/reached.py): a
result detached, under no_grad, made an index or a mask, dead or stored on self
runs no backward; several returned tensors are summed into the loss. Each module
is checked against torch's flop counter under that loss."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from shapelint.cli.options import analysis_options, load_config
from shapelint.cost.target import run_target
from shapelint.notation.target import Target

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

PATH = Path(__file__).parent / "data" / "backward" / "reach.py"
SHAPE = (2, 8)

# Every one of these has a complete, exact backward.
EXACT = [
    "Detached",
    "Data",
    "NoGradBlock",
    "Argmax",
    "TopkIndices",
    "Compared",
    "Dead",
    "Stored",
    "Pair",
    "Named",
    "Blocks",
    "Written",
    "Appended",
    "Overwritten",
    "Carried",
    "Summed",
    "OverwrittenName",
    "DeadChain",
    "Unpacked",
    "Filled",
    "AugmentedAlias",
    "Listed",
    "EntriesOut",
    "BroadcastOne",
    "BroadcastIndexed",
    "StepCarried",
    "SharedRun",
    "CarriedLast",
    "ReadLate",
    "ReadLateFirst",
    "IndexedTurns",
    "IndexedTurn",
    "WithCache",
]
# These may be not known, but never more than torch counts.
BOUNDED = ["Helper", "CustomFunction", "LastPart"]


def _grad_tensors(out) -> list:
    if isinstance(out, torch.Tensor):
        return [out] if out.requires_grad and out.is_floating_point() else []
    items = out.values() if isinstance(out, dict) else out if isinstance(out, tuple) else ()
    return [t for v in items for t in _grad_tensors(v)]


def _torch_backward(name: str) -> int:
    spec = importlib.util.spec_from_file_location("backward_reach", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    m = getattr(mod, name)()
    out = m(torch.randn(*SHAPE))
    fc = FlopCounterMode(display=False)
    with fc:
        sum(t.sum() for t in _grad_tensors(out)).backward()
    return fc.get_total_flops()


def _static(name: str) -> dict:
    options = analysis_options(load_config([PATH], None), dtype=None, dims={})
    given = f"x={','.join(map(str, SHAPE))}"
    return run_target(Target(str(PATH), name), [], [given], {}, options)


@pytest.mark.parametrize("name", EXACT)
def test_backward_of_what_the_loss_reaches(name):
    t = _static(name)
    assert t["complete"], t["unknown"]
    assert t["backward_complete"], t["backward_unknown"]
    assert t["flops_backward_value"] == _torch_backward(name)


@pytest.mark.parametrize("name", BOUNDED)
def test_backward_never_above_torch(name):
    t = _static(name)
    truth = _torch_backward(name)
    if t["backward_complete"]:
        assert t["flops_backward_value"] == truth
    else:
        assert t["flops_backward"] is None or int(t["flops_backward"]) <= truth


def _symbolic_rows(name: str, rows: int) -> dict:
    """name's target at x=T,8, its backward formula checked at T = rows against
    torch's count on that many rows."""
    options = analysis_options(load_config([PATH], None), dtype=None, dims={})
    t = run_target(Target(str(PATH), name), [], ["x=T,8"], {}, options)
    assert t["backward_complete"], t["backward_unknown"]
    spec = importlib.util.spec_from_file_location("backward_reach", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = getattr(mod, name)()(torch.randn(rows, 8))
    fc = FlopCounterMode(display=False)
    with fc:
        out.sum().backward()
    got = eval(str(t["flops_backward"]).replace("·", "*"), {"T": rows})  # noqa: S307
    assert got == fc.get_total_flops()
    return t


@pytest.mark.parametrize("rows", [2, 5])
def test_a_carried_value_counted_by_one_turn_of_symbolic_count(rows):
    """The loop over the rows of an input of symbolic length, counted by one turn:
    the formula, at each length, is what torch counts (never a complete figure that
    counts the last turn's `p`)."""
    _symbolic_rows("CarriedRows", rows)


@pytest.mark.parametrize("rows", [1, 2, 5])
def test_what_a_loop_of_symbolic_count_leaves_is_its_last_turn(rows):
    """A name the loop rebinds holds after it what its last turn left: the loss
    reaches the value it held before the loop only through the turns' reads, at
    every count of one turn or more (said in the target's conventions)."""
    t = _symbolic_rows("OverwrittenRows", rows)
    assert "loop_turns" in [c["name"] for c in t["conventions"]]


@pytest.mark.parametrize("rows", [1, 3])
def test_a_loop_that_may_run_no_turn_has_no_formula_of_its_turns(rows):
    """`range(T - 1)` runs no turn at T = 1: the loss reaches another w there than
    from T = 2 on, so no complete formula; what is known of it is below torch's."""
    options = analysis_options(load_config([PATH], None), dtype=None, dims={})
    t = run_target(Target(str(PATH), "OverwrittenButOne"), [], ["x=T,8"], {}, options)
    assert not t["backward_complete"]
    spec = importlib.util.spec_from_file_location("backward_reach", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.OverwrittenButOne()(torch.randn(rows, 8))
    fc = FlopCounterMode(display=False)
    with fc:
        out.sum().backward()
    if t["flops_backward"] is not None:
        low = eval(str(t["flops_backward"]).replace("·", "*"), {"T": rows})  # noqa: S307
        assert low <= fc.get_total_flops()


def test_a_returned_plain_object_is_no_part_of_the_loss_and_says_so():
    """The cache returned beside the output holds k's result: `sum(t.sum() for t in
    outputs)` cannot sum it, so k's backward is not reached (EXACT holds the figure
    to torch's), and the conventions name the class not summed. Returned alone,
    there is nothing to sum: no backward figure."""
    t = _static("WithCache")
    assert t["unsummed"] == ["_Cache"]
    loss = [c for c in t["conventions"] if c["name"] == "loss"]
    assert len(loss) == 1 and "_Cache" in loss[0]["statement"]
    alone = _static("CacheOnly")
    assert alone["complete"] and not alone["backward_complete"]
    assert alone["unsummed"] == []


def test_a_dead_result_costs_no_backward_but_its_forward():
    """The dead linear's forward counts; its backward does not, in the calls as in
    the total."""
    t = _static("Dead")
    linears = [c for c in t["calls"] if c["op"].endswith("Linear.__call__")]
    assert [c["flops_value"] for c in linears] == [256, 256]
    assert [c["flops_backward_value"] for c in linears] == [0, t["flops_backward_value"]]
    assert t["flops_backward_value"] == _torch_backward("Dead") > 0


UNDECIDED = Path(__file__).parent / "data" / "backward" / "undecided.py"
FLAG = "SHAPELINT_TEST_SCALE"


def _torch_backward_both(name: str, monkeypatch, flag: str = FLAG, shape=SHAPE) -> list:
    """torch's backward of name with the environment variable its module reads
    unset and set, each as its FlopCounterMode: every value the static figure may
    stand for (CPU attention counted by the CUDA formula, shapelint's convention)."""
    from tests.helpers import cuda_attention_formulas

    cuda_formulas = cuda_attention_formulas()
    got = []
    for on in (False, True):
        if on:
            monkeypatch.setenv(flag, "1")
        else:
            monkeypatch.delenv(flag, raising=False)
        spec = importlib.util.spec_from_file_location("backward_undecided", UNDECIDED)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        torch.manual_seed(0)
        out = getattr(mod, name)()(torch.randn(*shape))
        fc = FlopCounterMode(display=False, custom_mapping=cuda_formulas)
        with fc:
            out.sum().backward()
        got.append(fc)
    return got


def test_an_operand_not_known_may_require_grad(monkeypatch):
    """torch counts 2048 or 4096 as the variable is unset or set: a complete
    figure would be wrong for one of them, so the backward is not known (it was
    2048, the operand of unknown value taken as requiring no grad)."""
    truths = {fc.get_total_flops() for fc in _torch_backward_both("ScaledOrNot", monkeypatch)}
    assert len(truths) == 2
    options = analysis_options(load_config([UNDECIDED], None), dtype=None, dims={})
    t = run_target(Target(str(UNDECIDED), "ScaledOrNot"), [], ["x=2,8"], {}, options)
    assert t["complete"], t["unknown"]  # the forward is known either way
    assert not t["backward_complete"]
    assert t["flops_backward"] is None or int(t["flops_backward"]) <= min(truths)


def test_undecided_alternatives_keep_the_backward_that_runs_either_way(monkeypatch):
    """Fused or written-out attention inside a submodule: the backward is not
    known, and its bound is the linear layers' backward, which torch runs either
    way (it was that of the last layer alone: the submodule's call, one of whose
    calls had an unknown backward, kept nothing)."""
    counters = _torch_backward_both(
        "AttendThenProject", monkeypatch, "SHAPELINT_TEST_UNFUSED", (2, 4, 8)
    )
    aten = torch.ops.aten
    linear = {
        sum(fc.get_flop_counts()["Global"].get(op, 0) for op in (aten.mm, aten.addmm))
        for fc in counters
    }
    truths = {fc.get_total_flops() for fc in counters}
    assert len(linear) == 1 and len(truths) == 2
    options = analysis_options(load_config([UNDECIDED], None), dtype=None, dims={})
    t = run_target(Target(str(UNDECIDED), "AttendThenProject"), [], ["x=2,4,8"], {}, options)
    assert t["complete"], t["unknown"]
    assert not t["backward_complete"]
    assert int(t["flops_backward"]) == linear.pop() < min(truths)
    # the reason names the test and what each alternative's backward costs: with the
    # backward torch runs either way, each is one of torch's two figures
    (entry,) = t["backward_unknown"]
    assert "`self.fused` (line 47)" in entry["why"]
    apart = [int(w) for w in re.findall(r"(\d+) (?:FLOPs )?if", entry["why"])]
    assert {int(t["flops_backward"]) + a for a in apart} == truths


def test_tolist_gives_numbers_whose_count_is_known():
    spec = importlib.util.spec_from_file_location("backward_reach", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    m = mod.Listed()
    t = _static("Listed")
    assert t["params_value"] == sum(p.numel() for p in m.parameters())


def test_a_result_not_seen_into_has_no_backward_where_no_call_runs_any():
    """The loss walk does not see into a returned object: where every call's backward
    is a known 0 the backward is 0 whatever the loss reaches (torch: 0), else unknown."""
    spec = importlib.util.spec_from_file_location("backward_reach", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fc = FlopCounterMode(display=False)
    with fc:
        mod.BoxedScale()(torch.randn(*SHAPE)).t.sum().backward()
    t = _static("BoxedScale")
    assert t["complete"] and t["backward_complete"], t["backward_unknown"]
    assert t["flops_backward_value"] == fc.get_total_flops() == 0
    t = _static("BoxedLinear")
    assert t["complete"] and not t["backward_complete"]
    assert t["flops_backward"] is None
