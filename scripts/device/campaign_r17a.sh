#!/usr/bin/env bash
# H200 round 17a (written in session 18, which had no GPU): the 15 `.gs` backward programs, one
# launch each (rows, a grid barrier, the partials summed by the whole grid), launched as cooperative
# grids. Run before the r16 campaigns that are still queued (campaign_r16e/f/b.sh, r15d).
# 1. The GPU test of the barrier (a cooperative launch inside a CUDA graph, the barrier's words reset)
#    and the GPU self-test of the 15 (both weights, plain, residual and both head forms).
# 2. H 512 at T 4096-1M, both weights, torch.compile beside them: the backward and 2xfwd+bwd floor
#    targets' row is H 512 FP32 T 4096 (15.2 us against torch.compile's 12.2), and at T 65536 the
#    second launch costs about 10 us beyond the rows kernel's 60 (QuACK 62).
# 3. Contiguous heads T 4096-1M (the worst backward rows against copy), then H 1536-8192.
# Each `run` is skipped when the call's time is spent, so the order is the priority.
PREFIX=r17a; . scripts/device/campaign_begin.sh ${1:-540}
. scripts/device/r17_programs.sh
timeout 120 python -m pytest -q -p no:cacheprovider tests/cake_kernels/test_programs.py -k "grid_sync and gpu" > $W/pytest-gs.log 2>&1
echo "pytest rc=$?"; tail -3 $W/pytest-gs.log
timeout 150 python -m cake_kernels.selftest --H 256,512,1536 --T 1,16,4096 --families gaussian,outlier_rows \
  --forms plain,residual,heads_contiguous,heads_strided --w-dtypes fp32,bf16 --programs $GS > $W/selftest-gs.log 2>&1
echo "selftest rc=$?"; tail -3 $W/selftest-gs.log
Q="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
run q-gs-512 --H 512 --forms plain --w-dtypes fp32,bf16 --T 4096,16384,65536,1048576 --ops bwd,2xfwd+bwd \
  --programs routed,$GS_512 --peers peer.torch_compile.default $Q --wave-units 4
run q-gs-heads --forms heads_contiguous --w-dtypes bf16,fp32 --T 4096,65536,262144,1048576 --ops bwd \
  --programs routed,$GS_HEADS --peers none $Q --wave-units 2
run q-gs-wide --H 1536,2048,4096,8192 --forms plain --w-dtypes bf16,fp32 --T 4096,65536,1048576 --ops bwd \
  --programs routed,$GS_WIDE --peers none $Q --wave-units 4
campaign_end
