"""Retraction (session 9, 2026-12-03): Liger-Kernel's backward at the head forms, rounds 4-9.

Until commit 96dcf0d the harness gave Liger's `rms_norm_backward` the [T, heads, 256] input, not the
2-D view its `rms_norm_forward` returns (which Liger's own autograd function saves). The backward
kernel indexes X by `X.stride(0)` as rows of H and never reshapes it, so with heads x 256 as the row
stride it read past the end of x: non-finite or huge dw in every head-form accuracy record
(err/tol 3.7e5 to 1e30) and, from 16,384 rows, an illegal address. Its backward and `2xfwd+bwd` times
there timed those wrong reads. Liger's forward reshapes its input itself: its forward times stand.

This moves Liger's head-form `bwd` and `2xfwd+bwd` timing records and its head-form accuracy records
out of the shipped bundles (`measurements_db/data/`, loaded into the embedded store) into
`measurements_db/retracted/` (same names, with the runs and programs they cite, importable on their
own), so nothing is lost and nothing wrong is pooled. Run from the repository root; running it again
changes nothing.
"""

from __future__ import annotations

from pathlib import Path

from measurements_db.bundle import merge_records, read_bundle, write_bundle

DATA, RETRACTED = Path("measurements_db/data"), Path("measurements_db/retracted")
HEAD_FORMS = ("heads_strided", "heads_contiguous")


def retracted(rec: dict) -> bool:
    if rec.get("program") != "peer.liger" or rec.get("form") not in HEAD_FORMS:
        return False
    return rec["kind"] == "accuracy" or (rec["kind"] == "timing" and rec.get("op") in ("bwd", "2xfwd+bwd"))


def main() -> None:
    for path in sorted(DATA.glob("h200-*.jsonl.gz")):
        recs = read_bundle(path)
        out = [r for r in recs if retracted(r)]
        if not out:
            continue
        runs = {r["run_id"] for r in out}
        cited = [r for r in recs if (r["kind"] == "run" and r["run_id"] in runs)
                 or (r["kind"] == "program" and r["name"] == "peer.liger")]
        dest = RETRACTED / path.name
        old = read_bundle(dest) if dest.exists() else []
        write_bundle(merge_records([(str(dest), old), (str(path), cited + out)]), dest)
        write_bundle([r for r in recs if not retracted(r)], path)
        print(f"{path}: {len(out)} records moved to {dest}")


if __name__ == "__main__":
    main()
