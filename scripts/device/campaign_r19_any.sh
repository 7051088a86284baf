#!/usr/bin/env bash
# Session 21's first call, on whichever card comes: the device tool now serves H100s as well as H200s
# for a one-GPU call, and the targets are H200 figures, so timings from an H100 must not
# join the sm_90a evidence (the route key is the arch, which both cards share).
# - On an H200: campaign_r19a.sh.
# - On any other card: the checks whose outcome does not depend on the card. The `.gs` GPU tests
#   (the refused-grid fallback among them), compute-sanitizer memcheck of every `.gs` backward at
#   odd shapes (a one-launch program first ran on a GPU in session 20 and was never sanitized), and
#   ncu of the floor target's row (bwd plain H 512 T 4096 BF16). The H100 has the H200's 132 SMs, so
#   grids, occupancy and the barrier's shape are the same; only the memory clock differs.
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) exec bash scripts/device/campaign_r19a.sh ${1:-560} ;; esac
PREFIX=r19h; . scripts/device/campaign_begin.sh ${1:-560}
nvidia-smi > $W/nvidia-smi.log 2>&1
timeout 150 python -m pytest -q -p no:cacheprovider -m gpu tests/cake_kernels > $W/pytest-gpu.log 2>&1
echo "pytest gpu rc=$?"; tail -3 $W/pytest-gpu.log
NCU="ncu --profile-from-start off --clock-control none --section SpeedOfLight --section LaunchStats \
  --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section ComputeWorkloadAnalysis --csv --page details"
timeout 150 $NCU python scripts/device/ncu_compare.py --op bwd --H 512 --T 4096 --w-dtype bf16 --form plain \
  --impls bwd.twosum.p4x.r4.w2.fw.pf.gs.xs,bwd.twosum_pair.p4x.r4.w2.fw.pf.wr.xs,bwd.atomic.p4x.w4.pf,peer.torch_compile.default \
  > $W/ncu-bwd-512-4096-bf16.log 2>&1
echo "ncu bwd: rc=$?"
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
  python scripts/device/sanitize.py --programs .gs > $W/memcheck-gs.log 2>&1
echo "memcheck .gs rc=$?"; tail -4 $W/memcheck-gs.log
timeout 90 $NCU python scripts/device/ncu_compare.py --op fwd --H 4096 --T 64 --w-dtype fp32 --form plain \
  --impls fwd.row.r1.w1.hs,fwd.row.r1.w4.hs.fs,peer.torch_compile.default,peer.liger \
  > $W/ncu-fwd-4096-64-fp32.log 2>&1
echo "ncu fwd: rc=$?"
campaign_end
