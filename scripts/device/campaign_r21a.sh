#!/usr/bin/env bash
# Session 22, first round: reduce designs for the one-launch `.gs` backward (scripts/device/
# gs_reduce_variants.py: tree vs flat tile sums, and the reduce tile's shape, against the registered
# `.ur.rw` and the rows + barrier floor), at the two floor targets' rows: H 512 T 4096 (the 2xfwd+bwd
# floor's backward) and H 8192 BF16 T 4096 (the backward floor's, where the routed program is
# two-launch and its `.gs` twin was never timed). Relative figures, side by side in one process: on a
# card that is not an H200 they are kept in bench/results/h100-*, never in the store.
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) PREFIX=r21a ;; *) PREFIX=r21ah ;; esac
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
W=/tmp/c21a; mkdir -p $W
timeout ${1:-250} python scripts/device/gs_reduce_variants.py --shapes 512x4096:bf16,512x4096:fp32,512x16384:bf16 \
  --others bwd.twosum.p4x.r4.w2.fw.pf.gs.xs,bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.uf.rw,peer.torch_compile.default \
  --combos 128x4,64x8,256x2,512x1 --json $W/reduce-512.json 2>&1 | grep -v -i warn | tee $W/reduce-512.log
echo "rc=${PIPESTATUS[0]}"
timeout ${2:-200} python scripts/device/gs_reduce_variants.py --shapes 8192x4096:bf16,8192x4096:fp32 \
  --program bwd.twosum.p1x.w16.fw.pf.gs.xs \
  --others bwd.twosum_pair.p1x.w16.fw.pf.wr,bwd.twosum.p1x.w16.fw.pf.gs.xs.uf,peer.torch_compile.default \
  --combos 64x64,128x32,32x128 --json $W/reduce-8192.json 2>&1 | grep -v -i warn | tee $W/reduce-8192.log
echo "rc=${PIPESTATUS[0]}"
timeout ${3:-100} python -m pytest -q -p no:cacheprovider tests/cake_kernels/test_programs.py -k "grid_sync and gpu" > $W/pytest-gs.log 2>&1
echo "pytest .gs rc=$?"; tail -3 $W/pytest-gs.log
nvidia-smi > $W/nvidia-smi.log 2>&1
(cd $W && tar czf $OUT/$PREFIX.tar.gz *.log *.json 2>/dev/null); ls -la $OUT
