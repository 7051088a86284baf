#!/usr/bin/env bash
# H200 round 16b (written in session 16, which had no GPU): the rest of round 16 after
# campaign_r16a.sh, in order of priority.
# 0. The residual form at H 6144 (the worst backward row against copy: BF16 T 65536 64.5 %, where its
#    plain twin reaches 84 %): the `.gp` twins (GRES prefetched with the next tile) beside the
#    split-row `.wr` shapes never timed in that form, qualified.
# 1. Two-row one-warp head rows at strided heads T 4096-262144 (65.1-72 % of copy), qualified, with
#    round 15's `.sr` twins (never timed there: campaign_r15e.sh's q-heads-s did not run).
# 2. The `.sr` twins at H 512 T 4096-65536 (the worst backward row against the in-budget SOTA:
#    H 512 FP32 T 4096, 15.2 us against torch.compile's 12.2), torch.compile beside them.
# 3. The new column tasks at T <= 256 on the other rows and forms.
# 4. T 1M at both head forms for the `.fl` and two-row programs.
PREFIX=r16b; . scripts/device/campaign_begin.sh ${1:-540}
. scripts/device/r16_programs.sh
Q="--ops bwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
run q-res --H 6144 --forms residual --w-dtypes bf16,fp32 --T 4096,16384,65536,262144 --programs routed,$GP,$RES_WR \
  --peers none $Q --wave-units 2
run q-r2-strided --forms heads_strided --w-dtypes bf16,fp32 --T 4096,16384,65536,262144 \
  --programs routed,$R2,$B.p16x.w1.fw.pf.wr.sr,$B.p16x.w1.fw.pf.wr.xs.sr \
  --peers none $Q --wave-units 2
run q-sr-512 --H 512 --forms plain --w-dtypes fp32,bf16 --T 4096,16384,65536 --programs routed,$SR \
  --peers peer.torch_compile.default $Q --wave-units 2
run q-ct --H 1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 1,16,64,256 --programs routed,$CT \
  --peers none $Q --wave-units 8
run q-ct-forms --H 6144 --forms residual,heads_strided --w-dtypes fp32,bf16 --T 1,16,64,256 --programs routed,$CT \
  --peers none $Q --wave-units 8
run q-1m --forms heads_contiguous,heads_strided --w-dtypes bf16,fp32 --T 1048576 \
  --programs routed,$B.p16x.r2.w1.fw.pf.wr.xs.sr,$B.p16x.r2.w1.fw.pf.wr.xs.wc.sr,$B.p16x.w1.fw.pf.wr.xs.sr.fl,$B.p16x.r2.w1.fw.pf.wr.xs.sr.fl \
  --peers none $Q --wave-units 2
campaign_end
