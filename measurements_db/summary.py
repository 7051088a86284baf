"""Per-run accuracy summaries: what `aggregates.aggregate_records` computes per (run, workload,
program, T, family) before combining runs, as a pure function of that group's records.

The import keeps the ``accuracy_summaries`` table equal to this function over each group's stored
records (recomputed in the import's transaction), so `queries.workload_evidence` reads one row per
group instead of every per-input record.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from measurements_db.aggregates import _max_opt, median

#: (seed, inputs, dw_err_over_tol_max, dw_err_over_tol_median, eager_err_over_tol_max,
#:  eager_err_over_tol_median, verdict, qualified_by_source)
SUMMARY_INPUT_COLUMNS: tuple[str, ...] = (
    "seed", "inputs", "dw_err_over_tol_max", "dw_err_over_tol_median", "eager_err_over_tol_max",
    "eager_err_over_tol_median", "verdict", "qualified_by_source",
)


def family_run_summary(rows: Iterable[tuple]) -> dict:
    """One run's aggregate of one family at one point (see `aggregates` for the semantics).

    Per-input records (seed set, inputs 1) contribute the median of their medians; each aggregate
    record contributes its own median; worst and medians are the maxima of those parts.
    """
    rows = list(rows)
    medians, e_medians, med_parts, emed_parts = [], [], [], []
    verdicts: set[str] = set()
    qbs: list[bool] = []
    inputs = 0
    for seed, n_in, _dmax, dmed, _emax, emed, verdict, qbs_ in rows:
        inputs += n_in
        if n_in == 1 and seed is not None:
            if dmed is not None:
                medians.append(dmed)
            if emed is not None:
                e_medians.append(emed)
        else:
            med_parts.append(dmed)
            emed_parts.append(emed)
        if verdict:
            verdicts.add(verdict)
        if qbs_ is not None:
            qbs.append(bool(qbs_))
    if medians:
        med_parts.append(median(medians))
    if e_medians:
        emed_parts.append(median(e_medians))
    return {
        "records": len(rows),
        "inputs": inputs,
        "worst": _max_opt(r[2] for r in rows),
        "median": _max_opt(med_parts),
        "eager_worst": _max_opt(r[4] for r in rows),
        "eager_median": _max_opt(emed_parts),
        "verdict": "fail" if "fail" in verdicts else ("pass" if verdicts else None),
        "qualified_by_source": all(qbs) if qbs else None,
    }


def np_median(a: np.ndarray) -> float:
    """`aggregates.median` on a float64 array, bit for bit (mean of the two middle values for even n)."""
    n = a.size
    k = n // 2
    if n % 2:
        return float(np.partition(a, k)[k])
    p = np.partition(a, (k - 1, k))
    return (float(p[k - 1]) + float(p[k])) / 2
