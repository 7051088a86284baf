"""A Markdown table of harness evidence files (.jsonl or .jsonl.gz), for results READMEs.

One row per (op, form, H, weight dtype, T, program): the median over its timing records (copy 0) of
each record's median, fastest first within a key, beside the worst dw err/tol over its accuracy
records and their inputs per family (the fewest, where a breach stopped a family early). Programs with
accuracy and no timing (`measure --accuracy-only`) follow, with latency "-".

    PYTHONPATH=. python scripts/evidence_table.py bench/results/h100-2026-12-06c/*.jsonl.gz

The files are read and validated as the store reads them (`measurements_db.bundle.read_bundle`).
"""

from __future__ import annotations

import argparse
import collections
import statistics

from measurements_db.bundle import read_bundle


def table(paths: list[str]) -> str:
    times: dict[tuple, list[float]] = collections.defaultdict(list)
    worst: dict[tuple, float] = {}
    inputs: dict[tuple, int] = {}
    for path in paths:
        for r in read_bundle(path):
            key = (r.get("form"), r.get("H"), r.get("w_dtype"), r.get("T"), r.get("program"))
            if r["kind"] == "timing" and r.get("copy", 0) == 0:
                times[(r["op"], *key)].append(statistics.median(r["samples_us"]))
            elif r["kind"] == "accuracy":
                worst[key] = max(worst.get(key, 0.0), r["dw_err_over_tol_max"])
                inputs[key] = min(inputs.get(key, r["inputs"]), r["inputs"])
    out = ["| op | form | H | w | T | program | us | records | worst dw err/tol | inputs/family |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for k in sorted(times, key=lambda k: (k[0], k[1], k[4], k[2], k[3], statistics.median(times[k]))):
        acc = k[1:]
        w = f"{worst[acc]:.3f}" if acc in worst else "-"
        out.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | `{k[5]}` | {statistics.median(times[k]):.2f} | "
                   f"{len(times[k])} | {w} | {inputs.get(acc, '-')} |")
    timed = {k[1:] for k in times}
    for acc in sorted((k for k in worst if k not in timed), key=lambda k: (k[0], k[1], k[2], k[3], -worst[k], k[4])):
        # accuracy records carry no op: dw is the backward's
        out.append(f"| bwd | {acc[0]} | {acc[1]} | {acc[2]} | {acc[3]} | `{acc[4]}` | - | 0 | {worst[acc]:.3f} | {inputs[acc]} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="cake-evidence/1 files")
    print(table(ap.parse_args(argv).files))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
