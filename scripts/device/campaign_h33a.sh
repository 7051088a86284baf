#!/usr/bin/env bash
# Session 33, any sm_90a card with 132 SMs (an H100 80GB HBM3 counts for the H200's table's accuracy:
# measurements_db.aggregates.evidence_runs). The reload backwards (`.rl`, session 33): on an H100
# (scripts/device/variant_probe.py, one process, bench/results/h100-2026-12-07d) every `.rl` shape was
# slower than the routed program (0.16-0.93x) but the two-row 16-warp `p1x.r2.w16.fw.wr.xs.rl` at
# plain H 8192 BF16 T 65536: 1,134.7 us against the routed `p1x.w16.fw.pf.wr`'s 1,217.0 (1.07x,
# 94.1 % of that card's copy against 87.7 %). This run:
# 1. variant_probe at H 8192 over the other T of the copy target (T 16384, 262144) and the FP32 weight,
#    where the first probe had it at 0.93x, with the held two-row builds beside it;
# 2. accuracy only (120 inputs per family) of `p1x.r2.w16.fw.wr.xs.rl` at H 8192, both weights,
#    T 65536 and 262144, so that an H200 can time it with --inputs-per-family 0 (campaign_r33a.sh).
# Usage: bash scripts/device/campaign_h33a.sh [SECONDS]
SMS=$(python3 -c "import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)")
echo "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $SMS SMs"
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
B=${1:-400}
RL=bwd.twosum_pair.p1x.r2.w16.fw.wr.xs.rl
PYTHONPATH=$PWD timeout 150 python3 scripts/device/variant_probe.py --seconds 120 \
  --keys plain:8192:bf16:262144,plain:8192:fp32:262144,plain:8192:bf16:16384,plain:8192:bf16:65536 \
  --programs "$RL,bwd.twosum_pair.p1x.w16.fw.wr.xs.rl,bwd.twosum_pair.p1x.w16.fw.pf.wr.xs,bwd.twosum_pair.p2x.w8.fw.pf.wr" \
  --out variant-probe-rl8192.json 2>&1 | grep -v '^{' | tail -40
[ "$SMS" = 132 ] || { echo "not 132 SMs: its accuracy would not count; nothing more measured"; exit 0; }
PREFIX=h33a; . scripts/device/campaign_begin.sh $(( B - 150 ))
A="--ops bwd --programs $RL --peers none --sessions 1 --accuracy-only --inputs-per-family 120"
run acc-8192-64k --H 8192 --forms plain --w-dtypes bf16,fp32 --T 65536 $A --wave-units 2
run acc-8192-256k --H 8192 --forms plain --w-dtypes bf16,fp32 --T 262144 $A --wave-units 2
campaign_end
