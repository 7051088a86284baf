#!/usr/bin/env bash
# Session 22 (session 23 added `.uf8.rw`, the [64 x 8] flat tile), a short last call: the flat-reduce `.uf.rw` at the 2xfwd+bwd floor target's row (H 512
# T 4096). On the H100 (campaign_r21a.sh, side by side) it took the backward from 13.66 to 12.93 us
# (BF16; `.ur.rw`, routed there on the H200) against torch.compile's 13.76. On an H200: qualified (120
# inputs per family) and timed, backward and step, for the route table. On any other card: the same
# timings without the accuracy runs, kept apart from the store.
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) PREFIX=r21b; N=120 ;; *) PREFIX=r21bh; N=0 ;; esac
. scripts/device/campaign_begin.sh ${1:-150}
G=bwd.twosum.p4x.r4.w2.fw.pf.gs.xs
run uf-512 --H 512 --forms plain --w-dtypes bf16,fp32 --T 4096 --ops bwd,2xfwd+bwd \
  --programs routed,$G.uf.rw,$G.wc.uf.rw,$G.uf8.rw,$G.wc.uf8.rw --peers peer.torch_compile.default --sessions 2 --seconds-per-unit 0.5 \
  --inputs-per-family $N --wave-units 2
campaign_end
