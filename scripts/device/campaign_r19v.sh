#!/usr/bin/env bash
# Session 21 (ran at 5fb71f8; the `.lp` programs were removed after it): the `.gs` barrier and reduce options (`.lp`: the wait polled with loads; `.ur`: the
# reduce's tiles unrolled) against their `.gs` bases and torch.compile, side by side in one process.
# On an H200 the evidence is the route table's; on another card (the device tool now serves H100s
# for one-GPU calls) it is kept apart, as a relative comparison only (the route key's arch is both's).
# 1. the GPU tests of the options (bitwise their base, in a CUDA graph); 2. ncu of H 512 T 4096 BF16,
# the floor target's row: the base's one kernel against each option's; 3. the harness at the rows
# the `.gs` programs are routed at or near: plain H 512 T 4096-65536, H 4096 T 4096-16384, contiguous
# heads T 65536-262144.
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) PREFIX=r19v ;; *) PREFIX=r19vh ;; esac
. scripts/device/campaign_begin.sh ${1:-560}
timeout 150 python -m pytest -q -p no:cacheprovider tests/cake_kernels/test_programs.py -k "grid_sync and gpu" > $W/pytest-gs.log 2>&1
echo "pytest .gs rc=$?"; tail -3 $W/pytest-gs.log
G=bwd.twosum.p4x.r4.w2.fw.pf.gs.xs
NCU="ncu --profile-from-start off --clock-control none --section SpeedOfLight --section LaunchStats \
  --section Occupancy --section WarpStateStats --section SchedulerStats --csv --page details"
timeout 120 $NCU python scripts/device/ncu_compare.py --op bwd --H 512 --T 4096 --w-dtype bf16 --form plain \
  --impls $G,$G.lp,$G.ur,$G.ur.lp,peer.torch_compile.default > $W/ncu-gs-options-512-4096-bf16.log 2>&1
echo "ncu: rc=$?"
T="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0"
run v-512 --H 512 --forms plain --w-dtypes bf16,fp32 --T 4096,16384,65536 --ops bwd \
  --programs $G,$G.lp,$G.ur,$G.ur.lp,$G.wc,$G.wc.ur.lp,bwd.twosum_pair.p4x.r4.w2.fw.pf.wr.xs \
  --peers peer.torch_compile.default $T --wave-units 3
P2=bwd.twosum.p2x.w4.fw.pf.gs.xs
run v-4096 --H 4096 --forms plain --w-dtypes bf16,fp32 --T 4096,16384 --ops bwd \
  --programs $P2,$P2.lp,$P2.ur.lp --peers peer.torch_compile.default $T --wave-units 2
F=bwd.twosum.p16x.w1.fw.pf.gs.xs.fl; E=bwd.twosum.p8x.w2.fw.pf.gs.fl
run v-heads --forms heads_contiguous --w-dtypes bf16,fp32 --T 65536,262144 --ops bwd \
  --programs $F,$F.lp,$E,$E.lp --peers none $T --wave-units 2
campaign_end
