#!/usr/bin/env bash
# H200 round 16e (session 17, the last ~200 s of device time):
# 1. Qualify the residual form at H 6144 FP32 T 262144: round 16c's q-res ran out of budget during
#    the accuracy pass there (59 of 120 inputs per family, unqualified), so no program was eligible at that
#    point and the solver marked T 65537-262144 no-eligible-program.
# 2. The `.fs` forwards at the plain FP32 rows where the forward T <= 256 target fails (H 4096-8192,
#    T 16 and 256: 0.917-0.957 of Liger), which round 16a's q-fs did not reach; Liger and
#    torch.compile beside them.
PREFIX=r16e; . scripts/device/campaign_begin.sh ${1:-200}
. scripts/device/r16_programs.sh
run q-res-262144 --H 6144 --forms residual --w-dtypes fp32 --T 262144 --ops bwd \
  --programs routed,$B.p2x.w8.fw.pf.wr.sp.gp,$B.p2x.w8.fw.pf.sp.gp,$B.p2x.w8.fw.pf.wr.sp \
  --peers none --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120 --wave-units 2
run q-fs-fp32 --H 4096,5120,6144,8192 --forms plain --w-dtypes fp32 --T 16,256 --ops fwd \
  --programs routed,$FS,fwd.row.r1.w8.hs,fwd.row.r1.w16.c2048.hs --peers peer.liger,peer.torch_compile.default \
  --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120 --wave-units 8
campaign_end
