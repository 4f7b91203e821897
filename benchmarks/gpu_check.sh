#!/usr/bin/env bash
# The checks that need a GPU, as one short script (CI has none). Run from the repository
# root on a machine with CUDA, torch, einops, jaxtyping and click; OUT is where the logs go.
#   OUT=/tmp/gpu bash benchmarks/gpu_check.sh [SECONDS_FOR_THE_SUITE]
# 1. fused attention: torch's own count on CUDA against the static figures
#    (benchmarks/cuda_attention.py); 2. `run` on the GPU, concrete and for all sizes
#    (FakeTensorMode with fake CUDA tensors); 3. the test suite with the GPU present
#    (the CUDA-only tests run, `--device auto` picks the GPU).
set -u
OUT=${OUT:-/tmp/gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PY=${PY:-python3}
GPT=tests/data/modules/nanogpt_like.py::GPT
CFG='config=GPTConfig(block_size=1024, vocab_size=50304, n_layer=12, n_head=12, n_embd=768, flash=True)'
$PY -c "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.cuda.get_device_name())"
timeout 240 $PY benchmarks/cuda_attention.py --json "$OUT/cuda_attention.json" 2>&1 | tee "$OUT/cuda_attention.log"
echo "cuda_attention exit ${PIPESTATUS[0]}"
timeout 150 $PY -m shapelint run $GPT --input idx=B,T:int --init "$CFG" 2>&1 | tee "$OUT/run.log"
timeout 150 $PY -m shapelint run $GPT --input idx=8,1024:int --init "$CFG" 2>&1 | tee -a "$OUT/run.log"
timeout 150 $PY -m shapelint run $GPT --input idx=8,1024:int --init "$CFG" --dtype bf16 2>&1 | tee -a "$OUT/run.log"
# -v: each result is a line as it lands, so a suite cut by the timeout still names its failures
timeout "${1:-400}" $PY -m pytest -v -p no:cacheprovider -n 15 -o addopts= --tb=short tests > "$OUT/pytest.log" 2>&1
grep -E "FAILED|ERROR|XPASS" "$OUT/pytest.log" | sort | uniq | head -80
tail -3 "$OUT/pytest.log"
