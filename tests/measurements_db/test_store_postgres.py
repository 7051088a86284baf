"""The store on a real PostgreSQL server (CAKE_TEST_PG_URL; .ci/run starts one). No SQLite stand-in."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from measurements_db import aggregates, queries
from measurements_db.engine import SCHEMA_VERSION, StoreError, open_store
from measurements_db.evidence_io import EvidenceError, export_evidence, import_evidence
from measurements_db.synthetic import generate_evidence
from tests.measurements_db.conftest import SAMPLE

pytestmark = pytest.mark.postgres


def test_postgres_store_migrates_imports_and_skips_reimports(pg_url):
    st = open_store(pg_url)
    assert st.dialect == "postgresql" and st.upgraded_from == 0
    first = import_evidence(st, SAMPLE)
    assert first.added == {"run": 2, "program": 2, "timing": 2, "accuracy": 3}
    again = import_evidence(st, SAMPLE)
    assert sum(again.added.values()) == 0
    st.close()
    assert open_store(pg_url).upgraded_from is None


def test_postgres_export_round_trip_and_query_equality(pg_url, tmp_path):
    recs = generate_evidence(runs=2, accuracy_aggregates=True, published=True, seed=9, forms=("plain", "residual"))
    st = open_store(pg_url)
    import_evidence(st, recs)
    out = export_evidence(st)
    lite = open_store(f"sqlite:///{tmp_path / 'x.sqlite'}")
    (tmp_path / "e.jsonl").write_text(out)
    import_evidence(lite, tmp_path / "e.jsonl")
    assert export_evidence(lite) == out  # the same bytes from either dialect
    ref = {k: v for k, v in aggregates.aggregate_records(recs).items() if k.arch == "sm_90a"}
    assert queries.workload_evidence(st, "sm_90a") == ref == queries.workload_evidence(lite, "sm_90a")
    assert queries.stats(st)["totals"] == queries.stats(lite)["totals"]
    st.close()
    lite.close()


def test_postgres_bad_file_writes_nothing(pg_url, tmp_path):
    st = open_store(pg_url)
    lines = SAMPLE.read_text().splitlines()
    lines[4] = lines[4].replace('"family": "gaussian"', '"family": "uniform"')
    (tmp_path / "bad.jsonl").write_text("\n".join(lines))
    with pytest.raises(EvidenceError) as info:
        import_evidence(st, tmp_path / "bad.jsonl")
    assert info.value.line == 5 and info.value.field == "family"
    with st.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM runs")).scalar() == 0
    st.close()


def test_postgres_stored_values_and_aggregate_groups_are_checked(pg_url):
    # The checks against stored rows compare bytea samples, JSON extras and doubles as PostgreSQL returns them.
    import json

    recs = [json.loads(x) for x in SAMPLE.read_text().splitlines() if x.strip()]
    st = open_store(pg_url)
    import_evidence(st, recs)
    assert sum(import_evidence(st, recs).added.values()) == 0  # a repeat is no conflict
    with pytest.raises(EvidenceError, match="already in the store with another samples_us"):
        import_evidence(st, [recs[0], dict(recs[3], samples_us=[999.0])])
    agg = next(r for r in recs if r["kind"] == "accuracy" and "seed" not in r and r["run_id"] == recs[0]["run_id"])
    with pytest.raises(EvidenceError, match="second aggregate"):
        import_evidence(st, [recs[0], dict(agg, emitted="again")])
    with st.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM accuracy_records")).scalar() == 3
    st.close()


def test_postgres_newer_schema_is_refused(pg_url):
    st = open_store(pg_url)
    with st.write() as conn:
        conn.execute(text("UPDATE cake_meta SET value = '99' WHERE key = 'schema_version'"))
    st.close()
    with pytest.raises(StoreError, match=f"schema version 99.*version {SCHEMA_VERSION}"):
        open_store(pg_url)


def test_postgres_unreachable_server_is_a_clear_error():
    with pytest.raises(StoreError, match="cannot connect to postgresql\\+psycopg://nobody@127.0.0.1:1/x"):
        open_store("postgresql+psycopg://nobody@127.0.0.1:1/x")
