#!/usr/bin/env bash
# H200 round 16f: what round 16a did not reach (its q-fs stopped at the time limit after H 512-2048,
# its q-fl-large never started). Run after campaign_r16e.sh; campaign_r16b.sh has the rest.
# 1. `.fl` twins and the two-row head rows at contiguous heads T 4096-262144 (the worst backward rows
#    against copy: 65-71 %), qualified.
# 2. The `.fs` forwards at plain rows H 2048-8192 T <= 256, both weights, Liger and torch.compile beside.
PREFIX=r16f; . scripts/device/campaign_begin.sh ${1:-540}
. scripts/device/r16_programs.sh
Q="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
run q-fl-large --forms heads_contiguous --w-dtypes bf16,fp32 --T 4096,16384,65536,262144 --ops fwd,bwd \
  --programs routed,$FL_FWD,$FL_BWD_LARGE,$R2 --peers none $Q --wave-units 2
run q-fs-rest --H 2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 1,16,64,256 --ops fwd \
  --programs routed,$FS --peers peer.liger,peer.torch_compile.default $Q --wave-units 8
campaign_end
