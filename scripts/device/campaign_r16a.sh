#!/usr/bin/env bash
# H200 round 16a (written in session 16, which had no GPU): the programs registered that session,
# contiguous heads first.
# 1. GPU self-test of the 49 new programs: column tasks (one-warp, shorter column tiles, `.hs`),
#    two-row one-warp head-row backwards (p16x.r2.w1, p12x.r2.w1 and their .xs/.wc/.sr twins), the
#    `.fl` flat-head-row twins, the `.fs` fast-statistics one-row forwards and the `.gp` residual twins.
# 2. `.fl` twins at contiguous heads T <= 256, fwd and bwd, torch.compile beside them (the forward's
#    worst T <= 256 rows: contiguous heads T 1, 1.44 and 1.38 us against torch.compile's 1.25, 1.22).
#    With them the `.fs` forwards (rstd by the approximate rsqrt: 44 fewer SASS instructions on a
#    row's path), and at T <= 256 on plain rows beside Liger and torch.compile (run q-fs).
# 3. The new column tasks at H 512 T <= 256 (c32x16.w4 has under half the column task's SASS path at
#    T <= 16), torch.compile beside them (the one failing T <= 256 backward row: H 512 FP32 T 1,
#    1.63 us against 1.38).
# 4. `.fl` twins and the two-row head rows at contiguous heads T 4096-262144 (the worst backward rows
#    against copy: 65-71 %), qualified (120 inputs per family).
# campaign_r16b.sh has the rest. Each `run` is skipped when the call's time is spent, so the order is
# the priority.
PREFIX=r16a; . scripts/device/campaign_begin.sh ${1:-540}
. scripts/device/r16_programs.sh
timeout 120 python -m cake_kernels.selftest --H 256,512,1536 --T 1,16,4096 --families gaussian,outlier_rows \
  --forms plain,residual,heads_contiguous,heads_strided --w-dtypes fp32,bf16 --programs $NEW > $W/selftest-new.log 2>&1
echo "selftest rc=$?"; tail -3 $W/selftest-new.log
python scripts/device/warm_compile.py --programs $FS,$FS_FL,$FL_FWD --H 256,512,1536,2048,4096,5120,6144,8192 \
  --w-dtypes fp32,bf16 --forms plain,heads_contiguous > $W/warm.log 2>&1; tail -1 $W/warm.log
Q="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
run q-fl-small --forms heads_contiguous --w-dtypes bf16,fp32 --T 1,16,64,256 --ops fwd,bwd \
  --programs routed,$FL_FWD,$FS_FL,$FL_BWD_SMALL,$CT --peers peer.torch_compile.default $Q --wave-units 2
run q-fs --H 512,1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 1,16,64,256 --ops fwd \
  --programs routed,$FS --peers peer.liger,peer.torch_compile.default $Q --wave-units 8
run q-ct-512 --H 512 --forms plain --w-dtypes fp32,bf16 --T 1,16,64,256 --ops bwd \
  --programs routed,$CT,bwd.column_task.c32.w4 --peers peer.torch_compile.default $Q --wave-units 2
run q-fl-large --forms heads_contiguous --w-dtypes bf16,fp32 --T 4096,16384,65536,262144 --ops fwd,bwd \
  --programs routed,$FL_FWD,$FL_BWD_LARGE,$R2 --peers none $Q --wave-units 2
campaign_end
