"""No request can name a file or reach SQL; the server binds loopback by default."""

from __future__ import annotations

import pytest
from service_support import ARCH, TOKEN, store_counts

SECRET_MARKERS = (b"root:x:0:0", b"[boot loader]", b"PRIVATE KEY", b"SQLite format 3")

TRAVERSAL_URLS = [
    "/static/../../../../etc/passwd",
    "/static/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
    "/static/%2e%2e/%2e%2e/etc/passwd",
    "/static/%2Fetc%2Fpasswd",
    "/static/....//....//etc/passwd",
    "/static/plotly.min.js/../../../etc/passwd",
    "/static/..\\..\\etc\\passwd",
    "/static/__init__.py",
    "/static/app.py",
    "/static/templates",
    "/api/tables/..%2F..%2F..%2Fetc%2Fpasswd",
    "/api/tables/runtime:..%2F..%2Fetc%2Fpasswd",
    "/api/tables/runtime:/etc/passwd",
    "/api/tables/%2Fetc%2Fpasswd",
    "/api/tables/runtime:sm_00a%00.json",
    f"/api/arch/{ARCH}?table=/etc/passwd",
    f"/api/arch/{ARCH}?table=runtime:../../etc/passwd",
    f"/api/arch/{ARCH}?table=file:///etc/passwd",
    "/api/arch/..%2F..%2Fetc%2Fpasswd",
    "/api/arch/sm_00a%2F..%2F..%2Fetc",
    "/api/diff?old=/etc/passwd&new=/etc/shadow",
    "/api/diff?old=runtime:sm_00a&new=../../cake_kernels/routes/sm_90a.json",
    "/api/diff?old=runtime:sm_00a&new=published:sm_00a/../../../../etc/passwd",
    "/diff?old=/etc/passwd&new=runtime:sm_00a",
    "/api/runs/..%2F..%2Fetc%2Fpasswd",
    "/api/runs/%2Fetc%2Fpasswd",
    f"/key/{ARCH}/bwd/4096/fp32/plain/det?table=/etc/passwd",
    "/arch/..%2F..%2Fetc%2Fpasswd",
    "/runs/..%2F..%2Fetc%2Fpasswd",
    "/api/key/sm_00a/bwd/4096/fp32/..%2F..%2Fetc/det",
]


@pytest.mark.parametrize("url", TRAVERSAL_URLS)
def test_path_traversal_is_refused(ro_client, url):
    r = ro_client.get(url)
    assert r.status_code in (404, 422), (url, r.status_code, r.text[:200])
    for m in SECRET_MARKERS:
        assert m not in r.content


def test_only_the_three_named_static_files_are_served(ro_client):
    for name in ("plotly.min.js", "style.css", "dashboard.js"):
        assert ro_client.get(f"/static/{name}").status_code == 200
    for name in ("base.html", "index.html", "style.css.bak", "STYLE.CSS", "plotly.js", "%2e%2e"):
        assert ro_client.get(f"/static/{name}").status_code in (404, 422), name


SQLI = ["x' OR '1'='1", "synthetic-r1'; DROP TABLE runs; --", "1; DELETE FROM timing_blocks", "\" OR 1=1 --",
        "synthetic-r1' UNION SELECT * FROM sqlite_master --"]


@pytest.mark.parametrize("payload", SQLI)
def test_sql_in_parameters_is_data_not_code(client, store_url, payload):
    from urllib.parse import quote

    before = store_counts(store_url)
    for url in (f"/api/runs/{quote(payload, safe='')}", f"/api/runs?arch={quote(payload)}",
                f"/runs/{quote(payload, safe='')}", f"/api/arch/{quote(payload, safe='')}",
                f"/api/diff?old={quote(payload)}&new=runtime:{ARCH}"):
        r = client.get(url)
        assert r.status_code in (404, 422), (url, r.status_code)
    assert store_counts(store_url) == before
    # the store still answers normally
    assert client.get("/api/runs/synthetic-r1").status_code == 200


def test_run_id_is_looked_up_not_interpolated(client, store_url):
    """A syntactically valid run id that looks like SQL is simply not found."""
    r = client.get("/api/runs/synthetic-r1--")
    assert r.status_code == 404


def test_ingest_name_cannot_name_a_path(client):
    for name in ("../x", "/etc/passwd", "a/b", "..", ".hidden", "x" * 101):
        r = client.post(f"/api/evidence?name={name}", content=b"{}",
                        headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 422, name


def test_no_endpoint_accepts_sql_or_paths_in_the_schema(ro_client):
    """Every string parameter of the OpenAPI schema is an enum or has a restrictive pattern."""
    spec = ro_client.get("/openapi.json").json()
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            for p in op.get("parameters", []):
                sch = p["schema"]
                alts = sch.get("anyOf", [sch])
                for a in alts:
                    if a.get("type") == "string":
                        assert "enum" in a or "pattern" in a, (path, method, p["name"])


def test_serve_binds_loopback_by_default():
    import argparse

    from cake_router.commands import serve_cmd
    from cake_router.commands.serve_cmd import is_loopback

    parser = argparse.ArgumentParser()
    serve_cmd.register(parser.add_subparsers())
    args = parser.parse_args(["serve"])
    assert args.host == "127.0.0.1" and is_loopback(args.host)
    assert args.port == 8000
    assert not is_loopback("0.0.0.0") and is_loopback("::1") and is_loopback("localhost")
