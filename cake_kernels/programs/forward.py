"""Forward programs: y = BF16((x * rstd) * w) and rstd in FP32, optionally h_new = BF16(x + residual).

One kernel serves two grid rules: `row_blocks` (one program per block of ROWS rows) and
`persistent` (programs_per_sm x SMs programs striding over the row blocks). The tile is
[ROWS, BLOCK_H] with BLOCK_H = next_pow2(H) (masked), so every H from 1 to 16384 is correct.

Split rows (`split_h` in the launch policy, names ending `.sp`): Triton tiles are powers of two,
so H = 5120 or 6144 in one tile is padded to 8192 columns, a third of the lanes idle and their
registers held. A split program holds the row as two tiles instead, BLOCK_H (the largest power of
two <= H, all columns valid) plus BLOCK_B (the next power of two >= H - BLOCK_H, masked): 4096 +
1024 for 5120, 4096 + 2048 for 6144, no idle lanes. The statistics add the two tiles' sums of
squares (a different FP32 summation order than one tile: within the rstd contract, not bitwise
equal to the unsplit programs).
"""

from __future__ import annotations

import triton
import triton.language as tl

from cake_kernels.programs.common import row_offsets, rstd_fast, rstd_of, rstd_of_sumsq, to_bf16


@triton.jit
def rmsnorm_fwd_kernel(
    X, RES, W, Y, RSTD, HNEW,
    n_rows, NH, H, H_f, eps,
    sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, HAS_RES: tl.constexpr, EXACT: tl.constexpr,
    BLOCK_B: tl.constexpr = 0,
):
    # With BLOCK_B = 0 this compiles to the same code as before split rows existed (checked on the
    # SASS): the shipped evidence was measured on that code. That is why the second tile's loads are
    # written out below rather than shared with the first through a helper: a shared helper moved
    # the first tile's SASS (scripts/sass_identity.py).
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    if BLOCK_B > 0:
        cols_b = BLOCK_H + tl.arange(0, BLOCK_B)
        cmask_b = cols_b < H
        w_b = tl.load(W + cols_b, mask=cmask_b, other=0.0).to(tl.float32)
    n_blocks = tl.cdiv(n_rows, ROWS)
    for blk in range(pid, n_blocks, nprog):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        mask = rmask[:, None] & cmask[None, :]
        xo = row_offsets(rows, NH, sxt, sxh)
        x = tl.load(X + xo[:, None] + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        out = rows[:, None] * H + cols[None, :]
        if HAS_RES:
            ro = row_offsets(rows, NH, srt, srh)
            u = tl.load(RES + ro[:, None] + cols[None, :], mask=mask, other=0.0).to(tl.float32)
            h = to_bf16(x + u, EXACT)
            tl.store(HNEW + out, h, mask=mask)
            x = h.to(tl.float32)
        if BLOCK_B > 0:
            mask_b = rmask[:, None] & cmask_b[None, :]
            x_b = tl.load(X + xo[:, None] + cols_b[None, :], mask=mask_b, other=0.0).to(tl.float32)
            out_b = rows[:, None] * H + cols_b[None, :]
            if HAS_RES:
                u_b = tl.load(RES + ro[:, None] + cols_b[None, :], mask=mask_b, other=0.0).to(tl.float32)
                h_b = to_bf16(x_b + u_b, EXACT)
                tl.store(HNEW + out_b, h_b, mask=mask_b)
                x_b = h_b.to(tl.float32)
            rstd = rstd_of_sumsq(tl.sum(x * x, axis=1) + tl.sum(x_b * x_b, axis=1), H_f, eps)
            y_b = (x_b * rstd[:, None]) * w_b[None, :]
            tl.store(Y + out_b, to_bf16(y_b, EXACT), mask=mask_b)
        else:
            rstd = rstd_of(x, H_f, eps)
        y = (x * rstd[:, None]) * w[None, :]
        tl.store(Y + out, to_bf16(y, EXACT), mask=mask)
        tl.store(RSTD + rows, rstd, mask=rmask)


@triton.jit
def _load_rows(X, RES, rows, n_rows, NH, sxt, sxh, srt, srh, cols, cmask, HAS_RES: tl.constexpr):
    """x (and the residual, else x again) of a tile of rows, as stored (BF16); masked lanes read 0."""
    mask = (rows < n_rows)[:, None] & cmask[None, :]
    x = tl.load(X + row_offsets(rows, NH, sxt, sxh)[:, None] + cols[None, :], mask=mask, other=0.0)
    if HAS_RES:
        u = tl.load(RES + row_offsets(rows, NH, srt, srh)[:, None] + cols[None, :], mask=mask, other=0.0)
    else:
        u = x
    return x, u


@triton.jit
def _add_residual(x, u, HNEW, out, mask, HAS_RES: tl.constexpr, EXACT: tl.constexpr):
    """The row in FP32; with a residual, h_new = BF16(x + residual) is stored and is the row."""
    x = x.to(tl.float32)
    if HAS_RES:
        h = to_bf16(x + u.to(tl.float32), EXACT)
        tl.store(HNEW + out, h, mask=mask)
        x = h.to(tl.float32)
    return x


@triton.jit
def rmsnorm_fwd_prefetch_kernel(
    X, RES, W, Y, RSTD, HNEW,
    n_rows, NH, H, H_f, eps,
    sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, HAS_RES: tl.constexpr, EXACT: tl.constexpr,
    BLOCK_B: tl.constexpr = 0,
):
    """Persistent forward with the next tile prefetched (`prefetch` in the launch policy, names
    ending `.pf`): the same math and rounding as `rmsnorm_fwd_kernel`.

    Why: a forward program holds a row in registers from load to store, so the register file bounds
    the rows in flight per SM (at H 5120-8192, 123 registers per thread and two rows per SM; the
    H200 then reads at 75-87 % of copy bandwidth). Here the next tile's load is issued before this
    tile is normalised, and the weight is re-read each tile (an L1 hit) instead of held in
    registers, which pays for the prefetched tile's registers.
    """
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    cols_b = BLOCK_H + tl.arange(0, max(BLOCK_B, 1))
    cmask_b = cols_b < H
    n_blocks = tl.cdiv(n_rows, ROWS)
    first = tl.arange(0, ROWS).to(tl.int64) + pid * ROWS
    x_n, u_n = _load_rows(X, RES, first, n_rows, NH, sxt, sxh, srt, srh, cols, cmask, HAS_RES)
    if BLOCK_B > 0:
        x_nb, u_nb = _load_rows(X, RES, first, n_rows, NH, sxt, sxh, srt, srh, cols_b, cmask_b, HAS_RES)
    for blk in range(pid, n_blocks, nprog):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        mask = rmask[:, None] & cmask[None, :]
        out = rows[:, None] * H + cols[None, :]
        x, u = x_n, u_n
        x_n, u_n = _load_rows(X, RES, rows + nprog * ROWS, n_rows, NH, sxt, sxh, srt, srh, cols, cmask, HAS_RES)
        x = _add_residual(x, u, HNEW, out, mask, HAS_RES, EXACT)
        if BLOCK_B > 0:
            mask_b = rmask[:, None] & cmask_b[None, :]
            out_b = rows[:, None] * H + cols_b[None, :]
            x_b, u_b = x_nb, u_nb
            x_nb, u_nb = _load_rows(X, RES, rows + nprog * ROWS, n_rows, NH, sxt, sxh, srt, srh, cols_b, cmask_b, HAS_RES)
            x_b = _add_residual(x_b, u_b, HNEW, out_b, mask_b, HAS_RES, EXACT)
            rstd = rstd_of_sumsq(tl.sum(x * x, axis=1) + tl.sum(x_b * x_b, axis=1), H_f, eps)
            w_b = tl.load(W + cols_b, mask=cmask_b, other=0.0).to(tl.float32)
            tl.store(Y + out_b, to_bf16((x_b * rstd[:, None]) * w_b[None, :], EXACT), mask=mask_b)
        else:
            rstd = rstd_of(x, H_f, eps)
        w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
        tl.store(Y + out, to_bf16((x * rstd[:, None]) * w[None, :], EXACT), mask=mask)
        tl.store(RSTD + rows, rstd, mask=rmask)


# --------------------------------------------------------------------------------------------
# Weight read beside the rows (`weight_load="beside_rows"`, names ending `.wx`).
#
# Why (SASS under Triton 3.6 for sm_90a, session 9): the kernels above read the weight in a 1-D
# layout of 128-bit loads, 4 FP32 or 8 BF16 values per thread, and use it in the row tile's layout,
# 8 values per thread (BF16 rows). With a BF16 weight the two layouts agree. With an FP32 weight
# Triton converts it through shared memory (STS, BAR, LDS), and `rmsnorm_fwd_kernel` does that
# before its loop: the barrier waits for the weight's DRAM read, and only then is the row's read
# issued, two DRAM round trips in a row. `rmsnorm_fwd_prefetch_kernel` issues its weight read after
# the row's reduction barriers, so it pays the second round trip with either weight. At T <= 256 a
# forward is that latency: round 9 measured 2.5-2.8 us with an FP32 weight against 1.95-2.1 with a
# BF16 one at H 5120-8192, T 1, and Liger (one DRAM round trip, FP32 weight) 1.75-1.95.
# Here every tile's step issues the row's read, then the weight's (an L1 or L2 hit after the first
# tile), and only then waits: the two reads overlap. Same arithmetic as the kernels above, bit for bit.


@triton.jit
def _finish_tile_weight_beside(x, u, x_b, u_b, rows, W, Y, RSTD, HNEW, n_rows, H, H_f, eps,
                               cols, cmask, cols_b, cmask_b,
                               HAS_RES: tl.constexpr, EXACT: tl.constexpr, BLOCK_B: tl.constexpr):
    """Normalise one tile whose rows' reads are in flight: the weight's reads are issued first."""
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    if BLOCK_B > 0:
        w_b = tl.load(W + cols_b, mask=cmask_b, other=0.0).to(tl.float32)
    rmask = rows < n_rows
    mask = rmask[:, None] & cmask[None, :]
    out = rows[:, None] * H + cols[None, :]
    x = _add_residual(x, u, HNEW, out, mask, HAS_RES, EXACT)
    if BLOCK_B > 0:
        mask_b = rmask[:, None] & cmask_b[None, :]
        out_b = rows[:, None] * H + cols_b[None, :]
        x_b = _add_residual(x_b, u_b, HNEW, out_b, mask_b, HAS_RES, EXACT)
        rstd = rstd_of_sumsq(tl.sum(x * x, axis=1) + tl.sum(x_b * x_b, axis=1), H_f, eps)
        tl.store(Y + out_b, to_bf16((x_b * rstd[:, None]) * w_b[None, :], EXACT), mask=mask_b)
    else:
        rstd = rstd_of(x, H_f, eps)
    tl.store(Y + out, to_bf16((x * rstd[:, None]) * w[None, :], EXACT), mask=mask)
    tl.store(RSTD + rows, rstd, mask=rmask)


@triton.jit
def rmsnorm_fwd_weight_beside_kernel(
    X, RES, W, Y, RSTD, HNEW,
    n_rows, NH, H, H_f, eps,
    sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, HAS_RES: tl.constexpr, EXACT: tl.constexpr,
    BLOCK_B: tl.constexpr = 0,
):
    """`rmsnorm_fwd_kernel` (row blocks or a persistent grid) with the weight read in each tile's
    step, after the tile's rows (see above)."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    cols_b = BLOCK_H + tl.arange(0, max(BLOCK_B, 1))
    cmask_b = cols_b < H
    n_blocks = tl.cdiv(n_rows, ROWS)
    for blk in range(pid, n_blocks, nprog):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        x, u = _load_rows(X, RES, rows, n_rows, NH, sxt, sxh, srt, srh, cols, cmask, HAS_RES)
        x_b, u_b = x, u
        if BLOCK_B > 0:
            x_b, u_b = _load_rows(X, RES, rows, n_rows, NH, sxt, sxh, srt, srh, cols_b, cmask_b, HAS_RES)
        _finish_tile_weight_beside(x, u, x_b, u_b, rows, W, Y, RSTD, HNEW, n_rows, H, H_f, eps,
                                   cols, cmask, cols_b, cmask_b, HAS_RES, EXACT, BLOCK_B)


@triton.jit
def rmsnorm_fwd_prefetch_weight_beside_kernel(
    X, RES, W, Y, RSTD, HNEW,
    n_rows, NH, H, H_f, eps,
    sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, HAS_RES: tl.constexpr, EXACT: tl.constexpr,
    BLOCK_B: tl.constexpr = 0,
):
    """`rmsnorm_fwd_prefetch_kernel` with the weight read at the start of each tile's step, beside
    the next tile's prefetch, instead of after the reduction (see above)."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    cols_b = BLOCK_H + tl.arange(0, max(BLOCK_B, 1))
    cmask_b = cols_b < H
    n_blocks = tl.cdiv(n_rows, ROWS)
    first = tl.arange(0, ROWS).to(tl.int64) + pid * ROWS
    x_n, u_n = _load_rows(X, RES, first, n_rows, NH, sxt, sxh, srt, srh, cols, cmask, HAS_RES)
    if BLOCK_B > 0:
        x_nb, u_nb = _load_rows(X, RES, first, n_rows, NH, sxt, sxh, srt, srh, cols_b, cmask_b, HAS_RES)
    for blk in range(pid, n_blocks, nprog):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        x, u = x_n, u_n
        x_b, u_b = x, u  # no second tile (BLOCK_B = 0): unused
        x_n, u_n = _load_rows(X, RES, rows + nprog * ROWS, n_rows, NH, sxt, sxh, srt, srh, cols, cmask, HAS_RES)
        if BLOCK_B > 0:
            x_b, u_b = x_nb, u_nb
            x_nb, u_nb = _load_rows(X, RES, rows + nprog * ROWS, n_rows, NH, sxt, sxh, srt, srh, cols_b, cmask_b, HAS_RES)
        _finish_tile_weight_beside(x, u, x_b, u_b, rows, W, Y, RSTD, HNEW, n_rows, H, H_f, eps,
                                   cols, cmask, cols_b, cmask_b, HAS_RES, EXACT, BLOCK_B)


# --------------------------------------------------------------------------------------------
# Weight read as a row tile (`weight_load="row_tile"`, names ending `.wt`).
#
# Why (TTGIR and SASS compiled for sm_90a on the CPU machine with compile_check, session 12): every
# kernel above reads the weight as a 1-D tensor and broadcasts it with `w[None, :]`. Triton gives a
# 1-D load its own layout, 128-bit per thread: 4 values for an FP32 weight, against the BF16 rows'
# 8. The product then needs the weight in the rows' layout, and that `convert_layout` goes through
# shared memory: STS, a barrier, LDS, per program (or per tile, where the weight is re-read per tile).
# `fwd.row.r1.w16` at H 6144: 5 barriers, 5 STS, 5 LDS. Read through a pointer tile of the rows'
# shape instead ([1, BLOCK_H] broadcast to [ROWS, BLOCK_H]; with ROWS > 1 a [1, BLOCK_H] tile alone
# still converted), the weight is loaded straight in the rows' layout (two 128-bit loads per 8
# values): 1 barrier (the row sum's), no convert. The cost: with ROWS > 1 each row holds its own copy
# of the weight in registers (`p8x.r2.w4.pf` at H 4096: more registers; compile_check reports them). Liger, whose 1-D kernel has one layout for both, ran the
# forward at T <= 256 with an FP32 weight 0.3-0.5 us faster than our best (round 11, H 4096-8192).
# The weight's read is issued beside the rows' (as `.wx`), and the arithmetic is the same, bit for bit.


@triton.jit
def _finish_tile_weight_tile(x, u, x_b, u_b, rows, W, Y, RSTD, HNEW, n_rows, H, H_f, eps,
                             cols, cmask, cols_b, cmask_b,
                             HAS_RES: tl.constexpr, EXACT: tl.constexpr, BLOCK_B: tl.constexpr):
    """Normalise one tile whose rows' reads are in flight; the weight is read as a tile of the rows'
    shape (each row's copy an L1 hit), which is what lets it load in the rows' layout when ROWS > 1."""
    w = tl.load(tl.broadcast_to(W + cols[None, :], x.shape), mask=cmask[None, :], other=0.0).to(tl.float32)
    if BLOCK_B > 0:
        w_b = tl.load(tl.broadcast_to(W + cols_b[None, :], x_b.shape), mask=cmask_b[None, :], other=0.0).to(tl.float32)
    rmask = rows < n_rows
    mask = rmask[:, None] & cmask[None, :]
    out = rows[:, None] * H + cols[None, :]
    x = _add_residual(x, u, HNEW, out, mask, HAS_RES, EXACT)
    if BLOCK_B > 0:
        mask_b = rmask[:, None] & cmask_b[None, :]
        out_b = rows[:, None] * H + cols_b[None, :]
        x_b = _add_residual(x_b, u_b, HNEW, out_b, mask_b, HAS_RES, EXACT)
        rstd = rstd_of_sumsq(tl.sum(x * x, axis=1) + tl.sum(x_b * x_b, axis=1), H_f, eps)
        tl.store(Y + out_b, to_bf16((x_b * rstd[:, None]) * w_b, EXACT), mask=mask_b)
    else:
        rstd = rstd_of(x, H_f, eps)
    tl.store(Y + out, to_bf16((x * rstd[:, None]) * w, EXACT), mask=mask)
    tl.store(RSTD + rows, rstd, mask=rmask)


@triton.jit
def _fwd_weight_tile_body(
    X, RES, W, Y, RSTD, HNEW, n_rows, NH, H, H_f, eps, sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, HAS_RES: tl.constexpr, EXACT: tl.constexpr,
    BLOCK_B: tl.constexpr, PREFETCH: tl.constexpr,
):
    """The `.wt` forward: row blocks or a persistent grid, the next tile prefetched if PREFETCH."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    cols_b = BLOCK_H + tl.arange(0, max(BLOCK_B, 1))
    cmask_b = cols_b < H
    n_blocks = tl.cdiv(n_rows, ROWS)
    if PREFETCH:
        first = tl.arange(0, ROWS).to(tl.int64) + pid * ROWS
        x_n, u_n = _load_rows(X, RES, first, n_rows, NH, sxt, sxh, srt, srh, cols, cmask, HAS_RES)
        x_nb, u_nb = x_n, u_n
        if BLOCK_B > 0:
            x_nb, u_nb = _load_rows(X, RES, first, n_rows, NH, sxt, sxh, srt, srh, cols_b, cmask_b, HAS_RES)
    for blk in range(pid, n_blocks, nprog):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        if PREFETCH:
            x, u, x_b, u_b = x_n, u_n, x_nb, u_nb
            x_n, u_n = _load_rows(X, RES, rows + nprog * ROWS, n_rows, NH, sxt, sxh, srt, srh, cols, cmask, HAS_RES)
            if BLOCK_B > 0:
                x_nb, u_nb = _load_rows(X, RES, rows + nprog * ROWS, n_rows, NH, sxt, sxh, srt, srh, cols_b, cmask_b,
                                        HAS_RES)
        else:
            x, u = _load_rows(X, RES, rows, n_rows, NH, sxt, sxh, srt, srh, cols, cmask, HAS_RES)
            x_b, u_b = x, u  # no second tile (BLOCK_B = 0): unused
            if BLOCK_B > 0:
                x_b, u_b = _load_rows(X, RES, rows, n_rows, NH, sxt, sxh, srt, srh, cols_b, cmask_b, HAS_RES)
        _finish_tile_weight_tile(x, u, x_b, u_b, rows, W, Y, RSTD, HNEW, n_rows, H, H_f, eps,
                                 cols, cmask, cols_b, cmask_b, HAS_RES, EXACT, BLOCK_B)


@triton.jit
def rmsnorm_fwd_weight_tile_kernel(
    X, RES, W, Y, RSTD, HNEW,
    n_rows, NH, H, H_f, eps,
    sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, HAS_RES: tl.constexpr, EXACT: tl.constexpr,
    BLOCK_B: tl.constexpr = 0,
):
    """`rmsnorm_fwd_weight_beside_kernel` with the weight read as a row tile (see above)."""
    _fwd_weight_tile_body(X, RES, W, Y, RSTD, HNEW, n_rows, NH, H, H_f, eps, sxt, sxh, srt, srh,
                          BLOCK_H, ROWS, HAS_RES, EXACT, BLOCK_B, False)


@triton.jit
def rmsnorm_fwd_prefetch_weight_tile_kernel(
    X, RES, W, Y, RSTD, HNEW,
    n_rows, NH, H, H_f, eps,
    sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, HAS_RES: tl.constexpr, EXACT: tl.constexpr,
    BLOCK_B: tl.constexpr = 0,
):
    """`rmsnorm_fwd_prefetch_weight_beside_kernel` with the weight read as a row tile (see above)."""
    _fwd_weight_tile_body(X, RES, W, Y, RSTD, HNEW, n_rows, NH, H, H_f, eps, sxt, sxh, srt, srh,
                          BLOCK_H, ROWS, HAS_RES, EXACT, BLOCK_B, True)


# --------------------------------------------------------------------------------------------
# Looped forward (`chunk` in the launch policy, names ending `.c{chunk}`).
#
# Why: the forward torch.compile generates (round 13a, TORCH_LOGS=output_code on the H200, torch 2.11)
# does not hold the row in registers. It streams the row in R0_BLOCK-column chunks twice: pass 1
# accumulates x*x into a [XBLOCK, R0_BLOCK] FP32 tile (no cross-thread sum until the end, one barrier
# per row), pass 2 re-reads x (evict_first: its lines are dead after this) and the weight
# (evict_last: every row reads it) and writes y. Each thread holds a few values (30-32 registers
# against our 56-97 at T 256), and in the harness it ran 5-15 % faster than our programs at T 16-256
# and 6-9 % at T >= 65536 with an FP32 weight at H 6144 and 8192 (round 12a). Under ncu, which
# flushes every cache before each kernel, ours ran faster (H 6144 FP32 T 256: 4.22 against 4.32 us),
# so the gain is not in the kernels' critical paths alone: measured, not assumed.
# Pass 1 uses evict_last on x so that pass 2 finds it in L2 (a chunk is re-read after the whole row's
# pass 1, so L1 may have lost it at wide rows). The sum order (chunk-wise elementwise, then the tile
# sum) differs from the register-held programs: rstd within its contract, not bitwise their rstd.
# With a residual, pass 2 re-reads x and the residual and recomputes h_new = BF16(x + residual): the
# same bits as pass 1 stored, without reading back a store from another thread.


@triton.jit
def rmsnorm_fwd_looped_kernel(
    X, RES, W, Y, RSTD, HNEW,
    n_rows, NH, H, H_f, eps,
    sxt, sxh, srt, srh,
    CHUNK: tl.constexpr, ROWS: tl.constexpr, HAS_RES: tl.constexpr, EXACT: tl.constexpr,
):
    """The forward over row blocks (or a persistent grid) in two passes over CHUNK-column chunks."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    base = tl.arange(0, CHUNK)
    n_blocks = tl.cdiv(n_rows, ROWS)
    for blk in range(pid, n_blocks, nprog):
        rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
        rmask = rows < n_rows
        xo = row_offsets(rows, NH, sxt, sxh)[:, None]
        ro = xo
        if HAS_RES:
            ro = row_offsets(rows, NH, srt, srh)[:, None]
        oo = rows[:, None] * H
        acc = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
        for c0 in range(0, H, CHUNK):
            cols = c0 + base
            mask = rmask[:, None] & (cols < H)[None, :]
            x = tl.load(X + xo + cols[None, :], mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
            if HAS_RES:
                u = tl.load(RES + ro + cols[None, :], mask=mask, other=0.0, eviction_policy="evict_last")
                h = to_bf16(x + u.to(tl.float32), EXACT)
                tl.store(HNEW + oo + cols[None, :], h, mask=mask)
                x = h.to(tl.float32)
            acc += x * x
        rstd = rstd_of_sumsq(tl.sum(acc, axis=1), H_f, eps)
        tl.store(RSTD + rows, rstd, mask=rmask)
        for c0 in range(0, H, CHUNK):
            cols = c0 + base
            cmask = cols < H
            mask = rmask[:, None] & cmask[None, :]
            x = tl.load(X + xo + cols[None, :], mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
            if HAS_RES:
                u = tl.load(RES + ro + cols[None, :], mask=mask, other=0.0, eviction_policy="evict_first")
                x = to_bf16(x + u.to(tl.float32), EXACT).to(tl.float32)
            # The weight as a tile of the rows' shape: loaded in their layout (see `.wt` above).
            w = tl.load(tl.broadcast_to(W + cols[None, :], [ROWS, CHUNK]), mask=cmask[None, :], other=0.0,
                        eviction_policy="evict_last").to(tl.float32)
            tl.store(Y + oo + cols[None, :], to_bf16((x * rstd[:, None]) * w, EXACT), mask=mask)


# H as a compile-time constant (`static_h`, names ending `.hs`): `rmsnorm_fwd_looped_kernel` with the
# chunk loops unrolled over H_C columns and, with one row per tile (the grid never gives a program a
# row past the end) and H_C a multiple of the chunk, every load and store unmasked. compile_check for
# sm_90a (H 8192, FP32 weight, CHUNK 2048, 16 warps): torch.compile's kernel, which has H and T as
# constants, is 256 SASS instructions; `rmsnorm_fwd_looped_kernel` 712 (93 IMAD, 37 ISETP, 36 BRA
# against 8, 1, 6): the loop control and masks of runtime bounds. One build per H, as the op already
# builds one per weight dtype and residual.


@triton.jit
def _chunk_load(ptrs, mask, MASKED: tl.constexpr, POLICY: tl.constexpr):
    """A chunk's load, masked (masked-off lanes read 0) or, where every lane is in bounds, not."""
    if MASKED:
        return tl.load(ptrs, mask=mask, other=0.0, eviction_policy=POLICY)
    else:
        return tl.load(ptrs, eviction_policy=POLICY)


@triton.jit
def _chunk_store(ptrs, value, mask, MASKED: tl.constexpr):
    if MASKED:
        tl.store(ptrs, value, mask=mask)
    else:
        tl.store(ptrs, value)


@triton.jit
def _looped_static_tile(X, RES, W, Y, RSTD, HNEW, blk, n_rows, NH, H_f, eps, sxt, sxh, srt, srh,
                        CHUNK: tl.constexpr, ROWS: tl.constexpr, HAS_RES: tl.constexpr, EXACT: tl.constexpr,
                        H_C: tl.constexpr):
    """One tile of ROWS rows of exactly H_C columns, in two passes over CHUNK-column chunks. With one
    row per tile the row is always in bounds (the grid gives no program a block past the end), so
    with H_C a multiple of CHUNK nothing is masked."""
    MASKED: tl.constexpr = ROWS > 1 or H_C % CHUNK != 0
    base = tl.arange(0, CHUNK)
    rows = tl.arange(0, ROWS).to(tl.int64) + blk * ROWS
    rmask = rows < n_rows
    xo = row_offsets(rows, NH, sxt, sxh)[:, None]
    ro = xo
    if HAS_RES:
        ro = row_offsets(rows, NH, srt, srh)[:, None]
    oo = rows[:, None] * H_C
    acc = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
    for c0 in tl.static_range(0, H_C, CHUNK):
        cols = c0 + base
        mask = rmask[:, None] & (cols < H_C)[None, :]
        x = _chunk_load(X + xo + cols[None, :], mask, MASKED, "evict_last").to(tl.float32)
        if HAS_RES:
            u = _chunk_load(RES + ro + cols[None, :], mask, MASKED, "evict_last")
            h = to_bf16(x + u.to(tl.float32), EXACT)
            _chunk_store(HNEW + oo + cols[None, :], h, mask, MASKED)
            x = h.to(tl.float32)
        acc += x * x
    rstd = rstd_of_sumsq(tl.sum(acc, axis=1), H_f, eps)
    tl.store(RSTD + rows, rstd, mask=rmask)
    for c0 in tl.static_range(0, H_C, CHUNK):
        cols = c0 + base
        cmask = cols < H_C
        mask = rmask[:, None] & cmask[None, :]
        x = _chunk_load(X + xo + cols[None, :], mask, MASKED, "evict_first").to(tl.float32)
        if HAS_RES:
            u = _chunk_load(RES + ro + cols[None, :], mask, MASKED, "evict_first")
            x = to_bf16(x + u.to(tl.float32), EXACT).to(tl.float32)
        w = _chunk_load(tl.broadcast_to(W + cols[None, :], [ROWS, CHUNK]), tl.broadcast_to(cmask[None, :], [ROWS, CHUNK]),
                        MASKED, "evict_last").to(tl.float32)
        _chunk_store(Y + oo + cols[None, :], to_bf16((x * rstd[:, None]) * w, EXACT), mask, MASKED)


@triton.jit
def rmsnorm_fwd_looped_static_kernel(
    X, RES, W, Y, RSTD, HNEW,
    n_rows, NH, H, H_f, eps,
    sxt, sxh, srt, srh,
    CHUNK: tl.constexpr, ROWS: tl.constexpr, HAS_RES: tl.constexpr, EXACT: tl.constexpr, H_C: tl.constexpr,
    ROW_GRID: tl.constexpr,
):
    """`rmsnorm_fwd_looped_kernel` compiled for rows of exactly H_C columns (H == H_C at launch); with
    ROW_GRID (one program per row block) no loop over blocks."""
    pid = tl.program_id(0)
    if ROW_GRID:
        _looped_static_tile(X, RES, W, Y, RSTD, HNEW, pid, n_rows, NH, H_f, eps, sxt, sxh, srt, srh,
                            CHUNK, ROWS, HAS_RES, EXACT, H_C)
    else:
        for blk in range(pid, tl.cdiv(n_rows, ROWS), tl.num_programs(0)):
            _looped_static_tile(X, RES, W, Y, RSTD, HNEW, blk, n_rows, NH, H_f, eps, sxt, sxh, srt, srh,
                                CHUNK, ROWS, HAS_RES, EXACT, H_C)


# One row per program with H compiled in (`static_h` without a chunk, names `row.r1.w{N}.hs`): the row
# held in registers as a 1-D tile, read once. compile_check for sm_90a at H 8192, FP32 weight (session
# 14), SASS instructions on a row's path (up to the first unconditional EXIT; after it, the slow paths
# of the IEEE division and square root): this kernel with 16 warps 216, Liger's one-row kernel 252,
# `row.r1.w16.wt` (2-D [1, BLOCK_H] tile, runtime H) 245, `row.r1.w16.c8192.hs` 255.
@triton.jit
def rmsnorm_fwd_row_static_kernel(
    X, RES, W, Y, RSTD, HNEW,
    n_rows, NH, H, H_f, eps,
    sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, HAS_RES: tl.constexpr, EXACT: tl.constexpr, H_C: tl.constexpr,
):
    """The forward of one row of exactly H_C columns (H == H_C at launch) per program (grid: n_rows),
    a [BLOCK_H] tile, BLOCK_H = next_pow2(H_C); unmasked when H_C is a power of two."""
    MASKED: tl.constexpr = BLOCK_H != H_C
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H_C
    x = _chunk_load(X + row_offsets(row, NH, sxt, sxh) + cols, cmask, MASKED, "").to(tl.float32)
    w = _chunk_load(W + cols, cmask, MASKED, "evict_last").to(tl.float32)
    out = row * H_C + cols
    if HAS_RES:
        u = _chunk_load(RES + row_offsets(row, NH, srt, srh) + cols, cmask, MASKED, "")
        h = to_bf16(x + u.to(tl.float32), EXACT)
        _chunk_store(HNEW + out, h, cmask, MASKED)
        x = h.to(tl.float32)
    rstd = rstd_of_sumsq(tl.sum(x * x, axis=0), H_f, eps)
    tl.store(RSTD + row, rstd)
    _chunk_store(Y + out, to_bf16((x * rstd) * w, EXACT), cmask, MASKED)


# `.fs` (fast statistics, registry.LaunchPolicy `stats`): the one-row `.hs` forward with rstd from
# `rstd_fast` instead of `rstd_of_sumsq`. A kernel of its own rather than a constexpr in the one above,
# so that the shipped `.hs` programs' source, fingerprints and measured evidence stay as they are.
@triton.jit
def rmsnorm_fwd_row_static_fast_kernel(
    X, RES, W, Y, RSTD, HNEW,
    n_rows, NH, H, H_f, eps,
    sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, HAS_RES: tl.constexpr, EXACT: tl.constexpr, H_C: tl.constexpr,
):
    """`rmsnorm_fwd_row_static_kernel` with rstd = rsqrt.approx(sum(x^2) * (1/H) + eps)."""
    MASKED: tl.constexpr = BLOCK_H != H_C
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H_C
    x = _chunk_load(X + row_offsets(row, NH, sxt, sxh) + cols, cmask, MASKED, "").to(tl.float32)
    w = _chunk_load(W + cols, cmask, MASKED, "evict_last").to(tl.float32)
    out = row * H_C + cols
    if HAS_RES:
        u = _chunk_load(RES + row_offsets(row, NH, srt, srh) + cols, cmask, MASKED, "")
        h = to_bf16(x + u.to(tl.float32), EXACT)
        _chunk_store(HNEW + out, h, cmask, MASKED)
        x = h.to(tl.float32)
    rstd = rstd_fast(tl.sum(x * x, axis=0), H_C, eps)
    tl.store(RSTD + row, rstd)
    _chunk_store(Y + out, to_bf16((x * rstd) * w, EXACT), cmask, MASKED)
