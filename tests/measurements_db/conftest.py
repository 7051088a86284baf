"""Fixtures of the store's tests: an isolated cache directory and a fresh SQLite store (`pg_url`, a
fresh PostgreSQL database, is in tests/conftest.py)."""

from __future__ import annotations

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
