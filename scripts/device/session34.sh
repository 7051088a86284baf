#!/usr/bin/env bash
# Session 34's device calls. On an H200 (the route table's card): campaign_r34a.sh (the `.tmc`
# backwards at H 4096, timing only, 120 s), then session33.sh's H200 queue (campaign_r33a.sh, then
# session32.sh's). On another card: the `.tmc` backwards (registered this
# session: g and x read as [rows, H / 64, 64], one TMA box per step instead of one per 256
# columns; none measured yet) beside the routed programs and their `.tma` twins, by variant_probe.py:
# the backward peer target's H 1536 rows and the copy target's wide rows (H 4096-8192, where the
# rows-1 `.tma` programs ran at 0.52-0.70x of the pointer programs on an H100, session 32).
# Usage: bash scripts/device/session34.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
B=${1:-540}
case "$GPU" in
  *H200*) T0=$(date +%s); bash scripts/device/campaign_r34a.sh 120
          exec bash scripts/device/session33.sh $(( B - ($(date +%s) - T0) )) ;;
esac
K=${KEYS:-plain:1536:bf16:65536,plain:6144:bf16:65536,plain:8192:bf16:65536,plain:5120:bf16:65536,plain:4096:bf16:65536,plain:1536:bf16:1048576,plain:2048:bf16:65536,plain:1536:fp32:65536,plain:8192:fp32:65536,plain:6144:fp32:65536,residual:6144:bf16:65536,plain:8192:bf16:262144}
P=$(python3 -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('bwd') if r.get(n).launch.loads == 'tma_chunks'))")
T=bwd.twosum_pair
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True PYTHONPATH=$PWD timeout $(( B - 30 )) python3 scripts/device/variant_probe.py \
  --seconds $(( B - 90 )) --keys "$K" \
  --programs "$P,$T.p1x.r4.w8.s4.wr.tma,$T.p1x.r4.w8.s4.wr.tma.wc,$T.p1x.w16.s4.wr.tma,$T.p1x.w8.s6.wr.tma" \
  --out ${PROBE_OUT:-variant-probe-tmc.json} 2>&1 | grep -v '^{' | tail -200
