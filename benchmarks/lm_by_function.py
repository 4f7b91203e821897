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

from shapelint.analysis.driver import analyze_text
from shapelint.report.numbers import evaluate

PATH = sys.argv[1] if len(sys.argv) > 1 else "benchmarks/models/cs336_lm.py"
spec = importlib.util.spec_from_file_location("lm", PATH)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
STATIC = {f["name"]: f for f in analyze_text(PATH, open(PATH).read()).functions}


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
    r = torch.randn
    tok = torch.randint(0, V, (B, S))
    cases = {
        "Linear.forward": lambda: m.Linear(D, F)(r(B, S, D)),
        "Embedding.forward": lambda: m.Embedding(V, D)(tok),
        "RMSNorm.forward": lambda: m.RMSNorm(D)(r(B, S, D)),
        "silu": lambda: m.silu(r(B, S, F)),
        "SwiGLU.forward": lambda: m.SwiGLU(D, F)(r(B, S, D)),
        "RotaryPositionalEmbedding.forward": lambda: m.RotaryPositionalEmbedding(1e4, Dh, 16)(
            r(B, S, Dh), torch.arange(S)
        ),
        "softmax": lambda: m.softmax(r(B, H, S, S), dim=-1),
        "scaled_dot_product_attention": lambda: m.scaled_dot_product_attention(
            r(B, H, S, Dh), r(B, H, S, Dh), r(B, H, S, Dh), torch.ones(S, S, dtype=torch.bool)
        ),
        "MultiHeadSelfAttention.forward": lambda: m.MultiHeadSelfAttention(D, H, 16)(r(B, S, D)),
        "TransformerBlock.forward": lambda: m.TransformerBlock(D, H, F, 16)(r(B, S, D)),
        "TransformerLM.forward": lambda: m.TransformerLM(V, 16, D, L, H, F)(tok),
        "cross_entropy": lambda: m.cross_entropy(r(B, V), torch.randint(0, V, (B,))),
        "tied_logits": lambda: m.tied_logits(r(B, S, D), r(V, D)),
    }
    out = {}
    for name, fn in cases.items():
        with FlopCounterMode(display=False) as c:
            fn()
        meas = c.get_total_flops()
        st = STATIC.get(name)
        val = (
            evaluate(st["flops"], {**st.get("defaults", {}), **env}) if st and st["flops"] else None
        )
        ok = bool(st) and st["complete"] and val == meas
        out[name] = (ok, meas, val, st["flops"] if st else None, st["complete"] if st else None)
    return out


res = [run(s) for s in range(5)]
good = 0
for name in res[0]:
    ok = all(r[name][0] for r in res)
    good += ok
    wrong = any(r[name][4] and r[name][2] is not None and r[name][2] != r[name][1] for r in res)
    print(("MATCH " if ok else ("WRONG " if wrong else "miss  ")) + name, res[0][name][1:])
print(f"{good}/{len(res[0])} match")
