#!/usr/bin/env bash
# H200 round 13d (session 13). Carries .whlG (Liger).
#  1. ncu at H 8192 T 65536 (FP32 weight): torch.compile's forward beside our looped forwards of its
#     two configurations (same structure; round 13c: compile 495.6 us, ours 519.9 at best).
#  2. lp-forms: the looped forwards beside the routed ones and the peers at the head forms (T 1-65536)
#     and residual rows at H 6144 (T 1-1M), which round 13b did not reach.
PREFIX=r13d; . scripts/device/campaign_begin.sh ${1:-480}
NCU="ncu --profile-from-start off --clock-control none --section SpeedOfLight --section LaunchStats \
  --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --csv --page details"
timeout 150 $NCU python scripts/device/ncu_compare.py --op fwd --H 8192 --T 65536 --w-dtype fp32 \
  --impls fwd.row.r1.w8.c2048,fwd.row.r1.w16.c2048,fwd.row.r1.w16.c8192,peer.torch_compile.default > $W/ncu-8192-65536-fp32.log 2>&1
echo "ncu: rc=$?"
LP=$(python -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('fwd') if r.get(n).launch.chunk))")
S="--ops fwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --peers peer.liger,peer.torch_compile.default"
run lp-res --H 6144 --forms residual --w-dtypes fp32,bf16 --T 1,16,256,4096,65536,1048576 --programs routed,$LP $S --wave-units 6
run lp-heads --forms heads_contiguous,heads_strided --w-dtypes fp32,bf16 --T 1,16,256,4096,65536 --programs routed,$LP $S --wave-units 10
campaign_end
