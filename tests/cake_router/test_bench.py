"""The comparison table of `bench`: bytes moved, routed vs peers, in-budget SOTA and the targets."""

from __future__ import annotations

from cake_kernels.routes.table import parse_table, write_table
from cake_router import bench
from cake_router.policy import Policy
from measurements_db.aggregates import aggregate_records

RUN = {"schema": "cake-evidence/1", "kind": "run", "run_id": "r1", "source": "measured", "arch": "sm_90a",
       "gpu": "NVIDIA H200", "sm_count": 132, "started": "2026-12-02T10:00:00Z"}


def prog(name, family, det=True, op="bwd"):
    return {"schema": "cake-evidence/1", "kind": "program", "name": name, "op": op, "deterministic": det,
            "family": family, "runnable": family != "peer", "fingerprint": "x"}


def timing(name, op, T, us, session="s1"):
    return {"schema": "cake-evidence/1", "kind": "timing", "run_id": "r1", "arch": "sm_90a", "program": name, "op": op,
            "H": 1024, "T": T, "x_dtype": "bf16", "w_dtype": "fp32", "form": "plain", "session": session, "round": 0,
            "position": 0, "copy": 0, "timer": "cupti", "l2": "cold", "samples_us": [us, us, us]}


def acc(name, T, worst):
    return [{"schema": "cake-evidence/1", "kind": "accuracy", "run_id": "r1", "arch": "sm_90a", "program": name, "H": 1024,
             "T": T, "x_dtype": "bf16", "w_dtype": "fp32", "form": "plain", "family": fam, "inputs": 120,
             "dw_err_over_tol_max": worst, "dw_err_over_tol_median": worst / 10, "eager_err_over_tol_max": 5.0,
             "eager_err_over_tol_median": 0.5, "dx_err_over_tol_max": 0.4, "rstd_rel_l2": 1e-8, "rstd_form": "forward"}
            for fam in ("gaussian", "same_sign", "outlier_rows")]


def table(tmp_path, program):
    doc = {"schema": "cake-routes/1", "arch": "sm_90a", "policy": {}, "evidence_fingerprint": "x", "routes": [
        {"op": "bwd", "H": 1024, "w_dtype": "fp32", "form": "plain", "mode": "det",
         "windows": [{"lo": 1, "hi": None, "program": program, "reason": "fastest"}]}]}
    write_table(doc, tmp_path / "t.json")
    import json

    return parse_table(json.loads((tmp_path / "t.json").read_text()), "t.json")


def test_bytes_moved_counts_each_tensor_once():
    assert bench.bytes_moved("bwd", "plain", 4096, 65536) == 6 * 65536 * 4096 + 4 * 65536
    assert bench.bytes_moved("fwd", "residual", 10, 3) == 8 * 3 * 10 + 4 * 3
    assert bench.bytes_moved("bwd", "heads_contiguous", 256, 2) == 6 * 8 * 256 + 4 * 8


def test_sota_is_the_fastest_in_budget_peer(tmp_path):
    recs = [RUN, prog("bwd.pair.p2x.w8", "pair"), prog("peer.fast", "peer"), prog("peer.slow", "peer")]
    recs += [timing("bwd.pair.p2x.w8", "bwd", 4096, 10.0), timing("peer.fast", "bwd", 4096, 8.0), timing("peer.slow", "bwd", 4096, 12.5)]
    recs += acc("bwd.pair.p2x.w8", 4096, 0.3) + acc("peer.fast", 4096, 3.0) + acc("peer.slow", 4096, 0.2)
    ev = aggregate_records(recs)
    rows = bench.compare(ev, table(tmp_path, "bwd.pair.p2x.w8"), Policy(), copy_TBps=4.0)
    (r,) = rows
    assert r.program == "bwd.pair.p2x.w8" and r.fastest_peer == "peer.fast" and r.sota == "peer.slow"
    assert abs(r.peer_over_new - 0.8) < 1e-12 and abs(r.sota_over_new - 1.25) < 1e-12
    assert abs(r.TBps - bench.bytes_moved("bwd", "plain", 1024, 4096) / 10e-6 / 1e12) < 1e-9
    assert r.routed_in_budget is True
    tg = {t["target"]: t for t in bench.targets(rows)}
    assert tg["bwd: geomean SOTA/new >= 1.25"]["met"] is True
    assert tg["bwd T<=256: latency <= the fastest peer's on every row"]["met"] is None  # no such row


def test_untrusted_window_compares_what_the_runtime_runs(tmp_path):
    from cake_kernels.routes.dispatch import FALLBACK

    fb = FALLBACK["bwd"]
    recs = [RUN, prog("bwd.pair.p2x.w8", "pair"), prog(fb, "twosum_pair")]
    recs += [timing("bwd.pair.p2x.w8", "bwd", 65536, 10.0), timing(fb, "bwd", 65536, 14.0)]
    ev = aggregate_records(recs)
    t = table(tmp_path, "bwd.pair.p2x.w8")
    t.doc["routes"][0]["windows"][0]["reason"] = "unverified"
    w = t._keys[("bwd", 1024, "fp32", "plain", "det")][1][0]
    t._keys[("bwd", 1024, "fp32", "plain", "det")] = ([1], [type(w)(1, None, w.program, "unverified")])
    (r,) = bench.compare(ev, t, Policy())
    assert r.program == fb and r.us == 14.0
    assert r.routed_in_budget is False  # no accuracy evidence: not qualified


def _bench_json(tmp_path, capsys, recs) -> dict:
    """`bench --json` over a store holding ``recs``, with a table routing `bwd.pair.p2x.w8`."""
    import json

    from cake_router.cli import main

    ev = tmp_path / "ev.jsonl"
    ev.write_text("".join(json.dumps(r) + "\n" for r in recs))
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    assert main(["import", str(ev), "--db", db]) == 0
    table(tmp_path, "bwd.pair.p2x.w8")
    capsys.readouterr()
    assert main(["bench", "--arch", "sm_90a", "--db", db, "--table", str(tmp_path / "t.json"),
                 "--out-dir", str(tmp_path / "out"), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_bench_cli_takes_copy_bandwidth_from_the_runs(tmp_path, capsys):
    run2 = dict(RUN, run_id="r2", copy_TBps=4.1)
    recs = [dict(RUN, copy_TBps=4.0), run2, prog("bwd.pair.p2x.w8", "pair")]
    recs += [timing("bwd.pair.p2x.w8", "bwd", 65536, 100.0), dict(timing("bwd.pair.p2x.w8", "bwd", 65536, 100.0), run_id="r2")]
    out = _bench_json(tmp_path, capsys, recs)
    assert out["meta"]["copy_TBps"] == 4.0  # the slower of the two runs' own measurements
    (row,) = out["rows"]
    nbytes = 6 * 65536 * 1024 + 4 * 65536
    assert abs(row["copy_fraction"] - nbytes / 100e-6 / 1e12 / 4.0) < 1e-9


def test_bench_cli_compares_one_gpu_model_and_takes_its_copy_bandwidth(tmp_path, capsys):
    """An H100 run beside the H200's (same arch): refused without --gpu, both models named; with
    --gpu the comparison, its copy bandwidth and its run list are that card's alone."""
    import json

    from cake_router.cli import main

    h100 = dict(RUN, run_id="r9", gpu="NVIDIA H100 80GB HBM3", copy_TBps=3.0)
    recs = [dict(RUN, copy_TBps=4.2), h100, prog("bwd.pair.p2x.w8", "pair")]
    recs += [timing("bwd.pair.p2x.w8", "bwd", 65536, 100.0), dict(timing("bwd.pair.p2x.w8", "bwd", 65536, 140.0), run_id="r9")]
    ev = tmp_path / "ev.jsonl"
    ev.write_text("".join(json.dumps(r) + "\n" for r in recs))
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    assert main(["import", str(ev), "--db", db]) == 0
    table(tmp_path, "bwd.pair.p2x.w8")
    args = ["bench", "--arch", "sm_90a", "--db", db, "--table", str(tmp_path / "t.json"), "--out-dir", str(tmp_path / "out"), "--json"]
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "2 GPU models" in err and "NVIDIA H100 80GB HBM3" in err and "--gpu" in err
    assert not (tmp_path / "out").exists()
    assert main(args + ["--gpu", "NVIDIA H200"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["meta"]["copy_TBps"] == 4.2 and [r["gpu"] for r in out["meta"]["runs"]] == ["NVIDIA H200"]
    (row,) = out["rows"]
    assert abs(row["copy_fraction"] - (6 * 65536 * 1024 + 4 * 65536) / 100e-6 / 1e12 / 4.2) < 1e-9


def test_peer_table_compares_each_peer_with_the_best_in_budget_program():
    recs = [RUN, prog("bwd.pair.p2x.w8", "pair"), prog("bwd.twosum.p1x.w8", "twosum"), prog("peer.fast", "peer"),
            prog("peer.missing", "peer")]
    recs += [timing("bwd.pair.p2x.w8", "bwd", 65536, 10.0), timing("bwd.twosum.p1x.w8", "bwd", 65536, 16.0),
             timing("peer.fast", "bwd", 65536, 12.0), timing("peer.missing", "bwd", 4096, 5.0)]
    # peer.missing was timed at 4096 only (out of memory at 65536, say). The faster program breaches the budget: the best in-budget one is the slower twosum
    recs += acc("bwd.pair.p2x.w8", 65536, 3.0) + acc("bwd.twosum.p1x.w8", 65536, 0.001) + acc("peer.fast", 65536, 40.0)
    rows = bench.peer_table(aggregate_records(recs), Policy())
    got = {r.peer: r for r in rows if r.T == 65536 and r.op == "bwd"}
    assert set(got) == {"peer.fast", "peer.missing"}
    assert got["peer.fast"].best == "bwd.twosum.p1x.w8" and got["peer.fast"].best_us == 16.0
    assert abs(got["peer.fast"].peer_over_best - 0.75) < 1e-12 and got["peer.fast"].peer_in_budget is False
    assert got["peer.missing"].peer_us is None and got["peer.missing"].peer_over_best is None
    md = bench.peer_markdown(rows)
    assert "| bwd | plain | 1024 | fp32 | 65536 | bwd.twosum.p1x.w8 | 16.00 | peer.fast | 12.00 | 0.750 | no |" in md
    assert "| peer.missing | - | - |" in md
    assert got["peer.fast"].peer_accuracy == "breach" and got["peer.missing"].peer_accuracy == "no-evidence"
    assert "| peer.missing | - | - | no-evidence |" in md  # not timed, and no accuracy either: not "no"


def _readme_rows():
    recs = [RUN, prog("bwd.pair.p2x.w8", "pair"), prog("bwd.twosum.p1x.w8", "twosum"), prog("peer.fast", "peer"),
            prog("peer.unmeasured", "peer")]
    recs += [timing("bwd.twosum.p1x.w8", "bwd", 65536, 1234.4), timing("peer.fast", "bwd", 65536, 1000.0),
             timing("bwd.twosum.p1x.w8", "bwd", 4096, 42.44), timing("peer.unmeasured", "bwd", 4096, 40.0)]
    recs += acc("bwd.twosum.p1x.w8", 65536, 0.001) + acc("bwd.twosum.p1x.w8", 4096, 0.001) + acc("peer.fast", 65536, 40.0)
    ev = aggregate_records(recs)
    return ev, bench.peer_table(ev, Policy(), Ts=(4096, 65536))


def test_readme_blocks_are_rebuilt_from_the_bench_rows(tmp_path):
    ev, peers = _readme_rows()
    rows = bench.compare(ev, table(tmp_path, "bwd.twosum.p1x.w8"), Policy(), copy_TBps=4.0)
    text = ("intro\n<!-- bench-rows form=plain w=fp32 bwd:1024:4096 bwd:1024:65536 -->\n| stale |\n<!-- /bench-rows -->\n"
            "between\n<!-- bench-rows bwd:1024:65536 -->\n<!-- /bench-rows -->\nend\n")
    out, n = bench.rewrite_readme(text, rows, peers)
    assert n == 2 and "| stale |" not in out and out.startswith("intro\n") and out.endswith("end\n") and "between" in out
    frac = bench.bytes_moved("bwd", "plain", 1024, 65536) / 1234.4e-6 / 1e12 / 4.0
    row_big = (f"| bwd (det) | 1024 | 65536 | bwd.twosum.p1x.w8 | 1234 | {frac:.0%} | peer.fast | 1000 | 0.81 | yes (peer.fast: no) |"
               .replace("%", " %"))
    row_small = "| bwd (det) | 1024 | 4096 | bwd.twosum.p1x.w8 | 42.4 |"
    assert row_big in out and row_small in out and "peer.unmeasured | 40.0 | 0.94 | yes (peer.unmeasured: not measured) |" in out
    assert out.count(row_big) == 2  # the second block uses the default form and weight
    again, _ = bench.rewrite_readme(out, rows, peers)
    assert again == out  # idempotent


def test_readme_block_naming_an_unmeasured_row_is_an_error(tmp_path):
    import pytest

    ev, peers = _readme_rows()
    rows = bench.compare(ev, table(tmp_path, "bwd.twosum.p1x.w8"), Policy())
    with pytest.raises(bench.ReadmeSpecError, match="no bench row bwd plain H=1024 w=bf16 T=65536"):
        bench.rewrite_readme("<!-- bench-rows w=bf16 bwd:1024:65536 -->\n<!-- /bench-rows -->", rows, peers)
    for bad, what in (("bwd:1024", "not op:H:T"), ("step:1024:1", "not op:H:T"), ("mode=det", "option 'mode' unknown")):
        with pytest.raises(bench.ReadmeSpecError, match=what):
            bench.rewrite_readme(f"<!-- bench-rows {bad} -->\n<!-- /bench-rows -->", rows, peers)


def test_bench_cli_readme_leaves_the_file_alone_on_a_bad_block(tmp_path, capsys):
    import json

    from cake_router.cli import main

    recs = [RUN, prog("bwd.twosum.p1x.w8", "twosum"), timing("bwd.twosum.p1x.w8", "bwd", 4096, 42.44)]
    evf = tmp_path / "ev.jsonl"
    evf.write_text("".join(json.dumps(r) + "\n" for r in recs))
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    assert main(["import", str(evf), "--db", db]) == 0
    table(tmp_path, "bwd.twosum.p1x.w8")
    readme = tmp_path / "README.md"
    bad = "x\n<!-- bench-rows bwd:1024:65536 -->\nold\n<!-- /bench-rows -->\n"
    readme.write_text(bad)
    args = ["bench", "--arch", "sm_90a", "--db", db, "--table", str(tmp_path / "t.json"), "--out-dir", str(tmp_path / "out"),
            "--readme", str(readme)]
    capsys.readouterr()
    assert main(args) == 2
    assert "--readme" in capsys.readouterr().err and readme.read_text() == bad
    readme.write_text(bad.replace("65536", "4096"))
    assert main(args) == 0
    assert "| bwd (det) | 1024 | 4096 | bwd.twosum.p1x.w8 | 42.4 |" in readme.read_text()
    readme.write_text("no blocks\n")
    assert main(args) == 2 and "no `<!-- bench-rows" in capsys.readouterr().err


def test_routed_program_without_timing_is_a_row_not_a_gap(tmp_path):
    # Round 6: T 1M timed with a BF16 weight before it was qualified; the runtime runs its fallback
    # there, which was never timed at that point. The row must show (speed unknown, not qualified)
    # and count against the in-budget target instead of dropping out of the table.
    from cake_kernels.routes.dispatch import FALLBACK

    recs = [RUN, prog("bwd.pair.p2x.w8", "pair"), prog("peer.fast", "peer")]
    recs += [timing("bwd.pair.p2x.w8", "bwd", 1048576, 900.0), timing("peer.fast", "bwd", 1048576, 800.0)]
    ev = aggregate_records(recs)
    t = table(tmp_path, "bwd.pair.p2x.w8")
    w = t._keys[("bwd", 1024, "fp32", "plain", "det")][1][0]
    t._keys[("bwd", 1024, "fp32", "plain", "det")] = ([1], [type(w)(1, None, w.program, "no-eligible-program")])
    (r,) = bench.compare(ev, t, Policy(), copy_TBps=4.0)
    assert r.program == FALLBACK["bwd"] and r.us is None and r.TBps is None and r.peer_over_new is None
    assert r.routed_in_budget is False
    tg = {x["target"]: x for x in bench.targets([r])}
    assert tg["every routed backward in budget on qualified evidence"]["met"] is False
    assert "| - |" in bench.markdown([r], bench.targets([r]), "# h")


def test_step_rows_name_their_forward_and_flag_one_the_table_does_not_route(tmp_path):
    import json

    doc = {"schema": "cake-routes/1", "arch": "sm_90a", "policy": {}, "evidence_fingerprint": "x", "routes": [
        {"op": "bwd", "H": 1024, "w_dtype": "fp32", "form": "plain", "mode": "det",
         "windows": [{"lo": 1, "hi": None, "program": "bwd.pair.p2x.w8", "reason": "fastest"}]},
        {"op": "fwd", "H": 1024, "w_dtype": "fp32", "form": "plain", "mode": "any",
         "windows": [{"lo": 1, "hi": 4096, "program": "fwd.row.r4.w2", "reason": "fastest"},
                     {"lo": 4097, "hi": None, "program": "fwd.row.r1.w8", "reason": "fastest"}]}]}
    write_table(doc, tmp_path / "t.json")
    tab = parse_table(json.loads((tmp_path / "t.json").read_text()), "t.json")
    recs = [RUN, prog("bwd.pair.p2x.w8", "pair"), prog("fwd.row.r4.w2", "row", op="fwd"), prog("fwd.row.r1.w8", "row", op="fwd")]
    recs += [timing("bwd.pair.p2x.w8", "2xfwd+bwd", 4096, 30.0),  # a run before steps named their forward
             dict(timing("bwd.pair.p2x.w8", "2xfwd+bwd", 65536, 300.0), step_fwd="fwd.row.r1.w8"),
             dict(timing("bwd.pair.p2x.w8", "2xfwd+bwd", 1024, 20.0), step_fwd="fwd.row.r4.w2")]
    rows = {r.T: r for r in bench.compare(aggregate_records(recs), tab, Policy())}
    assert (rows[4096].step_fwd, rows[4096].step_fwd_routed) == (bench.LEGACY_STEP_FWD, False)
    assert (rows[65536].step_fwd, rows[65536].step_fwd_routed) == ("fwd.row.r1.w8", True)
    assert (rows[1024].step_fwd, rows[1024].step_fwd_routed) == ("fwd.row.r4.w2", True)
    md = bench.markdown(list(rows.values()), [], "# t")
    assert "| bwd.pair.p2x.w8 + 2x fwd.row.r1.w8 † |" in md and "| bwd.pair.p2x.w8 + 2x fwd.row.r4.w2 |" in md
    assert "† the step was timed with a forward the table does not route there" in md


def _bound_rows(tmp_path):
    """Two backward rows at T 65536: the routed program at 50 % and 80 % of copy, a peer faster at one."""
    recs = [RUN, prog("bwd.twosum.p1x.w8", "twosum"), prog("peer.fast", "peer")]
    for T, us in ((65536, 200.0), (1048576, 2000.0)):
        recs.append(timing("bwd.twosum.p1x.w8", "bwd", T, us))
        recs += acc("bwd.twosum.p1x.w8", T, 0.001)
    recs.append(timing("peer.fast", "bwd", 65536, 150.0))
    ev = aggregate_records(recs)
    b64 = bench.bytes_moved("bwd", "plain", 1024, 65536) / 200e-6 / 1e12
    return bench.compare(ev, table(tmp_path, "bwd.twosum.p1x.w8"), Policy(), copy_TBps=b64 / 0.5)


def test_floor_targets_name_the_binding_row_and_count_the_rows_short(tmp_path):
    rows = _bound_rows(tmp_path)
    tg = {t["id"]: t for t in bench.targets(rows)}
    copy = tg["bwd-copy"]
    assert copy["met"] is False and copy["short"] == 2  # 50 % and 80 % (same bytes per us at 1M: 1.6x) < 93 %
    assert copy["binding"]["key"] == "bwd plain 1024 fp32 65536" and copy["binding"]["program"] == "bwd.twosum.p1x.w8"
    assert copy["binding"]["value"] == "50.0% of copy" and copy["binding"]["us"] == 200.0
    peer = tg["bwd-peer"]
    assert peer["short"] == 1 and peer["binding"]["value"] == "0.750x" and peer["figure"] == "min 0.750x over 1 rows"
    assert tg["bwd-geomean"]["binding"] is None and tg["bwd-geomean"]["short"] is None  # an aggregate binds no row
    assert tg["in-budget"]["met"] is True and tg["in-budget"]["binding"] is None and tg["in-budget"]["short"] == 0
    assert tg["fwd-copy"]["met"] is None and tg["fwd-copy"]["binding"] is None  # no forward row
    assert {t["id"] for t in bench.targets(rows)} == set(bench.TARGET_IDS)


def _bounds_doc(**notes):
    return {"schema": bench.BOUNDS_SCHEMA, "arch": "sm_90a", "bounds": notes}


def test_bounds_file_is_checked_field_by_field():
    import pytest

    ok = bench.load_bounds(_bounds_doc(**{"bwd-copy": {"row": "bwd plain 1024 fp32 65536", "text": " latency ",
                                                      "evidence": "ncu.log"}}), "b.json", "sm_90a")
    assert ok == {"bwd-copy": {"row": "bwd plain 1024 fp32 65536", "text": "latency", "evidence": "ncu.log"}}
    for doc, arch, what in (
        ({"schema": "x", "arch": "sm_90a", "bounds": {}}, "sm_90a", "field 'schema'"),
        (_bounds_doc(), "sm_100a", "field 'arch': 'sm_90a', expected 'sm_100a'"),
        ({"schema": bench.BOUNDS_SCHEMA, "arch": "sm_90a", "bounds": []}, "sm_90a", "field 'bounds'"),
        (_bounds_doc(**{"bwd-speed": {"text": "x"}}), "sm_90a", r"bounds\['bwd-speed'\]: unknown target id; accepted: bwd-copy"),
        (_bounds_doc(**{"bwd-copy": {"text": "  "}}), "sm_90a", "non-empty 'text'"),
        (_bounds_doc(**{"bwd-copy": {"text": "x", "row": "bwd plain 1024 65536"}}), "sm_90a", r"\.row: .* is not 'op form H w T'"),
        (_bounds_doc(**{"bwd-copy": {"text": "x", "evidence": 3}}), "sm_90a", r"\.evidence: expected a string"),
    ):
        with pytest.raises(bench.BoundsError, match=what):
            bench.load_bounds(doc, "b.json", arch)


def test_a_bound_note_for_another_row_is_stale_and_says_so(tmp_path):
    rows = _bound_rows(tmp_path)
    tg = bench.targets(rows)
    notes = bench.load_bounds(_bounds_doc(**{
        "bwd-copy": {"row": "bwd plain 1024 fp32 65536", "text": "one warp per row", "evidence": "ncu.log"},
        "bwd-peer": {"row": "bwd plain 2048 fp32 65536", "text": "padded tile"}}), "b.json", "sm_90a")
    warnings = bench.attach_bounds(tg, notes)
    assert warnings == ["bound note of 'bwd-peer' explains 'bwd plain 2048 fp32 65536'; the binding row is now "
                        "bwd plain 1024 fp32 65536"]
    md = bench.targets_block(tg)
    assert ("| bwd T>=65536: >= 93% of copy bandwidth | **not met** | min 50.0% over 2 rows | 2 | bwd plain H 1024 fp32 "
            "T 65536 (`bwd.twosum.p1x.w8`, 200.0 us): 50.0% of copy | one warp per row (ncu.log) |") in md
    assert "*stale: written for bwd plain 2048 fp32 65536.* padded tile |" in md
    assert "| bwd: geomean SOTA/new >= 1.25 | n/a | no in-budget peer timed | - | - | - |" in md


def test_readme_targets_block_is_rebuilt_and_idempotent(tmp_path):
    rows = _bound_rows(tmp_path)
    tg = bench.targets(rows)
    text = "a\n<!-- bench-targets -->\n| old |\n<!-- /bench-targets -->\nb\n"
    out, n = bench.rewrite_readme(text, rows, [], tg)
    assert n == 1 and "| old |" not in out and out.startswith("a\n") and out.endswith("b\n")
    assert out.count("| target | met | measured | rows short | binding row | what bounds it |") == 1
    assert bench.rewrite_readme(out, rows, [], tg)[0] == out
    assert bench.rewrite_readme(text, rows, [])[0] == text  # without targets the block is left as it is


def test_bench_cli_reads_bounds_and_warns_on_a_stale_note(tmp_path, capsys):
    import json

    from cake_router.cli import main

    recs = [RUN, prog("bwd.twosum.p1x.w8", "twosum"), timing("bwd.twosum.p1x.w8", "bwd", 65536, 200.0)]
    recs += acc("bwd.twosum.p1x.w8", 65536, 0.001)
    evf = tmp_path / "ev.jsonl"
    evf.write_text("".join(json.dumps(r) + "\n" for r in recs))
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    assert main(["import", str(evf), "--db", db]) == 0
    table(tmp_path, "bwd.twosum.p1x.w8")
    (tmp_path / "bounds").mkdir()
    bounds = tmp_path / "bounds" / "sm_90a.json"  # the default: beside --out-dir
    bounds.write_text(json.dumps(_bounds_doc(**{"bwd-copy": {"row": "bwd plain 4096 fp32 65536", "text": "old note"}})))
    readme = tmp_path / "README.md"
    readme.write_text("<!-- bench-targets -->\n<!-- /bench-targets -->\n")
    args = ["bench", "--arch", "sm_90a", "--db", db, "--table", str(tmp_path / "t.json"), "--out-dir", str(tmp_path / "out"),
            "--readme", str(readme), "--copy-TBps", "4.0"]
    capsys.readouterr()
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "bound note of 'bwd-copy' explains 'bwd plain 4096 fp32 65536'" in err
    assert "*stale: written for bwd plain 4096 fp32 65536.* old note" in readme.read_text()
    assert "old note" in (tmp_path / "out" / "sm_90a-bench.md").read_text()
    saved = json.loads((tmp_path / "out" / "sm_90a-bench.json").read_text())
    assert saved["meta"]["bounds"] == str(bounds)
    assert {t["id"]: t for t in saved["targets"]}["bwd-copy"]["bound"]["stale"] is True
    bounds.write_text('{"schema": "cake-bounds/1", "arch": "sm_90a", "bounds": {"bwd-fast": {"text": "x"}}}')
    before = readme.read_text()
    assert main(args) == 2
    assert "--bounds" in capsys.readouterr().err and readme.read_text() == before
    assert main(args + ["--bounds", str(tmp_path / "missing.json")]) == 2
    assert "cannot read it" in capsys.readouterr().err


def test_bench_takes_no_copy_bandwidth_from_an_accuracy_only_run(tmp_path, capsys):
    """An accuracy-only H100 run (`measure --accuracy-only`, 132 SMs like the H200) needs no --gpu, adds
    its accuracy, and is listed apart: its copy bandwidth is not the compared card's."""
    h100 = dict(RUN, run_id="r9", gpu="NVIDIA H100 80GB HBM3", copy_TBps=3.0)
    recs = [dict(RUN, copy_TBps=4.2), h100, prog("bwd.pair.p2x.w8", "pair")]
    recs += [timing("bwd.pair.p2x.w8", "bwd", 65536, 100.0)] + [dict(r, run_id="r9") for r in acc("bwd.pair.p2x.w8", 65536, 0.5)]
    out = _bench_json(tmp_path, capsys, recs)
    assert out["meta"]["copy_TBps"] == 4.2 and [r["run_id"] for r in out["meta"]["runs"]] == ["r1"]
    assert [(r["run_id"], r["sm_count"]) for r in out["meta"]["accuracy_only_runs"]] == [("r9", 132)]
    (row,) = out["rows"]
    assert row["routed_in_budget"] is True  # qualified by the H100's 120 inputs per family


def test_an_unqualified_clean_point_does_not_decide_the_row(tmp_path):
    # Session 30: an accuracy-only call cut short at 30 inputs per family at T 1024, inside a window
    # whose program is qualified at T 256 and 4096. That point says no more than no point: the window
    # decides the T 1024 row, as it decides rows with no point. A breach decides at any input count.
    def partial(name, T, worst, inputs):
        return [dict(r, inputs=inputs) for r in acc(name, T, worst)]

    P = "bwd.pair.p2x.w8"
    base = [RUN, prog(P, "pair")] + [timing(P, "bwd", T, 10.0) for T in (256, 1024, 4096)]
    t = table(tmp_path, P)
    assert {r.T: r.routed_in_budget for r in bench.compare(aggregate_records(base + acc(P, 256, 0.3)), t, Policy())} \
        == {256: True, 1024: True, 4096: True}
    base += acc(P, 256, 0.3) + acc(P, 4096, 0.4)

    def row_at_1024(recs):
        return next(r for r in bench.compare(aggregate_records(recs), t, Policy()) if r.T == 1024)

    assert row_at_1024(base).routed_in_budget is True  # no point at 1024: the window's points decide
    assert row_at_1024(base + partial(P, 1024, 0.1, 30)).routed_in_budget is True
    # A measured breach after 4 inputs decides its own T and counts against the window at a T
    # without a point (2048); the T 256 and 4096 rows keep their own qualified points.
    rows = bench.compare(aggregate_records(base + [timing(P, "bwd", 2048, 10.0)] + partial(P, 1024, 1.7, 4)), t, Policy())
    assert {r.T: r.routed_in_budget for r in rows} == {256: True, 1024: False, 2048: False, 4096: True}
    only_partial = [RUN, prog(P, "pair"), timing(P, "bwd", 1024, 10.0)] + partial(P, 1024, 0.1, 30)
    assert row_at_1024(only_partial).routed_in_budget is False  # nothing qualified anywhere
