#!/usr/bin/env bash
# Session 21: the checks of the `.ur` / `.rw` builds that do not depend on the card: the GPU
# self-test (dw against FP64 over three input families, and bitwise reproducibility run to run with a
# NaN-poisoned workspace: `.rw` lets most programs leave the barrier early, so a reducer that read a
# partial before its write was visible would show here) and compute-sanitizer memcheck at odd shapes.
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
PREFIX=r19z; . scripts/device/campaign_begin.sh ${1:-300}
V=bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.ur,bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.wc.ur,bwd.twosum.p16x.w1.fw.pf.gs.xs.fl.rw,bwd.twosum.p16x.w1.fw.pf.gs.xs.wc.fl.rw,bwd.twosum.p8x.w2.fw.pf.gs.fl.rw,bwd.twosum.p8x.w2.fw.pf.gs.rw
timeout 120 python -m cake_kernels.selftest --H 256,512 --T 1,1000,4096,65536 --forms plain,heads_contiguous \
  --w-dtypes bf16,fp32 --programs $V --json $W/selftest-v2.json > $W/selftest-v2.log 2>&1
echo "selftest rc=$?"; tail -30 $W/selftest-v2.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 \
  python scripts/device/sanitize.py --programs .ur,.rw > $W/memcheck-v2.log 2>&1
echo "memcheck .ur/.rw rc=$?"; tail -3 $W/memcheck-v2.log
(cd $W && tar czf $FINAL/$PREFIX.tar.gz *.log *.json 2>/dev/null); ls -la $FINAL
