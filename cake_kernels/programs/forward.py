"""Forward programs: y = BF16((x * rstd) * w) and rstd in FP32, optionally h_new = BF16(x + residual).

One kernel serves two grid rules: `row_blocks` (one program per block of ROWS rows) and
`persistent` (programs_per_sm x SMs programs striding over the row blocks). The tile is
[ROWS, BLOCK_H] with BLOCK_H = next_pow2(H) (masked), so every H from 1 to 16384 is correct.
"""

from __future__ import annotations

import triton
import triton.language as tl

from cake_kernels.programs.common import row_offsets, rstd_of, to_bf16


@triton.jit
def rmsnorm_fwd_kernel(
    X, RES, W, Y, RSTD, HNEW,
    n_rows, NH, H, H_f, eps,
    sxt, sxh, srt, srh,
    BLOCK_H: tl.constexpr, ROWS: tl.constexpr, HAS_RES: tl.constexpr, EXACT: tl.constexpr,
):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
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
        rstd = rstd_of(x, H_f, eps)
        y = (x * rstd[:, None]) * w[None, :]
        tl.store(Y + out, to_bf16(y, EXACT), mask=mask)
        tl.store(RSTD + rows, rstd, mask=rmask)
