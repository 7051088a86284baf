"""Determinism (det programs bitwise equal run to run, also with a NaN-poisoned workspace) and
overflow safety (same-sign inputs with products near 1e37: compensated programs return finite dw)."""

from __future__ import annotations

import pytest
import torch

from cake_kernels import registry, runner
from cake_kernels.reference import dw_err_over_tol, oracle, reference_forward
from tests.cake_kernels.helpers import inputs
from tests.cake_kernels.interpreter_twins import Case, Thinned


def _det_h(program) -> int:
    return 296 if program.H_max >= 296 else 248  # multiples of 8: the `.tma` programs read in place


# Under the interpreter, the kernels of one program per class of interpreter twins on the shapes
# each test uses run (tests/cake_kernels/interpreter_twins.py); on a GPU, every program's.
DET_TRITON = Thinned(
    [p.name for p in registry.all_programs() if p.op == "bwd" and p.deterministic and p.launch.grid != "reference"],
    lambda p: [Case(97, _det_h(p), "bf16")])
COMPENSATED = Thinned(
    [p.name for p in registry.all_programs() if p.family in ("twosum", "twosum_pair")],
    [Case(16, 64, "fp32"), Case(700, 8, "fp32")])


@pytest.mark.interpreter
@pytest.mark.parametrize("name", DET_TRITON.names)
def test_det_programs_are_bitwise_reproducible_with_a_poisoned_workspace(name):
    DET_TRITON.run_kernels(name)
    H = _det_h(registry.get(name))
    inp = inputs("outlier_rows", 97, H, "bf16", seed=5)
    _, rstd, _ = reference_forward(inp.x, inp.w, 1e-6)
    ws = runner.workspace_for(name, inp.x)
    dx1, dw1 = runner.backward(name, inp.g, inp.x, inp.w, rstd, None, ws)
    dw1 = dw1.clone()
    if ws.partials is not None:
        ws.partials.fill_(float("nan"))  # every partial must be rewritten before it is read
    dx2, dw2 = runner.backward(name, inp.g, inp.x, inp.w, rstd, None, ws)
    assert torch.equal(dw1, dw2) and torch.equal(dx1, dx2)
    assert torch.isfinite(dw2).all()
    if ws.counter is not None:
        assert int(ws.counter[0].item()) == 0  # the single-launch arrival count reset itself


@pytest.mark.interpreter
@pytest.mark.parametrize("name", COMPENSATED.names)
def test_compensated_programs_stay_finite_with_products_near_1e37(name):
    COMPENSATED.run_kernels(name)
    # Same-sign rows whose x * rstd is ~1 and g ~ 1e37: every product g * x * rstd is ~1e37, so 16
    # rows sum to ~1.6e38, half the FP32 maximum (g * x alone would be fine too: BF16 products are
    # exact). A compensated sum whose running sum or residual overflowed would turn inf - inf into NaN.
    T, H = 16, 64
    gen = torch.Generator().manual_seed(0)
    x = (torch.rand(T, H, generator=gen) + 0.5).to(torch.bfloat16)
    g = ((torch.rand(T, H, generator=gen) + 0.5) * 1e37).to(torch.bfloat16)
    w = torch.ones(H)
    _, rstd, _ = reference_forward(x, w, 1e-6)
    _, dw = runner.backward(name, g, x, w, rstd)
    assert torch.isfinite(dw).all(), f"{name}: dw not finite: {dw}"
    dw64 = oracle(g, x, w, rstd, want_dx=False)["dw64"]
    assert float(dw_err_over_tol(dw, dw64).max()) <= 1.0


@pytest.mark.interpreter
@pytest.mark.parametrize("name", COMPENSATED.names)
def test_long_same_sign_runs_fold_before_overflow(name):
    COMPENSATED.run_kernels(name)
    # More rows than the fold period (256) with large same-sign products: the FP64 fold keeps the
    # FP32 (sum, compensation) pair bounded, so the total stays finite and in budget.
    T, H = 700, 8
    gen = torch.Generator().manual_seed(1)
    x = (torch.rand(T, H, generator=gen) + 0.5).to(torch.bfloat16)
    g = ((torch.rand(T, H, generator=gen) + 0.5) * 4e35).to(torch.bfloat16)
    w = torch.ones(H)
    _, rstd, _ = reference_forward(x, w, 1e-6)
    _, dw = runner.backward(name, g, x, w, rstd)
    dw64 = oracle(g, x, w, rstd, want_dx=False)["dw64"]
    assert torch.isfinite(dw).all()
    assert float(dw_err_over_tol(dw, dw64).max()) <= 1.0


TILED_COMPENSATED = Thinned(
    [p.name for p in registry.all_programs() if p.family in ("twosum", "twosum_pair") and p.launch.rows > 1],
    [Case(512, 16, "fp32")])


@pytest.mark.interpreter
@pytest.mark.parametrize("name", TILED_COMPENSATED.names)
def test_twosum_tiles_lose_nothing_where_a_plain_tile_sum_would(name):
    TILED_COMPENSATED.run_kernels(name)
    # Rows alternate M, 1, -M, 1, ... (M = 2^25, rstd = 1, g = 1): a two-row tile summed in plain FP32
    # gives M + 1 = M (the 1 is below half an ulp of M), so the plain tiled program loses every 1
    # while the TwoSum tree keeps it: dw = T / 2 exactly.
    T, H, M = 512, 16, float(2 ** 25)
    col = torch.tensor([M, 1.0, -M, 1.0]).repeat(T // 4)
    x = col[:, None].expand(T, H).contiguous().to(torch.bfloat16)
    g = torch.ones(T, H, dtype=torch.bfloat16)
    rstd = torch.ones(T)
    w = torch.ones(H)
    _, dw = runner.backward(name, g, x, w, rstd)
    assert torch.equal(dw, torch.full((H,), T / 2)), f"{name}: {dw[:4]}"
    # The same input through the plain tiled program shows the test can fail.
    _, dw_plain = runner.backward("bwd.pair.p2x.r2.w8", g, x, w, rstd)
    assert not torch.equal(dw_plain, torch.full((H,), T / 2))


F64 = Thinned([p.name for p in registry.all_programs() if p.family in ("f64_pair", "f64")], [Case(16, 64, "fp32")])


@pytest.mark.interpreter
@pytest.mark.parametrize("name", F64.names)
def test_fp64_sum_programs_stay_finite_where_g_times_x_passes_fp32(name):
    """`f64_pair` / `f64` programs scale x by rstd's power of two before the FP32 product: rows of
    x ~ 1e9 (rstd ~ 1e-9) and g ~ 1e31 have g * x ~ 1e40, past FP32's range, while every term
    g * x * rstd is ~1e31. dw is finite and the exact sum rounded once; g * x itself would be inf."""
    F64.run_kernels(name)
    T, H = 16, 64
    gen = torch.Generator().manual_seed(2)
    x = ((torch.rand(T, H, generator=gen) + 0.5) * 1e9).to(torch.bfloat16)
    g = ((torch.rand(T, H, generator=gen) + 0.5) * 1e31).to(torch.bfloat16)
    w = torch.ones(H)
    _, rstd, _ = reference_forward(x, w, 1e-6)
    assert torch.isinf(g.float() * x.float()).all()  # the test can fail: the plain FP32 product overflows
    _, dw = runner.backward(name, g, x, w, rstd)
    want = oracle(g, x, w, rstd, want_dx=False)["dw64"].float()
    assert torch.isfinite(dw).all() and torch.equal(dw, want), f"{name}: {dw[:4]} against {want[:4]}"
