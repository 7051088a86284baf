"""The fused FP64 oracle (cake_kernels.reference_fp64) against the torch oracle (cake_kernels.reference):
same dw64, rstd64 and worst dx err/tol on every form, odd shapes, H past one column step, a residual
gradient, and non-finite dx. Runs the Triton kernels in the interpreter on CPU."""

from __future__ import annotations

import pytest
import torch

from cake_kernels import reference_fp64, runner
from cake_kernels.inputs import make_inputs
from cake_kernels.reference import dx_errs_over_tol_chunked, oracle, reference_forward

EPS = 1e-6
CASES = [  # (family, T, H, form, w_dtype)
    ("gaussian", 1, 7, "plain", "fp32"),
    ("same_sign", 67, 130, "plain", "bf16"),
    ("outlier_rows", 45, 1500, "plain", "fp32"),  # H past the 1024-column step of the row kernels
    ("gaussian", 33, 96, "residual", "bf16"),
    ("same_sign", 5, 256, "heads_strided", "fp32"),
    ("outlier_rows", 3, 256, "heads_contiguous", "bf16"),
]


def _setup(fam, T, H, form, wd, seed=11):
    inp = make_inputs(fam, T, H, wd, form, seed, "cpu")
    _, rstd, h = reference_forward(inp.x, inp.w, EPS, inp.residual)
    return inp, (h if h is not None else inp.x), rstd


@pytest.mark.interpreter
@pytest.mark.parametrize("fam, T, H, form, wd", CASES)
def test_fused_oracle_matches_the_torch_oracle(fam, T, H, form, wd):
    inp, xn, rstd = _setup(fam, T, H, form, wd)
    want = oracle(inp.g, xn, inp.w, rstd, eps=EPS, want_dx=False)
    dw64 = reference_fp64.dw64(inp.g, xn, rstd)
    assert dw64.dtype == torch.float64 and dw64.shape == (H,)
    torch.testing.assert_close(dw64, want["dw64"], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(reference_fp64.rstd64(xn, EPS), want["rstd64"], rtol=1e-13, atol=0)
    good, _ = runner.backward("bwd.reference", inp.g, xn, inp.w, rstd, inp.g_h_new)
    off = (good.float() * 1.03).to(torch.bfloat16)  # a dx error near and above the tolerance
    dxs = [good, off]
    got = reference_fp64.dx_errs_over_tol(dxs, inp.g, xn, inp.w, rstd, inp.g_h_new)
    ref = dx_errs_over_tol_chunked(dxs, inp.g, xn, inp.w, rstd, inp.g_h_new)
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-15)
    assert got[1] > got[0]


@pytest.mark.interpreter
def test_non_finite_dx_is_a_breach_not_a_nan():
    inp, xn, rstd = _setup("gaussian", 9, 40, "plain", "fp32")
    dx, _ = runner.backward("bwd.reference", inp.g, xn, inp.w, rstd)
    for bad in (float("nan"), float("inf")):
        d = dx.clone()
        d[4, 17] = bad
        assert reference_fp64.dx_errs_over_tol([d], inp.g, xn, inp.w, rstd) == [reference_fp64.NONFINITE]


def test_empty_rows():
    x = torch.empty(0, 64, dtype=torch.bfloat16)
    r = torch.empty(0)
    assert torch.equal(reference_fp64.dw64(x, x, r), torch.zeros(64, dtype=torch.float64))
    assert reference_fp64.rstd64(x, EPS).numel() == 0
    assert reference_fp64.dx_errs_over_tol([x], x, x, torch.ones(64), r) == [0.0]


@pytest.mark.gpu
@pytest.mark.parametrize("fam, T, H, form, wd", CASES + [("same_sign", 65536, 4096, "plain", "fp32"),
                                                     ("outlier_rows", 4096, 5120, "residual", "bf16")])
def test_fused_oracle_on_the_gpu(fam, T, H, form, wd):
    """The compiled kernels (not the interpreter) against the torch oracle, at sizes the harness meets."""
    inp = make_inputs(fam, T, H, wd, form, 5, "cuda")
    _, rstd, h = reference_forward(inp.x, inp.w, EPS, inp.residual)
    xn = h if h is not None else inp.x
    want = oracle(inp.g, xn, inp.w, rstd, eps=EPS, want_dx=False)
    torch.testing.assert_close(reference_fp64.dw64(inp.g, xn, rstd), want["dw64"], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(reference_fp64.rstd64(xn, EPS), want["rstd64"], rtol=1e-13, atol=0)
    good, _ = runner.backward("bwd.reference", inp.g, xn, inp.w, rstd, inp.g_h_new)
    dxs = [good, (good.float() * 1.03).to(torch.bfloat16)]
    got = reference_fp64.dx_errs_over_tol(dxs, inp.g, xn, inp.w, rstd, inp.g_h_new)
    assert got == pytest.approx(dx_errs_over_tol_chunked(dxs, inp.g, xn, inp.w, rstd, inp.g_h_new), rel=1e-12, abs=1e-15)
