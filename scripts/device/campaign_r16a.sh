#!/usr/bin/env bash
# H200 round 16a (written in session 16, which had no GPU): the programs registered that session.
# 1. GPU self-test of the 15 new backwards (one-warp column tasks, two-row one-warp head-row programs).
# 2. One-warp column tasks at T <= 256 (the one failing T <= 256 backward row: H 512 FP32 T 1, 1.63 us
#    against torch.compile's 1.38), torch.compile beside them at H 512.
# 3. Two-row one-warp head rows (`p16x.r2.w1`, `p12x.r2.w1`: twice the bytes in flight per program of
#    the routed p16x.w1 at 16 programs per SM) at T >= 4096, qualified (120 inputs per family).
# 4. The `.sr` twins at H 512 T 4096-16384 (the worst backward row against the in-budget SOTA: H 512
#    FP32 T 4096, 15.2 us against torch.compile's 12.2), torch.compile beside them.
# Each `run` is skipped when the call's time is spent, so the order is the priority.
PREFIX=r16a; . scripts/device/campaign_begin.sh ${1:-540}
B=bwd.twosum_pair
CT=bwd.column_task.c128.w1,bwd.column_task.c256.w1,bwd.column_task.c64.w1
R2=$B.p16x.r2.w1.fw.pf.wr.xs,$B.p16x.r2.w1.fw.pf.wr.xs.wc,$B.p16x.r2.w1.fw.pf.wr.xs.sr,$B.p16x.r2.w1.fw.pf.wr.xs.wc.sr
R2=$R2,$B.p12x.r2.w1.fw.pf.wr.xs.sr,$B.p12x.r2.w1.fw.pf.wr.xs.wc.sr,$B.p16x.r2.w1.fw.pf.wr,$B.p16x.r2.w1.fw.pf.wr.wc
SR=$B.p4x.r4.w2.fw.pf.wr.xs.sr,$B.p4x.r4.w2.fw.pf.wr.xs.wc.sr,$B.p8x.w2.fw.pf.wr.sr,$B.p10x.w2.fw.pf.wr.sr
NEW=$CT,$R2,$B.p12x.r2.w1.fw.pf.wr,$B.p12x.r2.w1.fw.pf.wr.wc,$B.p12x.r2.w1.fw.pf.wr.xs,$B.p12x.r2.w1.fw.pf.wr.xs.wc
timeout 90 python -m cake_kernels.selftest --H 256,512,1536 --T 1,16,4096 --families gaussian,outlier_rows \
  --forms plain,heads_contiguous,heads_strided --w-dtypes fp32,bf16 --programs $NEW > $W/selftest-new.log 2>&1
echo "selftest rc=$?"; tail -3 $W/selftest-new.log
Q="--ops bwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
run q-ct-512 --H 512 --forms plain --w-dtypes fp32,bf16 --T 1,16,64,256 --programs routed,$CT,bwd.column_task.c32.w4 \
  --peers peer.torch_compile.default $Q --wave-units 2
run q-ct --H 1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 1,16,64,256 --programs routed,$CT \
  --peers none $Q --wave-units 8
run q-ct-forms --H 6144 --forms residual,heads_contiguous,heads_strided --w-dtypes fp32,bf16 --T 1,16,64,256 \
  --programs routed,$CT --peers none $Q --wave-units 8
run q-r2-heads --forms heads_contiguous,heads_strided --w-dtypes bf16,fp32 --T 4096,16384,65536,262144 \
  --programs routed,$R2 --peers none $Q --wave-units 2
run q-sr-512 --H 512 --forms plain --w-dtypes fp32,bf16 --T 4096,16384,65536 --programs routed,$SR \
  --peers peer.torch_compile.default $Q --wave-units 2
run q-r2-1m --forms heads_contiguous,heads_strided --w-dtypes bf16,fp32 --T 1048576 \
  --programs routed,$B.p16x.r2.w1.fw.pf.wr.xs.sr,$B.p16x.r2.w1.fw.pf.wr.xs.wc.sr --peers none $Q --wave-units 2
campaign_end
