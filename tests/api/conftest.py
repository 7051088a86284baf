"""Fixtures of the service tests: a real SQLite store (temporary file) holding the SYNTHETIC
evidence of tests/api/fixtures, imported through the real importer, and the app built on it.

(No __init__.py in this folder on purpose: it would make the folder a package named `api` and
shadow the service package itself.)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
EVIDENCE = FIXTURES / "synthetic-evidence.jsonl"
ARCH = "sm_00a"
TABLES = {
    f"runtime:{ARCH}": FIXTURES / "synthetic-table-runtime.json",
    f"published:{ARCH}": FIXTURES / "synthetic-table-published.json",
}
TOKEN = "test-token-0123456789abcdef"
MAX_BODY = 256 * 1024


def fixture_records() -> list[dict]:
    return [json.loads(ln) for ln in EVIDENCE.read_text(encoding="utf-8").splitlines() if ln.strip()]


@pytest.fixture(scope="session")
def seeded_db(tmp_path_factory) -> Path:
    """A SQLite store file with the synthetic evidence, imported once per session."""
    from measurements_db.engine import open_store
    from measurements_db.evidence_io import import_evidence

    path = tmp_path_factory.mktemp("store") / "seeded.sqlite"
    store = open_store(f"sqlite:///{path}")
    try:
        res = import_evidence(store, EVIDENCE, name="synthetic-fixture")
        assert res.total_added == len(fixture_records())
    finally:
        store.close()
    return path


@pytest.fixture
def store_url(seeded_db, tmp_path) -> str:
    """A private copy of the seeded store (tests may write to it)."""
    path = tmp_path / "store.sqlite"
    shutil.copyfile(seeded_db, path)
    return f"sqlite:///{path}"


@pytest.fixture(scope="session")
def shared_store_url(seeded_db) -> str:
    """The seeded store itself, for read-only tests (never write through it)."""
    return f"sqlite:///{seeded_db}"


def make_app(url: str, **kw):
    from api.app import create_app

    kw.setdefault("tables", TABLES)
    kw.setdefault("token", TOKEN)
    kw.setdefault("max_body_bytes", MAX_BODY)
    return create_app(store_url=url, **kw)


@pytest.fixture
def app(store_url):
    return make_app(store_url)


@pytest.fixture
def client(app):
    from fastapi.testclient import TestClient

    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="session")
def ro_client(shared_store_url):
    """A client on the shared seeded store, for tests that only read."""
    from fastapi.testclient import TestClient

    with TestClient(make_app(shared_store_url)) as c:
        yield c


def store_counts(url: str) -> dict:
    """Row counts per kind, straight from the store (what 'nothing written' is checked against)."""
    from measurements_db.engine import open_store
    from measurements_db.evidence_io import export_records

    store = open_store(url)
    try:
        out: dict[str, int] = {}
        for r in export_records(store):
            out[r["kind"]] = out.get(r["kind"], 0) + 1
        return out
    finally:
        store.close()
