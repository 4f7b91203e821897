"""Activation memory (target.activation_bytes) against the tensors torch saves
for backward, seen through torch.autograd.graph.saved_tensors_hooks: the bytes of
the distinct storages saved, parameters, buffers and the input left out (the
convention of ops/saved.py, docs/costs.md)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from benchmarks.modules_differential import saved_bytes
from shapelint.cli.options import analysis_options, load_config
from shapelint.cost.target import run_target
from shapelint.notation.target import Target

torch = pytest.importorskip("torch")

PATH = Path(__file__).parent / "data" / "saved" / "modules.py"
SEQ = (2, 3, 8)
IMAGE = (2, 4, 5, 5)

# (module, input shape, training): the figure torch's saved tensors give.
EXACT = [
    ("Lin", SEQ, True),
    ("EinsumDiagonal", SEQ, True),
    ("ManyReturned", SEQ, True),
    ("DataRead", SEQ, True),
    ("ConjOfReal", SEQ, True),
    # `p.data = t` in a forward: p on t's storage, which the run made
    ("MaskedWeight", IMAGE, True),
    ("MaskedTwice", IMAGE, True),
    ("BoundBeforeStore", SEQ, True),
    ("MLP", SEQ, True),
    ("ReluMLP", SEQ, True),
    ("Norm", SEQ, True),
    ("Attention", SEQ, True),
    ("ConvBnRelu", IMAGE, True),
    ("ConvBnRelu", IMAGE, False),
    ("LPPooled", IMAGE, True),
    # a table a first forward makes and registers as a buffer is, for that forward,
    # a tensor it made: an activation where cdist saves it (buffers are those the
    # module held as the forward began)
    ("TableInForward", SEQ, True),
    ("FunctionalBn", IMAGE, True),
    ("FunctionalBn", IMAGE, False),
    ("Dropped", SEQ, False),
    ("Frozen", SEQ, True),
    ("Ckpt", SEQ, True),
    ("Gated", SEQ, True),
    ("Stack", SEQ, True),
    ("Picked", SEQ, True),
    ("Twice", SEQ, True),
    ("Again", SEQ, True),
    ("Heads", SEQ, True),
    ("HeadsLayer", SEQ, True),
    ("Cross", SEQ, True),
    ("CrossLoop", SEQ, True),
    ("CastNorm", SEQ, True),
    # `mask.to(dtype=x.dtype)` of an int mask, x's dtype not known: that dtype (main
    # kept the mask's int64 and counted 96 bytes where torch saves 48)
    ("MaskCast", SEQ, True),
    # a buffer's tensor held under a plain name too (`self.c = t`): a buffer's
    # storage, no activation (main: 32 B where torch saves none of its own)
    ("BufferAlias", SEQ, True),
    # an int mask cast to x's dtype written positionally, or through x itself: x's
    # dtype, not the mask's (main kept int64: 48 B for torch's 24)
    ("MaskToDtype", SEQ, True),
    ("MaskTypeAs", SEQ, True),
    ("MaskToTensor", SEQ, True),
    ("MaskLike", SEQ, True),
    ("MaskToFirstParameter", SEQ, True),
    ("MaskLikeFirstParameter", SEQ, True),
    # gather saves its input beside the index (main: 612 B for torch's 756; found by
    # gen_modules' activation judge, tens_gather_scatter)
    ("GatherSaved", (2, 3, 6), True),
    # a generator's layers walked by `for` save their inputs, the caller's tensor
    # among them (main: 0 B for torch's 768, the loop's first evaluation of the call
    # left them in the ledger; found by gen_modules' activation judge)
    ("GeneratorSteps", SEQ, True),
    ("GeneratorListed", SEQ, True),
    ("Swapped3", SEQ, True),
    ("Swapped4", SEQ, True),
    ("Warp", IMAGE, True),
    ("Solve", SEQ, True),
    ("Unpacked", SEQ, True),
    ("RowLoop", SEQ, True),
    ("Pairs", SEQ, True),
    ("Grid", SEQ, True),
    ("Moved", SEQ, True),
    ("MovedHeads", SEQ, True),
    ("Leaky", SEQ, True),
    ("CarriedMask", SEQ, False),
    ("Spectrum", SEQ, True),
    ("Phased", SEQ, True),
    ("RealSpectra", SEQ, True),
    ("Entropic", SEQ, True),
    # a part along an inner axis, folded by a layer: a view where its axes longer
    # than 1 lie on one side of the cut (main: SplitInner 64 B, a copy, for 192 B)
    ("SplitInner", SEQ, True),
    ("SplitMiddle", SEQ, True),
    ("ChunkLast", SEQ, True),
    # a fold merges all but the last axis (Linear, matmul beside a matrix), a batched
    # matmul its batch axes: a part's swap copies in the first, not in the second
    # (before: 840 B for torch's 648, 576 for 384, 384 for 768, each complete)
    ("ChunkedScores", SEQ, True),
    ("ChunkedScores4d", SEQ, True),
    ("SwappedIntoLinear", SEQ, True),
    # a layer held in a plain list, dict or object is no submodule: its weight is
    # an activation to torch's hooks (main: ListedAlias 384 B complete for 640,
    # HeldByPlain 384 for 896); one registered elsewhere too stays a Parameter
    ("ListedAlias", SEQ, True),
    ("HeldByPlain", SEQ, True),
    ("TiedInList", SEQ, True),
    # LayerNorm, GroupNorm, BatchNorm in a plain list (main: 664 B complete for 776)
    ("NormInList", SEQ, True),
    # F.normalize (its norm and the clamped norm), GroupNorm (mean and rstd per group;
    # a tensor not contiguous copied first): before, lower bounds naming them
    ("Normalized", SEQ, True),
    ("Grouped", SEQ, True),
    # torch.einsum / einops.einsum of two operands, as ATen's einsum runs them (before:
    # lower bounds naming the einsum)
    ("EinsumScale", SEQ, True),
    ("EinsumPairs", SEQ, True),
    ("EinsumPairs", (1, 3, 8), True),
    ("EinsumPairs", (2, 1, 8), True),
    ("EinsumHeads", SEQ, True),
    # elementwise math, reductions, activations and pools with what their derivatives
    # read (before: lower bounds naming the first of them)
    ("MathSaves", SEQ, True),
    ("ActivationSaves", SEQ, True),
    ("PoolSaves", IMAGE, True),
    ("RmsNormed", SEQ, True),
    ("SliceWritten", SEQ, True),
    ("NumberWritten", SEQ, True),
    # an in-place tensor method's saved result is its receiver's storage
    ("ReluMethodInPlace", SEQ, True),

    # a layer's padding_mode other than "zeros": the padded copy saved
    ("CircularConv", SEQ, True),
    ("ReflectConv", SEQ, True),
    ("SameEvenConv", SEQ, True),
    # a memoised helper returning its argument hands back the reusing call's tensor
    ("ReturnsItsArgument", SEQ, True),
    # strides followed through views (ops/strides.py): a transposed einsum operand,
    # a part of a split reshaped, heads rearranged out of a chunk of a projection,
    # an elementwise result of a transpose (TensorIterator keeps its order), basic
    # and list indexing (before: lower bounds naming the einsum, the conv, the mul;
    # ElemLinearTwice a complete 384 B for torch's 576)
    ("EinsumStrided", SEQ, True),
    ("SplitChannelsReshaped", IMAGE, True),
    ("ChunkHeads", SEQ, True),
    # tensor_split's parts: views of the projection as split's are (main: a complete
    # figure torch contradicts, 64 B for 128 at [2, 3, 8])
    ("TensorSplitParts", SEQ, True),
    ("TensorSplitParts", (1, 3, 8), True),
    ("TensorSplitQkv", SEQ, True),
    ("Vecdots", SEQ, True),
    ("ConvChunkHeads", IMAGE, True),
    ("ElemLinearTwice", SEQ, True),
    ("SlicedMul", SEQ, True),
    ("ListIndexedMul", SEQ, True),
    ("MatrixByBatch", SEQ, True),
    ("MatrixByBatchT", SEQ, True),
    ("QkvUnpacked", SEQ, True),
    ("BnRelu6Conv", (2, 4, 8, 8), True),
    ("BnRelu6Strided", (2, 4, 8, 8), True),
    # scaled_dot_product_attention on CPU's fused kernel (the path its saved= takes)
    # lays its result out like the query (before: a lower bound naming the layer
    # after it, whose fold of it might copy)
    ("Sdpa", SEQ, True),
    # with a 2-D or 4-D mask too: the fused kernel keeps the mask (a boolean one
    # converted to the query's dtype); main had no figure
    ("SdpaBoolMask", SEQ, True),
    ("SdpaPaddingMask", SEQ, True),
    ("SdpaGated", SEQ, True),
    ("SdpaPartsHeads", SEQ, True),
    # grouped-query heads (enable_gqa): the fused kernel too (main: no figure)
    ("SdpaGrouped", SEQ, True),
    ("LayerHeads", SEQ, True),
    # an einsum's result laid out as torch's einsum leaves it
    ("EinsumOutOrder", SEQ, True),
    ("EinsumMulOrder", SEQ, True),
    # a call served by the analysis of an equal call where other of its tensors were
    # saved before it (Reused), or its input is a view of a storage the first call
    # saved whole (ViewReused): run again, as torch saves again (before: lower
    # bounds naming the call)
    ("Reused", SEQ, True),
    ("ViewReused", SEQ, True),
    ("NormedChunks", SEQ, True),
    # a product's layout kept when its stub chooses the dtype (rotary embedding)
    ("RotaryThenAttention", SEQ, True),

    # nn.MultiheadAttention, math path and fused, batch_first or not, one tensor or
    # several (ops/attention_saved.py; main: lower bounds naming the layer)
    ("MhaSelf", SEQ, True),
    ("MhaSelf", (1, 3, 8), False),
    ("MhaSelf", (3, 1, 8), True),
    ("MhaSelfFirst", SEQ, True),
    ("MhaSelfFirst", (1, 3, 8), True),
    ("MhaSelfFused", SEQ, True),
    ("MhaSelfFirstFused", SEQ, False),
    ("MhaMasked", SEQ, True),
    # masks on the fused path: the one SDPA keeps (main: no figure)
    ("MhaMaskedFused", SEQ, True),
    ("MhaPaddedFused", SEQ, True),
    ("MhaMaskedPaddedFused", SEQ, True),
    ("MhaCausalFused", SEQ, True),
    ("MhaCross", SEQ, True),
    ("MhaCrossFirst", SEQ, True),
    ("MhaCrossFirst", (3, 1, 8), True),
    ("MhaCrossFused", SEQ, True),
    ("MhaApart", SEQ, True),
    ("MhaApartFirstFused", SEQ, True),
    # query is key, value another: one tensor projected twice, each fold a view of
    # its storage (weighed once) or, laid out otherwise, a copy each (main: no figure)
    ("MhaSharedQueryKey", SEQ, True),
    # nn.RNNCell, as ATen's composite cell runs on CPU (main: no figure)
    ("RnnCellTwice", SEQ, True),
    ("MhaSharedQueryKeyFirst", SEQ, True),
    ("MhaSharedQueryKeyPermuted", SEQ, True),
    # pads by mode, upsampling (main: lower bounds naming F.pad, F.interpolate)
    ("Padded", SEQ, True),
    ("Resampled", IMAGE, True),
    # per-op rules from derivatives.yaml, each checked against saved_tensors_hooks
    ("Powers", SEQ, True),
    ("PowBuffer", SEQ, True),
    ("Chosen", SEQ, True),
    ("NoExperts", SEQ, True),
    ("TensorDots", SEQ, True),
    ("NormedHeads", SEQ, True),
    ("ReusedAfterSaved", SEQ, True),
    ("AugmentedInPlace", SEQ, True),
    ("Acts", SEQ, True),
    ("SixThenLayer", SEQ, True),
    ("Inst", (2, 4, 3, 4, 5), True),
    ("Inst", (2, 4, 3, 4, 5), False),
    ("Inst1", (2, 4, 7), True),
    ("Inst1", (2, 4, 7), False),
    ("Channels", (2, 4, 3, 3), False),
    ("MhaFirstThenLayer", SEQ, True),
    ("MhaFirstThenLayer", (1, 3, 8), True),
    # a loop counted as one turn whose first turn saves a tensor from before it
    ("LoopAfterSaved", SEQ, True),
    ("LoopWrittenAfterSaved", SEQ, True),
    ("LoopSavesItsResult", SEQ, True),
    ("NestedLoopsOfLayers", SEQ, True),
    ("NestedLoopsSaveTheirResult", SEQ, True),
]


def _module():
    spec = importlib.util.spec_from_file_location("saved_modules", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _truth(name: str, shape, training: bool) -> int:
    torch.manual_seed(0)
    m = getattr(_module(), name)()
    m.train(training)
    return saved_bytes(m, torch.randn(*shape))


def _static(name: str, shape, training: bool = True, given: str | None = None) -> dict:
    options = analysis_options(load_config([PATH], None), dtype=None, dims={})
    given = given or f"x={','.join(map(str, shape))}"
    return run_target(Target(str(PATH), name), [], [given], {}, options, training=training)


@pytest.mark.parametrize(("name", "shape", "training"), EXACT)
def test_activation_bytes_equal_saved_tensors(name, shape, training):
    t = _static(name, shape, training)
    assert t["activation_complete"], t["activation_unknown"]
    assert t["activation_bytes_value"] == _truth(name, shape, training)


@pytest.mark.parametrize("name", ["Unpacked", "RowLoop", "Pairs", "Grid"])
def test_views_forward_and_backward_as_torch(name):
    """Iterating a tensor yields `x[i]` (the backward of a layer over the input's rows
    needs no gradient of those rows); broadcast_tensors and meshgrid expand each
    operand: forward, output and backward as torch's FlopCounterMode counts them."""
    from torch.utils.flop_counter import FlopCounterMode

    t = _static(name, SEQ)
    m = getattr(_module(), name)()
    with FlopCounterMode(display=False) as counter:
        out = m(torch.randn(*SEQ))
    assert t["complete"] and t["flops_value"] == counter.get_total_flops()
    assert t["output"] == [str(n) for n in out.shape]
    with FlopCounterMode(display=False) as counter:
        out.sum().backward()
    assert t["backward_complete"], t["backward_unknown"]
    assert t["flops_backward_value"] == counter.get_total_flops()


def test_a_write_through_a_tensor_index_is_a_lower_bound_naming_index_put():
    """index_put_ keeps its index tensors for the gradient of the values written."""
    t = _static("IndexWritten", SEQ)
    assert t["complete"] and not t["activation_complete"]
    assert [u["op"] for u in t["activation_unknown"]] == ["torch.Tensor.index_put_"]
    assert int(t["activation_bytes"]) < _truth("IndexWritten", SEQ, True)


def test_an_einsum_of_an_operand_of_unknown_strides_is_a_lower_bound():
    """Whether torch's reshape inside einsum views or copies an operand depends on
    its strides: where they are not known (a tensor gathered by an index tensor),
    the einsum is named and the figure stays under torch's. So does an einsum at
    sizes not known (an axis of size 1 is broadcast)."""
    t = _static("EinsumGathered", SEQ)
    assert t["complete"] and not t["activation_complete"]
    assert [u["op"] for u in t["activation_unknown"]] == ["torch.einsum"]
    assert "strides" in t["activation_unknown"][0]["why"]
    assert int(t["activation_bytes"]) <= _truth("EinsumGathered", SEQ, True)
    t = _static("EinsumPairs", SEQ, given="x=B,T,8")
    assert not t["activation_complete"]
    assert t["activation_unknown"][0]["op"] == "torch.einsum"


def test_symbolic_figure_is_torch_at_every_size():
    t = _static("Stack", SEQ, given="x=B,T,8")
    assert t["activation_bytes"] == "832*B*T"
    for b, s in ((1, 5), (3, 7)):
        assert 832 * b * s == _truth("Stack", (b, s, 8), True)


@pytest.mark.parametrize("shape", [SEQ, (1, 3, 8), (3, 1, 8), (2, 5, 8)])
def test_a_result_of_a_permuted_tensor_folded_follows_its_layout(shape):
    """An elementwise result of a permuted tensor is laid out as TensorIterator lays
    it (ops/strides.py): the Linears folding it copy it where its order is not
    row-major, and view it where an axis of 1 makes it so (never a complete figure
    one copy short)."""
    t = _static("PermutedSum", shape)
    assert t["activation_complete"], t["activation_unknown"]
    assert t["activation_bytes_value"] == _truth("PermutedSum", shape, True)


@pytest.mark.parametrize("name", ["HelperOfTwoLayouts", "HelperOfTwoLayoutsSwapped"])
def test_a_function_given_two_layouts_of_one_shape_runs_for_each(name):
    """A function's run is memoised by its arguments, which tensors' equality reads
    without their strides: a transposed argument of the shape of an earlier
    contiguous one is a run of its own (its einsum copies it), in either order."""
    t = _static(name, (2, 4, 4, 8))
    assert t["activation_complete"], t["activation_unknown"]
    assert t["activation_bytes_value"] == _truth(name, (2, 4, 4, 8), True)


@pytest.mark.parametrize("name", ["CustomForward", "CustomKeepsOutput"])
def test_a_custom_function_keeps_what_save_for_backward_is_handed(name):
    """The ops a custom Function's forward runs save nothing (torch runs it without
    grad: pytorch-tabular's entmax sort, pow and clamp were once counted); what it
    keeps is what it hands ctx.save_for_backward, its output's storage counted once
    with the Linear that folds it (memory-efficient-attention's FlashAttention)."""
    t = _static(name, SEQ)
    assert t["activation_complete"], t["activation_unknown"]
    assert t["activation_bytes_value"] == _truth(name, SEQ, True)


def test_a_save_for_backward_under_a_test_is_a_lower_bound():
    t = _static("CustomSavesUnderATest", SEQ)
    assert t["complete"] and not t["activation_complete"]
    assert [u["op"] for u in t["activation_unknown"]] == ["_SavesWhenAsked.backward"]
    assert int(t["activation_bytes"]) < _truth("CustomSavesUnderATest", SEQ, True)


def test_attention_on_the_math_path_is_a_lower_bound():
    """A 3-D mask takes scaled_dot_product_attention's math path: no complete
    figure, and what is known stays under torch's."""
    t = _static("SdpaMask3d", SEQ)
    assert not t["activation_complete"]
    assert t["activation_unknown"][0]["op"].endswith("scaled_dot_product_attention")
    assert int(t["activation_bytes"]) <= _truth("SdpaMask3d", SEQ, True)


def test_attention_dropout_in_training_is_a_lower_bound():
    t = _static("MhaDropped", SEQ, training=True)
    assert not t["activation_complete"]
    assert _static("MhaDropped", SEQ, training=False)["activation_complete"]


def test_dropout_in_training_is_a_lower_bound_naming_it():
    """Its mask is bool on CUDA and of the input's dtype on CPU: not one figure."""
    t = _static("Dropped", SEQ)
    assert not t["activation_complete"] and t["activation_bytes_value"] is None
    assert [u["op"] for u in t["activation_unknown"]] == ["torch.nn.Dropout.__call__"]
    assert "mask" in t["activation_unknown"][0]["why"]
    assert int(t["activation_bytes"]) < _truth("Dropped", SEQ, True)


def test_a_fold_result_saved_is_a_lower_bound():
    """F.fold's storage is larger than its result, by a size no rule derives: the
    convolution that saves it names it, and the figure stays under torch's."""
    t = _static("Folded", SEQ)
    assert t["complete"] and not t["activation_complete"]
    assert [u["op"] for u in t["activation_unknown"]] == ["torch.nn.Conv1d.__call__"]
    assert int(t["activation_bytes"]) < _truth("Folded", SEQ, True)


def test_train_faces_show_activations():
    from click.testing import CliRunner

    from shapelint.cli import main

    args = ["cost", f"{PATH}::MLP", "--input", "x=B,T,8", "--train"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "activations 256·B·T B (saved for backward)" in r.output
    r = CliRunner().invoke(main, [*args, "--format", "json"])
    t = json.loads(r.output)["target"]
    assert t["activation_bytes"] == "256*B*T" and t["activation_complete"]


def test_in_place_relu_and_flatten_share_their_input_storage():
    """ReLU(inplace=True) (built from **params) and nn.Flatten return their input's
    storage: saved once, by the ReLU and by the layer after it."""
    t = _static("InPlace", IMAGE, given="input=2,4,5,5")
    assert t["activation_complete"], t["activation_unknown"]
    assert t["activation_bytes_value"] == _truth("InPlace", IMAGE, True)


def test_einops_views_are_followed():
    """rearrange and repeat view or copy by the pattern, as einops' torch backend
    runs it: the repeated queries are an expanded view of the parameter (no
    activation, though SDPA saves it), each last axis steps 1 (the fused kernel);
    torch's figure at int sizes and, with the sizes names, at each size."""
    formula = _static("Queried", SEQ, given="x=B,N,8")
    assert formula["activation_complete"], formula["activation_unknown"]
    for shape in (SEQ, (3, 5, 8), (1, 1, 8)):
        t = _static("Queried", shape)
        assert t["activation_complete"], t["activation_unknown"]
        truth = _truth("Queried", shape, True)
        assert t["activation_bytes_value"] == truth
        assert eval(formula["activation_bytes"], {"B": shape[0], "N": shape[1]}) == truth


def test_a_part_of_longer_rows_reshaped_is_a_view_at_every_batch_size():
    """`v.reshape(...)` of a split part is a view where the axes it merges lie
    within the part (torch saves the projection's whole storage) and a copy where
    they span the gap. With the batch a name, the strides are formulas in it
    (ops/sym_strides.py) and decide the same: a complete figure, torch's at each
    batch size."""
    t = _static("SplitChannelsReshaped", IMAGE, given="x=B,4,5,5")
    assert t["activation_complete"], t["activation_unknown"]
    for b in (1, 2, 3):
        truth = _truth("SplitChannelsReshaped", (b, 4, 5, 5), True)
        assert eval(t["activation_bytes"], {"B": b}) == truth  # "1600*B + 64"


def _left_for_backward(m, x) -> int:
    """The bytes of the distinct storages still saved for backward when the forward
    has returned: a saved tensor whose autograd node died with a result nothing
    holds is freed (what saved_tensors_hooks saw of it held no memory at the end)."""
    import gc
    import weakref

    class Held:
        def __init__(self, t):
            self.t = t.detach()  # no cycle through the node that saved it

    held = {t.untyped_storage().data_ptr() for t in [*m.parameters(), *m.buffers(), x]}
    packs: list = []

    def pack(t):
        h = Held(t)
        s = t.untyped_storage()
        if s.data_ptr() not in held:
            packs.append((weakref.ref(h), s.data_ptr(), s.nbytes()))
        return h

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda h: h.t):
        out = m(x)
    gc.collect()
    live = {p: n for r, p, n in packs if r() is not None}
    del out
    return sum(live.values())


@pytest.mark.parametrize("name", ["DeadSigmoid", "DetachedSigmoid", "DeadTwin"])
def test_what_an_op_the_loss_does_not_reach_saved_is_no_complete_figure(name):
    """Counted where first saved, the dead sigmoid's result made a complete 128 B
    where 64 B are left for backward; never above what is left, nor above what
    torch saved during the forward."""
    t = _static(name, SEQ)
    torch.manual_seed(0)
    m = getattr(_module(), name)()
    left = _left_for_backward(m, torch.randn(*SEQ))
    assert left <= _truth(name, SEQ, True)
    if t["activation_complete"]:
        assert t["activation_bytes_value"] == left
    else:
        assert t["activation_bytes"] is None or int(t["activation_bytes"]) <= left
    if name == "DeadSigmoid":
        assert left < _truth(name, SEQ, True)
        assert not t["activation_complete"]
        assert any(u["op"] == "torch.Tensor.sigmoid" for u in t["activation_unknown"])


def test_a_class_given_at_run_time_is_no_figure_of_the_old_class():
    """`layer.__class__ = C` changes the layer's forward for every holder: counted
    with the old class's forward, the activation bytes were a complete figure short
    of torch's (|W| is saved too). Not followed: no complete figure."""
    t = _static("Retyped", SEQ, given="input=2,3,8")
    truth = _truth("Retyped", SEQ, True)
    assert truth > 0
    assert not t["activation_complete"] or t["activation_bytes_value"] == truth
    assert not t["complete"] or t["flops_value"] == 2 * 2 * 2 * 3 * 8 * 8


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("Shifted", IMAGE),
        ("StackedGRU", SEQ),
        ("SplitReshaped", SEQ),
        ("Alternatives", SEQ),
        ("AutocastRegion", SEQ),
        ("AutocastMethod", SEQ),
    ],
)
def test_what_is_known_of_the_saved_tensors_is_never_above_torch(name, shape):
    """Shifted: the freeze is not followed, so which layers save anything is not
    known: no figure (main: a bound of 1,600 B above torch's 800 B, the frozen
    layer's input counted). StackedGRU: torch's cells save gates computed in place
    (main: a bound of 23,552 B above torch's 23,232 B). SplitReshaped: a reshape of a
    part along an inner axis is a view or a copy by the axes it merges (main: 64 B
    complete, a copy, for torch's 192 B, the view's storage). Alternatives: two
    calls of which one runs, undecided: what the calls inside them save is no part
    of a bound (main: 384 B, the path that saves more, for torch's 192). Autocast:
    ops under `torch.autocast` (a `with`, a decorator) save bfloat16 copies of their
    operands, which no stub's saved= says (main: 384 B complete for torch's 608,
    192 for 224)."""
    t = _static(name, shape)
    truth = _truth(name, shape, True)
    assert truth > 0
    if t["activation_complete"]:
        assert t["activation_bytes_value"] == truth
    else:
        assert t["activation_bytes"] is None or int(t["activation_bytes"]) <= truth


@pytest.mark.parametrize("name", ["ReshapedWeight", "UnknownWeight"])
def test_data_stored_of_another_shape_leaves_the_parameter_unknown(name):
    """`p.data = t` where t is not known to have p's shape: p and the layer holding
    it are not known afterwards, never p at its old shape (main: [2, 8, 3] and
    768 FLOPs complete for torch's [2, 16, 3] and 1,536)."""
    from torch.utils.flop_counter import FlopCounterMode

    t = _static(name, SEQ)
    m = getattr(_module(), name)()
    with FlopCounterMode(display=False) as counter:
        out = m(torch.randn(*SEQ))
    assert not t["complete"] and int(t["flops"].lstrip("≥ ")) <= counter.get_total_flops()
    assert t["output"] is None or t["output"] == [str(n) for n in out.shape]
    assert not t["activation_complete"]


@pytest.mark.parametrize("name", ["RecurrentInList", "ParameterInForward", "HeldByPlainUncounted"])
def test_a_parameter_no_module_registers_is_no_figure_of_a_parameter(name):
    """RecurrentInList: a GRU in a plain list, whose saved= names none of its
    weights, which torch saves as activations. ParameterInForward: a Parameter made
    in the forward, registered nowhere. HeldByPlainUncounted: Linears held by plain
    objects where the module's count is not complete (registration not proven)."""
    t = _static(name, SEQ)
    truth = _truth(name, SEQ, True)
    assert not t["activation_complete"]
    assert t["activation_bytes"] is None or int(t["activation_bytes"]) <= truth


@pytest.mark.parametrize(
    "name", ["SdpaHeads", "SdpaSplitHeads", "SdpaRearranged", "SdpaRepeatedQueries"]
)
def test_attention_activations_for_all_sizes_are_torchs_at_each(name):
    """SDPA with the batch and length as names: the kernel CPU runs it with and
    what it saves follow from formula strides; torch's saved bytes at each size are
    the formula's (on the math path, what SDPA saves is not modelled at any size)."""
    backward = Path(__file__).parent / "data" / "backward" / "modules.py"
    spec = importlib.util.spec_from_file_location("backward_modules", backward)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    options = analysis_options(load_config([backward], None), dtype=None, dims={})
    t = run_target(Target(str(backward), name), [], ["x=B,T,8"], {}, options, training=True)
    assert t["activation_complete"], t["activation_unknown"]
    for b, n in ((2, 4), (3, 5), (1, 7)):
        torch.manual_seed(0)
        truth = saved_bytes(getattr(mod, name)(), torch.randn(b, n, 8))
        assert eval(t["activation_bytes"], {"B": b, "T": n}) == truth


@pytest.mark.parametrize("t", [2, 3, 5])
def test_a_loop_of_symbolic_count_saves_no_figure_above_torchs(t):
    """One turn standing for T: the first turn's product saves the tensor y held
    before the loop and the one it finds (m), which torch saves once; the later
    turns save the turn before's result. No complete figure, and the bound is
    under torch's at each T (main: 128*T**2 complete, 512 B for torch's 384 at 2)."""
    s = _static("LoopOfTensorLength", SEQ, given="x=2,T,8")
    assert not s["activation_complete"]
    assert [u["op"] for u in s["activation_unknown"]] == ["operator.mul"]
    from shapelint.report.numbers import evaluate

    truth = _truth("LoopOfTensorLength", (2, t, 8), True)
    assert evaluate(s["activation_bytes"], {"T": t}) <= truth
