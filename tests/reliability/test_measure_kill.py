"""`kill -9` of a measuring session mid-write, on the CPU (issue 9). The GPU measures nothing here:
a child process appends units through the harness's real writer (`session._append`: records, fsync,
then the progress line, fsync) until it is SIGKILLed at a random moment; then the resume rule of
`session.main` (truncate the session file to the last noted offset) runs on the torn files.

After every kill: the progress file's whole lines name exactly the units whose records are whole in
the session file, and after the resume truncation the file holds exactly those units and nothing
torn. The real session on the H200 is in docs/reliability.md ("On the H200").
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cake_router.measure import campaign

REPO = Path(__file__).resolve().parents[2]
RECORDS_PER_UNIT = 20
KILLS = 12

WRITER = f"""
import sys
from pathlib import Path
from cake_router.measure.session import _append
path, progress = Path(sys.argv[1]), Path(sys.argv[2])
_append(path, progress, "#header", [{{"kind": "run", "run_id": "r"}}])
for i in range(1, 100000):
    key = f"plain/H64/fp32/T{{i}}"
    _append(path, progress, key, [{{"kind": "timing", "unit": key, "j": j, "pad": "x" * 20000}}
                                  for j in range({RECORDS_PER_UNIT})])
"""


def _kill_mid_write(work: Path, rng: random.Random) -> None:
    path, progress = campaign.session_paths(work, 0)
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(progress)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if progress.exists() and progress.read_bytes().count(b"\n") >= 3:
            break
        time.sleep(0.005)
    time.sleep(rng.uniform(0, 0.05))  # somewhere inside a unit's write, fsync or progress line
    assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL


def _units_in(data: bytes) -> dict[str, int]:
    """unit -> whole timing records in these bytes (every line must parse)."""
    out: dict[str, int] = {}
    for line in data.split(b"\n")[:-1]:
        rec = json.loads(line)
        if rec["kind"] == "timing":
            out[rec["unit"]] = out.get(rec["unit"], 0) + 1
    return out


def _resume_truncation(work: Path) -> None:
    """Run session.main's resume step on the torn files. It truncates before it needs a GPU; on
    this CPU-only machine it then stops at the CUDA device query, which is expected."""
    from cake_router.measure import session

    spec = work / "plan.json"
    spec.write_text(json.dumps({"units": [], "run_prefix": "r", "arch": "sm_90a", "programs": [], "peers": [],
                                "sessions": 1}))
    try:
        session.main([str(spec), "0"])
    except (AssertionError, RuntimeError) as exc:  # torch without CUDA
        assert "CUDA" in str(exc) or "cuda" in str(exc), exc


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="the resume step would start measuring on a GPU")
def test_a_killed_session_loses_at_most_the_unit_in_flight_and_resume_truncates_the_tear(tmp_path):
    rng = random.Random(9)
    torn_tails = 0
    for k in range(KILLS):
        work = tmp_path / f"kill{k}"
        work.mkdir()
        _kill_mid_write(work, rng)
        path, progress = campaign.session_paths(work, 0)
        done = campaign.read_progress(progress)
        noted = [u for u in done if u != "#header"]
        offsets = list(done.values())
        assert offsets == sorted(offsets) and len(noted) >= 2
        data = path.read_bytes()
        keep = max(offsets)
        assert keep <= len(data)
        # Every noted unit is whole before the last noted offset (fsync'd before its progress line).
        assert _units_in(data[:keep]) == {u: RECORDS_PER_UNIT for u in noted}
        torn_tails += len(data) > keep
        _resume_truncation(work)
        after = path.read_bytes()
        assert after == data[:keep], "resume must cut the file back to the last finished unit"
        assert _units_in(after) == {u: RECORDS_PER_UNIT for u in noted}
    print(f"\nmeasure kill -9: {KILLS} kills, {torn_tails} left a torn or unnoted tail, all truncated on resume")
    assert torn_tails > 0, "no kill landed inside a write: the test did not exercise the tear"
