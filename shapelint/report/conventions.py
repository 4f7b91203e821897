"""Conventions a figure rests on, stated the same way in every face.

Attention is the one place where torch's own flop counter disagrees with itself
across devices and paths: on CPU, `F.scaled_dot_product_attention` runs a kernel
that FlopCounterMode registers as 0, on CUDA (efficient, flash or cuDNN attention)
it counts q·kᵀ and p·v; the fused eval paths of `nn.MultiheadAttention` and
`nn.TransformerEncoderLayer` count 0 on either device (measured on an H200,
benchmarks/cuda_attention.py), the unfused path counts the products. shapelint
counts them all by the CUDA SDPA formula, so a figure does not depend on where or
how it would run; every face says so where a target holds such a call, and
`shapelint run` prints torch's count beside it.

nn.LSTM is the other way round: its fused kernels (oneDNN on CPU, cuDNN on CUDA)
count 0 on either device, so shapelint counts it as torch does, 0 for the fused
kernel and the written-out products where torch runs them (proj_size or float64
on CPU), and every face says that the fused kernel's work is not in the figure.
"""

from __future__ import annotations

from shapelint.ops.backward import GROUPED_CONV_NOTE, TURNS_NOTE

# The note the stubs give these calls (the `@fused_attention` macro of
# stubs/matmul.stub starts with it; tests/test_conventions.py holds them together).
FUSED_ATTENTION_MARK = "attention counted by torch's CUDA formula"

FUSED_ATTENTION = (
    "attention (F.scaled_dot_product_attention, nn.MultiheadAttention) is counted by "
    "torch's CUDA formula, 2 FLOPs per multiply-add of q·kᵀ and p·v (its backward: the "
    "scores recomputed and four products, as torch's CUDA backward formula); torch's CPU SDPA "
    "kernel and the fused eval paths of nn.MultiheadAttention (on any device) register 0 FLOPs, "
    "so FlopCounterMode reports less there (`shapelint run` prints both)"
)


# nn.LSTM's fused kernels: counted as torch's counter counts them, 0 (the note the
# `@fused_rnn` macro of stubs/layers.stub starts with).
FUSED_RNN_MARK = "LSTM counted as torch's flop counter counts it"

FUSED_RNN = (
    "nn.LSTM is counted as torch's flop counter counts it: on CPU in float32 without "
    "proj_size torch runs oneDNN's fused kernel, which the counter registers as 0 FLOPs "
    "forward and backward (cuDNN's on CUDA, in every form, likewise); that kernel's "
    "8·(input_size + hidden_size)·hidden_size FLOPs per row and step are not in the figure"
)

# A grouped or depthwise convolution's backward: torch 2.13's counter is itself wrong.
GROUPED_CONV = (
    f"{GROUPED_CONV_NOTE} (conv_backward_flop ignores groups); FlopCounterMode under "
    "backward reports more"
)

# A loop of symbolic count: its backward at one turn or more (analysis/loops.py).
LOOP_TURNS = (
    f"{TURNS_NOTE}: at a count of 0 nothing in the loop runs, and the loss reaches what "
    "the names it rebinds held before it (where a forward at 0 does not raise)"
)

# The mode a forward ran in, where `self.training` decided a branch (analysis/modes.py).
MODES = {
    "train": "the module in training mode, as torch builds it (`self.training` True; "
    "`--eval` costs it as after `.eval()`)",
    "eval": "the module in eval mode, as after `.eval()` (`self.training` False)",
}


def mode_convention(mode: str | None) -> list[dict]:
    """`target.conventions`' entry for the mode a target's figure rests on."""
    return [] if mode is None else [{"name": f"{mode}_mode", "statement": MODES[mode], "calls": []}]


# The loss backward figures are of: what `sum(t.sum() for t in outputs)` sums.
LOSS = (
    "backward: the loss sums every returned tensor, in tuples, lists and dicts (a dict "
    "subclass's entries: a ModelOutput); the tensors held by {} among the returned "
    "values are not summed, as such a sum skips an object that is none of those"
)


def loss_convention(unsummed: list[str]) -> list[dict]:
    """`target.conventions`' entry for returned objects the loss does not sum."""
    if not unsummed:
        return []
    names = ", ".join(unsummed)
    return [{"name": "loss", "statement": LOSS.format(names), "calls": []}]


def fused_attention_calls(records) -> list[dict]:
    """The calls below records (CallRecords, children nested) whose FLOPs follow
    the attention convention, once per source position."""
    return marked_calls(records, FUSED_ATTENTION_MARK)


def marked_calls(records, mark: str) -> list[dict]:
    """The calls below records whose notes start with mark, once per source
    position. A module's call carries its calls' notes: the call is the innermost
    record with the note."""
    seen: dict[tuple[int, int, str], dict] = {}
    # A record several calls share (a memoised call's) is looked at once: the
    # answer is per source position, and a shared tree may double at each level.
    visited: set[int] = set()

    def marked(r) -> bool:
        return any(n.startswith(mark) for n in r.cost.notes)

    def walk(rs) -> None:
        for r in rs:
            if id(r) in visited:
                continue
            visited.add(id(r))
            if marked(r) and not any(marked(ch) for ch in r.children):
                seen.setdefault((r.line, r.column, r.op), {"line": r.line, "op": r.op})
            walk(r.children)

    walk(records)
    return list(seen.values())


def conventions_json(records) -> list[dict]:
    """`target.conventions`: each convention the target's figures rest on, with
    the calls that rest on it."""
    out = []
    for name, mark, statement in (
        ("fused_attention", FUSED_ATTENTION_MARK, FUSED_ATTENTION),
        ("grouped_conv_backward", GROUPED_CONV_NOTE, GROUPED_CONV),
        ("fused_rnn", FUSED_RNN_MARK, FUSED_RNN),
        ("loop_turns", TURNS_NOTE, LOOP_TURNS),
    ):
        calls = marked_calls(records, mark)
        if calls:
            out.append({"name": name, "statement": statement, "calls": calls})
    return out


def convention_lines(t: dict) -> list[str]:
    """One line per convention of a target's json, for people."""
    out = []
    for c in t.get("conventions") or []:
        if not c["calls"]:
            out.append(c["statement"])
            continue
        where = ", ".join(f"line {x['line']}" for x in c["calls"][:5])
        more = f" and {len(c['calls']) - 5} more" if len(c["calls"]) > 5 else ""
        out.append(f"{c['statement']} ({where}{more})")
    return out
