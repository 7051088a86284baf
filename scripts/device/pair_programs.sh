# Sourced by campaign_r23a.sh, campaign_r25a.sh and campaign_h31a.sh: the uncompensated `pair`
# programs with the wide (`.wr`) and one-step (`.op`) reduce, and the compensated `.op` twins
# (registry.py). One list, so that what an H100 qualifies accuracy only (h31a, session 30's h30a-d)
# is exactly what an H200 call times with --inputs-per-family 0.
PW=bwd.pair.p2x.w8.pf.wr,bwd.pair.p2x.r2.w8.pf.wr,bwd.pair.p4x.r4.w4.pf.wr,bwd.pair.p2x.w8.pf.wr.sp,bwd.pair.p1x.w16.pf.wr,bwd.pair.p1x.w16.pf.wr.sp,bwd.pair.p2x.w8.pf.op,bwd.pair.p2x.r2.w8.pf.op,bwd.pair.p1x.w16.pf.op,bwd.twosum_pair.p2x.w4.fw.pf.op,bwd.twosum_pair.p1x.w16.fw.pf.op
