"""What tests/conftest.py installs in the Triton interpreter (tests/interpreter_speedups.py) gives, bit
for bit, what the interpreter's own code gives: the slice fold of `tl.reduce` with a combine
function against the element-at-a-time loop, and one `triton.language` patch per launch against a
patch at every helper call."""

from __future__ import annotations

import contextlib
import os

import pytest
import torch
import triton
import triton.language as tl

from cake_kernels.programs.backward import _twosum_combine
from tests import interpreter_speedups

pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET", "0") in ("", "0"),
                                reason="the fold replaces a part of Triton's CPU interpreter (TRITON_INTERPRET=1)")


@triton.jit
def _scaled_add(a, b):
    # Order matters (a / 2 + b): a fold in any other order gives other bits.
    return a * 0.5 + b


@triton.jit
def _pair_reduce_kernel(X, C, S, R_OUT, ROWS: tl.constexpr, COLS: tl.constexpr, AXIS: tl.constexpr):
    r = tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, COLS)[None, :]
    x = tl.load(X + r * COLS + c)
    comp = tl.load(C + r * COLS + c)
    s, res = tl.reduce((x, comp), AXIS, _twosum_combine)
    n = tl.arange(0, COLS if AXIS == 0 else ROWS)
    tl.store(S + n, s)
    tl.store(R_OUT + n, res)


@triton.jit
def _scaled_kernel(X, OUT, ALL, ROWS: tl.constexpr, COLS: tl.constexpr, AXIS: tl.constexpr, KEEP: tl.constexpr):
    r = tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, COLS)[None, :]
    x = tl.load(X + r * COLS + c)
    y = tl.reduce(x, AXIS, _scaled_add, keep_dims=KEEP)
    if KEEP:
        y = tl.reshape(y, [COLS if AXIS == 0 else ROWS])
    tl.store(OUT + tl.arange(0, COLS if AXIS == 0 else ROWS), y)
    tl.store(ALL, tl.reduce(tl.reshape(x, [ROWS * COLS]), None, _scaled_add))


@contextlib.contextmanager
def _upstream():
    """The interpreter as Triton ships it, for the duration."""
    from triton.runtime import interpreter

    fold, patch, call = interpreter.ReduceOps.generic_reduce, interpreter._patch_lang, interpreter.GridExecutor.__call__
    interpreter.ReduceOps.generic_reduce = fold._cake_original
    interpreter._patch_lang = patch._cake_original
    interpreter.GridExecutor.__call__ = call._cake_original
    try:
        yield
    finally:
        interpreter.ReduceOps.generic_reduce, interpreter._patch_lang, interpreter.GridExecutor.__call__ = fold, patch, call


def _both(run):
    from triton.runtime.interpreter import ReduceOps

    fallbacks = ReduceOps.generic_reduce.fallbacks
    got = run()
    assert ReduceOps.generic_reduce.fallbacks == fallbacks  # the slice fold ran, not the original loop
    with _upstream():
        want = run()
    return got, want


def test_both_are_installed_once():
    from triton.runtime import interpreter

    fold, patch = interpreter.ReduceOps.generic_reduce, interpreter._patch_lang
    assert fold._cake_slice_fold and patch._cake_once_per_launch
    assert interpreter_speedups.install()  # a second install keeps the one of each
    assert (interpreter.ReduceOps.generic_reduce, interpreter._patch_lang) == (fold, patch)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_twosum_pairs_bit_for_bit(axis, dtype):
    gen = torch.Generator().manual_seed(axis)
    rows, cols = 8, 32
    # Magnitudes over 40 binades and mixed signs: the TwoSum residuals are far from zero.
    x = (torch.randn(rows, cols, generator=gen) * torch.exp2(torch.randint(-20, 20, (rows, cols), generator=gen).float())).to(dtype)
    comp = (torch.randn(rows, cols, generator=gen) * 1e-9).to(dtype)
    n = cols if axis == 0 else rows

    def run():
        s, r = torch.empty(n, dtype=dtype), torch.empty(n, dtype=dtype)
        _pair_reduce_kernel[(1,)](x, comp, s, r, ROWS=rows, COLS=cols, AXIS=axis)
        return s, r

    (s, r), (s0, r0) = _both(run)
    assert torch.equal(s, s0) and torch.equal(r, r0)
    assert r.abs().max() > 0  # the residuals carry something: the comparison is not of zeros


@pytest.mark.parametrize("axis, keep", [(0, False), (1, False), (0, True), (1, True)])
def test_an_order_sensitive_fold_bit_for_bit(axis, keep):
    gen = torch.Generator().manual_seed(7)
    rows, cols = 4, 16
    x = torch.randn(rows, cols, generator=gen)
    n = cols if axis == 0 else rows

    def run():
        out, total = torch.empty(n), torch.empty(1)
        _scaled_kernel[(1,)](x, out, total, ROWS=rows, COLS=cols, AXIS=axis, KEEP=keep)
        return out, total

    (out, total), (out0, total0) = _both(run)
    assert torch.equal(out, out0) and torch.equal(total, total0)
    # The fold is left to right: the first element is halved rows - 1 times.
    ref = x[0] if axis == 0 else x[:, 0]
    for k in range(1, rows if axis == 0 else cols):
        ref = ref * 0.5 + (x[k] if axis == 0 else x[:, k])
    assert torch.equal(out, ref)


@pytest.mark.parametrize("name", ["bwd.twosum_pair.p8x.r2.w2.fw.pf.wr.xs", "bwd.twosum.p4x.r4.w2.fw.pf.gs.xs.uf8.rw"])
def test_a_compensated_program_bit_for_bit(name):
    # The programs' own tile reduce (`_twosum_combine` over rows of a tile), both ways.
    from cake_kernels import runner
    from cake_kernels.inputs import make_inputs
    from cake_kernels.reference import reference_forward

    from triton.runtime import interpreter

    inp = make_inputs("outlier_rows", 45, 200, "fp32", seed=2)
    _, rstd, _ = reference_forward(inp.x, inp.w, 1e-6)
    skipped = interpreter._patch_lang.skipped
    (dx, dw), (dx0, dw0) = _both(lambda: runner.backward(name, inp.g, inp.x, inp.w, rstd))
    assert interpreter._patch_lang.skipped > skipped  # helper calls inside the launches kept its patch
    assert torch.equal(dx, dx0) and torch.equal(dw, dw0)


def test_a_forward_program_bit_for_bit():
    from cake_kernels import runner
    from cake_kernels.inputs import make_inputs

    inp = make_inputs("gaussian", 9, 300, "bf16", form="residual", seed=4)
    (y, rstd, h), (y0, rstd0, h0) = _both(lambda: runner.forward("fwd.persist.p2x.r2.w8", inp.x, inp.w, 1e-6, inp.residual))
    assert torch.equal(y, y0) and torch.equal(rstd, rstd0) and torch.equal(h, h0)


def test_the_launch_patch_is_restored_after_a_failing_launch():
    # A launch that raises leaves triton.language as it found it: the next launch patches afresh.
    import triton.language as tl_mod
    from cake_kernels import runner
    from cake_kernels.inputs import make_inputs

    load = tl_mod.load
    with pytest.raises(Exception):
        # tl.arange refuses a length that is not a power of two, before any memory is touched
        _scaled_kernel[(1,)](torch.zeros(64), torch.zeros(16), torch.zeros(1), ROWS=3, COLS=16, AXIS=0, KEEP=False)
    assert tl_mod.load is load
    inp = make_inputs("gaussian", 3, 64, "fp32", seed=1)
    y, _, _ = runner.forward("fwd.row.r1.w8", inp.x, inp.w, 1e-6)
    assert torch.isfinite(y.float()).all()
