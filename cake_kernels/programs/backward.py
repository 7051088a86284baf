"""Backward programs: dx (BF16) per row and dw = sum_rows g * x * rstd (FP32).

`rmsnorm_bwd_rows_kernel` is a persistent kernel: each of P programs strides over blocks of ROWS
rows, writes dx, and keeps its own dw partial. What it does with the partial is the family:

- ATOMIC (0, `atomic`, nondet): FP32 running sum, added to dw with atomics (order varies run to run).
- PAIR (1, `pair`, det): FP32 running sum stored to a [P, H] workspace; a reduce kernel sums the
  partials in a fixed order in FP64.
- BLOCKED (2, `blocked`, det): FP32 sums over blocks of FOLD rows, each block folded into an FP32
  running sum: the running sum sees T / (P * FOLD) terms instead of T / P.
- TWOSUM (3, `twosum_pair` / `twosum`, det): error-free products and TwoSum compensation per
  thread (see below); every FOLD rows the FP32 (sum, compensation) pair is folded into an FP64
  per-thread total and reset, so a long run of same-sign large values can never overflow the FP32
  running sum to inf (which would turn the compensation into inf - inf = NaN). The FP64 partials go
  to a [P, H] workspace reduced in fixed order, either by a second kernel (`twosum_pair`) or by
  the last program to finish (`twosum`, single launch: a self-resetting arrival counter).
- FP64 sums (`f64_pair` two-launch / `f64` single launch, det; `rmsnorm_bwd_rows_fp64_kernel` and
  its TMA and grid-barrier builds, not a MODE of this kernel, whose programs' fingerprints stay): each
  product made exact (`_dw_step_fp64`) and summed in FP64, no compensation and no fold; the [P, H]
  FP64 partials are reduced as TWOSUM's.

Launch options of the persistent kernel (LaunchPolicy, names in the registry): ROWS > 1 on a
compensated program sums each tile of rows by a TwoSum tree (`_twosum_combine`); FOLD_WS keeps the
FP64 running total in the program's own workspace row instead of two registers per column; PREFETCH
loads the next tile while this one is reduced. On the H200 the last two took the compensated
programs from 1.7-2.4 TB/s (H 2048-8192) to 2.2-3.8 TB/s (H 512-8192) at T = 1M
(bench/results/h200-2026-12-02b/twosum-probe{1,2}.json).

Why the products matter (DESIGN.md, numerics): with TwoSum on the sums, the remaining error is
the rounding of each product. `xhat = x * rstd` and `p = g * xhat` are each rounded once
(`mul_rn`), and their exact rounding errors `fma(x, rstd, -xhat)` and `fma(g, xhat, -p)` are
folded into the compensation: `g * x * rstd = p + e2 + g * e1` up to a term below FP32 resolution.
Computing `g * xhat` rather than `(g * x) * rstd` keeps the products finite for any BF16 inputs
whose dw is finite (|xhat| <= sqrt(H)).
"""

from __future__ import annotations

import triton
import triton.language as tl

from cake_kernels.programs.common import mul_rn, row_grad, row_offsets, to_bf16

ATOMIC, PAIR, BLOCKED, TWOSUM = 0, 1, 2, 3


@triton.jit
def rmsnorm_bwd_rows_kernel(
    G, X, W, RSTD, GRES, DX, DW, WS, COUNTER,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, MODE: tl.constexpr, FOLD: tl.constexpr,
    HAS_GRES: tl.constexpr, SINGLE: tl.constexpr, EXACT: tl.constexpr, RED_BLOCK: tl.constexpr,
    FOLD_WS: tl.constexpr = False, PREFETCH: tl.constexpr = False, BLOCK_B: tl.constexpr = 0,
):
    """BLOCK_B > 0: the row is held as two tiles, columns [0, BLOCK_H) (all valid) and
    [BLOCK_H, BLOCK_H + BLOCK_B) (masked), as the forward's split programs do (programs/forward.py);
    every per-column quantity below then exists once per tile (the `_b` names)."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    acc, comp, blk_acc, tot = _dw_state(BLOCK_H)
    ws_row = WS + pid.to(tl.int64) * H + cols
    if BLOCK_B > 0:
        cols_b = BLOCK_H + tl.arange(0, BLOCK_B)
        cmask_b = cols_b < H
        w_b = tl.load(W + cols_b, mask=cmask_b, other=0.0).to(tl.float32)
        acc_b, comp_b, blk_acc_b, tot_b = _dw_state(BLOCK_B)
        ws_row_b = WS + pid.to(tl.int64) * H + cols_b
    if MODE == 3:
        if FOLD_WS:
            tl.store(ws_row, tl.zeros([BLOCK_H], dtype=tl.float64), mask=cmask)
            if BLOCK_B > 0:
                tl.store(ws_row_b, tl.zeros([BLOCK_B], dtype=tl.float64), mask=cmask_b)
    n_blocks = tl.cdiv(n_rows, ROWS)
    if PREFETCH:
        # Software pipelining by hand: the next tile's g, x and rstd are loaded (as BF16, half the
        # registers) before this tile's row reduction and compensated sums, so its memory latency
        # overlaps them. Without it one tile is in flight per program, and the register-heavy
        # compensated programs run one or two programs per SM (ncu: 12.5 % occupancy), too few
        # to hide DRAM latency.
        first = tl.arange(0, ROWS).to(tl.int64) + pid * ROWS
        g_n, x_n, r_n = load_tile(G, X, RSTD, first, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
        if BLOCK_B > 0:
            g_nb, x_nb, _ = load_tile(G, X, RSTD, first, cols_b, cmask_b, n_rows, NH, sgt, sgh, sxt, sxh)
    it = 0
    for blk in range(pid, n_blocks, nprog):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        mask = rmask[:, None] & cmask[None, :]
        if PREFETCH:
            g, x, rstd = g_n, x_n, r_n
            g_n, x_n, r_n = load_tile(G, X, RSTD, rows + nprog * ROWS, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
            if BLOCK_B > 0:
                g_b, x_b = g_nb, x_nb
                g_nb, x_nb, _ = load_tile(G, X, RSTD, rows + nprog * ROWS, cols_b, cmask_b, n_rows, NH, sgt, sgh, sxt, sxh)
        else:
            g, x, rstd = load_tile(G, X, RSTD, rows, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
            if BLOCK_B > 0:
                g_b, x_b, _ = load_tile(G, X, RSTD, rows, cols_b, cmask_b, n_rows, NH, sgt, sgh, sxt, sxh)
        g = g.to(tl.float32)
        x = x.to(tl.float32)
        if BLOCK_B > 0:
            g_b = g_b.to(tl.float32)
            x_b = x_b.to(tl.float32)
            # mean(g*w*x) over the whole row: the two tiles' sums added
            c = tl.div_rn(tl.sum(g * w[None, :] * x, axis=1) + tl.sum(g_b * w_b[None, :] * x_b, axis=1), H_f)
            _store_dx(DX, GRES, g, x, w, rstd, c, rows, rmask, cols, cmask, NH, srt, srh, H, HAS_GRES, EXACT)
            _store_dx(DX, GRES, g_b, x_b, w_b, rstd, c, rows, rmask, cols_b, cmask_b, NH, srt, srh, H, HAS_GRES, EXACT)
        else:
            # One tile: `row_grad` as before split rows existed, not `_store_dx` (the same math, but it
            # moved the SASS of the compensated programs the shipped evidence measured).
            dx = row_grad(g, x, w, rstd, H_f)
            if HAS_GRES:
                dx += tl.load(GRES + row_offsets(rows, NH, srt, srh)[:, None] + cols[None, :], mask=mask, other=0.0).to(tl.float32)
            tl.store(DX + rows[:, None] * H + cols[None, :], to_bf16(dx, EXACT), mask=mask)
        acc, comp, blk_acc, tot = _dw_step(g, x, rstd, acc, comp, blk_acc, tot, ws_row, cmask, it,
                                           MODE, FOLD, FOLD_WS, ROWS, EXACT)
        if BLOCK_B > 0:
            acc_b, comp_b, blk_acc_b, tot_b = _dw_step(g_b, x_b, rstd, acc_b, comp_b, blk_acc_b, tot_b, ws_row_b,
                                                       cmask_b, it, MODE, FOLD, FOLD_WS, ROWS, EXACT)
        it += 1

    _dw_finish(DW, ws_row, cols, cmask, acc, comp, blk_acc, tot, MODE, FOLD_WS)
    if BLOCK_B > 0:
        _dw_finish(DW, ws_row_b, cols_b, cmask_b, acc_b, comp_b, blk_acc_b, tot_b, MODE, FOLD_WS)
    if MODE == 3:
        if SINGLE:
            # Every thread's partial store must be issued before the one arrival below releases it.
            tl.debug_barrier()
            arrived = tl.atomic_add(COUNTER, 1, sem="acq_rel")
            if arrived == nprog - 1:
                reduce_partials_block(WS, DW, nprog, H, 0, H, RED_BLOCK)
                tl.atomic_xchg(COUNTER, 0)


@triton.jit
def _dw_state(BLOCK: tl.constexpr):
    """A program's running dw state for BLOCK columns, zeroed: FP32 sum, its TwoSum compensation,
    the `blocked` family's block sum, and the register-held FP64 total."""
    return (tl.zeros([BLOCK], dtype=tl.float32), tl.zeros([BLOCK], dtype=tl.float32),
            tl.zeros([BLOCK], dtype=tl.float32), tl.zeros([BLOCK], dtype=tl.float64))


@triton.jit
def _store_dx(DX, GRES, g, x, w, rstd, c, rows, rmask, cols, cmask, NH, srt, srh, H,
              HAS_GRES: tl.constexpr, EXACT: tl.constexpr):
    """dx = rstd * (g*w) - x * rstd^3 * c (+ the residual gradient) of one tile, stored as BF16;
    c = mean(g*w*x) over the whole row (`common.row_grad` for a row held as one tile)."""
    mask = rmask[:, None] & cmask[None, :]
    r = rstd[:, None]
    dx = r * (g * w[None, :]) - x * ((r * r * r) * c[:, None])
    if HAS_GRES:
        dx += tl.load(GRES + row_offsets(rows, NH, srt, srh)[:, None] + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(DX + rows[:, None] * H + cols[None, :], to_bf16(dx, EXACT), mask=mask)


@triton.jit
def _dw_step(g, x, rstd, acc, comp, blk_acc, tot, ws_row, cmask, it,
             MODE: tl.constexpr, FOLD: tl.constexpr, FOLD_WS: tl.constexpr, ROWS: tl.constexpr, EXACT: tl.constexpr):
    """One tile's contribution to this program's dw partial of these columns (the family's sum)."""
    if MODE == 3:
        r = rstd[:, None]
        xhat = mul_rn(x, r, EXACT)
        p2 = mul_rn(g, xhat, EXACT)
        res2 = tl.fma(g, xhat, -p2) + g * tl.fma(x, r, -xhat)
        if ROWS == 1:
            p = tl.sum(p2, axis=0)
            res = tl.sum(res2, axis=0)
        else:
            # A tile of rows is summed by a TwoSum tree: the tile sum's rounding errors go into
            # `res`, so a tile costs no more accuracy than its rows added one at a time (a plain
            # FP32 tile sum would cost the whole budget headroom, DESIGN.md numerics).
            p, res = tl.reduce((p2, res2), 0, _twosum_combine)
        s = acc + p
        bp = s - acc
        comp += ((acc - (s - bp)) + (p - bp)) + res
        acc = s
        if it % FOLD == FOLD - 1:
            if FOLD_WS:
                # The FP64 running total lives in this program's workspace row instead of
                # registers: 2 registers per column less (wide rows otherwise spill), for one
                # read-modify-write of H doubles every FOLD tiles. Only this program touches the row.
                tl.debug_barrier()
                tl.store(ws_row, tl.load(ws_row, mask=cmask, other=0.0) + (acc.to(tl.float64) + comp.to(tl.float64)), mask=cmask)
            else:
                tot += acc.to(tl.float64) + comp.to(tl.float64)
            acc = tl.zeros(acc.shape, dtype=tl.float32)
            comp = tl.zeros(comp.shape, dtype=tl.float32)
    else:
        p = tl.sum(g * (x * rstd[:, None]), axis=0)
        if MODE == 2:
            blk_acc += p
            if it % FOLD == FOLD - 1:
                acc += blk_acc
                blk_acc = tl.zeros(blk_acc.shape, dtype=tl.float32)
        else:
            acc += p
    return acc, comp, blk_acc, tot


@triton.jit
def _dw_finish(DW, ws_row, cols, cmask, acc, comp, blk_acc, tot, MODE: tl.constexpr, FOLD_WS: tl.constexpr):
    """This program's dw partial of these columns: added to dw (atomic) or stored to its workspace row."""
    if MODE == 0:
        tl.atomic_add(DW + cols, acc, mask=cmask)
    elif MODE == 3:
        if FOLD_WS:
            tl.debug_barrier()
            tl.store(ws_row, tl.load(ws_row, mask=cmask, other=0.0) + (acc.to(tl.float64) + comp.to(tl.float64)), mask=cmask)
        else:
            tot += acc.to(tl.float64) + comp.to(tl.float64)
            tl.store(ws_row, tot, mask=cmask)
    else:
        if MODE == 2:
            acc += blk_acc
        tl.store(ws_row, acc, mask=cmask)


@triton.jit
def load_tile(G, X, RSTD, rows, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh):
    """g and x (as stored, BF16) and rstd of a tile of rows; rows past n_rows and masked columns read 0."""
    rmask = rows < n_rows
    mask = rmask[:, None] & cmask[None, :]
    g = tl.load(G + row_offsets(rows, NH, sgt, sgh)[:, None] + cols[None, :], mask=mask, other=0.0)
    x = tl.load(X + row_offsets(rows, NH, sxt, sxh)[:, None] + cols[None, :], mask=mask, other=0.0)
    return g, x, tl.load(RSTD + rows, mask=rmask, other=0.0)


@triton.jit
def _twosum_combine(a, ca, b, cb):
    """(a, ca) + (b, cb) as a TwoSum: the sum's rounding error joins the compensations (any order of magnitudes)."""
    s = a + b
    bp = s - a
    return s, (ca + cb) + ((a - (s - bp)) + (b - bp))


@triton.jit
def reduce_partials_block(WS, DW, P, H, col_start, col_end, BLOCK: tl.constexpr):
    """dw[col_start:col_end] = sum over p = 0..P-1 of WS[p, :] in FP64, always in the same order."""
    PB: tl.constexpr = 8
    for c0 in range(col_start, col_end, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        cmask = cols < col_end
        acc = tl.zeros([BLOCK], dtype=tl.float64)
        for p0 in range(0, P, PB):
            ps = tl.arange(0, PB).to(tl.int64) + p0
            m = (ps < P)[:, None] & cmask[None, :]
            part = tl.load(WS + ps[:, None] * H + cols[None, :], mask=m, other=0.0, cache_modifier=".cg")
            acc += tl.sum(part.to(tl.float64), axis=0)
        tl.store(DW + cols, acc.to(tl.float32), mask=cmask)


@triton.jit
def reduce_partials_wide_kernel(WS, DW, P, H, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    """The `.wr` programs' reduce: one program per BLOCK_C columns sums the P partial rows in
    [BLOCK_P, BLOCK_C] tiles, FP64, always the same tiles and tree (deterministic).

    Why not `reduce_partials_kernel`: it walks the P rows 8 at a time, one dependent L2 round trip
    per step, in H / 256 programs. At P = 528 (4 programs per SM) that is 66 serial steps, about
    40-90 us on the H200 whatever T is (T = 65536, H 512: 183 us in all against 96 us for 1/16 of
    the T = 1M time); a tile of 128 partial rows makes it 5 steps in H / 32 programs.

    The loop repeats `reduce_partials_block`'s on purpose: both ways of sharing it were compiled for
    sm_90a and compared with scripts/sass_identity.py. Giving the block a rows-per-step constexpr
    and calling it here adds a column loop to this kernel (568 SASS lines against 520); moving the
    tile loop into a helper both call changes the single-launch `twosum` programs' rows kernel
    (3,335 of 3,368 lines at H 6144). Either way shipped evidence would describe code that no
    longer runs.
    """
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < H
    acc = tl.zeros([BLOCK_C], dtype=tl.float64)
    for p0 in range(0, P, BLOCK_P):
        ps = tl.arange(0, BLOCK_P).to(tl.int64) + p0
        m = (ps < P)[:, None] & cmask[None, :]
        part = tl.load(WS + ps[:, None] * H + cols[None, :], mask=m, other=0.0, cache_modifier=".cg")
        acc += tl.sum(part.to(tl.float64), axis=0)
    tl.store(DW + cols, acc.to(tl.float32), mask=cmask)


@triton.jit
def reduce_partials_split_kernel(WS, FIRST, P, H, ROWS_PER_SPLIT, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    """First pass of the `.sr` programs' reduce: program (c, s) sums partial rows
    [s * ROWS_PER_SPLIT, (s + 1) * ROWS_PER_SPLIT) of BLOCK_C columns in FP64 into FIRST[s, :]; the
    second pass (`reduce_partials_wide_kernel` over FIRST's rows) sums those. Fixed tiles and trees in
    both passes: deterministic, and FP64 throughout like the wide reduce.

    Why: with 16 programs per SM (the 256-wide head rows) the wide reduce runs H / 32 = 8 programs
    over P = 2112 partial rows; ncu on the H200 (round 15, contiguous heads BF16 T 65536) had it at
    44.8 us, 6 % achieved occupancy, beside a rows kernel of 143.0 us. Split 64 rows at a time the
    first pass has 33 x 8 programs.
    """
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < H
    split = tl.program_id(1)
    start = split * ROWS_PER_SPLIT
    end = tl.minimum(start + ROWS_PER_SPLIT, P)
    acc = tl.zeros([BLOCK_C], dtype=tl.float64)
    for p0 in range(start, end, BLOCK_P):
        ps = tl.arange(0, BLOCK_P).to(tl.int64) + p0
        m = (ps < end)[:, None] & cmask[None, :]
        part = tl.load(WS + ps[:, None] * H + cols[None, :], mask=m, other=0.0, cache_modifier=".cg")
        acc += tl.sum(part.to(tl.float64), axis=0)
    tl.store(FIRST + split.to(tl.int64) * H + cols, acc, mask=cmask)


@triton.jit
def reduce_partials_kernel(WS, DW, P, H, BLOCK: tl.constexpr):
    """One program per BLOCK columns: the fixed-order reduce of the `pair` families."""
    c0 = tl.program_id(0) * BLOCK
    reduce_partials_block(WS, DW, P, H, c0, tl.minimum(c0 + BLOCK, H), BLOCK)


@triton.jit
def rmsnorm_bwd_column_task_kernel(
    G, X, W, RSTD, GRES, DX, DW,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    n_col_tasks,
    BLOCK_C: tl.constexpr, COL_ROWS: tl.constexpr, BLOCK_H: tl.constexpr, ROWS: tl.constexpr,
    HAS_GRES: tl.constexpr, EXACT: tl.constexpr,
):
    """`column_task` (det, small T): one launch, no workspace.

    Programs [0, n_col_tasks) each own BLOCK_C whole dw columns and sum every row in a fixed
    order (tiles of COL_ROWS rows, tile sums accumulated in FP64); the remaining programs each
    produce dx for ROWS rows. Column tasks re-read g and x, which is cheap only while T is small.
    """
    pid = tl.program_id(0)
    if pid < n_col_tasks:
        ccols = pid * BLOCK_C + tl.arange(0, BLOCK_C)
        ccmask = ccols < H
        cacc = tl.zeros([BLOCK_C], dtype=tl.float64)
        for r0 in range(0, n_rows, COL_ROWS):
            cg, cx, crstd = load_tile(G, X, RSTD, tl.arange(0, COL_ROWS).to(tl.int64) + r0, ccols, ccmask,
                                      n_rows, NH, sgt, sgh, sxt, sxh)
            cacc += tl.sum((cg.to(tl.float32) * (cx.to(tl.float32) * crstd[:, None])).to(tl.float64), axis=0)
        tl.store(DW + ccols, cacc.to(tl.float32), mask=ccmask)
    else:
        cols = tl.arange(0, BLOCK_H)
        cmask = cols < H
        w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
        rows = tl.arange(0, ROWS).to(tl.int64) + (pid - n_col_tasks) * ROWS
        mask = (rows < n_rows)[:, None] & cmask[None, :]
        g, x, rstd = load_tile(G, X, RSTD, rows, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
        g = g.to(tl.float32)
        x = x.to(tl.float32)
        dx = row_grad(g, x, w, rstd, H_f)
        if HAS_GRES:
            dx += tl.load(GRES + row_offsets(rows, NH, srt, srh)[:, None] + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        tl.store(DX + rows[:, None] * H + cols[None, :], to_bf16(dx, EXACT), mask=mask)


@triton.jit
def load_gres(GRES, rows, cols, cmask, n_rows, NH, srt, srh):
    """The incoming gradient of h_new (residual form) of a tile of rows, as stored (BF16); masked lanes read 0."""
    mask = (rows < n_rows)[:, None] & cmask[None, :]
    return tl.load(GRES + row_offsets(rows, NH, srt, srh)[:, None] + cols[None, :], mask=mask, other=0.0)


@triton.jit
def rmsnorm_bwd_rows_gres_prefetch_kernel(
    G, X, W, RSTD, GRES, DX, DW, WS, COUNTER,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, MODE: tl.constexpr, FOLD: tl.constexpr,
    HAS_GRES: tl.constexpr, SINGLE: tl.constexpr, EXACT: tl.constexpr, RED_BLOCK: tl.constexpr,
    FOLD_WS: tl.constexpr = False, PREFETCH: tl.constexpr = False, BLOCK_B: tl.constexpr = 0,
):
    """`.gp` programs (two-launch `twosum_pair`, prefetching): `rmsnorm_bwd_rows_kernel`'s arithmetic,
    bit for bit, with the residual form's incoming gradient of h_new (GRES) loaded with the next
    tile's g and x instead of after this tile's row sum. Same arguments (runner.backward_meta).

    Why: in the rows kernel the GRES load is issued when dx is formed, so each step waits one DRAM
    round trip that the prefetch does not cover. On the H200 (rounds 3-4, residual H 6144 BF16
    T 65536) `p2x.w8.fw.pf.sp` took 1,204 us, 64.5 % of copy for the form's 8 bytes per element,
    where its plain-row twin reaches 84 % (its 6 bytes). A kernel of its own so that the shipped
    programs' device code, fingerprints and evidence stay as they are.
    """
    tl.static_assert(MODE == 3, "GRES prefetch: compensated (TwoSum) programs only")
    tl.static_assert(not SINGLE, "GRES prefetch: two-launch programs only")
    tl.static_assert(PREFETCH, "GRES prefetch: prefetching programs only")
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    acc, comp, blk_acc, tot = _dw_state(BLOCK_H)
    ws_row = WS + pid.to(tl.int64) * H + cols
    if BLOCK_B > 0:
        cols_b = BLOCK_H + tl.arange(0, BLOCK_B)
        cmask_b = cols_b < H
        w_b = tl.load(W + cols_b, mask=cmask_b, other=0.0).to(tl.float32)
        acc_b, comp_b, blk_acc_b, tot_b = _dw_state(BLOCK_B)
        ws_row_b = WS + pid.to(tl.int64) * H + cols_b
    if FOLD_WS:
        tl.store(ws_row, tl.zeros([BLOCK_H], dtype=tl.float64), mask=cmask)
        if BLOCK_B > 0:
            tl.store(ws_row_b, tl.zeros([BLOCK_B], dtype=tl.float64), mask=cmask_b)
    n_blocks = tl.cdiv(n_rows, ROWS)
    first = tl.arange(0, ROWS).to(tl.int64) + pid * ROWS
    g_n, x_n, r_n = load_tile(G, X, RSTD, first, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
    if HAS_GRES:
        u_n = load_gres(GRES, first, cols, cmask, n_rows, NH, srt, srh)
    if BLOCK_B > 0:
        g_nb, x_nb, _ = load_tile(G, X, RSTD, first, cols_b, cmask_b, n_rows, NH, sgt, sgh, sxt, sxh)
        if HAS_GRES:
            u_nb = load_gres(GRES, first, cols_b, cmask_b, n_rows, NH, srt, srh)
    it = 0
    for blk in range(pid, n_blocks, nprog):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        mask = rmask[:, None] & cmask[None, :]
        nxt = rows + nprog * ROWS
        g, x, rstd = g_n, x_n, r_n
        g_n, x_n, r_n = load_tile(G, X, RSTD, nxt, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
        if HAS_GRES:
            u = u_n
            u_n = load_gres(GRES, nxt, cols, cmask, n_rows, NH, srt, srh)
        if BLOCK_B > 0:
            g_b, x_b = g_nb, x_nb
            g_nb, x_nb, _ = load_tile(G, X, RSTD, nxt, cols_b, cmask_b, n_rows, NH, sgt, sgh, sxt, sxh)
            if HAS_GRES:
                u_b = u_nb
                u_nb = load_gres(GRES, nxt, cols_b, cmask_b, n_rows, NH, srt, srh)
        g = g.to(tl.float32)
        x = x.to(tl.float32)
        if BLOCK_B > 0:
            g_b = g_b.to(tl.float32)
            x_b = x_b.to(tl.float32)
            # the rows kernel's split-row dx (`_store_dx`), with the prefetched GRES
            c = tl.div_rn(tl.sum(g * w[None, :] * x, axis=1) + tl.sum(g_b * w_b[None, :] * x_b, axis=1), H_f)
            r = rstd[:, None]
            dx = r * (g * w[None, :]) - x * ((r * r * r) * c[:, None])
            dx_b = r * (g_b * w_b[None, :]) - x_b * ((r * r * r) * c[:, None])
            if HAS_GRES:
                dx += u.to(tl.float32)
                dx_b += u_b.to(tl.float32)
            tl.store(DX + rows[:, None] * H + cols_b[None, :], to_bf16(dx_b, EXACT), mask=rmask[:, None] & cmask_b[None, :])
        else:
            dx = row_grad(g, x, w, rstd, H_f)
            if HAS_GRES:
                dx += u.to(tl.float32)
        tl.store(DX + rows[:, None] * H + cols[None, :], to_bf16(dx, EXACT), mask=mask)
        acc, comp, blk_acc, tot = _dw_step(g, x, rstd, acc, comp, blk_acc, tot, ws_row, cmask, it,
                                           MODE, FOLD, FOLD_WS, ROWS, EXACT)
        if BLOCK_B > 0:
            acc_b, comp_b, blk_acc_b, tot_b = _dw_step(g_b, x_b, rstd, acc_b, comp_b, blk_acc_b, tot_b, ws_row_b,
                                                       cmask_b, it, MODE, FOLD, FOLD_WS, ROWS, EXACT)
        it += 1
    _dw_finish(DW, ws_row, cols, cmask, acc, comp, blk_acc, tot, MODE, FOLD_WS)
    if BLOCK_B > 0:
        _dw_finish(DW, ws_row_b, cols_b, cmask_b, acc_b, comp_b, blk_acc_b, tot_b, MODE, FOLD_WS)


@triton.jit
def rmsnorm_bwd_column_task_static_kernel(
    G, X, W, RSTD, GRES, DX, DW,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    n_col_tasks,
    BLOCK_C: tl.constexpr, COL_ROWS: tl.constexpr, BLOCK_H: tl.constexpr, ROWS: tl.constexpr,
    HAS_GRES: tl.constexpr, EXACT: tl.constexpr, H_C: tl.constexpr,
):
    """`column_task` compiled for rows of exactly H_C columns (H == H_C at launch; names end `.hs`):
    the same tasks, sums and order as `rmsnorm_bwd_column_task_kernel`, with the row tasks' column
    masks gone where H_C is a power of two and mean(g*w*x) as a product by the constant 1/H_C
    instead of an IEEE division (dx is BF16; the product is within 2 FP32 ulps of the quotient).

    Why: at T <= 16 the backward is one launch whose time is its critical path (load, row sum,
    division, dx). A kernel of its own, so the shipped column tasks keep their source and evidence.
    """
    pid = tl.program_id(0)
    if pid < n_col_tasks:
        ccols = pid * BLOCK_C + tl.arange(0, BLOCK_C)
        ccmask = ccols < H_C
        cacc = tl.zeros([BLOCK_C], dtype=tl.float64)
        for r0 in range(0, n_rows, COL_ROWS):
            cg, cx, crstd = load_tile(G, X, RSTD, tl.arange(0, COL_ROWS).to(tl.int64) + r0, ccols, ccmask,
                                      n_rows, NH, sgt, sgh, sxt, sxh)
            cacc += tl.sum((cg.to(tl.float32) * (cx.to(tl.float32) * crstd[:, None])).to(tl.float64), axis=0)
        tl.store(DW + ccols, cacc.to(tl.float32), mask=ccmask)
    else:
        cols = tl.arange(0, BLOCK_H)
        cmask = cols < H_C
        w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
        rows = tl.arange(0, ROWS).to(tl.int64) + (pid - n_col_tasks) * ROWS
        mask = (rows < n_rows)[:, None] & cmask[None, :]
        g, x, rstd = load_tile(G, X, RSTD, rows, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
        g = g.to(tl.float32)
        x = x.to(tl.float32)
        gw = g * w[None, :]
        c = tl.sum(gw * x, axis=1) * (1.0 / H_C)
        r = rstd[:, None]
        dx = r * gw - x * ((r * r * r) * c[:, None])
        if HAS_GRES:
            dx += load_gres(GRES, rows, cols, cmask, n_rows, NH, srt, srh).to(tl.float32)
        tl.store(DX + rows[:, None] * H_C + cols[None, :], to_bf16(dx, EXACT), mask=mask)


@triton.jit
def rmsnorm_bwd_tma_kernel(
    GD, XD, W, RSTD, GRES, DX, WS,
    n_rows, NH, H, H_f, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, FOLD: tl.constexpr, STAGES: tl.constexpr,
    HAS_GRES: tl.constexpr, EXACT: tl.constexpr,
):
    """`.tma` programs (twosum_pair family): the rows kernel's compensated dw, but g and x arrive
    through tensor descriptors (TMA on Hopper) in a loop that Triton software-pipelines STAGES deep
    through shared memory. The FP64 fold stays in registers: the workspace-held fold needs a barrier
    in the loop, and with it Triton 3.9 does not pipeline the loop (one stage, checked on the PTX).

    Why: the pointer-load programs keep the next tile in registers, and at about 12 registers per
    column the register file caps the tiles in flight per SM (H 512: 16-32 KB, 52-79 % of copy
    bandwidth at T = 1M on the H200). Tiles in flight in shared memory cost no registers: STAGES - 1
    of them per program wait there while this one is reduced. Rows past n_rows and columns past H
    arrive as zeros (the descriptor's padding), so their products and sums are zero; dx stores are
    masked. GD and XD view g and x as [rows, H] with one row stride (runner: `tma_rows`).
    """
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    acc, comp, blk_acc, tot = _dw_state(BLOCK_H)
    ws_row = WS + pid.to(tl.int64) * H + cols
    n_blocks = tl.cdiv(n_rows, ROWS)
    it = 0
    for blk in tl.range(pid, n_blocks, nprog, num_stages=STAGES):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        mask = rmask[:, None] & cmask[None, :]
        g = GD.load([blk * ROWS, 0]).to(tl.float32)
        x = XD.load([blk * ROWS, 0]).to(tl.float32)
        rstd = tl.load(RSTD + rows, mask=rmask, other=0.0)
        dx = row_grad(g, x, w, rstd, H_f)
        if HAS_GRES:
            dx += tl.load(GRES + row_offsets(rows, NH, srt, srh)[:, None] + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        tl.store(DX + rows[:, None] * H + cols[None, :], to_bf16(dx, EXACT), mask=mask)
        acc, comp, blk_acc, tot = _dw_step(g, x, rstd, acc, comp, blk_acc, tot, ws_row, cmask, it, 3, FOLD, False, ROWS, EXACT)
        it += 1
    _dw_finish(WS, ws_row, cols, cmask, acc, comp, blk_acc, tot, 3, False)


@triton.jit
def rmsnorm_bwd_tma_split_rstd_kernel(
    GD, XD, W, RSTD, GRES, DX, WS,
    n_rows, NH, H, H_f, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, FOLD: tl.constexpr, STAGES: tl.constexpr,
    HAS_GRES: tl.constexpr, EXACT: tl.constexpr,
):
    """`.xs.tma` programs: `rmsnorm_bwd_tma_kernel`'s pipelined descriptor loads with the split-rstd
    products of `rmsnorm_bwd_rows_split_rstd_kernel` (four multiplies per element instead of six
    operations). Same arguments as `rmsnorm_bwd_tma_kernel`; a kernel of its own so that the `.tma`
    programs' device code, fingerprints and evidence stay as they are.

    Why: on the H200 the pointer-load programs gained 10-14 % from the split products at H 1536
    (`p1x.r4.w8.fw.pf.wr` 224.4 us against `.xs` 214.7 at BF16 T 65536; with the FP32-weight build
    `.xs.wc` 191.7): the compensated rows are issue-bound there, and a `.tma` program issues the
    same arithmetic per element as its pointer twin.
    """
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    acc, comp, _, tot = _dw_state(BLOCK_H)
    ws_row = WS + pid.to(tl.int64) * H + cols
    n_blocks = tl.cdiv(n_rows, ROWS)
    it = 0
    for blk in tl.range(pid, n_blocks, nprog, num_stages=STAGES):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        mask = rmask[:, None] & cmask[None, :]
        g = GD.load([blk * ROWS, 0]).to(tl.float32)
        x = XD.load([blk * ROWS, 0]).to(tl.float32)
        rstd = tl.load(RSTD + rows, mask=rmask, other=0.0)
        dx = row_grad(g, x, w, rstd, H_f)
        if HAS_GRES:
            dx += tl.load(GRES + row_offsets(rows, NH, srt, srh)[:, None] + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        tl.store(DX + rows[:, None] * H + cols[None, :], to_bf16(dx, EXACT), mask=mask)
        r_hi = ((rstd.to(tl.uint32, bitcast=True) >> 16) << 16).to(tl.float32, bitcast=True)
        acc, comp, tot = _dw_step_split_rstd(g, x, r_hi, rstd - r_hi, acc, comp, tot, ws_row, cmask, it, FOLD, False, ROWS)
        it += 1
    _dw_finish(WS, ws_row, cols, cmask, acc, comp, acc, tot, 3, False)


@triton.jit
def rmsnorm_bwd_tma_chunks_kernel(
    GD, XD, W, RSTD, GRES, DX, WS,
    n_rows, NH, H, H_f, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, FOLD: tl.constexpr, STAGES: tl.constexpr,
    HAS_GRES: tl.constexpr, EXACT: tl.constexpr, SPLIT_RSTD: tl.constexpr,
):
    """`.tmc` programs: the `.tma` kernels' pipelined descriptor loads (with `eft` products, or the
    split-rstd ones when SPLIT_RSTD), but GD and XD view g and x as [rows, H / C, C], C = 64
    (registry.TMA_CHUNK; runner: `tma_descriptor`), so that one step's [ROWS, BLOCK_H / C, C] tile
    is one TMA box, reshaped in registers into the [ROWS, BLOCK_H] tile the arithmetic takes (the
    same row-major order: column c is chunk c // C, lane c % C).

    Why: Triton builds a box of at most 256 values a side, so it reads a [ROWS, BLOCK_H] tile of the
    2-D view as BLOCK_H / 256 boxes of [ROWS, 256], issued by as many threads after a block barrier
    (compile_check's PTX and tensordesc metadata, sm_90a, Triton 3.6): at H 8192 one row per step is
    32 boxes of 512 bytes per tensor. On an H100 those rows-1 `.tma` programs ran at 0.52-0.70x of
    the pointer programs at H 5120-8192 (session 32), where the multi-row ones at H 1536 (8 boxes of
    2 KB) reached that card's copy bandwidth. With C = 64 (128 bytes, the widest last box dimension
    under its 128-byte swizzle) the box is the whole tile up to H 16384. Chunks past H / C arrive as
    zeros, as columns past H do in the 2-D view. The FP64 fold stays in registers, as in the `.tma`
    kernels: held in the workspace row (`.fw`), it needs a barrier in the loop, and Triton 3.6 then
    does not pipeline the loop either (compile_check: 16 KB of shared memory at 4 stages, one
    tile); at H 5120-8192 with 16 warps the one-row build spills 80 bytes per thread instead.
    A kernel of its own so that the `.tma` programs' fingerprints stay.
    """
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    acc, comp, blk_acc, tot = _dw_state(BLOCK_H)
    ws_row = WS + pid.to(tl.int64) * H + cols
    n_blocks = tl.cdiv(n_rows, ROWS)
    it = 0
    for blk in tl.range(pid, n_blocks, nprog, num_stages=STAGES):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        mask = rmask[:, None] & cmask[None, :]
        g = tl.reshape(GD.load([blk * ROWS, 0, 0]), [ROWS, BLOCK_H]).to(tl.float32)
        x = tl.reshape(XD.load([blk * ROWS, 0, 0]), [ROWS, BLOCK_H]).to(tl.float32)
        rstd = tl.load(RSTD + rows, mask=rmask, other=0.0)
        dx = row_grad(g, x, w, rstd, H_f)
        if HAS_GRES:
            dx += tl.load(GRES + row_offsets(rows, NH, srt, srh)[:, None] + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        tl.store(DX + rows[:, None] * H + cols[None, :], to_bf16(dx, EXACT), mask=mask)
        if SPLIT_RSTD:
            r_hi = ((rstd.to(tl.uint32, bitcast=True) >> 16) << 16).to(tl.float32, bitcast=True)
            acc, comp, tot = _dw_step_split_rstd(g, x, r_hi, rstd - r_hi, acc, comp, tot, ws_row, cmask, it, FOLD, False, ROWS)
        else:
            acc, comp, blk_acc, tot = _dw_step(g, x, rstd, acc, comp, blk_acc, tot, ws_row, cmask, it, 3, FOLD, False, ROWS,
                                               EXACT)
        it += 1
    _dw_finish(WS, ws_row, cols, cmask, acc, comp, blk_acc, tot, 3, False)


@triton.jit
def _fold_into_row(ws_row, fold, cmask, first):
    """Add this program's FP64 fold to its workspace row by an atomic (a `red`/`atom` per column,
    no barrier), the first fold by an exchange, so the row needs no zeroing. Deterministic: only
    this program touches the row, Triton issues an atomic of a replicated value from one thread
    (the same for every atomic over this layout), and one thread's atomics to one address land in
    program order (PTX memory model: program order is in causality order, and coherence follows it),
    so the row is the folds summed in order, as the register-held total is."""
    if first:
        # exchanged as its 64 bits: the interpreter's atomics take no FP64 exchange (a GPU takes either)
        tl.atomic_xchg(ws_row.to(tl.pointer_type(tl.int64)), fold.to(tl.int64, bitcast=True), mask=cmask, sem="relaxed")
    else:
        tl.atomic_add(ws_row, fold, mask=cmask, sem="relaxed")


@triton.jit
def rmsnorm_bwd_tma_chunks_red_fold_kernel(
    GD, XD, W, RSTD, GRES, DX, WS,
    n_rows, NH, H, H_f, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, FOLD: tl.constexpr, STAGES: tl.constexpr,
    HAS_GRES: tl.constexpr, EXACT: tl.constexpr, SPLIT_RSTD: tl.constexpr,
):
    """`.fw.tmc` programs: the `.tmc` kernel (same arguments, same steps) with the FP64 total
    folded into the program's workspace row by atomics (`_fold_into_row`) instead of held in
    registers. Why: at H 5120-8192 the compensated dw state (FP32 sum and compensation, FP64 total,
    weight) is 5 registers a column, and the one-row `.tmc` builds spill (16 warps: 72-80 bytes a
    thread) or sit at 255 registers (8 warps); the total is 2 of those 5. A read-modify-write of the
    row (`.fw` pointer programs) needs a barrier in the loop, and Triton 3.6 then does not pipeline
    it; an atomic needs none. dw equals the `.tmc` twin's bit for bit (the same folds, added in the
    same order, starting from zero). Each fold step passes `_dw_step` a zero total, so the total it
    returns is that fold's FP64 value.
    """
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    acc, comp, blk_acc, zero = _dw_state(BLOCK_H)
    ws_row = WS + pid.to(tl.int64) * H + cols
    n_blocks = tl.cdiv(n_rows, ROWS)
    it = 0
    for blk in tl.range(pid, n_blocks, nprog, num_stages=STAGES):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        mask = rmask[:, None] & cmask[None, :]
        g = tl.reshape(GD.load([blk * ROWS, 0, 0]), [ROWS, BLOCK_H]).to(tl.float32)
        x = tl.reshape(XD.load([blk * ROWS, 0, 0]), [ROWS, BLOCK_H]).to(tl.float32)
        rstd = tl.load(RSTD + rows, mask=rmask, other=0.0)
        dx = row_grad(g, x, w, rstd, H_f)
        if HAS_GRES:
            dx += tl.load(GRES + row_offsets(rows, NH, srt, srh)[:, None] + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        tl.store(DX + rows[:, None] * H + cols[None, :], to_bf16(dx, EXACT), mask=mask)
        if SPLIT_RSTD:
            r_hi = ((rstd.to(tl.uint32, bitcast=True) >> 16) << 16).to(tl.float32, bitcast=True)
            acc, comp, fold = _dw_step_split_rstd(g, x, r_hi, rstd - r_hi, acc, comp, zero, ws_row, cmask, it, FOLD,
                                                  False, ROWS)
        else:
            acc, comp, blk_acc, fold = _dw_step(g, x, rstd, acc, comp, blk_acc, zero, ws_row, cmask, it, 3, FOLD, False,
                                                ROWS, EXACT)
        if it % FOLD == FOLD - 1:
            _fold_into_row(ws_row, fold, cmask, it < FOLD)
        it += 1
    # The last (partial) fold; a program with no fold yet (or no rows) writes its row here.
    _fold_into_row(ws_row, acc.to(tl.float64) + comp.to(tl.float64), cmask, it < FOLD)


@triton.jit
def rmsnorm_bwd_rows_split_rstd_kernel(
    G, X, W, RSTD, GRES, DX, DW, WS, COUNTER,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, MODE: tl.constexpr, FOLD: tl.constexpr,
    HAS_GRES: tl.constexpr, SINGLE: tl.constexpr, EXACT: tl.constexpr, RED_BLOCK: tl.constexpr,
    FOLD_WS: tl.constexpr = False, PREFETCH: tl.constexpr = False, BLOCK_B: tl.constexpr = 0,
):
    """`.xs` programs (two-launch `twosum_pair`): the rows kernel's compensated dw with the products
    made exact by splitting rstd instead of by error-free transformations. Same arguments as
    `rmsnorm_bwd_rows_kernel` (runner.backward_meta builds both); MODE must be 3, SINGLE False.

    Why it is exact: g and x are BF16 (8 significant bits). rstd = r_hi + r_lo, r_hi its leading 8
    significant bits (the low 16 bits of the FP32 word cleared) and r_lo the rest (at most 16 bits,
    |r_lo| < 2^-7 r_hi), both exact. Then x * r_hi (16 bits), g * (x * r_hi) (24 bits) and x * r_lo
    (24 bits) are exact FP32 products, and only g * (x * r_lo) is rounded, by at most 2^-24 of a value
    below 2^-7 of the term: g * x * rstd = a + b with a exact and b within 2^-31 of the term. The
    current programs reach the same by `mul.rn` products and two FMAs for their residuals (6 FP32
    operations per element against 4 here). Because a is exact, an FMA the compiler forms from it
    rounds exactly as the separate multiply and add would, so no contraction control is needed.
    Kept apart from the rows kernel (not a constexpr there) so that the shipped programs' device code,
    and with it their fingerprints and evidence, stay as they are.
    """
    tl.static_assert(MODE == 3, "split-rstd products: compensated (TwoSum) programs only")
    tl.static_assert(not SINGLE, "split-rstd products: two-launch programs only")
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    acc, comp, _, tot = _dw_state(BLOCK_H)
    ws_row = WS + pid.to(tl.int64) * H + cols
    if BLOCK_B > 0:
        cols_b = BLOCK_H + tl.arange(0, BLOCK_B)
        cmask_b = cols_b < H
        w_b = tl.load(W + cols_b, mask=cmask_b, other=0.0).to(tl.float32)
        acc_b, comp_b, _, tot_b = _dw_state(BLOCK_B)
        ws_row_b = WS + pid.to(tl.int64) * H + cols_b
    if FOLD_WS:
        tl.store(ws_row, tl.zeros([BLOCK_H], dtype=tl.float64), mask=cmask)
        if BLOCK_B > 0:
            tl.store(ws_row_b, tl.zeros([BLOCK_B], dtype=tl.float64), mask=cmask_b)
    n_blocks = tl.cdiv(n_rows, ROWS)
    if PREFETCH:
        first = tl.arange(0, ROWS).to(tl.int64) + pid * ROWS
        g_n, x_n, r_n = load_tile(G, X, RSTD, first, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
        if BLOCK_B > 0:
            g_nb, x_nb, _ = load_tile(G, X, RSTD, first, cols_b, cmask_b, n_rows, NH, sgt, sgh, sxt, sxh)
    it = 0
    for blk in range(pid, n_blocks, nprog):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        if PREFETCH:
            g, x, rstd = g_n, x_n, r_n
            g_n, x_n, r_n = load_tile(G, X, RSTD, rows + nprog * ROWS, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
            if BLOCK_B > 0:
                g_b, x_b = g_nb, x_nb
                g_nb, x_nb, _ = load_tile(G, X, RSTD, rows + nprog * ROWS, cols_b, cmask_b, n_rows, NH, sgt, sgh, sxt, sxh)
        else:
            g, x, rstd = load_tile(G, X, RSTD, rows, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
            if BLOCK_B > 0:
                g_b, x_b, _ = load_tile(G, X, RSTD, rows, cols_b, cmask_b, n_rows, NH, sgt, sgh, sxt, sxh)
        g = g.to(tl.float32)
        x = x.to(tl.float32)
        r_hi = ((rstd.to(tl.uint32, bitcast=True) >> 16) << 16).to(tl.float32, bitcast=True)
        r_lo = rstd - r_hi
        if BLOCK_B > 0:
            g_b = g_b.to(tl.float32)
            x_b = x_b.to(tl.float32)
            c = tl.div_rn(tl.sum(g * w[None, :] * x, axis=1) + tl.sum(g_b * w_b[None, :] * x_b, axis=1), H_f)
            _store_dx(DX, GRES, g, x, w, rstd, c, rows, rmask, cols, cmask, NH, srt, srh, H, HAS_GRES, EXACT)
            _store_dx(DX, GRES, g_b, x_b, w_b, rstd, c, rows, rmask, cols_b, cmask_b, NH, srt, srh, H, HAS_GRES, EXACT)
            acc_b, comp_b, tot_b = _dw_step_split_rstd(g_b, x_b, r_hi, r_lo, acc_b, comp_b, tot_b, ws_row_b, cmask_b,
                                                       it, FOLD, FOLD_WS, ROWS)
        else:
            c = tl.div_rn(tl.sum(g * w[None, :] * x, axis=1), H_f)
            _store_dx(DX, GRES, g, x, w, rstd, c, rows, rmask, cols, cmask, NH, srt, srh, H, HAS_GRES, EXACT)
        acc, comp, tot = _dw_step_split_rstd(g, x, r_hi, r_lo, acc, comp, tot, ws_row, cmask, it, FOLD, FOLD_WS, ROWS)
        it += 1
    _dw_finish(DW, ws_row, cols, cmask, acc, comp, acc, tot, 3, FOLD_WS)
    if BLOCK_B > 0:
        _dw_finish(DW, ws_row_b, cols_b, cmask_b, acc_b, comp_b, acc_b, tot_b, 3, FOLD_WS)


@triton.jit
def _dw_step_split_rstd(g, x, r_hi, r_lo, acc, comp, tot, ws_row, cmask, it,
                        FOLD: tl.constexpr, FOLD_WS: tl.constexpr, ROWS: tl.constexpr):
    """One tile's contribution to a program's compensated dw partial, the products split as in
    `rmsnorm_bwd_rows_split_rstd_kernel`: a = g * (x * r_hi) exact, b = g * (x * r_lo) its small rest."""
    a = g * (x * r_hi[:, None])
    b = g * (x * r_lo[:, None])
    if ROWS == 1:
        p = tl.sum(a, axis=0)
        res = tl.sum(b, axis=0)
    else:
        p, res = tl.reduce((a, b), 0, _twosum_combine)
    s = acc + p
    bp = s - acc
    comp += ((acc - (s - bp)) + (p - bp)) + res
    acc = s
    if it % FOLD == FOLD - 1:
        if FOLD_WS:
            tl.debug_barrier()
            tl.store(ws_row, tl.load(ws_row, mask=cmask, other=0.0) + (acc.to(tl.float64) + comp.to(tl.float64)), mask=cmask)
        else:
            tot += acc.to(tl.float64) + comp.to(tl.float64)
        acc = tl.zeros(acc.shape, dtype=tl.float32)
        comp = tl.zeros(comp.shape, dtype=tl.float32)
    return acc, comp, tot


@triton.jit
def prefetch_rows_l2(P, rows, n_rows, NH, st, sh, H, BLOCK_H: tl.constexpr, L2_PREFETCH: tl.constexpr):
    """Ask for BF16 rows `rows` of P (row addressing as `load_tile`) to be brought into L2, and wait
    for nothing: no register receives the data, so bytes in flight are not bounded by the register
    file. L2_PREFETCH 1: one PTX `prefetch.global.L2` per 128-byte line of each row. 2: one
    `cp.async.bulk.prefetch.L2` per row (Hopper's bulk copy unit: one instruction for the row's
    whole 16-byte aligned span; a row whose start is not 16-byte aligned is left out, since the
    instruction requires it). Rows past n_rows are not asked for. GPU only (inline PTX): the
    caller skips it in the CPU interpreter, where a prefetch has nothing to do."""
    # 64 BF16 values per 128-byte line; tiles narrower than a line are one line per row
    LINES: tl.constexpr = BLOCK_H // 64 if BLOCK_H >= 64 else 1
    line = tl.arange(0, LINES) * 64
    off = row_offsets(rows, NH, st, sh)[:, None] + line[None, :]
    if L2_PREFETCH == 1:
        ok = ((rows < n_rows)[:, None] & (line < H)[None, :]).to(tl.int32)
        tl.inline_asm_elementwise(
            "{ .reg .pred p; setp.ne.s32 p, $2, 0; @p prefetch.global.L2 [$1]; mov.u32 $0, 0; }",
            "=r,l,r", [P + off, ok], dtype=tl.int32, is_pure=False, pack=1)
    else:
        ok = ((rows < n_rows)[:, None] & (line == 0)[None, :]).to(tl.int32)
        nbytes = tl.zeros(off.shape, dtype=tl.int32) + H * 2
        tl.inline_asm_elementwise(
            "{ .reg .pred p, q; .reg .b64 a; .reg .b32 n; and.b64 a, $1, 15; setp.eq.b64 q, a, 0;"
            " setp.ne.s32 p, $2, 0; and.pred p, p, q; and.b32 n, $3, 0xFFFFFFF0; setp.ne.s32 q, n, 0;"
            " and.pred p, p, q; @p cp.async.bulk.prefetch.L2.global [$1], n; mov.u32 $0, 0; }",
            "=r,l,r,r", [P + off, ok, nbytes], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def rmsnorm_bwd_rows_l2_prefetch_kernel(
    G, X, W, RSTD, GRES, DX, DW, WS, COUNTER,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, MODE: tl.constexpr, FOLD: tl.constexpr,
    HAS_GRES: tl.constexpr, SINGLE: tl.constexpr, EXACT: tl.constexpr, RED_BLOCK: tl.constexpr,
    FOLD_WS: tl.constexpr = False, PREFETCH: tl.constexpr = False, BLOCK_B: tl.constexpr = 0,
    L2_PREFETCH: tl.constexpr = 0, L2_AHEAD: tl.constexpr = 0,
):
    """`.l2p` / `.l2b` programs (two-launch `twosum_pair`, split-rstd products, prefetching):
    `rmsnorm_bwd_rows_split_rstd_kernel`'s arithmetic, bit for bit, and besides the next tile held in
    registers, g and x of the tile L2_AHEAD steps after that one asked into L2 (`prefetch_rows_l2`).

    Why: the persistent backward's DRAM traffic is bounded by the bytes each SM has in flight, and
    those are the tiles held in registers (this one and the prefetched next). Where registers cap
    them, it stays short of copy bandwidth: contiguous heads H 256 at 69.6 % of copy (session 15's
    ncu: 58.4 % of DRAM peak, about 2 KB in flight per one-warp program), plain H 1536 at 76.6 %
    (217 registers, one program per SM). A prefetch into L2 holds no register, so later tiles can
    be on their way while this one is reduced; their loads then wait an L2 round trip, not DRAM's.
    A kernel of its own, so that the shipped `.xs` programs' device code and evidence stay as they
    are. One tile (BLOCK_B 0), rows of one tile only.
    """
    tl.static_assert(MODE == 3, "L2 prefetch: compensated (TwoSum) programs only")
    tl.static_assert(not SINGLE, "L2 prefetch: two-launch programs only")
    tl.static_assert(PREFETCH, "L2 prefetch: register-prefetching programs only")
    tl.static_assert(BLOCK_B == 0, "L2 prefetch: rows held as one tile only")
    tl.static_assert(L2_PREFETCH == 1 or L2_PREFETCH == 2, "L2_PREFETCH: 1 (lines) or 2 (bulk rows)")
    tl.static_assert(L2_AHEAD >= 1, "L2_AHEAD: at least one tile")
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    acc, comp, _, tot = _dw_state(BLOCK_H)
    ws_row = WS + pid.to(tl.int64) * H + cols
    if FOLD_WS:
        tl.store(ws_row, tl.zeros([BLOCK_H], dtype=tl.float64), mask=cmask)
    n_blocks = tl.cdiv(n_rows, ROWS)
    first = tl.arange(0, ROWS).to(tl.int64) + pid * ROWS
    g_n, x_n, r_n = load_tile(G, X, RSTD, first, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
    if EXACT:  # on the GPU: the tiles after the next, L2_AHEAD of them, before the loop
        for k in tl.static_range(1, L2_AHEAD + 1):
            ahead = first + (k * ROWS) * nprog
            prefetch_rows_l2(G, ahead, n_rows, NH, sgt, sgh, H, BLOCK_H, L2_PREFETCH)
            prefetch_rows_l2(X, ahead, n_rows, NH, sxt, sxh, H, BLOCK_H, L2_PREFETCH)
    it = 0
    for blk in range(pid, n_blocks, nprog):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        g, x, rstd = g_n, x_n, r_n
        g_n, x_n, r_n = load_tile(G, X, RSTD, rows + nprog * ROWS, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
        if EXACT:
            ahead = rows + ((L2_AHEAD + 1) * ROWS) * nprog
            prefetch_rows_l2(G, ahead, n_rows, NH, sgt, sgh, H, BLOCK_H, L2_PREFETCH)
            prefetch_rows_l2(X, ahead, n_rows, NH, sxt, sxh, H, BLOCK_H, L2_PREFETCH)
        g = g.to(tl.float32)
        x = x.to(tl.float32)
        r_hi = ((rstd.to(tl.uint32, bitcast=True) >> 16) << 16).to(tl.float32, bitcast=True)
        r_lo = rstd - r_hi
        c = tl.div_rn(tl.sum(g * w[None, :] * x, axis=1), H_f)
        _store_dx(DX, GRES, g, x, w, rstd, c, rows, rmask, cols, cmask, NH, srt, srh, H, HAS_GRES, EXACT)
        acc, comp, tot = _dw_step_split_rstd(g, x, r_hi, r_lo, acc, comp, tot, ws_row, cmask, it, FOLD, FOLD_WS, ROWS)
        it += 1
    _dw_finish(DW, ws_row, cols, cmask, acc, comp, acc, tot, 3, FOLD_WS)


@triton.jit
def rmsnorm_bwd_grid_sync_kernel(
    G, X, W, RSTD, GRES, DX, DW, WS, COUNTER,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    n_partials,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, MODE: tl.constexpr, FOLD: tl.constexpr,
    HAS_GRES: tl.constexpr, SINGLE: tl.constexpr, EXACT: tl.constexpr, RED_BLOCK: tl.constexpr,
    FOLD_WS: tl.constexpr, PREFETCH: tl.constexpr, BLOCK_B: tl.constexpr,
    SPLIT_RSTD: tl.constexpr, PHASE: tl.constexpr, RED_P: tl.constexpr, RED_C: tl.constexpr,
):
    """`.gs` programs (single launch, deterministic): the two-launch compensated rows kernel
    (`rmsnorm_bwd_rows_kernel`, or `rmsnorm_bwd_rows_split_rstd_kernel` when SPLIT_RSTD), called as it
    is, so its arithmetic and its [P, H] FP64 partials are bit for bit the two-launch program's; then
    a grid-wide barrier; then every program sums RED_C columns of the P partial rows at a time
    (`reduce_columns_strided`), fixed tiles and tree, so dw does not depend on which program sums
    which columns. SINGLE (the last-arrival reduce of the `twosum` programs) is not used here.

    Why: at T 4096 the two-launch backward is a rows kernel plus a reduce kernel whose few programs
    (H / 32) walk P partial rows in dependent steps: H 512 FP32 takes 15.2 us against torch.compile's
    12.2 (round 16), and the single-launch atomic program, with no reduce at all, 13.0. After the
    barrier every program is resident and the partials are in L2, so the reduce is one or two L2 round
    trips spread over the whole grid instead of a second launch.

    The barrier needs every program resident at once: the runner launches this kernel as a
    cooperative grid (`launch_cooperative_grid`), which the driver refuses, rather than deadlocks,
    when the grid does not fit. PHASE 0 is that one launch. The CPU interpreter runs programs one
    after another, so a barrier there would wait forever: it runs PHASE 1 (the rows, the partials)
    and then PHASE 2 (the reduce) as two launches of the same grid, with the same code on either side
    of the barrier.
    """
    if PHASE != 2:
        if SPLIT_RSTD:
            rmsnorm_bwd_rows_split_rstd_kernel(
                G, X, W, RSTD, GRES, DX, DW, WS, COUNTER, n_rows, NH, H, H_f, sgt, sgh, sxt, sxh, srt, srh,
                BLOCK_H=BLOCK_H, ROWS=ROWS, MODE=MODE, FOLD=FOLD, HAS_GRES=HAS_GRES, SINGLE=False, EXACT=EXACT,
                RED_BLOCK=RED_BLOCK, FOLD_WS=FOLD_WS, PREFETCH=PREFETCH, BLOCK_B=BLOCK_B)
        else:
            rmsnorm_bwd_rows_kernel(
                G, X, W, RSTD, GRES, DX, DW, WS, COUNTER, n_rows, NH, H, H_f, sgt, sgh, sxt, sxh, srt, srh,
                BLOCK_H=BLOCK_H, ROWS=ROWS, MODE=MODE, FOLD=FOLD, HAS_GRES=HAS_GRES, SINGLE=False, EXACT=EXACT,
                RED_BLOCK=RED_BLOCK, FOLD_WS=FOLD_WS, PREFETCH=PREFETCH, BLOCK_B=BLOCK_B)
    if PHASE == 0:
        grid_barrier(COUNTER)
    if PHASE != 1:
        reduce_columns_strided(WS, DW, n_partials, H, RED_P, RED_C)


@triton.jit
def grid_barrier(COUNTER):
    """Every program of the grid waits here until all have arrived (all must be resident: a
    cooperative launch). COUNTER[0] counts arrivals and COUNTER[1] is the barrier's generation; the
    last to arrive resets the count and advances the generation, so the two int32 words are ready for
    the next launch without a memset. The generation is read before arriving, so no program can miss
    the advance it waits for."""
    # Every thread's partial stores are issued before the one arrival that releases them.
    tl.debug_barrier()
    gen = tl.atomic_add(COUNTER + 1, 0, sem="acquire")
    arrived = tl.atomic_add(COUNTER, 1, sem="acq_rel")
    if arrived == tl.num_programs(0) - 1:
        tl.atomic_xchg(COUNTER, 0, sem="relaxed")
        tl.atomic_add(COUNTER + 1, 1, sem="release")
    else:
        cur = gen
        while cur == gen:
            cur = tl.atomic_add(COUNTER + 1, 0, sem="acquire")
    tl.debug_barrier()


@triton.jit
def reduce_columns_strided(WS, DW, P, H, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    """dw[c] = sum over p = 0..P-1 of WS[p, c] in FP64: program i sums column blocks i, i + nprog, ...
    of BLOCK_C columns, each in [BLOCK_P, BLOCK_C] tiles in row order. The tiles and the tree within a
    tile are fixed by (P, H, BLOCK_P, BLOCK_C) alone, so the result is the same whichever program sums
    a block (deterministic). `.cg` loads: the rows were written by other SMs. The tile loop repeats
    `reduce_partials_block`'s on purpose, as `reduce_partials_wide_kernel`'s does: a helper shared
    with it would change the shipped programs' kernels, and with them their fingerprints."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for cb in range(pid, tl.cdiv(H, BLOCK_C), nprog):
        cols = cb * BLOCK_C + tl.arange(0, BLOCK_C)
        cmask = cols < H
        acc = tl.zeros([BLOCK_C], dtype=tl.float64)
        for p0 in range(0, P, BLOCK_P):
            ps = tl.arange(0, BLOCK_P).to(tl.int64) + p0
            m = (ps < P)[:, None] & cmask[None, :]
            part = tl.load(WS + ps[:, None] * H + cols[None, :], mask=m, other=0.0, cache_modifier=".cg")
            acc += tl.sum(part.to(tl.float64), axis=0)
        tl.store(DW + cols, acc.to(tl.float32), mask=cmask)


@triton.jit
def rmsnorm_bwd_grid_sync_v2_kernel(
    G, X, W, RSTD, GRES, DX, DW, WS, COUNTER,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    n_partials,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, MODE: tl.constexpr, FOLD: tl.constexpr,
    HAS_GRES: tl.constexpr, SINGLE: tl.constexpr, EXACT: tl.constexpr, RED_BLOCK: tl.constexpr,
    FOLD_WS: tl.constexpr, PREFETCH: tl.constexpr, BLOCK_B: tl.constexpr,
    SPLIT_RSTD: tl.constexpr, PHASE: tl.constexpr, RED_P: tl.constexpr, RED_C: tl.constexpr,
    RED_TILES: tl.constexpr, REDUCERS_WAIT: tl.constexpr,
):
    """`rmsnorm_bwd_grid_sync_kernel` with two options (that kernel is left as it is, so the shipped
    `.gs` builds keep their fingerprints): RED_TILES > 0 sums the partials in that many unrolled tiles
    (`reduce_columns_unrolled`; the `.ur` programs), and REDUCERS_WAIT lets the programs that sum no
    column block arrive at the barrier and exit (`grid_barrier_reducers`; `.rw`). The rows, the
    partials and the tiles' order are the base's, so dx and dw are bit for bit its. PHASE as there
    (0: the cooperative launch; 1 and 2: the
    interpreter's two halves), and for the device probes (scripts/device/gs_phase_probe.py) 3: the
    rows and the barrier without the reduce, 4: the barrier alone."""
    if PHASE == 0 or PHASE == 1 or PHASE == 3:
        if SPLIT_RSTD:
            rmsnorm_bwd_rows_split_rstd_kernel(
                G, X, W, RSTD, GRES, DX, DW, WS, COUNTER, n_rows, NH, H, H_f, sgt, sgh, sxt, sxh, srt, srh,
                BLOCK_H=BLOCK_H, ROWS=ROWS, MODE=MODE, FOLD=FOLD, HAS_GRES=HAS_GRES, SINGLE=False, EXACT=EXACT,
                RED_BLOCK=RED_BLOCK, FOLD_WS=FOLD_WS, PREFETCH=PREFETCH, BLOCK_B=BLOCK_B)
        else:
            rmsnorm_bwd_rows_kernel(
                G, X, W, RSTD, GRES, DX, DW, WS, COUNTER, n_rows, NH, H, H_f, sgt, sgh, sxt, sxh, srt, srh,
                BLOCK_H=BLOCK_H, ROWS=ROWS, MODE=MODE, FOLD=FOLD, HAS_GRES=HAS_GRES, SINGLE=False, EXACT=EXACT,
                RED_BLOCK=RED_BLOCK, FOLD_WS=FOLD_WS, PREFETCH=PREFETCH, BLOCK_B=BLOCK_B)
    if PHASE == 0 or PHASE == 3 or PHASE == 4:
        if REDUCERS_WAIT:
            grid_barrier_reducers(COUNTER, tl.program_id(0) < tl.cdiv(H, RED_C))
        else:
            grid_barrier(COUNTER)
    if PHASE == 0 or PHASE == 2:
        if RED_TILES > 0:
            reduce_columns_unrolled(WS, DW, n_partials, H, RED_P, RED_C, RED_TILES)
        else:
            reduce_columns_strided(WS, DW, n_partials, H, RED_P, RED_C)


@triton.jit
def grid_barrier_reducers(COUNTER, wait):
    """`grid_barrier` where only the programs with `wait` (those that sum a column block afterwards)
    wait for the last arrival; the others arrive (their partials released to the waiters) and go on,
    to exit. Every poll of the generation is an atomic on one word, queued in the L2 with the
    arrivals that release the grid: H / RED_C waiters poll instead of the whole grid. The last to
    arrive, waiter or not, resets the count and advances the generation, as there."""
    tl.debug_barrier()
    gen = 0
    if wait:
        gen = tl.atomic_add(COUNTER + 1, 0, sem="acquire")
    arrived = tl.atomic_add(COUNTER, 1, sem="acq_rel")
    if arrived == tl.num_programs(0) - 1:
        tl.atomic_xchg(COUNTER, 0, sem="relaxed")
        tl.atomic_add(COUNTER + 1, 1, sem="release")
    elif wait:
        cur = gen
        while cur == gen:
            cur = tl.atomic_add(COUNTER + 1, 0, sem="acquire")
    tl.debug_barrier()


@triton.jit
def reduce_columns_unrolled(WS, DW, P, H, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr, TILES: tl.constexpr):
    """`reduce_columns_strided` with the tile loop unrolled to TILES tiles (TILES * BLOCK_P >= P): the
    tiles' loads are independent of the running sum, so they can all be in flight at once. Tiles past
    P load nothing and add +0.0, which leaves the sum as it is (a sum that starts at +0.0 is never
    -0.0 in round-to-nearest), so the sum is the looped one's, tile for tile."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for cb in range(pid, tl.cdiv(H, BLOCK_C), nprog):
        cols = cb * BLOCK_C + tl.arange(0, BLOCK_C)
        cmask = cols < H
        acc = tl.zeros([BLOCK_C], dtype=tl.float64)
        for t in tl.static_range(TILES):
            ps = tl.arange(0, BLOCK_P).to(tl.int64) + t * BLOCK_P
            m = (ps < P)[:, None] & cmask[None, :]
            part = tl.load(WS + ps[:, None] * H + cols[None, :], mask=m, other=0.0, cache_modifier=".cg")
            acc += tl.sum(part.to(tl.float64), axis=0)
        tl.store(DW + cols, acc.to(tl.float32), mask=cmask)


@triton.jit
def rmsnorm_bwd_grid_sync_flat_kernel(
    G, X, W, RSTD, GRES, DX, DW, WS, COUNTER,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    n_partials,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, MODE: tl.constexpr, FOLD: tl.constexpr,
    HAS_GRES: tl.constexpr, SINGLE: tl.constexpr, EXACT: tl.constexpr, RED_BLOCK: tl.constexpr,
    FOLD_WS: tl.constexpr, PREFETCH: tl.constexpr, BLOCK_B: tl.constexpr,
    SPLIT_RSTD: tl.constexpr, PHASE: tl.constexpr, RED_P: tl.constexpr, RED_C: tl.constexpr,
    RED_TILES: tl.constexpr, REDUCERS_WAIT: tl.constexpr,
):
    """`.uf` programs: the rows and the barrier of `rmsnorm_bwd_grid_sync_v2_kernel` (called as they
    are: its PHASE 3, or 1 and 4 for the interpreter and the probes), then the partials summed by
    `reduce_columns_flat` instead of tile by tile. dx is the base's bit for bit; dw sums the same FP64
    partials in another fixed order (deterministic, not bitwise the base's). PHASE as in the v2 kernel
    (0: the cooperative launch; 1, 2: the interpreter's two halves; 3: rows and barrier; 4: barrier)."""
    if PHASE == 0 or PHASE == 3:
        rmsnorm_bwd_grid_sync_v2_kernel(
            G, X, W, RSTD, GRES, DX, DW, WS, COUNTER, n_rows, NH, H, H_f, sgt, sgh, sxt, sxh, srt, srh, n_partials,
            BLOCK_H=BLOCK_H, ROWS=ROWS, MODE=MODE, FOLD=FOLD, HAS_GRES=HAS_GRES, SINGLE=SINGLE, EXACT=EXACT,
            RED_BLOCK=RED_BLOCK, FOLD_WS=FOLD_WS, PREFETCH=PREFETCH, BLOCK_B=BLOCK_B, SPLIT_RSTD=SPLIT_RSTD, PHASE=3,
            RED_P=RED_P, RED_C=RED_C, RED_TILES=0, REDUCERS_WAIT=REDUCERS_WAIT)
    if PHASE == 1 or PHASE == 4:
        rmsnorm_bwd_grid_sync_v2_kernel(
            G, X, W, RSTD, GRES, DX, DW, WS, COUNTER, n_rows, NH, H, H_f, sgt, sgh, sxt, sxh, srt, srh, n_partials,
            BLOCK_H=BLOCK_H, ROWS=ROWS, MODE=MODE, FOLD=FOLD, HAS_GRES=HAS_GRES, SINGLE=SINGLE, EXACT=EXACT,
            RED_BLOCK=RED_BLOCK, FOLD_WS=FOLD_WS, PREFETCH=PREFETCH, BLOCK_B=BLOCK_B, SPLIT_RSTD=SPLIT_RSTD, PHASE=PHASE,
            RED_P=RED_P, RED_C=RED_C, RED_TILES=0, REDUCERS_WAIT=REDUCERS_WAIT)
    if PHASE == 0 or PHASE == 2:
        reduce_columns_flat(WS, DW, n_partials, H, RED_P, RED_C, RED_TILES)


@triton.jit
def reduce_columns_flat(WS, DW, P, H, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr, TILES: tl.constexpr):
    """dw[c] = sum over p of WS[p, c] in FP64, in TILES unrolled [BLOCK_P, BLOCK_C] tiles (TILES * BLOCK_P
    >= P) added element by element into one FP64 tile, then one tree over its rows.

    Why: `reduce_columns_unrolled` sums each tile across threads (shuffles and a shared-memory step) and
    adds the tile sums; here each thread adds its own elements of the TILES tiles first, so the
    cross-thread work is done once. The order (thread-wise sums of rows p, p + BLOCK_P, ..., then the
    tree) depends on (P, H, BLOCK_P, BLOCK_C, TILES) and the build alone, so dw is the same whichever
    program sums a block and run to run. Tiles past P add +0.0, as there."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for cb in range(pid, tl.cdiv(H, BLOCK_C), nprog):
        cols = cb * BLOCK_C + tl.arange(0, BLOCK_C)
        cmask = cols < H
        acc = tl.zeros([BLOCK_P, BLOCK_C], dtype=tl.float64)
        for t in tl.static_range(TILES):
            ps = tl.arange(0, BLOCK_P).to(tl.int64) + t * BLOCK_P
            m = (ps < P)[:, None] & cmask[None, :]
            acc += tl.load(WS + ps[:, None] * H + cols[None, :], mask=m, other=0.0, cache_modifier=".cg").to(tl.float64)
        tl.store(DW + cols, tl.sum(acc, axis=0).to(tl.float32), mask=cmask)


@triton.jit
def _load_gx(G, X, rows, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh, EVICT: tl.constexpr):
    """g and x of a tile (BF16, as stored) with an L1/L2 eviction hint; rows past n_rows read 0."""
    mask = (rows < n_rows)[:, None] & cmask[None, :]
    g = tl.load(G + row_offsets(rows, NH, sgt, sgh)[:, None] + cols[None, :], mask=mask, other=0.0, eviction_policy=EVICT)
    x = tl.load(X + row_offsets(rows, NH, sxt, sxh)[:, None] + cols[None, :], mask=mask, other=0.0, eviction_policy=EVICT)
    return g, x


@triton.jit
def rmsnorm_bwd_rows_reload_kernel(
    G, X, W, RSTD, GRES, DX, DW, WS, COUNTER,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, MODE: tl.constexpr, FOLD: tl.constexpr,
    HAS_GRES: tl.constexpr, SINGLE: tl.constexpr, EXACT: tl.constexpr, RED_BLOCK: tl.constexpr,
    FOLD_WS: tl.constexpr = False, PREFETCH: tl.constexpr = False, BLOCK_B: tl.constexpr = 0,
):
    """`.rl` programs (two-launch `twosum_pair`, split-rstd products, no register prefetch): each tile
    of g and x is read twice, first for the rows' mean(g*w*x), then again, from L1, for dx and the
    compensated dw step; the weight is read from L1 in both passes instead of held. The arithmetic is
    `rmsnorm_bwd_rows_split_rstd_kernel`'s, so dx and dw equal those of the `.xs` program with the
    same tile, warps, grid and fold, bit for bit.

    Why: the register-held programs keep the tile (and with `.pf` the next one) live across the row
    sum, so at wide rows they need 247-255 registers at 8 warps (ncu, H100, plain H 6144 BF16
    T 65536: 12.5 % achieved occupancy, 85 % of DRAM peak), one program per SM. torch.compile's
    backward there runs 2 blocks of 8 warps per SM at 128 registers, reading the weight and x through
    L1 more than once (56 % L1 hit rate), at 90 % of DRAM peak, 4 % faster. Here what lives across
    the row sum is the dw state alone (the FP32 sum and its compensation per column), so a program
    needs fewer registers and more of them fit per SM: latency is hidden by programs, not by a
    prefetched tile. The first pass asks L1 to keep the lines (evict_last), the second lets them go
    (evict_first); the two loads also differ in that hint, so they are not merged into one.
    A kernel of its own, so that the shipped programs' device code and evidence stay as they are.
    """
    tl.static_assert(MODE == 3, "reload: compensated (TwoSum) programs only")
    tl.static_assert(not SINGLE, "reload: two-launch programs only")
    tl.static_assert(not PREFETCH, "reload: no register prefetch (the point is to hold no tile)")
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    acc, comp, _, tot = _dw_state(BLOCK_H)
    ws_row = WS + pid.to(tl.int64) * H + cols
    if BLOCK_B > 0:
        cols_b = BLOCK_H + tl.arange(0, BLOCK_B)
        cmask_b = cols_b < H
        acc_b, comp_b, _, tot_b = _dw_state(BLOCK_B)
        ws_row_b = WS + pid.to(tl.int64) * H + cols_b
    if FOLD_WS:
        tl.store(ws_row, tl.zeros([BLOCK_H], dtype=tl.float64), mask=cmask)
        if BLOCK_B > 0:
            tl.store(ws_row_b, tl.zeros([BLOCK_B], dtype=tl.float64), mask=cmask_b)
    n_blocks = tl.cdiv(n_rows, ROWS)
    it = 0
    for blk in range(pid, n_blocks, nprog):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        rstd = tl.load(RSTD + rows, mask=rmask, other=0.0)
        # Pass 1: the rows' mean(g*w*x), the same products and order as the split-rstd kernel's.
        g, x = _load_gx(G, X, rows, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh, "evict_last")
        w = tl.load(W + cols, mask=cmask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        s = tl.sum(g.to(tl.float32) * w[None, :] * x.to(tl.float32), axis=1)
        if BLOCK_B > 0:
            g_b, x_b = _load_gx(G, X, rows, cols_b, cmask_b, n_rows, NH, sgt, sgh, sxt, sxh, "evict_last")
            w_b = tl.load(W + cols_b, mask=cmask_b, other=0.0, eviction_policy="evict_last").to(tl.float32)
            s += tl.sum(g_b.to(tl.float32) * w_b[None, :] * x_b.to(tl.float32), axis=1)
        c = tl.div_rn(s, H_f)
        r_hi = ((rstd.to(tl.uint32, bitcast=True) >> 16) << 16).to(tl.float32, bitcast=True)
        r_lo = rstd - r_hi
        # Pass 2: the same tile again (L1 hits), dx and the compensated dw step.
        g, x = _load_gx(G, X, rows, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh, "evict_first")
        g = g.to(tl.float32)
        x = x.to(tl.float32)
        w = tl.load(W + cols, mask=cmask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        _store_dx(DX, GRES, g, x, w, rstd, c, rows, rmask, cols, cmask, NH, srt, srh, H, HAS_GRES, EXACT)
        acc, comp, tot = _dw_step_split_rstd(g, x, r_hi, r_lo, acc, comp, tot, ws_row, cmask, it, FOLD, FOLD_WS, ROWS)
        if BLOCK_B > 0:
            g_b, x_b = _load_gx(G, X, rows, cols_b, cmask_b, n_rows, NH, sgt, sgh, sxt, sxh, "evict_first")
            g_b = g_b.to(tl.float32)
            x_b = x_b.to(tl.float32)
            w_b = tl.load(W + cols_b, mask=cmask_b, other=0.0, eviction_policy="evict_first").to(tl.float32)
            _store_dx(DX, GRES, g_b, x_b, w_b, rstd, c, rows, rmask, cols_b, cmask_b, NH, srt, srh, H, HAS_GRES, EXACT)
            acc_b, comp_b, tot_b = _dw_step_split_rstd(g_b, x_b, r_hi, r_lo, acc_b, comp_b, tot_b, ws_row_b, cmask_b,
                                                       it, FOLD, FOLD_WS, ROWS)
        it += 1
    _dw_finish(DW, ws_row, cols, cmask, acc, comp, acc, tot, 3, FOLD_WS)
    if BLOCK_B > 0:
        _dw_finish(DW, ws_row_b, cols_b, cmask_b, acc_b, comp_b, acc_b, tot_b, 3, FOLD_WS)


@triton.jit
def rmsnorm_bwd_rows_reload_prefetch_kernel(
    G, X, W, RSTD, GRES, DX, DW, WS, COUNTER,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, MODE: tl.constexpr, FOLD: tl.constexpr,
    HAS_GRES: tl.constexpr, SINGLE: tl.constexpr, EXACT: tl.constexpr, RED_BLOCK: tl.constexpr,
    FOLD_WS: tl.constexpr = False, PREFETCH: tl.constexpr = False, BLOCK_B: tl.constexpr = 0,
):
    """`.pf...rl` programs: `rmsnorm_bwd_rows_reload_kernel` with the next tile's g and x loaded (as
    BF16) before this tile's row sum, as the prefetching programs do. This tile's g and x come from
    those registers for the row sum, then again from L1 for dx and dw, so what lives across the sum
    is the next tile (one register per column pair of BF16 values) and the dw state; the register-held
    prefetching programs also keep this tile and the weight in FP32 across it (247-255 registers at
    H 6144 with 8 warps). Why: on an H100 the `.rl` programs without a prefetch were slower than the
    held ones at every key but H 8192 (0.15-0.93x): a program holding no next tile waits a DRAM round
    trip per row. dx and dw equal the register-held `.xs` build's of the same shape, bit for bit.
    A kernel of its own, so that the `.rl` programs' device code and evidence stay as they are.
    """
    tl.static_assert(MODE == 3, "reload: compensated (TwoSum) programs only")
    tl.static_assert(not SINGLE, "reload: two-launch programs only")
    tl.static_assert(PREFETCH, "reload with prefetch: the prefetching build only")
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    acc, comp, _, tot = _dw_state(BLOCK_H)
    ws_row = WS + pid.to(tl.int64) * H + cols
    if BLOCK_B > 0:
        cols_b = BLOCK_H + tl.arange(0, BLOCK_B)
        cmask_b = cols_b < H
        acc_b, comp_b, _, tot_b = _dw_state(BLOCK_B)
        ws_row_b = WS + pid.to(tl.int64) * H + cols_b
    if FOLD_WS:
        tl.store(ws_row, tl.zeros([BLOCK_H], dtype=tl.float64), mask=cmask)
        if BLOCK_B > 0:
            tl.store(ws_row_b, tl.zeros([BLOCK_B], dtype=tl.float64), mask=cmask_b)
    n_blocks = tl.cdiv(n_rows, ROWS)
    first = tl.arange(0, ROWS).to(tl.int64) + pid * ROWS
    g_n, x_n, r_n = load_tile(G, X, RSTD, first, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
    if BLOCK_B > 0:
        g_nb, x_nb, _ = load_tile(G, X, RSTD, first, cols_b, cmask_b, n_rows, NH, sgt, sgh, sxt, sxh)
    it = 0
    for blk in range(pid, n_blocks, nprog):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        g, x, rstd = g_n, x_n, r_n
        g_n, x_n, r_n = load_tile(G, X, RSTD, rows + nprog * ROWS, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh)
        w = tl.load(W + cols, mask=cmask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        s = tl.sum(g.to(tl.float32) * w[None, :] * x.to(tl.float32), axis=1)
        if BLOCK_B > 0:
            g_b, x_b = g_nb, x_nb
            g_nb, x_nb, _ = load_tile(G, X, RSTD, rows + nprog * ROWS, cols_b, cmask_b, n_rows, NH, sgt, sgh, sxt, sxh)
            w_b = tl.load(W + cols_b, mask=cmask_b, other=0.0, eviction_policy="evict_last").to(tl.float32)
            s += tl.sum(g_b.to(tl.float32) * w_b[None, :] * x_b.to(tl.float32), axis=1)
        c = tl.div_rn(s, H_f)
        r_hi = ((rstd.to(tl.uint32, bitcast=True) >> 16) << 16).to(tl.float32, bitcast=True)
        r_lo = rstd - r_hi
        g, x = _load_gx(G, X, rows, cols, cmask, n_rows, NH, sgt, sgh, sxt, sxh, "evict_first")
        g = g.to(tl.float32)
        x = x.to(tl.float32)
        w = tl.load(W + cols, mask=cmask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        _store_dx(DX, GRES, g, x, w, rstd, c, rows, rmask, cols, cmask, NH, srt, srh, H, HAS_GRES, EXACT)
        acc, comp, tot = _dw_step_split_rstd(g, x, r_hi, r_lo, acc, comp, tot, ws_row, cmask, it, FOLD, FOLD_WS, ROWS)
        if BLOCK_B > 0:
            g_b, x_b = _load_gx(G, X, rows, cols_b, cmask_b, n_rows, NH, sgt, sgh, sxt, sxh, "evict_first")
            g_b = g_b.to(tl.float32)
            x_b = x_b.to(tl.float32)
            w_b = tl.load(W + cols_b, mask=cmask_b, other=0.0, eviction_policy="evict_first").to(tl.float32)
            _store_dx(DX, GRES, g_b, x_b, w_b, rstd, c, rows, rmask, cols_b, cmask_b, NH, srt, srh, H, HAS_GRES, EXACT)
            acc_b, comp_b, tot_b = _dw_step_split_rstd(g_b, x_b, r_hi, r_lo, acc_b, comp_b, tot_b, ws_row_b, cmask_b,
                                                       it, FOLD, FOLD_WS, ROWS)
        it += 1
    _dw_finish(DW, ws_row, cols, cmask, acc, comp, acc, tot, 3, FOLD_WS)
    if BLOCK_B > 0:
        _dw_finish(DW, ws_row_b, cols_b, cmask_b, acc_b, comp_b, acc_b, tot_b, 3, FOLD_WS)


@triton.jit
def _inverse(H_f):
    """1 / H in FP32, once per program: the `f64` kernels take a row's mean(g*w*x) as its sum times
    this instead of an IEEE division per row, which costs about ten instructions (reciprocal, two
    Newton steps, a range check and its branch) where a one-warp 256-wide row issues about 160 in
    all. Exact where H is a power of two (the product then equals the quotient); else within one
    FP32 ulp of it, far below dx's BF16 rounding."""
    return tl.div_rn(tl.full((), 1.0, tl.float32), H_f)


@triton.jit
def _dw_step_fp64(g, x, rstd, acc):
    """One tile's products added to a program's FP64 dw running sums `acc` ([BLOCK_H]); the tile's
    rows are summed first (in FP64, a fixed tree: where the tile's warps cover the row, Triton's
    layout gives each thread the same columns of every row, so the tree runs in its registers).

    Why it is exact: rstd = s * m with s = 2^floor(log2 rstd) (its exponent bits) and m in [1, 2) (its
    significand, 24 bits), both exact. g and x are BF16 values (8 significant bits), so x * s is exact
    (a power of two) and g * (x * s) is an exact FP32 product (16 bits); converted to FP64 and times m
    it is exact again (40 of FP64's 53 bits). So each term is g * x * rstd exactly and only the FP64
    additions round (2^-53 relative each). Scaling by s first keeps the FP32 product within a factor
    2 of the term itself, so it is finite wherever the term is (g * x alone can pass FP32's range at
    finite g * x * rstd). Whether ptxas fuses the FP64 product into the add (DFMA) or not, the result is
    the same (the product is exact). Four instructions per element (two FP32 multiplies, conversion,
    DFMA) against the compensated programs' eleven (`.xs`: four multiplies and a TwoSum); the conversion
    runs at 16 per SM per clock on sm_90 (a quarter of the FP64 rate), which is what this trades for
    the TwoSum. Rows past the end read rstd 0: s 0, m 1, term 0."""
    bits = rstd.to(tl.uint32, bitcast=True)
    s = (bits & 0x7F800000).to(tl.float32, bitcast=True)
    m = ((bits & 0x007FFFFF) | 0x3F800000).to(tl.float32, bitcast=True)
    p = g * (x * s[:, None])
    return acc + tl.sum(p.to(tl.float64) * m.to(tl.float64)[:, None], axis=0)


@triton.jit
def _tile_ptrs(BASE, rows, cols, NH, st, sh):
    """Pointers to a tile's elements (rows: int32 row indices)."""
    return BASE + row_offsets(rows.to(tl.int64), NH, st, sh)[:, None] + cols[None, :]


@triton.jit
def _advance(p, BASE, rows, cols, NH, st, sh, step):
    """The tile pointers `p` moved `step` rows on, to `rows`. With one head per row (NH compiled in as
    1: plain rows and the flat head views) a row's offset is linear in the row, so the pointers move
    by a 64-bit add; recomputing them from the row (`row_offsets`: a 64-bit multiply and the address
    arithmetic) costs about six instructions a tensor a row, where a one-warp 256-wide row issues
    about 150 in all. With several heads per row the offset is not linear: recomputed."""
    # One return after the branch: a return in each branch of a run-time `if` is unstructured
    # control flow that Triton 3.6 cannot lower (ConvertTritonToTritonGPU fails where NH is not 1).
    if NH == 1:
        q = p + step.to(tl.int64) * st
    else:
        q = _tile_ptrs(BASE, rows, cols, NH, st, sh)
    return q


@triton.jit
def _load_at(pg, px, RSTD, rows, cmask, n_rows):
    """g and x (as stored) at the tile pointers and rstd of `rows`; rows past n_rows read 0."""
    rmask = rows < n_rows
    mask = rmask[:, None] & cmask[None, :]
    return tl.load(pg, mask=mask, other=0.0), tl.load(px, mask=mask, other=0.0), tl.load(RSTD + rows, mask=rmask, other=0.0)


@triton.jit
def _store_dx_at(pdx, pres, g, x, w, rstd, c, mask, HAS_GRES: tl.constexpr, EXACT: tl.constexpr):
    """`_store_dx` at tile pointers (dx's; the residual gradient's at `pres`)."""
    r = rstd[:, None]
    dx = r * (g * w[None, :]) - x * ((r * r * r) * c[:, None])
    if HAS_GRES:
        dx += tl.load(pres, mask=mask, other=0.0).to(tl.float32)
    tl.store(pdx, to_bf16(dx, EXACT), mask=mask)


@triton.jit
def _tile_out(pdx, pres, GRES, g, x, w, rstd, c, rmask, cmask, nxt, cols, NH, srt, srh, step, H, acc,
              HAS_GRES: tl.constexpr, EXACT: tl.constexpr):
    """A tile's dx stored (`_store_dx_at`) and its dw terms added to `acc` (`_dw_step_fp64`); returns
    the dx and residual-gradient pointers moved on to `nxt`, and the sums."""
    _store_dx_at(pdx, pres, g, x, w, rstd, c, rmask[:, None] & cmask[None, :], HAS_GRES, EXACT)
    if HAS_GRES:
        pres = _advance(pres, GRES, nxt, cols, NH, srt, srh, step)
    return pdx + step.to(tl.int64) * H, pres, _dw_step_fp64(g, x, rstd, acc)


@triton.jit
def rmsnorm_bwd_rows_fp64_kernel(
    G, X, W, RSTD, GRES, DX, DW, WS, COUNTER,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, MODE: tl.constexpr, FOLD: tl.constexpr,
    HAS_GRES: tl.constexpr, SINGLE: tl.constexpr, EXACT: tl.constexpr, RED_BLOCK: tl.constexpr,
    FOLD_WS: tl.constexpr = False, PREFETCH: tl.constexpr = False, BLOCK_B: tl.constexpr = 0,
):
    """`f64_pair` programs (two-launch, deterministic): the rows kernel's dx and tile loop (pointer
    loads, the next tile prefetched when PREFETCH; with BLOCK_B > 0 the row held as two tiles, as in
    `rmsnorm_bwd_rows_kernel`) with dw summed in FP64 by `_dw_step_fp64` instead of by TwoSum; each
    program's sums are stored as its FP64 partial row of the [P, H] workspace, which the fixed-order
    reduce kernel sums. No fold: an FP64 sum of finite products cannot overflow at any T a tensor
    can hold. Same arguments as `rmsnorm_bwd_rows_kernel` (runner.backward_meta builds both); MODE 3
    (FP64 partials), SINGLE False, FOLD and FOLD_WS unused.
    """
    tl.static_assert(MODE == 3, "FP64 sums: FP64 partials (mode 3) only")
    tl.static_assert(not SINGLE, "FP64 sums: two-launch programs only")
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    acc = tl.zeros([BLOCK_H], dtype=tl.float64)
    inv_h = _inverse(H_f)
    if BLOCK_B > 0:
        cols_b = BLOCK_H + tl.arange(0, BLOCK_B)
        cmask_b = cols_b < H
        w_b = tl.load(W + cols_b, mask=cmask_b, other=0.0).to(tl.float32)
        acc_b = tl.zeros([BLOCK_B], dtype=tl.float64)
    n_blocks = tl.cdiv(n_rows, ROWS)
    # Pointers move with the tile instead of being recomputed from the row (`_advance`).
    step = nprog * ROWS
    rows = tl.arange(0, ROWS) + pid * ROWS
    pg = _tile_ptrs(G, rows, cols, NH, sgt, sgh)
    px = _tile_ptrs(X, rows, cols, NH, sxt, sxh)
    pdx = DX + rows.to(tl.int64)[:, None] * H + cols[None, :]
    pres = _tile_ptrs(GRES, rows, cols, NH, srt, srh) if HAS_GRES else pdx  # without one, a stand-in never read
    if BLOCK_B > 0:
        pg_b = _tile_ptrs(G, rows, cols_b, NH, sgt, sgh)
        px_b = _tile_ptrs(X, rows, cols_b, NH, sxt, sxh)
        pdx_b = DX + rows.to(tl.int64)[:, None] * H + cols_b[None, :]
        pres_b = _tile_ptrs(GRES, rows, cols_b, NH, srt, srh) if HAS_GRES else pdx_b
    if PREFETCH:
        g_n, x_n, r_n = _load_at(pg, px, RSTD, rows, cmask, n_rows)
        if BLOCK_B > 0:
            g_nb, x_nb, _ = _load_at(pg_b, px_b, RSTD, rows, cmask_b, n_rows)
    for blk in range(pid, n_blocks, nprog):
        rows = tl.arange(0, ROWS) + blk * ROWS
        rmask = rows < n_rows
        nxt = rows + step
        if PREFETCH:
            pg = _advance(pg, G, nxt, cols, NH, sgt, sgh, step)
            px = _advance(px, X, nxt, cols, NH, sxt, sxh, step)
            g, x, rstd = g_n, x_n, r_n
            g_n, x_n, r_n = _load_at(pg, px, RSTD, nxt, cmask, n_rows)
            if BLOCK_B > 0:
                pg_b = _advance(pg_b, G, nxt, cols_b, NH, sgt, sgh, step)
                px_b = _advance(px_b, X, nxt, cols_b, NH, sxt, sxh, step)
                g_b, x_b = g_nb, x_nb
                g_nb, x_nb, _ = _load_at(pg_b, px_b, RSTD, nxt, cmask_b, n_rows)
        else:
            g, x, rstd = _load_at(pg, px, RSTD, rows, cmask, n_rows)
            pg = _advance(pg, G, nxt, cols, NH, sgt, sgh, step)
            px = _advance(px, X, nxt, cols, NH, sxt, sxh, step)
            if BLOCK_B > 0:
                g_b, x_b, _ = _load_at(pg_b, px_b, RSTD, rows, cmask_b, n_rows)
                pg_b = _advance(pg_b, G, nxt, cols_b, NH, sgt, sgh, step)
                px_b = _advance(px_b, X, nxt, cols_b, NH, sxt, sxh, step)
        g = g.to(tl.float32)
        x = x.to(tl.float32)
        c = tl.sum(g * w[None, :] * x, axis=1)
        if BLOCK_B > 0:
            g_b = g_b.to(tl.float32)
            x_b = x_b.to(tl.float32)
            c = (c + tl.sum(g_b * w_b[None, :] * x_b, axis=1)) * inv_h
            pdx_b, pres_b, acc_b = _tile_out(pdx_b, pres_b, GRES, g_b, x_b, w_b, rstd, c, rmask, cmask_b, nxt, cols_b,
                                             NH, srt, srh, step, H, acc_b, HAS_GRES, EXACT)
        else:
            c = c * inv_h
        pdx, pres, acc = _tile_out(pdx, pres, GRES, g, x, w, rstd, c, rmask, cmask, nxt, cols, NH, srt, srh, step, H, acc,
                                   HAS_GRES, EXACT)
    tl.store(WS + pid.to(tl.int64) * H + cols, acc, mask=cmask)
    if BLOCK_B > 0:
        tl.store(WS + pid.to(tl.int64) * H + cols_b, acc_b, mask=cmask_b)


@triton.jit
def rmsnorm_bwd_tma_chunks_fp64_kernel(
    GD, XD, W, RSTD, GRES, DX, WS,
    n_rows, NH, H, H_f, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, FOLD: tl.constexpr, STAGES: tl.constexpr,
    HAS_GRES: tl.constexpr, EXACT: tl.constexpr, SPLIT_RSTD: tl.constexpr,
):
    """`f64_pair` `.tmc` programs: the `.tmc` kernel's pipelined one-box loads and dx (same
    arguments) with dw summed in FP64 (`_dw_step_fp64`, see `rmsnorm_bwd_rows_fp64_kernel`). Why:
    at H 5120-8192 the compensated state is 5 registers a column (sum, compensation, FP64 total,
    weight); FP64 sums are 2 plus the weight, with no fold and no barrier in the loop.
    FOLD and SPLIT_RSTD are unused."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    acc = tl.zeros([BLOCK_H], dtype=tl.float64)
    inv_h = _inverse(H_f)
    n_blocks = tl.cdiv(n_rows, ROWS)
    for blk in tl.range(pid, n_blocks, nprog, num_stages=STAGES):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        g = tl.reshape(GD.load([blk * ROWS, 0, 0]), [ROWS, BLOCK_H]).to(tl.float32)
        x = tl.reshape(XD.load([blk * ROWS, 0, 0]), [ROWS, BLOCK_H]).to(tl.float32)
        rstd = tl.load(RSTD + rows, mask=rmask, other=0.0)
        c = tl.sum(g * w[None, :] * x, axis=1) * inv_h
        _store_dx(DX, GRES, g, x, w, rstd, c, rows, rmask, cols, cmask, NH, srt, srh, H, HAS_GRES, EXACT)
        acc = _dw_step_fp64(g, x, rstd, acc)
    tl.store(WS + pid.to(tl.int64) * H + cols, acc, mask=cmask)


@triton.jit
def rmsnorm_bwd_grid_sync_fp64_kernel(
    G, X, W, RSTD, GRES, DX, DW, WS, COUNTER,
    n_rows, NH, H, H_f,
    sgt, sgh, sxt, sxh, srt, srh,
    n_partials,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, MODE: tl.constexpr, FOLD: tl.constexpr,
    HAS_GRES: tl.constexpr, SINGLE: tl.constexpr, EXACT: tl.constexpr, RED_BLOCK: tl.constexpr,
    FOLD_WS: tl.constexpr, PREFETCH: tl.constexpr, BLOCK_B: tl.constexpr,
    SPLIT_RSTD: tl.constexpr, PHASE: tl.constexpr, RED_P: tl.constexpr, RED_C: tl.constexpr,
    RED_TILES: tl.constexpr, REDUCERS_WAIT: tl.constexpr,
):
    """`f64` programs (single launch, deterministic): the `f64_pair` rows kernel
    (`rmsnorm_bwd_rows_fp64_kernel`, called as it is, so its FP64 partials are bit for bit the
    two-launch program's), then the grid barrier (with REDUCERS_WAIT only the programs that sum a
    column block wait, `grid_barrier_reducers`) and the `.gs` programs' looped fixed-order reduce
    (`reduce_columns_strided`). Why: at contiguous heads H 256 the one-launch `.gs.fl.rw` program is
    the routed one on the H200 (141.0 us at BF16 T 65536 against 147.6 for its two-launch `.sr`
    twin). PHASE 0: the cooperative launch; 1 and 2: the interpreter's two halves (the rows and
    partials, then the reduce). SPLIT_RSTD and RED_TILES are unused (the reduce is looped)."""
    if PHASE == 0 or PHASE == 1:
        rmsnorm_bwd_rows_fp64_kernel(
            G, X, W, RSTD, GRES, DX, DW, WS, COUNTER, n_rows, NH, H, H_f, sgt, sgh, sxt, sxh, srt, srh,
            BLOCK_H=BLOCK_H, ROWS=ROWS, MODE=MODE, FOLD=FOLD, HAS_GRES=HAS_GRES, SINGLE=False, EXACT=EXACT,
            RED_BLOCK=RED_BLOCK, FOLD_WS=FOLD_WS, PREFETCH=PREFETCH, BLOCK_B=BLOCK_B)
    if PHASE == 0:
        if REDUCERS_WAIT:
            grid_barrier_reducers(COUNTER, tl.program_id(0) < tl.cdiv(H, RED_C))
        else:
            grid_barrier(COUNTER)
    if PHASE == 0 or PHASE == 2:
        reduce_columns_strided(WS, DW, n_partials, H, RED_P, RED_C)
