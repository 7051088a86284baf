"""Migrations (issue 9): every shipped schema version upgrades to head, `db upgrade` is idempotent,
and concurrent upgraders of one fresh store agree.

Each shipped schema version N has a frozen store, data/store-vN.sql (a SQLite dump holding the
contract's sample evidence, written by that release). Today there is one version (revision 0001,
schema version 1), so "upgrade to head" is the no-op upgrade of a v1 store plus the creation of
the schema in an empty database; a future 0002 migration must add store-v2.sql, and the first
test fails until the frozen store of every version is there.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from measurements_db.engine import MIGRATIONS_DIR, SCHEMA_VERSION, open_store
from measurements_db.evidence_io import export_evidence, import_evidence

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
SAMPLE = REPO / "tests" / "measurements_db" / "data" / "evidence-sample.jsonl"


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CAKE_CACHE_DIR", str(tmp_path_factory.mktemp("cake-cache")))
    monkeypatch.delenv("CAKE_DB_URL", raising=False)


def _revisions() -> dict[str, int]:
    """revision id -> the SCHEMA_VERSION its migration module declares, for every shipped migration."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return {s.revision: s.module.SCHEMA_VERSION for s in ScriptDirectory.from_config(cfg).walk_revisions()}


def _frozen_versions() -> list[int]:
    return sorted(int(p.stem.removeprefix("store-v")) for p in DATA.glob("store-v*.sql"))


def _expected_export(tmp_path: Path) -> str:
    ref = open_store(f"sqlite:///{tmp_path / 'ref.sqlite'}")
    try:
        import_evidence(ref, SAMPLE)
        return export_evidence(ref)
    finally:
        ref.close()


def _restore(version: int, path: Path) -> None:
    con = sqlite3.connect(path)
    con.executescript((DATA / f"store-v{version}.sql").read_text())
    con.close()


def test_every_shipped_schema_version_has_a_frozen_store():
    versions = sorted(set(_revisions().values()))
    assert versions == list(range(1, SCHEMA_VERSION + 1)), versions
    assert _frozen_versions() == versions, "add data/store-vN.sql (a store written by version N) for every version"


@pytest.mark.parametrize("version", _frozen_versions())
def test_a_frozen_store_upgrades_to_head_and_keeps_every_record(tmp_path, version):
    path = tmp_path / f"v{version}.sqlite"
    _restore(version, path)
    st = open_store(f"sqlite:///{path}", create=False)
    try:
        assert st.upgraded_from == (None if version == SCHEMA_VERSION else version)
        with st.read() as conn:
            assert conn.execute(text("SELECT value FROM cake_meta WHERE key='schema_version'")).scalar() == str(SCHEMA_VERSION)
            head = [r for r, v in _revisions().items() if v == SCHEMA_VERSION]
            assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() in head
        from alembic.autogenerate import compare_metadata
        from alembic.migration import MigrationContext

        from measurements_db.models import Base

        with st.engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata) == []
        assert export_evidence(st) == _expected_export(tmp_path)
    finally:
        st.close()


def _db_upgrade(url: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "cake_router", "db", "upgrade", "--db", url, "--json"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def _dump(path: Path) -> str:
    con = sqlite3.connect(path)
    try:
        return "\n".join(con.iterdump())
    finally:
        con.close()


def test_db_upgrade_is_idempotent_on_a_store_with_data(tmp_path):
    """`db upgrade` twice on the newest frozen store: nothing to do, and not one byte of content moves."""
    path = tmp_path / "store.sqlite"
    _restore(SCHEMA_VERSION, path)
    before = _dump(path)
    url = f"sqlite:///{path}"
    for _ in range(2):
        assert _db_upgrade(url)["upgraded_from"] is None
        assert _dump(path) == before


def test_an_empty_database_file_upgrades_to_head(tmp_path):
    """A zero-byte file is an empty SQLite database: `db upgrade` creates the schema in it, and a
    second run has nothing to do."""
    path = tmp_path / "empty.sqlite"
    path.write_bytes(b"")
    url = f"sqlite:///{path}"
    assert _db_upgrade(url)["upgraded_from"] == 0
    assert _db_upgrade(url)["upgraded_from"] is None
    st = open_store(url, create=False)
    try:
        import_evidence(st, SAMPLE)
        assert export_evidence(st) == _expected_export(tmp_path)
    finally:
        st.close()


def test_concurrent_upgraders_of_one_fresh_store_agree(tmp_path):
    """Four `db upgrade` processes at once on a store that does not exist yet: all succeed, exactly
    one creates the schema (the others find it under the write lock), and the schema is whole."""
    url = f"sqlite:///{tmp_path / 'race.sqlite'}"
    cmd = [sys.executable, "-m", "cake_router", "db", "upgrade", "--db", url, "--json"]
    procs = [subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [e[-500:] for _, e in outs]
    froms = sorted((json.loads(o)["upgraded_from"] for o, _ in outs), key=lambda v: -1 if v is None else v)
    assert froms == [None, None, None, 0], froms
    st = open_store(url, create=False)
    try:
        with st.read() as conn:
            assert conn.execute(text("SELECT count(*) FROM cake_meta WHERE key='schema_version'")).scalar() == 1
            assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1
    finally:
        st.close()


@pytest.mark.postgres
def test_db_upgrade_is_idempotent_on_postgresql(tmp_path, pg_url):
    assert _db_upgrade(pg_url)["upgraded_from"] == 0
    st = open_store(pg_url)
    import_evidence(st, SAMPLE)
    before = export_evidence(st)
    st.close()
    for _ in range(2):
        assert _db_upgrade(pg_url)["upgraded_from"] is None
    st = open_store(pg_url)
    assert export_evidence(st) == before == _expected_export(tmp_path)
    st.close()
