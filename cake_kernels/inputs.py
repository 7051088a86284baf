"""The three seeded input families of evidence-format.md, shared by tests, selftest and the harness.

- gaussian: x, g ~ N(0, 1); w = 1 + 0.1 N(0, 1).
- same_sign: x = |N(0, 1)| + 0.25, g = |N(0, 1)| + 0.25 (every product positive: the worst case
  for long FP32 running sums).
- outlier_rows: x ~ N(0, 1) with max(1, T // 512) random rows times 64; each row of g is N(0, 1)
  times exp(N(0, 1)).
- residual form: h from the family, u = 0.5 x' (an independent draw of the same family).

Head forms: `heads_strided` is a [T, 24, 256] view of a wider [T, 32 * 256] tensor (the q part of
a fused projection), `heads_contiguous` a contiguous [T, 4, 256]; T counts tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

FAMILIES = ("gaussian", "same_sign", "outlier_rows")
HEADS = {"heads_strided": 24, "heads_contiguous": 4}
STRIDED_WIDTH_HEADS = 32
W_DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


@dataclass
class Inputs:
    x: torch.Tensor  # BF16, in the form's layout
    g: torch.Tensor  # BF16, gradient of y (contiguous, shaped like x)
    w: torch.Tensor
    residual: torch.Tensor | None = None
    g_h_new: torch.Tensor | None = None


# Inputs are drawn in FP32 chunks of this many elements and cast to BF16 chunk by chunk, so a
# [1M, 8192] input never exists in FP32 on the device.
DRAW_CHUNK = 1 << 26


def _draw(family: str, rows: int, H: int, gen: torch.Generator, device) -> tuple[torch.Tensor, torch.Tensor]:
    if family not in FAMILIES:
        raise ValueError(f"family: {family!r} is not one of {FAMILIES}")
    x = torch.empty(rows, H, dtype=torch.bfloat16, device=device)
    g = torch.empty(rows, H, dtype=torch.bfloat16, device=device)
    step = max(1, DRAW_CHUNK // max(H, 1))
    for s in range(0, rows, step):
        e = min(rows, s + step)
        xs = torch.randn(e - s, H, generator=gen, device=device)
        gs = torch.randn(e - s, H, generator=gen, device=device)
        if family == "same_sign":
            xs = xs.abs_() + 0.25
            gs = gs.abs_() + 0.25
        elif family == "outlier_rows":
            gs *= torch.exp(torch.randn(e - s, 1, generator=gen, device=device))
        x[s:e] = xs
        g[s:e] = gs
    if family == "outlier_rows" and rows:
        k = max(1, rows // 512)
        idx = torch.randperm(rows, generator=gen, device=device)[:k]
        x[idx] *= 64.0  # a power of two: exact in BF16
    return x, g


def make_inputs(family: str, T: int, H: int, w_dtype: str = "fp32", form: str = "plain", seed: int = 0, device="cpu") -> Inputs:
    """Seeded inputs of one family for one workload (generated on `device`)."""
    if w_dtype not in W_DTYPES:
        raise ValueError(f"w_dtype: {w_dtype!r} is not one of {tuple(W_DTYPES)}")
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))
    if form in HEADS:
        if H != 256:
            raise ValueError(f"H: head forms use H = 256, got {H}")
        nh = HEADS[form]
        x, g = _draw(family, T * nh, H, gen, device)
        if form == "heads_strided":
            wide = torch.empty(T, STRIDED_WIDTH_HEADS * H, dtype=torch.bfloat16, device=device)
            wide.normal_(generator=gen)
            wide[:, : nh * H] = x.reshape(T, nh * H)
            xv = wide[:, : nh * H].view(T, nh, H)
        else:
            xv = x.reshape(T, nh, H)
        gv = g.reshape(T, nh, H)
    else:
        xv, gv = _draw(family, T, H, gen, device)
    w = (1.0 + 0.1 * torch.randn(H, generator=gen, device=device)).to(W_DTYPES[w_dtype])
    inp = Inputs(xv, gv, w)
    if form == "residual":
        u, gh = _draw(family, T, H, gen, device)
        inp.residual = u.mul_(0.5)  # exact in BF16
        inp.g_h_new = gh
    return inp
