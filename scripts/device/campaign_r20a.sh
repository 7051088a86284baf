#!/usr/bin/env bash
# H200 round 20a (queued by session 21, whose three short H200 calls timed `.ur.rw` at H 512
# T 4096-16384 and `.fl.rw` at contiguous heads T 1024-4096 only): the `.gs` rebuild onto the rest of
# the route table. On the H100 (side by side, bench/results/h100-2026-12-05): `.ur.rw` took H 512 T 4096 from
# 14.38 to 13.57 us (torch.compile 13.86), and `.rw` the contiguous heads' `.gs` programs 2-6 us
# lower at T 1024-65536. Timed and qualified (120 inputs per family) at the rows where their bases
# are routed, with torch.compile, and their 2xfwd+bwd steps; with session 22's flat-reduce `.uf` twins. Timings from a card that is not an H200
# are not the route table's: this script then stops.
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) ;; *) echo "not an H200: nothing measured (run campaign_r19_any.sh-style card-independent checks instead)"; exit 0 ;; esac
PREFIX=r20a; . scripts/device/campaign_begin.sh ${1:-560}
G=bwd.twosum.p4x.r4.w2.fw.pf.gs.xs; E=bwd.twosum.p8x.w2.fw.pf.gs; F=bwd.twosum.p16x.w1.fw.pf.gs.xs
Q="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
# the backward floor target's row after session 21 (H 8192 BF16 T 4096: 73.3 us against QuACK's 70.1):
# the one-launch twin of the routed program, never timed there (and, session 22, its flat-reduce `.uf`)
run q-gs-8192 --H 8192 --forms plain --w-dtypes bf16,fp32 --T 4096,16384 --ops bwd \
  --programs routed,bwd.twosum.p1x.w16.fw.pf.gs.xs,bwd.twosum.p1x.w16.fw.pf.gs.xs.uf --peers none $Q --wave-units 2
run q-rw-512 --H 512 --forms plain --w-dtypes bf16,fp32 --T 4096,16384,65536 --ops bwd \
  --programs routed,$G.ur.rw,$G.uf.rw,$G.uf8.rw,$G.wc.ur.rw,$G.wc.uf.rw,$G.wc.uf8.rw --peers peer.torch_compile.default $Q --wave-units 3
run steps-rw --H 512 --forms plain --w-dtypes bf16,fp32 --T 4096,16384 --ops 2xfwd+bwd \
  --programs routed,$G.ur.rw,$G.uf.rw,$G.uf8.rw --peers peer.torch_compile.default --sessions 2 --seconds-per-unit 0.5 \
  --inputs-per-family 0 --wave-units 2
run q-rw-heads --forms heads_contiguous --w-dtypes bf16,fp32 --T 256,1024,4096,16384,65536,262144 --ops bwd \
  --programs routed,$E.fl.rw,$F.fl.rw,$F.wc.fl.rw --peers none $Q --wave-units 3
campaign_end
