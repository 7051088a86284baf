"""Triton helpers shared by every program: row addressing, exact products, the row gradient.

Row addressing. Every program sees its input as `rows = T * NH` rows of width H, where row
`r = t * NH + h` starts at `t * stride_t + h * stride_h` elements. Plain `[T, H]` rows use NH = 1;
per-head views `[T, nh, 256]` use NH = nh, so a strided slice of a wider tensor (q of a fused qkv,
say) is read in place. Offsets are computed in int64 so T * H >= 2^31 works.

Exact products. Triton contracts a multiply into a following add or subtract (FMA) silently. The
compensated programs need `p = x * y` rounded exactly once so that `fma(x, y, -p)` is its true
rounding error; on the GPU the product is forced through PTX `mul.rn.f32`. Inline PTX does not run
in the CPU interpreter, which never contracts, so there a plain multiply is the same thing.
"""

from __future__ import annotations

import os

import triton
import triton.language as tl


def interpreting() -> bool:
    """True when Triton programs run in the CPU interpreter (TRITON_INTERPRET=1)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


@triton.jit
def mul_rn(a, b, EXACT: tl.constexpr):
    """a * b rounded once (never contracted into a later add)."""
    if EXACT:
        return tl.inline_asm_elementwise(
            "mul.rn.f32 $0, $1, $2;", "=r,r,r", [a, b], dtype=tl.float32, is_pure=True, pack=1
        )
    else:
        return a * b


@triton.jit
def row_offsets(rows, NH, stride_t, stride_h):
    """Element offset of each row's first element (int64)."""
    t = rows // NH
    h = rows - t * NH
    return t * stride_t + h * stride_h


@triton.jit
def rstd_of(x, H_f, eps):
    """FP32 statistics with IEEE division and square root (no approximate rsqrt)."""
    return rstd_of_sumsq(tl.sum(x * x, axis=1), H_f, eps)


@triton.jit
def rstd_of_sumsq(ss, H_f, eps):
    """rstd from a row's FP32 sum of squares (`rstd_of` for rows held as more than one tile)."""
    ms = tl.div_rn(ss, H_f)
    return tl.div_rn(tl.full(ms.shape, 1.0, tl.float32), tl.sqrt_rn(ms + eps))


@triton.jit
def rstd_fast(ss, H_C: tl.constexpr, eps):
    """rstd from a row's FP32 sum of squares with H a compile-time constant: the mean as a product by
    1/H (a constant) and `rsqrt.approx.f32` (relative error below 2^-22.9, PTX ISA), for the `.fs`
    programs. The contract asks for rstd within 1e-5 relative L2 of FP64 (ROUTING-POLICY.md); what
    this buys is latency: `rstd_of_sumsq`'s two IEEE divisions and square root are three dependent
    refinement sequences on a one-row forward's critical path (sm_90a SASS of `row.r1.w4.hs` at
    H 512: 272 instructions with their slow paths, 104 with this)."""
    return tl.math.rsqrt(ss * (1.0 / H_C) + eps)


@triton.jit
def row_grad(g, x, w, rstd, H_f):
    """dx (FP32) of a tile of rows: rstd * (g*w) - x * rstd^3 * mean(g*w*x)."""
    gw = g * w[None, :]
    c = tl.div_rn(tl.sum(gw * x, axis=1), H_f)
    r = rstd[:, None]
    return r * gw - x * ((r * r * r) * c[:, None])


@triton.jit
def to_bf16(x, EXACT: tl.constexpr):
    """FP32 -> BF16 rounded to nearest even.

    On the GPU a plain cast is RNE. The CPU interpreter (Triton 3.9) truncates instead, which
    would make h_new = BF16(x + residual) differ from the GPU, so there the rounding is done on
    the bits (NaN and inf survive it).
    """
    if EXACT:
        return x.to(tl.bfloat16)
    else:
        b = x.to(tl.uint32, bitcast=True)
        b = b + (((b >> 16) & 1) + 0x7FFF)
        return (b >> 16).to(tl.uint16).to(tl.bfloat16, bitcast=True)
