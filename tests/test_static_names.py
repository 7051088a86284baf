"""Undefined names in code that only runs on the GPU (the measurement session, device scripts).

CI has no GPU, so a NameError on a CUDA-only path (round 12's `names` in `session._time_unit`) would
only surface on the device, after minutes of device time. pyflakes finds it statically.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

pyflakes_api = pytest.importorskip("pyflakes.api", reason="pyflakes is in the test extra; install `.[test]`")
from pyflakes import reporter as pyflakes_reporter  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["cake_kernels", "cake_router", "measurements_db", "api", "scripts"]


class _Collect(pyflakes_reporter.Reporter):
    def __init__(self):
        self.messages: list[str] = []

    def unexpectedError(self, filename, msg):
        self.messages.append(f"{filename}: {msg}")

    def syntaxError(self, filename, msg, lineno, offset, text):
        self.messages.append(f"{filename}:{lineno}: {msg}")

    def flake(self, message):
        self.messages.append(str(message))


def _deleted_names(path: Path) -> set[str]:
    # pyflakes flags a name used in a closure after a later `del name` in the loop body (it frees a
    # large tensor between workloads); the closure runs before the del, so those are not bugs.
    names: set[str] = set()
    for m in re.finditer(r"^\s*del (.+)$", path.read_text(), re.M):
        names.update(n.strip() for n in m.group(1).split(","))
    return names


def test_no_undefined_names():
    problems = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rep = _Collect()
            pyflakes_api.checkPath(str(path), rep)
            deleted = _deleted_names(path)
            for msg in rep.messages:
                m = re.search(r"undefined name '([^']+)'", msg)
                if m and m.group(1) not in deleted:
                    problems.append(msg)
                elif "syntax" in msg.lower() or "problem decoding" in msg.lower():
                    problems.append(msg)
    assert not problems, "\n".join(problems)
