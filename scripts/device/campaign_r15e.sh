#!/usr/bin/env bash
# H200 round 15e (session 15): the `.sr` backwards (two-pass partials reduce), qualified where their
# `.wr` twins are routed at T >= 65536: first the GPU self-test of all six, then contiguous heads
# (the worst backward row against copy: 56 %, 44.8 us of it the wide reduce under ncu), then H 512
# plain rows, then strided heads; 120 inputs per family, beside the routed programs. No peers.
PREFIX=r15e; . scripts/device/campaign_begin.sh ${1:-240}
B=bwd.twosum_pair
SR=$B.p16x.w1.fw.pf.wr.sr,$B.p16x.w1.fw.pf.wr.xs.sr,$B.p10x.w2.fw.pf.wr.sr,$B.p8x.w2.fw.pf.wr.sr,$B.p4x.r4.w2.fw.pf.wr.xs.sr,$B.p4x.r4.w2.fw.pf.wr.xs.wc.sr
timeout 60 python -m cake_kernels.selftest --H 256,512 --T 1,4096 --families gaussian,outlier_rows \
  --forms plain,heads_contiguous --w-dtypes fp32,bf16 --programs $SR > $W/selftest-sr.log 2>&1; echo "selftest rc=$?"; tail -3 $W/selftest-sr.log
Q="--peers none --ops bwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120 --wave-units 2"
run q-heads-c --forms heads_contiguous --w-dtypes bf16,fp32 --T 65536,262144,1048576 --programs routed,$B.p16x.w1.fw.pf.wr.sr,$B.p16x.w1.fw.pf.wr.xs.sr $Q
run q-512 --H 512 --forms plain --w-dtypes bf16,fp32 --T 65536,1048576 --programs routed,$B.p4x.r4.w2.fw.pf.wr.xs.sr,$B.p4x.r4.w2.fw.pf.wr.xs.wc.sr $Q
run q-heads-s --forms heads_strided --w-dtypes bf16,fp32 --T 65536,262144 --programs routed,$B.p16x.w1.fw.pf.wr.sr,$B.p16x.w1.fw.pf.wr.xs.sr $Q
campaign_end
