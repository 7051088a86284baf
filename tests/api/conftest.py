"""Fixtures of the service tests: a real SQLite store (temporary file) holding the SYNTHETIC
evidence of tests/api/fixtures, imported through the real importer, and the app built on it.
Constants and helpers live in service_support.py.

(No __init__.py in this folder on purpose: it would make the folder a package named `api` and
shadow the service package itself.)
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from service_support import EVIDENCE, fixture_records, make_app


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
