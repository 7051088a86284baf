# Sourced by campaign_r16a.sh and campaign_r16b.sh: the program lists of round 16 (session 16's
# registrations), comma-separated as `cake_router measure --programs` and the self-test take them.
B=bwd.twosum_pair
CT=bwd.column_task.c128.w1,bwd.column_task.c256.w1,bwd.column_task.c64.w1,bwd.column_task.c32x16.w4,bwd.column_task.c64x2.w4
CT=$CT,bwd.column_task.c32x16.w4.hs,bwd.column_task.c64x2.w4.hs
R2=$B.p16x.r2.w1.fw.pf.wr.xs,$B.p16x.r2.w1.fw.pf.wr.xs.wc,$B.p16x.r2.w1.fw.pf.wr.xs.sr,$B.p16x.r2.w1.fw.pf.wr.xs.wc.sr
R2=$R2,$B.p12x.r2.w1.fw.pf.wr.xs.sr,$B.p12x.r2.w1.fw.pf.wr.xs.wc.sr,$B.p16x.r2.w1.fw.pf.wr,$B.p16x.r2.w1.fw.pf.wr.wc
R2_REST=$B.p12x.r2.w1.fw.pf.wr,$B.p12x.r2.w1.fw.pf.wr.wc,$B.p12x.r2.w1.fw.pf.wr.xs,$B.p12x.r2.w1.fw.pf.wr.xs.wc
FL_FWD=fwd.row.r1.w1.c256.hs.fl,fwd.row.r4.w2.c512.hs.fl,fwd.row.r8.w4.c256.hs.fl,fwd.row.r8.w4.c512.hs.fl,fwd.row.r1.w1.hs.fl
FL_BWD_SMALL=bwd.column_task.c32.w4.fl,bwd.column_task.c128.w1.fl,bwd.column_task.c256.w1.fl,$B.p2x.w8.fw.pf.wr.fl
FL_BWD_SMALL=$FL_BWD_SMALL,$B.p2x.r2.w8.fw.pf.wr.fl,$B.p8x.w2.fw.pf.wr.fl,$B.p10x.w2.fw.pf.wr.fl
FL_BWD_LARGE=$B.p8x.w2.fw.pf.wr.fl,$B.p10x.w2.fw.pf.wr.fl,$B.p16x.w1.fw.pf.wr.fl,$B.p16x.w1.fw.pf.wr.xs.sr.fl
FL_BWD_LARGE=$FL_BWD_LARGE,$B.p16x.r2.w1.fw.pf.wr.xs.sr.fl,$B.p16x.r2.w1.fw.pf.wr.xs.wc.sr.fl,$B.p12x.r2.w1.fw.pf.wr.xs.sr.fl
SR=$B.p4x.r4.w2.fw.pf.wr.xs.sr,$B.p4x.r4.w2.fw.pf.wr.xs.wc.sr,$B.p8x.w2.fw.pf.wr.sr,$B.p10x.w2.fw.pf.wr.sr
FS=fwd.row.r1.w1.hs.fs,fwd.row.r1.w2.hs.fs,fwd.row.r1.w4.hs.fs,fwd.row.r1.w8.hs.fs,fwd.row.r1.w16.hs.fs
FS_FL=fwd.row.r1.w1.hs.fs.fl,fwd.row.r1.w2.hs.fs.fl
GP=$B.p2x.w8.fw.pf.sp.gp,$B.p2x.w8.fw.pf.wr.sp.gp,$B.p1x.w16.fw.pf.wr.sp.gp,$B.p2x.w8.fw.pf.wr.sp.wc.gp
GP=$GP,$B.p2x.w8.fw.pf.wr.gp,$B.p1x.w16.fw.pf.wr.gp
# never timed in the residual form with a BF16 weight: the split-row `.wr` shapes that win plain rows at H 6144
RES_WR=$B.p2x.w8.fw.pf.wr.sp,$B.p2x.w8.fw.pf.wr.sp.xs,$B.p2x.w8.fw.pf.wr.sp.xs.wc,$B.p2x.w8.fw.pf.wr.sp.wc
NEW=$CT,$R2,$R2_REST,$FL_FWD,$FL_BWD_SMALL,$FL_BWD_LARGE,$FS,$FS_FL,$GP
