#!/usr/bin/env bash
# H200 campaign round 4a (session 4, 2026-12-02). Carries .whlA (Liger; part one of the CUTLASS DSL
# wheel stays in /tmp/wheels for round 4b, which must follow within the 30 s warm window).
#  1. torch.compile (default, max-autotune-no-cudagraphs) at two points: it has never run here.
#  2. The programs not yet run on a GPU (four-row tiles .r4, split rows .sp) against FP64.
#  3. BF16 weight, plain rows, every H at T 1, 256, 4096, 65536 with accuracy (120 inputs per
#     family) at every T: the sampled frame of the 21 bf16 route keys.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers.log 2>&1; cat /tmp/setup_peers.log
FINAL=$OUT; W=/tmp/c4a; mkdir -p $W
END=$(( $(date +%s) + ${1:-540} ))
PREFIX=r4a; . scripts/device/run_measure.sh
SMOKE_END=$END; END=$(( $(date +%s) + 50 ))
CS="--H 4096 --forms plain --w-dtypes fp32 --programs fwd.row.r4.w4,bwd.twosum_pair.p2x.w4.fw.pf --ops fwd,bwd,2xfwd+bwd
  --sessions 1 --seconds-per-unit 2 --accuracy-max-T 4096 --large-T-inputs 0"
run compile --T 256,65536 --peers peer.torch_compile.default $CS
END=$(( $(date +%s) + 75 ))
run autotune --T 65536 --peers peer.torch_compile.max_autotune $CS
END=$SMOKE_END
NEW=bwd.atomic.p4x.r4.w4.pf,bwd.pair.p4x.r4.w4.pf,bwd.twosum_pair.p4x.r4.w4.fw.pf,bwd.twosum.p4x.r4.w4.fw.pf
NEW=$NEW,bwd.twosum_pair.p8x.r4.w4.fw.pf,fwd.row.r1.w4.sp,fwd.persist.p4x.r1.w4.sp,fwd.persist.p2x.r1.w8.sp
NEW=$NEW,bwd.pair.p2x.w8.pf.sp,bwd.twosum_pair.p1x.w16.fw.pf.sp,bwd.twosum.p2x.w8.fw.pf.sp
timeout 60 python -m cake_kernels.selftest --H 512,6144 --T 1,4096 --families gaussian,same_sign --forms plain \
  --w-dtypes fp32 --programs $NEW --json $W/selftest-new.json > $W/selftest-new.log 2>&1; echo "selftest rc=$?"; tail -4 $W/selftest-new.log
F=fwd.row.r1.w4,fwd.row.r1.w8,fwd.row.r4.w4,fwd.persist.p4x.r1.w4,fwd.persist.p2x.r1.w8,fwd.persist.p8x.r2.w4
B=bwd.column_task.c32.w4,bwd.column_task.c64.w4,bwd.twosum.p1x.w16.fw.pf,bwd.pair.p2x.w8.pf,bwd.pair.p1x.w8
B=$B,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p2x.r2.w8.fw.pf
B=$B,bwd.twosum_pair.p2x.w4.fw.pf,bwd.twosum.p2x.w8.fw.pf,bwd.twosum.p4x.w4.fw.pf
run bf16 --H 512,1536,2048,4096,5120,6144,8192 --T 1,256,4096,65536 --forms plain --w-dtypes bf16 --programs $F,$B \
  --peers peer.eager,peer.liger --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 --inputs-per-family 120 \
  --accuracy-max-T 65536 --wave-units 14
cd $W && tar czf $FINAL/r4a.tar.gz *.log selftest-new.json */plan.json */*.failures.jsonl r4a-*.jsonl.gz 2>/dev/null; ls -la $FINAL
