"""Validation, import and export of cake-evidence/1 (evidence-format.md)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from sqlalchemy import func, select

from measurements_db.evidence_io import EvidenceError, export_evidence, export_records, import_evidence, parse_evidence
from measurements_db.models import AccuracyRecord, Program, Run, TimingBlock
from measurements_db.synthetic import generate_evidence
from tests.measurements_db.conftest import SAMPLE


def sample_records() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]


def counts(store) -> dict:
    with store.read() as conn:
        return {t.__tablename__: conn.execute(select(func.count()).select_from(t)).scalar()
                for t in (Run, Program, TimingBlock, AccuracyRecord)}


def lines_of(records) -> list[str]:
    return [json.dumps(r) for r in records]


# ---- parsing --------------------------------------------------------------------------------


def test_sample_file_parses_with_every_kind():
    recs = parse_evidence(SAMPLE.read_text().splitlines(), "sample.jsonl")
    assert [r["kind"] for r in recs].count("accuracy") == 3
    assert {r["kind"] for r in recs} == {"run", "program", "timing", "accuracy"}


def test_blank_lines_are_ignored():
    lines = SAMPLE.read_text().splitlines()
    recs = parse_evidence(["", *lines[:3], "   ", *lines[3:]], "f")
    assert len(recs) == len(lines)


def test_unknown_keys_are_kept_and_round_trip(store):
    recs = sample_records()
    recs[0]["site"] = {"rack": 7, "a": [1, 2]}
    recs[3]["clock_mhz"] = 1980
    import_evidence(store, recs)
    out = [json.loads(x) for x in export_evidence(store).splitlines()]
    run = next(r for r in out if r.get("run_id") == recs[0]["run_id"] and r["kind"] == "run")
    assert run["site"] == {"a": [1, 2], "rack": 7}
    assert any(r.get("clock_mhz") == 1980 for r in out if r["kind"] == "timing")


BAD_CASES = [
    # (record index in the sample, mutation, field named, words in the message)
    (0, lambda r: r.pop("gpu"), "gpu", "missing"),
    (0, lambda r: r.update(sm_count=True), "sm_count", "integer"),
    (0, lambda r: r.update(sm_count=132.0), "sm_count", "integer"),
    (0, lambda r: r.update(source="guessed"), "source", "measured, published"),
    (0, lambda r: r.update(started="2026-12-02T10:00:00"), "started", "UTC"),
    (0, lambda r: r.update(arch="hopper"), "arch", "sm_90a"),
    (1, lambda r: r.update(deterministic="yes"), "deterministic", "true or false"),
    (1, lambda r: r.update(op="2xfwd+bwd"), "op", "fwd, bwd"),
    (3, lambda r: r.update(T="65536"), "T", "integer"),
    (3, lambda r: r.update(T=0), "T", "minimum"),
    (3, lambda r: r.update(samples_us=[]), "samples_us", "non-empty"),
    (3, lambda r: r.update(samples_us=[1.0, -2.0]), "samples_us", "element 1"),
    (3, lambda r: r.update(samples_us=[1.0, "2"]), "samples_us", "element 1"),
    (3, lambda r: r.update(copy=2), "copy", "A/A"),
    (3, lambda r: r.update(form="rows"), "form", "heads_strided"),
    (3, lambda r: r.pop("timer"), "timer", "missing"),
    (7, lambda r: r.pop("median_us"), "median_us", "samples_us"),
    (4, lambda r: r.update(family="uniform"), "family", "gaussian"),
    (4, lambda r: r.update(inputs=3), "inputs", "per-input"),
    (4, lambda r: r.update(dw_err_over_tol_max=None), "dw_err_over_tol_max", "verdict"),
    (4, lambda r: r.update(dw_err_over_tol_max=-0.5), "dw_err_over_tol_max", "minimum 0"),
    (5, lambda r: r.update(rstd_rel_l2=-1e-9), "rstd_rel_l2", "minimum 0"),
    (4, lambda r: r.pop("eager_err_over_tol_median"), "eager_err_over_tol_median", "measured run"),
    (5, lambda r: r.update(verdict="pass"), "verdict", "published"),
    (4, lambda r: r.update(run_id="nobody"), "run_id", "no run record"),
    (6, lambda r: r.pop("citation"), "citation", "published"),
    (2, lambda r: r.update(schema="cake-evidence/2"), "schema", "cake-evidence/1"),
    (2, lambda r: r.update(kind="note"), "kind", "run, program, timing, accuracy"),
]


@pytest.mark.parametrize("index,mutate,field,words", BAD_CASES)
def test_bad_record_names_file_line_field_and_writes_nothing(tmp_path, store, index, mutate, field, words):
    recs = sample_records()
    mutate(recs[index])
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines_of(recs)) + "\n")
    before = counts(store)
    with pytest.raises(EvidenceError) as info:
        import_evidence(store, path)
    err = info.value
    assert (err.filename, err.line, err.field) == (str(path), index + 1, field)
    assert f"{path}:{index + 1}" in str(err) and field in str(err) and words in str(err)
    assert counts(store) == before


def test_invalid_json_and_nan_are_rejected_with_the_line(tmp_path, store):
    lines = SAMPLE.read_text().splitlines()
    for bad in ("{not json", lines[3].replace("412.1", "NaN"), "[1, 2]"):
        path = tmp_path / "bad.jsonl"
        path.write_text("\n".join([lines[0], bad]) + "\n")
        with pytest.raises(EvidenceError) as info:
            import_evidence(store, path)
        assert info.value.line == 2 and f"{path}:2" in str(info.value)
    assert counts(store)["runs"] == 0


def test_conflicting_duplicate_in_one_file_is_rejected_identical_one_kept_once(store):
    recs = sample_records()
    twin = dict(recs[3])
    import_evidence(store, recs + [twin])
    assert counts(store)["timing_blocks"] == 2
    other = dict(recs[3], samples_us=[1.0])
    with pytest.raises(EvidenceError) as info:
        parse_evidence(lines_of(recs + [other]), "f")
    assert info.value.line == len(recs) + 1 and "same key as line 4" in str(info.value)


def test_a_stored_run_with_other_values_rejects_the_file(store):
    recs = sample_records()
    import_evidence(store, recs)
    changed = [dict(recs[0], gpu="NVIDIA H100")]
    with pytest.raises(EvidenceError) as info:
        import_evidence(store, changed, name="again.jsonl")
    assert "already in the store" in str(info.value) and "gpu" in str(info.value)


def test_timing_may_reference_a_run_imported_earlier(store):
    recs = sample_records()
    import_evidence(store, recs[:3])
    res = import_evidence(store, recs[3:6])
    assert res.added["timing"] == 1 and res.added["accuracy"] == 2


# ---- import ---------------------------------------------------------------------------------


def test_reimport_adds_nothing(store):
    first = import_evidence(store, SAMPLE)
    assert first.added == {"run": 2, "program": 2, "timing": 2, "accuracy": 3}
    again = import_evidence(store, SAMPLE)
    assert sum(again.added.values()) == 0 and again.skipped == first.added
    assert counts(store) == {"runs": 2, "programs": 2, "timing_blocks": 2, "accuracy_records": 3}


def test_run_provenance_records_file_hash_and_time(store):
    import hashlib

    import_evidence(store, SAMPLE)
    with store.read() as conn:
        row = conn.execute(select(Run.file_sha256, Run.imported_at, Run.file_name)).first()
    assert row.file_sha256 == hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    assert row.imported_at.endswith("Z") and row.file_name == str(SAMPLE)


def test_gzipped_file_imports(tmp_path, store):
    path = tmp_path / "e.jsonl.gz"
    path.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    assert import_evidence(store, path).added["timing"] == 2


def test_embedded_store_refuses_imports():
    from measurements_db.engine import StoreError, open_store

    st = open_store(None)
    assert st.embedded
    with pytest.raises(StoreError, match="read-only"):
        import_evidence(st, SAMPLE)
    st.close()


# ---- export ---------------------------------------------------------------------------------


def _roundtrip(tmp_path, records) -> tuple[str, str]:
    from measurements_db.engine import open_store

    a = open_store(f"sqlite:///{tmp_path / 'a.sqlite'}")
    import_evidence(a, records)
    first = export_evidence(a)
    (tmp_path / "first.jsonl").write_text(first)
    b = open_store(f"sqlite:///{tmp_path / 'b.sqlite'}")
    import_evidence(b, tmp_path / "first.jsonl")
    second = export_evidence(b)
    a.close()
    b.close()
    return first, second


def test_export_import_export_is_byte_identical_on_the_sample(tmp_path):
    first, second = _roundtrip(tmp_path, sample_records())
    assert first == second and first.count("\n") == 9
    # Per-input and aggregate accuracy records both survive, with every field.
    recs = [json.loads(x) for x in first.split("\n") if x]
    assert {r.get("seed") for r in recs if r["kind"] == "accuracy"} == {17, None}
    assert sorted((r["kind"], r.get("run_id"), r.get("name")) for r in recs) == sorted(
        (r["kind"], r.get("run_id"), r.get("name")) for r in sample_records())
    norm = {json.dumps(r, sort_keys=True) for r in parse_evidence(SAMPLE.read_text().splitlines(), "s")}
    assert {json.dumps(r, sort_keys=True) for r in recs} == norm


def test_export_import_export_is_byte_identical_on_synthetic_evidence(tmp_path):
    recs = generate_evidence(runs=2, accuracy_aggregates=True, published=True, seed=3,
                             forms=("plain", "heads_strided"))
    first, second = _roundtrip(tmp_path, recs)
    assert first == second
    assert first.count("\n") == len(recs)


def test_floats_round_trip_exactly(tmp_path):
    rng = np.random.default_rng(7)
    # Arbitrary float64 bit patterns (positive, finite), not just short decimals.
    samples = np.abs(rng.standard_normal(200) * 10.0 ** rng.integers(-6, 6, 200)) + 1e-300
    recs = sample_records()
    recs[3]["samples_us"] = samples.tolist()
    recs[4]["dw_err_over_tol_max"] = float(samples[0])
    first, second = _roundtrip(tmp_path, recs)
    assert first == second
    # Lines are split on "\n" only, as the importer does: str.splitlines() would also split at
    # U+2028 and friends, which may appear raw inside the extra keys' strings.
    timing = next(json.loads(x) for x in first.split("\n") if '"kind": "timing"' in x and "h200" in x)
    assert timing["samples_us"] == samples.tolist()


def test_export_of_one_arch_holds_its_runs_records_and_programs(store):
    import_evidence(store, SAMPLE)
    recs = export_records(store, arch="sm_107a")
    assert {r["kind"] for r in recs} == {"run", "timing", "accuracy"}
    assert all(r["arch"] == "sm_107a" for r in recs if "arch" in r)
    recs90 = export_records(store, arch="sm_90a")
    assert {r["name"] for r in recs90 if r["kind"] == "program"} == {"bwd.twosum_pair.p2x.w8"}


def test_export_order_does_not_depend_on_import_order(tmp_path):
    from measurements_db.engine import open_store

    recs = generate_evidence(runs=2, seed=1)
    a = open_store(f"sqlite:///{tmp_path / 'a.sqlite'}")
    b = open_store(f"sqlite:///{tmp_path / 'b.sqlite'}")
    import_evidence(a, recs)
    import_evidence(b, list(reversed(recs)))
    assert export_evidence(a) == export_evidence(b)


def test_in_memory_records_with_numpy_numbers_are_normalized(store):
    recs = sample_records()
    recs[3]["T"] = np.int64(65536)
    recs[3]["samples_us"] = list(np.array([412.1, 411.8], dtype=np.float64))
    recs[4]["dw_err_over_tol_max"] = np.float32(0.5)
    import_evidence(store, recs)
    exported = [json.loads(x) for x in export_evidence(store).splitlines()]
    t = next(r for r in exported if r["kind"] == "timing" and "samples_us" in r)
    assert t["T"] == 65536 and t["samples_us"] == [412.1, 411.8]


def test_unknown_keys_the_store_cannot_keep_are_left_out_not_rejected(tmp_path, store):
    # The contract: unknown keys are kept when the store can, and never cause a rejection.
    recs = sample_records()
    recs[0]["weird"] = float("nan")
    recs[3]["note_nul"] = "a\x00b"
    recs[4]["fine"] = "kept"
    res = import_evidence(store, recs, name="mem")
    assert [(d["line"], d["key"]) for d in res.dropped_keys] == [(1, "weird"), (4, "note_nul")]
    assert "plain JSON" in res.dropped_keys[0]["reason"] and "NUL" in res.dropped_keys[1]["reason"]
    assert counts(store)["runs"] == 2 and res.as_dict()["dropped_keys"] == res.dropped_keys
    out = [json.loads(x) for x in export_evidence(store).splitlines()]
    assert not any("weird" in r or "note_nul" in r for r in out)
    assert any(r.get("fine") == "kept" for r in out)
    path = tmp_path / "huge.jsonl"  # 1e400 parses as infinity: not plain JSON, so left out
    path.write_text(SAMPLE.read_text().replace('"sm_count": 132,', '"sm_count": 132, "c": 1e400,', 1))
    assert [d["key"] for d in parse_and_drop(path)] == ["c"]


def parse_and_drop(path) -> list[dict]:
    from measurements_db.engine import open_store

    fresh = open_store(f"sqlite:///{path.parent / 'fresh.sqlite'}")
    try:
        return import_evidence(fresh, path).dropped_keys
    finally:
        fresh.close()


def test_empty_optional_strings_are_accepted_identifiers_are_not(store):
    recs = sample_records()
    recs[0].update(host="", note="")
    import_evidence(store, recs)
    run = next(r for r in export_records(store) if r["kind"] == "run" and r["run_id"] == recs[0]["run_id"])
    assert run["host"] == "" and run["note"] == ""
    for i, fld in ((0, "gpu"), (3, "session")):
        bad = sample_records()
        bad[i][fld] = ""
        with pytest.raises(EvidenceError) as info:
            parse_evidence(lines_of(bad), "f")
        assert (info.value.line, info.value.field) == (i + 1, fld) and "non-empty" in str(info.value)
    bad = sample_records()
    bad[6]["citation"] = ""
    with pytest.raises(EvidenceError, match="citation.*empty; a published run"):
        parse_evidence(lines_of(bad), "f")


def test_arch_with_a_trailing_newline_is_rejected():
    recs = sample_records()
    recs[0]["arch"] = "sm_90a\n"
    with pytest.raises(EvidenceError) as info:
        parse_evidence(lines_of(recs), "f")
    assert (info.value.line, info.value.field) == (1, "arch")


def test_published_only_fields_are_refused_on_a_per_input_record():
    recs = sample_records()
    published = next(r for r in recs if r["kind"] == "accuracy" and "verdict" in r)
    recs.append({k: v for k, v in published.items() if k != "qualified_by_source"} | {"seed": 3, "inputs": 1})
    with pytest.raises(EvidenceError) as info:
        parse_evidence(lines_of(recs), "f")
    assert (info.value.line, info.value.field) == (len(recs), "verdict") and "per-input" in str(info.value)


def test_a_utf8_byte_order_mark_is_accepted(tmp_path, store):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + SAMPLE.read_bytes())
    assert import_evidence(store, path).total_added == len(sample_records())


def _aggregate(recs: list[dict]) -> dict:
    return next(r for r in recs if r["kind"] == "accuracy" and "seed" not in r and r["run_id"] == recs[0]["run_id"])


def test_a_second_aggregate_for_one_group_is_rejected_in_the_file_and_against_the_store(store):
    # Two aggregates of 60 inputs for one (run, program, workload, family) would count 120 inputs,
    # enough to qualify a point; the contract allows one aggregate per group.
    recs = sample_records()
    agg = _aggregate(recs)
    twin = dict(agg, emitted="again")  # differs only in an unknown key
    with pytest.raises(EvidenceError) as info:
        parse_evidence(lines_of(recs + [twin]), "f")
    assert info.value.line == len(recs) + 1 and "second aggregate" in str(info.value)
    import_evidence(store, recs)
    with pytest.raises(EvidenceError) as info:
        import_evidence(store, [recs[0], twin], name="later.jsonl")
    assert info.value.line == 2 and "second aggregate" in str(info.value) and "the store" in str(info.value)
    assert import_evidence(store, [recs[0], agg]).total_added == 0  # the same aggregate again: a repeat


def test_per_input_records_and_an_aggregate_do_not_share_a_group(store):
    recs = sample_records()
    per_input = next(r for r in recs if r["kind"] == "accuracy" and "seed" in r)
    agg = {k: v for k, v in per_input.items() if k != "seed"}
    agg["inputs"] = 120
    with pytest.raises(EvidenceError, match="an aggregate for run .* holds per-input records"):
        parse_evidence(lines_of(recs + [agg]), "f")
    import_evidence(store, recs)
    with pytest.raises(EvidenceError, match="the store holds per-input records"):
        import_evidence(store, [recs[0], agg])
    second = dict(per_input, seed=per_input["seed"] + 1)
    assert import_evidence(store, [recs[0], second]).added["accuracy"] == 1  # more inputs of the group: fine


def test_a_stored_record_with_other_values_rejects_the_file(store):
    recs = sample_records()
    import_evidence(store, recs)
    timing = dict(recs[3], samples_us=[999.0])
    with pytest.raises(EvidenceError) as info:
        import_evidence(store, [recs[0], timing], name="again.jsonl")
    assert (info.value.line, info.value.field) == (2, "samples_us") and "already in the store" in str(info.value)
    per_input = next(r for r in recs if r["kind"] == "accuracy" and "seed" in r)
    with pytest.raises(EvidenceError) as info:
        import_evidence(store, [recs[0], dict(per_input, dw_err_over_tol_max=0.9)], name="again.jsonl")
    assert info.value.field == "dw_err_over_tol_max"
    with pytest.raises(EvidenceError, match="other unknown keys"):
        import_evidence(store, [recs[0], dict(per_input, added_later=1)], name="again.jsonl")
    assert counts(store)["timing_blocks"] == sum(r["kind"] == "timing" for r in recs)


# ---- property: any valid values survive export -> import -> export ---------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# Valid text: the importer refuses NUL (PostgreSQL text cannot hold it) and lone surrogates (tests in
# tests/reliability); a valid value is any other Unicode text.
_valid_text = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**53), 2**53),
                          st.floats(allow_nan=False, allow_infinity=False), st.text(_valid_text, max_size=8))
_json_values = st.recursive(_json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(_valid_text, max_size=5), inner, max_size=3)), max_leaves=6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(samples=st.lists(st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False),
                        min_size=1, max_size=20),
       extra=st.dictionaries(st.text(_valid_text, min_size=1, max_size=6).filter(lambda k: k not in ("schema", "kind", "run_id",
                                 "program", "op", "H", "T", "arch", "x_dtype", "w_dtype", "form", "session", "round",
                                 "position", "copy", "timer", "l2", "samples_us", "median_us", "n")),
                             _json_values, max_size=3),
       worst=st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_any_valid_values_round_trip(tmp_path_factory, samples, extra, worst):
    recs = sample_records()
    recs[3]["samples_us"] = samples
    recs[3].update(extra)
    recs[4]["dw_err_over_tol_max"] = worst
    first, second = _roundtrip(tmp_path_factory.mktemp("rt"), recs)
    assert first == second
    # Lines are split on "\n" only, as the importer does: str.splitlines() would also split at
    # U+2028 and friends, which may appear raw inside the extra keys' strings.
    timing = next(json.loads(x) for x in first.split("\n") if '"kind": "timing"' in x and "h200" in x)
    assert timing["samples_us"] == samples
    assert {k: timing[k] for k in extra} == extra
