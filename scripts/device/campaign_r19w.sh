#!/usr/bin/env bash
# Session 21, second round of the `.gs` rebuild. campaign_r19v.sh (H100) found the volatile-load
# barrier poll slower (+0.6-0.8 us at H 512 T 4096; removed) and the unrolled reduce (`.ur`) 0.3-0.5
# us faster at H 512 T 4096-65536 except BF16 T 4096. Here: the phase probe of the `.ur` kernel (rows,
# barrier, reduce: where the 14 us go), then the harness over the `.ur` programs and their bases at
# the rows they could take (plain H 512 and H 4096). On an H200 the evidence is the route table's;
# on any other card it is kept apart (the route key's arch is both's).
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) PREFIX=r19w ;; *) PREFIX=r19wh ;; esac
. scripts/device/campaign_begin.sh ${1:-560}
timeout 150 python -m pytest -q -p no:cacheprovider tests/cake_kernels/test_programs.py -k "grid_sync and gpu" > $W/pytest-gs.log 2>&1
echo "pytest .gs rc=$?"; tail -3 $W/pytest-gs.log
timeout 150 python scripts/device/gs_phase_probe.py --json $W/gs-phase-probe.json > $W/gs-phase-probe.log 2>&1
echo "probe rc=$?"; cat $W/gs-phase-probe.log | grep -v Warning | tail -40
T="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0"
G=bwd.twosum.p4x.r4.w2.fw.pf.gs.xs; P2=bwd.twosum.p2x.w4.fw.pf.gs.xs
run w-512 --H 512 --forms plain --w-dtypes bf16,fp32 --T 4096,16384,65536 --ops bwd \
  --programs $G,$G.ur,$G.wc,$G.wc.ur,$P2,$P2.ur --peers peer.torch_compile.default $T --wave-units 3
run w-4096 --H 4096 --forms plain --w-dtypes bf16,fp32 --T 4096,16384 --ops bwd \
  --programs $P2,$P2.ur,$P2.wc,$P2.wc.ur --peers peer.torch_compile.default $T --wave-units 2
campaign_end
