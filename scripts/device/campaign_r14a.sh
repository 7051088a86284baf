#!/usr/bin/env bash
# H200 round 14a (prepared in session 13, not run yet). Carries .whlG (Liger).
#  1. ncu at H 8192 T 65536 FP32: the `.hs` looped forwards (H compiled in; compile_check: 392 SASS
#     instructions against 712 for `.c2048`, torch.compile's 256) beside torch.compile's forward.
#  2. hs-big / hs-small: the `.hs` forwards beside the routed ones and the peers, plain rows, both
#     weights, T 65536 and 1M, then T 1-4096.
PREFIX=r14a; . scripts/device/campaign_begin.sh ${1:-540}
NCU="ncu --profile-from-start off --clock-control none --section SpeedOfLight --section LaunchStats \
  --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --csv --page details"
timeout 150 $NCU python scripts/device/ncu_compare.py --op fwd --H 8192 --T 65536 --w-dtype fp32 \
  --impls fwd.row.r1.w16.c2048,fwd.row.r1.w16.c2048.hs,fwd.row.r1.w8.c2048.hs,fwd.row.r1.w16.c8192.hs,peer.torch_compile.default \
  > $W/ncu-8192-65536-fp32.log 2>&1
echo "ncu: rc=$?"
HS=$(python -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('fwd') if r.get(n).launch.static_h))")
S="--ops fwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --peers peer.liger,peer.torch_compile.default"
run hs-big --H 512,1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 65536,1048576 --programs routed,$HS $S --wave-units 7
run hs-small --H 512,1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 1,16,256,4096 --programs routed,$HS $S --wave-units 14
campaign_end
