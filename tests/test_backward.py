"""Backward FLOPs (target.flops_backward) against torch's flop counter under
`out.sum().backward()`, with inputs that need no grad: frozen layers, products
of two activations, convolutions, checkpointing, no_grad and detach."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from shapelint.cli.options import analysis_options, load_config
from shapelint.cost.target import run_target
from shapelint.notation.target import Target

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

PATH = Path(__file__).parent / "data" / "backward" / "modules.py"

CASES = [
    ("Chain", (2, 4, 8)),
    ("BuiltDetached", (2, 4, 8)),
    ("Attn", (2, 4, 8)),
    ("Einsum", (2, 4, 8)),
    ("Buffered", (2, 4, 8)),
    ("Conv", (2, 4, 8, 8)),
    ("Ckpt", (2, 4, 8)),
    ("NoGrad", (2, 4, 8)),
    ("Detach", (2, 4, 8)),
    ("Repeat", (2, 4, 8)),
    ("ManyReturned", (2, 4, 8)),
    ("Sdpa3d", (2, 4, 8)),
    ("SdpaHeads", (2, 4, 8)),
    ("SdpaMask2d", (2, 4, 8)),
    ("SdpaMask3d", (2, 4, 8)),
    ("SdpaWideValue", (2, 4, 8)),
    ("SdpaSplitHeads", (2, 4, 8)),
    ("SdpaRearranged", (2, 4, 8)),
    ("SdpaStridedKey", (2, 4, 8)),
    ("SdpaRepeatedQueries", (2, 4, 8)),
    ("SdpaGrouped", (2, 4, 8)),
    ("SdpaGroupedValueHeads", (2, 4, 8)),
    ("Warp", (2, 4, 8, 8)),
    ("Solve", (2, 4, 8)),
    ("Special", (2, 4, 8)),
    ("SetOff", (2, 4, 8)),
    ("SetOffInHelper", (2, 4, 8)),
    ("GridNoGrad", (2, 4, 8)),
    ("FrozenInSubmoduleInit", (2, 4, 8)),
    ("CustomBackward", (2, 4, 8)),
    ("CustomBackwardFirst", (2, 4, 8)),
    ("TensorsInParameterList", (2, 4, 8)),
    ("TensorsInParameterDict", (2, 4, 8)),
    ("VecAtBatched", (2, 4, 8)),
    ("VecAtSwapped", (2, 4, 8)),
    ("Norms", (2, 4, 8)),
    ("DropPathFloor", (2, 4, 8)),
    ("SingularValues", (2, 4, 8)),
    ("MatrixNorms", (2, 4, 8)),
    ("LinalgSvdNorms", (2, 4, 8)),
    ("Inverses", (2, 4, 8)),
    ("SvdValuesAlone", (2, 4, 8)),
    ("MappedFirst", (2, 4, 8)),
    ("MappedSum", (2, 8, 8)),
    ("GateOfUnknownData", (2, 4, 8)),
    ("FusedOrSplitProjection", (2, 4, 8)),
    ("CastToParameterDtype", (2, 4, 8)),
    ("ReboundUnread", (2, 4, 8)),
    ("EpsOfDtype", (2, 4, 8)),
    ("FoldThenScaled", (2, 4, 8)),
    ("JoinedComputeDtype", (2, 4, 8)),
    ("HalfOrFloatMean", (2, 4, 8)),
    ("PromotedDtype", (2, 4, 8)),
    ("ComplexScalars", (2, 4, 8)),
]


def _module():
    spec = importlib.util.spec_from_file_location("backward_modules", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _torch_counts(name: str, shape) -> tuple[int, int]:
    """torch's counts, CPU's fused attention kernel by torch's CUDA formulas (the
    convention; a math path's products are counted as they run)."""
    from tests.helpers import cuda_attention_formulas

    m = getattr(_module(), name)()
    x = torch.randn(*shape)
    fc = FlopCounterMode(display=False, custom_mapping=cuda_attention_formulas())
    with fc:
        out = m(x)
    forward = fc.get_total_flops()
    fc = FlopCounterMode(display=False, custom_mapping=cuda_attention_formulas())
    with fc:
        out.sum().backward()
    return forward, fc.get_total_flops()


def _static(name: str, shape) -> dict:
    options = analysis_options(load_config([PATH], None), dtype=None, dims={})
    given = f"x={','.join(map(str, shape))}"
    return run_target(Target(str(PATH), name), [], [given], {}, options)


@pytest.mark.parametrize(("name", "shape"), CASES)
def test_backward_equals_flop_counter(name, shape):
    forward, backward = _torch_counts(name, shape)
    t = _static(name, shape)
    assert t["complete"] and t["flops_value"] == forward
    assert t["backward_complete"], t["backward_unknown"]
    assert t["flops_backward_value"] == backward
    assert t["flops_step_value"] == forward + backward


@pytest.mark.parametrize(
    "name",
    [
        "SdpaHeads",
        "SdpaSplitHeads",
        "SdpaRearranged",
        "SdpaStridedKey",
        "SdpaWideValue",
        "SdpaRepeatedQueries",
        "SdpaGrouped",
    ],
)
def test_attention_backward_for_all_sizes_is_torchs_at_each(name):
    """With the batch and length left as names, which kernel CPU runs SDPA with
    follows from each operand's last-axis stride as a formula (ops/sym_strides.py):
    the backward is complete, and torch's count at each size is the formula's."""
    from shapelint.notation.symbolic import parse_expr

    t = _static(name, ("B", "T", 8))
    assert t["complete"] and t["backward_complete"], t["backward_unknown"]
    forward, backward = parse_expr(t["flops"]), parse_expr(t["flops_backward"])
    for b, n in ((2, 4), (3, 5), (1, 7)):
        want = _torch_counts(name, (b, n, 8))
        assert (forward.evaluate({"B": b, "T": n}), backward.evaluate({"B": b, "T": n})) == want


def test_a_kernel_choice_that_turns_on_a_size_of_one_is_no_formula():
    """A key stepping T along its last axis: torch runs the math path where T > 1
    and the fused kernel at T = 1 (each checked on torch here), so for T a name the
    backward is not known; at a known T it is torch's."""
    t = _static("SdpaKeyStepsLength", ("B", "T", 8))
    assert not t["backward_complete"]
    for b, n in ((2, 4), (2, 1)):
        t = _static("SdpaKeyStepsLength", (b, n, 8))
        assert t["backward_complete"], t["backward_unknown"]
        assert t["flops_backward_value"] == _torch_counts("SdpaKeyStepsLength", (b, n, 8))[1]


def test_a_tensor_made_from_parameters_while_built_leaves_the_backward_a_bound():
    """The first backward runs the backward of the constructor's `self.w @ self.w`
    too: no record of the forward holds it, so the figure is a lower bound, named."""
    forward, backward = _torch_counts("BuiltFromParams", (2, 4, 8))
    t = _static("BuiltFromParams", (2, 4, 8))
    assert t["complete"] and t["flops_value"] == forward
    assert not t["backward_complete"]
    assert int(t["flops_backward"]) < backward
    assert t["backward_unknown"][0]["op"] == "__init__"


def test_an_svd_whose_u_the_loss_reaches_has_no_backward_figure():
    t = _static("SvdVectorsReached", (2, 4, 8))
    assert t["complete"] and not t["backward_complete"]
    assert int(t["flops_backward"]) <= _torch_counts("SvdVectorsReached", (2, 4, 8))[1]


@pytest.mark.parametrize("name", ["NormTriedThenOther", "NormEitherWay"])
def test_alternatives_free_forward_but_not_backward_are_no_sum(name):
    """The loss reaches the value two alternatives join to: only one of them ran,
    so neither one's backward is a part of a figure; what is known is a bound."""
    t = _static(name, (2, 4, 8))
    assert t["complete"] and not t["backward_complete"]
    assert int(t["flops_backward"]) <= _torch_counts(name, (2, 4, 8))[1]


def test_alternatives_of_one_backward_the_loss_reaches_apart_are_no_figure():
    """Two branches of the same forward and backward, of which the loss reaches the
    whole of one and a third of the other: torch's count depends on the branch
    that runs (x.sum() > 0 here, false for this input), so no figure, and the bound
    stays below torch's either way."""
    t = _static("FusedOrSplitQueryOnly", (2, 4, 8))
    assert t["complete"] and not t["backward_complete"]
    assert "alternatives" in t["backward_unknown"][0]["why"]
    for sign in (1, -1):
        m = _module().FusedOrSplitQueryOnly()
        x = sign * torch.rand(2, 4, 8)
        with FlopCounterMode(display=False):
            out = m(x)
        fc = FlopCounterMode(display=False)
        with fc:
            out.sum().backward()
        assert int(t["flops_backward"]) <= fc.get_total_flops()


def test_a_list_with_a_lost_tensor_leaves_what_the_loss_reaches_unknown():
    t = _static("StackLost", (2, 4, 8))
    forward, backward = _torch_counts("StackLost", (2, 4, 8))
    assert t["complete"] and t["flops_value"] == forward
    assert not t["backward_complete"]
    assert t["flops_backward"] is None or int(t["flops_backward"]) <= backward


def test_frozen_first_layer_computes_no_input_gradient():
    """The frozen layer fed the input costs nothing backward; the next one only
    its weight's gradient: less than twice the forward."""
    t = _static("Chain", (2, 4, 8))
    rows = [(c["op"], c["flops_value"], c["flops_backward_value"]) for c in t["calls"]]
    linears = [r for r in rows if r[0].endswith("Linear.__call__")]
    assert [fb for _, _, fb in linears] == [0, linears[1][1], 2 * linears[2][1]]


def test_grouped_conv_counts_the_real_work_and_says_so():
    """torch 2.13 counts a grouped convolution's weight gradient groups times over:
    shapelint counts the work (the weight gradient the size of the forward) and
    names the convention; torch's figure is that much larger."""
    forward, torch_backward = _torch_counts("Grouped", (2, 4, 8, 8))
    t = _static("Grouped", (2, 4, 8, 8))
    dense = 2 * 2 * 8 * 4 * 9 * 64  # a: weight gradient only (its input needs none)
    depthwise = 2 * 2 * 8 * 1 * 9 * 64  # dw: forward-sized input and weight gradients
    assert t["flops_backward_value"] == dense + 2 * depthwise
    assert torch_backward == dense + depthwise + 8 * depthwise
    assert [c["name"] for c in t["conventions"]] == ["grouped_conv_backward"]


def test_non_reentrant_checkpoint_is_a_lower_bound():
    """use_reentrant=False stops recomputing early (what each op saves): the
    backward is not known, and what is known of it stays below torch's."""
    _, backward = _torch_counts("CkptNR", (2, 4, 8))
    t = _static("CkptNR", (2, 4, 8))
    assert t["complete"] and not t["backward_complete"]
    assert t["flops_backward_value"] is None
    assert int(t["flops_backward"]) <= backward
    assert "use_reentrant=False" in t["backward_unknown"][0]["why"]


def test_a_freeze_not_followed_leaves_backward_unknown():
    """`for _, p in self.emb.named_parameters(): p.requires_grad = False` is not
    followed (trainable params `?`): the backward is `?`, not the figure with every
    parameter trainable (which is above torch's)."""
    _, backward = _torch_counts("FrozenByName", (2, 4, 8))
    t = _static("FrozenByName", (2, 4, 8))
    assert t["trainable_params"] == "?"
    assert t["flops_backward"] is None and not t["backward_complete"]
    assert backward == 1024


def test_requires_grad_set_in_a_helper_leaves_backward_unknown():
    """`t.requires_grad = True` on a plain tensor in a function the constructor
    calls: torch computes that tensor's gradient too (1,536 where the Linear alone
    gives 1,024); main printed a complete 1,024. Not followed: `?`, never low."""
    _, backward = _torch_counts("TrackedInHelper", (4, 8))
    t = _static("TrackedInHelper", (4, 8))
    assert backward == 1536
    assert t["complete"] and t["flops_value"] == 1024
    assert t["flops_backward"] is None and not t["backward_complete"]


def test_a_freeze_over_parameters_is_followed():
    """`for p in self.emb.parameters(): p.requires_grad = False`: the emb layer's
    own Parameters frozen, its input gradient not computed: torch's backward."""
    _, backward = _torch_counts("FrozenInInit", (2, 4, 8))
    t = _static("FrozenInInit", (2, 4, 8))
    assert t["trainable_params"] == "72" and t["backward_complete"]
    assert t["flops_backward_value"] == backward == 1024


@pytest.mark.parametrize("name", ["FrozenInForward", "FrozenByAssignInForward"])
def test_a_freeze_in_the_forward_leaves_backward_unknown(name):
    """A forward that sets requires_grad on its built module's Parameter: not
    placed, so the backward is `?` (the trainable count is torch's as built)."""
    _, backward = _torch_counts(name, (2, 4, 8))
    t = _static(name, (2, 4, 8))
    assert backward == 2048  # fc2's two gradients; fc1's weight needs none
    assert t["complete"] and t["trainable_params"] == "144"
    assert t["flops_backward"] is None and not t["backward_complete"]
    assert t["activation_bytes"] is None and not t["activation_complete"]


def test_a_freeze_by_apply_leaves_trainable_and_backward_unknown():
    _, backward = _torch_counts("FrozenByApply", (2, 4, 8))
    t = _static("FrozenByApply", (2, 4, 8))
    assert backward == 4096  # fc2's two gradients; fc1's weight is frozen
    assert t["params"] == "280" and t["trainable_params"] == "?"
    assert t["flops_backward"] is None and not t["backward_complete"]


def test_unknown_grad_mode_leaves_backward_unknown(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(
        "import torch\nimport torch.nn as nn\n\n\n"
        "class M(nn.Module):\n"
        "    def __init__(self, d=8, train=True):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(d, d)\n"
        "        self.flag = train\n\n"
        "    def forward(self, x, flag):\n"
        "        with torch.set_grad_enabled(flag):\n"
        "            return self.fc(x)\n"
    )
    options = analysis_options(load_config([src], None), dtype=None, dims={})
    t = run_target(Target(str(src), "M"), [], ["x=2,8"], {}, options)
    assert t["complete"] and not t["backward_complete"]
    assert t["flops_backward_value"] is None


def test_train_faces_print_forward_backward_and_step_with_a_backward_column():
    from shapelint.cost.target import TARGET_RENDERERS, View

    t = _static("Chain", (2, 4, 8))
    t["train"] = True
    text = TARGET_RENDERERS["text"](t, View())
    lines = text.splitlines()
    assert any(line.split()[:2] == ["backward", "8.19"] for line in lines), text
    assert any(line.split()[:2] == ["step", "16.4"] for line in lines), text
    rows = {line.split()[0]: line.split() for line in lines if line.startswith("    ")}
    # module, kind, params, %, FLOPs, %, backward, %: the frozen layer costs 0 backward
    assert rows["a"][6] == "0" and rows["c"][6] == "4.1k"
    markdown = TARGET_RENDERERS["markdown"](t, View())
    assert "| backward | % |" in markdown and "step" in markdown
    assert "backward" in TARGET_RENDERERS["github"](t, View())


@pytest.mark.parametrize("flash", [False, True])
def test_nanogpt_like_backward_equals_flop_counter(flash):
    """A GPT whose lm_head reads `x[:, [-1], :]` (indexing keeps grad), with its
    attention as matmuls or as F.scaled_dot_product_attention (counted by torch's
    CUDA formulas, forward and backward: on CPU the fused kernel is mapped to them)."""
    from tests.helpers import cuda_attention_formulas

    path = Path(__file__).parent / "data" / "modules" / "nanogpt_like.py"
    spec = importlib.util.spec_from_file_location("nanogpt_like_bw", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cfg = f"GPTConfig(n_layer=2, n_head=2, n_embd=16, flash={flash})"
    m = mod.GPT(mod.GPTConfig(n_layer=2, n_head=2, n_embd=16, flash=flash)).eval()
    logits, _ = m(torch.randint(0, 100, (2, 8)))
    cuda_formulas = cuda_attention_formulas()
    fc = FlopCounterMode(display=False, custom_mapping=cuda_formulas)
    with fc:
        logits.sum().backward()
    options = analysis_options(load_config([path], None), dtype=None, dims={})
    t = run_target(Target(str(path), "GPT"), [f"config={cfg}"], ["idx=2,8:int"], {}, options)
    assert t["backward_complete"], t["backward_unknown"]
    assert t["flops_backward_value"] == fc.get_total_flops()


def test_costless_analysis_builds_no_backward_graph():
    """`check` (costs off) gives an op's result the grad torch gives it, and the
    same storage as a costed run, but a node with no parents: only the walk from
    the loss, a cost's, reads them (ops/backward.after_op's graph)."""
    from shapelint.notation.symbolic import Expr
    from shapelint.ops import backward
    from shapelint.ops.saved import storage_of
    from shapelint.ops.values import STAND_IN_COST, TensorV

    x = torch.randn(2, 3, requires_grad=True)
    cases = [
        ("torch.Tensor.transpose", lambda t: t.transpose(0, 1)),
        ("torch.Tensor.detach", lambda t: t.detach()),
        ("torch.Tensor.long", lambda t: t.long()),
    ]
    given = [TensorV(None, "float32", grad=True)]
    mine = backward.after_op(
        "torch.Tensor.add", given, {}, TensorV(None, "float32"), STAND_IN_COST
    )[0]
    shape = (Expr.const(3), Expr.const(2))
    for name, op in cases:
        out = op(x)
        made = TensorV(shape, str(out.dtype).removeprefix("torch."))
        costed = backward.after_op(name, [mine], {}, made, STAND_IN_COST)[0]
        plain = backward.after_op(name, [mine], {}, made, STAND_IN_COST, graph=False)[0]
        assert plain == costed and plain.grad is costed.grad is out.requires_grad, name
        # a view of the operand's storage in both, or a storage of its own in both
        assert (storage_of(plain) is storage_of(mine)) == (storage_of(costed) is storage_of(mine))
        (node,) = plain.origin if plain.origin else (None,)
        assert node is None or not node.parents, name
        if out.requires_grad:
            (costed_node,) = costed.origin
            assert costed_node.parents == mine.origin, name
