"""bench/load_test.py, tiny: it starts the server, stops by itself, loses no upload, reports JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_load_test_runs_bounded_and_loses_nothing():
    out = subprocess.run([sys.executable, str(REPO / "bench" / "load_test.py"), "--clients", "4", "--duration", "2",
                          "--json"], cwd=REPO, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout)
    assert res["wall_s"] < 2 + 35  # the deadline plus at most one request timeout
    total = res["rows"][-1]
    assert total["kind"] == "ALL" and total["requests"] > 0 and total["errors"] == 0
    assert res["store_check"]["runs_found"] == res["store_check"]["runs_expected"]


def test_load_test_refuses_non_loopback_targets():
    out = subprocess.run([sys.executable, str(REPO / "bench" / "load_test.py"), "--url", "http://10.1.2.3:8000",
                          "--duration", "1"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "only targets loopback" in out.stderr
