"""Fixtures of the store's tests: an isolated cache directory and fresh SQLite / PostgreSQL stores."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

#: A copy of ../shared/examples/evidence-sample.jsonl (the contract's sample file).
SAMPLE = Path(__file__).resolve().parent / "data" / "evidence-sample.jsonl"


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory, monkeypatch):
    """No test reads the user's cache or $CAKE_DB_URL."""
    monkeypatch.setenv("CAKE_CACHE_DIR", str(tmp_path_factory.mktemp("cake-cache")))
    monkeypatch.delenv("CAKE_DB_URL", raising=False)


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'store.sqlite'}"


@pytest.fixture
def store(sqlite_url):
    from measurements_db.engine import open_store

    st = open_store(sqlite_url)
    yield st
    st.close()


@pytest.fixture
def pg_url():
    """A fresh PostgreSQL database on the server of CAKE_TEST_PG_URL, dropped afterwards."""
    base = os.environ.get("CAKE_TEST_PG_URL")
    if not base:
        pytest.skip("CAKE_TEST_PG_URL is not set")
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"cake_test_{secrets.token_hex(6)}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(base).set(database=name).render_as_string(hide_password=False)
    yield url
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()
