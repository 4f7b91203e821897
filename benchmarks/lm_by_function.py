"""An annotated Transformer LM kept outside the tests, measured function by function.

    PYTHONPATH=. python benchmarks/lm_by_function.py [benchmarks/models/cs336_lm.py]

Each function of the model runs under torch's FlopCounterMode at five random
sizes; shapelint's static figure for the function (its summary: callees
included, names bound at the sizes) must be complete and equal. Prints MATCH,
miss (unknown or marked incomplete) or WRONG (a complete figure that differs:
the bug this tool must never have) per function. Needs torch.
"""

import importlib.util
import random
import sys

import torch
from torch.utils.flop_counter import FlopCounterMode

from shapelint.analysis.driver import analyze_target, analyze_text
from shapelint.analysis.target import target_json
from shapelint.report.numbers import evaluate

PATH = sys.argv[1] if len(sys.argv) > 1 else "benchmarks/models/cs336_lm.py"
spec = importlib.util.spec_from_file_location("lm", PATH)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
SOURCE = open(PATH).read()
STATIC = {f["name"]: f for f in analyze_text(PATH, SOURCE).functions}


def run(seed):
    rng = random.Random(seed)
    B, S, H, Dh, F, V, L = (
        rng.randint(2, 5),
        rng.randint(2, 6),
        rng.randint(1, 3),
        2 * rng.randint(1, 3),
        rng.randint(3, 9),
        rng.randint(5, 20),
        rng.randint(1, 3),
    )
    D = H * Dh
    env = dict(
        batch=B,
        seq=S,
        d_model=D,
        d_ff=F,
        vocab_size=V,
        vocab=V,
        num_heads=H,
        num_layers=L,
        context_length=16,
        max_seq_len=16,
        d_k=Dh,
        d_v=Dh,
        queries=S,
        keys=S,
        in_features=D,
        out_features=F,
        d_in=D,
        d_out=F,
        num_embeddings=V,
        embedding_dim=D,
        theta=10000,
    )
    # name -> (constructor arguments or None for a plain function, the inputs'
    # shapes (an int dtype for token ids), other arguments the call passes)
    cases = {
        "Linear.forward": (dict(in_features=D, out_features=F), dict(x=(B, S, D)), {}),
        "Embedding.forward": (
            dict(num_embeddings=V, embedding_dim=D),
            dict(token_ids=(B, S, "int")),
            {},
        ),
        "RMSNorm.forward": (dict(d_model=D), dict(x=(B, S, D)), {}),
        "silu": (None, dict(x=(B, S, F)), {}),
        "SwiGLU.forward": (dict(d_model=D, d_ff=F), dict(x=(B, S, D)), {}),
        "RotaryPositionalEmbedding.forward": (
            dict(theta=1e4, d_k=Dh, max_seq_len=16),
            dict(x=(B, S, Dh), token_positions=(S, "int")),
            {},
        ),
        "softmax": (None, dict(x=(B, H, S, S)), dict(dim=-1)),
        "scaled_dot_product_attention": (
            None,
            dict(Q=(B, H, S, Dh), K=(B, H, S, Dh), V=(B, H, S, Dh), mask=(S, S, "bool")),
            {},
        ),
        "MultiHeadSelfAttention.forward": (
            dict(d_model=D, num_heads=H, max_seq_len=16),
            dict(x=(B, S, D)),
            {},
        ),
        "TransformerBlock.forward": (
            dict(d_model=D, num_heads=H, d_ff=F, max_seq_len=16),
            dict(x=(B, S, D)),
            {},
        ),
        "TransformerLM.forward": (
            dict(vocab_size=V, context_length=16, d_model=D, num_layers=L, num_heads=H, d_ff=F),
            dict(in_indices=(B, S, "int")),
            {},
        ),
        "cross_entropy": (None, dict(logits=(B, V), targets=(B, "int")), {}),
        "tied_logits": (None, dict(x=(B, S, D), embedding=(V, D)), {}),
    }
    out = {}
    for name, (init, shapes, extra) in cases.items():
        with FlopCounterMode(display=False) as c:
            call(name, init, shapes, extra, V)
        meas = c.get_total_flops()
        st = STATIC.get(name)
        val = (
            evaluate(st["flops"], {**st.get("defaults", {}), **env}) if st and st["flops"] else None
        )
        ok = bool(st) and st["complete"] and val == meas
        tj = target(name, init, shapes)
        out[name] = (
            ok,
            meas,
            val,
            st["flops"] if st else None,
            st["complete"] if st else None,
            tj["flops_value"] == meas,  # None unless complete: a miss, never a match
            tj["flops_value"],
        )
    return out


def call(name, init, shapes, extra, vocab):
    """One call of the function, or one forward of the module built with init."""
    cls, _, _meth = name.partition(".")
    tensors = {}
    for k, shape in shapes.items():
        *dims, kind = shape if isinstance(shape[-1], str) else (*shape, "float")
        if kind == "int":
            tensors[k] = torch.randint(0, min(vocab, 16), tuple(dims))
        elif kind == "bool":
            tensors[k] = torch.ones(*dims, dtype=torch.bool).tril()
        else:
            tensors[k] = torch.randn(*dims)
    fn = getattr(m, cls)(**init) if init is not None else getattr(m, cls)
    return fn(**tensors, **extra)


def target(name, init, shapes):
    """The static figure of `shapelint cost PATH::NAME --init ... --input ...`."""
    cls, _, meth = name.partition(".")
    qual = cls if init is not None and meth == "forward" else name
    inputs = {}
    for k, shape in shapes.items():
        *dims, kind = shape if isinstance(shape[-1], str) else (*shape, "float")
        # bool and int inputs take their dtype from the annotations (Bool[...], Int[...])
        inputs[k] = ",".join(map(str, dims))
    init_text = {k: repr(v) for k, v in (init or {}).items()}
    return target_json(analyze_target(PATH, SOURCE, qual, init_text, inputs), {})


res = [run(s) for s in range(5)]
good = good_target = 0
print("summary  target   function (measured, summary value, summary formula, complete, target)")
for name in res[0]:
    ok = all(r[name][0] for r in res)
    good += ok
    wrong = any(r[name][4] and r[name][2] is not None and r[name][2] != r[name][1] for r in res)
    t_ok = all(r[name][5] for r in res)
    good_target += t_ok
    t_wrong = any(r[name][6] is not None and r[name][6] != r[name][1] for r in res)
    verdict = "MATCH " if ok else ("WRONG " if wrong else "miss  ")
    t_verdict = "MATCH " if t_ok else ("WRONG " if t_wrong else "miss  ")
    first = res[0][name]
    print(f"{verdict}   {t_verdict}   {name}", (first[1], first[2], first[3], first[4], first[6]))
print(f"summaries {good}/{len(res[0])} match; targets {good_target}/{len(res[0])} match")
