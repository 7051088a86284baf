"""The accuracy protocol (cake_router.measure.accuracy.evaluate) on the CPU: grouped dx judging gives
the per-program figures, a deadline cut leaves the families equally sampled, a breach stops sampling."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
import torch

from cake_kernels import runner
from cake_kernels.inputs import make_inputs
from cake_kernels.reference import dx_err_over_tol_chunked, reference_forward
from cake_router.measure import accuracy

WL = SimpleNamespace(H=64, T=130, form="residual", w_dtype="bf16")
FAMILIES = ["gaussian", "same_sign", "outlier_rows"]


def _impls():
    def prog(name):
        return lambda inp, xn, r: runner.backward(name, inp.g, xn, inp.w, r, inp.g_h_new)

    def off_dx(inp, xn, r):  # dw fine, dx off by 3 %: a dx error the grouped judge must attribute right
        dx, dw = runner.backward("bwd.reference", inp.g, xn, inp.w, r, inp.g_h_new)
        return (dx.float() * 1.03).to(torch.bfloat16), dw

    def breach(inp, xn, r):
        dx, dw = runner.backward("bwd.reference", inp.g, xn, inp.w, r, inp.g_h_new)
        return dx, dw + 1.0

    return {"bwd.reference": prog("bwd.reference"), "bwd.pair.p2x.w8": prog("bwd.pair.p2x.w8"),
            "off_dx": off_dx, "breach": breach}


def _expected_dx_errs(n_inputs):
    out = {}
    for name, fn in _impls().items():
        if name == "breach":
            continue
        for fam in FAMILIES:
            worst = 0.0
            for i in range(n_inputs):
                inp = make_inputs(fam, WL.T, WL.H, WL.w_dtype, WL.form, accuracy.seed_for(WL.H, WL.T, WL.form, fam, i), "cpu")
                _, rstd, h = reference_forward(inp.x, inp.w, accuracy.EPS, inp.residual)
                dx, _ = fn(inp, h, rstd)
                worst = max(worst, dx_err_over_tol_chunked(dx, inp.g, h, inp.w, rstd, inp.g_h_new))
            out[(name, fam)] = worst
    return out


@pytest.mark.interpreter
@pytest.mark.parametrize("capacity", [1, 3, 8])
def test_grouped_dx_judging_matches_per_program(monkeypatch, capacity):
    monkeypatch.setattr(accuracy, "_dx_group_capacity", lambda dx_bytes, device: capacity)
    recs = accuracy.evaluate(WL, _impls(), FAMILIES, 2, "cpu")
    got = {(r["program"], r["family"]): r for r in recs}
    for key, want in _expected_dx_errs(2).items():
        assert got[key]["dx_err_over_tol_max"] == pytest.approx(want, rel=0, abs=0), key
        assert got[key]["inputs"] == 2
    assert got[("off_dx", "gaussian")]["dx_err_over_tol_max"] > 1.0  # the 3 % error is seen...
    assert got[("bwd.reference", "gaussian")]["dx_err_over_tol_max"] < 1.0  # ...and not blamed on others


def test_breach_stops_sampling_after_the_first_input():
    recs = accuracy.evaluate(WL, _impls(), FAMILIES, 3, "cpu")
    b = [r for r in recs if r["program"] == "breach"]
    # Inputs go round-robin over families: the breach on gaussian input 0 stops it before same_sign.
    assert [(r["family"], r["inputs"], r["stopped_on_breach"]) for r in b] == [("gaussian", 1, True)]


def test_a_deadline_cut_leaves_every_family_equally_sampled():
    recs = accuracy.evaluate(WL, _impls(), FAMILIES, 5, "cpu", deadline=time.time() - 1.0)
    good = [r for r in recs if r["program"] == "bwd.reference"]
    assert sorted((r["family"], r["inputs"]) for r in good) == [(f, 1) for f in sorted(FAMILIES)]


@pytest.mark.interpreter
def test_fused_and_torch_oracles_give_the_same_records():
    """The fused FP64 oracle (default on the GPU) and the torch one give the same accuracy records."""
    impls = {k: v for k, v in _impls().items() if k != "breach"}
    fused = accuracy.evaluate(WL, impls, FAMILIES, 1, "cpu", oracle="fused")
    plain = accuracy.evaluate(WL, impls, FAMILIES, 1, "cpu", oracle="torch")
    assert len(fused) == len(plain) == 9
    for a, b in zip(fused, plain):
        assert a.keys() == b.keys()
        for k in a:
            if isinstance(a[k], float):
                assert a[k] == pytest.approx(b[k], rel=1e-9, abs=1e-12), k
            else:
                assert a[k] == b[k], k


def test_unknown_oracle_is_refused():
    with pytest.raises(ValueError, match="oracle: 'fp128' is not one of"):
        accuracy.evaluate(WL, {}, FAMILIES, 1, "cpu", oracle="fp128")


def test_oracle_mismatch_is_loud():
    t = torch.ones(4, dtype=torch.float64)
    accuracy._check_oracles(t, t, t, t, [0.5], [0.5], "here")  # agreement passes
    with pytest.raises(accuracy.OracleMismatch, match="dw64"):
        accuracy._check_oracles(t * (1 + 1e-6), t, t, t, [0.5], [0.5], "here")
    with pytest.raises(accuracy.OracleMismatch, match=r"dx\[0\]"):
        accuracy._check_oracles(t, t, t, t, [0.5], [0.51], "here")
    accuracy._check_oracles(t, t, t, t, [accuracy.NONFINITE], [float("nan")], "here")  # NaN = capped breach


def test_nonfinite_statistics_become_the_finite_breach_value():
    """JSON has no NaN or inf: a peer's NaN dw (Liger on a strided head view, seen on the H200)
    must still give a valid record, as a breach."""
    import math

    from cake_router.measure import accuracy as acc_mod

    assert acc_mod._finite(float("nan")) == acc_mod.NONFINITE
    assert acc_mod._finite(math.inf) == acc_mod.NONFINITE
    assert acc_mod._finite(0.25) == 0.25


def test_a_cuda_error_in_the_accuracy_pass_names_the_implementation():
    """A CUDA error is sticky: the pass stops and names the implementation whose call raised it (the
    session quarantines it for the retry); any other exception is recorded and the pass goes on."""
    def faulting(inp, xn, r):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    def failing(inp, xn, r):
        raise ValueError("unsupported layout")

    good = _impls()["bwd.reference"]
    with pytest.raises(accuracy.ImplementationFault, match="peer.faulty: RuntimeError: CUDA error") as err:
        accuracy.evaluate(WL, {"bwd.reference": good, "peer.faulty": faulting}, FAMILIES, 1, "cpu")
    assert err.value.impl == "peer.faulty" and "CUDA error" in str(err.value)
    recs = accuracy.evaluate(WL, {"bwd.reference": good, "peer.failing": failing}, FAMILIES, 1, "cpu")
    assert {"program": "peer.failing", "failed": "ValueError: unsupported layout"} in recs
    assert sum(r["program"] == "bwd.reference" for r in recs) == len(FAMILIES)
