"""Faults: a killed import leaves nothing; two importers at once both succeed without duplicates."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from measurements_db.engine import open_store
from measurements_db.evidence_io import export_evidence, import_evidence
from measurements_db.models import AccuracyRecord, AccuracySummary, Run, TimingBlock
from measurements_db.synthetic import generate_evidence

REPO = Path(__file__).resolve().parents[2]


def _write(path: Path, records) -> None:
    with path.open("w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def _counts(url: str) -> dict:
    st = open_store(url)
    with st.read() as conn:
        out = {t.__tablename__: conn.execute(select(func.count()).select_from(t)).scalar()
               for t in (Run, TimingBlock, AccuracyRecord, AccuracySummary)}
    st.close()
    return out


def _import_cmd(url: str, *files: Path) -> list[str]:
    return [sys.executable, "-m", "cake_router", "import", *map(str, files), "--db", url, "--json"]


def test_a_killed_import_leaves_nothing_partial(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    small = tmp_path / "small.jsonl"
    _write(small, generate_evidence(seed=1))
    assert subprocess.run(_import_cmd(url, small), cwd=REPO, capture_output=True).returncode == 0
    before = _counts(url)
    # A file big enough that writing it takes seconds: many blocks and accuracy records.
    big = tmp_path / "big.jsonl"
    _write(big, generate_evidence(arch="sm_100a", H_values=(1024, 2048, 4096, 8192), forms=("plain", "residual"),
                                  T_values=(1, 256, 4096, 65536), sessions=4, rounds=3, samples_per_block=40,
                                  fwd_programs=2, bwd_programs=3, accuracy_inputs=40, seed=2))
    wal = Path(str(tmp_path / "store.sqlite") + "-wal")
    wal_before = wal.stat().st_size if wal.exists() else 0
    proc = subprocess.Popen(_import_cmd(url, big), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    # Kill once the import has written uncommitted pages to the WAL (it is mid-transaction).
    while time.monotonic() < deadline and proc.poll() is None:
        if wal.exists() and wal.stat().st_size > wal_before + 2_000_000:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the import finished before it could be killed: make the file bigger"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert _counts(url) == before
    st = open_store(url)
    with st.read() as conn:
        assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
        assert conn.execute(text("SELECT count(*) FROM workloads WHERE arch = 'sm_100a'")).scalar() == 0
    st.close()
    # The same file imports completely afterwards.
    done = subprocess.run(_import_cmd(url, big), cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert _counts(url)["timing_blocks"] > before["timing_blocks"]


def _concurrent(url: str, tmp_path: Path) -> tuple[list, list]:
    shared = generate_evidence(seed=4, sessions=3, samples_per_block=50, accuracy_inputs=20,
                               H_values=(1024, 2048, 4096), published=True)
    other = generate_evidence(arch="sm_100a", seed=5, sessions=3, samples_per_block=50, accuracy_inputs=20)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _write(a, shared + other[: len(other) // 2])
    meta = [r for r in other if r["kind"] in ("run", "program")]
    # b overlaps a: every record of `shared`, and the runs and programs of `other`.
    _write(b, shared + meta + [r for r in other[len(other) // 2:] if r["kind"] not in ("run", "program")])
    procs = [subprocess.Popen(_import_cmd(url, f), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for f in (a, b)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    return [json.loads(o) for o, _ in outs], shared + other


def _assert_no_duplicates(url, records, tmp_path):
    c = _counts(url)
    assert c["runs"] == sum(r["kind"] == "run" for r in records)
    assert c["timing_blocks"] == sum(r["kind"] == "timing" for r in records)
    assert c["accuracy_records"] == sum(r["kind"] == "accuracy" for r in records)
    # And the store holds exactly those records.
    ref = open_store(f"sqlite:///{tmp_path / 'ref.sqlite'}")
    import_evidence(ref, records)
    st = open_store(url)
    assert export_evidence(st) == export_evidence(ref)
    from measurements_db import aggregates, queries

    for arch in ("sm_90a", "sm_100a"):
        assert queries.workload_evidence(st, arch) == {
            k: v for k, v in aggregates.aggregate_records(records).items() if k.arch == arch}
    st.close()
    ref.close()


def test_two_importers_at_once_both_succeed_without_duplicates(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    results, records = _concurrent(url, tmp_path)
    added = sum(r["files"][0]["added"]["timing"] for r in results)
    assert added == sum(r["kind"] == "timing" for r in records)
    _assert_no_duplicates(url, records, tmp_path)


@pytest.mark.postgres
def test_two_importers_at_once_on_postgresql(pg_url, tmp_path):
    results, records = _concurrent(pg_url, tmp_path)
    assert all(r["failed"] == 0 for r in results)
    _assert_no_duplicates(pg_url, records, tmp_path)


def test_switching_to_wal_waits_for_another_connections_lock(tmp_path):
    """SQLite fails `PRAGMA journal_mode = WAL` at once, without the busy timeout, while another
    connection holds a rollback-mode store's lock: a fresh store opened by two importers together
    failed so ("database is locked"). `enable_wal` waits for the lock, up to its timeout."""
    import sqlite3
    import threading
    import time

    from measurements_db.engine import enable_wal

    path = tmp_path / "fresh.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")
    other = sqlite3.connect(path, isolation_level=None, timeout=5)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        other.execute("PRAGMA journal_mode = WAL")  # what SQLite does: no wait
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        enable_wal(other.cursor(), 0.05)  # gives up after its timeout
    release = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    release.start()
    t0 = time.monotonic()
    enable_wal(other.cursor(), 10.0)
    assert time.monotonic() - t0 >= 0.25
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    release.join()
    holder.close()
    other.close()
