"""A stand-in for `cake_router.measure.session` on machines without a GPU: same arguments and file
protocol (progress lines, session files), no measuring. It exists to test the campaign's process
orchestration (waves, resume, budget) in CI; the real session runs in the GPU test."""

import json
import os
import sys
import time
from pathlib import Path

from cake_router.measure import campaign


def main() -> int:
    spec, s = Path(sys.argv[1]), int(sys.argv[2])
    max_units = int(sys.argv[3]) if len(sys.argv) > 3 else None
    doc = json.loads(spec.read_text())
    path, progress = campaign.session_paths(spec.parent, s)
    done = campaign.read_progress(progress)
    n = 0
    for u in doc["units"]:
        unit = campaign.Unit(**u)
        if unit.key in done:
            continue
        if max_units is not None and n >= max_units:
            break
        n += 1
        failures = spec.parent / f"session-s{s + 1}.failures.jsonl"
        if unit.key == os.environ.get("CAKE_FAKE_CRASH_UNIT") and not (failures.exists() and unit.key in failures.read_text()):
            # The real session's sticky-CUDA-error path: name the culprit, end the process.
            with open(failures, "a") as f:
                f.write(json.dumps({"unit": unit.key, "impl": "peer.faulty", "quarantine": True}) + "\n")
            return 1
        time.sleep(float(os.environ.get("CAKE_FAKE_SECONDS_PER_UNIT", "0")))
        with open(path, "a") as f:
            f.write(json.dumps({"kind": "timing", "session": f"s{s + 1}", "unit": unit.key}) + "\n")
            off = f.tell()
        with open(progress, "a") as f:
            f.write(f"{unit.key} {off}\n")
        with open(spec.parent / "order.log", "a") as f:
            f.write(f"s{s + 1} {unit.key}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
