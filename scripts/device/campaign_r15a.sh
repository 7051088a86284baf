#!/usr/bin/env bash
# H200 round 15a (prepared in session 14, not run yet). Carries .whlG (Liger).
#  1. The one-row `.hs` forwards (rmsnorm_fwd_row_static_kernel, 1-D register-held tile, H compiled in;
#     compile_check sm_90a H 8192 FP32, SASS on a row's path: 216 for w16, Liger's 252, `row.r1.w16.wt` 245)
#     beside the routed programs and the peers: plain rows T 1-4096 every H (round 14 timed no `.hs`
#     program at T 4096), then the head views at T 1-256 (round 14b's head run stopped before
#     contiguous heads) and T 262144/1M (the forward's worst rows against copy now: contiguous heads
#     BF16 T 262144, 90.5 %, `row.r8.w4`; no `.hs` program was timed there), then T 65536/1M at
#     H 1536-8192 (read once, against the looped `.hs` re-read).
#  (T 65536/1M at H 1536-8192 and the routed steps moved to campaign_r15b.sh: one call cannot hold them.)
#  0. First, ncu of the backward's worst row against copy bandwidth (contiguous heads, BF16, T 65536:
#     `p16x.w1.fw.pf.wr` 172.7 us, 56 % of copy; compile_check under Triton 3.9: 96 registers, 21 of
#     its 16 programs per SM would fit): issue-bound or latency-bound, and its registers under 3.6.
#  Before both: the GPU self-test of every `.hs` program (round 14 routed 62 spans to `.hs` programs that
#  had run on the H200 only in the timing harness, which checks no forward output).
PREFIX=r15a; . scripts/device/campaign_begin.sh ${1:-540}
HS=$(python -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('fwd') if r.get(n).launch.static_h))")
python scripts/device/warm_compile.py --programs $HS --H 256,1536,4096,6144 --forms plain,residual > $W/warm-selftest.log 2>&1; tail -1 $W/warm-selftest.log
timeout 200 python -m cake_kernels.selftest --H 256,1536,4096,6144 --T 1,4096 --families gaussian,outlier_rows \
  --forms plain,residual --w-dtypes fp32,bf16 --programs $HS > $W/selftest-hs.log 2>&1; echo "selftest rc=$?"; tail -4 $W/selftest-hs.log
NCU="ncu --profile-from-start off --clock-control none --section SpeedOfLight --section LaunchStats \
  --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section ComputeWorkloadAnalysis --csv --page details"
timeout 120 $NCU python scripts/device/ncu_compare.py --op bwd --H 256 --T 65536 --w-dtype bf16 --form heads_contiguous \
  --impls bwd.twosum_pair.p16x.w1.fw.pf.wr,bwd.twosum_pair.p10x.w2.fw.pf.wr,bwd.twosum_pair.p16x.w1.fw.pf.wr.xs,peer.liger \
  > $W/ncu-bwd-heads-256-65536-bf16.log 2>&1
echo "ncu: rc=$?"
ROW1=fwd.row.r1.w1.hs,fwd.row.r1.w2.hs,fwd.row.r1.w4.hs,fwd.row.r1.w8.hs,fwd.row.r1.w16.hs
NARROW=fwd.row.r1.w1.c256.hs,fwd.row.r1.w2.c256.hs,fwd.row.r8.w4.c256.hs,fwd.row.r1.w2.c512.hs,fwd.row.r1.w4.c512.hs,fwd.row.r4.w2.c512.hs,fwd.row.r8.w4.c512.hs
python scripts/device/warm_compile.py --programs $ROW1 --forms plain > $W/warm-plain.log 2>&1; tail -1 $W/warm-plain.log
python scripts/device/warm_compile.py --programs $ROW1,$NARROW --forms heads_contiguous,heads_strided > $W/warm-heads.log 2>&1; tail -1 $W/warm-heads.log
S="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0"
P="--peers peer.liger,peer.torch_compile.default --ops fwd"
run r1-small --H 512,1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 1,16,256,4096 --programs routed,$ROW1 $P $S --wave-units 14
run r1-heads --forms heads_contiguous,heads_strided --w-dtypes fp32,bf16 --T 1,16,256,262144,1048576 --programs routed,$ROW1,$NARROW $P $S --wave-units 10
campaign_end
