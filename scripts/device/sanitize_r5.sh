#!/usr/bin/env bash
# Round 5 (session 5): compute-sanitizer memcheck over the programs added this session, after 5c's
# head-form run hit an illegal memory access in one unit (heads_strided, FP32 weight, T 1).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1
NEW=fwd.persist.p4x.r1.w4.pf,fwd.persist.p8x.r1.w4.pf,fwd.persist.p2x.r1.w16.pf,fwd.persist.p8x.r2.w4.pf,fwd.persist.p4x.r1.w4.pf.sp,fwd.persist.p8x.r1.w4.pf.sp,fwd.persist.p2x.r1.w16.pf.sp,bwd.twosum_pair.p1x.w16.fw.pf.wr,bwd.twosum_pair.p2x.w8.fw.pf.wr,bwd.twosum_pair.p2x.w4.fw.pf.wr,bwd.twosum_pair.p4x.w4.fw.pf.wr,bwd.twosum_pair.p2x.r2.w8.fw.pf.wr,bwd.twosum_pair.p2x.w16.fw.pf.wr,bwd.twosum_pair.p8x.w4.fw.pf.wr,bwd.twosum_pair.p8x.w2.fw.pf.wr,bwd.twosum_pair.p16x.w2.fw.pf.wr,bwd.twosum_pair.p16x.w1.fw.pf.wr,bwd.twosum_pair.p1x.w16.fw.pf.wr.sp,bwd.twosum_pair.p2x.w8.fw.pf.wr.sp,bwd.twosum_pair.p2x.w16.fw.pf.wr.sp
timeout ${1:-170} compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 \
  python scripts/device/sanitize.py --programs $NEW --shapes odd 2>&1 | tee $OUT/sanitize-r5.log | grep -v "^ran " | tail -40
echo "rc=${PIPESTATUS[0]}"; grep -c "^ran " $OUT/sanitize-r5.log
