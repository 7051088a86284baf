#!/usr/bin/env bash
# H200 round 19a (session 20), in order of what it can move:
# 1. The 2xfwd+bwd steps of the backwards routed after round 18 (contiguous heads: `.gs.fl` and
#    `.gs.xs.fl`; strided heads: two-row one-warp `.sr`; residual H 6144: the `.gp` twins), at the T
#    where a peer's step was timed: those rows have no figure until then (bench: "-").
# 2. The `.gs` GPU tests, with the new one that provokes a refused cooperative grid; then ncu of
#    the floor targets' row, bwd plain H 512 T 4096: the one-launch `.gs` build (12.5-12.7 us)
#    beside its two-launch base and torch.compile (12.0), to see where the 9.5 us over the bytes' time
#    go (rows, barrier or reduce) and what torch.compile launches.
# 3. ncu of the forward T <= 256 target's row, fwd plain H 4096 FP32 T 64: every one-row forward
#    takes 2.05-2.11 us against torch.compile's 1.95.
# 4. Round 16f's `.fl` forwards at contiguous heads T 4096-262144 (the forward peer target's row,
#    FP32 T 262144, 0.976x torch.compile); the two-row strided head programs at T 262144-1M (67.8 %
#    of copy routed there); the `.sr` twins at H 512 T 65536 (QuACK 62.0 us, ours 66.8-69.9).
PREFIX=r19a; . scripts/device/campaign_begin.sh ${1:-560}
. scripts/device/r16_programs.sh
run steps-heads --forms heads_contiguous,heads_strided --w-dtypes bf16,fp32 --T 4096,65536,262144,1048576 \
  --ops 2xfwd+bwd --programs routed --peers none --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 4
run steps-res --H 6144 --forms residual --w-dtypes bf16,fp32 --T 4096,65536,262144 \
  --ops 2xfwd+bwd --programs routed --peers none --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 3
# the `.gs` GPU tests, the refused cooperative grid's fallback among them (session 20)
timeout 120 python -m pytest -q -p no:cacheprovider tests/cake_kernels/test_programs.py -k "grid_sync and gpu" > $W/pytest-gs.log 2>&1
echo "pytest .gs rc=$?"; tail -3 $W/pytest-gs.log
NCU="ncu --profile-from-start off --clock-control none --section SpeedOfLight --section LaunchStats \
  --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section ComputeWorkloadAnalysis --csv --page details"
timeout 150 $NCU python scripts/device/ncu_compare.py --op bwd --H 512 --T 4096 --w-dtype bf16 --form plain \
  --impls bwd.twosum.p4x.r4.w2.fw.pf.gs.xs,bwd.twosum_pair.p4x.r4.w2.fw.pf.wr.xs,bwd.atomic.p4x.w4.pf,peer.torch_compile.default \
  > $W/ncu-bwd-512-4096-bf16.log 2>&1
echo "ncu bwd: rc=$?"
timeout 120 $NCU python scripts/device/ncu_compare.py --op fwd --H 4096 --T 64 --w-dtype fp32 --form plain \
  --impls fwd.row.r1.w1.hs,fwd.row.r1.w4.hs.fs,peer.torch_compile.default,peer.liger \
  > $W/ncu-fwd-4096-64-fp32.log 2>&1
echo "ncu fwd: rc=$?"
Q="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
run q-fl-fwd --forms heads_contiguous --w-dtypes fp32,bf16 --T 4096,65536,262144 --ops fwd \
  --programs routed,$FL_FWD --peers peer.torch_compile.default --sessions 2 --seconds-per-unit 0.5 \
  --inputs-per-family 0 --wave-units 3
run q-r2-large --forms heads_strided --w-dtypes bf16,fp32 --T 262144,1048576 \
  --programs routed,$B.p16x.r2.w1.fw.pf.wr.xs.sr,$B.p16x.r2.w1.fw.pf.wr.xs.wc.sr --ops bwd --peers none $Q --wave-units 2
run q-sr-512 --H 512 --forms plain --w-dtypes fp32,bf16 --T 65536 --programs routed,$SR \
  --ops bwd --peers none $Q --wave-units 2
campaign_end
