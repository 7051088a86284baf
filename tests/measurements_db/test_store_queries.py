"""The query layer: workload_evidence equals the reference aggregator; runs, run_detail, stats."""

from __future__ import annotations

import json
import random

import pytest

from measurements_db import aggregates, queries
from measurements_db.engine import StoreError
from measurements_db.evidence_io import import_evidence, parse_evidence
from measurements_db.synthetic import generate_evidence
from tests.measurements_db.conftest import SAMPLE


def reference(records, arch):
    return {k: v for k, v in aggregates.aggregate_records(records).items() if k.arch == arch}


def test_sample_file_aggregates_equal_the_reference(store):
    recs = parse_evidence(SAMPLE.read_text().splitlines(), "s")
    import_evidence(store, SAMPLE)
    assert queries.arches(store) == ["sm_107a", "sm_90a"]
    for arch in ("sm_90a", "sm_107a"):
        got = queries.workload_evidence(store, arch)
        assert got and got == reference(recs, arch)
    ev = queries.workload_evidence(store, "sm_90a")
    (wk,) = ev
    t = ev[wk].timing[("bwd.twosum_pair.p2x.w8", "bwd", 65536)]
    assert t.median_us == aggregates.median([412.1, 411.8, 413.0, 412.4]) and t.n == 4
    assert ev[wk].accuracy[("bwd.twosum_pair.p2x.w8", 65536)].families["same_sign"].inputs == 120
    assert queries.workload_evidence(store, "sm_100a") == {}


@pytest.mark.parametrize("seed", range(6))
def test_random_evidence_aggregates_equal_the_reference(tmp_path, seed):
    """Several runs, A/A copies, published rows that measured ones outrank, per-input and aggregate
    accuracy, evidence split over several files in random order."""
    from measurements_db.engine import open_store

    rng = random.Random(seed)
    recs = generate_evidence(
        runs=rng.randint(1, 3), sessions=rng.randint(1, 3), rounds=rng.randint(1, 3),
        samples_per_block=rng.choice([1, 2, 5, 6]), fwd_programs=rng.randint(0, 2), bwd_programs=rng.randint(1, 3),
        aa_programs=rng.randint(0, 2), accuracy_inputs=rng.randint(1, 4), accuracy_aggregates=rng.random() < 0.5,
        published=rng.random() < 0.7, seed=seed, forms=rng.sample(["plain", "residual", "heads_strided"], 2),
        T_values=rng.sample([1, 7, 256, 4096, 65536, 524288], 3),
    )
    # Published-only points and A/A-only blocks, which the reference treats specially.
    extra_pub = [dict(r, program="bwd.published.only", run_id="synthetic-sm_90a-published")
                 for r in recs if r["kind"] == "timing" and r["program"] == "peer.synthetic"][:3]
    recs += extra_pub
    meta = [r for r in recs if r["kind"] in ("run", "program")]
    rest = [r for r in recs if r["kind"] not in ("run", "program")]
    rng.shuffle(rest)
    st = open_store(f"sqlite:///{tmp_path / 's.sqlite'}")
    parts = rng.randint(1, 4)
    import_evidence(st, meta, name="meta")
    for i in range(parts):
        import_evidence(st, rest[i::parts], name=f"part{i}")
    got = queries.workload_evidence(st, "sm_90a")
    assert got == reference(recs, "sm_90a")
    assert len(got) == len({(r["H"], r["w_dtype"], r["form"]) for r in rest})
    st.close()


def test_warm_l2_blocks_never_enter_the_latency(store):
    # ROUTING-POLICY section 4: latency is timed with L2 flushed; a warm block (allowed by the
    # format) of 5 us must not pool with the cold 412 us ones.
    recs = parse_evidence(SAMPLE.read_text().splitlines(), "s")
    cold = next(r for r in recs if r["kind"] == "timing" and "samples_us" in r)
    warm = dict(cold, l2="warm", samples_us=[5.0] * 40)
    import_evidence(store, recs + [warm])
    for ev in (queries.workload_evidence(store, "sm_90a"), reference(recs + [warm], "sm_90a")):
        (t,) = [w.timing[(cold["program"], "bwd", cold["T"])] for w in ev.values()]
        assert t.median_us == aggregates.median(cold["samples_us"]) and t.n == len(cold["samples_us"])
    assert queries.workload_evidence(store, "sm_90a") == reference(recs + [warm], "sm_90a")


@pytest.mark.parametrize("newer_first", [False, True])
def test_which_program_record_describes_a_name_does_not_depend_on_order(tmp_path, newer_first):
    # DESIGN: same evidence + policy -> byte-identical table. A name measured under two fingerprints
    # is described by the record with the greater fingerprint, in whichever order they came.
    from measurements_db.engine import open_store

    recs = parse_evidence(SAMPLE.read_text().splitlines(), "s")
    other = dict(recs[1], fingerprint="sha256:ffff-changed", description="a changed kernel")
    order = [[other], recs] if newer_first else [recs, [other]]
    store = open_store(f"sqlite:///{tmp_path / 'o.sqlite'}")
    for part in order:
        import_evidence(store, part)
    ev = queries.workload_evidence(store, "sm_90a")
    (e,) = ev.values()
    assert e.programs["bwd.twosum_pair.p2x.w8"].fingerprint == "sha256:ffff-changed"
    assert ev == reference(order[0] + order[1], "sm_90a") == reference(order[1] + order[0], "sm_90a")
    store.close()


def test_runs_run_detail_and_stats(store):
    recs = generate_evidence(runs=2, sessions=2, rounds=2, samples_per_block=3, aa_programs=1, published=True)
    import_evidence(store, recs, name="synthetic.jsonl")
    runs = queries.runs(store)
    assert {r["run_id"] for r in runs} == {"synthetic-sm_90a-r0", "synthetic-sm_90a-r1", "synthetic-sm_90a-published"}
    r0 = next(r for r in runs if r["run_id"] == "synthetic-sm_90a-r0")
    assert r0["file_name"] == "synthetic.jsonl" and r0["gpu"] == "NVIDIA H200" and r0["samples"] > 0
    assert queries.runs(store, arch="sm_100a") == []

    d = queries.run_detail(store, "synthetic-sm_90a-r0")
    assert d["run"]["run_id"] == "synthetic-sm_90a-r0"
    p = d["points"][0]
    assert set(p["session_medians"]) == {"s0", "s1"} and p["spread"] is not None
    assert d["aa_pairs"] and all(pair["floor"] == abs(1 - pair["ratio"]) for pair in d["aa_pairs"])
    assert d["accuracy"] and d["max_aa_floor"] == max(pair["floor"] for pair in d["aa_pairs"])
    json.dumps(d)  # plain data
    with pytest.raises(StoreError, match="no run 'nope'"):
        queries.run_detail(store, "nope")

    s = queries.stats(store)
    timing = [r for r in recs if r["kind"] == "timing"]
    assert s["totals"]["timing_blocks"] == len(timing)
    assert s["totals"]["samples"] == sum(len(r.get("samples_us", [])) for r in timing)
    assert s["totals"]["accuracy_records"] == sum(r["kind"] == "accuracy" for r in recs)
    assert [a["arch"] for a in s["arches"]] == ["sm_90a"] and s["arches"][0]["runs"] == 3
    assert {p["program"] for p in s["programs"]} >= {"bwd.synthetic.p0", "peer.synthetic"}
    assert len(s["keys"]) == 4 and sum(k["timing_blocks"] for k in s["keys"]) == len(timing)


def test_steps_with_different_forwards_never_pool(tmp_path):
    """`2xfwd+bwd` records name their forward from round 8 on (`step_fwd`): the point keeps one
    forward's records (named before unnamed, then the latest run's), in the store as in the reference."""
    from measurements_db.engine import open_store

    recs = generate_evidence(runs=3, sessions=1, rounds=1, samples_per_block=2, fwd_programs=0, bwd_programs=1,
                             aa_programs=0, H_values=(2048,), w_dtypes=("bf16",), T_values=(4096,))
    runs = sorted((r for r in recs if r["kind"] == "run"), key=lambda r: r["started"])
    assert len(runs) == 3 and len({r["started"] for r in runs}) == 3
    bwd = next(r for r in recs if r["kind"] == "timing" and r["op"] == "bwd")
    step = {run["run_id"]: (fwd, us) for run, fwd, us in zip(runs, (None, "fwd.b", "fwd.a"), (500.0, 300.0, 200.0))}

    def steps(which):
        out = []
        for run_id, (fwd, us) in step.items():
            if run_id in which:
                rec = dict(bwd, run_id=run_id, op="2xfwd+bwd", samples_us=[us, us])
                if fwd:
                    rec["step_fwd"] = fwd
                out.append(rec)
        return out

    ids = [r["run_id"] for r in runs]
    cases = [(ids[:1], None, 500.0), (ids[:2], "fwd.b", 300.0), (ids, "fwd.a", 200.0), ([ids[0], ids[2]], "fwd.a", 200.0)]
    for i, (which, fwd, us) in enumerate(cases):
        all_recs = recs + steps(which)
        st = open_store(f"sqlite:///{tmp_path / f's{i}.sqlite'}")
        import_evidence(st, all_recs, name="all")
        got = queries.workload_evidence(st, "sm_90a")
        st.close()
        assert got == reference(all_recs, "sm_90a")
        (ev,) = got.values()
        t = ev.timing[(bwd["program"], "2xfwd+bwd", bwd["T"])]
        assert (t.step_fwd, t.median_us, len(t.run_ids)) == (fwd, us, 1)
    # The latest run decides among named forwards, whichever order the runs were imported in.
    assert aggregates.pick_step_group({"fwd.a": ["2026-12-01T00:00:00Z"], "fwd.b": ["2026-12-03T00:00:00Z"], None: ["2027"]}) == "fwd.b"


def test_inputs_of_several_runs_do_not_add_up(tmp_path):
    """Every run draws input i of a family from the same seed (`seed_for(..., i)`, i from 0), so a
    second run at a point re-evaluates the first run's inputs: 60 + 60 inputs are 60, not the 120
    that qualify a point, and 30 + 120 are 120 (session 10: explain showed 150)."""
    from cake_router.policy import Policy
    from cake_router.policy.rules import point_qualified
    from measurements_db.engine import open_store

    base = {"schema": "cake-evidence/1", "kind": "accuracy", "arch": "sm_90a", "program": "bwd.twosum_pair.p2x.w8",
            "H": 2048, "T": 1048576, "x_dtype": "bf16", "w_dtype": "bf16", "form": "plain",
            "dw_err_over_tol_median": 0.0002, "eager_err_over_tol_max": 5.0, "eager_err_over_tol_median": 0.002,
            "dx_err_over_tol_max": 0.3, "rstd_rel_l2": 1e-8, "rstd_form": "forward"}
    runs = [{"schema": "cake-evidence/1", "kind": "run", "run_id": rid, "source": "measured", "arch": "sm_90a",
             "gpu": "NVIDIA H200", "sm_count": 132, "started": f"2026-12-0{i + 1}T10:00:00Z"} for i, rid in enumerate(("r1", "r2"))]
    prog = {"schema": "cake-evidence/1", "kind": "program", "name": "bwd.twosum_pair.p2x.w8", "op": "bwd",
            "deterministic": True, "family": "twosum_pair", "runnable": True, "fingerprint": "x"}
    for case, (n1, n2), want, qualified in (("a", (60, 60), 60, False), ("b", (30, 120), 120, True)):
        recs = runs + [prog] + [dict(base, run_id=rid, family=fam, inputs=n, dw_err_over_tol_max=w)
                                for rid, n, w in (("r1", n1, 0.0006), ("r2", n2, 0.0004))
                                for fam in ("gaussian", "same_sign", "outlier_rows")]
        st = open_store(f"sqlite:///{tmp_path / f'{case}.sqlite'}")
        import_evidence(st, recs, name=case)
        got = queries.workload_evidence(st, "sm_90a")
        st.close()
        assert got == reference(recs, "sm_90a")
        (ev,) = got.values()
        acc = ev.accuracy[("bwd.twosum_pair.p2x.w8", 1048576)]
        assert {f.inputs for f in acc.families.values()} == {want}
        assert {f.worst for f in acc.families.values()} == {0.0006}  # the worse run counts
        assert point_qualified(acc, Policy()) is qualified


def test_choose_gpu_never_pools_two_models():
    """The one rule the CLI (`--gpu`) and the service (`?gpu=`) follow: a named model that measured the
    arch, else the only one (None: every run), refused where several did and none is named or where the
    named one did not."""
    h100, h200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"
    assert aggregates.choose_gpu("sm_90a", {}, None) is None
    assert aggregates.choose_gpu("sm_90a", {h200: 3}, None) is None
    assert aggregates.choose_gpu("sm_90a", {h200: 3, h100: 1}, h100) == h100
    with pytest.raises(aggregates.GpuChoiceError) as exc:
        aggregates.choose_gpu("sm_90a", {h200: 3, h100: 1}, None)
    assert exc.value.wanted is None and exc.value.counts == {h200: 3, h100: 1} and exc.value.arch == "sm_90a"
    for counts in ({}, {h200: 3}):
        with pytest.raises(aggregates.GpuChoiceError) as exc:
            aggregates.choose_gpu("sm_90a", counts, h100)
        assert exc.value.wanted == h100 and exc.value.counts == counts


def test_evidence_runs_time_one_model_and_take_accuracy_from_cards_of_its_sm_count():
    """Timing: the chosen model's runs. Accuracy: also every measured run of a card with an SM count the
    chosen model timed with (dw is a function of the compiled program and its SM-sized grid); a card
    of another SM count never qualifies anything, and accuracy-only runs never force a choice."""
    R = aggregates.RunInfo
    h200, h100, pcie = "NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe"
    runs = [R("t200", "measured", h200, 132, True), R("a100", "measured", h100, 132, False),
            R("a_pcie", "measured", pcie, 114, False), R("pub", "published", "B200", 148, True)]
    assert aggregates.timing_gpus(runs) == {h200: 1}
    t, a = aggregates.evidence_runs(runs, None)
    assert t == {"t200", "a100", "a_pcie", "pub"} and a == {"t200", "a100", "pub"}
    t, a = aggregates.evidence_runs(runs, h200)
    assert t == {"t200"} and a == {"t200", "a100"}
    # An H100 that timed too: a model to choose; either choice takes the other card's accuracy.
    runs.append(R("t100", "measured", h100, 132, True))
    assert aggregates.timing_gpus(runs) == {h200: 1, h100: 1}
    assert aggregates.evidence_runs(runs, h200) == ({"t200"}, {"t200", "a100", "t100"})
    assert aggregates.evidence_runs(runs, h100) == ({"a100", "t100"}, {"t200", "a100", "t100"})
    assert aggregates.evidence_runs(runs, pcie) == ({"a_pcie"}, {"a_pcie"})  # nothing timed on it
    # Nothing timed at all: every run's accuracy counts, as before any timing existed.
    only_acc = [R("a1", "measured", h100, 132, False), R("a2", "measured", pcie, 114, False)]
    assert aggregates.evidence_runs(only_acc, None) == ({"a1", "a2"}, {"a1", "a2"})


@pytest.mark.parametrize("sm_count, counted", [(132, True), (114, False)])
def test_store_takes_accuracy_of_an_accuracy_only_run_as_the_reference_does(tmp_path, sm_count, counted):
    """An accuracy-only run on another card of the arch: the store and the reference aggregator read it
    alike, with and without a named model, and it counts exactly when its SM count is the timed card's."""
    from measurements_db.engine import open_store

    def run(rid, gpu, sm):
        return {"schema": "cake-evidence/1", "kind": "run", "run_id": rid, "source": "measured", "arch": "sm_90a",
                "gpu": gpu, "sm_count": sm, "started": "2026-12-06T10:00:00Z"}

    wl = {"arch": "sm_90a", "H": 256, "x_dtype": "bf16", "w_dtype": "bf16", "form": "heads_strided"}
    prog = {"schema": "cake-evidence/1", "kind": "program", "name": "bwd.p", "op": "bwd", "deterministic": True,
            "family": "twosum_pair", "runnable": True, "fingerprint": "x"}
    timing = [{"schema": "cake-evidence/1", "kind": "timing", "run_id": "h200", "program": "bwd.p", "op": "bwd",
               "T": 262144, **wl, "session": f"s{k}", "round": 0, "position": 0, "copy": 0, "timer": "cupti",
               "l2": "cold", "samples_us": [2600.0 + k]} for k in range(2)]
    acc = [{"schema": "cake-evidence/1", "kind": "accuracy", "run_id": rid, "program": "bwd.p", "T": 262144, **wl,
            "family": fam, "inputs": n, "dw_err_over_tol_max": w, "dw_err_over_tol_median": 0.01,
            "eager_err_over_tol_max": 5.0, "eager_err_over_tol_median": 0.05, "dx_err_over_tol_max": 0.3,
            "rstd_rel_l2": 1e-8, "rstd_form": "forward"}
           for rid, n, w in (("h200", 4, 0.2), ("h100", 120, 0.3)) for fam in aggregates.FAMILIES]
    recs = [run("h200", "NVIDIA H200", 132), run("h100", "NVIDIA H100", sm_count), prog] + timing + acc
    st = open_store(f"sqlite:///{tmp_path / 's.sqlite'}")
    try:
        import_evidence(st, recs, name="mixed")
        assert queries.measured_gpus(st, "sm_90a") == {"NVIDIA H200": 1}
        for gpu in (None, "NVIDIA H200"):
            got = queries.workload_evidence(st, "sm_90a", gpu)
            assert got == aggregates.aggregate_records(recs, {"sm_90a": gpu})
            (ev,) = got.values()
            fams = ev.accuracy[("bwd.p", 262144)].families
            assert {f.inputs for f in fams.values()} == ({120} if counted else {4})
            assert {f.worst for f in fams.values()} == ({0.3} if counted else {0.2})
            assert ev.timing[("bwd.p", "bwd", 262144)].run_ids == ("h200",)
    finally:
        st.close()
