"""Fused attention on a GPU: torch's own count against shapelint's convention.

On CPU, torch's FlopCounterMode registers 0 FLOPs for the flash-attention kernel behind
F.scaled_dot_product_attention and for the fused eval paths of nn.MultiheadAttention and
nn.TransformerEncoderLayer; shapelint counts them by torch's CUDA formula and says so in
every face. On CUDA torch counts SDPA itself (efficient, flash or cuDNN attention, by the
dtype), so there the convention is judged with no adjustment: for each module of
benchmarks/models/attention_zoo.py and tests/data/modules/nanogpt_like.py, this prints the
static count (`cost PATH::Class --eval --format json`), FlopCounterMode on CUDA at fp32 and
bf16 (forward under no_grad; backward of `out.sum()` with inputs needing no grad, module in
eval mode, as benchmarks/modules_differential.py measures it), with the kernels torch ran, and
the CPU count with shapelint's gap formulas.

    python benchmarks/cuda_attention.py [--json OUT]     # needs a CUDA device

Exit 1 where a static figure differs from torch's count on CUDA for an op torch counts there.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ZOO = ROOT / "benchmarks" / "models" / "attention_zoo.py"
GPT = ROOT / "tests" / "data" / "modules" / "nanogpt_like.py"

# (file, class, --init, --input, sizes)
CASES = [
    (ZOO, "CausalSDPA", {"dim": "64", "heads": "4"}, {"x": "B,T,64"}, {"B": 2, "T": 128}),
    (ZOO, "CrossSDPA", {"dim": "64", "heads": "4"}, {"x": "B,T,64", "ctx": "B,S,64"},
     {"B": 2, "T": 96, "S": 160}),
    (ZOO, "FusedMHA", {"dim": "64", "heads": "4"}, {"x": "B,T,64"}, {"B": 2, "T": 128}),
    (ZOO, "FusedEncoder", {"dim": "64", "heads": "4"}, {"x": "B,T,64"}, {"B": 2, "T": 128}),
    (GPT, "GPT", {"config": "GPTConfig(n_layer=2, n_head=2, n_embd=64, flash=True)"},
     {"idx": "B,T:int"}, {"B": 2, "T": 64}),
]  # fmt: skip


def static(path: Path, qual: str, init: dict, inputs: dict, dims: dict) -> dict:
    cmd = [sys.executable, "-m", "shapelint", "cost", f"{path}::{qual}", "--eval",
           "--format", "json", "--dim", ",".join(f"{k}={v}" for k, v in dims.items())]
    cmd += [a for k, v in init.items() for a in ("--init", f"{k}={v}")]
    cmd += [a for k, v in inputs.items() for a in ("--input", f"{k}={v}")]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    if not r.stdout.startswith("{"):
        return {"error": (r.stdout + r.stderr).strip()[-300:]}
    t = json.loads(r.stdout)["target"]
    return {"forward": t.get("flops_value"), "backward": t.get("flops_backward_value"),
            "complete": t.get("complete"), "conventions": [c["name"] for c in t["conventions"]]}


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def measure(path, qual, init, inputs, dims, device, dtype, custom) -> dict:
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    module = load(path)
    torch.manual_seed(0)
    kwargs = {k: eval(v, vars(module)) for k, v in init.items()}  # noqa: S307 (our own cases)
    m = getattr(module, qual)(**kwargs).to(device=device, dtype=dtype).eval()
    args = {}
    for name, text in inputs.items():
        shape, _, kind = text.partition(":")
        size = [dims[s] if s in dims else int(s) for s in shape.split(",")]
        if kind == "int":
            args[name] = torch.zeros(size, dtype=torch.long, device=device)
        else:
            args[name] = torch.randn(size, device=device, dtype=dtype)
    out = {}
    with torch.no_grad(), FlopCounterMode(display=False, custom_mapping=custom) as fc:
        with FusedKernels() as ran:
            m(**args)
    _record(out, "forward", fc, ran.names)
    with torch.enable_grad():
        y = m(**args)
        y = y[0] if isinstance(y, tuple) else y
        fc = FlopCounterMode(display=False, custom_mapping=custom)
        with fc, FusedKernels() as ran:
            y.float().sum().backward()
    _record(out, "backward", fc, ran.names)
    return out


def _record(out: dict, key: str, fc, fused: set) -> None:
    counts = {str(k): int(v) for k, v in fc.get_flop_counts().get("Global", {}).items()}
    out[key] = int(fc.get_total_flops())
    out[f"{key}_ops"] = counts
    # a fused kernel torch ran and registers no formula for: a gap in its count
    out[f"{key}_gaps"] = sorted(n for n in fused if n not in counts)


def FusedKernels():  # noqa: N802 (a mode, used as a context manager)
    from torch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names: set[str] = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = str(func.overloadpacket)
            if any(w in name for w in ("attention", "multi_head", "encoder_layer")):
                self.names.add(name)
            return func(*args, **(kwargs or {}))

    return Log()


def main() -> int:
    import torch

    from shapelint.runtime import gap_formulas

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", type=Path)
    a = p.parse_args()
    places = [("cpu_adjusted", "cpu", torch.float32, gap_formulas())]
    if torch.cuda.is_available():
        places += [("cuda_fp32", "cuda", torch.float32, {}), ("cuda_bf16", "cuda", torch.bfloat16, {})]
        print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    else:
        print(f"torch {torch.__version__}, no CUDA device: the CPU count only (adjusted by design)")
    rows, bad = [], 0
    for path, qual, init, inputs, dims in CASES:
        row = {"case": qual, "dims": dims, "static": static(path, qual, init, inputs, dims)}
        for where, device, dtype, custom in places:
            row[where] = measure(path, qual, init, inputs, dims, device, dtype, custom)
        s = row["static"]
        for key in ("forward", "backward"):
            for where, *_ in places:
                agree = s.get(key) == row[where][key]
                row[f"{key}_{where}"] = "agree" if agree else "differ"
                bad += not agree and where != "cpu_adjusted" and not row[where][f"{key}_gaps"]
        print(f"{qual:<14} static fwd {s.get('forward')} bwd {s.get('backward')} "
              f"{s.get('conventions')}")
        for where, *_ in places:
            r = row[where]
            print(f"  {where:<12} fwd {r['forward']:>12} {row['forward_' + where]:<6} "
                  f"bwd {r['backward']:>12} {row['backward_' + where]:<6} "
                  f"{sorted(set(r['forward_ops']) | set(r['backward_ops']))} "
                  f"uncounted {sorted(set(r['forward_gaps']) | set(r['backward_gaps']))}")
        rows.append(row)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
