#!/usr/bin/env bash
# H200 round 19b (session 20): what rounds 18a, 18b and 16b left when their calls ran out of time,
# in order of what it can move:
# 1. The `.gs` wide rows (H 1536-8192) past session 1's H 1536 BF16 units: at H 1536 they gained
#    nothing (T 4096 21.5 us against the routed 21.1), so FP32 and H 2048-8192 at T 4096 first.
# 2. The forwards at strided and contiguous heads T 16 and 256 with the `.fs` builds (q-fs-heads ran
#    T 1 only; strided heads T 1 is 0.955x torch.compile).
# 3. The column tasks at T <= 256 on the other rows and forms, and T 1M at both head forms.
PREFIX=r19b; . scripts/device/campaign_begin.sh ${1:-560}
. scripts/device/r16_programs.sh
. scripts/device/r17_programs.sh
Q="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
run q-gs-wide --H 1536,2048,4096,8192 --forms plain --w-dtypes fp32,bf16 --T 4096,65536 --ops bwd \
  --programs routed,$GS_WIDE --peers none $Q --wave-units 4
run q-fs-heads --forms heads_strided,heads_contiguous --w-dtypes fp32,bf16 --T 16,256 --ops fwd \
  --programs routed,$FS,fwd.row.r1.w1.hs,fwd.row.r1.w1.hs.fs.fl,fwd.row.r1.w2.hs.fs.fl \
  --peers peer.torch_compile.default --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 4
run q-ct --H 1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 1,16,64,256 --ops bwd \
  --programs routed,$CT --peers none $Q --wave-units 8
run q-1m --forms heads_contiguous,heads_strided --w-dtypes bf16,fp32 --T 1048576 --ops bwd \
  --programs routed,$B.p16x.r2.w1.fw.pf.wr.xs.sr.fl,$B.p16x.r2.w1.fw.pf.wr.xs.wc.sr.fl \
  --peers none $Q --wave-units 2
campaign_end
