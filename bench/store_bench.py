"""Benchmark of the evidence store (issue 3): import 1,000,000 timing samples, query one arch.

    python bench/store_bench.py [--dir DIR] [--db EMPTY_STORE_URL] [--json] [--no-check]

Generates `measurements_db.synthetic.generate_evidence(**bench_layout())` (56 workloads x 4 T x 5
programs x 4 sessions x 3 rounds x 67 replays plus A/A copies = 1,020,544 samples in 15,232 blocks,
and 100,800 per-input accuracy records), writes it as one JSONL file, imports it into a fresh
SQLite store, re-imports it (adds nothing), and times `queries.workload_evidence` for every key of
the arch (first call and best of three). Targets on the 2-core machine: import <= 60 s, query
<= 1 s. With the check (default) the query's result is compared with the reference aggregator.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=None, help="work directory (default: a temporary one, removed)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--db", default=None, metavar="URL",
                    help="an EMPTY store to benchmark instead of a fresh SQLite file (e.g. a new PostgreSQL database)")
    ap.add_argument("--no-check", action="store_true", help="skip the comparison with the reference aggregator")
    args = ap.parse_args(argv)

    from measurements_db import aggregates, queries
    from measurements_db.engine import open_store
    from measurements_db.evidence_io import export_evidence, import_evidence
    from measurements_db.synthetic import bench_layout, generate_evidence

    rows: list[dict] = []

    def row(phase: str, seconds: float, note: str = "", target: float | None = None) -> None:
        rows.append({"phase": phase, "seconds": round(seconds, 3), "note": note,
                     "target_s": target, "ok": None if target is None else seconds <= target})

    tmp = tempfile.TemporaryDirectory() if args.dir is None else None
    work = Path(args.dir or tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    layout = bench_layout()
    records = generate_evidence(**layout)
    samples = sum(len(r.get("samples_us", ())) for r in records if r["kind"] == "timing")
    blocks = sum(r["kind"] == "timing" for r in records)
    acc = sum(r["kind"] == "accuracy" for r in records)
    row("generate synthetic evidence", time.perf_counter() - t,
        f"{samples:,} timing samples in {blocks:,} blocks, {acc:,} accuracy records")

    path = work / "bench-evidence.jsonl"
    t = time.perf_counter()
    with path.open("w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    row("write JSONL", time.perf_counter() - t, f"{path.stat().st_size / 1e6:.1f} MB")

    db = work / "bench-store.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    store = open_store(args.db or f"sqlite:///{db}")
    if queries.stats(store)["totals"]["runs"]:
        print(f"error: {store.display_url} is not empty; the benchmark needs an empty store", file=sys.stderr)
        return 2
    t = time.perf_counter()
    res = import_evidence(store, path)
    row(f"import into a fresh {store.dialect} store", time.perf_counter() - t,
        f"added {res.added['timing']:,} blocks, {res.added['accuracy']:,} accuracy", target=60.0)
    t = time.perf_counter()
    again = import_evidence(store, path)
    row("re-import the same file", time.perf_counter() - t, f"added {again.total_added} records")

    arch = layout.get("arch", "sm_90a")
    t = time.perf_counter()
    ev = queries.workload_evidence(store, arch)
    first = time.perf_counter() - t
    points = sum(len(e.timing) for e in ev.values())
    row(f"workload_evidence({arch}), first call", first,
        f"{len(ev)} workloads, {points:,} timing points", target=1.0)
    best = min(_timed(lambda: queries.workload_evidence(store, arch)) for _ in range(3))
    row(f"workload_evidence({arch}), best of 3", best, "", target=1.0)
    if not args.no_check:
        t = time.perf_counter()
        ref = {k: v for k, v in aggregates.aggregate_records(records).items() if k.arch == arch}
        row("reference aggregate_records (in memory)", time.perf_counter() - t,
            "store result equal: " + ("yes" if ref == ev else "NO"))
        if ref != ev:
            rows[-1]["ok"] = False
    t = time.perf_counter()
    text = export_evidence(store)
    row("export the whole store", time.perf_counter() - t, f"{len(text) / 1e6:.1f} MB")
    store.close()
    if store.dialect == "sqlite":
        size = sum(Path(str(db) + s).stat().st_size for s in ("", "-wal") if Path(str(db) + s).exists())
        row("store size on disk", 0.0, f"{size / 1e6:.1f} MB")
    if tmp is not None:
        tmp.cleanup()

    if args.json:
        print(json.dumps({"cpus": os.cpu_count(), "rows": rows}, indent=1))
    else:
        table = Table(title=f"evidence store benchmark ({os.cpu_count()} CPUs, {store.dialect})")
        for c in ("phase", "seconds", "target", "note"):
            table.add_column(c, justify="right" if c in ("seconds", "target") else "left")
        for r in rows:
            tgt = "" if r["target_s"] is None else (f"<= {r['target_s']:g} s " + ("[green]ok[/]" if r["ok"] else "[red]MISSED[/]"))
            table.add_row(r["phase"], f"{r['seconds']:.3f}" if r["seconds"] else "", tgt, r["note"])
        Console().print(table)
    return 0 if all(r["ok"] is not False for r in rows) else 1


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    sys.exit(main())
