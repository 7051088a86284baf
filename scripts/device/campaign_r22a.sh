#!/usr/bin/env bash
# H200 round 22a (queued by session 23, whose H200 calls routed `.uf8.rw` at H 512 T 4096-65536 and
# moved the backward copy target's binding row to strided heads H 256 BF16 T 262144, 68.3 % of copy):
# (Session 25 put fl-fwd-1m first, of the queue the only run that can turn a target to met, and added
# the routed `r4.w2.c512.hs`'s own `.fl` twin to it.)
# 1. q-r2-262k: the two-row strided-heads programs qualified where they are timed but have no accuracy
#    evidence (`p16x.r2.w1.fw.pf.wr.xs.wc.sr` 2,619 us against the routed 3,447, about 90 % of copy);
#    round 19a's q-r2-large reached 1 of its 8 units (one T 1M unit took 153 s), so T 262144 first.
# 2. fl-fwd-1m: the `.fl` forwards at contiguous heads FP32 T 1M, the forward peer target's binding row
#    (0.977x: 1,048 us against torch.compile's 1,024); at T 262144 `.fl` took the FP32 row from 265 to
#    251 us (1.03x), and it was never timed at T 1M.
# 3. q-uf8-large: `.uf8.rw` past T 65536 (the solver stops it there for want of points), with torch.compile.
# 4. steps-uf8: the 2xfwd+bwd steps of the routed `.uf8.rw` at T 65536.
# 5. q-r2-1m: the same two-row programs at T 1M (152 s a unit), if time is left.
# Timings from a card that is not an H200 are not the route table's: this script then stops.
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) ;; *) echo "not an H200: nothing measured"; exit 0 ;; esac
PREFIX=r22a; . scripts/device/campaign_begin.sh ${1:-560}
B=bwd.twosum_pair; G=bwd.twosum.p4x.r4.w2.fw.pf.gs.xs
Q="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
run fl-fwd-1m --forms heads_contiguous --w-dtypes fp32,bf16 --T 1048576 --ops fwd \
  --programs routed,fwd.row.r4.w2.c512.hs.fl,fwd.row.r8.w4.c256.hs.fl,fwd.row.r8.w4.c512.hs.fl --peers peer.torch_compile.default \
  --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 2
run q-r2-262k --forms heads_strided --w-dtypes bf16,fp32 --T 262144 --ops bwd \
  --programs routed,$B.p16x.r2.w1.fw.pf.wr.xs.sr,$B.p16x.r2.w1.fw.pf.wr.xs.wc.sr --peers none $Q --wave-units 2
run q-uf8-large --H 512 --forms plain --w-dtypes bf16,fp32 --T 131072,262144 --ops bwd \
  --programs routed,$G.uf8.rw --peers peer.torch_compile.default $Q --wave-units 2
run steps-uf8 --H 512 --forms plain --w-dtypes bf16,fp32 --T 65536 --ops 2xfwd+bwd \
  --programs routed --peers peer.torch_compile.default --sessions 2 --seconds-per-unit 0.5 \
  --inputs-per-family 0 --wave-units 2
run q-r2-1m --forms heads_strided --w-dtypes bf16,fp32 --T 1048576 --ops bwd \
  --programs routed,$B.p16x.r2.w1.fw.pf.wr.xs.sr,$B.p16x.r2.w1.fw.pf.wr.xs.wc.sr --peers none $Q --wave-units 1
campaign_end
