"""Engine and schema: URL precedence, SQLite settings, migrations, version refusal, corruption, embedded default."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest
from sqlalchemy import text

from measurements_db import engine as eng
from measurements_db.bundle import bundle_bytes, write_bundle
from measurements_db.engine import SCHEMA_VERSION, StoreError, open_embedded_store, open_store, resolve_url
from measurements_db.evidence_io import export_evidence, import_evidence, parse_evidence
from tests.measurements_db.conftest import SAMPLE


def test_url_precedence_cli_then_env_then_embedded(monkeypatch, tmp_path):
    monkeypatch.setenv("CAKE_DB_URL", "sqlite:///from-env.sqlite")
    assert resolve_url("sqlite:///from-cli.sqlite") == "sqlite:///from-cli.sqlite"
    assert resolve_url(None) == "sqlite:///from-env.sqlite"
    monkeypatch.delenv("CAKE_DB_URL")
    assert resolve_url(None) == eng.embedded_url()
    assert str(tmp_path.parent) in resolve_url(None) or "cake-cache" in resolve_url(None)


def test_postgres_urls_mean_psycopg_and_bad_urls_are_named():
    assert resolve_url("postgresql://u@h:5432/db") == "postgresql+psycopg://u@h:5432/db"
    assert resolve_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    with pytest.raises(StoreError, match="accepted: sqlite:///PATH"):
        resolve_url("mysql://u@h/db")
    with pytest.raises(StoreError, match="not a URL"):
        resolve_url("just words")
    with pytest.raises(StoreError, match="psycopg"):
        resolve_url("postgresql+psycopg2://u@h/db")


def test_fresh_store_is_migrated_and_reopening_does_nothing(sqlite_url):
    st = open_store(sqlite_url)
    assert st.upgraded_from == 0
    st.close()
    st = open_store(sqlite_url)
    assert st.upgraded_from is None
    with st.read() as conn:
        assert conn.execute(text("SELECT value FROM cake_meta WHERE key='schema_version'")).scalar() == str(SCHEMA_VERSION)
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0001"
    st.close()


def test_sqlite_runs_with_wal_and_foreign_keys(store):
    with store.read() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 60000
    from sqlalchemy.exc import IntegrityError

    with pytest.raises(IntegrityError):
        with store.write() as conn:
            conn.execute(text("INSERT INTO timing_blocks (run_pk, workload_id, program, op, t, session, round, "
                              "position, copy, timer, l2, n_samples) VALUES (999, 999, 'p', 'fwd', 1, 's', 0, 0, 0, "
                              "'cupti', 'cold', 0)"))


def test_migrations_match_the_models(store):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from measurements_db.models import Base

    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    assert diff == []


def test_a_newer_store_is_refused_with_both_versions(sqlite_url):
    st = open_store(sqlite_url)
    with st.write() as conn:
        conn.execute(text("UPDATE cake_meta SET value = :v WHERE key = 'schema_version'"), {"v": str(SCHEMA_VERSION + 6)})
    st.close()
    with pytest.raises(StoreError) as info:
        open_store(sqlite_url)
    msg = str(info.value)
    assert f"schema version {SCHEMA_VERSION + 6}" in msg and f"version {SCHEMA_VERSION} this" in msg


def test_a_corrupted_sqlite_file_is_named_and_left_untouched(tmp_path):
    path = tmp_path / "broken.sqlite"
    garbage = b"this is not a database, just bytes " * 200
    path.write_bytes(garbage)
    with pytest.raises(StoreError) as info:
        open_store(f"sqlite:///{path}")
    assert str(path) in str(info.value) and "untouched" in str(info.value)
    assert path.read_bytes() == garbage


def test_create_false_refuses_a_missing_file(tmp_path):
    with pytest.raises(StoreError, match="no store at"):
        open_store(f"sqlite:///{tmp_path / 'missing.sqlite'}", create=False)
    assert not (tmp_path / "missing.sqlite").exists()


def test_session_is_a_transaction(store):
    from measurements_db.models import Meta

    with pytest.raises(RuntimeError):
        with store.session() as s:
            s.add(Meta(key="probe", value="1"))
            s.flush()
            raise RuntimeError("roll back")
    with store.session() as s:
        assert s.get(Meta, "probe") is None
        s.add(Meta(key="probe", value="2"))
    with store.session() as s:
        assert s.get(Meta, "probe").value == "2"


# ---- bundles and the embedded default -------------------------------------------------------


def test_bundles_are_byte_stable_and_round_trip(tmp_path):
    recs = parse_evidence(SAMPLE.read_text().splitlines(), "s")
    a = write_bundle(recs, tmp_path / "a.jsonl.gz")
    b = write_bundle(list(reversed(recs)), tmp_path / "b.jsonl.gz")
    assert a == b and (tmp_path / "a.jsonl.gz").read_bytes() == (tmp_path / "b.jsonl.gz").read_bytes()
    raw = (tmp_path / "a.jsonl.gz").read_bytes()
    assert raw[4:8] == b"\0\0\0\0"  # gzip mtime field
    assert a == hashlib.sha256(bundle_bytes(recs)).hexdigest()
    assert len(gzip.decompress(raw).decode().splitlines()) == 9


def test_embedded_default_with_an_empty_or_missing_data_dir(tmp_path):
    for d in (tmp_path / "empty", tmp_path / "missing"):
        if d.name == "empty":
            d.mkdir()
        st = open_embedded_store(d, tmp_path / "cache")
        assert st.embedded and export_evidence(st) == ""
        st.close()


def test_embedded_default_is_built_from_bundles_and_rebuilt_when_they_change(tmp_path):
    data, cache = tmp_path / "data", tmp_path / "cache"
    recs = parse_evidence(SAMPLE.read_text().splitlines(), "s")
    write_bundle(recs[:4], data / "one.jsonl.gz")
    st = open_embedded_store(data, cache)
    first_path = Path(st.engine.url.database)
    assert export_evidence(st).count("\n") == 4
    with st.read() as conn:
        assert conn.execute(text("SELECT value FROM cake_meta WHERE key='bundle_sha256'")).scalar() == st.bundle_sha256
    st.close()
    # Same bundles: the same cache file, not rebuilt.
    mtime = first_path.stat().st_mtime_ns
    st = open_embedded_store(data, cache)
    assert Path(st.engine.url.database) == first_path and first_path.stat().st_mtime_ns == mtime
    st.close()
    # A second bundle: a new cache with both, the old one removed.
    write_bundle(recs[4:], data / "two.jsonl.gz")
    st = open_embedded_store(data, cache)
    assert Path(st.engine.url.database) != first_path and not first_path.exists()
    assert export_evidence(st).count("\n") == 9
    st.close()


def test_an_invalid_shipped_bundle_is_a_clear_error(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "bad.jsonl.gz").write_bytes(gzip.compress(b'{"schema": "cake-evidence/1", "kind": "run"}\n'))
    with pytest.raises(StoreError, match=r"bad.jsonl.gz is invalid: .*bad.jsonl.gz:1"):
        open_embedded_store(data, tmp_path / "cache")


def test_shipped_bundles_load_into_the_default_store():
    """Whatever the repository ships must import cleanly (a fresh clone, no database, no GPU)."""
    st = open_store(None)
    assert st.embedded
    files = eng.bundle_files()
    text_ = export_evidence(st)
    if files:
        assert text_
    st.close()


def test_a_truncated_store_is_named_and_left_untouched(tmp_path):
    good = tmp_path / "good.sqlite"
    st = open_store(f"sqlite:///{good}")
    import_evidence(st, SAMPLE)
    st.close()
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(good.read_bytes()[:8192])
    before = cut.read_bytes()
    with pytest.raises(StoreError, match=f"{cut} is not a readable SQLite store"):
        open_store(f"sqlite:///{cut}")
    assert cut.read_bytes() == before


def test_two_processes_building_the_embedded_cache_at_once(tmp_path):
    import subprocess
    import sys

    data, cache = tmp_path / "data", tmp_path / "cache"
    write_bundle(parse_evidence(SAMPLE.read_text().splitlines(), "s"), data / "sample.jsonl.gz")
    code = ("import sys; from measurements_db.engine import open_embedded_store as o; "
            "from measurements_db.evidence_io import export_evidence as e; "
            f"s = o({str(data)!r}, {str(cache)!r}); print(s.engine.url.database, len(e(s).splitlines()))")
    repo = Path(__file__).resolve().parents[2]
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    assert len({o for o, _ in outs}) == 1 and outs[0][0].split()[1] == "9"
    assert sorted(p.name for p in cache.glob("*.sqlite")) == [Path(outs[0][0].split()[0]).name]
