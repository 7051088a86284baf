#!/usr/bin/env bash
# Session 21, third round of the `.gs` rebuild: `.rw` (only the programs that sum a column block wait
# at the barrier; the others arrive and exit), alone and with `.ur`, against the `.gs` bases and
# torch.compile; the phase probe of both. On an H200 the evidence is the route table's; on any other
# card it is kept apart (the route key's arch is both's).
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) PREFIX=r19x ;; *) PREFIX=r19xh ;; esac
. scripts/device/campaign_begin.sh ${1:-560}
timeout 150 python -m pytest -q -p no:cacheprovider tests/cake_kernels/test_programs.py -k "grid_sync and gpu" > $W/pytest-gs.log 2>&1
echo "pytest .gs rc=$?"; tail -3 $W/pytest-gs.log
G=bwd.twosum.p4x.r4.w2.fw.pf.gs.xs
for p in $G.ur $G.ur.rw; do
  timeout 100 python scripts/device/gs_phase_probe.py --program $p --shapes 512x4096:bf16,512x4096:fp32 \
    --json $W/gs-phase-probe-${p##*gs.xs.}.json > $W/gs-phase-probe-${p##*gs.xs.}.log 2>&1
  echo "probe $p rc=$?"; grep " us " $W/gs-phase-probe-${p##*gs.xs.}.log
done
T="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0"
run x-512 --H 512 --forms plain --w-dtypes bf16,fp32 --T 4096,16384,65536 --ops bwd \
  --programs $G,$G.ur,$G.ur.rw,$G.wc,$G.wc.ur.rw --peers peer.torch_compile.default $T --wave-units 3
F=bwd.twosum.p16x.w1.fw.pf.gs.xs
run x-heads --forms heads_contiguous --w-dtypes bf16,fp32 --T 4096,65536,262144 --ops bwd \
  --programs $F.fl,$F.fl.rw,$F.wc.fl,$F.wc.fl.rw --peers none $T --wave-units 3
P2=bwd.twosum.p2x.w4.fw.pf.gs.xs
run x-4096 --H 4096 --forms plain --w-dtypes bf16 --T 4096,16384 --ops bwd --programs $P2,$P2.rw --peers none $T --wave-units 2
campaign_end
