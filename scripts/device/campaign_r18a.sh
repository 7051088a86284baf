#!/usr/bin/env bash
# H200 round 18a (session 19): round 16e's residual qualification first (the only failing point of the
# in-budget target: T 262144 residual H 6144 FP32 was left at 59 of 120 inputs per family), then the
# `.gs` one-launch backwards (session 18): GPU barrier test, self-test, timings. It replaces
# campaign_r17a.sh, which never ran and whose `.gs` steps it repeats with guards.
PREFIX=r18a; . scripts/device/campaign_begin.sh ${1:-560}
. scripts/device/r16_programs.sh
run q-res-262144 --H 6144 --forms residual --w-dtypes fp32 --T 262144 --ops bwd \
  --programs routed,$B.p2x.w8.fw.pf.wr.sp.gp,$B.p2x.w8.fw.pf.sp.gp,$B.p2x.w8.fw.pf.wr.sp \
  --peers none --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120 --wave-units 2
. scripts/device/r17_programs.sh
timeout 90 python -m pytest -q -p no:cacheprovider tests/cake_kernels/test_programs.py -k "grid_sync and gpu" > $W/pytest-gs.log 2>&1
GS_RC=$?; echo "pytest rc=$GS_RC"; tail -3 $W/pytest-gs.log
# A barrier that hangs would hang every `.gs` unit: keep the call's time instead. A failure alone
# does not stop the call: the timings capture CUDA graphs as the test does, and a unit that fails is
# written to its run's failures file.
[ $GS_RC = 124 ] && { echo "the .gs GPU test timed out: no .gs self-test or timings"; campaign_end; exit 0; }
timeout 100 python -m cake_kernels.selftest --H 512,1536 --T 16,4096 --families gaussian,outlier_rows \
  --forms plain,residual,heads_contiguous --w-dtypes fp32,bf16 --programs $GS > $W/selftest-gs.log 2>&1
ST_RC=$?; echo "selftest rc=$ST_RC"; tail -3 $W/selftest-gs.log
[ $ST_RC = 0 ] || { echo "the .gs self-test failed: no .gs timings"; campaign_end; exit 0; }
Q="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
# The floor targets' row (T 4096) first: the session may get one call.
run q-gs-512 --H 512 --forms plain --w-dtypes fp32,bf16 --T 4096,16384 --ops bwd,2xfwd+bwd \
  --programs routed,$GS_512 --peers peer.torch_compile.default $Q --wave-units 4
run q-gs-512-large --H 512 --forms plain --w-dtypes fp32,bf16 --T 65536,1048576 --ops bwd \
  --programs routed,$GS_512 --peers peer.torch_compile.default $Q --wave-units 4
run q-gs-heads --forms heads_contiguous --w-dtypes bf16,fp32 --T 4096,65536,262144,1048576 --ops bwd \
  --programs routed,$GS_HEADS --peers none $Q --wave-units 2
run q-gs-wide --H 1536,2048,4096,8192 --forms plain --w-dtypes bf16,fp32 --T 4096,65536,1048576 --ops bwd \
  --programs routed,$GS_WIDE --peers none $Q --wave-units 4
campaign_end
