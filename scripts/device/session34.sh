#!/usr/bin/env bash
# Session 34's device calls. On an H200 (the route table's card): campaign_r34a.sh (the `.tmc`
# backwards at H 4096, timing only, 120 s), then session33.sh's H200 queue (campaign_r33a.sh, then
# session32.sh's). On another card, with PROBE=1: the `.tmc` backwards (g and x read as
# [rows, H / 64, 64], one TMA box per step instead of one per 256 columns) beside the routed programs
# and their `.tma` twins, by variant_probe.py, at the backward peer target's H 1536 rows and the copy
# target's wide rows (H 4096-8192); session 34 ran it (call 7, bench/results/h100-2026-12-07e).
# Otherwise: ncu at the card's own clocks of what that probe found: the `.tmc` builds beside the
# routed program at plain H 8192 BF16 T 65536 (0.90x there: one box per step took the rows-1 TMA
# programs from 0.74x, not past the pointer program) and at H 4096 (1.03x), so that the bounds text
# can say what holds the wide TMA rows (issue, barriers, the 72-80 bytes of spill) from a profile.
# Usage: bash scripts/device/session34.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
B=${1:-540}
case "$GPU" in
  *H200*) T0=$(date +%s); bash scripts/device/campaign_r34a.sh 120
          exec bash scripts/device/session33.sh $(( B - ($(date +%s) - T0) )) ;;
esac
T=bwd.twosum_pair
if [ "${PROBE:-0}" = 1 ]; then
K=${KEYS:-plain:1536:bf16:65536,plain:6144:bf16:65536,plain:8192:bf16:65536,plain:5120:bf16:65536,plain:4096:bf16:65536,plain:1536:bf16:1048576,plain:2048:bf16:65536,plain:1536:fp32:65536,plain:8192:fp32:65536,plain:6144:fp32:65536,residual:6144:bf16:65536,plain:8192:bf16:262144}
P=$(python3 -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('bwd') if r.get(n).launch.loads == 'tma_chunks'))")
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True PYTHONPATH=$PWD timeout $(( B - 30 )) python3 scripts/device/variant_probe.py \
  --seconds $(( B - 90 )) --keys "$K" \
  --programs "$P,$T.p1x.r4.w8.s4.wr.tma,$T.p1x.r4.w8.s4.wr.tma.wc,$T.p1x.w16.s4.wr.tma,$T.p1x.w8.s6.wr.tma" \
  --out ${PROBE_OUT:-variant-probe-tmc.json} 2>&1 | grep -v '^{' | tail -200
  exit 0
fi
exec bash scripts/device/ncu_bwd_rows.sh $(( B / 2 - 20 )) \
  "8192 $T.p1x.w16.fw.pf.wr,$T.p1x.w8.s6.wr.tmc.wc,$T.p1x.w16.s4.wr.tmc.wc" \
  "4096 $T.p2x.w4.fw.pf.wr.xs,$T.p1x.r2.w16.s3.wr.tmc,$T.p1x.w8.s6.wr.tmc"
