#!/usr/bin/env bash
# H200 round 23b (queued by session 27): the backward grid points the shipped evidence lacks. The
# issue's targets are over the standard grid, but `bench` has backward rows at T 1024 for 2 of its 20
# keys, at T 64 for 4, at T 16384 for 7 and at T 262144 for 5 (bench/results/sm_90a-bench.json): the
# solver interpolates across those T (plain H 4096 FP32 runs the T 256 column task up to T 4095), and
# on an H100 (session 27, bench/results/h100-2026-12-06c) that column task lost 1.6-2.7x at T 1024.
# Every peer, so the rows can be compared: carry the peers' wheels (.whlA, then .whlB on a second
# call while the machine is warm; setup_peers.sh). Plain rows, every standard H, both weight dtypes,
# the routed programs and the session's `pair` programs (which need accuracy evidence to be routed).
# Timings from a card that is not an H200 are not the route table's: this script then stops.
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) ;; *) echo "not an H200: nothing measured"; exit 0 ;; esac
PREFIX=r23b; . scripts/device/campaign_begin.sh ${1:-560}
PW=bwd.pair.p2x.w8.pf.op,bwd.pair.p2x.r2.w8.pf.op,bwd.pair.p1x.w16.pf.op,bwd.twosum_pair.p2x.w4.fw.pf.op,bwd.twosum_pair.p1x.w16.fw.pf.op
Q="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
run grid-1k --forms plain --w-dtypes fp32,bf16 --T 1024 --ops bwd --programs routed,$PW $Q --wave-units 4
run grid-16k --forms plain --w-dtypes fp32,bf16 --T 16384 --ops bwd --programs routed,$PW $Q --wave-units 4
run grid-64 --forms plain --w-dtypes fp32,bf16 --T 64 --ops bwd --programs routed $Q --wave-units 4
run grid-262k --forms plain --w-dtypes fp32,bf16 --T 262144 --ops bwd --programs routed \
  --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 2
campaign_end
