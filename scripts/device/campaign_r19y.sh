#!/usr/bin/env bash
# Session 21, last call: `.rw` on the `.gs` program the table routes at contiguous heads T 257-65535
# (p8x.w2.fl: 1056 programs, 64 of them waiting) and its plain twin at H 256-512, against their bases.
# On an H200 the evidence is the route table's; on any other card it is kept apart.
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) PREFIX=r19y ;; *) PREFIX=r19yh ;; esac
. scripts/device/campaign_begin.sh ${1:-560}
T="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0"
E=bwd.twosum.p8x.w2.fw.pf.gs
run y-heads --forms heads_contiguous --w-dtypes bf16,fp32 --T 1024,4096,16384,65536 --ops bwd \
  --programs $E.fl,$E.fl.rw --peers none $T --wave-units 4
run y-plain --H 256,512 --forms plain --w-dtypes bf16 --T 4096,16384 --ops bwd \
  --programs $E,$E.rw,bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.ur.rw --peers peer.torch_compile.default $T --wave-units 4
campaign_end
