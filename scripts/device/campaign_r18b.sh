#!/usr/bin/env bash
# H200 round 18b (session 19): the forward T <= 256 rows that fall short of the fastest peer (plain
# H 1536-8192, mostly FP32 weights, 0.917-0.988 of Liger or torch.compile; strided heads T 1, 0.956)
# with the `.fs` forwards and the one-row builds beside Liger and torch.compile; then round 16f's
# `.fl` forwards and backwards at contiguous heads T 4096-262144 (campaign_r16f.sh's q-fl-large).
PREFIX=r18b; . scripts/device/campaign_begin.sh ${1:-560}
. scripts/device/r16_programs.sh
Q="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
run q-fs-small --H 1536,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 1,16,64,256 --ops fwd \
  --programs routed,$FS,fwd.row.r1.w8.hs,fwd.row.r1.w16.c2048.hs --peers peer.liger,peer.torch_compile.default \
  $Q --wave-units 8
run q-fs-heads --forms heads_strided,heads_contiguous --w-dtypes fp32,bf16 --T 1,16,256 --ops fwd \
  --programs routed,$FS,fwd.row.r1.w1.hs,fwd.row.r1.w1.hs.fs.fl,fwd.row.r1.w2.hs.fs.fl \
  --peers peer.liger,peer.torch_compile.default $Q --wave-units 6
run q-fl-large --forms heads_contiguous --w-dtypes bf16,fp32 --T 4096,16384,65536,262144 --ops fwd,bwd \
  --programs routed,$FL_FWD,$FL_BWD_LARGE,$R2 --peers none $Q --wave-units 2
campaign_end
