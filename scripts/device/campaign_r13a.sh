#!/usr/bin/env bash
# H200 round 13a (session 13). Carries nothing: torch.compile is the peer looked at.
#  1. Where torch.compile's forward beats ours (round 12a: 5-15 % at T 16-256, 6-9 % at T >= 65536
#     with an FP32 weight at H 6144/8192): its generated Triton source (TORCH_LOGS=output_code) and
#     Nsight Compute on both, same process, same inputs (scripts/device/ncu_compare.py).
#  2. steps: r12b's run again (that call's session hit a NameError on the 2xfwd+bwd path).
PREFIX=r13a; . scripts/device/campaign_begin.sh ${1:-560}
NCU="ncu --profile-from-start off --clock-control none --section SpeedOfLight --section LaunchStats \
  --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --csv --page details"
probe() {  # tag H T wdtype ours
  TORCH_LOGS=output_code timeout 120 $NCU python scripts/device/ncu_compare.py --op fwd --H $2 --T $3 --w-dtype $4 \
    --impls $5,peer.torch_compile.default > $FINAL/ncu-$1.csv 2> $FINAL/code-$1.txt
  echo "probe $1: rc=$? $(wc -l < $FINAL/ncu-$1.csv) csv lines"
}
probe 6144-256-fp32 6144 256 fp32 fwd.row.r1.w4.wt
probe 2048-256-fp32 2048 256 fp32 fwd.persist.p8x.r1.w4.pf.wt
probe 2048-256-bf16 2048 256 bf16 fwd.persist.p8x.r1.w4.pf.wx
probe 8192-65536-fp32 8192 65536 fp32 fwd.persist.p8x.r2.w4.pf.wt,fwd.persist.p2x.r1.w16.pf
probe 6144-65536-fp32 6144 65536 fp32 fwd.persist.p4x.r1.w4.pf.wt,fwd.persist.p8x.r1.w4.pf.sp
run steps --H 512,1536,2048,5120,8192 --forms plain --w-dtypes fp32,bf16 --T 4096,65536,1048576 --programs routed \
  --peers none --ops bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 15
campaign_end
