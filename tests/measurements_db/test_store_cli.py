"""`python -m cake_router import / export / db upgrade / db stats`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cake_router.cli import main
from measurements_db.synthetic import generate_evidence
from tests.measurements_db.conftest import SAMPLE

REPO = Path(__file__).resolve().parents[2]


def test_import_reports_each_file_and_a_bad_file_does_not_stop_the_others(tmp_path, sqlite_url, capsys):
    bad = tmp_path / "bad.jsonl"
    lines = SAMPLE.read_text().splitlines()
    bad.write_text("\n".join(lines[:2] + [lines[2].replace('"runnable": false', '"runnable": "no"')]) + "\n")
    good2 = tmp_path / "more.jsonl"
    good2.write_text("".join(json.dumps(r) + "\n" for r in generate_evidence(seed=2)))
    rc = main(["import", str(SAMPLE), str(bad), str(good2), "--db", sqlite_url, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1 and out["failed"] == 1
    ok = {Path(f["file"]).name: f for f in out["files"]}
    assert ok["evidence-sample.jsonl"]["ok"] and ok["more.jsonl"]["ok"]
    assert ok["bad.jsonl"]["line"] == 3 and ok["bad.jsonl"]["field"] == "runnable"
    assert f"{bad}:3: field 'runnable'" in ok["bad.jsonl"]["error"]
    # Tables without --json, and the error names file:line and field on stderr.
    rc = main(["import", str(bad), str(SAMPLE), "--db", sqlite_url])
    captured = capsys.readouterr()
    assert rc == 1 and "already stored" in captured.out
    assert f"{bad}:3: field 'runnable'" in captured.err.replace("\n", "")


def test_import_warns_of_unknown_keys_it_could_not_keep(tmp_path, sqlite_url, capsys):
    f = tmp_path / "nul.jsonl"
    lines = SAMPLE.read_text().splitlines()
    lines[0] = lines[0].replace('"sm_count": 132,', '"sm_count": 132, "comment": "a\\u0000b",', 1)
    f.write_text("\n".join(lines) + "\n")
    assert main(["import", str(f), "--db", sqlite_url]) == 0
    err = capsys.readouterr().err.replace("\n", "")
    assert f"{f}:1: unknown key 'comment' not kept" in err and "NUL" in err


def test_import_without_a_store_url_is_refused(capsys):
    rc = main(["import", str(SAMPLE)])
    assert rc == 2 and "--db URL" in capsys.readouterr().err


def test_export_to_file_round_trips_through_the_cli(tmp_path, capsys):
    a, b = f"sqlite:///{tmp_path / 'a.sqlite'}", f"sqlite:///{tmp_path / 'b.sqlite'}"
    assert main(["import", str(SAMPLE), "--db", a, "--json"]) == 0
    assert main(["export", "--db", a, "--out", str(tmp_path / "one.jsonl")]) == 0
    assert main(["import", str(tmp_path / "one.jsonl"), "--db", b, "--json"]) == 0
    capsys.readouterr()
    assert main(["export", "--db", b, "--out", str(tmp_path / "two.jsonl"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["records"] == 9 and summary["sha256"] and summary["out"] == str(tmp_path / "two.jsonl")
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()
    assert main(["export", "--db", b, "--arch", "sm_107a"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 3 and "sm_90a" not in out  # run, timing, accuracy
    assert main(["export", "--db", b, "--arch", "sm_999a"]) == 2
    assert "arches there: sm_107a, sm_90a" in capsys.readouterr().err


def test_reading_commands_refuse_a_store_that_does_not_exist(tmp_path, capsys):
    """export, db stats and bench read a store: a SQLite URL naming no file is a typo, reported
    with how to create one, and nothing (no folder, no empty store) is created."""
    missing = tmp_path / "no" / "such" / "store.sqlite"
    url = f"sqlite:///{missing}"
    for argv in (["export", "--out", str(tmp_path / "x.jsonl")], ["db", "stats"], ["bench", "--arch", "sm_90a"]):
        assert main([*argv, "--db", url]) == 2, argv
        err = capsys.readouterr().err.replace("\n", "")
        assert f"no store at {missing}" in err and "db upgrade" in err, argv
    assert not (tmp_path / "no").exists() and not (tmp_path / "x.jsonl").exists()


def test_db_upgrade_and_stats(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    assert main(["db", "upgrade", "--db", url, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["upgraded_from"] == 0
    assert main(["db", "upgrade", "--db", url]) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert main(["db", "stats", "--db", url]) == 0
    assert "empty" in capsys.readouterr().out
    main(["import", str(SAMPLE), "--db", url, "--json"])
    capsys.readouterr()
    assert main(["db", "stats", "--db", url, "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["totals"]["timing_blocks"] == 2 and {a["arch"] for a in st["arches"]} == {"sm_90a", "sm_107a"}
    assert main(["db", "stats", "--db", url]) == 0
    text = capsys.readouterr().out
    assert "per arch" in text and "sm_107a" in text and "per workload key" in text


def test_cli_subprocess_uses_cake_db_url(tmp_path):
    url = f"sqlite:///{tmp_path / 'env.sqlite'}"
    env = {"CAKE_DB_URL": url, "CAKE_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "cake_router", "import", str(SAMPLE), "--json"], cwd=REPO, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["store"] == url
    r = subprocess.run([sys.executable, "-m", "cake_router", "db", "stats", "--json"], cwd=REPO, env=env,
                       capture_output=True, text=True)
    assert json.loads(r.stdout)["totals"]["runs"] == 2


def test_db_bundle_merges_campaign_files_into_one_byte_stable_bundle(tmp_path, capsys):
    from measurements_db.bundle import read_bundle

    a = generate_evidence(seed=1, runs=2)
    b = generate_evidence(seed=2, runs=1, arch="sm_100a")  # run ids differ from a's
    fa, fb = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    fa.write_text("".join(json.dumps(r) + "\n" for r in a))
    fb.write_text("".join(json.dumps(r) + "\n" for r in b))
    out = tmp_path / "data" / "merged.jsonl.gz"
    # The same file twice adds nothing; the order of the inputs does not change the bytes.
    assert main(["db", "bundle", str(fa), str(fb), str(fa), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    recs = read_bundle(out)
    assert summary["records"] == len(recs) and summary["inputs"] == 3
    assert sorted(json.dumps(r, sort_keys=True) for r in recs) == sorted({json.dumps(r, sort_keys=True) for r in a + b})
    first = out.read_bytes()
    assert main(["db", "bundle", str(fb), str(fa), "--out", str(out), "--force"]) == 0
    assert out.read_bytes() == first
    # An existing bundle is replaced only with --force.
    assert main(["db", "bundle", str(fa), "--out", str(out)]) == 2
    assert "exists; give --force" in capsys.readouterr().err and out.read_bytes() == first


def test_db_bundle_refuses_conflicting_provenance_and_bad_files_writing_nothing(tmp_path, capsys):
    recs = generate_evidence(seed=3)
    run = next(r for r in recs if r["kind"] == "run")
    f1, f2, bad = tmp_path / "one.jsonl", tmp_path / "two.jsonl", tmp_path / "bad.jsonl"
    f1.write_text("".join(json.dumps(r) + "\n" for r in recs))
    f2.write_text(json.dumps(dict(run, gpu="NVIDIA H100")) + "\n")
    bad.write_text(json.dumps(dict(run, sm_count="many")) + "\n")
    out = tmp_path / "m.jsonl.gz"
    assert main(["db", "bundle", str(f1), str(f2), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"run {run['run_id']!r} differs from its record in {f1}" in err and str(f2) in err and not out.exists()
    assert main(["db", "bundle", str(f1), str(bad), "--out", str(out)]) == 2
    assert f"{bad}:1: field 'sm_count'" in capsys.readouterr().err and not out.exists()
    assert main(["db", "bundle", str(tmp_path / "nope.jsonl"), "--out", str(out)]) == 2
    assert "FILE: not found" in capsys.readouterr().err
    assert main(["db", "bundle", str(f1), "--out", str(tmp_path / "m.json")]) == 2
    assert "a bundle is a .jsonl.gz file" in capsys.readouterr().err
