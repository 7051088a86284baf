"""The accuracy protocol of ROUTING-POLICY.md sections 2 and 3, for one workload.

Every backward implementation of a workload is evaluated on the same inputs, so input generation,
the FP64 oracle and the FP32 eager reference are paid once per input. On the GPU the oracle is the
fused Triton one (`cake_kernels.reference_fp64`: one pass over g and x, no FP64 temporaries),
checked against the torch oracle (`cake_kernels.reference`) on the first input of every workload;
`oracle="torch"` uses the torch oracle throughout. Each input's rstd is the FP32 forward's. Per program and
family the harness emits one aggregate record (evidence-format.md: `inputs`, worst, median of
per-input medians, the same for the eager reference), or per-input records with `per_input`.

Sampling stops early for a program once its worst err/tol exceeds the budget (`stop_on_breach`):
one breach is enough to rule it out at this point, and the evidence records the inputs it saw.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict

import torch

from cake_kernels import reference_fp64
from cake_kernels.inputs import make_inputs
from cake_kernels.reference import dw_err_over_tol, dx_errs_over_tol_chunked, eager_fp32_dw, reference_forward
from cake_kernels.reference import oracle as torch_oracle

EPS = 1e-6
NONFINITE = reference_fp64.NONFINITE
ORACLES = ("fused", "torch")
# The two oracles compute the same FP64 sums in different orders: they agree to rounding, far
# inside what could move an err/tol of 1e-4-scaled tolerances.
ORACLE_AGREEMENT = 1e-9


class OracleMismatch(RuntimeError):
    """The fused FP64 oracle disagreed with the torch one: no accuracy record can be trusted."""


class ImplementationFault(RuntimeError):
    """A CUDA error raised by one implementation during the accuracy pass. CUDA errors are sticky,
    so the pass cannot go on; `impl` names the culprit, which the session skips when it retries."""

    def __init__(self, impl: str, exc: BaseException):
        super().__init__(f"{impl}: {type(exc).__name__}: {exc}")
        self.impl = impl


def _check_oracles(fused_dw64, torch_dw64, fused_rstd64, torch_rstd64, fused_dx, torch_dx, where: str) -> None:
    def rel(a, b):
        return float((a - b).abs().max() / max(float(b.abs().max()), 1e-300)) if b.numel() else 0.0

    worst = {"dw64": rel(fused_dw64, torch_dw64), "rstd64": rel(fused_rstd64, torch_rstd64)}
    for k, (a, b) in enumerate(zip(fused_dx, torch_dx)):
        b = NONFINITE if b != b or b >= NONFINITE else b  # the torch oracle keeps NaN; the fused one caps it
        worst[f"dx[{k}]"] = abs(a - b) / max(abs(b), 1e-3)
    bad = {k: v for k, v in worst.items() if not v <= ORACLE_AGREEMENT}
    if bad:
        raise OracleMismatch(f"{where}: fused and torch FP64 oracles disagree (relative): {bad}")


def _finite(v: float) -> float:
    """NaN/inf as the huge finite NONFINITE: JSON has neither (seen on the H200: Liger's dw on a
    strided head view at T 1 was NaN, and the record was not valid JSON)."""
    return v if v < NONFINITE else NONFINITE


def seed_for(H: int, T: int, form: str, family: str, i: int) -> int:
    """Stable per-input seeds: the same input for every program of a key, across runs and nodes."""
    fam = {"gaussian": 1, "same_sign": 2, "outlier_rows": 3}[family]
    frm = {"plain": 0, "residual": 1, "heads_strided": 2, "heads_contiguous": 3}[form]
    return (fam * 1_000_003 + frm * 15_485_863 + H * 7919 + T * 104729 + i * 31) % (2**31 - 1)


def _dx_group_capacity(dx_bytes: int, device) -> int:
    """How many programs' dx outputs to hold at once so that one FP64 reference pass judges them all.

    The chunked FP64 dx reference costs more than the comparison, and rebuilt per program it was
    the one FP64 pass over T x H repeated for every program; holding dx costs memory, T * H * 2
    bytes each. On the GPU a group takes at most half of the free memory, at least one program.
    """
    if torch.device(device).type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return max(1, int(0.5 * free) // max(dx_bytes, 1))
    return 8


def evaluate(wl, impls: dict, families, inputs_per_family: int, device, *, stop_on_breach: bool = True,
             per_input: bool = False, deadline: float | None = None, oracle: str | None = None) -> list[dict]:
    """impls: name -> callable (inp, xn, rstd) -> (dx, dw). Returns accuracy record bodies
    (without run_id/arch/schema/kind), one per (program, family) or per input.

    Inputs are taken round-robin over the families (input i of every family before input i + 1), so
    a `deadline` cut leaves the families equally sampled (at least one input each) rather than one
    family full and the others nearly empty.

    `oracle`: "fused" (the default on the GPU) or "torch" (the default elsewhere: the interpreter
    runs the fused kernels too, but slowly).
    """
    if oracle is None:
        oracle = "fused" if torch.device(device).type == "cuda" else "torch"
    if oracle not in ORACLES:
        raise ValueError(f"oracle: {oracle!r} is not one of {ORACLES}")
    fused = oracle == "fused"
    on_cuda = torch.device(device).type == "cuda"
    cross_check = fused and on_cuda
    dx_judge = reference_fp64.dx_errs_over_tol if fused else dx_errs_over_tol_chunked
    stats: dict[tuple, list[dict]] = defaultdict(list)
    breached: set[str] = set()
    failed: dict[str, str] = {}
    for i in range(inputs_per_family):
        if deadline is not None and time.time() > deadline and i >= 1:
            break
        for fam in families:
            seed = seed_for(wl.H, wl.T, wl.form, fam, i)
            inp = make_inputs(fam, wl.T, wl.H, wl.w_dtype, wl.form, seed, device)
            # y is not judged here: dropping it at once frees T x H x 2 bytes before the FP32 eager buffer.
            rstd, h = reference_forward(inp.x, inp.w, EPS, inp.residual)[1:]
            xn = h if h is not None else inp.x
            if fused:
                dw64, r64 = reference_fp64.dw64(inp.g, xn, rstd), reference_fp64.rstd64(xn, EPS)
            else:
                o = torch_oracle(inp.g, xn, inp.w, rstd, eps=EPS, want_dx=False)
                dw64, r64 = o["dw64"], o["rstd64"]
                del o
            e_eager = dw_err_over_tol(eager_fp32_dw(inp.g, xn, rstd), dw64)
            eager_max, eager_med = float(e_eager.max()), float(e_eager.median())
            rstd_rel = float(torch.linalg.norm(rstd.reshape(-1).double() - r64) / torch.linalg.norm(r64)) if r64.numel() else 0.0
            pending: list[tuple[dict, torch.Tensor]] = []  # records whose dx still needs judging
            # The fused judge reads g and x once per dx anyway: holding dx for a group saves nothing.
            capacity = 1 if fused else _dx_group_capacity(xn.numel() * 2, device)

            def judge_dx():
                nonlocal cross_check
                dxs = [d for _, d in pending]
                errs = dx_judge(dxs, inp.g, xn, inp.w, rstd, inp.g_h_new)
                if cross_check:  # once per workload: the fused oracle against the torch one
                    o = torch_oracle(inp.g, xn, inp.w, rstd, eps=EPS, want_dx=False)
                    _check_oracles(dw64, o["dw64"], r64, o["rstd64"], errs,
                                   dx_errs_over_tol_chunked(dxs, inp.g, xn, inp.w, rstd, inp.g_h_new),
                                   f"H={wl.H} T={wl.T} {wl.form} {wl.w_dtype} {fam} input {i}")
                    cross_check = False
                for (rec, _), err in zip(pending, errs):
                    rec["dx_err_over_tol_max"] = err
                pending.clear()

            for name, fn in impls.items():
                if name in failed or (stop_on_breach and name in breached):
                    continue
                try:
                    dx, dw = fn(inp, xn, rstd)
                    if on_cuda:
                        # A kernel's fault is asynchronous: without this it surfaces at the next
                        # input's allocation, with no implementation to blame.
                        torch.cuda.synchronize(device)
                except Exception as exc:  # a peer failing on this input: record and go on
                    if "CUDA error" in str(exc):
                        raise ImplementationFault(name, exc) from exc  # sticky: this process cannot go on
                    failed[name] = f"{type(exc).__name__}: {exc}"[:300]
                    continue
                e = dw_err_over_tol(dw.float(), dw64)
                emax = float(e.max())
                if not (emax < NONFINITE):
                    emax = NONFINITE  # NaN/inf dw: JSON has no inf; a huge finite err/tol is a breach all the same
                rec = dict(program=name, family=fam, seed=seed, dw_err_over_tol_max=emax,
                           dw_err_over_tol_median=_finite(float(e.median())),
                           dw_rel_l2=_finite(float(torch.linalg.norm(dw.double() - dw64) / max(float(torch.linalg.norm(dw64)), 1e-300))),
                           eager_err_over_tol_max=eager_max, eager_err_over_tol_median=eager_med,
                           rstd_rel_l2=rstd_rel, rstd_form="forward")
                stats[(name, fam)].append(rec)
                if name.startswith("peer."):
                    # A peer may hand back a buffer it reuses on its next call: judge it now.
                    rec["dx_err_over_tol_max"] = dx_judge([dx], inp.g, xn, inp.w, rstd, inp.g_h_new)[0]
                else:
                    pending.append((rec, dx))  # the runner allocates every dx afresh
                del dx, dw, e
                if len(pending) >= capacity:
                    judge_dx()
                if emax > 1.0:
                    breached.add(name)
            if pending:
                judge_dx()
            del inp, xn, rstd, h
    out: list[dict] = []
    for (name, fam), recs in sorted(stats.items()):
        if per_input:
            out.extend(dict(r, inputs=1) for r in recs)
            continue
        out.append(dict(
            program=name, family=fam, inputs=len(recs),
            dw_err_over_tol_max=max(r["dw_err_over_tol_max"] for r in recs),
            dw_err_over_tol_median=statistics.median(r["dw_err_over_tol_median"] for r in recs),
            dw_rel_l2=max(r["dw_rel_l2"] for r in recs),
            eager_err_over_tol_max=max(r["eager_err_over_tol_max"] for r in recs),
            eager_err_over_tol_median=statistics.median(r["eager_err_over_tol_median"] for r in recs),
            dx_err_over_tol_max=max(r["dx_err_over_tol_max"] for r in recs),
            rstd_rel_l2=max(r["rstd_rel_l2"] for r in recs), rstd_form="forward",
            stopped_on_breach=name in breached,
        ))
    for name, why in sorted(failed.items()):
        out.append(dict(program=name, failed=why))
    return out
