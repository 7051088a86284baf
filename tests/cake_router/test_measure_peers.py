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
