"""Synthetic `cake-evidence/1`: realistic layouts of runs, programs, timing blocks and accuracy records.

Used by the store's tests and benchmark and by the solver's benchmark. Nothing here is a
measurement: run ids start with ``synthetic-`` and every run carries ``note: synthetic``.

The timing layout follows ROUTING-POLICY.md section 4: per run, ``sessions`` sessions x ``rounds``
interleaved rounds x ``samples_per_block`` replays per (program, op), positions rotated by round
and reversed in odd sessions; in round 0 of each session the first ``aa_programs`` programs of each
op are timed a second time (``copy`` 1, the A/A pair). Latency follows a bandwidth model
(``6 T H + 4 T`` bytes at a program-specific rate plus a launch floor) with log-normal noise and a
per-session offset; dw err/tol of plain programs grows like sqrt(T), TwoSum-like ones stay flat.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from measurements_db.aggregates import FAMILIES, FORMS, W_DTYPES

SCHEMA = "cake-evidence/1"
BENCH_H: tuple[int, ...] = (1024, 2048, 3072, 4096, 5120, 6144, 8192)
_FAMILY_CYCLE = ("pair", "twosum_pair", "column_task", "blocked", "atomic")


def _sig(x: float, digits: int = 6) -> float:
    return float(f"{x:.{digits}g}")


def generate_evidence(
    *,
    arch: str = "sm_90a",
    H_values: Sequence[int] = (2048, 4096),
    forms: Sequence[str] = ("plain",),
    w_dtypes: Sequence[str] = W_DTYPES,
    T_values: Sequence[int] = (1, 1024, 65536),
    fwd_programs: int = 1,
    bwd_programs: int = 2,
    runs: int = 1,
    sessions: int = 2,
    rounds: int = 3,
    samples_per_block: int = 5,
    aa_programs: int = 1,
    accuracy_inputs: int = 3,
    accuracy_aggregates: bool = False,
    published: bool = False,
    seed: int = 0,
) -> list[dict]:
    """Generate synthetic evidence for one arch; returns plain `cake-evidence/1` records.

    Timing samples: runs x workloads x len(T_values) x (fwd_programs + bwd_programs) x sessions x
    rounds x samples_per_block, plus the A/A copies. Accuracy records (bwd programs only): per run,
    workload, T and family, ``accuracy_inputs`` per-input records (seeded) or, with
    ``accuracy_aggregates``, every second run writes one aggregate instead. ``published`` adds a
    published run with median-only timing of the first bwd program and a peer, and published
    verdict aggregates (a published run of the same points, which measured evidence outranks).
    """
    if any(f not in FORMS for f in forms):
        raise ValueError(f"forms {forms}: accepted: {', '.join(FORMS)}")
    rng = np.random.default_rng(seed)
    out: list[dict] = []
    progs: list[tuple[str, str, int]] = []  # (name, op, index)
    for i in range(fwd_programs):
        progs.append((f"fwd.synthetic.p{i}", "fwd", i))
    for i in range(bwd_programs):
        progs.append((f"bwd.synthetic.p{i}", "bwd", i))
    for name, op, i in progs:
        out.append({"schema": SCHEMA, "kind": "program", "name": name, "op": op, "deterministic": i % 2 == 0,
                    "family": _FAMILY_CYCLE[i % len(_FAMILY_CYCLE)], "runnable": True,
                    "fingerprint": f"sha256:synthetic-{name}", "description": f"synthetic program {i} ({op})"})
    workloads = [(H, x, w, f) for H in H_values for f in forms for w in w_dtypes for x in ("bf16",)]
    # Program speed: effective bandwidth in bytes/us (TB/s * 1e6) and a launch floor in us.
    speed = {name: (rng.uniform(2.2, 4.0) * 1e6, rng.uniform(3.0, 12.0)) for name, _, _ in progs}
    acc_scale = {name: (rng.uniform(0.5, 6.0) if i % 2 else rng.uniform(0.0005, 0.002)) for name, _, i in progs}
    for r in range(runs):
        run_id = f"synthetic-{arch}-r{r}"
        out.append({"schema": SCHEMA, "kind": "run", "run_id": run_id, "source": "measured", "arch": arch,
                    "gpu": "NVIDIA H200", "sm_count": 132, "started": f"2026-12-{1 + r % 28:02d}T10:00:00Z",
                    "host": f"node{r}", "package_version": "0.1.0", "note": "synthetic"})
        session_offset = rng.normal(0.0, 0.01, size=sessions)
        for (H, x, w, form) in workloads:
            for T in T_values:
                rows = T * (24 if form == "heads_strided" else 4 if form == "heads_contiguous" else 1)
                bytes_ = 6 * rows * H + 4 * rows
                for s in range(sessions):
                    for rd in range(rounds):
                        for op in ("fwd", "bwd"):
                            ops = [p for p in progs if p[1] == op]
                            k = len(ops)
                            order = [ops[(j + rd) % k] for j in range(k)] if k else []
                            if s % 2:
                                order.reverse()
                            for pos, (name, _, pi) in enumerate(order):
                                bw, floor = speed[name]
                                base = floor + bytes_ / bw * (0.5 if op == "fwd" else 1.0)
                                copies = (0, 1) if (rd == 0 and pi < aa_programs) else (0,)
                                for c in copies:
                                    v = base * (1 + session_offset[s]) * rng.lognormal(0.0, 0.01, samples_per_block)
                                    samples = np.maximum(np.round(v, 3), 0.001).tolist()
                                    out.append({
                                        "schema": SCHEMA, "kind": "timing", "run_id": run_id, "arch": arch,
                                        "program": name, "op": op, "H": H, "T": T, "x_dtype": x, "w_dtype": w,
                                        "form": form, "session": f"s{s}", "round": rd, "position": pos, "copy": c,
                                        "timer": "cupti", "l2": "cold", "samples_us": samples,
                                    })
                for name, op, pi in progs:
                    if op != "bwd":
                        continue
                    for fam in FAMILIES:
                        scale = acc_scale[name] * math.sqrt(T) / 700 * (0.5 if fam == "same_sign" else 1.0)
                        eager = 1.5 * math.sqrt(T) / 700
                        common = {"schema": SCHEMA, "kind": "accuracy", "run_id": run_id, "arch": arch,
                                  "program": name, "H": H, "T": T, "x_dtype": x, "w_dtype": w, "form": form,
                                  "family": fam}
                        if accuracy_aggregates and r % 2 == 1:
                            mx = rng.lognormal(0, 0.3, accuracy_inputs) * scale + 1e-5
                            out.append({**common, "inputs": accuracy_inputs, "dw_err_over_tol_max": _sig(float(mx.max())),
                                        "dw_err_over_tol_median": _sig(float(np.median(mx)) / 8),
                                        "eager_err_over_tol_max": _sig(eager * 1.3),
                                        "eager_err_over_tol_median": _sig(eager / 8),
                                        "dx_err_over_tol_max": _sig(rng.uniform(0.2, 0.5)),
                                        "rstd_rel_l2": _sig(rng.uniform(1e-8, 4e-8)), "rstd_form": "forward"})
                            continue
                        for j in range(accuracy_inputs):
                            mx = _sig(float(rng.lognormal(0, 0.3)) * scale + 1e-5)
                            out.append({**common, "seed": 1000 * r + j, "inputs": 1, "dw_err_over_tol_max": mx,
                                        "dw_err_over_tol_median": _sig(mx / rng.uniform(5, 12)),
                                        "dw_rel_l2": _sig(mx * 1e-4),
                                        "eager_err_over_tol_max": _sig(eager * rng.uniform(0.8, 1.3)),
                                        "eager_err_over_tol_median": _sig(eager / rng.uniform(5, 12)),
                                        "dx_err_over_tol_max": _sig(rng.uniform(0.2, 0.5)),
                                        "rstd_rel_l2": _sig(rng.uniform(1e-8, 4e-8)), "rstd_form": "forward"})
    if published:
        run_id = f"synthetic-{arch}-published"
        out.append({"schema": SCHEMA, "kind": "run", "run_id": run_id, "source": "published", "arch": arch,
                    "gpu": "NVIDIA H200", "sm_count": 132, "started": "2026-11-01T00:00:00Z",
                    "citation": "synthetic published table", "note": "synthetic"})
        peer = "peer.synthetic"
        out.append({"schema": SCHEMA, "kind": "program", "name": peer, "op": "bwd", "deterministic": True,
                    "family": "peer", "runnable": False, "fingerprint": "peer-synthetic==1.0"})
        names = [p[0] for p in progs if p[1] == "bwd"][:1] + [peer]
        for (H, x, w, form) in workloads:
            for T in T_values:
                for name in names:
                    out.append({"schema": SCHEMA, "kind": "timing", "run_id": run_id, "arch": arch, "program": name,
                                "op": "bwd", "H": H, "T": T, "x_dtype": x, "w_dtype": w, "form": form,
                                "session": "pooled", "round": 0, "position": 0, "copy": 0, "timer": "cupti",
                                "l2": "cold", "median_us": _sig(5 + 6 * T * H / 3e6 * rng.uniform(0.9, 1.1)),
                                "n": 804, "source_pr": 1})
                    for fam in FAMILIES:
                        fail = name == peer and T >= 65536
                        out.append({"schema": SCHEMA, "kind": "accuracy", "run_id": run_id, "arch": arch,
                                    "program": name, "H": H, "T": T, "x_dtype": x, "w_dtype": w, "form": form,
                                    "family": fam, "inputs": 0,
                                    "dw_err_over_tol_max": _sig(rng.uniform(1.5, 20)) if fail else None,
                                    "verdict": "fail" if fail else "pass", "qualified_by_source": True})
    return out


def bench_layout() -> dict:
    """The benchmark's layout: about 1,000,000 timing samples and 100,000 accuracy records.

    7 H x 4 forms x 2 weight dtypes = 56 workloads x 4 T x 5 programs (2 fwd, 3 bwd) x 4 sessions x
    3 rounds x 67 replays (201 per session, as the policy's protocol) = 900,480 samples, plus the A/A
    copies of one program per op in round 0 of each session (120,064 samples): 1,020,544 samples in
    15,232 blocks. Accuracy: 56 workloads x 4 T x 3 bwd programs x 3 families x 50 inputs = 100,800.
    """
    return dict(H_values=BENCH_H, forms=FORMS, w_dtypes=W_DTYPES, T_values=(1024, 16384, 131072, 524288),
                fwd_programs=2, bwd_programs=3, runs=1, sessions=4, rounds=3, samples_per_block=67,
                aa_programs=1, accuracy_inputs=50)
