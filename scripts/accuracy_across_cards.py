"""Do two cards of one arch compute the same dw? Compares the accuracy aggregates that two sets of
evidence hold for the same (program, workload, T, family, inputs).

The routing policy keys an accuracy point by arch; `measurements_db.aggregates.evidence_runs` lets a
route table's accuracy come from any card of the arch with the timed card's SM count. This is the
measurement behind that rule: for every aggregate both sides hold, the worst relative difference of
each field.

    python scripts/accuracy_across_cards.py --a bench/results/h100-2026-12-06c/*.tar.gz \
        --b measurements_db/data/h200-*.jsonl.gz [--json]

Inputs: evidence files (`.jsonl`, `.jsonl.gz`) or result tarballs (their `*.jsonl.gz` members).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tarfile
from collections import defaultdict
from pathlib import Path

from measurements_db.bundle import read_bundle
from measurements_db.evidence_io import parse_evidence

FIELDS = ("dw_err_over_tol_max", "dw_err_over_tol_median", "eager_err_over_tol_max", "dx_err_over_tol_max", "rstd_rel_l2")


def records_of(path: str) -> list[dict]:
    if path.endswith((".tar.gz", ".tgz")):
        out: list[dict] = []
        with tarfile.open(path) as tar:
            for m in tar.getmembers():
                if m.isfile() and m.name.endswith(".jsonl.gz"):
                    text = gzip.decompress(tar.extractfile(m).read()).decode()
                    out += parse_evidence(text.splitlines(), f"{path}:{m.name}")
        return out
    return read_bundle(path)


def accuracy_by_point(paths: list[str]) -> tuple[dict, dict]:
    """(program, form, H, w_dtype, T, family, inputs) -> [field tuple per run], run_id -> (gpu, SMs).

    Deterministic programs only: a nondeterministic one's dw changes from run to run on one card."""
    points: dict[tuple, list[tuple]] = defaultdict(list)
    cards: dict[str, tuple] = {}
    det: dict[str, bool] = {}
    acc: list[dict] = []
    for path in paths:
        for r in records_of(path):
            if r.get("kind") == "run":
                cards[r["run_id"]] = (r.get("gpu"), r.get("sm_count"))
            elif r.get("kind") == "program":
                det[r["name"]] = det.get(r["name"], True) and bool(r["deterministic"])
            elif r.get("kind") == "accuracy" and r.get("dw_err_over_tol_max") is not None:
                acc.append(r)
    for r in acc:
        if det.get(r["program"]):
            key = (r["program"], r["form"], r["H"], r["w_dtype"], r["T"], r["family"], r["inputs"])
            points[key].append(tuple(r.get(f) for f in FIELDS))
    return points, cards


def _rel(a, b) -> float | None:
    if a is None or b is None:
        return None
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def worst_differences(pairs: list[tuple[tuple, tuple]]) -> dict[str, float | None]:
    out = {}
    for i, f in enumerate(FIELDS):
        vals = [d for a, b in pairs if (d := _rel(a[i], b[i])) is not None]
        out[f] = max(vals) if vals else None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", nargs="+", required=True, help="evidence of card A (files or result tarballs)")
    ap.add_argument("--b", nargs="+", required=True, help="evidence of card B (files or result tarballs)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    a, cards_a = accuracy_by_point(args.a)
    b, cards_b = accuracy_by_point(args.b)
    common = sorted(set(a) & set(b))
    across = [(x, y) for k in common for x in a[k] for y in b[k]]
    doc = {
        "cards_a": sorted({f"{g} ({n} SMs)" for g, n in cards_a.values()}),
        "cards_b": sorted({f"{g} ({n} SMs)" for g, n in cards_b.values()}),
        "points_in_common": len(common),
        "programs": len({k[0] for k in common}),
        "workloads": len({k[1:5] for k in common}),
        "pairs_across": len(across),
        "worst_relative_difference_across": worst_differences(across),
    }
    if args.json:
        json.dump(doc, sys.stdout, indent=1)
        print()
        return 0
    print(f"A: {', '.join(doc['cards_a'])}; B: {', '.join(doc['cards_b'])}")
    print("Deterministic programs only.")
    print(f"{doc['points_in_common']} accuracy aggregates in common ({doc['programs']} programs, {doc['workloads']} "
          f"workloads, T and family), {doc['pairs_across']} pairs A-B")
    print()
    print("| field | worst relative difference A-B |")
    print("|---|---|")
    for f in FIELDS:
        x = doc["worst_relative_difference_across"][f]
        print(f"| {f} | {'-' if x is None else f'{x:.1e}'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
