"""The PyTorch reference program (any device) and the FP64 oracle.

The reference program is what the op runs without CUDA; it follows the contract math exactly:
FP32 statistics, `rstd = (mean(x^2) + eps)^-1/2`, `y = BF16((x * rstd) * w)`,
`dx = BF16(rstd * (g*w) - x * rstd^3 * mean(g*w*x))`, `dw = sum_rows g * x * rstd` (FP32).

The oracle computes dw, dx and y in FP64 from the same BF16 inputs and the rstd the forward
returned, chunked over rows so an FP64 copy of a [1M, 8192] input is never materialized.
"""

from __future__ import annotations

import torch

# Rows per chunk of the FP64 oracle: bounds its temporaries to a few hundred MB at H = 16384.
ORACLE_CHUNK_ELEMS = 1 << 24


def as_rows(t: torch.Tensor) -> torch.Tensor:
    """[..., H] -> [rows, H] (a view where possible, else one copy)."""
    return t.reshape(-1, t.shape[-1])


def reference_forward(x: torch.Tensor, weight: torch.Tensor, eps: float, residual: torch.Tensor | None = None):
    """Returns (y, rstd, h_new or None); same semantics as every forward program.

    Rows are independent, so the FP32 work runs in row chunks: a [1M, 8192] input never has an
    FP32 copy on the device.
    """
    h_new = None
    if residual is not None:
        h_new = (x.float() + residual.float()).to(torch.bfloat16)
        x = h_new
    xr = as_rows(x)
    rows, H = xr.shape
    w = weight.float()[None, :]
    y = torch.empty((rows, H), dtype=torch.bfloat16, device=x.device)
    rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
    step = max(1, ORACLE_CHUNK_ELEMS // max(H, 1))
    for s in range(0, rows, step):
        xf = xr[s:s + step].float()
        r = 1.0 / torch.sqrt((xf * xf).sum(dim=1) / H + eps)
        rstd[s:s + step] = r
        y[s:s + step] = (xf * r[:, None]) * w
    return y.reshape(x.shape), rstd.reshape(x.shape[:-1]), h_new


def reference_backward(g, x, weight, rstd, g_h_new=None):
    """Returns (dx BF16 shaped like x, dw FP32 [H]). `x` is the normalized input (h_new for residual)."""
    H = x.shape[-1]
    gf = as_rows(g).float()
    xf = as_rows(x).float()
    r = rstd.reshape(-1).float()[:, None]
    gw = gf * weight.float()[None, :]
    c = (gw * xf).sum(dim=1, keepdim=True) / H
    dx = r * gw - xf * (r * r * r) * c
    if g_h_new is not None:
        dx = dx + as_rows(g_h_new).float()
    dw = (gf * (xf * r)).sum(dim=0)
    return dx.to(torch.bfloat16).reshape(x.shape), dw


def eager_fp32_dw(g, x, rstd) -> torch.Tensor:
    """The plain FP32 eager dw of ROUTING-POLICY.md section 2 (the eager-reference rule's yardstick).

    Same values as `(g.float() * (x.float() * rstd[:, None])).sum(0)`: the products are formed in
    place in one FP32 buffer (elementwise IEEE operations, so identical), then the same torch
    reduction runs; this keeps [1M, 8192] inputs inside the GPU's memory. The FP32 buffer is filled
    from x directly: `as_rows(x)` of a strided head view would first copy x in BF16 (T x 24 x 256 x 2
    bytes, 12 GiB at T 1M, which an 80 GB H100 did not have beside the FP32 buffer).
    """
    a = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    a.copy_(x)
    a = as_rows(a)
    a.mul_(rstd.reshape(-1, 1).float())
    a.mul_(as_rows(g))
    return a.sum(0)


def oracle(g, x, weight, rstd, eps: float | None = None, g_h_new=None, *, want_dx: bool = True):
    """FP64 references: dict with dw64 [H], and (when asked) dx64 and y64/rstd64 chunk-free summaries.

    dw64 uses the rstd the forward returned (ROUTING-POLICY.md section 2). dx64 uses it too so
    that dx is judged on the backward's own arithmetic. With `eps`, rstd64 is also computed from x.
    """
    gr, xr = as_rows(g), as_rows(x)
    rows, H = xr.shape
    r = rstd.reshape(-1)
    w64 = weight.double()
    dw64 = torch.zeros(H, dtype=torch.float64, device=x.device)
    dx64 = torch.empty((rows, H), dtype=torch.float64, device=x.device) if want_dx else None
    rstd64 = torch.empty(rows, dtype=torch.float64, device=x.device) if eps is not None else None
    step = max(1, ORACLE_CHUNK_ELEMS // max(H, 1))
    for s in range(0, rows, step):
        e = min(rows, s + step)
        g64 = gr[s:e].double()
        x64 = xr[s:e].double()
        r64 = r[s:e].double()[:, None]
        dw64 += (g64 * x64 * r64).sum(0)
        if want_dx:
            gw = g64 * w64[None, :]
            c = (gw * x64).sum(1, keepdim=True) / H
            d = r64 * gw - x64 * r64**3 * c
            if g_h_new is not None:
                d = d + as_rows(g_h_new)[s:e].double()
            dx64[s:e] = d
        if rstd64 is not None:
            rstd64[s:e] = 1.0 / torch.sqrt((x64 * x64).mean(1) + eps)
    out = {"dw64": dw64}
    if want_dx:
        out["dx64"] = dx64
    if rstd64 is not None:
        out["rstd64"] = rstd64
    return out


def dw_err_over_tol(dw: torch.Tensor, dw64: torch.Tensor, atol: float = 1e-4, rtol: float = 1e-4) -> torch.Tensor:
    """Per-element err/tol of ROUTING-POLICY.md section 2 (FP64 tensor); NaN stays NaN (never passes)."""
    return (dw.double() - dw64).abs() / (atol + rtol * dw64.abs())


def dx_err_over_tol(dx: torch.Tensor, dx64: torch.Tensor, atol: float = 1e-2, rtol: float = 1e-2) -> float:
    e = (dx.reshape(dx64.shape).double() - dx64).abs() / (atol + rtol * dx64.abs())
    return float(e.max()) if e.numel() else 0.0


def max_errs_over_tol_chunked(outs: list[torch.Tensor], ref_rows_fn, H: int, atol: float = 1e-2,
                              rtol: float = 1e-2) -> list[float]:
    """For each output, max |out - ref| / (atol + rtol |ref|) over rows; the FP64 reference is made
    chunk by chunk, once per chunk for all outputs (the reference costs more than the comparison).

    `ref_rows_fn(s, e)` returns the FP64 reference of rows [s, e). NaN in an output gives NaN for it.
    """
    os_ = [o.reshape(-1, H) for o in outs]
    worst = [0.0] * len(os_)
    if not os_:
        return worst
    rows = os_[0].shape[0]
    step = max(1, ORACLE_CHUNK_ELEMS // max(H, 1))
    for s in range(0, rows, step):
        e = min(rows, s + step)
        ref = ref_rows_fn(s, e)
        tol = atol + rtol * ref.abs()
        for k, o in enumerate(os_):
            if worst[k] != worst[k]:
                continue  # already NaN
            err = ((o[s:e].double() - ref).abs() / tol).max()
            worst[k] = max(worst[k], float(err)) if not torch.isnan(err) else float("nan")
    return worst


def max_err_over_tol_chunked(out: torch.Tensor, ref_rows_fn, H: int, atol: float = 1e-2, rtol: float = 1e-2) -> float:
    """max |out - ref| / (atol + rtol |ref|) over rows, with the FP64 reference made chunk by chunk."""
    return max_errs_over_tol_chunked([out], ref_rows_fn, H, atol, rtol)[0]


def dx_err_over_tol_chunked(dx, g, x, weight, rstd, g_h_new=None) -> float:
    """Worst dx err/tol against FP64 (using the forward's rstd), without an FP64 copy of dx."""
    return dx_errs_over_tol_chunked([dx], g, x, weight, rstd, g_h_new)[0]


def dx_errs_over_tol_chunked(dxs, g, x, weight, rstd, g_h_new=None) -> list[float]:
    """`dx_err_over_tol_chunked` for several dx of the same input, the FP64 reference made once."""
    H = x.shape[-1]
    gr, xr, r = as_rows(g), as_rows(x), rstd.reshape(-1)
    w64 = weight.double()

    def ref(s, e):
        g64, x64, r64 = gr[s:e].double(), xr[s:e].double(), r[s:e].double()[:, None]
        gw = g64 * w64[None, :]
        c = (gw * x64).sum(1, keepdim=True) / H
        d = r64 * gw - x64 * r64**3 * c
        if g_h_new is not None:
            d = d + as_rows(g_h_new)[s:e].double()
        return d

    return max_errs_over_tol_chunked(list(dxs), ref, H)


def y_err_over_tol_chunked(y, x, weight, rstd64) -> float:
    """Worst y err/tol against FP64 y = x * rstd64 * w."""
    H = x.shape[-1]
    xr, w64 = as_rows(x), weight.double()
    return max_err_over_tol_chunked(y, lambda s, e: xr[s:e].double() * rstd64[s:e, None] * w64[None, :], H)
