# Sourced by campaign_r18a.sh and campaign_r19b.sh: the `.gs` programs (session 18: one launch, the partials summed after
# a grid barrier), comma-separated as `cake_router measure --programs` and the self-test take them.
S=bwd.twosum
GS_512=$S.p4x.r4.w2.fw.pf.gs.xs,$S.p4x.r4.w2.fw.pf.gs.xs.wc,$S.p2x.w4.fw.pf.gs.xs,$S.p2x.w4.fw.pf.gs.xs.wc,$S.p8x.w2.fw.pf.gs
GS_HEADS=$S.p16x.w1.fw.pf.gs.xs,$S.p16x.w1.fw.pf.gs.xs.wc,$S.p8x.w2.fw.pf.gs,$S.p4x.r4.w2.fw.pf.gs.xs
GS_HEADS=$GS_HEADS,$S.p16x.w1.fw.pf.gs.xs.fl,$S.p16x.w1.fw.pf.gs.xs.wc.fl,$S.p8x.w2.fw.pf.gs.fl
GS_WIDE=$S.p2x.r2.w8.fw.pf.gs.xs,$S.p2x.r2.w8.fw.pf.gs.xs.wc,$S.p1x.r4.w8.fw.pf.gs.xs,$S.p1x.r4.w8.fw.pf.gs.xs.wc
GS_WIDE=$GS_WIDE,$S.p2x.w4.fw.pf.gs.xs,$S.p2x.w4.fw.pf.gs.xs.wc,$S.p1x.w16.fw.pf.gs.xs
GS=$GS_512,$GS_HEADS,$GS_WIDE
