"""POST /api/evidence: token, body limits, validation, idempotence, nothing written on any error."""

from __future__ import annotations

import json

import pytest
from service_support import ARCH, MAX_BODY, TOKEN, make_app, store_counts

AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/x-ndjson"}


def new_evidence(run_id: str = "synthetic-ingest-1", T: int = 777) -> str:
    """A small valid SYNTHETIC file: a run (on the fixture's GPU model: evidence of another model would be
    shown apart, test_service_gpu_models.py) and one timing record of a program already stored."""
    recs = [
        {"schema": "cake-evidence/1", "kind": "run", "run_id": run_id, "source": "measured", "arch": ARCH,
         "gpu": "SYNTHETIC (no GPU: test fixture)", "sm_count": 132, "started": "2026-12-02T11:00:00Z", "note": "SYNTHETIC ingest test"},
        {"schema": "cake-evidence/1", "kind": "timing", "run_id": run_id, "arch": ARCH, "program": "bwd.pair.p2x.w8",
         "op": "bwd", "H": 4096, "T": T, "x_dtype": "bf16", "w_dtype": "fp32", "form": "plain", "session": "s1",
         "round": 0, "position": 0, "copy": 0, "timer": "cupti", "l2": "cold", "samples_us": [9.5, 9.6, 9.4]},
    ]
    return "\n".join(json.dumps(r) for r in recs) + "\n"


def test_ingest_adds_records_and_is_idempotent(client, store_url):
    before = store_counts(store_url)
    r = client.post("/api/evidence", content=new_evidence(), headers=AUTH)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["records"] == 2 and body["result"]["added"] == {"run": 1, "timing": 1}
    after = store_counts(store_url)
    assert after["run"] == before["run"] + 1 and after["timing"] == before["timing"] + 1
    # the same body again adds nothing and still succeeds
    r2 = client.post("/api/evidence", content=new_evidence(), headers=AUTH)
    assert r2.status_code == 200, r2.text
    assert sum(r2.json()["result"]["added"].values()) == 0
    assert store_counts(store_url) == after


def test_ingested_evidence_shows_on_the_key_page_at_once(client):
    # the per-arch cache is dropped by an ingest: the new T appears without waiting for the TTL
    url = f"/api/key/{ARCH}/bwd/4096/fp32/plain/det"
    assert 777 not in {t["T"] for t in client.get(url).json()["timing"]}
    assert client.post("/api/evidence", content=new_evidence(), headers=AUTH).status_code == 200
    assert 777 in {t["T"] for t in client.get(url).json()["timing"]}


def test_no_token_configured_disables_ingest(store_url, monkeypatch):
    from fastapi.testclient import TestClient

    monkeypatch.delenv("CAKE_API_TOKEN", raising=False)
    before = store_counts(store_url)
    with TestClient(make_app(store_url, token=None)) as c:
        r = c.post("/api/evidence", content=new_evidence(), headers=AUTH)
    assert r.status_code == 403
    assert "CAKE_API_TOKEN" in r.json()["detail"]
    assert store_counts(store_url) == before


def test_token_read_from_environment(store_url, monkeypatch):
    from fastapi.testclient import TestClient

    monkeypatch.setenv("CAKE_API_TOKEN", "env-token-xyz")
    with TestClient(make_app(store_url, token=None)) as c:
        assert c.post("/api/evidence", content=new_evidence(), headers=AUTH).status_code == 401
        ok = c.post("/api/evidence", content=new_evidence(),
                    headers={"Authorization": "Bearer env-token-xyz"})
        assert ok.status_code == 200, ok.text


@pytest.mark.parametrize("header", [
    None, "", "Bearer", "Bearer ", f"Basic {TOKEN}", f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}",
    "Bearer " + TOKEN.upper(), f"Bearer {TOKEN} extra", "Bearer \u00e9\u00e9\u00e9".encode("latin-1"),
])
def test_missing_or_wrong_token_is_401_and_writes_nothing(client, store_url, header):
    before = store_counts(store_url)
    headers = {"Content-Type": "application/x-ndjson"}
    if header is not None:
        headers["Authorization"] = header
    r = client.post("/api/evidence", content=new_evidence(), headers=headers)
    assert r.status_code == 401, (header, r.text)
    assert r.headers.get("www-authenticate") == "Bearer"
    assert store_counts(store_url) == before


def test_token_checked_before_the_body_is_read(client):
    # an oversize body with a wrong token is refused for the token (401), not for its size
    r = client.post("/api/evidence", content=b"x" * (MAX_BODY + 10), headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401


def test_oversize_declared_body_is_413(client, store_url):
    before = store_counts(store_url)
    big = new_evidence() + (" " * (MAX_BODY + 1))
    r = client.post("/api/evidence", content=big, headers=AUTH)
    assert r.status_code == 413
    assert str(MAX_BODY) in r.json()["detail"]
    assert store_counts(store_url) == before


def test_oversize_streamed_body_without_length_is_413(client, store_url):
    """Chunked upload (no Content-Length): refused once the running total passes the limit."""
    before = store_counts(store_url)
    sent = []

    def chunks():
        yield new_evidence().encode()
        for _ in range(64):
            sent.append(1)
            yield b" " * 16384

    r = client.post("/api/evidence", content=chunks(), headers=AUTH)
    assert r.status_code == 413
    assert store_counts(store_url) == before


def test_body_exactly_at_limit_is_read(client):
    body = new_evidence()
    body = body + "\n" * (MAX_BODY - len(body.encode()))
    assert len(body.encode()) == MAX_BODY
    r = client.post("/api/evidence", content=body, headers=AUTH)
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("mutate, line, field", [
    (lambda recs: recs[1].pop("T"), 2, "T"),
    (lambda recs: recs[1].update(T="many"), 2, "T"),
    (lambda recs: recs[1].update(samples_us=[1.0, -2.0]), 2, "samples_us"),
    (lambda recs: recs[0].update(source="rumour"), 1, "source"),
    (lambda recs: recs[0].update(schema="cake-evidence/2"), 1, "schema"),
])
def test_malformed_record_is_422_naming_line_and_field(client, store_url, mutate, line, field):
    before = store_counts(store_url)
    recs = [json.loads(x) for x in new_evidence().splitlines()]
    mutate(recs)
    r = client.post("/api/evidence", content="\n".join(json.dumps(x) for x in recs), headers=AUTH)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail["line"] == line and detail["field"] == field, detail
    assert f"api-ingest:{line}:" in detail["message"]
    assert store_counts(store_url) == before


def test_bad_third_line_writes_nothing_of_the_good_first_two(client, store_url):
    before = store_counts(store_url)
    body = new_evidence(run_id="synthetic-ingest-partial") + "{not json\n"
    r = client.post("/api/evidence", content=body, headers=AUTH)
    assert r.status_code == 422
    assert r.json()["detail"]["line"] == 3
    assert store_counts(store_url) == before


@pytest.mark.parametrize("body", [b"", b"   \n\n", b"\xff\xfe{}", b"[]", b"null", b"{}", b"\x00" * 10])
def test_empty_or_garbage_body_is_422(client, store_url, body):
    before = store_counts(store_url)
    r = client.post("/api/evidence", content=body, headers=AUTH)
    assert r.status_code == 422, (body, r.text)
    assert store_counts(store_url) == before


def test_unknown_run_reference_is_422(client, store_url):
    recs = [json.loads(x) for x in new_evidence().splitlines()][1:]
    recs[0]["run_id"] = "no-such-run"
    before = store_counts(store_url)
    r = client.post("/api/evidence", content=json.dumps(recs[0]), headers=AUTH)
    assert r.status_code == 422
    assert "no-such-run" in r.json()["detail"]["message"]
    assert store_counts(store_url) == before


def test_store_dependent_errors_name_the_line_as_sent(client, store_url):
    # Blank lines and a repeated record before the bad one: the 422 names the client's line 6.
    run, timing = new_evidence().splitlines()
    orphan = json.dumps(dict(json.loads(timing), run_id="no-such-run", T=778))
    body = "\n".join([run, "", timing, timing, "", orphan]) + "\n"
    before = store_counts(store_url)
    r = client.post("/api/evidence", content=body, headers=AUTH)
    assert r.status_code == 422, r.text
    assert r.json()["detail"]["line"] == 6 and r.json()["detail"]["field"] == "run_id"
    assert store_counts(store_url) == before


def test_unkeepable_unknown_key_is_reported_not_refused(client, store_url):
    run, timing = new_evidence(run_id="synthetic-ingest-nul").splitlines()
    body = run + "\n" + json.dumps(dict(json.loads(timing), comment="a\x00b")) + "\n"
    r = client.post("/api/evidence", content=body, headers=AUTH)
    assert r.status_code == 200, r.text
    assert r.json()["records"] == 2
    assert [(d["line"], d["key"]) for d in r.json()["result"]["dropped_keys"]] == [(2, "comment")]


def test_bad_upload_name_is_rejected(client):
    r = client.post("/api/evidence?name=../../etc/passwd", content=new_evidence(), headers=AUTH)
    assert r.status_code == 422


def test_token_comparison_is_constant_time_by_construction():
    """The comparison goes through hmac.compare_digest (not ==): checked on the function itself."""
    import inspect

    from api import ingest

    src = inspect.getsource(ingest.check_token)
    assert "hmac.compare_digest" in src and "== configured" not in src


def test_concurrent_identical_uploads_store_the_records_once(store_url):
    """16 clients send the same new file at once to the real server: all succeed, one adds it."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from api.serving import running_server

    before = store_counts(store_url)
    body = new_evidence(run_id="synthetic-concurrent")
    with running_server(make_app(store_url)) as base:
        def send(_):
            return httpx.post(base + "/api/evidence", content=body, headers=AUTH, timeout=60)

        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(send, range(16)))
    assert [r.status_code for r in answers] == [200] * 16, [r.text for r in answers if r.status_code != 200]
    added = [sum(r.json()["result"]["added"].values()) for r in answers]
    assert sorted(added) == [0] * 15 + [2]
    after = store_counts(store_url)
    assert after["run"] == before["run"] + 1 and after["timing"] == before["timing"] + 1
