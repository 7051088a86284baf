#!/usr/bin/env bash
# H200 round 35a (session 35): timing only of the `.fw.tmc` backwards (one TMA box per step, the
# FP64 total added to the workspace row by atomics) at the wide rows: plain H 5120, 6144 and 8192
# (the backward floor target's row, H 8192 BF16 T 4096 at 0.956x QuACK, and the peer target's
# H 5120-6144 rows at 0.95-0.97x torch.compile) and residual H 6144. On an H100
# (bench/results/h100-2026-12-07f, variant_probe.py) they were 1.01-1.15x the routed programs there,
# 99-104 % of that card's copy at T >= 65536; campaign_h35a.sh qualified both on that card at these
# keys (120 inputs per family, worst err/tol 0.0006 and 0.067). Not at H 8192 T 1M (not qualified).
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) ;; *) echo "not an H200: nothing measured"; exit 0 ;; esac
PREFIX=r35a; . scripts/device/campaign_begin.sh ${1:-200}
P=routed,bwd.twosum_pair.p1x.w8.s4.fw.wr.tmc,bwd.twosum_pair.p1x.w16.s4.fw.wr.xs.tmc
A="--ops bwd --programs $P --peers none --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0"
run fwtmc-8192 --H 8192 --forms plain --w-dtypes bf16,fp32 --T 4096,16384,65536,262144 $A --wave-units 8
run fwtmc-6144 --H 6144 --forms plain,residual --w-dtypes bf16,fp32 --T 4096,16384,65536,262144 $A --wave-units 8
run fwtmc-5120 --H 5120 --forms plain --w-dtypes bf16,fp32 --T 4096,16384,65536,262144 $A --wave-units 8
run fwtmc-1m --H 6144 --forms plain --w-dtypes bf16,fp32 --T 1048576 $A --wave-units 2
campaign_end
