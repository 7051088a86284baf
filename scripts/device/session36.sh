#!/usr/bin/env bash
# Session 36's device calls. On an H200 (the route table's card): session35.sh's H200 queue
# (campaign_r35a.sh, campaign_r34a.sh, then session33.sh's queue).
# On another card: the `f64_pair` / `f64` programs (dw summed in FP64 from exact products) beside
# the routed ones and the best candidates so far by variant_probe.py (which checks each one's dw
# against FP64 at every key), in four groups of keys: 256-wide contiguous heads (the copy target's
# binding row), the wide rows (the floor target's H 8192 BF16 T 4096 among them), H 1536-2048 (the
# peer target's binding row, H 1536 BF16 T 1M) and H 512; then, in the time left, the GPU tests of
# the `f64_pair` / `f64` programs (dw equal to the exact sum rounded once, run after run) and of
# the `.fw.tmc` ones (inputs now drawn on the device).
# Usage: bash scripts/device/session36.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
B=${1:-540}
case "$GPU" in *H200*) exec bash scripts/device/session35.sh "$B" ;; esac
T0=$(date +%s)
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True PYTHONPATH=$PWD
F=bwd.f64_pair; T=bwd.twosum_pair
probe() {  # probe NAME SECONDS KEYS PROGRAMS
  local L=$(( B - ($(date +%s) - T0) - 15 )); [ $L -gt $2 ] && L=$2
  [ $L -lt 30 ] && { echo "$1: no time left"; return; }
  echo "== $1 ($L s)"
  timeout $L python3 scripts/device/variant_probe.py --seconds $(( L - 40 )) --rounds 3 --keys "$3" --programs "$4" \
    --out variant-probe-$1.json 2>&1 | grep -v '^{' | tail -80
}
probe heads 110 heads_contiguous:256:bf16:65536,heads_contiguous:256:fp32:262144 \
  "$F.p16x.w1.pf.wr.sr.fl,$F.p20x.w1.pf.wr.sr.fl,$F.p16x.r2.w1.pf.wr.sr.fl,$F.p12x.r2.w1.pf.wr.sr.fl,bwd.f64.p16x.w1.pf.gs.fl.rw,bwd.f64.p20x.w1.pf.gs.fl.rw,bwd.f64.p12x.r2.w1.pf.gs.fl.rw,$T.p12x.r2.w1.fw.pf.wr.xs.sr.fl"
probe wide 150 plain:8192:bf16:4096,plain:8192:bf16:65536,plain:6144:bf16:65536,plain:5120:bf16:65536,plain:4096:bf16:65536 \
  "$F.p1x.w16.pf.wr*,$F.p2x.w8.pf.wr*,$F.p1x.w16.s4.wr.tmc*,$F.p1x.w8.s6.wr.tmc*,$F.p1x.r2.w16.s3.wr.tmc*,$F.p2x.w8.s4.wr.tmc*,$T.p1x.w8.s4.fw.wr.tmc*,$T.p1x.w16.s4.fw.wr.xs.tmc*,bwd.pair.p1x.w16.pf.op"
probe mid 140 plain:1536:bf16:1048576,plain:1536:bf16:65536,plain:2048:bf16:65536 \
  "$F.p1x.r4.w8.pf.wr*,$F.p2x.r2.w8.pf.wr*,$F.p2x.w8.pf.wr*,$F.p1x.r4.w8.s4.wr.tmc*,$F.p2x.w8.s4.wr.tmc*,$F.p1x.w8.s6.wr.tmc*,$T.p1x.r4.w8.s4.wr.tma*"
probe narrow 100 plain:512:bf16:65536,plain:512:fp32:1048576 "$F.p8x.r2.w2.pf.wr*,$F.p4x.r4.w2.pf.wr*,$F.p8x.w2.pf.wr*"
# The GPU tests last (the probe's own dw check against FP64 screens the builds first): the `f64_pair`
# and `f64` programs' dw equal to the exact sum rounded once, run after run; then the `.fw.tmc` ones'.
L=$(( B - ($(date +%s) - T0) - 10 ))
if [ $L -gt 30 ]; then
  timeout $L python3 -m pytest -q -p no:cacheprovider tests/cake_kernels/test_programs.py \
    -k "on_the_gpu_give_the_exact or on_the_gpu_are_deterministic" > ${OUT:-.}/pytest-gpu.log 2>&1
  echo "pytest rc=$?"; grep -E "^E |passed|failed|error" ${OUT:-.}/pytest-gpu.log | head -30
fi
echo "total $(( $(date +%s) - T0 )) s"
