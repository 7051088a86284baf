"""The FP64 oracle as fused Triton kernels: dw64, rstd64 and the worst dx err/tol in single passes.

`reference.oracle` and `reference.dx_errs_over_tol_chunked` build the same FP64 values from torch
ops over row chunks: about ten FP64 temporaries per chunk, each written and read back. At T = 1M,
H = 8192 that is seconds per input, and the accuracy protocol (ROUTING-POLICY.md section 3) wants
360 inputs per (program, key, T). These kernels read each BF16 input once (twice for the dx row
pass, the second read from L2) and keep every FP64 value in registers: the cost per input becomes
that of streaming g and x, a few milliseconds.

Same definitions as the torch oracle (the tests hold the two to 1e-12 relative):
- dw64 = sum over rows of g * x * rstd, in FP64, with the rstd the forward returned;
- rstd64 = 1 / sqrt(mean(x^2) + eps), in FP64 from the BF16 x;
- dx64 = rstd * (g*w) - x * rstd^3 * mean(g*w*x) (+ g_h_new), FP64, with the forward's rstd;
  err/tol = |dx - dx64| / (1e-2 + 1e-2 |dx64|), a NaN or infinite dx counts as `NONFINITE`.

FP64 sums are formed per column block and program (dw) or per row (dx, rstd), then added by torch
in FP64: the result does not depend on scheduling. Inputs are `[rows, H]` row-major (head views are
passed through `reference.as_rows`).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from cake_kernels.reference import as_rows

NONFINITE = 1e30  # a NaN/inf dx: JSON has no inf, and a huge finite err/tol is a breach all the same
_BLOCK_COLS = 128  # dw: columns per program (256 B of BF16 per row segment: whole sectors)
_BLOCK_ROWS = 32  # dw: rows per step of a program's loop
_BLOCK_H = 1024  # row passes: columns per step (H up to 16384 in 16 steps)


@triton.jit
def _dw64_kernel(g_ptr, x_ptr, rstd_ptr, part_ptr, ROWS, H, rows_per_prog,
                 BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pc = tl.program_id(0)
    pr = tl.program_id(1)
    cols = pc * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < H
    acc = tl.zeros([BLOCK_C], dtype=tl.float64)
    r0 = pr * rows_per_prog
    for s in range(0, rows_per_prog, BLOCK_R):
        rows = r0 + s + tl.arange(0, BLOCK_R)
        rmask = (rows < ROWS) & (rows < r0 + rows_per_prog)
        off = rows.to(tl.int64)[:, None] * H + cols[None, :]
        m = rmask[:, None] & cmask[None, :]
        g = tl.load(g_ptr + off, mask=m, other=0.0).to(tl.float64)
        x = tl.load(x_ptr + off, mask=m, other=0.0).to(tl.float64)
        r = tl.load(rstd_ptr + rows, mask=rmask, other=0.0).to(tl.float64)
        acc += tl.sum(g * x * r[:, None], axis=0)
    tl.store(part_ptr + pr.to(tl.int64) * H + cols, acc, mask=cmask)


@triton.jit
def _rstd64_kernel(x_ptr, out_ptr, H, eps, BLOCK_H: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK_H], dtype=tl.float64)
    for s in range(0, H, BLOCK_H):
        cols = s + tl.arange(0, BLOCK_H)
        x = tl.load(x_ptr + row * H + cols, mask=cols < H, other=0.0).to(tl.float64)
        acc += x * x
    ms = tl.sum(acc, axis=0) / H
    tl.store(out_ptr + row, 1.0 / tl.sqrt(ms + eps))


@triton.jit
def _gxw64(g_ptr, x_ptr, w_ptr, base, cols, m):
    """g, x and w of one column step of a row, in FP64 (masked columns read 0)."""
    g = tl.load(g_ptr + base + cols, mask=m, other=0.0).to(tl.float64)
    x = tl.load(x_ptr + base + cols, mask=m, other=0.0).to(tl.float64)
    return g, x, tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float64)


@triton.jit
def _dx_err_kernel(dx_ptr, g_ptr, x_ptr, w_ptr, rstd_ptr, gh_ptr, out_ptr, H, nonfinite,
                   HAS_GH: tl.constexpr, BLOCK_H: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * H
    r = tl.load(rstd_ptr + row).to(tl.float64)
    acc = tl.zeros([BLOCK_H], dtype=tl.float64)
    for s in range(0, H, BLOCK_H):
        cols = s + tl.arange(0, BLOCK_H)
        g, x, w = _gxw64(g_ptr, x_ptr, w_ptr, base, cols, cols < H)
        acc += g * w * x
    c = tl.sum(acc, axis=0) / H
    r3c = r * r * r * c
    worst = tl.zeros([BLOCK_H], dtype=tl.float64)
    for s in range(0, H, BLOCK_H):
        cols = s + tl.arange(0, BLOCK_H)
        m = cols < H
        g, x, w = _gxw64(g_ptr, x_ptr, w_ptr, base, cols, m)
        d = r * (g * w) - x * r3c
        if HAS_GH:
            d += tl.load(gh_ptr + base + cols, mask=m, other=0.0).to(tl.float64)
        dx = tl.load(dx_ptr + base + cols, mask=m, other=0.0).to(tl.float64)
        e = tl.abs(dx - d) / (0.01 + 0.01 * tl.abs(d))
        # NaN compares false and inf is not below the cap: both become the breach value.
        e = tl.where(e < nonfinite, e, nonfinite)
        worst = tl.maximum(worst, tl.where(m, e, 0.0))
    tl.store(out_ptr + row, tl.max(worst, axis=0))


def _rows(t: torch.Tensor) -> torch.Tensor:
    return as_rows(t).contiguous()


def dw64(g: torch.Tensor, x: torch.Tensor, rstd: torch.Tensor) -> torch.Tensor:
    """FP64 dw = sum over rows of g * x * rstd (the forward's FP32 rstd), shape [H]."""
    gr, xr = _rows(g), _rows(x)
    rows, H = xr.shape
    r = rstd.reshape(-1).contiguous()
    col_blocks = triton.cdiv(H, _BLOCK_COLS)
    # About four programs per SM in all; each sums a contiguous row range of its column block.
    if x.is_cuda:
        target = 4 * torch.cuda.get_device_properties(x.device).multi_processor_count
    else:
        target = 4
    row_progs = max(1, min(triton.cdiv(rows, _BLOCK_ROWS), target // col_blocks))
    rows_per_prog = triton.cdiv(triton.cdiv(rows, row_progs), _BLOCK_ROWS) * _BLOCK_ROWS if rows else _BLOCK_ROWS
    row_progs = max(1, triton.cdiv(rows, rows_per_prog))
    part = torch.zeros((row_progs, H), dtype=torch.float64, device=x.device)
    if rows and H:
        _dw64_kernel[(col_blocks, row_progs)](gr, xr, r, part, rows, H, rows_per_prog,
                                              BLOCK_R=_BLOCK_ROWS, BLOCK_C=_BLOCK_COLS)
    return part.sum(0)


def rstd64(x: torch.Tensor, eps: float) -> torch.Tensor:
    """FP64 1 / sqrt(mean(x^2) + eps) per row, shape [rows]."""
    xr = _rows(x)
    rows, H = xr.shape
    out = torch.empty(rows, dtype=torch.float64, device=x.device)
    if rows:
        _rstd64_kernel[(rows,)](xr, out, H, float(eps), BLOCK_H=min(_BLOCK_H, triton.next_power_of_2(max(H, 1))))
    return out


def dx_errs_over_tol(dxs, g, x, weight, rstd, g_h_new=None) -> list[float]:
    """Worst dx err/tol against FP64 for each dx of one input (same contract as
    `reference.dx_errs_over_tol_chunked`, except that a non-finite dx gives `NONFINITE`)."""
    gr, xr = _rows(g), _rows(x)
    rows, H = xr.shape
    r = rstd.reshape(-1).contiguous()
    w = weight.contiguous()
    gh = _rows(g_h_new) if g_h_new is not None else gr
    per_row = torch.empty(rows, dtype=torch.float64, device=x.device)
    out = []
    for dx in dxs:
        if not rows or not H:
            out.append(0.0)
            continue
        _dx_err_kernel[(rows,)](_rows(dx), gr, xr, w, r, gh, per_row, H, NONFINITE,
                                HAS_GH=g_h_new is not None, BLOCK_H=min(_BLOCK_H, triton.next_power_of_2(H)))
        out.append(float(per_row.max()))
    return out
