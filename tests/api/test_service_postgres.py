"""The service on PostgreSQL (the team store): pages, API and ingest against a fresh database
created on the server named by CAKE_TEST_PG_URL, dropped afterwards."""

from __future__ import annotations

import pytest
from service_support import ARCH, EVIDENCE, TOKEN, make_app

pytestmark = pytest.mark.postgres


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
