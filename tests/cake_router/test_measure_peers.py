"""Peer wiring of the harness that the CPU can check: QuACK's module lookup (its package exports a
function with the submodule's name) and the recorded reasons of peers that cannot run."""

from __future__ import annotations

import sys
import types

import pytest

from cake_router.measure import impls


def test_quack_rmsnorm_module_is_the_submodule_not_the_package_function(monkeypatch):
    pkg = types.ModuleType("quack")
    pkg.__path__ = []  # a package
    sub = types.ModuleType("quack.rmsnorm")
    sub.rmsnorm_fwd = lambda *a, **k: "fwd"

    def rmsnorm(*a, **k):  # what quack/__init__.py exports under the submodule's name
        return None

    pkg.rmsnorm = rmsnorm
    monkeypatch.setitem(sys.modules, "quack", pkg)
    monkeypatch.setitem(sys.modules, "quack.rmsnorm", sub)
    import quack.rmsnorm as shadowed  # noqa: the form that broke on the H200

    assert shadowed is rmsnorm
    assert impls._quack_rmsnorm_module() is sub
    assert impls._quack_rmsnorm_module().rmsnorm_fwd() == "fwd"


def test_missing_peer_is_unavailable_with_the_reason(monkeypatch):
    monkeypatch.setitem(sys.modules, "quack", None)  # import fails as if not installed
    with pytest.raises(impls.PeerUnavailable, match="quack is not importable"):
        impls._check_version("peer.quack.heuristic")


def test_compiled_peer_compiles_every_shape_of_a_session(monkeypatch):
    """A session times many shapes with the same two compiled functions (dynamic=False): past
    dynamo's default recompile limit (8) they would silently run eagerly under the compiled peer's
    name. Twelve shapes here must all compile (dynamo's backend-independent bookkeeping is what is
    checked, so the eager backend keeps this fast on the CPU)."""
    import torch
    import torch._dynamo
    import torch._dynamo.config as dcfg
    import torch._inductor.config as icfg

    for mod, name in ((dcfg, "recompile_limit"), (dcfg, "fail_on_recompile_limit_hit"), (icfg, "emulate_precision_casts")):
        monkeypatch.setattr(mod, name, getattr(mod, name))  # restored after the test
    torch._dynamo.reset()
    f_fwd, f_bwd = impls._compiled("default", backend="eager")
    assert dcfg.fail_on_recompile_limit_hit and icfg.emulate_precision_casts
    from torch._dynamo.utils import counters

    counters.clear()
    for T in range(1, 13):
        x = torch.randn(T, 64).to(torch.bfloat16)
        w = torch.ones(64)
        y, rstd, _ = f_fwd(x, w, None)
        dx, dw = f_bwd(torch.randn_like(x), x, w, rstd, None)
        assert dw.dtype == torch.float32 and dx.shape == x.shape
    assert counters["stats"]["unique_graphs"] >= 24  # one graph per shape and function: none fell back
    torch._dynamo.reset()


@pytest.mark.parametrize("form", ["plain", "residual", "heads_strided"])
def test_compiled_peers_forward_is_the_reference_forward_on_the_whole_tensor(form):
    """The compiled peer is given the forward without the oracle's row-chunk loop; its values must
    be the reference forward's, bit for bit, whatever the chunking."""
    import torch

    from cake_kernels import reference
    from cake_kernels.inputs import make_inputs

    inp = make_inputs("outlier_rows", 37, 256, "bf16", form, seed=5, device="cpu")
    old = reference.ORACLE_CHUNK_ELEMS
    try:
        reference.ORACLE_CHUNK_ELEMS = 256 * 8  # several chunks
        want = reference.reference_forward(inp.x, inp.w, impls.EPS, inp.residual)
    finally:
        reference.ORACLE_CHUNK_ELEMS = old
    got = impls._whole_tensor_fwd(inp.x, inp.w, inp.residual)
    for a, b in zip(got, want):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype and torch.equal(a, b)


def _fake_liger(calls: list):
    """liger_kernel.ops.rms_norm as far as the harness uses it, with the real kernels' indexing:
    row r of X is read at X.data_ptr() + r * X.stride(0) for H elements (as_strided raises where the
    GPU kernel would read past the tensor, instead of returning garbage or faulting)."""
    from cake_kernels.reference import reference_backward, reference_forward

    def rows_as_the_kernel_reads(X, n_rows, n_cols):
        return X.as_strided((n_rows, n_cols), (X.stride(0), 1), X.storage_offset())

    def rms_norm_forward(X, W, eps, offset, casting_mode, row_mode):
        shape = X.shape
        X = X.view(-1, shape[-1])  # what it returns, and what its autograd function saves
        y, rstd, _ = reference_forward(X, W, eps, None)
        return y.view(*shape), X, rstd.reshape(-1), 256, 4, casting_mode

    def rms_norm_backward(dY, X, W, RSTD, offset, casting_mode, BLOCK_SIZE, num_warps, in_place, row_mode):
        calls.append(tuple(X.shape))
        shape = dY.shape
        dY = dY.view(-1, shape[-1])
        Xr = rows_as_the_kernel_reads(X, *dY.shape)
        dx, dw = reference_backward(dY, Xr, W, RSTD)
        return dx.view(*shape), dw.to(W.dtype)

    pkg, ops, mod = types.ModuleType("liger_kernel"), types.ModuleType("liger_kernel.ops"), types.ModuleType("liger_kernel.ops.rms_norm")
    pkg.__path__, ops.__path__ = [], []
    mod.rms_norm_forward, mod.rms_norm_backward = rms_norm_forward, rms_norm_backward
    pkg.ops, ops.rms_norm = ops, mod
    return {"liger_kernel": pkg, "liger_kernel.ops": ops, "liger_kernel.ops.rms_norm": mod}


@pytest.mark.parametrize("form", ["plain", "residual", "heads_contiguous"])
def test_liger_backward_gets_the_rows_its_forward_returned(monkeypatch, form):
    """Liger's backward reads X by its row stride and does not reshape it (its autograd function
    saves the 2-D view its forward returns). Given [T, heads, 256] it read past the end: rounds 4-9
    recorded non-finite dw for Liger at the head forms and an illegal address from 16,384 rows."""
    import torch

    from cake_kernels.inputs import make_inputs
    from cake_kernels.reference import reference_backward, reference_forward

    calls: list = []
    for name, m in _fake_liger(calls).items():
        monkeypatch.setitem(sys.modules, name, m)
    monkeypatch.setattr(impls, "_check_version", lambda name: None)
    H = 256 if form.startswith("heads") else 512
    inp = make_inputs("gaussian", 9, H, "fp32", form, seed=3, device="cpu")
    wl = impls.Workload(H, form, "fp32", 9)
    prep = impls.prepare_peer("peer.liger", inp, wl)
    for op in ("fwd", "bwd", "2xfwd+bwd"):
        prep.ops[op]()
    _, rstd, h = reference_forward(inp.x, inp.w, impls.EPS, inp.residual)
    xn = h if h is not None else inp.x
    dx, dw = prep.dw_for_accuracy(inp, xn, rstd)
    want_dx, want_dw = reference_backward(inp.g, xn, inp.w, rstd)
    if inp.g_h_new is not None:
        want_dx = want_dx + inp.g_h_new
    assert dx.shape == xn.shape
    torch.testing.assert_close(dw, want_dw.float())
    torch.testing.assert_close(dx.float(), want_dx.float(), atol=1e-2, rtol=1e-2)
    assert calls and all(len(s) == 2 and s[-1] == H for s in calls)  # bwd, step and accuracy: rows of H


def _fake_quack(weights: list):
    """quack.rmsnorm as far as the harness uses it (heuristic config), on the reference kernels."""
    from cake_kernels.reference import reference_backward, reference_forward

    def rmsnorm_fwd(x, w, residual=None, eps=1e-6, store_rstd=True):
        y, rstd, h = reference_forward(x, w, eps, residual)
        return y, (h if h is not None else x), rstd

    def rmsnorm_bwd(x, w, dout, rstd, dresidual_out=None, has_residual=False):
        weights.append(w)
        dx, dw = reference_backward(dout, x, w, rstd)
        if dresidual_out is not None:
            dx = dx + dresidual_out
        return dx, dw.float(), None, None

    pkg, mod = types.ModuleType("quack"), types.ModuleType("quack.rmsnorm")
    pkg.__path__ = []
    mod.rmsnorm_fwd, mod.rmsnorm_bwd = rmsnorm_fwd, rmsnorm_bwd
    return {"quack": pkg, "quack.rmsnorm": mod}


def test_quack_accuracy_backward_takes_the_accuracy_inputs_weight(monkeypatch):
    """dx depends on the weight: the accuracy pass judges each input's dx, so QuACK must get that
    input's weight, not the one of the inputs prepared for timing (sessions up to 25 passed the
    latter, and every stored QuACK dx err/tol was 10-300 where the anchors measure below 0.4)."""
    import torch

    from cake_kernels.inputs import make_inputs
    from cake_kernels.reference import reference_backward, reference_forward

    weights: list = []
    for name, m in _fake_quack(weights).items():
        monkeypatch.setitem(sys.modules, name, m)
    monkeypatch.setattr(impls, "_check_version", lambda name: None)
    timing_inp = make_inputs("gaussian", 9, 512, "bf16", "plain", seed=3, device="cpu")
    prep = impls.prepare_peer("peer.quack.heuristic", timing_inp, impls.Workload(512, "plain", "bf16", 9))
    prep.ops["bwd"]()
    acc_inp = make_inputs("outlier_rows", 9, 512, "bf16", "plain", seed=11, device="cpu")
    assert not torch.equal(acc_inp.w, timing_inp.w)
    _, rstd, _ = reference_forward(acc_inp.x, acc_inp.w, impls.EPS, None)
    dx, dw = prep.dw_for_accuracy(acc_inp, acc_inp.x, rstd)
    want_dx, want_dw = reference_backward(acc_inp.g, acc_inp.x, acc_inp.w, rstd)
    assert torch.equal(weights[-1], acc_inp.w.float())
    torch.testing.assert_close(dx.float(), want_dx.float(), atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(dw, want_dw.float())
