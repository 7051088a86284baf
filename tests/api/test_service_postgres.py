"""The service on PostgreSQL (the team store): pages, API and ingest against a fresh database
created on the server named by CAKE_TEST_PG_URL, dropped afterwards."""

from __future__ import annotations

import uuid

import pytest
from service_support import ARCH, EVIDENCE, TOKEN, make_app

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def pg_url():
    import os

    import psycopg
    from sqlalchemy.engine import make_url

    base = make_url(os.environ["CAKE_TEST_PG_URL"])
    name = f"cake_api_test_{uuid.uuid4().hex[:10]}"
    admin = dict(host=base.host, port=base.port, user=base.username, password=base.password,
                 dbname=base.database or "postgres", autocommit=True)
    with psycopg.connect(**admin) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(**admin) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_service_on_postgres(pg_url):
    from fastapi.testclient import TestClient

    from measurements_db.engine import open_store
    from measurements_db.evidence_io import import_evidence

    store = open_store(pg_url)
    try:
        import_evidence(store, EVIDENCE, name="synthetic-fixture")
    finally:
        store.close()
    with TestClient(make_app(pg_url)) as c:
        v = c.get(f"/api/key/{ARCH}/bwd/4096/fp32/plain/det").json()
        assert v["timing"] and v["accuracy"]
        assert c.get(f"/key/{ARCH}/bwd/4096/fp32/plain/det").status_code == 200
        assert c.get("/runs/synthetic-r1").status_code == 200
        body = EVIDENCE.read_text().splitlines()[0].replace("synthetic-r1", "synthetic-pg-ingest") + "\n"
        auth = {"Authorization": f"Bearer {TOKEN}"}
        r = c.post("/api/evidence", content=body, headers=auth)
        assert r.status_code == 200 and r.json()["result"]["added"] == {"run": 1}
        r = c.post("/api/evidence", content=body, headers=auth)
        assert r.status_code == 200 and sum(r.json()["result"]["added"].values()) == 0
        bad = c.post("/api/evidence", content=body.replace('"sm_count": 132', '"sm_count": "many"'), headers=auth)
        assert bad.status_code == 422 and bad.json()["detail"]["field"] == "sm_count"
        assert {x["run_id"] for x in c.get("/api/runs").json()} == {"synthetic-r1", "synthetic-r2", "synthetic-pg-ingest"}
