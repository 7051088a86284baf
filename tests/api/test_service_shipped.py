"""The service on what the repository ships: the published-evidence bundle imported into a fresh
SQLite store and the shipped route tables (runtime and published). Every key of every table
renders, as page and as JSON; tables solved from published-only evidence are labelled."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUNDLES = sorted((REPO / "measurements_db" / "data").glob("*.jsonl.gz"))


@pytest.fixture(scope="module")
def shipped_client(tmp_path_factory):
    from fastapi.testclient import TestClient

    from api.app import create_app
    from api.source import default_table_entries
    from measurements_db.engine import open_store
    from measurements_db.evidence_io import import_evidence

    if not BUNDLES or not default_table_entries():
        pytest.skip("no shipped evidence bundle or no shipped route table in this checkout")
    url = f"sqlite:///{tmp_path_factory.mktemp('shipped') / 'store.sqlite'}"
    store = open_store(url)
    try:
        for b in BUNDLES:
            import_evidence(store, b)
    finally:
        store.close()
    with TestClient(create_app(store_url=url, token="t")) as c:
        yield c


def test_every_key_of_every_shipped_table_renders(shipped_client):
    arches = shipped_client.get("/api/arches").json()
    assert arches
    n = 0
    for a in arches:
        for t in a["tables"]:
            assert t["error"] is None, t
            r = shipped_client.get(f"/arch/{a['arch']}?table={t['id']}")
            assert r.status_code == 200, (t["id"], r.text[:300])
            view = shipped_client.get(f"/api/arch/{a['arch']}?table={t['id']}").json()
            for s in view["keys"]:
                k = s["key"]
                path = f"/key/{k['arch']}/{k['op']}/{k['H']}/{k['w_dtype']}/{k['form']}/{k['mode']}?table={t['id']}"
                for url in (path, "/api" + path):
                    r = shipped_client.get(url)
                    assert r.status_code == 200, (url, r.text[:300])
                n += 1
    assert n > 0


def test_tables_routing_unlaunchable_programs_are_labelled(shipped_client):
    for a in shipped_client.get("/api/arches").json():
        if not a["published_only"]:
            continue
        for t in a["tables"]:
            assert t["published_figures"], t["id"]
            page = shipped_client.get(f"/arch/{a['arch']}?table={t['id']}").text
            assert "Published-figures table" in page, t["id"]


def test_every_shipped_run_page_renders(shipped_client):
    for r in shipped_client.get("/api/runs").json():
        assert shipped_client.get(f"/runs/{r['run_id']}").status_code == 200
        assert shipped_client.get(f"/api/runs/{r['run_id']}").status_code == 200


def test_every_table_document_served_verifies(shipped_client):
    from cake_kernels.routes.table import compute_checksum

    for t in shipped_client.get("/api/tables").json():
        doc = shipped_client.get(f"/api/tables/{t['id']}").json()["document"]
        assert compute_checksum(doc) == doc["checksum"], t["id"]
