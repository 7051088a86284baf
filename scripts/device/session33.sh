#!/usr/bin/env bash
# Session 33's device calls. On an H200 (the route table's card): session32.sh's queue, unchanged
# (campaign_r25a.sh, campaign_r32a.sh, small_fwd_probe.py, the rest of campaign_r23a.sh), after
# campaign_r33a.sh (the two-row reload backward at H 8192, 100 s).
# On an H100: the prefetching reload probe below (the ncu it ran first is done). On another sm_90a
# card, or with NCU_AGAIN=1: ncu of the backward copy target's wide rows (plain H 5120 and 6144, BF16,
# T 65536: 79.6 % and 84.4 % of the H200's copy, 0.967x and 0.953x torch.compile), the routed program
# beside torch.compile's, at the card's own clocks, so the bounds text can say what holds them
# (DRAM share, issue, occupancy, local-memory traffic from the spills) from a profile, not from
# compile_check's register counts alone. What ncu reports per kernel does not depend on the H200's
# extra bandwidth for the questions asked here (registers, spills, stall reasons, achieved occupancy).
# Usage: bash scripts/device/session33.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
B=${1:-540}
case "$GPU" in
  *H200*) T0=$(date +%s); bash scripts/device/campaign_r33a.sh 100
          exec bash scripts/device/session32.sh $(( B - ($(date +%s) - T0) )) ;;
esac
# Session 33 ran the ncu below on an H100 80GB HBM3 (call 1, bench/results/h100-2026-12-07d); kept
# for another card's run, skipped on a card that already has it (NCU_AGAIN=1 runs it anyway).
# On an H100 instead: the prefetching reload backwards (`.pf...rl`, registered after session 33's last
# call; none measured yet) beside the routed programs and the H 1536 `.tma` candidate, by
# variant_probe.py, at the rows where the no-prefetch `.rl` builds lost (H 1536-6144) and the backward
# peer target's row (H 1536 BF16 T 1M).
case "$GPU" in *H100*) if [ "${NCU_AGAIN:-0}" != 1 ]; then
  P=$(python3 -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('bwd') if r.get(n).launch.reload and r.get(n).launch.prefetch))")
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True PYTHONPATH=$PWD timeout $(( B - 30 )) python3 scripts/device/variant_probe.py \
    --seconds $(( B - 90 )) --keys plain:1536:bf16:65536,plain:2048:bf16:65536,plain:6144:bf16:65536,plain:4096:bf16:65536,plain:5120:bf16:65536,plain:1536:fp32:65536,plain:6144:fp32:65536,plain:4096:fp32:65536,plain:2048:fp32:65536,plain:1536:bf16:1048576,plain:1536:bf16:262144,plain:1536:bf16:16384 \
    --programs "$P,bwd.twosum_pair.p1x.r4.w8.s4.wr.tma,bwd.twosum_pair.p1x.r4.w8.s4.wr.tma.wc" --out variant-probe-rlpf.json 2>&1 | grep -v '^{' | tail -150
  exit 0
fi ;; esac
P=bwd.twosum_pair
exec bash scripts/device/ncu_bwd_rows.sh $(( B / 2 - 20 )) \
  "6144 $P.p2x.w8.fw.pf.wr.sp,$P.p2x.w8.fw.pf.wr.sp.xs,$P.p1x.w16.fw.pf.wr.sp,peer.torch_compile.default" \
  "5120 $P.p2x.w8.fw.pf.wr.sp.xs,$P.p1x.w16.fw.pf.wr.sp,peer.torch_compile.default"
