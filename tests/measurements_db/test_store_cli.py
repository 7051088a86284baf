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
