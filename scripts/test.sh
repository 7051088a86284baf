#!/usr/bin/env bash
# The project's test command (README, .ci/run). Kernel tests run the Triton programs under
# TRITON_INTERPRET=1 when no GPU is present (tests/conftest.py sets it before Triton loads); with a
# GPU, tests marked `interpreter` are skipped and those marked `gpu` run.
# The interpreter runs a kernel in one Python thread, so the suite is spread over one pytest-xdist
# worker per core (CAKE_TEST_WORKERS overrides: 0 runs everything in this process); work stealing
# evens out the per-program tests, whose cost ranges from milliseconds to tens of seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 -m pytest -q -n "${CAKE_TEST_WORKERS:-auto}" --dist worksteal "$@"
