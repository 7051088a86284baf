"""The published FlashInfer rows as evidence, and the published summary tables recomputed from it."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest

from cake_router import published
from cake_router.published import (
    PUBLISHED_N,
    PublishedDataError,
    published_rows_to_evidence,
    published_summary,
)
from measurements_db.aggregates import WorkloadKey, aggregate_records

DATA = Path(__file__).resolve().parents[2] / "measurements_db" / "data"
CSV = DATA / "flashinfer-published-rows.csv"
BUNDLE = DATA / "published-flashinfer.jsonl.gz"

# Required keys per kind (evidence-format.md); `median_us` stands in for `samples_us` here.
REQUIRED = {
    "run": {"run_id": str, "source": str, "arch": str, "gpu": str, "sm_count": int, "started": str},
    "program": {"name": str, "op": str, "deterministic": bool, "family": str, "runnable": bool, "fingerprint": str},
    "timing": {
        "run_id": str, "arch": str, "program": str, "op": str, "H": int, "T": int, "x_dtype": str,
        "w_dtype": str, "form": str, "session": str, "round": int, "position": int, "copy": int,
        "timer": str, "l2": str, "median_us": float, "n": int,
    },
    "accuracy": {
        "run_id": str, "arch": str, "program": str, "H": int, "T": int, "x_dtype": str, "w_dtype": str,
        "form": str, "family": str, "inputs": int,
    },
}


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return published_rows_to_evidence(CSV)


def _csv_rows() -> list[dict]:
    with open(CSV, newline="") as f:
        return list(csv.DictReader(f))


def _summary(lines, pr, gpu, op):
    (line,) = [s for s in lines if (s.pr, s.gpu, s.op) == (pr, gpu, op)]
    return line


# --- the conversion ---------------------------------------------------------------------------


def test_records_have_the_required_keys_and_types(records):
    for i, rec in enumerate(records):
        assert rec["schema"] == "cake-evidence/1"
        for key, typ in REQUIRED[rec["kind"]].items():
            assert isinstance(rec[key], typ), (i, rec["kind"], key, rec.get(key))


def test_records_parse_with_the_store_parser(records):
    from measurements_db.evidence_io import format_records, parse_evidence

    text = format_records(records)
    parsed = parse_evidence(text.splitlines(), "published.jsonl")
    assert len(parsed) == len(records)
    assert format_records(parsed) == text  # nothing the parser normalizes away


def test_one_published_run_per_pull_request_and_gpu(records):
    runs = {r["run_id"]: r for r in records if r["kind"] == "run"}
    assert sorted(runs) == [
        "flashinfer-pr8827-b200", "flashinfer-pr8827-r200", "flashinfer-pr8848-b200",
        "flashinfer-pr8849-gb300", "flashinfer-pr8899-gb300",
    ]
    r200 = runs["flashinfer-pr8827-r200"]
    assert (r200["source"], r200["arch"], r200["gpu"], r200["sm_count"]) == ("published", "sm_107a", "NVIDIA R200", 212)
    assert r200["citation"] == "flashinfer-ai/flashinfer pull request 8827, R200 table"
    assert runs["flashinfer-pr8849-gb300"]["arch"] == "sm_103a"
    assert runs["flashinfer-pr8848-b200"]["sm_count"] == 148
    assert {r["started"] for r in runs.values()} == {published.PUBLISHED_STARTED}


def test_programs_are_named_and_none_is_runnable(records):
    programs = {r["name"]: r for r in records if r["kind"] == "program"}
    assert sorted(programs) == [
        "flashinfer.det",
        "flashinfer.main.before_pr8848", "flashinfer.main.before_pr8849", "flashinfer.main.before_pr8899",
        "flashinfer.pr8827.new", "flashinfer.pr8848.new", "flashinfer.pr8849.new", "flashinfer.pr8899.new",
        "peer.liger", "peer.quack.heuristic", "peer.quack.tuned", "peer.quack.tuned_after_torch_add",
        "peer.torch_compile.default", "peer.torch_compile.max_autotune",
    ]
    assert not any(p["runnable"] for p in programs.values())
    assert programs["flashinfer.det"]["deterministic"] is True
    assert programs["flashinfer.pr8827.new"]["deterministic"] is False
    assert {p["family"] for n, p in programs.items() if n.startswith("peer.")} == {"peer"}
    # every program a timing or accuracy record names is declared
    named = {r["program"] for r in records if r["kind"] in ("timing", "accuracy")}
    assert named == set(programs)


def test_every_row_gives_its_timings(records):
    rows = _csv_rows()
    timing = [r for r in records if r["kind"] == "timing"]
    with_main = sum(1 for r in rows if r["fi_main_us"])
    assert len(timing) == 3 * len(rows) + with_main  # det, new, SOTA candidate, main where given
    assert {(r["session"], r["n"], r["timer"], r["l2"], r["copy"]) for r in timing} == {("pooled", PUBLISHED_N, "cupti", "cold", 0)}
    assert PUBLISHED_N == 4 * 201
    assert {r["form"] for r in timing} == {"plain", "residual"}
    assert {r["w_dtype"] for r in timing} == {"bf16", "fp32"} and {r["x_dtype"] for r in timing} == {"bf16"}

    # First CSV row: B200 T 1 H 512 fwd of #8827, det 1.89, SOTA TC 1.76, new 1.86.
    def at(program, op="fwd"):
        (rec,) = [r for r in timing if r["run_id"] == "flashinfer-pr8827-b200" and r["program"] == program
                  and r["op"] == op and r["T"] == 1 and r["H"] == 512 and r["w_dtype"] == "bf16" and r["form"] == "plain"]
        return rec

    assert at("flashinfer.det")["median_us"] == 1.89
    assert at("peer.torch_compile.max_autotune")["median_us"] == 1.76
    new = at("flashinfer.pr8827.new")
    assert new["median_us"] == 1.86
    assert (new["det_new"], new["sota_new"], new["det_new_flag"], new["markers"]) == ("1.02", "0.95", "~", ["carried"])
    assert at("peer.torch_compile.default", "bwd")["median_us"] == 1.95


def test_extra_columns_survive(records):
    timing = [r for r in records if r["kind"] == "timing"]
    kb = [r for r in timing if r.get("new_program_kind") == "kb"]
    assert kb and {r["program"] for r in kb} == {"flashinfer.pr8899.new"}
    assert {r["source_run"] for r in timing if r["program"] == "flashinfer.pr8899.new"} == {"A", "B", "C"}
    assert any(r.get("fi_main_new_raw") for r in timing)
    assert {r["published_role"] for r in timing} == {"det", "new", "fi_main", "sota"}
    residual = [r for r in timing if r["form"] == "residual" and r["published_role"] == "sota"]
    assert "QA+add" in {r["sota_name"] for r in residual}


def test_stated_accuracy(records):
    acc = [r for r in records if r["kind"] == "accuracy"]
    assert not any("op" in r for r in acc)
    assert {r["family"] for r in acc} == set(published.ACCURACY_FAMILIES)
    assert all(r["qualified_by_source"] is True and r["inputs"] == 0 for r in acc)
    det_new = [r for r in acc if r["program"].startswith("flashinfer.")]
    assert {(r["verdict"], r["dw_err_over_tol_max"]) for r in det_new} == {("pass", None)}
    assert not any(r["program"].startswith("flashinfer.main") for r in acc)  # the README states nothing
    fails = [r for r in acc if r["verdict"] == "fail"]
    assert {r["program"][:5] for r in fails} == {"peer."}
    assert all(r["dw_err_over_tol_max"] > 1 for r in fails)
    # R200's one `!` row: QA at T 131072 H 4096 with err/tol 2.185
    (r200,) = {(r["program"], r["T"], r["H"], r["dw_err_over_tol_max"]) for r in fails if r["arch"] == "sm_107a"}
    assert r200 == ("peer.quack.tuned", 131072, 4096, 2.185)
    # one det and one new statement per workload, per family
    workloads = {(r["source_pr"], r["gpu"], r["T"], r["H"], r["w_dtype"], r["form"]) for r in _csv_rows()}
    assert len([r for r in acc if r["program"] == "flashinfer.det"]) == 3 * len(workloads)


def test_conversion_is_deterministic(records):
    again = published_rows_to_evidence(CSV)
    assert json.dumps(again) == json.dumps(records)
    kinds = [r["kind"] for r in records]
    assert kinds == sorted(kinds, key=["run", "program", "timing", "accuracy"].index)


def test_the_reference_aggregator_reads_it_as_published(records):
    ev = aggregate_records(records)
    wk = WorkloadKey("sm_107a", 4096, "bf16", "bf16", "plain")
    t = ev[wk].timing[("flashinfer.det", "bwd", 131072)]
    assert (t.source, t.median_us, t.n, t.spread) == ("published", 254.24, PUBLISHED_N, None)
    a = ev[wk].accuracy[("peer.quack.tuned", 131072)]
    assert a.source == "published" and set(a.families) == set(published.ACCURACY_FAMILIES)
    assert {f.verdict for f in a.families.values()} == {"fail"}
    assert {f.worst for f in a.families.values()} == {2.185}
    assert not ev[wk].programs["flashinfer.pr8827.new"].runnable
    assert {k.arch for k in ev} == {"sm_100a", "sm_103a", "sm_107a"}


# --- the published summary tables -------------------------------------------------------------


def test_summary_equals_the_published_8827_tables(records):
    lines = published_summary(records, pr=8827)
    assert {s.pr for s in lines} == {8827}
    b200 = _summary(lines, 8827, "B200", "bwd")
    assert (b200.rows, b200.det_new_range(), b200.det_new_below_1) == (93, "0.77x-1.36x", 56)
    assert (b200.sota_new_range(), b200.sota_new_below_1, b200.sota_in_budget, b200.bang_rows) == ("0.43x-1.58x", 35, 86, 7)
    r200 = _summary(lines, 8827, "R200", "bwd")
    assert (r200.rows, r200.det_new_range(), r200.det_new_below_1) == (86, "0.57x-1.10x", 69)
    assert (r200.sota_new_range(), r200.sota_new_below_1, r200.sota_in_budget, r200.bang_rows) == ("0.23x-1.58x", 53, 85, 1)
    assert b200.kept_rows == 7 and r200.kept_rows == 0


def test_summary_covers_every_pull_request(records):
    lines = published_summary(records)
    assert [(s.pr, s.gpu) for s in lines[::3]] == [
        (8827, "B200"), (8827, "R200"), (8848, "B200"), (8849, "GB300"), (8899, "GB300"),
    ]
    # 4-decimal ratios in #8849 and #8899 are summarized with 4 decimals
    assert _summary(lines, 8849, "GB300", "bwd").det_new_range() == "0.8526x-0.9796x"
    assert _summary(lines, 8849, "GB300", "bwd").sota_new_range() == "-"
    # rows + kept rows = the CSV's rows of that table
    csv_rows = _csv_rows()
    for s in lines:
        n = sum(1 for r in csv_rows if int(r["source_pr"]) == s.pr and r["gpu"] == s.gpu and r["op"] == s.op)
        assert s.rows + s.kept_rows == n


def test_printed_and_unrounded_ratios_can_disagree(records):
    # "by printed ratio": B200 fwd prints 1.00 for most rows, so few are below 1 as printed
    s = _summary(published_summary(records, pr=8827), 8827, "B200", "fwd")
    assert s.det_new_below_1 == 9 and s.det_new_below_1_unrounded == 37


# --- bad input: clear errors ------------------------------------------------------------------


def _write_csv(path: Path, rows: list[dict], columns=published.COLUMNS) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return path


def test_missing_column_is_named(tmp_path):
    cols = [c for c in published.COLUMNS if c != "det_us"]
    path = _write_csv(tmp_path / "bad.csv", _csv_rows()[:3], cols)
    with pytest.raises(PublishedDataError, match=r"bad\.csv:1: missing column\(s\) det_us"):
        published_rows_to_evidence(path)


@pytest.mark.parametrize(
    "column, value, accepted",
    [
        ("form", "residual", "plain, res"),
        ("det_us", "-1", "a positive finite number"),
        ("markers", "[odd]", r"space-separated \[fix\]"),
        ("sota_name", "Triton", "TC, TCd"),
        ("arch", "sm_90a", "sm_100a"),
        ("sota_bang", "1", "1 exactly where sota_err_over_tol is given"),
    ],
)
def test_bad_cell_names_file_line_and_column(tmp_path, column, value, accepted):
    rows = _csv_rows()[:4]
    rows[2] = dict(rows[2], **{column: value})
    path = _write_csv(tmp_path / "bad.csv", rows)
    with pytest.raises(PublishedDataError, match=rf"bad\.csv:4: column '{column}' has '{re_escape(value)}'; accepted: {accepted}"):
        published_rows_to_evidence(path)


def re_escape(s: str) -> str:
    import re

    return re.escape(s)


def test_duplicate_row_is_rejected(tmp_path):
    rows = _csv_rows()[:3]
    path = _write_csv(tmp_path / "dup.csv", rows + rows[:1])
    with pytest.raises(PublishedDataError, match=r"dup\.csv:5: duplicate of line 2"):
        published_rows_to_evidence(path)


def test_two_dw_statements_for_one_candidate_are_rejected(tmp_path):
    rows = _csv_rows()
    i = next(i for i, r in enumerate(rows) if r["op"] == "bwd" and r["sota_err_over_tol"])
    step = i + 1
    assert rows[step]["op"] == "2xfwd+bwd" and rows[step]["sota_name"] == rows[i]["sota_name"]
    rows[step] = dict(rows[step], sota_err_over_tol="9.5")
    path = _write_csv(tmp_path / "two.csv", rows)
    with pytest.raises(PublishedDataError, match=rf"two\.csv:{step + 2}: column 'sota_err_over_tol' has 9\.5 .* line {i + 2} states"):
        published_rows_to_evidence(path)


# --- the command line -------------------------------------------------------------------------


def run_cli(*argv) -> int:
    from cake_router.cli import main

    return main(list(argv))


def test_cli_writes_jsonl_and_nothing_on_error(tmp_path, capsys):
    out = tmp_path / "published.jsonl"
    assert run_cli("import-published", str(CSV), "--out", str(out), "--json") == 0
    result = json.loads(capsys.readouterr().out)
    lines = out.read_text().splitlines()
    assert result["records"] == len(lines) == len(published_rows_to_evidence(CSV))
    assert json.loads(lines[0])["kind"] == "run"

    bad = _write_csv(tmp_path / "bad.csv", [dict(_csv_rows()[0], op="step")])
    out2 = tmp_path / "never.jsonl"
    assert run_cli("import-published", str(bad), "--out", str(out2)) == 2
    err = capsys.readouterr().err
    assert "bad.csv:2: column 'op' has 'step'" in err and "Nothing was written" in err
    assert not out2.exists()


def test_shipped_bundle_regenerates_byte_identically(tmp_path, capsys):
    again = tmp_path / "bundle.jsonl.gz"
    assert run_cli("import-published", "--write-bundle", str(again), "--json") == 0
    assert again.read_bytes() == BUNDLE.read_bytes(), "run `python -m cake_router import-published --write-bundle`"
    from measurements_db.evidence_io import format_records

    assert gzip.decompress(BUNDLE.read_bytes()).decode() == format_records(published_rows_to_evidence(CSV))


def test_cli_summary_from_csv(capsys):
    assert run_cli("published-summary", "--csv", str(CSV), "--pr", "8827", "--json") == 0
    lines = json.loads(capsys.readouterr().out)
    bwd = {d["gpu"]: d for d in lines if d["op"] == "bwd"}
    assert (bwd["B200"]["rows"], bwd["B200"]["bang_rows"], bwd["R200"]["sota_new_min"]) == (93, 7, 0.23)
    assert run_cli("published-summary", "--csv", str(CSV), "--pr", "8827", "--markdown") == 0
    md = capsys.readouterr().out
    assert "| #8827 | B200 | bwd | 93 | 0.77x-1.36x | 56 | 0.43x-1.58x | 35 of 86 | 7 |" in md
    assert "| #8827 | R200 | bwd | 86 | 0.57x-1.10x | 69 | 0.23x-1.58x | 53 of 85 | 1 |" in md
    assert run_cli("published-summary", "--csv", str(CSV), "--pr", "1234") == 2
    assert "--pr 1234: accepted: 8827, 8848, 8849, 8899" in capsys.readouterr().err


# --- through the real store -------------------------------------------------------------------


def _store_round_trip(url: str, capsys) -> None:
    from measurements_db.engine import open_store
    from measurements_db.evidence_io import export_records

    expected = published_rows_to_evidence(CSV)
    assert run_cli("import-published", "--db", url, "--json") == 0
    first_import = json.loads(capsys.readouterr().out)["import"]
    with open_store(url) as store:
        first = export_records(store)
    assert run_cli("import-published", "--db", url, "--json") == 0  # re-running adds nothing
    second_import = json.loads(capsys.readouterr().out)["import"]
    assert sum(second_import["added"].values()) == 0
    assert sum(second_import["skipped"].values()) == len(expected)
    with open_store(url) as store:
        second = export_records(store)
    assert second == first
    assert sum(first_import["added"].values()) + sum(first_import["skipped"].values()) == len(expected)

    # the summary from the store equals the published tables
    assert run_cli("published-summary", "--db", url, "--pr", "8827", "--markdown") == 0
    md = capsys.readouterr().out
    assert "| #8827 | B200 | bwd | 93 | 0.77x-1.36x | 56 | 0.43x-1.58x | 35 of 86 | 7 |" in md
    assert "| #8827 | R200 | bwd | 86 | 0.57x-1.10x | 69 | 0.23x-1.58x | 53 of 85 | 1 |" in md
    # and every line of every pull request equals the one computed straight from the CSV
    assert published_summary(second) == published_summary(published_rows_to_evidence(CSV))


def test_summary_through_a_sqlite_store(tmp_path, capsys):
    _store_round_trip(f"sqlite:///{tmp_path / 'store.sqlite'}", capsys)


@pytest.mark.postgres
def test_summary_through_postgres(capsys):
    import os

    _store_round_trip(os.environ["CAKE_TEST_PG_URL"], capsys)


def test_summary_from_the_embedded_default(tmp_path, monkeypatch, capsys):
    # a fresh clone: no --db, no $CAKE_DB_URL, the shipped bundles only
    monkeypatch.delenv("CAKE_DB_URL", raising=False)
    monkeypatch.setenv("CAKE_CACHE_DIR", str(tmp_path / "cache"))
    assert run_cli("published-summary", "--pr", "8827", "--json") == 0
    lines = {(d["gpu"], d["op"]): d for d in json.loads(capsys.readouterr().out)}
    assert (lines["B200", "bwd"]["sota_in_budget"], lines["R200", "bwd"]["det_new_below_1"]) == (86, 69)
    # and importing into it is refused with what to do instead
    assert run_cli("import-published") == 2
    assert "give --db URL or set CAKE_DB_URL" in capsys.readouterr().err
