"""An arch measured on two GPU models (sm_90a: H100 and H200 share the route key's arch): the service
shows one model's evidence at a time, never the two pooled, as the CLI refuses to (`--gpu`)."""

from __future__ import annotations

import copy

import pytest
from service_support import ARCH, fixture_records, make_app

from measurements_db.aggregates import WorkloadKey, aggregate_records

KEY = f"{ARCH}/bwd/4096/fp32/plain/det"
GPU_A = "SYNTHETIC (no GPU: test fixture)"
GPU_B = "SYNTHETIC B (slower card)"


def _second_model(records: list[dict]) -> list[dict]:
    """The fixture's runs again as runs of another model, every timing twice as long."""
    out = []
    for r in records:
        if r["kind"] not in ("run", "timing", "accuracy"):
            continue
        r = copy.deepcopy(r)
        r["run_id"] += "-b"
        if r["kind"] == "run":
            r["gpu"] = GPU_B
        if r["kind"] == "timing":
            r["samples_us"] = [2 * v for v in r["samples_us"]]
        out.append(r)
    return out


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    from fastapi.testclient import TestClient

    from measurements_db.engine import open_store
    from measurements_db.evidence_io import import_evidence

    records = fixture_records()
    assert {r["gpu"] for r in records if r["kind"] == "run"} == {GPU_A}
    url = f"sqlite:///{tmp_path_factory.mktemp('two-models') / 'store.sqlite'}"
    store = open_store(url)
    try:
        import_evidence(store, records + _second_model(records), name="two-models")
    finally:
        store.close()
    with TestClient(make_app(url)) as c:
        yield c, records


def test_arches_list_both_models_with_their_runs(two_models):
    c, _ = two_models
    (a,) = [a for a in c.get("/api/arches").json() if a["arch"] == ARCH]
    assert a["gpus"] == {GPU_A: 2, GPU_B: 2} and a["runs"] == 4


def test_key_naming_no_model_is_refused_with_both_named(two_models):
    c, _ = two_models
    r = c.get(f"/api/key/{KEY}")
    assert r.status_code == 409
    assert GPU_A in r.json()["detail"] and GPU_B in r.json()["detail"] and "?gpu=" in r.json()["detail"]
    page = c.get(f"/key/{KEY}")
    assert page.status_code == 409 and "gpu=SYNTHETIC+B" in page.text and "gpu=SYNTHETIC+%28no+GPU" in page.text


def test_key_shows_one_models_evidence_only(two_models):
    """Each model's latencies are its own runs' aggregate: pooled, every median would mix 1x and 2x."""
    c, records = two_models
    for gpu, scale, recs in ((GPU_A, 1, records), (GPU_B, 2, [r for r in records if r["kind"] == "program"] + _second_model(records))):
        v = c.get(f"/api/key/{KEY}", params={"gpu": gpu}).json()
        assert v["gpu"] == gpu and v["timing"]
        ref = aggregate_records(recs)[WorkloadKey(ARCH, 4096, "bf16", "fp32", "plain")]
        for t in v["timing"]:
            agg = ref.timing[(t["program"], "bwd", t["T"])]
            assert t["median_us"] == pytest.approx(agg.median_us, rel=1e-12) and t["n"] == agg.n
        w = c.get(f"/api/key/{KEY}/windows/0", params={"gpu": gpu})
        assert w.status_code == 200
    a = c.get(f"/api/key/{KEY}", params={"gpu": GPU_A}).json()["timing"]
    b = c.get(f"/api/key/{KEY}", params={"gpu": GPU_B}).json()["timing"]
    assert [t["median_us"] * 2 for t in a] == pytest.approx([t["median_us"] for t in b], rel=1e-9)
    page = c.get(f"/key/{KEY}", params={"gpu": GPU_B})
    assert page.status_code == 200 and 'data-testid="gpu-picker"' in page.text and "gpu=SYNTHETIC%20B%20%28slower%20card%29" in page.text


def test_unknown_model_is_404_naming_the_accepted_ones(two_models):
    c, _ = two_models
    r = c.get(f"/api/key/{KEY}", params={"gpu": "NVIDIA H200"})
    assert r.status_code == 404 and "NVIDIA H200" in r.json()["detail"] and GPU_B in r.json()["detail"]
    assert c.get(f"/api/key/{KEY}", params={"gpu": "<script>"}).status_code == 422


def test_solved_table_is_solved_from_one_model(two_models):
    c, _ = two_models
    assert c.get(f"/api/tables/solved:{ARCH}").status_code == 409
    assert c.get(f"/api/arch/{ARCH}", params={"table": f"solved:{ARCH}"}).status_code == 409
    docs = {}
    for gpu in (GPU_A, GPU_B):
        r = c.get(f"/api/tables/solved:{ARCH}", params={"gpu": gpu})
        assert r.status_code == 200, r.text
        docs[gpu] = r.json()["document"]
        assert c.get(f"/api/arch/{ARCH}", params={"table": f"solved:{ARCH}", "gpu": gpu}).json()["gpu"] == gpu
    # the same evidence, every latency doubled: the same routes, from different aggregates
    assert docs[GPU_A]["routes"] == docs[GPU_B]["routes"]
    assert docs[GPU_A]["evidence_fingerprint"] != docs[GPU_B]["evidence_fingerprint"]
    # the runtime table's strips need no evidence: the arch page opens without a model
    assert c.get(f"/api/arch/{ARCH}").status_code == 200
    assert c.get("/api/diff", params={"old": f"runtime:{ARCH}", "new": f"solved:{ARCH}", "gpu": GPU_B}).status_code == 200


def test_key_page_names_the_card_behind_each_accuracy_run(two_models):
    """Both models have the fixture's SM count, so either one's accuracy qualifies the other's points
    (`aggregates.evidence_runs`): the accuracy table lists the runs of both, each with its card."""
    c, records = two_models
    runs = {r["run_id"]: r for r in records if r["kind"] == "run"}
    acc_runs = {r["run_id"] for r in records if r["kind"] == "accuracy"}
    assert acc_runs and len({r["sm_count"] for r in runs.values()}) == 1
    page = c.get(f"/key/{KEY}", params={"gpu": GPU_B}).text
    assert "runs (card)" in page
    for rid in sorted(acc_runs):
        sms = runs[rid]["sm_count"]
        assert f">{rid}</a> ({GPU_A}, {sms} SMs)" in page  # the other model's run, read for accuracy
        assert f">{rid}-b</a> ({GPU_B}, {sms} SMs)" in page


def test_run_cards_marks_accuracy_only_runs():
    from api.views import run_cards

    cards = run_cards([
        {"run_id": "t", "source": "measured", "gpu": "NVIDIA H200", "sm_count": 132, "timing_blocks": 5, "accuracy_records": 3},
        {"run_id": "a", "source": "measured", "gpu": "NVIDIA H100 80GB HBM3", "sm_count": 132, "timing_blocks": 0, "accuracy_records": 9},
        {"run_id": "p", "source": "published", "gpu": None, "sm_count": None, "timing_blocks": 0, "accuracy_records": 2},
    ])
    assert cards == {"t": "NVIDIA H200, 132 SMs", "a": "NVIDIA H100 80GB HBM3, 132 SMs, accuracy only", "p": "unknown GPU"}
