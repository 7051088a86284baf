"""Shared checks for kernel tests: run a program with poisoned outputs, compare with FP64."""

from __future__ import annotations

import contextlib
from typing import NamedTuple

import torch

from cake_kernels import runner
from cake_kernels.inputs import make_inputs
from cake_kernels.reference import dw_err_over_tol, oracle, reference_forward

NAN_BF16 = float("nan")


def poisoned(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype)


def run_forward_checked(prog, inp, eps=1e-6):
    x, w, res = inp.x, inp.w, inp.residual
    y = poisoned(x.shape, torch.bfloat16)
    rstd = poisoned(x.shape[:-1], torch.float32)
    h = poisoned(x.shape, torch.bfloat16) if res is not None else None
    y, rstd, h = runner.forward(prog, x, w, eps, res, y_out=y, rstd_out=rstd, h_out=h)
    xn = x
    if res is not None:
        h_ref = (x.float() + res.float()).to(torch.bfloat16)
        assert torch.equal(h, h_ref), "h_new must be BF16(x + residual) exactly"
        xn = h_ref
    x64 = xn.reshape(-1, xn.shape[-1]).double()
    rstd64 = 1.0 / torch.sqrt((x64 * x64).mean(1) + eps) if x64.numel() else torch.zeros(0, dtype=torch.float64)
    y64 = x64 * rstd64[:, None] * w.double()[None, :]
    assert not torch.isnan(rstd).any() and not torch.isnan(y.float()).any(), "unwritten output element"
    if rstd64.numel():
        rel = torch.linalg.norm(rstd.reshape(-1).double() - rstd64) / torch.linalg.norm(rstd64)
        assert rel <= 1e-5, f"rstd rel L2 {rel}"
        ye = ((y.reshape(y64.shape).double() - y64).abs() / (1e-2 + 1e-2 * y64.abs())).max()
        assert ye <= 1, f"y err/tol {ye}"
    return y, rstd, h


def run_backward_checked(prog, inp, eps=1e-6, budget=1.0, workspace=None):
    """Runs `prog` on the inputs (forward by the reference), returns (dx, dw, worst dw err/tol)."""
    x, w, res = inp.x, inp.w, inp.residual
    _, rstd, h = reference_forward(x, w, eps, res)
    xn = h if res is not None else x
    dx = poisoned(x.shape, torch.bfloat16)
    dw = poisoned((x.shape[-1],), torch.float32)
    dx, dw = runner.backward(prog, inp.g, xn, w, rstd, inp.g_h_new, workspace, dx_out=dx, dw_out=dw)
    o = oracle(inp.g, xn, w, rstd, g_h_new=inp.g_h_new)
    assert not torch.isnan(dw).any(), "dw has NaN (unwritten or broken compensation)"
    assert not torch.isnan(dx.float()).any(), "dx has an unwritten element"
    worst = float(dw_err_over_tol(dw, o["dw64"]).max()) if dw.numel() else 0.0
    assert worst <= budget, f"{getattr(prog, 'name', prog)}: dw err/tol {worst} > {budget}"
    if dx.numel():
        dxe = ((dx.reshape(o["dx64"].shape).double() - o["dx64"]).abs() / (1e-2 + 1e-2 * o["dx64"].abs())).max()
        assert dxe <= 1, f"dx err/tol {dxe}"
    return dx, dw, worst


def inputs(family, T, H, w_dtype="fp32", form="plain", seed=0):
    return make_inputs(family, T, H, w_dtype, form, seed)


class Launch(NamedTuple):
    """One recorded kernel launch: kernel name, grid (evaluated), positional arguments, compile-time
    arguments, warps and stages."""

    kernel: str
    grid: tuple
    args: tuple
    meta: dict
    warps: int | None
    stages: int | None


class _Recorder:
    def __init__(self, name: str, log: list):
        self.name, self.log = name, log
        self.__name__ = name  # compile_check.kernels_of reads the (patched) module attributes too

    def __getitem__(self, grid):
        def launch(*args, num_warps=None, num_stages=None, **meta):
            g = grid(meta) if callable(grid) else grid
            self.log.append(Launch(self.name, tuple(g), args, meta, num_warps, num_stages))
        return launch


@contextlib.contextmanager
def recorded_launches(log: list):
    """Within it, every jit kernel of the program modules is a recorder that appends a `Launch` to
    `log` instead of running; the kernels are put back on exit."""
    from cake_kernels.programs import backward as bk
    from cake_kernels.programs import forward as fw

    saved = []
    try:
        for module in (bk, fw):
            for name, value in list(vars(module).items()):
                if name.endswith("_kernel") and hasattr(value, "arg_names"):
                    saved.append((module, name, value))
                    setattr(module, name, _Recorder(name, log))
        yield log
    finally:
        for module, name, value in saved:
            setattr(module, name, value)
