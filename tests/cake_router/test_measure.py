"""The measurement harness's CPU-side logic: grids, the work plan, sharding, the balanced order,
progress/resume bookkeeping and the merge; plus a GPU end-to-end run (skipped without CUDA)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest
import torch

from cake_router.cli import main as cli_main
from cake_router.measure import campaign
from cake_router.measure.accuracy import seed_for
from cake_router.measure.protocol import balanced_order


def test_named_grids_and_lists():
    assert campaign.parse_T("coarse") == list(campaign.COARSE_T)
    assert campaign.parse_T("standard")[-1] == 1048576
    assert campaign.parse_T("65536, 16,16") == [16, 65536]
    for bad in ("", "0,4", "big", "1,x"):
        with pytest.raises(ValueError, match="--T"):
            campaign.parse_T(bad)


def test_next_grid_reads_the_solvers_file(tmp_path):
    f = tmp_path / "next.json"
    f.write_text(json.dumps({"schema": "cake-next/1", "keys": [{"T": [300, 4096]}, {"T": [300]}]}))
    assert campaign.parse_T("next", str(f)) == [300, 4096]
    with pytest.raises(ValueError, match="--next-file"):
        campaign.parse_T("next", None)


def test_shards_partition_the_plan():
    units = campaign.plan_units([512, 4096], list(campaign.FORMS), ["bf16", "fp32"], list(campaign.STANDARD_T))
    shards = [campaign.plan_units([512, 4096], list(campaign.FORMS), ["bf16", "fp32"], list(campaign.STANDARD_T), (i, 3)) for i in range(3)]
    assert sorted(u for s in shards for u in s) == sorted(units)
    assert not set(shards[0]) & set(shards[1])
    assert {u.H for u in units if u.form.startswith("heads")} == {256}
    # Coarse grid first: a budget cut keeps the frame of the whole grid.
    first_fine = next(i for i, u in enumerate(units) if u.T not in campaign.COARSE_T)
    assert all(u.T in campaign.COARSE_T for u in units[:first_fine])
    assert all(u.T not in campaign.COARSE_T for u in units[first_fine:])
    for bad in ("3/3", "1", "a/b", "-1/2"):
        with pytest.raises(ValueError, match="--shard"):
            campaign.parse_shard(bad)


@pytest.mark.parametrize("n", [2, 5, 12])
def test_balanced_order_puts_each_implementation_in_each_position_equally(n):
    sessions, rounds = 4, 3
    counts = Counter()
    for s in range(sessions):
        for r in range(rounds):
            order = balanced_order(n, r, s, rounds)
            assert sorted(order) == list(range(n))
            for pos, impl in enumerate(order):
                counts[(impl, pos)] += 1
    per = [counts[(i, p)] for i in range(n) for p in range(n)]
    assert max(per) - min(per) <= 2  # up to one per direction group
    # Half the sessions run in reverse.
    assert balanced_order(n, 0, 1, rounds) == balanced_order(n, 0, 0, rounds)[::-1]


def test_seeds_are_stable_and_distinct():
    a = seed_for(4096, 65536, "plain", "gaussian", 0)
    assert a == seed_for(4096, 65536, "plain", "gaussian", 0)
    seen = {seed_for(H, T, f, fam, i) for H in (512, 4096) for T in (1, 65536) for f in campaign.FORMS
            for fam in ("gaussian", "same_sign", "outlier_rows") for i in range(3)}
    assert len(seen) == 2 * 2 * 4 * 3 * 3


def test_progress_and_merge_survive_a_torn_last_line(tmp_path):
    s1, p1 = campaign.session_paths(tmp_path, 0)
    run = {"schema": "cake-evidence/1", "kind": "run", "run_id": "r-s1"}
    prog = {"schema": "cake-evidence/1", "kind": "program", "name": "bwd.pair.p2x.w8"}
    line = json.dumps(run) + "\n" + json.dumps(prog) + "\n"
    s1.write_text(line + '{"schema": "cake-evid')  # killed mid-write
    p1.write_text(f"#header {len(line)}\nplain/H64/fp32/T1 12")  # torn progress line
    done = campaign.read_progress(p1)
    assert done == {"#header": len(line)}
    s2, _ = campaign.session_paths(tmp_path, 1)
    s2.write_text(json.dumps(dict(run, run_id="r-s2")) + "\n" + json.dumps(prog) + "\n")
    out = tmp_path / "merged.jsonl"
    n = campaign.merge([s1, s2], out)
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert n == len(recs) == 3  # two runs, the program once, the torn line dropped
    assert [r["kind"] for r in recs].count("program") == 1


def test_session_files_are_the_sessions_evidence_not_their_failure_files(tmp_path):
    for s in (0, 1, 9):
        campaign.session_paths(tmp_path, s)[0].write_text("")
        (tmp_path / f"session-s{s + 1}.failures.jsonl").write_text('{"unit": "u", "impl": "peer.liger"}\n')
    assert [p.name for p in campaign.session_files(tmp_path)] == ["session-s1.jsonl", "session-s2.jsonl",
                                                                "session-s10.jsonl"]


def test_measure_without_gpu_says_what_to_do(capsys):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert cli_main(["measure", "--H", "64", "--T", "1"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err


@pytest.mark.parametrize("argv, what", [(["--wave-units", "0"], "--wave-units: 0 not accepted"),
                                        (["--large-T-inputs", "-1"], "--large-T-inputs: -1 not accepted"),
                                        (["--step-fwd", "bwd.twosum.p1x.w8"], "--step-fwd: 'bwd.twosum.p1x.w8' is not 'routed' or a registered forward"),
                                        (["--step-fwd", "fwd.nope"], "--step-fwd: 'fwd.nope' is not"),
                                        (["--forms", "diagonal"], "--forms: ['diagonal'] not accepted"),
                                        (["--programs", "bwd.nope"], "['bwd.nope'] match no registered program"),
                                        (["--programs", "fwd.row.r4.w2", "--ops", "2xfwd+bwd"],
                                         "['fwd.row.r4.w2'] are registered, but --ops 2xfwd+bwd times none of them"),
                                        (["--peers", "peer.nope"], "--peers: unknown ['peer.nope']"),
                                        (["--accuracy-only", "--sessions", "1", "--inputs-per-family", "0"],
                                         "--accuracy-only: measures accuracy alone"),
                                        (["--accuracy-only", "--sessions", "1", "--large-T-inputs", "0"],
                                         "--accuracy-only: measures accuracy alone"),
                                        (["--accuracy-only", "--sessions", "1", "--ops", "fwd"],
                                         "--accuracy-only: accuracy is a backward's (dw); --ops fwd has no bwd"),
                                        (["--accuracy-only"], "--accuracy-only: one session measures each unit's accuracy, so --sessions 4")])
def test_measure_rejects_bad_input_before_looking_for_a_gpu(capsys, argv, what):
    assert cli_main(["measure", "--H", "64", "--T", "1", *argv]) == 2
    assert what in capsys.readouterr().err


def test_zero_large_T_inputs_means_timing_only_above_the_cut(monkeypatch):
    from cake_router.measure import accuracy, session

    calls = []
    monkeypatch.setattr(accuracy, "evaluate", lambda wl, fns, fams, n, dev, deadline=None: calls.append(n) or [])
    doc = {"inputs_per_family": 120, "accuracy_max_T": 4096, "large_T_inputs": 0, "families": ["gaussian"]}
    for T in (4096, 65536):
        session._accuracy_unit(doc, campaign.Unit(256, "plain", "fp32", T), {}, {}, [], "cpu", None)
    assert calls == [120]  # T 4096 sampled with 120 inputs per family, T 65536 not at all
    calls.clear()
    session._accuracy_unit(dict(doc, large_T_inputs=2), campaign.Unit(256, "plain", "fp32", 65536), {}, {}, [], "cpu", None)
    assert calls == [2]


@pytest.mark.parametrize("accuracy_only, peers", [(True, []), (True, ["peer.eager"]), (False, [])])
def test_accuracy_only_prepares_the_programs_and_times_nothing(monkeypatch, accuracy_only, peers):
    """`measure --accuracy-only`: a unit captures and times nothing, so its run holds no timing record.
    Without peers it allocates no timing input either: this package's programs' dw functions need
    none (`impls.program_dw_for_accuracy`); a peer is prepared on one (it compiles for the shape)."""
    from types import SimpleNamespace

    import cake_kernels.inputs
    from cake_router.measure import impls, protocol, session

    def dw(*a):
        return None

    made = []
    monkeypatch.setattr(cake_kernels.inputs, "make_inputs", lambda *a, **k: made.append(a) or object())
    monkeypatch.setattr(impls.SharedOutputs, "for_inputs", staticmethod(lambda inp: None))
    monkeypatch.setattr(campaign, "step_forward", lambda *a: "fwd.row.r1.w8")
    monkeypatch.setattr(impls, "prepare_program", lambda name, *a: SimpleNamespace(name=name, ops={"bwd": dw}, dw_for_accuracy=dw))
    monkeypatch.setattr(impls, "prepare_peer", lambda name, *a: SimpleNamespace(name=name, ops={"bwd": dw}, dw_for_accuracy=dw))

    def capture(*a, **k):
        raise AssertionError("captured a graph")

    monkeypatch.setattr(protocol, "capture", capture)
    monkeypatch.setattr(session.torch.cuda, "graph_pool_handle", lambda: None)
    monkeypatch.setattr(protocol, "time_entries", lambda entries, *a, **k: [])
    # a forward and a column task past its T limit ride along: neither has an accuracy function
    doc = {"programs": ["bwd.pair.p2x.w8", "fwd.row.r1.w8", "bwd.column_task.c32.w4"], "peers": peers, "ops": ["bwd"],
           "arch": "sm_90a", "replays": 8, "rounds": 2, "accuracy_only": accuracy_only}
    unit = campaign.Unit(256, "plain", "fp32", campaign.COLUMN_TASK_MAX_T * 2)
    failures = []
    records, fns = session._time_unit(doc, unit, 0, "s1", {}, failures, "cpu")
    if accuracy_only and not peers:
        assert records == [] and list(fns) == ["bwd.pair.p2x.w8"] and failures == [] and made == []
        assert fns["bwd.pair.p2x.w8"].__qualname__.startswith("program_dw_for_accuracy")
    elif accuracy_only:
        assert records == [] and fns == {"bwd.pair.p2x.w8": dw, "fwd.row.r1.w8": dw, "peer.eager": dw} and len(made) == 1
    else:  # the timed path captures (here: the failure the patched capture raises)
        assert [name for name, _ in failures] == ["bwd.pair.p2x.w8:bwd", "fwd.row.r1.w8:bwd"]


@pytest.mark.interpreter
def test_program_dw_for_accuracy_is_the_runners_backward():
    """The accuracy function of a program run without a timing input equals the runner's own backward."""
    from cake_kernels import runner
    from cake_kernels.inputs import make_inputs
    from cake_kernels.reference import reference_forward
    from cake_router.measure import impls

    inp = make_inputs("gaussian", 8, 64, "fp32", "plain", seed=3, device="cpu")
    rstd = reference_forward(inp.x, inp.w, 1e-6, inp.residual)[1]
    dx, dw = impls.program_dw_for_accuracy("bwd.twosum_pair.p2x.w8")(inp, inp.x, rstd)
    dx0, dw0 = runner.backward("bwd.twosum_pair.p2x.w8", inp.g, inp.x, inp.w, rstd, inp.g_h_new)
    assert torch.equal(dx, dx0) and torch.equal(dw, dw0)


@pytest.mark.gpu
def test_measure_end_to_end_on_the_gpu(tmp_path):
    out = tmp_path / "ev.jsonl"
    cmd = [sys.executable, "-m", "cake_router", "measure", "--H", "256", "--T", "1,4096", "--forms", "plain",
           "--w-dtypes", "fp32", "--sessions", "2", "--rounds", "2", "--replays", "8", "--inputs-per-family", "2",
           "--programs", "bwd.pair.p2x.w8,bwd.twosum_pair.p2x.w8,fwd.row.r1.w8", "--peers", "peer.eager",
           "--work-dir", str(tmp_path / "w"), "--out", str(out), "--json"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    kinds = Counter(r["kind"] for r in recs)
    assert kinds["run"] == 2 and kinds["timing"] > 0 and kinds["accuracy"] > 0
    assert {r["timer"] for r in recs if r["kind"] == "timing"} <= {"cupti", "events"}
    assert any(r["copy"] == 1 for r in recs if r["kind"] == "timing")  # A/A copies


def _plan(n_units, sessions=2, deadline=None):
    units = campaign.plan_units([64], ["plain"], ["fp32"], list(range(1, n_units + 1)))
    return campaign.Plan(run_prefix="t", arch="sm_90a", units=units, programs=[], peers=[], ops=["bwd"],
                         sessions=sessions, deadline=deadline)


def test_sequential_sessions_run_in_waves(tmp_path):
    plan = _plan(5)
    files = campaign.run_campaign(plan, tmp_path, gpus=None, resume=False, log=lambda m: None, wave_units=2,
                                  session_module="tests.cake_router.fake_measure_session")
    order = [line.split()[0] + ":" + line.split()[1].rsplit("/T", 1)[1] for line in (tmp_path / "order.log").read_text().splitlines()]
    assert order == ["s1:1", "s1:2", "s2:1", "s2:2", "s1:3", "s1:4", "s2:3", "s2:4", "s1:5", "s2:5"]
    assert len(files) == 2
    # Resume: nothing left to do, nothing re-measured.
    campaign.run_campaign(plan, tmp_path, gpus=None, resume=True, log=lambda m: None, wave_units=2,
                          session_module="tests.cake_router.fake_measure_session")
    assert len((tmp_path / "order.log").read_text().splitlines()) == 10


def test_a_session_whose_crash_named_a_culprit_is_retried(tmp_path, monkeypatch):
    """Without progress a failing session is dropped (no retry loop), except when its crash named a
    culprit to skip: then the retry measures the unit without it."""
    plan = _plan(3)
    key = plan.units[1].key
    monkeypatch.setenv("CAKE_FAKE_CRASH_UNIT", key)
    logs = []
    campaign.run_campaign(plan, tmp_path, gpus=None, resume=False, log=logs.append, wave_units=1,
                          session_module="tests.cake_router.fake_measure_session")
    assert campaign.units_done(tmp_path, 0) == campaign.units_done(tmp_path, 1) == 3
    assert sum("(code 1)" in m for m in logs) == 2  # each session crashed once at that unit
    assert campaign.quarantine_count(tmp_path, 0) == campaign.quarantine_count(tmp_path, 1) == 1


def test_budget_stops_between_waves(tmp_path, monkeypatch):
    import time as _t

    monkeypatch.setenv("CAKE_FAKE_SECONDS_PER_UNIT", "0.4")
    plan = _plan(6, deadline=_t.time() + 1.0)
    campaign.run_campaign(plan, tmp_path, gpus=None, resume=False, log=lambda m: None, wave_units=2,
                          session_module="tests.cake_router.fake_measure_session")
    lines = (tmp_path / "order.log").read_text().splitlines()
    assert 2 <= len(lines) < 12  # stopped cleanly at a wave boundary, before the plan was done
    assert len(lines) % 2 == 0  # whole waves only


def test_programs_full_names_are_exact_other_entries_are_prefixes():
    reg = ["bwd.pair.p2x.w8", "bwd.pair.p2x.w8.pf", "bwd.pair.p2x.w8.pf.sp", "bwd.twosum.p1x.w8", "fwd.row.r1.w4"]
    assert campaign.select_programs(reg, ["bwd.pair.p2x.w8.pf"]) == ["bwd.pair.p2x.w8.pf"]
    assert campaign.select_programs(reg, ["bwd.pair.p2x.w8.pf.sp", "fwd.row.r1.w4"]) == ["bwd.pair.p2x.w8.pf.sp", "fwd.row.r1.w4"]
    assert campaign.select_programs(reg, ["bwd.pair.p2x.w8.p"]) == ["bwd.pair.p2x.w8.pf", "bwd.pair.p2x.w8.pf.sp"]
    assert campaign.select_programs(reg, ["fwd.row.r1.w4", "bwd.twosum"]) == ["bwd.twosum.p1x.w8", "fwd.row.r1.w4"]
    with pytest.raises(ValueError, match=r"\['bwd.twosum.p9x'\] match no registered program"):
        campaign.select_programs(reg, ["bwd.pair.p2x.w8", "bwd.twosum.p9x"])


def test_a_cuda_error_ends_the_session_and_names_the_implementation(tmp_path, monkeypatch, capsys):
    """A sticky CUDA error inside a unit: the session process re-raises (a fresh process retries the
    unit), but first writes the failures gathered so far, which name the implementation whose
    capture raised it, so the crash is attributable."""
    from types import SimpleNamespace

    from cake_router.measure import protocol, session

    monkeypatch.setattr(session.torch.cuda, "get_device_properties", lambda dev: SimpleNamespace(name="fake", multi_processor_count=4))
    monkeypatch.setattr(campaign, "provenance", lambda run_id, arch, name, sms: {"kind": "run", "run_id": run_id})
    monkeypatch.setattr(protocol, "copy_bandwidth_TBps", lambda dev: 1.0)

    def crashing_unit(doc, unit, s, sess, base, failures, device):
        failures.append(("bwd.example:bwd", RuntimeError("CUDA error: an illegal memory access was encountered")))
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(session, "_time_unit", crashing_unit)
    doc = {"units": [{"H": 256, "form": "heads_strided", "w_dtype": "fp32", "T": 1}], "run_prefix": "t", "arch": "sm_90a",
           "programs": [], "peers": [], "sessions": 1, "deadline": None}
    spec = tmp_path / "plan-s1.json"
    spec.write_text(json.dumps(doc))
    with pytest.raises(RuntimeError, match="illegal memory access"):
        session.main([str(spec), "0"])
    lines = [json.loads(x) for x in (tmp_path / "session-s1.failures.jsonl").read_text().splitlines()]
    assert [(x["unit"], x["impl"]) for x in lines] == [("heads_strided/H256/fp32/T1", "bwd.example:bwd"),
                                                         ("heads_strided/H256/fp32/T1", "unit"),
                                                         ("heads_strided/H256/fp32/T1", "bwd.example")]
    assert lines[-1]["quarantine"] is True
    assert "CUDA error (bwd.example:bwd); ending this process" in capsys.readouterr().err

    # The retry (a fresh process) skips the culprit, records why, and measures the rest of the unit.
    seen = {}

    def measuring_unit(doc, unit, s, sess, base, failures, device):
        seen["programs"], seen["failures"] = doc["programs"], [name for name, _ in failures]
        return [dict(base, kind="timing", program="bwd.other", op="bwd")], {}

    monkeypatch.setattr(session, "_time_unit", measuring_unit)
    monkeypatch.setattr(session, "_accuracy_unit", lambda *a, **k: [])
    spec.write_text(json.dumps(dict(doc, programs=["bwd.example", "bwd.other"])))
    assert session.main([str(spec), "0"]) == 0
    assert seen == {"programs": ["bwd.other"], "failures": ["bwd.example"]}
    lines = [json.loads(x) for x in (tmp_path / "session-s1.failures.jsonl").read_text().splitlines()]
    assert "earlier attempt" in lines[-1]["error"] and lines[-1]["impl"] == "bwd.example"


def test_a_cuda_error_in_the_accuracy_pass_quarantines_the_implementation_it_names(tmp_path, monkeypatch, capsys):
    """Round 9 lost a unit twice to an anonymous illegal address: the fault of a peer's accuracy call
    surfaced at the next input's allocation. The accuracy pass now names the implementation
    (accuracy.ImplementationFault) and the session quarantines it, as it does a capture's culprit."""
    from types import SimpleNamespace

    from cake_router.measure import accuracy, protocol, session

    monkeypatch.setattr(session.torch.cuda, "get_device_properties", lambda dev: SimpleNamespace(name="fake", multi_processor_count=4))
    monkeypatch.setattr(campaign, "provenance", lambda run_id, arch, name, sms: {"kind": "run", "run_id": run_id})
    monkeypatch.setattr(protocol, "copy_bandwidth_TBps", lambda dev: 1.0)
    monkeypatch.setattr(session, "_time_unit", lambda doc, unit, s, sess, base, failures, device: ([], {}))

    def faulting_accuracy(doc, unit, base, acc_fns, failures, device, deadline):
        raise accuracy.ImplementationFault("peer.liger", RuntimeError("CUDA error: an illegal memory access was encountered"))

    monkeypatch.setattr(session, "_accuracy_unit", faulting_accuracy)
    doc = {"units": [{"H": 256, "form": "heads_contiguous", "w_dtype": "fp32", "T": 4096}], "run_prefix": "t",
           "arch": "sm_90a", "programs": [], "peers": ["peer.liger"], "sessions": 1, "deadline": None}
    spec = tmp_path / "plan-s1.json"
    spec.write_text(json.dumps(doc))
    with pytest.raises(accuracy.ImplementationFault):
        session.main([str(spec), "0"])
    lines = [json.loads(x) for x in (tmp_path / "session-s1.failures.jsonl").read_text().splitlines()]
    assert lines[-1] == {"unit": "heads_contiguous/H256/fp32/T4096", "impl": "peer.liger", "quarantine": True,
                         "error": "raised a CUDA error here; skipped when the unit is retried"}
    assert "CUDA error (peer.liger); ending this process" in capsys.readouterr().err
    assert campaign.quarantined(tmp_path / "session-s1.failures.jsonl") == {"heads_contiguous/H256/fp32/T4096": {"peer.liger"}}


def test_steps_run_the_routed_forward_and_routed_selection_follows_the_table():
    """`2xfwd+bwd` steps pair each backward with the forward the shipped table runs at that key and
    T (what a training step runs), and `--programs routed` picks the table's pair per unit."""
    import warnings

    from cake_kernels.routes import dispatch

    table = dispatch.table_for("sm_90a")
    seen = set()
    for u in campaign.plan_units([512, 2048, 6144], campaign.FORMS, ["bf16", "fp32"], [1, 4096, 1048576]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dispatch.FallbackWarning)
            fwd = dispatch.route(table, "sm_90a", "fwd", u.H, u.w_dtype, u.form, "det", u.T)
            bwd = dispatch.route(table, "sm_90a", "bwd", u.H, u.w_dtype, u.form, "det", u.T)
        assert campaign.step_forward("routed", "sm_90a", u.H, u.form, u.w_dtype, u.T) == fwd
        assert campaign.routed_programs("sm_90a", u) == [fwd, bwd]
        seen.add(fwd)
    assert len(seen) > 3  # the forward does change with the key and T, so a fixed one would misstate steps
    assert campaign.step_forward("fwd.row.r1.w8", "sm_90a", 512, "plain", "bf16", 1) == "fwd.row.r1.w8"
    # `--programs routed,NAMES`: the routed pair of each unit plus the named programs at every unit.
    u = campaign.plan_units([6144], ["plain"], ["fp32"], [256])[0]
    pair = campaign.routed_programs("sm_90a", u)
    doc = {"arch": "sm_90a", "programs": pair + ["fwd.row.r1.w8.wt"], "routed_only": True, "also": ["fwd.row.r1.w8.wt"]}
    assert campaign.unit_programs(doc, u) == pair + ["fwd.row.r1.w8.wt"]
    other = campaign.plan_units([512], ["plain"], ["fp32"], [256])[0]
    assert campaign.unit_programs(doc, other) == [n for n in campaign.routed_programs("sm_90a", other) if n in pair] + ["fwd.row.r1.w8.wt"]
    assert campaign.unit_programs({**doc, "routed_only": False}, other) == doc["programs"]
    # No table for an arch: the runtime's fallback, as dispatch would run.
    assert campaign.step_forward("routed", "sm_75", 512, "plain", "bf16", 1) == dispatch.FALLBACK["fwd"]


def test_provenance_marks_a_tree_that_differs_from_its_commit(tmp_path, monkeypatch):
    """The run record's git_sha is the commit, with `-dirty` where tracked files were changed after
    it (a copied working tree whose .git is older than the code that ran is then visible)."""
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a.py").write_text("x = 1\n")
    subprocess.run(["git", "-C", str(tmp_path), "add", "a.py"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "commit", "-qm", "a"], check=True)
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "--short=7", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    monkeypatch.chdir(tmp_path)
    assert campaign.provenance("r", "sm_90a", "gpu", 1)["git_sha"] == head
    (tmp_path / "a.py").write_text("x = 2\n")
    assert campaign.provenance("r", "sm_90a", "gpu", 1)["git_sha"] == f"{head}-dirty"
