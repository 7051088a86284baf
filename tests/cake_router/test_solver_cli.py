"""The solve / diff / explain / report commands end to end on cake-evidence/1 files."""

from __future__ import annotations

import json

import pytest

from cake_kernels.routes.table import load_table, routes_dir
from cake_router.cli import main
from cake_router.tables import default_table_path, published_dir
from router_evidence import Evidence

ARCH = "sm_90a"


def write_evidence(path, pair_breach_at_400k: bool = True) -> str:
    e = Evidence().program("bwd.pair").program("bwd.twosum", family="twosum_pair")
    e.program("peer.q", family="peer", runnable=False).program("fwd.row", op="fwd")
    for T in (1024, 65536, 300000, 400000, 1048576):
        e.point("bwd.twosum", T, us=T / 100 + 20, worst=0.01)
        e.timing("peer.q", T, T / 130 + 5)
        e.timing("fwd.row", T, T / 300 + 3, op="fwd")
    for T in (1024, 65536, 300000):
        e.point("bwd.pair", T, us=T / 120 + 10, worst=0.5)
    e.point("bwd.pair", 400000, us=400000 / 120 + 10, worst=1.3 if pair_breach_at_400k else 0.4)
    e.point("bwd.pair", 1048576, us=1048576 / 120 + 10, worst=3.0)
    path.write_text("\n".join(json.dumps(r) for r in e.records) + "\n")
    return str(path)


def run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_solve_writes_a_loadable_deterministic_table(tmp_path, capsys):
    ev = write_evidence(tmp_path / "ev.jsonl")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    rc, out, _ = run(capsys, "solve", "--arch", ARCH, "--evidence", ev, "--out", str(a), "--incumbent", "none",
                     "--next-out", str(tmp_path / "next.json"))
    assert rc == 0 and "wrote" in out
    # second solve with the first table as incumbent (the default flow) is byte-identical
    rc, _, _ = run(capsys, "solve", "--arch", ARCH, "--evidence", ev, "--out", str(b), "--incumbent", str(a))
    assert rc == 0 and a.read_bytes() == b.read_bytes()
    t = load_table(a)
    assert t.lookup("bwd", 4096, "fp32", "plain", "det", 300000).program == "bwd.twosum"
    assert t.lookup("bwd", 4096, "fp32", "plain", "det", 262144).program == "bwd.pair"
    assert t.lookup("fwd", 4096, "fp32", "plain", "any", 10**9).program == "fwd.row"
    doc = json.loads(a.read_bytes())
    assert doc["generated_by"].startswith("cake_router ") and doc["evidence_fingerprint"].startswith("sha256:")
    assert "peer.q" not in t.programs()
    nxt = json.loads((tmp_path / "next.json").read_text())
    assert nxt["schema"] == "cake-next/1" and nxt["arch"] == ARCH
    det = next(k for k in nxt["keys"] if k["op"] == "bwd" and k["mode"] == "det")
    assert 196608 in det["T"] and all(isinstance(i["T"], int) for i in det["items"])


def test_solve_json_and_loud_spans(tmp_path, capsys):
    e = Evidence().program("bwd.pair")
    e.point("bwd.pair", 1024, us=10, worst=0.3).point("bwd.pair", 4096, us=20, worst=1.4)
    ev = tmp_path / "ev.jsonl"
    ev.write_text("\n".join(json.dumps(r) for r in e.records))
    rc, out, _ = run(capsys, "solve", "--arch", ARCH, "--evidence", str(ev), "--out", str(tmp_path / "t.json"),
                     "--incumbent", "none", "--json")
    d = json.loads(out)
    assert rc == 0 and {x["reason"] for x in d["loud"]} == {"no-eligible-program", "unverified"}
    rc, out, _ = run(capsys, "solve", "--arch", ARCH, "--evidence", str(ev), "--out", str(tmp_path / "t.json"), "--incumbent", "none")
    assert "NO-ELIGIBLE-PROGRAM" in out and "UNVERIFIED" in out


def test_unknown_arch_names_known_ones_and_writes_nothing(tmp_path, capsys):
    ev = write_evidence(tmp_path / "ev.jsonl")
    rc, _, err = run(capsys, "solve", "--arch", "sm_100a", "--evidence", ev, "--out", str(tmp_path / "t.json"))
    assert rc == 2 and "sm_90a" in err and not (tmp_path / "t.json").exists()


def test_bad_policy_file_is_an_error_and_nothing_written(tmp_path, capsys):
    ev = write_evidence(tmp_path / "ev.jsonl")
    pol = tmp_path / "p.toml"
    pol.write_text("neutal = 0.1\n")
    rc, _, err = run(capsys, "solve", "--arch", ARCH, "--evidence", ev, "--policy", str(pol), "--out", str(tmp_path / "t.json"))
    assert rc == 2 and "neutal" in err and not (tmp_path / "t.json").exists()


def test_policy_file_is_recorded(tmp_path, capsys):
    ev = write_evidence(tmp_path / "ev.jsonl")
    pol = tmp_path / "p.toml"
    pol.write_text("neutral = 0.03\n")
    rc, _, _ = run(capsys, "solve", "--arch", ARCH, "--evidence", ev, "--policy", str(pol), "--out", str(tmp_path / "t.json"), "--incumbent", "none")
    assert rc == 0 and json.loads((tmp_path / "t.json").read_text())["policy"]["neutral"] == 0.03


def test_bad_evidence_line_is_named(tmp_path, capsys):
    ev = tmp_path / "ev.jsonl"
    ev.write_text('{"schema": "cake-evidence/1", "kind": "run", "run_id": "r", "source": "measured", "arch": "sm_90a", '
                  '"gpu": "NVIDIA H200", "sm_count": 132, "started": "2026-12-02T10:00:00Z"}\n{not json\n')
    rc, _, err = run(capsys, "solve", "--arch", ARCH, "--evidence", str(ev), "--out", str(tmp_path / "t.json"))
    assert rc == 2 and f"{ev}:2:" in err  # file:line, as the store's parser names it


def test_explain_names_program_window_rule_and_evidence(tmp_path, capsys):
    ev = write_evidence(tmp_path / "ev.jsonl")
    rc, out, _ = run(capsys, "explain", "--arch", ARCH, "--op", "bwd", "--H", "4096", "--T", "350000", "--w-dtype", "fp32",
                     "--form", "plain", "--mode", "det", "--evidence", ev, "--incumbent", "none", "--json")
    d = json.loads(out)
    assert rc == 0 and d["window"]["program"] == "bwd.twosum" and d["window"]["reason"] == "accuracy-cut"
    assert d["cut"] == "accuracy" and [p["T"] for p in d["points"]] == [300000, 400000, 1048576]
    rows = {r["program"]: r for r in d["points"][1]["rows"]}
    assert rows["bwd.pair"]["accuracy"] == "breach" and rows["peer.q"]["accuracy"] == "peer"
    assert {f["family"] for f in d["points"][0]["accuracy"]} == {"gaussian", "same_sign", "outlier_rows"}
    rc, out, _ = run(capsys, "explain", "--arch", ARCH, "--op", "bwd", "--H", "4096", "--T", "350000", "--w-dtype", "fp32",
                     "--form", "plain", "--mode", "det", "--evidence", ev, "--incumbent", "none")
    assert rc == 0 and "bwd.twosum" in out and "accuracy-cut" in out


def test_explain_unknown_key(tmp_path, capsys):
    ev = write_evidence(tmp_path / "ev.jsonl")
    rc, _, err = run(capsys, "explain", "--arch", ARCH, "--op", "bwd", "--H", "999", "--T", "5", "--w-dtype", "fp32",
                     "--form", "plain", "--mode", "det", "--evidence", ev)
    assert rc == 2 and "no route key bwd H=999 fp32 plain det" in err and "bwd fp32 plain det keys have H 4096" in err
    rc, _, err = run(capsys, "explain", "--arch", ARCH, "--op", "bwd", "--H", "4096", "--T", "5", "--w-dtype", "fp32",
                     "--form", "residual", "--mode", "det", "--evidence", ev)
    assert rc == 2 and "no bwd fp32 residual det key at any H" in err and "bwd det keys at H=4096: fp32 plain" in err
    rc, _, err = run(capsys, "explain", "--arch", ARCH, "--op", "bwd", "--H", "0", "--T", "5", "--w-dtype", "fp32",
                     "--form", "plain", "--mode", "det", "--evidence", ev)
    assert rc == 2 and "--H 0: H must be >= 1" in err


def test_missing_key_message_names_the_nearest_keys():
    from measurements_db.aggregates import RouteKey

    from cake_router.commands.solve_cmd import missing_key_message

    keys = [RouteKey(ARCH, "fwd", H, w, "plain", "any") for H in (512, 4096) for w in ("bf16", "fp32")]
    keys.append(RouteKey(ARCH, "fwd", 4096, "fp32", "residual", "any"))
    keys.append(RouteKey(ARCH, "bwd", 6144, "fp32", "residual", "det"))
    msg = missing_key_message(RouteKey(ARCH, "fwd", 2048, "fp32", "plain", "any"), keys)
    assert msg == f"no route key fwd H=2048 fp32 plain any for {ARCH}; fwd fp32 plain any keys have H 512, 4096"
    msg = missing_key_message(RouteKey(ARCH, "fwd", 4096, "bf16", "residual", "any"), keys)
    assert msg.endswith("no fwd bf16 residual any key at any H; fwd any keys at H=4096: bf16 plain, fp32 plain, fp32 residual")


def test_report_rows_with_runner_up_and_peer(tmp_path, capsys):
    ev = write_evidence(tmp_path / "ev.jsonl")
    rc, out, _ = run(capsys, "report", "--arch", ARCH, "--evidence", ev, "--incumbent", "none", "--json")
    rows = json.loads(out)["rows"]
    r = next(r for r in rows if r["op"] == "bwd" and r["mode"] == "det" and r["T"] == 1024)
    assert r["program"] == "bwd.pair" and r["runner_up"] == "bwd.twosum" and r["peer"] == "peer.q"
    assert r["runner_up_ratio"] == pytest.approx(r["runner_up_us"] / r["latency_us"]) and r["runner_up_eligible"]
    r = next(r for r in rows if r["op"] == "bwd" and r["mode"] == "det" and r["T"] == 400000)
    assert r["runner_up"] == "bwd.pair" and not r["runner_up_eligible"]
    rc, out, _ = run(capsys, "report", "--arch", ARCH, "--evidence", ev, "--incumbent", "none", "--markdown")
    assert rc == 0 and out.startswith("| key |")


def test_diff_reports_budget_breach_with_ratios(tmp_path, capsys):
    old_ev = write_evidence(tmp_path / "old.jsonl", pair_breach_at_400k=False)
    new_ev = write_evidence(tmp_path / "new.jsonl", pair_breach_at_400k=True)
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    assert run(capsys, "solve", "--arch", ARCH, "--evidence", old_ev, "--out", str(old), "--incumbent", "none")[0] == 0
    assert run(capsys, "solve", "--arch", ARCH, "--evidence", new_ev, "--out", str(new), "--incumbent", "none")[0] == 0
    md_path = tmp_path / "diff.md"
    rc, _, _ = run(capsys, "diff", str(old), str(new), "--evidence", new_ev, "--out", str(md_path))
    md = md_path.read_text()
    assert rc == 0 and "## sm_90a" in md and "### budget breach" in md and "### Summary" in md
    assert "bwd.pair | bwd.twosum" in md
    rc, out, _ = run(capsys, "diff", str(old), str(old))
    assert rc == 0 and "No routing changes" in out


def test_default_table_path_by_runnable():
    doc = {"routes": [{"windows": [{"program": "a"}]}], "programs": {"a": {"runnable": True}}}
    assert default_table_path(ARCH, doc) == routes_dir() / f"{ARCH}.json"
    doc["programs"]["a"]["runnable"] = False
    assert default_table_path(ARCH, doc) == published_dir() / f"{ARCH}.json"


def test_solve_from_a_sqlite_store_equals_solve_from_files(tmp_path, capsys):
    from measurements_db.engine import open_store
    from measurements_db.evidence_io import import_evidence

    ev = write_evidence(tmp_path / "ev.jsonl")
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    store = open_store(url)
    try:
        import_evidence(store, ev)
    finally:
        store.close()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run(capsys, "solve", "--arch", ARCH, "--db", url, "--out", str(a), "--incumbent", "none")[0] == 0
    assert run(capsys, "solve", "--arch", ARCH, "--evidence", ev, "--out", str(b), "--incumbent", "none")[0] == 0
    assert a.read_bytes() == b.read_bytes()
    rc, _, err = run(capsys, "solve", "--arch", "sm_100a", "--db", url, "--out", str(tmp_path / "c.json"))
    assert rc == 2 and "sm_90a" in err and not (tmp_path / "c.json").exists()


def _other_gpu_copy(src, dst, gpu="NVIDIA H100 PCIe", sm_count=114, scale=None) -> str:
    """The runs of `src` as if measured on another GPU model: new run ids, the pair family 3x faster
    there (so that pooling both cards' samples would move the table). Another SM count by default, so
    that its accuracy records do not count either (`aggregates.evidence_runs`)."""
    out = []
    for line in open(src):
        r = json.loads(line)
        if "run_id" in r:
            r["run_id"] = "h100-" + r["run_id"]
        if r.get("kind") == "run":
            r["gpu"], r["sm_count"] = gpu, sm_count
        if r.get("kind") == "timing" and r["program"] == "bwd.pair":
            r["samples_us"] = [v / 3 for v in r["samples_us"]]
        out.append(json.dumps(r))
    dst.write_text("\n".join(out) + "\n")
    return str(dst)


def test_runs_of_two_gpu_models_are_never_pooled(tmp_path, capsys):
    """An arch is the route key of cards whose timings differ (sm_90a: H100 and H200). Evidence of one
    arch measured on two GPU models is refused with both named, unless --gpu picks one; the table
    solved with --gpu is the table of that card's evidence alone, from files and from a store alike."""
    from measurements_db.engine import open_store
    from measurements_db.evidence_io import import_evidence

    h200 = write_evidence(tmp_path / "h200.jsonl")
    h100 = _other_gpu_copy(h200, tmp_path / "h100.jsonl")
    alone, picked, out = tmp_path / "alone.json", tmp_path / "picked.json", tmp_path / "out.json"
    assert run(capsys, "solve", "--arch", ARCH, "--evidence", h200, "--out", str(alone), "--incumbent", "none")[0] == 0
    rc, _, err = run(capsys, "solve", "--arch", ARCH, "--evidence", h200, h100, "--out", str(out), "--incumbent", "none")
    assert rc == 2 and not out.exists()
    assert "2 GPU models" in err and "'NVIDIA H100 PCIe' (1 runs)" in err and "'NVIDIA H200'" in err and "--gpu" in err
    assert run(capsys, "solve", "--arch", ARCH, "--evidence", h200, h100, "--gpu", "NVIDIA H200", "--out", str(picked),
               "--incumbent", "none")[0] == 0
    assert picked.read_bytes() == alone.read_bytes()
    rc, _, err = run(capsys, "solve", "--arch", ARCH, "--evidence", h200, h100, "--gpu", "NVIDIA B200", "--out", str(out))
    assert rc == 2 and "--gpu 'NVIDIA B200'" in err and "accepted: 'NVIDIA H100 PCIe', 'NVIDIA H200'" in err
    # the H100's own table differs: the pair family wins more of T there
    h100_table = tmp_path / "h100.json"
    assert run(capsys, "solve", "--arch", ARCH, "--evidence", h200, h100, "--gpu", "NVIDIA H100 PCIe",
               "--out", str(h100_table), "--incumbent", "none")[0] == 0
    assert h100_table.read_bytes() != alone.read_bytes()

    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    store = open_store(url)
    try:
        import_evidence(store, h200)
        import_evidence(store, h100)
    finally:
        store.close()
    rc, _, err = run(capsys, "solve", "--arch", ARCH, "--db", url, "--out", str(out), "--incumbent", "none")
    assert rc == 2 and "2 GPU models" in err and not out.exists()
    from_store = tmp_path / "store.json"
    assert run(capsys, "solve", "--arch", ARCH, "--db", url, "--gpu", "NVIDIA H200", "--out", str(from_store),
               "--incumbent", "none")[0] == 0
    assert from_store.read_bytes() == alone.read_bytes()


@pytest.mark.parametrize("sm_count, routed", [(132, "bwd.pair"), (114, "bwd.twosum")])
def test_an_accuracy_only_run_qualifies_points_on_a_card_of_the_same_sm_count(tmp_path, capsys, monkeypatch, sm_count, routed):
    """H200 timing of a faster program with too few accuracy inputs, and an accuracy-only run (`measure
    --accuracy-only`) of it on an H100: no model has to be named (the H100 timed nothing), and the
    point qualifies, so the faster program is routed, exactly when the H100 has the H200's SM count."""
    from router_evidence import Evidence

    from measurements_db.engine import open_store
    from measurements_db.evidence_io import import_evidence

    e = Evidence().program("bwd.pair").program("bwd.twosum", family="twosum_pair")
    for T in (65536, 262144, 1048576):
        e.point("bwd.twosum", T, us=T / 100 + 20, worst=0.01)
        e.timing("bwd.pair", T, T / 130 + 5)
        e.acc("bwd.pair", T, 0.4, inputs=4)  # unqualified on the H200
    e.run("h100", gpu="NVIDIA H100 80GB HBM3", sm_count=sm_count)
    for T in (65536, 262144, 1048576):
        e.acc("bwd.pair", T, 0.5, run="h100")
    ev = tmp_path / "ev.jsonl"
    ev.write_text("\n".join(json.dumps(r) for r in e.records) + "\n")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run(capsys, "solve", "--arch", ARCH, "--evidence", str(ev), "--out", str(a), "--incumbent", "none")[0] == 0
    assert load_table(a).lookup("bwd", 4096, "fp32", "plain", "det", 262144).program == routed
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    store = open_store(url)
    try:
        import_evidence(store, str(ev))
    finally:
        store.close()
    assert run(capsys, "solve", "--arch", ARCH, "--db", url, "--out", str(b), "--incumbent", "none")[0] == 0
    assert a.read_bytes() == b.read_bytes()
    # Naming the H200 changes nothing; the H100 timed nothing, so it cannot be named.
    assert run(capsys, "solve", "--arch", ARCH, "--db", url, "--gpu", "NVIDIA H200", "--out", str(b), "--incumbent", "none")[0] == 0
    assert a.read_bytes() == b.read_bytes()
    rc, _, err = run(capsys, "solve", "--arch", ARCH, "--db", url, "--gpu", "NVIDIA H100 80GB HBM3", "--out", str(b))
    assert rc == 2 and "accepted: 'NVIDIA H200'" in err
    # explain names the card behind each run whose accuracy it shows, from files and the store alike
    want = "h100 (NVIDIA H100 80GB HBM3, 132 SMs, accuracy only)"
    monkeypatch.setenv("COLUMNS", "250")  # rich folds cells to the terminal's width
    for src in (["--evidence", str(ev)], ["--db", url]):
        argv = ["explain", "--arch", ARCH, "--op", "bwd", "--H", "4096", "--T", "262144", "--w-dtype", "fp32",
                "--form", "plain", "--mode", "det", "--incumbent", "none", *src]
        rc, out, _ = run(capsys, *argv, "--json")
        d = json.loads(out)
        assert rc == 0 and d["window"]["program"] == routed
        p = next(p for p in d["points"] if p["T"] == 262144)
        if sm_count == 132:
            assert all("h100" in f["runs"] for f in p["accuracy"])
            assert d["runs"]["h100"] == {"gpu": "NVIDIA H100 80GB HBM3", "sm_count": 132, "source": "measured", "timed": False}
            rc, out, _ = run(capsys, *argv)
            assert rc == 0 and want in out
        else:  # the 114-SM card's accuracy is not read: explain names no run of it
            assert "h100" not in d["runs"] and all("h100" not in f["runs"] for f in p["accuracy"])
